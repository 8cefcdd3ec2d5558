// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The allocation probes (live/alloc_probes.h): their targets, the probes
 * placed and attached on each target's allocator, the system-call programs
 * that follow them, detaching, and the counters; the budget windows are
 * live/alloc_windows.c's.
 */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <time.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "objects/allocator.h"
#include "live/alloc_probes.h"
#include "live/alloc_probes_priv.h"
#include "budget/sys_windows.h"
#include "live/cpu_costs.h"
#include "live/drain.h"
#include "objects/stack_gen.h"
#include "live/link_reaper.h"
#include "live/uprobe_multi.h"
#include "live/probe_place.h"
#include "machine/cpu_time.h"
#include "machine/elf_hdr.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/perf_open.h"
#include "util/sysfs.h"

#define CP_PURGE_BATCH	 4096
#define CP_PURGE_KEY_MAX 32 /* bytes of the largest key purge_tgid() handles */

/* A target's CPU time now: the process's, or with -a the machine's busy time. */
__u64 cp_ap_target_cpu_ns(struct target *t)
{
	return cp_cpu_src_ns(&t->cpu, NULL);
}

/* Time @t's probes were attached up to @now_ns: completed windows and the current one. */
__u64 cp_ap_attached_ns(const struct target *t, __u64 now_ns)
{
	__u64 ns = t->guard.attached_ns;

	if (!t->guard.backed_off && t->guard.window_start_ns && now_ns > t->guard.window_start_ns)
		ns += now_ns - t->guard.window_start_ns;
	return ns;
}

/* The entry program of @func and the argument registers it reads. */
struct bpf_program *cp_ap_entry_prog(struct cacheperf *skel, enum cp_alloc_func func, __u32 *args)
{
	switch (func) {
	case CP_FN_MALLOC:
	case CP_FN_VALLOC:
	case CP_FN_PVALLOC:
		*args = CP_ARG_RDI;
		return skel->progs.on_alloc;
	case CP_FN_CALLOC:
		*args = CP_ARG_RDI | CP_ARG_RSI;
		return skel->progs.on_calloc;
	case CP_FN_REALLOC:
		*args = CP_ARG_RDI | CP_ARG_RSI;
		return skel->progs.on_realloc;
	case CP_FN_REALLOCARRAY:
		*args = CP_ARG_RDI | CP_ARG_RSI | CP_ARG_RDX;
		return skel->progs.on_reallocarray;
	case CP_FN_FREE:
		*args = CP_ARG_RDI;
		return skel->progs.on_free;
	case CP_FN_POSIX_MEMALIGN:
		*args = CP_ARG_RDI | CP_ARG_RDX;
		return skel->progs.on_posix_memalign;
	case CP_FN_ALIGNED_ALLOC:
	case CP_FN_MEMALIGN:
		*args = CP_ARG_RSI;
		return skel->progs.on_memalign;
	default:
		break;
	}
	/* operator new: the size in rdi, in every variant; delete: the pointer */
	if (!cp_alloc_func_is_cxx(func))
		return NULL;
	*args = CP_ARG_RDI;
	return cp_alloc_func_frees(func) ? skel->progs.on_free : skel->progs.on_alloc;
}

/* The id of tracepoint syscalls/@name from tracefs into @id; 0 or a negative errno. */
static int sys_tp_id(const char *name, __u64 *id)
{
	static const char *const dirs[] = {"sys/kernel/tracing", "sys/kernel/debug/tracing"};
	char rel[128], buf[32];
	int err = -ENOENT;

	for (size_t i = 0; i < sizeof(dirs) / sizeof(dirs[0]); i++) {
		char *end;

		snprintf(rel, sizeof(rel), "%s/events/syscalls/%s/id", dirs[i], name);
		err = cp_sysfs_read_value("/", rel, buf, sizeof(buf));
		if (err)
			continue;
		*id = strtoull(buf, &end, 10);
		return *id && end != buf ? 0 : -EINVAL;
	}
	return err;
}

static bool have_tracefs_syscalls(void)
{
	__u64 id;

	return !sys_tp_id("sys_enter_mmap", &id);
}

/*
 * @prog on tracepoint syscalls/@name, as bpf_program__attach_tracepoint()
 * attaches it, but with the id read once for the run (@id, 0: not yet):
 * tracepoint ids do not change while the kernel runs, and reading it was
 * five system calls of the eleven each window paid per tracepoint. NULL
 * with errno set.
 */
static struct bpf_link *attach_sys_tp(struct bpf_program *prog, const char *name, __u64 *id)
{
	struct perf_event_attr attr;
	struct bpf_link *l;
	int fd, err = *id ? 0 : sys_tp_id(name, id);

	if (err) {
		errno = -err;
		return NULL;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_TRACEPOINT;
	attr.config = *id;
	fd = cp_perf_event_open(&attr, -1, 0, -1);
	if (fd < 0) {
		errno = -fd;
		return NULL;
	}
	/* the link owns the event once made: destroying it closes the fd */
	l = bpf_program__attach_perf_event(prog, fd);
	if (!l) {
		err = errno;
		close(fd);
		errno = err;
	}
	return l;
}

static struct bpf_program **sys_tp_progs(struct cacheperf *skel, int *n)
{
	static struct bpf_program *p[SYS_TPS];

