// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Cache-friendly controls: "sum" walks a 16 KiB array again and again (it
 * fits in L1); "padded" is lr_false_sharing with each thread's sums on a line
 * of its own. Neither has an issue to report.
 * usage: friendly_control sum|padded [N [ROUNDS]]
 */
#include <string.h>

#include "oracle_wl.h"

struct padded {
	volatile long long sum;
	char pad[56];
};

static void *padded_thread(void *p)
{
	struct padded *a = p;

	for (long i = 0; i < 1000000; i++)
		a->sum += i & 7;
	return NULL;
}

int main(int argc, char **argv)
{
	long n = wl_arg(argc, argv, 2, 2048), rounds = wl_arg(argc, argv, 3, 5000);
	double *a, sum = 0;

	if (argc > 1 && !strcmp(argv[1], "padded")) {
		struct padded *args = aligned_alloc(64, 2 * sizeof(*args));

		memset(args, 0, 2 * sizeof(*args));
		wl_run(2, padded_thread, args, sizeof(*args));
		printf("%lld\n", args[0].sum + args[1].sum);
		free(args);
		return 0;
	}
	a = malloc((size_t)n * sizeof(*a));
	for (long i = 0; i < n; i++)
		a[i] = (double)i;
	for (long r = 0; r < rounds; r++)
		for (long i = 0; i < n; i++)
			sum += a[i];
	printf("%f\n", sum);
	free(a);
	return 0;
}
