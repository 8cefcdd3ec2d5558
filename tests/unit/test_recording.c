// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Recordings: the writer and reader agree on every field; a report replayed
 * from a recording says what the recorded run measured; a file cut short at
 * any byte or with any byte flipped is refused with a sentence naming a byte
 * offset at or before the damage, never a crash; a file from another format
 * version, a bad length or an out-of-order section is named as such; and a
 * mapped file that changed since the recording is shown as an offset with the
 * reason, not with another binary's lines.
 */
#include <errno.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <zlib.h>
#include <cmocka.h>

#include "symbols/build_id.h"
#include "lib/rec_build.h"
#include "record/rec_io.h"
#include "record/recorder.h"
#include "record/replay.h"
#include "report/profile_report.h"

#define PID		4242
#define IP		0x400100ull
#define ANON_START	0x10000000ull
#define ANON_LEN	0x100000ull

static const char anon_maps[] =
	"00400000-00401000 r-xp 00000000 00:00 0 \n"
	"10000000-10100000 rw-p 00000000 00:00 0 \n";

struct file {
	char *p;
	size_t len;
};

/*
 * A small recording: 3 samples on an mmap'ed region, its map event, counters, stacks.
 * @odd: with two records after the map event that a reader must drop and count: one
 * of a type this version does not know, and an exit of the process 4 bytes longer
 * than an exec record (handled as an exit, it would drop the mapping).
 */
static struct file small_recording(bool odd)
{
	struct file out = { 0 };
	FILE *f = open_memstream(&out.p, &out.len);
	struct cp_rec_writer *w = cp_rec_writer__new(f);
	struct cp_rec_buf b = { 0 };
	struct cp_run_info in;
	struct cp_run_end end = { 0 };
	struct cp_range stack = { 0x7ff000000000ull, 0x7ff000800000ull };
	struct cp_object_event ev = {
		.type = CP_REC_OBJECT, .kind = CP_OBJ_EV_MAP, .func = CP_FN_MMAP, .tgid = PID,
		.tid = PID, .addr = ANON_START, .size = ANON_LEN, .stack_id = -1,
	};
	struct cp_insn c = { .key = { .tgid = PID, .ip = IP }, .counts = { .loads = 3 } };
	/* IP reached from two callers: 3 samples (1 a miss) through one, 2 ticks through the other */
	struct cp_stack_sample stacks[2] = {
		{ .tgid = PID, .nr = 3, .pcs = { IP, 0x401234, 0x401300 },
		  .c = { .samples = 3, .misses = 1, .lat_sum = 90 } },
		{ .tgid = PID, .nr = 2, .pcs = { IP, 0x401400 }, .c = { .ticks = 2 } },
	};
	struct cp_rec_maps m = {
		.pid = PID, .who = CP_REC_MAPS_OBJECTS, .text = anon_maps, .len = strlen(anon_maps),
	};

	assert_non_null(w);
	rec_test_head(w, &b, &in, PID, &m);
	cp_rec_encode_stacks(&b, PID, &stack, 1);
	rec_test_section(w, &b, CP_SEC_STACKS);
	assert_int_equal(cp_rec_writer__event(w, &ev, sizeof(ev)), 0);
	if (odd) {
		__u32 unknown[4] = { 7, PID };
		struct {
			struct cp_proc_exec_event e;
			__u32 more;
		} exit = { .e.ev = { .type = CP_REC_PROC, .kind = CP_PROC_EXIT, .tgid = PID } };

		assert_int_equal(cp_rec_writer__event(w, unknown, sizeof(unknown)), 0);
		assert_int_equal(cp_rec_writer__event(w, &exit, sizeof(exit)), 0);
	}
	for (int i = 0; i < 3; i++) {
		struct cp_sample s = rec_test_sample(PID, PID + (__u32)i, IP, ANON_START + 4096u * i);

		assert_int_equal(cp_rec_writer__event(w, &s, sizeof(s)), 0);
	}
	cp_rec_encode_counters(&b, &c, 1);
	rec_test_section(w, &b, CP_SEC_COUNTERS);
	cp_rec_encode_sample_stacks(&b, stacks, 2);
	rec_test_section(w, &b, CP_SEC_SAMPLE_STACKS);
	end.end_ns = in.start_ns + 2500000000ull;
	strcpy(end.end_reason, "the command exited with status 0");
	end.bpf.samples[CP_ACCESS_LOAD] = 3;
	end.bpf.na[CP_ACCESS_LOAD] = 3;
	end.bpf.forwarded = 3;
	end.have_alloc = true;
	end.alloc.bpf.drop_ringbuf = 7;
	cp_rec_encode_end(&b, &end);
	rec_test_section(w, &b, CP_SEC_END);
	cp_rec_buf_free(&b);
	assert_int_equal(cp_rec_writer__close(w), 0);
	return out;
}

