// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A tenant's file parsed first by a bounded worker (parse_worker.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <gelf.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>
#include <elfutils/libdwfl.h>

#include "machine/self_mem.h"
#include "machine/target_file.h"
#include "symbols/cfi_guard.h"
#include "symbols/parse_worker.h"
#include "symbols/sym_dwarf.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/sandbox.h"
#include "util/sandbox_id.h"
#include "util/self_usage.h"

/* The worker's descriptors: the copy, then its report. */
enum { FD_COPY = 3, FD_SAID = 4, FD_KEPT = 5 };
/* Points described between two looks at the resident set's peak. */
#define RSS_EVERY 1u
/* Points placed across each executable segment, besides the symbols. */
#define CODE_POINTS 4096u
/* Ranges of each compile unit a point is placed in. */
#define UNIT_RANGES 4
/* Registers asked of each CFI frame: x86-64's general ones and the return address. */
#define CFI_REGS 17

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static struct cp_pw_verdicts kept;
static __u64 nr_workers, nr_refused, nr_waited;
static bool said_unbounded;

/* The worker at work (pid 0: none); one at a time. */
static struct running {
	pid_t pid;
	int pfd;		/* its pidfd, -1 without one */
	int said_fd;		/* the read end of its report */
	struct cp_copy_key key; /* the content it parses */
	__u64 room;		/* the room it was given */
	__u64 deadline_ns;	/* when it is killed if it has not ended */
	char name[96];		/* the file, for the log */
	bool alone; /* left to work after the call that started it: its refusal is counted here */
	unsigned int cpu_s; /* its CPU seconds (RLIMIT_CPU) */
} run = {.pfd = -1, .said_fd = -1};
/* The copy whose last worker could not bound itself: parsed unbounded. */
static struct {
	bool set;
	struct cp_copy_key key;
} unbounded;

/* The live run's pace (cp_parse_worker_pace()); without it, a vet waits for its worker. */
static unsigned int wait_ms = UINT_MAX, per_mille;
static struct cp_pw_budget budget = {.tokens_ns = CP_PW_SECONDS * 1000000000ll};
/* The seconds lent to each server's request in flight (cp_parse_worker_lend()), by slot. */
static __s64 lent_ns[CP_PW_LOANS];

/* What the servers' requests in flight hold: no worker takes it. */
static __s64 lent_all_ns(void)
{
	__s64 sum = 0;

	for (unsigned int i = 0; i < CP_PW_LOANS; i++)
		sum += lent_ns[i];
	return sum;
}

enum cp_pw_verdict cp_pw_judge(int status, size_t said, __u64 grown, __u64 room)
{
	/* a storm first, however it ended: at its limit, libdw may fail, loop or crash */
	if (grown > room / 2 || (WIFEXITED(status) && WEXITSTATUS(status) == CP_PW_EXIT_MEMORY))
		return CP_PW_MEMORY;
	if (WIFSIGNALED(status)) {
		int sig = WTERMSIG(status);

		/* SIGKILL: the hard CPU limit after SIGXCPU */
		if (sig == SIGALRM || sig == SIGXCPU || sig == SIGKILL)
			return CP_PW_TIME;
		return CP_PW_CRASHED;
	}
	if (!WIFEXITED(status))
		return CP_PW_CRASHED;
	if (WEXITSTATUS(status) == CP_PW_EXIT_UNBOUNDED)
		return CP_PW_FAILED;
	/* exit(1) from libdw's out-of-memory handler, or a report cut short */
	if (WEXITSTATUS(status) || said < 16)
		return CP_PW_CRASHED;
	return CP_PW_PASSED;
}

enum cp_pw_verdict cp_pw_judge_in(int status, size_t said, __u64 grown, __u64 room)
{
	return cp_pw_judge(status, said, grown, cp_pw_allowance(room));
}

bool cp_pw_refusal_lifts(const struct cp_pw_outcome *o)
{
	return o->v == CP_PW_MEMORY ||
	       (o->v == CP_PW_TIME && o->cpu_ns < CP_PW_SECONDS * 1000000000ull / 2);
}

