// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Command-line parsing: pure, table-driven, every error a sentence. */
#include <errno.h>
#include <getopt.h>
#include <math.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "breakpoints/bp_manager.h"
#include "cacheperf/alloc.h"
#include "cacheperf/soft_tick.h"
#include "machine/geometry.h"
#include "cli/options.h"
#include "util/parse.h"
#include "profile/rolling.h"
#include "export/pprof_dir.h"
#include "report/insn_callers.h"

enum {
	OPT_PROBE = 256,
	OPT_VERSION,
	OPT_SOURCE,
	OPT_CACHE,
	OPT_SYSFS_ROOT,
	OPT_LDLAT,
	OPT_LOAD_PERIOD,
	OPT_STORE_PERIOD,
	OPT_MAX_SAMPLE_RATE,
	OPT_MAX_ALLOC_RATE,
	OPT_NO_OBJECTS,
	OPT_WINDOW,
	OPT_WINDOW_RATIO,
	OPT_TOP,
	OPT_MIN_ACCESS_SHARE,
	OPT_MIN_MISS_SHARE,
	OPT_APP_LOAD_MISS,
	OPT_APP_STORE_MISS,
	OPT_JSON,
	OPT_RECORD,
	OPT_BP_EXPIRY,
	OPT_MAX_BP_RATE,
	OPT_SOFT_FREQ,
	OPT_OVERHEAD,
	OPT_WINDOW_SECONDS,
	OPT_QUIET,
	OPT_PROM_FILE,
	OPT_PROM_TOP,
	OPT_PROM_PID_LABEL,
	OPT_CGROUP,
	OPT_MAX_MEMORY,
	OPT_PATH_MAP,
	OPT_ALLOC_WRAPPER,
	OPT_ALLOC_STACK_BYTES,
	OPT_STACK_COPY_BYTES,
	OPT_NO_DEBUGINFOD,
	OPT_FAIL_ON_NEW,
	OPT_PPROF,
	OPT_FOLDED,
	OPT_PPROF_DIR,
	OPT_PPROF_KEEP,
	OPT_HTML,
	OPT_LOG_LEVEL,
	OPT_CALLERS,
	OPT_STACK_EVERY,
};

static const struct option long_opts[] = {
	{"pid", required_argument, NULL, 'p'},
	{"all-cpus", no_argument, NULL, 'a'},
	{"duration", required_argument, NULL, 'd'},
	{"interval", required_argument, NULL, 'i'},
	{"verbose", no_argument, NULL, 'v'},
	{"help", no_argument, NULL, 'h'},
	{"version", no_argument, NULL, OPT_VERSION},
	{"probe", no_argument, NULL, OPT_PROBE},
	{"source", required_argument, NULL, OPT_SOURCE},
	{"cache", required_argument, NULL, OPT_CACHE},
	{"sysfs-root", required_argument, NULL, OPT_SYSFS_ROOT},
	{"ldlat", required_argument, NULL, OPT_LDLAT},
	{"load-period", required_argument, NULL, OPT_LOAD_PERIOD},
	{"store-period", required_argument, NULL, OPT_STORE_PERIOD},
	{"max-sample-rate", required_argument, NULL, OPT_MAX_SAMPLE_RATE},
	{"max-alloc-rate", required_argument, NULL, OPT_MAX_ALLOC_RATE},
	{"no-objects", no_argument, NULL, OPT_NO_OBJECTS},
	{"window", required_argument, NULL, OPT_WINDOW},
	{"window-miss-ratio", required_argument, NULL, OPT_WINDOW_RATIO},
	{"top", required_argument, NULL, OPT_TOP},
	{"callers", required_argument, NULL, OPT_CALLERS},
	{"stack-every", required_argument, NULL, OPT_STACK_EVERY},
	{"min-access-share", required_argument, NULL, OPT_MIN_ACCESS_SHARE},
	{"min-miss-share", required_argument, NULL, OPT_MIN_MISS_SHARE},
	{"app-load-miss", required_argument, NULL, OPT_APP_LOAD_MISS},
	{"app-store-miss", required_argument, NULL, OPT_APP_STORE_MISS},
	{"output", required_argument, NULL, 'o'},
	{"json", required_argument, NULL, OPT_JSON},
	{"html", required_argument, NULL, OPT_HTML},
	{"record", required_argument, NULL, OPT_RECORD},
	{"bp-expiry", required_argument, NULL, OPT_BP_EXPIRY},
	{"max-bp-rate", required_argument, NULL, OPT_MAX_BP_RATE},
	{"soft-freq", required_argument, NULL, OPT_SOFT_FREQ},
	{"overhead", required_argument, NULL, OPT_OVERHEAD},
	{"window-seconds", required_argument, NULL, OPT_WINDOW_SECONDS},
	{"quiet", no_argument, NULL, OPT_QUIET},
	{"prom-file", required_argument, NULL, OPT_PROM_FILE},
	{"prom-top", required_argument, NULL, OPT_PROM_TOP},
	{"prom-pid-label", no_argument, NULL, OPT_PROM_PID_LABEL},
	{"cgroup", required_argument, NULL, OPT_CGROUP},
	{"max-memory", required_argument, NULL, OPT_MAX_MEMORY},
	{"path-map", required_argument, NULL, OPT_PATH_MAP},
	{"alloc-wrapper", required_argument, NULL, OPT_ALLOC_WRAPPER},
	{"alloc-stack-bytes", required_argument, NULL, OPT_ALLOC_STACK_BYTES},
	{"stack-copy-bytes", required_argument, NULL, OPT_STACK_COPY_BYTES},
	{"no-debuginfod", no_argument, NULL, OPT_NO_DEBUGINFOD},
	{"fail-on-new", no_argument, NULL, OPT_FAIL_ON_NEW},
	{"pprof", required_argument, NULL, OPT_PPROF},
	{"folded", required_argument, NULL, OPT_FOLDED},
	{"pprof-dir", required_argument, NULL, OPT_PPROF_DIR},
	{"pprof-keep", required_argument, NULL, OPT_PPROF_KEEP},
	{"log-level", required_argument, NULL, OPT_LOG_LEVEL},
	{NULL, 0, NULL, 0},
};

