/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Uprobes as one BPF link per program and file (BPF_TRACE_UPROBE_MULTI,
 * Linux 6.6), made with the bpf() syscall: Debian 12's libbpf (1.1) has no
 * attach call for them.
 *
 * Why not one perf-event uprobe per address, as libbpf attaches them: each
 * of those unregisters under the kernel's trace event_mutex and waits there
 * for a tasks-trace RCU grace period (kernel/trace/trace_uprobe.c,
 * probe_event_disable()), so a target's ~16 allocation probes went away one
 * after the other, ~90 ms each, and the ones still queued kept trapping every
 * allocator call of the target for the whole 1.5 s. A multi link removes all
 * its breakpoints first and then waits once (bpf_uprobe_unregister() in
 * kernel/trace/bpf_trace.c), outside that mutex.
 *
 *   cp_uprobe_multi_supported()                   before cacheperf__load()
 *   cp_uprobe_multi_prepare(prog)                 the same: its attach type
 *   fd = cp_uprobe_multi_attach(prog, pid, ...)   after the load; close(fd) detaches
 */
#ifndef CP_UPROBE_MULTI_H
#define CP_UPROBE_MULTI_H

#include <stdbool.h>
#include <sys/types.h>
#include <linux/types.h>

struct bpf_program;

/* The uapi's values (include/uapi/linux/bpf.h), absent from Linux 6.1's headers. */
#define CP_BPF_TRACE_UPROBE_MULTI    48
#define CP_BPF_F_UPROBE_MULTI_RETURN (1u << 0)

/* Whether this kernel makes uprobe multi links (its BTF says; checked once). */
bool cp_uprobe_multi_supported(void);

/* Before the load: @prog will be attached by cp_uprobe_multi_attach() only. */
int cp_uprobe_multi_prepare(struct bpf_program *prog);

/*
 * Attaches @prog at @cnt file offsets @offs of @path (@cookies[i] is
 * bpf_get_attach_cookie() at @offs[i]), as return probes with @ret, in
 * process @pid only (0: every process). Returns the link's fd, or -errno.
 */
int cp_uprobe_multi_attach(const struct bpf_program *prog, pid_t pid, const char *path,
			   const __u64 *offs, const __u64 *cookies, __u32 cnt, bool ret);

#endif /* CP_UPROBE_MULTI_H */