/* Replays @len bytes of @p; returns the error (0: success) and the report or message. */
static int replay(const void *p, size_t len, char **text, FILE *warn)
{
	FILE *f = fmemopen((void *)p, len, "r");
	char err[512] = "";
	struct cp_replay *r;
	struct cp_report rep = { 0 };
	size_t n = 0;
	FILE *out;
	int ret;

	assert_non_null(f);
	ret = cp_replay__run(f, "rec", warn, NULL, &r, err, sizeof(err));
	fclose(f);
	if (ret) {
		*text = strdup(err);
		return ret;
	}
	out = open_memstream(text, &n);
	cp_profile__fill_report(cp_replay__profile(r), &rep);
	cp_report_print(&rep, out);
	fclose(out);
	cp_replay__free(r);
	return 0;
}

static void expect_line(const char *text, const char *line)
{
	if (!strstr(text, line))
		fail_msg("missing '%s' in:\n%s", line, text);
}

/* The byte offset an error message names ("... at byte N..."), or -1. */
static long named_offset(const char *msg)
{
	const char *at = strstr(msg, "byte ");

	return at ? strtol(at + 5, NULL, 10) : -1;
}

static void test_round_trip(void **state)
{
	struct file rec = small_recording(false);
	FILE *f = fmemopen(rec.p, rec.len, "r");
	char err[256];
	struct cp_rec_reader *rd = cp_rec_reader__new(f, err, sizeof(err));
	struct cp_rec_section sec;
	struct cp_run_info in, want;
	struct cp_run_end end;
	struct cp_range stacks[CP_MAX_THREAD_STACKS];
	const void *v;
	struct cp_insn ins;
	struct cp_rec_maps m;
	const void *data;
	size_t n, size;
	pid_t pid;
	struct cp_stack_sample st;
	__u32 types[8], nr = 0, count;

	(void)state;
	assert_non_null(rd);
	rec_test_info(&want, PID);
	while (cp_rec_reader__next(rd, &sec, err, sizeof(err)) > 0) {
		types[nr++] = sec.type;
		switch (sec.type) {
		case CP_SEC_HEADER:
			assert_int_equal(cp_rec_decode_info(&sec.payload, &in, err, sizeof(err)), 0);
			assert_int_equal(in.source, CP_SOURCE_FAULTS);
			assert_string_equal(in.source_reason, want.source_reason);
			assert_int_equal(in.targets[0].pid, PID);
			assert_string_equal(in.targets[0].comm, "synth");
			assert_true(in.launched);
			assert_int_equal(in.start_ns, want.start_ns);
			assert_int_equal(in.cache[CP_CACHE_L1D].sets, 64);
			assert_int_equal(in.cache[CP_CACHE_L1D].ways, 8);
			break;
		case CP_SEC_MAPS:
			assert_int_equal(cp_rec_decode_maps(&sec.payload, &m, err, sizeof(err)), 0);
			assert_int_equal(m.pid, PID);
			assert_int_equal(m.who, CP_REC_MAPS_OBJECTS);
			assert_int_equal(m.error, 0);
			assert_int_equal(m.len, strlen(anon_maps));
			assert_memory_equal(m.text, anon_maps, m.len);
			break;
		case CP_SEC_STACKS:
			assert_int_equal(cp_rec_decode_stacks(&sec.payload, &pid, stacks, &n, err,
							      sizeof(err)), 0);
			assert_int_equal(n, 1);
			assert_int_equal(stacks[0].end, 0x7ff000800000ull);
			break;
		case CP_SEC_EVENTS:
			n = 0;
			while (cp_rec_next_event(&sec.payload, &data, &size, err, sizeof(err)) > 0) {
				/* the object event first, then the samples, each its own size */
				assert_int_equal(size, n ? sizeof(struct cp_sample) :
							   sizeof(struct cp_object_event));
				if (n)
					assert_int_equal(((const struct cp_sample *)data)->addr,
							 ANON_START + 4096u * (n - 1));
				n++;
			}
			assert_int_equal(n, 4);
			break;
		case CP_SEC_COUNTERS:
			assert_int_equal(cp_rec_decode_counters(&sec.payload, &v, &n, err,
								sizeof(err)), 0);
			assert_int_equal(n, 1);
			cp_rec_counter_get(v, 0, &ins);
			assert_int_equal(ins.key.ip, IP);
			assert_int_equal(ins.counts.loads, 3);
			break;
		case CP_SEC_SAMPLE_STACKS:
			assert_int_equal(cp_rec_decode_sample_stacks(&sec.payload, &count, err,
								     sizeof(err)), 0);
			assert_int_equal(count, 2);
			assert_int_equal(cp_rec_next_sample_stack(&sec.payload, &st, err, sizeof(err)), 0);
			assert_int_equal(st.nr, 3);
			assert_int_equal(st.pcs[2], 0x401300);
			assert_int_equal(st.c.lat_sum, 90);
			assert_int_equal(cp_rec_next_sample_stack(&sec.payload, &st, err, sizeof(err)), 0);
			assert_int_equal(st.nr, 2);
			assert_int_equal(st.c.ticks, 2);
			assert_int_equal(cp_rec_sample_stacks_end(&sec.payload, err, sizeof(err)), 0);
			break;
		case CP_SEC_END:
			assert_int_equal(cp_rec_decode_end(&sec.payload, &end, err, sizeof(err)), 0);
			assert_string_equal(end.end_reason, "the command exited with status 0");
			assert_int_equal(end.bpf.forwarded, 3);
			assert_true(end.have_alloc);
			assert_int_equal(end.alloc.bpf.drop_ringbuf, 7);
			break;
		}
	}
	/* events were batched, and written out before the counters section that followed */
	assert_int_equal(nr, 7);
	assert_int_equal(types[3], CP_SEC_EVENTS);
	assert_int_equal(types[5], CP_SEC_SAMPLE_STACKS);
	assert_int_equal(types[6], CP_SEC_END);
	cp_rec_reader__free(rd);
	fclose(f);
	free(rec.p);
}

