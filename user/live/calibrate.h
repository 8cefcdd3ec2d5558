/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unit costs of the probes, measured at start on the machine the profiler
 * runs on (a VM's timer tick costs several times bare metal's), so that one
 * --overhead default is right everywhere. Each cost is the extra CPU time of
 * a thread of the profiler itself running the same work with and without the
 * probe, the median of short alternating rounds, as many as it takes for the
 * median to settle (budget/cal_rounds.h: 5 on a quiet machine, at most 11):
 *
 *   tick         a spin loop, with and without a per-thread cpu-clock
 *                sampling event at 10 kHz writing each sample to a mapped
 *                buffer (the wakeup rounds' baseline): extra time per tick;
 *   uprobe       a function whose first instruction the kernel emulates (as
 *                probe placement arranges for the allocator's), called with
 *                and without an entry uprobe (a counting perf event of the
 *                uprobe PMU): extra time per call;
 *   uretprobe    the same with a return probe, less the entry trap;
 *   breakpoint   the same function with an HW_BREAKPOINT_X event on it;
 *   syscall      getppid() with and without empty programs on the raw
 *                sys_enter and sys_exit tracepoints (what every system call
 *                pays while the allocation windows have them attached);
 *   wakeup       the spin loop with a cpu-clock event writing to a mapped
 *                buffer, waking a polling reader on every sample or (the
 *                baseline) only when half full: extra time per wakeup, the
 *                irq_work self-IPI and wake-up a forced ring-buffer wakeup
 *                costs the interrupted target.
 *
 * The BPF programs' own run time (a few hundred ns at most) is not included.
 */
#ifndef CP_CALIBRATE_H
#define CP_CALIBRATE_H

#include <stdbool.h>
#include <stddef.h>

#include "budget/budget.h"

/*
 * Measures into @out the costs asked for: the tick with @tick, the uprobe
 * pair and the system call with @uprobes, the breakpoint hit with @bp; the
 * wakeup always. A cost that cannot be
 * measured here stays 0 and its reason goes to @why (the first one). In a
 * VM whose tick costs 45 us, 11 rounds of each take about 0.35 s of CPU time
 * (5, on a quiet machine, under half that). Returns 0, or -1 when any asked
 * cost could not be measured.
 */
int cp_calibrate(bool tick, bool uprobes, bool bp, struct cp_unit_costs *out, char *why,
		 size_t why_sz);

struct cp_calibration;

/*
 * cp_calibrate() on a thread of its own, started now, so that it overlaps
 * the loading of the BPF programs (registering its uprobes waits on the
 * kernel, longer on a busy machine). NULL with errno set when no thread
 * could be started.
 */
struct cp_calibration *cp_calibrate__start(bool tick, bool uprobes, bool bp);

/* Waits for @c, then as cp_calibrate(); frees @c. */
int cp_calibrate__join(struct cp_calibration *c, struct cp_unit_costs *out, char *why,
		       size_t why_sz);

#endif /* CP_CALIBRATE_H */
