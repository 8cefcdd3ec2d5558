// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * What copies of targets' files cost (machine/copy_cost.h) and the memory
 * the profiler counts as its own (machine/self_mem.h): holes in ranges (a
 * table), a 32-bit ELF file's ranges, the pure judgements, then sparse files copied as sparse, an ELF
 * section in a hole refused, a copy past the limit refused, a memfd
 * nobody maps and a child's memory counted at a scan, a copy counted
 * between scans, and when a reading scans (a table).
 */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <cmocka.h>

#include "machine/copy_cost.h"
#include "machine/elf_hdr.h"
#include "machine/self_mem.h"
#include "machine/target_file.h"

#define KiB (1ull << 10)
#define MiB (1ull << 20)

static const struct hole_case {
	const char *what;
	struct cp_copy_range ranges[4];
	size_t nr;
	__u64 holes;
} hole_cases[] = {
	{"a range in data", {{0, 4096}}, 1, 0},
	{"a range in the hole", {{40000, 1000}}, 1, 1000},
	{"a range across data and hole", {{4000, 200}}, 1, 104},
	{"overlapping ranges counted once",
	 {{16384, 2 * MiB}, {16384 + KiB, MiB}},
	 2,
	 2 * MiB - 4096},
	{"ranges out of order", {{30000, 10}, {10, 10}, {9000, 100}}, 3, 10 + 100},
	{"empty ranges", {{50000, 0}}, 1, 0},
};

/* data at [0, 4096) and [16384, 20480): the rest of the file is a hole */
static const struct cp_copy_range data[] = {{0, 4096}, {16384, 4096}};

static void test_hole_bytes(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(hole_cases) / sizeof(hole_cases[0]); i++) {
		struct cp_copy_range r[4];

		memcpy(r, hole_cases[i].ranges, sizeof(r));
		if (cp_copy_hole_bytes(r, hole_cases[i].nr, data, 2) != hole_cases[i].holes)
			fail_msg("%s: %llu hole bytes, not %llu", hole_cases[i].what,
				 (unsigned long long)cp_copy_hole_bytes(r, hole_cases[i].nr, data,
									2),
				 (unsigned long long)hole_cases[i].holes);
	}
}

static void test_alone_and_fits(void **state)
{
	pid_t pids[] = {10, 11, 12}, ppids[] = {1, 10, 10}, other[] = {1, 10, 5};

	(void)state;
	assert_true(cp_self_mem_alone(10, 0, pids, ppids, 3));	 /* itself and its children */
	assert_false(cp_self_mem_alone(10, 0, pids, other, 3));	 /* 12 is another's */
	assert_false(cp_self_mem_alone(11, 0, pids, ppids, 3));
	assert_false(cp_self_mem_alone(10, 12, pids, ppids, 3)); /* 12 is -- CMD, a target */
	assert_true(cp_self_mem_alone(10, 13, pids, ppids, 3));
	assert_true(cp_self_mem_fits(100, 50, 0)); /* no limit */
	assert_true(cp_self_mem_fits(100, 156, 256));
	assert_false(cp_self_mem_fits(100, 157, 256));
	assert_false(cp_self_mem_fits(300, 1, 256));
	assert_false(cp_self_mem_fits(100, UINT64_MAX, 256)); /* no overflow */
	/* copies leave an eighth of the limit to the growth nobody admits */
	assert_int_equal(cp_self_mem_copy_limit(0), 0); /* no limit stays none */
	assert_int_equal(cp_self_mem_copy_limit(128ull << 20), 112ull << 20);
	assert_false(cp_self_mem_fits(100ull << 20, 13ull << 20, cp_self_mem_copy_limit(128ull << 20)));
	assert_true(cp_self_mem_fits(100ull << 20, 12ull << 20, cp_self_mem_copy_limit(128ull << 20)));
}

#define SEC 1000000000ull