struct stacks_seen {
	int n;
	__u32 nr[4];
	__u64 caller[4];
	struct cp_stack_counts c[4];
};

static int note_stack(void *ctx, __u32 tgid, const __u64 *pcs, __u32 nr,
		      const struct cp_stack_counts *c)
{
	struct stacks_seen *s = ctx;

	assert_int_equal(tgid, PID);
	assert_int_equal(pcs[0], IP);
	if (s->n < 4) {
		s->nr[s->n] = nr;
		s->caller[s->n] = pcs[1];
		s->c[s->n] = *c;
	}
	s->n++;
	return 0;
}

/* The recorded stacks reach the replayed profile's store, and the iterator, whole. */
static void test_sample_stacks_replayed(void **state)
{
	struct file rec = small_recording(false);
	FILE *f = fmemopen(rec.p, rec.len, "r");
	struct stacks_seen seen = { 0 };
	struct cp_replay *r;
	char err[512] = "";

	(void)state;
	assert_int_equal(cp_replay__run(f, "rec", NULL, NULL, &r, err, sizeof(err)), 0);
	assert_int_equal(cp_profile__for_each_stack(cp_replay__profile(r), note_stack, &seen), 0);
	assert_int_equal(seen.n, 2);
	assert_int_equal(seen.nr[0], 3);
	assert_int_equal(seen.caller[0], 0x401234);
	assert_int_equal(seen.c[0].samples, 3);
	assert_int_equal(seen.c[0].misses, 1);
	assert_int_equal(seen.nr[1], 2);
	assert_int_equal(seen.caller[1], 0x401400);
	assert_int_equal(seen.c[1].ticks, 2);
	cp_replay__free(r);
	fclose(f);
	free(rec.p);
}

static void test_replayed_report(void **state)
{
	struct file rec = small_recording(false);
	char *text;

	(void)state;
	assert_int_equal(replay(rec.p, rec.len, &text, NULL), 0);
	/* times and reasons are the run's, not the replay's */
	expect_line(text, "  duration: 2.5 s (the command exited with status 0)\n");
	expect_line(text, "  targets:  4242 (synth)\n");
	expect_line(text, "  samples: 3 (the source reports no cache levels)\n");
	/* the counters went into the instruction store */
	expect_line(text, "         3     4242  0x400100");
	/* the samples resolved against the recorded map event: one object, 3 samples */
	expect_line(text, "         3     4242  mapping (1048576 bytes)");
	expect_line(text, "  records received: 3 of 3 forwarded\n");
	expect_line(text, "lost: ring buffer 7,");
	free(text);
	free(rec.p);
}

