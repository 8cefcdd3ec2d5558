// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: any bytes as an ELF file a tenant names, through the
 * project's own readers of it, called as production calls them: the sealed
 * copies and their cost (machine/target_file.h, copy_cost.h), the data
 * symbols and the load bias (objects/elf_syms.h, globals.h), the allocator's
 * functions (objects/allocator.h), the code, PLT and exit points
 * (objects/elf_code.h, decode/exit_elf.h), the inflate and CFI guards
 * (symbols/elf_guard.h, cfi_guard.h) and the build-id. A crash, a leak, an
 * endless loop or an out-of-bounds access is a bug; a refusal is not.
 * libelf and libdw are not the target: a worker process guards those.
 * Seeds: tests/fuzz/corpus_elf (small executables and libraries).
 */
#include <errno.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <gelf.h>

#include "decode/exit_elf.h"
#include "decode/exit_points.h"
#include "machine/copy_cost.h"
#include "machine/elf_bounds.h"
#include "machine/elf_hdr.h"
#include "machine/target_file.h"
#include "objects/allocator.h"
#include "objects/elf_code.h"
#include "objects/elf_syms.h"
#include "objects/globals.h"
#include "symbols/build_id.h"
#include "symbols/cfi_guard.h"
#include "symbols/elf_guard.h"

#define MAX_ADDRS 32 /* addresses asked of each reader per input */
#define MAX_EXITS 4  /* functions whose exit points are searched per input */

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Addresses worth asking: the file's own (segments, symbols, entry) and a few raw words. */
struct addrs {
	__u64 v[MAX_ADDRS];
	int n;
};

static void add(struct addrs *a, __u64 v)
{
	if (a->n < MAX_ADDRS)
		a->v[a->n++] = v;
}

/* A memfd holding @data: the file as a tenant wrote it. -1 on failure. */
static int file_of(const uint8_t *data, size_t size)
{
	int fd = memfd_create("fuzz-elf", MFD_CLOEXEC | MFD_ALLOW_SEALING);
	size_t done = 0;

	while (fd >= 0 && done < size) {
		ssize_t n = write(fd, data + done, size - done);

		if (n <= 0) {
			close(fd);
			return -1;
		}
		done += (size_t)n;
	}
	return fd;
}

/* The data symbols, as globals.c places a module and looks addresses up in it. */
static void fuzz_syms(int fd, struct addrs *a)
{
	struct cp_map maps[4], *pm[4];
	struct cp_elf_syms *e;
	size_t nm = 0;
	__u64 bias;

	if (cp_elf_syms__read_fd(fd, &e))
		return;
	for (size_t i = 0; i < e->nr_segs; i++) {
		add(a, e->segs[i].vaddr);
		add(a, e->segs[i].vaddr + e->segs[i].filesz);
	}
	for (size_t i = 0; i < e->nr_objs && i < 4; i++)
		add(a, e->objs[i].value + e->objs[i].size - 1);
	/* the mappings the kernel would make of its first segments */
	for (size_t i = 0; i < e->nr_segs && nm < 4; i++, nm++) {
		maps[nm] = (struct cp_map){
			.start = 0x7f0000000000ull + (e->segs[i].offset & ~(CP_ELF_PAGE_SIZE - 1)),
			.offset = e->segs[i].offset & ~(CP_ELF_PAGE_SIZE - 1),
			.prot = e->segs[i].flags & PF_X ? CP_MAP_EXEC : 0,
			.kind = CP_MAP_FILE,
		};
		maps[nm].end = maps[nm].start + CP_ELF_PAGE_SIZE;
		pm[nm] = &maps[nm];
	}
	if (!cp_load_bias(e->segs, e->nr_segs, (const struct cp_map *const *)pm, nm, &bias))
		add(a, 0x7f0000000000ull - bias);
	if (e->has_tls)
		cp_tls_exec_offset(e->tls_memsz, e->tls_align, e->tls_vaddr);
	for (int i = 0; i < a->n; i++) {
		cp_elf_syms__find(e, a->v[i]);
		cp_elf_syms__tls_find(e, a->v[i] - e->tls_vaddr);
	}
	cp_elf_syms__free(e);
}

/* The allocator's functions of the file, as -a reads the system libc. */
static void fuzz_allocator(const char *path, struct addrs *a, __u64 *fns, int *nr_fns)
{
	struct cp_allocator *al = malloc(sizeof(*al));

	if (!al)
		return;
	cp_allocator__from_file(path, al);
	for (int f = 0; f < CP_FN_NR_PROBED; f++) {
		if (!al->fns[f].found)
			continue;
		add(a, al->fns[f].vaddr);
		if (*nr_fns < MAX_EXITS)
			fns[(*nr_fns)++] = al->fns[f].vaddr;
	}
	free(al);
}

