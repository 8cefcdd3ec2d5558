// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * fault_loop: page faults for as long as asked, all through one store in
 * churn(): maps 64 fresh pages, writes the first byte of each, unmaps them,
 * again and again. For tests of continuous operation (rolling summaries, the
 * Prometheus file) with --source faults.
 *
 * usage: fault_loop SECONDS [COMM [IDLE]]: with COMM, the process names
 * itself so (prctl PR_SET_NAME: any bytes, up to 15), as a hostile process
 * could; with IDLE, it then sleeps IDLE seconds without a fault before it
 * exits (what a rolling window must forget).
 */
#include <stdio.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <time.h>
#include <unistd.h>

#define PAGE		4096
#define NR_PAGES	64

__attribute__((noinline, noclone)) static void churn(char *p)
{
	for (int i = 0; i < NR_PAGES; i++)
		p[(size_t)i * PAGE] = 1;	/* the store that faults */
}

int main(int argc, char **argv)
{
	struct timespec start, now;
	double secs = argc > 1 ? atof(argv[1]) : 5;

	if (argc > 2 && argv[2][0] && prctl(PR_SET_NAME, argv[2], 0, 0, 0)) {
		perror("prctl");
		return 1;
	}
	clock_gettime(CLOCK_MONOTONIC, &start);
	do {
		char *p = mmap(NULL, NR_PAGES * PAGE, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED) {
			perror("mmap");
			return 1;
		}
		churn(p);
		munmap(p, NR_PAGES * PAGE);
		clock_gettime(CLOCK_MONOTONIC, &now);
	} while ((double)(now.tv_sec - start.tv_sec) + (now.tv_nsec - start.tv_nsec) / 1e9 < secs);
	if (argc > 3)
		usleep((useconds_t)(atof(argv[3]) * 1e6));
	return 0;
}
