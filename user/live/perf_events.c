// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf_event_open per CPU or per thread, BPF attach, and the sample-rate cap's edge. */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <bpf/libbpf.h>

#include "live/perf_events.h"
#include "util/parse.h"
#include "util/perf_open.h"
#include "util/sysfs.h"

struct cp_perf_events {
	struct cp_perf_event *ev;
	int nr;
	int cap;
	bool rate_baseline; /* the rate cap has read every counter once */
	__u64 rate_last_ns;
	char precise[CP_PRECISE_TEXT_LEN]; /* the precise_ip levels the PMUs took */
	/* the per-thread events' specs and programs, to reopen a process's events */
	struct cp_event_spec specs[CP_PERF_MAX_SPECS];
	struct bpf_program *spec_prog[CP_PERF_MAX_SPECS];
	int nr_specs;
};

struct cp_perf_events *cp_perf_events__new(void)
{
	return calloc(1, sizeof(struct cp_perf_events));
}

/* One header page and one data page: room for ~150 throttle records between readings. */
#define CP_RB_PAGES 2

static size_t rb_bytes(void)
{
	return CP_RB_PAGES * (size_t)sysconf(_SC_PAGESIZE);
}

/* Unmaps @e's buffer, destroys its link and closes it; it stays in the array. */
static void close_event(struct cp_perf_event *e)
{
	if (e->rb)
		munmap(e->rb, rb_bytes());
	if (e->link)
		bpf_link__destroy(e->link); /* closes e->fd too */
	else if (e->fd >= 0)
		close(e->fd);
	e->rb = NULL;
	e->link = NULL;
	e->fd = -1;
}

void cp_perf_events__free(struct cp_perf_events *set)
{
	if (!set)
		return;
	/* members were added after their leaders: close in reverse */
	for (int i = set->nr - 1; i >= 0; i--)
		close_event(&set->ev[i]);
	free(set->ev);
	free(set);
}

int cp_perf_events__nr(const struct cp_perf_events *set)
{
	return set->nr;
}

const struct cp_perf_event *cp_perf_events__get(const struct cp_perf_events *set, int i)
{
	return i >= 0 && i < set->nr ? &set->ev[i] : NULL;
}

static struct cp_perf_event *add_event(struct cp_perf_events *set)
{
	struct cp_perf_event *e;

	if (set->nr == set->cap) {
		int cap = set->cap ? set->cap * 2 : 16;
		void *ev = realloc(set->ev, cap * sizeof(*set->ev));

		if (!ev)
			return NULL;
		set->ev = ev;
		set->cap = cap;
	}
	e = &set->ev[set->nr++];
	memset(e, 0, sizeof(*e));
	e->fd = -1;
	e->leader = -1;
	e->spec = -1;
	return e;
}

/* The index of @spec among the kept per-thread specs, kept now if new; -1 when full. */
static int keep_spec(struct cp_perf_events *set, const struct cp_event_spec *spec,
		     struct bpf_program *prog)
{
	for (int s = 0; s < set->nr_specs; s++)
		if (set->spec_prog[s] == prog && !strcmp(set->specs[s].name, spec->name) &&
		    set->specs[s].attr.type == spec->attr.type &&
		    set->specs[s].attr.config == spec->attr.config)
			return s;
	if (set->nr_specs == CP_PERF_MAX_SPECS)
		return -1;
	set->specs[set->nr_specs] = *spec;
	set->spec_prog[set->nr_specs] = prog;
	return set->nr_specs++;
}

/* --- messages and decisions (pure) -------------------------------------- */

void cp_perf_open_strerror(char *buf, size_t sz, const char *name, int cpu, pid_t tid, int err,
			   bool pmu_event)
{
	const char *hint = "";
	char where[64];

	if (tid > 0 && cpu >= 0)
		snprintf(where, sizeof(where), "for thread %d on CPU %d", (int)tid, cpu);
	else if (tid > 0)
		snprintf(where, sizeof(where), "for thread %d", (int)tid);
	else if (tid == 0)
		snprintf(where, sizeof(where), "for this process");
	else
		snprintf(where, sizeof(where), "on CPU %d", cpu);

	switch (-err) {
	case ENOENT:
	case EOPNOTSUPP:
	case ENODEV:
		if (pmu_event)
			hint = "; the kernel has no PMU for this event here (a VM without a "
			       "virtual PMU?): use --source soft";
		else if (err == -ENODEV)
			hint = "; the CPU is offline";
		break;
	case EACCES:
	case EPERM:
		hint = "; run as root or grant CAP_PERFMON (see "
		       "/proc/sys/kernel/perf_event_paranoid)";
		break;
	case EMFILE:
	case ENFILE:
		hint = "; out of file descriptors: raise ulimit -n";
		break;
	case EBUSY:
		hint = "; another tool holds the PMU";
		break;
	case ENODATA:
		hint = "; this CPU needs mem-loads-aux as group leader";
		break;
	case ESRCH:
		hint = "; the thread has exited";
		break;
	default:
		break;
	}
	snprintf(buf, sz, "cannot open %s %s: %s%s", name, where, strerror(-err), hint);
}

