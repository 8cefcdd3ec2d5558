/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * /proc/PID/maps: a parsed snapshot of a process's mappings, and the
 * classification of an address that no tracked object holds. The parser is
 * pure (text in, snapshot out); only cp_maps__read(),
 * cp_maps_thread_stacks() and cp_proc_read_mem() touch the process. Snapshot early: a short-lived target
 * may be gone by the time its samples are classified.
 */
#ifndef CP_PROC_MAPS_H
#define CP_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "machine/target_file.h"
#include "objects/object_store.h"

/* Far above vm.max_map_count (65530 by default): a bound on hostile input. */
#define CP_MAX_MAPS	     (1u << 20)
#define CP_MAX_THREAD_STACKS 4096
/*
 * Bytes of /proc/PID/maps read: 65,530 mappings of 256 bytes each. A
 * target can name every mapping with a 4 KiB path (65,000 of them were
 * 322 MB and 5 s of CPU to read whole); the lines past the cap are dropped
 * and counted (CP_TF_MAPS_CAP, machine/target_file.h).
 */
#define CP_MAX_MAPS_BYTES (16u << 20)

/*
 * What reading maps files may cost. The kernel writes their text as it is
 * read, a line a read() when lines are long: a tenant's 16 MiB of 4 KiB
 * paths took 0.15-3 s to read, and under -a the object table, the
 * symbolizer and the soft source read each process's: 80 such processes
 * held a 3 s run for 30 s to 9 minutes. Every read takes its first
 * CP_MAPS_FREE_BYTES (an ordinary process's maps are a few KiB, a large
 * service's a few hundred: a few ms at most); its whole time is charged to
 * the bank of the process's owner (the uid /proc shows: cp_maps_how.owner),
 * CP_MAPS_BANK_NS refilled at CP_MAPS_BANK_PER_MILLE of the time passing,
 * and a quarter of it to a bank for all (proc_maps.c). Past the free bytes
 * a read goes on while both hold time; one that meets a spent bank is cut
 * there, whole lines kept, counted (CP_TF_MAPS_BUDGET), the snapshot marked
 * (cp_maps_how.cut): a tenant's long maps cut its own reads short, not other
 * owners' (unless it spends four owners' worth over many uids). While an
 * owner's bank is spent, its reads take CP_MAPS_SPENT_BYTES alone.
 */
#define CP_MAPS_FREE_BYTES (256u << 10)
/*
 * ... CP_MAPS_SPENT_BYTES while the owner's bank is spent: a new snapshot of
 * each of a tenant's 80 processes in turn (the symbolizer keeps 64) read
 * its 256 KiB of 4 KiB paths at every sample.
 */
#define CP_MAPS_SPENT_BYTES    (16u << 10)
#define CP_MAPS_BANK_NS	       1000000000ll
#define CP_MAPS_BANK_PER_MILLE 50

/*
 * Bytes of snapshots a store keeps (the object table's, the symbolizer's,
 * each): an eighth of --max-memory, else CP_MAX_MAPS_KEPT_BYTES. An
 * ordinary process's maps are tens of KiB; a tenant's reach
 * CP_MAX_MAPS_BYTES of paths, and the bank lets one be read whole every
 * few seconds: the symbolizer's 64 snapshots and the object table's 1,024
 * would hold gigabytes after minutes. A store over it lets its least
 * recently used snapshots go (counted), never the one just taken.
 */
#define CP_MAX_MAPS_KEPT_BYTES (64ull << 20)
#define CP_MAPS_KEPT_LIMIT_DIV 8

/* That bound for --max-memory @limit_bytes (0: none). Pure. */
__u64 cp_maps_kept_max_bytes(__u64 limit_bytes);

/*
 * Charges @ns to @uid's bank (and its share to the bank for all) as a read
 * of its maps past the free bytes would be: what else the owner's maps
 * cost (the recorder writing them down again). Returns whether both banks
 * still hold time (@ns 0: only asks).
 */
bool cp_maps_owner_spend(uid_t uid, __u64 ns);

/* The bank: time banked (negative: owed) as of @at_ns. */
struct cp_maps_bank {
	__s64 ns;
	__u64 at_ns; /* 0: never used (full) */
};

/* The bank refilled to @now_ns; whether a read may go on. Pure. */
bool cp_maps_bank_may(struct cp_maps_bank *b, __u64 now_ns);

/* A read's @ns past its free bytes charged (a debt of one bank at most). Pure. */
void cp_maps_bank_charge(struct cp_maps_bank *b, __u64 ns);

