/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Loading the memory-sample pipeline for tests that drive it with the test
 * program test_mem_sample (tests/bpf): the on_mem_sample variant this
 * kernel takes, windows sized for its CPUs, test_mem_sample (and @extra, a
 * further test program, if not NULL) autoloaded. Include after cmocka.h
 * and cacheperf.skel.h.
 */
#ifndef CP_TEST_MEM_PIPELINE_H
#define CP_TEST_MEM_PIPELINE_H

#include "live/mem_prog.h"

static inline void cp_test_pipeline_load(struct cacheperf *skel, struct bpf_program *extra)
{
	int variant = cp_mem_prog_select(skel);

	assert_true(variant == CP_MEM_PROG_KFUNC || variant == CP_MEM_PROG_COMPAT);
	assert_int_equal(cp_mem_prog_size_windows(skel), 0);
	assert_int_equal(bpf_program__set_autoload(skel->progs.test_mem_sample, true), 0);
	if (extra)
		assert_int_equal(bpf_program__set_autoload(extra, true), 0);
	assert_int_equal(cacheperf__load(skel), 0);
}

#endif /* CP_TEST_MEM_PIPELINE_H */
