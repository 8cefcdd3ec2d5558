// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The oracle's tracing runtime: the __tsan_* hooks that clang's
 * -fsanitize=thread instrumentation calls before every load, store and
 * atomic of a workload, implemented to write each access (thread, ip,
 * address, size, kind) into the trace stream (trace.h) in one global order,
 * instead of the real TSan runtime. Allocation functions and memcpy/memset
 * are wrapped with -Wl,--wrap (the Makefile links workloads so).
 *
 * One ticket lock orders the records: the order of the trace is an order in
 * which the threads really performed their accesses (each access is
 * recorded just before it executes, under the lock, so two threads' records
 * interleave as their hooks did). A ticket lock is first come, first served:
 * with a plain spinlock the thread that just released it wins it again, and
 * threads running side by side would show up as long runs of one thread. Only the hooks the corpus needs are
 * here: a workload using another atomic fails to link, by name.
 *
 * Built without instrumentation; never calls an instrumented function.
 */
#include <stdatomic.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <fcntl.h>
#include <sched.h>

#include "trace.h"

#define BUF_RECS	65536
#define RA()		((__u64)__builtin_return_address(0) - 1)

static atomic_uint next_ticket, now_serving;
static struct cp_trace_rec buf[BUF_RECS];
static unsigned int nbuf;
static int out_fd = -1;
static atomic_int nr_threads;
static __thread int tix = -1;

static void lock(void)
{
	unsigned int me = atomic_fetch_add_explicit(&next_ticket, 1, memory_order_relaxed);

	/* yield now and then: a waiter ahead of us may have lost its CPU (more threads than CPUs) */
	for (unsigned int spins = 1; atomic_load_explicit(&now_serving, memory_order_acquire) != me;
	     spins++) {
		if (spins % 1024)
			__builtin_ia32_pause();
		else
			sched_yield();
	}
}

static void unlock(void)
{
	atomic_fetch_add_explicit(&now_serving, 1, memory_order_release);
}

static void flush_locked(void)
{
	const char *p = (const char *)buf;
	size_t left = nbuf * sizeof(buf[0]);

	while (left && out_fd >= 0) {
		ssize_t n = write(out_fd, p, left);

		if (n <= 0) {
			out_fd = -1;	/* the simulator went away: run on untraced */
			break;
		}
		p += n;
		left -= (size_t)n;
	}
	nbuf = 0;
}

static void put_locked(__u64 ip, __u64 addr, unsigned int size, unsigned int kind)
{
	buf[nbuf++] = (struct cp_trace_rec){
		.addr = addr, .ip = ip, .tid = tix > CP_TRACE_MAX_THREADS ? CP_TRACE_MAX_THREADS : tix,
		.size = size > 16 ? 16 : size, .kind = kind,
	};
	if (nbuf == BUF_RECS)
		flush_locked();
}

/*
 * Writes one record, or a record and the size record that follows it
 * (@value, for ALLOC and MAPS), under one hold of the lock: another
 * thread's record between the two would be read as the size.
 */
static void put2(__u64 ip, __u64 addr, unsigned int size, unsigned int kind, bool sized,
		 __u64 value)
{
	if (out_fd < 0)
		return;
	if (tix < 0)
		tix = atomic_fetch_add(&nr_threads, 1);
	lock();
	put_locked(ip, addr, size, kind);
	if (sized)
		put_locked(ip, value, 0, CP_TR_SIZE);
	unlock();
}

static void put(__u64 ip, __u64 addr, unsigned int size, unsigned int kind)
{
	put2(ip, addr, size, kind, false, 0);
}

/* Records @len bytes at @p as 8-byte accesses (memcpy, memset, ranges). */
static void put_range(__u64 ip, const void *p, size_t len, unsigned int kind)
{
	__u64 a = (__u64)p;

	while (len) {
		unsigned int n = len < 8 ? (unsigned int)len : 8 - (unsigned int)(a & 7);

		put(ip, a, n, kind);
		a += n;
		len -= n;
	}
}

