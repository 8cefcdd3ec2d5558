// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of one memory sample in the BPF pipeline (root): the kernel runs the
 * pipeline a million times per round through BPF_PROG_TEST_RUN and reports
 * the mean ns per run. Syscall programs refuse `repeat`, so this drives the
 * sched_cls twin bench_mem_sample (same cp_mem_sample(), sample as packet).
 * An empty sched_cls program gives the test-run loop's own cost; "net" is
 * the difference. Records are drained between chunks of runs, so forwarding
 * never hits a full buffer; drops are printed anyway.
 *
 * Forwarded records meet the reader in one of two states, and the bench
 * times both:
 *   - it keeps up: chunks of KEEPUP_CHUNK records, drained in between, never
 *     leave CP_RINGBUF_WAKEUP_BYTES waiting, so no record forces a wakeup;
 *   - it lags (production when the reader is busy or behind): before every
 *     chunk, LAG_FILL untimed runs leave CP_RINGBUF_WAKEUP_BYTES unconsumed,
 *     so every timed record finds the data over the wakeup threshold and
 *     only bpf/wakeup.bpf.h's once-per-millisecond limit keeps it from
 *     forcing a wakeup (an irq_work self-IPI, ~5 us in a VM, which the
 *     test-run's duration includes).
 *
 * The pipeline here counts each sample on a stack id given with it; the
 * perf_event programs first walk the user stack (bpf_get_stackid()), which
 * a sched_cls program may not call. A second table times that walk and the
 * counting together in the raw tracepoint twin bench_stack_walk, test-run
 * from the bottom of a chain of DEPTH frame-pointer frames made here (the
 * kernel walks the caller's stack from its system call), by the kernel's
 * run-time stats (BPF_ENABLE_STATS), per run.
 *
 * usage: bpf_sample_cost [ROUNDS]   (default 7; prints medians)
 */
#include <errno.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/drain.h"
#include "live/mem_prog.h"

#define RUNS_PER_ROUND	1000000
/* a record in the ring buffer: struct cp_sample and its 8-byte header */
#define REC_BYTES	(sizeof(struct cp_sample) + BPF_RINGBUF_HDR_SZ)
#define CHUNK		50000	/* 50000 * 72-byte records < 4 MiB */
/* records that stay below the wakeup threshold: 2500 * 72 < 256 KiB */
#define KEEPUP_CHUNK	2500
/* untimed records that put the data waiting past the wakeup threshold */
#define LAG_FILL	((int)(CP_RINGBUF_WAKEUP_BYTES / REC_BYTES) + 1)
#define MAX_ROUNDS	31
#define TGID		4242

#define DS_L1 (PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L1) | \
	       PERF_MEM_S(LVLNUM, L1))
#define DS_L3 (PERF_MEM_S(OP, LOAD) | PERF_MEM_S(LVL, HIT) | PERF_MEM_S(LVL, L3) | \
	       PERF_MEM_S(LVLNUM, L3))

struct scenario {
	const char *name;
	__u64 data_src;
	__u32 tgid;
	__u32 ratio_ppm;
	bool forward_all;
	bool filter_tgid;
	bool lag;		/* the reader lags: LAG_FILL records wait before each chunk */
	int chunk;		/* runs between drains; 0: CHUNK */
	double goal_ns;		/* 0: none */
	double ns[MAX_ROUNDS];
	__u64 records, drops, filtered;
};