enum cp_map_kind {
	CP_MAP_ANON = 0, /* no path, or a named anonymous region "[anon:NAME]" */
	CP_MAP_FILE,	 /* a file (possibly deleted, possibly shmem/memfd) */
	CP_MAP_HEAP,	 /* [heap]: the brk area */
	CP_MAP_STACK,	 /* [stack] (or "[stack:TID]" on kernels before 4.5) */
	CP_MAP_VDSO,	 /* [vdso] */
	CP_MAP_VVAR,	 /* [vvar], [vvar_vclock] */
	CP_MAP_VSYSCALL, /* [vsyscall] */
	CP_MAP_SPECIAL,	 /* any other "[...]" name the kernel gives */
};

/* cp_map.prot */
#define CP_MAP_READ  (1u << 0)
#define CP_MAP_WRITE (1u << 1)
#define CP_MAP_EXEC  (1u << 2)

struct cp_map {
	__u64 start;  /* first byte */
	__u64 end;    /* one past the last byte */
	__u64 offset; /* file offset mapped at start */
	__u64 inode;
	__u32 dev_major;
	__u32 dev_minor;
	__u8 prot;	  /* CP_MAP_READ | CP_MAP_WRITE | CP_MAP_EXEC */
	bool shared;	  /* 's' rather than 'p' */
	bool deleted;	  /* the path ended in " (deleted)", now stripped */
	__u8 kind;	  /* enum cp_map_kind */
	const char *path; /* "" when anonymous; the kernel writes '\n' as "\012" */
};

/*
 * How a maps text was read: what the refreshes of its snapshot are spaced
 * by (cp_maps_may_refresh()), carried with the text wherever it goes (the
 * held copies, the recorder). All zero for a text that was not read here.
 */
struct cp_maps_how {
	/* the read stopped short of the file's end (its bank or its byte cap) */
	bool cut;
	uid_t owner;   /* the maps file's uid: whose bank paid */
	__u64 cost_ns; /* how long the read took (a held copy: the read's) */
};

/* One snapshot, sorted by start (the kernel's order, checked). */
struct cp_maps {
	struct cp_map *maps;
	size_t nr;
	char *strings; /* every path, NUL-terminated, owned by the snapshot */
	struct cp_maps_how how;
	/* the heap it holds: a tenant's reaches CP_MAX_MAPS_BYTES of paths and more */
	size_t bytes;
};

/* A caller-known address range, [start, end). */
struct cp_range {
	__u64 start;
	__u64 end;
};

/* What cp_maps_classify() decided about an address. */
struct cp_map_class {
	enum cp_obj_kind kind;
	const struct cp_map *map; /* the mapping holding the address, NULL if none */
	const char *label;	  /* "[heap]", "[anon]", "thread stack", a path...; never NULL */
	__u64 file_offset;	  /* file-backed: the address's offset in the file */
	/* heap/anonymous memory with no allocation seen: allocated before we
	 * attached (or through a path we do not probe) */
	bool before_attach;
};

/*
 * Parses one line of /proc/PID/maps (without its newline, @len bytes) into
 * @m; m->path is left NULL, and the path's position in @line is returned in
 * @path/@path_len (after stripping " (deleted)"). Returns 0 or -EINVAL.
 */
int cp_maps_parse_line(const char *line, size_t len, struct cp_map *m, const char **path,
		       size_t *path_len);

/*
 * Parses a whole maps file. Returns a snapshot in @*out (free with
 * cp_maps__free()), or -EINVAL naming nothing (a malformed line or unsorted
 * mappings: not a maps file), -E2BIG beyond CP_MAX_MAPS, -ENOMEM.
 */
int cp_maps__parse(const char *text, size_t len, struct cp_maps **out);

/*
 * How often a process's snapshot may be taken again (its maps, and what the
 * caller reads with them): not before @min_ns after the last one, nor
 * before CP_MAPS_REFRESH_COST_TIMES what that one took. A tenant's maps of
 * 16 MiB take ~150 ms to read, and the object table asked again every
 * 20 ms: the snapshots of such a process take at most a twentieth of one
 * thread, whatever asks. Whether one taken at @read_ns, @cost_ns long, may
 * be taken again at @now_ns. Pure.
 */
#define CP_MAPS_REFRESH_COST_TIMES 20
bool cp_maps_refresh_due(__u64 read_ns, __u64 cost_ns, __u64 now_ns, __u64 min_ns);

/*
 * cp_maps_refresh_due() now for a snapshot read at @read_ns as @how says
 * (may be NULL: none yet), @cost_ns long in all (the maps and what the
 * caller read with them), and when it was cut, its owner's bank half full
 * at least: a read it cannot pay for would be cut where it was.
 */
bool cp_maps_may_refresh(const struct cp_maps_how *how, __u64 read_ns, __u64 cost_ns, __u64 min_ns);

/* Reads and parses @proc_root/@pid/maps (@proc_root NULL: "/proc"). -errno on failure. */
int cp_maps__read(const char *proc_root, pid_t pid, struct cp_maps **out);

