// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Decoded operands per instruction: a bounded cache, and reading instruction bytes. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "objects/allocator.h"
#include "decode/decode.h"
#include "decode/decode_cache.h"
#include "util/hash.h"

struct cp_decode_entry {
	struct cp_decode_key key;
	struct cp_operand op;
	struct cp_decode_charge charge;
	bool charged; /* charge is decided */
	__u64 used;   /* clock of the last use; 0: empty */
};

/* A code file held open for its bytes: the file a mapping names, by device and inode. */
struct code_file {
	__u64 dev, ino;
	int fd;
	__u64 used; /* clock of the last read; 0: empty */
};

/* A function's sweep, by its entry's key and a sum of its bytes. */
struct walk_slot {
	struct cp_decode_key key;
	__u64 sum; /* code_sum() of the bytes swept */
	struct cp_code_walk walk;
	__u64 used; /* clock of the last use; 0: empty */
};

#define CP_DECODE_PID_BITS 4096

struct cp_decode_cache {
	struct cp_decode_entry *e; /* nr_sets * CP_DECODE_WAYS */
	size_t nr_sets;		   /* a power of two */
	__u64 clock;
	size_t nr_by_pid; /* entries keyed by a pid (code of no file) */
	/*
	 * A bit per pid hash, set for the pids that may have such entries:
	 * a process's exit looks through the cache only when its bit is set,
	 * and that look sets the bits again from what it leaves. A process
	 * that ran JIT code or ticked in [vdso] before the vdso was keyed
	 * apart kept nr_by_pid above 0, and each exit of a build then went
	 * through all the cache.
	 */
	__u64 by_pid_bits[CP_DECODE_PID_BITS / 64];
	struct code_file files[CP_CODE_FILES];
	__u64 files_clock;
	struct walk_slot walks[CP_CODE_WALKS];
	size_t walk_bytes; /* of the kept sweeps' arrays */
	struct cp_decode_cache_stats stats;
};

/* The word of by_pid_bits holding @pid's bit, and the bit: a multiplicative hash's top 12 bits. */
static __u64 *pid_word(struct cp_decode_cache *c, __u64 pid, __u64 *bit)
{
	unsigned int b = (__u32)pid * 2654435761u >> 20;

	*bit = 1ull << (b % 64);
	return &c->by_pid_bits[b / 64];
}

static void mark_pid(struct cp_decode_cache *c, __u64 pid)
{
	__u64 bit, *w = pid_word(c, pid, &bit);

	*w |= bit;
}

/* Whether @pid may have entries keyed by it (a false yes costs a look, never a miss). */
static bool pid_marked(struct cp_decode_cache *c, __u64 pid)
{
	__u64 bit, *w = pid_word(c, pid, &bit);

	return c->nr_by_pid && (*w & bit);
}

struct cp_decode_cache *cp_decode_cache__new(size_t max)
{
	struct cp_decode_cache *c = calloc(1, sizeof(*c));
	size_t sets = 1;

	if (!c)
		return NULL;
	if (!max)
		max = CP_DECODE_CACHE_DEFAULT;
	while (sets * CP_DECODE_WAYS < max)
		sets <<= 1;
	c->nr_sets = sets;
	c->e = calloc(sets * CP_DECODE_WAYS, sizeof(*c->e));
	if (!c->e) {
		free(c);
		return NULL;
	}
	return c;
}

void cp_decode_cache__free(struct cp_decode_cache *c)
{
	if (!c)
		return;
	for (size_t i = 0; i < CP_CODE_FILES; i++)
		if (c->files[i].used)
			close(c->files[i].fd);
	for (size_t i = 0; i < CP_CODE_WALKS; i++)
		cp_code_walk_free(&c->walks[i].walk);
	free(c->e);
	free(c);
}

