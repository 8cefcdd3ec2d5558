/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What a sealed copy of a target's file costs the profiler (target_file.c):
 * the file's data extents are copied and its holes left holes (a shmem
 * hole costs nothing until touched), so a 200 MiB file with 16 KiB of data
 * costs 16 KiB. But libelf and libdw read through a mapping of the copy,
 * and a hole they read is a page the kernel allocates then: the bytes of an
 * ELF file's headers, section and segment contents (not PT_LOAD) that lie
 * in holes are counted as the copy's cost too, before anything reads them.
 *
 * cp_copy_hole_bytes() is pure; cp_copy_elf_ranges() reads a descriptor
 * with pread() only (a read of a shmem hole allocates nothing).
 */
#ifndef CP_COPY_COST_H
#define CP_COPY_COST_H

#include <stddef.h>
#include <linux/types.h>

/* Data extents listed per file; past them the rest of the file is taken for data. */
#define CP_MAX_COPY_EXTENTS 4096
/* Sections (and program headers) looked at; past them the whole file counts as read. */
#define CP_MAX_COPY_SECTIONS 65536
/* Holes a reader of the ELF would touch above this refuse the copy, whatever the limit. */
#define CP_MAX_COPY_HOLE_BYTES (64ull << 20)
/*
 * libelf's bookkeeping per section, on the heap, whatever the file holds:
 * elfutils 0.188's elf_begin() touches ~270 bytes for each section header
 * (a million of them, 64 MB of file, took 321 MiB).
 */
#define CP_COPY_SECTION_HEAP_BYTES 320
/*
 * The same for each program header, which extended numbering (PN_XNUM)
 * lets number millions: a review measured ~55 bytes each.
 */
#define CP_COPY_SEGMENT_HEAP_BYTES 64

/* A byte range of a file: a data extent, or what a reader of the ELF touches. */
struct cp_copy_range {
	__u64 off, len;
};

/*
 * The bytes of @ranges (@nr of them, sorted and merged here, overlaps counted
 * once) that lie outside the data extents @data (@nd, sorted, disjoint). Pure.
 */
__u64 cp_copy_hole_bytes(struct cp_copy_range *ranges, size_t nr, const struct cp_copy_range *data,
			 size_t nd);

/*
 * The ranges a reader of ELF file @fd (@size bytes) touches, into *@out
 * (malloc()ed, *@nr of them; the caller frees it): the ELF header, the
 * program and section header tables, every section's contents but
 * SHT_NOBITS, every segment's but PT_LOAD. A file that is not ELF (no
 * magic) has none; an ELF file that cannot be read so (another byte order,
 * more than CP_MAX_COPY_SECTIONS sections) is the whole file. Adds libelf's
 * heap for its sections and program headers (those the file holds) to
 * *@heap_bytes, however many they are; for another byte order, as if the
 * whole file were 32-bit section headers. With @code (may be NULL), the code
 * sections (SHT_PROGBITS with SHF_EXECINSTR) go to *@code (*@nr_code of
 * them, malloc()ed) instead of *@out. Returns 0 or -ENOMEM.
 */
int cp_copy_elf_ranges(int fd, __u64 size, struct cp_copy_range **out, size_t *nr,
		       __u64 *heap_bytes, struct cp_copy_range **code, size_t *nr_code);

/*
 * Takes the ranges @cut (@nc, sorted here) out of the extents @ext (@n of
 * them, sorted, disjoint; room for @cap): what is left, in order, and how
 * many. A split past @cap leaves the rest of that extent whole. Pure.
 */
size_t cp_copy_ranges_minus(struct cp_copy_range *ext, size_t n, size_t cap,
			    struct cp_copy_range *cut, size_t nc);

#endif /* CP_COPY_COST_H */