	p[0] = skel->progs.on_mmap_enter;
	p[1] = skel->progs.on_mmap_exit;
	p[2] = skel->progs.on_munmap_enter;
	p[3] = skel->progs.on_mremap_enter;
	p[4] = skel->progs.on_mremap_exit;
	p[5] = skel->progs.on_brk_enter;
	p[6] = skel->progs.on_brk_exit;
	*n = SYS_TPS;
	return p;
}

int cp_alloc_probes_prepare(struct cacheperf *skel, const struct cp_alloc_prepare *p)
{
	struct cp_alloc_prepare def = {0};
	bool tracefs = have_tracefs_syscalls();
	struct bpf_program *prog;
	struct bpf_program **tp;
	int n, err;

	if (!p)
		p = &def;
	skel->rodata->targ_alloc_stacks = !p->no_stacks;
	skel->rodata->targ_ustack_bytes =
		p->no_stack_copy					       ? 0
		: p->stack_copy_bytes && p->stack_copy_bytes < CP_USTACK_BYTES ? p->stack_copy_bytes
									       : CP_USTACK_BYTES;
	skel->rodata->targ_alloc_count = !p->no_count;
	skel->rodata->targ_alloc_empty = p->empty;
	if (p->max_live) {
		err = bpf_map__set_max_entries(skel->maps.live_objects, p->max_live);
		if (err)
			return err;
	}
	tp = sys_tp_progs(skel, &n);
	for (int i = 0; i < n; i++)
		bpf_program__set_autoload(tp[i], tracefs);
	bpf_program__set_autoload(skel->progs.on_sys_enter, !tracefs);
	bpf_program__set_autoload(skel->progs.on_sys_exit, !tracefs);
	/* attached here, per target: cacheperf__attach() must leave them alone */
	bpf_object__for_each_program(prog, skel->obj)
	{
		const char *sec = bpf_program__section_name(prog);

		bool uprobe = !strcmp(sec, "uprobe") || !strcmp(sec, "uretprobe");

		if (uprobe || !strncmp(sec, "tracepoint/syscalls/", 20) ||
		    !strncmp(sec, "raw_tp/sys_", 11))
			bpf_program__set_autoattach(prog, false);
		/* one probe on one function: attached as a single uprobe */
		if (uprobe && prog != skel->progs.loader_stop && cp_uprobe_multi_supported()) {
			err = cp_uprobe_multi_prepare(prog);
			if (err)
				return err;
		}
	}
	return 0;
}

static int attach_syscalls(struct cp_alloc_probes *ap)
{
	struct cacheperf *skel = ap->skel;
	struct bpf_program **tp;
	struct bpf_link *l;
	int n, err;

	ap->raw_syscalls = !bpf_program__autoload(skel->progs.on_mmap_enter);
	if (ap->raw_syscalls) {
		l = bpf_program__attach_raw_tracepoint(skel->progs.on_sys_enter, "sys_enter");
		if (!l)
			return -errno;
		ap->sys_links[ap->nr_sys_links++] = l;
		l = bpf_program__attach_raw_tracepoint(skel->progs.on_sys_exit, "sys_exit");
		if (!l)
			return -errno;
		ap->sys_links[ap->nr_sys_links++] = l;
		return 0;
	}
	tp = sys_tp_progs(skel, &n);
	for (int i = 0; i < n; i++) {
		const char *sec = bpf_program__section_name(tp[i]);

		/* "tracepoint/syscalls/NAME" */
		l = attach_sys_tp(tp[i], sec + 20, &ap->sys_tp_ids[i]);
		if (!l) {
			err = -errno;
			return err;
		}
		ap->sys_links[ap->nr_sys_links++] = l;
	}
	return 0;
}

/* Takes the system-call programs' links down: on the reaper's threads, or at once with !@later. */
static void detach_syscalls(struct cp_alloc_probes *ap, bool later)
{
	struct cp_probe_link links[sizeof(ap->sys_links) / sizeof(ap->sys_links[0])];

	for (int i = 0; i < ap->nr_sys_links; i++) {
		links[i] = (struct cp_probe_link){.link = ap->sys_links[i], .fd = -1};
		if (!later)
			cp_probe_link_destroy(&links[i]);
	}
	if (later)
		cp_link_reaper__add(ap->reaper, links, (size_t)ap->nr_sys_links);
	ap->nr_sys_links = 0;
}

/* The mappings the system-call programs recorded so far (alloc_stats, in .bss). */
static __u64 mappings_now(const struct cp_alloc_probes *ap)
{
	const volatile __u64 *stats = ap->skel->bss->alloc_stats;

	return stats[offsetof(struct cp_alloc_stats, mappings) / sizeof(__u64)];
}

/*
 * The system-call programs (mmap, munmap, mremap, brk) follow the allocation
 * probes' windows: on while any target's probes are, off while all are
 * backed off, and only in the windows budget/sys_windows.h gives them.
 * Without tracefs they run on every system call of the machine
 * (a raw tracepoint), and any syscall tracepoint puts every task on the
 * syscall-tracing slow path: left on, they cost redis-server under
 * redis-benchmark 15 % of its throughput at 345 000 system calls a second,
 * with the probes attached 1 % of the time. Mappings made while they are off
 * are unseen, like the objects allocated then.
 */
void cp_ap_sync_syscalls(struct cp_alloc_probes *ap)
{
	bool want = false;
	int err;

	for (int i = 0; i < ap->nr_targets && !want; i++)
		want = ap->targets[i]->nr_links > 0;
	if (!want) {
		if (ap->nr_sys_links)
			cp_sys_windows_end(&ap->sys_windows, mappings_now(ap) != ap->sys_mappings);
		ap->sys_skipped = false;
		detach_syscalls(ap, true);
		return;
	}
	if (ap->nr_sys_links || ap->sys_skipped)
		return;
	if (!cp_sys_windows_begin(&ap->sys_windows)) {
		ap->sys_skipped = true;
		return;
	}
	ap->sys_mappings = mappings_now(ap);
	err = attach_syscalls(ap);
	if (err) {
		detach_syscalls(ap, true);
		if (!ap->sys_warned)
			cp_warn("the mmap, munmap, mremap and brk programs did not attach again: "
				"%s; mappings made meanwhile stay unknown",
				strerror(-err));
		ap->sys_warned = true;
	}
}

struct cp_alloc_probes *cp_alloc_probes__new(struct cacheperf *skel,
					     const struct cp_alloc_probes_opts *opts)
{
	struct cp_alloc_probes *ap = calloc(1, sizeof(*ap));
	int err;

	if (!ap)
		return NULL;
	ap->skel = skel;
	ap->cut_efd = -1;
	pthread_mutex_init(&ap->lock, NULL);
	pthread_cond_init(&ap->wake, NULL);
	if (opts)
		ap->opts = *opts;
	cp_alloc_guard_cfg_init(&ap->guard_cfg, ap->opts.max_alloc_rate);
	ap->guard_cfg.budget_ppm = ap->opts.budget_ppm;
	ap->guard_cfg.call_ns = ap->opts.call_ns;
	ap->multi = bpf_program__expected_attach_type(skel->progs.on_alloc) ==
		    (enum bpf_attach_type)CP_BPF_TRACE_UPROBE_MULTI;
	cp_sys_windows_init(&ap->sys_windows);
	ap->reaper = cp_link_reaper__new();
	/* attached once to know they can be, here and now; from then on with the windows */
	err = ap->reaper ? attach_syscalls(ap) : -errno;
	if (err) {
		cp_alloc_probes__free(ap);
		errno = -err;
		return NULL;
	}
	detach_syscalls(ap, false);
	return ap;
}

/* All CPUs' counted allocator calls so far (-a's windows); 0 when unread. */
__u64 cp_ap_all_calls(const struct cp_alloc_probes *ap)
{
	struct cp_cpu_cost sum;

	return cp_cpu_costs__sum(ap->skel, &sum) ? 0 : sum.alloc_calls;
}

/* Hands @t's links to the reaper: the loop does not wait for the kernel. */
void cp_ap_detach_links(struct cp_alloc_probes *ap, struct target *t)
{
	struct cp_probe_link order[sizeof(t->links) / sizeof(t->links[0])];

	/* entries first: a return probe without its entry is harmless, the reverse is not */
	for (int i = 0; i < t->nr_links; i++)
		order[i] = t->links[t->nr_links - 1 - i];
	cp_link_reaper__add(ap->reaper, order, (size_t)t->nr_links);
	t->nr_links = 0;
}

static void free_target(struct cp_alloc_probes *ap, struct target *t)
{
	__u32 key;

	if (!t)
		return;
	cp_ap_detach_links(ap, t);
	key = (__u32)t->pid;
	if (t->mark && t->pid > 0)
		bpf_map__delete_elem(ap->skel->maps.alloc_cut_at, &key, sizeof(key), 0);
	else if (t->mark)
		cp_cpu_costs__mark_calls(ap->skel, 0);
	cp_cpu_src_close(&t->cpu);
	if (t->held_fd >= 0)
		close(t->held_fd);
	free(t->alloc);
	free(t);
}

void cp_alloc_probes__free(struct cp_alloc_probes *ap)
{
	if (!ap)
		return;
	cp_ap_stop_cutter(ap);
	cp_alloc_probes__loader_done(ap);
	for (int i = 0; i < ap->nr_targets; i++)
		free_target(ap, ap->targets[i]);
	cp_link_reaper__free(ap->reaper); /* waits for every link */
	detach_syscalls(ap, false);
	pthread_cond_destroy(&ap->wake);
	pthread_mutex_destroy(&ap->lock);
	free(ap);
}

struct target *cp_ap_find_target(const struct cp_alloc_probes *ap, pid_t pid, int *idx)
{
	for (int i = 0; i < ap->nr_targets; i++) {
		if (ap->targets[i]->pid == pid) {
			if (idx)
				*idx = i;
			return ap->targets[i];
		}
	}
	return NULL;
}

/* The cookie of site @s of target @t: -a's probes (pid -1) are counted per CPU only. */
static __u64 site_cookie(const struct target *t, const struct site *s)
{
	return CP_ALLOC_COOKIE(s->func, s->sp_adjust) | (s->exits ? CP_ALLOC_COOKIE_EXITS : 0) |
	       (t->pid < 0 ? CP_ALLOC_COOKIE_ALL : 0);
}

static int attach_one(struct target *t, struct bpf_program *prog, __u64 off, __u64 cookie, bool ret,
		      const char *path)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .retprobe = ret, .bpf_cookie = cookie);
	struct bpf_link *l;

	l = bpf_program__attach_uprobe_opts(prog, t->pid, path, off, &uo);
	if (!l)
		return -errno;
	t->links[t->nr_links++] = (struct cp_probe_link){.link = l, .fd = -1};
	return 0;
}

