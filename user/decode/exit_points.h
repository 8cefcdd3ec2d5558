/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Exit points of a function that may throw (a C++ operator new): where to
 * take its result without a return probe, whose trampoline an exception
 * cannot unwind through (issue 29, attack 7).
 *
 * An exit point is an instruction the kernel emulates (a jcc or a jmp:
 * user/live/probe_place.h) and the direction(s) of it after which execution
 * reaches a `ret` deterministically: no further conditional branch, the
 * result of the function sitting in one register at the exit point (or the
 * result being null), and the stack pointer a known distance below the
 * return address. A probe there, its direction evaluated from the flags,
 * sees the result before the `ret` and costs one emulated trap.
 *
 * cp_exit_points_find() explores the function from its entry and through
 * every direct jmp it makes (tail jumps into the slow paths, through the
 * PLT as far as the caller can resolve them; calls are stepped over),
 * iteratively and within caps. It fails when some path reaches a `ret`
 * without passing an exit point, or when something cannot be proven: an
 * indirect jmp, a target the caller cannot resolve, undecodable bytes, a
 * cap hit. Between an exit point and its `ret` a call may sit (tcmalloc's
 * MallocHook path): the result must then be in a callee-saved register or a
 * stack slot of the frame, as the System V ABI keeps them. Pure: bytes come
 * through the callbacks, Zydis decodes.
 */
#ifndef CP_EXIT_POINTS_H
#define CP_EXIT_POINTS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CP_EXIT_MAX_INSNS  4096 /* instructions explored per function */
#define CP_EXIT_MAX_WALK   256	/* instructions from an exit point to its ret */
#define CP_EXIT_MAX_POINTS 64	/* exit points per function */

/* What a direct jmp or call to an address reaches (struct cp_exit_code.resolve). */
enum cp_exit_target {
	CP_EXIT_TGT_CODE = 0, /* code of the same file, at *to (a PLT stub resolved) */
	CP_EXIT_TGT_NORETURN, /* a function that never returns (__cxa_throw, abort...) */
	CP_EXIT_TGT_UNKNOWN,  /* another file's function, or anything not proven */
};

/* The code of one ELF file, by link-time address. */
struct cp_exit_code {
	/* Copies up to @len bytes at @vaddr to @buf; returns the bytes copied (0: none). */
	size_t (*read)(void *ctx, __u64 vaddr, __u8 *buf, size_t len);
	/* What a direct jmp or call to @vaddr reaches; for code, where (*@to). */
	enum cp_exit_target (*resolve)(void *ctx, __u64 vaddr, __u64 *to);
	void *ctx;
};

/* Index into cp_exit_point's per-direction fields. */
enum { CP_EXIT_FALL = 0, CP_EXIT_TAKEN = 1 };

struct cp_exit_point {
	__u64 vaddr;	 /* the jcc or jmp, link-time */
	__u8 cond;	 /* jcc: condition code (low nibble of its opcode) */
	bool always;	 /* a jmp: only CP_EXIT_TAKEN */
	bool ret[2];	 /* this direction reaches ret */
	__u8 reg[2];	 /* enum cp_reg holding the result there; CP_REG_NONE: null */
	__u32 sp_off[2]; /* the return address is at sp + this */
};

struct cp_exit_points {
	struct cp_exit_point pts[CP_EXIT_MAX_POINTS];
	int n;
	__u32 insns;	 /* instructions explored */
	const char *why; /* why the analysis failed (NULL: it did not) */
	__u64 why_at;	 /* the address it failed at, if any */
};

/*
 * Finds the exit points of the function at @entry. Returns 0 with @out
 * filled, or -ENOENT with out->why when some return path cannot be taken
 * (the function must then not be probed for its result), -ENOMEM.
 */
int cp_exit_points_find(const struct cp_exit_code *code, __u64 entry, struct cp_exit_points *out);

/* Whether a call to function @name never returns (throw helpers, abort...). */
bool cp_exit_noreturn_name(const char *name);

#endif /* CP_EXIT_POINTS_H */
