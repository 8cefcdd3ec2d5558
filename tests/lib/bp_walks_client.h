/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The test side of tests/workloads/bp_walks: start it, read the addresses
 * of its labelled loads, run a walk and collect the addresses it says it
 * loaded from; and the BPF object that watches it. Header-only, for cmocka
 * tests (include cmocka.h first).
 */
#ifndef CP_TESTS_BP_WALKS_CLIENT_H
#define CP_TESTS_BP_WALKS_CLIENT_H

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>
#include <linux/types.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/drain.h"
#include "lib/workload_pipe.h"

/* The labelled loads, in the order bp_walks prints them. */
enum { CP_BPW_COL, CP_BPW_PAD, CP_BPW_SEQ, CP_BPW_TLS, CP_BPW_RIP, CP_BPW_NR };
static const char *const cp_bpw_labels[CP_BPW_NR] = { "col", "pad", "seq", "tls", "rip" };

#define CP_BPW_MAX_ACCESSES	64
#define CP_BPW_LINE_BYTES	64	/* the L1 the BPF object maps accesses onto */
#define CP_BPW_SETS		64

struct cp_bpw {
	pid_t pid;
	int in;
	FILE *out;
	__u64 label[CP_BPW_NR];
};

/* What one walk reported: the addresses it loaded from, in order, and by which thread. */
struct cp_bpw_walk {
	__u64 addr[CP_BPW_MAX_ACCESSES];
	__u32 tid[CP_BPW_MAX_ACCESSES];
	int n;
};

/* Starts $CP_BUILD/tests/workloads/bp_walks and reads its labels. */
static inline void cp_bpw_start(struct cp_bpw *w)
{
	char path[512], line[256], name[16];
	char *argv[2] = { path, NULL };
	unsigned long long addr;

	snprintf(path, sizeof(path), "%s/tests/workloads/bp_walks",
		 getenv("CP_BUILD") ? getenv("CP_BUILD") : "build");
	assert_int_equal(cp_wl_pipe_start(argv, &w->pid, &w->in, &w->out), 0);
	assert_non_null(fgets(line, sizeof(line), w->out));
	assert_true(strncmp(line, "ready ", 6) == 0);
	for (int i = 0; i < CP_BPW_NR; i++) {
		assert_non_null(fgets(line, sizeof(line), w->out));
		assert_int_equal(sscanf(line, "label %15s %llx", name, &addr), 2);
		assert_string_equal(name, cp_bpw_labels[i]);
		w->label[i] = addr;
	}
}

/* Runs walk @cmd and collects what it says it loaded into @out. */
static inline void cp_bpw_run(struct cp_bpw *w, const char *cmd, struct cp_bpw_walk *out)
{
	char line[256], name[32], done[64];
	unsigned long long addr;
	unsigned int tid;

	memset(out, 0, sizeof(*out));
	dprintf(w->in, "%s\n", cmd);
	snprintf(done, sizeof(done), "done %s\n", cmd);
	while (fgets(line, sizeof(line), w->out) && strcmp(line, done)) {
		assert_int_equal(sscanf(line, "access %31s %u %llx", name, &tid, &addr), 3);
		assert_true(out->n < CP_BPW_MAX_ACCESSES);
		out->addr[out->n] = addr;
		out->tid[out->n++] = tid;
	}
	assert_string_equal(line, done);
}

/* Tells the workload to quit and reaps it. */
static inline void cp_bpw_stop(struct cp_bpw *w)
{
	int status;

	dprintf(w->in, "quit\n");
	close(w->in);
	waitpid(w->pid, &status, 0);
	fclose(w->out);
}

/* The BPF object with on_breakpoint loaded, on an L1 of CP_BPW_SETS x CP_BPW_LINE_BYTES. */
static inline struct cacheperf *cp_bpw_load_bpf(void)
{
	struct cacheperf *skel = cacheperf__open();

	assert_non_null(skel);
	assert_int_equal(bpf_program__set_autoload(skel->progs.on_breakpoint, true), 0);
	skel->rodata->targ_l1_line_bytes = CP_BPW_LINE_BYTES;
	skel->rodata->targ_l1_sets = CP_BPW_SETS;
	assert_int_equal(cacheperf__load(skel), 0);
	return skel;
}

/* A drain sample callback for tests that want the other records only. */
static inline int cp_bpw_ignore_sample(const struct cp_sample *s, void *ctx)
{
	(void)s;
	(void)ctx;
	return 0;
}

/* The workload, the BPF object watching it and a drain of its records. */
struct cp_bpw_rig {
	struct cp_bpw wl;
	struct cacheperf *skel;
	struct cp_drain *drain;
};

/* Starts all three; records other than samples, live-only ones too, go to @record with @ctx. */
static inline void cp_bpw_rig_start(struct cp_bpw_rig *r,
				    int (*record)(__u32 type, const void *data, size_t size,
						  void *ctx),
				    void *ctx)
{
	struct cp_record_ops ops = { .sample = cp_bpw_ignore_sample, .record = record, .ctx = ctx,
				     .live = record, .live_ctx = ctx };

	cp_bpw_start(&r->wl);
	r->skel = cp_bpw_load_bpf();
	r->drain = cp_drain__new(r->skel, &ops);
	assert_non_null(r->drain);
}

static inline void cp_bpw_rig_stop(struct cp_bpw_rig *r)
{
	cp_bpw_stop(&r->wl);
	cp_drain__free(r->drain);
	cacheperf__destroy(r->skel);
}

#endif /* CP_TESTS_BP_WALKS_CLIENT_H */