void cp_perf_scope_decide(bool system_wide, int nr_threads, int events_per_thread, bool per_task_ok,
			  long nofile_limit, struct cp_perf_scope *out)
{
	memset(out, 0, sizeof(*out));
	if (system_wide) {
		out->per_cpu = true;
		snprintf(out->reason, sizeof(out->reason), "per-CPU events: system-wide (-a)");
		return;
	}
	out->per_cpu = true;
	out->filter_tgid = true;
	if (!per_task_ok) {
		snprintf(out->reason, sizeof(out->reason),
			 "per-CPU events with a PID filter: the source has no per-thread events on "
			 "this kernel");
	} else if (nr_threads > CP_PERF_MAX_THREADS) {
		snprintf(out->reason, sizeof(out->reason),
			 "per-CPU events with a PID filter: %d threads > %d", nr_threads,
			 CP_PERF_MAX_THREADS);
	} else if (nofile_limit > 0 &&
		   (long long)nr_threads * events_per_thread > nofile_limit / 2) {
		snprintf(out->reason, sizeof(out->reason),
			 "per-CPU events with a PID filter: %d threads x %d events > half of "
			 "ulimit -n %ld",
			 nr_threads, events_per_thread, nofile_limit);
	} else {
		out->per_cpu = false;
		out->filter_tgid = false;
		snprintf(out->reason, sizeof(out->reason),
			 "per-thread events with inherit: %d thread%s", nr_threads,
			 nr_threads == 1 ? "" : "s");
	}
}

/* --- opening ------------------------------------------------------------ */

/*
 * Attaches @prog to event @fd with the event's role as bpf_cookie (a perf
 * link, 5.15+); before that, without it: the samples' data_src alone tells
 * loads from stores.
 */
static struct bpf_link *attach_with_role(struct bpf_program *prog, int fd, enum cp_event_role role)
{
	LIBBPF_OPTS(bpf_perf_event_opts, opts, .bpf_cookie = cp_event_role_cookie(role));
	struct bpf_link *link = bpf_program__attach_perf_event_opts(prog, fd, &opts);

	if (libbpf_get_error(link) == -EOPNOTSUPP && opts.bpf_cookie)
		link = bpf_program__attach_perf_event(prog, fd);
	return link;
}

