/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Building synthetic recordings for tests and benches: the run facts of a
 * page-fault run on a 32 KiB, 8-way L1D, and the sections through the real
 * writer and payload encoders.
 */
#ifndef CP_TESTS_REC_BUILD_H
#define CP_TESTS_REC_BUILD_H

#include <string.h>

#include "record/rec_format.h"
#include "record/rec_io.h"

static inline void rec_test_info(struct cp_run_info *in, pid_t pid)
{
	static const struct cp_cache_level l1d = {
		.level = 1, .type = CP_CACHE_TYPE_DATA, .size_bytes = 32768, .ways = 8,
		.sets = 64, .line_bytes = 64, .valid = true,
	};

	memset(in, 0, sizeof(*in));
	in->source = CP_SOURCE_FAULTS;
	strcpy(in->source_reason, "faults: synthetic");
	in->nr_targets = 1;
	in->targets[0].pid = pid;
	strcpy(in->targets[0].comm, "synth");
	in->launched = true;
	in->start_ns = 1000000000ull;
	in->load_period = 20000;
	in->store_period = 50000;
	in->window = 512;
	for (int i = 0; i < CP_CACHE_NR_SLOTS; i++)
		in->cache[i] = l1d;
}

/* Writes one section whose payload an encoder built into @b, and empties @b. */
static inline void rec_test_section(struct cp_rec_writer *w, struct cp_rec_buf *b, __u32 type)
{
	cp_rec_writer__section(w, type, b->p, b->len);
	b->len = 0;
}

/* The header of a run of @pid (rec_test_info() into @in), then the maps section of @m. */
static inline void rec_test_head(struct cp_rec_writer *w, struct cp_rec_buf *b,
				 struct cp_run_info *in, pid_t pid, const struct cp_rec_maps *m)
{
	rec_test_info(in, pid);
	cp_rec_encode_info(b, in);
	rec_test_section(w, b, CP_SEC_HEADER);
	cp_rec_encode_maps(b, m);
	rec_test_section(w, b, CP_SEC_MAPS);
}

/* The end section of a run ended 1 ns after @in's start, then the writer closed and @b freed. */
static inline int rec_test_close(struct cp_rec_writer *w, struct cp_rec_buf *b,
				 const struct cp_run_info *in)
{
	struct cp_run_end end = { .end_ns = in->start_ns + 1 };

	cp_rec_encode_end(b, &end);
	rec_test_section(w, b, CP_SEC_END);
	cp_rec_buf_free(b);
	return cp_rec_writer__close(w);
}

static inline struct cp_sample rec_test_sample(__u32 pid, __u32 tid, __u64 ip, __u64 addr)
{
	struct cp_sample s = {
		.type = CP_REC_SAMPLE, .tgid = pid, .tid = tid, .ip = ip, .addr = addr,
		.data_src = 0x1e05080021ull, .flags = CP_SAMPLE_ALL | CP_SAMPLE_NA, .size = 8,
	};

	return s;
}

#endif /* CP_TESTS_REC_BUILD_H */
