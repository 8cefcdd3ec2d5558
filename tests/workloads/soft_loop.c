// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * soft_loop: a CPU-bound loop with two labelled memory instructions, for the
 * no-PMU source (--source soft): each pass loads one long per 64-byte line of
 * a 64 MiB heap buffer (cp_soft_load, missing the caches, so ticks find it
 * waiting) and stores it, plus one, into a global array (cp_soft_store).
 * Timer ticks that land on those two instructions must become samples with
 * addresses inside the buffer and the array; ticks anywhere else in the loop
 * count time only. A second mode spins in the kernel (reads of /dev/zero):
 * its ticks must not be counted on user instructions.
 *
 *   soft_loop              interactive, for tests/bpf/test_soft_tick_live.c
 *   soft_loop mem MS       the loop for MS milliseconds, then exit 0
 *   soft_loop passes N     N passes, then "loop_ns NS" (their wall-clock time)
 *                          and "loop_cpu_ns NS" (the CPU time the thread spent
 *                          in them, interrupts included), for tests/bench
 *
 * The instruction right after the load (cp_soft_after_load, no memory
 * operand) is where a tick lands while the load waits: skid correction
 * charges those ticks to the load, at the address it read.
 *
 * Protocol (interactive): prints "ready PID", "label load ADDR", "label
 * store ADDR", "label after_load ADDR", "src ADDR BYTES" (the heap
 * buffer), "dst ADDR BYTES" (the global array soft_dst); then runs "mem
 * MS" or "kernel MS" read on stdin and prints "done mem" / "done kernel".
 * EOF or "quit" exits 0.
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define N	4096		/* longs of soft_dst: 32 KiB */
#define SRC_N	(8l << 20)	/* longs of the heap buffer: 64 MiB, past the caches */
#define STRIDE	8		/* longs: one load per line */

unsigned long soft_dst[N] __attribute__((aligned(64)));

extern const char cp_soft_load[], cp_soft_after_load[], cp_soft_store[];

/* One pass: @n stores, loads a line apart; the asm keeps exactly one load and one store. */
__attribute__((noinline, noclone)) static void copy_pass(unsigned long *dst,
							 const unsigned long *src, long n)
{
	for (long i = 0; i < n; i++) {
		unsigned long v;

		/* the add after the load is where ticks land when the load stalls (skid);
		 * early clobber: the load must not overwrite its own address registers */
		asm volatile(".globl cp_soft_load\ncp_soft_load:\n\t" /* soft: load */
			     "movq (%1,%2,8), %0\n"
			     ".globl cp_soft_after_load\ncp_soft_after_load:\n\t"
			     "addq $1, %0" : "=&r"(v) : "r"(src), "r"(i * STRIDE) : "memory");
		asm volatile(".globl cp_soft_store\ncp_soft_store:\n\t" /* soft: store */
			     "movq %0, (%1,%2,8)" : : "r"(v), "r"(dst), "r"(i) : "memory");
	}
}

static double clock_ms(clockid_t id)
{
	struct timespec ts;

	clock_gettime(id, &ts);
	return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static double now_ms(void)
{
	return clock_ms(CLOCK_MONOTONIC);
}

/* @passes passes over the buffer; returns the next offset. */
static long run_passes(unsigned long *src, long off, long passes)
{
	for (long p = 0; p < passes; p++) {
		copy_pass(soft_dst, src + off, N);
		off = (off + N * STRIDE) % SRC_N;
	}
	return off;
}

static void run_mem(unsigned long *src, long ms)
{
	double end = now_ms() + (double)ms;
	long off = 0;

	while (now_ms() < end)
		off = run_passes(src, off, 1);
}

/* Time in the kernel: reads of /dev/zero clear user pages there. */
static void run_kernel(long ms)
{
	static char buf[1 << 20];
	double end = now_ms() + (double)ms;
	int fd = open("/dev/zero", O_RDONLY);

	if (fd < 0)
		return;
	while (now_ms() < end)
		if (read(fd, buf, sizeof(buf)) < 0)
			break;
	close(fd);
}

int main(int argc, char **argv)
{
	unsigned long *src = malloc(SRC_N * sizeof(*src));
	char line[64];
	long ms;

	if (!src)
		return 1;
	for (long i = 0; i < SRC_N; i++)
		src[i] = (unsigned long)i;
	if (argc == 3 && !strcmp(argv[1], "passes")) {
		double t0 = now_ms(), c0 = clock_ms(CLOCK_THREAD_CPUTIME_ID);

		run_passes(src, 0, atol(argv[2]));
		/* without IRQ_TIME_ACCOUNTING the ticks' interrupts are the thread's time */
		printf("loop_cpu_ns %.0f\n", (clock_ms(CLOCK_THREAD_CPUTIME_ID) - c0) * 1e6);
		printf("loop_ns %.0f\n", (now_ms() - t0) * 1e6);
		free(src);
		return 0;
	}
	if (argc == 3 && !strcmp(argv[1], "mem")) {
		run_mem(src, atol(argv[2]));
		free(src);
		return 0;
	}
	setvbuf(stdout, NULL, _IOLBF, 0);
	printf("ready %d\n", (int)getpid());
	printf("label load %lx\n", (unsigned long)cp_soft_load);
	printf("label store %lx\n", (unsigned long)cp_soft_store);
	printf("label after_load %lx\n", (unsigned long)cp_soft_after_load);
	printf("src %lx %zu\n", (unsigned long)src, SRC_N * sizeof(*src));
	printf("dst %lx %zu\n", (unsigned long)soft_dst, sizeof(soft_dst));
	while (fgets(line, sizeof(line), stdin) && strncmp(line, "quit", 4)) {
		if (sscanf(line, "mem %ld", &ms) == 1) {
			run_mem(src, ms);
			printf("done mem\n");
		} else if (sscanf(line, "kernel %ld", &ms) == 1) {
			run_kernel(ms);
			printf("done kernel\n");
		}
	}
	free(src);
	return 0;
}