/*
 * One multi link for @prog on @path: the return probes of every site that
 * needs one (@ret), or the entry probes of the sites whose entry program
 * @prog is.
 */
static int attach_multi(struct cp_alloc_probes *ap, struct target *t, struct bpf_program *prog,
			bool ret, const char *path)
{
	__u64 offs[CP_FN_NR_PROBED], cookies[CP_FN_NR_PROBED];
	__u32 n = 0, args;
	int fd;

	for (int i = 0; i < t->nr_sites; i++) {
		const struct site *s = &t->sites[i];

		if (ret ? !s->need_ret : cp_ap_entry_prog(ap->skel, s->func, &args) != prog)
			continue;
		offs[n] = s->off;
		cookies[n++] = site_cookie(t, s);
	}
	if (!n)
		return 0;
	fd = cp_uprobe_multi_attach(prog, t->pid, path, offs, cookies, n, ret);
	if (fd < 0)
		return fd;
	t->links[t->nr_links++] = (struct cp_probe_link){.fd = fd};
	return 0;
}

/* The exit-point probes of @t: one multi link, or a link each. */
static int attach_exits(struct cp_alloc_probes *ap, struct target *t, const char *path)
{
	__u64 offs[CP_MAX_EXIT_SITES], cookies[CP_MAX_EXIT_SITES];
	struct bpf_program *prog = ap->skel->progs.on_alloc_exit;
	int err = 0, fd;

	if (!t->nr_exits)
		return 0;
	if (!ap->multi) {
		for (int i = 0; i < t->nr_exits && !err; i++)
			err = attach_one(t, prog, t->exits[i].off, t->exits[i].cookie, false, path);
		return err;
	}
	for (int i = 0; i < t->nr_exits; i++) {
		offs[i] = t->exits[i].off;
		cookies[i] = t->exits[i].cookie;
	}
	fd = cp_uprobe_multi_attach(prog, t->pid, path, offs, cookies, (__u32)t->nr_exits, false);
	if (fd < 0)
		return fd;
	t->links[t->nr_links++] = (struct cp_probe_link){.fd = fd};
	return 0;
}

