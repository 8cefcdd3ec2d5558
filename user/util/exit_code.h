/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* The exit status of cacheperf-bpf, documented in --help and the man page. */
#ifndef CP_EXIT_CODE_H
#define CP_EXIT_CODE_H

#define CP_EXIT_OK	   0
#define CP_EXIT_RUNTIME	   1 /* a failure while running: privileges, PID, BTF, PMU */
#define CP_EXIT_USAGE	   2 /* the command line is wrong */
#define CP_EXIT_NEW_ISSUES 3 /* diff --fail-on-new: AFTER has an issue BEFORE had not */

#endif /* CP_EXIT_CODE_H */
