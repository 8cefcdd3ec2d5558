// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: any bytes through the recording reader, the replay into
 * the stores and the report, as `cacheperf-bpf report FILE` runs them. A
 * crash, a leak or an out-of-bounds access is a bug; a refusal is not.
 * Seeds: tests/fuzz/corpus (a real recording of tests/workloads/touch_pages).
 */
#include <stdint.h>
#include <stdio.h>

#include "record/replay.h"
#include "report/profile_report.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static FILE *null_out;
	struct cp_report rep = { 0 };
	struct cp_replay *r;
	char err[512];
	FILE *f;

	if (!size)
		return 0;
	if (!null_out)
		null_out = fopen("/dev/null", "w");
	f = fmemopen((void *)data, size, "r");
	if (!f)
		return 0;
	if (!cp_replay__run(f, "fuzz", NULL, NULL, &r, err, sizeof(err))) {
		cp_profile__fill_report(cp_replay__profile(r), &rep);
		cp_report_print(&rep, null_out);
		cp_replay__free(r);
	}
	fclose(f);
	return 0;
}
