// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The profiling session: skeleton lifecycle and event attachment (libbpf edge). */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/random.h>
#include <sys/resource.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/alloc_probes.h"
#include "machine/pmu_attr.h"
#include "machine/source.h"
#include "machine/sysinfo.h"
#include "profile/proc_identity.h"
#include "live/session.h"
#include "live/libbpf_log.h"
#include "live/soft_source.h"
#include "live/stack_drain.h"
#include "util/log.h"

/* Page faults are rare next to memory accesses: sample every one of them. */
#define CP_FAULTS_PERIOD 1

void cp_session_route_libbpf(void)
{
	cp_libbpf_log_route();
}

static int fail(char *err, size_t err_sz, int ret, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(err, err_sz, fmt, ap);
	va_end(ap);
	return ret;
}

/* Sampling events each target thread would need, for the fd budget of the scope decision. */
static int cp_events_per_thread(const struct cp_session_cfg *cfg)
{
	if (cfg->source.kind == CP_SOURCE_PEBS) {
		/* loads, stores, and the aux leader; once per PMU on hybrid parts */
		int per_pmu = 2 + (cfg->pmus->core[0].mem_loads_aux[0] != '\0');

		return per_pmu * (cfg->pmus->nr_core ? cfg->pmus->nr_core : 1);
	}
	return 1;
}

static int cp_decide_scope(const struct cp_session_cfg *cfg, struct cp_perf_scope *scope, char *err,
			   size_t err_sz)
{
	struct rlimit nofile = {0};
	int threads = 0;

	for (int i = 0; i < cfg->nr_pids; i++) {
		int n = cp_perf_count_threads(cfg->pids[i]);

		bool gone = n == -ENOENT || n == -ESRCH;

		if (n < 0)
			return fail(err, err_sz, gone ? -ESRCH : n,
				    "cannot list the threads of process %d: %s", (int)cfg->pids[i],
				    gone ? "it has exited" : strerror(-n));
		threads += n;
	}
	if (getrlimit(RLIMIT_NOFILE, &nofile))
		nofile.rlim_cur = 1024;
	cp_perf_scope_decide(cfg->system_wide, threads, cp_events_per_thread(cfg),
			     cfg->source.per_task, (long)nofile.rlim_cur, scope);
	return 0;
}

static int cp_fill_targets(struct cp_session *s, const struct cp_session_cfg *cfg, char *err,
			   size_t err_sz)
{
	int fd = bpf_map__fd(s->skel->maps.targ_tgids);
	/* a held `-- CMD` child runs our code until its exec: profiled from the exec on */
	__u8 v = cfg->held ? CP_TARG_HELD : CP_TARG_PROFILE;

	for (int i = 0; i < cfg->nr_pids; i++) {
		__u32 tgid = (__u32)cfg->pids[i];

		if (bpf_map_update_elem(fd, &tgid, &v, BPF_ANY))
			return fail(err, err_sz, -errno,
				    "cannot add process %d to the BPF filter: %s", (int)tgid,
				    strerror(errno));
	}
	return 0;
}

/* --cgroup: the BPF side profiles only the tasks under this cgroup. */
static int cp_fill_cgroup(struct cp_session *s, const char *path, char *err, size_t err_sz)
{
	int fd = cp_cgroup_open(path, err, err_sz), ret = 0;
	__u32 zero = 0;

	if (fd < 0)
		return fd;
	if (bpf_map_update_elem(bpf_map__fd(s->skel->maps.targ_cgroups), &zero, &fd, BPF_ANY))
		ret = fail(err, err_sz, -errno, "--cgroup: cannot set the BPF cgroup filter: %s",
			   strerror(errno));
	close(fd); /* the map holds the cgroup */
	return ret;
}

/* "PID (COMM)", or "PID" once it is gone, into @buf. */
static const char *proc_name(pid_t pid, char *buf, size_t sz)
{
	char comm[32];

	cp_proc_read_comm(pid, comm, sizeof(comm));
	if (comm[0])
		snprintf(buf, sz, "%d (%s)", (int)pid, comm);
	else
		snprintf(buf, sz, "%d", (int)pid);
	return buf;
}

/* --max-alloc-rate per process, without budget windows */
static struct cp_log_tally guard_tally = {
	.level = CP_LOG_NOTICE,
	.subject = "allocation probes over --max-alloc-rate",
	.why = {"backed off", "resumed"},
};

