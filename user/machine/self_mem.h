/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profiler's own memory as the kernel counts it, for --max-memory and
 * the report: everything it owns (heap, the sealed memfd copies of the
 * targets' files, mapped or not, mapped files, its children), not the
 * resident pages of its heap alone.
 *
 * Which counter (cp_self_mem_read(), the one function that reads):
 *  - its own memory cgroup, when only the profiler and its children are in
 *    it (the systemd unit, a container): cgroup v2 memory.current, peak
 *    memory.peak; cgroup v1 memory.usage_in_bytes, peak
 *    memory.max_usage_in_bytes. The page cache it could reclaim (memory.stat
 *    file (v1 cache) less shmem) is not counted now; the peak is the
 *    kernel's, page cache included.
 *  - else /proc/self/status's RssAnon + RssFile (the resident set less
 *    shared memory, from the kernel's counters: smaps_rollup would walk
 *    every page table at each reading), plus every memfd the profiler
 *    holds, mapped or only open (st_blocks: the pages written, touched or
 *    not), plus its children's RssAnon + RssFile;
 *    peak the highest reading and VmHWM.
 *    The memfds and children take a scan (/proc/self/maps, fd and task:
 *    a hundred system calls with 30 threads and 60 descriptors, a third of
 *    the profiler's steady CPU time under -p at one a second), done when
 *    cp_self_mem_scan_due() says so or asked for (cp_self_mem_scan());
 *    between scans they are the last scan's figures plus every byte
 *    cp_self_mem_admit() let in since: never below what a scan would say.
 *
 * cp_self_mem_admit() is what a copy asks before it takes memory
 * (machine/target_file.c). cp_self_mem_alone() and cp_self_mem_fits() are
 * pure.
 */
#ifndef CP_SELF_MEM_H
#define CP_SELF_MEM_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

/* Processes read from the cgroup's cgroup.procs to judge whether it is ours alone. */
#define CP_SELF_MEM_MAX_PROCS 64

/*
 * The memfds and children are scanned again at least this often: a copy
 * closed since (the kept copies let go, a process's Dwfl ended) leaves the
 * count within these seconds.
 */
#define CP_SELF_MEM_SCAN_NS (5ull * 1000000000ull)

enum cp_self_mem_counter {
	CP_SELF_MEM_PROC = 0, /* RssAnon + RssFile and the memfds */
	CP_SELF_MEM_CGROUP_V2,
	CP_SELF_MEM_CGROUP_V1,
};

struct cp_self_mem {
	enum cp_self_mem_counter counter;
	__u64 bytes;	   /* now */
	__u64 peak_bytes;  /* the kernel's peak: memory.peak, max_usage_in_bytes, VmHWM */
	__u64 rss_bytes;   /* VmRSS, for comparison */
	__u64 hwm_bytes;   /* VmHWM: the resident set's peak */
	__u64 memfd_bytes; /* held in memfds (/proc only; 0 from a cgroup): scanned, or the
			      last scan's plus what was admitted since */
	bool scanned;	   /* the memfds and children were counted afresh (or a cgroup's) */
};

/*
 * Reads the counter (chosen at the first call, re-judged while it is a
 * cgroup), the memfds and children scanned when due. 0 or -errno.
 */
int cp_self_mem_read(struct cp_self_mem *out);

/* cp_self_mem_read() with the memfds and children scanned now (after a shrink, at the end). */
int cp_self_mem_scan(struct cp_self_mem *out);

/*
 * Pure: whether a reading at @now_ns scans the memfds and children: never
 * yet (@last_scan_ns 0), CP_SELF_MEM_SCAN_NS since the last, or the count
 * without a scan (@estimate: an upper bound) over @limit (0: none), so a
 * shrink or a refusal is never decided on it.
 */
bool cp_self_mem_scan_due(__u64 last_scan_ns, __u64 now_ns, __u64 estimate, __u64 limit);

/* "cgroup memory.current", ...: what the report says the figure is. */
const char *cp_self_mem_counter_name(enum cp_self_mem_counter c);

/*
 * The command of `-- CMD` (@pid; 0: none): the profiler's child, but a
 * target, whose memory is not the profiler's. Its cgroup with the command in
 * it is not the profiler's alone, and the command is not one of the
 * children counted.
 */
void cp_self_mem_set_command(pid_t pid);

/*
 * The parse worker at work beside the drain (@pid; 0: none,
 * symbols/parse_worker.h): not one of the children counted. Its resident
 * set holds the profiler's pages it shares copy on write, which counted
 * again made a reading twice the profiler's and shrank it for nothing; its
 * growth is bounded by its RLIMIT_DATA, three quarters of the room left
 * when it started.
 */
void cp_self_mem_set_worker(pid_t pid);

/*
 * A describe server (@pid in @slot, below CP_SELF_MEM_SERVERS; 0: none,
 * symbols/sym_server.h: one describes, one walks stacks), a child that
 * lives as long as the run: counted by the pages no other process maps
 * (its smaps_rollup's Private_Clean + Private_Dirty, less the sealed
 * copies' pages, which the memfds count), not its resident set, which
 * holds the profiler's pages it shares copy on write. Pages the profiler
 * wrote since the fork stay the server's alone: counted, they are its cost.
 */
#define CP_SELF_MEM_SERVERS 2
void cp_self_mem_set_server(unsigned int slot, pid_t pid);

/* The limit copies are admitted under (--max-memory); 0: any. */
void cp_self_mem_set_limit(__u64 limit_bytes);

/*
 * Whether @bytes more keep the profiler within the limit copies have
 * (cp_self_mem_copy_limit()): the last reading plus what was admitted
 * since, then, if that says no, a fresh reading with a scan.
 * Counts @bytes as held until the next reading. Thread-safe.
 */
bool cp_self_mem_admit(__u64 bytes);

/*
 * The bytes left under the limit: the last reading plus what was admitted
 * since, taken from it (0 when past it); UINT64_MAX without a limit. What
 * a parse worker (symbols/parse_worker.h) may take.
 */
__u64 cp_self_mem_room(void);

/*
 * Whether the cgroup whose processes are @pids (their parents @ppids, @n of
 * them) holds only @self and its children, @command (> 0: the command of
 * `-- CMD`, a target) not among them. Pure.
 */
bool cp_self_mem_alone(pid_t self, pid_t command, const pid_t *pids, const pid_t *ppids, size_t n);

/* Whether @held plus @bytes stays within @limit (0: no limit), without overflow. Pure. */
bool cp_self_mem_fits(__u64 held, __u64 bytes, __u64 limit);

/*
 * Copies are let in under the limit less an eighth of it: the rest is for
 * the growth nobody asks for first (libdw's heap, the describe servers'
 * parses), which a reading sees only after the fact. Admitted up to the
 * limit itself, copies held the profiler there and a parse between two
 * readings took its peak past it (128.2 MiB of 128 in one run of two).
 */
#define CP_SELF_MEM_HEADROOM_DIV 8

/* The limit copies are admitted under for @limit (0: none). Pure. */
__u64 cp_self_mem_copy_limit(__u64 limit);

#endif /* CP_SELF_MEM_H */
