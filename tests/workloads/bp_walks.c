// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * bp_walks: memory walks with known addresses, for the breakpoint tests.
 * Each walk loads through one instruction of its own, labelled with a global
 * symbol, and reports every address it loaded from as C computes it from the
 * array (not from the instruction's operand):
 *
 *   col         cp_col_load  a column of a 64 x 4096-byte static array: one L1 set
 *   pad         cp_pad_load  the same with rows padded by a line: a new set each time
 *   seq         cp_seq_load  64 consecutive longs: 8 per line
 *   tls         cp_tls_load  the first 8 longs at %fs:0 (glibc's thread control block)
 *   rip         cp_rip_load  one static long, RIP-relative, 8 times
 *   tls-thread  cp_tls_load  the tls walk in a thread created for it
 *
 * Protocol: prints "ready PID", then "label NAME ADDR" per instruction; for
 * each walk name read on stdin it runs the walk, prints "access NAME TID
 * ADDR" per load, then "done NAME". EOF or "quit" exits 0.
 */
#include <asm/prctl.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/syscall.h>
#include <unistd.h>

#define ROWS	64
#define ROW	4096
#define LINE	64
#define SEQ_N	64
#define TLS_N	8
#define RIP_N	8

static char grid[ROWS][ROW] __attribute__((aligned(ROW)));
static char padded[ROWS][ROW + LINE] __attribute__((aligned(ROW)));
static long seq[SEQ_N + 1] __attribute__((aligned(LINE)));
static long rip_var;

extern const char cp_col_load[], cp_pad_load[], cp_seq_load[], cp_tls_load[], cp_rip_load[];

__attribute__((noinline, noclone)) static long col_load(const char *base, long off)
{
	long v;

	asm volatile(".globl cp_col_load\ncp_col_load:\n\t"
		     "movzbl 3(%1,%2,1), %k0" : "=r"(v) : "r"(base), "r"(off) : "memory");
	return v;
}

__attribute__((noinline, noclone)) static long pad_load(const char *base, long off)
{
	long v;

	asm volatile(".globl cp_pad_load\ncp_pad_load:\n\t"
		     "movzbl (%1,%2,1), %k0" : "=r"(v) : "r"(base), "r"(off) : "memory");
	return v;
}

__attribute__((noinline, noclone)) static long seq_load(const long *base, long i)
{
	long v;

	asm volatile(".globl cp_seq_load\ncp_seq_load:\n\t"
		     "movq 8(%1,%2,8), %0" : "=r"(v) : "r"(base), "r"(i) : "memory");
	return v;
}

__attribute__((noinline, noclone)) static long tls_load(long i)
{
	long v;

	asm volatile(".globl cp_tls_load\ncp_tls_load:\n\t"
		     "movq %%fs:(,%1,8), %0" : "=r"(v) : "r"(i) : "memory");
	return v;
}

__attribute__((noinline, noclone)) static long rip_load(void)
{
	long v;

	asm volatile(".globl cp_rip_load\ncp_rip_load:\n\t"
		     "movq %1, %0" : "=r"(v) : "m"(rip_var) : "memory");
	return v;
}

struct walk_out {
	const char *name;
	unsigned long addr[ROWS];
	int n;
	long tid;
};

static void walk(const char *name, struct walk_out *o)
{
	unsigned long fs = 0;

	memset(o, 0, sizeof(*o));
	o->name = name;
	o->tid = syscall(SYS_gettid);
	if (!strcmp(name, "col")) {
		for (int r = 0; r < ROWS; r++) {
			col_load(&grid[0][0], (long)r * ROW);
			o->addr[o->n++] = (unsigned long)&grid[r][3];
		}
	} else if (!strcmp(name, "pad")) {
		for (int r = 0; r < ROWS; r++) {
			pad_load(&padded[0][0], (long)r * (ROW + LINE));
			o->addr[o->n++] = (unsigned long)&padded[r][0];
		}
	} else if (!strcmp(name, "seq")) {
		for (int i = 0; i < SEQ_N; i++) {
			seq_load(seq, i);
			o->addr[o->n++] = (unsigned long)&seq[i + 1];
		}
	} else if (!strcmp(name, "tls")) {
		syscall(SYS_arch_prctl, ARCH_GET_FS, &fs);
		for (int i = 0; i < TLS_N; i++) {
			tls_load(i);
			o->addr[o->n++] = fs + 8ul * i;
		}
	} else if (!strcmp(name, "rip")) {
		for (int i = 0; i < RIP_N; i++) {
			rip_load();
			o->addr[o->n++] = (unsigned long)&rip_var;
		}
	}
}

static void *tls_thread(void *arg)
{
	walk("tls", arg);
	return NULL;
}

static void report(const char *name, const struct walk_out *o)
{
	for (int i = 0; i < o->n; i++)
		printf("access %s %ld 0x%lx\n", name, o->tid, o->addr[i]);
	printf("done %s\n", name);
	fflush(stdout);
}

int main(void)
{
	static struct walk_out out;
	char line[64];

	printf("ready %d\n", getpid());
	printf("label col %p\nlabel pad %p\nlabel seq %p\nlabel tls %p\nlabel rip %p\n",
	       (void *)cp_col_load, (void *)cp_pad_load, (void *)cp_seq_load, (void *)cp_tls_load,
	       (void *)cp_rip_load);
	fflush(stdout);
	while (fgets(line, sizeof(line), stdin)) {
		line[strcspn(line, "\n")] = '\0';
		if (!strcmp(line, "quit"))
			break;
		if (!strcmp(line, "tls-thread")) {
			pthread_t th;

			if (pthread_create(&th, NULL, tls_thread, &out) || pthread_join(th, NULL))
				return 1;
		} else {
			walk(line, &out);
		}
		report(line, &out);
	}
	return 0;
}
