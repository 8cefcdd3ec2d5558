/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A forked child made fit to parse what it must not trust (a tenant's ELF,
 * DWARF and CFI, symbols/parse_worker.h): it keeps only the descriptors it
 * is given, no capability (a user and group no one holds where it may still
 * switch, util/sandbox_id.h), no
 * core dump, a process group of its own (a terminal's ^C is the parent's),
 * dies with its parent, and is bounded by rlimits (heap and
 * private mappings, stack, CPU), an alarm (wall time) and a seccomp filter
 * that lets through memory management, reading and writing descriptors it
 * holds (receiving descriptors on a socket it holds too), and exiting:
 * opening a path fails with EACCES, any other call
 * (a signal to anyone included) with ENOSYS (a call an honest parse makes that is not listed
 * fails it, never kills it), and another architecture's calls kill it. The
 * filter is built for x86-64 and arm64; elsewhere the rest still applies
 * (cp_sandbox_filtered() says which).
 */
#ifndef CP_SANDBOX_H
#define CP_SANDBOX_H

#include <stdbool.h>
#include <linux/types.h>

struct cp_sandbox {
	__u64 data_more_bytes; /* RLIMIT_DATA: heap and private writable mappings, this much
				  more than the child held at the start */
	__u64 stack_bytes;     /* RLIMIT_STACK */
	unsigned int cpu_s;    /* RLIMIT_CPU: SIGXCPU, then SIGKILL a second later; 0: none (a
				  long-lived server, whose client bounds each request's time) */
	unsigned int wall_s;   /* alarm(): SIGALRM; 0: none */
	unsigned int keep_fds; /* descriptors 0 .. keep_fds - 1 stay open, the rest close */
	unsigned int more_fds; /* RLIMIT_NOFILE: keep_fds + 8 + this (descriptors received) */
};

/*
 * Applies @sb to the calling process, which must be a forked child with
 * one thread, whose parent called cp_sandbox_id() before the fork (else
 * the child chooses the id itself, a scan of /proc, and may log: a lock
 * another thread of a parent held at the fork stays held). Every signal's action is reset and none blocked. Returns 0,
 * or -errno of the first step that failed (the child should then exit: it
 * is not bounded).
 */
int cp_sandbox_enter(const struct cp_sandbox *sb);

/* Whether cp_sandbox_enter() installs a seccomp filter on this architecture. */
bool cp_sandbox_filtered(void);

#endif /* CP_SANDBOX_H */
