// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * perf_events.c on the machine itself (root). There is no hardware PMU on
 * the development machines, so the open/attach/free paths run with the
 * software page-fault event, which fills real addresses; the PMU path is
 * checked for its error: opening mem-loads here must fail with the sentence
 * that tells the user to use --source soft.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <sched.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <linux/perf_event.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/require_root.h"

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "cli/options.h"
#include "live/perf_events.h"
#include "machine/pmu.h"
#include "machine/pmu_attr.h"

#define PAGE		4096
#define WORKERS		3
#define WORKER_PAGES	64
#define LATE_PAGES	128	/* touched by a thread created after the open */
#define MAIN_PAGES	256
/*
 * Counting tests use a period no burst reaches: a sampling event that takes
 * more than perf_event_max_sample_rate / HZ samples in a tick is throttled,
 * and a throttled software event stops counting too.
 */
#define COUNT_PERIOD	1000000


/* Faults in @n fresh pages, one fault each (no THP, which would take 512 at once). */
static void touch_pages(int n)
{
	volatile char *p = mmap(NULL, (size_t)n * PAGE, PROT_READ | PROT_WRITE,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

	if (p == MAP_FAILED)
		abort();
	madvise((void *)p, (size_t)n * PAGE, MADV_NOHUGEPAGE);
	for (int i = 0; i < n; i++)
		p[(size_t)i * PAGE] = 1;
	munmap((void *)p, (size_t)n * PAGE);
}

static __u64 now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (__u64)ts.tv_sec * 1000000000ull + ts.tv_nsec;
}

static __u64 read_count(int fd)
{
	__u64 c = 0;

	assert_int_equal(read(fd, &c, sizeof(c)), sizeof(c));
	return c;
}

static bool fd_open(int fd)
{
	return fcntl(fd, F_GETFD) >= 0;
}

/* --- a child with threads, held until released ---------------------------- */

struct child {
	pid_t pid;
	int go[2];
	int ready[2];
};

static void *worker(void *arg)
{
	int fd = *(int *)arg;
	char c;

	if (read(fd, &c, 1) != 1)
		_exit(20);
	touch_pages(WORKER_PAGES);
	return NULL;
}

static void *late_worker(void *arg)
{
	(void)arg;
	touch_pages(LATE_PAGES);
	return NULL;
}

/* WORKERS threads and the main one wait for a byte each; then everyone touches pages. */
static void spawn_child(struct child *c)
{
	assert_int_equal(pipe(c->go), 0);
	assert_int_equal(pipe(c->ready), 0);
	c->pid = fork();
	assert_true(c->pid >= 0);
	if (c->pid == 0) {
		pthread_t t[WORKERS], late;
		char ch;

		close(c->go[1]);
		for (int i = 0; i < WORKERS; i++)
			if (pthread_create(&t[i], NULL, worker, &c->go[0]))
				_exit(21);
		if (write(c->ready[1], "r", 1) != 1 || read(c->go[0], &ch, 1) != 1)
			_exit(22);
		if (pthread_create(&late, NULL, late_worker, NULL))
			_exit(23);
		touch_pages(MAIN_PAGES);
		for (int i = 0; i < WORKERS; i++)
			pthread_join(t[i], NULL);
		pthread_join(late, NULL);
		_exit(0);
	}
	close(c->go[0]);
	close(c->ready[1]);
	/* the threads exist once the child says so */
	{
		char ch;

		assert_int_equal(read(c->ready[0], &ch, 1), 1);
	}
}

static void release_and_reap(struct child *c)
{
	int status;

	assert_int_equal(write(c->go[1], "gggg", WORKERS + 1), WORKERS + 1);
	assert_int_equal(waitpid(c->pid, &status, 0), c->pid);
	assert_true(WIFEXITED(status));
	assert_int_equal(WEXITSTATUS(status), 0);
	close(c->go[1]);
	close(c->ready[0]);
}

/* --- tests -------------------------------------------------------------- */

