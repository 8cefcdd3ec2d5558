// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Tenants' CFI checked before libdw's unwinder reads it (cfi_guard.h). */
#include <errno.h>
#include <string.h>
#include <gelf.h>

#include "machine/elf_bounds.h"
#include "machine/target_file.h"
#include "symbols/cfi_guard.h"
#include "symbols/elf_guard.h"

/* The sections libdw reads CFI from, found by name as libdw finds them. */
struct cfi_scns {
	Elf_Scn *eh, *hdr, *debug;
	GElf_Shdr eh_sh, hdr_sh;
	bool twice; /* a name seen twice: which one libdw takes is not followed */
	bool eh_segment;
	bool zdebug; /* .zdebug_frame: GNU's older compression */
};

static void note(Elf_Scn **slot, Elf_Scn *scn, bool *twice)
{
	*twice |= *slot != NULL;
	*slot = scn;
}

static int find_scns(Elf *elf, struct cfi_scns *f)
{
	struct cp_elf_strtab names;
	Elf_Scn *scn = NULL;
	size_t shstrndx = 0, phnum = 0;

	memset(f, 0, sizeof(*f));
	if (elf_kind(elf) != ELF_K_ELF || gelf_getclass(elf) != ELFCLASS64)
		return -EINVAL;
	if (elf_getshdrstrndx(elf, &shstrndx) || cp_elf_strtab(elf, shstrndx, &names))
		shstrndx = 0;
	while (shstrndx && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = cp_elf_strtab_name(&names, sh.sh_name);
		if (!name)
			continue;
		if (!strcmp(name, ".eh_frame")) {
			note(&f->eh, scn, &f->twice);
			f->eh_sh = sh;
		} else if (!strcmp(name, ".eh_frame_hdr")) {
			note(&f->hdr, scn, &f->twice);
			f->hdr_sh = sh;
		} else if (!strcmp(name, ".debug_frame") || !strcmp(name, ".zdebug_frame")) {
			note(&f->debug, scn, &f->twice);
			f->zdebug = name[1] == 'z';
		}
	}
	if (elf_getphdrnum(elf, &phnum))
		phnum = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (gelf_getphdr(elf, (int)i, &ph) && ph.p_type == PT_GNU_EH_FRAME)
			f->eh_segment = true;
	}
	return 0;
}

/* .debug_frame as libdw reads it: decompressed (kept so in @elf). */
static Elf_Data *debug_frame_data(Elf_Scn *scn, bool zdebug)
{
	GElf_Shdr sh;

	if (!gelf_getshdr(scn, &sh))
		return NULL;
	if (sh.sh_flags & SHF_COMPRESSED) {
		if (elf_compress(scn, 0, 0) < 0)
			return NULL;
	} else if (zdebug && elf_compress_gnu(scn, 0, 0) < 0) {
		/* by name, as libdw: a plain .debug_frame fails "not compressed" */
		return NULL;
	}
	return elf_rawdata(scn, NULL);
}

enum cp_cfi_verdict cp_cfi_guard_check(Elf *elf, bool eh)
{
	struct cfi_scns f;
	enum cp_cfi_verdict v = CP_CFI_OK;
	Elf_Data *d;

	if (find_scns(elf, &f))
		return CP_CFI_OK; /* not a 64-bit ELF file: libdw makes no CFI of it */
	if (f.twice || (eh && !f.eh && f.eh_segment))
		return CP_CFI_MALFORMED; /* the segment's .eh_frame has no size to walk */
	if (eh && f.eh && (d = elf_rawdata(f.eh, NULL)) && d->d_buf) {
		struct cp_cfi_section sec = {d->d_buf, d->d_size, f.eh_sh.sh_addr, true};
		struct cp_cfi_hdr hdr = {0};
		Elf_Data *h = f.hdr ? elf_rawdata(f.hdr, NULL) : NULL;

		if (h && h->d_buf)
			hdr = (struct cp_cfi_hdr){h->d_buf, h->d_size, f.hdr_sh.sh_addr};
		v = cp_cfi_check(&sec, &hdr);
	}
	if (!v && f.debug) {
		d = debug_frame_data(f.debug, f.zdebug);
		if (!d)
			return CP_CFI_MALFORMED;
		if (d->d_buf)
			v = cp_cfi_check(&(struct cp_cfi_section){d->d_buf, d->d_size, 0, false},
					 NULL);
	}
	return v;
}

int cp_cfi_guard_hide(Elf *elf)
{
	struct cp_elf_strtab names;
	Elf_Scn *scn = NULL;
	size_t shstrndx = 0, phnum = 0;
	int err = 0;

	if (elf_getshdrstrndx(elf, &shstrndx) || cp_elf_strtab(elf, shstrndx, &names))
		shstrndx = 0;
	while (shstrndx && (scn = elf_nextscn(elf, scn))) {
		GElf_Shdr sh;
		const char *name;

		if (!gelf_getshdr(scn, &sh) || !(name = cp_elf_strtab_name(&names, sh.sh_name)))
			continue;
		if (strcmp(name, ".eh_frame") && strcmp(name, ".eh_frame_hdr") &&
		    strcmp(name, ".debug_frame") && strcmp(name, ".zdebug_frame"))
			continue;
		sh.sh_type = SHT_NOBITS;
		if (!gelf_update_shdr(scn, &sh))
			err = -EIO;
	}
	if (elf_getphdrnum(elf, &phnum))
		phnum = 0;
	for (size_t i = 0; i < phnum; i++) {
		GElf_Phdr ph;

		if (!gelf_getphdr(elf, (int)i, &ph) || ph.p_type != PT_GNU_EH_FRAME)
			continue;
		ph.p_type = PT_NULL;
		if (!gelf_update_phdr(elf, (int)i, &ph))
			err = -EIO;
	}
	return err;
}

Elf *cp_cfi_guard_elf(Elf *elf)
{
	if (cp_cfi_guard_check(elf, true) == CP_CFI_OK)
		return elf;
	cp_tf_count(CP_TF_BAD_CFI);
	if (!cp_cfi_guard_hide(elf))
		return elf;
	elf_end(elf); /* CFI that stays visible: the file is not used at all */
	return NULL;
}

bool cp_cfi_guard_fd(int mfd)
{
	Elf *elf = cp_elf_guard_elf(mfd);
	/* libdwfl reads .eh_frame from the module's own file only */
	enum cp_cfi_verdict v = elf ? cp_cfi_guard_check(elf, false) : CP_CFI_OK;

	if (elf)
		elf_end(elf);
	if (v == CP_CFI_OK)
		return true;
	cp_tf_count(CP_TF_BAD_CFI);
	return false;
}