bool cp_pw_verdict_stands(const struct cp_pw_outcome *o, unsigned int tries, __u64 age_ns,
			  __u64 room_now)
{
	unsigned int doubled = tries > 1 ? tries - 1 : 0;

	switch (o->v) {
	case CP_PW_PASSED:
	case CP_PW_CRASHED:
		return true;
	case CP_PW_MEMORY:
		if (room_now > CP_PW_MAX_BYTES)
			room_now = CP_PW_MAX_BYTES;
		return room_now / 2 < (o->room > CP_PW_MIN_ROOM ? o->room : CP_PW_MIN_ROOM);
	case CP_PW_TIME:
		return o->cpu_ns >= CP_PW_SECONDS * 1000000000ull / 2 ||
		       age_ns < CP_PW_RETRY_NS << (doubled < 16 ? doubled : 16);
	default:
		return false;
	}
}

const char *cp_pw_verdict_name(enum cp_pw_verdict v)
{
	static const char *const names[] = {
		[CP_PW_PASSED] = "passed",    [CP_PW_CRASHED] = "crashed",
		[CP_PW_TIME] = "out of time", [CP_PW_MEMORY] = "out of memory",
		[CP_PW_FAILED] = "no worker", [CP_PW_WAITING] = "waiting",
	};

	return (unsigned int)v < sizeof(names) / sizeof(names[0]) ? names[v] : "?";
}

void cp_pw_budget_refill(struct cp_pw_budget *b, __u64 now_ns, unsigned int per_mille)
{
	const __s64 full = CP_PW_SECONDS * 1000000000ll;
	__u64 since = b->at_ns && now_ns > b->at_ns ? now_ns - b->at_ns : 0;

	if (b->at_ns && now_ns < b->at_ns)
		return; /* a clock that went back earns nothing */
	b->at_ns = now_ns;
	/* a share of a day's wall time at most: no overflow, and it fills the bucket anyway */
	if (since > 86400ull * 1000000000ull)
		since = 86400ull * 1000000000ull;
	b->tokens_ns += (__s64)(since / 1000 * per_mille);
	if (b->tokens_ns > full)
		b->tokens_ns = full;
}

unsigned int cp_pw_budget_cpu_s(const struct cp_pw_budget *b)
{
	__s64 s = b->tokens_ns / 1000000000ll;

	return s < 1 ? 0 : s > CP_PW_SECONDS ? CP_PW_SECONDS : (unsigned int)s;
}

static int no_file(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr base,
		   char **file_name, Elf **elfp)
{
	(void)mod, (void)userdata, (void)name, (void)base, (void)file_name, (void)elfp;
	return -1;
}

/* Separate debug info is a file of its own, vetted when it is opened. */
static int no_debuginfo(Dwfl_Module *mod, void **userdata, const char *modname, Dwarf_Addr base,
			const char *file_name, const char *debuglink_file, GElf_Word debuglink_crc,
			char **debuginfo_file_name)
{
	(void)mod, (void)userdata, (void)modname, (void)base, (void)file_name;
	(void)debuglink_file, (void)debuglink_crc, (void)debuginfo_file_name;
	return -1;
}

static const Dwfl_Callbacks vet_callbacks = {
	.find_elf = no_file,
	.find_debuginfo = no_debuginfo,
	.section_address = dwfl_offline_section_address,
};

/* What the unwinder asks of @cfi at @pc: the frame, its CFA and registers. */
static void ask_cfi(Dwarf_CFI *cfi, Dwarf_Addr pc)
{
	Dwarf_Frame *frame;
	Dwarf_Op spare[3], *ops;
	size_t nops;

	if (!cfi || dwarf_cfi_addrframe(cfi, pc, &frame))
		return;
	dwarf_frame_cfa(frame, &ops, &nops);
	for (int reg = 0; reg < CFI_REGS; reg++)
		dwarf_frame_register(frame, reg, spare, &ops, &nops);
	free(frame);
}

struct points {
	__u64 *a;
	size_t n;
};

static void add_point(struct points *p, __u64 a)
{
	if (p->n < CP_PW_MAX_POINTS)
		p->a[p->n++] = a;
}

/*
 * The start and middle of each compile unit's first ranges: code a unit
 * claims that no symbol names (a tenant's unit may cover only a hot loop
 * deep inside a function) is parsed here too.
 */
