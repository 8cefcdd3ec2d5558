/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profiler's own cost in the report (machine/agent_cost.h): lines of
 * the text report's header and the JSON "agent" object (with the drain's
 * records and their longest stall); nothing in a replay,
 * which has no profiler of its own to speak of. Pure.
 */
#ifndef CP_REPORT_AGENT_H
#define CP_REPORT_AGENT_H

#include <stddef.h>
#include <stdio.h>

#include "machine/agent_cost.h"
#include "util/json_writer.h"

/*
 * "0.42 s CPU at start-up (in 1.3 s), 0.31 s in 20.0 s steady (1.55 % of
 * one CPU); memory 38.0 MiB, peak 52.0 MiB (cgroup memory.current)", no
 * newline; "" when @a is not known.
 */
void cp_report_agent_format(const struct cp_agent_cost *a, char *buf, size_t sz);

/*
 * "1234 records, 250000/s while handling them; the longest took 17.2 ms
 * (object event)": the drain's (live/drain.h), no newline; "" when it
 * handled none.
 */
void cp_report_drain_format(const struct cp_drain_timing *d, char *buf, size_t sz);

/* "  profiler: ..." and "  drain: ..." (the header's lines); nothing when @a is not known. */
void cp_report_agent_print(const struct cp_agent_cost *a, FILE *f);

/* "agent": an object; absent when @a is not known (a replay). */
void cp_report_agent_json(struct cp_json *j, const struct cp_agent_cost *a);

#endif /* CP_REPORT_AGENT_H */