/* The code and its jumps, as alloc_place.c reads a throwing operator new's. */
static void fuzz_code(int copy, const struct addrs *a, const __u64 *fns, int nr_fns)
{
	struct cp_elf_code *c = cp_elf_code__new(copy);
	struct cp_exit_points *ep;
	struct cp_exit_code src;
	const char *name;
	__u8 buf[64];
	__u64 to, off;

	if (!c)
		return;
	for (int i = 0; i < a->n; i++) {
		cp_elf_code_read(c, a->v[i], buf, sizeof(buf));
		cp_elf_code_file_off(c, a->v[i], &off);
		cp_elf_code_target(c, a->v[i], &to, &name);
	}
	ep = malloc(sizeof(*ep));
	src = cp_exit_code_of_elf(c);
	for (int i = 0; ep && i < nr_fns; i++)
		if (!cp_exit_points_find(&src, fns[i], ep))
			for (int k = 0; k < ep->n; k++)
				cp_elf_code_file_off(c, ep->pts[k].vaddr, &off);
	free(ep);
	cp_elf_code__free(c);
}

/*
 * What libdw may be given, as cp_elf_guard_open() then sym_dwfl.c hand a
 * module's file and a debug file over: nothing that inflates past the cap,
 * no string table without its ending NUL.
 */
static void fuzz_guards(int copy)
{
	__u64 bytes = 0;
	Elf *elf;
	int err;

	elf_version(EV_CURRENT);
	elf = elf_begin(copy, ELF_C_READ_MMAP, NULL);
	if (!elf)
		return;
	err = cp_elf_inflated_bytes(elf, &bytes);
	if (!err && !cp_elf_strtabs_end(elf))
		err = -EBADMSG;
	elf_end(elf);
	if (err || bytes > CP_MAX_INFLATED_BYTES)
		return;
	elf = cp_elf_guard_elf(copy);
	if (elf)
		elf = cp_cfi_guard_elf(elf);
	if (elf)
		elf_end(elf);
	cp_cfi_guard_fd(copy);
}

/* The code sections' starts and second entries (a PLT's first stub): a jump lands there. */
static void code_addrs(const uint8_t *data, size_t size, const Elf64_Ehdr *eh, struct addrs *a)
{
	for (size_t i = 0, n = 0; i < eh->e_shnum && n < 4; i++) {
		__u64 at = eh->e_shoff + i * sizeof(Elf64_Shdr);
		Elf64_Shdr sh;

		if (eh->e_shentsize != sizeof(sh) || at > size || size - at < sizeof(sh))
			return;
		memcpy(&sh, data + at, sizeof(sh));
		if (sh.sh_flags & SHF_EXECINSTR) {
			n++;
			add(a, sh.sh_addr);
			add(a, sh.sh_addr + 16);
		}
	}
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct addrs a = {0};
	enum cp_tf_refusal why;
	struct cp_copy_range *r, *code;
	size_t nr, nc;
	__u64 heap = 0, fns[MAX_EXITS];
	int fd, copy, nr_fns = 0;
	char path[64];
	__u8 id[64];
	Elf64_Ehdr eh;
	bool is64;

	fd = file_of(data, size);
	if (fd < 0)
		return 0;
	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	if (cp_elf_ehdr(data, size, &eh, &is64) && is64) {
		add(&a, eh.e_entry);
		code_addrs(data, size, &eh, &a);
	}
	/* a few raw words from the end: addresses the file does not announce */
	for (size_t i = 0; i < 2 && size >= 8 * (i + 1); i++) {
		__u64 v;

		memcpy(&v, data + size - 8 * (i + 1), sizeof(v));
		add(&a, v);
	}
	if (!cp_copy_elf_ranges(fd, size, &r, &nr, &heap, &code, &nc)) {
		free(r);
		free(code);
	}
	fuzz_syms(fd, &a);
	fuzz_allocator(path, &a, fns, &nr_fns);
	if (cp_elf_ehdr(data, size, &eh, &is64) && nr_fns < MAX_EXITS)
		fns[nr_fns++] = eh.e_entry;
	copy = cp_tf_copy(fd, size, &why);
	if (copy >= 0) {
		fuzz_code(copy, &a, fns, nr_fns);
		close(copy);
	}
	/* libdw's copies leave the code out (elf_guard.c) */
	copy = cp_tf_copy_keyed(fd, size, true, NULL, &why);
	if (copy >= 0) {
		fuzz_guards(copy);
		close(copy);
	}
	cp_build_id_read(path, id, sizeof(id));
	/* no copy kept from one input to the next: each runs alone */
	cp_tf_kept_drop();
	close(fd);
	return 0;
}
