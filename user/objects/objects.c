// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "objects/allocator.h"
#include "objects/backoff_marks.h"
#include "objects/globals.h"
#include "objects/proc_maps.h"
#include "objects/objects.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/path.h"

struct thread_ptr {
	__u32 tid;
	__u64 tp;
};

struct proc {
	pid_t pid;
	__u64 last_use;
	struct cp_object_store *store;
	struct cp_callsites *callsites;
	struct cp_maps *maps; /* NULL when the last read failed */
	struct cp_globals *globals;
	__u64 maps_read_ns;
	__u64 maps_cost_ns;	 /* what the last snapshot's reads took (cp_maps_refresh_due()) */
	struct cp_range *stacks; /* the caller's ranges first, then detected ones */
	size_t nr_stacks, nr_user_stacks, stacks_cap;
	struct thread_ptr *tps;
	size_t nr_tps, tps_cap;
	struct cp_backoff_marks backoff; /* the guard's back-offs of this process */
	/* the allocator its maps show (cp_allocator_of_maps()), per snapshot; -1: not asked */
	__s8 allocator;
	bool glibc;
	/* gone, kept so its samples can still be classified at the report;
	 * evicted first, replaced when its pid comes back */
	bool exited;
};

/* pid -> proc: open addressing, linear probing, sized once for the cap at load <= 1/2. */
struct cp_objects {
	struct cp_objects_opts opts;
	struct proc **slots;
	size_t nr_slots;
	size_t nr;
	size_t nr_exited; /* of nr: kept only for the report */
	__u64 tick;
	struct cp_elf_cache *elf;
	struct cp_glibc_chunks *chunks;	     /* heaps walked (live runs only); NULL until then */
	struct cp_backoff_marks backoff_all; /* -a: back-offs of every process */
	struct cp_objects_stats st;	     /* store part: objects of processes already gone */
	__u64 max_maps_bytes;		     /* the snapshots' byte cap (maps_fit()) */
};

static size_t home(const struct cp_objects *o, pid_t pid)
{
	return cp_hash_slot(cp_hash64((__u32)pid), 32, o->nr_slots - 1);
}

static size_t probe(const struct cp_objects *o, pid_t pid)
{
	size_t i = home(o, pid);

	while (o->slots[i] && o->slots[i]->pid != pid)
		i = cp_probe_next(i, o->nr_slots - 1);
	return i;
}

struct cp_objects *cp_objects__new(const struct cp_objects_opts *opts)
{
	struct cp_objects *o = calloc(1, sizeof(*o));
	size_t n = 16;

	if (!o)
		return NULL;
	if (opts)
		o->opts = *opts;
	if (!o->opts.proc_root)
		o->opts.proc_root = "/proc";
	if (!o->opts.src)
		o->opts.src = &cp_proc_live;
	if (!o->opts.max_processes)
		o->opts.max_processes = CP_MAX_PROCESSES;
	if (!o->opts.max_exited)
		o->opts.max_exited = CP_MAX_EXITED_PROCESSES;
	if (!o->opts.maps_refresh_ns)
		o->opts.maps_refresh_ns = CP_MAPS_REFRESH_NS;
	o->max_maps_bytes = CP_MAX_MAPS_KEPT_BYTES;
	while (n < o->opts.max_processes * 2)
		n <<= 1;
	o->slots = calloc(n, sizeof(*o->slots));
	o->elf = cp_elf_cache__new(0);
	if (!o->slots || !o->elf) {
		cp_objects__free(o);
		return NULL;
	}
	o->nr_slots = n;
	return o;
}

static void add_store_stats(struct cp_object_store_stats *to, const struct cp_object_store_stats *s)
{
	to->live += s->live;
	to->inserted += s->inserted;
	to->removed += s->removed;
	to->evicted += s->evicted;
	to->replaced += s->replaced;
	to->lookup_hits += s->lookup_hits;
	to->lookup_misses += s->lookup_misses;
	to->unknown_frees += s->unknown_frees;
	to->nomem += s->nomem;
}

