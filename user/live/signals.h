/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Signal handling for the profiling loop: the first SIGINT/SIGTERM asks for a
 * clean stop with a final report, a second one exits at once; SIGUSR1 asks
 * for the current summary; SIGHUP asks to reopen output files (log
 * rotation); SIGCHLD wakes the loop when a launched command exits.
 */
#ifndef CP_SIGNALS_H
#define CP_SIGNALS_H

#include <stdbool.h>

/* Installs the handlers. Returns 0 or a negative errno. */
int cp_signals_install(void);

/* True once SIGINT or SIGTERM arrived. */
bool cp_signals_stop_requested(void);

/* True once per SIGUSR1 since the last call. */
bool cp_signals_take_report_request(void);

/* True once per SIGHUP since the last call. */
bool cp_signals_take_reopen_request(void);

#endif /* CP_SIGNALS_H */
