// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Files a target names (machine/target_file.h): which files are accepted
 * (cp_tf_judge(), a table), what an open error means, and that the opener
 * turns a FIFO, a symlink and a replaced file away without blocking, and
 * hands out sealed copies. Then the compressed-section sum of
 * symbols/elf_guard.h over ELF files libelf writes here.
 */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sched.h>
#include <signal.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <sys/sysmacros.h>
#include <gelf.h>
#include <cmocka.h>

#include "machine/copy_cost.h"
#include "machine/target_file.h"
#include "symbols/elf_guard.h"

#define REG (S_IFREG | 0644)

static const struct judge_case {
	const char *what;
	struct cp_tf_stat st;
	struct cp_tf_want want;
	enum cp_tf_refusal why;
} judge_cases[] = {
	{"the mapped file",
	 {REG, 8, 1, 42, 4096, 0},
	 {.ino = 42, .dev_major = 8, .dev_minor = 1},
	 CP_TF_OK},
	{"any regular file", {REG, 8, 1, 42, 4096, 0}, {0}, CP_TF_OK},
	{"a FIFO", {S_IFIFO | 0644, 8, 1, 42, 0, 0}, {0}, CP_TF_NOT_REGULAR},
	{"a character device", {S_IFCHR | 0666, 0, 5, 7, 0, 0}, {0}, CP_TF_NOT_REGULAR},
	{"a directory", {S_IFDIR | 0755, 8, 1, 42, 0, 0}, {0}, CP_TF_NOT_REGULAR},
	{"a symlink (O_PATH | O_NOFOLLOW)", {S_IFLNK | 0777, 8, 1, 42, 9, 0}, {0}, CP_TF_SYMLINK},
	{"another inode",
	 {REG, 8, 1, 43, 4096, 0},
	 {.ino = 42, .dev_major = 8, .dev_minor = 1},
	 CP_TF_REPLACED},
	{"another device",
	 {REG, 8, 2, 42, 4096, 0},
	 {.ino = 42, .dev_major = 8, .dev_minor = 1},
	 CP_TF_REPLACED},
	{"at the default cap", {REG, 8, 1, 42, CP_TF_MAX_BYTES, 0}, {0}, CP_TF_OK},
	{"over the default cap", {REG, 8, 1, 42, CP_TF_MAX_BYTES + 1, 0}, {0}, CP_TF_TOO_BIG},
	{"over a cap given", {REG, 8, 1, 42, 4097, 0}, {.max_bytes = 4096}, CP_TF_TOO_BIG},
};

static void test_judge(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(judge_cases) / sizeof(judge_cases[0]); i++) {
		const struct judge_case *c = &judge_cases[i];
		enum cp_tf_refusal got = cp_tf_judge(&c->st, &c->want);

		if (got != c->why)
			fail_msg("%s: %s, want %s", c->what, cp_tf_refusal_name(got),
				 cp_tf_refusal_name(c->why));
	}
}

static void test_errno_refusals(void **state)
{
	(void)state;
	assert_int_equal(cp_tf_errno_refusal(ENOENT), CP_TF_GONE);
	assert_int_equal(cp_tf_errno_refusal(ESRCH), CP_TF_GONE);
	assert_int_equal(cp_tf_errno_refusal(ELOOP), CP_TF_SYMLINK);
	assert_int_equal(cp_tf_errno_refusal(EXDEV), CP_TF_ESCAPE);
	assert_int_equal(cp_tf_errno_refusal(EMFILE), CP_TF_NO_FDS);
	assert_int_equal(cp_tf_errno_refusal(ENFILE), CP_TF_NO_FDS);
	assert_int_equal(cp_tf_errno_refusal(EACCES), CP_TF_DENIED);
	/* every reason has a name and a JSON key */
	for (int i = 0; i < CP_TF_NR; i++) {
		assert_non_null(cp_tf_refusal_name(i));
		assert_null(strchr(cp_tf_refusal_key(i), ' '));
	}
}

static char dir[] = "/tmp/cp_target_fileXXXXXX";

static void put_file(const char *name, const char *text)
{
	char path[256];
	FILE *f;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	f = fopen(path, "w");
	assert_non_null(f);
	fputs(text, f);
	fclose(f);
}

