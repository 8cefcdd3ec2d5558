// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Where a target's allocation probes go (live/alloc_probes_priv.h): each
 * allocator function's entry probe placed past the instructions the kernel
 * would single-step (live/probe_place.h), whether it needs a return probe,
 * the exit points that stand for the return of a throwing operator new
 * (decode/exit_points.h), and the variants that only jump to a function
 * probed already. Reads the functions' code; attaches nothing.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "decode/exit_elf.h"
#include "decode/exit_points.h"
#include "objects/allocator.h"
#include "objects/elf_code.h"
#include "live/alloc_probes.h"
#include "live/alloc_probes_priv.h"
#include "live/probe_place.h"
#include "util/log.h"
#include "util/printable.h"

#define CP_PLACE_CODE_MAX 4096 /* function bytes decoded for placement */

/* every C++ program exec'd with such an allocator would say it: a few a period */
static struct cp_log_limit new_unprobed_said = CP_LOG_LIMIT_INIT(CP_LOG_WARNING, 3);

/* The cookie of exit point @p: its condition and what each returning direction needs. */
static __u64 exit_cookie(const struct cp_exit_point *p)
{
	__u64 c = p->always ? CP_EXIT_COOKIE_ALWAYS : p->cond;

	for (int dir = CP_EXIT_FALL; dir <= CP_EXIT_TAKEN; dir++)
		if (p->ret[dir])
			c |= CP_EXIT_COOKIE_DIR(dir, p->reg[dir], p->sp_off[dir]);
	return c;
}

/*
 * Adds the exit points of the throwing variant @fn (its code in @code) to
 * @t's exit sites. Returns false, with @why, when its result cannot be
 * taken without a return probe: it then stays unprobed.
 */
static bool add_exits(struct target *t, const struct cp_elf_code *code,
		      const struct cp_alloc_fn *fn, struct cp_exit_points *ep, const char **why)
{
	struct cp_exit_code src = cp_exit_code_of_elf(code);
	int n = t->nr_exits;

	*why = "its file could not be read";
	if (!code)
		return false;
	if (cp_exit_points_find(&src, fn->vaddr, ep)) {
		*why = ep->why ? ep->why : "out of memory";
		return false;
	}
	for (int i = 0; i < ep->n; i++) {
		struct exit_site x = {.cookie = exit_cookie(&ep->pts[i])};
		bool dup = false;

		if (!cp_elf_code_file_off(code, ep->pts[i].vaddr, &x.off)) {
			*why = "an exit point outside the file's code";
			t->nr_exits = n;
			return false;
		}
		for (int j = 0; j < t->nr_exits && !dup; j++)
			dup = t->exits[j].off == x.off && t->exits[j].cookie == x.cookie;
		if (dup)
			continue;
		if (t->nr_exits >= CP_MAX_EXIT_SITES) {
			*why = "too many exit points";
			t->nr_exits = n;
			return false;
		}
		t->exits[t->nr_exits++] = x;
	}
	return true;
}

/* True when an exit probe of @t sits at file offset @off. */
static bool exit_at(const struct target *t, __u64 off)
{
	for (int i = 0; i < t->nr_exits; i++)
		if (t->exits[i].off == off)
			return true;
	return false;
}

/* What placing a target's sites reads, opened when first needed. */
struct place_ctx {
	__u8 *code; /* CP_PLACE_CODE_MAX bytes */
	/* read with pread from the checked file: a short read if the target shrinks it */
	int fd;
	int copy; /* the sealed copy, whose ELF headers are parsed and mapped by libelf */
	struct cp_elf_code *elf;
	struct cp_exit_points *ep;
};

/* The file's code and where its jumps go (NULL: it could not be read). */
static const struct cp_elf_code *place_elf(struct target *t, struct place_ctx *pc)
{
	if (!pc->elf && pc->copy < 0) {
		pc->copy = cp_allocator_open_copy(t->alloc);
		pc->elf = pc->copy >= 0 ? cp_elf_code__new(pc->copy) : NULL;
	}
	return pc->elf;
}

