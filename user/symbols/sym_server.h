/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * A persistent describe server (issue #29, its first brick): one
 * long-lived child, forked at the first request and made unprivileged and
 * bounded (util/sandbox.h: no capability, a user no one holds where it may,
 * no_new_privs, seccomp, RLIMIT_DATA at three quarters of the room left
 * under --max-memory, RLIMIT_STACK CP_PW_STACK_BYTES; no CPU limit nor
 * alarm, which would end it for its total time), runs libdw over tenants'
 * files and answers "what is at this address": the describe of
 * cp_sym_describe() (symbols/sym_dwarf.h) over the Dwfl cp_sym_dwfl_file()
 * makes, with the strings copied into the reply, never a pointer. Stack
 * walks (cp_sym_server_unwind()) go to a second such child, "cp-unwind"
 * (enum cp_sym_role): a walk is never answered "later" for a describe's
 * parse of seconds; each child is started, judged, charged and counted by
 * the rules below on its own.
 *
 * A request carries the file's sealed copy (SCM_RIGHTS on a
 * SOCK_SEQPACKET socketpair), with the copy of its separate debug file
 * when the client found one (cp_sym_dwfl_debug_of(): by build-id in
 * /usr/lib/debug/.build-id, else from debuginfod), its copy key
 * (machine/copy_cache.h) and the address. The server keeps
 * CP_SYM_SERVER_FILES Dwfls by copy key, the least recently used let go
 * first, so a file is parsed once while it is asked about; copies of a
 * file it holds already are closed. Inside the sandbox no path opens
 * (EACCES): a .dwz file is not read there, and a file with neither DWARF
 * of its own nor a debug file sent is described from its ELF symbols.
 *
 * A server says it bounded itself before its first request; one that
 * ends after that while a request is in flight (a crash: SIGSEGV, SIGABRT,
 * SIGSYS; libdw's exit for memory; its own stop past half its allowance;
 * any exit, a hang-up: it is killed before it is waited for) or does not
 * answer within the request's deadline (killed then) is judged as a parse
 * worker is (cp_pw_judge()), and the file of that request is refused as
 * cp_pw_verdict_stands() says, in the parse worker's own verdicts
 * (cp_parse_worker_keep(): no libdw of the profiler's takes it either):
 * counted, said in the log a few times per period, answered -EIO from
 * then on. So is a file whose requests kept the server busy past
 * CP_PW_SECONDS of wall time in all. The next request forks a new server
 * (a restart, counted). A lookup waits for its own answer only: while
 * another request is in flight it is answered -EAGAIN at once (unless told
 * to wait to the end). Its CPU time is the profiler's own cost, counted as
 * it runs (cp_self_helper_clock()), and what it spends answering requests
 * (the kernel's count of its CPU time, from each request's sending to its
 * answer) is spent from the parse workers' budget by their rule
 * (cp_parse_worker_lend()): a request is sent only while the budget holds
 * a whole second (else the lookup waits, -EAGAIN), may take the whole
 * seconds it holds (past them the server is killed, as a worker at its
 * RLIMIT_CPU, and the file waits until the budget holds twice that), and
 * its CPU time is spent once it is answered or the server ended.
 *
 * Everything the server sends is checked before it is used (sizes,
 * offsets, termination of strings, the inline chain's length): a server
 * is what a tenant's file may have taken over. Thread-safe (one lock); one
 * request is in flight at a time.
 *
 * While it lives, machine/self_mem counts it by the pages it alone holds
 * (cp_self_mem_set_server()), not by its resident set, which holds the
 * profiler's pages it shares copy on write. The symbolizer asks it about
 * tenants' shared files (symbolizer.c, describe_file()).
 */
#ifndef CP_SYM_SERVER_H
#define CP_SYM_SERVER_H

#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "machine/copy_cache.h"
#include "symbols/sym_serve.h"
#include "symbols/symbolizer.h"

/*
 * The two servers: one describes, one walks stacks (cp_sym_server_unwind()),
 * so that a walk, one frame's CFI, never waits behind a describe that goes
 * on for seconds (a big file's DWARF) in the background. Each is a slot of
 * the parse workers' loans, of machine/self_mem's and self_usage's counts.
 */
enum cp_sym_role {
	CP_SYM_DESCRIBER,
	CP_SYM_WALKER,
	CP_SYM_ROLES,
};

/*
 * What is at link-time address @addr of the file whose sealed copy is
 * @mfd, with its separate debug file's @debug_fd (-1: none; neither is
 * taken over: the server gets duplicates), and whose content
 * key is @key (ino 0: the file is parsed for this request alone). Fills
 * @out as cp_sym_describe() would, but for the module, left NULL (the
 * caller names it), its strings in @strings (@size bytes, valid until
 * the next call; CP_SYM_SERVER_STRING_BYTES lose none, else a string past
 * the buffer is cut, or NULL). Waits for the answer as long as
 * cp_sym_server_pace() says, else up to the request's deadline. Returns
 * 0; -ENOENT when no module holds @addr; -ENOEXEC when the copy is no ELF
 * file libdw takes; -EAGAIN when the server is still at work, on this
 * request or an earlier one, past the wait (ask again later; a late
 * answer is read and dropped), or while the workers' budget is spent;
 * -EIO when the file is refused (its request
 * ended a server, or one did before); -ENOSYS when no server could be
 * made or bounded; another -errno (-EBADF: @mfd is no descriptor;
 * -EPROTO: an answer that made no sense).
 */
int cp_sym_server_describe(int mfd, int debug_fd, const struct cp_copy_key *key, __u64 addr,
			   struct cp_symbol_info *out, char *strings, size_t size);

/*
 * The walk @w (unwind.h) through the tenant's file @f by the server: its
 * frames after @w->n, how it ended (handed on, with the next frame's
 * registers in @w->next, or at a thread's start), waiting as
 * cp_sym_server_describe() does. Returns 0, or as
 * cp_sym_server_describe() does (-EIO: the file is refused, its CFI
 * ended a server).
 */
int cp_sym_server_unwind(const struct cp_sym_remote *f, struct cp_unwind_walk *w);

/*
 * A live run's pace: a call waits @wait_ms at most for its answer
 * (UINT_MAX: up to the deadline), and a request has @deadline_ms of wall
 * time (0: CP_PW_SECONDS), after which the server is killed and the file
 * refused. Tests shorten the deadline.
 */
void cp_sym_server_pace(unsigned int wait_ms, unsigned int deadline_ms);

struct cp_sym_server_stats {
	__u64 requests;	     /* cp_sym_server_describe() calls */
	__u64 unwinds;	     /* cp_sym_server_unwind() calls */
	__u64 unwinds_later; /* ... answered -EAGAIN: their stacks kept the frame-pointer walk */
	__u64 started;	     /* servers forked */
	__u64 restarts;	     /* of those, forked after one died or was killed */
	__u64 refused;	     /* files refused: their request ended a server */
	__u64 late;	     /* answers that came after their caller stopped waiting, dropped */
	__u64 cpu_ns;	     /* its CPU time answering requests, spent from the workers' budget */
	__u64 waited;	     /* lookups that waited for that budget, unasked */
};

void cp_sym_server_stats(struct cp_sym_server_stats *out);

/*
 * Whether tenants' files may be left to the server: false once a server
 * could not bound itself (this kernel refuses the sandbox), when the
 * profiler parses them itself, vetted by the parse worker as before.
 */
bool cp_sym_server_usable(void);

/* The pid of the server of @role now; 0 when none runs. For tests and the report. */
pid_t cp_sym_server_pid(enum cp_sym_role role);

/*
 * Ends the servers, if any (at the run's end; tests): their sockets closed,
 * they exit, and they are reaped, their CPU time counted. The next request
 * forks a new one (not a restart). Verdicts stay.
 */
void cp_sym_server_stop(void);

#endif /* CP_SYM_SERVER_H */
