// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The breakpoint manager's decisions: candidates, slots, expiry, budget. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "breakpoints/bp_manager.h"
#include "classify/stream_evidence.h"
#include "util/hash.h"

#define CP_BPM_INDEX	 (2 * CP_BPM_MAX_CANDIDATES) /* hash slots, a power of two */
#define CP_BPM_PILE_SETS 4			     /* sets counted per candidate and window */
#define CP_BPM_SECOND_NS 1000000000ull

enum cand_state {
	CAND_WATCH = 0, /* collecting misses; armed once qualified */
	CAND_ARMED,
	CAND_DONE,    /* history delivered: not armed again until forgotten */
	CAND_SKIPPED, /* cannot be armed */
};

struct cand {
	__u32 tgid;
	__u32 state; /* enum cand_state */
	__u64 ip;
	__u64 misses;	     /* forwarded misses noted */
	__u32 best_run;	     /* longest run of consecutive misses on one CPU */
	__u32 tries;	     /* times armed */
	__u64 pile_start_ns; /* the pile window began */
	__u32 pile_set[CP_BPM_PILE_SETS];
	__u32 pile_cnt[CP_BPM_PILE_SETS];
	__u32 nr_pile;
	__u32 hot_set; /* the set with the most misses of a window */
	bool piled;    /* CP_BPM_PILE misses on one set within a window */
	__u64 last_ns; /* latest miss or change */
	__u64 armed_ns;
	__u64 not_before_ns; /* not armed before (retry after ENOSPC, budget) */
};

/* The previous forwarded miss on one CPU: a run continues while its instruction repeats. */
struct last_miss {
	__u32 tgid;
	__u32 run;
	__u64 ip;
};

/* A domain whose slot limit ENOSPC lowered, until until_ns. */
struct domain_limit {
	__u32 key;
	__u32 limit;
	__u64 until_ns;
};

struct cp_bp_manager {
	struct cp_bp_manager_cfg cfg;
	struct cand cands[CP_BPM_MAX_CANDIDATES];
	__u32 nr;
	__u16 index[CP_BPM_INDEX]; /* 1 + position in cands[], 0: empty */
	struct last_miss last[CP_BPM_MAX_CPUS];
	struct domain_limit limits[CP_BPM_MAX_DOMAINS];
	__u64 window_start_ns; /* the budget's current second */
	__u64 window_base;     /* hits before it, less the hits owed from before */
	__u64 hits;	       /* running total */
	__u64 noted;	       /* forwarded samples noted: by_time's whole */
	bool window_over;      /* this second's budget reached */
	struct cp_bp_manager_stats stats;
};

static size_t hash_key(__u32 tgid, __u64 ip)
{
	return cp_hash_slot(cp_hash64(ip ^ ((__u64)tgid << 40)), 40, CP_BPM_INDEX - 1);
}

static struct cand *find(struct cp_bp_manager *m, __u32 tgid, __u64 ip, size_t *slot)
{
	size_t i = hash_key(tgid, ip);

	for (; m->index[i]; i = cp_probe_next(i, CP_BPM_INDEX - 1)) {
		struct cand *c = &m->cands[m->index[i] - 1];

		if (c->tgid == tgid && c->ip == ip)
			return c;
	}
	if (slot)
		*slot = i;
	return NULL;
}

static const struct cand *find_const(const struct cp_bp_manager *m, __u32 tgid, __u64 ip)
{
	return find((struct cp_bp_manager *)m, tgid, ip, NULL);
}

static void reindex(struct cp_bp_manager *m)
{
	size_t slot = 0;

	memset(m->index, 0, sizeof(m->index));
	for (__u32 i = 0; i < m->nr; i++) {
		find(m, m->cands[i].tgid, m->cands[i].ip, &slot);
		m->index[slot] = (__u16)(i + 1);
	}
}

/* Removes the candidates @drop says, keeping the order of the others. */
static void remove_if(struct cp_bp_manager *m, bool (*drop)(const struct cand *, const void *),
		      const void *arg)
{
	__u32 n = 0;

	for (__u32 i = 0; i < m->nr; i++)
		if (!drop(&m->cands[i], arg))
			m->cands[n++] = m->cands[i];
	if (n == m->nr)
		return;
	m->nr = n;
	reindex(m);
}

struct cp_bp_manager *cp_bp_manager__new(const struct cp_bp_manager_cfg *cfg)
{
	struct cp_bp_manager *m;

	if (!cfg->max_rate || !cfg->expiry_ns)
		return NULL;
	m = calloc(1, sizeof(*m));
	if (m)
		m->cfg = *cfg;
	return m;
}

void cp_bp_manager__free(struct cp_bp_manager *m)
{
	free(m);
}

