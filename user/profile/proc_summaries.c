// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Per-process summaries (see proc_summary.h): an array and a pid index. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cacheperf/abi.h"
#include "profile/proc_summaries.h"
#include "util/hash.h"
#include "util/top_n.h"

#define CP_NO_SLOT (-1)

struct cp_proc_summaries {
	struct cp_proc_summary *v; /* max entries */
	bool *used;		   /* per entry */
	size_t *free;		   /* the unused slots, a stack of max */
	size_t max, nr, nr_free;
	int *index;	  /* live pid -> slot, linear probing, index_cap */
	size_t index_cap; /* power of two, >= 2 * max */
	__u64 clock, seen, evicted;
	cp_proc_describe_fn describe;
	void *ctx;
	cp_proc_described_fn described;
	void *described_ctx;
	struct known_cgroup {
		__u64 id; /* 0: empty */
		__u64 v1; /* 0: a unified hierarchy's description, whatever the v1 cgroups */
		struct cp_cgroup_info cg;
	} cgroups[CP_PROC_CGROUPS_KEPT]; /* by ids, a slot each (Fibonacci: the top 6 bits) */
};

static size_t home_of(const struct cp_proc_summaries *t, pid_t pid)
{
	return ((size_t)(__u32)pid * 2654435761u) & (t->index_cap - 1);
}

/* The index position holding @pid, or the empty one where it would go. */
static size_t index_pos(const struct cp_proc_summaries *t, pid_t pid)
{
	size_t i = home_of(t, pid);

	while (t->index[i] != CP_NO_SLOT && t->v[t->index[i]].pid != pid)
		i = cp_probe_next(i, t->index_cap - 1);
	return i;
}

/* Removes @pid from the index, shifting the probe chain back (no tombstones). */
static void index_del(struct cp_proc_summaries *t, pid_t pid)
{
	size_t mask = t->index_cap - 1, i = index_pos(t, pid), j = i;

	if (t->index[i] == CP_NO_SLOT)
		return;
	for (;;) {
		t->index[i] = CP_NO_SLOT;
		for (;;) {
			size_t h;

			j = cp_probe_next(j, mask);
			if (t->index[j] == CP_NO_SLOT)
				return;
			h = home_of(t, t->v[t->index[j]].pid);
			/* j's entry may move to i unless its home lies cyclically in (i, j] */
			if (cp_probe_between(i, h, j))
				continue;
			break;
		}
		t->index[i] = t->index[j];
		i = j;
	}
}

struct cp_proc_summaries *cp_proc_summaries__new(size_t max, cp_proc_describe_fn describe,
						 void *ctx)
{
	struct cp_proc_summaries *t = calloc(1, sizeof(*t));

	if (!t)
		return NULL;
	t->max = max ? max : CP_MAX_PROC_SUMMARIES;
	for (t->index_cap = 16; t->index_cap < 2 * t->max; t->index_cap *= 2)
		;
	t->v = calloc(t->max, sizeof(*t->v));
	t->used = calloc(t->max, sizeof(*t->used));
	t->free = malloc(t->max * sizeof(*t->free));
	t->index = malloc(t->index_cap * sizeof(*t->index));
	if (!t->v || !t->used || !t->free || !t->index) {
		cp_proc_summaries__free(t);
		return NULL;
	}
	/* slot 0 on top: the first summaries fill the array from its start */
	for (size_t i = 0; i < t->max; i++)
		t->free[t->nr_free++] = t->max - 1 - i;
	for (size_t i = 0; i < t->index_cap; i++)
		t->index[i] = CP_NO_SLOT;
	t->describe = describe;
	t->ctx = ctx;
	return t;
}

void cp_proc_summaries__free(struct cp_proc_summaries *t)
{
	if (!t)
		return;
	free(t->v);
	free(t->used);
	free(t->free);
	free(t->index);
	free(t);
}

/* Empties @slot; the caller puts it on the free stack. */
static void clear_slot(struct cp_proc_summaries *t, size_t slot)
{
	if (!t->v[slot].exited)
		index_del(t, t->v[slot].pid);
	memset(&t->v[slot], 0, sizeof(t->v[slot]));
	t->used[slot] = false;
	t->nr--;
}

static const struct cp_proc_summary *evict_order_of;