static const char usage_text[] =
	"Usage: cacheperf-bpf [OPTIONS] -p PID[,PID...]\n"
	"       cacheperf-bpf [OPTIONS] -a\n"
	"       cacheperf-bpf [OPTIONS] -- CMD [ARGS...]\n"
	"       cacheperf-bpf --probe\n"
	"       cacheperf-bpf report FILE    the report of a recording (--record), offline\n"
	"       cacheperf-bpf diff BEFORE AFTER\n"
	"                                    two recordings' issues compared: impact before\n"
	"                                    and after, the issues gone and new (docs/diff.md)\n"
	"\n"
	"Finds the serious cache misses of a program and says what kind they are\n"
	"(capacity, conflict, true or false sharing), who caused them (the application\n"
	"or the allocator's placement), where (source lines) and on which objects.\n"
	"\n"
	"Target (exactly one):\n"
	"  -p, --pid PID[,PID...]     profile running processes (up to 64)\n"
	"  -a, --all-cpus             profile the whole machine\n"
	"  -- CMD [ARGS...]           launch CMD, held until probes are attached\n"
	"\n"
	"Run:\n"
	"  -d, --duration SEC         stop after SEC seconds (default: until the target\n"
	"                             exits, or SIGINT/SIGTERM)\n"
	"  -i, --interval SEC         summary interval (default 10)\n"
	"  -v, --verbose              more detail (--log-level info); -vv adds\n"
	"                             libbpf debug output (--log-level debug)\n"
	"      --log-level LEVEL      err, warning, notice, info or debug: the\n"
	"                             messages on stderr (default warning; the\n"
	"                             service: notice; docs/logs.md)\n"
	"      --record FILE          also write what the report is made of to FILE,\n"
	"                             for `cacheperf-bpf report FILE` (docs/recording.md)\n"
	"      --probe                print what this machine supports and exit\n"
	"  -h, --help                 this text\n"
	"      --version              print the version and exit\n"
	"\n"
	"Sampling:\n"
	"      --source KIND          auto, pebs (Intel), ibs (AMD) or soft (no PMU);\n"
	"                             default auto: PEBS or IBS when the machine has\n"
	"                             them, else soft (timer ticks: addresses and\n"
	"                             time, no cache levels);\n"
	"                             faults: page faults with their addresses, a\n"
	"                             check of the pipeline on any machine (no cache\n"
	"                             levels)\n"
	"      --ldlat CYCLES         PEBS load-latency threshold (default 3, 1..65535)\n"
	"      --load-period N        sample one load in N (default 20000)\n"
	"      --store-period N       sample one store in N (default 50000)\n"
	"      --max-sample-rate N    per-CPU samples/s budget; periods are raised\n"
	"                             above it (default 20000; never over half the\n"
	"                             kernel's perf_event_max_sample_rate)\n"
	"      --window N             accesses in each per-CPU miss window\n"
	"                             (default 512, a power of two, 2..512)\n"
	"      --window-miss-ratio P  forward misses only while a window's miss ratio\n"
	"                             exceeds P percent (default 0.5)\n"
	"      --stack-every N        walk the user call stack of one sample, tick or\n"
	"                             breakpoint hit in N (an L1 hit: in 8N), at\n"
	"                             random, each worth as many (default 32; 1:\n"
	"                             every one; 0: no call stacks)\n"
	"      --stack-copy-bytes N   stack bytes copied with a walked event whose\n"
	"                             frame-pointer walk stops short (code without\n"
	"                             frame pointers), unwound by CFI (default 4096\n"
	"                             with -p and -- CMD, 0 with -a; at most 4096;\n"
	"                             0: frame pointers only)\n"
	"      --max-bp-rate N        hardware-breakpoint hits/s that collect the exact\n"
	"                             addresses of the worst instructions (default\n"
	"                             2000: about 2 percent of a CPU; 0: none)\n"
	"      --bp-expiry MS         let a breakpoint go after MS ms without a hit\n"
	"                             (default 100)\n"
	"      --soft-freq HZ         --source soft: timer ticks per second on each\n"
	"                             CPU (default 4999, 1..100000)\n"
	"      --overhead P           the CPU time the probes may take from the\n"
	"                             targets, in percent of theirs (default 1 with\n"
	"                             -p and -a, 5 with -- CMD; 0: no budget): each\n"
	"                             probe's cost is measured at start, the soft\n"
	"                             frequency, breakpoint rate and allocation probe\n"
	"                             windows are held inside it\n"
	"\n"
	"Report (filters of the paper, section 3.5; P is a percentage):\n"
	"      --top N                issues, instructions and objects listed\n"
	"                             (default 10, 1..1000)\n"
	"      --callers N            under each issue's instructions, the N call\n"
	"                             paths that reached them most, with their share\n"
	"                             (default 0: none; at most 64; JSON always lists\n"
	"                             at least 5)\n"
	"      --app-load-miss P      report nothing unless load misses reach P percent\n"
	"                             of sampled loads (default 3) ...\n"
	"      --app-store-miss P     ... or store misses P percent of sampled stores\n"
	"                             (default 1)\n"
	"      --min-access-share P   an instruction needs P percent of the sampled\n"
	"                             accesses (default 0.01) ...\n"
	"      --min-miss-share P     ... and P percent of the sampled misses\n"
	"                             (default 1); weaker issues are counted as\n"
	"                             suppressed\n"
	"  -o, --output FILE          write the text report to FILE instead of stdout\n"
	"      --json FILE            also write the report as JSON (docs/json.md);\n"
	"                             '-': JSON on stdout, and the text report only\n"
	"                             with -o\n"
	"                             (both are rewritten whole at each report)\n"
	"      --pprof FILE           also write the profile as gzipped pprof (go tool\n"
	"                             pprof, Pyroscope, Parca; docs/pprof.md): samples\n"
	"                             per instruction, labelled with their issue\n"
	"      --folded FILE          also write collapsed stacks (\"a;b;c count\") for\n"
	"                             flamegraph.pl and speedscope\n"
	"                             (with report FILE: the recording's)\n"
	"      --html FILE            also write the report as one self-contained\n"
	"                             HTML page with figures of each issue\n"
	"                             (docs/html.md); rewritten each -i interval\n"
	"                             with the summary, at the end with the run\n"
	"\n"
	"Objects:\n"
	"      --alloc-wrapper NAME   a function of the program's own that wraps the\n"
	"                             allocator (xmalloc, zmalloc, g_malloc): its\n"
	"                             frames are skipped in allocation stacks, as\n"
	"                             operator new's are (repeatable; also for report)\n"
	"      --alloc-stack-bytes N  stack bytes copied at a call site's first\n"
	"                             allocation, unwound by CFI where frame pointers\n"
	"                             are missing (libstdc++'s operator new; default\n"
	"                             4096 with -p and -- CMD, 0 with -a; at most\n"
	"                             4096; 0: frame pointers only)\n"
	"      --max-alloc-rate N     allocator calls/s per process (with -a, of all\n"
	"                             together) above which the allocation probes\n"
	"                             back off for a while (default 200000; 0: never)\n"
	"      --no-objects           no allocation probes: heap objects unknown\n"
	"\n"
	"Machine:\n"
	"      --cache SPEC           cache geometry instead of sysfs, e.g.\n"
	"                             L1D=48K:12:64,L2=2M:16:64,LLC=32M:16:64\n"
	"                             (size:ways:line size)\n"
	"      --sysfs-root DIR       read /sys and /proc facts below DIR (testing)\n"
	"\n"
	"Continuous operation (each -i interval, a summary of the last window):\n"
	"      --window-seconds SEC   span of the rolling summary (default 60; at\n"
	"                             most 60 intervals); SIGUSR1 prints it, the\n"
	"                             final report covers the whole run\n"
	"      --quiet                no status line on stderr (it is shown each\n"
	"                             interval only when stderr is a terminal)\n"
	"      --prom-file PATH       write the summary as a Prometheus text file\n"
	"                             each interval, replaced atomically\n"
	"                             (docs/prometheus.md); SIGHUP rewrites it now;\n"
	"                             with report FILE: the recording's metrics\n"
	"      --prom-top N           issues written to it, the rest summed as\n"
	"                             \"other\" (default 20, 1..1000)\n"
	"      --pprof-dir DIR        each interval, that interval's pprof profile as\n"
	"                             DIR/cacheperf-TIME-SEQ.pb.gz, renamed into place,\n"
	"                             for an agent to push (docs/pprof.md)\n"
	"      --pprof-keep N         profiles kept in --pprof-dir, the oldest removed\n"
	"                             (default 20, 1..100000)\n"
	"      --prom-pid-label       a pid label on its issue and process series\n"
	"                             (off: series by comm, container and cgroup\n"
	"                             outlive restarts; a new series per process)\n"
	"\n"
	"System-wide and long runs:\n"
	"      --cgroup PATH          with -a: only processes in the cgroup (v2) PATH\n"
	"                             and below it, e.g. /sys/fs/cgroup/system.slice/\n"
	"                             foo.service or /system.slice/foo.service\n"
	"      --max-memory SIZE      the profiler's own memory limit, as the kernel\n"
	"                             counts it (its cgroup's, or smaps_rollup and its\n"
	"                             memfds): above it, caches are shrunk, stores\n"
	"                             evicted and file copies refused, counted in the\n"
	"                             report (default 256M; K, M, G suffixes)\n"
	"\n"
	"Symbols:\n"
	"      --no-debuginfod        never ask the debuginfod servers DEBUGINFOD_URLS\n"
	"                             names for missing debug info (each fetch is\n"
	"                             bounded to 5 s; without the variable none is)\n"
	"\n"
	"Report FILE and diff BEFORE AFTER (also -o, --json, --alloc-wrapper and\n"
	"the report filters; a diff applies them to both recordings):\n"
	"      --path-map OLD=NEW     read the files the recording names below OLD\n"
	"                             from NEW (repeatable, first match; build-ids\n"
	"                             are still checked), e.g. /=/srv/sysroot\n"
	"      --fail-on-new          diff: exit 3 when AFTER has an issue BEFORE\n"
	"                             did not (for CI)\n"
	"\n"
	"Exit status: 0 success (with -- CMD: the command's status), 1 runtime error,\n"
	"2 usage error, 3 diff --fail-on-new found a new issue.\n"
	"\n"
	"Examples:\n"
	"  cacheperf-bpf --probe                  what can this machine sample?\n"
	"  cacheperf-bpf -p 1234 -d 30            profile PID 1234 for 30 seconds\n"
	"  cacheperf-bpf -- ./myapp --threads 8   launch and profile myapp\n"
	"  cacheperf-bpf -a -i 10                 whole machine, summary every 10 s\n";

