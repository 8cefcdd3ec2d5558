/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The one way to open a file a target names (a path in /proc/PID/maps, a
 * binary, a library): in the target's own root, never through a symlink
 * that leaves it, never a FIFO or a device, only the very file the mapping
 * holds (device and inode), under a size cap. Tenants on a shared host
 * control those names; the profiler runs as root.
 *
 * How: /proc/PID/map_files/START-END when the mapping is known (exactly the
 * mapped file by construction, no path resolved: its device and inode are
 * not compared), else openat2(O_PATH | O_NOFOLLOW,
 * RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS) below a dirfd on /proc/PID/root.
 * The O_PATH descriptor is fstat()ed and judged before the file is opened
 * for reading (through /proc/self/fd/N), so a device is never opened and a
 * FIFO never blocks. What is read is copied, capped, into a sealed memfd:
 * the target can no longer shrink (SIGBUS in a reader's mmap) or swap it;
 * its holes stay holes, and what the copy may cost is admitted under
 * --max-memory first. Copies are kept (copy_cache.h) by what fstat() of the
 * descriptor copied says of the file's content, so a file every process of
 * a build maps is copied once, not once per process.
 *
 * cp_tf_judge() and cp_tf_errno_refusal() are pure; every refusal is
 * counted here by reason (cp_tf_refusals()), for the report's Limits.
 */
#ifndef CP_TARGET_FILE_H
#define CP_TARGET_FILE_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

#include "machine/copy_cache.h"

/* Above this a file is not read: a copy of it is held in memory. */
#define CP_TF_MAX_BYTES (512ull << 20)

/* Why a file a target named was not opened (or not used). */
enum cp_tf_refusal {
	CP_TF_OK = 0,
	CP_TF_GONE,	   /* not there (exited, unlinked): not counted, not hostile */
	CP_TF_NOT_REGULAR, /* a FIFO, device, socket or directory */
	CP_TF_SYMLINK,	   /* the name ends in a symlink */
	CP_TF_ESCAPE,	   /* the path leads out of the target's root */
	CP_TF_REPLACED,	   /* another file than the mapping holds (device, inode) */
	CP_TF_TOO_BIG,	   /* above the size cap */
	CP_TF_SHRUNK,	   /* shorter while copied than when judged */
	CP_TF_INFLATES,	   /* compressed sections decompress beyond the cap */
	CP_TF_NO_FDS,	   /* out of file descriptors */
	CP_TF_MODULE_CAP,  /* beyond the modules kept per process */
	CP_TF_MAPS_CAP,	   /* /proc/PID/maps longer than its byte cap: cut */
	CP_TF_MAPS_BUDGET, /* ... longer than the reads' bank paid for: cut (proc_maps.h) */
	CP_TF_DENIED,	   /* permission denied, or any other open error */
	CP_TF_MEMORY,	   /* its copy would take the profiler past --max-memory */
	CP_TF_BAD_CFI,	   /* CFI beyond the architecture's registers or bounds: not unwound with */
	CP_TF_DEEP_DWARF,  /* DWARF past the walk's caps (depth, ranges, DIEs): cut there */
	CP_TF_PARSE,	   /* its parse killed the parse worker, or ran past its time */
	CP_TF_NOT_LOADABLE,    /* mapped, but no executable or shared object (a .o): no symbols */
	CP_TF_MALFORMED,       /* a string table libelf names from without its ending NUL */
	CP_TF_THREADS_CAP,     /* threads past the stack walk's cap (proc_maps.h): not looked at */
	CP_TF_MAPS_UNRECORDED, /* a changed maps text past its owner's bank: written as unread */
	CP_TF_NR,
};

/* Where a file is named: a target's path, or a path the host or user gave. */
struct cp_tf_where {
	const char *proc_root; /* NULL: "/proc" */
	pid_t pid;	       /* 0: the profiler's own root */
	const char *path;      /* absolute, as the maps name it */
	__u64 start, end;      /* the mapping, for map_files; 0: unknown */
};

/* What the file must be. */
struct cp_tf_want {
	__u64 ino;	 /* 0: any regular file */
	__u32 dev_major; /* with ino: the maps line's device */
	__u32 dev_minor;
	__u64 max_bytes; /* 0: CP_TF_MAX_BYTES */
	bool follow;	 /* a path the user or the host named: its last symlink is followed */
	bool foreign;	 /* content from elsewhere (a debuginfod server): never the host's */
	/*
	 * cp_tf_open_copy(): the copy may leave the code sections (SHT_PROGBITS
	 * with SHF_EXECINSTR) holes, for readers of symbols, DWARF, CFI and
	 * notes only: libLLVM's copy is 60 MiB instead of 110
	 */
	bool no_code;
};

/* What fstat() said of an opened file. */
struct cp_tf_stat {
	__u32 mode; /* st_mode */
	__u32 dev_major;
	__u32 dev_minor;
	__u64 ino;
	__u64 size;
	__u32 uid; /* st_uid */
};

/* Whether @st is a file @want accepts: CP_TF_OK or the reason it is not. Pure. */
enum cp_tf_refusal cp_tf_judge(const struct cp_tf_stat *st, const struct cp_tf_want *want);

/*
 * Whether @st is a file only the host's root can have written: owned by
 * root, writable by nobody else, and, for a target's file (@in_host_ns
 * false otherwise), reached from a process in the profiler's own mount
 * namespace or the host's (PID 1's): a container's root owns its image's
 * files too. Pure.
 */
bool cp_tf_root_wrote(const struct cp_tf_stat *st, const struct cp_tf_want *want, bool in_host_ns);

/*
 * cp_tf_root_wrote() for @w's file as cp_tf_open() stated it in @st: @w's
 * process's mount namespace compared with the profiler's and PID 1's.
 */
bool cp_tf_host_file(const struct cp_tf_where *w, const struct cp_tf_want *want,
		     const struct cp_tf_stat *st);

/*
 * Whether process @pid's mount namespace is the profiler's own or the
 * host's (PID 1's): the files it names are the host's at those paths.
 * @proc_root NULL: "/proc".
 */
bool cp_tf_host_ns(const char *proc_root, pid_t pid);

/* The refusal an open() errno (positive) stands for. Pure. */
enum cp_tf_refusal cp_tf_errno_refusal(int err);

/* "not a regular file", ...: what the report says. */
const char *cp_tf_refusal_name(enum cp_tf_refusal why);

/* "not_regular", ...: the same as a JSON key. */
const char *cp_tf_refusal_key(enum cp_tf_refusal why);

/* Counts one refusal (CP_TF_OK and CP_TF_GONE are not counted). Thread-safe. */
void cp_tf_count(enum cp_tf_refusal why);

/* The refusals counted so far, by reason; returns their sum. */
__u64 cp_tf_refusals(__u64 out[CP_TF_NR]);

/*
 * Opens @w's file for reading when it is what @want says; fills @st. Returns
 * the descriptor (O_RDONLY | O_CLOEXEC), or a negative errno with the reason
 * in @why (counted). Tries map_files, then the target's root, then, only for
 * a file whose inode is known, the same path in the profiler's root (a
 * process that exited: the same inode is the same file).
 */
int cp_tf_open(const struct cp_tf_where *w, const struct cp_tf_want *want, struct cp_tf_stat *st,
	       enum cp_tf_refusal *why);

/*
 * cp_tf_open() in two steps, for a reader whose cache may hold the file
 * already: cp_tf_find() gives an O_PATH descriptor on @w's file when it is
 * what @want says, opening nothing for reading (fstat() of it, as
 * cp_tf_key() does, says what content it holds); cp_tf_reopen() gives a
 * descriptor for reading on the file @pfd found, when it is still @st's
 * (device and inode). Each returns the descriptor or a negative errno with
 * the reason in @why (counted); cp_tf_open() is the two in a row.
 */
int cp_tf_find(const struct cp_tf_where *w, const struct cp_tf_want *want, struct cp_tf_stat *st,
	       enum cp_tf_refusal *why);
int cp_tf_reopen(int pfd, const struct cp_tf_stat *st, enum cp_tf_refusal *why);

/* Files found lately, kept by the device and inode their maps line names. */
#define CP_TF_SEEN_SLOTS 512 /* a power of two */
#define CP_TF_SEEN_WAYS	 4   /* per set: a process's few files never push each other out */
#define CP_TF_SEEN_NS	 (5ull * 1000000000ull)

/*
 * Whether cp_tf_find() found the file @want names by its maps line's device
 * and inode (the kernel's words, not the tenant's: @want->ino set, neither
 * follow nor foreign) less than CP_TF_SEEN_NS ago, that very inode, a file
 * of the host's root (owned by root, writable by no one else, named by a
 * process of the host's mount namespace); then @st is what it found and
 * @key the content's key (cp_tf_key()). A reader whose cache holds that
 * content opens nothing: every process of a build maps the same compiler
 * and libc, and their map_files opens and fstats were a tenth of what an
 * exec cost the profiler under -a. A file root changed in place (the same
 * inode) is seen as such by the first look past that time. A tenant's file
 * is never kept; one made at the inode number of a kept file root deleted
 * less than that time ago is taken for root's old content (its process
 * described by it, nothing of the tenant's read). Opens nothing;
 * thread-safe.
 */
bool cp_tf_seen(const struct cp_tf_want *want, struct cp_tf_stat *st, struct cp_copy_key *key);

/* How long a find stands for cp_tf_seen() (CP_TF_SEEN_NS; 0: never). For tests. */
void cp_tf_seen_for(__u64 ns);

/*
 * Whether cp_tf_open() would accept @w's file now, opening nothing for
 * reading. Not counted: the open that follows (or the caller's fallback)
 * counts a refusal once.
 */
enum cp_tf_refusal cp_tf_check(const struct cp_tf_where *w, const struct cp_tf_want *want);

/*
 * A sealed memfd (no write, shrink or grow) with the first @size bytes of
 * @fd: what libelf and libdw may mmap. Only @fd's data extents are copied
 * (SEEK_DATA, SEEK_HOLE); its holes stay holes. The copy's cost
 * (machine/copy_cost.h: its data, and the holes a reader of the ELF would
 * touch) must be admitted under --max-memory (machine/self_mem.h) first.
 * Returns it, or a negative errno with the reason in @why (counted):
 * CP_TF_SHRUNK when @fd has fewer bytes, CP_TF_MEMORY when the cost is not
 * admitted.
 */
int cp_tf_copy(int fd, __u64 size, enum cp_tf_refusal *why);

/*
 * Reads @fd's bytes [@off, @off + @len) into @dst (@dst[0] is @off) with
 * pread, which a file cut short answers short where a mapping of it would
 * SIGBUS: only its data extents (SEEK_DATA, SEEK_HOLE), its holes left as
 * @dst holds them, after admitting their pages under --max-memory. The
 * caller keeps @off + @len within the size it judged. 0, or a negative
 * errno with the reason in @why (counted): CP_TF_SHRUNK when @fd has fewer
 * bytes, CP_TF_MEMORY when the pages are not admitted.
 */
int cp_tf_read_part(int fd, __u64 off, __u64 len, void *dst, enum cp_tf_refusal *why);

/*
 * cp_tf_copy(), the copy kept for the next reader of the same content: a
 * kept copy whose key (device, inode, size, mtime, ctime, cp_tf_key() of
 * @fd) is @fd's now is reused, on a descriptor of its own (read-only,
 * sealed), and nothing is read from @fd. A copy is kept only when @fd's key
 * was the same before and after it was copied. @key (may be NULL): the key
 * of the content the copy holds, its ino 0 when none is known (the file
 * changed while copied, or its size is not @size). With @no_code the code
 * sections are left holes (cp_tf_want.no_code), a copy kept apart from the
 * whole ones.
 */
int cp_tf_copy_keyed(int fd, __u64 size, bool no_code, struct cp_copy_key *key,
		     enum cp_tf_refusal *why);

/* What fstat() of @fd says of its content (copy_cache.h). 0 or -errno. */
int cp_tf_key(int fd, struct cp_copy_key *key);

/*
 * The copy kept for content @key (cp_tf_key() of the file, read once by
 * the caller, its no_code as for cp_tf_copy_keyed()), on a descriptor of
 * its own, else -ENOENT: no copy is made, no file read again. The copy is
 * of the very content the caller judges by @key, even if the file changed
 * since.
 */
int cp_tf_kept_copy(const struct cp_copy_key *key);

/* The kept copies' figures: hits, misses (copies made), evictions, what is held. */
void cp_tf_kept_stats(struct cp_copy_stats *out);

/* Lets every kept copy go (a --max-memory shrink); returns how many. Thread-safe. */
size_t cp_tf_kept_drop(void);

/* The kept copies' byte bound from --max-memory: half of it (0: CP_COPY_CACHE_BYTES). */
void cp_tf_kept_limit(__u64 max_memory_bytes);

/* That bound, which the copies the symbolizer's Dwfls hold keep to as well. */
__u64 cp_tf_kept_max_bytes(void);

/*
 * What the sealed copy @fd holds, as the memory reading counts a memfd (its
 * data pages, holes cost nothing); 0 for a file that is no copy (the page
 * cache's, not ours) or -1.
 */
__u64 cp_tf_copy_bytes(int fd);

/* cp_tf_open() then cp_tf_copy(): the sealed copy of @w's file, @st its original's. */
int cp_tf_open_copy(const struct cp_tf_where *w, const struct cp_tf_want *want,
		    struct cp_tf_stat *st, enum cp_tf_refusal *why);

/* Raises the soft RLIMIT_NOFILE to the hard limit. Returns the new soft limit. */
__u64 cp_tf_raise_nofile(void);

#endif /* CP_TARGET_FILE_H */