static void unit_points(Dwfl_Module *mod, struct points *p)
{
	Dwarf_Addr bias;
	Dwarf *dbg = dwfl_module_getdwarf(mod, &bias);
	Dwarf_Off off = 0, next;
	size_t hsize;
	unsigned int units = 0;

	while (dbg && units++ < CP_PW_MAX_UNITS && p->n < CP_PW_MAX_POINTS / 2 &&
	       dwarf_nextcu(dbg, off, &next, &hsize, NULL, NULL, NULL) == 0) {
		Dwarf_Addr base, lo, hi;
		Dwarf_Die cu;
		ptrdiff_t r = 0;

		if (dwarf_offdie(dbg, off + hsize, &cu))
			for (int i = 0;
			     i < UNIT_RANGES && (r = dwarf_ranges(&cu, r, &base, &lo, &hi)) > 0;
			     i++) {
				add_point(p, lo + bias);
				add_point(p, lo + bias + (hi - lo) / 2);
			}
		off = next;
	}
}

/*
 * Each compile unit's first ranges, every function symbol's entry and
 * middle, then points across each executable segment.
 */
static void find_points(Dwfl_Module *mod, Elf *elf, GElf_Addr bias, struct points *p)
{
	int nsym;
	size_t phnum;

	unit_points(mod, p);
	nsym = dwfl_module_getsymtab(mod);

	for (int i = 1; i < nsym; i++) {
		GElf_Sym sym;
		GElf_Addr addr;

		if (!dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL) ||
		    GELF_ST_TYPE(sym.st_info) != STT_FUNC || !addr)
			continue;
		add_point(p, addr);
		if (sym.st_size > 1)
			add_point(p, addr + sym.st_size / 2);
	}
	if (elf_getphdrnum(elf, &phnum))
		return;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;
		__u64 step;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_LOAD ||
		    !(ph.p_flags & PF_X) || !ph.p_memsz)
			continue;
		step = ph.p_memsz / CODE_POINTS ? ph.p_memsz / CODE_POINTS : 1;
		for (__u64 off = 0; off < ph.p_memsz; off += step)
			add_point(p, ph.p_vaddr + bias + off);
	}
}

/* Whether the resident set's peak is above @max (0: no bound). */
static bool past(__u64 max)
{
	struct rusage ru;

	return max && !getrusage(RUSAGE_SELF, &ru) && ((__u64)ru.ru_maxrss << 10) > max;
}

long cp_pw_exercise(int fd, __u64 max_rss)
{
	struct points p = {.a = malloc(CP_PW_MAX_POINTS * sizeof(*p.a))};
	int dfd = dup(fd);
	Dwarf_Addr eh_bias = 0, dw_bias = 0;
	Dwarf_CFI *eh = NULL, *dw = NULL;
	Dwfl_Module *mod;
	GElf_Addr bias;
	Dwfl *dwfl;
	Elf *elf;

	if (!p.a || dfd < 0) {
		free(p.a);
		if (dfd >= 0)
			close(dfd);
		return p.a ? -EBADF : -ENOMEM;
	}
	dwfl = dwfl_begin(&vet_callbacks);
	if (!dwfl) {
		free(p.a);
		close(dfd);
		return -ENOMEM;
	}
	dwfl_report_begin(dwfl);
	mod = dwfl_report_elf(dwfl, "vet", "vet", dfd, 0, false);
	if (!mod)
		close(dfd);
	if (!mod || dwfl_report_end(dwfl, NULL, NULL) || !(elf = dwfl_module_getelf(mod, &bias))) {
		dwfl_end(dwfl);
		free(p.a);
		return -ENOEXEC;
	}
	find_points(mod, elf, bias, &p);
	/* CFI the guard refuses is hidden from libdw in the profiler: not asked here either */
	if (cp_cfi_guard_check(elf, true) == CP_CFI_OK) {
		eh = dwfl_module_eh_cfi(mod, &eh_bias);
		dw = dwfl_module_dwarf_cfi(mod, &dw_bias);
	}
	for (size_t i = 0; i < p.n; i++) {
		struct cp_symbol_info info;

		if (i % RSS_EVERY == 0 && past(max_rss)) {
			p.n = 0;
			break;
		}
		cp_sym_describe(mod, p.a[i], &info);
		ask_cfi(eh, p.a[i] - eh_bias);
		ask_cfi(dw, p.a[i] - dw_bias);
	}
	cp_sym_release(dwfl);
	dwfl_end(dwfl);
	free(p.a);
	return p.n || !past(max_rss) ? (long)p.n : -ENOMEM;
}