const struct option *cp_options_table(void)
{
	return long_opts;
}

void cp_options_usage(FILE *f)
{
	fputs(usage_text, f);
}

enum cp_log_level cp_options_log_level(const struct cp_options *opts)
{
	enum cp_log_level level = opts->log_level ? opts->log_level : CP_LOG_WARNING;
	enum cp_log_level v = opts->verbose >= 2 ? CP_LOG_DEBUG : opts->verbose ? CP_LOG_INFO : 0;

	return v > level ? v : level;
}

void cp_options_defaults(struct cp_options *opts)
{
	memset(opts, 0, sizeof(*opts));
	opts->interval_s = 10;
	opts->source = CP_SOURCE_AUTO;
	opts->sysfs_root = "/";
	opts->ldlat_cycles = 3;	   /* the paper's Table 1 */
	opts->load_period = 20000; /* paper §3.1 */
	opts->store_period = 50000;
	opts->max_sample_rate = 20000;
	opts->max_alloc_rate = CP_ALLOC_RATE_DEFAULT;
	opts->window = CP_WINDOW_DEFAULT;
	opts->stack_every = CP_STACK_EVERY_DEFAULT;
	opts->window_ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM;
	opts->overhead_ppm = CP_OVERHEAD_UNSET;
	cp_classify_cfg_defaults(&opts->classify);
	opts->bp_expiry_ms = CP_BPM_EXPIRY_MS_DEFAULT;
	opts->max_bp_rate = CP_BPM_RATE_DEFAULT;
	opts->alloc_stack_bytes = CP_STACK_BYTES_UNSET;
	opts->stack_copy_bytes = CP_STACK_BYTES_UNSET;
	opts->soft_freq_hz = CP_SOFT_FREQ_DEFAULT;
	opts->window_s = 60;
	opts->prom_top = 20;
	opts->pprof_keep = CP_PPROF_KEEP_DEFAULT;
	opts->max_memory_bytes = CP_MAX_MEMORY_DEFAULT;
}

