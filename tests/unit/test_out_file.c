// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Whole-file output: the new content replaces the old in one rename, a
 * failing writer leaves the old file as it was and no temporary file, and
 * an unwritable place gives a message naming the file. A symbolic link at
 * the path is refused: never followed, never replaced.
 */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "util/out_file.h"

static int write_text(void *ctx, FILE *f)
{
	return fputs(ctx, f) < 0 ? -EIO : 0;
}

static int write_then_fail(void *ctx, FILE *f)
{
	fputs(ctx, f);
	return -ENOSPC;
}

static char *slurp(const char *path)
{
	static char buf[256];
	FILE *f = fopen(path, "r");
	size_t n;

	if (!f)
		return NULL;
	n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = '\0';
	fclose(f);
	return buf;
}

static int entries(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *e;
	int n = 0;

	assert_non_null(d);
	while ((e = readdir(d)))
		n += e->d_name[0] != '.';
	closedir(d);
	return n;
}

static void test_replace_and_keep(void **state)
{
	char dir[] = "/tmp/cp-out-XXXXXX", path[64], err[256];
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/report.txt", dir);

	assert_int_equal(cp_out_file_write(path, CP_OUT_PRIVATE, write_text, "first\n", err, sizeof(err)), 0);
	assert_string_equal(slurp(path), "first\n");
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);

	assert_int_equal(cp_out_file_write(path, CP_OUT_PRIVATE, write_text, "second\n", err, sizeof(err)), 0);
	assert_string_equal(slurp(path), "second\n");

	/* a writer that fails: the old content stays, the temporary file goes */
	assert_int_equal(cp_out_file_write(path, CP_OUT_PRIVATE, write_then_fail, "partial", err, sizeof(err)),
			 -ENOSPC);
	assert_non_null(strstr(err, path));
	assert_string_equal(slurp(path), "second\n");
	assert_int_equal(entries(dir), 1);

	unlink(path);
	rmdir(dir);
}

/*
 * A FIFO (like a character device: -o /dev/null) is written in place: a
 * file renamed over it would replace the node itself, and /dev/null was
 * replaced so for every program on the machine.
 */
static void test_fifo_in_place(void **state)
{
	char dir[] = "/tmp/cp-out-XXXXXX", path[64], err[256], buf[32] = "";
	struct stat st;
	int rd;
	ssize_t n;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pipe", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	/* a reader first, so that opening the FIFO for writing does not wait */
	rd = open(path, O_RDONLY | O_NONBLOCK);
	assert_true(rd >= 0);
	assert_int_equal(cp_out_file_try(path, err, sizeof(err)), 0);
	assert_int_equal(cp_out_file_write(path, CP_OUT_PRIVATE, write_text, "through\n", err, sizeof(err)), 0);
	n = read(rd, buf, sizeof(buf) - 1);
	assert_int_equal(n, 8);
	assert_string_equal(buf, "through\n");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(entries(dir), 1);	/* no temporary file made next to it */
	close(rd);
	unlink(path);
	rmdir(dir);
}

/*
 * A FIFO nobody reads, one a tenant planted where an output goes: refused
 * at once with a reason, never waited on (the open used to block for good).
 */
static void test_fifo_unread(void **state)
{
	char dir[] = "/tmp/cp-out-XXXXXX", path[64], err[256] = "";

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/pipe", dir);
	assert_int_equal(mkfifo(path, 0600), 0);
	assert_int_equal(cp_out_file_write(path, CP_OUT_PRIVATE, write_text, "lost\n", err,
					   sizeof(err)),
			 -ENXIO);
	assert_non_null(strstr(err, "a FIFO no process reads"));
	unlink(path);
	rmdir(dir);
}

static void test_unwritable_place(void **state)
{
	char err[256];

	(void)state;
	assert_true(cp_out_file_write("/nonexistent-dir/r.json", CP_OUT_PRIVATE, write_text, "x",
				      err, sizeof(err)) < 0);
	assert_non_null(strstr(err, "/nonexistent-dir/r.json"));
	assert_non_null(strstr(err, "No such file or directory"));
}

