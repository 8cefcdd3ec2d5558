// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Exit points of a throwing operator new (decode/exit_points.h): synthetic
 * code with known answers, then Debian 12's tcmalloc and jemalloc as
 * objdump shows them (skipped, said, when a library is absent).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>
#include <cmocka.h>

#include "cacheperf/alloc.h"
#include "cacheperf/operand.h"
#include "decode/exit_elf.h"
#include "decode/exit_points.h"
#include "objects/elf_code.h"

#define BASE	0x1000

/* Synthetic code at BASE; a jmp or call to NORET never returns, to EXT is another file's. */
#define NORET	0x9000
#define EXT	0x9100

struct synth {
	const __u8 *code;
	size_t len;
};

static size_t synth_read(void *ctx, __u64 vaddr, __u8 *buf, size_t len)
{
	const struct synth *s = ctx;

	if (vaddr < BASE || vaddr >= BASE + s->len)
		return 0;
	if (len > BASE + s->len - vaddr)
		len = BASE + s->len - vaddr;
	memcpy(buf, s->code + (vaddr - BASE), len);
	return len;
}

static enum cp_exit_target synth_resolve(void *ctx, __u64 vaddr, __u64 *to)
{
	(void)ctx;
	if (vaddr == NORET)
		return CP_EXIT_TGT_NORETURN;
	if (vaddr == EXT)
		return CP_EXIT_TGT_UNKNOWN;
	*to = vaddr;
	return CP_EXIT_TGT_CODE;
}

static int find(const __u8 *code, size_t len, struct cp_exit_points *ep)
{
	struct synth s = { code, len };
	struct cp_exit_code c = { .read = synth_read, .resolve = synth_resolve, .ctx = &s };

	return cp_exit_points_find(&c, BASE, ep);
}

static const struct cp_exit_point *point_at(const struct cp_exit_points *ep, __u64 off)
{
	for (int i = 0; i < ep->n; i++)
		if (ep->pts[i].vaddr == BASE + off)
			return &ep->pts[i];
	return NULL;
}

/* test %rdi,%rdi; je +4; mov %rdi,%rax; ret; xor %eax,%eax; ret */
static void test_jcc_both_ways(void **state)
{
	static const __u8 code[] = { 0x48, 0x85, 0xff, 0x74, 0x04, 0x48, 0x89, 0xf8, 0xc3,
				     0x31, 0xc0, 0xc3 };
	struct cp_exit_points ep;
	const struct cp_exit_point *p;

	(void)state;
	assert_int_equal(find(code, sizeof(code), &ep), 0);
	assert_int_equal(ep.n, 1);
	p = point_at(&ep, 3);
	assert_non_null(p);
	assert_false(p->always);
	assert_int_equal(p->cond, 4);	/* je */
	assert_true(p->ret[CP_EXIT_FALL]);
	assert_int_equal(p->reg[CP_EXIT_FALL], CP_REG_RDI);
	assert_true(p->ret[CP_EXIT_TAKEN]);
	assert_int_equal(p->reg[CP_EXIT_TAKEN], CP_REG_NONE);	/* null */
	assert_int_equal(p->sp_off[CP_EXIT_FALL], 0);
}

/*
 * push %rbx; mov %rdi,%rbx; call f; test %rax,%rax; je +2; pop %rbx; ret;
 * mov %rbx,%rdi; pop %rbx; jmp NORET -- jemalloc's fallback_impl shape:
 * the je falls through to ret with the result in rax, 8 bytes pushed.
 */
static void test_pushed_frame(void **state)
{
	__u8 code[32] = { 0x53, 0x48, 0x89, 0xfb, 0xe8, 0, 0, 0, 0, 0x48, 0x85, 0xc0, 0x74,
			  0x02, 0x5b, 0xc3, 0x48, 0x89, 0xdf, 0x5b, 0xe9 };
	__s32 rel = NORET - (BASE + 21 + 4);
	struct cp_exit_points ep;
	const struct cp_exit_point *p;

	(void)state;
	memcpy(&code[21], &rel, 4);
	assert_int_equal(find(code, 25, &ep), 0);
	p = point_at(&ep, 12);
	assert_non_null(p);
	assert_true(p->ret[CP_EXIT_FALL]);
	assert_false(p->ret[CP_EXIT_TAKEN]);
	assert_int_equal(p->reg[CP_EXIT_FALL], CP_REG_RAX);
	assert_int_equal(p->sp_off[CP_EXIT_FALL], 8);
}

/* A path to ret with no branch at all (mov %rdi,%rax; ret): no exit point, refused. */
static void test_straight_line_refused(void **state)
{
	static const __u8 code[] = { 0x48, 0x89, 0xf8, 0xc3 };
	struct cp_exit_points ep;

	(void)state;
	assert_int_equal(find(code, sizeof(code), &ep), -ENOENT);
	assert_non_null(ep.why);
	assert_int_equal(ep.n, 0);
}

