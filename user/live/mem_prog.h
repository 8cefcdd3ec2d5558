/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Setting up the memory-sample programs between cacheperf__open() and
 * cacheperf__load(): which on_mem_sample variant this kernel can run, and how
 * many per-CPU windows to allocate.
 */
#ifndef CP_MEM_PROG_H
#define CP_MEM_PROG_H

struct cacheperf;
struct bpf_program;

/* The perf_event program variants (bpf/mem_sample.bpf.c). */
enum cp_mem_prog {
	CP_MEM_PROG_KFUNC = 1,	/* on_mem_sample: bpf_cast_to_kern_ctx, kernel >= 6.2 */
	CP_MEM_PROG_COMPAT = 2, /* on_mem_sample_compat: bpf_probe_read_kernel, 5.x */
};

/*
 * Chooses the variant: the kfunc one when vmlinux BTF has the function
 * bpf_cast_to_kern_ctx, else the compat one (also when vmlinux BTF cannot be
 * read). Turns autoload off for the other. Returns the enum cp_mem_prog
 * chosen, or a negative errno (libbpf refuses after load).
 */
int cp_mem_prog_select(struct cacheperf *skel);

/* Forces @variant, for tests that must load a given one. Returns 0 or -errno. */
int cp_mem_prog_force(struct cacheperf *skel, enum cp_mem_prog variant);

/* The program of @variant, to attach to the PMU events; NULL for an unknown one. */
struct bpf_program *cp_mem_prog(struct cacheperf *skel, enum cp_mem_prog variant);

/* "kfunc" or "compat", for messages. */
const char *cp_mem_prog_name(enum cp_mem_prog variant);

/*
 * Sizes the window map for every possible CPU (CP_ACCESS_NR windows each).
 * Returns 0, or a negative errno (libbpf refuses after load).
 */
int cp_mem_prog_size_windows(struct cacheperf *skel);

#endif /* CP_MEM_PROG_H */