/* Reads @fn's first bytes into pc->code; how many. */
static size_t read_fn(const struct place_ctx *pc, const struct cp_alloc_fn *fn)
{
	size_t want = fn->size && fn->size < CP_PLACE_CODE_MAX ? fn->size : CP_PLACE_CODE_MAX;
	ssize_t got =
		pc->code && pc->fd >= 0 ? pread(pc->fd, pc->code, want, (off_t)fn->file_off) : 0;

	return got > 0 ? (size_t)got : 0;
}

/* The site of @t that probes @vaddr's function, or -1. */
static int site_of_vaddr(const struct target *t, __u64 vaddr)
{
	for (int s = 0; s < t->nr_sites; s++)
		if (t->alloc->fns[t->sites[s].func].vaddr == vaddr)
			return s;
	return -1;
}

#define CP_FORWARD_HOPS 4 /* jumps followed from a variant to a probed function */

/*
 * The site whose probe sees every call of @f, whose code only jumps to
 * @to: the site of the function there, reached directly or through PLT
 * stubs of the file's own definitions and other functions that only jump
 * (CP_FORWARD_HOPS jumps in all), when its entry program is @f's, so it
 * reads the same arguments and return address. jemalloc's operator delete
 * jumps to its free, its new[] to new; mimalloc's aligned delete to
 * mi_free_aligned, which jumps to free. A probe of their own would trap
 * twice for one call. -1: none, @f gets its own.
 */
static int forwarded_to(struct cp_alloc_probes *ap, struct target *t, struct place_ctx *pc,
			enum cp_alloc_func f, __u64 to)
{
	__u8 hop[16];
	__u32 a1, a2;

	for (int n = 0; n < CP_FORWARD_HOPS; n++) {
		const struct cp_elf_code *elf = NULL;
		const char *name = NULL;
		__u64 at = to;
		int s = site_of_vaddr(t, to);

		/* the file's code is read only past a jump that lands on no site */
		if (s < 0) {
			elf = place_elf(t, pc);
			if (!elf || cp_elf_code_target(elf, to, &at, &name) != CP_ELF_TGT_CODE)
				return -1;
			s = site_of_vaddr(t, at);
		}
		if (s >= 0) {
			bool same = cp_ap_entry_prog(ap->skel, t->sites[s].func, &a1) ==
				    cp_ap_entry_prog(ap->skel, f, &a2);

			return same ? s : -1;
		}
		if (!cp_probe_forwards(hop, cp_elf_code_read(elf, at, hop, sizeof(hop)), at, &to))
			return -1;
	}
	return -1;
}

/* Places @f's probe: a site, with its exit points when it may throw, or none (said). */
static void place_fn(struct cp_alloc_probes *ap, struct target *t, struct place_ctx *pc,
		     enum cp_alloc_func f, __u32 args)
{
	const struct cp_alloc_fn *fn = &t->alloc->fns[f];
	bool exits = cp_alloc_func_throws(f);
	struct cp_placement pl;
	const char *why;
	size_t got;