/* Exited ones first, then the least recently sampled (qsort of slot numbers). */
static int evict_order(const void *a, const void *b)
{
	const struct cp_proc_summary *x = &evict_order_of[*(const size_t *)a];
	const struct cp_proc_summary *y = &evict_order_of[*(const size_t *)b];

	if (x->exited != y->exited)
		return x->exited ? -1 : 1;
	return x->last_use < y->last_use ? -1 : x->last_use > y->last_use;
}

/*
 * A free slot. At the cap the summaries of exited processes go, the least
 * recently sampled first, up to a sixteenth of them at once; when none
 * exited, the least recently sampled one. Under -a beside short processes
 * the table is full, and looking for one victim among them all for each
 * new process was the profiler's costliest function of its own (4 % of
 * its time in a soak).
 */
static size_t free_slot(struct cp_proc_summaries *t)
{
	if (!t->nr_free) {
		size_t n = t->max / 16 ? t->max / 16 : 1, k;

		/* the free stack is empty: its room holds every slot's number */
		for (size_t i = 0; i < t->max; i++)
			t->free[i] = i;
		evict_order_of = t->v;
		qsort(t->free, t->max, sizeof(*t->free), evict_order);
		evict_order_of = NULL;
		/* exited ones go up to n at once, a live one alone (when none exited) */
		for (k = 0; k < n && t->v[t->free[k]].exited;)
			k++;
		k = k ? k : 1;
		/* the first k are the victims, and then the free stack */
		for (size_t i = 0; i < k; i++)
			clear_slot(t, t->free[i]);
		t->nr_free = k;
		t->evicted += k;
	}
	return t->free[--t->nr_free];
}

static struct cp_proc_summary *find_live(const struct cp_proc_summaries *t, pid_t pid)
{
	size_t i = index_pos(t, pid);

	return t->index[i] == CP_NO_SLOT ? NULL : &t->v[t->index[i]];
}

/* A new live summary of @pid (not described). */
static struct cp_proc_summary *new_live(struct cp_proc_summaries *t, pid_t pid)
{
	size_t slot = free_slot(t);
	struct cp_proc_summary *s = &t->v[slot];

	t->used[slot] = true;
	s->pid = pid;
	s->cg.runtime = "";
	s->last_use = ++t->clock;
	t->index[index_pos(t, pid)] = (int)slot;
	t->nr++;
	t->seen++;
	return s;
}

/* @pid's live summary, created (and described) if it has none. */
static struct cp_proc_summary *get_live(struct cp_proc_summaries *t, pid_t pid)
{
	struct cp_proc_summary *s = find_live(t, pid);

	if (s)
		return s;
	s = new_live(t, pid);
	if (t->describe)
		t->describe(t->ctx, s, CP_DESCRIBE_COMM | CP_DESCRIBE_CGROUP);
	if (t->described)
		t->described(t->described_ctx, s);
	return s;
}

int cp_proc_summaries__sample(struct cp_proc_summaries *t, pid_t pid, bool miss)
{
	struct cp_proc_summary *s;

	if (pid <= 0)
		return -EINVAL;
	s = get_live(t, pid);
	s->samples++;
	s->misses += miss;
	s->last_use = ++t->clock;
	return 0;
}

_Static_assert(CP_PROC_CGROUPS_KEPT == 1 << 6, "known_slot() takes the top 6 bits");

/* The slot of cgroup @id with v1 cgroups @v1 (0: any), or NULL for id 0. */
static struct known_cgroup *known_slot(struct cp_proc_summaries *t, __u64 id, __u64 v1)
{
	if (!id)
		return NULL;
	return &t->cgroups[cp_hash_slot(cp_hash64(id ^ cp_hash64(v1)), 58,
					CP_PROC_CGROUPS_KEPT - 1)];
}

/* Whether @k holds the description of cgroup @id with v1 cgroups @v1 (0: any). */
static bool known_is(const struct known_cgroup *k, __u64 id, __u64 v1)
{
	return k && k->id == id && k->v1 == v1;
}

