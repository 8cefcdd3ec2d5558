/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Tests that need breakpoint hits skip, never pass, on a machine whose
 * breakpoints open but never fire (cp_sysinfo_hw_breakpoint_fires(): a
 * hypervisor that does not deliver debug exceptions, as Firecracker's).
 * Include after <cmocka.h> and lib/require_root.h.
 */
#ifndef CP_TESTS_REQUIRE_BREAKPOINTS_H
#define CP_TESTS_REQUIRE_BREAKPOINTS_H

#include "machine/sysinfo.h"

/* ROOT_FIXTURE(), then a skip where breakpoints never fire. */
#define BP_FIXTURE(type, state)                                                                    \
	({                                                                                         \
		type *_f = ROOT_FIXTURE(type, state);                                              \
		if (cp_sysinfo_hw_breakpoint_fires() == 0) {                                       \
			print_message("# hardware breakpoints never fire here (no debug "          \
				      "exceptions in this VM)\n");                                 \
			skip();                                                                    \
		}                                                                                  \
		_f;                                                                                \
	})

#endif /* CP_TESTS_REQUIRE_BREAKPOINTS_H */