/* The end of the trace: this process's maps, for the recording's symbols and objects. */
static void finish(void)
{
	char text[65536];
	int fd = open("/proc/self/maps", O_RDONLY);
	size_t len = 0;
	ssize_t n;

	while (fd >= 0 && len < sizeof(text) && (n = read(fd, text + len, sizeof(text) - len)) > 0)
		len += (size_t)n;
	if (fd >= 0)
		close(fd);
	put2(0, (__u64)getpid(), 0, CP_TR_MAPS, true, len);
	lock();
	flush_locked();
	if (out_fd >= 0 && write(out_fd, text, len) != (ssize_t)len)
		out_fd = -1;
	out_fd = -1;
	unlock();
}

void __tsan_init(void)
{
	const char *fd = getenv(CP_TRACE_FD_ENV);

	if (out_fd >= 0 || !fd)
		return;
	out_fd = atoi(fd);
	tix = atomic_fetch_add(&nr_threads, 1);
	atexit(finish);
}

void __tsan_func_entry(void *pc) { (void)pc; }
void __tsan_func_exit(void) {}
void __tsan_ignore_thread_begin(void) {}
void __tsan_ignore_thread_end(void) {}

void __tsan_read1(void *a) { put(RA(), (__u64)a, 1, CP_TR_READ); }
void __tsan_read2(void *a) { put(RA(), (__u64)a, 2, CP_TR_READ); }
void __tsan_read4(void *a) { put(RA(), (__u64)a, 4, CP_TR_READ); }
void __tsan_read8(void *a) { put(RA(), (__u64)a, 8, CP_TR_READ); }
void __tsan_read16(void *a) { put(RA(), (__u64)a, 16, CP_TR_READ); }
void __tsan_write1(void *a) { put(RA(), (__u64)a, 1, CP_TR_WRITE); }
void __tsan_write2(void *a) { put(RA(), (__u64)a, 2, CP_TR_WRITE); }
void __tsan_write4(void *a) { put(RA(), (__u64)a, 4, CP_TR_WRITE); }
void __tsan_write8(void *a) { put(RA(), (__u64)a, 8, CP_TR_WRITE); }
void __tsan_write16(void *a) { put(RA(), (__u64)a, 16, CP_TR_WRITE); }
void __tsan_unaligned_read2(void *a) { put(RA(), (__u64)a, 2, CP_TR_READ); }
void __tsan_unaligned_read4(void *a) { put(RA(), (__u64)a, 4, CP_TR_READ); }
void __tsan_unaligned_read8(void *a) { put(RA(), (__u64)a, 8, CP_TR_READ); }
void __tsan_unaligned_read16(void *a) { put(RA(), (__u64)a, 16, CP_TR_READ); }
void __tsan_unaligned_write2(void *a) { put(RA(), (__u64)a, 2, CP_TR_WRITE); }
void __tsan_unaligned_write4(void *a) { put(RA(), (__u64)a, 4, CP_TR_WRITE); }
void __tsan_unaligned_write8(void *a) { put(RA(), (__u64)a, 8, CP_TR_WRITE); }
void __tsan_unaligned_write16(void *a) { put(RA(), (__u64)a, 16, CP_TR_WRITE); }
void __tsan_read_range(void *a, unsigned long n) { put_range(RA(), a, n, CP_TR_READ); }
void __tsan_write_range(void *a, unsigned long n) { put_range(RA(), a, n, CP_TR_WRITE); }
void __tsan_vptr_read(void **a) { put(RA(), (__u64)a, 8, CP_TR_READ); }
void __tsan_vptr_update(void **a, void *v) { (void)v; put(RA(), (__u64)a, 8, CP_TR_WRITE); }

/* Atomics: the access is recorded (an RMW as a write: it takes the line exclusive), then done. */
int __tsan_atomic32_load(const volatile int *a, int mo)
{
	(void)mo;
	put(RA(), (__u64)a, 4, CP_TR_READ);
	return __atomic_load_n(a, __ATOMIC_SEQ_CST);
}

