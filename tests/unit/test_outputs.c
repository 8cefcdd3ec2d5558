// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The table of outputs (export/outputs.h), on the golden recording
 * (tests/golden/chain.cprec) replayed: at the end every output is written
 * and the text is the golden one byte for byte, even when another output's
 * path is refused; SIGUSR1 writes the report's files (-o, --json, --html)
 * and no other; SIGHUP the Prometheus file alone (docs/usage.md says both);
 * an interval the HTML page and the Prometheus file, never the text; a
 * path refused before the run is named by its option.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include <cmocka.h>

#include "cli/report_cmd.h"
#include "export/outputs.h"
#include "lib/golden_text.h"

enum { TEXT, JSON, HTML, PROM, PPROF, FOLDED, NR_FILES };

static const char *const names[NR_FILES] = {
	"report.txt", "report.json", "report.html", "run.prom", "run.pb.gz", "run.folded",
};

struct fixture {
	char dir[40];
	char path[NR_FILES][96];
	char golden[512];
	char map_arg[600];
	struct cp_path_map map;
	struct cp_classify_cfg cfg;
	struct cp_report_opts ro;
	struct cp_replay *replay;
	struct cp_outputs outs;
};

/* The golden recording replayed, every output asked in a new directory. */
static int setup(void **state)
{
	const char *root = getenv("CP_ROOT");
	struct fixture *f = calloc(1, sizeof(*f));
	char err[512], rec[600];

	assert_non_null(f);
	snprintf(f->dir, sizeof(f->dir), "/tmp/cp-outputs.XXXXXX");
	assert_non_null(mkdtemp(f->dir));
	for (int i = 0; i < NR_FILES; i++)
		snprintf(f->path[i], sizeof(f->path[i]), "%s/%s", f->dir, names[i]);
	snprintf(f->golden, sizeof(f->golden), "%s/tests/golden", root ? root : ".");
	snprintf(f->map_arg, sizeof(f->map_arg), "/tmp/cacheperf-golden=%s", f->golden);
	assert_int_equal(cp_path_map_add(&f->map, f->map_arg, err, sizeof(err)), 0);
	cp_classify_cfg_defaults(&f->cfg);
	f->ro = (struct cp_report_opts){
		.classify = &f->cfg,
		.output = f->path[TEXT],
		.json = f->path[JSON],
		.html = f->path[HTML],
		.prom = f->path[PROM],
		.prom_top = 20,
		.pprof = f->path[PPROF],
		.folded = f->path[FOLDED],
		.path_map = &f->map,
	};
	snprintf(rec, sizeof(rec), "%s/chain.cprec", f->golden);
	if (cp_replay_open(rec, &f->ro, NULL, &f->replay, err, sizeof(err)))
		fail_msg("replay: %s", err);
	cp_outputs_init(&f->outs, &f->ro, NULL, "unknown", false, NULL);
	*state = f;
	return 0;
}

static int teardown(void **state)
{
	struct fixture *f = *state;

	cp_outputs_free(&f->outs);
	cp_replay__free(f->replay);
	for (int i = 0; i < NR_FILES; i++)
		unlink(f->path[i]);
	rmdir(f->dir);
	free(f);
	return 0;
}

/* Which of the files exist now, as a bit per file. */
static unsigned int written(const struct fixture *f)
{
	unsigned int bits = 0;
	struct stat st;

	for (int i = 0; i < NR_FILES; i++)
		if (!lstat(f->path[i], &st) && S_ISREG(st.st_mode) && st.st_size > 0)
			bits |= 1u << i;
	return bits;
}

static int write_at(struct fixture *f, enum cp_out_moment at, char *err, size_t err_sz)
{
	return cp_outputs_write(&f->outs, at, cp_replay__profile(f->replay), err, err_sz);
}

static void test_end_writes_everything_golden(void **state)
{
	struct fixture *f = *state;
	char err[512], want[600];
	char *got;

	if (write_at(f, CP_OUT_END, err, sizeof(err)))
		fail_msg("end: %s", err);
	assert_int_equal(written(f), (1u << NR_FILES) - 1);
	/* the same report as `cacheperf-bpf report` writes (tests/e2e/test_golden.sh) */
	got = cp_test_slurp(f->path[TEXT]);
	snprintf(want, sizeof(want), "%s/chain.txt", f->golden);
	cp_test_golden("chain.txt", want, got);
	free(got);
	got = cp_test_slurp(f->path[FOLDED]);
	snprintf(want, sizeof(want), "%s/chain.folded", f->golden);
	cp_test_golden("chain.folded", want, got);
	free(got);
}

/* A tenant's symbolic link at --json costs the JSON only; the error names it. */
static void test_end_one_refused_costs_that_one(void **state)
{
	struct fixture *f = *state;
	char err[512];

	assert_int_equal(symlink("/etc/passwd", f->path[JSON]), 0);
	assert_true(write_at(f, CP_OUT_END, err, sizeof(err)) < 0);
	assert_non_null(strstr(err, f->path[JSON]));
	assert_int_equal(written(f), (1u << NR_FILES) - 1 - (1u << JSON));
}

static void test_usr1_writes_the_report_files_only(void **state)
{
	struct fixture *f = *state;
	char err[512];
	char *got;

	if (write_at(f, CP_OUT_USR1, err, sizeof(err)))
		fail_msg("usr1: %s", err);
	assert_int_equal(written(f), (1u << TEXT) | (1u << JSON) | (1u << HTML));
	/* a summary, not the final report: a replay's summary is its whole run */
	got = cp_test_slurp(f->path[TEXT]);
	assert_non_null(strstr(got, "summary of the last"));
	free(got);
}

static void test_hup_writes_the_prom_file_only(void **state)
{
	struct fixture *f = *state;
	char err[512];

	if (write_at(f, CP_OUT_HUP, err, sizeof(err)))
		fail_msg("hup: %s", err);
	assert_int_equal(written(f), 1u << PROM);
}

static void test_interval_writes_page_and_metrics(void **state)
{
	struct fixture *f = *state;
	char err[512];

	assert_int_equal(write_at(f, CP_OUT_INTERVAL, err, sizeof(err)), 0);
	assert_int_equal(written(f), (1u << HTML) | (1u << PROM));
}

/* Before the run: the first path refused is named by its option. */
static void test_check_names_the_option(void **state)
{
	struct fixture *f = *state;
	struct cp_report_opts ro = f->ro;
	char err[512], rec[128];

	assert_int_equal(cp_outputs_check(&ro, err, sizeof(err)), 0);
	assert_int_equal(symlink("/etc/passwd", f->path[FOLDED]), 0);
	assert_true(cp_outputs_check(&ro, err, sizeof(err)) < 0);
	assert_memory_equal(err, "--folded: ", 10);
	unlink(f->path[FOLDED]);
	/* --record is a path of the run too */
	snprintf(rec, sizeof(rec), "%s/run.cprec", f->dir);
	assert_int_equal(symlink("/etc/passwd", rec), 0);
	ro.record = rec;
	assert_true(cp_outputs_check(&ro, err, sizeof(err)) < 0);
	assert_memory_equal(err, "--record: ", 10);
	unlink(rec);
	assert_int_equal(written(f), 0);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test_setup_teardown(test_end_writes_everything_golden, setup, teardown),
		cmocka_unit_test_setup_teardown(test_end_one_refused_costs_that_one, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_usr1_writes_the_report_files_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_hup_writes_the_prom_file_only, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_interval_writes_page_and_metrics, setup,
						teardown),
		cmocka_unit_test_setup_teardown(test_check_names_the_option, setup, teardown),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
