/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The kernel <-> user ABI of cacheperf-bpf: ring-buffer records, map keys and
 * values, and the global counters kept in .bss. Every struct here is the
 * contract between bpf/ and user/: fixed-width fields, explicit padding, sizes
 * checked at compile time on both sides.
 */
#ifndef CACHEPERF_ABI_H
#define CACHEPERF_ABI_H

#include "cacheperf/types.h"
#include "cacheperf/data_src.h"
#include "cacheperf/operand.h"

#define CP_MAX_TGIDS 64 /* target filter entries (-p PID,...) */

/* Values of the target filter map. */
#define CP_TARG_PROFILE 1     /* a target: profiled */
#define CP_TARG_HELD	2     /* `-- CMD` before its exec: the launcher's own code, not profiled */
#define CP_MAX_IPS	16384 /* per-(tgid, ip) counter map entries */
/*
 * Samples' user stacks (bpf/stacks.bpf.h): frames kept per stack, stacks in
 * the stack map (user space deletes those no counter uses any more, each
 * interval) and (tgid, stack, ip) counter entries (drained each interval).
 */
#define CP_STACK_DEPTH	       32
#define CP_STACK_EVERY_DEFAULT 32 /* --stack-every: one event in 32 has its stack walked */
#define CP_STACK_HIT_FACTOR    8  /* ... and one L1 hit in 8 times as many (bpf/stacks.bpf.h) */
#define CP_MAX_SAMPLE_STACKS   16384
#define CP_MAX_STACK_COUNTS    16384
#define CP_RINGBUF_BYTES       (4u << 20)
/*
 * The share of the ring (1/N: 64 KiB of 4 MiB, ~2000 records) that only
 * exec and exit records may fill (cp_events_reserve()): a flood of samples
 * or allocation events never costs the records that tell which process an
 * address belongs to.
 */
#define CP_RINGBUF_KEEP_SHARE 64
/*
 * How much of the ring, in those 64ths, each kind of record may fill
 * (cp_events_reserve()): samples and breakpoint records all but the last
 * 64th; allocation events and stack copies three quarters, so that a
 * flood of other processes' allocator calls under -a (two shell loops
 * made ~135,000 a second) leaves the samples a quarter of the ring.
 */
#define CP_RINGBUF_FILL_SAMPLES (CP_RINGBUF_KEEP_SHARE - 1)
#define CP_RINGBUF_FILL_ALLOC	48
/*
 * The birth of an object this large (glibc's default mmap threshold) may
 * fill the ring as far as samples: such objects are few and are where the
 * misses are; under the same flood test_cli's 16 MiB object lost its
 * event in 1 run of 3, and all its samples were "[unmapped]".
 */
#define CP_ALLOC_EVENT_BIG (128u << 10)
/* Records wake the reader once this much waits, at most once per ms per CPU (bpf/wakeup.bpf.h) */
#define CP_RINGBUF_WAKEUP_BYTES (CP_RINGBUF_BYTES / 16)
#define CP_WINDOW_MAX		512 /* largest --window, a power of two */
#define CP_WINDOW_DEFAULT	512
/* --window-miss-ratio is carried in parts per million: 0.5 % == 5000 ppm */
#define CP_WINDOW_RATIO_DEFAULT_PPM 5000

/* Which access kind a sample or window belongs to. */
enum cp_access {
	CP_ACCESS_LOAD = 0,
	CP_ACCESS_STORE = 1,
	CP_ACCESS_NR,
};

/* Ring-buffer record types: the first __u32 of every record. */
enum cp_record_type {
	CP_REC_SAMPLE = 1, /* struct cp_sample */
	CP_REC_OBJECT = 2, /* struct cp_object_event (cacheperf/alloc.h): alloc, free, mapping */
	CP_REC_PROC = 3,   /* struct cp_proc_event: a target exec'd or exited */
	CP_REC_BP = 4,	   /* struct cp_bp_event (cacheperf/breakpoint.h): disarm it; live only */
	/* a call site's registers and stack top, live only (never recorded) */
	CP_REC_USTACK = 5, /* struct cp_ustack_record (cacheperf/alloc.h) */
	/* a sampled stack's registers and stack top, live only (never recorded) */
	CP_REC_SAMPLE_USTACK = 6, /* struct cp_sample_ustack_record (cacheperf/stack_copy.h) */
	/* made by user space from a finished breakpoint history, so that the
	 * live run and a recording's replay feed the classifier alike */
	CP_REC_HISTORY = 64, /* struct cp_history_record */
	/* made by user space when it read a call site's stack from the BPF stack
	 * map, so that a recording's replay has the frames the run had */
	CP_REC_ALLOC_STACK = 65, /* struct cp_alloc_stack_record (cacheperf/alloc.h) */
	/* user space: the comm and cgroup a live run read for a process */
	CP_REC_PROC_DESC = 66, /* struct cp_proc_desc_record */
};

