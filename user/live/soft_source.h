/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The no-PMU source, user side (--source soft): the per-CPU cpu-clock events
 * on_tick runs on, and the loop's part: take the instructions on_tick queued
 * in soft_pending, decode them (user/decode/decode_cache.h: the bytes of the
 * mapped file) and install a descriptor or a marker in soft_insns
 * (cacheperf/soft_tick.h). The decisions are in soft_decide.c; this file is
 * the libbpf and perf_event_open edge.
 */
#ifndef CP_SOFT_SOURCE_H
#define CP_SOFT_SOURCE_H

#include <stddef.h>
#include <linux/types.h>

#include "decode/soft_decide.h"

struct cacheperf;
struct bpf_program;
struct cp_cpuset;
struct cp_perf_events;
struct cp_symbolizer;

/*
 * Opens a PERF_COUNT_SW_CPU_CLOCK event at @freq_hz on every CPU of @cpus
 * (pid -1: the target filter in BPF picks the processes) with @prog
 * attached. Returns the number of CPUs opened, or a negative errno with @err set.
 */
int cp_soft_events_open(struct cp_perf_events *set, const struct cp_cpuset *cpus, __u32 freq_hz,
			struct bpf_program *prog, char *err, size_t err_sz);

struct cp_soft_source;

/*
 * The user side over @skel's soft_pending and soft_insns (loaded); NULL
 * with errno set. @sym (kept, not owned; NULL: no skid correction) gives
 * the bounds of the function an instruction without a memory operand is
 * in, so its ticks can be charged to the access before it (user/decode/skid.h).
 */
struct cp_soft_source *cp_soft_source__new(struct cacheperf *skel, struct cp_symbolizer *sym);
void cp_soft_source__free(struct cp_soft_source *s);

/* What its kept maps snapshots may hold, in bytes (cp_maps_kept_max_bytes()). */
void cp_soft_source__set_max_maps_bytes(struct cp_soft_source *s, __u64 max);

/*
 * Takes every pending instruction, decodes it and installs what
 * cp_soft_decide() says; failures are counted (cp_soft_source__stats()).
 * Returns the number installed.
 */
int cp_soft_source__tick(struct cp_soft_source *s);

/* Process @tgid exec'd or exited: its descriptors go (a new mm, or none). */
void cp_soft_source__forget(struct cp_soft_source *s, __u32 tgid);

void cp_soft_source__stats(const struct cp_soft_source *s, struct cp_soft_stats *out);

#endif /* CP_SOFT_SOURCE_H */
