/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Root tests (tests/bpf) skip, never pass, where they cannot run: bpf(),
 * perf events and uprobes need root or CAP_BPF + CAP_PERFMON. Include after
 * <cmocka.h>.
 */
#ifndef CP_TESTS_REQUIRE_ROOT_H
#define CP_TESTS_REQUIRE_ROOT_H

#include <unistd.h>

#define REQUIRE_ROOT()							\
	do {								\
		if (geteuid() != 0) {					\
			print_message("# needs root (bpf, perf events)\n"); \
			skip();						\
		}							\
	} while (0)

/* A test's fixture of type @type from cmocka's @state, or a skip without root. */
#define ROOT_FIXTURE(type, state)					\
	({								\
		REQUIRE_ROOT();						\
		(type *)*(state);					\
	})

#endif /* CP_TESTS_REQUIRE_ROOT_H */
