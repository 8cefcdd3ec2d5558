/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* What the profiler itself costs: its CPU time. */
#ifndef CP_SELF_USAGE_H
#define CP_SELF_USAGE_H

#include <linux/types.h>

/* User + system CPU seconds of this process (all threads). */
double cp_self_cpu_seconds(void);

/* Resident bytes: cp_self_rss_bytes() in mem_guard.h. */

#endif /* CP_SELF_USAGE_H */