__u64 cp_pw_allowance(__u64 room)
{
	return room / 4 * 3;
}

__u64 cp_pw_room(void)
{
	struct cp_self_mem now;
	__u64 room;

	cp_self_mem_read(&now);
	room = cp_self_mem_room();
	return room > CP_PW_MAX_BYTES ? CP_PW_MAX_BYTES : room;
}

/*
 * The worker: its descriptors set (the copy at 3, its report at 4, the
 * standard ones on /dev/null), its peak reset to now (fork copies the
 * parent's), its resident set said, bounded, then the parse, then the
 * points said. Never returns. Its growth is bounded by what fits in @room
 * beside its resident set, which a count of each process's resident set
 * (GNU time's) sees whole: so the worker alone stays within @room, and the
 * profiler and the worker together (the kernel's count: shared pages
 * once) within --max-memory. It has @cpu_s seconds of CPU time.
 */
static void worker(int mfd, int said, __u64 room, unsigned int cpu_s)
{
	struct cp_sandbox sb = {
		.stack_bytes = CP_PW_STACK_BYTES,
		.cpu_s = cpu_s,
		.wall_s = CP_PW_SECONDS,
		.keep_fds = FD_KEPT,
	};
	int null = open("/dev/null", O_RDWR), copy = fcntl(mfd, F_DUPFD, FD_KEPT),
	    out = fcntl(said, F_DUPFD, FD_KEPT), clear;
	__u64 rss = 0; /* 0 when unread */
	long n;

	prctl(PR_SET_NAME, "cp-parse"); /* what ps and top call it */
	if (null < 0 || copy < 0 || out < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(copy, FD_COPY) < 0 || dup2(out, FD_SAID) < 0)
		_exit(CP_PW_EXIT_UNBOUNDED);
	clear = open("/proc/self/clear_refs", O_WRONLY | O_CLOEXEC);
	if (clear < 0 || write(clear, "5", 1) != 1) /* the peak resident set is now's */
		_exit(CP_PW_EXIT_UNBOUNDED);
	close(clear);
	cp_self_status_bytes("VmRSS", &rss);
	sb.data_more_bytes = cp_pw_allowance(room);
	if (write(FD_SAID, &rss, sizeof(rss)) != sizeof(rss) || cp_sandbox_enter(&sb))
		_exit(CP_PW_EXIT_UNBOUNDED);
	n = cp_pw_exercise(FD_COPY, rss + sb.data_more_bytes / 2);
	if (write(FD_SAID, &n, sizeof(n)) != sizeof(n))
		_exit(CP_PW_EXIT_UNBOUNDED);
	/* not ELF: nothing for libdw either; no descriptor: not a verdict on the file */
	_exit(n == -ENOMEM ? CP_PW_EXIT_MEMORY : n < 0 && n != -ENOEXEC ? CP_PW_EXIT_UNBOUNDED : 0);
}

void cp_pw_verdicts_keep(struct cp_pw_verdicts *t, const struct cp_copy_key *key,
			 const struct cp_pw_outcome *o, __u64 now_ns)
{
	struct cp_pw_kept *k = (struct cp_pw_kept *)cp_pw_verdicts_find(t, key);
	unsigned int tries = k ? k->tries + 1 : 1;

	if (!k) {
		k = &t->k[t->next];
		t->next = (t->next + 1) % CP_PW_VERDICTS;
		if (t->nr < CP_PW_VERDICTS)
			t->nr++;
	}
	*k = (struct cp_pw_kept){.key = *key, .o = *o, .made_ns = now_ns, .tries = tries};
}

const struct cp_pw_kept *cp_pw_verdicts_find(const struct cp_pw_verdicts *t,
					     const struct cp_copy_key *key)
{
	for (unsigned int i = 0; i < t->nr; i++)
		if (cp_copy_key_equal(&t->k[i].key, key))
			return &t->k[i];
	return NULL;
}

