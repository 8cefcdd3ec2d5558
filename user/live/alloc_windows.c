// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The allocation probes' budget windows (live/alloc_probes_priv.h): the
 * calls each target made since the last tick, the probe programs' own cost
 * measured over the targets' first calls and again later, the allowance of
 * each open window and the cutter thread that ends it there, and the tick
 * that runs the guard (budget/alloc_guard.h) over them.
 */
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/alloc_probes.h"
#include "live/alloc_probes_priv.h"
#include "live/cpu_costs.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/rt_thread.h"

/* Calls counted for @t (a process) since the last tick. */
static __u64 take_calls(struct cp_alloc_probes *ap, const struct target *t)
{
	__u32 key = t->pid;
	__u64 n = 0;

	if (bpf_map__lookup_and_delete_elem(ap->skel->maps.alloc_calls, &key, sizeof(key), &n,
					    sizeof(n), 0))
		return 0;
	return n;
}

/*
 * -a: the calls of every process since the last tick, as all CPUs counted
 * them (each call at once), less @others, those the processes probed on
 * their own (another allocator) were counted through their own probes. The
 * busiest process's count alone, as before, let the windows spend half
 * again their share while a build ran beside them. The system-wide probes
 * count nothing per process (CP_ALLOC_COOKIE_ALL): alloc_calls holds the
 * processes probed on their own alone, and is not walked.
 */
static __u64 take_all_calls(struct cp_alloc_probes *ap, struct target *t, __u64 others)
{
	__u64 all, n;

	all = cp_ap_all_calls(ap);
	n = all > t->tick_base ? all - t->tick_base : 0;
	if (all)
		t->tick_base = all;
	return n > others ? n - others : 0;
}

/*
 * The run time and runs of the allocation probes' programs so far (@prog),
 * and of the raw system-call programs, with the system calls they ran on
 * (@sys), as the programs time themselves (bpf/cpu_cost.bpf.h); zeros
 * when unread.
 */
static void prog_costs(const struct cp_alloc_probes *ap, struct cp_prog_cost *prog,
		       struct cp_prog_cost *sys)
{
	struct cp_cpu_cost sum;

	memset(prog, 0, sizeof(*prog));
	memset(sys, 0, sizeof(*sys));
	if (cp_cpu_costs__sum(ap->skel, &sum))
		return;
	*prog = (struct cp_prog_cost){.run_ns = sum.alloc_prog_ns, .calls = sum.alloc_prog_calls};
	if (ap->raw_syscalls)
		*sys = (struct cp_prog_cost){.run_ns = sum.sys_prog_ns, .calls = sum.syscalls};
}

/*
 * What the windows take a call to cost: the traps (calibrated) and the
 * programs. Until the programs' cost is measured on the targets' first
 * calls it is taken to be the traps' again (it measures 0.9-1.1 us against
 * 1.2 us of traps here): sizing the first windows on the traps alone made
 * them twice too long.
 */
static __u64 guard_call_ns(const struct cp_alloc_probes *ap)
{
	return ap->opts.call_ns + (ap->prog_ns ? ap->prog_ns : ap->opts.call_ns);
}

/* A measure ends: the next CP_PROG_COST_AGAIN_NS after @now_ns. */
static void measure_end(struct cp_alloc_probes *ap, __u64 now_ns)
{
	ap->measuring = false;
	ap->prog_at_ns = now_ns + CP_PROG_COST_AGAIN_NS;
}

/* A measure begins: the programs' counters now are its base. */
static void measure_begin(struct cp_alloc_probes *ap, __u64 now_ns)
{
	prog_costs(ap, &ap->prog_base, &ap->sys_base);
	ap->measuring = true;
	ap->prog_at_ns = now_ns;
}

/*
 * A later measure @ns per call (@sys_ns per system call) against the
 * figures in use: a higher one is kept, and every target's account is
 * charged what its calls so far owe on top, so the windows from now on pay
 * for the past too (the run's estimate prices the calls at what the
 * programs took over the run: user/live/run.c).
 */
