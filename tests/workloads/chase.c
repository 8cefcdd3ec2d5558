// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * chase: false sharing that a reader meets only through loads whose result
 * overwrites their own address register, the case soft mode's skid
 * correction cannot recover (#31, item 1): the tick lands after the stalled
 * load, and the register that held its address now holds what it loaded.
 *
 * A reader thread walks a circular list, p = p->next (mov (%rax),%rax), or
 * with --index an array of indices, i = next[i] (mov (%rdx,%rax,4),%eax);
 * a writer thread increments a counter of its own beside each node (or
 * index), 8 bytes on, on the same line: every write invalidates the line
 * the reader loads next.
 *
 *   --padded   the fix: each node (index) on a line of its own, its
 *              counter on another
 *
 * usage: chase [--index] [--padded] [SECONDS]   (default 3 s)
 *   SECONDS of CPU time per thread, at most ten times as long by the clock
 *   (cpu_wait.h). Each thread runs on a CPU of its own (spread.h).
 *
 * Lines the tests look for carry MARK comments.
 */
#define _GNU_SOURCE	/* pthread_setaffinity_np */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cpu_wait.h"
#include "spread.h"

#define NODES	64	/* 64 lines: the chase stays in L1 but for the writer */

/* A line holding a node (its next pointer, or next index) and the writer's counter. */
struct line {
	union {
		struct line *next;
		unsigned int next_index;
	};
	volatile long count;	/* the writer's, 8 bytes on */
	char pad[48];
};

static struct line *lines;	/* NODES lines (2 x NODES when padded) */
static size_t counter_line;	/* lines between a node and its counter: 0, or NODES padded */
static int use_index;
static volatile int stop;
static volatile long sink;

static void *reader(void *arg)
{
	struct line *p = lines;
	unsigned int i = 0;

	(void)arg;
	if (use_index) {
		while (!stop)
			i = lines[i].next_index;	/* MARK: chase-index */
		sink = i;
	} else {
		while (!stop)
			p = p->next;	/* MARK: chase-load */
		sink = (long)p;
	}
	return NULL;
}

static void *writer(void *arg)
{
	(void)arg;
	while (!stop)
		for (size_t k = 0; k < NODES; k++)
			lines[k + counter_line].count++;	/* MARK: chase-write */
	return NULL;
}

int main(int argc, char **argv)
{
	int seconds = 3, padded = 0;
	pthread_t th[2];
	size_t nr;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--padded") == 0)
			padded = 1;
		else if (strcmp(argv[i], "--index") == 0)
			use_index = 1;
		else
			seconds = atoi(argv[i]);
	}
	counter_line = padded ? NODES : 0;
	nr = NODES + counter_line;
	lines = aligned_alloc(64, nr * sizeof(*lines));	/* MARK: chase-alloc */
	if (!lines)
		return 1;
	memset(lines, 0, nr * sizeof(*lines));
	/* a stride of 17 lines: no prefetcher follows the walk */
	for (size_t k = 0; k < NODES; k++) {
		size_t to = (k + 17) % NODES;

		if (use_index)
			lines[k].next_index = (unsigned int)to;
		else
			lines[k].next = &lines[to];
	}
	pthread_create(&th[0], NULL, reader, NULL);
	pthread_create(&th[1], NULL, writer, NULL);
	for (int t = 0; t < 2; t++)
		cp_wl_spread(th[t], t);
	cp_wl_wait_cpu(2.0 * seconds, 10.0 * seconds);
	stop = 1;
	for (int t = 0; t < 2; t++)
		pthread_join(th[t], NULL);
	printf("chase: %s walk over %d lines, counters %s\n", use_index ? "index" : "pointer",
	       NODES, padded ? "on lines of their own" : "beside the nodes");
	return 0;
}