/* Records a reader cannot take are counted, and nothing else is lost. */
static void test_odd_records(void **state)
{
	struct file rec = small_recording(true);
	char *text;

	(void)state;
	assert_int_equal(replay(rec.p, rec.len, &text, NULL), 0);
	expect_line(text, "malformed records: 1, unknown records: 1\n");
	expect_line(text, "  samples: 3 (the source reports no cache levels)\n");
	/* the exit of the wrong size was not taken: the mapping still holds the samples */
	expect_line(text, "         3     4242  mapping (1048576 bytes)");
	free(text);
	free(rec.p);
}

static void test_truncated_everywhere(void **state)
{
	struct file rec = small_recording(false);

	(void)state;
	for (size_t len = 1; len < rec.len; len++) {
		char *msg;
		long at;

		if (replay(rec.p, len, &msg, NULL) == 0)
			fail_msg("a recording cut at byte %zu of %zu was accepted", len, rec.len);
		at = named_offset(msg);
		if (at < 0 || (size_t)at > len)
			fail_msg("cut at %zu: the message names no offset up to there: %s", len, msg);
		if (len >= CP_REC_MAGIC_LEN && !strstr(msg, "truncated at byte"))
			fail_msg("cut at %zu: not called truncated: %s", len, msg);
		free(msg);
	}
	free(rec.p);
}

static void test_flipped_bytes(void **state)
{
	struct file rec = small_recording(false);

	(void)state;
	for (size_t off = 0; off < rec.len; off++) {
		char *msg;
		long at;

		rec.p[off] ^= 0x10;
		if (replay(rec.p, rec.len, &msg, NULL) == 0)
			fail_msg("a flipped byte at %zu was accepted", off);
		at = named_offset(msg);
		if (at < 0 || (size_t)at > off)
			fail_msg("flip at %zu: the message names no offset up to it: %s", off, msg);
		if (!strstr(msg, "corrupt at byte") && !strstr(msg, "not a cacheperf-bpf recording"))
			fail_msg("flip at %zu: neither corrupt nor foreign: %s", off, msg);
		free(msg);
		rec.p[off] ^= 0x10;
	}
	free(rec.p);
}

static void put_file_header(char *p, __u32 version)
{
	__u32 c;

	memcpy(p, CP_REC_MAGIC, CP_REC_MAGIC_LEN);
	memcpy(p + 8, &version, 4);
	c = (__u32)crc32(0L, (const Bytef *)p, 12);
	memcpy(p + 12, &c, 4);
}

static void test_version_mismatch(void **state)
{
	struct file rec = small_recording(false);
	char *msg;

	(void)state;
	/* older versions had shorter counter entries (no ticks) and no stacks */
	for (__u32 v = 1; v < CP_REC_VERSION_MIN; v++) {
		char want[128];

		put_file_header(rec.p, v);
		assert_int_not_equal(replay(rec.p, rec.len, &msg, NULL), 0);
		snprintf(want, sizeof(want),
			 "rec: recording format version %u at byte 8; this cacheperf-bpf reads versions 4 to 7", v);
		assert_string_equal(msg, want);
		free(msg);
	}
	/* a version 5 file has no sample-stacks section: this one is refused at it */
	put_file_header(rec.p, 5);
	assert_int_not_equal(replay(rec.p, rec.len, &msg, NULL), 0);
	if (!strstr(msg, "a sample-stacks section in a version 5 recording"))
		fail_msg("got: %s", msg);
	free(msg);
	put_file_header(rec.p, 8);
	assert_int_not_equal(replay(rec.p, rec.len, &msg, NULL), 0);
	assert_string_equal(msg, "rec: recording format version 8 at byte 8; this cacheperf-bpf reads versions 4 to 7");
	free(msg);
	put_file_header(rec.p, 0);
	assert_int_not_equal(replay(rec.p, rec.len, &msg, NULL), 0);
	expect_line(msg, "recording format version 0 at byte 8");
	free(msg);
	free(rec.p);
	assert_int_not_equal(replay("hello world, not a recording", 28, &msg, NULL), 0);
	expect_line(msg, "not a cacheperf-bpf recording");
	free(msg);
}

/* A file header, then one section of @type and @len bytes, checksums right. */
static size_t one_section(char *buf, __u32 type, __u32 len, const void *payload, size_t have)
{
	__u32 h[4] = { type, len, (__u32)crc32(0L, payload, (uInt)have), 0 };

	put_file_header(buf, CP_REC_VERSION);
	h[3] = (__u32)crc32(0L, (const Bytef *)h, 12);
	memcpy(buf + 16, h, 16);
	memcpy(buf + 32, payload, have);
	return 32 + have;
}

