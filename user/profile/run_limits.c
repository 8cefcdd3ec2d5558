// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --max-memory shrinks and the Limits figures (see run_limits.h). */
#include <malloc.h>
#include <stdio.h>

#include "profile/run_limits.h"
#include "symbols/parse_worker.h"
#include "util/log.h"

#define MiB(b) ((double)(b) / 1048576.0)

/* a long run over its limit sheds every few seconds: said once a period */
static struct cp_log_limit shrink_said = CP_LOG_LIMIT_INIT(CP_LOG_NOTICE, 1);

void cp_limits_tick(struct cp_limits_state *st, const struct cp_limits_stores *s, __u64 now_ns,
		    bool now)
{
	__u64 before;
	size_t dwfls, procs, copies;

	if (!st->guard.limit_bytes ||
	    (!cp_mem_guard_due(&st->guard, now_ns) &&
	     !(now && cp_mem_guard_urgent(&st->guard, now_ns))) ||
	    cp_self_mem_read(&st->mem))
		return;
	cp_mem_guard_peak(&st->guard, st->mem.peak_bytes);
	if (!cp_mem_guard_over(&st->guard, st->mem.bytes, now_ns))
		return;
	before = st->mem.bytes;
	dwfls = cp_symbolizer__shrink(s->sym);
	procs = cp_objects__shrink(s->objects);
	copies = cp_tf_kept_drop();
	/* the describe server's parsed files too: the next request starts one in the room left */
	cp_sym_server_stop();
	/* glibc keeps freed memory in its arenas: RSS falls only when it is returned */
	malloc_trim(0);
	st->shrunk_dwfls += dwfls;
	st->shrunk_processes += procs;
	st->shrunk_copies += copies;
	if (!cp_self_mem_scan(&st->mem))
		st->guard.bytes = st->mem.bytes;
	cp_log_limited(
		&shrink_said,
		"memory %.1f MiB (%s) over --max-memory %.0f MiB: dropped %zu symbolizer "
		"snapshots, %zu exited processes' objects and %zu kept file copies; now %.1f MiB",
		MiB(before), cp_self_mem_counter_name(st->mem.counter), MiB(st->guard.limit_bytes),
		dwfls, procs, copies, MiB(st->guard.bytes));
}

void cp_limits_fill(const struct cp_limits_state *st, const struct cp_limits_stores *s,
		    const struct cp_miss_store *misses, const struct cp_insn_store *insns,
		    struct cp_limits *out)
{
	struct cp_symbolizer_stats ss;
	struct cp_miss_store_stats ms;
	struct cp_objects_stats os;
	__u64 refused;

	cp_symbolizer__stats(s->sym, &ss);
	cp_miss_store__stats(misses, &ms);
	cp_objects__stats(s->objects, &os);
	*out = (struct cp_limits){
		.live = st->guard.limit_bytes != 0,
		.memory_counter = cp_self_mem_counter_name(st->mem.counter),
		.memory_bytes = st->guard.bytes,
		.peak_memory_bytes = st->guard.peak_bytes,
		.rss_bytes = st->mem.rss_bytes,
		.peak_rss_bytes = st->mem.hwm_bytes,
		.max_memory_bytes = st->guard.limit_bytes,
		.shrinks = st->guard.shrinks,
		.shrunk_dwfls = st->shrunk_dwfls,
		.shrunk_processes = st->shrunk_processes,
		.processes_evicted = os.evicted,
		.exited_dropped = os.exited_dropped,
		.objects_evicted = os.store.evicted,
		.lines_evicted = ms.evicted,
		.insns_dropped = cp_insn_store__dropped(insns),
		.dwfls_evicted = ss.evictions,
		.dwfls_copy_evicted = ss.copy_evictions,
		.snaps_byte_evicted = ss.snap_byte_evictions,
		.max_snap_bytes = cp_maps_kept_max_bytes(st->guard.limit_bytes),
		.maps_evicted = os.maps_evicted,
		.string_flushes = ss.string_flushes,
		.summaries_evicted = cp_proc_summaries__evicted(s->procs),
	};
	out->files_refused = cp_tf_refusals(out->files_refused_by);
	cp_tf_kept_stats(&out->copies);
	cp_parse_worker_stats(&out->parse_workers, &refused, &out->parse_waits);
	cp_sym_server_stats(&out->server);
}
