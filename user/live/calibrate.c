// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Unit costs of the probes, measured on this machine. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <linux/hw_breakpoint.h>
#include <linux/perf_event.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>

#include "live/calibrate.h"
#include "objects/proc_maps.h"
#include "util/sysfs.h"

#define CAL_ROUNDS	   3	       /* alternating rounds; the median is kept */
#define CAL_CALLS	   20000       /* calls of the probed function per round */
#define CAL_BP_CALLS	   2000	       /* ... with a breakpoint: each hit is ~10 us in a VM */
#define CAL_TICK_PERIOD_NS 100000      /* 10 kHz */
#define CAL_SPIN_NS	   50000000ull /* spin per tick round: 500 ticks */

/*
 * The probed function: two nops and a return. The kernel emulates a nop
 * under a uprobe instead of single-stepping it, as it does the instruction
 * probe placement puts the allocator's entry probes on.
 */
__asm__(".pushsection .text\n"
	".type cp_calibrate_target, @function\n"
	"cp_calibrate_target:\n"
	"\tnop\n"
	"\tnop\n"
	"\tret\n"
	".size cp_calibrate_target, .-cp_calibrate_target\n"
	".popsection\n");
void cp_calibrate_target(void);

/* The calling thread's CPU time, interrupts it took included. */
static __u64 thread_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static int perf_open(struct perf_event_attr *attr)
{
	return (int)syscall(SYS_perf_event_open, attr, 0, -1, -1, PERF_FLAG_FD_CLOEXEC);
}

static int cmp_u64(const void *a, const void *b)
{
	__u64 x = *(const __u64 *)a, y = *(const __u64 *)b;

	return x < y ? -1 : x > y;
}

/* CPU time of @n calls of the probed function through a volatile pointer. */
static __u64 time_calls(int n)
{
	void (*volatile fn)(void) = cp_calibrate_target;
	__u64 t0 = thread_ns();

	for (int i = 0; i < n; i++)
		fn();
	return thread_ns() - t0;
}

/*
 * Extra ns per call with the event @attr open, the median of CAL_ROUNDS
 * alternating rounds of @n calls; 0 with errno set when it cannot be opened.
 * The plain rounds run with no event at all: a disabled uprobe event still
 * leaves its breakpoint in the text, and every call traps.
 */
static __u64 per_call_ns(struct perf_event_attr *attr, int n)
{
	__u64 extra[CAL_ROUNDS];

	time_calls(n / 10); /* warm: page in, caches */
	for (int r = 0; r < CAL_ROUNDS; r++) {
		__u64 plain = time_calls(n), probed;
		int fd = perf_open(attr);

		if (fd < 0)
			return 0;
		probed = time_calls(n);
		close(fd);
		extra[r] = probed > plain ? (probed - plain) / (__u64)n : 0;
	}
	qsort(extra, CAL_ROUNDS, sizeof(extra[0]), cmp_u64);
	/* a probe that costs nothing measurable still costs something */
	return extra[CAL_ROUNDS / 2] ? extra[CAL_ROUNDS / 2] : 1;
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

/* The file and offset the probed function is mapped from. */
static int target_file(char *path, size_t sz, __u64 *offset)
{
	__u64 addr = (__u64)(unsigned long)cp_calibrate_target;
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

static void uprobe_costs(struct cp_unit_costs *out, char *why, size_t why_sz)
{
	struct perf_event_attr attr;
	char path[4096], type[64];
	__u64 offset, with_ret;
	int err;

	err = target_file(path, sizeof(path), &offset);
	if (err) {
		snprintf(why, why_sz, "uprobe cost: cannot find the profiler's own text: %s",
			 strerror(-err));
		return;
	}
	if (cp_sysfs_read_value("/", "sys/bus/event_source/devices/uprobe/type", type,
				sizeof(type))) {
		snprintf(why, why_sz, "uprobe cost: no uprobe PMU in sysfs");
		return;
	}
	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = (__u32)atoi(type);
	attr.uprobe_path = (__u64)(unsigned long)path;
	attr.probe_offset = offset;
	attr.exclude_kernel = 1;
	out->uprobe_ns = per_call_ns(&attr, CAL_CALLS);
	if (!out->uprobe_ns) {
		snprintf(why, why_sz, "uprobe cost: cannot open a uprobe: %s", strerror(errno));
		return;
	}
	attr.config |= retprobe_bit();
	with_ret = per_call_ns(&attr, CAL_CALLS);
	out->uretprobe_ns = with_ret > out->uprobe_ns ? with_ret - out->uprobe_ns : 1;
}

static void bp_cost(struct cp_unit_costs *out, char *why, size_t why_sz)
{
	struct perf_event_attr attr;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_BREAKPOINT;
	attr.bp_type = HW_BREAKPOINT_X;
	attr.bp_addr = (__u64)(unsigned long)cp_calibrate_target;
	attr.bp_len = sizeof(long);
	attr.exclude_kernel = 1;
	out->bp_hit_ns = per_call_ns(&attr, CAL_BP_CALLS);
	if (!out->bp_hit_ns)
		snprintf(why, why_sz, "breakpoint cost: cannot open a breakpoint: %s",
			 strerror(errno));
}

/* Spins @n times; returns the CPU time taken. */
static __u64 spin_n(__u64 n)
{
	volatile __u64 spins = 0;
	__u64 t0 = thread_ns();

	while (spins < n)
		spins++;
	return thread_ns() - t0;
}

static void tick_cost(struct cp_unit_costs *out, char *why, size_t why_sz)
{
	struct perf_event_attr attr;
	__u64 extra[CAL_ROUNDS], n;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.size = sizeof(attr);
	attr.type = PERF_TYPE_SOFTWARE;
	attr.config = PERF_COUNT_SW_CPU_CLOCK;
	attr.sample_period = CAL_TICK_PERIOD_NS;
	attr.exclude_kernel = 1;
	fd = perf_open(&attr);
	if (fd < 0) {
		snprintf(why, why_sz, "tick cost: cannot open a cpu-clock event: %s",
			 strerror(errno));
		return;
	}
	/* the same work each round: the spins a round takes without ticks */
	ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
	for (n = 1 << 16; spin_n(n) < CAL_SPIN_NS / 2; n *= 2)
		;
	for (int r = 0; r < CAL_ROUNDS; r++) {
		__u64 plain, ticked;

		ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
		plain = spin_n(n);
		ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
		ticked = spin_n(n);
		/* ticks taken: one per period of the ticked round's CPU time */
		extra[r] = ticked > plain ? (ticked - plain) * CAL_TICK_PERIOD_NS / ticked : 0;
	}
	close(fd);
	qsort(extra, CAL_ROUNDS, sizeof(extra[0]), cmp_u64);
	out->tick_ns = extra[CAL_ROUNDS / 2] ? extra[CAL_ROUNDS / 2] : 1;
}

int cp_calibrate(bool tick, bool uprobes, bool bp, struct cp_unit_costs *out, char *why,
		 size_t why_sz)
{
	memset(out, 0, sizeof(*out));
	if (why_sz)
		why[0] = '\0';
	if (uprobes)
		uprobe_costs(out, why, why_sz);
	if (bp)
		bp_cost(out, why[0] ? NULL : why, why[0] ? 0 : why_sz);
	if (tick)
		tick_cost(out, why[0] ? NULL : why, why[0] ? 0 : why_sz);
	return (uprobes && !out->uprobe_ns) || (bp && !out->bp_hit_ns) || (tick && !out->tick_ns)
		       ? -1
		       : 0;
}
