// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <sys/syscall.h>
#include <linux/bpf.h>
#include <bpf/libbpf.h>

#include "machine/sysinfo.h"
#include "live/uprobe_multi.h"

/* union bpf_attr's link_create, its uprobe_multi member (Linux 6.6) from byte 16 */
struct cp_link_create_uprobe_multi {
	__u32 prog_fd;
	__u32 target_fd;
	__u32 attach_type;
	__u32 flags;
	__aligned_u64 path;
	__aligned_u64 offsets;
	__aligned_u64 ref_ctr_offsets;
	__aligned_u64 cookies;
	__u32 cnt;
	__u32 multi_flags;
	__u32 pid;
	__u32 __pad;
};

_Static_assert(sizeof(struct cp_link_create_uprobe_multi) == 64, "link_create is 64 bytes");

bool cp_uprobe_multi_supported(void)
{
	static int known = -1;

	if (known < 0)
		known = cp_sysinfo_btf_has_enumerator("/", "bpf_attach_type",
						      "BPF_TRACE_UPROBE_MULTI") == 1;
	return known;
}

int cp_uprobe_multi_prepare(struct bpf_program *prog)
{
	return bpf_program__set_expected_attach_type(
		prog, (enum bpf_attach_type)CP_BPF_TRACE_UPROBE_MULTI);
}

int cp_uprobe_multi_attach(const struct bpf_program *prog, pid_t pid, const char *path,
			   const __u64 *offs, const __u64 *cookies, __u32 cnt, bool ret)
{
	struct cp_link_create_uprobe_multi attr;
	int fd;

	memset(&attr, 0, sizeof(attr));
	attr.prog_fd = (__u32)bpf_program__fd(prog);
	attr.attach_type = CP_BPF_TRACE_UPROBE_MULTI;
	attr.path = (__u64)(unsigned long)path;
	attr.offsets = (__u64)(unsigned long)offs;
	attr.cookies = (__u64)(unsigned long)cookies;
	attr.cnt = cnt;
	attr.multi_flags = ret ? CP_BPF_F_UPROBE_MULTI_RETURN : 0;
	attr.pid = pid > 0 ? (__u32)pid : 0;
	fd = (int)syscall(__NR_bpf, BPF_LINK_CREATE, &attr, sizeof(attr));
	return fd < 0 ? -errno : fd;
}
