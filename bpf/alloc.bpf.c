// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Allocation probes: uprobes on the malloc family and the syscall
 * tracepoints of mmap/munmap/mremap/brk turn every heap object and every
 * anonymous mapping a target makes into an object event of the `events` ring
 * buffer (cacheperf/alloc.h), and keep the live ones in a bounded map.
 *
 * Entry probes stash the arguments per thread, with the stack position of
 * the return address. User space may place an entry probe a few instructions
 * into the function (user/live/probe_place.h) so the kernel can emulate the probed
 * instruction instead of single-stepping it; the attach cookie tells how far
 * below the return address sp then is. Return probes, attached at the same
 * offset, take the result, the immediate caller (the address returned to,
 * exact without frame pointers: Debian's glibc has none) and the deeper user
 * stack, cached per call site (cp_alloc_stack()). A function that may throw
 * (operator new) has no return probe, whose trampoline an exception cannot
 * unwind through: exit points take its result (on_alloc_exit).
 *
 * Cost: each probe hit is a trap into the kernel (~0.7 µs in this VM even
 * for an empty program, `alloc_probe_cost --empty`), so the programs avoid
 * what costs as much again: hash updates per call (the per-thread state is
 * task storage), a user stack walk per call (cached), a consumer wakeup per
 * record (cp_wakeup_flag()).
 *
 * Nesting: an allocator may call another probed function (glibc's
 * reallocarray tail-calls realloc, realloc(p, 0) calls free). A call entered
 * while the same thread is inside a probed call, at the same or a deeper
 * stack position, is folded into the outer one, which emits the one event.
 * Entries carry the probe generation (alloc_gen) user space bumps whenever
 * it re-attaches, because a detach loses the returns of calls in flight.
 */
#include "cacheperf.bpf.h"
#include "wakeup.bpf.h"
#include "cacheperf/alloc.h"
#include "fp_walk.bpf.h"
#include "ustack.bpf.h"

#define CP_MAP_ANONYMOUS   0x20
#define CP_MAP_STACK	   0x20000
#define CP_MAX_ERRNO	   4095
#define CP_SIGSTOP	   19	       /* the same on every architecture Linux runs BPF on */
#define CP_ALLOC_WAKEUP_NS 50000000ull /* 50 ms: an event wakes the consumer after this quiet */

/* A thread inside mmap, mremap or brk. */
struct cp_map_entry {
	__u64 addr; /* mremap: old address; brk: the break before */
	__u64 len;  /* mmap: length; mremap: new length */
	__u64 caller;
	__u8 func;
	__u8 __pad[7];
	struct cp_live_object old; /* mremap: the mapping taken out at entry */
};

/* A thread's probed allocator call, from its entry to its return. */
struct cp_alloc_entry {
	__u64 sp; /* address of the return address; 0: in no probed call */
	__u64 size;
	__u64 old_addr; /* realloc, reallocarray */
	__u64 memptr;	/* posix_memalign's out-parameter */
	__u64 caller;	/* exit-probed: the return address read at the entry */
	__s64 stack_id; /* exit-probed: the deeper stack, taken at the entry */
	__u32 gen;	/* alloc_gen at entry */
	__u32 calls;	/* calls of the thread not yet added to alloc_calls */
	__u16 nest;	/* probed calls entered inside this one, not yet returned */
	__u8 func;	/* enum cp_alloc_func */
	__u8 exits;	/* exit points take the result, not a return probe */
	__u8 __pad[4];
	/* realloc: old_addr's live object, taken out at entry (kind 0: it was not tracked) */
	struct cp_live_object old;
};

/*
 * Thread -> the call it is in, as task storage: written in place, where a
 * hash update and delete per call cost ~0.3 µs here, and freed with the
 * thread, so a thread that dies inside a call leaves nothing behind.
 */
struct {
	__uint(type, BPF_MAP_TYPE_TASK_STORAGE);
	__uint(map_flags, BPF_F_NO_PREALLOC);
	__type(key, int);
	__type(value, struct cp_alloc_entry);
} alloc_entries SEC(".maps");

struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CP_MAX_ALLOC_THREADS);
	__type(key, __u32);
	__type(value, struct cp_map_entry);
} map_entries SEC(".maps");

/* Live objects and mappings of every target; max_entries may be changed before load. */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_LIVE_OBJECTS);
	__type(key, struct cp_live_key);
	__type(value, struct cp_live_object);
} live_objects SEC(".maps");

/* The stacks of even and odd stack generations (CP_ALLOC_STACK_ID()): walks by bucket. */
struct cp_alloc_stack_map {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_ALLOC_STACKS);
	__uint(key_size, sizeof(__u32));
	__uint(value_size, CP_ALLOC_STACK_DEPTH * sizeof(__u64));
};
struct cp_alloc_stack_map alloc_stacks SEC(".maps");
struct cp_alloc_stack_map alloc_stacks_odd SEC(".maps");

/* A call site of an allocator: the immediate caller and the frame above it. */
struct cp_site_key {
	__u32 tgid;
	__u32 __pad;
	__u64 caller;
	__u64 parent; /* return address in the caller's frame, 0 if unreadable */
};

struct cp_site_stack {
	__s64 stack_id; /* the last stack taken here */
	__u64 uses;	/* allocations that returned here since */
	__u32 gen;	/* alloc_stack_gen when it was taken */
	__u32 __pad;
};

