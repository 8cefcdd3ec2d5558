// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The no-PMU source end to end (root): tests/workloads/soft_loop loads from
 * a heap buffer through the instruction labelled cp_soft_load and stores
 * into the global soft_dst through cp_soft_store; per-CPU cpu-clock events
 * run on_tick, and user space decodes what it queues (user/live/soft_source.c).
 * Nearly every sample must be one of the two labelled instructions (the
 * rest: the clock the loop reads between passes), with an
 * address inside the buffer (load) or the array (store), the access size
 * and direction right and no cache level; the loop's instructions must
 * have time counts; the labels must have descriptors and some other loop
 * instruction a "no memory operand" marker. Skid: the instruction right
 * after the load (cp_soft_after_load, no memory operand) is where ticks land
 * while the load waits; its descriptor must charge them to the load (user/decode/skid.h),
 * so no time stays on it and every load sample, corrected or not, carries
 * the load's ip and an address the load really reads: in the buffer, a
 * whole number of lines from its start. Then the workload spins in the
 * kernel: those ticks are counted as kernel ticks, not on user instructions.
 */
#include <errno.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>
#include <bpf/bpf.h>
#include <bpf/libbpf.h>
#include <cmocka.h>

#include "lib/require_root.h"
#include "lib/workload_pipe.h"

#include "cacheperf/abi.h"
#include "cacheperf/soft_tick.h"
#include "cacheperf.skel.h"
#include "machine/cpuset.h"
#include "live/cpu_costs.h"
#include "live/drain.h"
#include "profile/insn_store.h"
#include "live/perf_events.h"
#include "live/soft_source.h"
#include "symbols/symbolizer.h"

#define MAX_INSNS	4096
#define TEST_FREQ	CP_SOFT_FREQ_DEFAULT

/* What the drained samples showed. */
struct seen {
	__u32 pid;
	__u64 load_ip, store_ip, after_load_ip;
	__u64 src, src_len, dst, dst_len;
	__u64 samples, loads, stores, elsewhere;
	__u64 wrong_ip, wrong_addr, wrong_dir, wrong_size, with_level;
	__u64 off_line;		/* load addresses not a whole number of lines into the buffer */
};

struct fixture {
	pid_t pid;
	int in;
	FILE *out;
	struct cacheperf *skel;
	struct cp_drain *drain;
	struct cp_perf_events *events;
	struct cp_soft_source *soft;
	struct cp_symbolizer *sym;
	struct seen seen;
	struct cp_insn insns[MAX_INSNS];
};

static int on_sample(const struct cp_sample *s, void *ctx)
{
	struct seen *w = ctx;
	struct cp_data_src d;

	if (s->tgid != w->pid)
		return 0;
	w->samples++;
	cp_data_src_decode(s->data_src, &d);
	if (d.lvl != CP_LVL_NA || !(s->flags & CP_SAMPLE_NA) || !(s->flags & CP_SAMPLE_ALL))
		w->with_level++;
	/* the loop's load and store move a long; its clock elsewhere may not (the vDSO's
	 * sequence counter is 32 bits) */
	if ((s->ip == w->load_ip || s->ip == w->store_ip) && s->size != sizeof(long))
		w->wrong_size++;
	if (s->ip == w->load_ip) {
		w->loads++;
		if (s->addr < w->src || s->addr + 8 > w->src + w->src_len)
			w->wrong_addr++;
		else if ((s->addr - w->src) % 64)
			w->off_line++;	/* copy_pass loads one long per line: src + k * 64 */
		if (s->flags & CP_SAMPLE_STORE)
			w->wrong_dir++;
	} else if (s->ip == w->store_ip) {
		w->stores++;
		if (s->addr < w->dst || s->addr + 8 > w->dst + w->dst_len)
			w->wrong_addr++;
		if (!(s->flags & CP_SAMPLE_STORE))
			w->wrong_dir++;
	} else if (s->ip >= w->load_ip - 16 && s->ip < w->store_ip + 16) {
		/* the loop's other instructions have no memory operand */
		w->wrong_ip++;
	} else {
		/* the loop's clock: stack slots, the vDSO's clock data */
		w->elsewhere++;
	}
	return 0;
}

static int ignore_record(__u32 type, const void *data, size_t size, void *ctx)
{
	(void)type;
	(void)data;
	(void)size;
	(void)ctx;
	return 0;
}