/* A result loaded from memory after the last branch: refused. */
static void test_load_refused(void **state)
{
	/* test %rdi,%rdi; je +4; mov (%rdi),%rax; ret; xor %eax,%eax; ret */
	static const __u8 code[] = { 0x48, 0x85, 0xff, 0x74, 0x04, 0x48, 0x8b, 0x07, 0xc3,
				     0x31, 0xc0, 0xc3 };
	struct cp_exit_points ep;

	(void)state;
	assert_int_equal(find(code, sizeof(code), &ep), -ENOENT);
}

/* An indirect jump, or a tail jump into another file: nothing proven. */
static void test_unprovable_refused(void **state)
{
	/* test; je +2; jmp *%rax; xor %eax,%eax; ret */
	static const __u8 ind[] = { 0x48, 0x85, 0xff, 0x74, 0x02, 0xff, 0xe0, 0x31, 0xc0, 0xc3 };
	__u8 ext[16] = { 0x48, 0x85, 0xff, 0x74, 0x05, 0xe9, 0, 0, 0, 0, 0x31, 0xc0, 0xc3 };
	__s32 rel = EXT - (BASE + 10);
	struct cp_exit_points ep;

	(void)state;
	assert_int_equal(find(ind, sizeof(ind), &ep), -ENOENT);
	assert_string_equal(ep.why, "an indirect jump");
	memcpy(&ext[6], &rel, 4);
	assert_int_equal(find(ext, 13, &ep), -ENOENT);
	assert_string_equal(ep.why, "a jump to code not proven");
}

/*
 * tcmalloc's MallocHook path: the result stored in a frame slot, a call,
 * then loaded back: the exit point before the call finds it in rax.
 * sub $0x10,%rsp; test %rdi,%rdi; jne +6; add $0x10,%rsp; ret;
 * mov %rax,0x8(%rsp); call f; mov 0x8(%rsp),%rax; add $0x10,%rsp; ret
 */
static void test_frame_slot_across_call(void **state)
{
	static const __u8 code[] = { 0x48, 0x83, 0xec, 0x10, 0x48, 0x85, 0xff, 0x75, 0x05,
				     0x48, 0x83, 0xc4, 0x10, 0xc3, 0x48, 0x89, 0x44, 0x24, 0x08,
				     0xe8, 0x00, 0x00, 0x00, 0x00, 0x48, 0x8b, 0x44, 0x24, 0x08,
				     0x48, 0x83, 0xc4, 0x10, 0xc3 };
	struct cp_exit_points ep;
	const struct cp_exit_point *p;

	(void)state;
	assert_int_equal(find(code, sizeof(code), &ep), 0);
	p = point_at(&ep, 7);
	assert_non_null(p);
	assert_true(p->ret[CP_EXIT_TAKEN] && p->ret[CP_EXIT_FALL]);
	assert_int_equal(p->reg[CP_EXIT_TAKEN], CP_REG_RAX);
	assert_int_equal(p->sp_off[CP_EXIT_TAKEN], 0x10);
	assert_int_equal(p->reg[CP_EXIT_FALL], CP_REG_RAX);
}

/* The condition codes BPF evaluates, against the flags x86 sets. */
static void test_jcc_taken(void **state)
{
	(void)state;
	assert_true(cp_jcc_taken(0x4, CP_FLAG_ZF));		/* je */
	assert_false(cp_jcc_taken(0x5, CP_FLAG_ZF));		/* jne */
	assert_true(cp_jcc_taken(0x2, CP_FLAG_CF));		/* jb */
	assert_false(cp_jcc_taken(0x7, CP_FLAG_CF));		/* ja */
	assert_true(cp_jcc_taken(0x7, 0));			/* ja */
	assert_true(cp_jcc_taken(0xc, CP_FLAG_SF));		/* jl: SF != OF */
	assert_false(cp_jcc_taken(0xc, CP_FLAG_SF | CP_FLAG_OF));
	assert_true(cp_jcc_taken(0xe, CP_FLAG_ZF));		/* jle */
	assert_true(cp_jcc_taken(0xf, 0));			/* jg */
	assert_true(cp_jcc_taken(0x8, CP_FLAG_SF));		/* js */
	assert_true(cp_jcc_taken(0xb, 0));			/* jnp */
}

/* A real library's code, through the ELF reader the probes use. */
struct lib {
	struct cp_elf_code *code;
	int fd;
};