/* Keeps outcome @o for the content @key, counted when it refuses the file. */
static void keep(const struct cp_copy_key *key, const struct cp_pw_outcome *o)
{
	cp_pw_verdicts_keep(&kept, key, o, cp_now_ns());
	if (o->v != CP_PW_PASSED && o->v != CP_PW_WAITING)
		nr_refused++;
}

/* The whole seconds the budget holds beyond @held_ns lent or given already. */
static unsigned int budget_s(__s64 held_ns)
{
	struct cp_pw_budget b = budget;

	b.tokens_ns -= held_ns;
	return cp_pw_budget_cpu_s(&b);
}

/*
 * The verdict kept for content @key while it stands, else CP_PW_FAILED;
 * CP_PW_FAILED also for a copy whose worker could not bound itself (parsed
 * unbounded). A copy stopped at the CPU time the budget gave it waits
 * until the budget holds what it needs.
 */
static enum cp_pw_verdict kept_verdict(const struct cp_copy_key *key)
{
	const struct cp_pw_kept *k = cp_pw_verdicts_find(&kept, key);

	if (!k)
		return CP_PW_FAILED;
	if (k->o.v == CP_PW_WAITING)
		return budget_s(lent_all_ns()) < k->o.need_s ? CP_PW_WAITING : CP_PW_FAILED;
	if (cp_pw_verdict_stands(&k->o, k->tries, cp_now_ns() - k->made_ns, cp_self_mem_room()))
		return k->o.v;
	return CP_PW_FAILED;
}

/*
 * Starts a worker on @mfd with @cpu_s seconds of CPU time: 0, or -errno
 * when none could be made.
 */
static int start_worker(int mfd, const struct cp_copy_key *key, const char *name,
			unsigned int cpu_s)
{
	int p[2];
	pid_t pid;

	run.room = cp_pw_room();
	(void)cp_sandbox_id(); /* the sandbox's user, chosen once: the child inherits it */
	if (pipe2(p, O_CLOEXEC))
		return -errno;
	pid = fork();
	if (pid == 0)
		worker(mfd, p[1], run.room, cpu_s);
	close(p[1]);
	if (pid < 0) {
		close(p[0]);
		return -errno;
	}
	run.pid = pid;
	run.said_fd = p[0];
	cp_self_mem_set_worker(pid);
	/* its pidfd becomes readable when it ends: no polling meanwhile */
	run.pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	run.key = *key;
	run.alone = false;
	run.cpu_s = cpu_s;
	/* its alarm ends it; a worker stopped (SIGSTOP) past that is killed here */
	run.deadline_ns = cp_now_ns() + (CP_PW_SECONDS + 2) * 1000000000ull;
	snprintf(run.name, sizeof(run.name), "%s", name ? name : "?");
	return 0;
}

/* The copy of the worker that just ended gets no verdict: it is parsed unbounded. */
static void set_unbounded(void)
{
	unbounded.set = true;
	unbounded.key = run.key;
}

/*
 * Waits up to @ms (0: only looks) for the worker at work to end; once it
 * has, judges it, keeps its verdict, spends its CPU time from the budget
 * and says it. Past its deadline it is killed. True when none is at work
 * any more.
 */