static void drop_view(struct cp_objects *o, struct proc *p)
{
	o->st.maps_bytes -= p->maps ? p->maps->bytes : 0;
	cp_globals__free(p->globals);
	cp_maps__free(p->maps);
	p->globals = NULL;
	p->maps = NULL;
}

/* Frees @p, keeping its counters (minus its live objects, which die with it). */
static void proc_free(struct cp_objects *o, struct proc *p)
{
	struct cp_object_store_stats s;

	if (p->store) {
		cp_object_store__stats(p->store, &s);
		s.live = 0;
		add_store_stats(&o->st.store, &s);
	}
	if (p->callsites) {
		o->st.callsites_dropped += cp_callsites__dropped(p->callsites);
		o->st.stacks_dropped += cp_callsites__frames_dropped(p->callsites);
	}
	drop_view(o, p);
	if (o->chunks)
		cp_glibc_chunks__forget(o->chunks, p->pid);
	cp_object_store__free(p->store);
	cp_callsites__free(p->callsites);
	free(p->stacks);
	free(p->tps);
	free(p);
}

void cp_objects__set_max_maps_bytes(struct cp_objects *o, __u64 max)
{
	o->max_maps_bytes = max;
}

void cp_objects__free(struct cp_objects *o)
{
	if (!o)
		return;
	for (size_t i = 0; o->slots && i < o->nr_slots; i++)
		if (o->slots[i])
			proc_free(o, o->slots[i]);
	free(o->slots);
	cp_elf_cache__free(o->elf);
	cp_glibc_chunks__free(o->chunks);
	free(o);
}

/* Removes slot @i, shifting back followers so probes stay unbroken. */
static void unlink_slot(struct cp_objects *o, size_t i)
{
	size_t mask = o->nr_slots - 1, j = i;

	for (;;) {
		size_t h;

		j = cp_probe_next(j, mask);
		if (!o->slots[j])
			break;
		h = home(o, o->slots[j]->pid);
		/* move unless h lies cyclically in (i, j] */
		if (!cp_probe_between(i, h, j)) {
			o->slots[i] = o->slots[j];
			i = j;
		}
	}
	o->slots[i] = NULL;
	o->nr--;
}

/*
 * The snapshots' bytes within their cap: the least recently used views
 * other than @keep's (just read) let go, live or exited, until they fit
 * or @keep's is alone.
 */
static void maps_fit(struct cp_objects *o, const struct proc *keep)
{
	while (o->st.maps_bytes > o->max_maps_bytes) {
		struct proc *lru = NULL;

		for (size_t i = 0; i < o->nr_slots; i++) {
			struct proc *p = o->slots[i];

			if (p && p != keep && p->maps && (!lru || p->last_use < lru->last_use))
				lru = p;
		}
		if (!lru)
			return;
		drop_view(o, lru);
		o->st.maps_evicted++;
	}
}

/*
 * A new snapshot of @p's maps, globals and thread stacks. @exec: the process
 * exec'd, and exec leaves one thread, whose stack is the [stack] mapping:
 * its task directory is not read (two opens and a read an exec, under -a a
 * hundred a second). The threads it starts are found at a later snapshot,
 * as those started after any snapshot are; a thread started in the
 * milliseconds before its exec record is handled is too, while its stack
 * reads as anonymous memory until then.
 */
