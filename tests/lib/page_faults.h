/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A page-fault software event of this process, sampling every fault, user
 * mode only, disabled: with no PMU here it runs the perf_event programs on
 * real samples with real data addresses (tests/bpf).
 */
#ifndef CP_TESTS_PAGE_FAULTS_H
#define CP_TESTS_PAGE_FAULTS_H

#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/perf_event.h>

/* The event's fd, or -1 with errno set; @sample_type: PERF_SAMPLE_* it records. */
static inline int cp_test_open_page_faults(__u64 sample_type)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.type = PERF_TYPE_SOFTWARE;
	attr.size = sizeof(attr);
	attr.config = PERF_COUNT_SW_PAGE_FAULTS;
	attr.sample_period = 1;
	attr.sample_type = sample_type;
	attr.exclude_kernel = 1;
	attr.disabled = 1;
	return syscall(__NR_perf_event_open, &attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

#endif /* CP_TESTS_PAGE_FAULTS_H */
