// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer: per-process light snapshots of the mapped files (LRU), one
 * shared Dwfl per ELF file those map (LRU, found by device and inode), a
 * per-process Dwfl for what a shared file cannot answer, a (pid, ip) result
 * cache and the strings they all hand out. libdw reading itself is in
 * sym_dwarf.c; what may be shared is decided in sym_share.c; the Dwfls are
 * made over sealed copies in sym_dwfl.c.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <gelf.h>

#include "machine/proc_start.h"
#include "machine/target_file.h"
#include "symbols/elf_guard.h"
#include "symbols/own_vdso.h"
#include "symbols/parse_worker.h"
#include "objects/proc_maps.h"
#include "symbols/sym_dwarf.h"
#include "symbols/sym_dwfl.h"
#include "symbols/sym_server.h"
#include "symbols/sym_share.h"
#include "symbols/symbolizer.h"
#include "util/clock.h"
#include "util/hash.h"
#include "util/path.h"
#include "util/str_set.h"

#define CP_SYM_WAYS 4 /* result cache associativity */
/* The result cache's pid of a shared file's descriptions: no process has it */
#define CP_SYM_FILE_PID	   ((pid_t)-1)
#define CP_SYM_PID_BUCKETS 4096 /* counts of cached results by pid */

/*
 * One Dwfl: a process's full snapshot (the fallback), an ELF file resolved
 * offline (by path), or an ELF file processes map (shared, by its key).
 */
struct cp_sym_space {
	Dwfl *dwfl; /* NULL: slot free */
	pid_t pid;  /* 0 for a file */
	/* processes: the incarnation of @pid (struct cp_sym_snap); shared files: a number of
	 * the same count, new for each file opened, that its cached descriptions are under */
	__u32 inc;
	char *path;  /* files only: as opened */
	bool shared; /* found by @key, not by @path */
	struct cp_sym_file_key key;
	struct cp_sym_load *loads; /* shared files: the PT_LOAD segments */
	size_t nr_loads;
	__u64 bias; /* shared files: Dwfl address - link-time address */
	/* shared files of tenants (cp_elf_guard_info.tenant): described by the describe
	 * server (sym_server.h) from this copy of theirs, never by libdw here */
	bool remote;
	int remote_fd;
	struct cp_copy_key remote_key; /* ... and its file's content */
	bool remote_vetted;	       /* a worker judged it: libdw here may take it */
	bool remote_debug_looked;      /* its separate debug file looked for: */
	int remote_debug_fd;	       /* a copy of it sent with requests, -1: none */
	/* remote, found by @remote_key, never by @key: a tenant's file deleted or replaced
	 * since it was mapped, made from the kept copy of its content (space_for_module()) */
	bool by_content;
	__u64 copy_bytes; /* the pages of the sealed copies it holds (held_copy_bytes()) */
	__u64 last_use;
	__u64 snapshot_ns; /* when the maps were read (processes) */
	__u64 text_gen;	   /* the maps text's generation (cp_symbolizer__set_maps_text) */
};

/* How a shared file is opened. */
enum cp_sym_open {
	CP_SYM_OPEN_TARGET = 0, /* in the process's root, the mapping's very file (target_file.h) */
	CP_SYM_OPEN_NAMED,	/* a path a recording names, in ours */
	CP_SYM_OPEN_MOVED,	/* where --path-map says: the user's word, symlinks followed */
	CP_SYM_OPEN_VDSO,	/* our own [vdso] copy */
};

/* Where a mapping's file is opened to be shared. */
struct cp_sym_share {
	const char *open_path; /* the mapped path, or a copy; NULL: not shared (the fallback) */
	struct cp_sym_file_key key;
	enum cp_sym_open how;
};

/*
 * A process's light snapshot: its maps, and per mapping how its file is
 * shared. A process is its pid and its incarnation: a number of this
 * symbolizer's, new for each process seen with that pid (after an exit
 * record, or when /proc shows a process that started later). Its results
 * are cached under both.
 */
struct cp_sym_snap {
	pid_t pid; /* 0: slot free */
	__u32 inc;
	bool exited;	   /* kept for its results and late samples, never for a new process */
	__u64 start_ticks; /* its starttime (machine/proc_start.h): who it is; 0: unknown */
	__u64 start_ns;	   /* ... on the records' clock */
	struct cp_maps *maps;
	struct cp_sym_share *share; /* one per mapping of maps */
	__u64 last_use;
	__u64 snapshot_ns;  /* when the maps were read */
	__u64 read_cost_ns; /* ... and how long that took (cp_maps_refresh_due()) */
	__u64 text_gen;	    /* the maps text's generation */
	__u64 bytes;	    /* the heap it holds (maps and shares), in snap_bytes */
};

struct cp_sym_key {
	__u64 ip;
	__u64 stamp; /* last use; 0: empty */
	pid_t pid;
	__u32 inc; /* the incarnation of @pid that sampled @ip */
};

struct cp_symbolizer {
	struct cp_sym_space *spaces;
	size_t max_spaces;
	struct cp_sym_snap *snaps;
	size_t max_snaps;
	size_t nr_exited;	 /* snapshots of exited processes held */
	__u64 snap_bytes;	 /* the snapshots' bytes held */
	__u64 max_snap_bytes;	 /* ... at most (snaps_fit()) */
	__u32 last_inc;		 /* the last incarnation given */
	struct cp_sym_key *keys; /* nr_sets * CP_SYM_WAYS */
	/* results cached per pid bucket (pid % CP_SYM_PID_BUCKETS), to skip most drops' look */
	__u32 by_pid[CP_SYM_PID_BUCKETS];
	struct cp_symbol_info *results;
	size_t nr_sets; /* power of two */
	struct cp_str_set strings;
	__u64 clock;
	struct cp_symbolizer_stats stats;
	size_t max_string_bytes;   /* interned strings beyond this are flushed */
	cp_maps_text_fn maps_text; /* NULL: /proc/PID/maps */
	void *maps_text_ctx;
	bool replay;			    /* snapshots only when told (cp_symbolizer__refresh) */
	const struct cp_path_map *path_map; /* where named files are now; NULL: as named */
	char *server_strings; /* a describe server's answer's strings; NULL: none asked yet */
	int vdso_fd;	      /* our own [vdso] as a file (own_vdso.h); -1: none yet */
	size_t vdso_len;
	struct cp_sym_file_key vdso_key; /* its key, taken once: a sealed copy of ours */
	bool vdso_tried;
};

/* ---- strings ---- */

/* Makes every string of @info the symbolizer's own, so it outlives the Dwfl. */
static int intern_info(struct cp_symbolizer *s, struct cp_symbol_info *info)
{
	struct cp_str_set *t = &s->strings;
	int err = 0;

	info->module = cp_str_set_intern(t, info->module, &err);
	info->function = cp_str_set_intern(t, info->function, &err);
	info->file = cp_str_set_intern(t, info->file, &err);
	info->nearest = cp_str_set_intern(t, info->nearest, &err);
	for (__u32 i = 0; i < info->nr_inlined; i++) {
		info->inlined[i].function = cp_str_set_intern(t, info->inlined[i].function, &err);
		info->inlined[i].file = cp_str_set_intern(t, info->inlined[i].file, &err);
	}
	s->stats.string_bytes = t->bytes;
	return err;
}

/* ---- result cache ---- */

static size_t set_of(const struct cp_symbolizer *s, pid_t pid, __u64 ip)
{
	return cp_hash_slot(cp_hash64(ip ^ ((__u64)(__u32)pid << 40)), 32, s->nr_sets - 1);
}

/*
 * The result cached for @ip of incarnation @inc of @pid; with @inc 0, of
 * the latest incarnation that has one (what a report asks: the process of
 * that pid that sampled @ip last).
 */
static const struct cp_symbol_info *cache_find(struct cp_symbolizer *s, pid_t pid, __u32 inc,
					       __u64 ip)
{
	size_t base = set_of(s, pid, ip) * CP_SYM_WAYS, found = 0;
	struct cp_sym_key *k = NULL;

	for (size_t w = base; w < base + CP_SYM_WAYS; w++) {
		struct cp_sym_key *c = &s->keys[w];

		if (c->stamp && c->ip == ip && c->pid == pid && (!inc || c->inc == inc) &&
		    (!k || c->inc > k->inc)) {
			k = c;
			found = w;
		}
	}
	if (!k)
		return NULL;
	k->stamp = ++s->clock;
	return &s->results[found];
}