/*
 * Per-thread page faults on a child: one event per existing thread, and
 * inherit carries the event to the thread created afterwards (its faults
 * are folded into its parent's count when it exits).
 */
static void test_page_faults_per_thread(void **state)
{
	struct cp_perf_events *set;
	struct cp_event_spec spec;
	struct child c;
	char err[256] = "";
	__u64 total = 0;
	int fds[8], n;

	(void)state;
	REQUIRE_ROOT();
	spawn_child(&c);
	set = cp_perf_events__new();
	assert_non_null(set);
	cp_page_fault_spec(&spec, COUNT_PERIOD);
	n = cp_perf_events__open_threads(set, &spec, c.pid, NULL, err, sizeof(err));
	print_message("# %s\n", err);
	assert_int_equal(n, WORKERS + 1);
	assert_int_equal(cp_perf_events__nr(set), WORKERS + 1);
	for (int i = 0; i < n; i++) {
		const struct cp_perf_event *e = cp_perf_events__get(set, i);

		assert_true(e->fd >= 0 && fd_open(e->fd));
		assert_int_equal(e->cpu, -1);
		assert_true(e->tid >= c.pid);
		assert_null(e->link);
		assert_int_equal(e->role, CP_EVENT_OTHER);
		assert_int_equal(e->period, COUNT_PERIOD);
		fds[i] = e->fd;
	}
	assert_int_equal(cp_perf_events__get(set, 0)->tid, c.pid);
	assert_null(cp_perf_events__get(set, n));

	release_and_reap(&c);
	for (int i = 0; i < n; i++)
		total += read_count(fds[i]);
	print_message("# %llu faults\n", (unsigned long long)total);
	assert_true(total >= WORKERS * WORKER_PAGES + LATE_PAGES + MAIN_PAGES);

	cp_perf_events__free(set);
	for (int i = 0; i < n; i++)
		assert_false(fd_open(fds[i]));
}

