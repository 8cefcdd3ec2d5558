// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Program variant choice and window sizing for the memory-sample programs. */
#include <errno.h>
#include <stdbool.h>
#include <bpf/libbpf.h>

#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
#include "live/mem_prog.h"
#include "machine/sysinfo.h"

struct bpf_program *cp_mem_prog(struct cacheperf *skel, enum cp_mem_prog variant)
{
	switch (variant) {
	case CP_MEM_PROG_KFUNC:
		return skel->progs.on_mem_sample;
	case CP_MEM_PROG_COMPAT:
		return skel->progs.on_mem_sample_compat;
	}
	return NULL;
}

const char *cp_mem_prog_name(enum cp_mem_prog variant)
{
	switch (variant) {
	case CP_MEM_PROG_KFUNC:
		return "kfunc";
	case CP_MEM_PROG_COMPAT:
		return "compat";
	}
	return "unknown";
}

int cp_mem_prog_force(struct cacheperf *skel, enum cp_mem_prog variant)
{
	int err;

	if (variant != CP_MEM_PROG_KFUNC && variant != CP_MEM_PROG_COMPAT)
		return -EINVAL;
	err = bpf_program__set_autoload(skel->progs.on_mem_sample, variant == CP_MEM_PROG_KFUNC);
	if (err)
		return err;
	return bpf_program__set_autoload(skel->progs.on_mem_sample_compat,
					 variant == CP_MEM_PROG_COMPAT);
}

int cp_mem_prog_select(struct cacheperf *skel)
{
	enum cp_mem_prog variant = CP_MEM_PROG_COMPAT;
	int err;

	/* the kfunc decides, not the kernel version: distribution kernels backport */
	if (cp_sysinfo_btf_has_func("/", "bpf_cast_to_kern_ctx") == 1)
		variant = CP_MEM_PROG_KFUNC;
	err = cp_mem_prog_force(skel, variant);
	return err ? err : (int)variant;
}

int cp_mem_prog_size_windows(struct cacheperf *skel)
{
	int ncpus = libbpf_num_possible_cpus();

	if (ncpus <= 0)
		return ncpus < 0 ? ncpus : -EINVAL;
	return bpf_map__set_max_entries(skel->maps.windows, (__u32)ncpus * CP_ACCESS_NR);
}