static void pile(struct cand *c, __u32 set, __u64 now_ns)
{
	__u32 i;

	if (now_ns - c->pile_start_ns >= CP_BPM_PILE_WINDOW_NS) {
		c->pile_start_ns = now_ns;
		c->nr_pile = 0;
	}
	for (i = 0; i < c->nr_pile && c->pile_set[i] != set; i++)
		;
	if (i == c->nr_pile) {
		if (c->nr_pile == CP_BPM_PILE_SETS)
			return; /* misses spread over many sets: no pile */
		c->pile_set[i] = set;
		c->pile_cnt[i] = 0;
		c->nr_pile++;
	}
	c->pile_cnt[i]++;
	if (c->piled)
		return; /* the set that piled up stays the hot one */
	for (__u32 j = 0; j < c->nr_pile; j++)
		if (c->pile_set[j] == c->hot_set && c->pile_cnt[j] > c->pile_cnt[i])
			return;
	c->hot_set = set;
	c->piled = c->pile_cnt[i] >= CP_BPM_PILE;
}

static bool is_victim(const struct cand *c, const void *arg)
{
	return c == arg;
}

/*
 * by_time: every instruction a tick lands on comes here, so start-up code
 * could fill the table before the hot loops run. Makes room by dropping
 * the watched candidate with the fewest samples, when it has fewer than
 * CP_BPM_MIN_RUN (it cannot have qualified). Returns true when it did.
 */
static bool evict_cold(struct cp_bp_manager *m)
{
	const struct cand *victim = NULL;

	for (__u32 i = 0; i < m->nr; i++) {
		const struct cand *c = &m->cands[i];

		if (c->state == CAND_WATCH && c->misses < CP_BPM_MIN_RUN &&
		    (!victim || c->misses < victim->misses))
			victim = c;
	}
	if (!victim)
		return false;
	remove_if(m, is_victim, victim);
	return true;
}

void cp_bp_manager__note_miss(struct cp_bp_manager *m, __u32 tgid, __u32 cpu, __u64 ip, __u32 set,
			      __u64 now_ns)
{
	struct last_miss *l = &m->last[cpu % CP_BPM_MAX_CPUS];
	struct cand *c;
	size_t slot;

	if (l->tgid == tgid && l->ip == ip) {
		l->run++;
	} else {
		l->tgid = tgid;
		l->ip = ip;
		l->run = 1;
	}
	c = find(m, tgid, ip, &slot);
	if (!c && m->nr == CP_BPM_MAX_CANDIDATES && m->cfg.by_time && evict_cold(m))
		find(m, tgid, ip, &slot);
	if (!c) {
		if (m->nr == CP_BPM_MAX_CANDIDATES) {
			m->stats.dropped++;
			return;
		}
		c = &m->cands[m->nr++];
		memset(c, 0, sizeof(*c));
		c->tgid = tgid;
		c->ip = ip;
		m->index[slot] = (__u16)m->nr;
	}
	c->misses++;
	m->noted++;
	c->last_ns = now_ns;
	if (l->run > c->best_run)
		c->best_run = l->run;
	pile(c, set, now_ns);
}

void cp_bp_manager__hits(struct cp_bp_manager *m, __u64 hits_total, __u64 now_ns)
{
	m->stats.hits = hits_total;
	m->hits = hits_total;
	if (!m->window_start_ns) {
		m->window_start_ns = now_ns;
		m->window_base = hits_total;
	} else if (now_ns - m->window_start_ns >= CP_BPM_SECOND_NS) {
		/*
		 * Hits past the budget are owed: one armed instruction in a hot
		 * loop takes thousands of hits before its events are closed, many
		 * seconds' worth, and the next seconds start with that debt.
		 */
		__u64 secs = (now_ns - m->window_start_ns) / CP_BPM_SECOND_NS;
		__u64 used = hits_total - m->window_base, allowed = secs * m->cfg.max_rate;

		m->window_start_ns = now_ns;
		m->window_base = hits_total - (used > allowed ? used - allowed : 0);
		m->window_over = false;
	}
	if (!m->window_over && hits_total - m->window_base >= m->cfg.max_rate) {
		m->window_over = true;
		m->stats.over_budget++;
	}
}

void cp_bp_manager__set_rate(struct cp_bp_manager *m, __u32 max_rate)
{
	if (max_rate)
		m->cfg.max_rate = max_rate;
}

static __u32 domain_of(const struct cp_bp_manager *m, __u32 tgid)
{
	return m->cfg.per_cpu ? 0 : tgid;
}