/*
 * Call site -> its last deeper stack (cp_alloc_stack()). LRU: an entry is
 * added once per call site, and the busy ones stay.
 */
struct {
	__uint(type, BPF_MAP_TYPE_LRU_HASH);
	__uint(max_entries, CP_MAX_ALLOC_SITES);
	__type(key, struct cp_site_key);
	__type(value, struct cp_site_stack);
} alloc_site_stacks SEC(".maps");

/* tgid -> allocator calls, read and reset by the rate guard (user/live/alloc_guard.h). */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_ALLOC_COUNTED);
	__type(key, __u32);
	__type(value, __u64);
} alloc_calls SEC(".maps");

/*
 * tgid -> the count in alloc_calls at which the process's open budget
 * window has spent its allowance (user/live/alloc_probes.c); 0 or absent:
 * none. The batch that brings the count to it puts a record in alloc_cuts,
 * which wakes the cutter: it waits there instead of polling the count
 * every millisecond, which cost a quiet target's profiler over 1000 wakeups
 * a second.
 */
struct {
	__uint(type, BPF_MAP_TYPE_HASH);
	__uint(max_entries, CP_MAX_ALLOC_COUNTED);
	__type(key, __u32);
	__type(value, __u64);
} alloc_cut_at SEC(".maps");

/*
 * -a: this CPU's count of calls (cp_cpu_cost) at which it wakes the cutter
 * (0: none). User space puts the marks a window's allowance over the CPUs
 * apart: before all CPUs' calls add up to it, one of them reaches its mark.
 */
struct {
	__uint(type, BPF_MAP_TYPE_PERCPU_ARRAY);
	__uint(max_entries, 1);
	__type(key, __u32);
	__type(value, __u64);
} alloc_cut_cpu SEC(".maps");

/* The cutter's wakeups: a record when a count reaches its mark (alloc_cut_at, alloc_cut_cpu). */
struct {
	__uint(type, BPF_MAP_TYPE_RINGBUF);
	__uint(max_entries, CP_ALLOC_CUT_RING_BYTES);
} alloc_cuts SEC(".maps");

/*
 * struct cp_alloc_stats, as an array of counters: a struct type in .bss would
 * make every user of the skeleton include cacheperf/alloc.h first.
 */
__u64 alloc_stats[CP_ALLOC_STATS_NR];
/*
 * Exit-probed calls an exception (or a longjmp) ended: their entry was found
 * open with the return address gone from its slot, and dropped.
 */
__u64 alloc_exit_lost;
/* Bumped by user space before every (re-)attach: older entries lost their returns. */
__u32 alloc_gen;
/* The stack generation: which stack map takes new stacks (CP_ALLOC_STACK_ID()). */
__u32 alloc_stack_gen;
/* 1: the next generation's map is empty and takes the stacks the current one refuses. */
__u32 alloc_stack_spare;
/* Capture the deeper user stack of each allocation (frame-pointer chains, best effort). */
const volatile bool targ_alloc_stacks = true;
/* Count calls per process for the allocation-rate guard. */
const volatile bool targ_alloc_count = true;
/*
 * Bytes of stack copied at a call site's first allocation (CP_REC_USTACK),
 * for unwinding by CFI; 0: none (--alloc-stack-bytes).
 */
const volatile __u32 targ_ustack_bytes = CP_USTACK_BYTES;
/* Bench only: the uprobe programs return at once, to measure the probes' own floor. */
const volatile bool targ_alloc_empty = false;

#define CP_INC(field)                                                                              \
	__sync_fetch_and_add(&alloc_stats[offsetof(struct cp_alloc_stats, field) / sizeof(__u64)], \
			     1)

static __always_inline struct cp_alloc_entry *cp_entry_of_current(__u64 flags)
{
	return bpf_task_storage_get(&alloc_entries, bpf_get_current_task_btf(), 0, flags);
}

/*
 * Wakes the cutter when a count, @now, reached its mark @at, which is then
 * cleared (0: none) until user space sets it again: two CPUs that both see
 * a process's mark reached put two records, which is harmless. A record
 * that finds the ring full is not needed: the records there wake the cutter.
 */
static __always_inline void cp_cut_hint(__u64 *at, __u64 now, __u32 tgid)
{
	__u32 *r;

	if (!at || !*at || now < *at)
		return;
	*at = 0;
	r = bpf_ringbuf_reserve(&alloc_cuts, sizeof(*r), 0);
	if (!r)
		return;
	*r = tgid;
	bpf_ringbuf_submit(r, BPF_RB_FORCE_WAKEUP);
}

/*
 * Counts a call of thread @e (NULL: none) through a probe of @cookie: on
 * this CPU's counts at once (a per-CPU add: what the estimate and -a's
 * windows count, every call, those of threads that exit soon after too),
 * and, through a probe of the process's own (not CP_ALLOC_COOKIE_ALL), for
 * the rate guard of process @tgid in the thread's entry first, into
 * alloc_calls every CP_ALLOC_COUNT_BATCH calls, as a hash lookup and an
 * atomic add per call cost ~50 ns here. A process's guard thus sees up to
 * CP_ALLOC_COUNT_BATCH - 1 calls per thread late (or never, if the thread
 * exits), nothing next to a budget of many thousand calls per second. -a's
 * probes put nothing there: every process of the machine made an entry
 * that user space then deleted.
 */
