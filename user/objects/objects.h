/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Per-process object state and the one question the classifier asks: what
 * does this address belong to? Each tracked process has an object store
 * (heap objects seen through the allocation probes), a call-site table, a
 * /proc/PID/maps snapshot and its globals; exec resets all of it, exit retires
 * it. The number of processes is bounded; beyond it the least recently used
 * one is evicted and counted.
 *
 * Not thread-safe: owned by the thread that drains events and classifies.
 */
#ifndef CP_OBJECTS_H
#define CP_OBJECTS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "cacheperf/alloc.h"
#include "objects/callsites.h"
#include "objects/elf_syms.h"
#include "objects/glibc_chunks.h"
#include "objects/object_store.h"
#include "util/path_map.h"
#include "objects/proc_maps.h"

#define CP_MAX_PROCESSES 1024
/* exited processes kept for the report: each holds its objects, maps and globals */
#define CP_MAX_EXITED_PROCESSES 32
#define CP_MAX_THREAD_POINTERS	4096	      /* per process */
#define CP_MAPS_REFRESH_NS	1000000000ull /* re-read maps on a miss: at most 1/s */
#define CP_RESOLVED_NAME_LEN	128
#define CP_RESOLVED_PATH_LEN	256

struct cp_objects_opts {
	const char *proc_root;		    /* NULL: "/proc" */
	size_t max_processes;		    /* 0: CP_MAX_PROCESSES */
	size_t max_exited;		    /* of them exited, 0: CP_MAX_EXITED_PROCESSES */
	size_t max_objects;		    /* per process, 0: CP_MAX_OBJECTS */
	size_t max_callsites;		    /* per process, 0: CP_MAX_CALLSITES */
	__u64 maps_refresh_ns;		    /* 0: CP_MAPS_REFRESH_NS */
	const struct cp_proc_source *src;   /* maps and thread stacks; NULL: /proc */
	const struct cp_path_map *path_map; /* offline: where mapped files are now */
	/*
	 * Reads @len bytes of @pid's memory at @addr (a live run:
	 * cp_proc_read_mem()); returns the bytes read or a negative errno.
	 * cp_objects__chunk_event() reads glibc's chunk headers with it. NULL:
	 * never read (offline: what the run found comes back as recorded
	 * object events).
	 */
	ssize_t (*read_mem)(void *ctx, pid_t pid, __u64 addr, void *buf, size_t len);
	void *read_mem_ctx;
};

/* What an address belongs to. Strings are copies, truncated to fit. */
struct cp_resolved {
	enum cp_obj_kind kind;
	bool before_attach; /* heap/anonymous memory with no allocation seen */
	bool backoff;	    /* ... after a guard back-off: maybe allocated during it */
	/* CP_OBJ_F_* of a tracked object; CP_OBJ_F_GUARD_BACKOFF: it lived through
	 * a back-off of the allocation probes, so it may be stale */
	__u16 flags;
	__u32 tid;	/* allocating thread of a tracked object, else 0 */
	__u64 callsite; /* call-site id of a tracked object, else 0 */
	__u64 start;	/* first byte of the object, variable or mapping */
	__u64 size;
	__u64 offset; /* address - start; file mapping: offset in the file */
	/* before_attach: the process's allocator as its maps show it (enum
	 * cp_allocator_kind, objects/allocator.h): whose metadata could name the object */
	__u8 allocator;
	/* variable name, or a label: "heap", "[heap]", "[stack]", "thread stack",
	 * "[anon]", a file name */
	char name[CP_RESOLVED_NAME_LEN];
	char path[CP_RESOLVED_PATH_LEN]; /* module or mapped file, "" if none */
};

