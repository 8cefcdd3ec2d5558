/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Giving up privileges once a run is set up: every capability but the ones
 * kept leaves the effective, permitted, inheritable, ambient and bounding
 * sets, and no_new_privs is set, on every thread of the process (credentials
 * are per thread: each thread applies the change itself, called by a
 * signal, as libcap's psx does). Raw capget/capset/prctl, no libcap.
 */
#ifndef CP_PRIVS_H
#define CP_PRIVS_H

#include <stdbool.h>
#include <stddef.h>

#include "util/caps.h"

struct cp_privs_result {
	struct cp_caps now;   /* this thread's sets afterwards */
	bool bounding;	      /* the bounding set was cut (CAP_SETPCAP allowed it) */
	unsigned int threads; /* other threads that applied it */
};

/*
 * Keeps only @keep (CP_CAP() bits) on every thread and sets no_new_privs.
 * Without CAP_SETPCAP the bounding set stays as it is (out->bounding false;
 * a systemd unit's CapabilityBoundingSet has cut it already). Returns 0, or
 * < 0 with @err saying what failed; a thread that failed keeps its sets.
 */
int cp_privs_drop(__u64 keep, struct cp_privs_result *out, char *err, size_t err_sz);

/*
 * The calling thread alone keeps no capability (bounding and ambient sets
 * cut where it may) and sets no_new_privs: what a forked child with one
 * thread does before it parses what it must not trust. 0 or -errno.
 */
int cp_privs_drop_thread(void);

/* This thread's capability sets; 0 or -errno. */
int cp_caps_get(struct cp_caps *out);

#endif /* CP_PRIVS_H */