static void test_page_faults_per_cpu(void **state)
{
	struct cp_perf_events *set;
	struct cp_event_spec spec;
	struct cp_cpuset cpus;
	char err[256] = "";
	__u64 before = 0, after = 0;
	int online, n;

	(void)state;
	REQUIRE_ROOT();
	online = cp_perf_online_cpus("/", &cpus);
	assert_int_equal(online, sysconf(_SC_NPROCESSORS_ONLN));
	set = cp_perf_events__new();
	cp_page_fault_spec(&spec, COUNT_PERIOD);
	n = cp_perf_events__open_cpus(set, &spec, &cpus, NULL, err, sizeof(err));
	print_message("# %s\n", err);
	assert_int_equal(n, online);
	for (int i = 0; i < n; i++) {
		const struct cp_perf_event *e = cp_perf_events__get(set, i);

		assert_true(fd_open(e->fd));
		assert_int_equal(e->tid, -1);
		assert_true(cp_cpuset_has(&cpus, e->cpu));
		before += read_count(e->fd);
	}
	touch_pages(512);
	for (int i = 0; i < n; i++)
		after += read_count(cp_perf_events__get(set, i)->fd);
	assert_true(after - before >= 512);
	cp_perf_events__free(set);

	/* a CPU set without any online CPU opens nothing, with a sentence */
	set = cp_perf_events__new();
	cp_cpuset_clear(&cpus);
	assert_int_equal(cp_perf_events__open_cpus(set, &spec, &cpus, NULL, err, sizeof(err)),
			 -ENODEV);
	assert_string_equal(err, "cannot open page-faults: no CPU to open it on");
	/* a CPU number beyond nr_cpu_ids is EINVAL, not an offline CPU to skip */
	cp_cpuset_add(&cpus, CP_MAX_CPUS - 1);
	assert_int_equal(cp_perf_events__open_cpus(set, &spec, &cpus, NULL, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err, "cannot open page-faults on CPU 8191: Invalid argument");
	assert_int_equal(cp_perf_events__nr(set), 0);
	cp_perf_events__free(set);
}

static void test_exited_process(void **state)
{
	struct cp_perf_events *set = cp_perf_events__new();
	struct cp_event_spec spec;
	char err[256] = "", want[128];
	int status;
	pid_t pid;

	(void)state;
	REQUIRE_ROOT();
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	cp_page_fault_spec(&spec, 1);
	assert_int_equal(cp_perf_events__open_threads(set, &spec, pid, NULL, err, sizeof(err)),
			 -ESRCH);
	snprintf(want, sizeof(want), "cannot open page-faults for process %d: it has exited",
		 (int)pid);
	assert_string_equal(err, want);
	assert_int_equal(cp_perf_count_threads(pid), -ESRCH);
	assert_int_equal(cp_perf_count_threads(getpid()), 1);
	cp_perf_events__free(set);
}

/*
 * Samples (PERF_RECORD_SAMPLE) in a perf ring buffer since the last call,
 * consumed: all of them, or (@pid > 0) only those of process @pid, the
 * others counted in *@other if not NULL. The records are those of
 * cp_page_fault_spec: ip, then pid and tid, then addr.
 */
static int drain_samples(struct perf_event_mmap_page *mp, size_t data_size, pid_t pid, int *other)
{
	char *data = (char *)mp + mp->data_offset;
	__u64 head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
	int n = 0;

	while (tail < head) {
		struct perf_event_header *h = (void *)(data + tail % data_size);
		/* 8-byte fields never straddle the end; a record may wrap */
		__u32 *ids = (void *)(data + (tail + sizeof(*h) + 8) % data_size);

		if (h->type != PERF_RECORD_SAMPLE)
			;
		else if (pid <= 0 || ids[0] == (__u32)pid)
			n++;
		else if (other)
			(*other)++;
		tail += h->size;
	}
	__atomic_store_n(&mp->data_tail, tail, __ATOMIC_RELEASE);
	return n;
}

/*
 * --max-sample-rate end to end: a page-fault event with period 1 on the CPU
 * this thread is pinned to, and a 1000/s budget. After a burst of faults
 * the cap raises the period with PERF_EVENT_IOC_PERIOD, and the ring buffer
 * shows the kernel sampling at the new period. (Per-CPU, not per-thread:
 * the kernel refuses mmap on inherited per-task events.)
 */
static void test_rate_cap_live(void **state)
{
	const size_t pages = 128, data_size = pages * PAGE;
	struct cp_perf_events *set = cp_perf_events__new();
	struct perf_event_mmap_page *mp;
	struct cp_rate_cap_cfg cfg;
	struct cp_event_spec spec;
	const struct cp_perf_event *e;
	char err[256] = "", *log = NULL, want[64];
	cpu_set_t old, one;
	size_t log_len = 0;
	FILE *logf;
	__u64 period;
	int samples, other = 0, changed, cpu;

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	cpu = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);

	cp_page_fault_spec(&spec, 1);
	assert_int_equal(cp_perf_events__open_one(set, &spec, -1, cpu, NULL, err, sizeof(err)), 0);
	e = cp_perf_events__get(set, 0);
	mp = mmap(NULL, (pages + 1) * PAGE, PROT_READ | PROT_WRITE, MAP_SHARED, e->fd, 0);
	assert_true(mp != MAP_FAILED);

	cp_rate_cap_cfg_init(&cfg, 1000);
	logf = open_memstream(&log, &log_len);
	assert_int_equal(cp_perf_events__rate_cap(set, &cfg, now_ns(), logf), 0);	/* baseline */
	touch_pages(1000);
	usleep(20000);
	/* period 1: every fault, until the kernel's own throttle (400 per tick) */
	assert_true(drain_samples(mp, data_size, 0, NULL) >= 300);
	changed = cp_perf_events__rate_cap(set, &cfg, now_ns(), logf);
	fclose(logf);
	print_message("# %s", log ? log : "(no log)\n");
	assert_int_equal(changed, 1);
	period = cp_perf_events__get(set, 0)->period;
	assert_true(period > 1);
	snprintf(want, sizeof(want), "CPU %d: ", cpu);
	assert_non_null(strstr(log, want));
	assert_non_null(strstr(log, "against a budget of 1000/s: page-faults period 1 -> "));
	free(log);

	/*
	 * the kernel now samples one fault in @period: this process's samples
	 * (other tasks fault on this CPU too, as many as they like) are the
	 * 4000 faults over @period, give or take our own few stray faults
	 */
	touch_pages(4000);
	samples = drain_samples(mp, data_size, getpid(), &other);
	print_message("# period %llu: %d samples for 4000 faults (and %d of other tasks)\n",
		      (unsigned long long)period, samples, other);
	assert_true(samples <= (int)(4000 / period) + 10);
	assert_true(samples >= (int)(4000 / period) - 1);

	munmap(mp, (pages + 1) * PAGE);
	cp_perf_events__free(set);
	sched_setaffinity(0, sizeof(old), &old);
}

