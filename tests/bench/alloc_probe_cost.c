// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of the allocation probes per malloc+free pair (root): the workload
 * tests/workloads/alloc_sites times N pairs (`pairs N`, malloc(64) then free
 * through its labelled call sites), once unprofiled and once with the
 * allocation probes attached to it (stacks captured, events drained and
 * counted here as a session would), ROUNDS times each; prints the medians
 * and the difference. Goal (issue 4): <= 1500 ns per pair profiled.
 *
 * usage: alloc_probe_cost [ROUNDS [PAIRS [--no-stacks]]]
 *   (default 5 rounds, 1000000 pairs, deeper stacks captured)
 * The workload is looked up in $CP_BUILD/tests/workloads (default: build).
 */
#include <errno.h>
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
#include "alloc_probes.h"
#include "drain.h"

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

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return x < y ? -1 : x > y;
}

/* One run of the workload; with @b, profiled. Returns ns per pair, < 0 on error. */
static double run_once(const char *path, long pairs, struct bench *b)
{
	int in[2], out[2], status;
	char arg[32], line[128] = "";
	double ns = -1;
	FILE *fin, *fout;
	size_t len = 0;
	pid_t pid;
	__u32 key;
	__u8 one = 1;

	if (pipe(in) || pipe(out))
		return -1;
	snprintf(arg, sizeof(arg), "%ld", pairs);
	pid = fork();
	if (pid < 0)
		return -1;
	if (!pid) {
		dup2(in[0], 0);
		dup2(out[1], 1);
		close(in[1]);
		close(out[0]);
		execl(path, path, "pairs", arg, (char *)NULL);
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
		if (cp_alloc_probes__attach_pid(b->ap, pid)) {
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
			{ .fd = b ? drain__epoll_fd(b->drain) : -1, .events = POLLIN },
		};
		ssize_t n;

		if (poll(pfd, 2, 100) < 0 && errno != EINTR)
			break;
		if (b)
			drain__poll(b->drain, 0);
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
	if (sscanf(line, "ns %lf", &ns) != 1)
		ns = -1;
	if (b) {
		drain__poll(b->drain, 0);
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

int main(int argc, char **argv)
{
	struct cp_alloc_probes_opts opts = { .max_alloc_rate = 0 };
	struct cp_drain_ops ops = { .record = count_record };
	double plain[MAX_ROUNDS], prof[MAX_ROUNDS];
	int rounds = argc > 1 ? atoi(argv[1]) : 5;
	long pairs = argc > 2 ? atol(argv[2]) : 1000000;
	struct cp_alloc_prepare prep = { .no_stacks = argc > 3 && !strcmp(argv[3], "--no-stacks") };
	struct cp_alloc_probes_stats st;
	const char *build = getenv("CP_BUILD");
	struct bench b = { 0 };
	char path[4096];
	int err = 1;

	if (rounds < 1 || rounds > MAX_ROUNDS || pairs < 1024) {
		fprintf(stderr, "usage: %s [ROUNDS (1-%d) [PAIRS (>= 1024) [--no-stacks]]]\n", argv[0],
			MAX_ROUNDS);
		return 2;
	}
	snprintf(path, sizeof(path), "%s/tests/workloads/alloc_sites", build ? build : "build");
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
	b.drain = b.ap ? drain__new(b.skel, &ops) : NULL;
	if (!b.drain) {
		fprintf(stderr, "cannot attach the syscall tracepoints or the drain\n");
		goto cleanup;
	}
	for (int r = 0; r < rounds; r++) {
		plain[r] = run_once(path, pairs, NULL);
		prof[r] = run_once(path, pairs, &b);
		if (plain[r] < 0 || prof[r] < 0) {
			fprintf(stderr, "run %d failed (workload %s)\n", r, path);
			goto cleanup;
		}
	}
	qsort(plain, rounds, sizeof(double), cmp_double);
	qsort(prof, rounds, sizeof(double), cmp_double);
	cp_alloc_probes__stats(b.ap, &st);
	printf("%s", prep.no_stacks ? "without stacks: " : "");
	printf("malloc+free pair: unprofiled %.1f ns, profiled %.1f ns, probes add %.1f ns "
	       "(median of %d runs x %ld pairs; goal <= %.0f ns profiled: %s)\n",
	       plain[rounds / 2], prof[rounds / 2], prof[rounds / 2] - plain[rounds / 2], rounds,
	       pairs, GOAL_NS, prof[rounds / 2] <= GOAL_NS ? "met" : "MISSED");
	printf("records %llu, ring-buffer drops %llu, stack errors %llu, entry probes: %llu moved, "
	       "%llu at an emulated entry, %llu single-stepped\n",
	       (unsigned long long)b.records, (unsigned long long)st.bpf.drop_ringbuf,
	       (unsigned long long)st.bpf.stack_errors, (unsigned long long)st.placed,
	       (unsigned long long)st.entry_emulated, (unsigned long long)st.single_step);
	err = 0;
cleanup:
	drain__free(b.drain);
	cp_alloc_probes__free(b.ap);
	cacheperf__destroy(b.skel);
	return err;
}
