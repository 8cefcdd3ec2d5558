/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * What libdw may be given: a sealed copy of a file a target named
 * (machine/target_file.h) whose compressed sections do not decompress past
 * a cap. libdw inflates every compressed debug section when it opens a
 * file (dwarf_begin_elf), so a small library with a few "200 MiB" zlib
 * sections would take the profiler past --max-memory before any guard saw
 * it: the sizes the headers declare (Elf64_Chdr.ch_size, the .zdebug
 * header) are summed first, and the file is refused above the cap.
 *
 * cp_elf_inflated_bytes() reads only the Elf it is given (no system call).
 */
#ifndef CP_ELF_GUARD_H
#define CP_ELF_GUARD_H

#include <stdbool.h>
#include <libelf.h>
#include <linux/types.h>

#include "machine/target_file.h"

/* Decompressed debug sections above this refuse a file (sum of them all). */
#define CP_MAX_INFLATED_BYTES (256ull << 20)

/*
 * The bytes @elf's compressed sections (SHF_COMPRESSED and GNU .zdebug)
 * declare they decompress to, summed (saturating). Returns 0, or -EINVAL
 * when a header cannot be read (a file to refuse too).
 */
int cp_elf_inflated_bytes(Elf *elf, __u64 *bytes);

/*
 * The sealed copy of @w's file (cp_tf_open_copy()) with its code sections
 * left holes (cp_tf_want.no_code: libdw reads symbols, DWARF, CFI and notes
 * here, never the code), refused (counted, CP_TF_INFLATES) when it is ELF
 * whose compressed sections inflate past CP_MAX_INFLATED_BYTES
 * (CP_TF_MALFORMED when a string table libdw names from does not end in a
 * NUL: machine/elf_bounds.h; CP_TF_NOT_LOADABLE when it is ELF of the other
 * byte order, cp_elf_native()), or by the parse worker
 * (symbols/parse_worker.h). Returns the memfd or a negative errno, @why
 * said; -EAGAIN (not counted, @why CP_TF_OK) while the worker's verdict is
 * not in: the file is asked again later.
 */
int cp_elf_guard_open(const struct cp_tf_where *w, const struct cp_tf_want *want,
		      enum cp_tf_refusal *why);

/* Contents cp_elf_guard_file() refused once copied, kept so (the oldest let go first). */
#define CP_ELF_GUARD_REFUSED 64

/*
 * Whether content @key (an inode of 0: unknown) was refused by
 * cp_elf_guard_file() once copied (its compressed sections, its string
 * tables): then -EFBIG or -EBADMSG, the refusal counted again and said in
 * @why (a copy kept for the content is not to be used), else 0.
 */
int cp_elf_guard_refused(const struct cp_copy_key *key, enum cp_tf_refusal *why);

/* What cp_elf_guard_file() tells of a file besides its copy. */
struct cp_elf_guard_info {
	bool tenant;		/* not the host's own (cp_tf_host_file()) */
	bool vetted;		/* a tenant's a worker judged (not @served) */
	struct cp_copy_key key; /* its content's key (ino 0: unknown: it changed while copied) */
};

/*
 * Whether @w's file is a tenant's executable or shared object, the
 * describe server's alone (cp_elf_loadable()), judged by its owner and its
 * file header, no copy made: a Dwfl that holds such a file without its ELF
 * (a process's own) copies it only when a walk or a lookup reaches it. 1:
 * it is, its content's key in @key (as cp_elf_guard_file() gives it; ino
 * 0: unknown); 0: it is not (the caller opens it with
 * cp_elf_guard_file()); a negative errno when it cannot be opened (@why
 * said).
 */
int cp_elf_guard_served(const struct cp_tf_where *w, const struct cp_tf_want *want,
			struct cp_copy_key *key, enum cp_tf_refusal *why);

/*
 * cp_elf_guard_open(), and @info of the file whose copy is returned. With
 * @served, a tenant's file is for the describe server alone (sym_server.h:
 * libdw reads it only there), and no worker vets it first: one parse, not
 * two. A refusal known (a worker's, a server's) stands all the same.
 */
int cp_elf_guard_file(const struct cp_tf_where *w, const struct cp_tf_want *want, bool served,
		      enum cp_tf_refusal *why, struct cp_elf_guard_info *info);

/*
 * Whether libdw may take @elf as a process's module: not an ELF file (a
 * locale archive, a font: libdwfl finds nothing in it), or an executable or
 * a shared object. A relocatable file (a .o a process mapped with exec
 * rights, and ran) has no load addresses: libdwfl would ask where its
 * sections are, and relocate them, wherever it is reported.
 */
bool cp_elf_loadable(Elf *elf);

/*
 * An Elf over sealed @mfd that needs no descriptor: mapped privately, the
 * descriptor released from libelf (the caller closes @mfd); elf_end()
 * unmaps it. What libdwfl takes from a find_elf callback with fd -1.
 */
Elf *cp_elf_guard_elf(int mfd);

/*
 * Whether @fd's content starts as an ELF file of this machine's byte order
 * does (cp_elf_ehdr()). libdw's opener inflates a gzip, bzip2 or xz file
 * that is not ELF, all of it, to look inside (a tenant's 2 MB file mapped
 * executable inflated to 512 MiB at every lookup); an ELF file of the other
 * byte order is a tenant's making (x86's loader runs it all the same), not
 * worth libelf's heap for its sections: neither is given to libdw.
 */
bool cp_elf_native(int fd);

#endif /* CP_ELF_GUARD_H */
