// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit costs of the probes, measured on this machine. */
#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <poll.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <bpf/bpf.h>

#include "budget/cal_rounds.h"
#include "live/calibrate.h"
#include "objects/proc_maps.h"
#include "util/perf_open.h"
#include "util/sysfs.h"

/*
 * The rounds are short and alternate (the unprobed baseline in each), and
 * as many as budget/cal_rounds.h asks: 5 on a quiet machine, at most 11.
 */
#define CAL_CALLS	   500	      /* calls of the probed function per round: ~3 ms in a VM */
#define CAL_BP_CALLS	   100	      /* ... with a breakpoint: each hit is ~10 us in a VM */
#define CAL_TICK_PERIOD_NS 100000     /* 10 kHz */
#define CAL_SPIN_NS	   1500000ull /* spin per tick round, unticked: 15 ticks or more */
#define CAL_SPIN_PROBE	   (1u << 18) /* spins timed to size the rounds (2 ms here) */
#define CAL_WAKE_PAGES	   8	      /* data pages of the wakeup rounds' buffers */
#define CAL_SYSCALLS	   2000	      /* system calls per round */

/*
 * The probed functions: two nops and a return, four times the same code at
 * four addresses. The kernel emulates a nop under a uprobe instead of
 * single-stepping it, as it does the instruction probe placement puts the
 * allocator's entry probes on. cp_cal_plain is never probed: its calls are
 * the baseline, taken in the same rounds as the probed ones, so no probe is
 * registered twice (unregistering one waits ~60 ms for the kernel).
 */
#define CAL_FN(name)                                                                               \
	".type " #name ", @function\n" #name ":\n\tnop\n\tnop\n\tret\n.size " #name ", .-" #name   \
	"\n"
__asm__(".pushsection .text\n" CAL_FN(cp_cal_plain) CAL_FN(cp_cal_entry) CAL_FN(cp_cal_return)
		CAL_FN(cp_cal_bp) ".popsection\n");
void cp_cal_plain(void);
void cp_cal_entry(void);
void cp_cal_return(void);
void cp_cal_bp(void);

/* The calling thread's CPU time, interrupts it took included. */
static __u64 thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

/* CPU time of @n calls of @f through a volatile pointer. */
static __u64 time_calls(void (*f)(void), int n)
{
	void (*volatile fn)(void) = f;
	__u64 t0 = thread_ns();

	for (int i = 0; i < n; i++)
		fn();
	return thread_ns() - t0;
}

/* Extra ns per call of @n calls that took @with ns of CPU time against @plain. */
static __u64 extra_per_call(__u64 with, __u64 plain, __u64 n)
{
	return with > plain ? (with - plain) / n : 0;
}

/*
 * Extra ns per tick of a round that took @with ns of CPU time against
 * @plain: one tick per CAL_TICK_PERIOD_NS of the round's CPU time.
 */
static __u64 extra_per_tick(__u64 with, __u64 plain)
{
	return with > plain ? (with - plain) * CAL_TICK_PERIOD_NS / with : 0;
}

/*
 * One round: adds one extra time per event to each of the costs @cal
 * measures (cal_rounds[0..]); a negative errno stops the rounds.
 */
typedef int (*cal_round_fn)(void *ctx, struct cp_cal_rounds *cal);

/*
 * Rounds of @round until none of its @nr costs needs more (at most
 * CP_CAL_MAX_ROUNDS): 0, or the round's negative errno.
 */
static int run_rounds(cal_round_fn round, void *ctx, struct cp_cal_rounds *cal, int nr)
{
	memset(cal, 0, (size_t)nr * sizeof(*cal));
	for (int r = 0; r < CP_CAL_MAX_ROUNDS; r++) {
		int err = round(ctx, cal);

		if (err)
			return err;
		if (!cp_cal_rounds__any_more(cal, nr))
			break;
	}
	return 0;
}

/* Probed functions whose calls a round times against cp_cal_plain's. */
struct call_bench {
	void (*probed[2])(void);
	int nr, calls;
};

