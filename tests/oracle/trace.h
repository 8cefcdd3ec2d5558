/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The oracle's trace stream (trace_rt.c writes it, oracle.c reads it): one
 * 16-byte record per memory access, allocation or free, in the global order
 * in which the program performed them, then the program's maps text.
 *
 * Records are native x86-64 and never leave the machine: the stream goes
 * through a pipe from the traced program to the simulator.
 */
#ifndef CP_ORACLE_TRACE_H
#define CP_ORACLE_TRACE_H

#include <linux/types.h>

/* The environment variable naming the file descriptor the runtime writes to. */
#define CP_TRACE_FD_ENV		"CP_ORACLE_TRACE_FD"
#define CP_TRACE_MAX_THREADS	255	/* thread index 255 would not fit tid */
#define CP_TRACE_MAX_MAPS	(1u << 20)	/* maps text bytes at the end */

enum cp_trace_kind {
	CP_TR_READ = 0,		/* addr, size bytes */
	CP_TR_WRITE = 1,
	CP_TR_ALLOC = 2,	/* addr = object; the next record's addr holds its size */
	CP_TR_FREE = 3,		/* addr = object */
	CP_TR_SIZE = 4,		/* the size of the allocation before */
	/* last: addr = pid; then a CP_TR_SIZE record with the text's length, then the text */
	CP_TR_MAPS = 5,
};

/*
 * ip: the instruction (the return address of the hook minus one, so it lies
 * in the instrumented access's own code) or the allocator's caller; tid: the
 * thread's index in order of first appearance (0: main); size: 1..16 bytes.
 */
struct cp_trace_rec {
	__u64 addr;
	__u64 ip : 48;
	__u64 tid : 8;
	__u64 size : 5;
	__u64 kind : 3;
};
_Static_assert(sizeof(struct cp_trace_rec) == 16, "struct cp_trace_rec is 16 bytes");

#endif /* CP_ORACLE_TRACE_H */
