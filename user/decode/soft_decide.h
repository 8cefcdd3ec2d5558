/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The no-PMU source's user-space decisions (--source soft), pure: what to
 * install for a decoded instruction, which are decoded now, the order pending
 * instructions are decoded in and how long a maps snapshot serves them, and the bounded registry of what
 * was installed, so a process that exec'd or exited can have its entries
 * removed without walking the BPF map. user/live/soft_source.c carries them out.
 */
#ifndef CP_SOFT_DECIDE_H
#define CP_SOFT_DECIDE_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "cacheperf/abi.h"
#include "cacheperf/soft_tick.h"

/* What user space did with the instructions on_tick queued (the report's figures). */
struct cp_soft_stats {
	__u64 taken;	   /* pending instructions taken from soft_pending to decode */
	__u64 descriptors; /* ... installed with a memory operand: their ticks are samples */
	__u64 skid;	   /* ... of them, charging the access before them (user/decode/skid.h) */
	__u64 markers;	   /* ... installed as "no computable memory operand": time only */
	__u64 gone;	   /* ... whose process was gone before they were decoded */
	__u64 drop_insns;  /* ... not installed: soft_insns (or the registry) is full */
	__u64 forgotten;   /* entries removed because their process exec'd or exited */
};
#define CP_SOFT_STATS_NR (sizeof(struct cp_soft_stats) / sizeof(__u64))

/* What to do with one pending instruction once it was looked up. */
enum cp_soft_action {
	CP_SOFT_INSTALL, /* install *out: a descriptor (status OK) or a marker */
	CP_SOFT_GONE,	 /* its process is gone: nothing to install */
};

/* The access before a ticked instruction that its ticks are charged to (skid). */
struct cp_soft_prev {
	struct cp_operand op; /* its operand, status CP_OPND_OK */
	__u64 ip;	      /* its address in the process */
	/* the ticked instruction has an access of its own, and its ticks are still
	 * the access's before it (user/decode/skid.h) */
	bool past_access;
};

/*
 * Decides for a pending instruction of address space @mm. @maps_ret is the
 * result of reading the process's maps (0, or a negative errno: the process
 * is gone), @get_ret that of cp_decode_cache__get() with @op (0, or -ENOENT:
 * no mapping holds the ip). A computable operand is installed as it is,
 * unless the access before it takes its ticks (@prev->past_access); an
 * instruction that accesses no memory itself
 * (cp_skid_applies()) gets a descriptor of the access before it when @prev
 * is one (the skid correction; NULL: none), else it is a marker with its
 * status, as is an operand not computable; an ip no mapping holds becomes a
 * CP_OPND_UNREADABLE marker, so it is not queued at every tick again. Fills
 * @out for CP_SOFT_INSTALL.
 */
enum cp_soft_action cp_soft_decide(int maps_ret, int get_ret, const struct cp_operand *op,
				   const struct cp_soft_prev *prev, __u64 mm,
				   struct cp_soft_insn *out);

/* One pending instruction as taken from soft_pending. */
struct cp_soft_item {
	struct cp_ip_key key;
	struct cp_soft_pending val;
};

/* Sorts @items by process, then ip: one maps snapshot serves a run of them. */
void cp_soft_items_sort(struct cp_soft_item *items, size_t n);

/*
 * A process's maps snapshot serves the ticks of the next seconds, not only
 * one batch: a service under -p queues a few new instructions a second, and
 * reading /proc/PID/maps for each batch was a tenth of the profiler's
 * steady CPU time. A descriptor installed from a snapshot lasts until the
 * process exec's or exits anyway (dlclose then dlopen at the same address
 * is not followed), so an older snapshot only widens that by this much.
 */
#define CP_SOFT_MAPS_MAX_AGE_NS 2000000000ull
/* Snapshots kept, of the processes whose instructions came last (-a: many). */
#define CP_SOFT_MAPS_KEPT 8

/*
 * Whether a snapshot read at @read_ns still serves an instruction at
 * @now_ns: @holds, a mapping of it holds the ip (else it was mapped since:
 * read again), and it is younger than CP_SOFT_MAPS_MAX_AGE_NS. Pure.
 */
bool cp_soft_maps_reuse(__u64 read_ns, __u64 now_ns, bool holds);

/*
 * Instructions ticked once and not decoded yet. Under -a a build's
 * compilers tick at a new instruction almost every time (7622 distinct
 * instructions in 7725 ticks of 20 s), and each new one cost its
 * function's symbolization and sweep, about 40 % of the profiler's CPU, for a
 * descriptor no later tick used: ticks before an instruction's descriptor
 * are time only anyway. So an instruction is decoded when it is taken a
 * second time (on_tick queues it again at its next tick), at most
 * CP_SOFT_SEEN_MAX_AGE_NS after its first. The first sightings are a
 * direct-mapped table of CP_SOFT_SEEN_SLOTS (16 bytes each, 1 MiB); a slot
 * another instruction holds, younger than that, is not taken from it: the
 * newcomer is decoded at once, as before, so no two instructions can keep
 * each other waiting.
 */
#define CP_SOFT_SEEN_SLOTS	65536
#define CP_SOFT_SEEN_MAX_AGE_NS 10000000000ull

struct cp_soft_seen_slot {
	__u64 tag; /* a hash of the key, never 0 */
	__u64 ns;  /* its first sighting; 0: a free slot */
};

/*
 * Whether the instruction @key, taken at @now_ns, is decoded now: true when
 * @slots (CP_SOFT_SEEN_SLOTS) hold its first sighting (the slot is freed)
 * or another instruction's younger than CP_SOFT_SEEN_MAX_AGE_NS; false when
 * this is its first sighting, now kept. Pure.
 */
bool cp_soft_seen_again(struct cp_soft_seen_slot *slots, const struct cp_ip_key *key, __u64 now_ns);

/*
 * The keys installed in soft_insns, at most @cap (its max_entries). Plain
 * array: removing a process's keys is a scan, done only at its exec or exit.
 */
struct cp_soft_registry {
	struct cp_ip_key *keys;
	size_t nr, cap;
};

/* 0, or -ENOMEM. */
int cp_soft_registry_init(struct cp_soft_registry *r, size_t cap);
void cp_soft_registry_free(struct cp_soft_registry *r);

/*
 * Notes @key as installed: 0, 1 when it was there already (an entry of an
 * older address space, replaced in place), or -ENOSPC when full.
 */
int cp_soft_registry_add(struct cp_soft_registry *r, const struct cp_ip_key *key);

/*
 * Moves the keys of process @tgid out of the registry into @out (room for
 * @cap; those that do not fit stay for the next call). Returns how many.
 */
size_t cp_soft_registry_take_tgid(struct cp_soft_registry *r, __u32 tgid, struct cp_ip_key *out,
				  size_t cap);

#endif /* CP_SOFT_DECIDE_H */