/* Threads that fault pages for @arg seconds of the clock. */
static void *faulting_worker(void *arg)
{
	__u64 end = now_ns() + (__u64)(long)arg * 1000000000ull;

	while (now_ns() < end)
		touch_pages(64);
	return NULL;
}

/*
 * The rate cap on threads that inherited their events (-- CMD's workers,
 * or threads a -p target starts later): PERF_EVENT_IOC_PERIOD reaches only
 * the event we opened, read() of it sums its children. Events opened on a
 * process of one thread, which then starts two faulting threads: once the
 * cap raises the period, every thread has an event of its own at the raised
 * period, and counts its own faults only.
 */
static void test_rate_cap_inherited(void **state)
{
	struct cp_perf_events *set = cp_perf_events__new();
	char err[256] = "", *log = NULL, path[64];
	struct cp_rate_cap_cfg cfg;
	struct cp_event_spec spec;
	size_t log_len = 0;
	int go[2], status, own = 0, changed;
	pid_t pid;
	FILE *logf;
	char c;

	(void)state;
	REQUIRE_ROOT();
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		pthread_t t[2];

		close(go[1]);
		if (read(go[0], &c, 1) != 1)
			_exit(20);
		for (int i = 0; i < 2; i++)
			if (pthread_create(&t[i], NULL, faulting_worker, (void *)3L))
				_exit(21);
		for (int i = 0; i < 2; i++)
			pthread_join(t[i], NULL);
		_exit(0);
	}
	close(go[0]);
	/*
	 * one thread now: one event, inherited by the two to come. Period 10
	 * and a budget of 10 samples/s: the cap raises once the workers fault
	 * more than 100 pages a second. On a slow VM beside CPU hogs they
	 * fault ~6000 a second, down from ~30000 alone (period 1000 and a
	 * budget of 100/s needed 100000 a second).
	 */
	cp_page_fault_spec(&spec, 10);
	spec.jitter_pct = 0;
	assert_int_equal(cp_perf_events__open_threads(set, &spec, pid, NULL, err, sizeof(err)), 1);
	cp_rate_cap_cfg_init(&cfg, 10);
	assert_int_equal(cp_perf_events__rate_cap(set, &cfg, now_ns(), NULL), 0);	/* baseline */
	assert_int_equal(write(go[1], "g", 1), 1);
	usleep(700000);
	logf = open_memstream(&log, &log_len);
	changed = cp_perf_events__rate_cap(set, &cfg, now_ns(), logf);
	fclose(logf);
	print_message("# %s", log ? log : "(no log)\n");
	assert_true(changed >= 1);
	snprintf(path, sizeof(path), "process %d: 2 threads had inherited their events", (int)pid);
	assert_non_null(strstr(log, path));
	free(log);
	/* each of the three threads has its own event, at the raised period */
	for (int i = 0; i < cp_perf_events__nr(set); i++) {
		const struct cp_perf_event *e = cp_perf_events__get(set, i);

		assert_int_equal(e->tgid, pid);
		snprintf(path, sizeof(path), "/proc/%d/task/%d", (int)pid, (int)e->tid);
		assert_int_equal(access(path, F_OK), 0);
		assert_true(e->period > 10);
		own++;
	}
	assert_int_equal(own, 3);
	/* a worker's own event counts its faults: it was not counting before */
	usleep(200000);
	for (int i = 0; i < cp_perf_events__nr(set); i++) {
		const struct cp_perf_event *e = cp_perf_events__get(set, i);

		if (e->tid != pid)
			assert_true(read_count(e->fd) > 0);
	}
	cp_perf_events__free(set);
	close(go[1]);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
}

