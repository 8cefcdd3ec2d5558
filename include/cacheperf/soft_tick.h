/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The no-PMU source (--source soft, bpf/soft_tick.bpf.c): a per-CPU
 * cpu-clock timer interrupts the target, and on_tick looks up the operand
 * of the interrupted user instruction in soft_insns. The instruction has
 * not run yet, so cp_operand_ea() (cacheperf/operand.h) of the registers
 * in the tick gives its exact address, as for a breakpoint (but for a base
 * read back from the slot it was loaded from: CP_OPND_F_BASE_LOADED).
 *
 * The ABI between on_tick and user/live/soft_source.c: the descriptor map value,
 * the pending-ip map value, and the pure inline helpers both sides (and the
 * unit tests) run.
 */
#ifndef CACHEPERF_SOFT_TICK_H
#define CACHEPERF_SOFT_TICK_H

#include "cacheperf/types.h"
#include "cacheperf/data_src.h"
#include "cacheperf/operand.h"

#define CP_MAX_SOFT_INSNS    16384 /* soft_insns: decoded instructions (descriptors, markers) */
#define CP_MAX_SOFT_PENDING  1024  /* soft_pending: instructions waiting to be decoded */
#define CP_SOFT_FREQ_DEFAULT 4999  /* ticks per second per CPU: not a multiple of HZ */

/*
 * Value of soft_insns, key struct cp_ip_key. op.status CP_OPND_OK: a
 * descriptor, the tick becomes a memory sample; any other status: a marker,
 * the tick only counts time. @mm is the address space the instruction was
 * decoded in (the task's mm when the ip was queued): after an exec the same
 * (tgid, ip) is another instruction, and a descriptor of another mm is not
 * used (the ip is queued again).
 *
 * Skid correction (user/decode/skid.h): @charge_ip non-zero says the tick
 * is charged to the access just before the ticked instruction, at @charge_ip, whose
 * operand @op is: the sample and the time count go to @charge_ip, and a
 * RIP-relative @op counts from @charge_ip (its insn_len ends where the
 * ticked instruction starts). An @op with CP_OPND_F_BASE_LOADED overwrote
 * its base: on_tick reads it from the slot base_from + base_disp says
 * (cp_operand_base_slot(), a RIP-relative slot counted from @charge_ip); one
 * with CP_OPND_F_NEXT_RUN gives the address of its next run (a chase).
 */
struct cp_soft_insn {
	struct cp_operand op;
	__u64 mm;
	__u64 charge_ip; /* 0: the operand is the ticked instruction's own */
};
_Static_assert(sizeof(struct cp_soft_insn) == 40, "struct cp_soft_insn is ABI");

/* Value of soft_pending, key struct cp_ip_key: queued by on_tick, taken by user space. */
struct cp_soft_pending {
	__u64 mm;      /* the task's mm at the tick: copied into the descriptor */
	__u64 time_ns; /* when it was queued */
};
_Static_assert(sizeof(struct cp_soft_pending) == 16, "struct cp_soft_pending is ABI");

/* True when a tick with code segment @cs interrupted user mode (x86: CPL 3). */
CP_INLINE bool cp_soft_user_mode(__u64 cs)
{
	return (cs & 3) == 3;
}

/*
 * The data_src of a soft sample of an operand accessed as @access
 * (CP_OPND_READ/WRITE): no level, no snoop, no TLB (the kernel's NA), but
 * the operation: a write, or a read-modify-write, is a store (what makes
 * a line shared is the write), a read a load.
 */
CP_INLINE __u64 cp_soft_data_src(__u8 access)
{
	__u64 op = access & CP_OPND_WRITE ? CP_MEM_S(OP, STORE) : CP_MEM_S(OP, LOAD);

	return (CP_MEM_NA_KERNEL & ~CP_MEM_S(OP, NA)) | op;
}

#endif /* CACHEPERF_SOFT_TICK_H */