static __always_inline void cp_alloc_count(struct cp_alloc_entry *e, __u32 tgid, __u64 cookie)
{
	struct cp_cpu_cost *cost;
	__u64 add = 1, *n;
	__u32 zero = 0;

	if (!targ_alloc_count)
		return;
	cost = cp_cpu_cost();
	if (cost)
		cp_cut_hint(bpf_map_lookup_elem(&alloc_cut_cpu, &zero), ++cost->alloc_calls, 0);
	if (cookie & CP_ALLOC_COOKIE_ALL)
		return;
	if (e) {
		if (++e->calls < CP_ALLOC_COUNT_BATCH)
			return;
		add = e->calls;
		e->calls = 0;
	}
	n = bpf_map_lookup_elem(&alloc_calls, &tgid);
	if (!n && !bpf_map_update_elem(&alloc_calls, &tgid, &add, BPF_NOEXIST)) {
		cp_cut_hint(bpf_map_lookup_elem(&alloc_cut_at, &tgid), add, tgid);
		return;
	}
	if (!n)
		n = bpf_map_lookup_elem(&alloc_calls, &tgid); /* another CPU raced us */
	if (!n) {
		CP_INC(drop_counter_full);
		return;
	}
	__sync_fetch_and_add(n, add);
	/* read after the add: the batch that reaches the mark sees it reached */
	cp_cut_hint(bpf_map_lookup_elem(&alloc_cut_at, &tgid), *(volatile __u64 *)n, tgid);
}

/* @e is a probed call of this probe generation entered at or above @sp. */
static __always_inline bool cp_is_outer(const struct cp_alloc_entry *e, __u64 sp)
{
	return e && e->sp && e->gen == alloc_gen && e->sp >= sp;
}

/* True when the current thread is inside a probed call (mmap, mremap, brk: at any sp). */
static __always_inline bool cp_in_call(void)
{
	return cp_is_outer(cp_entry_of_current(0), 0);
}

static __always_inline __u64 cp_read_caller(__u64 sp)
{
	__u64 caller = 0;

	if (bpf_probe_read_user(&caller, sizeof(caller), (void *)sp)) {
		CP_INC(read_errors);
		return 0;
	}
	return caller;
}

/*
 * Writes one object event. It wakes the consumer only as wakeup.bpf.h allows:
 * the ring buffer would wake it whenever it had caught up, i.e. on nearly
 * every record of a fast allocator, and a wakeup is an irq_work self-IPI: an
 * APIC MSR write, which costs ~4 µs in a VM (measured with perf here). So
 * wake only when CP_RINGBUF_WAKEUP_BYTES wait or CP_ALLOC_WAKEUP_NS passed
 * since the CPU's last wakeup; user space consumes the rest on its own tick
 * (cp_drain__poll(d, 0)). And never twice within wakeup_min_ns on a CPU:
 * a consumer that does not drain (busy, or not polling) would otherwise be
 * woken by every record while the data stays above the threshold: ~6 µs
 * more per record, a target 3-4 times slower than with the probes alone.
 */
static __always_inline void cp_emit(__u16 kind, __u8 func, __u8 flags, __u64 pid_tgid, __u64 addr,
				    __u64 size, __u64 old_addr, __u64 caller, __s64 stack_id,
				    __u64 now)
{
	struct cp_object_event *ev;

	ev = cp_events_reserve(sizeof(*ev), size >= CP_ALLOC_EVENT_BIG ? CP_RINGBUF_FILL_SAMPLES
								       : CP_RINGBUF_FILL_ALLOC);
	if (!ev) {
		CP_INC(drop_ringbuf);
		return;
	}
	ev->type = CP_REC_OBJECT;
	ev->kind = kind;
	ev->func = func;
	ev->flags = flags;
	ev->tgid = pid_tgid >> 32;
	ev->tid = (__u32)pid_tgid;
	ev->addr = addr;
	ev->size = size;
	ev->old_addr = old_addr;
	ev->caller = caller;
	ev->stack_id = stack_id;
	ev->time_ns = now;
	bpf_ringbuf_submit(ev, cp_wakeup_flag(now, CP_ALLOC_WAKEUP_NS));
	CP_INC(events);
}

/* Keeps a new object live; returns CP_OBJ_EV_F_UNTRACKED when the map is full. */
static __always_inline __u8 cp_live_add(__u64 pid_tgid, __u64 addr, __u64 size, __u64 caller,
					__s64 stack_id, __u64 now, __u8 func, __u16 kind)
{
	struct cp_live_key key = {.tgid = pid_tgid >> 32, .addr = addr};
	struct cp_live_object obj = {
		.size = size,
		.caller = caller,
		.stack_id = stack_id,
		.time_ns = now,
		.tid = (__u32)pid_tgid,
		.func = func,
		.kind = kind,
	};

	if (bpf_map_update_elem(&live_objects, &key, &obj, BPF_ANY)) {
		CP_INC(drop_live_full);
		return CP_OBJ_EV_F_UNTRACKED;
	}
	return 0;
}

static __always_inline bool cp_live_del(__u32 tgid, __u64 addr)
{
	struct cp_live_key key = {.tgid = tgid, .addr = addr};

	return bpf_map_delete_elem(&live_objects, &key) == 0;
}

