// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A global counter both threads increment: true sharing (the same bytes),
 * the application's.
 * usage: counter_true_sharing [INCREMENTS]
 */
#include "oracle_wl.h"

static _Atomic long counter; /* ORACLE: OBJECT */

static void *count_thread(void *p)
{
	long n = *(long *)p;

	for (long i = 0; i < n; i++)
		counter += 1; /* ORACLE: ISSUE */
	return NULL;
}

int main(int argc, char **argv)
{
	long n[2];

	n[0] = n[1] = wl_arg(argc, argv, 1, 3000000);
	wl_run(2, count_thread, n, sizeof(n[0]));
	printf("%ld\n", (long)counter);
	return 0;
}