/*
 * The header's source is checked against the sources' table: every run's
 * source comes back with its name; auto (chosen before a run, never a
 * run's) and a number no row has are refused, with the number.
 */
static void test_header_sources(void **state)
{
	static const struct {
		__u32 kind;
		const char *name; /* NULL: refused */
	} cases[] = {
		{ CP_SOURCE_PEBS, "pebs" }, { CP_SOURCE_IBS, "ibs" },	{ CP_SOURCE_SOFT, "soft" },
		{ CP_SOURCE_FAULTS, "faults" }, { CP_SOURCE_AUTO, NULL }, { 5, NULL },
		{ 0x80000000u, NULL },
	};

	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct cp_rec_buf b = { 0 };
		struct cp_run_info in, out;
		struct cp_rec_cursor c;
		char err[256] = "", want[64];

		rec_test_info(&in, PID);
		in.source = (enum cp_source_kind)cases[i].kind;
		cp_rec_encode_info(&b, &in);
		c = (struct cp_rec_cursor){ .p = b.p, .len = b.len };
		if (cases[i].name) {
			assert_int_equal(cp_rec_decode_info(&c, &out, err, sizeof(err)), 0);
			assert_string_equal(cp_source_name(out.source), cases[i].name);
		} else {
			assert_int_not_equal(cp_rec_decode_info(&c, &out, err, sizeof(err)), 0);
			snprintf(want, sizeof(want), "sample source %u (%s) is no run's source",
				 cases[i].kind, cases[i].kind ? "?" : "auto");
			if (!strstr(err, want))
				fail_msg("source %u: \"%s\"", cases[i].kind, err);
		}
		cp_rec_buf_free(&b);
	}
}

static void test_bad_lengths_and_order(void **state)
{
	struct file rec = small_recording(false);
	static const char dummy[8];
	char buf[256], *msg;
	size_t n;

	(void)state;
	n = one_section(buf, CP_SEC_HEADER, 0x7fffffff, dummy, sizeof(dummy));
	assert_int_not_equal(replay(buf, n, &msg, NULL), 0);
	assert_string_equal(msg, "rec: corrupt at byte 20: a header section of 2147483647 bytes (at most 16777216)");
	free(msg);
	n = one_section(buf, 99, 8, dummy, sizeof(dummy));
	assert_int_not_equal(replay(buf, n, &msg, NULL), 0);
	assert_string_equal(msg, "rec: corrupt at byte 16: unknown section type 99");
	free(msg);
	n = one_section(buf, CP_SEC_EVENTS, 8, dummy, sizeof(dummy));
	assert_int_not_equal(replay(buf, n, &msg, NULL), 0);
	assert_string_equal(msg, "rec: corrupt at byte 16: the first section is not the header (a events section)");
	free(msg);
	/* a header whose target count is out of bounds, checksums right */
	{
		struct cp_rec_buf b = { 0 };
		struct cp_run_info in;
		__u32 bogus = 100000;
		size_t at;

		rec_test_info(&in, PID);
		in.nr_targets = 0;
		cp_rec_encode_info(&b, &in);
		/* nr_targets sits right before the source text's length and text */
		at = b.len - 4 - strlen(in.source_reason) - 4;
		memcpy(b.p + at, &bogus, 4);
		n = one_section(buf, CP_SEC_HEADER, (__u32)b.len, b.p, b.len);
		assert_int_not_equal(replay(buf, n, &msg, NULL), 0);
		expect_line(msg, "100000 targets (at most 64)");
		assert_int_equal(named_offset(msg), 32 + at + 4);
		free(msg);
		cp_rec_buf_free(&b);
	}
	free(rec.p);
}

/* A recording of this very test process's maps, with @build_id (NULL: the real one) for it. */
static struct file self_recording(const __u8 *build_id, const char *extra_path, __u64 ip)
{
	struct file out = { 0 };
	FILE *f = open_memstream(&out.p, &out.len);
	struct cp_rec_writer *w = cp_rec_writer__new(f);
	struct cp_rec_buf b = { 0 };
	struct cp_rec_build_id id = { 0 };
	struct cp_run_info in;
	struct cp_insn c = { .key = { .tgid = PID, .ip = ip }, .counts = { .loads = 1 } };
	struct cp_maps_how how;
	struct stat st;
	char *text, *full;
	size_t len;
	int n;