/* @name in dir as cp_tf_open() finds a path the profiler's root holds. */
static int open_named(const char *name, const struct cp_tf_want *want, enum cp_tf_refusal *why)
{
	char path[256];
	struct cp_tf_where w = {.path = path};
	struct cp_tf_stat st;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return cp_tf_open(&w, want, &st, why);
}

static void test_open_refuses(void **state)
{
	struct cp_tf_want any = {0}, follow = {.follow = true}, other = {.ino = 1};
	__u64 before[CP_TF_NR], after[CP_TF_NR];
	char path[256];
	enum cp_tf_refusal why;
	int fd;

	(void)state;
	assert_non_null(mkdtemp(dir));
	put_file("lib.so", "not really ELF");
	snprintf(path, sizeof(path), "%s/fifo", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	snprintf(path, sizeof(path), "%s/link", dir);
	assert_int_equal(symlink("lib.so", path), 0);
	cp_tf_refusals(before);

	fd = open_named("lib.so", &any, &why);
	assert_true(fd >= 0);
	assert_int_equal(why, CP_TF_OK);
	close(fd);
	/* no writer: a blocking open would never return */
	assert_true(open_named("fifo", &any, &why) < 0);
	assert_int_equal(why, CP_TF_NOT_REGULAR);
	assert_true(open_named("link", &any, &why) < 0);
	assert_int_equal(why, CP_TF_SYMLINK);
	fd = open_named("link", &follow, &why); /* a path the user named */
	assert_true(fd >= 0);
	close(fd);
	assert_true(open_named("lib.so", &other, &why) < 0);
	assert_int_equal(why, CP_TF_REPLACED);
	assert_true(open_named("gone", &any, &why) < 0);
	assert_int_equal(why, CP_TF_GONE);

	cp_tf_refusals(after);
	assert_int_equal(after[CP_TF_NOT_REGULAR] - before[CP_TF_NOT_REGULAR], 1);
	assert_int_equal(after[CP_TF_SYMLINK] - before[CP_TF_SYMLINK], 1);
	assert_int_equal(after[CP_TF_REPLACED] - before[CP_TF_REPLACED], 1);
	assert_int_equal(after[CP_TF_GONE], 0); /* not hostile, not counted */
}

/*
 * cp_tf_open() in two steps: the found descriptor is O_PATH (it reads
 * nothing) and fstat() of it is the file's; the reopened one reads the
 * file. A reopen whose stated file is another inode is refused as replaced
 * and counted once.
 */
static void test_find_then_reopen(void **state)
{
	char path[256], buf[8];
	struct cp_tf_where w = {.path = path};
	struct cp_tf_want any = {0};
	__u64 before[CP_TF_NR], after[CP_TF_NR];
	struct cp_tf_stat st, other;
	enum cp_tf_refusal why;
	struct stat s;
	int pfd, fd;

	(void)state;
	put_file("found.so", "contents"); /* in test_open_refuses' dir */
	snprintf(path, sizeof(path), "%s/found.so", dir);
	assert_int_equal(stat(path, &s), 0);
	cp_tf_refusals(before);
	pfd = cp_tf_find(&w, &any, &st, &why);
	assert_true(pfd >= 0);
	assert_int_equal(why, CP_TF_OK);
	assert_true(fcntl(pfd, F_GETFL) & O_PATH);
	assert_int_equal(read(pfd, buf, sizeof(buf)), -1);
	assert_int_equal(errno, EBADF);
	assert_int_equal(st.ino, s.st_ino);
	assert_int_equal(st.size, 8);

	fd = cp_tf_reopen(pfd, &st, &why);
	assert_true(fd >= 0);
	assert_int_equal(why, CP_TF_OK);
	assert_int_equal(pread(fd, buf, sizeof(buf), 0), 8);
	assert_memory_equal(buf, "contents", 8);
	close(fd);

	other = st;
	other.ino++;
	assert_int_equal(cp_tf_reopen(pfd, &other, &why), -ESTALE);
	assert_int_equal(why, CP_TF_REPLACED);
	close(pfd);
	cp_tf_refusals(after);
	assert_int_equal(after[CP_TF_REPLACED] - before[CP_TF_REPLACED], 1);
}

/*
 * A file found by its maps line's device and inode is known by them for a
 * while (cp_tf_seen()): its content's key is what fstat() of the file says,
 * and nothing is opened to say it. Another device, a path the user named, a
 * foreign file or no inode are never answered so. A file changed in place
 * keeps its old key until the next find, which takes the new one. Only the
 * very inode the line names is kept for it, and only a file of root's that
 * no one else may write.
 */
static void test_seen_by_maps_line(void **state)
{
	char path[256];
	__u64 before[CP_TF_NR], after[CP_TF_NR];
	struct cp_tf_want want, other;
	struct cp_copy_key key, now;
	struct cp_tf_where w;
	struct cp_tf_stat st;
	enum cp_tf_refusal why;
	struct stat s;
	void *map;
	int fd, pfd;

	(void)state;
	if (geteuid())
		skip(); /* only root's files are kept, and the file is chown()ed */
	put_file("seen.so", "first"); /* in test_open_refuses' dir */
	snprintf(path, sizeof(path), "%s/seen.so", dir);
	assert_int_equal(chmod(path, 0644), 0); /* whatever the umask */
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	assert_int_equal(stat(path, &s), 0);
	w = (struct cp_tf_where){
		.pid = getpid(),
		.path = path,
		.start = (__u64)(uintptr_t)map,
		.end = (__u64)(uintptr_t)map + 4096,
	};
	want = (struct cp_tf_want){
		.ino = s.st_ino, .dev_major = major(s.st_dev), .dev_minor = minor(s.st_dev)};
	cp_tf_refusals(before);

	pfd = cp_tf_find(&w, &want, &st, &why); /* through map_files */
	assert_true(pfd >= 0);
	close(pfd);
	memset(&key, 0, sizeof(key));
	assert_true(cp_tf_seen(&want, &st, &key));
	assert_int_equal(key.dev, s.st_dev);
	assert_int_equal(key.ino, s.st_ino);
	assert_int_equal(key.size, 5);
	assert_int_equal(key.mtime_ns,
			 (__u64)s.st_mtim.tv_sec * 1000000000ull + (__u64)s.st_mtim.tv_nsec);
	assert_int_equal(st.ino, s.st_ino);
	assert_int_equal(st.size, 5);

	other = want;
	other.dev_minor ^= 1;
	assert_false(cp_tf_seen(&other, &st, &now));
	other = want;
	other.follow = true;
	assert_false(cp_tf_seen(&other, &st, &now));
	other = want;
	other.foreign = true;
	assert_false(cp_tf_seen(&other, &st, &now));
	other = (struct cp_tf_want){0};
	assert_false(cp_tf_seen(&other, &st, &now));

	/* changed in place, the same inode: the old key stands until the next find */
	put_file("seen.so", "second text");
	assert_true(cp_tf_seen(&want, &st, &now));
	assert_true(cp_copy_key_equal(&now, &key));
	pfd = cp_tf_find(&w, &want, &st, &why);
	assert_true(pfd >= 0);
	close(pfd);
	assert_true(cp_tf_seen(&want, &st, &now));
	assert_int_equal(now.ino, s.st_ino);
	assert_int_equal(now.size, 11);
	assert_false(cp_copy_key_equal(&now, &key));
	/* past its time, not known */
	cp_tf_seen_for(0);
	assert_false(cp_tf_seen(&want, &st, &now));
	cp_tf_seen_for(CP_TF_SEEN_NS);
	assert_true(cp_tf_seen(&want, &st, &now));

	/*
	 * a line whose inode is not the mapped file's (a range mapped anew
	 * since the maps were read): found through map_files, never kept for it
	 */
	other = want;
	other.ino = s.st_ino + 1000003;
	pfd = cp_tf_find(&w, &other, &st, &why);
	assert_true(pfd >= 0);
	close(pfd);
	assert_false(cp_tf_seen(&other, &st, &now));
	/* a tenant's file, or one its group may write: found, never kept (what was, forgotten) */
	assert_int_equal(chown(path, 65534, 65534), 0);
	pfd = cp_tf_find(&w, &want, &st, &why);
	assert_true(pfd >= 0);
	close(pfd);
	assert_false(cp_tf_seen(&want, &st, &now));
	assert_int_equal(chown(path, 0, 0), 0);
	assert_int_equal(chmod(path, 0664), 0);
	pfd = cp_tf_find(&w, &want, &st, &why);
	assert_true(pfd >= 0);
	close(pfd);
	assert_false(cp_tf_seen(&want, &st, &now));

	cp_tf_refusals(after);
	assert_memory_equal(after, before, sizeof(after));
	munmap(map, 4096);
}

static void test_copy_is_sealed(void **state)
{
	struct cp_tf_where w;
	struct cp_tf_want want = {0};
	struct cp_tf_stat st;
	enum cp_tf_refusal why;
	char path[256], buf[32];
	int mfd, seals;

	(void)state;
	snprintf(path, sizeof(path), "%s/lib.so", dir);
	w = (struct cp_tf_where){.path = path};
	mfd = cp_tf_open_copy(&w, &want, &st, &why);
	assert_true(mfd >= 0);
	assert_int_equal(st.size, 14);
	assert_int_equal(pread(mfd, buf, sizeof(buf), 0), 14);
	assert_memory_equal(buf, "not really ELF", 14);
	seals = fcntl(mfd, F_GET_SEALS);
	assert_true(seals & F_SEAL_SHRINK);
	assert_true(seals & F_SEAL_WRITE);
	assert_true(seals & F_SEAL_GROW);
	assert_true(ftruncate(mfd, 0) < 0); /* what a tenant cannot do to the copy */
	close(mfd);
	/* fewer bytes than judged: the file shrank between fstat and the copy */
	mfd = open(path, O_RDONLY);
	assert_true(cp_tf_copy(mfd, 4096, &why) < 0);
	assert_int_equal(why, CP_TF_SHRUNK);
	close(mfd);
}

/* Extents less cut ranges: pieces split off, extents cut whole dropped, no split past the room. */
static void test_ranges_minus(void **state)
{
	struct cp_copy_range ext[8] = {{0, 100}, {200, 100}, {400, 100}, {800, 50}};
	struct cp_copy_range cut[] = {{600, 100}, {50, 200}, {450, 10}, {790, 100}};
	struct cp_copy_range one[1] = {{0, 100}}, mid[] = {{40, 20}};

	(void)state;
	/* [0,50) [250,300) [400,450) [460,500); [800,850) is cut whole */
	assert_int_equal(cp_copy_ranges_minus(ext, 4, 8, cut, 4), 4);
	assert_int_equal(ext[0].off, 0);
	assert_int_equal(ext[0].len, 50);
	assert_int_equal(ext[1].off, 250);
	assert_int_equal(ext[1].len, 50);
	assert_int_equal(ext[2].off, 400);
	assert_int_equal(ext[2].len, 50);
	assert_int_equal(ext[3].off, 460);
	assert_int_equal(ext[3].len, 40);
	/* no room for [0,40) and [60,100): the extent stays whole, copied */
	assert_int_equal(cp_copy_ranges_minus(one, 1, 1, mid, 1), 1);
	assert_int_equal(one[0].off, 0);
	assert_int_equal(one[0].len, 100);
}

/* Whether @len bytes of @fd at @off are all zero. */
static bool zeros_at(int fd, __u64 off, __u64 len)
{
	char buf[4096];

	while (len) {
		size_t n = len < sizeof(buf) ? (size_t)len : sizeof(buf);

		assert_int_equal(pread(fd, buf, n, (off_t)off), (ssize_t)n);
		for (size_t i = 0; i < n; i++)
			if (buf[i])
				return false;
		off += n;
		len -= n;
	}
	return true;
}

/*
 * A copy for the symbolizer (cp_tf_want.no_code) leaves the code sections
 * holes and copies the rest: the profiler's own .text (a file of ours, its
 * code large enough to fill pages of its own) reads as zeros, its
 * .eh_frame and .symtab as the file's; a whole copy of the same file, kept
 * apart, has the code.
 */
static void test_copy_without_code(void **state)
{
	const char *build = getenv("CP_BUILD") ? getenv("CP_BUILD") : "build";
	struct cp_tf_want want = {0};
	struct cp_tf_stat st;
	enum cp_tf_refusal why;
	char path[4096];
	int fd, part, whole, seen = 0;
	struct stat ps, ws;
	Elf_Scn *scn = NULL;
	size_t shstr;
	Elf *elf;

	(void)state;
	snprintf(path, sizeof(path), "%s/cacheperf-bpf", build);
	struct cp_tf_where w = {.path = path};

	want.no_code = true;
	part = cp_tf_open_copy(&w, &want, &st, &why);
	want.no_code = false;
	whole = cp_tf_open_copy(&w, &want, &st, &why);
	fd = open(path, O_RDONLY | O_CLOEXEC);
	assert_true(part >= 0 && whole >= 0 && fd >= 0);
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_READ, NULL);
	assert_non_null(elf);
	assert_int_equal(elf_getshdrstrndx(elf, &shstr), 0);
	while ((scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;
		char a[256], b[256];
		size_t n;

		assert_non_null(gelf_getshdr(scn, &sh));
		name = elf_strptr(elf, shstr, sh.sh_name);
		if (!name || sh.sh_type == SHT_NOBITS || !sh.sh_size)
			continue;
		if (!strcmp(name, ".text")) {
			assert_true(zeros_at(part, sh.sh_offset, sh.sh_size));
			assert_false(zeros_at(whole, sh.sh_offset, sh.sh_size));
			seen++;
		} else if (!strcmp(name, ".eh_frame") || !strcmp(name, ".symtab")) {
			n = sh.sh_size < sizeof(a) ? (size_t)sh.sh_size : sizeof(a);
			assert_int_equal(pread(part, a, n, (off_t)sh.sh_offset), (ssize_t)n);
			assert_int_equal(pread(fd, b, n, (off_t)sh.sh_offset), (ssize_t)n);
			assert_memory_equal(a, b, n);
			seen++;
		}
	}
	assert_int_equal(seen, 3);
	/* the holes hold nothing: the part copy takes fewer pages */
	assert_int_equal(fstat(part, &ps), 0);
	assert_int_equal(fstat(whole, &ws), 0);
	assert_true(ps.st_blocks < ws.st_blocks);
	elf_end(elf);
	close(fd);
	close(part);
	close(whole);
}

/* @mfd's first @n bytes equal @text, and it is sealed. */
static void assert_copy(int mfd, const char *text, size_t n)
{
	char buf[64] = {0};

	assert_true(mfd >= 0);
	assert_int_equal(pread(mfd, buf, sizeof(buf), 0), (ssize_t)n);
	assert_memory_equal(buf, text, n);
	assert_true(fcntl(mfd, F_GET_SEALS) & F_SEAL_WRITE);
}

/* A process that maps @path at @addr (inherited) and waits to be killed. */
static pid_t mapper(void)
{
	pid_t pid = fork();

	assert_true(pid >= 0);
	if (!pid) {
		pause();
		_exit(0);
	}
	return pid;
}

/*
 * Two processes mapping the same library: one copy, the second reader
 * reuses it on a descriptor of its own (its offset not the first's).
 */
static void test_same_file_copied_once(void **state)
{
	struct cp_copy_stats a, b;
	struct cp_tf_want want = {0};
	struct cp_tf_stat st;
	enum cp_tf_refusal why;
	char path[256], c;
	pid_t p1, p2;
	void *map;
	int fd, m1, m2;

	(void)state;
	put_file("shared.so", "the shared library's bytes");
	snprintf(path, sizeof(path), "%s/shared.so", dir);
	fd = open(path, O_RDONLY);
	map = mmap(NULL, 4096, PROT_READ, MAP_PRIVATE, fd, 0);
	assert_true(map != MAP_FAILED);
	close(fd);
	p1 = mapper();
	p2 = mapper();
	cp_tf_kept_stats(&a);
	m1 = cp_tf_open_copy(&(struct cp_tf_where){.pid = p1, .path = path,
						  .start = (__u64)(uintptr_t)map,
						  .end = (__u64)(uintptr_t)map + 4096},
			     &want, &st, &why);
	m2 = cp_tf_open_copy(&(struct cp_tf_where){.pid = p2, .path = path,
						  .start = (__u64)(uintptr_t)map,
						  .end = (__u64)(uintptr_t)map + 4096},
			     &want, &st, &why);
	cp_tf_kept_stats(&b);
	kill(p1, SIGKILL);
	kill(p2, SIGKILL);
	waitpid(p1, NULL, 0);
	waitpid(p2, NULL, 0);
	munmap(map, 4096);
	assert_copy(m1, "the shared library's bytes", 26);
	assert_copy(m2, "the shared library's bytes", 26);
	assert_int_equal(b.made - a.made, 1);
	assert_int_equal(b.hits - a.hits, 1);
	/* the same sealed copy, not a dup(): reading one moves no other's offset */
	assert_int_equal(read(m1, &c, 1), 1);
	assert_int_equal(read(m2, &c, 1), 1);
	assert_int_equal(c, 't');
	close(m1);
	close(m2);
}

/* @name in dir, copied: the sealed copy's descriptor. */
static int copy_named(const char *name)
{
	char path[256];
	struct cp_tf_where w = {.path = path};
	struct cp_tf_want want = {0};
	struct cp_tf_stat st;
	enum cp_tf_refusal why;

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	return cp_tf_open_copy(&w, &want, &st, &why);
}

/*
 * A file replaced in place (same path, same inode, same size, new content,
 * even with its mtime set back) is copied again, and so is one renamed over
 * it (another inode): the copy holds the new content.
 */
static void test_replaced_file_copied_again(void **state)
{
	struct cp_copy_stats a, b;
	struct timespec times[2];
	struct stat sb;
	char path[256], tmp[256];
	int fd, m;

	(void)state;
	put_file("v.so", "version one");
	snprintf(path, sizeof(path), "%s/v.so", dir);
	cp_tf_kept_stats(&a);
	m = copy_named("v.so");
	assert_copy(m, "version one", 11);
	close(m);
	m = copy_named("v.so");
	assert_copy(m, "version one", 11);
	close(m);
	cp_tf_kept_stats(&b);
	assert_int_equal(b.made - a.made, 1);
	assert_int_equal(b.hits - a.hits, 1);

	/* in place: the same inode and size, the mtime set back as it was */
	assert_int_equal(stat(path, &sb), 0);
	times[0] = sb.st_atim;
	times[1] = sb.st_mtim;
	fd = open(path, O_WRONLY);
	assert_int_equal(pwrite(fd, "VERSION TWO", 11, 0), 11);
	assert_int_equal(futimens(fd, times), 0);
	close(fd);
	m = copy_named("v.so");
	assert_copy(m, "VERSION TWO", 11);
	close(m);
	cp_tf_kept_stats(&a);
	assert_int_equal(a.made - b.made, 1);
	assert_int_equal(a.hits - b.hits, 0);

	/* renamed over it: another inode at the same path */
	put_file("v.tmp", "version 333");
	snprintf(tmp, sizeof(tmp), "%s/v.tmp", dir);
	assert_int_equal(rename(tmp, path), 0);
	m = copy_named("v.so");
	assert_copy(m, "version 333", 11);
	close(m);
	cp_tf_kept_stats(&b);
	assert_int_equal(b.made - a.made, 1);
	assert_int_equal(b.hits - a.hits, 0);
}

/*
 * The kept copy is looked up by the key its caller read once (the waiting
 * path of symbols/elf_guard.c judges the copy under that key): after the
 * file changed, that key still gives the copy of the content it named,
 * never the new content, and the new content has no kept copy until one
 * is made. Read again from the file, the key was the new content's: a
 * copy of one content could be judged under the other's key.
 */
static void test_kept_copy_by_key(void **state)
{
	struct cp_copy_key before, after, copied;
	enum cp_tf_refusal why;
	char path[256];
	int fd, m;

	(void)state;
	put_file("k.so", "content one");
	snprintf(path, sizeof(path), "%s/k.so", dir);
	fd = open(path, O_RDONLY);
	assert_true(fd >= 0);
	assert_int_equal(cp_tf_key(fd, &before), 0);
	m = cp_tf_copy_keyed(fd, 11, false, &copied, &why);
	assert_copy(m, "content one", 11);
	close(m);
	assert_true(cp_copy_key_equal(&copied, &before));
	/* the tenant writes another content between the caller's key and its lookup */
	put_file("k.so", "the second content");
	assert_int_equal(cp_tf_key(fd, &after), 0);
	assert_false(cp_copy_key_equal(&after, &before));
	m = cp_tf_kept_copy(&before);
	assert_copy(m, "content one", 11);
	close(m);
	assert_int_equal(cp_tf_kept_copy(&after), -ENOENT);
	close(fd);
}

/* An ELF file with two compressed sections declaring @a and @b bytes, one .zdebug of @z. */
static int make_elf(__u64 a, __u64 b, __u64 z)
{
	static char names[] = "\0.shstrtab\0.debug_info\0.debug_str\0.zdebug_line";
	unsigned char zhdr[12] = {'Z', 'L', 'I', 'B'};
	Elf64_Chdr chdr[2] = {{.ch_type = ELFCOMPRESS_ZLIB, .ch_size = a, .ch_addralign = 1},
			      {.ch_type = ELFCOMPRESS_ZLIB, .ch_size = b, .ch_addralign = 1}};
	const int name_off[] = {11, 23, 34};
	int fd = memfd_create("elf", 0);
	Elf_Scn *scn;
	Elf_Data *data;
	GElf_Ehdr eh;
	GElf_Shdr sh;
	Elf *elf;

	for (int i = 0; i < 8; i++)
		zhdr[4 + i] = (unsigned char)(z >> (56 - 8 * i));
	elf_version(EV_CURRENT);
	elf = elf_begin(fd, ELF_C_WRITE, NULL);
	assert_non_null(gelf_newehdr(elf, ELFCLASS64));
	for (int i = 0; i < 4; i++) {
		scn = elf_newscn(elf);
		data = elf_newdata(scn);
		gelf_getshdr(scn, &sh);
		sh.sh_type = SHT_PROGBITS;
		if (i == 3) {
			sh.sh_type = SHT_STRTAB;
			sh.sh_name = 1;
			data->d_buf = names;
			data->d_size = sizeof(names);
		} else if (i == 2) {
			sh.sh_name = (Elf64_Word)name_off[i];
			data->d_buf = zhdr;
			data->d_size = sizeof(zhdr);
		} else {
			sh.sh_name = (Elf64_Word)name_off[i];
			sh.sh_flags = SHF_COMPRESSED;
			data->d_buf = &chdr[i];
			data->d_size = sizeof(chdr[i]);
		}
		gelf_update_shdr(scn, &sh);
	}
	gelf_getehdr(elf, &eh);
	eh.e_shstrndx = 4;
	gelf_update_ehdr(elf, &eh);
	assert_true(elf_update(elf, ELF_C_WRITE) > 0);
	elf_end(elf);
	return fd;
}

static __u64 inflated(int fd)
{
	Elf *elf = elf_begin(fd, ELF_C_READ, NULL);
	__u64 bytes = 0;

	assert_non_null(elf);
	assert_int_equal(cp_elf_inflated_bytes(elf, &bytes), 0);
	elf_end(elf);
	close(fd);
	return bytes;
}

/* @path's cp_tf_stat, as fstat() of an opened file gives it. */
static struct cp_tf_stat stat_of(const char *path)
{
	struct stat s;

	assert_int_equal(stat(path, &s), 0);
	return (struct cp_tf_stat){
		.mode = s.st_mode, .dev_major = major(s.st_dev), .dev_minor = minor(s.st_dev),
		.ino = s.st_ino, .size = (__u64)s.st_size, .uid = s.st_uid,
	};
}

/*
 * cp_tf_host_ns(): this process is in the host's mount namespace; a child
 * that made a mount namespace of its own is not, nor a pid that is gone.
 */
static void test_host_ns(void **state)
{
	int ready[2], go[2], err = 0;
	pid_t child;
	char c = 0;

	(void)state;
	assert_true(cp_tf_host_ns(NULL, getpid()));
	assert_int_equal(pipe(ready), 0);
	assert_int_equal(pipe(go), 0);
	child = fork();
	assert_true(child >= 0);
	if (!child) {
		int e = unshare(CLONE_NEWNS) ? errno : 0;

		if (write(ready[1], &e, sizeof(e)) != sizeof(e) || read(go[0], &c, 1) != 1)
			_exit(1);
		_exit(0);
	}
	assert_int_equal(read(ready[0], &err, sizeof(err)), sizeof(err));
	if (!err)
		assert_false(cp_tf_host_ns(NULL, child));
	assert_int_equal(write(go[1], &c, 1), 1);
	assert_int_equal(waitpid(child, NULL, 0), child);
	assert_false(cp_tf_host_ns(NULL, child)); /* reaped: gone */
	close(ready[0]);
	close(ready[1]);
	close(go[0]);
	close(go[1]);
	if (err == EPERM)
		skip(); /* no CAP_SYS_ADMIN: no namespace of its own to compare */
	assert_int_equal(err, 0);
}

/*
 * A file a process named, read after that process exited (a compiler a
 * build ran: its ticks are read later), is the host's when the profiler's
 * own root reaches that very inode at its path: no parse worker for the
 * system's libraries. Not when the path names another inode (a
 * container's file at a host path), nor for a file a tenant owns.
 */
static void test_host_file_of_a_gone_process(void **state)
{
	char lib[PATH_MAX];
	struct cp_tf_want want = {0};
	struct cp_tf_where w = {0};
	struct cp_tf_stat st, tenant;
	pid_t pid = fork();
	int status;

	(void)state;
	assert_true(pid >= 0);
	if (pid == 0)
		_exit(0);
	assert_int_equal(waitpid(pid, &status, 0), pid);
	assert_non_null(realpath("/lib/x86_64-linux-gnu/libc.so.6", lib));
	st = stat_of(lib);
	if (st.uid != 0 || (st.mode & (S_IWGRP | S_IWOTH)))
		skip(); /* not a root-only file here */
	w.pid = pid;
	w.path = lib;
	assert_true(cp_tf_host_file(&w, &want, &st));
	/* the path reaches another inode here: not the host's file */
	w.path = "/etc/hostname";
	assert_false(cp_tf_host_file(&w, &want, &st));
	/* a tenant's file at a host path: never */
	w.path = lib;
	tenant = st;
	tenant.uid = 65534;
	assert_false(cp_tf_host_file(&w, &want, &tenant));
	/* content fetched from elsewhere (debuginfod): never */
	want.foreign = true;
	assert_false(cp_tf_host_file(&w, &want, &st));
}

static void test_inflated_bytes(void **state)
{
	(void)state;
	assert_int_equal(inflated(make_elf(100, 200, 300)), 600);
	/* the bomb: 2 x 200 MiB declared, above the cap */
	assert_true(inflated(make_elf(200ull << 20, 200ull << 20, 0)) > CP_MAX_INFLATED_BYTES);
	/* sizes that wrap a 64-bit sum saturate */
	assert_int_equal(inflated(make_elf(UINT64_MAX, 2, 0)), UINT64_MAX);
}

static int cleanup(void **state)
{
	char cmd[300];

	(void)state;
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	return system(cmd) ? -1 : 0;
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_judge),	       cmocka_unit_test(test_errno_refusals),
		cmocka_unit_test(test_open_refuses),   cmocka_unit_test(test_find_then_reopen),
		cmocka_unit_test(test_seen_by_maps_line),
		cmocka_unit_test(test_copy_is_sealed),
		cmocka_unit_test(test_inflated_bytes), cmocka_unit_test(test_same_file_copied_once),
		cmocka_unit_test(test_replaced_file_copied_again),
		cmocka_unit_test(test_kept_copy_by_key),
		cmocka_unit_test(test_ranges_minus), cmocka_unit_test(test_copy_without_code),
		cmocka_unit_test(test_host_file_of_a_gone_process),
		cmocka_unit_test(test_host_ns),
	};

	return cmocka_run_group_tests(tests, NULL, cleanup);
}