static int call_round(void *ctx, struct cp_cal_rounds *cal)
{
	const struct call_bench *b = ctx;
	__u64 plain = time_calls(cp_cal_plain, b->calls);

	for (int i = 0; i < b->nr; i++)
		cp_cal_rounds__add(&cal[i], extra_per_call(time_calls(b->probed[i], b->calls),
							   plain, (__u64)b->calls));
	return 0;
}

/*
 * Extra ns per call of each of @b's probed functions, whose events are
 * open, over the unprobed twin, into @ns: the medians of alternating rounds.
 */
static void per_call_ns(struct call_bench *b, __u64 *ns)
{
	struct cp_cal_rounds cal[2];

	time_calls(cp_cal_plain, b->calls / 10); /* warm: page in, caches */
	for (int i = 0; i < b->nr; i++)
		time_calls(b->probed[i], b->calls / 10);
	run_rounds(call_round, b, cal, b->nr);
	for (int i = 0; i < b->nr; i++)
		ns[i] = cp_cal_rounds__median(&cal[i]);
}

/* Closes @fd off this thread: a uprobe's unregistration waits for the kernel. */
static void *close_fd(void *arg)
{
	close((int)(long)arg);
	return NULL;
}

static void close_later(int fd)
{
	pthread_t t;

	if (fd < 0)
		return;
	if (pthread_create(&t, NULL, close_fd, (void *)(long)fd)) {
		close(fd);
		return;
	}
	pthread_detach(t);
}

/* The config bit of the uprobe PMU's return probes (its format says; "config:0" so far). */
static __u64 retprobe_bit(void)
{
	char buf[64];
	int bit;

	if (!cp_sysfs_read_value("/", "sys/bus/event_source/devices/uprobe/format/retprobe", buf,
				 sizeof(buf)) &&
	    sscanf(buf, "config:%d", &bit) == 1 && bit >= 0 && bit < 64)
		return 1ull << bit;
	return 1;
}

/* The file and offset @f is mapped from. */
static int target_file(void (*f)(void), char *path, size_t sz, __u64 *offset)
{
	__u64 addr = (__u64)(unsigned long)f;
	struct cp_maps *maps;
	const struct cp_map *m;
	int ret = cp_maps__read(NULL, getpid(), &maps);

	if (ret)
		return ret;
	m = cp_maps__find(maps, addr);
	if (!m || !m->path[0]) {
		cp_maps__free(maps);
		return -ENOENT;
	}
	snprintf(path, sz, "%s", m->path);
	*offset = addr - m->start + m->offset;
	cp_maps__free(maps);
	return 0;
}

/* A counting uprobe (@ret: a return probe) on @f; -errno when it cannot be opened. */
static int open_uprobe(void (*f)(void), __u32 type, bool ret, char *path, size_t sz)
{
	struct perf_event_attr attr;
	__u64 offset;
	int err = target_file(f, path, sz, &offset);

	if (err)
		return err;
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = type;
	attr.config = ret ? retprobe_bit() : 0;
	attr.uprobe_path = (__u64)(unsigned long)path;
	attr.probe_offset = offset;
	attr.exclude_kernel = 1;
	return cp_perf_event_open(&attr, 0, -1, -1);
}

static void uprobe_costs(struct cp_unit_costs *out, char *why, size_t why_sz)
{
	struct call_bench b = {
		.probed = {cp_cal_entry, cp_cal_return}, .nr = 2, .calls = CAL_CALLS};
	char path[2][4096], type[64];
	__u64 ns[2];
	int fd[2];

	if (cp_sysfs_read_value("/", "sys/bus/event_source/devices/uprobe/type", type,
				sizeof(type))) {
		snprintf(why, why_sz, "uprobe cost: no uprobe PMU in sysfs");
		return;
	}
	fd[0] = open_uprobe(cp_cal_entry, (__u32)atoi(type), false, path[0], sizeof(path[0]));
	fd[1] = fd[0] < 0 ? -1
			  : open_uprobe(cp_cal_return, (__u32)atoi(type), true, path[1],
					sizeof(path[1]));
	if (fd[0] < 0 || fd[1] < 0) {
		snprintf(why, why_sz, "uprobe cost: cannot open a uprobe: %s",
			 strerror(-(fd[0] < 0 ? fd[0] : fd[1])));
	} else {
		per_call_ns(&b, ns);
		out->uprobe_ns = ns[0];
		/* a return probe traps at the entry too, to hook the return */
		out->uretprobe_ns = ns[1] > ns[0] ? ns[1] - ns[0] : 1;
	}
	close_later(fd[0]);
	close_later(fd[1]);
}