static int take_snapshot(struct cp_objects *o, struct proc *p, bool exec)
{
	struct cp_range *found;
	__u64 t;
	int err, n;

	drop_view(o, p);
	p->allocator = -1;
	p->nr_stacks = p->nr_user_stacks;
	p->maps_read_ns = cp_now_ns();
	o->st.maps_reads++;
	err = o->opts.src->maps(o->opts.src->ctx, o->opts.proc_root, p->pid, &p->maps);
	/* what the maps took, and the thread walk: the globals' ELF files are read once */
	p->maps_cost_ns = cp_now_ns() - p->maps_read_ns;
	if (err) {
		o->st.maps_errors++;
		return err;
	}
	o->st.maps_bytes += p->maps->bytes;
	maps_fit(o, p);
	err = cp_globals__load(o->elf, p->maps, o->opts.proc_root, p->pid, o->opts.path_map,
			       &p->globals);
	if (err)
		return err;
	if (exec)
		return 0;
	found = malloc(CP_MAX_THREAD_STACKS * sizeof(*found));
	if (!found)
		return -ENOMEM;
	t = cp_now_ns();
	n = o->opts.src->thread_stacks(o->opts.src->ctx, o->opts.proc_root, p->pid, p->maps, found,
				       CP_MAX_THREAD_STACKS);
	p->maps_cost_ns += cp_now_ns() - t;
	if (n > 0 && p->nr_stacks + (size_t)n > p->stacks_cap) {
		size_t cap = p->nr_stacks + (size_t)n;
		struct cp_range *s = realloc(p->stacks, cap * sizeof(*s));

		if (!s) {
			free(found);
			return -ENOMEM;
		}
		p->stacks = s;
		p->stacks_cap = cap;
	}
	if (n > 0) {
		memcpy(&p->stacks[p->nr_stacks], found, (size_t)n * sizeof(*found));
		p->nr_stacks += (size_t)n;
	}
	free(found);
	return 0;
}

/* Whether @p's snapshot may be taken again now (cp_maps_may_refresh()). */
static bool refresh_due(const struct cp_objects *o, const struct proc *p)
{
	return !p->exited && cp_maps_may_refresh(p->maps ? &p->maps->how : NULL, p->maps_read_ns,
						 p->maps_cost_ns, o->opts.maps_refresh_ns);
}

static struct proc *find_proc(const struct cp_objects *o, pid_t pid)
{
	return o->slots[probe(o, pid)];
}

/* True when @a should be evicted before @b: exited ones first, then the least recently used. */
static bool evict_before(const struct proc *a, const struct proc *b)
{
	if (a->exited != b->exited)
		return a->exited;
	return a->last_use < b->last_use;
}

static void drop_slot(struct cp_objects *o, size_t i)
{
	o->nr_exited -= o->slots[i]->exited;
	proc_free(o, o->slots[i]);
	unlink_slot(o, i);
}

static void evict_lru(struct cp_objects *o)
{
	size_t lru = o->nr_slots;

	for (size_t i = 0; i < o->nr_slots; i++)
		if (o->slots[i] && (lru == o->nr_slots || evict_before(o->slots[i], o->slots[lru])))
			lru = i;
	if (lru == o->nr_slots)
		return;
	/* an exited process was counted when it exited */
	if (!o->slots[lru]->exited)
		o->st.evicted++;
	drop_slot(o, lru);
}

struct exited_ref {
	__u64 last_use;
	pid_t pid;
};

static int by_last_use(const void *a, const void *b)
{
	const struct exited_ref *x = a, *y = b;

	return x->last_use < y->last_use ? -1 : x->last_use > y->last_use;
}

/*
 * Exited processes beyond opts.max_exited: the least recently used go, down
 * to three quarters of the cap at once. One walk of every slot for each
 * exit was 4 % of the profiler's time under -a beside short processes; a
 * batch is one walk for a quarter of the cap's exits. Without memory for
 * the batch, one at a time.
 */
