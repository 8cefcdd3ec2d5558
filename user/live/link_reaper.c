// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <bpf/libbpf.h>

#include "live/link_reaper.h"
#include "util/rt_thread.h"

/*
 * Workers: each unregistration waits for the kernel's synchronisation on its
 * own, so several at once overlap their waits: a target's links go in about
 * the time of one instead of one after the other (the budget's windows need
 * probes that stop firing soon after they are detached).
 */
#define CP_REAPER_THREADS 32

struct cp_link_reaper {
	pthread_t threads[CP_REAPER_THREADS];
	int nr_threads;
	pthread_mutex_t lock;
	pthread_cond_t work; /* links queued, or stop */
	pthread_cond_t idle; /* the queue ran empty */
	struct cp_probe_link *queue;
	size_t n, cap;
	size_t head; /* the next link to take */
	size_t busy; /* links taken by workers, not yet destroyed */
	bool stop;
};

static void *reap(void *arg)
{
	struct cp_link_reaper *r = arg;

	pthread_mutex_lock(&r->lock);
	for (;;) {
		struct cp_probe_link link;

		while (r->head == r->n && !r->stop)
			pthread_cond_wait(&r->work, &r->lock);
		if (r->head == r->n)
			break;
		link = r->queue[r->head++];
		if (r->head == r->n)
			r->head = r->n = 0; /* the queue is empty: start over at its front */
		r->busy++;
		pthread_mutex_unlock(&r->lock);
		cp_probe_link_destroy(&link);
		pthread_mutex_lock(&r->lock);
		r->busy--;
		if (r->head == r->n && !r->busy)
			pthread_cond_broadcast(&r->idle);
	}
	pthread_mutex_unlock(&r->lock);
	return NULL;
}

/* Frees @r once no thread uses it. */
void cp_probe_link_destroy(const struct cp_probe_link *l)
{
	if (l->link)
		bpf_link__destroy(l->link);
	else if (l->fd >= 0)
		close(l->fd);
}

static void release(struct cp_link_reaper *r)
{
	free(r->queue);
	pthread_cond_destroy(&r->idle);
	pthread_cond_destroy(&r->work);
	pthread_mutex_destroy(&r->lock);
	free(r);
}

struct cp_link_reaper *cp_link_reaper__new(void)
{
	struct cp_link_reaper *r = calloc(1, sizeof(*r));
	int err;

	if (!r)
		return NULL;
	pthread_mutex_init(&r->lock, NULL);
	pthread_cond_init(&r->work, NULL);
	pthread_cond_init(&r->idle, NULL);
	for (int i = 0; i < CP_REAPER_THREADS; i++) {
		err = cp_rt_thread_start(&r->threads[i], "cp-reaper", reap, r);
		if (err)
			break;
		r->nr_threads++;
	}
	if (r->nr_threads)
		return r;
	release(r);
	errno = err;
	return NULL;
}

void cp_link_reaper__free(struct cp_link_reaper *r)
{
	if (!r)
		return;
	pthread_mutex_lock(&r->lock);
	r->stop = true;
	pthread_cond_broadcast(&r->work);
	pthread_mutex_unlock(&r->lock);
	/* the workers drain the queue before they stop */
	for (int i = 0; i < r->nr_threads; i++)
		pthread_join(r->threads[i], NULL);
	release(r);
}

void cp_link_reaper__add(struct cp_link_reaper *r, const struct cp_probe_link *links, size_t n)
{
	size_t i = 0;

	pthread_mutex_lock(&r->lock);
	if (r->n + n > r->cap) {
		size_t cap = r->cap ? r->cap : 64;
		struct cp_probe_link *q;

		while (cap < r->n + n)
			cap *= 2;
		q = realloc(r->queue, cap * sizeof(*q));
		if (q) {
			r->queue = q;
			r->cap = cap;
		}
	}
	for (; i < n && r->n < r->cap; i++)
		r->queue[r->n++] = links[i];
	/*
	 * a worker per link: a broadcast woke all 32 for the few links of a
	 * window, 45 wakeups a second of real-time threads under -p on a
	 * service with a window a second
	 */
	for (size_t k = 0; k < i && k < (size_t)r->nr_threads; k++)
		pthread_cond_signal(&r->work);
	pthread_mutex_unlock(&r->lock);
	/* no memory for the queue: the slow way, here */
	for (; i < n; i++)
		cp_probe_link_destroy(&links[i]);
}

void cp_link_reaper__flush(struct cp_link_reaper *r)
{
	pthread_mutex_lock(&r->lock);
	while (r->head < r->n || r->busy)
		pthread_cond_wait(&r->idle, &r->lock);
	pthread_mutex_unlock(&r->lock);
}

size_t cp_link_reaper__pending(struct cp_link_reaper *r)
{
	size_t n;

	pthread_mutex_lock(&r->lock);
	n = r->n - r->head + r->busy;
	pthread_mutex_unlock(&r->lock);
	return n;
}