static __u32 slot_limit(const struct cp_bp_manager *m, __u32 key, __u64 now_ns)
{
	for (int i = 0; i < CP_BPM_MAX_DOMAINS; i++)
		if (m->limits[i].until_ns > now_ns && m->limits[i].key == key)
			return m->limits[i].limit;
	return CP_BPM_SLOTS;
}

static __u32 armed_in(const struct cp_bp_manager *m, __u32 key)
{
	__u32 n = 0;

	for (__u32 i = 0; i < m->nr; i++)
		n += m->cands[i].state == CAND_ARMED && domain_of(m, m->cands[i].tgid) == key;
	return n;
}

static bool qualified(const struct cp_bp_manager *m, const struct cand *c)
{
	if (m->cfg.by_time && c->misses >= CP_BPM_MIN_RUN &&
	    (double)c->misses * 1e6 >= (double)CP_BPM_TIME_PPM * (double)m->noted)
		return true;
	return c->best_run >= CP_BPM_MIN_RUN || c->piled;
}

static __u64 impact(const struct cp_bp_manager *m, const struct cand *c,
		    const struct cp_insn_store *insns)
{
	struct cp_ip_key key = {.tgid = c->tgid, .ip = c->ip};
	const struct cp_insn *in = insns ? cp_insn_store__find(insns, &key) : NULL;
	__u64 sampled = !in		 ? 0
			: m->cfg.by_time ? cp_insn_time_samples(in)
					 : in->counts.load_misses + in->counts.store_misses;

	return sampled > c->misses ? sampled : c->misses;
}

/* True when @a ranks before @b. */
static bool ranks_before(const struct cand *a, __u64 ia, const struct cand *b, __u64 ib,
			 const struct cp_miss_store *misses)
{
	__u64 sa, sb;

	if (ia != ib)
		return ia > ib;
	sa = misses ? cp_miss_store__set_misses(misses, a->hot_set) : 0;
	sb = misses ? cp_miss_store__set_misses(misses, b->hot_set) : 0;
	if (sa != sb)
		return sa > sb;
	return a->ip != b->ip ? a->ip < b->ip : a->tgid < b->tgid;
}

bool cp_bp_manager__next(struct cp_bp_manager *m, const struct cp_insn_store *insns,
			 const struct cp_miss_store *misses, __u64 now_ns,
			 struct cp_bp_manager_pick *out)
{
	const struct cand *best = NULL;
	__u64 best_impact = 0, window_hits = m->hits - m->window_base;
	__u32 armed = m->stats.watching;
	/* each armed instruction may take a whole history; a tiny budget still allows one */
	__u64 need = (__u64)CP_BP_HISTORY * armed +
		     (m->cfg.max_rate < CP_BP_HISTORY ? m->cfg.max_rate : CP_BP_HISTORY);

	if (m->stats.off || armed >= CP_MAX_BP_INSNS || window_hits + need > m->cfg.max_rate)
		return false;
	for (__u32 i = 0; i < m->nr; i++) {
		const struct cand *c = &m->cands[i];
		__u32 key = domain_of(m, c->tgid);
		__u64 imp;

		if (c->state != CAND_WATCH || !qualified(m, c) || c->not_before_ns > now_ns)
			continue;
		imp = impact(m, c, insns);
		if (best && !ranks_before(c, imp, best, best_impact, misses))
			continue;
		if (armed_in(m, key) >= slot_limit(m, key, now_ns))
			continue;
		best = c;
		best_impact = imp;
	}
	if (!best)
		return false;
	out->tgid = best->tgid;
	out->ip = best->ip;
	out->impact = best_impact;
	return true;
}

static void lower_limit(struct cp_bp_manager *m, __u32 key, __u64 now_ns)
{
	struct domain_limit *d = &m->limits[0];

	for (int i = 0; i < CP_BPM_MAX_DOMAINS; i++) {
		if (m->limits[i].key == key || m->limits[i].until_ns <= now_ns) {
			d = &m->limits[i];
			break;
		}
		if (m->limits[i].until_ns < d->until_ns)
			d = &m->limits[i];
	}
	d->key = key;
	d->limit = armed_in(m, key);
	d->until_ns = now_ns + CP_BPM_RETRY_NS;
}

bool cp_bp_manager__armed(struct cp_bp_manager *m, const struct cp_bp_manager_pick *pick,
			  int result, __u64 now_ns)
{
	struct cand *c = find(m, pick->tgid, pick->ip, NULL);

	if (!c)
		return m->stats.off;
	c->last_ns = now_ns;
	switch (result) {
	case 0:
		c->state = CAND_ARMED;
		c->armed_ns = now_ns;
		c->tries++;
		m->stats.armed++;
		m->stats.watching++;
		break;
	case -ENOSPC:
		m->stats.enospc++;
		lower_limit(m, domain_of(m, c->tgid), now_ns);
		c->not_before_ns = now_ns + CP_BPM_RETRY_NS;
		break;
	case -EOPNOTSUPP:
	case -ENODEV:
	case -EACCES:
	case -EPERM:
		/* no breakpoints in this kernel, or not for us: stop trying */
		m->stats.off = true;
		m->stats.skipped++;
		c->state = CAND_SKIPPED;
		break;
	default:
		m->stats.skipped++;
		c->state = CAND_SKIPPED;
		break;
	}
	return m->stats.off;
}