static void cp_on_guard(pid_t pid, bool backed_off, void *ctx)
{
	struct cp_session *s = ctx;
	char name[64];

	if (backed_off)
		s->guard_backoffs++;
	if (s->on_guard)
		s->on_guard(pid, backed_off, s->on_guard_ctx);
	/* the budget's windows come and go every few seconds: the report sums them up */
	if (s->alloc_windows)
		return;
	if (pid < 0) {
		cp_notice("allocation probes %s for every process",
			  backed_off ? "backed off (over --max-alloc-rate)" : "resumed");
		return;
	}
	/* a busy machine has many processes over the rate: counted, named with -v */
	cp_log_tally(&guard_tally, !backed_off);
	if (cp_log_enabled(CP_LOG_INFO))
		cp_info("allocation probes %s for process %s",
			backed_off ? "backed off (over --max-alloc-rate)" : "resumed",
			proc_name(pid, name, sizeof(name)));
}

/*
 * Allocation probes of an exec'd process: most processes of a busy machine
 * live for milliseconds, and get none because they exited or had mapped no
 * malloc yet when their exec was handled. Counted, said once a period.
 */
static struct cp_log_tally skipped_tally = {
	.level = CP_LOG_NOTICE,
	.subject = "allocation probes skipped",
	.why = {"had mapped no malloc yet", "exited before attach"},
};
/* a failure that is no race: one line each, a few a period */
static struct cp_log_limit probe_fails = CP_LOG_LIMIT_INIT(CP_LOG_WARNING, 3);

/* A target's explicit failure: said whatever it is (-p PID, -- CMD). */
static void say_probe_failure(pid_t pid, int ret, bool target)
{
	const char *held = cp_libbpf_log_held();
	char name[64], why[320];

	snprintf(why, sizeof(why), "%s%s%s%s",
		 ret == -ENOENT ? "nothing it maps defines malloc" : strerror(-ret),
		 held[0] ? " (" : "", held, held[0] ? ")" : "");
	if (target)
		cp_warn("no allocation probes for process %s: %s; its heap objects stay unknown",
			proc_name(pid, name, sizeof(name)), why);
	else
		cp_log_limited(
			&probe_fails,
			"no allocation probes for process %s: %s; its heap objects stay unknown",
			proc_name(pid, name, sizeof(name)), why);
}

/* An exec'd process skipped: it @exited, or had mapped no malloc yet. */
static void say_skipped(pid_t pid, bool exited)
{
	cp_log_tally(&skipped_tally, exited);
	if (cp_log_enabled(CP_LOG_INFO)) {
		char name[64];

		cp_info("allocation probes skipped for process %s: %s",
			proc_name(pid, name, sizeof(name)),
			exited ? "it exited before they were attached"
			       : "nothing it maps defines malloc yet");
	}
}

static int probe_allocs(struct cp_session *s, pid_t pid, bool target, bool last)
{
	int ret;

	if (!s->alloc)
		return 0;
	cp_libbpf_log_hold(true);
	ret = cp_alloc_probes__attach_pid(s->alloc, pid, !target && !last);
	cp_libbpf_log_hold(false);
	/* -EAGAIN: exec'd, its libraries not mapped yet: the caller asks again */
	if (!ret || ret == -EEXIST || ret == -EAGAIN)
		return ret;
	/* just exec'd: the dynamic loader may not have mapped its libc yet */
	if (ret == -ENOENT && !target && !last)
		return -EAGAIN;
	/* a probe refused because the process exited meanwhile: the same race */
	if (ret != -ENOENT && kill(pid, 0) && errno == ESRCH)
		ret = -ESRCH;
	/* a target that exited: the run ends for it, nothing to warn about */
	if ((target && ret == -ENOENT) || (ret != -ENOENT && ret != -ESRCH)) {
		say_probe_failure(pid, ret, target);
		return ret;
	}
	say_skipped(pid, ret == -ESRCH);
	return ret;
}

int cp_session__probe_allocs(struct cp_session *s, pid_t pid, bool last)
{
	return probe_allocs(s, pid, false, last);
}

void cp_session__probe_gone(struct cp_session *s, pid_t pid)
{
	if (s->alloc)
		say_skipped(pid, true);
}