static int fail(char *err, size_t err_sz, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_sz, fmt, ap);
	va_end(ap);
	return -EINVAL;
}

static int parse_pids(const char *arg, struct cp_options *opts, char *err, size_t err_sz)
{
	char buf[1024], *tok, *save = NULL;
	__u64 v;

	if (strlen(arg) >= sizeof(buf))
		return fail(err, err_sz, "-p: list of PIDs too long");
	strcpy(buf, arg);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (cp_parse_u64(tok, 1, 4194304, &v)) /* PID_MAX_LIMIT */
			return fail(err, err_sz, "-p: '%s' is not a process ID", tok);
		if (opts->nr_pids == CP_MAX_TGIDS)
			return fail(err, err_sz, "-p: at most %d processes", CP_MAX_TGIDS);
		opts->pids[opts->nr_pids++] = (pid_t)v;
	}
	if (opts->nr_pids == 0)
		return fail(err, err_sz, "-p: no process ID in '%s'", arg);
	return 0;
}

/* "0.5" or "0.5%" percent, 0..100, to parts per million. */
static int parse_percent_ppm(const char *arg, __u32 *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(arg, &end);
	if (end == arg || errno || !isfinite(v))
		return -EINVAL;
	if (*end == '%')
		end++;
	if (*end || v < 0 || v > 100)
		return -EINVAL;
	*out = (__u32)llround(v * 10000.0);
	return 0;
}