static const struct scan_case {
	const char *what;
	__u64 last, now, estimate, limit;
	bool due;
} scan_cases[] = {
	{"never scanned", 0, 5 * SEC, 10 * MiB, 0, true},
	{"just scanned", 100 * SEC, 100 * SEC + 1, 10 * MiB, 256 * MiB, false},
	{"scanned 4.9 s ago", 100 * SEC, 104 * SEC + 900000000ull, 10 * MiB, 256 * MiB, false},
	{"scanned 5 s ago", 100 * SEC, 105 * SEC, 10 * MiB, 256 * MiB, true},
	{"the estimate at the limit", 100 * SEC, 101 * SEC, 256 * MiB, 256 * MiB, false},
	{"the estimate over the limit", 100 * SEC, 101 * SEC, 256 * MiB + 1, 256 * MiB, true},
	{"over, no limit", 100 * SEC, 101 * SEC, 1ull << 40, 0, false},
	{"the clock behind the scan", 100 * SEC, 99 * SEC, 10 * MiB, 0, true},
};

static void test_scan_due(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(scan_cases) / sizeof(scan_cases[0]); i++) {
		const struct scan_case *c = &scan_cases[i];

		if (cp_self_mem_scan_due(c->last, c->now, c->estimate, c->limit) != c->due)
			fail_msg("%s: due %d, not %d", c->what, !c->due, c->due);
	}
}

static char dir[] = "/tmp/cp-copy-cost-XXXXXX";
static char path[sizeof(dir) + 16];

/* A file of @size bytes, all a hole but @data bytes of @c at 0 (an ELF header when @eh). */
static int make_sparse(__u64 size, const void *eh, size_t eh_len, __u64 data)
{
	char *buf = malloc(data);
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);

	assert_non_null(buf);
	assert_true(fd >= 0);
	memset(buf, 'x', data);
	if (eh)
		memcpy(buf, eh, eh_len);
	assert_int_equal(pwrite(fd, buf, data, 0), (ssize_t)data);
	assert_int_equal(ftruncate(fd, (off_t)size), 0);
	free(buf);
	return fd;
}

static __u64 blocks_bytes(int fd)
{
	struct stat st;

	assert_int_equal(fstat(fd, &st), 0);
	return (__u64)st.st_blocks * 512;
}

static void test_sparse_copy_stays_sparse(void **state)
{
	enum cp_tf_refusal why;
	char buf[16];
	int fd, mfd;

	(void)state;
	fd = make_sparse(200 * MiB, NULL, 0, 16 * KiB);
	mfd = cp_tf_copy(fd, 200 * MiB, &why);
	assert_true(mfd >= 0);
	assert_int_equal(why, CP_TF_OK);
	assert_true(blocks_bytes(mfd) <= 64 * KiB); /* not 200 MiB */
	assert_int_equal(lseek(mfd, 0, SEEK_END), 200 * MiB);
	assert_int_equal(pread(mfd, buf, sizeof(buf), 0), sizeof(buf));
	assert_memory_equal(buf, "xxxxxxxxxxxxxxxx", sizeof(buf));
	assert_int_equal(pread(mfd, buf, sizeof(buf), 100 * MiB), sizeof(buf));
	assert_memory_equal(buf, "\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0\0", sizeof(buf));
	close(mfd);
	close(fd);
}

/* An ELF header and section table at 0: section 1 at @off, @size bytes of PROGBITS. */
static void elf_with_section(unsigned char *img, size_t len, __u64 off, __u64 size)
{
	Elf64_Ehdr *eh = (Elf64_Ehdr *)img;
	Elf64_Shdr *sh = (Elf64_Shdr *)(img + sizeof(*eh));

	memset(img, 0, len);
	memcpy(eh->e_ident, ELFMAG, SELFMAG);
	eh->e_ident[EI_CLASS] = ELFCLASS64;
	eh->e_ident[EI_DATA] = ELFDATA2LSB;
	eh->e_ident[EI_VERSION] = EV_CURRENT;
	eh->e_type = ET_DYN;
	eh->e_version = EV_CURRENT;
	eh->e_ehsize = sizeof(*eh);
	eh->e_shoff = sizeof(*eh);
	eh->e_shentsize = sizeof(*sh);
	eh->e_shnum = 2;
	sh[1].sh_type = SHT_PROGBITS;
	sh[1].sh_offset = off;
	sh[1].sh_size = size;
}