int cp_perf_events__open_one(struct cp_perf_events *set, struct cp_event_spec *spec, pid_t pid,
			     int cpu, struct bpf_program *prog, char *err, size_t err_sz)
{
	struct perf_event_attr attr, leader;
	struct cp_perf_event *e;
	int lfd = -1, fd, ret = 0, leader_idx = -1;
	__u64 key = pid == -1 ? (__u64)cpu : (__u64)pid;
	bool inherit = pid != -1;

	if (spec->has_leader) {
		leader = spec->leader;
		leader.inherit = inherit;
		lfd = cp_perf_event_open(&leader, pid, cpu, -1);
		if (lfd < 0) {
			cp_perf_open_strerror(err, err_sz, spec->leader_name, cpu, pid, lfd,
					      spec->pmu_event);
			return lfd;
		}
	}
	for (;;) {
		cp_event_spec_instance(spec, key, &attr);
		attr.inherit = inherit;
		fd = cp_perf_event_open(&attr, pid, cpu, lfd);
		if (fd >= 0 || cp_event_spec_lower_precise(spec, fd))
			break;
	}
	if (fd < 0) {
		cp_perf_open_strerror(err, err_sz, spec->name, cpu, pid, fd, spec->pmu_event);
		goto fail;
	}

	if (lfd >= 0) {
		e = add_event(set);
		if (!e) {
			ret = -ENOMEM;
			snprintf(err, err_sz, "out of memory for perf events");
			goto fail;
		}
		e->fd = lfd;
		e->cpu = cpu;
		e->tid = pid;
		e->role = CP_EVENT_AUX;
		snprintf(e->name, sizeof(e->name), "%s", spec->leader_name);
		leader_idx = set->nr - 1;
		lfd = -1;
	}
	e = add_event(set);
	if (!e) {
		snprintf(err, err_sz, "out of memory for perf events");
		close(fd);
		return -ENOMEM;
	}
	e->fd = fd;
	e->cpu = cpu;
	e->tid = pid;
	e->role = spec->role;
	e->leader = leader_idx;
	snprintf(e->name, sizeof(e->name), "%s", spec->name);
	e->base_period = attr.freq ? 0 : attr.sample_period;
	e->period = e->base_period;
	e->max_period = spec->max_period;
	e->period_align = spec->period_align;

	if (!prog) {
		if (ioctl(fd, PERF_EVENT_IOC_ENABLE, 0) < 0) {
			ret = -errno;
			snprintf(err, err_sz, "cannot enable %s: %s", spec->name, strerror(-ret));
			return ret;
		}
		return 0;
	}
	e->link = attach_with_role(prog, fd, spec->role);
	ret = (int)libbpf_get_error(e->link);
	if (ret) {
		e->link = NULL;
		snprintf(err, err_sz, "cannot attach BPF program %s to %s: %s",
			 bpf_program__name(prog), spec->name, strerror(-ret));
		return ret;
	}
	/*
	 * The program takes every sample (it returns 0: nothing is written to
	 * a perf buffer), so a small one hears of throttling only. Per-CPU
	 * events only: perf_mmap() refuses inherited per-task ones. Without it
	 * (locked-memory limit), the event samples all the same.
	 */
	if (cpu >= 0 && e->base_period) {
		e->rb = mmap(NULL, rb_bytes(), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
		if (e->rb == MAP_FAILED)
			e->rb = NULL;
	}
	return 0;

fail:
	ret = fd < 0 ? fd : ret;
	if (fd >= 0)
		close(fd);
	if (lfd >= 0)
		close(lfd);
	return ret;
}

int cp_perf_events__open_cpus(struct cp_perf_events *set, struct cp_event_spec *spec,
			      const struct cp_cpuset *cpus, struct bpf_program *prog, char *err,
			      size_t err_sz)
{
	char first[256] = "";
	int opened = 0, ret;

	for (int cpu = cp_cpuset_next(cpus, 0); cpu >= 0; cpu = cp_cpuset_next(cpus, cpu + 1)) {
		ret = cp_perf_events__open_one(set, spec, -1, cpu, prog, err, err_sz);
		if (!ret) {
			opened++;
			continue;
		}
		/* offline, or not a CPU of this PMU: skip it, as llcstat does */
		if (ret == -ENODEV) {
			if (!first[0])
				snprintf(first, sizeof(first), "%s", err);
			continue;
		}
		return ret;
	}
	if (!opened) {
		if (first[0])
			snprintf(err, err_sz, "%s", first);
		else
			snprintf(err, err_sz, "cannot open %s: no CPU to open it on", spec->name);
		return -ENODEV;
	}
	return opened;
}

/* Adds every TID in /proc/@pid/task that @tids does not hold yet. */
static int list_threads(pid_t pid, pid_t **tids, int *nr, int *cap)
{
	char path[64];
	struct dirent *de;
	DIR *d;

	snprintf(path, sizeof(path), "/proc/%d/task", (int)pid);
	d = opendir(path);
	if (!d)
		return errno == ENOENT ? -ESRCH : -errno;
	while ((de = readdir(d))) {
		pid_t tid = (pid_t)atoi(de->d_name);
		int i;

		if (tid <= 0)
			continue;
		for (i = 0; i < *nr && (*tids)[i] != tid; i++)
			;
		if (i < *nr)
			continue;
		if (*nr == *cap) {
			int c = *cap ? *cap * 2 : 64;
			pid_t *t = realloc(*tids, c * sizeof(*t));

			if (!t) {
				closedir(d);
				return -ENOMEM;
			}
			*tids = t;
			*cap = c;
		}
		(*tids)[(*nr)++] = tid;
	}
	closedir(d);
	return 0;
}

int cp_perf_count_threads(pid_t pid)
{
	pid_t *tids = NULL;
	int nr = 0, cap = 0, ret;

	ret = list_threads(pid, &tids, &nr, &cap);
	free(tids);
	return ret ? ret : nr;
}

static int cmp_tid(const void *a, const void *b)
{
	pid_t x = *(const pid_t *)a, y = *(const pid_t *)b;

	return x < y ? -1 : x > y;
}

int cp_perf_events__open_threads(struct cp_perf_events *set, struct cp_event_spec *spec, pid_t pid,
				 struct bpf_program *prog, char *err, size_t err_sz)
{
	int s = keep_spec(set, spec, prog);
	pid_t *tids = NULL;
	int nr = 0, cap = 0, opened = 0, ret;

	ret = list_threads(pid, &tids, &nr, &cap);
	if (ret) {
		if (ret == -ESRCH)
			snprintf(err, err_sz, "cannot open %s for process %d: it has exited",
				 spec->name, (int)pid);
		else
			snprintf(err, err_sz, "cannot list the threads of process %d: %s", (int)pid,
				 strerror(-ret));
		goto out;
	}
	/* lowest TID first: the main thread, which usually creates the others */
	qsort(tids, nr, sizeof(*tids), cmp_tid);
	for (int i = 0; i < nr; i++) {
		int from = set->nr;

		ret = cp_perf_events__open_one(set, spec, tids[i], -1, prog, err, err_sz);
		if (ret == -ESRCH)
			continue; /* exited since the listing */
		if (ret)
			goto out;
		for (int k = from; k < set->nr; k++) {
			set->ev[k].tgid = pid;
			set->ev[k].spec = s;
		}
		opened++;
	}
	/* the precise_ip the probe settled on */
	if (s >= 0)
		set->specs[s].attr.precise_ip = spec->attr.precise_ip;
	ret = 0;
	if (!opened) {
		ret = -ESRCH;
		snprintf(err, err_sz, "cannot open %s for process %d: it has exited", spec->name,
			 (int)pid);
	}
out:
	free(tids);
	return ret ? ret : opened;
}

__u64 cp_perf_max_sample_rate(const char *root)
{
	char text[32];
	__u64 v;

	if (cp_sysfs_read_value(root, "proc/sys/kernel/perf_event_max_sample_rate", text,
				sizeof(text)) ||
	    cp_parse_u64(text, 0, ~0ull, &v))
		return 0;
	return v;
}

int cp_perf_online_cpus(const char *root, struct cp_cpuset *cpus)
{
	char text[4096];
	int n;

	n = cp_sysfs_read(root, "sys/devices/system/cpu/online", text, sizeof(text));
	if (n < 0)
		return n;
	return cp_cpuset_parse(text, cpus);
}

/* Every spec of one PMU on its CPUs (per-CPU) or on every target's threads. */
/* Appends "PMU event level, event level" for @pmu's specs that probed precise_ip. */
static void note_precise(struct cp_perf_events *set, const struct cp_pmu *pmu,
			 const struct cp_mem_specs *specs)
{
	size_t len = strlen(set->precise);
	bool first = true;

	for (int s = 0; s < specs->nr; s++) {
		const struct cp_event_spec *sp = &specs->spec[s];
		int n;

		if (!sp->probe_precise)
			continue;
		if (first)
			n = snprintf(set->precise + len, sizeof(set->precise) - len, "%s%s %s %u",
				     len ? "; " : "", pmu->name, sp->name,
				     (unsigned int)sp->attr.precise_ip);
		else
			n = snprintf(set->precise + len, sizeof(set->precise) - len, ", %s %u",
				     sp->name, (unsigned int)sp->attr.precise_ip);
		first = false;
		if (n < 0 || (size_t)n >= sizeof(set->precise) - len)
			return; /* cut: the text is already terminated */
		len += n;
	}
}

const char *cp_perf_events__precise(const struct cp_perf_events *set)
{
	return set ? set->precise : "";
}

static int open_pmu(struct cp_perf_events *set, const struct cp_pmu *pmu,
		    const struct cp_sampling_cfg *cfg, const struct cp_perf_scope *scope,
		    const struct cp_cpuset *cpus, const pid_t *pids, int nr_pids,
		    struct bpf_program *prog, char *err, size_t err_sz)
{
	struct cp_mem_specs specs;
	struct cp_cpuset mine;
	int ret, total = 0;

	ret = cp_mem_specs_build(pmu, cfg, &specs, err, err_sz);
	if (ret)
		return ret;
	mine = *cpus;
	if (pmu->has_cpus)
		cp_cpuset_and(&mine, cpus, &pmu->cpus);
	for (int s = 0; s < specs.nr; s++) {
		/* the level the probe settles on is kept in the spec: noted after the loop */
		if (scope->per_cpu) {
			ret = cp_perf_events__open_cpus(set, &specs.spec[s], &mine, prog, err,
							err_sz);
			if (ret < 0)
				return ret;
			total += ret;
			continue;
		}
		for (int p = 0; p < nr_pids; p++) {
			ret = cp_perf_events__open_threads(set, &specs.spec[s], pids[p], prog, err,
							   err_sz);
			if (ret < 0)
				return ret;
			total += ret;
		}
	}
	note_precise(set, pmu, &specs);
	return total;
}

int cp_perf_events__open_mem(struct cp_perf_events *set, const struct cp_pmus *pmus,
			     const struct cp_source_choice *choice,
			     const struct cp_sampling_cfg *cfg, const struct cp_perf_scope *scope,
			     const struct cp_cpuset *cpus, const pid_t *pids, int nr_pids,
			     struct bpf_program *prog, char *err, size_t err_sz)
{
	int ret, total = 0;

	switch (choice->kind) {
	case CP_SOURCE_PEBS:
		for (int i = 0; i < pmus->nr_core; i++) {
			ret = open_pmu(set, &pmus->core[i], cfg, scope, cpus, pids, nr_pids, prog,
				       err, err_sz);
			if (ret < 0)
				return ret;
			total += ret;
		}
		return total;
	case CP_SOURCE_IBS:
		if (!scope->per_cpu && !choice->per_task) {
			snprintf(err, err_sz, "IBS on this kernel has no per-thread events");
			return -EOPNOTSUPP;
		}
		return open_pmu(set, &pmus->ibs, cfg, scope, cpus, pids, nr_pids, prog, err,
				err_sz);
	default:
		snprintf(err, err_sz, "source %s opens no PMU events",
			 cp_source_name(choice->kind));
		return -EINVAL;
	}
}

/* --- the sample-rate cap ------------------------------------------------ */

static bool capped(const struct cp_perf_event *e)
{
	return e->role != CP_EVENT_AUX && e->base_period;
}

static int cmp_unit(const void *a, const void *b, void *arg)
{
	const struct cp_perf_event *ev = arg;
	const struct cp_perf_event *x = &ev[*(const int *)a], *y = &ev[*(const int *)b];

	if (x->cpu != y->cpu)
		return x->cpu < y->cpu ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return *(const int *)a - *(const int *)b;
}

static int read_count(int fd, __u64 *count)
{
	ssize_t n = read(fd, count, sizeof(*count));

	if (n < 0)
		return -errno;
	return n == sizeof(*count) ? 0 : -EIO;
}

/* Decides and applies one unit: events @idx[0..@n) of the same CPU or thread. */
static int cap_unit(struct cp_perf_events *set, const int *idx, int n, const __u64 *counts,
		    const struct cp_rate_cap_cfg *cfg, __u64 elapsed_ns, FILE *log)
{
	struct cp_rate_unit u = {0};
	int changed, applied = 0;
	__u64 rate;

	for (int i = 0; i < n && u.nr < CP_RATE_MAX_EVENTS; i++) {
		struct cp_perf_event *e = &set->ev[idx[i]];
		struct cp_rate_event *r = &u.ev[u.nr++];

		r->base_period = e->base_period;
		r->period = e->period;
		r->max_period = e->max_period;
		r->align = e->period_align;
		r->samples = cp_rate_samples(e->last_count, counts[idx[i]], e->period);
	}
	changed = cp_rate_cap_decide(cfg, &u, elapsed_ns, &rate);
	for (int i = 0; changed && i < u.nr; i++) {
		struct cp_perf_event *e = &set->ev[idx[i]];
		__u64 p = u.ev[i].new_period;

		if (p == e->period)
			continue;
		if (ioctl(e->fd, PERF_EVENT_IOC_PERIOD, &p) < 0) {
			int ret = -errno;

			if (log)
				fprintf(log, "cannot set the %s period to %llu: %s\n", e->name,
					(unsigned long long)p, strerror(-ret));
			return ret;
		}
		if (log) {
			if (e->cpu >= 0)
				fprintf(log, "CPU %d", e->cpu);
			else
				fprintf(log, "thread %d", (int)e->tid);
			fprintf(log,
				": %llu samples/s against a budget of %llu/s: %s period %llu -> "
				"%llu\n",
				(unsigned long long)rate, (unsigned long long)cfg->max_rate,
				e->name, (unsigned long long)e->period, (unsigned long long)p);
		}
		e->period = p;
		applied++;
	}
	return applied;
}

/* Counts the throttle records in @e's buffer and frees their room. */
static void read_throttles(struct cp_perf_event *e)
{
	struct perf_event_mmap_page *mp = e->rb;
	const __u8 *data = (const __u8 *)e->rb + mp->data_offset;
	__u64 head = __atomic_load_n(&mp->data_head, __ATOMIC_ACQUIRE), tail = mp->data_tail;
	__u64 size = mp->data_size;

	while (size && tail + sizeof(struct perf_event_header) <= head) {
		struct perf_event_header h;
		__u64 off = tail % size;

		/* a header never wraps: records are 8-byte aligned, the size a power of two */
		memcpy(&h, data + off, sizeof(h));
		if (h.size < sizeof(h))
			break; /* cannot happen; do not loop on it */
		if (h.type == PERF_RECORD_THROTTLE)
			e->throttles++;
		tail += h.size;
	}
	__atomic_store_n(&mp->data_tail, head, __ATOMIC_RELEASE);
}

__u64 cp_perf_events__throttles(struct cp_perf_events *set, int *without)
{
	__u64 sum = 0;

	*without = 0;
	for (int i = 0; set && i < set->nr; i++) {
		struct cp_perf_event *e = &set->ev[i];

		if (!capped(e))
			continue;
		if (!e->rb) {
			(*without)++;
			continue;
		}
		read_throttles(e);
		sum += e->throttles;
	}
	return sum;
}

/* Closes the events of process @tgid below index @below, and closes the gaps. */
static void drop_old_events(struct cp_perf_events *set, pid_t tgid, int below)
{
	int *to = calloc(set->nr, sizeof(*to)), n = 0;

	if (!to)
		return; /* they stay: sampled twice until the end, never lost */
	/* members were added after their leaders: close in reverse */
	for (int i = below - 1; i >= 0; i--) {
		struct cp_perf_event *e = &set->ev[i];

		if (e->tgid != tgid)
			continue;
		close_event(e);
		e->tgid = -1; /* gone */
	}
	for (int i = 0; i < set->nr; i++) {
		to[i] = set->ev[i].tgid == -1 ? -1 : n;
		if (to[i] >= 0)
			set->ev[n++] = set->ev[i];
	}
	for (int i = 0; i < n; i++)
		if (set->ev[i].leader >= 0)
			set->ev[i].leader = to[set->ev[i].leader];
	set->nr = n;
	free(to);
}

/* True when process @tgid's thread @tid has an event of its own below index @below. */
static bool has_own_event(const struct cp_perf_events *set, pid_t tgid, pid_t tid, int below)
{
	for (int i = 0; i < below; i++)
		if (set->ev[i].tgid == tgid && set->ev[i].tid == tid)
			return true;
	return false;
}

/* Closes the events from index @from on: a reopening that failed half-way. */
static void drop_new_events(struct cp_perf_events *set, int from)
{
	for (int i = set->nr - 1; i >= from; i--)
		close_event(&set->ev[i]);
	set->nr = from;
}

/*
 * When threads of process @tgid inherited their events (created after the
 * open), opens explicit events for every thread it has now, at the
 * process's highest period of each kind, and closes the old ones with
 * their inherited children. Returns the number of threads that had
 * inherited, 0 when none (or the process is gone), or a negative errno
 * (the old events are then kept).
 */
static int reopen_process(struct cp_perf_events *set, pid_t tgid, FILE *log)
{
	__u64 period[CP_PERF_MAX_SPECS] = {0};
	bool used[CP_PERF_MAX_SPECS] = {false};
	int nr = 0, cap = 0, inherited = 0, old_nr = set->nr, ret = 0;
	pid_t *tids = NULL;
	char err[256];

	if (list_threads(tgid, &tids, &nr, &cap)) {
		free(tids);
		return 0;
	}
	for (int i = 0; i < nr; i++)
		inherited += !has_own_event(set, tgid, tids[i], old_nr);
	free(tids);
	if (!inherited)
		return 0;
	for (int i = 0; i < old_nr; i++) {
		const struct cp_perf_event *e = &set->ev[i];

		if (e->tgid != tgid || e->spec < 0 || e->role == CP_EVENT_AUX)
			continue;
		used[e->spec] = true;
		if (e->period > period[e->spec])
			period[e->spec] = e->period;
	}
	for (int s = 0; s < set->nr_specs && ret >= 0; s++)
		if (used[s])
			ret = cp_perf_events__open_threads(set, &set->specs[s], tgid,
							   set->spec_prog[s], err, sizeof(err));
	if (ret < 0) {
		drop_new_events(set, old_nr); /* the old ones stay */
		if (log)
			fprintf(log, "process %d: cannot reopen its events per thread: %s\n",
				(int)tgid, err);
		return ret;
	}
	/* the period the cap chose for the process, or the new event's own when higher */
	for (int i = old_nr; i < set->nr; i++) {
		struct cp_perf_event *e = &set->ev[i];
		__u64 p = e->spec >= 0 ? period[e->spec] : 0;

		if (!capped(e) || p <= e->period)
			continue;
		if (ioctl(e->fd, PERF_EVENT_IOC_PERIOD, &p) == 0)
			e->period = p;
	}
	drop_old_events(set, tgid, old_nr);
	if (log)
		fprintf(log,
			"process %d: %d thread%s had inherited %s events: events of their own now, "
			"the cap reaches each\n",
			(int)tgid, inherited, inherited == 1 ? "" : "s",
			inherited == 1 ? "its" : "their");
	return inherited;
}

/* After a change: the processes with a raised period whose threads inherited events. */
static void reopen_inherited(struct cp_perf_events *set, FILE *log)
{
	pid_t done[CP_PERF_MAX_REOPEN];
	int nr_done = 0;

	for (int i = 0; i < set->nr && nr_done < CP_PERF_MAX_REOPEN; i++) {
		const struct cp_perf_event *e = &set->ev[i];
		pid_t tgid = e->tgid;
		bool seen = false;

		if (tgid <= 0 || !capped(e) || e->period <= e->base_period)
			continue;
		for (int k = 0; k < nr_done; k++)
			seen |= done[k] == tgid;
		if (seen)
			continue;
		done[nr_done++] = tgid;
		reopen_process(set, tgid, log);
		i = -1; /* the array changed: look again, skipping what is done */
	}
}

int cp_perf_events__rate_cap(struct cp_perf_events *set, const struct cp_rate_cap_cfg *cfg,
			     __u64 now_ns, FILE *log)
{
	__u64 *counts = NULL, elapsed = now_ns - set->rate_last_ns;
	int *idx = NULL, n = 0, ret = 0, changed = 0;

	if (!set->nr)
		return 0;
	counts = calloc(set->nr, sizeof(*counts));
	idx = calloc(set->nr, sizeof(*idx));
	if (!counts || !idx) {
		ret = -ENOMEM;
		goto out;
	}
	for (int i = 0; i < set->nr; i++) {
		if (!capped(&set->ev[i]))
			continue;
		ret = read_count(set->ev[i].fd, &counts[i]);
		if (ret)
			goto out;
		idx[n++] = i;
	}
	if (set->rate_baseline && now_ns > set->rate_last_ns) {
		qsort_r(idx, n, sizeof(*idx), cmp_unit, set->ev);
		for (int lo = 0, hi; lo < n; lo = hi) {
			const struct cp_perf_event *first = &set->ev[idx[lo]];

			for (hi = lo + 1; hi < n; hi++) {
				const struct cp_perf_event *e = &set->ev[idx[hi]];

				if (e->cpu != first->cpu || e->tid != first->tid)
					break;
			}
			ret = cap_unit(set, idx + lo, hi - lo, counts, cfg, elapsed, log);
			if (ret < 0)
				goto out;
			changed += ret;
		}
		ret = 0;
	}
	for (int i = 0; i < n; i++)
		set->ev[idx[i]].last_count = counts[idx[i]];
	set->rate_baseline = true;
	set->rate_last_ns = now_ns;
	if (changed)
		reopen_inherited(set, log);
out:
	free(counts);
	free(idx);
	return ret ? ret : changed;
}