void cp_session__set_budget(struct cp_session *s, const struct cp_budget_plan *plan,
			    const struct cp_unit_costs *u)
{
	if (plan->wakeup_min_ns)
		s->skel->data->wakeup_min_ns = plan->wakeup_min_ns;
	if (!s->alloc)
		return;
	cp_alloc_probes__set_budget(s->alloc, plan->alloc_ppm, cp_unit_call_ns(u),
				    cp_unit_exit_ns(u));
	s->alloc_windows = plan->alloc_ppm && cp_unit_call_ns(u);
}

/*
 * The hash maps whose entries come as the run goes (live objects, the
 * stacks by id of samples and allocations, and the soft source's decoded
 * instructions, which only user space writes) get them allocated then
 * (BPF_F_NO_PREALLOC), where the kernel allows it in every program that
 * writes them (6.1). Preallocated, their 262144 + 5 x 16384 elements took
 * about 0.1 s of the start-up's CPU (htab_map_alloc; 4.8 ms for the
 * decoded instructions' alone) for entries most runs never fill. The maps
 * written on every event (per-instruction counts, the LRU maps) stay
 * preallocated.
 */
static int alloc_at_run(struct cacheperf *skel)
{
	struct bpf_map *maps[] = {skel->maps.live_objects,     skel->maps.alloc_stacks,
				  skel->maps.alloc_stacks_odd, skel->maps.sample_stacks,
				  skel->maps.stack_kinds,      skel->maps.soft_insns};
	int err = 0;

	if (cp_sysinfo_bpf_runtime_alloc() != 1)
		return 0;
	for (size_t i = 0; i < sizeof(maps) / sizeof(maps[0]) && !err; i++)
		err = bpf_map__set_map_flags(maps[i],
					     bpf_map__map_flags(maps[i]) | BPF_F_NO_PREALLOC);
	return err;
}