/* The Prometheus file's mode is asked for; the others are private whatever the umask. */
static void test_modes(void **state)
{
	char dir[] = "/tmp/cp-out-XXXXXX", path[64], err[256];
	mode_t old = umask(0);
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/m.prom", dir);
	assert_int_equal(cp_out_file_write(path, CP_OUT_SHARED, write_text, "x\n", err,
					   sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0644);
	/* an existing world-readable file becomes private when replaced */
	assert_int_equal(cp_out_file_write(path, CP_OUT_PRIVATE, write_text, "y\n", err,
					   sizeof(err)), 0);
	assert_int_equal(stat(path, &st), 0);
	assert_int_equal(st.st_mode & 0777, 0600);
	umask(old);
	unlink(path);
	rmdir(dir);
}

/*
 * A link planted at the path (a tenant's, in a directory it can write) is
 * refused by every entry point; what it points to and the link stay as
 * they were, and no temporary file is left.
 */
static void test_symlink_refused(void **state)
{
	char dir[] = "/tmp/cp-out-XXXXXX", path[64], victim[64], err[256];
	struct cp_out o;
	struct stat st;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/report.txt", dir);
	snprintf(victim, sizeof(victim), "%s/victim", dir);
	f = fopen(victim, "w");
	assert_non_null(f);
	fputs("secret\n", f);
	fclose(f);
	assert_int_equal(symlink(victim, path), 0);

	assert_int_equal(cp_out_file_try(path, err, sizeof(err)), -ELOOP);
	assert_non_null(strstr(err, "is a symbolic link"));
	assert_int_equal(cp_out_file_write(path, CP_OUT_PRIVATE, write_text, "x", err,
					   sizeof(err)), -ELOOP);
	assert_int_equal(cp_out_open(&o, path, CP_OUT_PRIVATE, err, sizeof(err)), -ELOOP);
	assert_null(o.f);
	assert_non_null(strstr(err, path));
	assert_string_equal(slurp(victim), "secret\n");
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISLNK(st.st_mode));
	assert_int_equal(entries(dir), 2);

	/* a directory is refused too, with its own sentence */
	assert_int_equal(cp_out_file_try(dir, err, sizeof(err)), -EISDIR);
	assert_non_null(strstr(err, "is a directory"));
	unlink(path);
	unlink(victim);
	rmdir(dir);
}

/*
 * A streamed output (a recording): nothing at the path until it is closed,
 * then all of it; closed with an error, the old file stays.
 */
static void test_stream(void **state)
{
	char dir[] = "/tmp/cp-out-XXXXXX", path[64], err[256];
	struct cp_out o;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/run.cprec", dir);
	assert_int_equal(cp_out_open(&o, path, CP_OUT_PRIVATE, err, sizeof(err)), 0);
	fputs("one\n", o.f);
	fflush(o.f);
	assert_null(slurp(path));
	assert_int_equal(cp_out_close(&o, 0, err, sizeof(err)), 0);
	assert_null(o.f);
	assert_string_equal(slurp(path), "one\n");

	assert_int_equal(cp_out_open(&o, path, CP_OUT_PRIVATE, err, sizeof(err)), 0);
	fputs("two\n", o.f);
	assert_int_equal(cp_out_close(&o, -ENOSPC, err, sizeof(err)), -ENOSPC);
	assert_string_equal(slurp(path), "one\n");
	assert_int_equal(entries(dir), 1);
	unlink(path);
	rmdir(dir);
}

/*
 * The judge of what is at an output's path, for a profiler of uid 0 and
 * one of uid 1000: another user's FIFO, device or file is refused (a
 * tenant's, planted to read the report or to have its file deleted),
 * root's and our own are used, what the operator gave as stdout too.
 */