void cp_decode_key_of(pid_t pid, const struct cp_map *map, __u64 ip, struct cp_decode_key *key)
{
	memset(key, 0, sizeof(*key));
	if (map->kind == CP_MAP_FILE && map->inode) {
		key->dev = (__u64)map->dev_major << 32 | map->dev_minor;
		key->ino = map->inode;
		key->off = map->offset + (ip - map->start);
	} else if (map->kind == CP_MAP_VDSO) {
		key->dev = CP_DECODE_VDSO_DEV;
		key->ino = map->end - map->start;
		key->off = ip - map->start;
	} else {
		key->ino = (__u64)pid;
		key->off = ip;
	}
}

static struct cp_decode_entry *set_of(struct cp_decode_cache *c, const struct cp_decode_key *k)
{
	__u64 h = cp_hash64(k->off) ^ k->ino * CP_HASH_MIX1 ^ k->dev;

	return &c->e[cp_hash_slot(cp_hash_fold(h, 29), 0, c->nr_sets - 1) * CP_DECODE_WAYS];
}

static bool same_key(const struct cp_decode_key *a, const struct cp_decode_key *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->off == b->off;
}

/* @key's entry, or NULL; made the most recently used. */
static struct cp_decode_entry *entry_of(struct cp_decode_cache *c, const struct cp_decode_key *key)
{
	struct cp_decode_entry *set = set_of(c, key);

	for (int w = 0; w < CP_DECODE_WAYS; w++) {
		if (set[w].used && same_key(&set[w].key, key)) {
			set[w].used = ++c->clock;
			return &set[w];
		}
	}
	return NULL;
}

const struct cp_operand *cp_decode_cache__lookup(struct cp_decode_cache *c,
						 const struct cp_decode_key *key)
{
	struct cp_decode_entry *e = entry_of(c, key);

	if (!e)
		return NULL;
	c->stats.hits++;
	return &e->op;
}

bool cp_decode_cache__charge(struct cp_decode_cache *c, const struct cp_decode_key *key,
			     struct cp_decode_charge *out)
{
	struct cp_decode_entry *e = entry_of(c, key);

	if (!e || !e->charged)
		return false;
	c->stats.charge_hits++;
	*out = e->charge;
	return true;
}

void cp_decode_cache__set_charge(struct cp_decode_cache *c, const struct cp_decode_key *key,
				 const struct cp_decode_charge *ch)
{
	struct cp_decode_entry *e = entry_of(c, key);

	if (!e)
		return;
	e->charge = *ch;
	e->charged = true;
}

void cp_decode_cache__insert(struct cp_decode_cache *c, const struct cp_decode_key *key,
			     const struct cp_operand *op)
{
	struct cp_decode_entry *set = set_of(c, key), *victim = &set[0];

	for (int w = 0; w < CP_DECODE_WAYS; w++) {
		if (set[w].used && same_key(&set[w].key, key)) {
			victim = &set[w];
			break;
		}
		if (set[w].used < victim->used)
			victim = &set[w];
	}
	if (victim->used && !same_key(&victim->key, key))
		c->stats.evictions++;
	c->nr_by_pid -= victim->used && !victim->key.dev;
	c->nr_by_pid += !key->dev;
	if (!key->dev)
		mark_pid(c, key->ino);
	if (!victim->used || !same_key(&victim->key, key))
		victim->charged = false;
	victim->key = *key;
	victim->op = *op;
	victim->used = ++c->clock;
}

/*
 * A sum of @code's @len bytes: a file rewritten in place under the same
 * inode gets no sweep of its old bytes.
 */
static __u64 code_sum(const __u8 *code, size_t len)
{
	__u64 h = len;
	size_t i = 0;

	for (; i + sizeof(__u64) <= len; i += sizeof(__u64)) {
		__u64 w;

		memcpy(&w, code + i, sizeof(w));
		h = cp_hash64(h ^ w);
	}
	for (; i < len; i++)
		h = cp_hash64(h ^ code[i]);
	return h;
}

