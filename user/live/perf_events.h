/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Opening perf events and attaching a BPF program to each (the syscall
 * edge). One object holds every fd and bpf_link of a session, whatever the
 * source: PEBS/IBS memory events, software page faults, cpu-clock ticks.
 *
 *  - per CPU (-a, or many threads): pid -1 on each CPU of a set; CPUs that
 *    answer ENODEV (offline, or not this PMU's) are skipped as in bcc's
 *    llcstat, and it is an error only when no CPU opens at all.
 *  - per thread (-p, --): one event with inherit = 1 on every thread in
 *    /proc/PID/task, so threads and children created later carry the event
 *    and its BPF program. The list is read once, in TID order (the main
 *    thread first): a thread created while we attach inherits the event if
 *    its creator already had one, and is missed otherwise. Re-reading the
 *    list cannot fix that, as it cannot tell the two apart and would give
 *    inherited threads a second event, sampling them twice. `-- CMD` has
 *    no such window: the child is held before exec with one thread.
 *
 * Ownership: after bpf_program__attach_perf_event() the bpf_link owns the
 * perf fd (bpf_link__destroy() closes it); unattached fds (group leaders,
 * events opened without a program) are closed by cp_perf_events__free().
 */
#ifndef CP_PERF_EVENTS_H
#define CP_PERF_EVENTS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#include "machine/cpuset.h"
#include "machine/event_spec.h"
#include "machine/pmu.h"
#include "machine/pmu_attr.h"
#include "live/rate_cap.h"

struct bpf_program;
struct bpf_link;

/*
 * Per-thread events up to this many threads in the targets; above it
 * per-CPU events with the BPF tgid filter. Per-task events cost one fd per
 * thread and event (x2 PMUs on hybrid parts: 64 threads x 3 events x 2 =
 * 384 fds, well under the usual 1024 RLIMIT_NOFILE) and are switched at
 * every context switch of their task; per-CPU events cost CPUs x events
 * fds whatever the thread count, but also sample other processes, whose
 * samples BPF drops after paying their interrupts.
 */
#define CP_PERF_MAX_THREADS 64
#define CP_PERF_MAX_SPECS   (2 * CP_PMU_MAX_CORE + 2) /* per-thread specs kept */
#define CP_PERF_MAX_REOPEN  64			      /* processes reopened per rate-cap decision */

/* One opened event. */
struct cp_perf_event {
	int fd;
	int cpu;    /* -1: follows its thread on any CPU */
	pid_t tid;  /* -1: every task on @cpu */
	pid_t tgid; /* per-thread events: the thread's process; else 0 */
	int spec;   /* per-thread events: the spec kept to reopen; -1 */
	enum cp_event_role role;
	char name[CP_EVENT_NAME_LEN];
	int leader;	       /* index of this event's group leader, -1 if none */
	struct bpf_link *link; /* NULL when no program is attached */
	__u64 base_period;     /* after jitter: the rate cap's floor; 0 when counting */
	__u64 period;	       /* in effect */
	__u64 max_period;      /* 0: none */
	__u32 period_align;
	__u64 last_count; /* rate cap: the counter at the previous interval */
	void *rb;	  /* per-CPU sampling events: a one-page buffer, where
					 * the kernel writes PERF_RECORD_THROTTLE; NULL: none */
	__u64 throttles;  /* of them, read so far */
};

#define CP_PRECISE_TEXT_LEN 160 /* cp_perf_events__precise() */

struct cp_perf_events;

/* An empty set; NULL when out of memory. */
struct cp_perf_events *cp_perf_events__new(void);

/* Detaches and closes everything (members before their leaders). NULL is a no-op. */
void cp_perf_events__free(struct cp_perf_events *set);

/* How many events @set holds (group leaders included), and the @i-th (NULL if out of range). */
int cp_perf_events__nr(const struct cp_perf_events *set);
const struct cp_perf_event *cp_perf_events__get(const struct cp_perf_events *set, int i);

/*
 * Opens one instance of @spec (its leader first, if any) for @pid on @cpu
 * (perf_event_open semantics: pid -1 = every task, cpu -1 = any CPU; pid
 * other than -1 sets inherit). The period is jittered with key @cpu for
 * per-CPU events, else @pid. While the open fails with what
 * cp_event_spec_lower_precise() accepts, precise_ip is lowered in @spec
 * (kept for the next instances). Attaches @prog if non-NULL, else enables
 * the event. Returns 0 or a negative errno with a sentence in @err.
 */
int cp_perf_events__open_one(struct cp_perf_events *set, struct cp_event_spec *spec, pid_t pid,
			     int cpu, struct bpf_program *prog, char *err, size_t err_sz);

/*
 * @spec on every CPU in @cpus with pid -1. Returns the number of CPUs
 * opened (> 0), or a negative errno with @err set: the first error other
 * than ENODEV, or the ENODEV error when no CPU opened.
 */
int cp_perf_events__open_cpus(struct cp_perf_events *set, struct cp_event_spec *spec,
			      const struct cp_cpuset *cpus, struct bpf_program *prog, char *err,
			      size_t err_sz);

/*
 * @spec with inherit on every thread of process @pid (/proc/PID/task, one
 * pass, lowest TID first). Threads that exit meanwhile (ESRCH) are
 * skipped. Returns the number of threads opened (> 0), or a negative errno
 * with @err set (-ESRCH: the process is gone).
 */
int cp_perf_events__open_threads(struct cp_perf_events *set, struct cp_event_spec *spec, pid_t pid,
				 struct bpf_program *prog, char *err, size_t err_sz);

/* Threads in /proc/@pid/task now, or a negative errno. */
int cp_perf_count_threads(pid_t pid);

/* Where the memory events go. */
struct cp_perf_scope {
	bool per_cpu;	  /* per-CPU events (else per-thread) */
	bool filter_tgid; /* BPF must keep only the targets' samples */
	char reason[160];
};

/*
 * Pure: per-CPU for -a (@system_wide); for -p / -- per-thread unless the source has no
 * per-task events (@per_task_ok false: IBS before 6.2), the targets have
 * more than CP_PERF_MAX_THREADS threads, or @nr_threads x
 * @events_per_thread would use more than half of @nofile_limit fds.
 * Per-CPU events for -p / -- need the BPF tgid filter.
 */
void cp_perf_scope_decide(bool system_wide, int nr_threads, int events_per_thread, bool per_task_ok,
			  long nofile_limit, struct cp_perf_scope *out);

/*
 * Pure: the error sentence for a failed perf_event_open of event @name on
 * @cpu / thread @tid (-1: not applicable) with @err (negative errno). For
 * a hardware PMU event (@pmu_event), ENOENT, EOPNOTSUPP and ENODEV mean the
 * kernel has no PMU for it here, and the sentence says to use --source soft.
 */
void cp_perf_open_strerror(char *buf, size_t sz, const char *name, int cpu, pid_t tid, int err,
			   bool pmu_event);

/*
 * Opens the memory-sampling events of @choice (PEBS: every core PMU, each
 * on its own CPUs; IBS: ibs_op) for @scope: per CPU over @cpus, or per
 * thread over @pids. Attaches @prog to every sampling event. Returns the
 * number of events opened or a negative errno with @err set; on error the
 * events already opened stay in @set for cp_perf_events__free().
 */
int cp_perf_events__open_mem(struct cp_perf_events *set, const struct cp_pmus *pmus,
			     const struct cp_source_choice *choice,
			     const struct cp_sampling_cfg *cfg, const struct cp_perf_scope *scope,
			     const struct cp_cpuset *cpus, const pid_t *pids, int nr_pids,
			     struct bpf_program *prog, char *err, size_t err_sz);

/*
 * The sample-rate cap, once per interval at time @now_ns: reads every
 * sampling event's counter, groups events by CPU (per-CPU) or thread
 * (per-thread), runs cp_rate_cap_decide() and applies changes with
 * PERF_EVENT_IOC_PERIOD, writing one line per change to @log (if
 * non-NULL). The first call only takes the baseline. Returns the number of
 * periods changed, or a negative errno (a failed read or ioctl).
 *
 * Per-thread events are inherited by the threads a thread creates, and the
 * ioctl reaches only the event we opened (_perf_ioctl() returns before
 * perf_event_for_each_child()), while read() sums its children: the
 * creator's period would climb for all of them and theirs never change.
 * So once a change is made, a process with threads that inherited their
 * events gets explicit events for each of its threads (jittered, at the
 * process's highest period of the kind), and the old ones, children and
 * all, are closed; from the next decision on every thread is its own unit.
 */
/*
 * The precise_ip each PMU's memory events were opened with, after the probe
 * lowered it where the PMU refused ("cpu_core mem-loads 3, mem-stores 3;
 * cpu_atom mem-loads 2, mem-stores 2"); "" without PEBS.
 */
const char *cp_perf_events__precise(const struct cp_perf_events *set);

/*
 * The times the kernel throttled one of the per-CPU sampling events
 * (PERF_RECORD_THROTTLE in their one-page buffers, read now). The kernel
 * stops an event whose interrupts in a tick reach perf_event_max_sample_rate
 * / HZ until the next tick, and says so only in its ring buffer; it refuses
 * a buffer on inherited per-task events (perf_mmap()), so per-thread events
 * cannot tell. @without: sampling events with no buffer to tell.
 */
__u64 cp_perf_events__throttles(struct cp_perf_events *set, int *without);

int cp_perf_events__rate_cap(struct cp_perf_events *set, const struct cp_rate_cap_cfg *cfg,
			     __u64 now_ns, FILE *log);

/* The online CPUs from @root/sys/devices/system/cpu/online. Count or -errno. */
int cp_perf_online_cpus(const char *root, struct cp_cpuset *cpus);

/* /proc/sys/kernel/perf_event_max_sample_rate below @root; 0 when unreadable. */
__u64 cp_perf_max_sample_rate(const char *root);

#endif /* CP_PERF_EVENTS_H */
