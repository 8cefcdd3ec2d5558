// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of the allocation probes per malloc+free pair (root): the workload
 * tests/workloads/alloc_sites times N pairs (`pairs N`, malloc(64) then free
 * through its labelled call sites), once unprofiled and once with the
 * allocation probes attached to it (stacks captured, events drained and
 * counted here as a session would), ROUNDS times each; prints the medians
 * and the difference. Goal: <= 1500 ns per pair profiled.
 *
 * usage: alloc_probe_cost [ROUNDS [PAIRS [--no-stacks | --empty]]]
 *        alloc_probe_cost --sites | --sites-no-copy [ROUNDS]
 *   (default 5 rounds, 1000000 pairs, deeper stacks captured)
 *   --empty: the probes' programs return at once: what the uprobes and
 *   uretprobe cost by themselves in this kernel, the floor of the design.
 *   --sites: the cost of a call site's first allocation instead (the
 *   workload's `newsites`: one pair at each of 1024 new call sites, a new
 *   process each run), where the deeper stack is walked and the stack copy
 *   for CFI unwinding taken (--alloc-stack-bytes' default); --sites-no-copy:
 *   the same without the copy (--alloc-stack-bytes 0). The difference of
 *   the two is the copy's cost, per call site.
 * Then one more profiled run with BPF_ENABLE_STATS, which costs ~50 ns per
 * program run, prints the time spent inside each program: the rest of the
 * profiled cost is the probes' own (see --empty), and other processes on the
 * machine barely touch this part.
 * The workload is looked up in $CP_BUILD/tests/workloads (default: build);
 * $CP_BENCH_WORKLOAD names another one with the same `pairs N` protocol:
 * cxx_bad_alloc_tcmalloc or cxx_bad_alloc_jemalloc time operator new(64)
 * and delete pairs in those allocators (cxx_bad_alloc_libc: libstdc++'s,
 * which call malloc and free).
 */
#include <errno.h>
#include <stdbool.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/alloc_probes.h"
#include "live/drain.h"

#define MAX_ROUNDS	31
#define GOAL_NS		1500.0

struct bench {
	struct cacheperf *skel;
	struct cp_alloc_probes *ap;
	struct cp_drain *drain;
	__u64 records;
};

static int count_record(__u32 type, const void *data, size_t size, void *ctx)
{
	(void)type;
	(void)data;
	(void)size;
	((struct bench *)ctx)->records++;
	return 0;
}

/* Mean ns per run of @prog since its load (stats on). */
static double prog_ns(const struct bpf_program *prog, __u64 *runs)
{
	struct bpf_prog_info info = { 0 };
	__u32 len = sizeof(info);

	*runs = 0;
	if (bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &len) || !info.run_cnt)
		return 0;
	*runs = info.run_cnt;
	return (double)info.run_time_ns / (double)info.run_cnt;
}