static size_t walk_bytes(const struct cp_code_walk *w)
{
	return (w->nr_starts + w->nr_targets) * sizeof(__u32);
}

static void drop_walk(struct cp_decode_cache *c, struct walk_slot *w)
{
	c->walk_bytes -= walk_bytes(&w->walk);
	cp_code_walk_free(&w->walk);
	w->used = 0;
}

/* The least recently used kept sweep, or NULL when none is kept. */
static struct walk_slot *lru_walk(struct cp_decode_cache *c)
{
	struct walk_slot *lru = NULL;

	for (size_t i = 0; i < CP_CODE_WALKS; i++)
		if (c->walks[i].used && (!lru || c->walks[i].used < lru->used))
			lru = &c->walks[i];
	return lru;
}

const struct cp_code_walk *cp_decode_cache__walk(struct cp_decode_cache *c,
						 const struct cp_decode_key *key, const __u8 *code,
						 size_t len)
{
	__u64 sum = code_sum(code, len);
	struct walk_slot *slot = NULL;
	struct cp_code_walk walk;

	for (size_t i = 0; i < CP_CODE_WALKS; i++) {
		struct walk_slot *w = &c->walks[i];

		if (!w->used || !same_key(&w->key, key))
			continue;
		if (w->walk.len == len && w->sum == sum) {
			w->used = ++c->clock;
			c->stats.walk_hits++;
			return &w->walk;
		}
		drop_walk(c, w); /* other bytes under the key now: the old sweep is of nothing */
	}
	if (cp_code_walk(code, len, &walk))
		return NULL;
	c->stats.walks++;
	/* room: the least recently used go until the bytes fit, then one more if no slot is free */
	while (c->walk_bytes + walk_bytes(&walk) > CP_CODE_WALK_BYTES && (slot = lru_walk(c)))
		drop_walk(c, slot);
	slot = NULL;
	for (size_t i = 0; i < CP_CODE_WALKS && !slot; i++)
		if (!c->walks[i].used)
			slot = &c->walks[i];
	if (!slot) {
		slot = lru_walk(c);
		drop_walk(c, slot);
	}
	slot->key = *key;
	slot->sum = sum;
	slot->walk = walk;
	slot->used = ++c->clock;
	c->walk_bytes += walk_bytes(&walk);
	return &slot->walk;
}

void cp_decode_cache__forget(struct cp_decode_cache *c, pid_t pid)
{
	for (size_t i = 0; i < CP_CODE_WALKS; i++)
		if (c->walks[i].used && !c->walks[i].key.dev && c->walks[i].key.ino == (__u64)pid)
			drop_walk(c, &c->walks[i]);
	/* most processes run only code of files: no look through the cache at their exit */
	if (!pid_marked(c, (__u64)pid))
		return;
	memset(c->by_pid_bits, 0, sizeof(c->by_pid_bits));
	for (size_t i = 0; i < c->nr_sets * CP_DECODE_WAYS; i++) {
		struct cp_decode_entry *e = &c->e[i];

		if (!e->used || e->key.dev)
			continue;
		if (e->key.ino == (__u64)pid) {
			e->used = 0;
			c->nr_by_pid--;
			continue;
		}
		mark_pid(c, e->key.ino);
	}
}

/* Reads @len bytes of @path at @off; an empty read (past the end) is an error here. */
static int read_at(const char *path, __u64 off, __u8 *buf, size_t len)
{
	ssize_t n = cp_allocator_read_code(path, off, buf, len);

	return n == 0 ? -EIO : (int)n;
}

/* @map's file, opened as target_file.h opens what a target names: a descriptor, or -errno. */
static int open_mapped(pid_t pid, const struct cp_map *map)
{
	struct cp_tf_where w;
	struct cp_tf_want want;
	enum cp_tf_refusal why;
	struct cp_tf_stat st;

	cp_map_target_file(map, NULL, pid, &w, &want);
	return cp_tf_open(&w, &want, &st, &why);
}