static void test_section_in_a_hole(void **state)
{
	unsigned char img[sizeof(Elf64_Ehdr) + 2 * sizeof(Elf64_Shdr)];
	__u64 before[CP_TF_NR], after[CP_TF_NR];
	enum cp_tf_refusal why;
	int fd, mfd;

	(void)state;
	/* 1 MiB of section in the hole: within the bound, copied */
	elf_with_section(img, sizeof(img), 8 * MiB, MiB);
	fd = make_sparse(200 * MiB, img, sizeof(img), 4 * KiB);
	mfd = cp_tf_copy(fd, 200 * MiB, &why);
	assert_true(mfd >= 0);
	close(mfd);
	close(fd);
	/* 150 MiB of it: what libelf would fault in, refused and counted */
	elf_with_section(img, sizeof(img), 8 * MiB, 150 * MiB);
	fd = make_sparse(200 * MiB, img, sizeof(img), 4 * KiB);
	cp_tf_refusals(before);
	assert_true(cp_tf_copy(fd, 200 * MiB, &why) < 0);
	assert_int_equal(why, CP_TF_MEMORY);
	cp_tf_refusals(after);
	assert_int_equal(after[CP_TF_MEMORY] - before[CP_TF_MEMORY], 1);
	assert_string_equal(cp_tf_refusal_key(CP_TF_MEMORY), "memory");
	close(fd);
}

static void test_copy_past_the_limit(void **state)
{
	struct cp_self_mem m;
	enum cp_tf_refusal why;
	int fd, mfd;

	(void)state;
	assert_int_equal(cp_self_mem_read(&m), 0);
	cp_self_mem_set_limit(m.bytes + 8 * MiB);
	fd = make_sparse(32 * MiB, NULL, 0, 16 * MiB); /* 16 MiB of data */
	assert_true(cp_tf_copy(fd, 32 * MiB, &why) < 0);
	assert_int_equal(why, CP_TF_MEMORY);
	cp_self_mem_set_limit(m.bytes + 64 * MiB);
	mfd = cp_tf_copy(fd, 32 * MiB, &why);
	assert_true(mfd >= 0);
	cp_self_mem_set_limit(0);
	close(mfd);
	close(fd);
}

/* A memfd nobody maps is memory the profiler holds: counted. */
static void test_unmapped_memfd_counted(void **state)
{
	struct cp_self_mem before, after;
	char *buf = calloc(1, MiB);
	int mfd = memfd_create("counted", MFD_CLOEXEC);

	(void)state;
	assert_non_null(buf);
	assert_true(mfd >= 0);
	assert_int_equal(cp_self_mem_read(&before), 0);
	memset(buf, 1, MiB);
	for (int i = 0; i < 48; i++)
		assert_int_equal(pwrite(mfd, buf, MiB, (off_t)i * MiB), (ssize_t)MiB);
	/* made outside the copies' path: seen at the next scan (at most 5 s later) */
	assert_int_equal(cp_self_mem_scan(&after), 0);
	assert_true(after.scanned);
	if (after.bytes < before.bytes + 40 * MiB)
		fail_msg("%s: %llu MiB, then %llu MiB with a 48 MiB memfd",
			 cp_self_mem_counter_name(after.counter),
			 (unsigned long long)(before.bytes / MiB),
			 (unsigned long long)(after.bytes / MiB));
	assert_true(after.peak_bytes >= after.bytes);
	close(mfd);
	free(buf);
}

/*
 * A copy is counted by the next reading, scan or not (what it costs was
 * admitted); once let go, the next scan no longer counts it.
 */