/* The program to attach: the other engineer's on_mem_sample, once it exists. */
static struct bpf_program *pick_program(struct cacheperf *skel)
{
	static const char *const names[] = { "on_mem_sample", "on_mem_sample_compat" };
	struct bpf_program *prog, *want = NULL;

	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]) && !want; i++) {
		want = bpf_object__find_program_by_name(skel->obj, names[i]);
		/* the kfunc flavour needs bpf_cast_to_kern_ctx (6.2) */
		if (want && i == 0 && cp_sysinfo_btf_has_func("/", "bpf_cast_to_kern_ctx") != 1)
			want = NULL;
	}
	if (!want)
		return NULL;
	bpf_object__for_each_program(prog, skel->obj)
		bpf_program__set_autoload(prog, prog == want);
	return want;
}

/* Writes @v to /proc/sys/kernel/perf_event_max_sample_rate; returns the old value. */
static long set_max_sample_rate(long v)
{
	const char *path = "/proc/sys/kernel/perf_event_max_sample_rate";
	long old = 0;
	FILE *f = fopen(path, "r");

	assert_non_null(f);
	assert_int_equal(fscanf(f, "%ld", &old), 1);
	fclose(f);
	f = fopen(path, "w");
	assert_non_null(f);
	fprintf(f, "%ld\n", v);
	assert_int_equal(fclose(f), 0);
	return old;
}

/*
 * Kernel throttling is counted: a per-CPU cpu-clock event every 10 us (the
 * hrtimer's floor) on a CPU this thread keeps busy in user mode, with the
 * program attached, while perf_event_max_sample_rate is 1000: past the
 * limit in one tick the kernel stops it and writes PERF_RECORD_THROTTLE to
 * its one-page buffer (__perf_event_account_interrupt(); the hrtimer events
 * pass throttle = 1, unlike page faults). A per-thread event has no buffer
 * (perf_mmap() refuses inherited per-task events) and says so.
 */
static void test_throttles_counted(void **state)
{
	struct cp_perf_events *set;
	struct cp_event_spec spec;
	struct bpf_program *prog;
	struct cacheperf *skel;
	cpu_set_t old, one;
	char err[256] = "";
	int cpu, without;
	__u64 throttles;
	long old_rate;

	(void)state;
	REQUIRE_ROOT();
	skel = cacheperf__open();
	assert_non_null(skel);
	prog = pick_program(skel);
	assert_non_null(prog);
	assert_int_equal(cacheperf__load(skel), 0);
	assert_int_equal(sched_getaffinity(0, sizeof(old), &old), 0);
	cpu = sched_getcpu();
	CPU_ZERO(&one);
	CPU_SET(cpu, &one);
	assert_int_equal(sched_setaffinity(0, sizeof(one), &one), 0);

	set = cp_perf_events__new();
	cp_cpu_clock_spec(&spec, 1);
	spec.attr.freq = 0;
	spec.attr.sample_period = 10000;	/* ns */
	spec.attr.exclude_kernel = 1;
	assert_int_equal(cp_perf_events__open_one(set, &spec, -1, cpu, prog, err, sizeof(err)), 0);
	assert_non_null(cp_perf_events__get(set, 0)->rb);
	assert_int_equal(cp_perf_events__throttles(set, &without), 0);
	old_rate = set_max_sample_rate(1000);
	for (__u64 end = now_ns() + 200000000ull; now_ns() < end;)
		;
	set_max_sample_rate(old_rate);
	throttles = cp_perf_events__throttles(set, &without);
	print_message("# %llu throttles in 200 ms at 100000 samples/s\n",
		      (unsigned long long)throttles);
	assert_true(throttles >= 1);
	assert_int_equal(without, 0);
	/* read once: the count stays, the buffer's room is freed */
	assert_int_equal(cp_perf_events__throttles(set, &without), throttles);
	cp_perf_events__free(set);

	set = cp_perf_events__new();
	assert_int_equal(cp_perf_events__open_one(set, &spec, getpid(), -1, prog, err, sizeof(err)), 0);
	assert_null(cp_perf_events__get(set, 0)->rb);
	assert_int_equal(cp_perf_events__throttles(set, &without), 0);
	assert_int_equal(without, 1);
	cp_perf_events__free(set);
	sched_setaffinity(0, sizeof(old), &old);
	cacheperf__destroy(skel);
}