enum cp_proc_event_kind {
	CP_PROC_EXEC = 1, /* a new address space: objects, maps and symbols start afresh */
	CP_PROC_EXIT = 2, /* the whole process is gone (its group leader exited) */
};

/* A target process changed (bpf/targets.bpf.c). */
struct cp_proc_event {
	__u32 type; /* CP_REC_PROC */
	__u32 kind; /* enum cp_proc_event_kind */
	__u32 tgid;
	__u32 __pad;
	__u64 time_ns;
};
_Static_assert(sizeof(struct cp_proc_event) == 24, "struct cp_proc_event is ABI");

/*
 * A CP_PROC_EXEC record: the event, then who the new image is as the kernel
 * had it at the exec, so that a process gone before its record is read keeps
 * its name, and the processes of one cgroup read it once. Recordings made
 * before it carry the event alone (24 bytes), or no cgroup_v1 (48 bytes).
 */
struct cp_proc_exec_event {
	struct cp_proc_event ev;
	char comm[16];	 /* the task's comm after the exec (TASK_COMM_LEN), NUL-padded */
	__u64 cgroup_id; /* its cgroup v2 id (the directory's inode number); 0: none */
	__u64 cgroup_v1; /* its cgroups of the v1 hierarchies: cp_cgroup_v1_of(); 0: unknown */
};
_Static_assert(sizeof(struct cp_proc_exec_event) == 56, "struct cp_proc_exec_event is ABI");
#define CP_PROC_EXEC_V2_ONLY_SIZE 48 /* the record before cgroup_v1 */

/*
 * A task's cgroup in one v1 hierarchy (@hierarchy, as /proc/PID/cgroup
 * numbers it; @id, its directory's inode number, the kernfs node id), as
 * one term of cp_proc_exec_event.cgroup_v1: the XOR of the terms of all its
 * v1 hierarchies, which is 0 on a host without any. Two tasks with one v2
 * id and one such value are in the same cgroups. bpf/targets.bpf.c takes
 * it from the kernel's links of the task's css_set, user space from the
 * text and the mounts (profile/proc_identity.c). @salt, the run's secret
 * (machine/proc_cgroup.h), keeps a tenant who makes cgroups (and so picks
 * their ids in a way) from making its value another cgroup's: the ids and
 * the mix are public.
 */
static inline __u64 cp_cgroup_v1_of(__u32 hierarchy, __u64 id, __u64 salt)
{
	__u64 x = (id ^ salt) + (__u64)hierarchy * 0x9e3779b97f4a7c15ull;

	x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
	x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
	return x ^ (x >> 31);
}

/* cp_sample.flags */
#define CP_SAMPLE_STORE (1u << 0) /* a store (else a load) */
#define CP_SAMPLE_MISS	(1u << 1) /* not served by L1 */
#define CP_SAMPLE_NA	(1u << 2) /* level unknown (data_src NA) */
#define CP_SAMPLE_ALL	(1u << 3) /* forwarded by forward-every-sample mode */

/* One sampled memory access forwarded to user space. */
struct cp_sample {
	__u32 type; /* CP_REC_SAMPLE */
	__u32 tgid;
	__u32 tid;
	__u32 cpu;
	__u64 ip;	/* user instruction pointer of the access */
	__u64 addr;	/* data (virtual) address */
	__u64 data_src; /* raw perf_mem_data_src value */
	__u64 weight;	/* load latency in cycles (0 if unknown) */
	__u64 time_ns;	/* bpf_ktime_get_ns() */
	__u32 flags;	/* CP_SAMPLE_* */
	__u16 size;	/* access size in bytes, 0 if unknown */
	__u16 __pad;
};
_Static_assert(sizeof(struct cp_sample) == 64, "struct cp_sample is ABI");

/*
 * One sample as the BPF pipeline consumes it (its input, in production and
 * in tests alike): the perf_event programs fill it
 * from the event, the test program test_mem_sample takes it as its context
 * (BPF_PROG_TEST_RUN cannot run perf_event programs), so tests drive the
 * same kernel code, maps and ring buffer with synthetic samples.
 */
