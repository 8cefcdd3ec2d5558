// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The walk over raw BTF (machine/btf_scan.h) on blobs built here: the kinds
 * with trailing records of each size before the one asked for, so a wrong
 * size misreads what follows; and the blobs it must refuse for libbpf to read.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>
#include <errno.h>
#include <linux/btf.h>

#include "machine/btf_scan.h"

/* "\0int\0f\0s\0a\0b\0e\0A\0B\0x\0": offsets of each name */
static const char strs[] = "\0int\0f\0s\0a\0b\0e\0A\0B\0x";
enum { S_INT = 1, S_F = 5, S_S = 7, S_A = 9, S_B = 11, S_E = 13, S_EA = 15, S_EB = 17, S_X = 19 };

/* struct btf_type.info: the kind in bits 24-28, vlen in 0-15 */
#define INFO(kind, vlen) ((__u32)(kind) << 24 | (__u32)(vlen))

struct blob {
	struct btf_header h;
	__u32 types[64];
	char strs[sizeof(strs)];
	__u32 nr; /* words of types used */
};

static void put(struct blob *b, __u32 w)
{
	b->types[b->nr++] = w;
}

static void type(struct blob *b, __u32 name, __u32 kind, __u32 vlen, __u32 size_or_type)
{
	put(b, name);
	put(b, INFO(kind, vlen));
	put(b, size_or_type);
}

/*
 * int; a struct s {a, b} (two 12-byte members); a two-param prototype (8
 * bytes each); FUNC f; a var x (4 bytes); enum e {A, B}; a 64-bit enum x {A}.
 */
static void build(struct blob *b)
{
	memset(b, 0, sizeof(*b));
	type(b, S_INT, BTF_KIND_INT, 0, 4);
	put(b, 32);
	type(b, S_S, BTF_KIND_STRUCT, 2, 8);
	for (int m = 0; m < 2; m++) {
		put(b, m ? S_B : S_A);
		put(b, 1);
		put(b, (__u32)m * 32);
	}
	type(b, 0, BTF_KIND_FUNC_PROTO, 2, 1);
	for (int p = 0; p < 2; p++) {
		put(b, 0);
		put(b, 1);
	}
	type(b, S_F, BTF_KIND_FUNC, 0, 3);
	type(b, S_X, BTF_KIND_VAR, 0, 1);
	put(b, 0);
	type(b, S_E, BTF_KIND_ENUM, 2, 4);
	put(b, S_EA);
	put(b, 0);
	put(b, S_EB);
	put(b, 1);
	type(b, S_X, BTF_KIND_ENUM64, 1, 8);
	put(b, S_EA);
	put(b, 0);
	put(b, 0);
	b->h = (struct btf_header){.magic = BTF_MAGIC,
				   .version = BTF_VERSION,
				   .hdr_len = sizeof(b->h),
				   .type_off = 0,
				   .type_len = b->nr * 4,
				   .str_off = b->nr * 4,
				   .str_len = sizeof(strs)};
	memcpy((char *)b->types + b->nr * 4, strs, sizeof(strs));
}

static size_t blob_size(const struct blob *b)
{
	return sizeof(b->h) + b->h.type_len + b->h.str_len;
}

struct ask_case {
	__u32 kind;
	const char *name, *enumerator;
	int want;
};

static const struct ask_case asks[] = {
	{BTF_KIND_FUNC, "f", NULL, 1},
	{BTF_KIND_FUNC, "s", NULL, 0}, /* a struct of that name is not a function */
	{BTF_KIND_STRUCT, "s", NULL, 1},
	{BTF_KIND_FUNC, "g", NULL, 0},
	{BTF_KIND_ENUM, "e", "B", 1},
	{BTF_KIND_ENUM, "e", "C", 0},
	{BTF_KIND_ENUM, "x", "A", 0}, /* x is a 64-bit enum */
	{BTF_KIND_ENUM64, "x", NULL, 1},
	{BTF_KIND_FUNC, "in", NULL, 0}, /* a prefix of "int" */
};

static void test_asks(void **state)
{
	struct blob b;

	(void)state;
	build(&b);
	for (size_t i = 0; i < sizeof(asks) / sizeof(asks[0]); i++)
		if (cp_btf_scan_has(&b, blob_size(&b), asks[i].kind, asks[i].name,
				    asks[i].enumerator) != asks[i].want)
			fail_msg("kind %u %s %s: want %d", asks[i].kind, asks[i].name,
				 asks[i].enumerator ? asks[i].enumerator : "", asks[i].want);
}

static void test_refused(void **state)
{
	struct blob b;

	(void)state;
	build(&b);
	/* cut inside the string section: the header says more than there is */
	assert_int_equal(cp_btf_scan_has(&b, blob_size(&b) - 1, BTF_KIND_FUNC, "f", NULL), -EINVAL);
	assert_int_equal(cp_btf_scan_has(&b, 8, BTF_KIND_FUNC, "f", NULL), -EINVAL);
	/* the other byte order: libbpf's to read */
	b.h.magic = 0x9feb;
	assert_int_equal(cp_btf_scan_has(&b, blob_size(&b), BTF_KIND_FUNC, "f", NULL), -EINVAL);
	/* a kind newer than the walk, before the one asked for: its size is unknown */
	build(&b);
	b.types[1] = INFO(31, 0);
	assert_int_equal(cp_btf_scan_has(&b, blob_size(&b), BTF_KIND_FUNC, "f", NULL), -EINVAL);
	/* a struct whose members run past the type section */
	build(&b);
	b.types[5] = INFO(BTF_KIND_STRUCT, 60);
	assert_int_equal(cp_btf_scan_has(&b, blob_size(&b), BTF_KIND_FUNC, "f", NULL), -EINVAL);
	/* a name offset past the strings matches nothing */
	build(&b);
	b.types[4] = 5000;
	assert_int_equal(cp_btf_scan_has(&b, blob_size(&b), BTF_KIND_STRUCT, "s", NULL), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_asks),
		cmocka_unit_test(test_refused),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
