// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * sigcont [MS]: counts the SIGCONTs it gets while it sleeps MS milliseconds
 * (default 1000), then prints "sigcont N sleep whole|cut" and exits 0 only
 * when none came and the sleep was whole. A profiler that starts it (--
 * CMD) may stop and continue it in its dynamic loader, before main; a
 * static program (built as sigcont_static) never stops there, and must
 * never be continued on a guess: a SIGCONT runs its handler and cuts its
 * sleeps short.
 */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static volatile sig_atomic_t conts;

static void on_cont(int sig)
{
	(void)sig;
	conts++;
}

int main(int argc, char **argv)
{
	long ms = argc > 1 ? atol(argv[1]) : 1000;
	struct timespec t = {ms / 1000, (ms % 1000) * 1000000};
	int cut;

	signal(SIGCONT, on_cont);
	cut = nanosleep(&t, NULL) != 0;
	printf("sigcont %d sleep %s\n", (int)conts, cut ? "cut" : "whole");
	return conts || cut;
}
