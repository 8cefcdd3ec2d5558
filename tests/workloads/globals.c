// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * globals: variables whose names, sizes and addresses the object resolver
 * must find in a live process - globals of this PIE (from .symtab), a
 * file-static, thread-locals in two threads, a libc global (from libc's
 * .dynsym), a stack slot of a blocked thread and a heap block allocated
 * before any profiler could attach.
 *
 * Protocol: prints one line per variable, "WHAT NAME ADDR SIZE [TP]" (ADDR
 * and TP in hex, TP the thread pointer of the thread owning a TLS copy),
 * then "ready PID" once the second thread is blocked in read(2); exits 0
 * after a line on stdin.
 */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

struct cp_wl_config {
	char name[24];
	long limits[6];
	double ratio;
};

int cp_wl_array[1000];
struct cp_wl_config cp_wl_config = { .name = "globals", .ratio = 0.5 };
static long cp_wl_static[16] = { 1 };
__thread long cp_wl_tls[8] = { 7 };	/* .tdata */
__thread int cp_wl_tls_zero;		/* .tbss */

static int pipe_fds[2];
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static volatile long worker_tid;

static unsigned long thread_pointer(void)
{
	unsigned long tp;

	/* x86-64: %fs:0 holds the TCB's pointer to itself, i.e. the fs base */
	__asm__ volatile("mov %%fs:0, %0" : "=r"(tp));
	return tp;
}

static void emit(const char *what, const char *name, const void *addr, size_t size,
		 unsigned long tp)
{
	pthread_mutex_lock(&out_lock);
	if (tp)
		printf("%s %s %p %zu %#lx\n", what, name, addr, size, tp);
	else
		printf("%s %s %p %zu\n", what, name, addr, size);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
}

static void emit_tls(void)
{
	cp_wl_tls[1]++;
	cp_wl_tls_zero++;
	emit("tls", "cp_wl_tls", &cp_wl_tls[0], sizeof(cp_wl_tls), thread_pointer());
	emit("tls", "cp_wl_tls_zero", &cp_wl_tls_zero, sizeof(cp_wl_tls_zero), thread_pointer());
}

static void *worker(void *arg)
{
	long local[4] = { 0 };
	char c;

	(void)arg;
	emit_tls();
	emit("stack", "-", &local[2], sizeof(local[2]), 0);
	worker_tid = syscall(SYS_gettid);
	if (read(pipe_fds[0], &c, 1) != 1)
		return (void *)1;
	return (void *)(long)local[0];
}

/* True once @tid sleeps in a system call: its syscall file then shows its stack pointer. */
static int blocked(long tid)
{
	char path[64], buf[32] = "";
	FILE *f;

	snprintf(path, sizeof(path), "/proc/self/task/%ld/syscall", tid);
	f = fopen(path, "r");
	if (!f)
		return 0;
	if (!fgets(buf, sizeof(buf), f))
		buf[0] = '\0';
	fclose(f);
	return buf[0] && strncmp(buf, "running", 7);
}

int main(void)
{
	char *early = malloc(1000);	/* before attach: no allocation event for it */
	char line[16];
	pthread_t th;

	if (!early || pipe(pipe_fds))
		return 1;
	memset(early, 1, 1000);
	cp_wl_array[3] = cp_wl_static[0];
	emit("global", "cp_wl_array", cp_wl_array, sizeof(cp_wl_array), 0);
	emit("global", "cp_wl_config", &cp_wl_config, sizeof(cp_wl_config), 0);
	emit("member", "cp_wl_config", &cp_wl_config.limits[2], sizeof(cp_wl_config), 0);
	emit("global", "cp_wl_static", cp_wl_static, sizeof(cp_wl_static), 0);
	/* stdout (the pointer) may be a copy relocation in this executable; what it
	 * points to, _IO_2_1_stdout_, is libc's own FILE in libc's .data */
	emit("global", "stdout", &stdout, sizeof(stdout), 0);
	emit("libc", "_IO_2_1_stdout_", stdout, 0, 0);
	emit("heap", "-", early + 500, 1000, 0);
	emit_tls();
	if (pthread_create(&th, NULL, worker, NULL))
		return 1;
	for (int i = 0; i < 2000 && !(worker_tid && blocked(worker_tid)); i++)
		usleep(1000);
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (!fgets(line, sizeof(line), stdin))
		line[0] = '\0';
	if (write(pipe_fds[1], "x", 1) != 1)
		return 1;
	pthread_join(th, NULL);
	free(early);
	return 0;
}