static void cache_put(struct cp_symbolizer *s, pid_t pid, __u32 inc, __u64 ip,
		      const struct cp_symbol_info *info)
{
	size_t base = set_of(s, pid, ip) * CP_SYM_WAYS, victim = base;

	for (size_t w = base; w < base + CP_SYM_WAYS; w++) {
		if (!s->keys[w].stamp) {
			victim = w;
			break;
		}
		if (s->keys[w].stamp < s->keys[victim].stamp)
			victim = w;
	}
	if (s->keys[victim].stamp)
		s->by_pid[(__u32)s->keys[victim].pid % CP_SYM_PID_BUCKETS]--;
	s->by_pid[(__u32)pid % CP_SYM_PID_BUCKETS]++;
	s->keys[victim] =
		(struct cp_sym_key){.ip = ip, .pid = pid, .inc = inc, .stamp = ++s->clock};
	s->results[victim] = *info;
}

/*
 * @inc 0: every incarnation. The keys are scanned only when the pid's
 * bucket holds results: a new process, which has none, costs no look
 * through the 16384 keys (once per exec under -a).
 */
static void cache_drop_pid(struct cp_symbolizer *s, pid_t pid, __u32 inc)
{
	__u32 *n = &s->by_pid[(__u32)pid % CP_SYM_PID_BUCKETS];

	for (size_t w = 0; *n && w < s->nr_sets * CP_SYM_WAYS; w++) {
		if (s->keys[w].stamp && s->keys[w].pid == pid && (!inc || s->keys[w].inc == inc)) {
			s->keys[w].stamp = 0;
			(*n)--;
		}
	}
}

/*
 * Empties the interned strings and, as its results point into them, the
 * result cache: what a symbolizer of a long run does instead of growing.
 */
static void flush_strings(struct cp_symbolizer *s)
{
	cp_str_set_free(&s->strings);
	memset(s->keys, 0, s->nr_sets * CP_SYM_WAYS * sizeof(*s->keys));
	memset(s->by_pid, 0, sizeof(s->by_pid));
	s->stats.string_bytes = 0;
	s->stats.string_flushes++;
}

/* ---- Dwfls ---- */

/*
 * @pid's modules in a new Dwfl (cp_sym_dwfl_process()), from the maps text
 * the caller gave (a recording) or /proc's, read under its byte cap. A live
 * run that records gives the text it read from /proc just now: its files
 * are the process's, opened and judged as without --record (a tenant's left
 * to the describe server); only a replay's are files a recording names.
 */
static int snapshot(struct cp_symbolizer *s, pid_t pid, const struct cp_maps *maps, Dwfl **out,
		    __u64 *gen)
{
	struct cp_maps_how how;
	const char *text;
	char *own = NULL;
	size_t len;
	int err;

	if (s->maps_text) {
		if (s->maps_text(s->maps_text_ctx, pid, &text, &len, gen, &how) || !len)
			return -ESRCH;
	} else {
		err = cp_maps_read_text(NULL, pid, &own, &len, &how);
		if (err)
			return err == -ENOENT ? -ESRCH : err;
		text = own;
	}
	err = cp_sym_dwfl_process(s->replay ? 0 : pid, text, len, maps, s->path_map, out);
	free(own);
	return err;
}

static void space_clear(struct cp_sym_space *sp)
{
	if (sp->dwfl) {
		cp_sym_release(sp->dwfl);
		dwfl_end(sp->dwfl);
	}
	if (sp->remote)
		close(sp->remote_fd);
	if (sp->remote_debug_looked && sp->remote_debug_fd >= 0)
		close(sp->remote_debug_fd);
	free(sp->path);
	free(sp->loads);
	memset(sp, 0, sizeof(*sp));
}

static struct cp_sym_space *space_find(struct cp_symbolizer *s, pid_t pid, __u32 inc,
				       const char *path)
{
	for (size_t i = 0; i < s->max_spaces; i++) {
		struct cp_sym_space *sp = &s->spaces[i];

		if (sp->dwfl && sp->pid == pid && sp->inc == inc && !sp->shared &&
		    (pid || !strcmp(sp->path, path))) {
			sp->last_use = ++s->clock;
			return sp;
		}
	}
	return NULL;
}

static __u64 held_copy_bytes(const struct cp_symbolizer *s)
{
	__u64 sum = 0;

	for (size_t i = 0; i < s->max_spaces; i++)
		if (s->spaces[i].dwfl)
			sum += s->spaces[i].copy_bytes;
	return sum;
}

/*
 * Room for a new space holding @bytes of copies: the least recently used
 * spaces that hold copies are let go until the copies all spaces hold fit
 * half the kept copies' bound (cp_tf_kept_max_bytes(): a quarter of
 * --max-memory). A Dwfl holds its file's copy as long as it lives, whatever
 * the kept copies let go, so without this bound a process mapping many big
 * files held them all, up to the memory limit, where nothing new could be
 * copied and the describe server found no room to start. Mostly the same
 * copies as the kept ones and the servers' (sym_serve.c, another quarter);
 * at worst other ones, the whole limit, which the memory reading sees.
 * @keep: a space the caller holds, never let go.
 */
static void room_for_copies(struct cp_symbolizer *s, __u64 bytes, const struct cp_sym_space *keep)
{
	__u64 max = cp_tf_kept_max_bytes() / 2, held = held_copy_bytes(s);

	while (held && held + bytes > max) {
		struct cp_sym_space *victim = NULL;

		for (size_t i = 0; i < s->max_spaces; i++) {
			struct cp_sym_space *sp = &s->spaces[i];

			if (sp != keep && sp->dwfl && sp->copy_bytes &&
			    (!victim || sp->last_use < victim->last_use))
				victim = sp;
		}
		if (!victim)
			break;
		held -= victim->copy_bytes;
		space_clear(victim);
		s->stats.evictions++;
		s->stats.copy_evictions++;
	}
}

/* A free slot, evicting the least recently used Dwfl when all are taken. */
static struct cp_sym_space *space_slot(struct cp_symbolizer *s)
{
	struct cp_sym_space *victim = &s->spaces[0];

	for (size_t i = 0; i < s->max_spaces; i++) {
		if (!s->spaces[i].dwfl)
			return &s->spaces[i];
		if (s->spaces[i].last_use < victim->last_use)
			victim = &s->spaces[i];
	}
	/* its cached results stay: still right for that snapshot */
	space_clear(victim);
	s->stats.evictions++;
	return victim;
}

/* The fallback: @sn's maps reported into a Dwfl of its own, every module opened. */
static int space_for_pid(struct cp_symbolizer *s, const struct cp_sym_snap *sn,
			 struct cp_sym_space **out)
{
	struct cp_sym_space *sp = space_find(s, sn->pid, sn->inc, NULL);
	Dwfl *dwfl;
	__u64 gen = 0;
	int err;

	if (sp) {
		*out = sp;
		return 0;
	}
	err = snapshot(s, sn->pid, sn->maps, &dwfl, &gen);
	if (err)
		return err;
	s->stats.snapshots++;
	s->stats.fallbacks++;
	sp = space_slot(s);
	*sp = (struct cp_sym_space){
		.dwfl = dwfl,
		.pid = sn->pid,
		.inc = sn->inc,
		.last_use = ++s->clock,
		.snapshot_ns = cp_now_ns(),
		.text_gen = gen,
	};
	*out = sp;
	return 0;
}

static void drop_fallback(struct cp_symbolizer *s, pid_t pid, __u32 inc)
{
	struct cp_sym_space *sp = space_find(s, pid, inc, NULL);

	if (sp)
		space_clear(sp);
}

/* The PT_LOAD segments of @mod's ELF file. */
static int file_loads(Dwfl_Module *mod, struct cp_sym_space *sp)
{
	GElf_Addr bias;
	Elf *elf = dwfl_module_getelf(mod, &bias);
	size_t phnum;

	if (!elf || elf_getphdrnum(elf, &phnum))
		return -ENOEXEC;
	sp->loads = calloc(phnum ? phnum : 1, sizeof(*sp->loads));
	if (!sp->loads)
		return -ENOMEM;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_LOAD)
			sp->loads[sp->nr_loads++] = (struct cp_sym_load){
				.offset = ph.p_offset,
				.filesz = ph.p_filesz,
				.vaddr = ph.p_vaddr,
			};
	}
	sp->bias = bias;
	return sp->nr_loads ? 0 : -ENOEXEC;
}

