// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <sched.h>
#include <stddef.h>

#include "util/rt_thread.h"

int cp_rt_thread_start(pthread_t *t, const char *name, void *(*fn)(void *), void *arg)
{
	struct sched_param prio = {.sched_priority = 1};
	pthread_attr_t attr;
	int err = pthread_attr_init(&attr);

	if (err)
		return err;
	if (!pthread_attr_setinheritsched(&attr, PTHREAD_EXPLICIT_SCHED) &&
	    !pthread_attr_setschedpolicy(&attr, SCHED_FIFO))
		pthread_attr_setschedparam(&attr, &prio);
	err = pthread_create(t, &attr, fn, arg);
	pthread_attr_destroy(&attr);
	if (err == EPERM)
		err = pthread_create(t, NULL, fn, arg);
	/* a name is for people (top -H) and tests: one refused (over 15 characters) is not an error */
	if (!err)
		pthread_setname_np(*t, name);
	return err;
}