static void revise_prog_cost(struct cp_alloc_probes *ap, __u64 ns, __u64 sys_ns)
{
	__u64 owed = cp_prog_cost_raise(&ap->prog_ns, ns);

	cp_prog_cost_raise(&ap->sys_prog_ns, sys_ns);
	for (int i = 0; i < ap->nr_targets && owed; i++)
		cp_alloc_guard_charge(&ap->targets[i]->guard, &ap->guard_cfg,
				      ap->targets[i]->calls * owed);
}

/*
 * The programs' own cost per call, once the targets made
 * CP_PROG_COST_CALLS of them since the measure began: windows from then on
 * count it. CP_PROG_COST_AGAIN_NS after, it is measured again, over the
 * windows of at most CP_PROG_COST_SPAN_NS (revise_prog_cost()).
 */
static void measure_prog_cost(struct cp_alloc_probes *ap, __u64 now_ns)
{
	struct cp_prog_cost now, sys;
	__u64 ns, sys_ns = 0;

	if (!ap->measuring) {
		if (ap->prog_ns && ap->nr_targets && now_ns >= ap->prog_at_ns)
			measure_begin(ap, now_ns);
		return;
	}
	prog_costs(ap, &now, &sys);
	if (!cp_prog_cost_per_call(&now, &ap->prog_base,
				   ap->prog_ns ? CP_PROG_COST_AGAIN_CALLS : CP_PROG_COST_CALLS,
				   &ns)) {
		/* a later measure that found too few calls: another time */
		if (ap->prog_ns && now_ns - ap->prog_at_ns >= CP_PROG_COST_SPAN_NS)
			measure_end(ap, now_ns);
		return;
	}
	/* the system-call programs ran in the same windows, on every system call */
	cp_prog_cost_per_call(&sys, &ap->sys_base, 1, &sys_ns);
	ap->prog_measures++;
	if (!ap->prog_ns) {
		ap->prog_ns = ap->prog_ns_first = ns;
		ap->sys_prog_ns = ap->sys_prog_ns_first = sys_ns;
	} else {
		revise_prog_cost(ap, ns, sys_ns);
	}
	measure_end(ap, now_ns);
	ap->guard_cfg.call_ns = guard_call_ns(ap);
}

/* @t's calls counted since the last tick, as the cutter sees them. */
static __u64 window_calls(const struct cp_alloc_probes *ap, const struct target *t)
{
	__u64 n;

	if (t->pid > 0)
		return cp_ap_pending_calls(ap, t);
	n = cp_ap_all_calls(ap);
	return n > t->cut_base ? n - t->cut_base : 0;
}

/* Whether @t has a budget window open: what the cutter watches. */
static bool window_open(const struct target *t)
{
	return t->nr_links && t->allow_calls != ~0ull;
}

/*
 * Sets process @t's mark in BPF to where its open window's allowance ends
 * (0: no window), when the cutter waits on the marks: when it is not what
 * was set last, or always (@again: BPF clears a mark it reached). Under
 * ap->lock.
 */
static void set_mark(struct cp_alloc_probes *ap, struct target *t, bool again)
{
	__u32 key = (__u32)t->pid;
	__u64 mark = 0;
	int err;

	if (!ap->cut_rb)
		return;
	/* a window with nothing left is cut by the next call (batch) */
	if (window_open(t))
		mark = t->allow_calls ? t->allow_calls : 1;
	/* -a: where all CPUs' count ends the window */
	if (mark && t->pid <= 0)
		mark += t->cut_base;
	if (mark == t->mark && !again)
		return;
	if (t->pid > 0)
		err = bpf_map__update_elem(ap->skel->maps.alloc_cut_at, &key, sizeof(key), &mark,
					   sizeof(mark), BPF_ANY);
	else
		/* no one count in BPF holds all CPUs' calls: each CPU gets a mark */
		err = cp_cpu_costs__mark_calls(ap->skel, mark);
	/* not set (a full map): the cutter polls, as without the marks */
	t->mark = err ? 0 : mark;
	t->mark_failed = err != 0;
}

/* What the open window of @t may still take, from the calls counted now on; under ap->lock. */
void cp_ap_set_allowance(struct cp_alloc_probes *ap, struct target *t)
{
	t->allow_calls = cp_alloc_guard_allowance(&t->guard, &ap->guard_cfg);
	if (t->pid <= 0 && t->allow_calls != ~0ull)
		t->cut_base = cp_ap_all_calls(ap);
	set_mark(ap, t, false);
}

