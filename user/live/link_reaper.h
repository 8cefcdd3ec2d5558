/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Destroys probe links on worker threads. Unregistering a uprobe waits for
 * the kernel's uprobe synchronisation, ~60 ms per link here, so a target's
 * ~20 allocation probes took about a second to go one after the other: done
 * on the profiling loop's thread, every exiting target (or guard back-off)
 * would stall the ring buffer drain that long. Several workers overlap those
 * waits; they run at real-time priority (util/rt_thread.h), so that a loaded
 * machine does not keep a detached probe trapping while they wait for a CPU.
 * Links handed over keep firing until a worker reaches them; they are
 * taken in hand-over order.
 *
 * The queue grows as needed; when it cannot, the link is destroyed at once
 * on the caller's thread (slow, never leaked). cp_link_reaper__free() waits
 * for every link handed over.
 */
#ifndef CP_LINK_REAPER_H
#define CP_LINK_REAPER_H

#include <stddef.h>

struct bpf_link;
struct cp_link_reaper;

/* A probe's link: libbpf's (@link), or the fd of a link made by bpf() itself (@link NULL). */
struct cp_probe_link {
	struct bpf_link *link;
	int fd;
};

/* Detaches @l now, on the caller's thread. */
void cp_probe_link_destroy(const struct cp_probe_link *l);

/* Starts the worker. NULL with errno set on failure. */
struct cp_link_reaper *cp_link_reaper__new(void);

/* Destroys every link handed over, stops the worker. */
void cp_link_reaper__free(struct cp_link_reaper *r);

/* Hands @n links over, taken in this order; the caller forgets them. */
void cp_link_reaper__add(struct cp_link_reaper *r, const struct cp_probe_link *links, size_t n);

/* Waits until every link handed over so far is destroyed. */
void cp_link_reaper__flush(struct cp_link_reaper *r);

/* Links handed over and not yet destroyed. */
size_t cp_link_reaper__pending(struct cp_link_reaper *r);

#endif /* CP_LINK_REAPER_H */
