/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * libbpf's messages through the log (util/log.h): its warnings at warning
 * level, its info and debug messages as such (-v, -vv). While a thread
 * attaches one process's probes, its warnings are held instead: the
 * process may exit meanwhile (a race the caller counts, not an error), and
 * a real failure is said by the caller with the warning that explains it.
 */
#ifndef CP_LIBBPF_LOG_H
#define CP_LIBBPF_LOG_H

#include <stdbool.h>

/* Sets libbpf's print callback. */
void cp_libbpf_log_route(void);

/*
 * @on: from now on this thread's libbpf warnings are debug lines, the first
 * one kept for cp_libbpf_log_held() (cleared); off: warnings again.
 */
void cp_libbpf_log_hold(bool on);

/* The first warning held on this thread since the hold began, one line; "" if none. */
const char *cp_libbpf_log_held(void);

#endif /* CP_LIBBPF_LOG_H */