static void read_banner(struct fixture *f)
{
	char line[256], what[16];
	unsigned long long a, n;

	assert_non_null(fgets(line, sizeof(line), f->out));
	assert_int_equal(sscanf(line, "ready %d", &f->pid), 1);
	assert_non_null(fgets(line, sizeof(line), f->out));
	assert_int_equal(sscanf(line, "label %15s %llx", what, &a), 2);
	assert_string_equal(what, "load");
	f->seen.load_ip = a;
	assert_non_null(fgets(line, sizeof(line), f->out));
	assert_int_equal(sscanf(line, "label %15s %llx", what, &a), 2);
	assert_string_equal(what, "store");
	f->seen.store_ip = a;
	assert_non_null(fgets(line, sizeof(line), f->out));
	assert_int_equal(sscanf(line, "label %15s %llx", what, &a), 2);
	assert_string_equal(what, "after_load");
	f->seen.after_load_ip = a;
	assert_non_null(fgets(line, sizeof(line), f->out));
	assert_int_equal(sscanf(line, "src %llx %llu", &a, &n), 2);
	f->seen.src = a;
	f->seen.src_len = n;
	assert_non_null(fgets(line, sizeof(line), f->out));
	assert_int_equal(sscanf(line, "dst %llx %llu", &a, &n), 2);
	f->seen.dst = a;
	f->seen.dst_len = n;
	f->seen.pid = (__u32)f->pid;
}

