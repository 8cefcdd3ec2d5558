/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Sets of CPU numbers parsed from sysfs cpulists ("0-15,32-47\n"): the online
 * CPUs for per-CPU events and, on hybrid Intel parts, which CPUs belong to
 * cpu_core and which to cpu_atom. Pure; a plain bitmap so it can be copied.
 */
#ifndef CP_CPUSET_H
#define CP_CPUSET_H

#include <stdbool.h>
#include <linux/types.h>

/* x86 CONFIG_NR_CPUS tops out at 8192 (MAXSMP) */
#define CP_MAX_CPUS 8192

struct cp_cpuset {
	__u64 bits[CP_MAX_CPUS / 64];
};

/*
 * Parses a sysfs cpulist into @set: comma-separated CPUs or LO-HI ranges, one
 * optional trailing newline; "" and "\n" give an empty set. Returns the number
 * of CPUs, -EINVAL (malformed, a range running backwards) or -ERANGE (a CPU
 * at or above CP_MAX_CPUS). @set is cleared first.
 */
int cp_cpuset_parse(const char *text, struct cp_cpuset *set);

/* Empties @set. */
void cp_cpuset_clear(struct cp_cpuset *set);

/* Adds @cpu; numbers outside 0..CP_MAX_CPUS-1 are ignored. */
void cp_cpuset_add(struct cp_cpuset *set, int cpu);

/* True when @cpu is in @set (false for any number out of range). */
bool cp_cpuset_has(const struct cp_cpuset *set, int cpu);

/* The number of CPUs in @set. */
int cp_cpuset_count(const struct cp_cpuset *set);

/* The lowest CPU in @set at or above @from, or -1: for (c = next(s, 0); c >= 0; c = next(s, c + 1)) */
int cp_cpuset_next(const struct cp_cpuset *set, int from);

/* @out = @a AND @b (may alias either). */
void cp_cpuset_and(struct cp_cpuset *out, const struct cp_cpuset *a, const struct cp_cpuset *b);

#endif /* CP_CPUSET_H */