	assert_int_equal(cp_maps_read_text(NULL, getpid(), &text, &len, &how), 0);
	full = malloc(len + 256);
	n = 0;
	/* below everything else: maps are sorted */
	if (extra_path)
		n = sprintf(full, "00001000-00002000 r-xp 00000000 08:01 1 %s\n", extra_path);
	sprintf(full + n, "%.*s", (int)len, text);
	rec_test_info(&in, PID);
	cp_rec_encode_info(&b, &in);
	rec_test_section(w, &b, CP_SEC_HEADER);
	assert_true(readlink("/proc/self/exe", id.path, sizeof(id.path) - 1) > 0);
	assert_int_equal(stat(id.path, &st), 0);
	id.inode = st.st_ino;
	if (build_id) {
		id.id_len = 20;
		memcpy(id.id, build_id, 20);
	} else {
		n = cp_build_id_read(id.path, id.id, sizeof(id.id));
		assert_true(n > 0);
		id.id_len = (__u32)n;
	}
	cp_rec_encode_build_id(&b, &id);
	rec_test_section(w, &b, CP_SEC_BUILD_ID);
	if (extra_path) {
		memset(&id, 0, sizeof(id));
		strcpy(id.path, extra_path);
		id.inode = 1;
		id.id_len = 4;
		cp_rec_encode_build_id(&b, &id);
		rec_test_section(w, &b, CP_SEC_BUILD_ID);
	}
	cp_rec_encode_maps(&b, &(struct cp_rec_maps){ .pid = PID, .who = CP_REC_MAPS_SYMBOLS,
						      .text = full, .len = strlen(full) });
	rec_test_section(w, &b, CP_SEC_MAPS);
	cp_rec_encode_counters(&b, &c, 1);
	rec_test_section(w, &b, CP_SEC_COUNTERS);
	assert_int_equal(rec_test_close(w, &b, &in), 0);
	free(text);
	free(full);
	return out;
}

/* Its own symbol, so the test binary has a known function at a known address. */
__attribute__((noinline)) static void recorded_function(void)
{
	asm volatile("");
}

static void test_offline_symbols_checked(void **state)
{
	static const __u8 wrong[20] = { 0xde, 0xad, 0xbe, 0xef };
	__u64 ip = (__u64)(unsigned long)&recorded_function;
	struct file rec;
	char *text, *warn = NULL;
	size_t wlen = 0;
	FILE *wf;

	(void)state;
	/* the same binary: its function, by name */
	rec = self_recording(NULL, NULL, ip);
	assert_int_equal(replay(rec.p, rec.len, &text, NULL), 0);
	expect_line(text, "recorded_function (test_recording.c:");
	free(text);
	free(rec.p);

	/* the binary "changed": an offset and why, never its current lines */
	rec = self_recording(wrong, "/nonexistent/libgone.so", ip);
	wf = open_memstream(&warn, &wlen);
	assert_int_equal(replay(rec.p, rec.len, &text, wf), 0);
	fclose(wf);
	expect_line(text, "test_recording+0x");
	expect_line(text, "(file changed since the recording: build-id deadbeef00");
	assert_null(strstr(text, "recorded_function"));
	expect_line(warn, "/nonexistent/libgone.so: file missing since the recording");
	expect_line(warn, "file changed since the recording: build-id deadbeef");
	free(text);
	free(warn);
	free(rec.p);
}

/*
 * @n processes besides the head's, each with its maps (the object table's),
 * each exiting after (@exits) or all alive at the end; with @gone, each
 * exit followed by the symbolizer's failed read of its maps (the process
 * gone), as a live run writes them.
 */
static struct file many_procs_recording(int n, bool exits, bool gone)
{
	struct file out = { 0 };
	FILE *f = open_memstream(&out.p, &out.len);
	struct cp_rec_writer *w = cp_rec_writer__new(f);
	struct cp_rec_buf b = { 0 };
	struct cp_run_info in;
	struct cp_rec_maps m = {
		.pid = PID, .who = CP_REC_MAPS_OBJECTS, .text = anon_maps, .len = strlen(anon_maps),
	};

	assert_non_null(w);
	rec_test_head(w, &b, &in, PID, &m);
	for (int i = 0; i < n; i++) {
		struct cp_proc_event exit = {
			.type = CP_REC_PROC, .kind = CP_PROC_EXIT, .tgid = (__u32)(100000 + i),
		};

		m.pid = 100000 + i;
		cp_rec_encode_maps(&b, &m);
		rec_test_section(w, &b, CP_SEC_MAPS);
		if (exits)
			assert_int_equal(cp_rec_writer__event(w, &exit, sizeof(exit)), 0);
		if (gone) {
			cp_rec_encode_maps(&b, &(struct cp_rec_maps){ .pid = m.pid,
								      .who = CP_REC_MAPS_SYMBOLS,
								      .error = ESRCH });
			rec_test_section(w, &b, CP_SEC_MAPS);
		}
	}
	assert_int_equal(rec_test_close(w, &b, &in), 0);
	return out;
}

