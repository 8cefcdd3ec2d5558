// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Fix hints per issue class (the issue's "Fix hints per class"). */
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "classify/issue.h"

int cp_byte_run(__u64 mask, int from, int *last)
{
	int b = from;

	while (b < 64 && !(mask >> b & 1))
		b++;
	if (b >= 64)
		return -1;
	for (*last = b; *last + 1 < 64 && (mask >> (*last + 1) & 1); (*last)++)
		;
	return b;
}

int cp_byte_ranges(__u64 mask, __s64 base, char *buf, size_t sz)
{
	int n = 0, b, e;

	if (sz)
		buf[0] = '\0';
	if (!mask)
		return snprintf(buf, sz, "-");
	for (b = cp_byte_run(mask, 0, &e); b >= 0; b = cp_byte_run(mask, e + 1, &e))
		/* past the end: count what the full text needs, write nothing */
		n += snprintf((size_t)n < sz ? buf + n : NULL, (size_t)n < sz ? sz - (size_t)n : 0,
			      e > b ? "%s%lld-%lld" : "%s%lld", n ? "," : "", (long long)(b + base),
			      (long long)(e + base));
	return n;
}

/* Appends printf output to @buf of @sz holding @*len bytes; stops quietly when full. */
static void append(char *buf, size_t sz, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	if (*len >= sz)
		return;
	va_start(ap, fmt);
	n = vsnprintf(buf + *len, sz - *len, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len = *len + (size_t)n < sz ? *len + (size_t)n : sz - 1;
}

/*
 * Whether every byte the threads of @sh touched (and the line's other
 * part) lies in its object; @base the first byte's offset in it then, else 0.
 */
static bool object_offsets(const struct cp_issue_sharing *sh, __s64 *base)
{
	__u64 all = sh->other_part, first, last;
	bool in_object;

	for (__u32 i = 0; i < sh->nr_threads; i++)
		all |= sh->thr[i].read_mask | sh->thr[i].write_mask;
	first = all ? sh->line_addr + (__u64)__builtin_ctzll(all) : 0;
	last = all ? sh->line_addr + 63 - (__u64)__builtin_clzll(all) : 0;
	in_object = all && sh->object_size && first >= sh->object_start &&
		    last - sh->object_start < sh->object_size;
	*base = in_object ? (__s64)(sh->line_addr - sh->object_start) : 0;
	return in_object;
}

/*
 * "thread 11 wrote 0-7; thread 12 wrote 8-15, read 0-3" over the sharing
 * evidence (with @procs, "thread 11 of process 11"): offsets in the object
 * when every byte the threads touched lies in it, else (several small
 * objects on the line) bytes of the line.
 */
static void thread_offsets(const struct cp_issue_sharing *sh, bool procs, char *buf, size_t sz,
			   size_t *len)
{
	__s64 base;
	bool in_object = object_offsets(sh, &base);
	char w[128], r[128];

	append(buf, sz, len,
	       in_object ? " Offsets in the %llu-byte object: " : " Bytes of the line: ",
	       (unsigned long long)sh->object_size);
	for (__u32 i = 0; i < sh->nr_threads; i++) {
		const struct cp_issue_thread *t = &sh->thr[i];

		cp_byte_ranges(t->write_mask, base, w, sizeof(w));
		cp_byte_ranges(t->read_mask, base, r, sizeof(r));
		append(buf, sz, len, "%sthread %u", i ? "; " : "", t->tid);
		if (procs)
			append(buf, sz, len, " of process %u", t->pid);
		if (t->write_mask)
			append(buf, sz, len, " wrote %s", w);
		if (t->read_mask)
			append(buf, sz, len, "%s read %s", t->write_mask ? "," : "", r);
	}
	append(buf, sz, len, ".");
}

/* Whether the heap objects of @is were seen allocated (their threads are known). */
static bool alloc_threads_seen(const struct cp_issue *is)
{
	for (__u32 i = 0; i < is->nr_objects; i++)
		if (is->objects[i].kind == CP_OBJ_HEAP && !is->objects[i].nr_tids)
			return false;
	return true;
}

/* "offsets 0-7" in the object or "bytes 0-7" of the line: the other part's, as thread_offsets(). */
static const char *other_part(const struct cp_issue_sharing *sh, char *buf, size_t sz)
{
	__s64 base;
	const char *where = object_offsets(sh, &base) ? "offsets " : "bytes ";
	size_t n = strlen(where);

	snprintf(buf, sz, "%s", where);
	if (n < sz)
		cp_byte_ranges(sh->other_part, base, buf + n, sz - n);
	return buf;
}

void cp_issue_hint(struct cp_issue *is, const struct cp_cache_level *l1)
{
	char other[128];
	__u32 pids[CP_ISSUE_MAX_PIDS];
	bool procs = cp_issue_pids(is, pids) > 1;
	char *h = is->hint;
	size_t sz = sizeof(is->hint), len = 0;
	unsigned int line = l1 ? l1->line_bytes : 64;
	unsigned long long stride = l1 ? (unsigned long long)l1->sets * l1->line_bytes : 4096;

	h[0] = '\0';
	switch (is->type) {
	case CP_ISSUE_FALSE_SHARING:
		if (procs && !is->sharing.other_part && is->origin != CP_ORIGIN_ALLOCATOR)
			append(h, sz, &len,
			       "Processes write different bytes of one %u-byte line "
			       "of memory they map shared: in the layout they share, give each "
			       "process's data a line of its own (pad or align each one's part to "
			       "%u bytes).",
			       line, line);
		else if (is->sharing.other_part && is->origin != CP_ORIGIN_ALLOCATOR)
			append(h, sz, &len,
			       "Beside the bytes the threads share (%s: true "
			       "sharing, reported apart), threads use bytes of their own on this "
			       "%u-byte line: move each thread's fields to a line of their own, "
			       "away "
			       "from the shared ones (pad or align them to %u bytes).",
			       other_part(&is->sharing, other, sizeof(other)), line, line);
		else if (is->origin == CP_ORIGIN_ALLOCATOR)
			append(h, sz, &len,
			       "Objects %s by different threads share a %u-byte "
			       "line: align these allocations to %u bytes (posix_memalign, or "
			       "round "
			       "the size up to a multiple of %u) or give each thread its own arena "
			       "or allocator.",
			       alloc_threads_seen(is) ? "allocated" : "each used", line, line,
			       line);
		else if (is->sharing.object_size)
			append(h, sz, &len,
			       "Threads write different bytes of one %u-byte line: "
			       "pad or align the object (%llu bytes) or the fields each thread "
			       "writes to %u bytes, e.g. __attribute__((aligned(%u))).",
			       line, (unsigned long long)is->sharing.object_size, line, line);
		else
			append(h, sz, &len,
			       "Threads write different bytes of one %u-byte line: "
			       "pad or align the data each thread writes to %u bytes.",
			       line, line);
		if (is->sharing.other_part && is->origin == CP_ORIGIN_ALLOCATOR)
			append(h, sz, &len,
			       " The bytes the threads share (%s) are true "
			       "sharing, reported apart.",
			       other_part(&is->sharing, other, sizeof(other)));
		thread_offsets(&is->sharing, procs, h, sz, &len);
		break;
	case CP_ISSUE_TRUE_SHARING:
		if (procs)
			append(h, sz, &len,
			       "Processes read and write the same bytes of memory "
			       "they map shared: padding cannot help; update per-process copies "
			       "and "
			       "combine them once, or write less often.");
		else
			append(h, sz, &len,
			       "Threads read and write the same bytes: padding "
			       "cannot help; update per-thread copies and combine them once, or "
			       "write less often.");
		if (is->sharing.other_part)
			append(h, sz, &len,
			       " The line's other bytes (%s) are false sharing, "
			       "reported apart: padding fixes that part.",
			       other_part(&is->sharing, other, sizeof(other)));
		thread_offsets(&is->sharing, procs, h, sz, &len);
		break;
	case CP_ISSUE_CONFLICT:
		if (is->origin == CP_ORIGIN_ALLOCATOR)
			append(h, sz, &len,
			       "The allocator placed these heap objects so that %u "
			       "of their lines map to L1 set %u (%u ways): change the sizes or "
			       "the alignment of those allocations (avoid multiples of %llu "
			       "bytes), "
			       "or use another allocator.",
			       is->conflict.distinct_lines, is->conflict.set, is->conflict.ways,
			       stride);
		else
			append(h, sz, &len,
			       "%u distinct lines map to L1 set %u (%u ways): pad "
			       "the leading dimension so the row stride in lines is odd (add %u "
			       "bytes per row when rows are a multiple of %llu bytes), or stagger "
			       "the start addresses of the arrays.",
			       is->conflict.distinct_lines, is->conflict.set, is->conflict.ways,
			       line, stride);
		break;
	case CP_ISSUE_CAPACITY:
		append(h, sz, &len,
		       "The data these lines walk does not fit in the cache: fuse "
		       "loops over the same data, tile (block) the loops, or regroup arrays "
		       "used together into one array of structures.");
		break;
	case CP_ISSUE_CAPACITY_OR_CONFLICT:
	default:
		append(h, sz, &len,
		       "Access pattern pending (no breakpoint history yet): if "
		       "these lines stride by a multiple of %llu bytes it is a conflict (pad the "
		       "stride to an odd number of lines); otherwise capacity (fuse, tile, "
		       "regroup).",
		       stride);
		break;
	}
}