static int set_target(struct cp_options *opts, enum cp_target_kind kind, char *err, size_t err_sz)
{
	if (opts->target != CP_TARGET_NONE && opts->target != kind)
		return fail(err, err_sz, "choose one target: -p PID, -a or -- CMD");
	opts->target = kind;
	return 0;
}

struct num_opt {
	int id;
	const char *name;
	__u64 min, max;
};

static const struct num_opt num_opts[] = {
	{'d', "--duration", 1, 365ull * 24 * 3600},
	{'i', "--interval", 1, 24 * 3600},
	{OPT_LDLAT, "--ldlat", 1, 65535}, /* config1 holds 16 bits */
	{OPT_LOAD_PERIOD, "--load-period", 100, 1ull << 40},
	{OPT_STORE_PERIOD, "--store-period", 100, 1ull << 40},
	{OPT_MAX_SAMPLE_RATE, "--max-sample-rate", 1, 10000000},
	{OPT_MAX_ALLOC_RATE, "--max-alloc-rate", 0, 1000000000},
	{OPT_WINDOW, "--window", 2, CP_WINDOW_MAX},
	{OPT_TOP, "--top", 1, 1000},
	{OPT_CALLERS, "--callers", 0, CP_CALLERS_MAX},
	{OPT_STACK_EVERY, "--stack-every", 0, 65536},
	{OPT_BP_EXPIRY, "--bp-expiry", 1, 60000},
	{OPT_MAX_BP_RATE, "--max-bp-rate", 0, 1000000},
	{OPT_SOFT_FREQ, "--soft-freq", 1, 100000},
	{OPT_WINDOW_SECONDS, "--window-seconds", 1, 30 * 24 * 3600},
	{OPT_PROM_TOP, "--prom-top", 1, 1000},
	{OPT_PPROF_KEEP, "--pprof-keep", 1, CP_PPROF_KEEP_MAX},
	{OPT_ALLOC_STACK_BYTES, "--alloc-stack-bytes", 0, CP_USTACK_BYTES},
	{OPT_STACK_COPY_BYTES, "--stack-copy-bytes", 0, CP_USTACK_BYTES},
};

/* Options that take a percentage, and the parts-per-million field each sets. */
struct pct_opt {
	int id;
	const char *name;
	size_t off;
};

static const struct pct_opt pct_opts[] = {
	{OPT_WINDOW_RATIO, "--window-miss-ratio", offsetof(struct cp_options, window_ratio_ppm)},
	{OPT_MIN_ACCESS_SHARE, "--min-access-share",
	 offsetof(struct cp_options, classify.min_access_ppm)},
	{OPT_MIN_MISS_SHARE, "--min-miss-share",
	 offsetof(struct cp_options, classify.min_miss_ppm)},
	{OPT_APP_LOAD_MISS, "--app-load-miss",
	 offsetof(struct cp_options, classify.app_load_miss_ppm)},
	{OPT_APP_STORE_MISS, "--app-store-miss",
	 offsetof(struct cp_options, classify.app_store_miss_ppm)},
	{OPT_OVERHEAD, "--overhead", offsetof(struct cp_options, overhead_ppm)},
};

/* Returns 1 when @id is not a percentage option, else 0 or -EINVAL. */
static int parse_pct_opt(int id, const char *arg, struct cp_options *opts, char *err, size_t err_sz)
{
	for (size_t i = 0; i < sizeof(pct_opts) / sizeof(pct_opts[0]); i++) {
		if (pct_opts[i].id != id)
			continue;
		if (parse_percent_ppm(arg, (__u32 *)((char *)opts + pct_opts[i].off)))
			return fail(err, err_sz, "%s: '%s' is not a percentage from 0 to 100",
				    pct_opts[i].name, arg);
		return 0;
	}
	return 1;
}