static int count_record(const struct cp_sample *s, void *ctx)
{
	(void)s;
	(*(__u64 *)ctx)++;
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

static double median(double *v, int n)
{
	double tmp[MAX_ROUNDS];

	memcpy(tmp, v, n * sizeof(*v));
	qsort(tmp, n, sizeof(*tmp), cmp_double);
	return n % 2 ? tmp[n / 2] : (tmp[n / 2 - 1] + tmp[n / 2]) / 2;
}

static double minimum(const double *v, int n)
{
	double m = v[0];

	for (int i = 1; i < n; i++)
		m = v[i] < m ? v[i] : m;
	return m;
}

/* Runs @fd @repeat times on @data; the mean ns per run in @ns (may be NULL). */
static int test_run(int fd, const void *data, __u32 size, int repeat, double *ns)
{
	LIBBPF_OPTS(bpf_test_run_opts, opts, .data_in = data, .data_size_in = size,
		    .repeat = repeat);
	int err = bpf_prog_test_run_opts(fd, &opts);

	if (!err && ns)
		*ns = opts.duration;
	return err;
}

/* Consumes every record waiting in @d (NULL: none); how many, or a negative errno. */
static int drain_all(struct cp_drain *d)
{
	int total = 0, got = 0;

	/* one poll stops after CP_DRAIN_BUDGET_NS: poll until nothing is left */
	while (d && (got = cp_drain__poll(d, 0)) > 0)
		total += got;
	return d && got < 0 ? -EIO : total;
}

/*
 * Mean ns per run of @fd over RUNS_PER_ROUND runs on @data, in chunks of
 * @chunk runs, draining @d (NULL: no records) after each. If @fill, @fill
 * untimed runs before each chunk leave their records unconsumed during it:
 * a reader that lags.
 */
static int time_round(int fd, const void *data, __u32 size, struct cp_drain *d, int chunk,
		      int fill, double *ns)
{
	double total = 0, chunk_ns;
	int err, got;

	for (int done = 0; done < RUNS_PER_ROUND; done += chunk) {
		err = fill ? test_run(fd, data, size, fill, NULL) : 0;
		err = err ? err : test_run(fd, data, size, chunk, &chunk_ns);
		if (err)
			return err;
		total += chunk_ns * chunk;
		got = drain_all(d);
		if (got < 0)
			return got;
		/* the lag is real only if the fill runs each wrote a record */
		if (fill && got < fill + chunk) {
			fprintf(stderr, "%d records for %d runs: the reader did not lag\n", got,
				fill + chunk);
			return -EPROTO;
		}
	}
	*ns = total / RUNS_PER_ROUND;
	return 0;
}

/* The loop's own cost: a sched_cls program that only returns. */
static int load_empty(void)
{
	const struct bpf_insn insns[] = {
		{ .code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0 },
		{ .code = BPF_JMP | BPF_EXIT },
	};

	return bpf_prog_load(BPF_PROG_TYPE_SCHED_CLS, "cp_empty", "GPL", insns, 2, NULL);
}

/* The stack-walk table: runs per round, and the chains' depths. */
#define WALK_RUNS	20000
#define WALK_DEPTHS	4
static const int walk_depths[WALK_DEPTHS] = { 1, 8, 16, 30 };

/* Functions that keep their frame and their calls (no tail calls), as -fno-omit-frame-pointer builds. */
#define FRAMED __attribute__((noinline, optimize("no-omit-frame-pointer", "no-optimize-sibling-calls")))

/* @n test runs of @fd by the system call itself: the walk starts in this frame. */
static FRAMED int test_runs_here(int fd, int n)
{
	union bpf_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.test.prog_fd = fd;
	for (int i = 0; i < n; i++)
		if (syscall(__NR_bpf, BPF_PROG_TEST_RUN, &attr, sizeof(attr)))
			return -errno;
	return 0;
}

static FRAMED int test_runs_at_depth(int fd, int n, int depth)
{
	int ret = depth > 1 ? test_runs_at_depth(fd, n, depth - 1) : test_runs_here(fd, n);

	asm volatile("" ::: "memory");
	return ret;
}

/* Run time and runs of @fd so far (stats on). */
static int prog_runs(int fd, __u64 *ns, __u64 *cnt)
{
	struct bpf_prog_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	if (bpf_obj_get_info_by_fd(fd, &info, &len))
		return -errno;
	*ns = info.run_time_ns;
	*cnt = info.run_cnt;
	return 0;
}

/* The frames the walk kept for this process's stack: the deepest in stack_counts. */
static int walked_frames(struct cacheperf *skel)
{
	struct cp_stack_key key, next;
	__u64 pcs[CP_STACK_DEPTH];
	int best = 0, fd = bpf_map__fd(skel->maps.stack_counts);
	bool more = !bpf_map_get_next_key(fd, NULL, &next);

	while (more) {
		key = next;
		more = !bpf_map_get_next_key(fd, &key, &next);
		memset(pcs, 0, sizeof(pcs));
		if (key.tgid != (__u32)getpid() || key.stack_id < 0 ||
		    bpf_map_lookup_elem(bpf_map__fd(skel->maps.sample_stacks), &key.stack_id, pcs))
			continue;
		for (int n = 0; n < CP_STACK_DEPTH && pcs[n]; n++)
			best = n + 1 > best ? n + 1 : best;
	}
	return best;
}

/* Median ns per run of the walk and its counting at each depth into @ns, frames into @frames. */
static int time_walks(int rounds, double ns[WALK_DEPTHS], int frames[WALK_DEPTHS])
{
	struct cacheperf *skel = cacheperf__open();
	double per[MAX_ROUNDS];
	int err, fd, stats_fd = -1;

	if (!skel)
		return -errno;
	err = cp_mem_prog_select(skel);
	err = err < 0 ? err : cp_mem_prog_size_windows(skel);
	err = err ? err : bpf_program__set_autoload(skel->progs.bench_stack_walk, true);
	err = err ? err : cacheperf__load(skel);
	if (err)
		goto cleanup;
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	if (stats_fd < 0) {
		err = -errno;
		goto cleanup;
	}
	fd = bpf_program__fd(skel->progs.bench_stack_walk);
	for (int d = 0; d < WALK_DEPTHS; d++) {
		/* warm up: the stack in the map, its counter entry made */
		err = test_runs_at_depth(fd, 100, walk_depths[d]);
		for (int r = 0; !err && r < rounds; r++) {
			__u64 ns0 = 0, c0 = 0, ns1 = 0, c1 = 0;

			err = prog_runs(fd, &ns0, &c0);
			err = err ? err : test_runs_at_depth(fd, WALK_RUNS, walk_depths[d]);
			err = err ? err : prog_runs(fd, &ns1, &c1);
			if (!err && c1 > c0)
				per[r] = (double)(ns1 - ns0) / (double)(c1 - c0);
		}
		if (err)
			goto cleanup;
		ns[d] = median(per, rounds);
		frames[d] = walked_frames(skel);
	}
cleanup:
	if (stats_fd >= 0)
		close(stats_fd);
	cacheperf__destroy(skel);
	return err;
}

static int run_scenario(struct scenario *sc, int rounds)
{
	struct cp_record_ops ops = { .sample = count_record, .ctx = &sc->records };
	struct cp_mem_input s = {
		.tgid = sc->tgid, .tid = sc->tgid, .cpu = 0, .ip = 0x401000, .addr = 0x7f0000001000,
		.data_src = sc->data_src, .weight = 30, .time_ns = 1,
	};
	struct cacheperf *skel = cacheperf__open();
	struct cp_drain *d = NULL;
	struct cp_stats st;
	__u32 tgid = TGID;
	__u8 one = 1;
	int err = -ENOMEM, fd, chunk, fill;

	if (!skel)
		return -errno;
	skel->rodata->targ_forward_all = sc->forward_all;
	skel->rodata->targ_filter_tgid = sc->filter_tgid;
	skel->rodata->targ_window_ratio_ppm = sc->ratio_ppm;
	/* the default's choice of the samples counted on their stack (bpf/stacks.bpf.h) */
	skel->rodata->targ_stack_every = CP_STACK_EVERY_DEFAULT;
	err = cp_mem_prog_select(skel);
	err = err < 0 ? err : cp_mem_prog_size_windows(skel);
	err = err ? err : bpf_program__set_autoload(skel->progs.bench_mem_sample, true);
	err = err ? err : cacheperf__load(skel);
	if (err)
		goto cleanup;
	err = bpf_map__update_elem(skel->maps.targ_tgids, &tgid, sizeof(tgid), &one, sizeof(one),
				   BPF_ANY);
	if (err)
		goto cleanup;
	d = cp_drain__new(skel, &ops);
	if (!d) {
		err = -errno;
		goto cleanup;
	}
	fd = bpf_program__fd(skel->progs.bench_mem_sample);
	chunk = sc->chunk ? sc->chunk : CHUNK;
	fill = sc->lag ? LAG_FILL : 0;
	/* warm up: counter entry created, window filled, caches hot */
	err = time_round(fd, &s, sizeof(s), d, chunk, fill, &sc->ns[0]);
	for (int r = 0; !err && r < rounds; r++)
		err = time_round(fd, &s, sizeof(s), d, chunk, fill, &sc->ns[r]);
	if (err)
		goto cleanup;
	cp_drain__stats(d, &st);
	sc->drops = st.drop_ringbuf;
	sc->filtered = st.filtered;
cleanup:
	cp_drain__free(d);
	cacheperf__destroy(skel);
	return err;
}

int main(int argc, char **argv)
{
	struct scenario sc[] = {
		{ .name = "not a target (filtered by tgid)", .data_src = DS_L1, .tgid = TGID + 1,
		  .ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM, .filter_tgid = true },
		{ .name = "L1 hit", .data_src = DS_L1, .tgid = TGID,
		  .ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM, .goal_ns = 100 },
		{ .name = "miss, below ratio (filtered)", .data_src = DS_L3, .tgid = TGID,
		  .ratio_ppm = 1000000 },
		{ .name = "miss, forwarded, reader keeps up", .data_src = DS_L3, .tgid = TGID,
		  .ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM, .chunk = KEEPUP_CHUNK, .goal_ns = 250 },
		{ .name = "miss, forwarded, reader lags", .data_src = DS_L3, .tgid = TGID,
		  .ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM, .lag = true, .goal_ns = 250 },
		{ .name = "forward-all (any sample), lags", .data_src = DS_L1, .tgid = TGID,
		  .ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM, .forward_all = true, .lag = true },
	};
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	double empty[MAX_ROUNDS], base, walk_ns[WALK_DEPTHS];
	int walk_frames[WALK_DEPTHS];
	cpu_set_t cpus;
	int fd, err;
	char pad[64] = { 0 };

	if (rounds < 1 || rounds > MAX_ROUNDS) {
		fprintf(stderr, "usage: %s [ROUNDS 1..%d]\n", argv[0], MAX_ROUNDS);
		return 2;
	}
	if (geteuid() != 0) {
		fprintf(stderr, "bpf_sample_cost: needs root (bpf); not run\n");
		return 0;
	}
	/* one CPU for every run: the numbers compare like with like */
	CPU_ZERO(&cpus);
	CPU_SET(0, &cpus);
	sched_setaffinity(0, sizeof(cpus), &cpus);
	libbpf_set_print(NULL);

	fd = load_empty();
	if (fd < 0) {
		fprintf(stderr, "cannot load the empty sched_cls program: %s\n", strerror(errno));
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		err = time_round(fd, pad, sizeof(pad), NULL, CHUNK, 0, &empty[r]);
		if (err) {
			fprintf(stderr, "BPF_PROG_TEST_RUN failed: %s\n", strerror(-err));
			return 1;
		}
	}
	close(fd);
	base = median(empty, rounds);
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		err = run_scenario(&sc[i], rounds);
		if (err) {
			fprintf(stderr, "%s: %s\n", sc[i].name, strerror(-err));
			return 1;
		}
	}

	printf("BPF memory-sample pipeline, ns per sample (%d rounds x %d runs, CPU 0)\n",
	       rounds, RUNS_PER_ROUND);
	printf("%-34s %9s %9s %9s %7s %10s %8s\n", "scenario", "median", "min", "net", "goal",
	       "records", "drops");
	printf("%-34s %9.1f %9.1f %9s %7s %10s %8s\n", "empty program (test-run loop)", base,
	       minimum(empty, rounds), "-", "-", "-", "-");
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		double m = median(sc[i].ns, rounds);
		char goal[16] = "-";

		if (sc[i].goal_ns)
			snprintf(goal, sizeof(goal), "%s%.0f",
				 m - base <= sc[i].goal_ns ? "<=" : ">", sc[i].goal_ns);
		printf("%-34s %9.1f %9.1f %9.1f %7s %10llu %8llu\n", sc[i].name, m,
		       minimum(sc[i].ns, rounds), m - base, goal,
		       (unsigned long long)sc[i].records, (unsigned long long)sc[i].drops);
	}
	printf("net = median - empty median; goal applies to net. records include warm-up;\n"
	       "a lagging reader leaves %d untimed records (%u bytes, the wakeup threshold)\n"
	       "waiting before each chunk of %d: every timed record finds the reader behind.\n",
	       LAG_FILL, CP_RINGBUF_WAKEUP_BYTES, CHUNK);

	err = time_walks(rounds, walk_ns, walk_frames);
	if (err) {
		fprintf(stderr, "stack walk: %s\n", strerror(-err));
		return 1;
	}
	printf("\nUser stack walk and its counting (bench_stack_walk), ns per run, median of %d x %d\n",
	       rounds, WALK_RUNS);
	printf("%-34s %9s %9s\n", "chain of frame-pointer frames", "frames", "ns");
	for (int d = 0; d < WALK_DEPTHS; d++)
		printf("%-34d %9d %9.1f\n", walk_depths[d], walk_frames[d], walk_ns[d]);
	printf("frames: what the walk kept (the chain, the frames above it that it could follow).\n");

	/* a perf_event sample: the pipeline, and the walk of the one in N it counts */
	printf("\nPer perf_event sample at --stack-every %d (the default): net + walk / N\n"
	       "(N: %d for a miss, %d for an L1 hit)\n",
	       CP_STACK_EVERY_DEFAULT, CP_STACK_EVERY_DEFAULT, CP_STACK_EVERY_DEFAULT * CP_STACK_HIT_FACTOR);
	printf("%-44s %9s %7s\n", "scenario, stack depth", "ns", "goal");
	for (size_t i = 0; i < sizeof(sc) / sizeof(sc[0]); i++) {
		int every = CP_STACK_EVERY_DEFAULT * (sc[i].data_src == DS_L1 ? CP_STACK_HIT_FACTOR : 1);

		if (!sc[i].goal_ns)
			continue;
		for (int d = 1; d < WALK_DEPTHS; d += 2) {
			double v = median(sc[i].ns, rounds) - base + walk_ns[d] / every;
			char name[64];

			snprintf(name, sizeof(name), "%s, %d frames", sc[i].name, walk_frames[d]);
			printf("%-44s %9.1f %s%.0f\n", name, v, v <= sc[i].goal_ns ? "<=" : ">",
			       sc[i].goal_ns);
		}
	}
	printf("The pipeline rows above count one sample in N on its stack, as a perf_event\n"
	       "program does; the walk's own count is then added once more (~1 ns).\n");
	return 0;
}
