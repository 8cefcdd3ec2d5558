// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A process that maps no malloc, ever: no libc, static, x86-64 system calls
 * only. It sleeps SECONDS (argv[1], one digit; default 1) and exits. The
 * profiler can find no allocator in it, however late it looks
 * (tests/e2e/test_logs.sh).
 */
#include <linux/time.h>

static long sys2(long nr, long a, long b)
{
	long ret;

	__asm__ volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b) : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noreturn, used)) static void start_c(long *sp)
{
	char **argv = (char **)(sp + 1);
	struct timespec ts = { .tv_sec = 1 };

	if (sp[0] > 1 && argv[1][0] >= '0' && argv[1][0] <= '9')
		ts.tv_sec = argv[1][0] - '0';
	sys2(35 /* nanosleep */, (long)&ts, 0);
	for (;;)
		sys2(60 /* exit */, 0, 0);
}

/* the kernel's stack at entry: argc, then argv */
__asm__(".globl _start\n"
	"_start:\n"
	"	mov %rsp, %rdi\n"
	"	and $-16, %rsp\n"
	"	call start_c\n");
