/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Machine facts for --probe and for capability checks before a session:
 * kernel version, BTF and kfuncs, uprobes, free hardware breakpoint slots,
 * CPU counts, privileges, perf_event_paranoid, whether bpf() loads a tracing
 * program. Each probe is a thin edge returning data (or a negative errno);
 * the parsers behind them are pure and unit-tested. Files are read below a
 * replaceable root ("/" in production, --sysfs-root in tests).
 */
#ifndef CP_SYSINFO_H
#define CP_SYSINFO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

/* x86 debug registers DR0-DR3: the most breakpoints one task can hold. */
#define CP_HW_BREAKPOINT_SLOTS 4
#define CP_CAP_NAMES_LEN       64

struct cp_kernel_version {
	unsigned int major;
	unsigned int minor;
	unsigned int patch; /* 0 when the release has none ("6.10-rc7") */
};

/*
 * Parses a uname release, "6.18.44-fc-v669" -> 6.18.44: MAJOR.MINOR, an
 * optional .PATCH, then anything not starting with a digit or '.'
 * ("-generic", "+", "-rc1"). Returns 0, or -EINVAL (no MAJOR.MINOR, a
 * number over 65535) leaving @v untouched.
 */
int cp_kernel_version_parse(const char *release, struct cp_kernel_version *v);

/* <0, 0 or >0 as @v is older than, equal to or newer than major.minor.patch. */
int cp_kernel_version_cmp(const struct cp_kernel_version *v, unsigned int major, unsigned int minor,
			  unsigned int patch);

/* uname(2): the release string into @release and its parsed version. 0 or -errno. */
int cp_sysinfo_kernel(char *release, size_t release_sz, struct cp_kernel_version *v);

/*
 * Counts the CPUs in a sysfs cpulist, "0-3,8,10-11\n" -> 7. Returns the count,
 * or -EINVAL (empty, malformed, a range running backwards), -ERANGE.
 */
int cp_cpulist_count(const char *text);

/* CPUs in @root/sys/devices/system/cpu/{online,possible}. 0 or -errno. */
int cp_sysinfo_cpus(const char *root, int *online, int *possible);

/*
 * Parses a /proc/sys integer such as perf_event_paranoid ("2\n", "-1\n"): an
 * optional '-', digits, one optional newline. 0, -EINVAL or -ERANGE.
 */
int cp_parse_proc_int(const char *text, int *out);

/* @root/proc/sys/kernel/perf_event_paranoid. 0 or -errno. */
int cp_sysinfo_perf_paranoid(const char *root, int *value);

/* 0 when @root/sys/kernel/btf/vmlinux is readable, else -errno. */
int cp_sysinfo_btf_vmlinux(const char *root);

/*
 * Whether the kernel's BTF has a function @name (kfuncs such as
 * bpf_cast_to_kern_ctx are BTF_KIND_FUNC there). With @root "/" this is
 * libbpf's btf__load_vmlinux_btf(), otherwise @root/sys/kernel/btf/vmlinux.
 * Returns 1 (present), 0 (absent) or a negative errno (no BTF to look in).
 */
int cp_sysinfo_btf_has_func(const char *root, const char *name);

/*
 * Whether the kernel's BTF has an enumerator @name in the enum @type (a
 * kernel's attach types are the values of enum bpf_attach_type), looked up
 * like cp_sysinfo_btf_has_func(). 1, 0 or a negative errno.
 */
int cp_sysinfo_btf_has_enumerator(const char *root, const char *type, const char *name);

/*
 * The two above keep this machine's BTF (root "/") once parsed, for the
 * next question; this drops it (the BPF programs are loaded: no more).
 */
void cp_sysinfo_btf_release(void);

/*
 * The uprobe PMU's dynamic perf type from
 * @root/sys/bus/event_source/devices/uprobe/type (> 0), or a negative errno
 * (-ENOENT: kernel built without CONFIG_UPROBE_EVENTS).
 */
int cp_sysinfo_uprobe_type(const char *root);

/*
 * Free hardware breakpoint slots for a task of this process on any CPU:
 * opens disabled HW_BREAKPOINT_X events on the calling thread (pid 0,
 * cpu -1) until ENOSPC or CP_HW_BREAKPOINT_SLOTS, then closes them. On x86
 * instruction and data breakpoints share one pool per task and per CPU; a
 * task-bound breakpoint needs a slot free on every CPU, so CPU-wide
 * breakpoints (perf record -a -e mem:..., another profiler) lower the count,
 * while other tasks' breakpoints (a debugger on another process) do not.
 * Returns 0..CP_HW_BREAKPOINT_SLOTS, or the negative errno of the first
 * failing open other than ENOSPC (-EACCES: perf_event_paranoid; -ENOENT or
 * -EOPNOTSUPP: no breakpoint support).
 */