static void test_attach_program(void **state)
{
	struct bpf_prog_info info;
	__u32 info_len = sizeof(info);
	struct cp_perf_events *set;
	struct cp_event_spec spec;
	struct bpf_program *prog;
	struct cacheperf *skel;
	struct cp_cpuset cpus;
	struct child c;
	char err[256] = "";
	int stats_fd, n, fds[CP_MAX_CPUS > 64 ? 64 : CP_MAX_CPUS];

	(void)state;
	REQUIRE_ROOT();
	skel = cacheperf__open();
	assert_non_null(skel);
	prog = pick_program(skel);
	if (!prog) {
		cacheperf__destroy(skel);
		print_message("# on_mem_sample is not in the skeleton yet (bpf/mem_sample.bpf.c): nothing to attach\n");
		skip();
	}
	assert_int_equal(cacheperf__load(skel), 0);
	stats_fd = bpf_enable_stats(BPF_STATS_RUN_TIME);
	assert_true(stats_fd >= 0);

	/* per CPU: a link per event; the program runs on every 4th fault */
	set = cp_perf_events__new();
	cp_page_fault_spec(&spec, 4);
	assert_true(cp_perf_online_cpus("/", &cpus) > 0);
	n = cp_perf_events__open_cpus(set, &spec, &cpus, prog, err, sizeof(err));
	print_message("# %s\n", err);
	assert_int_equal(n, cp_cpuset_count(&cpus));
	for (int i = 0; i < n && i < 64; i++) {
		assert_non_null(cp_perf_events__get(set, i)->link);
		fds[i] = cp_perf_events__get(set, i)->fd;
	}
	touch_pages(1024);
	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_program__fd(prog), &info, &info_len), 0);
	print_message("# %s ran %llu times\n", bpf_program__name(prog),
		      (unsigned long long)info.run_cnt);
	/* 256 samples, less up to 3 faults of countdown left on each CPU */
	assert_true(info.run_cnt >= (__u64)(256 - 3 * n));
	cp_perf_events__free(set);	/* destroys the links, which close the fds */
	for (int i = 0; i < n && i < 64; i++)
		assert_false(fd_open(fds[i]));

	/* per thread, inherited by the child's later thread */
	spawn_child(&c);
	set = cp_perf_events__new();
	n = cp_perf_events__open_threads(set, &spec, c.pid, prog, err, sizeof(err));
	assert_int_equal(n, WORKERS + 1);
	for (int i = 0; i < n; i++)
		assert_non_null(cp_perf_events__get(set, i)->link);
	release_and_reap(&c);
	cp_perf_events__free(set);

	close(stats_fd);
	cacheperf__destroy(skel);
}

/*
 * This machine has no PMU: detection says so in the words a user reads,
 * and opening Skylake's mem-loads here fails with the --source soft advice.
 */