/*
 * realloc's old object dies here, at the entry, while the caller still owns
 * it: glibc frees it inside the call, and from then on another thread may be
 * handed the same address and report it before this call returns. Reported
 * at the return, the old object's death would then come after that newer
 * object's birth and kill it, in user space and in live_objects. The object
 * goes to @old, for the return to put back if the realloc fails.
 */
static __always_inline void cp_realloc_take_old(__u64 pid_tgid, __u64 addr, __u8 func,
						struct cp_live_object *old)
{
	struct cp_live_key key = {.tgid = pid_tgid >> 32, .addr = addr};
	struct cp_live_object *obj = bpf_map_lookup_elem(&live_objects, &key);

	if (!obj) {
		CP_INC(free_untracked);
		return;
	}
	*old = *obj;
	if (bpf_map_delete_elem(&live_objects, &key)) {
		old->kind = 0; /* freed meanwhile by another thread: a double free */
		CP_INC(free_untracked);
		return;
	}
	cp_emit(CP_OBJ_EV_FREE, func, 0, pid_tgid, addr, 0, 0, 0, -1, bpf_ktime_get_ns());
}

/* A failed realloc or mremap: the object taken at the entry lives on, as it was. */
static __always_inline void cp_realloc_restore(__u64 pid_tgid, __u64 addr,
					       const struct cp_live_object *old)
{
	__u64 owner = (pid_tgid & ~0xffffffffull) | old->tid;
	__u8 flags;

	flags = cp_live_add(owner, addr, old->size, old->caller, old->stack_id, old->time_ns,
			    old->func, old->kind);
	cp_emit(old->kind, old->func, flags, owner, addr, old->size, 0, old->caller, old->stack_id,
		old->time_ns);
}

/*
 * The user stack at @ip, @fp, @sp walked into generation @gen's map
 * (cp_fp_walk_kept()): its bucket or a negative errno. A global function: the
 * walk's loops verified once.
 */
__noinline long cp_alloc_stack_kept(__u64 ip, __u64 fp, __u64 sp, __u32 gen)
{
	long err;
	struct cp_stack_walk *w = cp_fp_walk(ip, fp, sp, &err);

	if (!w)
		return err;
	if (gen & 1)
		return cp_fp_walk_keep(w, &alloc_stacks_odd, CP_MAX_ALLOC_STACKS);
	return cp_fp_walk_keep(w, &alloc_stacks, CP_MAX_ALLOC_STACKS);
}

/*
 * The user stack into generation @gen's map, or when its bucket there holds
 * another stack, into the next generation's map while that one is empty
 * (alloc_stack_spare): that map is the next generation's, where the stack
 * stays valid. Counted in stack_errors when both fail.
 */
static __always_inline __s64 cp_user_stack(__u64 ip, __u64 fp, __u64 sp, __u32 gen)
{
	long id;

	if (!targ_alloc_stacks)
		return -1;
	id = cp_alloc_stack_kept(ip, fp, sp, gen);
	if (id < 0 && alloc_stack_spare) {
		gen = (gen + 1) & 0x7fffffff;
		id = cp_alloc_stack_kept(ip, fp, sp, gen);
	}
	if (id < 0) {
		CP_INC(stack_errors);
		return -1;
	}
	return CP_ALLOC_STACK_ID(gen, id);
}

/*
 * The caller's registers and stack top at a call site's first allocation,
 * for user space to unwind with CFI where the frame-pointer walk stops
 * (cacheperf/alloc.h). Stacks shallower than CP_USTACK_BYTES are read
 * again for a quarter of it. A full ring buffer loses only the snapshot.
 */
static __always_inline void cp_ustack_emit(struct pt_regs *ctx, __u32 tgid, __u64 caller, __u64 sp)
{
	__u32 want = targ_ustack_bytes & (2 * CP_USTACK_BYTES - 1);
	struct cp_ustack_record *r;

	if (!want || want > CP_USTACK_BYTES)
		return;
	r = cp_events_reserve(sizeof(*r), CP_RINGBUF_FILL_ALLOC);
	if (!r) {
		CP_INC(drop_ringbuf);
		return;
	}
	cp_ustack_fill(r, ctx, tgid, caller, sp, want);
	bpf_ringbuf_submit(r, BPF_RB_NO_WAKEUP);
}

/*
 * The deeper user stack of an allocation returning to @caller, at an
 * allocator's return. A stack walk costs ~0.7 µs here, as much as the probe
 * itself, and the stack above a call site rarely changes, so it is taken at
 * the first allocation of a call site and again every CP_ALLOC_STACK_REFRESH
 * allocations there; the ones between get the last one taken. The call site
 * is the caller and the return address in its frame record (what the stack
 * walk finds as the second frame), so a wrapper like xmalloc() still tells
 * its callers apart: the first two frames of a stack are always exact, and
 * the frames above them are those of one of the CP_ALLOC_STACK_REFRESH - 1
 * allocations before at the same two frames.
 *
 * A call whose result exit points take (on_alloc_exit) has it taken at its
 * entry, where the callee-saved registers are still the caller's (deep in
 * the allocator's slow paths, where the exit may be, they are not), with
 * @sp the caller's stack pointer as a return probe would see it. The walk's
 * first frame is then inside the allocator: user space puts the caller
 * there (user/live/run.c).
 */
