/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Unwinding a call site's stack with CFI, where the frame-pointer walk
 * stops: C++'s operator new in libstdc++ and most distribution libraries
 * keep no frame pointer, so the BPF walk from malloc's return loses every
 * frame above it. BPF copies the caller's registers and the top of its
 * stack at a call site's first allocation (struct cp_ustack_record);
 * libdw's unwinder (dwfl_getthread_frames) then walks the copy with the
 * modules' .eh_frame/.debug_frame, in a Dwfl of the process's own, reading
 * memory from the copy only, as `perf record --call-graph dwarf` does.
 * Once per call site, on the drain's thread.
 */
#ifndef CP_UNWIND_H
#define CP_UNWIND_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cacheperf/alloc.h"
#include "symbols/symbolizer.h"

/*
 * The frames of @r into @ips (at most @max): the caller first (r->caller,
 * as the BPF stack's first entry), then each return address above it, up
 * to the first frame in a thread's start function (cp_unwind_reached_start(),
 * where a whole frame-pointer walk ends too: one path, one stack).
 * Returns how many, 0 when nothing could be unwound (the process is gone,
 * no CFI for the caller).
 */
size_t cp_unwind(struct cp_symbolizer *s, const struct cp_ustack_record *r, __u64 *ips, size_t max);

/*
 * True when a stack whose outermost frame is in @function reached where a
 * thread starts (_start, __libc_start_main, start_thread, clone3): the
 * frame-pointer walk was whole, no CFI unwinding is needed. A symbol
 * version after '@' is not part of the name. Pure.
 */
bool cp_unwind_reached_start(const char *function);

#endif /* CP_UNWIND_H */