	if (exits) {
		const struct cp_elf_code *elf = place_elf(t, pc);

		if (!pc->ep)
			pc->ep = malloc(sizeof(*pc->ep));
		if (!pc->ep || !add_exits(t, elf, fn, pc->ep, &why)) {
			char name[256];

			ap->new_unprobed++;
			cp_log_limited(&new_unprobed_said,
				       "process %d: %s's %s is left unprobed, its objects "
				       "unknown: no return probe may sit where an exception "
				       "passes, and its result cannot be taken otherwise (%s)",
				       (int)t->pid, cp_allocator_kind_name(t->alloc->kind),
				       cp_printable(fn->name, name, sizeof(name)),
				       pc->ep ? why : "out of memory");
			return;
		}
	}
	got = read_fn(pc, fn);
	cp_probe_place(pc->code, got, args, !exits && !cp_alloc_func_frees(f), &pl);
	/* two probes on one instruction would run in no order we know */
	if (pl.offset && exit_at(t, fn->file_off + pl.offset))
		cp_probe_place(pc->code, 0, args, true, &pl);
	if (pl.offset)
		ap->placed++;
	else if (pl.emulated)
		ap->entry_emulated++;
	else
		ap->single_step++;
	if (ap->opts.log) {
		char name[256], path[PATH_MAX];

		fprintf(ap->opts.log, "alloc probes: %s %s (%s) at +%u%s: %s\n",
			cp_allocator_kind_name(t->alloc->kind),
			cp_printable(fn->name, name, sizeof(name)),
			cp_printable(t->alloc->path, path, sizeof(path)), pl.offset,
			pl.emulated ? "" : " (single-stepped)", pl.why);
	}
	t->sites[t->nr_sites++] = (struct site){
		.func = f,
		.off = fn->file_off + pl.offset,
		.sp_adjust = pl.sp_adjust,
		.need_ret = !exits && !cp_alloc_func_frees(f),
		.exits = exits,
	};
}

/*
 * Decides the probe offsets of every function found, one site per address:
 * first the functions that do work of their own, then the ones that only
 * jump to another (placed only when that one has no probe).
 */
void cp_ap_place_sites(struct cp_alloc_probes *ap, struct target *t)
{
	struct place_ctx pc = {
		.code = malloc(CP_PLACE_CODE_MAX),
		.fd = cp_allocator_open(t->alloc),
		.copy = -1,
	};
	bool forwards[CP_FN_NR_PROBED] = {false};
	__u64 jumps_to[CP_FN_NR_PROBED]; /* a forwarder's first jump */

	t->nr_sites = 0;
	t->nr_exits = 0;
	for (int pass = 0; pass < 2; pass++)
		for (int f = 0; f < CP_FN_NR_PROBED; f++) {
			const struct cp_alloc_fn *fn = &t->alloc->fns[f];
			bool dup = false;
			__u32 args;
			int s;

			if (!fn->found || !cp_ap_entry_prog(ap->skel, f, &args))
				continue;
			if (pass == 0 && (forwards[f] = cp_probe_forwards(pc.code, read_fn(&pc, fn),
									  fn->vaddr, &jumps_to[f])))
				continue;
			if (pass == 1 && !forwards[f])
				continue;
			/* glibc's aligned_alloc and memalign are one function: probe it once */
			for (int i = 0; i < t->nr_sites && !dup; i++)
				dup = t->alloc->fns[t->sites[i].func].file_off == fn->file_off;
			if (dup)
				continue;
			if (pass == 1 && (s = forwarded_to(ap, t, &pc, f, jumps_to[f])) >= 0) {
				ap->forwarded++;
				if (ap->opts.log) {
					char name[256], to_name[256];

					fprintf(ap->opts.log,
						"alloc probes: %s %s only jumps to %s: no probe "
						"of its own\n",
						cp_allocator_kind_name(t->alloc->kind),
						cp_printable(fn->name, name, sizeof(name)),
						cp_printable(t->alloc->fns[t->sites[s].func].name,
							     to_name, sizeof(to_name)));
				}
				continue;
			}
			place_fn(ap, t, &pc, f, args);
		}
	if (ap->opts.log && t->nr_exits)
		fprintf(ap->opts.log,
			"alloc probes: %s: %d exit points take operator new's result\n",
			cp_allocator_kind_name(t->alloc->kind), t->nr_exits);
	free(pc.code);
	free(pc.ep);
	cp_elf_code__free(pc.elf);
	if (pc.copy >= 0)
		close(pc.copy);
	if (pc.fd >= 0)
		close(pc.fd);
}