int cp_session__open(const struct cp_session_cfg *cfg, struct cp_session **out, char *err,
		     size_t err_sz)
{
	struct cp_session *s;
	int ret;

	*out = NULL;
	s = calloc(1, sizeof(*s));
	if (!s)
		return fail(err, err_sz, -ENOMEM, "out of memory");

	ret = cp_decide_scope(cfg, &s->scope, err, err_sz);
	if (ret)
		goto fail;

	/* Open BPF application */
	s->skel = cacheperf__open();
	if (!s->skel) {
		ret = fail(err, err_sz, -errno, "cannot open the BPF object: %s", strerror(errno));
		goto fail;
	}

	/* Set knobs before load */
	/* -p and --: per-CPU events need it; per-thread ones too, so a held
	 * `-- CMD` child stays out until its exec (CP_TARG_HELD) */
	s->skel->rodata->targ_filter_tgid = !cfg->system_wide;
	s->skel->rodata->targ_self_tgid = (__u32)getpid();
	s->skel->rodata->targ_cgroup_salt = cp_cgroup_v1_salt();
	s->skel->rodata->targ_forward_all = cp_source_of(cfg->source.kind)->forwards_all;
	s->skel->rodata->targ_window_size = cfg->window;
	s->skel->rodata->targ_stack_every = cfg->stack_every;
	ret = cp_stack_copies_prepare(s->skel, cfg->stack_every ? cfg->stack_copy_bytes : 0);
	if (ret) {
		fail(err, err_sz, ret, "cannot size the stack copy maps: %s", strerror(-ret));
		goto fail;
	}
	s->skel->rodata->targ_window_ratio_ppm = cfg->window_ratio_ppm;
	s->skel->rodata->targ_filter_cgroup = cfg->cgroup != NULL;
	ret = cp_mem_prog_size_windows(s->skel);
	if (ret) {
		fail(err, err_sz, ret, "cannot size the window map: %s", strerror(-ret));
		goto fail;
	}
	ret = cp_mem_prog_select(s->skel);
	if (ret < 0) {
		fail(err, err_sz, ret, "cannot choose the sample program: %s", strerror(-ret));
		goto fail;
	}
	s->variant = (enum cp_mem_prog)ret;
	ret = alloc_at_run(s->skel);
	if (ret) {
		fail(err, err_sz, ret, "cannot set the maps' flags: %s", strerror(-ret));
		goto fail;
	}
	ret = cp_alloc_probes_prepare(s->skel, &(struct cp_alloc_prepare){
						       .stack_copy_bytes = cfg->alloc_stack_bytes,
						       .no_stack_copy = !cfg->alloc_stack_bytes,
					       });
	if (ret) {
		fail(err, err_sz, ret, "cannot set up the allocation probes: %s", strerror(-ret));
		goto fail;
	}

	/*
	 * on_tick is "?perf_event" too: loaded for the no-PMU source only, which
	 * attaches no memory-sample program: that one is not verified for nothing
	 */
	if (cfg->source.kind == CP_SOURCE_SOFT) {
		bpf_program__set_autoload(s->skel->progs.on_tick, true);
		bpf_program__set_autoload(cp_mem_prog(s->skel, s->variant), false);
		s->soft_on = true;
	}

	/* on_breakpoint is "?perf_event": loaded only when breakpoints are on */
	if (cfg->max_bp_rate) {
		bpf_program__set_autoload(s->skel->progs.on_breakpoint, true);
		if (cfg->geo) {
			s->skel->rodata->targ_l1_line_bytes =
				cfg->geo->slot[CP_CACHE_L1D].line_bytes;
			s->skel->rodata->targ_l1_sets = cfg->geo->slot[CP_CACHE_L1D].sets;
			s->skel->rodata->targ_l1_ways = cfg->geo->slot[CP_CACHE_L1D].ways;
		}
		s->bp_on = true;
	}

	/* Load & verify BPF programs */
	/* the questions asked of the kernel's BTF before the load are answered */
	cp_sysinfo_btf_release();
	ret = cacheperf__load(s->skel);
	if (ret) {
		fail(err, err_sz, ret,
		     "cannot load the BPF programs: %s (run with -vv for the verifier log; needs a "
		     "kernel with BTF, 5.8 or newer)",
		     strerror(-ret));
		goto fail;
	}
	ret = cp_fill_targets(s, cfg, err, err_sz);
	if (!ret && cfg->cgroup)
		ret = cp_fill_cgroup(s, cfg->cgroup, err, err_sz);
	if (ret)
		goto fail;
	if (!cfg->no_objects) {
		struct cp_alloc_probes_opts ao = {
			.max_alloc_rate = cfg->max_alloc_rate,
			.log = cp_log_enabled(CP_LOG_INFO) ? cp_log_file(CP_LOG_INFO) : NULL,
			.on_guard = cp_on_guard,
			.ctx = s,
		};

		s->alloc = cp_alloc_probes__new(s->skel, &ao);
		if (!s->alloc) {
			ret = fail(err, err_sz, -errno, "cannot attach the mapping tracepoints: %s",
				   strerror(errno));
			goto fail;
		}
	}
	*out = s;
	return 0;
fail:
	cp_session__free(s);
	return ret;
}

static __u64 cp_random_seed(void)
{
	__u64 seed;

	if (getrandom(&seed, sizeof(seed), GRND_NONBLOCK) != sizeof(seed))
		seed = (__u64)time(NULL) ^ ((__u64)getpid() << 32);
	return seed;
}

static int cp_attach_faults(struct cp_session *s, const struct cp_session_cfg *cfg,
			    struct bpf_program *prog, char *err, size_t err_sz)
{
	struct cp_event_spec spec;
	struct cp_cpuset cpus;
	int ret, total = 0;

	cp_page_fault_spec(&spec, CP_FAULTS_PERIOD);
	if (s->scope.per_cpu) {
		ret = cp_perf_online_cpus(cfg->sysfs_root, &cpus);
		if (ret < 0)
			return fail(err, err_sz, ret, "cannot read the online CPUs: %s",
				    strerror(-ret));
		return cp_perf_events__open_cpus(s->events, &spec, &cpus, prog, err, err_sz);
	}
	for (int i = 0; i < cfg->nr_pids; i++) {
		ret = cp_perf_events__open_threads(s->events, &spec, cfg->pids[i], prog, err,
						   err_sz);
		if (ret < 0)
			return ret;
		total += ret;
	}
	return total;
}