struct cp_mem_input {
	__u32 tgid;
	__u32 tid;
	__u32 cpu;   /* selects the window: must be below the possible CPUs */
	__u16 size;  /* access size in bytes, 0 if unknown (forward-all samples carry it) */
	__u8 event;  /* enum cp_sample_event (cacheperf/data_src.h) */
	__u8 kernel; /* the sampled instruction ran in kernel mode */
	__u64 ip;
	__u64 addr;
	__u64 data_src; /* raw perf_mem_data_src */
	__u64 weight;	/* load latency in cycles, 0 if unknown */
	__u64 time_ns;
	/* the user stack's id in sample_stacks (bpf/stacks.bpf.h); < 0: none, not counted */
	__s32 stack_id;
	__u32 ticks; /* 1: a timer tick (soft source), counted with the sample */
};
_Static_assert(sizeof(struct cp_mem_input) == 64, "struct cp_mem_input is ABI");

/*
 * Context of the test program test_sample_read: interrupted registers in,
 * the sample read from them and from the fake struct perf_sample_data in
 * cp_fake_sample_data (.bss, laid out by the test from vmlinux BTF) out.
 */
#define CP_FAKE_SAMPLE_DATA 2048 /* bytes: more than perf_sample_data has */
#define CP_FAKE_IBS_RAW	    128	 /* bytes of the fake IBS raw record (cp_fake_ibs_raw) */
struct cp_sample_read_ctx {
	struct cp_regs regs;
	__u32 event;	/* enum cp_sample_event of the sample (its link's cookie) */
	__u32 with_raw; /* point the sample data's raw at cp_fake_ibs_raw */
	struct cp_mem_input out;
};

/* Key of the per-instruction counter map. */
struct cp_ip_key {
	__u32 tgid;
	__u32 __pad;
	__u64 ip;
};
_Static_assert(sizeof(struct cp_ip_key) == 16, "struct cp_ip_key is ABI");

/* Value of the per-instruction counter map: every sample, forwarded or not. */
struct cp_ip_counts {
	__u64 loads;	      /* sampled loads */
	__u64 stores;	      /* sampled stores */
	__u64 load_misses;    /* sampled loads not served by L1 */
	__u64 store_misses;   /* sampled stores not served by L1 */
	__u64 hitm;	      /* accesses that hit a modified line in another core */
	__u64 lat_sum;	      /* sum of sample weights (load latency, cycles) */
	__u64 lvl[CP_LVL_NR]; /* samples by the level that served them */
	/* --source soft: timer ticks that interrupted this instruction in user
	 * mode, memory access or not (the time profile) */
	__u64 ticks;
};

/* Key of the per-(instruction, user stack) counter map stack_counts. */
struct cp_stack_key {
	__u32 tgid;
	__s32 stack_id; /* in sample_stacks: frames innermost first, [0] the ip ticked */
	__u64 ip;	/* the instruction charged (a skid tick's: the access before) */
};
_Static_assert(sizeof(struct cp_stack_key) == 16, "struct cp_stack_key is ABI");

/* What was counted on one instruction reached by one call stack. */
struct cp_stack_counts {
	__u64 samples; /* memory samples (PMU, faults, decoded ticks) */
	__u64 misses;  /* ... of them not served by L1 */
	__u64 lat_sum; /* sum of their weights (load latency, cycles) */
	__u64 ticks;   /* --source soft: user-mode timer ticks */
	__u64 bp_hits; /* hits of the breakpoint armed on it */
};
_Static_assert(sizeof(struct cp_stack_counts) == 40, "struct cp_stack_counts is ABI");

/* Global counters in .bss; user space reads them through the skeleton. */
struct cp_stats {
	/* loads / stores after the target filter; forward-all: every sample */
	__u64 samples[CP_ACCESS_NR];
	__u64 misses[CP_ACCESS_NR]; /* of those, misses */
	__u64 na[CP_ACCESS_NR];	    /* of those, level not available */
	__u64 forwarded;	    /* records written to the ring buffer */
	__u64 filtered;		    /* misses aged out of a window below the ratio */
	__u64 drop_ringbuf;	    /* records lost: ring buffer full */
	__u64 drop_ipmap;	    /* samples not counted: counter map full */
	__u64 not_target;	    /* samples from other processes */
	__u64 not_mem;		    /* neither load nor store (IBS samples every op) */
	__u64 drop_window;	    /* samples of a CPU without a window (map too small) */
	__u64 followed;		    /* processes forked by a target, added to the filter */
	__u64 drop_targets;	    /* ... not added: the filter map is full */
	__u64 drop_proc;	    /* exec/exit records lost: ring buffer full */
	/* --source soft (bpf/soft_tick.bpf.c), of target processes only: */
	__u64 ticks;	    /* ticks in user mode, counted per instruction */
	__u64 ticks_kernel; /* ticks in the kernel: not counted */
	__u64 soft_queued;  /* instructions queued for user space (twice before decoding) */
	__u64 drop_pending; /* ... not queued: the pending table is full */
	__u64 ticks_skid;   /* user-mode ticks charged to the access before (skid) */
	/* samples of kernel-mode instructions (IBS before swfilt, 6.14): dropped */
	__u64 kernel_ip;
	/* user call stacks of samples, ticks and breakpoint hits (bpf/stacks.bpf.h): */
	__u64 drop_stack_map;	 /* not kept: the stack map (or its bucket) was taken */
	__u64 drop_stack_counts; /* not counted: the (tgid, stack, ip) map is full */
	__u64 no_ustack;	 /* no user stack could be read */
};