void cp_proc_summaries__exec(struct cp_proc_summaries *t, pid_t pid, const char *comm,
			     __u64 cgroup_id, __u64 cgroup_v1)
{
	struct known_cgroup *k = known_slot(t, cgroup_id, 0);
	struct known_cgroup *k1 = cgroup_v1 ? known_slot(t, cgroup_id, cgroup_v1) : NULL;
	struct cp_proc_summary *s;
	unsigned int what = 0;

	if (pid <= 0)
		return;
	/* a new image, or a pid not summarized yet: described now, while it lives (it may not for long) */
	s = find_live(t, pid);
	if (s)
		s->execs++;
	else
		s = new_live(t, pid);
	memset(s->comm, 0, sizeof(s->comm));
	if (comm)
		strncpy(s->comm, comm, sizeof(s->comm) - 1);
	if (!s->comm[0])
		what |= CP_DESCRIBE_COMM;
	if (known_is(k, cgroup_id, 0)) {
		s->cg = k->cg;
	} else if (known_is(k1, cgroup_id, cgroup_v1)) {
		s->cg = k1->cg;
	} else {
		cp_cgroup_info_unknown(&s->cg);
		what |= CP_DESCRIBE_CGROUP | (k1 ? CP_DESCRIBE_CGROUP_LINES : 0);
	}
	if (what && t->describe)
		t->describe(t->ctx, s, what);
	if (t->described)
		t->described(t->described_ctx, s);
	if (!(what & CP_DESCRIBE_CGROUP))
		return;
	/*
	 * kept only when the description is of that very cgroup: a process
	 * moved after its exec (runc init into its container) is described
	 * by where it is now; by the v2 id alone when it is the unified
	 * hierarchy's and not its root, where a hybrid host describes its
	 * processes by their v1 paths: by both when its lines are the
	 * record's cgroups, the unified one's too (hierarchy 0)
	 */
	if (k && s->cg.v2 && s->cg.id == cgroup_id && s->cg.path[0] && strcmp(s->cg.path, "/"))
		*k = (struct known_cgroup){.id = cgroup_id, .cg = s->cg};
	else if (k1 && s->cg.lines &&
		 s->cg.lines ==
			 (cgroup_v1 ^
			  (s->cg.v2_line ? cp_cgroup_v1_of(0, cgroup_id, cp_cgroup_v1_salt()) : 0)))
		*k1 = (struct known_cgroup){.id = cgroup_id, .v1 = cgroup_v1, .cg = s->cg};
}

void cp_proc_summaries__on_described(struct cp_proc_summaries *t, cp_proc_described_fn fn,
				     void *ctx)
{
	t->described = fn;
	t->described_ctx = ctx;
}

void cp_proc_summaries__describe_as(struct cp_proc_summaries *t, pid_t pid, const char *comm,
				    const struct cp_cgroup_info *cg)
{
	struct cp_proc_summary *s;

	if (pid <= 0)
		return;
	s = find_live(t, pid);
	if (!s)
		s = new_live(t, pid);
	snprintf(s->comm, sizeof(s->comm), "%s", comm);
	s->cg = *cg;
}

void cp_proc_summaries__exit(struct cp_proc_summaries *t, pid_t pid)
{
	struct cp_proc_summary *s = find_live(t, pid);

	if (!s)
		return;
	index_del(t, pid);
	s->exited = true;
}

/* Most samples first, then most misses, then the lower pid. */
static int by_samples(const void *a, const void *b)
{
	const struct cp_proc_summary *x = *(const struct cp_proc_summary *const *)a;
	const struct cp_proc_summary *y = *(const struct cp_proc_summary *const *)b;

	if (x->samples != y->samples)
		return x->samples > y->samples ? -1 : 1;
	if (x->misses != y->misses)
		return x->misses > y->misses ? -1 : 1;
	return x->pid < y->pid ? -1 : x->pid > y->pid;
}

size_t cp_proc_summaries__top(const struct cp_proc_summaries *t, const struct cp_proc_summary **out,
			      size_t n)
{
	return cp_top_n(t->v, t->used, t->max, sizeof(*t->v), t->nr, by_samples, (const void **)out,
			n);
}

const struct cp_proc_summary *cp_proc_summaries__find(const struct cp_proc_summaries *t, pid_t pid)
{
	const struct cp_proc_summary *found;

	if (!t)
		return NULL;
	found = find_live(t, pid);
	if (found)
		return found;
	/* exited ones left the index: a linear look, bounded by the cap */
	for (size_t i = 0; i < t->max; i++) {
		const struct cp_proc_summary *s = &t->v[i];

		if (t->used[i] && s->exited && s->pid == pid &&
		    (!found || s->last_use > found->last_use))
			found = s;
	}
	return found;
}

size_t cp_proc_summaries__count(const struct cp_proc_summaries *t)
{
	return t->nr;
}

__u64 cp_proc_summaries__seen(const struct cp_proc_summaries *t)
{
	return t->seen;
}

__u64 cp_proc_summaries__evicted(const struct cp_proc_summaries *t)
{
	return t->evicted;
}