static bool reap(unsigned int ms)
{
	static struct cp_log_limit refused_said = CP_LOG_LIMIT_INIT(CP_LOG_WARNING, 3);
	__u64 end = cp_now_ns() + (__u64)ms * 1000000ull, report[2] = {0, 0}, peak, now;
	struct cp_pw_outcome o = {.v = CP_PW_FAILED, .room = run.room};
	struct rusage ru;
	size_t said = 0;
	int status;
	pid_t got;
	ssize_t n;

	if (!run.pid)
		return true;
	while ((got = wait4(run.pid, &status, WNOHANG, &ru)) == 0 || (got < 0 && errno == EINTR)) {
		struct pollfd pf = {.fd = run.pfd, .events = POLLIN};
		__u64 until;

		now = cp_now_ns();
		if (now >= run.deadline_ns) {
			kill(run.pid, SIGKILL);
			/* killed: its end is a moment away */
			run.deadline_ns = UINT64_MAX;
			end = now + 100000000ull;
		} else if (now >= end) {
			return false;
		}
		until = end < run.deadline_ns ? end : run.deadline_ns;
		/* no pidfd (before Linux 5.3), or a signal: look again soon */
		if (run.pfd < 0 || poll(&pf, 1, (int)((until - now) / 1000000 + 1)) < 0)
			usleep(2000);
	}
	if (run.pfd >= 0)
		close(run.pfd);
	while (said < sizeof(report) &&
	       (n = read(run.said_fd, (char *)report + said, sizeof(report) - said)) > 0)
		said += (size_t)n;
	close(run.said_fd);
	cp_self_mem_set_worker(0);
	run.pid = 0;
	run.pfd = run.said_fd = -1;
	if (got < 0) {
		/* not our child any more (SIGCHLD ignored: reaped by the kernel): no verdict
		 * can be had, the file is parsed unbounded, as when no worker is made */
		set_unbounded();
		return true;
	}
	nr_workers++;
	peak = (__u64)ru.ru_maxrss << 10;
	o.cpu_ns = cp_rusage_cpu_ns(&ru);
	/* the profiler's own cost: a worker is a helper of it */
	cp_self_helpers_add_ns(o.cpu_ns);
	if (per_mille)
		budget.tokens_ns -= (__s64)o.cpu_ns;
	o.v = cp_pw_judge_in(status, said, peak > report[0] ? peak - report[0] : 0, run.room);
	if (o.v == CP_PW_FAILED) {
		/* no verdict on the file: it is parsed unbounded, as when no worker is made */
		set_unbounded();
		return true;
	}
	/* stopped at the CPU time the budget gave it, short of a worker's own: not the
	 * file's fault; it waits until the budget holds twice that */
	if (o.v == CP_PW_TIME && run.cpu_s < CP_PW_SECONDS && WIFSIGNALED(status) &&
	    WTERMSIG(status) != SIGALRM) {
		o.v = CP_PW_WAITING;
		o.need_s = 2 * run.cpu_s < CP_PW_SECONDS ? 2 * run.cpu_s : CP_PW_SECONDS;
	}
	keep(&run.key, &o);
	/* the call that started it answered "waiting": no caller counts this refusal */
	if (run.alone && o.v != CP_PW_PASSED && o.v != CP_PW_WAITING)
		cp_tf_count(o.v == CP_PW_MEMORY ? CP_TF_MEMORY : CP_TF_PARSE);
	cp_info("parse worker: %s: %s in %.1f ms of CPU", run.name, cp_pw_verdict_name(o.v),
		(double)o.cpu_ns / 1e6);
	if (o.v != CP_PW_PASSED && o.v != CP_PW_WAITING)
		cp_log_limited(&refused_said, "parse worker: %s: %s; its symbols are not read",
			       run.name, cp_pw_verdict_name(o.v));
	return true;
}

/* Whether content @key is the one whose worker could not bound itself. */
static bool is_unbounded(const struct cp_copy_key *key)
{
	return unbounded.set && cp_copy_key_equal(&unbounded.key, key);
}

/*
 * The CPU seconds a worker starting now gets, after the one that ended is
 * reaped and the budget refilled: 0 while one is at work (one at a time)
 * or the live run's budget holds less than a second beyond what the
 * describe server's request in flight was lent. Under the lock.
 */
static unsigned int worker_seconds(void)
{
	reap(0);
	if (!per_mille)
		return run.pid ? 0 : CP_PW_SECONDS;
	cp_pw_budget_refill(&budget, cp_now_ns(), per_mille);
	return run.pid ? 0 : budget_s(lent_all_ns());
}

enum cp_pw_verdict cp_parse_worker_vet(int mfd, const struct cp_copy_key *file, const char *name)
{
	struct cp_copy_key key = {0};
	enum cp_pw_verdict v;
	unsigned int cpu_s;