static void trim_exited(struct cp_objects *o)
{
	size_t keep = o->opts.max_exited - o->opts.max_exited / 4, n = 0;
	struct exited_ref *v;

	if (o->nr_exited <= o->opts.max_exited)
		return;
	v = malloc(o->nr_exited * sizeof(*v));
	if (!v)
		keep = o->opts.max_exited;
	for (size_t i = 0; v && i < o->nr_slots; i++)
		if (o->slots[i] && o->slots[i]->exited)
			v[n++] = (struct exited_ref){o->slots[i]->last_use, o->slots[i]->pid};
	if (v)
		qsort(v, n, sizeof(*v), by_last_use);
	for (size_t k = 0; v && k < n && o->nr_exited > keep; k++) {
		o->st.exited_dropped++;
		drop_slot(o, probe(o, v[k].pid));
	}
	free(v);
	while (o->nr_exited > keep) {
		size_t lru = o->nr_slots;

		for (size_t i = 0; i < o->nr_slots; i++)
			if (o->slots[i] && o->slots[i]->exited &&
			    (lru == o->nr_slots || evict_before(o->slots[i], o->slots[lru])))
				lru = i;
		if (lru == o->nr_slots)
			return;
		o->st.exited_dropped++;
		drop_slot(o, lru);
	}
}

static struct proc *new_proc(struct cp_objects *o, pid_t pid, bool exec);

/* The state of @pid, created (with a first snapshot) if new. NULL: no memory. */
static struct proc *get_proc(struct cp_objects *o, pid_t pid)
{
	struct proc *p = find_proc(o, pid);

	if (p) {
		p->last_use = ++o->tick;
		return p;
	}
	return new_proc(o, pid, false);
}

/*
 * The state of the live process @pid: as get_proc(), but an exited
 * process's state is dropped first, its pid being someone else's now.
 */
static struct proc *live_proc(struct cp_objects *o, pid_t pid)
{
	size_t i = probe(o, pid);

	if (o->slots[i] && o->slots[i]->exited)
		drop_slot(o, i);
	return get_proc(o, pid);
}

/* A new state of @pid, with its first snapshot (@exec: take_snapshot()). */
static struct proc *new_proc(struct cp_objects *o, pid_t pid, bool exec)
{
	struct proc *p;

	if (o->nr >= o->opts.max_processes)
		evict_lru(o);
	p = calloc(1, sizeof(*p));
	if (!p)
		return NULL;
	p->pid = pid;
	p->last_use = ++o->tick;
	p->allocator = -1;
	p->store = cp_object_store__new(o->opts.max_objects);
	p->callsites = cp_callsites__new(o->opts.max_callsites);
	if (!p->store || !p->callsites) {
		proc_free(o, p);
		return NULL;
	}
	/* snapshot now: a short-lived process may be gone when its samples are classified */
	take_snapshot(o, p, exec);
	o->slots[probe(o, pid)] = p;
	o->nr++;
	return p;
}

int cp_objects__on_alloc(struct cp_objects *o, pid_t pid, const struct cp_object *obj)
{
	struct proc *p = live_proc(o, pid);

	return p ? cp_object_store__add(p->store, obj) : -ENOMEM;
}

int cp_objects__on_free(struct cp_objects *o, pid_t pid, __u64 start)
{
	struct proc *p = live_proc(o, pid);

	return p ? cp_object_store__remove(p->store, start, NULL) : -ENOMEM;
}

int cp_objects__on_realloc(struct cp_objects *o, pid_t pid, __u64 old_start,
			   const struct cp_object *obj)
{
	struct proc *p = live_proc(o, pid);

	return p ? cp_object_store__realloc(p->store, old_start, obj) : -ENOMEM;
}

int cp_objects__on_exec(struct cp_objects *o, pid_t pid)
{
	struct proc *p = find_proc(o, pid);
	struct cp_callsites *cs;

	o->st.execs++;
	if (!p || p->exited) {
		/* an exited one's pid is the new process's now */
		if (p)
			drop_slot(o, probe(o, pid));
		return new_proc(o, pid, true) ? 0 : -ENOMEM;
	}
	p->last_use = ++o->tick;
	cs = cp_callsites__new(o->opts.max_callsites);
	if (!cs)
		return -ENOMEM;
	o->st.callsites_dropped += cp_callsites__dropped(p->callsites);
	o->st.stacks_dropped += cp_callsites__frames_dropped(p->callsites);
	cp_callsites__free(p->callsites);
	p->callsites = cs;
	cp_object_store__clear(p->store);
	if (o->chunks)
		cp_glibc_chunks__forget(o->chunks, pid);
	cp_backoff_marks_on_exec(&p->backoff);
	p->nr_tps = 0;
	p->nr_user_stacks = 0;
	return take_snapshot(o, p, true);
}

