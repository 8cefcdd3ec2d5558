// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The Prometheus file of a recording (`cacheperf-bpf report FILE
 * --prom-file OUT`) is byte for byte the checked-in golden file, whose
 * every value tests/data/prom/README.md derives from the recording built
 * here: a capacity-or-conflict instruction, a false-sharing line, drops,
 * and a process name full of characters that need escaping. A recording's
 * file carries no figure of the replaying machine (CPU, memory, clock), so
 * the comparison holds anywhere.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/rec_build.h"
#include "cli/report_cmd.h"
#include "record/replay.h"
#include "report/profile_report.h"
#include "lib/golden_text.h"

#define PID		4242
#define TID2		4243
#define IP_WALK		0x400100ull	/* 40 loads, one per page: capacity or conflict */
#define IP_SHARE	0x400200ull	/* 10 stores, two threads, one line: false sharing */
#define ANON_START	0x10000000ull
#define ANON_LEN	0x100000ull
#define SHARED_LINE	(ANON_START + 0x80000ull)
/* a comm an attacker chose: quote, backslash, newline, a byte that is never UTF-8 */
#define HOSTILE_COMM	"a\"b\\c\nd\xff"

static const char maps[] =
	"00400000-00401000 r-xp 00000000 00:00 0 \n"
	"10000000-10100000 rw-p 00000000 00:00 0 \n";

static void write_recording(const char *path)
{
	FILE *f = fopen(path, "w");
	struct cp_rec_writer *w = cp_rec_writer__new(f);
	struct cp_rec_buf b = { 0 };
	struct cp_run_info in;
	struct cp_run_end end = { 0 };
	struct cp_object_event ev = {
		.type = CP_REC_OBJECT, .kind = CP_OBJ_EV_MAP, .func = CP_FN_MMAP, .tgid = PID,
		.tid = PID, .addr = ANON_START, .size = ANON_LEN, .stack_id = -1,
	};
	struct cp_insn c[2] = {
		{ .key = { .tgid = PID, .ip = IP_WALK }, .counts = { .loads = 40 } },
		{ .key = { .tgid = PID, .ip = IP_SHARE }, .counts = { .stores = 10 } },
	};
	struct cp_rec_maps m = {
		.pid = PID, .who = CP_REC_MAPS_OBJECTS, .text = maps, .len = strlen(maps),
	};

	assert_non_null(w);
	rec_test_info(&in, PID);
	strcpy(in.targets[0].comm, HOSTILE_COMM);
	cp_rec_encode_info(&b, &in);
	rec_test_section(w, &b, CP_SEC_HEADER);
	cp_rec_encode_maps(&b, &m);
	rec_test_section(w, &b, CP_SEC_MAPS);
	assert_int_equal(cp_rec_writer__event(w, &ev, sizeof(ev)), 0);
	for (__u64 i = 0; i < 40; i++) {
		struct cp_sample s = rec_test_sample(PID, PID, IP_WALK, ANON_START + i * 4096);

		assert_int_equal(cp_rec_writer__event(w, &s, sizeof(s)), 0);
	}
	for (__u32 i = 0; i < 10; i++) {
		/* thread PID writes bytes 0-7 of the line, TID2 bytes 8-15 */
		struct cp_sample s = rec_test_sample(PID, i & 1 ? TID2 : PID, IP_SHARE,
						     SHARED_LINE + (i & 1 ? 8 : 0));

		s.flags |= CP_SAMPLE_STORE;
		assert_int_equal(cp_rec_writer__event(w, &s, sizeof(s)), 0);
	}
	cp_rec_encode_counters(&b, c, 2);
	rec_test_section(w, &b, CP_SEC_COUNTERS);
	end = (struct cp_run_end){
		.end_ns = in.start_ns + 2000000000ull,	/* 2 s */
		.end_reason = "the command exited with status 0",
		/* loads and stores, all at level "not available" */
		.bpf = { .samples = { 40, 10 }, .na = { 40, 10 }, .forwarded = 50, .drop_ringbuf = 2 },
		.period_changes = 3, .guard_backoffs = 1, .have_alloc = true,
		.alloc = { .bpf = { .drop_ringbuf = 7 } },
	};
	cp_rec_encode_end(&b, &end);
	rec_test_section(w, &b, CP_SEC_END);
	cp_rec_buf_free(&b);
	assert_int_equal(cp_rec_writer__close(w), 0);	/* closes @f */
}

/*
 * Replays the recording into a Prometheus file with --prom-top @top (and
 * --prom-pid-label when @pid); compares it with @golden.
 */
static void check_golden(unsigned int top, bool pid, const char *golden)
{
	char dir[] = "/tmp/cp-prom-golden.XXXXXX", rec[96], out[96], text[96], want_path[512];
	const char *root = getenv("CP_ROOT");
	struct cp_classify_cfg cfg;
	struct cp_report_opts o = { .classify = &cfg, .prom_top = top, .prom_pid_label = pid };
	char err[512];
	char *got;

	assert_non_null(mkdtemp(dir));
	snprintf(rec, sizeof(rec), "%s/run.cprec", dir);
	snprintf(out, sizeof(out), "%s/run.prom", dir);
	snprintf(text, sizeof(text), "%s/report.txt", dir);
	snprintf(want_path, sizeof(want_path), "%s/tests/data/prom/%s", root ? root : ".", golden);
	cp_classify_cfg_defaults(&cfg);
	o.output = text;
	o.prom = out;
	write_recording(rec);
	if (cp_replay_report(rec, &o, NULL, err, sizeof(err)))
		fail_msg("replay: %s", err);
	got = cp_test_slurp(out);
	cp_test_golden(golden, want_path, got);
	free(got);
	unlink(rec);
	unlink(out);
	unlink(text);
	rmdir(dir);
}

static void test_golden_top20(void **state)
{
	(void)state;
	check_golden(20, false, "golden.prom");
}

/* --prom-top 1: the false sharing is summed into "other" */
static void test_golden_top1(void **state)
{
	(void)state;
	check_golden(1, false, "golden-top1.prom");
}

/* --prom-pid-label: the same series, each with its pid */
static void test_golden_pid(void **state)
{
	(void)state;
	check_golden(20, true, "golden-pid.prom");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_golden_top20),
		cmocka_unit_test(test_golden_top1),
		cmocka_unit_test(test_golden_pid),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