static void test_copy_counted_between_scans(void **state)
{
	struct cp_self_mem before, with, quick, gone;
	enum cp_tf_refusal why;
	int fd, mfd;

	(void)state;
	fd = make_sparse(32 * MiB, NULL, 0, 24 * MiB); /* 24 MiB of data */
	assert_int_equal(cp_self_mem_scan(&before), 0);
	mfd = cp_tf_copy(fd, 32 * MiB, &why);
	assert_true(mfd >= 0);
	assert_int_equal(cp_self_mem_read(&with), 0);
	if (before.counter == CP_SELF_MEM_PROC)
		assert_false(with.scanned); /* scanned just before: not due */
	if (with.bytes < before.bytes + 20 * MiB)
		fail_msg("%s: %llu MiB, then %llu MiB with a 24 MiB copy, not scanned",
			 cp_self_mem_counter_name(with.counter),
			 (unsigned long long)(before.bytes / MiB),
			 (unsigned long long)(with.bytes / MiB));
	close(mfd);
	cp_tf_kept_drop(); /* the copy kept for reuse too, as a shrink lets it go */
	/* not scanned: the copy let go may still be counted, never less than a scan says */
	assert_int_equal(cp_self_mem_read(&quick), 0);
	assert_int_equal(cp_self_mem_scan(&gone), 0);
	assert_true(quick.bytes + 4 * MiB >= gone.bytes);
	if (gone.bytes + 16 * MiB > with.bytes)
		fail_msg("%s: %llu MiB with a 24 MiB copy, %llu MiB once it was let go",
			 cp_self_mem_counter_name(gone.counter),
			 (unsigned long long)(with.bytes / MiB),
			 (unsigned long long)(gone.bytes / MiB));
	close(fd);
}

/* A child's memory (a helper the profiler started) is the profiler's too; -- CMD's is not. */
static void test_child_counted(void **state)
{
	struct cp_self_mem before, after, as_target;
	int fds[2];
	char c;
	pid_t pid;

	(void)state;
	assert_int_equal(pipe(fds), 0);
	assert_int_equal(cp_self_mem_read(&before), 0);
	pid = fork();
	assert_true(pid >= 0);
	if (pid == 0) {
		volatile char *p = malloc(48 * MiB); /* volatile: kept, though never read */

		for (size_t off = 0; p && off < 48 * MiB; off += 4096)
			p[off] = 1;
		if (write(fds[1], "r", 1) != 1)
			_exit(1);
		pause();
		_exit(0);
	}
	assert_int_equal(read(fds[0], &c, 1), 1);
	/* children are counted at a scan */
	assert_int_equal(cp_self_mem_scan(&after), 0);
	/* the same child as the command of -- CMD: a target's memory, not the profiler's */
	cp_self_mem_set_command(pid);
	assert_int_equal(cp_self_mem_scan(&as_target), 0);
	cp_self_mem_set_command(0);
	kill(pid, SIGKILL);
	waitpid(pid, NULL, 0);
	close(fds[0]);
	close(fds[1]);
	if (after.bytes < before.bytes + 40 * MiB)
		fail_msg("%s: %llu MiB, then %llu MiB with a 48 MiB child",
			 cp_self_mem_counter_name(after.counter),
			 (unsigned long long)(before.bytes / MiB),
			 (unsigned long long)(after.bytes / MiB));
	if (as_target.bytes >= before.bytes + 40 * MiB)
		fail_msg("%s: %llu MiB, then %llu MiB with a 48 MiB child that is the command",
			 cp_self_mem_counter_name(as_target.counter),
			 (unsigned long long)(before.bytes / MiB),
			 (unsigned long long)(as_target.bytes / MiB));
}

static int setup(void **state)
{
	(void)state;
	if (!mkdtemp(dir))
		return -1;
	snprintf(path, sizeof(path), "%s/f", dir);
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(path);
	rmdir(dir);
	return 0;
}

/* True when one of @r's @n ranges is [@off, @off + @len) exactly. */
static bool has_range(const struct cp_copy_range *r, size_t n, __u64 off, __u64 len)
{
	for (size_t i = 0; i < n; i++)
		if (r[i].off == off && r[i].len == len)
			return true;
	return false;
}

/*
 * A 32-bit ELF file, laid out by hand: its ranges are the 32-bit sizes of
 * its header and tables, a data section and a note segment, and its code
 * section goes to the code list; the same bytes with the other byte order
 * count as the whole file, and a header cut short is no header.
 */