/*
 * Ends each open budget window whose calls reached its allowance: its
 * links go to the reaper, whose real-time workers take them off at once and
 * together; under ap->lock. Returns true while a window is open.
 */
static bool cut_windows(struct cp_alloc_probes *ap)
{
	bool open = false, cut = false;

	for (int i = 0; i < ap->nr_targets; i++) {
		struct target *t = ap->targets[i];

		if (!window_open(t))
			continue;
		if (window_calls(ap, t) < t->allow_calls) {
			open = true;
			continue;
		}
		cp_ap_detach_links(ap, t);
		t->cut = true;
		cut = true;
	}
	if (cut)
		cp_ap_sync_syscalls(ap);
	return open;
}

/*
 * Sets every open window's mark again, so that a count that reaches it
 * from now on wakes the cutter, and one that reached it before is seen by
 * the cut_windows() that follows. Whether the marks serve: they are had,
 * and every open window's is set. Under ap->lock.
 */
static bool marks_serve(struct cp_alloc_probes *ap)
{
	bool serve = ap->cut_rb != NULL;

	for (int i = 0; serve && i < ap->nr_targets; i++) {
		struct target *t = ap->targets[i];

		set_mark(ap, t, window_open(t));
		serve = !(window_open(t) && t->mark_failed);
	}
	return serve;
}

/* Waits for a record in alloc_cuts (a mark reached) or the stop, and takes the records. */
static void wait_for_mark(struct cp_alloc_probes *ap)
{
	struct pollfd fds[2] = {
		{.fd = ring_buffer__epoll_fd(ap->cut_rb), .events = POLLIN},
		{.fd = ap->cut_efd, .events = POLLIN},
	};

	if (poll(fds, 2, -1) > 0 && fds[0].revents)
		ring_buffer__consume(ap->cut_rb);
}

/*
 * The cutter's loop: while a window is open, woken by its mark, or every
 * CP_CUT_POLL_NS when a mark could not be set.
 */
static void *cutter_main(void *arg)
{
	struct cp_alloc_probes *ap = arg;
	const struct timespec poll = {.tv_nsec = CP_CUT_POLL_NS};

	pthread_mutex_lock(&ap->lock);
	while (!ap->cutter_stop) {
		bool marked = marks_serve(ap);

		if (!cut_windows(ap)) {
			pthread_cond_wait(&ap->wake, &ap->lock);
			continue;
		}
		pthread_mutex_unlock(&ap->lock);
		if (marked)
			wait_for_mark(ap);
		else
			nanosleep(&poll, NULL);
		pthread_mutex_lock(&ap->lock);
	}
	pthread_mutex_unlock(&ap->lock);
	return NULL;
}

/* A record in alloc_cuts: what matters is that it woke the cutter. */
static int on_mark(void *ctx, void *data, size_t size)
{
	(void)ctx;
	(void)data;
	(void)size;
	return 0;
}

/* The marks' ring and the stop's eventfd; without either the cutter polls. */
static void open_marks(struct cp_alloc_probes *ap)
{
	ap->cut_efd = eventfd(0, EFD_CLOEXEC | EFD_NONBLOCK);
	if (ap->cut_efd >= 0)
		ap->cut_rb = ring_buffer__new(bpf_map__fd(ap->skel->maps.alloc_cuts), on_mark, NULL,
					      NULL);
	if (!ap->cut_rb)
		cp_warn("the allocation probes' cutter polls their counts every millisecond: its "
			"wakeups could not be set up: %s",
			strerror(errno));
}

static void close_marks(struct cp_alloc_probes *ap)
{
	ring_buffer__free(ap->cut_rb);
	ap->cut_rb = NULL;
	if (ap->cut_efd >= 0)
		close(ap->cut_efd);
	ap->cut_efd = -1;
}

/*
 * Starts the cutter once budget windows are on; without it the loop's
 * ticks cut them. Real-time where it may be (util/rt_thread.h): it sleeps
 * between polls, a few microseconds of work each.
 */
static void start_cutter(struct cp_alloc_probes *ap)
{
	int err;

	if (ap->cutter_on || !ap->guard_cfg.budget_ppm || !ap->guard_cfg.call_ns)
		return;
	open_marks(ap);
	err = cp_rt_thread_start(&ap->cutter, "cp-cutter", cutter_main, ap);
	if (err) {
		close_marks(ap);
		cp_warn("the allocation probes' windows are cut by the profiling loop only: no "
			"thread: %s",
			strerror(err));
		return;
	}
	ap->cutter_on = true;
}

