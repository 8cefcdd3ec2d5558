// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cost of one hardware-breakpoint hit (root): this process runs a labelled
 * load HITS times, unwatched, then under a HW_BREAKPOINT_X event on its own
 * thread in three ways: without a BPF program (the trap and perf alone),
 * with on_breakpoint but the instruction not in bp_insns (the early exit),
 * and armed (64 accesses recorded, the rest counted late, as an armed
 * instruction costs until the manager disarms it). ROUNDS rounds each;
 * prints the median ns per hit above the unwatched loop.
 * DESIGN.md budgets ~13.6 µs per hit on the development VM.
 *
 * usage: bp_hit_cost [ROUNDS [HITS]]   (default 7 rounds, 20000 hits)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/bp_arm.h"
#include "decode/decode.h"
#include "live/perf_events.h"
#include "machine/pmu_attr.h"

#include "median.h"

#define MAX_ROUNDS	31

enum mode { UNWATCHED, NO_PROGRAM, NOT_ARMED, ARMED, NR_MODES };

static const char *const mode_name[NR_MODES] = {
	"unwatched loop", "breakpoint, no BPF program", "on_breakpoint, not armed",
	"on_breakpoint, armed",
};

extern const char cp_bench_bp_insn[];
static long target[8];

__attribute__((noinline, noclone)) static long watched_load(const long *p)
{
	long v;

	asm volatile(".globl cp_bench_bp_insn\ncp_bench_bp_insn:\n\t"
		     "movq 8(%1), %0" : "=r"(v) : "r"(p) : "memory");
	return v;
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* ns per iteration of @hits loads under @mode. */
static double run(struct cacheperf *skel, enum mode mode, long hits)
{
	__u64 ip = (__u64)(unsigned long)cp_bench_bp_insn, t0, t1;
	int map_fd = bpf_map__fd(skel->maps.bp_insns);
	struct cp_perf_events *events = NULL;
	struct cp_event_spec spec;
	struct cp_operand op;
	char err[256];

	if (mode == ARMED) {
		cp_decode_operand((const __u8 *)cp_bench_bp_insn, CP_INSN_MAX_LEN, &op);
		if (cp_bp_arm(map_fd, (__u32)getpid(), ip, &op))
			return -1;
	}
	if (mode != UNWATCHED) {
		events = cp_perf_events__new();
		cp_breakpoint_spec(&spec, ip);
		if (!events ||
		    cp_perf_events__open_one(events, &spec, (pid_t)syscall(SYS_gettid), -1,
					     mode == NO_PROGRAM ? NULL : skel->progs.on_breakpoint,
					     err, sizeof(err))) {
			fprintf(stderr, "bp_hit_cost: %s\n", err);
			return -1;
		}
	}
	t0 = now_ns();
	for (long i = 0; i < hits; i++)
		watched_load(target);
	t1 = now_ns();
	cp_perf_events__free(events);
	if (mode == ARMED)
		cp_bp_disarm(map_fd, (__u32)getpid(), ip);
	return (double)(t1 - t0) / (double)hits;
}

int main(int argc, char **argv)
{
	int rounds = argc > 1 ? atoi(argv[1]) : 7;
	long hits = argc > 2 ? atol(argv[2]) : 20000;
	double ns[NR_MODES][MAX_ROUNDS], med[NR_MODES];
	struct cacheperf *skel;

	if (rounds < 1 || rounds > MAX_ROUNDS || hits < 1) {
		fprintf(stderr, "usage: bp_hit_cost [ROUNDS (1-%d) [HITS]]\n", MAX_ROUNDS);
		return 2;
	}
	libbpf_set_print(NULL);
	skel = cacheperf__open();
	if (!skel || bpf_program__set_autoload(skel->progs.on_breakpoint, true) ||
	    cacheperf__load(skel)) {
		fprintf(stderr, "bp_hit_cost: cannot load the BPF programs (root?)\n");
		return 1;
	}
	for (int r = 0; r < rounds; r++) {
		for (int m = 0; m < NR_MODES; m++) {
			ns[m][r] = run(skel, (enum mode)m, hits);
			if (ns[m][r] < 0) {
				cacheperf__destroy(skel);
				return 1;
			}
		}
	}
	printf("%-30s %12s\n", "mode", "ns per hit");
	for (int m = 0; m < NR_MODES; m++) {
		med[m] = cp_bench_median(ns[m], rounds);
		printf("%-30s %12.0f%s\n", mode_name[m], m ? med[m] - med[UNWATCHED] : med[m],
		       m ? "" : " (per load, not a hit)");
	}
	printf("median of %d rounds x %ld hits; hits seen by BPF: %llu\n", rounds, hits,
	       (unsigned long long)skel->bss->bp_stats.hits);
	cacheperf__destroy(skel);
	return 0;
}
