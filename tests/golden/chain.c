// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The golden recording's program (tests/golden/README.md): no C library, so
 * that the one file checked in beside the recording is everything its
 * report is symbolized from. It defines its own malloc (one mmap per call),
 * which the allocation probes find in the executable, allocates one object
 * three calls deep (main -> chain_outer -> chain_middle -> chain_inner ->
 * malloc, tests/workloads/alloc_chain.h) once it read a line on stdin (its allocation probes are attached
 * after the exec: "ready" tells when to send it), then writes one byte per
 * page of the object, each a page fault.
 *
 * Built once by tests/golden/make.sh; usage: chain   (512 pages)
 */
#include <stddef.h>
#include <sys/mman.h>
#include <sys/syscall.h>

#include "alloc_chain.h"	/* tests/workloads: chain_outer -> ... -> malloc */

#define PAGES	512
#define PAGE	4096

static long sys(long nr, long a, long b, long c, long d, long e, long f)
{
	long ret;
	register long r10 asm("r10") = d, r8 asm("r8") = e, r9 asm("r9") = f;

	asm volatile("syscall" : "=a"(ret) : "a"(nr), "D"(a), "S"(b), "d"(c), "r"(r10), "r"(r8),
		     "r"(r9) : "rcx", "r11", "memory");
	return ret;
}

__attribute__((noinline, used)) void *malloc(size_t size)
{
	long p = sys(SYS_mmap, 0, (long)size, PROT_READ | PROT_WRITE,
		     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);	/* cp:golden-mmap */

	return p < 0 ? NULL : (void *)p;
}

__attribute__((noinline, used)) void free(void *p)
{
	(void)p;	/* never called: the object lives to the end */
}

static void say_ready(void)
{
	char buf[32] = "ready ", *e = buf + 6, tmp[12];
	long pid = sys(SYS_getpid, 0, 0, 0, 0, 0, 0);
	int n = 0;

	do
		tmp[n++] = (char)('0' + pid % 10);
	while ((pid /= 10) && n < (int)sizeof(tmp));
	while (n)
		*e++ = tmp[--n];
	*e++ = '\n';
	sys(SYS_write, 1, (long)buf, e - buf, 0, 0, 0);
}

__attribute__((noinline)) int main(void)
{
	char line[16], *mem;

	say_ready();
	if (sys(SYS_read, 0, (long)line, sizeof(line), 0, 0, 0) <= 0)
		return 1;
	mem = chain_outer((size_t)PAGES * PAGE);	/* cp:chain-main */
	if (!mem)
		return 1;
	for (size_t i = 0; i < PAGES; i++)
		((volatile char *)mem)[i * PAGE] = 1;	/* cp:golden-touch */
	return 0;
}

/* The entry: a frame-pointer chain that ends here (rbp 0), then exit(main()). */
__attribute__((used)) void _start_c(void)
{
	sys(SYS_exit_group, main(), 0, 0, 0, 0, 0);
}

asm(".globl _start\n"
    "_start:\n\t"
    "xor %ebp, %ebp\n\t"
    "and $-16, %rsp\n\t"
    "call _start_c\n\t"
    "hlt\n");
