// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Pairing the issues of two runs (classify/issue_match.h): what `diff` calls
 * the same issue, moved, of a changed type, gone or new.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "classify/issue_match.h"

/* An issue spec: type, origin, main line, its function, main object. */
struct spec {
	enum cp_issue_type type;
	enum cp_issue_origin origin;
	const char *file;	/* NULL: no location */
	__u32 line;
	const char *function;
	enum cp_obj_kind kind;	/* of the object; CP_OBJ_KIND_NR: none */
	const char *name;	/* a variable's or mapping's name; heap: the site's function */
	__u32 site_line;	/* heap: the site's line in site.c */
};

#define FS CP_ISSUE_FALSE_SHARING
#define CAP CP_ISSUE_CAPACITY
#define CONF CP_ISSUE_CONFLICT
#define PEND CP_ISSUE_CAPACITY_OR_CONFLICT
#define APP CP_ORIGIN_APPLICATION
#define ALLOC CP_ORIGIN_ALLOCATOR

static void make(const struct spec *s, struct cp_issue *is)
{
	struct cp_issue_insn *in = &is->insns[0];
	struct cp_issue_object *o = &is->objects[0];

	memset(is, 0, sizeof(*is));
	is->type = s->type;
	is->origin = s->origin;
	is->nr_insns = 1;
	in->ip = 0x401000 + s->line;
	if (s->file || s->function) {
		in->have_loc = true;
		snprintf(in->loc.file, sizeof(in->loc.file), "/src/app/%s", s->file ? s->file : "");
		snprintf(in->loc.function, sizeof(in->loc.function), "%s",
			 s->function ? s->function : "");
		in->loc.line = s->file ? s->line : 0;
	}
	if (s->kind == CP_OBJ_KIND_NR)
		return;
	is->nr_objects = 1;
	o->kind = s->kind;
	o->nr_objects = 1;
	if (s->kind != CP_OBJ_HEAP) {
		snprintf(o->name, sizeof(o->name), "%s", s->name);
		return;
	}
	if (!s->name)
		return;
	o->nr_frames = 1;
	snprintf(o->alloc_stack[0].function, sizeof(o->alloc_stack[0].function), "%s", s->name);
	snprintf(o->alloc_stack[0].file, sizeof(o->alloc_stack[0].file), "/src/app/site.c");
	o->alloc_stack[0].line = s->site_line;
}

#define MAX 8

/* Matches @b against @a and checks the pairs are @want (nb + new ones). */
static void check(const struct spec *b, size_t nb, const struct spec *a, size_t na,
		  const struct cp_issue_pair *want, size_t nwant)
{
	struct cp_issue before[MAX], after[MAX];
	struct cp_issue_pair out[2 * MAX];
	size_t n = 99;

	for (size_t i = 0; i < nb; i++)
		make(&b[i], &before[i]);
	for (size_t j = 0; j < na; j++)
		make(&a[j], &after[j]);
	assert_int_equal(cp_issue_match(before, nb, after, na, out, &n), 0);
	assert_int_equal(n, nwant);
	for (size_t k = 0; k < n; k++) {
		if (out[k].kind != want[k].kind || out[k].before != want[k].before ||
		    out[k].after != want[k].after)
			fail_msg("pair %zu: %s %d->%d, want %s %d->%d", k,
				 cp_issue_match_name(out[k].kind), out[k].before, out[k].after,
				 cp_issue_match_name(want[k].kind), want[k].before, want[k].after);
	}
}

#define N(x) (sizeof(x) / sizeof((x)[0]))
#define SAME(b, a) { CP_MATCH_SAME, b, a }
#define MOVED(b, a) { CP_MATCH_MOVED, b, a }
#define RETYPED(b, a) { CP_MATCH_TYPE_CHANGED, b, a }
#define GONE(b) { CP_MATCH_GONE, b, -1 }
#define NEW(a) { CP_MATCH_NEW, -1, a }