int cp_objects__on_guard(struct cp_objects *o, pid_t pid, bool backed_off, __u64 now_ns)
{
	struct proc *p;

	if (pid < 0) {
		cp_backoff_marks_on_guard(&o->backoff_all, backed_off, now_ns);
		return 0;
	}
	p = live_proc(o, pid);
	if (!p)
		return -ENOMEM;
	cp_backoff_marks_on_guard(&p->backoff, backed_off, now_ns);
	return 0;
}

void cp_objects__on_exit(struct cp_objects *o, pid_t pid)
{
	struct proc *p = find_proc(o, pid);

	if (!p || p->exited)
		return;
	o->st.exits++;
	p->exited = true;
	o->nr_exited++;
	if (o->chunks)
		cp_glibc_chunks__forget(o->chunks, pid);
	trim_exited(o);
}

size_t cp_objects__shrink(struct cp_objects *o)
{
	size_t dropped = 0;

	for (size_t i = 0; i < o->nr_slots;) {
		if (o->slots[i] && o->slots[i]->exited) {
			/* a later entry of the probe chain may move into slot i: look again */
			drop_slot(o, i);
			dropped++;
			continue;
		}
		i++;
	}
	return dropped;
}

__u64 cp_objects__callsite(struct cp_objects *o, pid_t pid, __u64 caller, __s64 stack_id)
{
	struct proc *p = live_proc(o, pid);

	return p ? cp_callsites__intern(p->callsites, caller, stack_id) : 0;
}

bool cp_objects__callsite_unread(struct cp_objects *o, pid_t pid, __u64 caller, __s64 stack_id)
{
	struct proc *p = stack_id >= 0 ? live_proc(o, pid) : NULL;
	const struct cp_callsite *cs;

	if (!p)
		return false;
	cs = cp_callsites__get(p->callsites, cp_callsites__find(p->callsites, caller, stack_id));
	/* once per call site: the stack map's entry of a stack id never changes */
	return cs ? !cs->stack_read : cp_callsites__has_room(p->callsites);
}

void cp_objects__callsite_frames(struct cp_objects *o, pid_t pid, __u64 caller, __s64 stack_id,
				 const __u64 *ips, size_t n)
{
	struct proc *p = live_proc(o, pid);
	__u64 id = p ? cp_callsites__intern(p->callsites, caller, stack_id) : 0;

	if (id)
		cp_callsites__set_stack(p->callsites, id, ips, n);
}

const __u64 *cp_objects__callsite_stack(struct cp_objects *o, pid_t pid, __u64 id, size_t *n)
{
	struct proc *p = find_proc(o, pid);

	*n = 0;
	return p ? cp_callsites__frames(p->callsites, id, n) : NULL;
}

const struct cp_callsite *cp_objects__callsite_get(struct cp_objects *o, pid_t pid, __u64 id)
{
	struct proc *p = find_proc(o, pid);

	return p ? cp_callsites__get(p->callsites, id) : NULL;
}

int cp_objects__set_thread_pointer(struct cp_objects *o, pid_t pid, __u32 tid, __u64 tp)
{
	struct proc *p = live_proc(o, pid);
	size_t i;

	if (!p)
		return -ENOMEM;
	for (i = 0; i < p->nr_tps && p->tps[i].tid != tid; i++)
		;
	if (!tp) {
		if (i < p->nr_tps)
			p->tps[i] = p->tps[--p->nr_tps];
		return 0;
	}
	if (i == p->nr_tps) {
		if (p->nr_tps == CP_MAX_THREAD_POINTERS) {
			o->st.tp_dropped++;
			return -ENOSPC;
		}
		if (p->nr_tps == p->tps_cap) {
			size_t cap = p->tps_cap ? p->tps_cap * 2 : 8;
			struct thread_ptr *t = realloc(p->tps, cap * sizeof(*t));

			if (!t)
				return -ENOMEM;
			p->tps = t;
			p->tps_cap = cap;
		}
		p->nr_tps++;
	}
	p->tps[i].tid = tid;
	p->tps[i].tp = tp;
	return 0;
}

