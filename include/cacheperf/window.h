/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The miss-ratio window (CachePerf paper §3.2, "Miss Ratio Checker"), shared
 * by the BPF programs and the unit tests.
 *
 * Per CPU and access kind the window holds the last N sampled accesses. While
 * the misses among them exceed the threshold ratio, every miss in the window
 * not forwarded yet goes to user space; below it, misses are only counted,
 * and those that leave the window unforwarded are "filtered": compulsory and
 * sporadic misses never reach the classifier.
 *
 * Decisions, each one a choice:
 *  - The ratio's denominator is always N, even before N samples arrived: an
 *    empty slot counts as a hit. A fresh window so needs the same evidence
 *    (more than ratio * N misses) as a full one, so the first compulsory miss
 *    of a process is not forwarded on its own, yet nothing waits for the
 *    window to fill (a short-lived process still gets its misses through).
 *  - "Exceeds" is strict: misses * 10^6 > ratio_ppm * N. Ratio 0 forwards
 *    every miss, as the paper's 0 % setting.
 *  - Samples whose level is not available take a slot (they are accesses)
 *    but are never misses and never forwarded.
 *  - The misses not yet forwarded are always the newest ones (everything
 *    older was forwarded when the ratio last exceeded the threshold), so one
 *    sequence number, fwd_seq, marks them: no per-entry state, no scan to
 *    find them, and only a push that adds a miss can start forwarding.
 */
#ifndef CACHEPERF_WINDOW_H
#define CACHEPERF_WINDOW_H

#include "cacheperf/abi.h"

/*
 * One sampled access. Only misses carry the payload a struct cp_sample is
 * built from later; for hits and NA samples only flags is written.
 */
struct cp_window_entry {
	__u64 ip;
	__u64 addr;
	__u64 data_src;
	__u64 time_ns;
	__u32 tgid;
	__u32 tid;
	__u32 weight;
	__u32 flags; /* CP_SAMPLE_*: CP_SAMPLE_MISS marks a miss */
};
_Static_assert(sizeof(struct cp_window_entry) == 48, "struct cp_window_entry is ABI");

struct cp_window {
	__u64 seq;     /* samples pushed since the window was set up */
	__u64 fwd_seq; /* misses pushed before this one were forwarded */
	__u32 size;    /* N, 1..CP_WINDOW_MAX; 0 until the first push */
	__u32 head;    /* slot of the next push, seq % size */
	__u32 misses;  /* misses among the entries in the window */
	__u32 pending; /* of those, not forwarded: pushed at or after fwd_seq */
	struct cp_window_entry e[CP_WINDOW_MAX];
};
/* BPF keeps one per CPU and kind in an array map; the value must stay < 32 KiB */
_Static_assert(sizeof(struct cp_window) == 32 + 48 * CP_WINDOW_MAX, "struct cp_window is ABI");
_Static_assert((CP_WINDOW_MAX & (CP_WINDOW_MAX - 1)) == 0, "slot masks need a power of two");

/* What a push decided. */
struct cp_window_verdict {
	__u32 slot;	/* the new sample's entry: fill its payload if it is a miss */
	__u32 fwd_from; /* first slot to scan for misses to forward */
	__u32 fwd_cnt;	/* misses to forward, scanning from fwd_from; 0: none */
	__u32 aged_out; /* 1 if a miss left the window unforwarded */
};

/* The window size actually used for a --window knob: 0 or too large means the maximum. */
CP_INLINE __u32 cp_window_size(__u32 knob)
{
	return knob == 0 || knob > CP_WINDOW_MAX ? CP_WINDOW_MAX : knob;
}

/* The slot after @slot in a window of @size entries. */
CP_INLINE __u32 cp_window_next(__u32 slot, __u32 size)
{
	return slot + 1 >= size ? 0 : slot + 1;
}

/* True when @misses in a window of @size exceed @ratio_ppm parts per million. */
CP_INLINE bool cp_window_above(__u32 misses, __u32 size, __u32 ratio_ppm)
{
	return (__u64)misses * 1000000 > (__u64)ratio_ppm * size;
}

/*
 * Pushes one sample with CP_SAMPLE_* @flags into @w, a window of @size_knob
 * entries (see cp_window_size) judged against @ratio_ppm, evicting the oldest
 * entry when full. A window whose size differs (a zeroed map value) starts
 * afresh. Fills @v: where the sample went, whether a miss aged out
 * unforwarded, and which misses to forward now. The caller writes a miss's
 * payload into e[v->slot] before it scans; the scan visits slots from
 * v->fwd_from with cp_window_next() and forwards the first v->fwd_cnt entries
 * that have CP_SAMPLE_MISS (the new sample may be one of them).
 */
CP_INLINE void cp_window_push(struct cp_window *w, __u32 size_knob, __u32 ratio_ppm, __u32 flags,
			      struct cp_window_verdict *v)
{
	__u32 size = cp_window_size(size_knob);
	struct cp_window_entry *e;
	__u64 first, filled;
	__u32 slot, back;

	if (w->size != size) {
		w->seq = 0;
		w->fwd_seq = 0;
		w->size = size;
		w->head = 0;
		w->misses = 0;
		w->pending = 0;
	}
	slot = w->head & (CP_WINDOW_MAX - 1);
	e = &w->e[slot];
	v->slot = slot;
	v->aged_out = 0;
	v->fwd_from = 0;
	v->fwd_cnt = 0;

	/* once full, the slot to write holds the oldest entry, pushed at seq - size */
	if (w->seq >= size && (e->flags & CP_SAMPLE_MISS)) {
		w->misses--;
		if (w->seq - size >= w->fwd_seq) {
			w->pending--;
			v->aged_out = 1;
		}
	}
	e->flags = flags;
	w->head = cp_window_next(slot, size);
	w->seq++;

	if (!(flags & CP_SAMPLE_MISS))
		return;
	w->misses++;
	w->pending++;
	if (!cp_window_above(w->misses, size, ratio_ppm))
		return;

	/* forward every entry pushed since fwd_seq that is still in the window */
	filled = w->seq < size ? w->seq : size;
	first = w->seq - filled;
	if (w->fwd_seq > first)
		first = w->fwd_seq;
	back = w->seq - first; /* 1..size entries, ending with the new one */
	v->fwd_from = w->head >= back ? w->head - back : w->head + size - back;
	v->fwd_cnt = w->pending;
	w->pending = 0;
	w->fwd_seq = w->seq;
}

#endif /* CACHEPERF_WINDOW_H */
