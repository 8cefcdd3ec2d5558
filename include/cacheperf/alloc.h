/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel <-> user ABI of the allocation probes (bpf/alloc.bpf.c): the
 * object events of the `events` ring buffer (record type CP_REC_OBJECT), the
 * live-object map, the attach cookie and the .bss counters. Fixed-width
 * fields, explicit padding, sizes checked on both sides.
 */
#ifndef CACHEPERF_ALLOC_H
#define CACHEPERF_ALLOC_H

#include "cacheperf/types.h"
#include "cacheperf/abi.h"

/* live-object map entries (preallocated, ~100 bytes each); may be resized before load */
#define CP_MAX_LIVE_OBJECTS  (1u << 18)
#define CP_MAX_ALLOC_THREADS 16384 /* threads inside mmap, mremap or brk */
#define CP_MAX_ALLOC_STACKS  8192  /* allocation stacks (entries of each stack map) */
#define CP_ALLOC_STACK_DEPTH 32	   /* frames kept per allocation stack */
#define CP_MAX_ALLOC_SITES   16384 /* call sites whose last stack is kept */
/* a call site's deeper stack is taken again after this many allocations there */
#define CP_ALLOC_STACK_REFRESH	64
#define CP_MAX_ALLOC_COUNTED	1024 /* processes whose calls are counted */
#define CP_ALLOC_COUNT_BATCH	64   /* calls a thread counts before adding up */
#define CP_ALLOC_CUT_RING_BYTES 4096 /* the cutter's wakeups (alloc_cuts) */
/* --max-alloc-rate default: allocator calls per second and process */
#define CP_ALLOC_RATE_DEFAULT 200000

/* What happened to an object. */
enum cp_obj_event_kind {
	CP_OBJ_EV_ALLOC = 1, /* a heap object came to life: addr, size */
	CP_OBJ_EV_FREE = 2,  /* a tracked heap object died: addr (size as allocated) */
	/* old_addr died (0: none), addr lives. The probes report the old object's death
	 * as a FREE at the realloc's entry and send old_addr 0 (bpf/alloc.bpf.c). */
	CP_OBJ_EV_REALLOC = 3,
	CP_OBJ_EV_MAP = 4,   /* an anonymous mapping made by the program: addr, size */
	CP_OBJ_EV_UNMAP = 5, /* a tracked mapping was unmapped: addr */
	/* mremap of a tracked mapping: old_addr -> addr, size. The probes report the
	 * old range's death as an UNMAP at the mremap's entry and send old_addr 0. */
	CP_OBJ_EV_REMAP = 6,
};

/* Which function or system call produced the event (cp_object_event.func). */
enum cp_alloc_func {
	CP_FN_MALLOC = 0,
	CP_FN_CALLOC,
	CP_FN_REALLOC,
	CP_FN_REALLOCARRAY,
	CP_FN_FREE,
	CP_FN_POSIX_MEMALIGN,
	CP_FN_ALIGNED_ALLOC,
	CP_FN_MEMALIGN,
	CP_FN_VALLOC,
	CP_FN_PVALLOC,
	/*
	 * C++ operator new and delete, probed only in an allocator that defines
	 * them itself (tcmalloc, jemalloc, mimalloc); libstdc++'s call malloc.
	 * new: the size in rdi (aligned new: the alignment in rsi); delete: the
	 * pointer in rdi. The order is cp_alloc_cxx_names[] (user/objects/allocator.c).
	 */
	CP_FN_NEW,	 /* _Znwm */
	CP_FN_NEW_ARRAY, /* _Znam */
	CP_FN_NEW_NOTHROW,
	CP_FN_NEW_ARRAY_NOTHROW,
	CP_FN_NEW_ALIGNED,
	CP_FN_NEW_ARRAY_ALIGNED,
	CP_FN_NEW_ALIGNED_NOTHROW,
	CP_FN_NEW_ARRAY_ALIGNED_NOTHROW,
	CP_FN_DELETE,	    /* _ZdlPv */
	CP_FN_DELETE_ARRAY, /* _ZdaPv */
	CP_FN_DELETE_SIZED,
	CP_FN_DELETE_ARRAY_SIZED,
	CP_FN_DELETE_NOTHROW,
	CP_FN_DELETE_ARRAY_NOTHROW,
	CP_FN_DELETE_ALIGNED,
	CP_FN_DELETE_ARRAY_ALIGNED,
	CP_FN_DELETE_SIZED_ALIGNED,
	CP_FN_DELETE_ARRAY_SIZED_ALIGNED,
	CP_FN_DELETE_ALIGNED_NOTHROW,
	CP_FN_DELETE_ARRAY_ALIGNED_NOTHROW,
	CP_FN_NR_PROBED, /* the functions above are uprobed */
	CP_FN_MMAP = CP_FN_NR_PROBED,
	CP_FN_MUNMAP,
	CP_FN_MREMAP,
	CP_FN_BRK,
	CP_FN_NR,
};

