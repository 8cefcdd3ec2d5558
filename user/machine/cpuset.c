// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* CPU sets from sysfs cpulists. */
#include <ctype.h>
#include <errno.h>
#include <string.h>

#include "machine/cpuset.h"

void cp_cpuset_clear(struct cp_cpuset *set)
{
	memset(set, 0, sizeof(*set));
}

void cp_cpuset_add(struct cp_cpuset *set, int cpu)
{
	if (cpu >= 0 && cpu < CP_MAX_CPUS)
		set->bits[cpu / 64] |= 1ull << (cpu % 64);
}

bool cp_cpuset_has(const struct cp_cpuset *set, int cpu)
{
	if (cpu < 0 || cpu >= CP_MAX_CPUS)
		return false;
	return set->bits[cpu / 64] & (1ull << (cpu % 64));
}

int cp_cpuset_count(const struct cp_cpuset *set)
{
	int n = 0;

	for (size_t i = 0; i < sizeof(set->bits) / sizeof(set->bits[0]); i++)
		n += __builtin_popcountll(set->bits[i]);
	return n;
}

int cp_cpuset_next(const struct cp_cpuset *set, int from)
{
	if (from < 0)
		from = 0;
	for (int cpu = from; cpu < CP_MAX_CPUS; cpu++) {
		__u64 word = set->bits[cpu / 64] >> (cpu % 64);

		if (!word) {
			/* skip the rest of an empty word */
			cpu |= 63;
			continue;
		}
		return cpu + __builtin_ctzll(word);
	}
	return -1;
}

void cp_cpuset_and(struct cp_cpuset *out, const struct cp_cpuset *a, const struct cp_cpuset *b)
{
	for (size_t i = 0; i < sizeof(out->bits) / sizeof(out->bits[0]); i++)
		out->bits[i] = a->bits[i] & b->bits[i];
}

/* Leading decimal CPU number of *@s, advanced past it; -EINVAL or -ERANGE. */
static int take_cpu(const char **s)
{
	long v = 0;

	if (!isdigit((unsigned char)**s))
		return -EINVAL;
	while (isdigit((unsigned char)**s)) {
		v = v * 10 + (**s - '0');
		if (v >= CP_MAX_CPUS)
			return -ERANGE;
		(*s)++;
	}
	return (int)v;
}

int cp_cpuset_parse(const char *text, struct cp_cpuset *set)
{
	const char *p = text;

	cp_cpuset_clear(set);
	if (!p)
		return -EINVAL;
	/* an empty mask prints as "\n" (the offline file of a machine with none) */
	if (*p == '\0' || !strcmp(p, "\n"))
		return 0;
	for (;;) {
		int lo = take_cpu(&p), hi = lo;

		if (lo < 0)
			return lo;
		if (*p == '-') {
			p++;
			hi = take_cpu(&p);
			if (hi < 0)
				return hi;
			if (hi < lo)
				return -EINVAL;
		}
		for (int cpu = lo; cpu <= hi; cpu++)
			cp_cpuset_add(set, cpu);
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		return *p ? -EINVAL : cp_cpuset_count(set);
	}
}