static int parse_number_opt(int id, const char *arg, struct cp_options *opts, char *err,
			    size_t err_sz)
{
	const struct num_opt *o = NULL;
	__u64 v;

	for (size_t i = 0; i < sizeof(num_opts) / sizeof(num_opts[0]); i++)
		if (num_opts[i].id == id)
			o = &num_opts[i];
	if (!o)
		return fail(err, err_sz, "internal error: option %d has no range", id);
	if (cp_parse_u64(arg, o->min, o->max, &v))
		return fail(err, err_sz, "%s: '%s' is not a whole number from %llu to %llu",
			    o->name, arg, (unsigned long long)o->min, (unsigned long long)o->max);
	switch (id) {
	case 'd':
		opts->duration_s = (__u32)v;
		break;
	case 'i':
		opts->interval_s = (__u32)v;
		break;
	case OPT_LDLAT:
		opts->ldlat_cycles = (__u32)v;
		break;
	case OPT_LOAD_PERIOD:
		opts->load_period = v;
		break;
	case OPT_STORE_PERIOD:
		opts->store_period = v;
		break;
	case OPT_MAX_SAMPLE_RATE:
		opts->max_sample_rate = (__u32)v;
		break;
	case OPT_MAX_ALLOC_RATE:
		opts->max_alloc_rate = v;
		break;
	case OPT_TOP:
		opts->classify.top = (unsigned int)v;
		break;
	case OPT_CALLERS:
		opts->callers = (unsigned int)v;
		break;
	case OPT_STACK_EVERY:
		opts->stack_every = (__u32)v;
		break;
	case OPT_BP_EXPIRY:
		opts->bp_expiry_ms = (__u32)v;
		break;
	case OPT_MAX_BP_RATE:
		opts->max_bp_rate = (__u32)v;
		break;
	case OPT_ALLOC_STACK_BYTES:
		opts->alloc_stack_bytes = (__u32)v;
		break;
	case OPT_STACK_COPY_BYTES:
		opts->stack_copy_bytes = (__u32)v;
		break;
	case OPT_SOFT_FREQ:
		opts->soft_freq_hz = (__u32)v;
		break;
	case OPT_WINDOW_SECONDS:
		opts->window_s = (__u32)v;
		break;
	case OPT_PROM_TOP:
		opts->prom_top = (__u32)v;
		break;
	case OPT_PPROF_KEEP:
		opts->pprof_keep = (__u32)v;
		break;
	case OPT_WINDOW:
		/* the BPF window indexes with a mask */
		if (v & (v - 1))
			return fail(err, err_sz, "--window: %llu is not a power of two",
				    (unsigned long long)v);
		opts->window = (__u32)v;
		break;
	}
	return 0;
}

/* A report path: not empty; "-" (stdout) only for --json. */
static int parse_path(const char *arg, const char *opt, const char **out, char *err, size_t err_sz)
{
	if (!arg[0])
		return fail(err, err_sz, "%s: empty file name", opt);
	if (strcmp(arg, "-") == 0 && strcmp(opt, "-o") == 0)
		return fail(err, err_sz, "-o: the text report goes to stdout without -o");
	*out = arg;
	return 0;
}

/* `diff [OPTIONS] BEFORE AFTER`: two recordings and nothing else. */
static int check_diff(int argc, char **argv, struct cp_options *opts, char *err, size_t err_sz)
{
	if (optind != argc - 2)
		return fail(err, err_sz,
			    "usage: cacheperf-bpf diff BEFORE AFTER (two recordings made with "
			    "--record)");
	if (opts->target != CP_TARGET_NONE || opts->record_path)
		return fail(err, err_sz,
			    "diff reads two recordings: it takes no target and no --record");
	if (opts->prom_file)
		return fail(err, err_sz, "--prom-file is for a run or report FILE, not for diff");
	opts->diff_paths[0] = argv[optind];
	opts->diff_paths[1] = argv[optind + 1];
	if (opts->pprof || opts->folded || opts->pprof_dir || opts->html)
		return fail(err, err_sz,
			    "--pprof, --folded, --pprof-dir and --html describe one run: use them "
			    "with a run or report FILE, not diff");
	return 0;
}

/* --pprof, --folded and --pprof-dir: files, not stdout, and one per option. */
static int check_export(const struct cp_options *opts, char *err, size_t err_sz)
{
	const char *const named[] = {opts->pprof, opts->folded};

	for (size_t i = 0; i < 2; i++)
		if (named[i] && !strcmp(named[i], "-"))
			return fail(err, err_sz,
				    "--%s: give a file name (it is replaced atomically)",
				    i ? "folded" : "pprof");
	if (opts->pprof && opts->folded && !strcmp(opts->pprof, opts->folded))
		return fail(err, err_sz, "--pprof and --folded name the same file '%s'",
			    opts->pprof);
	if (opts->pprof_dir && opts->mode == CP_MODE_REPORT)
		return fail(err, err_sz,
			    "--pprof-dir writes a profile per interval of a run; for a recording "
			    "use --pprof FILE");
	return 0;
}

