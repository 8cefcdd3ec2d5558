// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * pid_reuse: one process of tests/e2e/test_pid_reuse.sh, where a root
 * worker takes the PID of a tenant that exited. The test builds it twice
 * without PIE, so that both load at the same addresses: as the tenant
 * (-DCP_WORK_FN=cp_tenant_secret_fn -DCP_WORK_PAD=512) and as the root
 * worker (the defaults: a pad of 1 byte). The padding puts the worker's faulting store
 * inside the tenant's function: a symbolizer that answered the worker's
 * samples with the tenant's snapshot would name cp_tenant_secret_fn.
 *
 * usage: pid_reuse [-f PID] [NR_PAGES [MS [LINGER_MS]]]. Faults NR_PAGES
 * (default 64) fresh pages in CP_WORK_FN, again and again for MS
 * milliseconds (default 800), then lives LINGER_MS more (default 2500, so
 * that its records are handled while it lives) and exits 0. With -f (root),
 * a forked child does that, given PID as a pre-forking daemon's worker
 * would get it: no exec. It prints "worker PID STATUS".
 */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#ifndef CP_WORK_FN
#define CP_WORK_FN cp_root_worker_fn
#endif
#ifndef CP_WORK_PAD
#define CP_WORK_PAD 1
#endif
#define CP_STR2(x) #x
#define CP_STR(x)  CP_STR2(x)

/* First in the file, so that it starts at the same address in both builds. */
__attribute__((noinline)) void CP_WORK_FN(volatile char *p, size_t pages)
{
	/* skipped, never run: it only moves the store below */
	__asm__ volatile("jmp 1f\n\t.skip " CP_STR(CP_WORK_PAD) ", 0xcc\n1:");
	for (size_t i = 0; i < pages; i++)
		p[i * 4096] = (char)i;
}

static long now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Faults @pages fresh pages in CP_WORK_FN for @ms, then lives @linger_ms more. */
static int work(size_t pages, long ms, long linger_ms)
{
	long end = now_ms() + ms;

	do {
		char *p = mmap(NULL, pages * 4096, PROT_READ | PROT_WRITE,
			       MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED)
			return 1;
		CP_WORK_FN(p, pages);
		munmap(p, pages * 4096);
	} while (now_ms() < end);
	usleep((useconds_t)linger_ms * 1000);
	return 0;
}

/*
 * A worker forked with PID @pid, as a pre-forking daemon forks one (no
 * exec): ns_last_pid set to @pid - 1 right before each fork, until a child
 * gets @pid. Prints "worker PID STATUS" (PID 0: never had).
 */
static int fork_worker(pid_t pid, size_t pages, long ms, long linger_ms)
{
	for (int i = 0; i < 200; i++) {
		int fd = open("/proc/sys/kernel/ns_last_pid", O_WRONLY);
		char buf[16];
		int st, len = snprintf(buf, sizeof(buf), "%d", (int)pid - 1);
		pid_t child;

		if (fd < 0 || write(fd, buf, (size_t)len) != len)
			return 1;
		close(fd);
		child = fork();
		if (child < 0)
			return 1;
		if (!child)
			_exit(getpid() == pid ? work(pages, ms, linger_ms) : 3);
		if (waitpid(child, &st, 0) != child)
			return 1;
		if (child == pid) {
			printf("worker %d %d\n", (int)pid, WIFEXITED(st) ? WEXITSTATUS(st) : -1);
			return 0;
		}
		usleep(10000);
	}
	printf("worker 0 -1\n");
	return 0;
}

int main(int argc, char **argv)
{
	pid_t pid = 0;

	if (argc > 2 && !strcmp(argv[1], "-f")) {
		pid = (pid_t)atoi(argv[2]);
		argv += 2;
		argc -= 2;
	}
	size_t pages = argc > 1 ? strtoul(argv[1], NULL, 0) : 64;
	long ms = argc > 2 ? atol(argv[2]) : 800;
	long linger = argc > 3 ? atol(argv[3]) : 2500;

	return pid ? fork_worker(pid, pages, ms, linger) : work(pages, ms, linger);
}