int cp_objects__add_thread_stack(struct cp_objects *o, pid_t pid, __u64 start, __u64 end)
{
	struct proc *p = live_proc(o, pid);

	if (!p)
		return -ENOMEM;
	if (p->nr_stacks == p->stacks_cap) {
		size_t cap = p->stacks_cap ? p->stacks_cap * 2 : 8;
		struct cp_range *s = realloc(p->stacks, cap * sizeof(*s));

		if (!s)
			return -ENOMEM;
		p->stacks = s;
		p->stacks_cap = cap;
	}
	/* the caller's ranges stay in front of the detected ones, which a refresh rebuilds */
	memmove(&p->stacks[p->nr_user_stacks + 1], &p->stacks[p->nr_user_stacks],
		(p->nr_stacks - p->nr_user_stacks) * sizeof(*p->stacks));
	p->stacks[p->nr_user_stacks].start = start;
	p->stacks[p->nr_user_stacks].end = end;
	p->nr_user_stacks++;
	p->nr_stacks++;
	return 0;
}

int cp_objects__refresh(struct cp_objects *o, pid_t pid)
{
	struct proc *p = find_proc(o, pid);

	if (!p || p->exited)
		return live_proc(o, pid) ? 0 : -ENOMEM;
	return take_snapshot(o, p, false);
}

bool cp_objects__tracked(const struct cp_objects *o, pid_t pid)
{
	const struct proc *p = find_proc(o, pid);

	return p && !p->exited;
}

/* Per resolved sample: no printf machinery (it was a tenth of a replay's time). */
static void copy_str(char *dst, size_t sz, const char *src)
{
	size_t n = src ? strnlen(src, sz - 1) : 0;

	memcpy(dst, src ? src : "", n);
	dst[n] = '\0';
}

static void fill_from_global(struct cp_resolved *out, const struct cp_global_hit *h)
{
	out->kind = h->kind;
	out->start = h->start;
	out->size = h->sym->size;
	out->offset = h->offset;
	copy_str(out->name, sizeof(out->name), h->sym->name);
	copy_str(out->path, sizeof(out->path), h->mod->path);
}

/* The allocator @p's maps show, asked once per snapshot (cp_allocator_of_maps()). */
static enum cp_allocator_kind proc_allocator(struct proc *p, bool *glibc)
{
	if (p->allocator < 0)
		p->allocator = (__s8)cp_allocator_of_maps(p->maps, &p->glibc);
	*glibc = p->glibc;
	return (enum cp_allocator_kind)p->allocator;
}

/* Globals, thread-locals, then the mapping. -ENOENT: unmapped. */
static int resolve_view(struct proc *p, __u64 addr, struct cp_resolved *out)
{
	struct cp_global_hit h;
	struct cp_map_class c;
	int err;

	if (!cp_globals_find(p->globals, addr, &h)) {
		fill_from_global(out, &h);
		return 0;
	}
	for (size_t i = 0; i < p->nr_tps; i++) {
		if (!cp_globals_tls_find(p->globals, p->tps[i].tp, addr, &h)) {
			fill_from_global(out, &h);
			return 0;
		}
	}
	err = cp_maps_classify(p->maps, addr, p->stacks, p->nr_stacks, &c);
	out->kind = c.kind;
	out->before_attach = c.before_attach;
	if (c.before_attach) {
		bool glibc;

		out->allocator = (__u8)proc_allocator(p, &glibc);
	}
	if (c.map) {
		out->start = c.map->start;
		out->size = c.map->end - c.map->start;
		out->offset = addr - c.map->start;
		copy_str(out->path, sizeof(out->path), c.map->path);
	}
	if (c.map && c.map->kind == CP_MAP_FILE) {
		out->offset = c.file_offset;
		copy_str(out->name, sizeof(out->name), cp_base_name(c.label));
	} else {
		copy_str(out->name, sizeof(out->name), c.label);
	}
	return err;
}

