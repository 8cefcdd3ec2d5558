// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The session as main() drives it (root): open, set knobs, load, attach to
 * a running workload with per-thread events, drain. touch_pages faults in
 * known pages from two threads created after we attach (inherit), all through
 * the store at its symbol cp_touch_insn; the page-fault source forwards
 * every sample. Each record must carry a page the workload says it touched,
 * the thread that says it touched it, and the instruction's address, found
 * from the ELF symbol table and /proc/PID/maps, not from our output.
 */
#include <errno.h>
#include <limits.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include <bpf/bpf.h>
#include <bpf/libbpf.h>

#include "lib/workload_pipe.h"

#include "live/drain.h"
#include "live/session.h"
#include "machine/proc_cgroup.h"
#include "machine/sysinfo.h"
#include "profile/proc_identity.h"
#include "util/clock.h"
#include "cacheperf.skel.h"
#include "cli/run_cfg.h"

#define NR_PAGES	32
#define NR_THREADS	2

struct wl_thread {
	long tid;
	unsigned long long first;	/* first page's address */
	int nr;
	int seen;
};

static const struct cp_pmus no_pmus;
static const struct cp_kernel_version kv = { 6, 18, 0 };

struct seen {
	struct wl_thread th[NR_THREADS];
	__u64 insn;			/* runtime address of cp_touch_insn */
	pid_t pid;
	int matched, wrong_ip, wrong_tid, other;
};

static int on_sample(const struct cp_sample *s, void *ctx)
{
	struct seen *sn = ctx;

	for (int t = 0; t < NR_THREADS; t++) {
		struct wl_thread *th = &sn->th[t];

		if (s->addr < th->first || s->addr >= th->first + (unsigned long long)th->nr * 4096)
			continue;
		if (s->ip != sn->insn)
			sn->wrong_ip++;
		else if ((long)s->tid != th->tid || s->tgid != (__u32)sn->pid)
			sn->wrong_tid++;
		else if ((s->addr - th->first) % 4096 == 0)
			th->seen++, sn->matched++;
		return 0;
	}
	sn->other++;	/* the workload's other faults: stack, heap, libraries */
	return 0;
}

/* Offset of @sym in @path from nm, and the executable's load base from maps. */
static __u64 runtime_addr(pid_t pid, const char *path, const char *sym)
{
	unsigned long long off = 0, start, pgoff, base = 0;
	char cmd[1024], line[512], name[256];
	FILE *f;

	snprintf(cmd, sizeof(cmd), "nm '%s'", path);
	f = popen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx %*s %255s", &start, name) == 2 && !strcmp(name, sym))
			off = start;
	pclose(f);
	assert_true(off != 0);

	snprintf(cmd, sizeof(cmd), "/proc/%d/maps", (int)pid);
	f = fopen(cmd, "r");
	assert_non_null(f);
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "%llx-%*x %*s %llx", &start, &pgoff) == 2 && pgoff == 0 &&
		    strstr(line, "touch_pages") && !base)
			base = start;
	fclose(f);
	assert_true(base != 0);
	return base + off;
}

/* The kernel's flags of the map @m of @s: its own answer, not libbpf's copy. */
static __u32 map_flags(const struct bpf_map *m)
{
	struct bpf_map_info info;
	__u32 len = sizeof(info);

	memset(&info, 0, sizeof(info));
	assert_int_equal(bpf_obj_get_info_by_fd(bpf_map__fd(m), &info, &len), 0);
	return info.map_flags;
}

/*
 * Where the kernel allows it (6.1), the maps whose entries come once per
 * object, distinct stack or decoded instruction allocate them then:
 * preallocated, they cost ~0.1 s of the start-up. The maps written on every
 * event stay preallocated: an allocation per sample would be the hot path's.
 */