/* Adds @p to the @n programs of @progs unless it is there; the new count. */
static int add_prog(struct bpf_program **progs, int n, struct bpf_program *p)
{
	for (int i = 0; i < n; i++)
		if (progs[i] == p)
			return n;
	if (p)
		progs[n++] = p;
	return n;
}

/* The entry programs of @t's sites, each once. */
static int entry_progs(struct cp_alloc_probes *ap, const struct target *t,
		       struct bpf_program **progs)
{
	int n = 0;
	__u32 args;

	for (int i = 0; i < t->nr_sites; i++)
		n = add_prog(progs, n, cp_ap_entry_prog(ap->skel, t->sites[i].func, &args));
	return n;
}

static int attach_fd(struct cp_alloc_probes *ap, struct target *t, const char *path)
{
	struct bpf_program *progs[CP_FN_NR_PROBED];
	int err = 0, n;
	__u32 args;

	/* entries of calls in flight before this point have lost their returns */
	ap->skel->bss->alloc_gen++;
	/* returns and exit points first, so every entry seen has them */
	err = attach_exits(ap, t, path);
	if (ap->multi) {
		if (!err)
			err = attach_multi(ap, t, ap->skel->progs.on_alloc_ret, true, path);
		n = entry_progs(ap, t, progs);
		for (int i = 0; i < n && !err; i++)
			err = attach_multi(ap, t, progs[i], false, path);
	} else {
		for (int i = 0; i < t->nr_sites && !err; i++)
			if (t->sites[i].need_ret)
				err = attach_one(t, ap->skel->progs.on_alloc_ret, t->sites[i].off,
						 site_cookie(t, &t->sites[i]), true, path);
		for (int i = 0; i < t->nr_sites && !err; i++)
			err = attach_one(t, cp_ap_entry_prog(ap->skel, t->sites[i].func, &args),
					 t->sites[i].off, site_cookie(t, &t->sites[i]), false,
					 path);
	}
	if (err)
		cp_ap_detach_links(ap, t);
	return err;
}

