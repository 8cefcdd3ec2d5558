/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * --probe: what this machine can sample, the first thing a new user runs.
 * Kernel, privileges and features (sysinfo.c), the sampling PMUs and the
 * source --source auto would pick (pmu.c), and the cache geometry
 * (geometry.c), each line saying what is missing and what to do.
 */
#ifndef CP_PROBE_H
#define CP_PROBE_H

#include <stdio.h>

#include "machine/geometry.h"
#include "machine/pmu.h"
#include "machine/sysinfo.h"

/*
 * Pure: whether a machine with @si can profile at all. Returns 0, or
 * -EPERM (privileges), -ENOENT (no BTF), -ENOSYS (no bpf()) with a
 * sentence in @err naming what is missing and what to do.
 */
int cp_preflight(const struct cp_sysinfo *si, char *err, size_t err_sz);

/* Pure: one line per sampling PMU found, or why there is none. */
void cp_pmus_print(const struct cp_pmus *pmus, FILE *f);

/*
 * Collects and prints every fact below @root ("/" in production), with
 * @cache_spec (--cache, may be NULL) applied to the geometry. Returns 0,
 * or a negative errno when the machine cannot run the profiler at all
 * (no bpf(), no BTF, missing privileges): the text says why.
 */
int cp_probe_print(const char *root, const char *cache_spec, FILE *f);

#endif /* CP_PROBE_H */