static const struct spec fs = { FS, APP, "fs.c", 50, "worker", CP_OBJ_HEAP, "main", 100 };
static const struct spec cap = { CAP, APP, "stream.c", 30, "sum", CP_OBJ_HEAP, "main", 20 };
static const struct spec hits = { CP_ISSUE_TRUE_SHARING, APP, "ts.c", 12, "inc", CP_OBJ_GLOBAL,
				  "cp_hits", 0 };

/* A recording against itself: every issue the same, in rank order. */
static void test_itself(void **state)
{
	const struct spec s[] = { fs, cap, hits };
	const struct cp_issue_pair want[] = { SAME(0, 0), SAME(1, 1), SAME(2, 2) };

	(void)state;
	check(s, N(s), s, N(s), want, N(want));
}

/* The fixed twin has no issue: gone. An issue only in AFTER: new, after BEFORE's rows. */
static void test_gone_and_new(void **state)
{
	const struct spec b[] = { fs, hits }, a[] = { cap, hits };
	const struct cp_issue_pair want[] = { GONE(0), SAME(1, 1), NEW(0) };

	(void)state;
	check(b, N(b), a, N(a), want, N(want));
	check(b, N(b), NULL, 0, (const struct cp_issue_pair[]){ GONE(0), GONE(1) }, 2);
	check(NULL, 0, a, 1, (const struct cp_issue_pair[]){ NEW(0) }, 1);
	check(NULL, 0, NULL, 0, NULL, 0);
}

/*
 * Padding added above both lines: the access moved from 50 to 53 and the
 * allocation from 100 to 104; same type, function and allocating function.
 */
static void test_moved_by_padding(void **state)
{
	struct spec moved = fs;
	const struct cp_issue_pair want[] = { MOVED(0, 0) };

	(void)state;
	moved.line = 53;
	moved.site_line = 104;
	check(&fs, 1, &moved, 1, want, N(want));
	/* only the allocation moved: still not the same key */
	moved.line = 50;
	check(&fs, 1, &moved, 1, want, N(want));
}

/* A pending type named once a history came, an origin that changed: the same line. */
static void test_type_changed(void **state)
{
	struct spec pend = cap, conf = cap, alloc_fs = fs;

	(void)state;
	pend.type = PEND;
	conf.type = CONF;
	check(&pend, 1, &conf, 1, (const struct cp_issue_pair[]){ RETYPED(0, 0) }, 1);
	alloc_fs.origin = ALLOC;
	check(&alloc_fs, 1, &fs, 1, (const struct cp_issue_pair[]){ RETYPED(0, 0) }, 1);
	/* another type at another line of the same function is no pair at all */
	conf.line = 31;
	check(&pend, 1, &conf, 1, (const struct cp_issue_pair[]){ GONE(0), NEW(0) }, 2);
}

/* Never a silent mismatch: another object, function or file is another issue. */
static void test_no_loose_pair(void **state)
{
	struct spec other_obj = hits, other_fn = fs, other_site = fs, other_file = cap;

	(void)state;
	other_obj.name = "cp_misses";
	check(&hits, 1, &other_obj, 1, (const struct cp_issue_pair[]){ GONE(0), NEW(0) }, 2);
	/* same line number and object, another function and file */
	other_fn.function = "reader";
	other_fn.file = "fs2.c";
	check(&fs, 1, &other_fn, 1, (const struct cp_issue_pair[]){ GONE(0), NEW(0) }, 2);
	/* the same line, but the object comes from another allocating function */
	other_site.name = "setup";
	check(&fs, 1, &other_site, 1, (const struct cp_issue_pair[]){ GONE(0), NEW(0) }, 2);
	/* the same line number in another file, same type: not the same */
	other_file.file = "other.c";
	other_file.function = "other";
	check(&cap, 1, &other_file, 1, (const struct cp_issue_pair[]){ GONE(0), NEW(0) }, 2);
}