static void check_alloc_at_run(struct cp_session *s)
{
	__u32 at_run = cp_sysinfo_bpf_runtime_alloc() == 1 ? BPF_F_NO_PREALLOC : 0;

	assert_int_equal(map_flags(s->skel->maps.sample_stacks) & BPF_F_NO_PREALLOC, at_run);
	assert_int_equal(map_flags(s->skel->maps.stack_kinds) & BPF_F_NO_PREALLOC, at_run);
	assert_int_equal(map_flags(s->skel->maps.alloc_stacks) & BPF_F_NO_PREALLOC, at_run);
	assert_int_equal(map_flags(s->skel->maps.alloc_stacks_odd) & BPF_F_NO_PREALLOC, at_run);
	assert_int_equal(map_flags(s->skel->maps.live_objects) & BPF_F_NO_PREALLOC, at_run);
	assert_int_equal(map_flags(s->skel->maps.soft_insns) & BPF_F_NO_PREALLOC, at_run);
	assert_int_equal(map_flags(s->skel->maps.stack_counts) & BPF_F_NO_PREALLOC, 0);
	assert_int_equal(map_flags(s->skel->maps.ip_counts) & BPF_F_NO_PREALLOC, 0);
}

/* A session of -p @pid --source faults, opened as main() sets it up (@opts, @cfg: its own). */
static struct cp_session *faults_session(pid_t pid, struct cp_options *opts,
					 struct cp_session_cfg *cfg)
{
	struct cp_session *s = NULL;
	char err[512] = "";

	cp_options_defaults(opts);
	opts->target = CP_TARGET_PIDS;
	opts->pids[0] = pid;
	opts->nr_pids = 1;
	opts->source = CP_SOURCE_FAULTS;
	cp_session_cfg_of(opts, cfg);
	assert_int_equal(cp_source_decide(CP_SOURCE_FAULTS, &no_pmus, &kv, &cfg->source), 0);
	cfg->pids = opts->pids;
	cfg->nr_pids = 1;
	assert_int_equal(cp_session__open(cfg, &s, err, sizeof(err)), 0);
	return s;
}