long __tsan_atomic64_load(const volatile long *a, int mo)
{
	(void)mo;
	put(RA(), (__u64)a, 8, CP_TR_READ);
	return __atomic_load_n(a, __ATOMIC_SEQ_CST);
}

void __tsan_atomic32_store(volatile int *a, int v, int mo)
{
	(void)mo;
	put(RA(), (__u64)a, 4, CP_TR_WRITE);
	__atomic_store_n(a, v, __ATOMIC_SEQ_CST);
}

void __tsan_atomic64_store(volatile long *a, long v, int mo)
{
	(void)mo;
	put(RA(), (__u64)a, 8, CP_TR_WRITE);
	__atomic_store_n(a, v, __ATOMIC_SEQ_CST);
}

int __tsan_atomic32_fetch_add(volatile int *a, int v, int mo)
{
	(void)mo;
	put(RA(), (__u64)a, 4, CP_TR_WRITE);
	return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}

long __tsan_atomic64_fetch_add(volatile long *a, long v, int mo)
{
	(void)mo;
	put(RA(), (__u64)a, 8, CP_TR_WRITE);
	return __atomic_fetch_add(a, v, __ATOMIC_SEQ_CST);
}

long __tsan_atomic64_fetch_sub(volatile long *a, long v, int mo)
{
	(void)mo;
	put(RA(), (__u64)a, 8, CP_TR_WRITE);
	return __atomic_fetch_sub(a, v, __ATOMIC_SEQ_CST);
}

long __tsan_atomic64_compare_exchange_val(volatile long *a, long c, long v, int mo, int fmo)
{
	(void)mo;
	(void)fmo;
	put(RA(), (__u64)a, 8, CP_TR_WRITE);
	__atomic_compare_exchange_n(a, &c, v, false, __ATOMIC_SEQ_CST, __ATOMIC_SEQ_CST);
	return c;
}

void __tsan_atomic_thread_fence(int mo) { (void)mo; __atomic_thread_fence(__ATOMIC_SEQ_CST); }
void __tsan_atomic_signal_fence(int mo) { (void)mo; }

/* ---- allocation and bulk-memory wrappers (-Wl,--wrap=NAME) ---- */

void *__real_malloc(size_t n);
void *__real_calloc(size_t n, size_t m);
void *__real_realloc(void *p, size_t n);
void __real_free(void *p);
int __real_posix_memalign(void **p, size_t al, size_t n);

static void *alloced(__u64 ip, void *p, size_t n)
{
	if (p) {
		put2(ip, (__u64)p, 0, CP_TR_ALLOC, true, n);
	}
	return p;
}

void *__wrap_malloc(size_t n) { return alloced(RA(), __real_malloc(n), n); }
void *__wrap_calloc(size_t n, size_t m) { return alloced(RA(), __real_calloc(n, m), n * m); }

void __wrap_free(void *p)
{
	if (p)
		put(RA(), (__u64)p, 0, CP_TR_FREE);
	__real_free(p);
}

void *__wrap_realloc(void *p, size_t n)
{
	__u64 ip = RA();

	if (p)
		put(ip, (__u64)p, 0, CP_TR_FREE);
	return alloced(ip, __real_realloc(p, n), n);
}

int __wrap_posix_memalign(void **p, size_t al, size_t n)
{
	int ret = __real_posix_memalign(p, al, n);

	if (!ret)
		alloced(RA(), *p, n);
	return ret;
}

void *__real_memcpy(void *d, const void *s, size_t n);
void *__real_memset(void *d, int c, size_t n);

void *__wrap_memcpy(void *d, const void *s, size_t n)
{
	put_range(RA(), s, n, CP_TR_READ);
	put_range(RA(), d, n, CP_TR_WRITE);
	return __real_memcpy(d, s, n);
}

void *__wrap_memset(void *d, int c, size_t n)
{
	put_range(RA(), d, n, CP_TR_WRITE);
	return __real_memset(d, c, n);
}
