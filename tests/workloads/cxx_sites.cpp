// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cxx_sites: C++ operator new and delete of known sizes from known call
 * sites, in several threads, linked against an allocator that implements
 * them itself (built as cxx_sites_tcmalloc, cxx_sites_jemalloc and
 * cxx_sites_mimalloc). Every call goes through CP_CALL3 (call_site.h) and is
 * followed by the global label `cp_ret_NAME`, so tests find each call
 * site's return address in the ELF symbol table.
 *
 * Protocol (as alloc_sites' "sites" mode): prints "ready PID", waits for a
 * line; then NR_THREADS threads each allocate PER_FUNC objects through every
 * variant of operator new (and malloc) with sizes
 * SIZE_BASE * (thread + 1) + 16 * function + i, delete every third one
 * through the plain (unsized) delete of its kind, and print one line per
 * object still alive: "obj TID NAME ADDR SIZE"; with CXX_SITES_THROW=1 in
 * the environment thread 0 then asks operator new for more than any machine
 * has and prints "threw bad_alloc TID" once the exception came out through
 * the probed operator new (its return probe must not break unwinding;
 * mimalloc aborts instead of throwing); then "done", waits for a line,
 * deletes the rest through the sized deletes and exits 0.
 */
#include <new>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "call_site.h"
#include "sites_run.h"

#define NR_THREADS	4
#define PER_FUNC	8
#define SIZE_BASE	1000
#define ALIGN		64

typedef void *(*site_fn)(void *p, size_t n, size_t align);

/* One labelled call of SYM with the arguments A, B, C (of p, n, align). */
#define CP_SITE(name, sym, a, b, c)						\
	__attribute__((noinline)) static void *s_##name(void *p, size_t n, size_t align) \
	{									\
		void *r;							\
										\
		(void)p;							\
		(void)n;							\
		(void)align;							\
		CP_CALL3(sym, "cp_ret_" #name, a, b, c, r);			\
		return r;							\
	}

static const std::nothrow_t *const nt = &std::nothrow;

CP_SITE(new, "_Znwm", n, 0, 0)
CP_SITE(new_array, "_Znam", n, 0, 0)
CP_SITE(new_nothrow, "_ZnwmRKSt9nothrow_t", n, nt, 0)
CP_SITE(new_array_nothrow, "_ZnamRKSt9nothrow_t", n, nt, 0)
CP_SITE(new_aligned, "_ZnwmSt11align_val_t", n, align, 0)
CP_SITE(new_array_aligned, "_ZnamSt11align_val_t", n, align, 0)
CP_SITE(new_aligned_nothrow, "_ZnwmSt11align_val_tRKSt9nothrow_t", n, align, nt)
CP_SITE(new_array_aligned_nothrow, "_ZnamSt11align_val_tRKSt9nothrow_t", n, align, nt)
CP_SITE(malloc, "malloc", n, 0, 0)
CP_SITE(delete, "_ZdlPv", p, 0, 0)
CP_SITE(delete_array, "_ZdaPv", p, 0, 0)
CP_SITE(delete_sized, "_ZdlPvm", p, n, 0)
CP_SITE(delete_array_sized, "_ZdaPvm", p, n, 0)
CP_SITE(delete_nothrow, "_ZdlPvRKSt9nothrow_t", p, nt, 0)
CP_SITE(delete_array_nothrow, "_ZdaPvRKSt9nothrow_t", p, nt, 0)
CP_SITE(delete_aligned, "_ZdlPvSt11align_val_t", p, align, 0)
CP_SITE(delete_array_aligned, "_ZdaPvSt11align_val_t", p, align, 0)
CP_SITE(delete_sized_aligned, "_ZdlPvmSt11align_val_t", p, n, align)
CP_SITE(delete_array_sized_aligned, "_ZdaPvmSt11align_val_t", p, n, align)
CP_SITE(delete_aligned_nothrow, "_ZdlPvSt11align_val_tRKSt9nothrow_t", p, align, nt)
CP_SITE(delete_array_aligned_nothrow, "_ZdaPvSt11align_val_tRKSt9nothrow_t", p, align, nt)
CP_SITE(free, "free", p, 0, 0)

/* Each allocation function, the delete of every third object, the delete at the end. */
static const struct {
	const char *name;
	site_fn alloc, del_early, del_late;
	size_t align;
} funcs[] = {
	{ "new", s_new, s_delete, s_delete_sized, 0 },
	{ "new_array", s_new_array, s_delete_array, s_delete_array_sized, 0 },
	{ "new_nothrow", s_new_nothrow, s_delete_nothrow, s_delete_sized, 0 },
	{ "new_array_nothrow", s_new_array_nothrow, s_delete_array_nothrow,
	  s_delete_array_sized, 0 },
	{ "new_aligned", s_new_aligned, s_delete_aligned, s_delete_sized_aligned, ALIGN },
	{ "new_array_aligned", s_new_array_aligned, s_delete_array_aligned,
	  s_delete_array_sized_aligned, ALIGN },
	{ "new_aligned_nothrow", s_new_aligned_nothrow, s_delete_aligned_nothrow,
	  s_delete_sized_aligned, ALIGN },
	{ "new_array_aligned_nothrow", s_new_array_aligned_nothrow,
	  s_delete_array_aligned_nothrow, s_delete_array_sized_aligned, ALIGN },
	{ "malloc", s_malloc, s_free, s_free, 0 },
};
#define NR_FUNCS	(sizeof(funcs) / sizeof(funcs[0]))

struct obj {
	void *p;
	size_t size;
	unsigned int func;
};

static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static struct obj objs[NR_THREADS][NR_FUNCS * PER_FUNC];

/* operator new of @n bytes; 1 when it threw std::bad_alloc. */
__attribute__((noinline)) static int new_throws(size_t n)
{
	try {
		void *p = ::operator new(n);

		::operator delete(p);
	} catch (const std::bad_alloc &) {
		return 1;
	}
	return 0;
}

static void *worker(void *arg)
{
	int t = (int)(long)arg, n = 0;
	long tid = syscall(SYS_gettid);

	for (unsigned int f = 0; f < NR_FUNCS; f++) {
		for (int i = 0; i < PER_FUNC; i++) {
			struct obj *o = &objs[t][n++];

			o->func = f;
			o->size = SIZE_BASE * (t + 1) + f * 16 + i;
			o->p = funcs[f].alloc(NULL, o->size, funcs[f].align);
		}
	}
	for (int i = 0; i < n; i += 3) {
		const struct obj *o = &objs[t][i];

		funcs[o->func].del_early(o->p, o->size, funcs[o->func].align);
		objs[t][i].p = NULL;
	}
	pthread_mutex_lock(&out_lock);
	for (int i = 0; i < n; i++)
		if (objs[t][i].p)
			printf("obj %ld %s %p %zu\n", tid, funcs[objs[t][i].func].name, objs[t][i].p,
			       objs[t][i].size);
	/* half the address space: no allocator can, whatever the overcommit policy */
	if (t == 0 && getenv("CXX_SITES_THROW") && new_throws((size_t)-1 / 2))
		printf("threw bad_alloc %ld\n", tid);
	fflush(stdout);
	pthread_mutex_unlock(&out_lock);
	return NULL;
}

int main(void)
{
	printf("ready %d\n", getpid());
	fflush(stdout);
	if (cp_wait_line() || cp_sites_run(worker, NR_THREADS))
		return 1;
	for (int t = 0; t < NR_THREADS; t++) {
		for (unsigned int i = 0; i < NR_FUNCS * PER_FUNC; i++) {
			const struct obj *o = &objs[t][i];

			if (o->p)
				funcs[o->func].del_late(o->p, o->size, funcs[o->func].align);
		}
	}
	return 0;
}