static void test_faults_source_on_workload(void **state)
{
	struct seen sn = { 0 };
	struct cp_record_ops ops = { .sample = on_sample, .ctx = &sn };
	struct cp_options opts;
	struct cp_session_cfg cfg = { 0 };
	struct cp_session *s = NULL;
	struct cp_drain *d;
	struct cp_stats st;
	int in = -1, status, nth = 0;
	char path[512], err[512] = "", line[256], arg[16];
	FILE *out = NULL;

	(void)state;
	if (geteuid() != 0) {
		print_message("# needs root (bpf, perf events)\n");
		skip();
	}
	snprintf(path, sizeof(path), "%s/tests/workloads/touch_pages",
		 getenv("CP_BUILD") ? getenv("CP_BUILD") : "build");
	snprintf(arg, sizeof(arg), "%d", NR_PAGES);
	assert_int_equal(cp_wl_pipe_start((char *const[]){ path, arg, NULL }, &sn.pid, &in, &out), 0);
	assert_non_null(fgets(line, sizeof(line), out));
	assert_true(strncmp(line, "ready ", 6) == 0);
	sn.insn = runtime_addr(sn.pid, path, "cp_touch_insn");

	s = faults_session(sn.pid, &opts, &cfg);
	assert_false(s->scope.per_cpu);
	check_alloc_at_run(s);
	assert_int_equal(cp_session__attach(s, &cfg, err, sizeof(err)), 0);
	assert_int_equal(s->nr_events, 1);	/* the main thread; workers inherit */
	d = cp_drain__new(s->skel, &ops);
	assert_non_null(d);

	assert_int_equal(write(in, "go\n", 3), 3);
	while (nth < NR_THREADS && fgets(line, sizeof(line), out)) {
		struct wl_thread *th = &sn.th[nth];

		if (sscanf(line, "thread %ld %llx %d", &th->tid, &th->first, &th->nr) == 3)
			nth++;
	}
	assert_int_equal(nth, NR_THREADS);
	assert_int_equal(waitpid(sn.pid, &status, 0), sn.pid);
	assert_true(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	while (cp_drain__poll(d, 100) > 0)
		;

	print_message("# %d matched, %d other faults\n", sn.matched, sn.other);
	assert_int_equal(sn.wrong_ip, 0);
	assert_int_equal(sn.wrong_tid, 0);
	for (int t = 0; t < NR_THREADS; t++)
		assert_int_equal(sn.th[t].seen, NR_PAGES);
	cp_drain__stats(d, &st);
	assert_int_equal(st.drop_ringbuf, 0);
	assert_int_equal(cp_drain__malformed(d), 0);

	fclose(out);
	close(in);
	cp_drain__free(d);
	cp_session__free(s);
}

/* A target that is gone before attach: a sentence, no crash. */
static void test_exited_target(void **state)
{
	struct cp_options opts;
	struct cp_session_cfg cfg = { 0 };
	struct cp_session *s = NULL;
	char err[512] = "";
	pid_t pid;
	int ret;

	(void)state;
	if (geteuid() != 0)
		skip();
	pid = fork();
	if (pid == 0)
		_exit(0);
	waitpid(pid, NULL, 0);
	cp_options_defaults(&opts);
	opts.target = CP_TARGET_PIDS;
	cp_session_cfg_of(&opts, &cfg);
	assert_int_equal(cp_source_decide(CP_SOURCE_FAULTS, &no_pmus, &kv, &cfg.source), 0);
	cfg.pids = &pid;
	cfg.nr_pids = 1;
	ret = cp_session__open(&cfg, &s, err, sizeof(err));
	assert_int_equal(ret, -ESRCH);
	assert_null(s);
	assert_non_null(strstr(err, "has exited"));
}

struct procs_seen {
	int execs, exits;
	struct cp_proc_exec_event exec; /* the last exec record */
	size_t exec_size;
};

static int on_proc_record(__u32 type, const void *data, size_t size, void *ctx)
{
	struct procs_seen *ps = ctx;
	struct cp_proc_event e;

	if (type != CP_REC_PROC || size < sizeof(e))
		return 0;
	memcpy(&e, data, sizeof(e));
	ps->execs += e.kind == CP_PROC_EXEC;
	ps->exits += e.kind == CP_PROC_EXIT;
	if (e.kind == CP_PROC_EXEC) {
		ps->exec_size = size;
		memcpy(&ps->exec, data, size < sizeof(ps->exec) ? size : sizeof(ps->exec));
	}
	return 0;
}

/*
 * A new cgroup of the unified hierarchy for the test's child, its path into
 * @dir: the inode of its directory (the id BPF sees), or 0 with @dir ""
 * when there is no cgroup2 mount to make one in.
 */
static __u64 child_cgroup(char *dir, size_t sz)
{
	static char text[65536];
	char mount[PATH_MAX];
	struct stat st;
	FILE *f = fopen("/proc/self/mountinfo", "r");
	size_t n;

	dir[0] = '\0';
	if (!f)
		return 0;
	n = fread(text, 1, sizeof(text) - 1, f);
	fclose(f);
	text[n] = '\0';
	if (cp_cgroup2_mount(text, mount, sizeof(mount)) ||
	    snprintf(dir, sz, "%s/cp-test-exec-%d", mount, (int)getpid()) >= (int)sz ||
	    (mkdir(dir, 0755) && errno != EEXIST) || stat(dir, &st)) {
		dir[0] = '\0';
		return 0;
	}
	return st.st_ino;
}

/* Moves this process into cgroup directory @dir ("": stays). */
static void join_cgroup(const char *dir)
{
	char path[PATH_MAX];
	FILE *f;

	if (!dir[0] || snprintf(path, sizeof(path), "%s/cgroup.procs", dir) >= (int)sizeof(path))
		return;
	f = fopen(path, "w");
	if (f) {
		fprintf(f, "0\n");
		fclose(f);
	}
}

/* What a helper thread does after 100 ms, while the test waits in the poll. */
struct later {
	int fd;		/* >= 0: writes a byte to it */
	pid_t kill;	/* else: SIGKILLs it */
};

static void *do_later(void *arg)
{
	const struct later *l = arg;
	struct timespec t = { .tv_nsec = 100000000 };

	nanosleep(&t, NULL);
	if (l->fd >= 0) {
		if (write(l->fd, "x", 1) != 1)
			return (void *)1;
	} else {
		kill(l->kill, SIGKILL);
	}
	return NULL;
}

/* Milliseconds one cp_drain__poll() of @timeout_ms takes while @l happens. */
static __u64 poll_while(struct cp_drain *d, int timeout_ms, struct later *l)
{
	pthread_t th;
	__u64 t0 = cp_now_ns();

	assert_int_equal(pthread_create(&th, NULL, do_later, l), 0);
	assert_true(cp_drain__poll(d, timeout_ms) >= 0);
	assert_int_equal(pthread_join(th, NULL), 0);
	return (cp_now_ns() - t0) / 1000000;
}

/*
 * The record's v1 cgroups (the kernel's links of the task's css_set) are
 * those the lines of /proc/PID/cgroup name, each directory looked up under
 * its mount: what lets a hybrid host's processes of one cgroup be read once.
 */
static void check_cgroup_v1(pid_t pid, const struct cp_proc_exec_event *e)
{
	struct cp_cgroup_info cg;

	assert_int_equal(cp_proc_read_cgroup(pid, true, &cg), 0);
	if (!cg.lines) {
		print_message("# a line of /proc/%d/cgroup has no mount here: v1 cgroups not checked\n",
			      (int)pid);
		return;
	}
	print_message("# v1 cgroups %#llx, unified line %d\n", (unsigned long long)e->cgroup_v1,
		      cg.v2_line);
	assert_true(cg.lines ==
		    (e->cgroup_v1 ^ (cg.v2_line ? cp_cgroup_v1_of(0, e->cgroup_id, cp_cgroup_v1_salt()) : 0)));
}

/*
 * An exec record wakes the reader at once: its handlers must read the
 * process's maps while it lives. An exit record does not: the reader's
 * poll runs to its timeout and reads it then (under -a each short process
 * woke the loop twice before). The target's own records are the only ones
 * (-p), so nothing else wakes the poll.
 */
static void test_exec_wakes_exit_waits(void **state)
{
	struct procs_seen ps = { 0 };
	struct cp_record_ops ops = { .record = on_proc_record, .ctx = &ps };
	struct cp_options opts;
	struct cp_session_cfg cfg = { 0 };
	struct cp_session *s = NULL;
	struct cp_drain *d;
	struct timespec settle = { .tv_nsec = 300000000 };
	struct later l;
	char err[512] = "", c, cg_dir[PATH_MAX];
	int go[2];
	__u64 ms, cg_ino;
	pid_t pid;

	(void)state;
	if (geteuid() != 0)
		skip();
	/* the child execs in a cgroup of its own: its id is no other process's */
	cg_ino = child_cgroup(cg_dir, sizeof(cg_dir));
	assert_int_equal(pipe(go), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (!pid) {
		prctl(PR_SET_PDEATHSIG, SIGKILL);
		close(go[1]);
		join_cgroup(cg_dir);
		if (read(go[0], &c, 1) == 1)
			execl("/bin/sleep", "sleep", "30", (char *)NULL);
		_exit(1);
	}
	close(go[0]);
	s = faults_session(pid, &opts, &cfg);
	assert_int_equal(cp_session__attach(s, &cfg, err, sizeof(err)), 0);
	d = cp_drain__new(s->skel, &ops);
	assert_non_null(d);
	while (cp_drain__poll(d, 0) > 0)
		;
	/* the exec: read long before the poll's 3 s */
	l = (struct later){ .fd = go[1] };
	ms = poll_while(d, 3000, &l);
	print_message("# exec read after %llu ms\n", (unsigned long long)ms);
	assert_int_equal(ps.execs, 1);
	assert_true(ms < 2000);
	/* who the new image is, as the kernel had it: its name and its cgroup (the test's) */
	assert_int_equal(ps.exec_size, sizeof(struct cp_proc_exec_event));
	assert_string_equal(ps.exec.comm, "sleep");
	if (cg_ino)
		assert_int_equal(ps.exec.cgroup_id, cg_ino);
	else
		print_message("# no cgroup2 mount to make a cgroup in: the exec's cgroup id is not checked\n");
	check_cgroup_v1(pid, &ps.exec);
	/* the new image's page faults, its samples, are over: none wakes the poll below */
	assert_int_equal(nanosleep(&settle, NULL), 0);
	while (cp_drain__poll(d, 0) > 0)
		;
	/* the exit: nothing wakes the poll, which reads it at its end */
	l = (struct later){ .fd = -1, .kill = pid };
	ms = poll_while(d, 1500, &l);
	print_message("# exit read after %llu ms\n", (unsigned long long)ms);
	assert_int_equal(ps.exits, 1);
	assert_true(ms >= 1400);
	assert_int_equal(waitpid(pid, NULL, 0), pid);
	if (cg_dir[0])
		rmdir(cg_dir);
	close(go[1]);
	cp_drain__free(d);
	cp_session__free(s);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_faults_source_on_workload),
		cmocka_unit_test(test_exited_target),
		cmocka_unit_test(test_exec_wakes_exit_waits),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