static void print_prog_ns(const struct cacheperf *skel)
{
	const struct bpf_program *progs[] = {
		skel->progs.on_alloc, skel->progs.on_alloc_ret, skel->progs.on_alloc_exit,
		skel->progs.on_free,
	};
	/* a throwing operator new has exit points (bpf/alloc.bpf.c), no return probe */
	const char *names[] = { "malloc entry", "malloc return", "exit point", "free entry" };
	double sum = 0;

	printf("inside the programs, ns per run:");
	for (size_t i = 0; i < sizeof(progs) / sizeof(progs[0]); i++) {
		__u64 runs;
		double ns = prog_ns(progs[i], &runs);

		printf(" %s %.0f (%llu runs);", names[i], ns, (unsigned long long)runs);
		sum += ns;
	}
	printf(" per pair %.0f\n", sum);
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/*
 * One run of the workload with @args (its mode and argument); with @b,
 * profiled. Returns elapsed ns per pair (or per site), < 0 on error, and
 * the workload's CPU ns per pair in @cpu.
 */
static double run_once(const char *path, char *const args[2], struct bench *b, double *cpu)
{
	int in[2], out[2], status;
	char line[128] = "";
	double ns = -1;
	FILE *fin, *fout;
	size_t len = 0;
	pid_t pid;
	__u32 key;
	__u8 one = 1;

	if (pipe(in) || pipe(out))
		return -1;
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, args[0], args[1], (char *)NULL);
		_exit(127);
	}
	close(in[0]);
	close(out[1]);
	fin = fdopen(in[1], "w");
	fout = fdopen(out[0], "r");
	if (!fgets(line, sizeof(line), fout))
		goto cleanup;
	if (b) {
		key = pid;
		bpf_map__update_elem(b->skel->maps.targ_tgids, &key, sizeof(key), &one,
				     sizeof(one), BPF_ANY);
		if (cp_alloc_probes__attach_pid(b->ap, pid, false)) {
			fprintf(stderr, "cannot attach to %d\n", (int)pid);
			goto cleanup;
		}
	}
	fputs("go\n", fin);
	fflush(fin);
	/* drain while the workload runs, as a session would */
	for (;;) {
		struct pollfd pfd[2] = {
			{ .fd = out[0], .events = POLLIN },
			{ .fd = b ? cp_drain__epoll_fd(b->drain) : -1, .events = POLLIN },
		};
		ssize_t n;

		if (poll(pfd, 2, 100) < 0 && errno != EINTR)
			break;
		if (b)
			cp_drain__poll(b->drain, 0);
		if (!(pfd[0].revents & (POLLIN | POLLHUP)))
			continue;
		n = read(out[0], line + len, sizeof(line) - 1 - len);
		if (n <= 0)
			break;
		len += n;
		line[len] = '\0';
		if (strchr(line, '\n'))
			break;
	}
	if (sscanf(line, "ns %lf cpu %lf", &ns, cpu) != 2)
		ns = -1;
	if (b) {
		cp_drain__poll(b->drain, 0);
		cp_alloc_probes__detach_pid(b->ap, pid);
		key = pid;
		bpf_map__delete_elem(b->skel->maps.targ_tgids, &key, sizeof(key), 0);
	}
cleanup:
	fclose(fin);
	fclose(fout);
	waitpid(pid, &status, 0);
	return ns;
}

static void print_pairs(const double *plain, const double *prof, const double *plain_cpu,
			const double *prof_cpu, int rounds, long pairs,
			const struct cp_alloc_prepare *prep)
{
	printf("%s", prep->no_stacks ? "without stacks: " :
		     prep->empty ? "empty programs (the floor): " : "");
	printf("malloc+free pair: unprofiled %.1f ns, profiled %.1f ns, probes add %.1f ns "
	       "(median of %d runs x %ld pairs; goal <= %.0f ns profiled: %s)\n",
	       plain[rounds / 2], prof[rounds / 2], prof[rounds / 2] - plain[rounds / 2], rounds,
	       pairs, GOAL_NS, prof[rounds / 2] <= GOAL_NS ? "met" : "MISSED");
	printf("CPU time of the workload per pair: unprofiled %.1f ns, profiled %.1f ns "
	       "(medians; what a busy machine's other processes do not inflate)\n",
	       plain_cpu[rounds / 2], prof_cpu[rounds / 2]);
}

/* --sites: per first allocation at a call site; compare with the pairs' figure. */
static void print_sites(const double *plain, const double *prof, const double *plain_cpu,
			const double *prof_cpu, int rounds, bool no_copy)
{
	printf("first malloc+free at a call site, %s: unprofiled %.1f ns, profiled %.1f ns, "
	       "probes add %.1f ns (median of %d runs x 1024 new call sites)\n",
	       no_copy ? "frame pointers only (--alloc-stack-bytes 0)"
		       : "with the stack copy (--alloc-stack-bytes 4096)",
	       plain[rounds / 2], prof[rounds / 2], prof[rounds / 2] - plain[rounds / 2], rounds);
	printf("CPU time of the workload per call site: unprofiled %.1f ns, profiled %.1f ns "
	       "(medians)\n", plain_cpu[rounds / 2], prof_cpu[rounds / 2]);
}