/* .dynsym's value of @sym in @path's ELF, 0 if none. */
static __u64 dynsym(int fd, const char *sym)
{
	Elf *elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	Elf_Scn *scn = NULL;
	__u64 v = 0;

	while (elf && !v && (scn = elf_nextscn(elf, scn))) {
		Elf_Data *d;
		GElf_Shdr sh;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type != SHT_DYNSYM || !(d = elf_getdata(scn, NULL)))
			continue;
		for (size_t i = 0; i < d->d_size / sh.sh_entsize && !v; i++) {
			GElf_Sym s;
			const char *n;

			if (gelf_getsym(d, (int)i, &s) && (n = elf_strptr(elf, sh.sh_link, s.st_name)) &&
			    !strcmp(n, sym) && s.st_shndx != SHN_UNDEF)
				v = s.st_value;
		}
	}
	if (elf)
		elf_end(elf);
	return v;
}

/*
 * @path's @sym: exit points found, none failed; @want_off (function-relative)
 * is one of them, its direction @dir holding the result in @reg.
 */
static bool check_lib(const char *path, const char *sym, __u64 want_off, int dir, int reg,
		      struct cp_exit_points *ep)
{
	struct cp_exit_code src;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	struct cp_elf_code *code;
	const struct cp_exit_point *p = NULL;
	__u64 entry;
	int err;

	if (fd < 0) {
		print_message("# SKIP %s: absent\n", path);
		return false;
	}
	elf_version(EV_CURRENT);
	entry = dynsym(fd, sym);
	code = cp_elf_code__new(fd);
	assert_non_null(code);
	assert_true(entry != 0);
	src = cp_exit_code_of_elf(code);
	err = cp_exit_points_find(&src, entry, ep);
	if (err)
		fail_msg("%s %s: %s at %#llx", path, sym, ep->why, (unsigned long long)ep->why_at);
	for (int i = 0; i < ep->n && !p; i++)
		if (ep->pts[i].vaddr == entry + want_off)
			p = &ep->pts[i];
	if (want_off) {
		assert_non_null(p);
		assert_true(p->ret[dir]);
		assert_int_equal(p->reg[dir], reg);
		assert_int_equal(p->sp_off[dir], 0);
	}
	cp_elf_code__free(code);
	close(fd);
	return true;
}

#define LIBDIR "/usr/lib/x86_64-linux-gnu/"

/* tcmalloc minimal: _Znwm+0x65 jb, the result in r9 when it falls through (the fast path) */
static void test_tcmalloc_minimal(void **state)
{
	struct cp_exit_points ep;

	(void)state;
	if (!check_lib(LIBDIR "libtcmalloc_minimal.so.4", "_Znwm", 0x65, CP_EXIT_FALL,
		       CP_REG_R9, &ep))
		skip();
	print_message("# tcmalloc_minimal _Znwm: %d exit points, %u instructions\n", ep.n,
		      ep.insns);
	check_lib(LIBDIR "libtcmalloc_minimal.so.4", "_Znam", 0, 0, 0, &ep);
	check_lib(LIBDIR "libtcmalloc_minimal.so.4", "_ZnwmSt11align_val_t", 0, 0, 0, &ep);
	check_lib(LIBDIR "libtcmalloc_minimal.so.4", "_ZnamSt11align_val_t", 0, 0, 0, &ep);
}

static void test_tcmalloc_full(void **state)
{
	struct cp_exit_points ep;

	(void)state;
	if (!check_lib(LIBDIR "libtcmalloc.so.4", "_Znwm", 0, 0, 0, &ep))
		skip();
	check_lib(LIBDIR "libtcmalloc.so.4", "_Znam", 0, 0, 0, &ep);
	check_lib(LIBDIR "libtcmalloc.so.4", "_ZnwmSt11align_val_t", 0, 0, 0, &ep);
	check_lib(LIBDIR "libtcmalloc.so.4", "_ZnamSt11align_val_t", 0, 0, 0, &ep);
}

/* jemalloc: _Znwm+0x6e je, the result in r11 when it falls through */
static void test_jemalloc(void **state)
{
	struct cp_exit_points ep;

	(void)state;
	if (!check_lib(LIBDIR "libjemalloc.so.2", "_Znwm", 0x6e, CP_EXIT_FALL, CP_REG_R11, &ep))
		skip();
	print_message("# jemalloc _Znwm: %d exit points, %u instructions\n", ep.n, ep.insns);
	check_lib(LIBDIR "libjemalloc.so.2", "_Znam", 0, 0, 0, &ep);
	check_lib(LIBDIR "libjemalloc.so.2", "_ZnwmSt11align_val_t", 0, 0, 0, &ep);
	check_lib(LIBDIR "libjemalloc.so.2", "_ZnamSt11align_val_t", 0, 0, 0, &ep);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_jcc_both_ways),
		cmocka_unit_test(test_pushed_frame),
		cmocka_unit_test(test_straight_line_refused),
		cmocka_unit_test(test_load_refused),
		cmocka_unit_test(test_unprovable_refused),
		cmocka_unit_test(test_frame_slot_across_call),
		cmocka_unit_test(test_jcc_taken),
		cmocka_unit_test(test_tcmalloc_minimal),
		cmocka_unit_test(test_tcmalloc_full),
		cmocka_unit_test(test_jemalloc),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