/*
 * A busy host's recording (-a beside a build) names more processes with
 * maps than a replay holds at once (CP_REPLAY_MAX_PROCS): the replay
 * failed ("more than 4096 processes ..."). Those that exited make room;
 * with every one still alive, a text past the cap is not kept, said once,
 * and the replay still gives its report.
 */
static void test_replay_many_processes(void **state)
{
	struct file rec = many_procs_recording(2 * CP_REPLAY_MAX_PROCS, true, false);
	char *text, *warn = NULL;
	size_t wlen = 0;
	FILE *wf = open_memstream(&warn, &wlen);

	(void)state;
	assert_int_equal(replay(rec.p, rec.len, &text, wf), 0);
	fflush(wf);
	assert_int_equal(wlen, 0);
	expect_line(text, "cacheperf-bpf report");
	free(text);
	free(rec.p);

	/* a failed read after an exit takes no slot, nor makes the process live again */
	rec = many_procs_recording(2 * CP_REPLAY_MAX_PROCS, true, true);
	assert_int_equal(replay(rec.p, rec.len, &text, wf), 0);
	fflush(wf);
	assert_int_equal(wlen, 0);
	free(text);
	free(rec.p);

	/* the head's process and CP_REPLAY_MAX_PROCS more, all alive: one text too many */
	rec = many_procs_recording(CP_REPLAY_MAX_PROCS, false, false);
	assert_int_equal(replay(rec.p, rec.len, &text, wf), 0);
	fclose(wf);
	expect_line(warn, "rec: 1 maps texts not kept (more than 4096 processes alive at once");
	expect_line(text, "cacheperf-bpf report");
	free(text);
	free(warn);
	free(rec.p);
}

/*
 * A maps text is cut to what a section holds: CP_MAX_MAPS_BYTES of text
 * (the read's cap) was 16 bytes more than a section's payload, and such a
 * section was not written at all. Whole lines are kept, and the section
 * is written.
 */
static void test_maps_fit_a_section(void **state)
{
	const char line[] = "00400000-00401000 r-xp 00000000 08:01 12 /usr/bin/x\n";
	size_t ll = strlen(line), len = CP_MAX_MAPS_BYTES, whole = len - len % ll;
	char *text = malloc(len + 1);
	struct file out = { 0 };
	FILE *f = open_memstream(&out.p, &out.len);
	struct cp_rec_writer *w = cp_rec_writer__new(f);
	struct cp_rec_buf b = { 0 };
	size_t fit;

	(void)state;
	assert_non_null(text);
	assert_non_null(w);
	for (size_t i = 0; i < whole; i += ll)
		memcpy(text + i, line, ll);
	/* the read's whole cap: a last line of what is left */
	memset(text + whole, 'x', len - whole);
	text[len - 1] = '\n';
	text[len] = '\0';
	/* a short text is whole */
	assert_int_equal(cp_rec_maps_fit(text, 10 * ll), 10 * ll);
	fit = cp_rec_maps_fit(text, len);
	assert_true(fit < len);
	assert_true(fit + 4 * sizeof(__u32) <= CP_REC_MAX_SECTION);
	assert_int_equal(fit % ll, 0);
	assert_true(fit + ll + 4 * sizeof(__u32) > CP_REC_MAX_SECTION);
	/* whole, the section is refused; cut, it is written */
	cp_rec_encode_maps(&b, &(struct cp_rec_maps){ .pid = PID, .text = text, .len = len });
	assert_int_equal(cp_rec_writer__section(w, CP_SEC_MAPS, b.p, b.len), -E2BIG);
	b.len = 0;
	cp_rec_encode_maps(&b, &(struct cp_rec_maps){ .pid = PID, .text = text, .len = fit });
	assert_int_equal(cp_rec_writer__section(w, CP_SEC_MAPS, b.p, b.len), 0);
	cp_rec_buf_free(&b);
	cp_rec_writer__discard(w); /* the writer's stream, closed */
	free(out.p);
	free(text);
}