static void test_mem_loads_no_pmu(void **state)
{
	struct cp_pmus *here, *skl;
	struct cp_kernel_version kv;
	struct cp_source_choice ch;
	struct cp_sampling_cfg cfg;
	struct cp_mem_specs specs;
	struct cp_perf_events *set;
	struct cp_cpuset cpus;
	struct cp_options opts;
	char release[65], err[384] = "", want[384], root[4096];
	const char *cproot = getenv("CP_ROOT");
	int ret;

	(void)state;
	REQUIRE_ROOT();
	here = cp_pmus__new("/");
	assert_non_null(here);
	if (here->nr_core || here->has_ibs) {
		print_message("# this machine has a sampling PMU: the no-PMU path cannot be seen\n");
		cp_pmus__free(here);
		skip();
	}
	assert_int_equal(cp_sysinfo_kernel(release, sizeof(release), &kv), 0);
	assert_int_equal(cp_source_decide(CP_SOURCE_PEBS, here, &kv, &ch), -ENODEV);
	print_message("# %s\n", ch.reason);
	assert_string_equal(ch.reason, here->cpu.hypervisor ?
		"no PEBS-capable PMU: /sys/bus/event_source/devices has no cpu or ibs_op directory, so this looks like a VM without a virtual PMU; use --source soft" :
		"no PEBS-capable PMU: /sys/bus/event_source/devices has no cpu or ibs_op directory, so the kernel exposes no hardware PMU (perf support for this CPU not built in?); use --source soft");
	assert_int_equal(cp_source_decide(CP_SOURCE_AUTO, here, &kv, &ch), 0);
	assert_int_equal(ch.kind, CP_SOURCE_SOFT);
	cp_pmus__free(here);

	/* the events a Skylake would use, opened here */
	snprintf(root, sizeof(root), "%s/tests/data/pmu/skylake-sp", cproot ? cproot : ".");
	skl = cp_pmus__new(root);
	assert_non_null(skl);
	assert_int_equal(skl->nr_core, 1);
	cp_options_defaults(&opts);
	cp_sampling_cfg_init(&cfg, opts.ldlat_cycles, opts.load_period, opts.store_period, 1);
	assert_int_equal(cp_mem_specs_build(&skl->core[0], &cfg, &specs, err, sizeof(err)), 0);
	assert_true(cp_perf_online_cpus("/", &cpus) > 0);
	set = cp_perf_events__new();
	ret = cp_perf_events__open_cpus(set, &specs.spec[0], &cpus, NULL, err, sizeof(err));
	print_message("# %s\n", err);
	assert_true(ret == -ENOENT || ret == -EOPNOTSUPP || ret == -ENODEV);
	snprintf(want, sizeof(want),
		 "cannot open mem-loads on CPU %d: %s; the kernel has no PMU for this event here (a VM without a virtual PMU?): use --source soft",
		 cp_cpuset_next(&cpus, 0), strerror(-ret));
	assert_string_equal(err, want);
	assert_int_equal(cp_perf_events__nr(set), 0);	/* nothing half-open left */
	/* the precise probe does not turn "no PMU" into another error */
	assert_int_equal(specs.spec[0].attr.precise_ip, 3);
	cp_perf_events__free(set);

	/* the whole PEBS path says the same */
	set = cp_perf_events__new();
	{
		struct cp_source_choice pebs = { .kind = CP_SOURCE_PEBS, .per_task = true };
		struct cp_perf_scope scope;

		cp_perf_scope_decide(true, 0, 2, true, 1024, &scope);
		ret = cp_perf_events__open_mem(set, skl, &pebs, &cfg, &scope, &cpus, NULL, 0, NULL,
					       err, sizeof(err));
		assert_true(ret < 0);
		assert_string_equal(err, want);
	}
	cp_perf_events__free(set);
	cp_pmus__free(skl);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_page_faults_per_thread),
		cmocka_unit_test(test_page_faults_per_cpu),
		cmocka_unit_test(test_exited_process),
		cmocka_unit_test(test_rate_cap_live),
		cmocka_unit_test(test_rate_cap_inherited),
		cmocka_unit_test(test_throttles_counted),
		cmocka_unit_test(test_attach_program),
		cmocka_unit_test(test_mem_loads_no_pmu),
	};

	libbpf_set_print(NULL);
	return cmocka_run_group_tests(tests, NULL, NULL);
}
