// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The HTML report's size and write time for a large report: 20 issues (5
 * of each of false sharing with 4 threads, true sharing, conflict with a
 * 64-access history, capacity), a 60-interval timeline (a 60 s run, -i 1),
 * L1D 64 sets and L2 2048 sets every one with misses (the heatmaps' worst
 * case), and per issue a flame graph of 200 leaf functions under 10
 * callers each 8 frames deep. Prints the bytes and the median of 5 writes
 * to a file (docs/figures.md, "HTML report").
 *
 * usage: html_write [FILE]   (default /tmp/cacheperf-html-bench.html)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "bench/median.h"
#include "report/html_report.h"

#define NR_ISSUES    20
#define NR_INTERVALS 60

static double now_s(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void fill_issue(struct cp_issue *is, int i)
{
	is->type = (enum cp_issue_type)(i % 4);
	is->tgid = 1000 + (__u32)i;
	is->score = 0.04;
	is->nr_insns = 2;
	for (int k = 0; k < 2; k++) {
		struct cp_issue_insn *in = &is->insns[k];

		in->tgid = is->tgid;
		in->ip = 0x401000 + (__u64)(i * 64 + k);
		in->samples = in->misses = 1000;
		in->nr_ips = 1;
		in->have_loc = true;
		snprintf(in->loc.file, sizeof(in->loc.file), "/src/module%d.c", i);
		snprintf(in->loc.function, sizeof(in->loc.function), "hot_function_%d", i);
		in->loc.line = 100 + (__u32)k;
	}
	is->nr_objects = 1;
	is->objects[0].kind = CP_OBJ_HEAP;
	is->objects[0].size = is->type == CP_ISSUE_CAPACITY ? 64u << 20 : 256;
	is->objects[0].nr_objects = 1;
	is->sharing = (struct cp_issue_sharing){.line_addr = 0x10000,
						.line_bytes = 64,
						.nr_lines = 1,
						.object_start = 0x10000,
						.object_size = 256,
						.nr_threads = 4};
	for (int t = 0; t < 4; t++)
		is->sharing.thr[t] = (struct cp_issue_thread){
			2000 + (__u32)t, 100, 0xffull << (16 * t), 0xffull << (16 * t), 0, 0};
	is->conflict = (struct cp_issue_conflict){
		.set = (__u32)i, .ways = 8, .accesses = 64, .history = 64, .distinct_lines = 64};
	is->capacity = (struct cp_issue_capacity){.stream = true,
						  .level = CP_CACHE_L2,
						  .stride = 64,
						  .footprint = 64u << 20,
						  .object_bytes = 64u << 20,
						  .level_bytes = 1u << 20};
	snprintf(is->hint, sizeof(is->hint), "a hint of ordinary length for issue %d", i);
}

static struct cp_flame *flame_of(int i)
{
	struct cp_flame *f = cp_flame__new();
	char names[8][48];
	const char *frames[8];

	for (int leaf = 0; leaf < 200; leaf++) {
		for (int d = 0; d < 7; d++)
			snprintf(names[d], sizeof(names[d]), "caller_%d_%d", leaf % 10, d);
		snprintf(names[7], sizeof(names[7]), "leaf_%d_%d (module%d.c:%d)", i, leaf, i,
			 leaf);
		for (int d = 0; d < 8; d++)
			frames[d] = names[d];
		cp_flame__add(f, frames, 8, 1 + (__u64)leaf);
	}
	return f;
}

int main(int argc, char **argv)
{
	const char *path = argc > 1 ? argv[1] : "/tmp/cacheperf-html-bench.html";
	static struct cp_issue issues[NR_ISSUES];
	static struct cp_html_issue x[NR_ISSUES];
	static __u64 l1[64], l2[2048];
	static double share[NR_ISSUES][NR_INTERVALS], end_s[NR_INTERVALS];
	__u32 lines[NR_ISSUES][64];
	struct cp_svg_history hist[NR_ISSUES];
	struct cp_report_target tgt = {.pid = 1};
	struct cp_classification c = {.issues = issues, .nr_issues = NR_ISSUES};
	struct cp_classify_cfg cfg;
	struct cp_geometry geo;
	struct cp_report r = {.source = "pebs",
			      .duration_s = 60,
			      .targets = &tgt,
			      .issues = &c,
			      .classify_cfg = &cfg,
			      .geo = &geo};
	struct cp_html_input in = {.r = &r,
				   .l1_sets = l1,
				   .nr_l1_sets = 64,
				   .l2_sets = l2,
				   .nr_l2_sets = 2048,
				   .nr_intervals = NR_INTERVALS,
				   .end_s = end_s,
				   .issue = x};
	double t[5];
	long size = 0;

	cp_classify_cfg_defaults(&cfg);
	cp_geometry_init(&geo);
	snprintf(tgt.comm, sizeof(tgt.comm), "bench");
	for (int s = 0; s < 64; s++)
		l1[s] = 100 + (__u64)s * 7 % 64;
	for (int s = 0; s < 2048; s++)
		l2[s] = 1 + (__u64)s * 13 % 97;
	for (int k = 0; k < NR_INTERVALS; k++)
		end_s[k] = k + 1;
	for (int i = 0; i < NR_ISSUES; i++) {
		__u64 addrs[64];

		fill_issue(&issues[i], i);
		for (int k = 0; k < NR_INTERVALS; k++)
			share[i][k] = 0.01 * ((i + k) % 10);
		for (int a = 0; a < 64; a++)
			addrs[a] = 0x7f0000000000ull + (__u64)a * 4096 + (__u64)i * 64;
		hist[i] = (struct cp_svg_history){.nr_sets = 64, .lines = lines[i]};
		cp_svg_history_of(addrs, 64, 64, &hist[i]);
		x[i] = (struct cp_html_issue){share[i], flame_of(i), &hist[i]};
	}
	for (int k = 0; k < 5; k++) {
		double t0 = now_s();
		FILE *f = fopen(path, "w");

		if (!f || cp_html_report_write(&in, f)) {
			perror(path);
			return 1;
		}
		size = ftell(f);
		fclose(f);
		t[k] = now_s() - t0;
	}
	printf("html_write: %d issues, %d intervals, L2 %d sets: %ld bytes, median write %.1f ms\n",
	       NR_ISSUES, NR_INTERVALS, 2048, size, 1e3 * cp_bench_median(t, 5));
	for (int i = 0; i < NR_ISSUES; i++)
		cp_flame__free((struct cp_flame *)x[i].flame);
	return 0;
}