static void bp_cost(struct cp_unit_costs *out, char *why, size_t why_sz)
{
	struct call_bench b = {.probed = {cp_cal_bp}, .nr = 1, .calls = CAL_BP_CALLS};
	struct perf_event_attr attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.bp_type = HW_BREAKPOINT_X;
	attr.bp_addr = (__u64)(unsigned long)cp_cal_bp;
	attr.bp_len = sizeof(long);
	attr.exclude_kernel = 1;
	fd = cp_perf_event_open(&attr, 0, -1, -1);
	if (fd < 0) {
		snprintf(why, why_sz, "breakpoint cost: cannot open a breakpoint: %s",
			 strerror(-fd));
		return;
	}
	per_call_ns(&b, &out->bp_hit_ns);
	close(fd);
}

/*
 * Spins @n times; returns the CPU time taken. The counter stays in a
 * register: a counter in memory (a volatile on the stack) runs at two
 * speeds, its store forwarding fast or slow by the code's alignment and
 * the interrupts it took, and once a tick had slowed it the unticked spin
 * stayed as slow: the tick measured 0 in some builds (~17 us here).
 */
static __u64 spin_n(__u64 n)
{
	__u64 t0 = thread_ns();

	for (__u64 i = 0; i < n; i++)
		__asm__ volatile("" : "+r"(i));
	return thread_ns() - t0;
}

/* Spins that take about CAL_SPIN_NS of CPU time: the same work in every round. */
static __u64 spin_count(void)
{
	__u64 t = spin_n(CAL_SPIN_PROBE);

	return t ? CAL_SPIN_PROBE * CAL_SPIN_NS / t : CAL_SPIN_PROBE;
}

/* A per-thread cpu-clock sampling event at CAL_TICK_PERIOD_NS, user mode, disabled. */
static void tick_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = PERF_TYPE_SOFTWARE;
	attr->config = PERF_COUNT_SW_CPU_CLOCK;
	attr->sample_period = CAL_TICK_PERIOD_NS;
	attr->exclude_kernel = 1;
	attr->disabled = 1;
}

/*
 * The tick and wakeup rounds: the same spin unticked (for the tick only),
 * then under two sampling ticks writing to mapped buffers, one waking its
 * reader only when half full (the ticked round), the other on every sample
 * (what BPF_RB_FORCE_WAKEUP does: an irq_work self-IPI that wakes the
 * waiters). A thread of the profiler polls both and empties them, as the
 * drain does.
 */
struct wake_bench {
	int fd[2]; /* [0]: no wakeups, [1]: one per sample */
	void *ring[2];
	pthread_t reader;
	volatile bool stop;
	bool tick; /* the tick's cost too: an unticked spin in each round */
	__u64 spins;
};

static size_t wake_map_bytes(void)
{
	return (size_t)(1 + CAL_WAKE_PAGES) * (size_t)sysconf(_SC_PAGESIZE);
}

static void *wake_reader(void *arg)
{
	struct wake_bench *b = arg;

	while (!b->stop) {
		struct pollfd pfd[2] = {{.fd = b->fd[0], .events = POLLIN},
					{.fd = b->fd[1], .events = POLLIN}};

		poll(pfd, 2, 10);
		for (int i = 0; i < 2; i++) {
			struct perf_event_mmap_page *pg = b->ring[i];
			__u64 head = __atomic_load_n(&pg->data_head, __ATOMIC_ACQUIRE);

			__atomic_store_n(&pg->data_tail, head, __ATOMIC_RELEASE);
		}
	}
	return NULL;
}