int main(int argc, char **argv)
{
	struct cp_alloc_probes_opts opts = { .max_alloc_rate = 0 };
	/* every record, the call sites' stack copies (live-only) too */
	struct cp_record_ops ops = { .record = count_record, .live = count_record };
	double plain[MAX_ROUNDS], prof[MAX_ROUNDS], plain_cpu[MAX_ROUNDS], prof_cpu[MAX_ROUNDS];
	double cpu;
	bool sites = argc > 1 && !strncmp(argv[1], "--sites", 7);
	bool no_copy = sites && !strcmp(argv[1], "--sites-no-copy");
	int rounds = argc > 1 + sites ? atoi(argv[1 + sites]) : sites ? 11 : 5;
	long pairs = !sites && argc > 2 ? atol(argv[2]) : 1000000;
	const char *mode = !sites && argc > 3 ? argv[3] : "";
	struct cp_alloc_prepare prep = {
		.no_stacks = !strcmp(mode, "--no-stacks"), .empty = !strcmp(mode, "--empty"),
		.no_stack_copy = no_copy,
	};
	char count[32], *args[2] = { sites ? "newsites" : "pairs", sites ? NULL : count };
	struct cp_alloc_probes_stats st;
	const char *build = getenv("CP_BUILD");
	struct bench b = { 0 };
	char path[4096];
	int err = 1, stats_fd = -1;

	if (rounds < 1 || rounds > MAX_ROUNDS || pairs < 1024 ||
	    (*mode && !prep.no_stacks && !prep.empty) || (sites && !no_copy && strcmp(argv[1], "--sites")) ||
	    argc > (sites ? 3 : 4)) {
		fprintf(stderr, "usage: %s [ROUNDS (1-%d) [PAIRS (>= 1024) [--no-stacks | --empty]]]\n"
			"       %s --sites | --sites-no-copy [ROUNDS]\n", argv[0], MAX_ROUNDS, argv[0]);
		return 2;
	}
	snprintf(count, sizeof(count), "%ld", pairs);
	snprintf(path, sizeof(path), "%s/tests/workloads/%s", build ? build : "build",
		 getenv("CP_BENCH_WORKLOAD") && !sites ? getenv("CP_BENCH_WORKLOAD") : "alloc_sites");
	if (geteuid() != 0) {
		fprintf(stderr, "alloc_probe_cost: needs root (bpf, uprobes)\n");
		return 2;
	}
	b.skel = cacheperf__open();
	if (!b.skel)
		return 1;
	b.skel->rodata->targ_filter_tgid = true;
	b.skel->rodata->targ_self_tgid = getpid();
	if (cp_alloc_probes_prepare(b.skel, &prep) || cacheperf__load(b.skel)) {
		fprintf(stderr, "cannot load the BPF programs\n");
		goto cleanup;
	}
	b.ap = cp_alloc_probes__new(b.skel, &opts);
	ops.ctx = &b;
	ops.live_ctx = &b;
	b.drain = b.ap ? cp_drain__new(b.skel, &ops) : NULL;
	if (!b.drain) {
		fprintf(stderr, "cannot attach the syscall tracepoints or the drain\n");
		goto cleanup;
	}
	for (int r = 0; r < rounds; r++) {
		plain[r] = run_once(path, args, NULL, &plain_cpu[r]);
		prof[r] = run_once(path, args, &b, &prof_cpu[r]);
		if (plain[r] < 0 || prof[r] < 0) {
			fprintf(stderr, "run %d failed (workload %s)\n", r, path);
			goto cleanup;
		}
	}
	/* run time per program, while this fd is open */
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd >= 0 && run_once(path, args, &b, &cpu) < 0)
		fprintf(stderr, "the run with program statistics failed\n");
	qsort(plain, rounds, sizeof(double), cmp_double);
	qsort(prof, rounds, sizeof(double), cmp_double);
	qsort(plain_cpu, rounds, sizeof(double), cmp_double);
	qsort(prof_cpu, rounds, sizeof(double), cmp_double);
	cp_alloc_probes__stats(b.ap, &st);
	if (sites)
		print_sites(plain, prof, plain_cpu, prof_cpu, rounds, no_copy);
	else
		print_pairs(plain, prof, plain_cpu, prof_cpu, rounds, pairs, &prep);
	printf("records %llu, ring-buffer drops %llu, stack errors %llu, entry probes: %llu moved, "
	       "%llu at an emulated entry, %llu single-stepped, %llu only jumping to another\n",
	       (unsigned long long)b.records, (unsigned long long)st.bpf.drop_ringbuf,
	       (unsigned long long)st.bpf.stack_errors, (unsigned long long)st.placed,
	       (unsigned long long)st.entry_emulated, (unsigned long long)st.single_step,
	       (unsigned long long)st.forwarded);
	if (stats_fd >= 0)
		print_prog_ns(b.skel);
	err = 0;
cleanup:
	if (stats_fd >= 0)
		close(stats_fd);
	cp_drain__free(b.drain);
	cp_alloc_probes__free(b.ap);
	cacheperf__destroy(b.skel);
	return err;
}
