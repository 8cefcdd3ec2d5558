// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A soft recording through `cacheperf-bpf report FILE`'s own code
 * (cp_replay_report): the run facts name the soft source, so the profile
 * classifies in soft mode with the recorded caches, the miss store takes
 * the samples' times as sharing epochs, and both outputs say what soft
 * means; the Prometheus file (a summary of the whole recording) names the
 * same issues, judged against the same caches. One process, 1000 ticks on
 * accesses:
 *
 *   400  two threads write adjacent words of a 128-byte heap struct, in
 *        each of 10 epochs: false sharing, 40 % of the time
 *   300  a load streams over an 8 MiB heap array (history: stride 8):
 *        capacity past L2 (1 MiB), 30 %
 *   300  a load streams over a 16 KiB array: fits, no issue (unproven)
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>

#include "lib/rec_build.h"
#include "cli/report_cmd.h"
#include "record/replay.h"
#include "report/profile_report.h"

#define PID	1000
#define CODE	0x400000ull
#define HEAP	0x10000000ull
#define EPOCH	100000000ull

#define FS_OBJ	HEAP
#define BIG	(HEAP + 0x100000)
#define BIG_LEN	(8ull << 20)
#define SMALL	(HEAP + 0x1000000)
#define IP_FS	(CODE + 0x2000)
#define IP_BIG	(CODE + 0x2100)
#define IP_SMALL (CODE + 0x2200)

static void alloc(struct cp_rec_writer *w, __u64 addr, __u64 size, __u64 caller)
{
	struct cp_object_event ev = {
		.type = CP_REC_OBJECT, .kind = CP_OBJ_EV_ALLOC, .func = CP_FN_MALLOC,
		.tgid = PID, .tid = PID, .caller = caller, .stack_id = -1, .addr = addr,
		.size = size,
	};

	cp_rec_writer__event(w, &ev, sizeof(ev));
}

static void tick(struct cp_rec_writer *w, __u32 tid, __u64 ip, __u64 addr, bool store,
		 __u64 time_ns, struct cp_insn *c)
{
	struct cp_sample s = rec_test_sample(PID, tid, ip, addr);

	s.time_ns = time_ns;
	if (store)
		s.flags |= CP_SAMPLE_STORE;
	cp_rec_writer__event(w, &s, sizeof(s));
	c->key = (struct cp_ip_key){ .tgid = PID, .ip = ip };
	if (store)
		c->counts.stores++;
	else
		c->counts.loads++;
	c->counts.lvl[CP_LVL_NA]++;
}

static void history(struct cp_rec_writer *w, __u64 ip, __u64 start)
{
	struct cp_history_record h = { .type = CP_REC_HISTORY, .tgid = PID, .ip = ip,
				       .nr = CP_HISTORY_MAX };

	for (__u32 i = 0; i < CP_HISTORY_MAX; i++)
		h.addrs[i] = start + i * 8;
	cp_rec_writer__event(w, &h, sizeof(h));
}