void cp_objects__hint(struct cp_objects *o, pid_t pid, __u64 addr, int stage)
{
	struct proc *p = find_proc(o, pid);

	if (p)
		cp_object_store__hint(p->store, addr, stage);
}

int cp_objects__resolve(struct cp_objects *o, pid_t pid, __u64 addr, struct cp_resolved *out)
{
	struct proc *p = get_proc(o, pid);
	const struct cp_object *obj;
	int err;

	memset(out, 0, sizeof(*out));
	if (!p)
		return -ENOMEM;
	obj = cp_object_store__find(p->store, addr);
	if (obj) {
		/* the mapping is looked up only for the kind that names it */
		const struct cp_map *map =
			obj->kind == CP_OBJ_MAPPING ? cp_maps__find(p->maps, addr) : NULL;

		out->kind = obj->kind;
		out->flags = obj->flags;
		out->tid = obj->tid;
		/* an object that took its site's id before the frames made it another name */
		out->callsite = cp_callsites__canonical(p->callsites, obj->callsite);
		out->start = obj->start;
		out->size = obj->size;
		out->offset = addr - obj->start;
		copy_str(out->name, sizeof(out->name), cp_object_kind_name(obj->kind));
		/* an mmap of a file: say which */
		if (map && map->kind == CP_MAP_FILE)
			copy_str(out->path, sizeof(out->path), map->path);
		/* its free may have gone unseen, its memory reused by an unseen object */
		if (cp_backoff_marks_doubt(&p->backoff, obj->alloc_ns) ||
		    cp_backoff_marks_doubt(&o->backoff_all, obj->alloc_ns)) {
			out->flags |= CP_OBJ_F_GUARD_BACKOFF;
			o->st.backoff_doubtful++;
		}
		o->st.resolved[obj->kind < CP_OBJ_KIND_NR ? obj->kind : CP_OBJ_UNKNOWN]++;
		return 0;
	}
	err = resolve_view(p, addr, out);
	/* unmapped in our snapshot: maybe mapped since (dlopen, mmap, new thread) */
	if (err == -ENOENT && refresh_due(o, p)) {
		take_snapshot(o, p, false);
		memset(out, 0, sizeof(*out));
		err = resolve_view(p, addr, out);
	}
	/* no allocation seen: maybe made while the probes were backed off */
	if (out->before_attach && (p->backoff.unseen || o->backoff_all.unseen)) {
		out->backoff = true;
		o->st.backoff_unseen++;
	}
	if (err == -ENOENT)
		o->st.unmapped++;
	o->st.resolved[out->kind]++;
	return err;
}

/*
 * A shared mapping of a file by its path: "anon_inode:[perf_event]" and
 * the like share one inode among unrelated processes' private buffers.
 */
static bool shared_file(const struct cp_map *m)
{
	return m && m->shared && m->kind == CP_MAP_FILE && m->inode && m->path && m->path[0] == '/';
}

/*
 * Whether the tracked object at @addr, if any, cannot lie in @m: one the
 * probes saw allocated after the snapshot, where the file was unmapped.
 */
static bool snapshot_older(const struct proc *p, const struct cp_map *m, __u64 addr)
{
	const struct cp_object *obj = cp_object_store__find(p->store, addr);

	return obj && (obj->kind != CP_OBJ_MAPPING || obj->start < m->start ||
		       obj->start + obj->size > m->end);
}