void cp_ap_stop_cutter(struct cp_alloc_probes *ap)
{
	if (!ap->cutter_on)
		return;
	pthread_mutex_lock(&ap->lock);
	ap->cutter_stop = true;
	pthread_cond_signal(&ap->wake);
	if (ap->cut_efd >= 0 && eventfd_write(ap->cut_efd, 1))
		cp_warn("the allocation probes' cutter: its stop not written: %s", strerror(errno));
	pthread_mutex_unlock(&ap->lock);
	pthread_join(ap->cutter, NULL);
	ap->cutter_on = false;
	close_marks(ap);
}

/* Says what the guard did to @t (@act, or a cut) on -v and to the owner. */
static void said_guard(const struct cp_alloc_probes *ap, const struct target *t,
		       enum cp_guard_action act, bool cut)
{
	if (ap->opts.log)
		fprintf(ap->opts.log,
			"alloc probes: pid %d: %s (%llu calls/s, budget %llu; next window %llu "
			"calls, %llu came late; spent %llu ns of %llu earned)\n",
			(int)t->pid,
			cut			 ? "window cut at its allowance"
			: act == CP_GUARD_DETACH ? "backing off"
						 : "resuming",
			(unsigned long long)t->guard.last_rate,
			(unsigned long long)ap->guard_cfg.max_rate,
			(unsigned long long)t->allow_calls, (unsigned long long)t->guard.late_calls,
			(unsigned long long)t->guard.spent_ns,
			(unsigned long long)t->guard.earned_ns);
	if (ap->opts.on_guard)
		ap->opts.on_guard(t->pid, cut || act == CP_GUARD_DETACH, ap->opts.ctx);
}

/* The exit points' traps of all CPUs since the last tick; 0 where no target has exit points. */
static __u64 new_exit_traps(struct cp_alloc_probes *ap)
{
	struct cp_cpu_cost sum;
	__u64 n;
	bool any = false;

	for (int i = 0; i < ap->nr_targets && !any; i++)
		any = ap->targets[i]->nr_exits > 0;
	if (!any || cp_cpu_costs__sum(ap->skel, &sum))
		return 0;
	n = sum.exit_traps > ap->exit_traps_seen ? sum.exit_traps - ap->exit_traps_seen : 0;
	ap->exit_traps_seen = sum.exit_traps;
	return n;
}

/*
 * The exit points' @traps of this tick, a uprobe trap each (cp_unit_exit_ns()),
 * charged to the targets' accounts: by their calls at this tick, or, when
 * none called (traps of calls counted earlier), to the first with exit points.
 */
static void charge_exit_traps(struct cp_alloc_probes *ap, __u64 traps)
{
	__u64 all = 0, left = traps;
	struct target *first = NULL;

	if (!traps)
		return;
	for (int i = 0; i < ap->nr_targets; i++) {
		all += ap->targets[i]->tick_calls;
		if (!first && ap->targets[i]->nr_exits)
			first = ap->targets[i];
	}
	for (int i = 0; i < ap->nr_targets && all; i++) {
		struct target *t = ap->targets[i];
		__u64 n = (__u64)((unsigned __int128)traps * t->tick_calls / all);

		t->exit_traps += n;
		left -= n;
		cp_alloc_guard_charge(&t->guard, &ap->guard_cfg, n * ap->opts.exit_ns);
	}
	if (left && first) {
		first->exit_traps += left;
		cp_alloc_guard_charge(&first->guard, &ap->guard_cfg, left * ap->opts.exit_ns);
	}
}