/*
 * The descriptor for @sh's file, mapped by @m in @pid: a sealed, checked
 * copy; @info says whether it is a tenant's.
 */
static int open_shared(const struct cp_symbolizer *s, pid_t pid, const struct cp_map *m,
		       const struct cp_sym_share *sh, struct cp_elf_guard_info *info)
{
	struct cp_tf_where w;
	struct cp_tf_want want;
	enum cp_tf_refusal why;
	int fd;

	*info = (struct cp_elf_guard_info){0};
	cp_map_target_file(m, NULL, pid, &w, &want);
	switch (sh->how) {
	case CP_SYM_OPEN_VDSO:
		fd = dup(s->vdso_fd);
		return fd < 0 ? -errno : fd;
	case CP_SYM_OPEN_NAMED:
	case CP_SYM_OPEN_MOVED:
		return cp_sym_open_named(sh->open_path, sh->how == CP_SYM_OPEN_MOVED);
	default:
		/* a tenant's file the server alone parses: no worker's vet first */
		return cp_elf_guard_file(&w, &want, cp_sym_server_usable(), &why, info);
	}
}

/*
 * A tenant's file (@info) is described by the describe server: @sp keeps
 * a copy of @fd for it, and its content's key (else the copy's own).
 */
static int keep_remote(struct cp_sym_space *sp, int fd, const struct cp_elf_guard_info *info)
{
	if (!info->tenant)
		return 0;
	sp->remote_key = info->key;
	sp->remote_vetted = info->vetted;
	if (!sp->remote_key.ino && cp_tf_key(fd, &sp->remote_key))
		return -EBADF;
	sp->remote_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	if (sp->remote_fd < 0)
		return -errno;
	sp->remote = true;
	return 0;
}

/*
 * 0 when the file at @fd may be a shared space (cp_elf_loadable()), else
 * -ENOEXEC: libdwfl would relocate a .o here at its first use. Not counted:
 * the process's own Dwfl, which answers then, refuses it counted.
 */
static int loadable_fd(int fd)
{
	Elf *elf = cp_elf_guard_elf(fd);
	bool ok = !elf || cp_elf_loadable(elf);

	if (elf)
		elf_end(elf);
	return ok ? 0 : -ENOEXEC;
}

/* The shared space held for the file of @key; NULL when none is. */
static struct cp_sym_space *shared_space(struct cp_symbolizer *s, const struct cp_sym_file_key *key)
{
	for (size_t i = 0; i < s->max_spaces; i++) {
		struct cp_sym_space *sp = &s->spaces[i];

		if (sp->dwfl && sp->shared && !sp->by_content && cp_sym_key_equal(&sp->key, key))
			return sp;
	}
	return NULL;
}

/*
 * A file space over @fd (taken over, a copy of the file opened as @path;
 * @info: whether a tenant's), made from @tmp's settings into a slot.
 */
static int space_of_copy(struct cp_symbolizer *s, struct cp_sym_space *tmp, int fd,
			 const struct cp_elf_guard_info *info, const char *path,
			 struct cp_sym_space **out)
{
	Dwfl_Module *mod;
	int err;

	if (fd < 0)
		return fd;
	tmp->copy_bytes = cp_tf_copy_bytes(fd);
	err = loadable_fd(fd);
	err = err ? err : keep_remote(tmp, fd, info);
	if (err) {
		close(fd);
		return err;
	}
	/* libdw reads its ELF headers here (segments, build-id), its DWARF only if not remote */
	err = cp_sym_dwfl_file(path, fd, &tmp->dwfl, &mod);
	if (err) {
		space_clear(tmp);
		return err;
	}
	tmp->path = strdup(path);
	err = tmp->path ? file_loads(mod, tmp) : -ENOMEM;
	if (err) {
		space_clear(tmp);
		return err;
	}
	tmp->inc = ++s->last_inc;
	s->stats.file_spaces++;
	room_for_copies(s, tmp->copy_bytes, NULL);
	*out = space_slot(s);
	tmp->last_use = ++s->clock;
	**out = *tmp;
	return 0;
}

/* The shared space of @m's file: one per file, whichever process maps it. */
static int space_for_shared(struct cp_symbolizer *s, pid_t pid, const struct cp_map *map,
			    const struct cp_sym_share *m, struct cp_sym_space **out)
{
	struct cp_sym_space tmp = {.shared = true, .key = m->key};
	struct cp_elf_guard_info info;
	int fd;

	*out = shared_space(s, &m->key);
	if (*out) {
		(*out)->last_use = ++s->clock;
		return 0;
	}
	fd = open_shared(s, pid, map, m, &info);
	return space_of_copy(s, &tmp, fd, &info, m->open_path, out);
}

/*
 * The file space of @mod, a module @sn's own Dwfl holds without its ELF
 * (cp_sym_remote(): a tenant's file the describe server has, deleted or
 * replaced since @m mapped it, which no shared space finds): made from the
 * kept copy of the content find_elf judged (cp_sym_remote_key()), taken now,
 * none held per module; else, while the process lives, from a copy of the
 * mapped file made again, if it is still that content. -ENOENT when neither
 * can be had (the process exited, the copy was let go): the module's
 * addresses are named by the module only. -EAGAIN while the file waits for
 * the workers' budget.
 */
static int space_for_module(struct cp_symbolizer *s, const struct cp_sym_snap *sn,
			    const struct cp_map *m, Dwfl_Module *mod, struct cp_sym_space **out)
{
	struct cp_sym_space tmp = {.shared = true, .by_content = true, .key = cp_sym_map_key(m)};
	struct cp_elf_guard_info info = {0};
	enum cp_tf_refusal why;
	struct cp_tf_where w;
	struct cp_tf_want want;
	struct cp_copy_key key;
	int fd;

	if (!cp_sym_remote_key(mod, &key))
		return -ENOENT;
	for (size_t i = 0; i < s->max_spaces; i++) {
		struct cp_sym_space *sp = &s->spaces[i];

		if (sp->dwfl && sp->by_content && cp_copy_key_equal(&sp->remote_key, &key)) {
			sp->last_use = ++s->clock;
			*out = sp;
			return 0;
		}
	}
	/* a kept copy of a content the guard refused is not for the server either */
	if (cp_elf_guard_refused(&key, &why))
		return -ENOENT;
	fd = cp_tf_kept_copy(&key);
	if (fd < 0 && !sn->exited && !s->replay) {
		cp_map_target_file(m, NULL, sn->pid, &w, &want);
		fd = cp_elf_guard_file(&w, &want, true, &why, &info);
		/* another content since, or one a worker vetted: not the module judged */
		if (fd >= 0 &&
		    (!info.tenant || info.vetted || !cp_copy_key_equal(&info.key, &key))) {
			close(fd);
			fd = -ENOENT;
		}
	}
	if (fd < 0)
		return fd == -EAGAIN ? fd : -ENOENT;
	info = (struct cp_elf_guard_info){.tenant = true, .key = key};
	return space_of_copy(s, &tmp, fd, &info, m->path, out);
}

/* ---- light snapshots ---- */

static void snap_clear(struct cp_symbolizer *s, struct cp_sym_snap *sn)
{
	s->snap_bytes -= sn->bytes;
	/* an unshared mapping's (anonymous, mostly) costs no call: see free_table_slots() */
	for (size_t i = 0; sn->share && i < sn->maps->nr; i++)
		if (sn->share[i].open_path && sn->share[i].open_path != sn->maps->maps[i].path)
			free((char *)sn->share[i].open_path);
	free(sn->share);
	cp_maps__free(sn->maps);
	memset(sn, 0, sizeof(*sn));
}

/*
 * The snapshot of the process that holds @pid now; with @exited, of the
 * latest exited one instead; with @any, the live one, else the latest
 * exited one.
 */
enum cp_sym_which { CP_SYM_LIVE, CP_SYM_EXITED, CP_SYM_ANY };

static struct cp_sym_snap *snap_find(struct cp_symbolizer *s, pid_t pid, enum cp_sym_which which)
{
	struct cp_sym_snap *found = NULL;