static void test_judge(void **state)
{
	static const struct {
		mode_t mode;
		uid_t uid, euid;
		bool given;
		enum cp_out_verdict want;
	} cases[] = {
		{ S_IFREG | 0600, 0, 0, false, CP_OUT_REPLACE },
		{ S_IFREG | 0644, 1000, 1000, false, CP_OUT_REPLACE },
		{ S_IFREG | 0644, 0, 1000, false, CP_OUT_REPLACE },
		{ S_IFREG | 0666, 65534, 0, false, CP_OUT_NO_OWNER },
		{ S_IFREG | 0666, 65534, 0, true, CP_OUT_NO_OWNER },
		{ S_IFIFO | 0600, 0, 0, false, CP_OUT_IN_PLACE },
		{ S_IFIFO | 0666, 65534, 0, false, CP_OUT_NO_OWNER },
		{ S_IFIFO | 0666, 65534, 0, true, CP_OUT_IN_PLACE },
		{ S_IFIFO | 0666, 1000, 1000, false, CP_OUT_IN_PLACE },
		{ S_IFCHR | 0666, 0, 0, false, CP_OUT_IN_PLACE },	/* /dev/null */
		{ S_IFCHR | 0666, 0, 1000, false, CP_OUT_IN_PLACE },
		{ S_IFCHR | 0620, 1000, 0, false, CP_OUT_NO_OWNER },	/* another's terminal */
		{ S_IFCHR | 0620, 1000, 0, true, CP_OUT_IN_PLACE },	/* ours, as stdout */
		{ S_IFSOCK | 0777, 0, 0, false, CP_OUT_NO_KIND },
		{ S_IFSOCK | 0777, 0, 0, true, CP_OUT_NO_KIND },
		{ S_IFBLK | 0660, 0, 0, false, CP_OUT_NO_KIND },
		{ S_IFLNK | 0777, 0, 0, false, CP_OUT_NO_LINK },
		{ S_IFLNK | 0777, 65534, 0, false, CP_OUT_NO_LINK },
		{ S_IFDIR | 0755, 0, 0, false, CP_OUT_NO_DIR },
	};

	(void)state;
	assert_int_equal(cp_out_judge(NULL, 0, false), CP_OUT_CREATE);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		struct stat st = { .st_mode = cases[i].mode, .st_uid = cases[i].uid };

		if (cp_out_judge(&st, cases[i].euid, cases[i].given) != cases[i].want)
			fail_msg("case %zu: mode %o uid %u euid %u given %d: %d, want %d", i,
				 (unsigned int)cases[i].mode, (unsigned int)cases[i].uid,
				 (unsigned int)cases[i].euid, cases[i].given,
				 cp_out_judge(&st, cases[i].euid, cases[i].given), cases[i].want);
	}
}

/*
 * A FIFO that appears at the path while the output is written is not
 * replaced by the rename (it would be deleted for its owner), and the
 * temporary file goes; the FIFO stays.
 */
static void test_node_planted_meanwhile(void **state)
{
	char dir[] = "/tmp/cp-out-XXXXXX", path[64], err[256] = "";
	struct cp_out o;
	struct stat st;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	assert_int_equal(cp_out_open(&o, path, CP_OUT_PRIVATE, err, sizeof(err)), 0);
	fputs("report\n", o.f);
	assert_int_equal(mkfifo(path, 0666), 0);
	assert_int_equal(cp_out_close(&o, 0, err, sizeof(err)), -EEXIST);
	assert_non_null(strstr(err, path));
	assert_int_equal(lstat(path, &st), 0);
	assert_true(S_ISFIFO(st.st_mode));
	assert_int_equal(entries(dir), 1);
	unlink(path);
	rmdir(dir);
}

/*
 * The temporary file's name taken by another file meanwhile (a tenant may
 * rename and replace names in a directory it can write, not sticky): that
 * file is neither renamed into place nor removed.
 */
static void test_tmp_swapped(void **state)
{
	char dir[] = "/tmp/cp-out-XXXXXX", path[64], moved[64], tmp[80], err[256] = "";
	struct cp_out o;
	FILE *f;

	(void)state;
	assert_non_null(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/r.json", dir);
	snprintf(moved, sizeof(moved), "%s/moved", dir);
	assert_int_equal(cp_out_open(&o, path, CP_OUT_PRIVATE, err, sizeof(err)), 0);
	snprintf(tmp, sizeof(tmp), "%s", o.tmp);
	assert_int_equal(rename(tmp, moved), 0);
	f = fopen(tmp, "w");
	assert_non_null(f);
	fputs("theirs\n", f);
	fclose(f);
	assert_int_equal(cp_out_close(&o, 0, err, sizeof(err)), -ESTALE);
	assert_non_null(strstr(err, "was replaced meanwhile"));
	assert_string_equal(slurp(tmp), "theirs\n");
	assert_null(slurp(path));
	unlink(tmp);
	unlink(moved);
	rmdir(dir);
}

/* /dev/stdout is stdout, as "-": the link in /dev is the system's, not a tenant's. */
static void test_dev_stdout(void **state)
{
	char err[256] = "";

	(void)state;
	assert_int_equal(cp_out_file_try("/dev/stdout", err, sizeof(err)), 0);
	assert_int_equal(cp_out_file_write("/dev/stdout", CP_OUT_PRIVATE, write_text, "", err,
					   sizeof(err)),
			 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_replace_and_keep),
		cmocka_unit_test(test_fifo_in_place),
		cmocka_unit_test(test_fifo_unread),
		cmocka_unit_test(test_unwritable_place),
		cmocka_unit_test(test_modes),
		cmocka_unit_test(test_symlink_refused),
		cmocka_unit_test(test_stream),
		cmocka_unit_test(test_judge),
		cmocka_unit_test(test_node_planted_meanwhile),
		cmocka_unit_test(test_tmp_swapped),
		cmocka_unit_test(test_dev_stdout),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