/*
 * A changed maps text of a process written before costs its owner's bank
 * (a tenant's long maps that change at every read grew a recording 4 MB/s):
 * past it, the text is written as a read that failed, EAGAIN, and the live
 * reader still gets the text. Last of the tests: it spends this uid's bank.
 */
static void test_changed_maps_past_owner_bank(void **state)
{
	char dir[] = "/tmp/cp-rec-XXXXXX", path[64], err[256] = "";
	struct cp_run_info in;
	struct cp_run_end end = { 0 };
	struct cp_rec_section sec;
	struct cp_rec_reader *rd;
	struct cp_recorder *r;
	struct cp_maps_how how;
	const char *text;
	__u32 errors[3];
	int nr = 0;
	size_t len;
	__u64 gen;
	void *p;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.rec", dir);
	r = cp_recorder__open(path, err, sizeof(err));
	assert_non_null(r);
	rec_test_info(&in, getpid());
	cp_recorder__info(r, &in);
	assert_int_equal(cp_recorder__maps_text(r, getpid(), &text, &len, &gen, &how), 0);
	/* changed, the bank full: written */
	p = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	assert_true(p != MAP_FAILED);
	assert_int_equal(cp_recorder__maps_text(r, getpid(), &text, &len, &gen, &how), 0);
	/* changed, the bank spent: the run has the text, the recording a failed read */
	munmap(p, 4096);
	cp_maps_owner_spend(geteuid(), 3000000000ull);
	assert_int_equal(cp_recorder__maps_text(r, getpid(), &text, &len, &gen, &how), 0);
	assert_true(len > 0);
	end.end_ns = in.start_ns + 1;
	assert_int_equal(cp_recorder__close(r, &end, err, sizeof(err)), 0);

	f = fopen(path, "r");
	assert_non_null(f);
	rd = cp_rec_reader__new(f, err, sizeof(err));
	assert_non_null(rd);
	while (cp_rec_reader__next(rd, &sec, err, sizeof(err)) > 0) {
		struct cp_rec_maps m;

		if (sec.type != CP_SEC_MAPS)
			continue;
		assert_int_equal(cp_rec_decode_maps(&sec.payload, &m, err, sizeof(err)), 0);
		assert_true(nr < 3);
		errors[nr++] = m.error;
	}
	cp_rec_reader__free(rd);
	fclose(f);
	assert_int_equal(nr, 3);
	assert_int_equal(errors[0], 0);
	assert_int_equal(errors[1], 0);
	assert_int_equal(errors[2], EAGAIN);
	unlink(path);
	rmdir(dir);
}

/*
 * A recording appears at its path only when closed whole, mode 0600 (it
 * holds the targets' address maps); a discarded one (a run that failed)
 * leaves the path as it was and no temporary file.
 */
static void test_written_then_renamed(void **state)
{
	char dir[] = "/tmp/cp-rec-XXXXXX", path[64], err[256];
	struct cp_rec_writer *w;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run.cprec", dir);
	w = cp_rec_writer__open(path, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(cp_rec_writer__section(w, CP_SEC_END, "", 0), 0);
	assert_int_equal(stat(path, &st), -1);
	assert_int_equal(cp_rec_writer__close(w), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	assert_int_equal(st.st_size, CP_REC_FILE_HDR_LEN + CP_REC_SEC_HDR_LEN);

	w = cp_rec_writer__open(path, err, sizeof(err));
	assert_non_null(w);
	assert_int_equal(cp_rec_writer__event(w, "abcdefgh", 8), 0);
	assert_int_equal(cp_rec_writer__discard(w), -ECANCELED);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_size, CP_REC_FILE_HDR_LEN + CP_REC_SEC_HDR_LEN);
	assert_int_equal(unlink(path), 0);
	assert_int_equal(rmdir(dir), 0);	/* nothing else was left */
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_round_trip),
		cmocka_unit_test(test_replayed_report),
		cmocka_unit_test(test_odd_records),
		cmocka_unit_test(test_sample_stacks_replayed),
		cmocka_unit_test(test_truncated_everywhere),
		cmocka_unit_test(test_flipped_bytes),
		cmocka_unit_test(test_version_mismatch),
		cmocka_unit_test(test_header_sources),
		cmocka_unit_test(test_bad_lengths_and_order),
		cmocka_unit_test(test_offline_symbols_checked),
		cmocka_unit_test(test_replay_many_processes),
		cmocka_unit_test(test_maps_fit_a_section),
		cmocka_unit_test(test_written_then_renamed),
		/* last: it spends this uid's bank of maps reads */
		cmocka_unit_test(test_changed_maps_past_owner_bank),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