	for (size_t i = 0; i < s->max_snaps; i++) {
		struct cp_sym_snap *sn = &s->snaps[i];

		if (sn->pid != pid || (sn->exited ? which == CP_SYM_LIVE : which == CP_SYM_EXITED))
			continue;
		if (!sn->exited) {
			found = sn;
			break;
		}
		if (!found || sn->inc > found->inc)
			found = sn;
	}
	if (found)
		found->last_use = ++s->clock;
	return found;
}

/* Drops @sn's snapshot and fallback Dwfl. */
static void snap_drop(struct cp_symbolizer *s, struct cp_sym_snap *sn)
{
	drop_fallback(s, sn->pid, sn->inc);
	s->nr_exited -= sn->exited;
	snap_clear(s, sn);
}

/* @sn's process is gone: kept for its results, never found for a process that takes its pid. */
static void snap_exited(struct cp_symbolizer *s, struct cp_sym_snap *sn)
{
	struct cp_sym_snap *lru;

	sn->exited = true;
	s->nr_exited++;
	while (s->nr_exited > CP_SYM_MAX_EXITED) {
		lru = NULL;
		for (size_t i = 0; i < s->max_snaps; i++)
			if (s->snaps[i].exited && (!lru || s->snaps[i].last_use < lru->last_use))
				lru = &s->snaps[i];
		snap_drop(s, lru);
		s->stats.evictions++;
		s->stats.snapshot_evictions++;
	}
}

/*
 * The snapshots' bytes within their cap: the least recently used others
 * than @keep (just taken) let go, live or exited, until they fit or @keep
 * is alone. A tenant's maps file of 16 MiB is one snapshot of ~16 MiB.
 */
static void snaps_fit(struct cp_symbolizer *s, const struct cp_sym_snap *keep)
{
	while (s->snap_bytes > s->max_snap_bytes) {
		struct cp_sym_snap *lru = NULL;

		for (size_t i = 0; i < s->max_snaps; i++) {
			struct cp_sym_snap *sn = &s->snaps[i];

			if (sn != keep && sn->pid && (!lru || sn->last_use < lru->last_use))
				lru = sn;
		}
		if (!lru)
			return;
		snap_drop(s, lru);
		s->stats.evictions++;
		s->stats.snapshot_evictions++;
		s->stats.snap_byte_evictions++;
	}
}

/* A free snapshot slot (last used at 0), else the least recently used process's. */
static struct cp_sym_snap *snap_slot(struct cp_symbolizer *s)
{
	struct cp_sym_snap *victim = &s->snaps[0];

	for (size_t i = 1; i < s->max_snaps; i++)
		if (s->snaps[i].last_use < victim->last_use)
			victim = &s->snaps[i];
	if (victim->pid) {
		snap_drop(s, victim);
		s->stats.evictions++;
		s->stats.snapshot_evictions++;
	}
	return victim;
}

/*
 * @pid's maps, parsed, with how they were read: from the caller's text or
 * /proc. -ESRCH: gone.
 */
static int read_maps_text(struct cp_symbolizer *s, pid_t pid, struct cp_maps **out, __u64 *gen)
{
	struct cp_maps_how how;
	const char *text;
	size_t len;
	int err;

	if (s->maps_text) {
		if (s->maps_text(s->maps_text_ctx, pid, &text, &len, gen, &how) || !len)
			return -ESRCH;
		err = cp_maps__parse(text, len, out);
		if (!err)
			(*out)->how = how;
		return err;
	}
	err = cp_maps__read(NULL, pid, out);
	return err == -ENOENT ? -ESRCH : err;
}

/*
 * As read_maps_text(), with the start of the process read (@start: its
 * starttime; 0 in a replay, or when unknown): the same before and after, or
 * the pid changed hands meanwhile (-ESRCH). @anchored: the caller knows of
 * a process of @pid that lived before the read (a record made before it, a
 * snapshot taken before it) and checks @start against it: the start read
 * once after the maps names their process then, for one that lived before
 * the read and lives after it lived through it (a pid is not reused while
 * its process lives). An exec's maps are held for the loop turn, read
 * before this call: a start read before them bracketed nothing, and was one
 * /proc/PID/stat read of two per exec.
 */
static int read_maps(struct cp_symbolizer *s, pid_t pid, bool anchored, struct cp_maps **out,
		     __u64 *gen, __u64 *start)
{
	__u64 after = 0;
	int err;

	*start = 0;
	if (anchored && !s->replay) {
		err = read_maps_text(s, pid, out, gen);
		/*
		 * gone since the read (a short process: its exec's maps were held
		 * while it lived): unchecked, as when the start before could not
		 * be read
		 */
		if (!err && cp_proc_starttime(pid, start))
			*start = 0;
		return err;
	}
	if (!s->replay && cp_proc_starttime(pid, start))
		*start = 0;
	err = read_maps_text(s, pid, out, gen);
	if (err || !*start)
		return err;
	if (cp_proc_starttime(pid, &after) || after != *start) {
		cp_maps__free(*out);
		*out = NULL;
		return -ESRCH;
	}
	return 0;
}

/* Whether @path is a regular file; its key in @key then. */
static bool file_key(const char *path, struct cp_sym_file_key *key)
{
	struct stat st;

	if (stat(path, &st) || !S_ISREG(st.st_mode))
		return false;
	*key = cp_sym_stat_key(st.st_dev, st.st_ino);
	return true;
}

/*
 * A live process's [vdso], when it is the size of ours: the same kernel
 * image, read from our copy (the target's own may be gone by the lookup).
 * NULL for another ABI's (a 32-bit process: other size), and whenever maps
 * come as text: a replay cannot know the recording machine's [vdso], and a
 * recording run must report what its replay will.
 */
static const char *own_vdso_path(struct cp_symbolizer *s, const struct cp_map *m, char *buf,
				 size_t sz, struct cp_sym_file_key *key)
{
	if (s->maps_text)
		return NULL;
	if (!s->vdso_tried) {
		s->vdso_tried = true;
		s->vdso_fd = cp_own_vdso_memfd(&s->vdso_len);
		if (s->vdso_fd >= 0 &&
		    (snprintf(buf, sz, "/proc/self/fd/%d", s->vdso_fd) >= (int)sz ||
		     !file_key(buf, &s->vdso_key))) {
			close(s->vdso_fd);
			s->vdso_fd = -1;
		}
	}
	if (s->vdso_fd < 0 || m->end - m->start != s->vdso_len ||
	    snprintf(buf, sz, "/proc/self/fd/%d", s->vdso_fd) >= (int)sz)
		return NULL;
	*key = s->vdso_key;
	return buf;
}

/*
 * Where @m's file is opened to be shared, in @buf, and its key and how in
 * @sh; NULL when it is not shared. A recording's files are where
 * --path-map says, or at their paths; a live process's file must be the
 * very file it maps (device and inode), found as target_file.h finds it.
 */
static const char *share_path(struct cp_symbolizer *s, pid_t pid, const struct cp_map *m, char *buf,
			      size_t sz, struct cp_sym_share *sh)
{
	struct cp_tf_where w;
	struct cp_tf_want want;
	struct cp_copy_key ck;
	struct cp_tf_stat st;
	const char *path = m->path;

	if (m->kind == CP_MAP_VDSO) {
		sh->how = CP_SYM_OPEN_VDSO;
		return own_vdso_path(s, m, buf, sz, &sh->key);
	}
	if (!cp_sym_map_shareable(m))
		return NULL;
	if (s->path_map)
		path = cp_path_map_apply(s->path_map, m->path, buf, sz);
	if (!path)
		return NULL;
	/* the user said where it is; a recording names another machine's inodes */
	if (path != m->path || s->replay) {
		sh->how = path != m->path ? CP_SYM_OPEN_MOVED : CP_SYM_OPEN_NAMED;
		return file_key(path, &sh->key) ? path : NULL;
	}
	sh->how = CP_SYM_OPEN_TARGET;
	sh->key = cp_sym_map_key(m);
	/*
	 * A file whose space is held is found by its key alone, never opened
	 * again: a look at it would change nothing (every process of a build
	 * maps libc; three opens and fstats an exec went to it). Else a look
	 * only (nothing read): the file is opened again, and judged again, when
	 * used.
	 */
	if (shared_space(s, &sh->key))
		return path;
	cp_map_target_file(m, NULL, pid, &w, &want);
	/* found lately by the same maps line (target_file.h): judged then */
	if (cp_tf_seen(&want, &st, &ck))
		return path;
	if (cp_tf_check(&w, &want) != CP_TF_OK)
		return NULL;
	return path;
}

