/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Questions about the kernel's BTF answered by one walk over its raw bytes,
 * without libbpf's parse: that one copies the 5.5 MB blob and indexes every
 * type, and in a VM its page faults cost 0.09 s of CPU time at start, when
 * all the profiler asks before the load is whether a function or an
 * enumerator is there (machine/sysinfo.c). Native byte order only; a blob
 * this walk does not know (another byte order, a kind newer than it) is
 * -EINVAL, for the caller to ask libbpf instead. Pure.
 */
#ifndef CP_BTF_SCAN_H
#define CP_BTF_SCAN_H

#include <stddef.h>
#include <linux/types.h>

/*
 * Whether the raw BTF @data (@size bytes, a /sys/kernel/btf/vmlinux image)
 * has a type of @kind (BTF_KIND_*) named @name; with @enumerator (for
 * BTF_KIND_ENUM), one that also has that enumerator. 1, 0, or -EINVAL when
 * @data is not BTF this walk can read.
 */
int cp_btf_scan_has(const void *data, size_t size, __u32 kind, const char *name,
		    const char *enumerator);

#endif /* CP_BTF_SCAN_H */