struct cp_objects_stats {
	__u64 processes;      /* tracked now */
	__u64 evicted;	      /* processes dropped at the cap (LRU) */
	__u64 exited_dropped; /* exited ones dropped beyond max_exited (LRU, to 3/4 of it) */
	__u64 execs;
	__u64 exits;
	__u64 maps_reads;		/* /proc/PID/maps snapshots taken */
	__u64 maps_errors;		/* ... that failed (process gone, no access) */
	__u64 maps_evicted;		/* ... let go for their byte cap (LRU) */
	__u64 maps_bytes;		/* ... held now */
	__u64 resolved[CP_OBJ_KIND_NR]; /* cp_objects__resolve() answers by kind */
	__u64 unmapped;			/* addresses no mapping holds */
	__u64 tp_dropped;		/* thread pointers not kept: per-process cap */
	__u64 callsites_dropped;	/* call sites not interned: per-process cap */
	__u64 stacks_dropped;		/* call-site stacks not kept: frame pool full */
	/* answers the guard's back-offs made uncertain (backoff_marks.h): */
	__u64 backoff_doubtful;		    /* tracked objects that lived through a back-off */
	__u64 backoff_unseen;		    /* memory with no allocation seen, after a back-off */
	struct cp_object_store_stats store; /* over all processes, past and present */
	struct cp_elf_cache_stats elf;
	struct cp_glibc_chunks_stats chunks; /* cp_objects__chunk_event()'s walks */
};

struct cp_objects;

/* A table with the limits of @opts (NULL: all defaults). NULL on failure. */
struct cp_objects *cp_objects__new(const struct cp_objects_opts *opts);
void cp_objects__free(struct cp_objects *o);

/*
 * The processes' maps snapshots hold at most @max bytes (default
 * CP_MAX_MAPS_KEPT_BYTES, objects/proc_maps.h): a new one lets the least
 * recently used others go, with the globals read from them, until they fit
 * (counted: maps_evicted). A live process's is read again at its next miss
 * (cp_maps_may_refresh()); an exited one's addresses are unnamed mappings
 * from then on.
 */
void cp_objects__set_max_maps_bytes(struct cp_objects *o, __u64 max);

/*
 * Allocation events. The process is tracked from its first event on (its
 * maps are snapshot then). on_alloc and on_realloc return what
 * cp_object_store__add() returns, on_free what cp_object_store__remove()
 * returns; -ENOMEM when a new process cannot be tracked.
 */
int cp_objects__on_alloc(struct cp_objects *o, pid_t pid, const struct cp_object *obj);
int cp_objects__on_free(struct cp_objects *o, pid_t pid, __u64 start);
int cp_objects__on_realloc(struct cp_objects *o, pid_t pid, __u64 old_start,
			   const struct cp_object *obj);

/* exec: a new address space. Empties the store and call sites, re-reads maps and globals. */
int cp_objects__on_exec(struct cp_objects *o, pid_t pid);

/*
 * The allocation-rate guard backed off (@backed_off) or resumed @pid's
 * probes (-1: every process's, -a) at @now_ns, CLOCK_MONOTONIC. From then
 * on, objects allocated before the resume resolve with CP_OBJ_F_GUARD_BACKOFF
 * (may be stale) and memory with no allocation seen with backoff set
 * (backoff_marks.h). Returns 0 or -ENOMEM.
 */
int cp_objects__on_guard(struct cp_objects *o, pid_t pid, bool backed_off, __u64 now_ns);

/*
 * exit: the process is gone. Its state is kept, read-only, so the samples
 * it left can still be resolved at the report (cp_objects__resolve); it is
 * the first to be evicted, and dropped when an event names its pid again.
 */
void cp_objects__on_exit(struct cp_objects *o, pid_t pid);

/*
 * Memory pressure: drops the kept state of every exited process (its
 * samples no longer resolve at the report). Returns how many.
 */
size_t cp_objects__shrink(struct cp_objects *o);

/* Hints that @addr of @pid is resolved a few records later (cp_object_store__hint()). */
void cp_objects__hint(struct cp_objects *o, pid_t pid, __u64 addr, int stage);

/*
 * The call-site id of (@caller, @stack_id) in @pid's table; 0 if it cannot
 * be kept. Its frames come by cp_objects__callsite_frames(), from a
 * CP_REC_ALLOC_STACK record fed after the event that names the site.
 */
__u64 cp_objects__callsite(struct cp_objects *o, pid_t pid, __u64 caller, __s64 stack_id);
/*
 * Whether the frames of (@caller, @stack_id) in @pid's table are still to
 * be read (a live run reads them then): a stack id, and a site without
 * frames given yet, or a new one the table has room for. Interns nothing;
 * @pid is taken in, as the event naming the site would take it.
 */