/* cp_object_event.flags */
#define CP_OBJ_EV_F_UNTRACKED (1u << 0) /* the live-object map was full: no free will follow */
/*
 * User space only (a live run's CP_OBJ_EV_ALLOC, written to recordings): an
 * object no probe saw, found in glibc's chunk headers when a sample fell in
 * it (user/objects/glibc_chunks.h). addr and size are the chunk's user
 * pointer and malloc_usable_size(); no caller, stack or thread.
 */
#define CP_OBJ_EV_F_CHUNK (1u << 1)

/* One object event (record type CP_REC_OBJECT). */
struct cp_object_event {
	__u32 type; /* CP_REC_OBJECT */
	__u16 kind; /* enum cp_obj_event_kind */
	__u8 func;  /* enum cp_alloc_func */
	__u8 flags; /* CP_OBJ_EV_F_* */
	__u32 tgid;
	__u32 tid;	/* the thread that called the allocator */
	__u64 addr;	/* object start; 0 for a failed allocation */
	__u64 size;	/* bytes requested (mappings: length) */
	__u64 old_addr; /* realloc / mremap: the previous start */
	__u64 caller;	/* return address into the allocator's caller, 0 if unknown */
	__s64 stack_id; /* user stack: CP_ALLOC_STACK_ID(), < 0 if none */
	__u64 time_ns;	/* bpf_ktime_get_ns() at the allocator's return */
};
_Static_assert(sizeof(struct cp_object_event) == 64, "struct cp_object_event is ABI");

/*
 * Allocation stacks go to one of two stack maps, by the parity of the
 * stack generation (alloc_stack_gen) user space sets: alloc_stacks for
 * even ones, alloc_stacks_odd for odd ones. A stack id carries its
 * generation in bits 32-62 and its bucket in the map below, so the same
 * bucket of two generations (maybe another stack) is never one id. User
 * space ends a generation when its map fills up, and empties that map once
 * every event of the generation has been read (user/objects/stack_gen.h).
 */
#define CP_ALLOC_STACK_ID(gen, bucket)                                                             \
	((__s64)(((__u64)(gen)&0x7fffffffull) << 32 | (__u32)(bucket)))
#define CP_ALLOC_STACK_GEN(id)	  ((__u32)((__u64)(id) >> 32))
#define CP_ALLOC_STACK_BUCKET(id) ((__u32)(__u64)(id))

/*
 * Record CP_REC_ALLOC_STACK (user space): the frames a live run read for
 * the call site (@caller, @stack_id) of process @tgid, fed and recorded
 * once unwound, after the object event that named the site (before it in
 * recordings older than version 7); nr 0: none could be read.
 * Its size is offsetof(ips) + nr * 8: only the frames used are written.
 */
struct cp_alloc_stack_record {
	__u32 type; /* CP_REC_ALLOC_STACK */
	__u32 tgid;
	__u64 caller;
	__s64 stack_id;
	__u32 nr; /* ips[] used, <= CP_ALLOC_STACK_DEPTH */
	__u32 __pad;
	__u64 ips[CP_ALLOC_STACK_DEPTH]; /* return addresses, innermost first */
};
_Static_assert(sizeof(struct cp_alloc_stack_record) == 32 + 8 * CP_ALLOC_STACK_DEPTH,
	       "struct cp_alloc_stack_record is ABI");

#define CP_USTACK_BYTES 4096 /* user stack copied at a call site's first allocation */

/*
 * Record CP_REC_USTACK (bpf/alloc.bpf.c, live only): at the first
 * allocation of a call site, at the allocator's return, the registers the
 * caller's frame is unwound from and the top @len bytes of its stack, so
 * that user space can unwind with CFI (.eh_frame) through code without
 * frame pointers, as libstdc++'s operator new is (symbols/unwind.h). The
 * frames found go into the call site's stack; the snapshot is dropped.
 */
struct cp_ustack_record {
	__u32 type; /* CP_REC_USTACK */
	__u32 tgid;
	__u64 caller; /* the call site: ip, the allocator's return address */
	__u64 sp, bp, bx, r12, r13, r14, r15;
	__u32 len; /* bytes of stack[] read from sp, 0: none could be */
	__u32 __pad;
	__u8 stack[CP_USTACK_BYTES];
};
_Static_assert(sizeof(struct cp_ustack_record) == 80 + CP_USTACK_BYTES,
	       "struct cp_ustack_record is ABI");

/* Key of the live-object map: one process's object start. */
struct cp_live_key {
	__u32 tgid;
	__u32 __pad;
	__u64 addr;
};
_Static_assert(sizeof(struct cp_live_key) == 16, "struct cp_live_key is ABI");