/*
 * Makes @maps (taken over) @sn's, each executable mapping of a file found
 * again on disk to be shared. Sets @unshared when one is not (deleted,
 * replaced): the fallback should be taken while the process lives.
 */
static int snap_fill(struct cp_symbolizer *s, struct cp_sym_snap *sn, pid_t pid,
		     struct cp_maps *maps, bool *unshared)
{
	char buf[PATH_MAX + 32];

	*unshared = false;
	sn->maps = maps;
	sn->share = calloc(maps->nr ? maps->nr : 1, sizeof(*sn->share));
	if (!sn->share)
		return -ENOMEM;
	sn->pid = pid;
	for (size_t i = 0; i < maps->nr; i++) {
		const struct cp_map *m = &maps->maps[i];
		const char *path = share_path(s, pid, m, buf, sizeof(buf), &sn->share[i]);

		if (!path)
			*unshared |= m->kind == CP_MAP_FILE && (m->prot & CP_MAP_EXEC);
		else if (!(sn->share[i].open_path = path == m->path ? path : strdup(path)))
			return -ENOMEM;
	}
	return 0;
}

/*
 * Replaces @pid's snapshot (@*snp, or a new slot when NULL) with @maps
 * (taken over); the fallback Dwfl goes with the old one. A live process
 * with a mapping not shared gets its fallback now, while it is there to read.
 */
static int snap_take(struct cp_symbolizer *s, struct cp_sym_snap **snp, pid_t pid,
		     struct cp_maps *maps, __u64 gen, __u64 start)
{
	struct cp_sym_snap *sn = *snp;
	struct cp_sym_space *sp;
	bool unshared;
	__u32 inc;
	int err;

	if (sn) {
		inc = sn->inc;
		snap_drop(s, sn);
	} else {
		sn = snap_slot(s);
		inc = ++s->last_inc;
	}
	err = snap_fill(s, sn, pid, maps, &unshared);
	if (err) {
		snap_clear(s, sn);
		return err;
	}
	sn->bytes = maps->bytes + maps->nr * sizeof(*sn->share);
	s->snap_bytes += sn->bytes;
	snaps_fit(s, sn);
	sn->inc = inc;
	sn->start_ticks = start;
	sn->start_ns = start ? cp_proc_ticks_mono_ns(start) : 0;
	sn->last_use = ++s->clock;
	sn->snapshot_ns = cp_now_ns();
	sn->read_cost_ns = maps->how.cost_ns;
	sn->text_gen = gen;
	s->stats.snapshots++;
	if (unshared && !s->replay)
		space_for_pid(s, sn, &sp); /* failing: the process is gone already */
	*snp = sn;
	return 0;
}

/*
 * The snapshot of the process holding @pid now, taken if there is none.
 * -ESRCH: none holds it. A snapshot found for a process that started
 * after @when_ns (a record's time; 0: no check) is another's than the
 * record's: -ESRCH too, but it is kept for that other process.
 */
static int snap_for_pid(struct cp_symbolizer *s, pid_t pid, __u64 when_ns, struct cp_sym_snap **out)
{
	struct cp_maps *maps;
	__u64 gen = 0, start;
	int err;

	*out = snap_find(s, pid, CP_SYM_LIVE);
	if (!*out) {
		/* a replay learns of a new process from its maps section, never by asking */
		if (s->replay && snap_find(s, pid, CP_SYM_EXITED))
			return -ESRCH;
		err = read_maps(s, pid, false, &maps, &gen, &start);
		if (!err)
			err = snap_take(s, out, pid, maps, gen, start);
		if (err)
			return err;
	}
	return cp_proc_started_after((*out)->start_ns, when_ns) ? -ESRCH : 0;
}

/*
 * Whether @ip, in no module of @sn, is now in a file mapping: the mark of a
 * dlopen since. JIT code and other anonymous memory never is, so a JIT
 * runtime does not make us re-read its maps over and over. Returns the new
 * maps then (and their generation in @gen), else NULL.
 */
static struct cp_maps *mapped_since(struct cp_symbolizer *s, struct cp_sym_snap *sn, __u64 ip,
				    __u64 *gen)
{
	const struct cp_map *m;
	struct cp_maps *maps;
	__u64 start;
	int err;

	/* a replay's clock is not the run's: it re-snapshots where the run did */
	if (s->replay)
		return NULL;
	if (!cp_maps_may_refresh(sn->maps ? &sn->maps->how : NULL, sn->snapshot_ns,
				 sn->read_cost_ns, CP_SYM_REFRESH_MIN_MS * 1000000ull))
		return NULL;
	sn->snapshot_ns = cp_now_ns();
	*gen = sn->text_gen;
	err = read_maps(s, sn->pid, sn->start_ticks != 0, &maps, gen, &start);
	if (err)
		return NULL;
	sn->read_cost_ns = maps->how.cost_ns;
	/* another process holds the pid now (or its start is unknown): its maps are not @sn's */
	if (sn->start_ticks && start != sn->start_ticks) {
		cp_maps__free(maps);
		return NULL;
	}
	m = s->maps_text && *gen == sn->text_gen ? NULL : cp_maps__find(maps, ip);
	if (m && m->kind == CP_MAP_FILE && (m->prot & CP_MAP_EXEC))
		return maps;
	cp_maps__free(maps);
	return NULL;
}

/* ---- API ---- */

static size_t pow2_at_least(size_t n)
{
	size_t p = 1;

	while (p < n)
		p <<= 1;
	return p;
}

struct cp_symbolizer *cp_symbolizer__new(size_t max_processes, size_t max_results)
{
	struct cp_symbolizer *s = calloc(1, sizeof(*s));

	if (!s)
		return NULL;
	s->max_spaces = max_processes ? max_processes : CP_SYM_MAX_PROCESSES;
	s->max_string_bytes = CP_SYM_MAX_STRING_BYTES;
	max_results = max_results ? max_results : CP_SYM_MAX_RESULTS;
	s->nr_sets = pow2_at_least((max_results + CP_SYM_WAYS - 1) / CP_SYM_WAYS);
	s->max_snaps = s->max_spaces;
	s->max_snap_bytes = CP_MAX_MAPS_KEPT_BYTES;
	s->vdso_fd = -1;
	s->spaces = calloc(s->max_spaces, sizeof(*s->spaces));
	s->snaps = calloc(s->max_snaps, sizeof(*s->snaps));
	s->keys = calloc(s->nr_sets * CP_SYM_WAYS, sizeof(*s->keys));
	s->results = malloc(s->nr_sets * CP_SYM_WAYS * sizeof(*s->results));
	if (!s->spaces || !s->snaps || !s->keys || !s->results) {
		cp_symbolizer__free(s);
		return NULL;
	}
	return s;
}

void cp_symbolizer__free(struct cp_symbolizer *s)
{
	if (!s)
		return;
	for (size_t i = 0; s->spaces && i < s->max_spaces; i++)
		space_clear(&s->spaces[i]);
	for (size_t i = 0; s->snaps && i < s->max_snaps; i++)
		snap_clear(s, &s->snaps[i]);
	if (s->vdso_fd >= 0)
		close(s->vdso_fd);
	free(s->spaces);
	free(s->snaps);
	free(s->keys);
	free(s->results);
	free(s->server_strings);
	cp_str_set_free(&s->strings);
	free(s);
}

static int describe(struct cp_symbolizer *s, Dwfl *dwfl, __u64 ip, struct cp_symbol_info *out)
{
	Dwfl_Module *mod = dwfl_addrmodule(dwfl, ip);

	if (!mod) {
		memset(out, 0, sizeof(*out));
		out->ip = ip;
		return -ENOENT;
	}
	cp_sym_describe(mod, ip, out);
	return intern_info(s, out);
}

/*
 * Whether remote file @fs's separate debug file was looked for, now if
 * not yet (the server opens no path: it gets a copy with each request);
 * false while it waits for its parse worker.
 */