enum cp_bp_manager_reason cp_bp_manager__check(const struct cp_bp_manager *m, __u32 tgid, __u64 ip,
					       const struct cp_bp_manager_view *v, __u64 now_ns)
{
	const struct cand *c = find_const(m, tgid, ip);
	__u64 armed_ns = c ? c->armed_ns : 0, last;

	if (v->state == CP_BP_CONFLICT)
		return CP_BPM_SETTLED;
	if (v->state == CP_BP_FULL)
		return CP_BPM_FULL;
	if (m->window_over)
		return CP_BPM_BUDGET;
	last = v->last_ns > armed_ns ? v->last_ns : armed_ns;
	if (now_ns >= last + m->cfg.expiry_ns)
		return CP_BPM_IDLE;
	if (now_ns >= armed_ns + CP_BPM_LIFETIME_EXPIRIES * m->cfg.expiry_ns)
		return CP_BPM_LIFETIME;
	return CP_BPM_KEEP;
}

/*
 * Accesses a history needs to be judged: a conflict settles after
 * CP_BP_SETTLE_RUN on one set; a soft source's capacity needs a stream,
 * CP_STREAM_MIN_HISTORY addresses (classify/stream_evidence.h).
 */
static __u32 enough_history(const struct cp_bp_manager *m)
{
	return m->cfg.by_time ? CP_STREAM_MIN_HISTORY : CP_BP_SETTLE_RUN;
}

void cp_bp_manager__released(struct cp_bp_manager *m, __u32 tgid, __u64 ip,
			     enum cp_bp_manager_reason reason, __u32 recorded, __u64 now_ns)
{
	struct cand *c = find(m, tgid, ip, NULL);

	if ((unsigned)reason < CP_BPM_REASON_NR)
		m->stats.released[reason]++;
	if (!c || c->state != CAND_ARMED)
		return;
	m->stats.watching--;
	c->last_ns = now_ns;
	c->state = CAND_DONE;
	if (reason == CP_BPM_SETTLED || reason == CP_BPM_FULL || reason == CP_BPM_GONE ||
	    recorded >= enough_history(m) || c->tries >= CP_BPM_MAX_TRIES)
		return;
	/* too few accesses to judge: watch it again */
	c->state = CAND_WATCH;
	if (reason == CP_BPM_BUDGET) {
		c->not_before_ns = m->window_start_ns + CP_BPM_SECOND_NS;
	} else {
		/* it went quiet: only fresh misses qualify it again */
		c->best_run = 0;
		c->piled = false;
		c->nr_pile = 0;
	}
}

static bool of_tgid(const struct cand *c, const void *arg)
{
	return c->tgid == *(const __u32 *)arg && c->state != CAND_ARMED;
}

void cp_bp_manager__forget(struct cp_bp_manager *m, __u32 tgid)
{
	remove_if(m, of_tgid, &tgid);
	for (int i = 0; i < CP_BPM_MAX_CPUS; i++)
		if (m->last[i].tgid == tgid)
			memset(&m->last[i], 0, sizeof(m->last[i]));
}

static bool stale(const struct cand *c, const void *arg)
{
	return c->state != CAND_ARMED && c->last_ns + CP_BPM_STALE_NS <= *(const __u64 *)arg;
}

void cp_bp_manager__prune(struct cp_bp_manager *m, __u64 now_ns)
{
	remove_if(m, stale, &now_ns);
}

void cp_bp_manager__stats(const struct cp_bp_manager *m, struct cp_bp_manager_stats *out)
{
	*out = m->stats;
}

const char *cp_bp_manager_reason_name(enum cp_bp_manager_reason r)
{
	static const char *const names[CP_BPM_REASON_NR] = {
		[CP_BPM_KEEP] = "watching",
		[CP_BPM_FULL] = "full",
		[CP_BPM_SETTLED] = "settled as conflict",
		[CP_BPM_IDLE] = "idle",
		[CP_BPM_LIFETIME] = "armed too long",
		[CP_BPM_BUDGET] = "over the hit budget",
		[CP_BPM_GONE] = "process gone",
	};

	return (unsigned)r < CP_BPM_REASON_NR ? names[r] : "?";
}
