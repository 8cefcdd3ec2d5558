// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Stacks as the exporters see them (export/export_stack.h), the folded
 * text (export/folded.h) and the --pprof-dir names (export/pprof_dir.h).
 * Symbols come from the checked-in golden recording (tests/golden) replayed
 * with its program mapped back, so the addresses below are chain's, read
 * with objdump -d and addr2line (tests/golden/README.md): a synthetic call
 * stack of return addresses must symbolize each caller at its call (the
 * return address - 1), not at the line after it, and the leaf at its own
 * address - the iterator that will give real call stacks passes them so.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <cmocka.h>

#include <zlib.h>

#include "export/export.h"
#include "export/export_stack.h"
#include "export/folded.h"
#include "export/pprof_dir.h"
#include "proto/profile.pb-c.h"
#include "lib/rec_build.h"
#include "record/replay.h"

#define PID 4678
/*
 * chain_inner's `depth++` (alloc_chain.h:24), then the return addresses of
 * its callers: after `call chain_inner` in chain_middle (0x40105e + 5: line
 * 30, while 0x401063 itself is line 32), after `call chain_middle` in
 * chain_outer (38), after `call chain_outer` in main (chain.c:68; 0x4011c5
 * itself is 69), after `call main` in _start_c (79), after `call _start_c`
 * in the assembly _start, which has no symbol size: no function.
 */
static const __u64 stack[] = { 0x401049, 0x401063, 0x40107d, 0x4011c5, 0x401201, 0x40100b };
static const struct {
	const char *function;
	const char *file;
	__s64 line;
} want[] = {
	{ "chain_inner", "alloc_chain.h", 24 }, { "chain_middle", "alloc_chain.h", 30 },
	{ "chain_outer", "alloc_chain.h", 38 }, { "main", "chain.c", 68 },
	{ "_start_c", "chain.c", 79 },
};

static struct cp_replay *replay;