static __always_inline __s64 cp_alloc_stack(struct pt_regs *ctx, __u32 tgid, __u64 caller, __u64 sp)
{
	struct cp_site_key key = {.tgid = tgid, .caller = caller};
	struct cp_site_stack *site, fresh = {.uses = 1};
	__u32 gen = alloc_stack_gen;

	if (!targ_alloc_stacks)
		return -1;
	/*
	 * a caller built without frame pointers (Debian's redis-server) holds
	 * anything in rbp: a small number's read faults, 4-5 us in a VM, on
	 * every call. Only what can be a frame record is read (the walk's rule)
	 */
	if (!cp_fp_frame_ok(PT_REGS_FP(ctx), PT_REGS_SP(ctx)) ||
	    bpf_probe_read_user(&key.parent, sizeof(key.parent), (void *)(PT_REGS_FP(ctx) + 8)))
		key.parent = 0;
	site = bpf_map_lookup_elem(&alloc_site_stacks, &key);
	/*
	 * racy between CPUs: at worst a stack is taken once more or once less.
	 * A stack of an older generation is not handed out: its map is emptied.
	 */
	if (site && site->gen == gen && site->uses++ % CP_ALLOC_STACK_REFRESH)
		return site->stack_id;
	fresh.stack_id = cp_user_stack(PT_REGS_IP(ctx), PT_REGS_FP(ctx), PT_REGS_SP(ctx), gen);
	fresh.gen = gen;
	if (site) {
		site->stack_id = fresh.stack_id;
		site->gen = gen;
		site->uses = 1;
	} else {
		bpf_map_update_elem(&alloc_site_stacks, &key, &fresh, BPF_ANY);
		cp_ustack_emit(ctx, tgid, caller, sp);
	}
	return fresh.stack_id;
}

/*
 * True when open entry @e, of an exit-probed call (an operator new that may
 * throw), is over although no exit point saw it end: a std::bad_alloc left
 * it. A new entry at the same stack position replaces it (the call before
 * is over, or this is a tail jump from one probed variant into another,
 * which returns through the same exit points); at a deeper one, its return
 * address must still be in its slot, or the call is gone.
 */
static __always_inline bool cp_exception_ended(const struct cp_alloc_entry *e, __u64 sp)
{
	__u64 ret = 0;

	if (!e->exits)
		return false;
	if (e->sp == sp)
		return true;
	if (!bpf_probe_read_user(&ret, sizeof(ret), (void *)e->sp) && ret == e->caller)
		return false;
	__sync_fetch_and_add(&alloc_exit_lost, 1);
	return true;
}

static __always_inline int cp_alloc_enter_untimed(struct pt_regs *ctx, __u64 size, __u64 old_addr,
						  __u64 memptr)
{
	__u64 cookie, pid_tgid, sp;
	struct cp_alloc_entry *e;

	if (targ_alloc_empty)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	if (!cp_is_target(pid_tgid >> 32))
		return 0;
	e = cp_entry_of_current(BPF_LOCAL_STORAGE_GET_F_CREATE);
	cookie = bpf_get_attach_cookie(ctx);
	cp_alloc_count(e, pid_tgid >> 32, cookie);
	if (!e) {
		CP_INC(drop_entry_full);
		return 0;
	}
	sp = PT_REGS_SP(ctx) + CP_ALLOC_COOKIE_SP(cookie);
	if (cp_is_outer(e, sp) && !cp_exception_ended(e, sp)) {
		e->nest++;
		CP_INC(nested);
		return 0;
	}
	/* a call still open here lost its return (longjmp, detach): this one replaces it */
	*e = (struct cp_alloc_entry){
		.sp = sp,
		.size = size,
		.old_addr = old_addr,
		.memptr = memptr,
		.gen = alloc_gen,
		.calls = e->calls,
		.func = CP_ALLOC_COOKIE_FUNC(cookie),
		.exits = !!(cookie & CP_ALLOC_COOKIE_EXITS),
	};
	/* the caller, as a return probe would see it; and what tells a call gone */
	if (e->exits) {
		e->caller = cp_read_caller(sp);
		/* the caller's sp is just above the return address */
		e->stack_id = cp_alloc_stack(ctx, pid_tgid >> 32, e->caller, sp + 8);
	}
	if (old_addr)
		cp_realloc_take_old(pid_tgid, old_addr, e->func, &e->old);
	return 0;
}

/* cp_alloc_enter_untimed(), its run time counted (cpu_cost.bpf.h) */
static __always_inline int cp_alloc_enter(struct pt_regs *ctx, __u64 size, __u64 old_addr,
					  __u64 memptr)
{
	return cp_alloc_timed(true, cp_alloc_enter_untimed(ctx, size, old_addr, memptr));
}