/*
 * Reads @proc_root/@pid/maps as text into *@text (NUL-terminated, @len bytes
 * without the NUL; free() it), whole lines up to CP_MAX_MAPS_BYTES, past
 * CP_MAPS_FREE_BYTES as the bank pays, and how in *@how. -ESRCH for an
 * empty file (the process exited).
 */
int cp_maps_read_text(const char *proc_root, pid_t pid, char **text, size_t *len,
		      struct cp_maps_how *how);

/*
 * While @pid's maps are held (until cp_maps_release()), the first
 * cp_maps_read_text() of /proc/@pid/maps on this thread reads the file and
 * the later ones get a copy of that text: the handlers of one exec record
 * (the objects' snapshot, the symbolizer's, the recorder's) read the maps of
 * one moment once instead of three times. Holding @pid again takes its maps
 * afresh (a new exec). Outside a turn, a hold ends the one before.
 */
void cp_maps_hold(pid_t pid);
void cp_maps_release(void);

/*
 * A turn of the live loop (@open true at its start, false at its end): the
 * holds its exec records take last to its end, up to 64 processes and 8 MiB
 * of text, and cp_maps_release() leaves them. The allocation probes' search
 * and the soft source, which read the same processes' maps in the same turn
 * milliseconds later, take the copy: what a process mapped in between is
 * seen in the next turn (a search that finds only the loader asks again).
 */
void cp_maps_turn(bool open);

void cp_maps__free(struct cp_maps *m);

/*
 * Where a process's maps and thread stacks come from: /proc (cp_proc_live),
 * or a recording replayed offline (user/record/replay.c). The live recorder wraps
 * cp_proc_live and writes down what it returns. Same contracts as
 * cp_maps__read() and cp_maps_thread_stacks().
 */
struct cp_proc_source {
	int (*maps)(void *ctx, const char *proc_root, pid_t pid, struct cp_maps **out);
	int (*thread_stacks)(void *ctx, const char *proc_root, pid_t pid, const struct cp_maps *m,
			     struct cp_range *out, size_t max);
	void *ctx;
};

extern const struct cp_proc_source cp_proc_live;

/*
 * How target_file.h finds the file of mapping @m of process @pid (through
 * @proc_root, NULL: "/proc"), and what it must be: the mapping's device and
 * inode. @w points into @m. Pure.
 */
void cp_map_target_file(const struct cp_map *m, const char *proc_root, pid_t pid,
			struct cp_tf_where *w, struct cp_tf_want *want);

/* The mapping holding @addr, or NULL. O(log n). */
const struct cp_map *cp_maps__find(const struct cp_maps *m, __u64 addr);

/*
 * Classifies @addr for the case no tracked object holds it: a caller-given
 * thread stack range or [stack] is kind stack; [heap] and anonymous memory are
 * kind unknown with before_attach set and the mapping as label; file-backed
 * memory and the kernel's special mappings are kind mapping, labelled with the
 * path (plus file_offset). Returns 0, or -ENOENT when nothing maps @addr
 * (@out is then kind unknown, label "[unmapped]").
 */
int cp_maps_classify(const struct cp_maps *m, __u64 addr, const struct cp_range *stacks,
		     size_t nr_stacks, struct cp_map_class *out);

/*
 * The user stack pointer in the text of /proc/PID/task/TID/syscall
 * ("NR ARGS... SP PC" or "-1 SP PC"). Returns 0, or -EAGAIN when the thread
 * was running (no stack pointer then) and -EINVAL for anything else.
 */
int cp_parse_syscall_sp(const char *text, __u64 *sp);

/*
 * Thread stacks of @pid: for each thread blocked at the time of the call,
 * the anonymous mapping that holds its stack pointer (from
 * /proc/PID/task/TID/syscall, which needs ptrace access to @pid). A running
 * thread is missed; the main thread's [stack] is classified without this.
 * At most @max threads are looked at (a tenant's 15,000 threads, their
 * stacks mapped from a file, took each snapshot 0.1 s and the profiler
 * 97 % of a CPU): the walk stops there, counted (CP_TF_THREADS_CAP).
 * Fills up to @max ranges, returns how many, or a negative errno.
 *
 * Why not /proc/PID/task/TID/stat's kstkesp: the kernel reports 0 there
 * unless the task is dumping core (fs/proc/array.c).
 */
int cp_maps_thread_stacks(const char *proc_root, pid_t pid, const struct cp_maps *m,
			  struct cp_range *out, size_t max);

/*
 * Reads @len bytes of process @pid's memory at @addr into @buf with
 * process_vm_readv (ptrace access to @pid, as root has; the target is not
 * stopped). Returns the bytes read, fewer where the range stops being
 * mapped, or a negative errno. @ctx is unused: cp_objects_opts.read_mem of a
 * live run.
 */
ssize_t cp_proc_read_mem(void *ctx, pid_t pid, __u64 addr, void *buf, size_t len);

#endif /* CP_PROC_MAPS_H */