static bool remote_debug(struct cp_symbolizer *s, struct cp_sym_space *fs, Dwfl_Module *mod)
{
	char *name = NULL;
	__u64 bytes;
	int fd;

	if (fs->remote_debug_looked)
		return true;
	fd = cp_sym_dwfl_debug_of(mod, &name);
	free(name);
	if (fd == -EAGAIN)
		return false;
	fs->remote_debug_fd = fd >= 0 ? fd : -1;
	fs->remote_debug_looked = true;
	bytes = cp_tf_copy_bytes(fd);
	room_for_copies(s, bytes, fs);
	fs->copy_bytes += bytes;
	return true;
}

/*
 * @addr (a Dwfl address) of shared file @fs, in @mod, into @out: by the
 * describe server for a tenant's file, with its separate debug file
 * (remote_debug()), else by libdw here (and when no
 * server could be made: the parse worker let the file through). Returns 0;
 * 1 when the file is refused (it ended a server, or the server's answer
 * was no description): @out names nothing, and the file is never parsed
 * here; -EAGAIN while the server is at work, or
 * when the file's debug information waited for its parse worker (@fs is
 * dropped: libdwfl would keep the module without it); or another -errno.
 */
static int describe_file(struct cp_symbolizer *s, struct cp_sym_space *fs, Dwfl_Module *mod,
			 __u64 addr, struct cp_symbol_info *out)
{
	int err = -ENOSYS;

	if (fs->remote && !s->server_strings)
		s->server_strings = malloc(CP_SYM_SERVER_STRING_BYTES);
	/* no room for its answer: -ENOMEM, never a parse here instead */
	if (fs->remote && !s->server_strings)
		return -ENOMEM;
	if (fs->remote && !remote_debug(s, fs, mod))
		return -EAGAIN;
	if (fs->remote)
		err = cp_sym_server_describe(fs->remote_fd, fs->remote_debug_fd, &fs->remote_key,
					     addr, out, s->server_strings,
					     CP_SYM_SERVER_STRING_BYTES);
	if (!err || err == -EAGAIN || err == -ENOMEM)
		return err;
	/* no server (any more): an unvetted copy is made again, vetted (open_shared()) */
	if (err == -ENOSYS && fs->remote && !fs->remote_vetted) {
		space_clear(fs);
		return -EAGAIN;
	}
	if (err != -ENOSYS) {
		/* refused, or an answer that made no sense: never parsed here instead */
		memset(out, 0, sizeof(*out));
		out->ip = addr;
		return 1;
	}
	cp_sym_dwfl_take_waited();
	cp_sym_describe(mod, addr, out);
	if (cp_sym_dwfl_take_waited()) {
		space_clear(fs);
		return -EAGAIN;
	}
	return 0;
}

/*
 * @ip of @m in its file's space @fs, told as the process sees it: the
 * module named as the maps name it, addresses back in the process. The
 * file's description of the address is cached for every process mapping
 * the file (under CP_SYM_FILE_PID and the space's number), so a new process
 * of a known binary or library costs no DWARF walk for code seen before.
 */
static int describe_in(struct cp_symbolizer *s, struct cp_sym_space *fs, const struct cp_map *m,
		       __u64 ip, struct cp_symbol_info *out)
{
	const struct cp_symbol_info *hit;
	Dwfl_Module *mod;
	__u64 vaddr;
	int refused, err = 0;

	if (cp_sym_link_addr(fs->loads, fs->nr_loads, m->start, m->end, m->offset, ip, &vaddr))
		return -ENOENT;
	hit = cache_find(s, CP_SYM_FILE_PID, fs->inc, vaddr + fs->bias);
	if (hit) {
		s->stats.file_cache_hits++;
		*out = *hit;
	} else {
		mod = dwfl_addrmodule(fs->dwfl, vaddr + fs->bias);
		if (!mod)
			return -ENOENT;
		refused = describe_file(s, fs, mod, vaddr + fs->bias, out);
		if (refused < 0)
			return refused;
		/* a server's word is no refusal of ours */
		out->flags &= ~CP_SYM_REFUSED_FOR_NOW;
		if (refused && cp_parse_worker_refused_for_now(&fs->remote_key))
			out->flags |= CP_SYM_REFUSED_FOR_NOW;
		err = intern_info(s, out);
		if (err)
			return err;
		/* a refused file's address is not kept: a refusal for memory may lift */
		if (!refused)
			cache_put(s, CP_SYM_FILE_PID, fs->inc, vaddr + fs->bias, out);
	}
	if (out->sym_size)
		out->sym_start += ip - (vaddr + fs->bias);
	out->ip = ip;
	out->module = cp_str_set_intern(&s->strings, m->path, &err);
	s->stats.shared_lookups++;
	return err;
}

/*
 * describe_in() @m's file's shared space. Returns 0, -ENOMEM, or another
 * error for the fallback to answer, unless @remote is set: the file is a
 * tenant's that the describe server has, which no Dwfl of the profiler's
 * may parse.
 */
static int describe_shared(struct cp_symbolizer *s, pid_t pid, const struct cp_map *m,
			   const struct cp_sym_share *sh, __u64 ip, struct cp_symbol_info *out,
			   bool *remote)
{
	struct cp_sym_space *fs;
	int err = space_for_shared(s, pid, m, sh, &fs);

	if (err)
		return err;
	*remote = fs->remote;
	return describe_in(s, fs, m, ip, out);
}

/* @ip in @sn's process: its file's shared space, else the process's own Dwfl. */
static int describe_pid(struct cp_symbolizer *s, struct cp_sym_snap *sn, __u64 ip,
			struct cp_symbol_info *out)
{
	const struct cp_map *m = cp_maps__find(sn->maps, ip);
	const struct cp_sym_share *sh = m ? &sn->share[m - sn->maps->maps] : NULL;
	struct cp_sym_space *sp, *fs;
	Dwfl_Module *mod;
	int err;

	/* what a Dwfl of the process holds: files and [vdso] */
	if (!m || (m->kind != CP_MAP_FILE && m->kind != CP_MAP_VDSO)) {
		memset(out, 0, sizeof(*out));
		out->ip = ip;
		return -ENOENT;
	}
	if (sh->open_path) {
		bool remote = false;

		err = describe_shared(s, sn->pid, m, sh, ip, out, &remote);
		/* -EAGAIN: its parse worker is at work; the process's own Dwfl would keep it
		 * nameless. A tenant's file the describe server has is never parsed here. */
		if (!err || err == -ENOMEM || err == -EAGAIN || remote)
			return err;
	}
	err = space_for_pid(s, sn, &sp);
	if (err)
		return err;
	mod = dwfl_addrmodule(sp->dwfl, ip);
	/* a tenant's file deleted or replaced since it was mapped: the server's too */
	err = mod && cp_sym_remote(mod) ? space_for_module(s, sn, m, mod, &fs) : -ENOENT;
	if (!err)
		err = describe_in(s, fs, m, ip, out);
	/* the file's space may have taken the process's slot (a symbolizer of few Dwfls) */
	sp = space_find(s, sn->pid, sn->inc, NULL);
	if (!sp && space_for_pid(s, sn, &sp))
		return err ? err : -ENOENT;
	/* no server could be made: the Dwfl is made again, its tenants' files vetted */
	if (err == -EAGAIN && !cp_sym_server_usable())
		space_clear(sp);
	/* else (no copy to be had) named by the module only, as libdw here has no ELF */
	if (!err || err == -ENOMEM || err == -EAGAIN)
		return err;
	cp_sym_dwfl_take_waited();
	err = describe(s, sp->dwfl, ip, out);
	/* a module's debug information waited: the Dwfl would keep it without */
	if (cp_sym_dwfl_take_waited()) {
		space_clear(sp);
		return -EAGAIN;
	}
	return err;
}

/* @ip in @sn's process, cached under its incarnation; a live one re-snapshots for a dlopen. */
static int resolve_in(struct cp_symbolizer *s, struct cp_sym_snap *sn, __u64 ip,
		      struct cp_symbol_info *out)
{
	const struct cp_symbol_info *hit = cache_find(s, sn->pid, sn->inc, ip);
	struct cp_maps *maps;
	__u64 gen;
	int err;

	if (hit) {
		s->stats.cache_hits++;
		*out = *hit;
		return 0;
	}
	err = describe_pid(s, sn, ip, out);
	if (err == -ENOENT && !sn->exited && (maps = mapped_since(s, sn, ip, &gen))) {
		err = snap_take(s, &sn, sn->pid, maps, gen, sn->start_ticks);
		if (!err) {
			s->stats.auto_refreshes++;
			err = describe_pid(s, sn, ip, out);
		}
	}
	/* unmapped ips are not cached: a later dlopen may map them; nor is a refusal that
	 * may lift (memory): the process's next lookup asks again */
	if (!err && !(out->flags & CP_SYM_REFUSED_FOR_NOW))
		cache_put(s, sn->pid, sn->inc, ip, out);
	return err;
}

