// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Symbolizer lookup cost, on this process: its own executable (built -g, so
 * DWARF lines and scopes) and libc (Debian ships it without debug info:
 * .symtab-less, names from .dynsym).
 *
 *   first lookup	snapshot of /proc/self/maps, every ELF opened, first CU read
 *   uncached		Dwfl warm (DWARF already parsed), result cache missed
 *   cached		served from the (pid, ip) result cache
 *   2nd process	the same ips in a fork of this process, after this one's:
 *			its first lookup, then all of them, and the RSS that took
 *
 * usage: symbolizer_bench [NR_IPS]   (default 20000 distinct ips per module)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <signal.h>
#include <time.h>
#include <unistd.h>
#include <sys/wait.h>

#include "objects/proc_maps.h"
#include "symbols/symbolizer.h"

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1e9 + (double)ts.tv_nsec;
}

/* @n ips spread over the executable mapping of the file whose path ends in @suffix. */
static int spread_ips(const struct cp_maps *m, const char *suffix, __u64 *ips, size_t n)
{
	for (size_t i = 0; i < m->nr; i++) {
		const struct cp_map *map = &m->maps[i];
		size_t len = strlen(map->path), sl = strlen(suffix);
		__u64 step;

		if (!(map->prot & CP_MAP_EXEC) || len < sl || strcmp(map->path + len - sl, suffix))
			continue;
		step = (map->end - map->start) / n;
		for (size_t j = 0; j < n; j++)
			ips[j] = map->start + j * (step ? step : 1);
		return 0;
	}
	return -1;
}

/* Resolves every ip once; returns ns per lookup and counts the resolved ones. */
static double pass(struct cp_symbolizer *s, pid_t pid, const __u64 *ips, size_t n,
		   size_t *named)
{
	struct cp_symbol_info info;
	double t0 = now_ns();

	*named = 0;
	for (size_t i = 0; i < n; i++)
		if (!cp_symbolizer__resolve(s, pid, ips[i], &info) && (info.function || info.nearest))
			(*named)++;
	return (now_ns() - t0) / (double)n;
}

static long rss_kib(void)
{
	char line[256];
	long kib = -1;
	FILE *f = fopen("/proc/self/status", "r");

	while (f && fgets(line, sizeof(line), f))
		if (!strncmp(line, "VmRSS:", 6))
			kib = strtol(line + 6, NULL, 10);
	if (f)
		fclose(f);
	return kib;
}

/* The ips again in a second process mapping the same files: a fork, at the same addresses. */
static void second_process(struct cp_symbolizer *s, const char *what, const __u64 *ips, size_t n)
{
	struct cp_symbol_info info;
	long rss = rss_kib();
	size_t named;
	double first, all, t0;
	pid_t child = fork();

	if (child < 0)
		return;
	if (!child) {
		pause();
		_exit(0);
	}
	t0 = now_ns();
	cp_symbolizer__resolve(s, child, ips[n / 2], &info);
	first = now_ns() - t0;
	all = pass(s, child, ips, n, &named);
	printf("%-6s 2nd process: first lookup %7.0f us   all ips %6.0f ns   RSS +%ld KiB   (%zu named)\n",
	       what, first / 1e3, all, rss_kib() - rss, named);
	kill(child, SIGKILL);
	waitpid(child, NULL, 0);
}

static int bench_module(const char *what, const __u64 *ips, size_t n)
{
	pid_t pid = getpid();
	/* a result cache of one set: every lookup of a new ip misses */
	struct cp_symbolizer *miss = cp_symbolizer__new(0, 4);
	struct cp_symbolizer *hit = cp_symbolizer__new(0, 0);
	size_t hot = n < 4096 ? n : 4096, named, unused;
	double first, uncached, cached, t0;
	struct cp_symbol_info info;

	if (!miss || !hit)
		return -1;
	t0 = now_ns();
	cp_symbolizer__resolve(miss, pid, ips[n / 2], &info);
	first = now_ns() - t0;
	pass(miss, pid, ips, n, &unused);		/* parse what the ips need */
	uncached = pass(miss, pid, ips, n, &named);
	pass(hit, pid, ips, hot, &unused);
	cached = 0;
	for (int r = 0; r < 100; r++)
		cached += pass(hit, pid, ips, hot, &unused) / 100;
	printf("%-6s first lookup %7.0f us   uncached %6.0f ns   cached (%zu ips) %5.1f ns   (%zu ips, %zu named)\n",
	       what, first / 1e3, uncached, hot, cached, n, named);
	second_process(miss, what, ips, n);
	cp_symbolizer__free(miss);
	cp_symbolizer__free(hit);
	return 0;
}

int main(int argc, char **argv)
{
	size_t n = argc > 1 ? strtoul(argv[1], NULL, 0) : 20000;
	__u64 *ips = calloc(n ? n : 1, sizeof(*ips));
	struct cp_maps *m;
	char exe[4096];
	ssize_t len;

	len = readlink("/proc/self/exe", exe, sizeof(exe) - 1);
	if (!ips || !n || len <= 0 || cp_maps__read(NULL, getpid(), &m)) {
		fprintf(stderr, "symbolizer_bench: cannot read /proc/self\n");
		return 1;
	}
	exe[len] = '\0';
	if (spread_ips(m, exe, ips, n) || bench_module("self", ips, n))
		return 1;
	if (!spread_ips(m, "/libc.so.6", ips, n) && bench_module("libc", ips, n))
		return 1;
	cp_maps__free(m);
	free(ips);
	return 0;
}
