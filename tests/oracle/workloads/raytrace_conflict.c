// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Raytrace's equal-size objects: 4088-byte nodes, which glibc places exactly
 * 4 KiB apart, so the same field of every node falls on the same L1 set; a
 * loop reading that field of each node misses on that set: allocator
 * conflict misses (the layout is the allocator's, over many objects).
 * usage: raytrace_conflict [NODES [ROUNDS]]
 */
#include "oracle_wl.h"

struct node {
	double bbox[6];
	char payload[4088 - 6 * sizeof(double)];
};

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 1, 24), rounds = wl_arg(argc, argv, 2, 200000);
	struct node **nodes = malloc((size_t)n * sizeof(*nodes));
	double sum = 0;

	for (long i = 0; i < n; i++) {
		nodes[i] = malloc(sizeof(struct node)); /* ORACLE: OBJECT */
		nodes[i]->bbox[0] = (double)i;
	}
	for (long r = 0; r < rounds; r++)
		for (long i = 0; i < n; i++)
			sum += nodes[i]->bbox[0]; /* ORACLE: ISSUE */
	printf("%f\n", sum);
	for (long i = 0; i < n; i++)
		free(nodes[i]);
	free(nodes);
	return 0;
}