static int resolve_end(struct cp_symbolizer *s, __u64 ip, int err, struct cp_symbol_info *out)
{
	if (!err)
		return 0;
	s->stats.failures++;
	if (err != -ENOENT) {
		memset(out, 0, sizeof(*out));
		out->ip = ip;
	}
	return err;
}

static void flush_if_due(struct cp_symbolizer *s)
{
	s->stats.lookups++;
	if (s->strings.bytes > s->max_string_bytes)
		flush_strings(s);
}

int cp_symbolizer__resolve(struct cp_symbolizer *s, pid_t pid, __u64 ip, struct cp_symbol_info *out)
{
	const struct cp_symbol_info *hit;
	struct cp_sym_snap *sn;
	int err;

	flush_if_due(s);
	if (pid <= 0)
		return resolve_end(s, ip, -ESRCH, out);
	/* the latest process of @pid that sampled @ip: its result */
	hit = cache_find(s, pid, 0, ip);
	if (hit) {
		s->stats.cache_hits++;
		*out = *hit;
		return 0;
	}
	sn = snap_find(s, pid, CP_SYM_ANY);
	err = sn ? 0 : snap_for_pid(s, pid, 0, &sn);
	return resolve_end(s, ip, err ? err : resolve_in(s, sn, ip, out), out);
}

int cp_symbolizer__resolve_now(struct cp_symbolizer *s, pid_t pid, __u64 ip, __u64 when_ns,
			       struct cp_symbol_info *out)
{
	struct cp_sym_snap *sn;
	int err;

	flush_if_due(s);
	if (pid <= 0)
		return resolve_end(s, ip, -ESRCH, out);
	err = snap_for_pid(s, pid, when_ns, &sn);
	/* no process holds @pid now, or one that started since: the record's exited before */
	if (err == -ESRCH) {
		sn = snap_find(s, pid, CP_SYM_EXITED);
		if (sn && !cp_proc_started_after(sn->start_ns, when_ns))
			err = 0;
	}
	return resolve_end(s, ip, err ? err : resolve_in(s, sn, ip, out), out);
}

/* cp_symbolizer__refresh() for a record made at @when_ns (0: no check). */
static int refresh_at(struct cp_symbolizer *s, pid_t pid, __u64 when_ns)
{
	struct cp_sym_snap *sn;
	struct cp_maps *maps;
	__u64 gen = 0, start;
	int err;

	if (pid <= 0)
		return -ESRCH;
	sn = snap_find(s, pid, CP_SYM_LIVE);
	err = read_maps(s, pid, when_ns != 0, &maps, &gen, &start);
	if (err)
		return err;
	/* the record's process is gone, the pid another's: not the maps it speaks of */
	if (start && cp_proc_started_after(cp_proc_ticks_mono_ns(start), when_ns)) {
		cp_maps__free(maps);
		if (sn && sn->start_ticks != start)
			snap_exited(s, sn);
		return -ESRCH;
	}
	/* another process since (its exit record lost): the old one is moved aside */
	if (sn && sn->start_ticks && start && sn->start_ticks != start) {
		snap_exited(s, sn);
		sn = NULL;
	}
	err = snap_take(s, &sn, pid, maps, gen, start);
	/* results cached from before may predate an exec */
	if (!err)
		cache_drop_pid(s, pid, sn->inc);
	return err;
}

int cp_symbolizer__refresh(struct cp_symbolizer *s, pid_t pid)
{
	return refresh_at(s, pid, 0);
}

int cp_symbolizer__exec(struct cp_symbolizer *s, pid_t pid, __u64 when_ns)
{
	return refresh_at(s, pid, when_ns);
}

void cp_symbolizer__exit(struct cp_symbolizer *s, pid_t pid)
{
	struct cp_sym_snap *sn = pid > 0 ? snap_find(s, pid, CP_SYM_LIVE) : NULL;

	if (sn)
		snap_exited(s, sn);
}

static int first_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			void *arg)
{
	(void)userdata;
	(void)name;
	(void)start;
	*(Dwfl_Module **)arg = mod;
	return DWARF_CB_ABORT;
}

/* The module that symbolizes @ip of @m: its file's shared one, else the process's own. */
static Dwfl_Module *mapping_module(struct cp_symbolizer *s, struct cp_sym_snap *sn,
				   const struct cp_map *m, __u64 ip)
{
	const struct cp_sym_share *sh = &sn->share[m - sn->maps->maps];
	struct cp_sym_space *sp;
	Dwfl_Module *mod = NULL;

	if (sh->open_path) {
		int err = space_for_shared(s, sn->pid, m, sh, &sp);

		if (!err)
			dwfl_getmodules(sp->dwfl, first_module, &mod, 0);
		if (mod)
			return mod;
		/* its parse worker is at work: the process's own Dwfl would keep it nameless */
		if (err == -EAGAIN)
			return NULL;
	}
	if (space_for_pid(s, sn, &sp))
		return NULL;
	mod = dwfl_addrmodule(sp->dwfl, ip);
	/* a tenant's file deleted or replaced since: its ELF headers are read in its copy's space */
	if (mod && cp_sym_remote(mod) && !space_for_module(s, sn, m, mod, &sp))
		dwfl_getmodules(sp->dwfl, first_module, &mod, 0);
	return mod;
}

/* @m of @sn into @out, with the build-id of the file read for it. */
static int fill_mapping(struct cp_symbolizer *s, struct cp_sym_snap *sn, const struct cp_map *m,
			__u64 ip, struct cp_sym_mapping *out)
{
	const unsigned char *bits;
	Dwfl_Module *mod;
	int len, err = 0;

	out->start = m->start;
	out->end = m->end;
	out->offset = m->offset;
	out->path = cp_str_set_intern(&s->strings, m->path, &err);
	if (err)
		return err;
	mod = mapping_module(s, sn, m, ip);
	len = mod ? cp_sym_dwfl_build_id(mod, &bits) : 0;
	if (len > 0 && len <= CP_SYM_BUILD_ID_MAX) {
		memcpy(out->build_id, bits, (size_t)len);
		out->build_id_len = (__u32)len;
	}
	return 0;
}

int cp_symbolizer__mapping(struct cp_symbolizer *s, pid_t pid, __u64 ip, struct cp_sym_mapping *out)
{
	struct cp_sym_snap *sn = pid > 0 ? snap_find(s, pid, CP_SYM_ANY) : NULL;
	const struct cp_map *m;

	memset(out, 0, sizeof(*out));
	if (!sn)
		return -ESRCH;
	m = cp_maps__find(sn->maps, ip);
	if (!m || (m->kind != CP_MAP_FILE && m->kind != CP_MAP_VDSO))
		return -ENOENT;
	return fill_mapping(s, sn, m, ip, out);
}

/* Whether the file at @path is named as a shared object is ("libc.so.6", "ld-linux-x86-64.so.2"). */
static bool named_shared(const char *path)
{
	const char *base = strrchr(path, '/');

	return strstr(base ? base + 1 : path, ".so") != NULL;
}

int cp_symbolizer__main_mapping(struct cp_symbolizer *s, pid_t pid, struct cp_sym_mapping *out)
{
	struct cp_sym_snap *sn = pid > 0 ? snap_find(s, pid, CP_SYM_ANY) : NULL;

	memset(out, 0, sizeof(*out));
	if (!sn)
		return -ESRCH;
	for (size_t i = 0; i < sn->maps->nr; i++) {
		const struct cp_map *m = &sn->maps->maps[i];

		if (m->kind == CP_MAP_FILE && (m->prot & CP_MAP_EXEC) && !named_shared(m->path))
			return fill_mapping(s, sn, m, m->start, out);
	}
	return -ENOENT;
}

void cp_symbolizer__forget(struct cp_symbolizer *s, pid_t pid)
{
	if (pid <= 0)
		return;
	for (size_t i = 0; i < s->max_snaps; i++)
		if (s->snaps[i].pid == pid)
			snap_drop(s, &s->snaps[i]);
	for (size_t i = 0; i < s->max_spaces; i++)
		if (s->spaces[i].dwfl && s->spaces[i].pid == pid && !s->spaces[i].shared)
			space_clear(&s->spaces[i]);
	cache_drop_pid(s, pid, 0);
}