static void test_elf32_ranges(void **state)
{
	unsigned char img[512] = {0};
	Elf32_Ehdr eh = {.e_phoff = 400, .e_shoff = 52, .e_phnum = 1, .e_shnum = 3,
			 .e_phentsize = sizeof(Elf32_Phdr), .e_shentsize = sizeof(Elf32_Shdr)};
	Elf32_Shdr sh[3] = {{0},
			    {.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC, .sh_offset = 200,
			     .sh_size = 16},
			    {.sh_type = SHT_PROGBITS, .sh_flags = SHF_ALLOC | SHF_EXECINSTR,
			     .sh_offset = 300, .sh_size = 32}};
	Elf32_Phdr ph = {.p_type = PT_NOTE, .p_offset = 240, .p_filesz = 20};
	struct cp_copy_range *out, *code;
	size_t nr, nr_code;
	__u64 heap = 0;
	Elf64_Ehdr e64;
	bool is64 = true;
	char path[] = "/tmp/cp_elf32_XXXXXX";
	int fd = mkstemp(path);

	(void)state;
	assert_true(fd >= 0);
	unlink(path);
	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS32;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	memcpy(img, &eh, sizeof(eh));
	memcpy(img + 52, sh, sizeof(sh));
	memcpy(img + 400, &ph, sizeof(ph));
	assert_true(cp_elf_ehdr(img, sizeof(img), &e64, &is64));
	assert_false(is64);
	assert_int_equal(e64.e_shoff, 52);
	assert_int_equal(e64.e_shnum, 3);
	assert_false(cp_elf_ehdr(img, sizeof(Elf32_Ehdr) - 1, &e64, &is64));
	assert_int_equal(pwrite(fd, img, sizeof(img), 0), sizeof(img));
	assert_int_equal(cp_copy_elf_ranges(fd, sizeof(img), &out, &nr, &heap, &code, &nr_code), 0);
	assert_true(has_range(out, nr, 0, sizeof(Elf32_Ehdr)));
	assert_true(has_range(out, nr, 52, 3 * sizeof(Elf32_Shdr)));
	assert_true(has_range(out, nr, 400, sizeof(Elf32_Phdr)));
	assert_true(has_range(out, nr, 200, 16));
	assert_true(has_range(out, nr, 240, 20));
	assert_false(has_range(out, nr, 300, 32));
	assert_int_equal(nr_code, 1);
	assert_true(has_range(code, nr_code, 300, 32));
	/* libelf's heap: three section headers and one program header */
	assert_int_equal(heap, 3 * CP_COPY_SECTION_HEAP_BYTES + CP_COPY_SEGMENT_HEAP_BYTES);
	free(out);
	free(code);
	/* big-endian: not this machine's, read whole, its heap as if all were section headers */
	img[EI_DATA] = ELFDATA2MSB;
	assert_int_equal(pwrite(fd, img, sizeof(img), 0), sizeof(img));
	heap = 0;
	assert_int_equal(cp_copy_elf_ranges(fd, sizeof(img), &out, &nr, &heap, NULL, NULL), 0);
	assert_int_equal(nr, 1);
	assert_true(has_range(out, nr, 0, sizeof(img)));
	assert_int_equal(heap, sizeof(img) / sizeof(Elf32_Shdr) * CP_COPY_SECTION_HEAP_BYTES);
	free(out);
	close(fd);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_hole_bytes),
		cmocka_unit_test(test_elf32_ranges),
		cmocka_unit_test(test_alone_and_fits),
		cmocka_unit_test(test_scan_due),
		cmocka_unit_test(test_sparse_copy_stays_sparse),
		cmocka_unit_test(test_section_in_a_hole),
		cmocka_unit_test(test_copy_past_the_limit),
		cmocka_unit_test(test_unmapped_memfd_counted),
		cmocka_unit_test(test_copy_counted_between_scans),
		cmocka_unit_test(test_child_counted),
	};

	return cmocka_run_group_tests(tests, setup, teardown);
}