/* malloc, valloc, pvalloc */
SEC("uprobe")
int BPF_KPROBE(on_alloc, __u64 size)
{
	return cp_alloc_enter(ctx, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(on_calloc, __u64 nmemb, __u64 size)
{
	return cp_alloc_enter(ctx, nmemb * size, 0, 0);
}

/* memalign, aligned_alloc */
SEC("uprobe")
int BPF_KPROBE(on_memalign, __u64 align, __u64 size)
{
	return cp_alloc_enter(ctx, size, 0, 0);
}

SEC("uprobe")
int BPF_KPROBE(on_realloc, __u64 ptr, __u64 size)
{
	return cp_alloc_enter(ctx, size, ptr, 0);
}

SEC("uprobe")
int BPF_KPROBE(on_reallocarray, __u64 ptr, __u64 nmemb, __u64 size)
{
	return cp_alloc_enter(ctx, nmemb * size, ptr, 0);
}

SEC("uprobe")
int BPF_KPROBE(on_posix_memalign, __u64 memptr, __u64 align, __u64 size)
{
	return cp_alloc_enter(ctx, size, 0, memptr);
}

/*
 * The end of probed call @e returning @rc to @caller: the event, as the
 * return probe and the exit points both complete a call.
 */
static __always_inline int cp_alloc_complete(struct pt_regs *ctx, struct cp_alloc_entry *e,
					     __u64 pid_tgid, __u64 rc, __u64 caller)
{
	__u64 ptr = rc, size, old_addr, now;
	struct cp_live_object old;
	__u16 kind = CP_OBJ_EV_ALLOC;
	__s64 stack_id;
	__u8 func, flags;

	func = e->func;
	size = e->size;
	old_addr = e->old_addr;
	old = e->old;
	if (func == CP_FN_POSIX_MEMALIGN) {
		ptr = 0;
		/* the result goes through the out-parameter; rc is an error number */
		if ((int)rc == 0 && bpf_probe_read_user(&ptr, sizeof(ptr), (void *)e->memptr))
			CP_INC(read_errors);
	}
	e->sp = 0;

	if (func == CP_FN_REALLOC || func == CP_FN_REALLOCARRAY) {
		if (!ptr && size) {
			/* failed: the old object lives on */
			if (old_addr && old.kind)
				cp_realloc_restore(pid_tgid, old_addr, &old);
			return 0;
		}
		/* the old object's death was reported at the entry */
		if (old_addr)
			kind = CP_OBJ_EV_REALLOC;
	}
	if (!ptr)
		return 0; /* failed allocation, or realloc(p, 0) freed p */
	now = bpf_ktime_get_ns();
	stack_id = e->exits ? e->stack_id
			    : cp_alloc_stack(ctx, pid_tgid >> 32, caller, PT_REGS_SP(ctx));
	flags = cp_live_add(pid_tgid, ptr, size, caller, stack_id, now, func, kind);
	cp_emit(kind, func, flags, pid_tgid, ptr, size, 0, caller, stack_id, now);
	return 0;
}

/* The return of every probed function but free and the exit-probed ones. */
static __always_inline int alloc_ret(struct pt_regs *ctx, __u64 rc)
{
	struct cp_alloc_entry *e;
	__u64 pid_tgid;

	if (targ_alloc_empty)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	e = cp_entry_of_current(0);
	if (!e || !e->sp) {
		if (cp_is_target(pid_tgid >> 32))
			CP_INC(no_entry);
		return 0;
	}
	if (e->gen != alloc_gen) {
		e->sp = 0;
		CP_INC(stale_entry);
		return 0;
	}
	if (e->nest) {
		e->nest--;
		return 0;
	}
	/* the uretprobe put the original return address back into ip */
	return cp_alloc_complete(ctx, e, pid_tgid, rc, PT_REGS_IP(ctx));
}

SEC("uretprobe")
int BPF_KRETPROBE(on_alloc_ret, __u64 rc)
{
	return cp_alloc_timed(false, alloc_ret(ctx, rc));
}

/*
 * An exit point of a function that may throw (user/decode/exit_points.h):
 * a jcc or jmp after which the function returns, its result in a register.
 * The direction comes from the flags (the probe fires before the branch);
 * the call is the thread's open entry whose return address is where this
 * direction's ret will find it. Anything else (the other direction, the
 * same code reached from malloc or from a deeper call) passes.
 */
static __always_inline int alloc_exit(struct pt_regs *ctx)
{
	struct cp_alloc_entry *e;
	struct cp_cpu_cost *cost;
	struct cp_regs regs;
	__u64 cookie;
	int dir;

	if (targ_alloc_empty)
		return 0;
	/* every pass traps, whatever call it is in: the budget prices each (budget.h) */
	cost = cp_cpu_cost();
	if (cost)
		cost->exit_traps++;
	e = cp_entry_of_current(0);
	if (!e || !e->sp || !e->exits)
		return 0;
	cookie = bpf_get_attach_cookie(ctx);
	dir = (cookie & CP_EXIT_COOKIE_ALWAYS) ||
	      cp_jcc_taken(CP_EXIT_COOKIE_COND(cookie), ctx->flags);
	if (!(cookie & CP_EXIT_COOKIE_RET(dir)) ||
	    PT_REGS_SP(ctx) + CP_EXIT_COOKIE_SP(cookie, dir) != e->sp)
		return 0;
	if (e->gen != alloc_gen) {
		e->sp = 0;
		CP_INC(stale_entry);
		return 0;
	}
	e->nest = 0; /* calls folded into this one that never returned */
	/* fixed-offset 8-byte loads: the only ctx reads the verifier allows */
	__builtin_memcpy(&regs, ctx, sizeof(regs));
	return cp_alloc_complete(ctx, e, bpf_get_current_pid_tgid(),
				 cp_reg_value(&regs, CP_EXIT_COOKIE_REG(cookie, dir)), e->caller);
}

SEC("uprobe")
int BPF_KPROBE(on_alloc_exit)
{
	return cp_alloc_timed(false, alloc_exit(ctx));
}

static __always_inline int free_enter(struct pt_regs *ctx, __u64 ptr)
{
	struct cp_alloc_entry *e;
	__u64 pid_tgid, cookie;

	if (targ_alloc_empty)
		return 0;
	pid_tgid = bpf_get_current_pid_tgid();
	if (!cp_is_target(pid_tgid >> 32))
		return 0;
	e = cp_entry_of_current(BPF_LOCAL_STORAGE_GET_F_CREATE);
	cookie = bpf_get_attach_cookie(ctx);
	cp_alloc_count(e, pid_tgid >> 32, cookie);
	if (!ptr)
		return 0;
	/* free inside realloc: the realloc event says it */
	if (e && e->sp && cp_is_outer(e, PT_REGS_SP(ctx) + CP_ALLOC_COOKIE_SP(cookie))) {
		CP_INC(nested);
		return 0;
	}
	/* frees of objects allocated before attach would only cost bandwidth */
	if (!cp_live_del(pid_tgid >> 32, ptr)) {
		CP_INC(free_untracked);
		return 0;
	}
	cp_emit(CP_OBJ_EV_FREE, CP_FN_FREE, 0, pid_tgid, ptr, 0, 0, 0, -1, bpf_ktime_get_ns());
	return 0;
}

SEC("uprobe")
int BPF_KPROBE(on_free, __u64 ptr)
{
	return cp_alloc_timed(true, free_enter(ctx, ptr));
}

/*
 * System calls. The glibc wrappers of mmap and munmap push nothing before
 * `syscall`, so the return address into their caller is at the user sp;
 * for mremap and brk the caller is left unknown (mremap keeps the call site
 * of the original mapping). Mappings made inside a probed allocator call are
 * the allocator's business, and thread stacks (MAP_STACK) are stacks.
 */
static __always_inline __u64 cp_user_sp(void)
{
	struct pt_regs *regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());

	return BPF_CORE_READ(regs, sp);
}

static __always_inline bool cp_map_wanted(__u64 pid_tgid)
{
	if (!cp_is_target(pid_tgid >> 32))
		return false;
	return !cp_in_call();
}

static __always_inline void cp_map_enter(const struct cp_map_entry *m)
{
	__u32 tid = (__u32)bpf_get_current_pid_tgid();

	if (bpf_map_update_elem(&map_entries, &tid, m, BPF_ANY))
		CP_INC(drop_entry_full);
}

static __always_inline void cp_mmap_enter(__u64 len, __u64 flags)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if ((flags & (CP_MAP_ANONYMOUS | CP_MAP_STACK)) != CP_MAP_ANONYMOUS)
		return;
	struct cp_map_entry m = {.len = len, .func = CP_FN_MMAP};

	if (!cp_map_wanted(pid_tgid))
		return;
	m.caller = cp_read_caller(cp_user_sp());
	cp_map_enter(&m);
}