/* Counters of the sample stack copies (cacheperf/stack_copy.h) in .bss, stack_copy_stats. */
struct cp_stack_copy_stats {
	__u64 copied;	 /* walked events sent as copies, for CFI unwinding */
	__u64 ring_full; /* ... counted on their frame-pointer walk instead: ring full */
};

/*
 * What the probes did on one CPU (the per-CPU array cpu_costs, bpf/cpu_cost.bpf.h):
 * the counts user space multiplies by the unit costs measured at start to
 * estimate each CPU's share (budget/budget.h).
 */
struct cp_cpu_cost {
	__u64 ticks;	      /* cpu-clock ticks that landed on a target */
	__u64 alloc_calls;    /* allocator calls probed, added per thread batch */
	__u64 bp_hits;	      /* breakpoint hits (any process) */
	__u64 wakeups;	      /* forced ring-buffer wakeups (irq_work self-IPIs) */
	__u64 syscalls;	      /* system calls while the raw sys_enter program is attached */
	__u64 last_wakeup_ns; /* bpf_ktime_get_ns() of the last one (wakeup.bpf.h) */
	__u64 exit_traps;     /* exit points' traps (on_alloc_exit), the probed call's or not */
	/* the programs' own run time, timed in them (cp_alloc_timed(), cp_sys_prog_timed()):
	 * the kernel's run-time stats need a static key flipped on and off */
	__u64 alloc_prog_ns;	/* every allocation program: entries, returns, exit points */
	__u64 alloc_prog_calls; /* runs of the entry programs: one per allocator call */
	__u64 sys_prog_ns;	/* the raw sys_enter and sys_exit programs */
	__u64 tick_prog_ns;	/* on_tick, on the targets' ticks (counted in ticks) */
};

/*
 * Global counters of on_breakpoint (bpf/breakpoint.bpf.c), in .bss as
 * bp_stats: here, not in cacheperf/breakpoint.h, as the skeleton names the type.
 */
struct cp_bp_stats {
	__u64 hits;	    /* program runs */
	__u64 not_armed;    /* hits of an {ip, tgid} not in bp_insns: another process */
	__u64 recorded;	    /* accesses written to a history */
	__u64 late;	    /* hits on full or settled instructions */
	__u64 uncomputable; /* address not computable */
	__u64 drop_ringbuf; /* done records lost: ring buffer full */
};

/* Record CP_REC_HISTORY: the addresses one instruction accessed, oldest first. */
#define CP_HISTORY_MAX 64 /* CP_BP_HISTORY (cacheperf/breakpoint.h) */
struct cp_history_record {
	__u32 type; /* CP_REC_HISTORY */
	__u32 tgid;
	__u64 ip;
	__u32 nr; /* addrs[] used, <= CP_HISTORY_MAX */
	__u32 __pad;
	__u64 addrs[CP_HISTORY_MAX];
};

/*
 * Record CP_REC_PROC_DESC (user space, recorded): the comm and cgroup a
 * live run read from /proc for a process it summarized, written after the
 * record that made it read them, so a replay's reports name the process as
 * the live run's did. Strings are NUL-padded, "" unknown.
 */
#define CP_PROC_DESC_CGROUP_LEN 256 /* CP_CGROUP_PATH_LEN */
struct cp_proc_desc_record {
	__u32 type; /* CP_REC_PROC_DESC */
	__u32 pid;
	__u8 v2; /* the cgroup is of the unified hierarchy */
	__u8 __pad[7];
	char comm[16];
	char container_id[72]; /* 64 hex digits (found in the whole path, not cut) */
	char runtime[16];      /* "docker", "containerd", "cri-o", "podman", "" */
	char cgroup[CP_PROC_DESC_CGROUP_LEN];
};
_Static_assert(sizeof(struct cp_proc_desc_record) == 376, "cp_proc_desc_record is recorded");

#endif /* CACHEPERF_ABI_H */