/*
 * Attaches @t's probes to the file cp_allocator_open() checked, named by its
 * descriptor: the kernel resolves /proc/self/fd/N to that very inode, so a
 * path the target swaps meanwhile (a symlink out of its root) is never walked.
 * The system-wide probes' file, named by its path alone, is held from their
 * first attach: each window after a back-off attaches to it again, at the
 * offsets read from it. A libc upgraded since at that path is another file,
 * whose processes get probes of their own; probed at the old offsets, every
 * new process of the host would have trapped mid-instruction.
 */
int cp_ap_attach_links(struct cp_alloc_probes *ap, struct target *t)
{
	int fd = t->held_fd >= 0 ? fcntl(t->held_fd, F_DUPFD_CLOEXEC, 0)
				 : cp_allocator_open(t->alloc);
	struct stat st;
	char path[32];
	int err;

	if (fd < 0)
		return t->held_fd >= 0 ? -errno : fd;
	if (fstat(fd, &st)) {
		err = -errno;
		close(fd);
		return err;
	}
	if (t->pid < 0 && t->held_fd < 0)
		t->held_fd = fcntl(fd, F_DUPFD_CLOEXEC, 0);
	t->file_dev = st.st_dev;
	t->file_ino = st.st_ino;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	err = attach_fd(ap, t, path);
	close(fd);
	return err;
}

/*
 * -a: the file the system-wide probes (pid -1) are on, into @p; NULL
 * without them. Their file is the one they were attached to: a libc
 * replaced since (a package upgrade) is another file, which new processes
 * map and those probes never see. A process whose maps line names that
 * device and inode maps that very inode, whose uprobes those are:
 * cp_allocator__find() opens nothing for it (every process -a sees comes
 * here).
 */
static const struct cp_alloc_probed *all_probed(const struct cp_alloc_probes *ap,
						struct cp_alloc_probed *p)
{
	const struct target *all = cp_ap_find_target(ap, -1, NULL);

	if (!all)
		return NULL;
	*p = (struct cp_alloc_probed){.dev = all->file_dev, .ino = all->file_ino};
	return p;
}

/*
 * -a: true when the system-wide probes are on @alloc's file already.
 * Probing it again for one process would deliver its allocations twice and
 * pile up links, one set per exec'd process.
 */
static bool covered_by_all(const struct cp_alloc_probes *ap, const struct cp_allocator *alloc)
{
	struct cp_alloc_probed p;

	return cp_alloc_probed_is(all_probed(ap, &p), alloc->dev_major, alloc->dev_minor,
				  alloc->inode);
}

bool cp_alloc_probes__all_likely(const struct cp_alloc_probes *ap, pid_t pid)
{
	const struct cp_map *ld;
	struct cp_maps *m;
	bool same;

	if (!ap->all_loader.ino || !cp_ap_find_target(ap, -1, NULL) || cp_maps__read(NULL, pid, &m))
		return false;
	ld = cp_allocator_loader(m);
	same = ld && cp_alloc_probed_is(&ap->all_loader, ld->dev_major, ld->dev_minor, ld->inode);
	cp_maps__free(m);
	return same;
}

static int add_target(struct cp_alloc_probes *ap, pid_t pid, const char *libc_path, bool early)
{
	struct cp_alloc_probed probed;
	struct target *t;
	int err;

	if (cp_ap_find_target(ap, pid, NULL))
		return -EEXIST;
	if (ap->nr_targets >= CP_MAX_ALLOC_TARGETS)
		return -ENOSPC;
	t = calloc(1, sizeof(*t));
	if (!t)
		return -ENOMEM;
	t->pid = pid;
	t->cpu.fd = -1; /* opened once the process is known to need probes of its own */
	t->held_fd = -1;
	t->alloc = calloc(1, sizeof(*t->alloc));
	if (!t->alloc) {
		err = -ENOMEM;
		goto fail;
	}
	if (libc_path)
		err = cp_allocator__from_file(libc_path, t->alloc);
	else
		err = cp_allocator__find(NULL, pid, early, all_probed(ap, &probed), t->alloc);
	if (err == -ENOENT && !libc_path && kill(pid, 0) && errno == ESRCH)
		err = -ESRCH;
	if (!err && pid > 0 && covered_by_all(ap, t->alloc))
		err = -EEXIST;
	if (err)
		goto fail;
	cp_cpu_src_open(&t->cpu, NULL, pid);
	cp_ap_place_sites(ap, t);
	err = cp_ap_attach_links(ap, t);
	if (err)
		goto fail;
	/* measured from the attach: a hot allocator's first calls count against the budget */
	t->since_ns = cp_now_ns();
	t->cpu_ns = cp_ap_target_cpu_ns(t);
	cp_alloc_guard_init(&t->guard, &ap->guard_cfg, t->since_ns);
	pthread_mutex_lock(&ap->lock);
	if (pid <= 0)
		t->tick_base = cp_ap_all_calls(ap);
	cp_ap_set_allowance(ap, t);
	ap->targets[ap->nr_targets++] = t;
	cp_ap_sync_syscalls(ap);
	pthread_cond_signal(&ap->wake);
	pthread_mutex_unlock(&ap->lock);
	return 0;
fail:
	free_target(ap, t);
	return err;
}