/* Value of the live-object map. */
struct cp_live_object {
	__u64 size;
	__u64 caller;
	__s64 stack_id;
	__u64 time_ns;
	__u32 tid;
	__u8 func; /* enum cp_alloc_func */
	__u8 kind; /* enum cp_obj_event_kind it was born with; 0: none */
	__u8 __pad[2];
};
_Static_assert(sizeof(struct cp_live_object) == 40, "struct cp_live_object is ABI");

/*
 * The bpf_cookie of every allocation uprobe: which function it is, and how
 * many bytes the probed instruction sits below the return address (a probe
 * placed after pushes, user/live/probe_place.h).
 */
#define CP_ALLOC_COOKIE(func, sp_adjust) ((__u64)(func) | ((__u64)(sp_adjust) << 8))
#define CP_ALLOC_COOKIE_FUNC(c)		 ((__u8)((c)&0xff))
#define CP_ALLOC_COOKIE_SP(c)		 ((__u32)(((c) >> 8) & 0xffff))
/* The entry of a function whose result exit-point probes take, not a return probe. */
#define CP_ALLOC_COOKIE_EXITS (1ull << 24)
/* A probe of every process (-a): its calls are counted per CPU only, not per process. */
#define CP_ALLOC_COOKIE_ALL (1ull << 25)

/*
 * The bpf_cookie of an exit-point probe (on_alloc_exit, user/decode/exit_points.h):
 * a jcc's condition code (or "always": a jmp) and, per direction (0: falls
 * through, 1: taken), whether it reaches the function's ret, the register
 * holding the result there (enum cp_reg; CP_REG_NONE: null) and how far
 * above sp the return address is.
 */
#define CP_EXIT_COOKIE_COND(c)	   ((unsigned)((c)&0xf))
#define CP_EXIT_COOKIE_ALWAYS	   (1ull << 4)
#define CP_EXIT_COOKIE_RET(dir)	   (1ull << (5 + (dir)))
#define CP_EXIT_COOKIE_REG(c, dir) ((unsigned)(((c) >> (8 + 5 * (dir))) & 0x1f))
#define CP_EXIT_COOKIE_SP(c, dir)  ((__u32)(((c) >> (24 + 16 * (dir))) & 0xffff))
#define CP_EXIT_COOKIE_DIR(dir, reg, sp)                                                           \
	(CP_EXIT_COOKIE_RET(dir) | ((__u64)((reg)&0x1f) << (8 + 5 * (dir))) |                      \
	 ((__u64)((sp)&0xffff) << (24 + 16 * (dir))))

/* x86 eflags bits a condition code reads. */
#define CP_FLAG_CF 0x1
#define CP_FLAG_PF 0x4
#define CP_FLAG_ZF 0x40
#define CP_FLAG_SF 0x80
#define CP_FLAG_OF 0x800

/* Whether a jcc with condition code @cc (its opcode's low nibble) is taken under @flags. */
static inline bool cp_jcc_taken(unsigned cc, __u64 flags)
{
	bool cf = flags & CP_FLAG_CF, zf = flags & CP_FLAG_ZF, sf = flags & CP_FLAG_SF;
	bool of = flags & CP_FLAG_OF, pf = flags & CP_FLAG_PF, t;

	switch ((cc >> 1) & 7) {
	case 0:
		t = of;
		break;
	case 1:
		t = cf;
		break;
	case 2:
		t = zf;
		break;
	case 3:
		t = cf || zf;
		break;
	case 4:
		t = sf;
		break;
	case 5:
		t = pf;
		break;
	case 6:
		t = sf != of;
		break;
	default:
		t = zf || sf != of;
		break;
	}
	return cc & 1 ? !t : t;
}

/*
 * Counters in .bss; user space reads them through the skeleton, where they
 * are the array alloc_stats[CP_ALLOC_STATS_NR] in this order.
 */
struct cp_alloc_stats {
	__u64 nested;		 /* entries inside another probed call: folded into it */
	__u64 events;		 /* records written to the ring buffer */
	__u64 drop_ringbuf;	 /* records lost: ring buffer full */
	__u64 drop_live_full;	 /* objects not kept: live-object map full (their free is lost) */
	__u64 drop_entry_full;	 /* calls not followed: no room for the thread's entry */
	__u64 drop_counter_full; /* calls not counted for the guard: counter map full */
	__u64 no_entry;		 /* returns without their entry (attached mid-call) */
	__u64 stale_entry;	 /* entries of an older probe generation dropped */
	__u64 free_untracked;	 /* frees of objects not seen allocated (before attach) */
	__u64 stack_errors;	 /* bpf_get_stackid() failed: object kept without stack */
	__u64 read_errors;	 /* user memory unreadable: caller or posix_memalign result */
	__u64 mappings;		 /* anonymous mmaps recorded */
};
#define CP_ALLOC_STATS_NR (sizeof(struct cp_alloc_stats) / sizeof(__u64))
_Static_assert(sizeof(struct cp_alloc_stats) == 12 * sizeof(__u64), "struct cp_alloc_stats is ABI");

#endif /* CACHEPERF_ALLOC_H */
