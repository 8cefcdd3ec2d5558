/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Symbolizer: an instruction address of a process (or a link-time address in
 * an ELF file) to module, function, source line and inline chain, with libdw
 * in-process instead of an addr2line subprocess (~4 ms): ~20 ns from the
 * result cache, 1.3-3 µs uncached once a module's debug info is loaded
 * (tests/bench/symbolizer_bench).
 *
 * Per process a light snapshot of its file mappings, read from
 * /proc/PID/maps at first use - which the session does right after attach -
 * and kept: a process that has exited since still resolves from it. An ip
 * in an executable mapping is resolved in one Dwfl per ELF file, shared by
 * every process mapping that file (the same device and inode: a container's
 * copy is another file), at the file's link-time address; libc's debug info
 * is parsed once, not per process. A live process's [vdso] is read from a
 * copy of the profiler's own (own_vdso.h; the same kernel image when the
 * size matches), so it resolves after the process exited too. What that
 * cannot answer (a file deleted or replaced since it was mapped, another
 * ABI's [vdso], [vdso] in a recording run or replay) comes from a Dwfl of the process's
 * own, reported from its maps as a whole: taken with the snapshot when a
 * mapped file is not found again, else at first need. Debug
 * info is read from the file itself, else from /usr/lib/debug/.build-id,
 * else from a debuginfod server when DEBUGINFOD_URLS is set
 * (symbols/debuginfod.h: bounded in time); never through .gnu_debuglink,
 * which names a file the target controls (docs/security.md).
 *
 * A process is its pid and its start time (docs/security.md, "Process
 * identity"). Each process seen gets an incarnation of its pid; its
 * snapshot, its own Dwfl and its results are kept under both. An exit
 * (cp_symbolizer__exit()) moves the snapshot aside: it still answers the
 * report and the exited process's late samples, never a process that takes
 * the pid later, which gets a snapshot of its own. In a live run, a
 * snapshot also holds the process's start time from /proc/PID/stat, so
 * that a record is never answered from a process that started after it.
 *
 * Bounded caches: snapshots and Dwfls (files and processes' own), least
 * recently used first evicted (counted), snapshots of exited processes at
 * most CP_SYM_MAX_EXITED, and results per (pid, incarnation, ip),
 * set-associative. Strings handed out are interned and stay valid until
 * cp_symbolizer__free(). Not thread-safe: one symbolizer per consuming thread.
 */
#ifndef CP_SYMBOLIZER_H
#define CP_SYMBOLIZER_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>
#include <elfutils/libdwfl.h>

#include "machine/copy_cache.h"
#include "util/path_map.h"

#define CP_SYM_MAX_PROCESSES 64	 /* default Dwfls and snapshots kept (Dwfls hold parsed DWARF) */
#define CP_SYM_MAX_MODULES   512 /* files opened per process (a Dwfl of its own) */
#define CP_SYM_BUILD_ID_DIR  "/usr/lib/debug/.build-id" /* the only separate debug info read */
#define CP_SYM_MIN_PROCESSES 8				/* ... and the fewest shrinks leave */
#define CP_SYM_MAX_RESULTS   16384			/* default cached (pid, ip) results */
#define CP_SYM_MAX_EXITED    32 /* snapshots of exited processes kept for the report */
#define CP_MAX_INLINE_DEPTH  8	/* callers kept per inline chain */
/* interned strings kept before they and the result cache are flushed */
#define CP_SYM_MAX_STRING_BYTES (16u << 20)
/* Re-snapshots for a newly mapped file: often enough that a dlopen'd library
 * resolves within a report, rarely enough that a process mapping files
 * without code cannot make us re-read its maps per sample. */
#define CP_SYM_REFRESH_MIN_MS 200

/* A function that the one before it in the chain was inlined into. */
struct cp_inline_caller {
	const char *function; /* NULL if DWARF names none */
	const char *file;     /* the call site of the inlined function, NULL if unknown */
	__u32 line;
	__u32 column;
};

/* cp_symbol_info.flags */
#define CP_SYM_DEBUG_INFO	(1u << 0) /* file and line came from DWARF */
#define CP_SYM_INLINE_TRUNCATED (1u << 1) /* deeper than CP_MAX_INLINE_DEPTH */
/*
 * The module only, its file refused for now (memory, or a starved parse:
 * cp_pw_refusal_lifts()): no final answer; neither kept nor to be taken as
 * one (an instruction stays to locate), asked again later.
 */
#define CP_SYM_REFUSED_FOR_NOW (1u << 2)

struct cp_symbol_info {
	__u64 ip;
	const char *module; /* path of the mapped file, "[vdso]"; NULL if none maps ip */
	/* ip - the module's load bias: the link-time address, what `addr2line -e
	 * MODULE` and cp_symbolizer__resolve_file() take */
	__u64 module_offset;
	/* the innermost function at ip (an inlined one if inlined), from DWARF,
	 * else the ELF symbol (.symtab, or .dynsym in a stripped file) whose range
	 * holds ip; NULL if neither */
	const char *function;
	__u64 function_offset; /* ip - entry of the out-of-line function holding ip */
	const char *file;      /* source file of ip as DWARF names it; NULL without DWARF */
	__u32 line;	       /* 0 if unknown */
	__u32 column;
	/* function NULL (stripped, ip in a static function): the closest function
	 * symbol below ip, any table, and ip's distance from it; NULL if none */
	const char *nearest;
	__u64 nearest_offset;
	/* the ELF function symbol (with a size) whose range holds ip: its entry
	 * in the process and its size; 0, 0 when none (the code a walker may
	 * decode from a known instruction boundary) */
	__u64 sym_start;
	__u64 sym_size;
	__u32 flags;	  /* CP_SYM_* */
	__u32 nr_inlined; /* callers in inlined[], innermost first */
	struct cp_inline_caller inlined[CP_MAX_INLINE_DEPTH];
};

struct cp_symbolizer_stats {
	__u64 lookups;		  /* cp_symbolizer__resolve() calls */
	__u64 cache_hits;	  /* served from the (pid, ip) result cache */
	__u64 snapshots;	  /* maps read (attach, refresh, evicted and back; fallbacks too) */
	__u64 auto_refreshes;	  /* snapshots taken for an ip in a file mapped since (dlopen) */
	__u64 evictions;	  /* Dwfls and snapshots dropped to stay within max_processes */
	__u64 failures;		  /* lookups that returned an error */
	__u64 string_bytes;	  /* interned strings held now */
	__u64 string_flushes;	  /* strings and results dropped: over the cap, or a shrink */
	__u64 file_spaces;	  /* ELF files opened to be shared by the processes mapping them */
	__u64 shared_lookups;	  /* lookups answered from a shared file */
	__u64 file_cache_hits;	  /* of those, described before for a process mapping the file */
	__u64 fallbacks;	  /* processes' own Dwfls taken (files not found again, ...) */
	__u64 snapshot_evictions; /* of evictions: process snapshots (with their own Dwfl) */
	__u64 copy_evictions;	  /* of evictions: Dwfls let go for the bytes of their copies */
	__u64 snap_byte_evictions; /* of snapshot_evictions: for their maps' bytes */
};

struct cp_symbolizer;

/*
 * A symbolizer keeping at most @max_processes Dwfls (processes and files
 * together; 0: CP_SYM_MAX_PROCESSES), as many process snapshots, and
 * @max_results cached results (0:
 * CP_SYM_MAX_RESULTS). NULL on allocation failure.
 */
struct cp_symbolizer *cp_symbolizer__new(size_t max_processes, size_t max_results);
void cp_symbolizer__free(struct cp_symbolizer *s);

/*
 * Symbolizes @ip in process @pid into @out (strings owned by @s, valid until the
 * next lookup at least: cp_symbolizer__set_max_string_bytes()). The first
 * lookup in a process snapshots its maps; an ip outside every module that a
 * file-backed mapping now holds (a dlopen since) re-snapshots, at most every
 * CP_SYM_REFRESH_MIN_MS. For a return address (a call stack) pass ip - 1 so
 * the call's line is found, not the next one.
 *
 * For what a report asks of a store keyed by pid: the result cached by the
 * latest incarnation of @pid that resolved @ip (cp_symbolizer__resolve_now()
 * at its sample), else the live process's snapshot, else the latest exited
 * one's.
 *
 * Returns 0 when a module holds @ip (function, file and line filled as far as
 * the module's symbols and debug info allow); -ENOENT when none does (@out
 * has ip set, module NULL); -ESRCH when no snapshot exists and the process is
 * gone (never seen, forgotten, or evicted after it exited); -ENOMEM.
 */
int cp_symbolizer__resolve(struct cp_symbolizer *s, pid_t pid, __u64 ip,
			   struct cp_symbol_info *out);

/*
 * As cp_symbolizer__resolve(), for a record just received, made at @when_ns
 * (CLOCK_MONOTONIC; 0: unknown): answered only by the process that holds
 * @pid, never from another incarnation's results or snapshot. That is the
 * live process, unless it started after @when_ns (then, as when none holds
 * @pid, the latest exited one that did not: the record came late). A
 * process with no snapshot yet gets one.
 */
int cp_symbolizer__resolve_now(struct cp_symbolizer *s, pid_t pid, __u64 ip, __u64 when_ns,
			       struct cp_symbol_info *out);

/*
 * Re-snapshots @pid's maps after an exec or dlopen (its own Dwfl goes with
 * the old snapshot) and drops its cached results. On failure (-ESRCH: the
 * process is gone) the old snapshot stays. A live snapshot of a process
 * that started at another time than the one /proc shows now (its exit
 * record was lost) is moved aside as cp_symbolizer__exit() does.
 */
int cp_symbolizer__refresh(struct cp_symbolizer *s, pid_t pid);

/*
 * cp_symbolizer__refresh() for an exec record made at @when_ns: when the
 * process /proc shows started after it, the exec'd process is gone and its
 * pid another's; nothing is read then (-ESRCH), and its snapshot is moved
 * aside as on exit.
 */
int cp_symbolizer__exec(struct cp_symbolizer *s, pid_t pid, __u64 when_ns);

/*
 * Process @pid exited (its exit record): its snapshot, own Dwfl and results
 * stay for the report, as an exited incarnation, never found for a process
 * that takes the pid later. At most CP_SYM_MAX_EXITED are kept (the least
 * recently used go, counted as snapshot evictions).
 */
void cp_symbolizer__exit(struct cp_symbolizer *s, pid_t pid);

/* Drops every snapshot of @pid, live or exited, its own Dwfls and its cached results. */
void cp_symbolizer__forget(struct cp_symbolizer *s, pid_t pid);

/*
 * Symbolizes the link-time address @vaddr (cp_symbol_info.module_offset) in
 * the ELF file at @path, with no process: recordings replayed offline. The
 * file's Dwfl is cached like a process's. Returns 0, -ENOENT when no
 * section of the file holds @vaddr, or a negative errno opening the file.
 */
int cp_symbolizer__resolve_file(struct cp_symbolizer *s, const char *path, __u64 vaddr,
				struct cp_symbol_info *out);

#define CP_SYM_BUILD_ID_MAX 64 /* bytes of a build-id kept (SHA-1's 20 in practice) */

/* A file mapping of a process and the build-id of the file symbolized for it. */
struct cp_sym_mapping {
	__u64 start;	    /* first byte */
	__u64 end;	    /* one past the last */
	__u64 offset;	    /* file offset mapped at start */
	const char *path;   /* as the maps name it; a string like cp_symbol_info's */
	__u32 build_id_len; /* 0: none known (no ELF file opened, or none in it) */
	__u8 build_id[CP_SYM_BUILD_ID_MAX];
};

/*
 * The mapping of process @pid that holds @ip in its maps snapshot (the one
 * cp_symbolizer__resolve() uses; call that first), with the build-id of
 * the file read for it: the file a recording's path names (or --path-map's),
 * whose build-id the replay compared with the recorded one. 0; -ENOENT
 * when no file or [vdso] mapping holds @ip; -ESRCH without a snapshot.
 */
int cp_symbolizer__mapping(struct cp_symbolizer *s, pid_t pid, __u64 ip,
			   struct cp_sym_mapping *out);

/*
 * The code mapping of @pid's program, as cp_symbolizer__mapping() gives it:
 * the lowest file mapping with code in its snapshot whose name is not a
 * shared object's ("*.so*": the libraries, and the loader, which maps a
 * program it runs below itself and libraries below that). Files without
 * code mapped below the program (a JVM's class archive) are passed over; a
 * file with code mapped lower and not named as a library would be taken.
 * 0; -ENOENT when there is none; -ESRCH without a snapshot.
 */
int cp_symbolizer__main_mapping(struct cp_symbolizer *s, pid_t pid, struct cp_sym_mapping *out);

/* Writes a location for (@tgid, @ip) into @buf ("func (file.c:12)"); 0, or < 0 for none. */
typedef int (*cp_locate_fn)(void *ctx, __u32 tgid, __u64 ip, char *buf, size_t sz);

struct cp_maps_how;

/*
 * @pid's maps as text, owned by the callee, a generation that changes
 * whenever the text does, and how it was read (all zero: not read from
 * /proc now); 0, or a negative errno when it has none.
 */
typedef int (*cp_maps_text_fn)(void *ctx, pid_t pid, const char **text, size_t *len, __u64 *gen,
			       struct cp_maps_how *how);

/*
 * Takes processes' maps from @fn instead of /proc/PID/maps: a recorder that
 * writes them down, or a recording (@replay: then no snapshot is taken for
 * an unknown ip, only by cp_symbolizer__refresh() where the run took one).
 * Files are opened by the paths the text names; "[vdso]" is not reported
 * (its image is in the process's memory, not in a file).
 */
void cp_symbolizer__set_maps_text(struct cp_symbolizer *s, cp_maps_text_fn fn, void *ctx,
				  bool replay);

/*
 * Interned strings beyond @max bytes (default CP_SYM_MAX_STRING_BYTES) are
 * dropped with the result cache at the next lookup: the strings a lookup
 * handed out stay valid until the next lookup, not longer.
 */
void cp_symbolizer__set_max_string_bytes(struct cp_symbolizer *s, size_t max);

/*
 * The snapshots hold at most @max bytes (default CP_MAX_MAPS_KEPT_BYTES,
 * objects/proc_maps.h): a new snapshot lets the least recently used others
 * go until they all fit (counted); one larger than @max is kept alone. A
 * live process's snapshot let go is read again at its next lookup.
 */
void cp_symbolizer__set_max_snap_bytes(struct cp_symbolizer *s, __u64 max);

/*
 * Memory pressure: halves the number of Dwfls kept from now on (down to
 * CP_SYM_MIN_PROCESSES) and keeps only the most recently used half of that;
 * drops the result cache and the strings. Process snapshots stay (they hold
 * no DWARF): a file whose Dwfl went is opened again at its next lookup if it
 * is still the file mapped; a process's own Dwfl is taken again if the
 * process is alive. Returns the Dwfls dropped (counted as evictions).
 */
size_t cp_symbolizer__shrink(struct cp_symbolizer *s);

/*
 * Opens the files the maps name through @m (report --path-map; NULL: as
 * named); the modules keep the names the maps give. @m must outlive @s.
 */
void cp_symbolizer__set_path_map(struct cp_symbolizer *s, const struct cp_path_map *m);

void cp_symbolizer__stats(const struct cp_symbolizer *s, struct cp_symbolizer_stats *out);

/*
 * One-line text for a report: "func (file.c:42)", "f (file.h:7) <- g
 * (file.c:42)" (f inlined into g, each at its line: f's, then the call's),
 * "func" (symbols but no debug info), "libfoo.so+0x1234
 * (nearest: sym)" (stripped), "libfoo.so+0x1234" or "0x7f..." (nothing
 * known). File and module are shown by basename. Pure; snprintf semantics:
 * returns the length the full text needs, writes at most @size bytes.
 */
int cp_symbol_info_format(const struct cp_symbol_info *info, char *buf, size_t size);

/*
 * A Dwfl of live process @pid's own: its maps reported, every module
 * opened through the same checks as for symbols (symbols/unwind.h unwinds
 * in it). Owned by the symbolizer's cache: valid until the next call into
 * @s. After @pid's exit (cp_symbolizer__exit()) and no process holding it
 * now, the one opened while it lived: a stack copy it made may be read
 * after its exit record. NULL when the process is gone and none was opened.
 */
Dwfl *cp_symbolizer__process_dwfl(struct cp_symbolizer *s, pid_t pid);

/*
 * A tenant's file a process maps, as the describe server takes it: its
 * sealed copy, its separate debug file's (-1: none), its content key, and
 * where the process placed it (address = link-time address + @bias).
 * The descriptors are the symbolizer's: valid until the next call into it.
 */
struct cp_sym_remote {
	int fd, debug_fd;
	struct cp_copy_key key;
	__u64 bias;
};

/*
 * The tenant's file holding @ip in process @pid (live, else exited as for
 * cp_symbolizer__process_dwfl()), into @out: 0; -ENOENT
 * when @ip is in no tenant's file the describe server has (the process's
 * own Dwfl holds it: cp_symbolizer__process_dwfl()); -EAGAIN while the
 * file waits for its parse worker; another -errno.
 */
int cp_symbolizer__remote_at(struct cp_symbolizer *s, pid_t pid, __u64 ip,
			     struct cp_sym_remote *out);

/*
 * Whether cp_symbolizer__process_dwfl() has @pid's open already (it costs
 * no opening), the live process's or, with none, the exited one's.
 */
bool cp_symbolizer__has_process_dwfl(struct cp_symbolizer *s, pid_t pid);

#endif /* CP_SYMBOLIZER_H */