/*
 * 1 when @pid's allocator now is another file than @t's probes are on: it
 * exec'd (a held `-- CMD` child was probed in its pre-exec libc, and a
 * program linked with tcmalloc or jemalloc maps that after its exec); 0
 * when it is the same; a negative errno while it cannot be told (just
 * exec'd: the dynamic loader has not mapped its libraries yet, or the
 * files of the image it left are still being read).
 */
static int allocator_changed(const struct cp_alloc_probes *ap, const struct target *t, pid_t pid,
			     bool early)
{
	struct cp_allocator *now = calloc(1, sizeof(*now));
	struct cp_alloc_probed probed;
	int err =
		now ? cp_allocator__find(NULL, pid, early, all_probed(ap, &probed), now) : -ENOMEM;
	int changed = err ? err
			  : now->inode != t->alloc->inode ||
				      now->dev_major != t->alloc->dev_major ||
				      now->dev_minor != t->alloc->dev_minor ||
				      strcmp(now->path, t->alloc->path);

	free(now);
	return changed;
}

int cp_alloc_probes__attach_pid(struct cp_alloc_probes *ap, pid_t pid, bool early)
{
	struct target *t;
	int err;

	if (pid <= 0)
		return -EINVAL;
	t = cp_ap_find_target(ap, pid, NULL);
	err = t ? allocator_changed(ap, t, pid, early) : 0;
	if (err < 0 && err != -ENOMEM)
		return -EAGAIN;
	if (err > 0) {
		if (ap->opts.log)
			fprintf(ap->opts.log,
				"alloc probes: pid %d: its allocator changed (exec): probed "
				"again\n",
				(int)pid);
		cp_alloc_probes__detach_pid(ap, pid);
	}
	err = add_target(ap, pid, NULL, early);
	t = err ? NULL : cp_ap_find_target(ap, pid, NULL);
	if (ap->opts.log && t)
		fprintf(ap->opts.log, "alloc probes: pid %d: probed in its own %s (%s)\n", (int)pid,
			cp_allocator_kind_name(t->alloc->kind), t->alloc->path);
	/* -v: why a process got no probes of its own (failures are the caller's to say) */
	if (ap->opts.log && err == -EEXIST)
		fprintf(ap->opts.log, "alloc probes: pid %d: %s\n", (int)pid,
			cp_ap_find_target(ap, pid, NULL)
				? "has its probes already"
				: "its allocator is the system-wide one, probed already");
	return err;
}

/* The profiler's own dynamic loader, as its maps name it: cp_alloc_probes__all_likely(). */
static void note_own_loader(struct cp_alloc_probes *ap)
{
	const struct cp_map *ld;
	struct cp_maps *m;

	if (cp_maps__read(NULL, getpid(), &m))
		return;
	ld = cp_allocator_loader(m);
	if (ld)
		ap->all_loader = (struct cp_alloc_probed){
			.dev = makedev(ld->dev_major, ld->dev_minor), .ino = ld->inode};
	cp_maps__free(m);
}

int cp_alloc_probes__stop_in_loader(struct cp_alloc_probes *ap, pid_t pid)
{
	LIBBPF_OPTS(bpf_uprobe_opts, uo, .func_name = "_dl_debug_state");
	const struct cp_map *ld;
	struct cp_maps *m;
	struct stat st;
	int err;

	if (pid <= 0 || ap->loader_link.link)
		return -EINVAL;
	err = cp_maps__read(NULL, getpid(), &m);
	if (err)
		return err;
	ld = cp_allocator_loader(m);
	err = !ld ? -ENOENT : stat(ld->path, &st) ? -errno : 0;
	/* the profiler's own loader, a system file: libbpf finds the function in it */
	ap->loader_link.link = err ? NULL
				   : bpf_program__attach_uprobe_opts(ap->skel->progs.loader_stop,
								     pid, ld->path, 0, &uo);
	err = err ? err : ap->loader_link.link ? 0 : -errno;
	cp_maps__free(m);
	if (err)
		return err;
	/* by its path: as stat() sees the loader a command names (an overlay's dev is its own) */
	ap->loader_file = (struct cp_alloc_probed){.dev = st.st_dev, .ino = st.st_ino};
	ap->loader_link.fd = -1;
	ap->skel->bss->loader_stop_tgid = (__u32)pid;
	return 0;
}

/*
 * The dynamic loader the executable open at @fd names (PT_INTERP), into
 * @buf; false for none (a static program) or a header that cannot be read.
 */
static bool interp_of(int fd, char *buf, size_t sz)
{
	unsigned char head[sizeof(Elf64_Ehdr)], ent[sizeof(Elf64_Phdr)];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	Elf64_Ehdr eh;
	size_t esz;
	bool is64;

	if (n <= 0 || !cp_elf_ehdr(head, (size_t)n, &eh, &is64))
		return false;
	esz = cp_elf_entry_size(is64, true);
	/* a program has a few headers, PT_INTERP among the first */
	for (unsigned int i = 0; i < eh.e_phnum && i < 64; i++) {
		Elf64_Phdr ph;

		if (pread(fd, ent, esz, (off_t)(eh.e_phoff + i * esz)) != (ssize_t)esz)
			return false;
		cp_elf_phdr(ent, is64, &ph);
		if (ph.p_type != PT_INTERP)
			continue;
		if (!ph.p_filesz || ph.p_filesz > sz ||
		    pread(fd, buf, ph.p_filesz, (off_t)ph.p_offset) != (ssize_t)ph.p_filesz)
			return false;
		buf[ph.p_filesz - 1] = '\0';
		return true;
	}
	return false;
}