static void wake_bench_close(struct wake_bench *b)
{
	for (int i = 0; i < 2; i++) {
		if (b->ring[i] && b->ring[i] != MAP_FAILED)
			munmap(b->ring[i], wake_map_bytes());
		if (b->fd[i] >= 0)
			close(b->fd[i]);
	}
}

static int wake_bench_open(struct wake_bench *b)
{
	struct perf_event_attr attr;

	b->fd[0] = b->fd[1] = -1;
	for (int i = 0; i < 2; i++) {
		tick_attr(&attr);
		attr.sample_type = PERF_SAMPLE_IP;
		if (i) {
			attr.wakeup_events = 1;
		} else {
			attr.watermark = 1;
			attr.wakeup_watermark = CAL_WAKE_PAGES * (__u32)sysconf(_SC_PAGESIZE) / 2;
		}
		b->fd[i] = cp_perf_event_open(&attr, 0, -1, -1);
		if (b->fd[i] < 0)
			return b->fd[i];
		b->ring[i] = mmap(NULL, wake_map_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED,
				  b->fd[i], 0);
		if (b->ring[i] == MAP_FAILED)
			return -errno;
	}
	return -pthread_create(&b->reader, NULL, wake_reader, b);
}

/* cal[0]: the wakeup, cal[1]: the tick (when asked). */
static int tick_round(void *ctx, struct cp_cal_rounds *cal)
{
	struct wake_bench *b = ctx;
	__u64 plain = b->tick ? spin_n(b->spins) : 0, t[2];

	for (int i = 0; i < 2; i++) {
		ioctl(b->fd[i], PERF_EVENT_IOC_ENABLE, 0);
		t[i] = spin_n(b->spins);
		ioctl(b->fd[i], PERF_EVENT_IOC_DISABLE, 0);
	}
	/* one wakeup per tick of the waking round */
	cp_cal_rounds__add(&cal[0], extra_per_tick(t[1], t[0]));
	if (b->tick)
		cp_cal_rounds__add(&cal[1], extra_per_tick(t[0], plain));
	return 0;
}

static void tick_wakeup_costs(bool tick, struct cp_unit_costs *out, char *why, size_t why_sz)
{
	struct wake_bench b = {.stop = false, .tick = tick};
	struct cp_cal_rounds cal[2];
	int err = wake_bench_open(&b);

	if (err) {
		snprintf(why, why_sz, "%s: cannot open a mapped cpu-clock event: %s",
			 tick ? "tick and wakeup costs" : "wakeup cost", strerror(-err));
		wake_bench_close(&b);
		return;
	}
	b.spins = spin_count();
	run_rounds(tick_round, &b, cal, tick ? 2 : 1);
	b.stop = true;
	pthread_join(b.reader, NULL);
	wake_bench_close(&b);
	out->wakeup_ns = cp_cal_rounds__median(&cal[0]);
	if (tick)
		out->tick_ns = cp_cal_rounds__median(&cal[1]);
}

/* CPU time of @n getppid() calls, a system call that does next to nothing. */
static __u64 time_syscalls(int n)
{
	__u64 t0 = thread_ns();

	for (int i = 0; i < n; i++)
		syscall(SYS_getppid);
	return thread_ns() - t0;
}

/* A raw tracepoint program that returns at once: "r0 = 0; exit". -1 with errno set. */
static int empty_raw_tp(void)
{
	struct bpf_insn insns[] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};

	return bpf_prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, "cp_cal_sys", "GPL", insns, 2, NULL);
}

/*
 * A system call with programs on the raw sys_enter and sys_exit
 * tracepoints, as the allocation windows attach them: attaching any puts
 * every task on the system-call slow path. Empty programs: the real ones'
 * run time (~0.15 us each here) is measured on the run's own system calls
 * (user/live/alloc_windows.c), as the allocation programs' is. Attached
 * and detached in each round, the unprobed calls first.
 */