const struct cp_map *cp_objects__shared_map(struct cp_objects *o, pid_t pid, __u64 addr)
{
	struct proc *p = get_proc(o, pid);
	const struct cp_object *obj;
	const struct cp_map *m;

	if (!p)
		return NULL;
	m = cp_maps__find(p->maps, addr);
	if (m && !(shared_file(m) && snapshot_older(p, m, addr)))
		return shared_file(m) ? m : NULL;
	/* not mapped in the snapshot, or a shared file a tracked object says is gone */
	if (!refresh_due(o, p))
		return NULL;
	/* a heap object the probes saw is the process's own (a fresh mmap'd chunk) */
	obj = m ? NULL : cp_object_store__find(p->store, addr);
	if (obj && obj->kind != CP_OBJ_MAPPING)
		return NULL;
	take_snapshot(o, p, false);
	m = cp_maps__find(p->maps, addr);
	return shared_file(m) ? m : NULL;
}

/* glibc_chunks' read callback: the target's memory through opts.read_mem. */
struct mem_ctx {
	const struct cp_objects *o;
	pid_t pid;
};

static ssize_t read_target(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct mem_ctx *m = ctx;

	return m->o->opts.read_mem(m->o->opts.read_mem_ctx, m->pid, addr, buf, len);
}

int cp_objects__chunk_event(struct cp_objects *o, pid_t pid, __u64 addr, __u64 time_ns,
			    struct cp_object_event *ev)
{
	const __u8 rw = CP_MAP_READ | CP_MAP_WRITE;
	struct proc *p = find_proc(o, pid);
	struct mem_ctx mc = {o, pid};
	const struct cp_map *m;
	struct cp_chunk ch;
	bool glibc;

	if (!o->opts.read_mem)
		return -EOPNOTSUPP;
	if (!p || p->exited)
		return -ENOENT;
	m = cp_maps__find(p->maps, addr);
	if (!m || (m->kind != CP_MAP_HEAP && m->kind != CP_MAP_ANON) || (m->prot & rw) != rw)
		return -ENOENT;
	if (proc_allocator(p, &glibc) != CP_ALLOCATOR_LIBC || !glibc)
		return -EOPNOTSUPP;
	if (!o->chunks && !(o->chunks = cp_glibc_chunks__new(NULL)))
		return -ENOMEM;
	if (cp_glibc_chunks__find(o->chunks, pid, m->start, m->end,
				  m->kind == CP_MAP_HEAP ? CP_CHUNK_MAP_BRK : CP_CHUNK_MAP_ANON,
				  addr, cp_now_ns(), read_target, &mc, &ch) != CP_CHUNK_IN_USE)
		return -ENOENT;
	memset(ev, 0, sizeof(*ev));
	ev->type = CP_REC_OBJECT;
	ev->kind = CP_OBJ_EV_ALLOC;
	ev->func = CP_FN_MALLOC;
	ev->flags = CP_OBJ_EV_F_CHUNK;
	ev->tgid = (__u32)pid;
	ev->addr = ch.user;
	ev->size = ch.usable;
	ev->stack_id = -1;
	ev->time_ns = time_ns;
	return 0;
}

void cp_objects__stats(const struct cp_objects *o, struct cp_objects_stats *out)
{
	*out = o->st;
	if (o->chunks)
		cp_glibc_chunks__stats(o->chunks, &out->chunks);
	out->processes = 0;
	for (size_t i = 0; i < o->nr_slots; i++) {
		struct cp_object_store_stats s;
		const struct proc *p = o->slots[i];

		if (!p)
			continue;
		out->processes += !p->exited;
		cp_object_store__stats(p->store, &s);
		add_store_stats(&out->store, &s);
		out->callsites_dropped += cp_callsites__dropped(p->callsites);
		out->stacks_dropped += cp_callsites__frames_dropped(p->callsites);
	}
	cp_elf_cache__stats(o->elf, &out->elf);
}