bool cp_alloc_probes__in_loader(const struct cp_alloc_probes *ap, pid_t pid)
{
	char exe[64], interp[PATH_MAX];
	struct stat st;
	bool ours;
	int fd;

	if (!ap->loader_link.link)
		return false;
	snprintf(exe, sizeof(exe), "/proc/%d/exe", (int)pid);
	fd = open(exe, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	/* the loader run as the program (ld.so PROG), or named by it */
	ours = (!fstat(fd, &st) && st.st_dev == ap->loader_file.dev &&
		st.st_ino == ap->loader_file.ino) ||
	       (interp_of(fd, interp, sizeof(interp)) && !stat(interp, &st) &&
		st.st_dev == ap->loader_file.dev && st.st_ino == ap->loader_file.ino);
	close(fd);
	return ours;
}

void cp_alloc_probes__loader_done(struct cp_alloc_probes *ap)
{
	const struct timespec settle = {0, 2 * 1000 * 1000};

	if (!ap->loader_link.link)
		return;
	ap->skel->bss->loader_stop_tgid = 0;
	/* a program that read the pid before it was cleared has sent its stop by now */
	nanosleep(&settle, NULL);
	cp_link_reaper__add(ap->reaper, &ap->loader_link, 1);
	ap->loader_link = (struct cp_probe_link){.fd = -1};
}

int cp_alloc_probes__attach_all(struct cp_alloc_probes *ap)
{
	struct cp_allocator *self = calloc(1, sizeof(*self));
	int err;

	if (!self)
		return -ENOMEM;
	/* our own libc is the system one */
	err = cp_allocator__find(NULL, getpid(), false, NULL, self);
	if (!err)
		err = add_target(ap, -1, self->path, false);
	free(self);
	if (!err)
		note_own_loader(ap);
	return err;
}

/*
 * Deletes @tgid's entries of @map, whose keys begin with the tgid (live
 * objects, call-site stacks): collects the keys first, because
 * get_next_key from a deleted key restarts at the first one.
 */
static void purge_tgid(const struct bpf_map *map, pid_t tgid)
{
	size_t ks = bpf_map__key_size(map), n = 0, cap = 0;
	int fd = bpf_map__fd(map);
	__u8 cur[CP_PURGE_KEY_MAX], next[CP_PURGE_KEY_MAX], *del = NULL, *tmp;
	bool have = false;
	__u32 key_tgid;

	if (ks > sizeof(cur) || ks < sizeof(key_tgid))
		return;
	while (!bpf_map_get_next_key(fd, have ? cur : NULL, next)) {
		memcpy(cur, next, ks);
		have = true;
		memcpy(&key_tgid, next, sizeof(key_tgid));
		if (key_tgid != (__u32)tgid)
			continue;
		if (n == cap) {
			cap = cap ? 2 * cap : CP_PURGE_BATCH;
			tmp = realloc(del, cap * ks);
			if (!tmp)
				break; /* what is left ages out as the map is reused */
			del = tmp;
		}
		memcpy(del + n++ * ks, next, ks);
	}
	for (size_t i = 0; i < n; i++)
		bpf_map_delete_elem(fd, del + i * ks);
	free(del);
}

static const struct bpf_map *stack_map(struct cacheperf *skel, bool odd)
{
	return odd ? skel->maps.alloc_stacks_odd : skel->maps.alloc_stacks;
}

size_t cp_alloc_stack_read(struct cacheperf *skel, __s64 stack_id, __u64 *ips, size_t max)
{
	__u64 v[CP_ALLOC_STACK_DEPTH] = {0};
	__u32 key = CP_ALLOC_STACK_BUCKET(stack_id);
	size_t n = 0;

	if (stack_id < 0 ||
	    bpf_map_lookup_elem(bpf_map__fd(stack_map(skel, cp_stack_gen_map(stack_id))), &key, v))
		return 0;
	/* the walk zero-fills the frames past the last one (bpf/fp_walk.bpf.h) */
	while (n < CP_ALLOC_STACK_DEPTH && n < max && v[n]) {
		ips[n] = v[n];
		n++;
	}
	return n;
}

size_t cp_alloc_stacks_empty(struct cacheperf *skel, bool odd)
{
	const struct bpf_map *map = stack_map(skel, odd);
	__u32 n_keys = bpf_map__max_entries(map), *keys, n;
	int fd = bpf_map__fd(map);

	/* a stack map's buckets are its keys, below its power-of-two max_entries */
	keys = calloc(2 * (size_t)n_keys, sizeof(*keys));
	if (!keys)
		return 0;
	n = cp_map_keys_u32(fd, keys, 2 * n_keys);
	for (__u32 i = 0; i < n; i++)
		bpf_map_delete_elem(fd, &keys[i]);
	free(keys);
	return n;
}

static __u64 calls_of(const struct cp_budget_proc *p)
{
	return p->alloc_calls;
}

/* Keeps @t's counts if it is among the detached targets with the most calls. */
static void keep_gone(struct cp_alloc_probes *ap, const struct target *t)
{
	struct cp_budget_proc p = {.pid = t->pid,
				   .cpu_ns = t->cpu_total_ns,
				   .alloc_calls = t->calls,
				   .exit_traps = t->exit_traps};

	cp_budget_keep_proc(ap->gone, &ap->nr_gone, &p, calls_of);
}

int cp_alloc_probes__detach_pid(struct cp_alloc_probes *ap, pid_t pid)
{
	struct target *t;
	__u32 key = pid;
	int i;

	pthread_mutex_lock(&ap->lock);
	t = cp_ap_find_target(ap, pid, &i);
	if (!t) {
		pthread_mutex_unlock(&ap->lock);
		return -ENOENT;
	}
	ap->calls_gone += t->calls;
	ap->backoffs_gone += t->guard.backoffs;
	ap->backoff_ns_gone += t->guard.backoff_total_ns;
	ap->budget_offs_gone += t->guard.budget_offs;
	ap->cpu_ns_gone += t->cpu_total_ns;
	ap->attached_ns_gone += cp_ap_attached_ns(t, cp_now_ns());
	ap->run_ns_gone += t->since_ns ? cp_now_ns() - t->since_ns : 0;
	if (t->pid > 0)
		keep_gone(ap, t);
	ap->targets[i] = ap->targets[--ap->nr_targets];
	free_target(ap, t);
	cp_ap_sync_syscalls(ap);
	pthread_mutex_unlock(&ap->lock);
	if (pid > 0) {
		bpf_map__delete_elem(ap->skel->maps.alloc_calls, &key, sizeof(key), 0);
		purge_tgid(ap->skel->maps.live_objects, pid);
		purge_tgid(ap->skel->maps.alloc_site_stacks, pid);
	}
	return 0;
}

void cp_alloc_probes__each_proc(const struct cp_alloc_probes *ap,
				void (*fn)(void *ctx, const struct cp_budget_proc *p), void *ctx)
{
	for (int i = 0; i < ap->nr_targets; i++) {
		const struct target *t = ap->targets[i];
		struct cp_budget_proc p = {
			.pid = t->pid,
			.cpu_ns = t->cpu_total_ns,
			.alloc_calls = t->calls + cp_ap_pending_calls(ap, t),
			.exit_traps = t->exit_traps,
		};

		if (t->pid > 0)
			fn(ctx, &p);
	}
	for (__u32 i = 0; i < ap->nr_gone; i++)
		fn(ctx, &ap->gone[i]);
}

void cp_alloc_probes__stats(const struct cp_alloc_probes *ap, struct cp_alloc_probes_stats *out)
{
	__u64 now = cp_now_ns();

	memset(out, 0, sizeof(*out));
	_Static_assert(sizeof(ap->skel->bss->alloc_stats) == sizeof(out->bpf),
		       "alloc_stats[] is struct cp_alloc_stats");
	memcpy(&out->bpf, ap->skel->bss->alloc_stats, sizeof(out->bpf));
	out->targets = ap->nr_targets;
	out->placed = ap->placed;
	out->entry_emulated = ap->entry_emulated;
	out->single_step = ap->single_step;
	out->backoffs = ap->backoffs_gone;
	out->backoff_ns = ap->backoff_ns_gone;
	out->budget_offs = ap->budget_offs_gone;
	out->calls = ap->calls_gone;
	out->cpu_ns = ap->cpu_ns_gone;
	out->attached_ns = ap->attached_ns_gone;
	out->run_ns = ap->run_ns_gone;
	out->raw_syscalls = ap->raw_syscalls;
	out->syscall_links = (__u64)ap->nr_sys_links;
	out->syscall_windows = ap->sys_windows.with;
	out->syscall_windows_skipped = ap->sys_windows.without;
	out->new_unprobed = ap->new_unprobed;
	out->forwarded = ap->forwarded;
	out->exit_lost = ap->skel->bss->alloc_exit_lost;
	out->detaching = cp_link_reaper__pending(ap->reaper);
	out->prog_ns = ap->prog_ns;
	out->sys_prog_ns = ap->sys_prog_ns;
	out->prog_ns_first = ap->prog_ns_first;
	out->sys_prog_ns_first = ap->sys_prog_ns_first;
	out->prog_measures = ap->prog_measures;
	for (int i = 0; i < ap->nr_targets; i++) {
		const struct target *t = ap->targets[i];

		out->calls += t->calls + cp_ap_pending_calls(ap, t);
		out->links += t->nr_links;
		out->backoffs += t->guard.backoffs;
		out->backoff_ns += t->guard.backoff_total_ns;
		out->backed_off += t->guard.backed_off;
		out->budget_offs += t->guard.budget_offs;
		out->cpu_ns += t->cpu_total_ns;
		out->attached_ns += cp_ap_attached_ns(t, now);
		out->run_ns += t->since_ns && now > t->since_ns ? now - t->since_ns : 0;
	}
}