struct sys_bench {
	int prog;
	char *why;
	size_t why_sz;
};

static int syscall_round(void *ctx, struct cp_cal_rounds *cal)
{
	struct sys_bench *b = ctx;
	__u64 plain = time_syscalls(CAL_SYSCALLS), with;
	int enter = bpf_raw_tracepoint_open("sys_enter", b->prog);
	int exit_fd = enter < 0 ? -1 : bpf_raw_tracepoint_open("sys_exit", b->prog);
	int err = -errno;

	if (enter < 0 || exit_fd < 0) {
		snprintf(b->why, b->why_sz,
			 "system-call cost: cannot attach to sys_enter/sys_exit: %s",
			 strerror(-err));
		if (enter >= 0)
			close(enter);
		return err ? err : -EINVAL;
	}
	with = time_syscalls(CAL_SYSCALLS);
	close(exit_fd);
	close(enter);
	cp_cal_rounds__add(cal, extra_per_call(with, plain, CAL_SYSCALLS));
	return 0;
}

static void syscall_cost(struct cp_unit_costs *out, char *why, size_t why_sz)
{
	struct sys_bench b = {.prog = empty_raw_tp(), .why = why, .why_sz = why_sz};
	struct cp_cal_rounds cal;

	if (b.prog < 0) {
		snprintf(why, why_sz, "system-call cost: cannot load a raw tracepoint program: %s",
			 strerror(errno));
		return;
	}
	time_syscalls(CAL_SYSCALLS / 10);
	if (!run_rounds(syscall_round, &b, &cal, 1))
		out->syscall_ns = cp_cal_rounds__median(&cal);
	close(b.prog);
}

/* Room for a reason in @why: none once one is there. */
static size_t room(const char *why, size_t why_sz)
{
	return why_sz && why[0] ? 0 : why_sz;
}

int cp_calibrate(bool tick, bool uprobes, bool bp, struct cp_unit_costs *out, char *why,
		 size_t why_sz)
{
	memset(out, 0, sizeof(*out));
	if (why_sz)
		why[0] = '\0';
	/* the first reason only: once one is written, the room left is 0 */
	if (uprobes) {
		uprobe_costs(out, why, why_sz);
		syscall_cost(out, why, room(why, why_sz));
	}
	if (bp)
		bp_cost(out, why, room(why, why_sz));
	tick_wakeup_costs(tick, out, why, room(why, why_sz));
	return (uprobes && (!out->uprobe_ns || !out->syscall_ns)) || (bp && !out->bp_hit_ns) ||
			       (tick && !out->tick_ns) || !out->wakeup_ns
		       ? -1
		       : 0;
}

struct cp_calibration {
	pthread_t thread;
	bool tick, uprobes, bp;
	int ret;
	struct cp_unit_costs costs;
	char why[256];
};

static void *calibrate_thread(void *arg)
{
	struct cp_calibration *c = arg;

	c->ret = cp_calibrate(c->tick, c->uprobes, c->bp, &c->costs, c->why, sizeof(c->why));
	return NULL;
}

struct cp_calibration *cp_calibrate__start(bool tick, bool uprobes, bool bp)
{
	struct cp_calibration *c = calloc(1, sizeof(*c));
	int err;

	if (!c)
		return NULL;
	c->tick = tick;
	c->uprobes = uprobes;
	c->bp = bp;
	err = pthread_create(&c->thread, NULL, calibrate_thread, c);
	if (err) {
		free(c);
		errno = err;
		return NULL;
	}
	return c;
}

int cp_calibrate__join(struct cp_calibration *c, struct cp_unit_costs *out, char *why,
		       size_t why_sz)
{
	int ret;

	pthread_join(c->thread, NULL);
	*out = c->costs;
	snprintf(why, why_sz, "%s", c->why);
	ret = c->ret;
	free(c);
	return ret;
}