static int setup(void **state)
{
	char path[512];
	char *argv[2] = { path, NULL };
	struct cp_record_ops ops = { .sample = on_sample, .record = ignore_record };
	struct cp_cpuset cpus;
	struct fixture *f;
	__u8 v = CP_TARG_PROFILE;
	__u32 tgid;
	char err[256];
	int n;

	*state = NULL;
	if (geteuid() != 0)
		return 0;
	f = calloc(1, sizeof(*f));
	assert_non_null(f);
	snprintf(path, sizeof(path), "%s/tests/workloads/soft_loop",
		 getenv("CP_BUILD") ? getenv("CP_BUILD") : "build");
	assert_int_equal(cp_wl_pipe_start(argv, &f->pid, &f->in, &f->out), 0);
	read_banner(f);

	f->skel = cacheperf__open();
	assert_non_null(f->skel);
	assert_int_equal(bpf_program__set_autoload(f->skel->progs.on_tick, true), 0);
	f->skel->rodata->targ_filter_tgid = true;
	f->skel->rodata->targ_self_tgid = (__u32)getpid();
	f->skel->rodata->targ_forward_all = true;
	assert_int_equal(cacheperf__load(f->skel), 0);
	tgid = (__u32)f->pid;
	assert_int_equal(bpf_map_update_elem(bpf_map__fd(f->skel->maps.targ_tgids), &tgid, &v,
					     BPF_ANY), 0);
	ops.ctx = &f->seen;
	f->drain = cp_drain__new(f->skel, &ops);
	assert_non_null(f->drain);
	f->sym = cp_symbolizer__new(0, 0);
	assert_non_null(f->sym);
	f->soft = cp_soft_source__new(f->skel, f->sym);
	assert_non_null(f->soft);
	f->events = cp_perf_events__new();
	assert_non_null(f->events);
	assert_true(cp_perf_online_cpus("/", &cpus) > 0);
	n = cp_soft_events_open(f->events, &cpus, TEST_FREQ, f->skel->progs.on_tick, err,
				sizeof(err));
	if (n <= 0)
		fail_msg("cannot open the cpu-clock events: %s", err);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;
	int status;

	if (!f)
		return 0;
	dprintf(f->in, "quit\n");
	close(f->in);
	waitpid(f->pid, &status, 0);
	fclose(f->out);
	cp_perf_events__free(f->events);
	cp_soft_source__free(f->soft);
	cp_symbolizer__free(f->sym);
	cp_drain__free(f->drain);
	cacheperf__destroy(f->skel);
	free(f);
	return 0;
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

/* Runs workload command @cmd ("mem 1500") while draining and decoding, as the loop does. */
static void run_phase(struct fixture *f, const char *cmd, long ms)
{
	char line[64], done[64];
	double end = now_ms() + (double)ms + 300;

	dprintf(f->in, "%s %ld\n", cmd, ms);
	while (now_ms() < end) {
		cp_drain__poll(f->drain, 50);
		cp_soft_source__tick(f->soft);
	}
	snprintf(done, sizeof(done), "done %s\n", cmd);
	assert_non_null(fgets(line, sizeof(line), f->out));
	assert_string_equal(line, done);
	cp_drain__poll(f->drain, 0);
}

/* The workload's counter entries drained since the last call, into f->insns. */
static int take_counts(struct fixture *f)
{
	int n = cp_drain__ip_counts(f->drain, f->insns, MAX_INSNS);

	assert_true(n >= 0);
	return n;
}

/* The descriptor user space installed for @ip; false when there is none (yet). */
static bool find_insn(struct fixture *f, __u64 ip, struct cp_soft_insn *out)
{
	struct cp_ip_key key = { .tgid = (__u32)f->pid, .ip = ip };

	return !bpf_map_lookup_elem(bpf_map__fd(f->skel->maps.soft_insns), &key, out);
}

static void read_insn(struct fixture *f, __u64 ip, struct cp_soft_insn *out)
{
	if (!find_insn(f, ip, out))
		fail_msg("no descriptor for ip 0x%llx: %s", (unsigned long long)ip, strerror(errno));
}

static void test_loop_samples(void **state)
{
	struct fixture *f = ROOT_FIXTURE(struct fixture, state);
	struct seen *w = &f->seen;
	struct cp_soft_insn ld, st, other, after;
	__u64 lo = w->load_ip - 64, hi = w->store_ip + 64;
	__u64 ticks_load = 0, ticks_store = 0, ticks_other = 0, ticks_after = 0, markers = 0;
	__u64 ticks_undecoded = 0, hot_decoded = 0, round1[64];
	size_t nr_round1 = 0;
	__u64 skid0, skid, loads0;
	struct cp_cpu_cost cost;
	int n;

	take_counts(f);
	/* two rounds: the first queues and decodes, the second samples with descriptors */
	run_phase(f, "mem", 1000);
	n = take_counts(f);
	/* what round 1 ticked near the loop: ticked again in round 2, it must be decoded */
	for (int i = 0; i < n && nr_round1 < 64; i++)
		if (f->insns[i].key.tgid == (__u32)f->pid && f->insns[i].key.ip >= lo &&
		    f->insns[i].key.ip < hi)
			round1[nr_round1++] = f->insns[i].key.ip;
	skid0 = f->skel->bss->stats.ticks_skid;
	loads0 = w->loads;
	run_phase(f, "mem", 1500);
	skid = f->skel->bss->stats.ticks_skid - skid0;
	print_message("# samples %llu (loads %llu, stores %llu), skid-charged ticks %llu\n",
		      (unsigned long long)w->samples, (unsigned long long)w->loads,
		      (unsigned long long)w->stores, (unsigned long long)skid);
	assert_true(w->loads > 0);
	assert_true(w->stores > 0);
	assert_int_equal(w->wrong_ip, 0);
	assert_true(w->elsewhere * 10 < w->samples);
	assert_int_equal(w->wrong_addr, 0);
	assert_int_equal(w->off_line, 0);
	assert_int_equal(w->wrong_dir, 0);
	assert_int_equal(w->wrong_size, 0);
	assert_int_equal(w->with_level, 0);
	/* the program timed itself on the target's ticks: some time, under 100 us a tick */
	assert_int_equal(cp_cpu_costs__sum(f->skel, &cost), 0);
	print_message("# %llu ticks, on_tick %llu ns each\n", (unsigned long long)cost.ticks,
		      cost.ticks ? (unsigned long long)(cost.tick_prog_ns / cost.ticks) : 0ull);
	assert_true(cost.ticks > 0);
	assert_true(cost.tick_prog_ns > 0 && cost.tick_prog_ns < cost.ticks * 100000);

	/* time counts: the labels, and loop instructions without a memory operand */
	n = take_counts(f);
	for (int i = 0; i < n; i++) {
		const struct cp_insn *in = &f->insns[i];

		if (in->key.tgid != (__u32)f->pid)
			continue;
		if (in->key.ip == w->load_ip) {
			ticks_load += in->counts.ticks;
			assert_int_equal(in->counts.stores, 0);
			/* every tick charged to the load, skid or not, is a sample of it */
			assert_int_equal(in->counts.loads, in->counts.ticks);
		} else if (in->key.ip == w->after_load_ip) {
			ticks_after += in->counts.ticks;
		} else if (in->key.ip == w->store_ip) {
			ticks_store += in->counts.ticks;
			assert_int_equal(in->counts.loads, 0);
		} else if (in->key.ip >= lo && in->key.ip < hi && in->counts.ticks &&
			   !in->counts.loads && !in->counts.stores) {
			ticks_other += in->counts.ticks;
			bool again = false;

			for (size_t j = 0; j < nr_round1; j++)
				again |= round1[j] == in->key.ip;
			/*
			 * decoded at its second tick: one ticked within one turn of user
			 * space only may have none yet, but one ticked in round 1 and
			 * again and again in round 2 (its ticks spread over 1.5 s) has one
			 */
			if (again && in->counts.ticks >= 3) {
				read_insn(f, in->key.ip, &other);
				hot_decoded++;
			} else if (!find_insn(f, in->key.ip, &other)) {
				ticks_undecoded += in->counts.ticks;
				continue;
			}
			if (other.op.status != CP_OPND_OK)
				markers++;
		}
	}
	assert_true(ticks_load > 0);
	assert_true(ticks_store > 0);
	assert_true(ticks_other > 0);
	assert_true(markers > 0);
	/* the loop's instructions tick again and again and were decoded; those left
	 * are ticked once or twice, near the loop but outside it */
	print_message("# loop instructions without a memory operand: %llu ticks, %llu of them "
		      "on instructions not decoded yet; %llu ticked in both rounds, decoded\n",
		      (unsigned long long)ticks_other, (unsigned long long)ticks_undecoded,
		      (unsigned long long)hot_decoded);
	assert_true(hot_decoded > 0);
	assert_true(ticks_undecoded * 4 < ticks_other);
	/* skid: round 2 ran with the after-load descriptor installed in round 1 */
	assert_true(skid > 0);
	assert_int_equal(ticks_after, 0);
	assert_int_equal(ticks_load, w->loads - loads0);

	/* the labels' descriptors, as user space decoded them from the running process */
	read_insn(f, w->load_ip, &ld);
	read_insn(f, w->store_ip, &st);
	assert_int_equal(ld.op.status, CP_OPND_OK);
	assert_int_equal(ld.op.access, CP_OPND_READ);
	assert_int_equal(ld.op.size, 8);
	assert_int_equal(st.op.status, CP_OPND_OK);
	assert_int_equal(st.op.access, CP_OPND_WRITE);
	assert_int_equal(st.op.size, 8);
	assert_int_equal(ld.charge_ip, 0);
	assert_int_equal(st.charge_ip, 0);
	/* the add after the load carries the load's operand and ip */
	read_insn(f, w->after_load_ip, &after);
	assert_int_equal(after.charge_ip, w->load_ip);
	assert_memory_equal(&after.op, &ld.op, sizeof(ld.op));
	assert_true(f->skel->bss->stats.soft_queued > 0);
	assert_int_equal(f->skel->bss->stats.drop_pending, 0);
}

static void test_kernel_ticks(void **state)
{
	struct fixture *f = ROOT_FIXTURE(struct fixture, state);
	__u64 k0 = f->skel->bss->stats.ticks_kernel, user = 0, kernel;
	int n;

	take_counts(f);
	run_phase(f, "kernel", 1000);
	kernel = f->skel->bss->stats.ticks_kernel - k0;
	n = take_counts(f);
	for (int i = 0; i < n; i++) {
		const struct cp_insn *in = &f->insns[i];

		if (in->key.tgid != (__u32)f->pid)
			continue;
		/* a kernel address would mean a kernel tick counted on an "instruction" */
		assert_true(in->key.ip < (1ull << 47));
		user += in->counts.ticks;
	}
	print_message("# in the kernel phase: %llu kernel ticks, %llu user ticks\n",
		      (unsigned long long)kernel, (unsigned long long)user);
	/* ~1 s at TEST_FREQ on one CPU, nearly all of it clearing pages in read();
	 * a tenth of that leaves room for a machine busy with other work */
	assert_true(kernel > TEST_FREQ / 10);
	assert_true(user * 5 < kernel);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_loop_samples),
		cmocka_unit_test(test_kernel_ticks),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