/* `report [OPTIONS] FILE`: after the options, one recording and nothing else. */
static int check_report(int argc, char **argv, struct cp_options *opts, char *err, size_t err_sz)
{
	if (optind != argc - 1)
		return fail(err, err_sz,
			    "usage: cacheperf-bpf report FILE (a recording made with --record)");
	if (opts->target != CP_TARGET_NONE || opts->record_path)
		return fail(err, err_sz,
			    "report reads a recording: it takes no target and no --record");
	opts->report_path = argv[optind];
	return 0;
}

int cp_options_parse(int argc, char **argv, struct cp_options *opts, char *err, size_t err_sz)
{
	bool offline;
	int c, ret;

	cp_options_defaults(opts);
	err[0] = '\0';
	if (argc > 1 && (!strcmp(argv[1], "report") || !strcmp(argv[1], "diff"))) {
		opts->mode = !strcmp(argv[1], "report") ? CP_MODE_REPORT : CP_MODE_DIFF;
		argc--;
		argv++;
	}
	offline = opts->mode == CP_MODE_REPORT || opts->mode == CP_MODE_DIFF;
	optind = 0; /* GNU: full reinitialisation, so tests can parse repeatedly */
	opterr = 0;
	/*
	 * '+': stop at the first non-option, so CMD's own flags are left alone;
	 * `report FILE --prom-file OUT` has no CMD: options may follow FILE
	 */
	while ((c = getopt_long(argc, argv, offline ? ":p:ad:i:vho:" : "+:p:ad:i:vho:", long_opts,
				NULL)) != -1) {
		ret = 0;
		switch (c) {
		case 'p':
			ret = set_target(opts, CP_TARGET_PIDS, err, err_sz);
			if (!ret)
				ret = parse_pids(optarg, opts, err, err_sz);
			break;
		case 'a':
			ret = set_target(opts, CP_TARGET_ALL, err, err_sz);
			break;
		case 'v':
			opts->verbose++;
			break;
		case 'h':
			opts->mode = CP_MODE_HELP;
			return 0;
		case OPT_VERSION:
			opts->mode = CP_MODE_VERSION;
			return 0;
		case OPT_PROBE:
			opts->mode = CP_MODE_PROBE;
			break;
		case OPT_NO_DEBUGINFOD:
			opts->no_debuginfod = true;
			break;
		case OPT_FAIL_ON_NEW:
			opts->fail_on_new = true;
			break;
		case OPT_NO_OBJECTS:
			opts->no_objects = true;
			break;
		case OPT_SOURCE:
			if (cp_source_parse(optarg, &opts->source)) {
				char names[64];

				cp_source_names(names, sizeof(names));
				ret = fail(err, err_sz, "--source: '%s' is not one of %s", optarg,
					   names);
			}
			break;
		case OPT_CACHE:
			opts->cache_spec = optarg;
			break;
		case 'o':
			ret = parse_path(optarg, "-o", &opts->output, err, err_sz);
			break;
		case OPT_JSON:
			ret = parse_path(optarg, "--json", &opts->json, err, err_sz);
			break;
		case OPT_HTML:
			ret = strcmp(optarg, "-") == 0
				      ? fail(err, err_sz, "--html: give a file, not stdout")
				      : parse_path(optarg, "--html", &opts->html, err, err_sz);
			break;
		case OPT_RECORD:
			opts->record_path = optarg;
			break;
		case OPT_SYSFS_ROOT:
			opts->sysfs_root = optarg;
			break;
		case OPT_QUIET:
			opts->quiet = true;
			break;
		case OPT_LOG_LEVEL:
			if (cp_log_level_parse(optarg, &opts->log_level))
				ret = fail(err, err_sz,
					   "--log-level: '%s' is not err, warning, notice, info or "
					   "debug",
					   optarg);
			break;
		case OPT_PROM_FILE:
			ret = parse_path(optarg, "--prom-file", &opts->prom_file, err, err_sz);
			break;
		case OPT_PPROF:
			ret = parse_path(optarg, "--pprof", &opts->pprof, err, err_sz);
			break;
		case OPT_FOLDED:
			ret = parse_path(optarg, "--folded", &opts->folded, err, err_sz);
			break;
		case OPT_PPROF_DIR:
			ret = parse_path(optarg, "--pprof-dir", &opts->pprof_dir, err, err_sz);
			break;
		case OPT_PROM_PID_LABEL:
			opts->prom_pid_label = true;
			break;
		case OPT_CGROUP:
			if (!optarg[0])
				ret = fail(err, err_sz, "--cgroup: empty cgroup path");
			opts->cgroup = optarg;
			break;
		case OPT_MAX_MEMORY:
			if (cp_cache_parse_size(optarg, &opts->max_memory_bytes) ||
			    opts->max_memory_bytes < CP_MAX_MEMORY_MIN)
				ret = fail(err, err_sz,
					   "--max-memory: '%s' is not a size of 16M or more (e.g. "
					   "256M, 1G)",
					   optarg);
			break;
		case OPT_PATH_MAP:
			ret = cp_path_map_add(&opts->path_map, optarg, err, err_sz);
			break;
		case OPT_ALLOC_WRAPPER:
			if (cp_alloc_wrappers_add(&opts->alloc_wrappers, optarg))
				ret = fail(
					err, err_sz,
					"--alloc-wrapper: '%s' is not a function name of 1 to %d "
					"characters, or more than %d were given",
					optarg, CP_ALLOC_WRAPPER_NAME_LEN - 1,
					CP_MAX_ALLOC_WRAPPERS);
			break;
		case ':':
			return fail(err, err_sz, "option '%s' needs a value", argv[optind - 1]);
		case '?':
			if (optopt)
				return fail(err, err_sz, "unknown option '-%c'", optopt);
			return fail(err, err_sz, "unknown option '%s'", argv[optind - 1]);
		default:
			ret = parse_pct_opt(c, optarg, opts, err, err_sz);
			if (ret == 1)
				ret = parse_number_opt(c, optarg, opts, err, err_sz);
			break;
		}
		if (ret)
			return ret;
	}

	if (opts->prom_file && !strcmp(opts->prom_file, "-"))
		return fail(err, err_sz,
			    "--prom-file: give a file name (it is replaced atomically)");
	if (opts->fail_on_new && opts->mode != CP_MODE_DIFF)
		return fail(err, err_sz, "--fail-on-new is for `cacheperf-bpf diff BEFORE AFTER`");
	ret = check_export(opts, err, err_sz);
	if (ret)
		return ret;
	if (opts->mode == CP_MODE_DIFF)
		return check_diff(argc, argv, opts, err, err_sz);
	if (opts->mode == CP_MODE_REPORT)
		return check_report(argc, argv, opts, err, err_sz);
	if (opts->path_map.nr)
		return fail(err, err_sz, "--path-map is for `cacheperf-bpf report FILE` and diff");
	if (optind < argc) {
		if (strcmp(argv[optind - 1], "--") != 0)
			return fail(err, err_sz,
				    "unexpected argument '%s' (put a command after --)",
				    argv[optind]);
		ret = set_target(opts, CP_TARGET_CMD, err, err_sz);
		if (ret)
			return ret;
		opts->cmd_argv = &argv[optind];
	} else if (optind > 0 && optind == argc && strcmp(argv[optind - 1], "--") == 0) {
		return fail(err, err_sz, "no command after --");
	}

	if (opts->output && opts->json && strcmp(opts->output, opts->json) == 0)
		return fail(err, err_sz, "-o and --json name the same file '%s'", opts->output);
	if (opts->html && ((opts->output && !strcmp(opts->output, opts->html)) ||
			   (opts->json && !strcmp(opts->json, opts->html))))
		return fail(err, err_sz, "--html names the file of -o or --json '%s'", opts->html);
	if ((opts->window_s + opts->interval_s - 1) / opts->interval_s > CP_ROLL_MAX_INTERVALS)
		return fail(
			err, err_sz,
			"--window-seconds %u: at most %d intervals of %u s in a window; raise -i",
			opts->window_s, CP_ROLL_MAX_INTERVALS, opts->interval_s);
	if (opts->mode == CP_MODE_PROBE) {
		if (opts->target != CP_TARGET_NONE)
			return fail(err, err_sz, "--probe takes no target");
		return 0;
	}
	if (opts->target == CP_TARGET_NONE)
		return fail(err, err_sz, "no target: give -p PID, -a or -- CMD");
	if (opts->cgroup && opts->target != CP_TARGET_ALL)
		return fail(err, err_sz, "--cgroup limits -a to one cgroup: use it with -a");
	/* a launched command is a developer's run: detection first; a live service pays less */
	if (opts->overhead_ppm == CP_OVERHEAD_UNSET)
		opts->overhead_ppm =
			opts->target == CP_TARGET_CMD ? CP_BUDGET_PPM_CMD : CP_BUDGET_PPM_LIVE;
	/*
	 * -a sees every process start: opening each one's modules to unwind its
	 * call sites or sampled stacks (~17 ms, more on a busy host) would hold
	 * the drain up
	 */
	if (opts->alloc_stack_bytes == CP_STACK_BYTES_UNSET)
		opts->alloc_stack_bytes = opts->target == CP_TARGET_ALL ? 0 : CP_USTACK_BYTES;
	if (opts->stack_copy_bytes == CP_STACK_BYTES_UNSET)
		opts->stack_copy_bytes = opts->target == CP_TARGET_ALL ? 0 : CP_USTACK_BYTES;
	return 0;
}