	/* no key of the file's content: the copy's own (a new copy, a new verdict) */
	if (file && file->ino)
		key = *file;
	else if (cp_tf_key(mfd, &key))
		return CP_PW_FAILED;
	pthread_mutex_lock(&lock);
	cpu_s = worker_seconds();
	v = kept_verdict(&key);
	if (v != CP_PW_FAILED || is_unbounded(&key))
		goto out;
	/* the file waits for the worker at work (its own too), or for the budget */
	v = CP_PW_WAITING;
	if (!cpu_s)
		goto out;
	if (start_worker(mfd, &key, name, cpu_s)) {
		v = CP_PW_FAILED;
		goto out;
	}
	reap(wait_ms);
	/* its verdict, or none yet */
	run.alone = run.pid;
	v = run.pid ? CP_PW_WAITING : kept_verdict(&key);
out:
	if (v == CP_PW_FAILED) {
		/* no worker, no verdict: parsed unbounded, as before the worker existed */
		if (!said_unbounded)
			cp_warn("parse worker: none could be made or bounded; tenants' files "
				"are parsed in the profiler");
		said_unbounded = true;
	}
	pthread_mutex_unlock(&lock);
	return v;
}

bool cp_parse_worker_known(const struct cp_copy_key *file, enum cp_pw_verdict *v)
{
	if (!file->ino)
		return false;
	pthread_mutex_lock(&lock);
	*v = kept_verdict(file);
	pthread_mutex_unlock(&lock);
	/* "no worker" and "waiting" are no verdict on the file */
	return *v != CP_PW_FAILED && *v != CP_PW_WAITING;
}

bool cp_parse_worker_refused_for_now(const struct cp_copy_key *file)
{
	const struct cp_pw_kept *k;
	bool lifts;

	pthread_mutex_lock(&lock);
	k = file->ino ? cp_pw_verdicts_find(&kept, file) : NULL;
	lifts = k && cp_pw_refusal_lifts(&k->o);
	pthread_mutex_unlock(&lock);
	return lifts;
}

void cp_parse_worker_keep(const struct cp_copy_key *file, const struct cp_pw_outcome *o)
{
	pthread_mutex_lock(&lock);
	keep(file, o);
	pthread_mutex_unlock(&lock);
}

bool cp_parse_worker_must_wait(void)
{
	bool wait;

	pthread_mutex_lock(&lock);
	wait = !worker_seconds();
	pthread_mutex_unlock(&lock);
	return wait;
}

unsigned int cp_parse_worker_lend(unsigned int slot, unsigned int most_s)
{
	unsigned int s = most_s;

	pthread_mutex_lock(&lock);
	reap(0);
	if (per_mille) {
		cp_pw_budget_refill(&budget, cp_now_ns(), per_mille);
		/* a worker at work may spend the seconds it was given: not lent twice */
		s = budget_s(run.pid ? (__s64)run.cpu_s * 1000000000ll : 0);
		s = s < most_s ? s : most_s;
		lent_ns[slot] = (__s64)s * 1000000000ll;
	}
	pthread_mutex_unlock(&lock);
	return s;
}

void cp_parse_worker_spent(unsigned int slot, __u64 cpu_ns)
{
	pthread_mutex_lock(&lock);
	lent_ns[slot] = 0;
	if (per_mille)
		budget.tokens_ns -= (__s64)cpu_ns;
	pthread_mutex_unlock(&lock);
}

void cp_parse_worker_waited(void)
{
	__atomic_add_fetch(&nr_waited, 1, __ATOMIC_RELAXED);
}

void cp_parse_worker_pace(unsigned int ms, unsigned int share_per_mille)
{
	pthread_mutex_lock(&lock);
	wait_ms = ms;
	per_mille = share_per_mille;
	/* earned from now */
	budget = (struct cp_pw_budget){.tokens_ns = CP_PW_LIVE_START_S * 1000000000ll,
				       .at_ns = cp_now_ns()};
	memset(lent_ns, 0, sizeof(lent_ns));
	pthread_mutex_unlock(&lock);
}

void cp_parse_worker_settle(void)
{
	pthread_mutex_lock(&lock);
	reap(UINT_MAX);
	/* the budget stays: files that waited do not all get a worker of their own now */
	wait_ms = UINT_MAX;
	pthread_mutex_unlock(&lock);
}

void cp_parse_worker_stats(__u64 *workers, __u64 *refused, __u64 *waited)
{
	pthread_mutex_lock(&lock);
	*workers = nr_workers;
	*refused = nr_refused;
	*waited = __atomic_load_n(&nr_waited, __ATOMIC_RELAXED);
	pthread_mutex_unlock(&lock);
}