int cp_sysinfo_hw_breakpoint_slots(void);

#define CP_HW_BREAKPOINT_PROBE_CALLS                                                               \
	4 /* calls made under cp_sysinfo_hw_breakpoint_fires()'s breakpoint */
/* What is said where breakpoints open but never fire (--probe, the run's warning). */
#define CP_HW_BREAKPOINT_SILENT                                                                    \
	"they open but never fire (an instruction breakpoint on this process's own code counted "  \
	"0 of 4 calls: the hypervisor does not deliver debug exceptions to this VM); no access "   \
	"histories, so conflict and capacity misses cannot be told apart"

/*
 * Whether a hardware breakpoint fires here: an enabled instruction
 * breakpoint on a function of this process, for this thread, counts
 * CP_HW_BREAKPOINT_PROBE_CALLS calls. Some hypervisors (Firecracker) let
 * the event open and take its slot, then never deliver the debug
 * exception. 1: it fired; 0: it opened and counted nothing; -errno: it
 * could not be opened (as cp_sysinfo_hw_breakpoint_slots()).
 */
int cp_sysinfo_hw_breakpoint_fires(void);

/* What the kernel will let this process do with BPF and perf. */
struct cp_privileges {
	uid_t euid;
	__u64 cap_effective;		/* bit N = capability N */
	bool bpf;			/* CAP_BPF, or CAP_SYS_ADMIN */
	bool perfmon;			/* CAP_PERFMON, or CAP_SYS_ADMIN */
	bool ok;			/* both: may load and attach tracing programs */
	char missing[CP_CAP_NAMES_LEN]; /* "CAP_BPF, CAP_PERFMON", "" when ok */
};

/*
 * Decides from an effective uid and capability set (pure). The kernel checks
 * capabilities, never the uid: root in a container started with
 * --cap-drop has uid 0 and still gets EPERM, so the uid is only reported.
 * CAP_SYS_ADMIN stands in for both, as in bpf_capable()/perfmon_capable()
 * (and is the only way on kernels before 5.8).
 */
void cp_privileges_eval(uid_t euid, __u64 cap_effective, struct cp_privileges *p);

/* capget(2) on this process, then cp_privileges_eval(). 0 or -errno. */
int cp_sysinfo_privileges(struct cp_privileges *p);

/*
 * Loads a two-instruction BPF_PROG_TYPE_PERF_EVENT program with the raw
 * bpf(2) syscall (no libbpf, no BTF) and unloads it. 0 when it loads;
 * -EPERM (missing CAP_BPF/CAP_PERFMON), -ENOSYS (no bpf(2)), -EINVAL.
 */
int cp_sysinfo_bpf_load(void);

/*
 * Whether a BPF_PROG_TYPE_PERF_EVENT program may look up a hash map whose
 * elements are allocated at run time (BPF_F_NO_PREALLOC): the verifier says
 * so since the hash map allocates from bpf_mem_alloc, safe in NMI and in
 * every tracing program (6.1). 1, 0, or a negative errno when the question
 * cannot be asked (no map, no bpf(2)). A map created this way costs nothing
 * at start; a 262144-entry preallocated one costs 0.15 s of CPU in a VM.
 */
int cp_sysinfo_bpf_runtime_alloc(void);

/* Everything --probe shows: each field, or the negative errno of its probe. */
struct cp_sysinfo {
	char release[65];
	struct cp_kernel_version kernel;
	int kernel_err;
	int cpus_online;
	int cpus_possible;
	int cpus_err;
	int btf_err;		    /* 0: /sys/kernel/btf/vmlinux readable */
	int kfunc_cast_to_kern_ctx; /* cp_sysinfo_btf_has_func("bpf_cast_to_kern_ctx") */
	int uprobe_type;	    /* > 0, or -errno */
	int hw_breakpoint_slots;    /* 0..4, or -errno */
	int hw_breakpoint_fires;    /* cp_sysinfo_hw_breakpoint_fires(); -ENOSPC: no slot to try */
	int perf_paranoid;
	int perf_paranoid_err;
	struct cp_privileges priv;
	int priv_err;
	int bpf_load_err; /* cp_sysinfo_bpf_load() */
};

/* Runs every probe above (root: the file-system root for sysfs/procfs). */
void cp_sysinfo_collect(const char *root, struct cp_sysinfo *si);

/*
 * Writes one "name: value" line per fact, with what to do where something
 * is missing ("BTF: missing ...; needs CONFIG_DEBUG_INFO_BTF=y"). Pure:
 * prints only what @si holds.
 */
void cp_sysinfo_print(const struct cp_sysinfo *si, FILE *f);

#endif /* CP_SYSINFO_H */
