/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which hardware PMU can sample memory accesses with data addresses, read
 * from sysfs below a replaceable root ("/" in production, a fake tree under
 * tests/data/pmu in unit tests, --sysfs-root on the command line):
 *
 *  - Intel PEBS: bus/event_source/devices/cpu (or cpu_core + cpu_atom on
 *    hybrid parts, and cpu_lowpower on Arrow Lake-H) with events/mem-loads, events/mem-stores and, where the
 *    load-latency facility needs it, events/mem-loads-aux; the format files say how
 *    the terms of those strings map to config bits; caps/max_precise says
 *    whether PEBS is there at all (0 in VMs whose virtual PMU lacks it).
 *  - AMD IBS: bus/event_source/devices/ibs_op, one event sampling every op;
 *    loads and stores are told apart in BPF (data_src.mem_op).
 *  - Neither: a VM without a virtual PMU (like the development machines);
 *    the caller falls back to --source soft.
 *
 * cp_pmus__new() only gathers facts; cp_source_decide() is the pure choice.
 */
#ifndef CP_PMU_H
#define CP_PMU_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "machine/cpuset.h"
#include "machine/pmu_format.h"
#include "machine/source.h"
#include "machine/sysinfo.h"

#define CP_PMU_MAX_CORE	  3 /* "cpu", or hybrid cpu_core, cpu_atom, cpu_lowpower */
#define CP_PMU_NAME_LEN	  32
#define CP_PMU_EVENT_LEN  128
#define CP_PMU_WHY_LEN	  256
#define CP_PMU_REASON_LEN 384 /* a why plus the advice around it */

/* Where PMU devices live, relative to the root (for messages as well). */
#define CP_PMU_DEVICES_DIR "/sys/bus/event_source/devices"

enum cp_cpu_vendor {
	CP_VENDOR_UNKNOWN = 0,
	CP_VENDOR_INTEL,
	CP_VENDOR_AMD,
	CP_VENDOR_OTHER,
};

/* The first processor block of /proc/cpuinfo, as far as PMU choice needs it. */
struct cp_cpu_id {
	enum cp_cpu_vendor vendor;
	unsigned int family; /* "cpu family", decimal */
	unsigned int model;  /* "model", decimal */
	bool hypervisor;     /* "hypervisor" flag: running as a guest */
};

/*
 * Parses /proc/cpuinfo text up to the end of its first processor block.
 * Returns 0, or -EINVAL when vendor_id, cpu family or model is missing.
 */
int cp_cpuinfo_parse(const char *text, struct cp_cpu_id *id);

enum cp_pmu_kind {
	CP_PMU_PEBS,
	CP_PMU_IBS,
};

/* One usable sampling PMU. */
struct cp_pmu {
	enum cp_pmu_kind kind;
	char name[CP_PMU_NAME_LEN];	      /* sysfs directory: cpu, cpu_core, cpu_atom, ibs_op */
	__u32 type;			      /* perf_event_attr.type (dynamic except "cpu") */
	struct cp_pmu_formats formats;	      /* format/ files */
	bool has_cpus;			      /* hybrid: only the CPUs in @cpus */
	struct cp_cpuset cpus;		      /* the "cpus" file */
	int max_precise;		      /* caps/max_precise; -1 when absent */
	char caps_name[CP_PMU_NAME_LEN];      /* caps/pmu_name ("skylake"); "" when absent */
	char mem_loads[CP_PMU_EVENT_LEN];     /* PEBS: events/mem-loads */
	char mem_stores[CP_PMU_EVENT_LEN];    /* PEBS: events/mem-stores ("" if none) */
	char mem_loads_aux[CP_PMU_EVENT_LEN]; /* PEBS: events/mem-loads-aux ("" if none) */
	bool zen4_ext;			      /* IBS: caps/zen4_ibs_extensions */
};

/* What cp_pmus__new() found. */
struct cp_pmus {
	struct cp_cpu_id cpu;
	int cpu_err; /* 0, or why proc/cpuinfo was not usable */
	int nr_core; /* usable PEBS PMUs in @core */
	struct cp_pmu core[CP_PMU_MAX_CORE];
	bool has_ibs;
	struct cp_pmu ibs;
	char pebs_why[CP_PMU_WHY_LEN]; /* why PEBS is unusable; "" when nr_core > 0 */
	char ibs_why[CP_PMU_WHY_LEN];  /* why there is no ibs_op; "" when has_ibs */
};