static int setup(void **state)
{
	const char *root = getenv("CP_ROOT") ? getenv("CP_ROOT") : ".";
	static struct cp_path_map map;
	char path[4096], where[4096], err[512];
	FILE *f;

	(void)state;
	snprintf(where, sizeof(where), "/tmp/cacheperf-golden=%s/tests/golden", root);
	if (cp_path_map_add(&map, where, err, sizeof(err)))
		return -1;
	snprintf(path, sizeof(path), "%s/tests/golden/chain.cprec", root);
	f = fopen(path, "re");
	if (!f)
		return -1;
	if (cp_replay__run(f, path, stderr, &map, &replay, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		fclose(f);
		return -1;
	}
	fclose(f);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	cp_replay__free(replay);
	return 0;
}

/* A stack source of one stack: the pcs given. */
struct one {
	const __u64 *pcs;
	__u32 nr;
};

static int one_stack(const void *src, cp_stack_fn fn, void *ctx)
{
	const struct one *o = src;
	struct cp_stack_counts c = { .samples = 3, .misses = 3 };

	return fn(ctx, PID, o->pcs, o->nr, &c);
}

struct seen {
	int stacks;
	struct cp_folded *folded;
	const struct cp_issue *issue;
	char comm[32];
};

static const char *base(const char *path)
{
	const char *s = path ? strrchr(path, '/') : NULL;

	return s ? s + 1 : path;
}

static int check_frames(void *ctx, const struct cp_export_stack *s)
{
	struct seen *seen = ctx;

	seen->stacks++;
	assert_int_equal(s->tgid, PID);
	assert_int_equal(s->nr_frames, 6);
	assert_int_equal(s->counts->misses, 3);
	for (__u32 i = 0; i < 5; i++) {
		const struct cp_pprof_frame *f = &s->frames[i];

		assert_int_equal(f->address, stack[i]);
		/* noinline functions: one line each */
		assert_int_equal(f->nr_lines, 1);
		assert_string_equal(f->lines[0].function, want[i].function);
		assert_string_equal(base(f->lines[0].file), want[i].file);
		assert_int_equal(f->lines[0].line, want[i].line);
		assert_non_null(f->mapping);
		assert_string_equal(f->mapping->file, "/tmp/cacheperf-golden/chain");
		/* `readelf -n tests/golden/chain` */
		assert_string_equal(f->mapping->build_id, "275594ab6559d6afedd5b987ae7e506973a52ef4");
		assert_true(f->mapping->start <= f->address && f->address < f->mapping->limit);
	}
	assert_int_equal(s->frames[5].nr_lines, 0);
	assert_non_null(s->frames[5].mapping);
	assert_string_equal(s->comm, "chain");
	assert_string_equal(s->container, "");
	seen->issue = s->issue;
	return cp_folded__add(seen->folded, s, s->counts->misses);
}

static void test_call_stack(void **state)
{
	struct one o = { stack, 6 };
	struct seen seen = { .folded = cp_folded__new() };
	struct cp_stack_walk w = { one_stack, &o };
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	assert_int_equal(cp_export_stacks(cp_replay__profile(replay), NULL, w, check_frames, &seen),
			 0);
	assert_int_equal(seen.stacks, 1);
	assert_null(seen.issue);
	assert_int_equal(cp_folded__write(seen.folded, f), 0);
	fclose(f);
	/* root first: the process, then _start (no function: its address), ..., the leaf */
	assert_string_equal(text, "chain;0x40100b in chain;_start_c;main;chain_outer;chain_middle;"
				  "chain_inner 3\n");
	free(text);
	cp_folded__free(seen.folded);
}

/* @gz inflated into a new buffer (free() it), @*len bytes. */
static __u8 *gunzip(const __u8 *gz, size_t gz_len, size_t *len)
{
	size_t cap = 1 << 20;
	__u8 *out = malloc(cap);
	z_stream z = { 0 };

	assert_non_null(out);
	assert_int_equal(inflateInit2(&z, 15 + 16), Z_OK);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gz_len;
	z.next_out = out;
	z.avail_out = (uInt)cap;
	assert_int_equal(inflate(&z, Z_FINISH), Z_STREAM_END);
	*len = z.total_out;
	inflateEnd(&z);
	return out;
}

/* The same call stack through the whole pprof path: gzip, one sample, six locations. */
static void test_call_stack_pprof(void **state)
{
	struct one o = { stack, 6 };
	Perftools__Profiles__Profile *pr;
	const Perftools__Profiles__Sample *smp;
	__u8 *gz, *raw;
	size_t gz_len, len;

	(void)state;
	assert_int_equal(cp_export_pprof(cp_replay__profile(replay), NULL,
					 (struct cp_stack_walk){ one_stack, &o }, 0, 1000, &gz,
					 &gz_len),
			 0);
	raw = gunzip(gz, gz_len, &len);
	pr = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(pr);
	/* the recording's source is page faults: samples only */
	assert_int_equal(pr->n_sample_type, 1);
	assert_string_equal(pr->string_table[pr->sample_type[0]->type], "samples");
	assert_int_equal(pr->n_sample, 1);
	smp = pr->sample[0];
	assert_int_equal(smp->value[0], 3);
	assert_int_equal(smp->n_location_id, 6);
	/* one mapping (chain's text), six locations, five functions (_start has none) */
	assert_int_equal(pr->n_mapping, 1);
	assert_int_equal(pr->n_location, 6);
	assert_int_equal(pr->n_function, 5);
	for (size_t i = 0; i < 6; i++) {
		const Perftools__Profiles__Location *l = pr->location[smp->location_id[i] - 1];

		assert_int_equal(l->id, smp->location_id[i]);
		assert_int_equal(l->address, stack[i]);
		assert_int_equal(l->mapping_id, 1);
		assert_int_equal(l->n_line, i < 5 ? 1 : 0);
		if (i < 5) {
			const Perftools__Profiles__Function *f =
				pr->function[l->line[0]->function_id - 1];

			assert_string_equal(pr->string_table[f->name], want[i].function);
			assert_int_equal(l->line[0]->line, want[i].line);
		}
	}
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(raw);
	free(gz);
}

static int note_issue(void *ctx, const struct cp_export_stack *s)
{
	struct seen *seen = ctx;

	seen->stacks++;
	seen->issue = s->issue;
	return 0;
}

/*
 * An issue lists one instruction per source line: another instruction of
 * that line is the issue's too, an instruction of another line is not.
 */
static void test_issue_by_line(void **state)
{
	struct cp_issue is = { .type = CP_ISSUE_FALSE_SHARING, .nr_insns = 1 };
	struct cp_classification c = { .issues = &is, .nr_issues = 1 };
	const __u64 other_insn = 0x401052, touch = 0x4011d3;
	struct one same_line = { stack, 1 }, other_line = { &touch, 1 };
	struct seen seen = { 0 };
	struct cp_profile *p = cp_replay__profile(replay);

	(void)state;
	/* chain_inner's second instruction of line 24, as the classifier locates it */
	is.insns[0] = (struct cp_issue_insn){ .tgid = PID, .ip = other_insn, .have_loc = true };
	snprintf(is.insns[0].loc.function, sizeof(is.insns[0].loc.function), "chain_inner");
	snprintf(is.insns[0].loc.file, sizeof(is.insns[0].loc.file),
		 "tests/workloads/alloc_chain.h");
	is.insns[0].loc.line = 24;
	assert_int_equal(cp_export_stacks(p, &c, (struct cp_stack_walk){ one_stack, &same_line },
					  note_issue, &seen),
			 0);
	assert_ptr_equal(seen.issue, &is);
	assert_int_equal(cp_export_stacks(p, &c, (struct cp_stack_walk){ one_stack, &other_line },
					  note_issue, &seen),
			 0);
	assert_null(seen.issue);
	/* by ip: the listed instruction itself */
	same_line.pcs = &other_insn;
	assert_int_equal(cp_export_stacks(p, &c, (struct cp_stack_walk){ one_stack, &same_line },
					  note_issue, &seen),
			 0);
	assert_ptr_equal(seen.issue, &is);
}

/* Folded text by hand: inline chains expanded outermost first, unknowns, sums, no zeros. */
static void test_folded(void **state)
{
	const struct cp_pprof_line inl[] = {
		{ .function = "memcpy_small" }, { .function = "copy;rows" }, { .function = "worker" }
	};
	const struct cp_pprof_line start[] = { { .function = "start_thread" } };
	const struct cp_pprof_mapping lib = { .file = "/usr/lib/libfoo.so.1" };
	struct cp_export_stack s = { .tgid = 7, .nr_frames = 3, .comm = "", .container = "" };
	struct cp_folded *fo = cp_folded__new();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	s.frames[0] = (struct cp_pprof_frame){ .address = 0x10, .lines = inl, .nr_lines = 3 };
	s.frames[1] = (struct cp_pprof_frame){ .address = 0x7f0000001234, .mapping = &lib };
	s.frames[2] = (struct cp_pprof_frame){ .address = 0x30, .lines = start, .nr_lines = 1 };
	assert_int_equal(cp_folded__add(fo, &s, 5), 0);
	assert_int_equal(cp_folded__add(fo, &s, 2), 0);
	assert_int_equal(cp_folded__add(fo, &s, 0), 0);
	s.nr_frames = 1;
	s.frames[0] = (struct cp_pprof_frame){ .address = 0x40 };
	s.comm = "app";
	assert_int_equal(cp_folded__add(fo, &s, 1), 0);
	assert_int_equal(cp_folded__write(fo, f), 0);
	fclose(f);
	assert_string_equal(text, "app;[unknown] 1\n"
				  "pid-7;start_thread;0x7f0000001234 in libfoo.so.1;worker;copy:rows;"
				  "memcpy_small 7\n");
	free(text);
	cp_folded__free(fo);
}

/*
 * A tenant's names cannot add a count to their line: readers take the last
 * number after a space as the count (speedscope, whose lines also end at
 * U+2028) and the one before it as a second count (flamegraph.pl's and
 * inferno's differential mode). The numbers are joined to their names;
 * a number inside a name, or after a dot, stays as it is.
 */
static void test_folded_counts_not_forged(void **state)
{
	const struct cp_pprof_line leaf[] = {{.function = "hot_fn  999999999"}};
	const struct cp_pprof_line mid[] = {{.function = "f\xe2\x80\xa8 5 x"}};
	const struct cp_pprof_line ver[] = {{.function = "v.1.5"}, {.function = "g 1.5"}};
	struct cp_export_stack s = {.tgid = 7, .nr_frames = 2, .comm = "sh 2", .container = ""};
	struct cp_folded *fo = cp_folded__new();
	char *text = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	(void)state;
	s.frames[0] = (struct cp_pprof_frame){.address = 0x10, .lines = leaf, .nr_lines = 1};
	s.frames[1] = (struct cp_pprof_frame){.address = 0x20, .lines = mid, .nr_lines = 1};
	assert_int_equal(cp_folded__add(fo, &s, 64), 0);
	s.nr_frames = 1;
	s.frames[0] = (struct cp_pprof_frame){.address = 0x30, .lines = ver, .nr_lines = 2};
	assert_int_equal(cp_folded__add(fo, &s, 3), 0);
	assert_int_equal(cp_folded__write(fo, f), 0);
	fclose(f);
	assert_string_equal(text, "sh_2;f? 5 x;hot_fn__999999999 64\n"
				  "sh_2;g_1.5;v.1.5 3\n");
	free(text);
	cp_folded__free(fo);
}

static void test_dir_names(void **state)
{
	__u64 t[5] = { 100, 100, 99, 200, 100 }, seq[5] = { 2, 1, 7, 0, 3 };
	bool drop[5];
	char name[CP_PPROF_NAME_LEN];
	__u64 ut, us;

	(void)state;
	cp_pprof_dir_name(1732500000, 42, name, sizeof(name));
	assert_string_equal(name, "cacheperf-1732500000-000042.pb.gz");
	assert_true(cp_pprof_dir_parse(name, &ut, &us));
	assert_int_equal(ut, 1732500000);
	assert_int_equal(us, 42);
	/* only our own names: an agent's or a user's files are never removed */
	assert_false(cp_pprof_dir_parse("cacheperf-1732500000-000042.pb.gz.Ab12Cd", &ut, &us));
	assert_false(cp_pprof_dir_parse("cacheperf-1732500000-000042.pb", &ut, &us));
	assert_false(cp_pprof_dir_parse("cacheperf-x-1.pb.gz", &ut, &us));
	assert_false(cp_pprof_dir_parse("cacheperf--1.pb.gz", &ut, &us));
	assert_false(cp_pprof_dir_parse("other-1-1.pb.gz", &ut, &us));
	assert_false(cp_pprof_dir_parse("cacheperf-99999999999999999999-1.pb.gz", &ut, &us));
	/* keep 2 of 5: the oldest by time, then sequence, go */
	assert_int_equal(cp_pprof_dir_prune_plan(t, seq, 5, 2, drop), 3);
	assert_true(drop[2] && drop[1] && drop[0]);
	assert_false(drop[3] || drop[4]);
	assert_int_equal(cp_pprof_dir_prune_plan(t, seq, 5, 5, drop), 0);
}

/*
 * Which files --pprof-dir counts as its own: those of earlier runs only
 * when regular, of its user, with one link; those it recorded only while
 * the name holds the same inode. A tenant's file, whatever its name, never.
 */
static void test_dir_ours(void **state)
{
	struct cp_pprof_file f = { .unix_s = 100, .seq = 1, .dev = 8, .ino = 42 };
	struct stat st = { .st_mode = S_IFREG | 0600, .st_uid = 0, .st_nlink = 1, .st_dev = 8,
			   .st_ino = 42 };

	(void)state;
	assert_true(cp_pprof_dir_adoptable(&st, 0));
	assert_true(cp_pprof_dir_still_ours(&f, &st, 0));
	assert_false(cp_pprof_dir_adoptable(&st, 1000));
	assert_false(cp_pprof_dir_still_ours(&f, &st, 1000));
	st.st_nlink = 2; /* a hard link to a file made elsewhere */
	assert_false(cp_pprof_dir_adoptable(&st, 0));
	st.st_nlink = 1;
	st.st_uid = 65534; /* the tenant's */
	assert_false(cp_pprof_dir_adoptable(&st, 0));
	assert_false(cp_pprof_dir_still_ours(&f, &st, 0));
	st.st_uid = 0;
	st.st_ino = 43; /* the name now holds another file */
	assert_false(cp_pprof_dir_still_ours(&f, &st, 0));
	st.st_ino = 42;
	st.st_dev = 9;
	assert_false(cp_pprof_dir_still_ours(&f, &st, 0));
	st.st_dev = 8;
	st.st_mode = S_IFIFO | 0600;
	assert_false(cp_pprof_dir_adoptable(&st, 0));
	assert_false(cp_pprof_dir_still_ours(&f, &st, 0));
	st.st_mode = S_IFLNK | 0777;
	assert_false(cp_pprof_dir_adoptable(&st, 0));
	assert_false(cp_pprof_dir_still_ours(&f, &st, 0));
}

/*
 * pprof's consumers take a profile's first mapping for its main binary:
 * whatever mapping the first stack's leaf is in (a library's here), the
 * program's code mapping comes first. Two layouts: the usual one, the
 * program below its libraries (the golden program itself, so its
 * build-id is read and the mapping added first is the very one its frames
 * name, not a second one), and a program run through ld.so, which maps it
 * above the libraries and below itself.
 */
static const char usual_maps[] =
	"00400000-00401000 r--p 00000000 fe:00 10961963 /tmp/cacheperf-golden/chain\n"
	"00401000-00402000 r-xp 00001000 fe:00 10961963 /tmp/cacheperf-golden/chain\n"
	"7f0000000000-7f0000001000 r-xp 00000000 00:00 0 /nonexistent/cp-test/libfoo.so\n";
static const __u64 usual_stack[] = {0x7f0000000100, 0x401063};
static const char ld_so_maps[] =
	"7e0000000000-7e0000001000 r-xp 00000000 00:00 0 /nonexistent/cp-test/libfoo.so\n"
	"7f0000400000-7f0000401000 r--p 00000000 00:00 0 /nonexistent/cp-test/prog\n"
	"7f0000401000-7f0000402000 r-xp 00001000 00:00 0 /nonexistent/cp-test/prog\n"
	"7f1000000000-7f1000001000 r-xp 00000000 00:00 0 /nonexistent/cp-test/ld-linux-x86-64.so.2\n";
static const __u64 ld_so_stack[] = {0x7e0000000100, 0x7f0000401100};

static const struct cp_rec_build_id chain_id = {
	.inode = 10961963,
	.id_len = 20,
	.id = {0x27, 0x55, 0x94, 0xab, 0x65, 0x59, 0xd6, 0xaf, 0xed, 0xd5,
	       0xb9, 0x87, 0xae, 0x7e, 0x50, 0x69, 0x73, 0xa5, 0x2e, 0xf4},
	.path = "/tmp/cacheperf-golden/chain",
};

/* A recording of process PID mapped as @maps, replayed with the golden program mapped back. */
static struct cp_replay *replay_maps(const char *maps)
{
	const char *root = getenv("CP_ROOT") ? getenv("CP_ROOT") : ".";
	char path[] = "/tmp/cp-main-mapping.XXXXXX", err[512], where[4096];
	struct cp_rec_maps m = {
		.pid = PID,
		.who = CP_REC_MAPS_SYMBOLS,
		.text = maps,
		.len = strlen(maps),
	};
	struct cp_rec_buf b = {0};
	struct cp_run_end end = {.end_ns = 2000000000ull};
	struct cp_path_map map = {0};
	struct cp_run_info in;
	struct cp_rec_writer *w;
	struct cp_replay *r;
	int fd = mkstemp(path);
	FILE *f = fdopen(fd, "w+");

	assert_non_null(f);
	w = cp_rec_writer__new(f);
	assert_non_null(w);
	rec_test_head(w, &b, &in, PID, &m);
	/* the golden program's build-id as the live run read it (tests/golden/README.md) */
	cp_rec_encode_build_id(&b, &chain_id);
	rec_test_section(w, &b, CP_SEC_BUILD_ID);
	cp_rec_encode_end(&b, &end);
	rec_test_section(w, &b, CP_SEC_END);
	cp_rec_buf_free(&b);
	assert_int_equal(cp_rec_writer__close(w), 0);
	snprintf(where, sizeof(where), "/tmp/cacheperf-golden=%s/tests/golden", root);
	assert_int_equal(cp_path_map_add(&map, where, err, sizeof(err)), 0);
	f = fopen(path, "re");
	assert_non_null(f);
	if (cp_replay__run(f, path, NULL, &map, &r, err, sizeof(err)))
		fail_msg("replay: %s", err);
	fclose(f);
	unlink(path);
	return r;
}

/* The pprof profile of @stack (a library's leaf, the program's caller) in @maps. */
static void check_main_first(const char *maps, const __u64 *stack, const char *program,
			     __u64 start, const char *build_id)
{
	struct one o = {stack, 2};
	struct cp_replay *r = replay_maps(maps);
	Perftools__Profiles__Profile *pr;
	__u8 *gz, *raw;
	size_t gz_len, len;

	assert_int_equal(cp_export_pprof(cp_replay__profile(r), NULL,
					 (struct cp_stack_walk){one_stack, &o}, 0, 1000, &gz,
					 &gz_len),
			 0);
	raw = gunzip(gz, gz_len, &len);
	pr = perftools__profiles__profile__unpack(NULL, len, raw);
	assert_non_null(pr);
	assert_int_equal(pr->n_mapping, 2);
	assert_int_equal(pr->mapping[0]->id, 1);
	assert_string_equal(pr->string_table[pr->mapping[0]->filename], program);
	assert_string_equal(pr->string_table[pr->mapping[0]->build_id], build_id);
	assert_int_equal(pr->mapping[0]->memory_start, start);
	assert_int_equal(pr->mapping[0]->file_offset, 0x1000);
	assert_string_equal(pr->string_table[pr->mapping[1]->filename],
			    "/nonexistent/cp-test/libfoo.so");
	/* the leaf is the library's location, the caller the program's */
	assert_int_equal(pr->location[pr->sample[0]->location_id[0] - 1]->mapping_id, 2);
	assert_int_equal(pr->location[pr->sample[0]->location_id[1] - 1]->mapping_id, 1);
	perftools__profiles__profile__free_unpacked(pr, NULL);
	free(raw);
	free(gz);
	cp_replay__free(r);
}

static void test_pprof_main_binary_first(void **state)
{
	(void)state;
	check_main_first(usual_maps, usual_stack, "/tmp/cacheperf-golden/chain", 0x401000,
			 "275594ab6559d6afedd5b987ae7e506973a52ef4");
	check_main_first(ld_so_maps, ld_so_stack, "/nonexistent/cp-test/prog", 0x7f0000401000,
			 "");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_call_stack),
		cmocka_unit_test(test_call_stack_pprof),
		cmocka_unit_test(test_pprof_main_binary_first),
		cmocka_unit_test(test_issue_by_line),
		cmocka_unit_test(test_folded),
		cmocka_unit_test(test_folded_counts_not_forged),
		cmocka_unit_test(test_dir_names),
		cmocka_unit_test(test_dir_ours),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