/*
 * @map's file from @c's held ones, or opened and held in the place of the
 * least recently read (*@held), or, with no @c or no inode to know it by,
 * opened for this read only. The opening, two path walks through /proc,
 * was most of a new instruction's cost: a program's functions are read one
 * by one, and a build's compilers each map the same files. What is held is
 * the inode the checks accepted: a file rewritten in place is read as it
 * is now, as a new opening would; one replaced has another inode.
 */
static int code_fd(struct cp_decode_cache *c, pid_t pid, const struct cp_map *map, bool *held)
{
	__u64 dev = (__u64)map->dev_major << 32 | map->dev_minor;
	struct code_file *f, *lru;
	int fd;

	*held = false;
	if (!c || !map->inode)
		return open_mapped(pid, map);
	lru = &c->files[0];
	for (f = c->files; f < c->files + CP_CODE_FILES; f++) {
		if (f->used && f->dev == dev && f->ino == map->inode) {
			f->used = ++c->files_clock;
			*held = true;
			return f->fd;
		}
		if (f->used < lru->used)
			lru = f;
	}
	fd = open_mapped(pid, map);
	if (fd < 0)
		return fd;
	if (lru->used)
		close(lru->fd);
	*lru = (struct code_file){
		.dev = dev, .ino = map->inode, .fd = fd, .used = ++c->files_clock};
	*held = true;
	return fd;
}

/*
 * Reads from the file @map holds (code_fd()): a device mapped executable
 * is never opened, and pread gives a short read, not SIGBUS, when the
 * target truncates the file.
 */
static int read_mapped(struct cp_decode_cache *c, pid_t pid, const struct cp_map *map, __u64 off,
		       __u8 *buf, size_t len)
{
	bool held;
	ssize_t n;
	int fd = code_fd(c, pid, map, &held);

	if (fd < 0)
		return fd;
	n = pread(fd, buf, len, (off_t)off);
	n = n < 0 ? -errno : n == 0 ? -EIO : n;
	if (!held)
		close(fd);
	return (int)n;
}

int cp_insn_read(struct cp_decode_cache *c, pid_t pid, const struct cp_map *map, __u64 ip,
		 __u8 *buf, size_t cap)
{
	char path[96];
	size_t len;
	int n;

	if (ip < map->start || ip >= map->end)
		return -EINVAL;
	len = map->end - ip < cap ? (size_t)(map->end - ip) : cap;
	if (map->kind == CP_MAP_FILE) {
		n = read_mapped(c, pid, map, map->offset + (ip - map->start), buf, len);
		if (n > 0)
			return n;
	}
	snprintf(path, sizeof(path), "/proc/%d/mem", (int)pid);
	return read_at(path, ip, buf, len);
}

int cp_decode_cache__get(struct cp_decode_cache *c, pid_t pid, const struct cp_maps *maps, __u64 ip,
			 struct cp_operand *out)
{
	const struct cp_map *map = cp_maps__find(maps, ip);
	__u8 code[CP_INSN_MAX_LEN];
	const struct cp_operand *hit;
	struct cp_decode_key key;
	int n;

	if (!map)
		return -ENOENT;
	cp_decode_key_of(pid, map, ip, &key);
	hit = cp_decode_cache__lookup(c, &key);
	if (hit) {
		*out = *hit;
		return 0;
	}
	n = cp_insn_read(c, pid, map, ip, code, sizeof(code));
	if (n <= 0) {
		memset(out, 0, sizeof(*out));
		out->status = CP_OPND_UNREADABLE;
		c->stats.unreadable++;
		return 0;
	}
	cp_decode_operand(code, (size_t)n, out);
	c->stats.decodes++;
	cp_decode_cache__insert(c, &key, out);
	return 0;
}

void cp_decode_cache__stats(const struct cp_decode_cache *c, struct cp_decode_cache_stats *out)
{
	*out = c->stats;
}