/*
 * Reads @root/sys/bus/event_source/devices and @root/proc/cpuinfo. A missing
 * PMU is not an error: it is recorded (nr_core == 0 with pebs_why, has_ibs
 * false with ibs_why). Returns NULL only when out of memory (errno set).
 * A core PMU without events/mem-loads (AMD, or an Intel CPU newer than the
 * kernel) is not PEBS-capable: without the kernel's model support data_src
 * would be NA on every sample.
 */
struct cp_pmus *cp_pmus__new(const char *root);
void cp_pmus__free(struct cp_pmus *pmus);

/*
 * The index in pmus->core of the PEBS PMU that counts on @cpu: the only one,
 * or on hybrid parts the one whose "cpus" list has @cpu. -ENODEV if none.
 */
int cp_pmus_core_for_cpu(const struct cp_pmus *pmus, int cpu);

/*
 * AMD IBS on kernel @kv: data_src and the data address are filled only
 * since 6.1, and per-task (per-thread) IBS events exist only since 6.2.
 * Returns 0 with *@per_task set, or -EOPNOTSUPP before 6.1.
 */
int cp_ibs_kernel_check(const struct cp_kernel_version *kv, bool *per_task);

/* The outcome of --source. */
struct cp_source_choice {
	enum cp_source_kind kind;	/* never CP_SOURCE_AUTO */
	bool per_task;			/* per-thread events possible (IBS < 6.2: no) */
	char reason[CP_PMU_REASON_LEN]; /* one line: why this source, or the error */
};

/*
 * Pure: picks the sampling source for --source @want on @pmus and kernel
 * @kv. auto prefers PEBS, then IBS, then soft; an explicit pebs or ibs that
 * cannot work is an error. Returns 0, or -ENODEV / -EOPNOTSUPP with the
 * one-sentence error in out->reason.
 */
int cp_source_decide(enum cp_source_kind want, const struct cp_pmus *pmus,
		     const struct cp_kernel_version *kv, struct cp_source_choice *out);

/*
 * Whether IBS on @cpu reports HITM: perf_ibs_cache_hit_st_valid()
 * (arch/x86/events/amd/ibs.c) is false on family 0x19 models 0x00-0x0f
 * and 0x20-0x5f (Zen 3), where IbsOpData2's cache_hit_st cannot be trusted;
 * elsewhere a load served by another cache with cache_hit_st 0 is HITM.
 */
bool cp_ibs_has_hitm(const struct cp_cpu_id *cpu);

/*
 * Whether @pmu's mem-stores event reports where a store was served: the
 * store-latency event (event=0xcd,umask=0x2: Sapphire Rapids, hybrid
 * P-cores) goes through store_latency_data() with levels; the older precise
 * store event (event=0xd0,umask=0x82) says only L1 hit or miss.
 */
bool cp_pmu_store_levels(const struct cp_pmu *pmu);

/* The E-core PMUs of hybrid parts: cpu_atom, and cpu_lowpower (Arrow Lake-H). */
bool cp_pmu_is_atom(const struct cp_pmu *pmu);

/*
 * First precise_ip to try on @pmu: caps/max_precise capped at 3, or 3 when
 * the file is missing (the probe finds the level). IBS: 0, its IP has no
 * skid anyway and ibs_op itself takes no precise modifier. E-cores start at
 * 2: their constraint functions put every precise_ip 3 event on the same
 * counter(s) (tnt_get_event_constraints(): counter 0), so loads and stores
 * at 3 would multiplex, each sampled half the time.
 */
int cp_pmu_precise_first(const struct cp_pmu *pmu);

/*
 * After perf_event_open at precise_ip @tried failed with @err (negative
 * errno): the next level to try, or -1 to give up. x86_pmu_hw_config()
 * refuses a level above what the PMU does with -EOPNOTSUPP and some
 * constraints with -EINVAL; PEBS memory events need at least 1, so a
 * failure at 1, or any other errno, ends the probe.
 */
int cp_pmu_precise_next(int tried, int err);

#endif /* CP_PMU_H */