bool cp_objects__callsite_unread(struct cp_objects *o, pid_t pid, __u64 caller, __s64 stack_id);
const struct cp_callsite *cp_objects__callsite_get(struct cp_objects *o, pid_t pid, __u64 id);
/* The frames of call site @id of @pid (*@n of them, innermost first), NULL if none. */
const __u64 *cp_objects__callsite_stack(struct cp_objects *o, pid_t pid, __u64 id, size_t *n);
/*
 * Interns (@caller, @stack_id) in @pid's table with the @n frames given (a
 * CP_REC_ALLOC_STACK record's, live or replayed); @n 0: none could be read.
 */
void cp_objects__callsite_frames(struct cp_objects *o, pid_t pid, __u64 caller, __s64 stack_id,
				 const __u64 *ips, size_t n);

/*
 * Thread @tid's thread pointer (x86-64 fs base), which places that thread's
 * copy of the executable's thread-locals; 0 forgets the thread. Returns 0,
 * -ENOSPC (counted) beyond CP_MAX_THREAD_POINTERS, -ENOMEM.
 */
int cp_objects__set_thread_pointer(struct cp_objects *o, pid_t pid, __u32 tid, __u64 tp);

/* A range the caller knows is a thread stack, [start, end). Returns 0 or -ENOMEM. */
int cp_objects__add_thread_stack(struct cp_objects *o, pid_t pid, __u64 start, __u64 end);

/*
 * Re-reads @pid's maps, globals and blocked threads' stacks (after dlopen or
 * new threads). Resolve also does it by itself when an address is unmapped,
 * at most once per maps_refresh_ns. Returns 0 or a negative errno.
 */
int cp_objects__refresh(struct cp_objects *o, pid_t pid);

/* True if @pid is tracked. */
bool cp_objects__tracked(const struct cp_objects *o, pid_t pid);

/*
 * What @addr in process @pid belongs to, in this order: a tracked heap or
 * mmap object; a global of a mapped ELF file; a thread-local of the
 * executable (threads with a known thread pointer); then the mapping: a
 * stack, memory allocated before attach (kind unknown, before_attach; also
 * backoff after a guard back-off), or a file (kind mapping, file offset). Returns 0, or -ENOENT when nothing maps
 * @addr (@out is then kind unknown named "[unmapped]"), -ENOMEM.
 */
int cp_objects__resolve(struct cp_objects *o, pid_t pid, __u64 addr, struct cp_resolved *out);

/*
 * The shared file mapping ('s' in maps; a file, shmem or memfd: an inode
 * and a path, not an "anon_inode:" buffer) of @pid that holds @addr, or
 * NULL: one that other processes may map too. A tracked heap object is
 * none, and one the file's mapping in the snapshot cannot hold says the
 * snapshot is older than an unmap. A snapshot that maps nothing at @addr,
 * or is older so, is re-read as cp_objects__resolve() does (at most once
 * per maps_refresh_ns; NULL until then). The pointer is valid until the
 * next call on @o.
 */
const struct cp_map *cp_objects__shared_map(struct cp_objects *o, pid_t pid, __u64 addr);

/*
 * An object no allocation probe saw, from the allocator's own metadata:
 * for @addr of the live process @pid in its [heap] or an anonymous
 * mapping, when its allocator is glibc's (as its maps show), the chunk in
 * use that holds @addr, read from its chunk headers with opts.read_mem
 * (objects/glibc_chunks.h: bounded, cached per mapping). Fills @ev with an
 * allocation event (kind CP_OBJ_EV_ALLOC, flag CP_OBJ_EV_F_CHUNK, the user
 * pointer and malloc_usable_size(), no caller, stack or thread, time
 * @time_ns) for the caller to feed as a record (cp_profile__feed()), so
 * that a replay, which reads no memory, finds the same object. Returns 0,
 * -ENOENT when no chunk in use holds @addr (free memory, allocator metadata,
 * a heap the walk does not understand, the process gone), -EOPNOTSUPP
 * without opts.read_mem or for another allocator, -ENOMEM.
 */
int cp_objects__chunk_event(struct cp_objects *o, pid_t pid, __u64 addr, __u64 time_ns,
			    struct cp_object_event *ev);

void cp_objects__stats(const struct cp_objects *o, struct cp_objects_stats *out);

#endif /* CP_OBJECTS_H */