/* A file at link-time addresses, by path: Dwfl addresses are the file's own. */
static int space_for_file(struct cp_symbolizer *s, const char *path, struct cp_sym_space **out)
{
	struct cp_sym_space *sp = space_find(s, 0, 0, path);
	Dwfl_Module *mod;
	Dwfl *dwfl;
	char *copy;
	int err;

	if (sp) {
		*out = sp;
		return 0;
	}
	err = cp_sym_dwfl_file(path, cp_sym_open_named(path, true), &dwfl, &mod);
	if (err)
		return err;
	copy = strdup(path);
	if (!copy) {
		dwfl_end(dwfl);
		return -ENOMEM;
	}
	sp = space_slot(s);
	*sp = (struct cp_sym_space){.dwfl = dwfl, .path = copy, .last_use = ++s->clock};
	*out = sp;
	return 0;
}

int cp_symbolizer__resolve_file(struct cp_symbolizer *s, const char *path, __u64 vaddr,
				struct cp_symbol_info *out)
{
	struct cp_sym_space *sp = NULL;
	int err = space_for_file(s, path, &sp);

	if (err) {
		memset(out, 0, sizeof(*out));
		out->ip = vaddr;
		return err;
	}
	return describe(s, sp->dwfl, vaddr, out);
}

void cp_symbolizer__set_path_map(struct cp_symbolizer *s, const struct cp_path_map *m)
{
	s->path_map = m && m->nr ? m : NULL;
}

/*
 * The snapshot a stack copy of @pid is unwound in: the live process's,
 * else the latest exited one's. A copy was taken while its process ran,
 * but its ring is read apart from the events', so the process's exit
 * record may have been handled first; its snapshot and Dwfl are kept.
 */
static int snap_for_copy(struct cp_symbolizer *s, pid_t pid, struct cp_sym_snap **out)
{
	int err = snap_for_pid(s, pid, 0, out);

	if (err == -ESRCH && (*out = snap_find(s, pid, CP_SYM_EXITED)))
		err = 0;
	return err;
}

Dwfl *cp_symbolizer__process_dwfl(struct cp_symbolizer *s, pid_t pid)
{
	struct cp_sym_space *sp;
	struct cp_sym_snap *sn;

	if (snap_for_copy(s, pid, &sn) || space_for_pid(s, sn, &sp))
		return NULL;
	return sp->dwfl;
}

int cp_symbolizer__remote_at(struct cp_symbolizer *s, pid_t pid, __u64 ip,
			     struct cp_sym_remote *out)
{
	const struct cp_sym_share *sh = NULL;
	const struct cp_map *m = NULL;
	struct cp_sym_space *fs, *sp;
	struct cp_sym_snap *sn;
	Dwfl_Module *mod;
	__u64 vaddr;
	int err = snap_for_copy(s, pid, &sn);

	if (!err && (m = cp_maps__find(sn->maps, ip)))
		sh = &sn->share[m - sn->maps->maps];
	if (err || !m || m->kind != CP_MAP_FILE)
		return err ? err : -ENOENT;
	if (sh->open_path) {
		err = space_for_shared(s, pid, m, sh, &fs);
	} else {
		/* deleted or replaced since it was mapped: a module of the process's own Dwfl */
		err = space_for_pid(s, sn, &sp);
		mod = err ? NULL : dwfl_addrmodule(sp->dwfl, ip);
		if (!err)
			err = mod && cp_sym_remote(mod) ? space_for_module(s, sn, m, mod, &fs)
							: -ENOENT;
	}
	if (err)
		return err;
	if (!fs->remote || !cp_sym_server_usable() ||
	    cp_sym_link_addr(fs->loads, fs->nr_loads, m->start, m->end, m->offset, ip, &vaddr) ||
	    !(mod = dwfl_addrmodule(fs->dwfl, vaddr + fs->bias)))
		return -ENOENT;
	if (!remote_debug(s, fs, mod))
		return -EAGAIN;
	*out = (struct cp_sym_remote){.fd = fs->remote_fd,
				      .debug_fd = fs->remote_debug_fd,
				      .key = fs->remote_key,
				      .bias = ip - vaddr};
	return 0;
}

bool cp_symbolizer__has_process_dwfl(struct cp_symbolizer *s, pid_t pid)
{
	struct cp_sym_snap *sn = pid > 0 ? snap_find(s, pid, CP_SYM_ANY) : NULL;

	return sn && space_find(s, pid, sn->inc, NULL) != NULL;
}

void cp_symbolizer__set_maps_text(struct cp_symbolizer *s, cp_maps_text_fn fn, void *ctx,
				  bool replay)
{
	s->maps_text = fn;
	s->maps_text_ctx = ctx;
	s->replay = replay;
}

void cp_symbolizer__set_max_string_bytes(struct cp_symbolizer *s, size_t max)
{
	s->max_string_bytes = max;
}

/* Dwfls most recently used first, free slots last. */
static int by_recent_use(const void *a, const void *b)
{
	const struct cp_sym_space *x = a, *y = b;

	if (!x->dwfl != !y->dwfl)
		return x->dwfl ? -1 : 1;
	return x->last_use > y->last_use ? -1 : x->last_use < y->last_use;
}

size_t cp_symbolizer__shrink(struct cp_symbolizer *s)
{
	size_t new_max = s->max_spaces / 2 > CP_SYM_MIN_PROCESSES ? s->max_spaces / 2
								  : CP_SYM_MIN_PROCESSES,
	       dropped = 0;

	/*
	 * Dwfls are what grows (libdw's copies of debug sections): keep fewer
	 * from now on, and room below that. The most recently used stay, so a
	 * hot process (maybe exited, its breakpoint findings still to report)
	 * keeps its snapshot.
	 */
	if (new_max > s->max_spaces)
		new_max = s->max_spaces;
	qsort(s->spaces, s->max_spaces, sizeof(*s->spaces), by_recent_use);
	for (size_t i = new_max / 2; i < s->max_spaces; i++) {
		if (s->spaces[i].dwfl) {
			space_clear(&s->spaces[i]);
			dropped++;
		}
	}
	s->max_spaces = new_max;
	s->stats.evictions += dropped;
	flush_strings(s);
	return dropped;
}

void cp_symbolizer__stats(const struct cp_symbolizer *s, struct cp_symbolizer_stats *out)
{
	*out = s->stats;
}

void cp_symbolizer__set_max_snap_bytes(struct cp_symbolizer *s, __u64 max)
{
	s->max_snap_bytes = max;
}

/* ---- text ---- */

/* snprintf that keeps a running length past a full buffer. */
static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));

static void put(char *buf, size_t size, size_t *len, const char *fmt, ...)
{
	va_list ap;
	int n;

	va_start(ap, fmt);
	n = vsnprintf(*len < size ? buf + *len : NULL, *len < size ? size - *len : 0, fmt, ap);
	va_end(ap);
	if (n > 0)
		*len += (size_t)n;
}

int cp_symbol_info_format(const struct cp_symbol_info *info, char *buf, size_t size)
{
	size_t len = 0;

	if (size)
		buf[0] = '\0';
	if (info->function) {
		put(buf, size, &len, "%s", info->function);
	} else if (info->module) {
		put(buf, size, &len, "%s+0x%llx", cp_base_name(info->module),
		    (unsigned long long)info->module_offset);
		if (info->nearest)
			put(buf, size, &len, " (nearest: %s)", info->nearest);
	} else {
		put(buf, size, &len, "0x%llx", (unsigned long long)info->ip);
	}
	if (info->file && info->line)
		put(buf, size, &len, " (%s:%u)", cp_base_name(info->file), info->line);
	/* each function it was inlined into, at the line of that call */
	for (__u32 i = 0; info->function && i < info->nr_inlined; i++) {
		const struct cp_inline_caller *c = &info->inlined[i];

		put(buf, size, &len, " \u2190 %s", c->function ? c->function : "??");
		if (c->file && c->line)
			put(buf, size, &len, " (%s:%u)", cp_base_name(c->file), c->line);
	}
	return len > INT_MAX ? INT_MAX : (int)len;
}