/* An exact pair is found before a loose one takes its place. */
static void test_exact_first(void **state)
{
	struct spec a[] = { fs, fs };

	(void)state;
	a[0].line = 53;
	check(&fs, 1, a, N(a), (const struct cp_issue_pair[]){ SAME(0, 1), NEW(0) }, 2);
}

/*
 * Two hot lines of one function on one object; the fix removed the first
 * and shifted the second from 20 to 23: the one left is the second, moved,
 * not the first (which comes first in rank), and the first is gone.
 */
static void test_moved_nearest(void **state)
{
	struct spec b[] = { cap, cap }, a[] = { cap };

	(void)state;
	b[0].line = 10;
	b[1].line = 20;
	a[0].line = 23;
	check(b, N(b), a, N(a), (const struct cp_issue_pair[]){ GONE(0), MOVED(1, 0) }, 2);
	/* both moved by 3, AFTER ranking them the other way: each to its own, not crossed */
	{
		struct spec a2[] = { cap, cap };

		a2[0].line = 23;
		a2[1].line = 13;
		check(b, N(b), a2, N(a2),
		      (const struct cp_issue_pair[]){ MOVED(0, 1), MOVED(1, 0) }, 2);
	}
}

/* Two processes with the same issue: paired in rank order, one each. */
static void test_same_key_twice(void **state)
{
	const struct spec b[] = { fs, fs }, a[] = { fs, fs, fs };

	(void)state;
	check(b, N(b), a, N(a),
	      (const struct cp_issue_pair[]){ SAME(0, 0), SAME(1, 1), NEW(2) }, 3);
}

/* The key's text: what the diff shows in its location and object columns. */
static void test_key_text(void **state)
{
	struct cp_issue is;
	struct cp_issue_key k;
	const struct spec nameless = { CAP, APP, NULL, 0, NULL, CP_OBJ_HEAP, NULL, 0 };
	const struct spec mapping = { CAP, APP, NULL, 0, "memcpy", CP_OBJ_MAPPING,
				      "/usr/lib/data.bin", 0 };
	const struct spec none = { PEND, APP, "a.c", 7, "f", CP_OBJ_KIND_NR, NULL, 0 };

	(void)state;
	make(&fs, &is);
	cp_issue_key_of(&is, &k);
	assert_string_equal(k.where, "fs.c:50");
	assert_string_equal(k.function, "worker");
	assert_string_equal(k.object, "heap object from main (site.c:100)");
	assert_string_equal(k.object_site, "heap object from main");
	make(&hits, &is);
	cp_issue_key_of(&is, &k);
	assert_string_equal(k.object, "global variable cp_hits");
	assert_string_equal(k.object_site, "global variable cp_hits");
	/* no location: the address; a heap object without a stack: its kind */
	make(&nameless, &is);
	cp_issue_key_of(&is, &k);
	assert_string_equal(k.where, "0x401000");
	assert_string_equal(k.function, "");
	assert_string_equal(k.object, "heap object");
	is.objects[0].flags = CP_OBJ_F_CHUNK;
	cp_issue_key_of(&is, &k);
	assert_string_equal(k.object, "heap object (glibc chunk)");
	/* a function but no line; a mapping by its base name */
	make(&mapping, &is);
	cp_issue_key_of(&is, &k);
	assert_string_equal(k.where, "memcpy");
	assert_string_equal(k.object, "mapping data.bin");
	make(&none, &is);
	cp_issue_key_of(&is, &k);
	assert_string_equal(k.object, "");
	assert_string_equal(cp_issue_match_name(CP_MATCH_TYPE_CHANGED), "type_changed");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_itself),
		cmocka_unit_test(test_gone_and_new),
		cmocka_unit_test(test_moved_by_padding),
		cmocka_unit_test(test_type_changed),
		cmocka_unit_test(test_no_loose_pair),
		cmocka_unit_test(test_exact_first),
		cmocka_unit_test(test_moved_nearest),
		cmocka_unit_test(test_same_key_twice),
		cmocka_unit_test(test_key_text),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