static __always_inline void cp_munmap_enter(__u64 addr)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();

	if (!cp_is_target(pid_tgid >> 32) || !cp_live_del(pid_tgid >> 32, addr))
		return;
	cp_emit(CP_OBJ_EV_UNMAP, CP_FN_MUNMAP, 0, pid_tgid, addr, 0, 0,
		cp_read_caller(cp_user_sp()), -1, bpf_ktime_get_ns());
}

/*
 * mremap's old range dies here, at the entry, as realloc's old object does
 * (cp_realloc_take_old): once the kernel has moved the mapping, another
 * thread may map the old range and report it before this call returns.
 */
static __always_inline void cp_mremap_enter(__u64 old_addr, __u64 new_len)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct cp_map_entry m = {.addr = old_addr, .len = new_len, .func = CP_FN_MREMAP};
	struct cp_live_key key = {.tgid = pid_tgid >> 32, .addr = old_addr};
	struct cp_live_object *old;

	if (!cp_map_wanted(pid_tgid))
		return;
	old = bpf_map_lookup_elem(&live_objects, &key);
	if (!old)
		return; /* not a mapping we track */
	m.old = *old;
	if (bpf_map_delete_elem(&live_objects, &key))
		return; /* unmapped meanwhile by another thread */
	cp_emit(CP_OBJ_EV_UNMAP, CP_FN_MREMAP, 0, pid_tgid, old_addr, 0, 0, 0, -1,
		bpf_ktime_get_ns());
	cp_map_enter(&m);
}

static __always_inline void cp_brk_enter(void)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	struct cp_map_entry m = {.func = CP_FN_BRK};
	struct task_struct *task;

	if (!cp_map_wanted(pid_tgid))
		return;
	task = bpf_get_current_task_btf();
	m.addr = BPF_CORE_READ(task, mm, brk);
	cp_map_enter(&m);
}