/* The no-PMU source: cpu-clock ticks on every CPU, the BPF filter picks the targets. */
static int cp_attach_soft(struct cp_session *s, const struct cp_session_cfg *cfg, char *err,
			  size_t err_sz)
{
	struct cp_cpuset cpus;
	int ret;

	ret = cp_perf_online_cpus(cfg->sysfs_root, &cpus);
	if (ret < 0)
		return fail(err, err_sz, ret, "cannot read the online CPUs: %s", strerror(-ret));
	return cp_soft_events_open(s->events, &cpus, cfg->soft_freq_hz, s->skel->progs.on_tick, err,
				   err_sz);
}

static int cp_attach_pmu(struct cp_session *s, const struct cp_session_cfg *cfg,
			 struct bpf_program *prog, char *err, size_t err_sz)
{
	struct cp_sampling_cfg sampling;
	struct cp_cpuset cpus;
	int ret;

	ret = cp_perf_online_cpus(cfg->sysfs_root, &cpus);
	if (ret < 0)
		return fail(err, err_sz, ret, "cannot read the online CPUs: %s", strerror(-ret));
	cp_sampling_cfg_init(&sampling, cfg->ldlat_cycles, cfg->load_period, cfg->store_period,
			     cp_random_seed());
	return cp_perf_events__open_mem(s->events, cfg->pmus, &cfg->source, &sampling, &s->scope,
					&cpus, cfg->pids, cfg->nr_pids, prog, err, err_sz);
}

/*
 * Target lifecycle programs (bpf/targets.bpf.c): the filter follows forks
 * and exits, and exec/exit records reach user space. Also with -a, where the
 * fork program returns at once and exec/exit still matter.
 */
static int cp_attach_lifecycle(struct cp_session *s, char *err, size_t err_sz)
{
	struct bpf_program *progs[CP_SESSION_LIFECYCLE_LINKS] = {
		s->skel->progs.on_fork,
		s->skel->progs.on_exec,
		s->skel->progs.on_exit,
	};

	for (int i = 0; i < CP_SESSION_LIFECYCLE_LINKS; i++) {
		s->lifecycle[i] = bpf_program__attach(progs[i]);
		if (!s->lifecycle[i])
			return fail(err, err_sz, -errno, "cannot follow the targets (%s): %s",
				    bpf_program__name(progs[i]), strerror(errno));
	}
	return 0;
}

int cp_session__attach(struct cp_session *s, const struct cp_session_cfg *cfg, char *err,
		       size_t err_sz)
{
	struct bpf_program *prog = cp_mem_prog(s->skel, s->variant);
	int ret;

	ret = cp_attach_lifecycle(s, err, err_sz);
	if (ret)
		return ret;

	s->events = cp_perf_events__new();
	if (!s->events)
		return fail(err, err_sz, -ENOMEM, "out of memory");
	switch (cfg->source.kind) {
	case CP_SOURCE_PEBS:
	case CP_SOURCE_IBS:
		ret = cp_attach_pmu(s, cfg, prog, err, err_sz);
		break;
	case CP_SOURCE_FAULTS:
		ret = cp_attach_faults(s, cfg, prog, err, err_sz);
		break;
	case CP_SOURCE_SOFT:
		ret = cp_attach_soft(s, cfg, err, err_sz);
		break;
	default:
		ret = fail(err, err_sz, -EOPNOTSUPP, "source %s cannot be attached in this version",
			   cp_source_name(cfg->source.kind));
		break;
	}
	if (ret < 0)
		return ret;
	s->nr_events = ret;
	return 0;
}

void cp_session__attach_allocs(struct cp_session *s, const struct cp_session_cfg *cfg)
{
	int ret;

	/* a failure loses heap objects, not the profile */
	if (s->alloc && cfg->system_wide) {
		ret = cp_alloc_probes__attach_all(s->alloc);
		if (ret)
			cp_warn("no allocation probes on the system libc: %s", strerror(-ret));
	}
	for (int i = 0; s->alloc && i < cfg->nr_pids; i++)
		probe_allocs(s, cfg->pids[i], true, true);
}

void cp_session__free(struct cp_session *s)
{
	if (!s)
		return;
	/* events and probes first: their links run programs of the skeleton */
	cp_perf_events__free(s->events);
	cp_alloc_probes__free(s->alloc);
	for (int i = 0; i < CP_SESSION_LIFECYCLE_LINKS; i++)
		bpf_link__destroy(s->lifecycle[i]);
	cacheperf__destroy(s->skel);
	free(s);
}