static void write_recording(const char *path)
{
	static const char maps[] = "00400000-00500000 r-xp 00000000 00:00 0 \n"
				   "10000000-20000000 rw-p 00000000 00:00 0 \n";
	struct cp_cache_level l2 = {
		.level = 2, .type = CP_CACHE_TYPE_UNIFIED, .size_bytes = 1u << 20, .ways = 16,
		.sets = 1024, .line_bytes = 64, .valid = true,
	};
	struct cp_cache_level llc = l2;
	char err[256];
	struct cp_rec_writer *w = cp_rec_writer__open(path, err, sizeof(err));
	struct cp_rec_buf b = { 0 };
	struct cp_insn c[3];
	struct cp_run_info in;
	struct cp_run_end end = { 0 };
	__u64 t;

	assert_non_null(w);
	memset(c, 0, sizeof(c));
	rec_test_info(&in, PID);
	in.source = CP_SOURCE_SOFT;
	strcpy(in.source_reason, "soft: requested with --source soft");
	in.cache[CP_CACHE_L2] = l2;
	llc.level = 3;
	llc.size_bytes = 32u << 20;
	llc.sets = 32768;
	in.cache[CP_CACHE_LLC] = llc;
	cp_rec_encode_info(&b, &in);
	rec_test_section(w, &b, CP_SEC_HEADER);
	cp_rec_encode_maps(&b, &(struct cp_rec_maps){ .pid = PID, .who = CP_REC_MAPS_OBJECTS,
						     .text = maps, .len = strlen(maps) });
	rec_test_section(w, &b, CP_SEC_MAPS);
	alloc(w, FS_OBJ, 128, CODE + 0x1000);
	alloc(w, BIG, BIG_LEN, CODE + 0x1010);
	alloc(w, SMALL, 16384, CODE + 0x1020);
	t = in.start_ns;
	for (int e = 0; e < 10; e++) {
		for (int k = 0; k < 20; k++) {
			tick(w, PID + 1, IP_FS, FS_OBJ, true, t + e * EPOCH + k, &c[0]);
			tick(w, PID + 2, IP_FS, FS_OBJ + 8, true, t + e * EPOCH + k, &c[0]);
		}
		for (int k = 0; k < 30; k++) {
			tick(w, PID, IP_BIG, BIG + (__u64)(e * 30 + k) * 4096, false, t + e * EPOCH,
			     &c[1]);
			tick(w, PID, IP_SMALL, SMALL + (__u64)k * 64, false, t + e * EPOCH, &c[2]);
		}
	}
	history(w, IP_BIG, BIG + 0x40000);
	history(w, IP_SMALL, SMALL);
	cp_rec_encode_counters(&b, c, 3);
	rec_test_section(w, &b, CP_SEC_COUNTERS);
	end.end_ns = in.start_ns + 10 * EPOCH;
	end.bpf.samples[CP_ACCESS_LOAD] = end.bpf.na[CP_ACCESS_LOAD] = 600;
	end.bpf.samples[CP_ACCESS_STORE] = end.bpf.na[CP_ACCESS_STORE] = 400;
	end.bpf.forwarded = 1000;
	cp_rec_encode_end(&b, &end);
	rec_test_section(w, &b, CP_SEC_END);
	cp_rec_buf_free(&b);
	assert_int_equal(cp_rec_writer__close(w), 0);
}

static char *slurp(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = calloc(1, 1 << 20);

	assert_non_null(f);
	assert_non_null(buf);
	fread(buf, 1, (1 << 20) - 1, f);
	fclose(f);
	return buf;
}

static void expect(const char *text, const char *want)
{
	if (!strstr(text, want))
		fail_msg("missing '%s' in:\n%s", want, text);
}

static void test_soft_recording_report(void **state)
{
	char rec[] = "/tmp/cp-soft-rec-XXXXXX", txt[] = "/tmp/cp-soft-txt-XXXXXX";
	char json[] = "/tmp/cp-soft-json-XXXXXX", prom[] = "/tmp/cp-soft-prom-XXXXXX", err[512];
	struct cp_classify_cfg cfg;
	struct cp_report_opts o = { .classify = &cfg, .output = txt, .json = json, .prom = prom,
				    .prom_top = 20 };
	char *text;

	(void)state;
	close(mkstemp(rec));
	close(mkstemp(txt));
	close(mkstemp(json));
	close(mkstemp(prom));
	cp_classify_cfg_defaults(&cfg);
	write_recording(rec);
	if (cp_replay_report(rec, &o, NULL, err, sizeof(err)))
		fail_msg("%s", err);
	text = slurp(txt);
	expect(text, "  note:     pattern-based, no PMU: impact is time share, not measured misses\n");
	expect(text, "Issues (2)\n  source: soft, pattern-based");
	expect(text, "#1 Application's false sharing");
	expect(text, "Impact: 40.0 % of time samples");
	expect(text, "#2 Application's capacity misses");
	expect(text, "Impact: 30.0 % of time samples");
	expect(text, "a stream with a stride of 8 bytes; footprint 8192 KiB (one pass over the "
		     "object) > L2 1024 KiB");
	expect(text, "1 hot memory instruction not reported");
	free(text);
	text = slurp(json);
	expect(text, "\"source\": \"soft\"");
	expect(text, "\"impact\": \"time_share\"");
	expect(text, "\"type\": \"false_sharing\"");
	expect(text, "\"level\": \"L2\"");
	free(text);
	text = slurp(prom);
	expect(text, "cacheperf_source_info{source=\"soft\",pmu=\"unknown\"} 1\n");
	expect(text, "cacheperf_issues 2\n");
	expect(text, "cacheperf_issue_miss_share_ratio{type=\"false_sharing\",origin=\"application\",");
	expect(text, "cacheperf_issue_miss_share_ratio{type=\"capacity\",origin=\"application\",");
	free(text);
	unlink(prom);
	unlink(rec);
	unlink(txt);
	unlink(json);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_soft_recording_report),
	};

	return cmocka_run_group_tests_name("soft_replay", tests, NULL, NULL);
}