int cp_alloc_probes__tick(struct cp_alloc_probes *ap, __u64 now_ns)
{
	__u64 others = 0;
	int changed = 0, err = 0;
	bool open = false;

	pthread_mutex_lock(&ap->lock);
	measure_prog_cost(ap, now_ns);
	for (int i = 0; i < ap->nr_targets; i++)
		if (ap->targets[i]->pid > 0)
			others += ap->targets[i]->tick_calls = take_calls(ap, ap->targets[i]);
	for (int i = 0; i < ap->nr_targets; i++)
		if (ap->targets[i]->pid <= 0)
			ap->targets[i]->tick_calls = take_all_calls(ap, ap->targets[i], others);
	charge_exit_traps(ap, new_exit_traps(ap));
	for (int i = 0; i < ap->nr_targets; i++) {
		struct target *t = ap->targets[i];
		__u64 calls = t->tick_calls;
		enum cp_guard_action act;

		__u64 cpu = cp_ap_target_cpu_ns(t),
		      cpu_delta = cpu > t->cpu_ns ? cpu - t->cpu_ns : 0;

		t->calls += calls;
		t->cpu_ns = cpu;
		t->cpu_total_ns += cpu_delta;
		if (t->cut) {
			t->cut = false;
			cp_alloc_guard_cut(&t->guard, t->allow_calls, now_ns);
			said_guard(ap, t, CP_GUARD_DETACH, true);
			changed++;
		}
		/* attaching while links come off waits for them with the window open, uncut */
		t->guard.hold = cp_link_reaper__pending(ap->reaper) > 0;
		act = cp_alloc_guard_tick(&t->guard, &ap->guard_cfg, calls, cpu_delta, now_ns);
		if (act == CP_GUARD_DETACH) {
			cp_ap_detach_links(ap, t);
		} else if (act == CP_GUARD_ATTACH) {
			int e = cp_ap_attach_links(ap, t);

			if (e && !err)
				err = e;
		}
		cp_ap_set_allowance(ap, t);
		open = open || window_open(t);
		if (act == CP_GUARD_NONE)
			continue;
		changed++;
		said_guard(ap, t, act, false);
	}
	if (changed)
		cp_ap_sync_syscalls(ap);
	/*
	 * The cutter waits while no window is open: woken only when one is (a
	 * futex wake and a context switch ten times a second were a tenth of
	 * the profiler's steady CPU time under -p)
	 */
	if (open)
		pthread_cond_signal(&ap->wake);
	pthread_mutex_unlock(&ap->lock);
	return err ? err : changed;
}

void cp_alloc_probes__flush(struct cp_alloc_probes *ap)
{
	cp_link_reaper__flush(ap->reaper);
}

__u64 cp_alloc_probes__next_tick_ns(const struct cp_alloc_probes *ap)
{
	__u64 next = 0;

	for (int i = 0; i < ap->nr_targets; i++) {
		__u64 t;

		/*
		 * an open window is the cutter's to end: the loop need not wake
		 * at each shortest window's end (a quiet target's stays open,
		 * and that was 200 wakeups a second)
		 */
		if (ap->cutter_on && window_open(ap->targets[i]))
			continue;
		t = cp_alloc_guard_next_ns(&ap->targets[i]->guard, &ap->guard_cfg);

		if (t && (!next || t < next))
			next = t;
	}
	return next;
}

bool cp_alloc_probes__backed_off(const struct cp_alloc_probes *ap, pid_t pid)
{
	const struct target *t = cp_ap_find_target(ap, pid, NULL);

	return t && t->guard.backed_off;
}

void cp_alloc_probes__set_budget(struct cp_alloc_probes *ap, __u32 budget_ppm, __u64 call_ns,
				 __u64 exit_ns)
{
	pthread_mutex_lock(&ap->lock);
	ap->opts.budget_ppm = budget_ppm;
	ap->opts.call_ns = call_ns;
	ap->opts.exit_ns = exit_ns;
	ap->guard_cfg.budget_ppm = budget_ppm;
	ap->guard_cfg.call_ns = guard_call_ns(ap);
	if (budget_ppm && call_ns && !ap->measuring && !ap->prog_ns)
		measure_begin(ap, cp_now_ns());
	pthread_mutex_unlock(&ap->lock);
	start_cutter(ap);
}

/* @t's calls counted in BPF and not taken yet (the guard takes them each tick). */
__u64 cp_ap_pending_calls(const struct cp_alloc_probes *ap, const struct target *t)
{
	__u32 key = t->pid;
	__u64 pending = 0;

	if (t->pid > 0)
		bpf_map__lookup_elem(ap->skel->maps.alloc_calls, &key, sizeof(key), &pending,
				     sizeof(pending), 0);
	return pending;
}