static __always_inline void cp_map_exit(__s64 ret)
{
	__u64 pid_tgid = bpf_get_current_pid_tgid();
	__u32 tid = (__u32)pid_tgid;
	struct cp_map_entry m, *p;
	__u64 addr = (__u64)ret, now;
	struct pt_regs *regs;
	bool failed = ret < 0 && ret >= -CP_MAX_ERRNO;
	__s64 stack_id;
	__u8 flags;

	p = bpf_map_lookup_elem(&map_entries, &tid);
	if (!p)
		return;
	m = *p;
	bpf_map_delete_elem(&map_entries, &tid);
	if (m.func == CP_FN_MREMAP && failed) {
		cp_realloc_restore(pid_tgid, m.addr, &m.old);
		return;
	}
	if (failed)
		return;
	now = bpf_ktime_get_ns();
	if (m.func == CP_FN_MREMAP) {
		/* the old range's death was reported at the entry: old_addr 0 */
		flags = cp_live_add(pid_tgid, addr, m.len, m.old.caller, m.old.stack_id, now,
				    CP_FN_MREMAP, CP_OBJ_EV_REMAP);
		cp_emit(CP_OBJ_EV_REMAP, CP_FN_MREMAP, flags, pid_tgid, addr, m.len, 0,
			m.old.caller, m.old.stack_id, now);
		return;
	}
	if (m.func == CP_FN_BRK) {
		if (addr <= m.addr)
			return; /* a query (brk(0)) or a shrink */
		m.len = addr - m.addr;
		addr = m.addr;
	}
	regs = (struct pt_regs *)bpf_task_pt_regs(bpf_get_current_task_btf());
	stack_id = cp_user_stack(BPF_CORE_READ(regs, ip), BPF_CORE_READ(regs, bp),
				 BPF_CORE_READ(regs, sp), alloc_stack_gen);
	flags = cp_live_add(pid_tgid, addr, m.len, m.caller, stack_id, now, m.func, CP_OBJ_EV_MAP);
	CP_INC(mappings);
	cp_emit(CP_OBJ_EV_MAP, m.func, flags, pid_tgid, addr, m.len, 0, m.caller, stack_id, now);
}

/* Syscall tracepoints: only these four calls pay. Need tracefs (user/live/alloc_probes.c). */
SEC("tracepoint/syscalls/sys_enter_mmap")
int on_mmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	cp_mmap_enter(ctx->args[1], ctx->args[3]);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_munmap")
int on_munmap_enter(struct trace_event_raw_sys_enter *ctx)
{
	cp_munmap_enter(ctx->args[0]);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_mremap")
int on_mremap_enter(struct trace_event_raw_sys_enter *ctx)
{
	cp_mremap_enter(ctx->args[0], ctx->args[2]);
	return 0;
}

SEC("tracepoint/syscalls/sys_enter_brk")
int on_brk_enter(struct trace_event_raw_sys_enter *ctx)
{
	cp_brk_enter();
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mmap")
int on_mmap_exit(struct trace_event_raw_sys_exit *ctx)
{
	cp_map_exit(ctx->ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_mremap")
int on_mremap_exit(struct trace_event_raw_sys_exit *ctx)
{
	cp_map_exit(ctx->ret);
	return 0;
}

SEC("tracepoint/syscalls/sys_exit_brk")
int on_brk_exit(struct trace_event_raw_sys_exit *ctx)
{
	cp_map_exit(ctx->ret);
	return 0;
}

/*
 * The same through the raw sys_enter/sys_exit tracepoints, for hosts without
 * tracefs mounted: every system call of the machine runs the id check.
 */
#define CP_NR_MMAP   9
#define CP_NR_MUNMAP 11
#define CP_NR_BRK    12
#define CP_NR_MREMAP 25

SEC("raw_tp/sys_enter")
int on_sys_enter(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	struct cp_cpu_cost *cost = cp_cpu_cost();
	__u64 t0 = bpf_ktime_get_ns();
	long id = ctx->args[1];

	/* every system call of the machine pays for this while it is attached */
	if (cost)
		cost->syscalls++;
	switch (id) {
	case CP_NR_MMAP:
		cp_mmap_enter(BPF_CORE_READ(regs, si), BPF_CORE_READ(regs, r10));
		break;
	case CP_NR_MUNMAP:
		cp_munmap_enter(BPF_CORE_READ(regs, di));
		break;
	case CP_NR_MREMAP:
		cp_mremap_enter(BPF_CORE_READ(regs, di), BPF_CORE_READ(regs, dx));
		break;
	case CP_NR_BRK:
		cp_brk_enter();
		break;
	}
	cp_sys_prog_timed(cost, t0);
	return 0;
}

SEC("raw_tp/sys_exit")
int on_sys_exit(struct bpf_raw_tracepoint_args *ctx)
{
	struct pt_regs *regs = (struct pt_regs *)ctx->args[0];
	__u64 t0 = bpf_ktime_get_ns();
	long id = BPF_CORE_READ(regs, orig_ax);

	if (id == CP_NR_MMAP || id == CP_NR_MREMAP || id == CP_NR_BRK)
		cp_map_exit(ctx->args[1]);
	cp_sys_prog_timed(cp_cpu_cost(), t0);
	return 0;
}

/*
 * `-- CMD`: attached (for the command's pid alone) to _dl_debug_state in
 * the dynamic loader, which the loader calls before it maps the program's
 * libraries and again once they are mapped, before any of their code runs.
 * It stops the command there (user space continues it once the allocator
 * the libraries bring, tcmalloc or jemalloc linked in, is probed), so the
 * probes see its first allocation, not the ones after its exec was read.
 * User space clears loader_stop_tgid before it lets the command go: a
 * dlopen() later calls the function again, and the link goes off the loop.
 */
__u32 loader_stop_tgid; /* the command while it is to stop so; 0: none */

SEC("uprobe")
int BPF_KPROBE(loader_stop)
{
	if (loader_stop_tgid && (__u32)(bpf_get_current_pid_tgid() >> 32) == loader_stop_tgid)
		bpf_send_signal(CP_SIGSTOP);
	return 0;
}
