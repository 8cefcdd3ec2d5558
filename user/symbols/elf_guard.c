// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sealed, size-checked ELF copies for libdw (elf_guard.h). */
#include <errno.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>

#include "symbols/elf_guard.h"
#include "symbols/parse_worker.h"

/* GNU's older scheme: "ZLIB", then the size as 8 bytes big-endian. */
static int zdebug_size(Elf_Scn *scn, __u64 *size)
{
	Elf_Data *d = elf_rawdata(scn, NULL);
	const unsigned char *p;

	if (!d || d->d_size < 12 || memcmp(d->d_buf, "ZLIB", 4))
		return -EINVAL;
	p = (const unsigned char *)d->d_buf + 4;
	*size = 0;
	for (int i = 0; i < 8; i++)
		*size = *size << 8 | p[i];
	return 0;
}

static __u64 add_sat(__u64 a, __u64 b)
{
	return a + b < a ? UINT64_MAX : a + b;
}

int cp_elf_inflated_bytes(Elf *elf, __u64 *bytes)
{
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*bytes = 0;
	if (elf_kind(elf) != ELF_K_ELF)
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Chdr ch;
		GElf_Shdr sh;
		__u64 size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = elf_strptr(elf, shstrndx, sh.sh_name);
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (!gelf_getchdr(scn, &ch))
				return -EINVAL;
			size = ch.ch_size;
		} else if (name && !strncmp(name, ".zdebug", 7)) {
			if (zdebug_size(scn, &size))
				return -EINVAL;
		} else {
			continue;
		}
		*bytes = add_sat(*bytes, size);
	}
	return 0;
}

int cp_elf_guard_open(const struct cp_tf_where *w, const struct cp_tf_want *want,
		      enum cp_tf_refusal *why)
{
	struct cp_tf_want mine = *want;
	struct cp_tf_stat st;
	__u64 bytes = 0;
	int fd, mfd, err = 0;
	bool host, wait;
	Elf *elf;

	/* symbols, DWARF, CFI and notes are what libdw reads here, never the code */
	mine.no_code = true;
	fd = cp_tf_open(w, &mine, &st, why);
	if (fd < 0)
		return fd;
	/* the host's own files (root's alone) need no worker: it would cost a parse more */
	host = cp_tf_host_file(w, want, &st);
	/* while no worker may take a new file, a tenant's is not even copied: a churn of
	 * new big files costs no copying; one copied before (with its verdict) serves */
	wait = !host && cp_parse_worker_must_wait();
	mfd = wait ? cp_tf_kept_copy(fd, st.size, true)
		   : cp_tf_copy_keyed(fd, st.size, true, NULL, why);
	close(fd);
	if (wait && mfd < 0) {
		cp_parse_worker_waited();
		*why = CP_TF_OK;
		return -EAGAIN;
	}
	if (mfd < 0)
		return mfd;
	elf_version(EV_CURRENT);
	elf = elf_begin(mfd, ELF_C_READ_MMAP, NULL);
	if (elf && (cp_elf_inflated_bytes(elf, &bytes) || bytes > CP_MAX_INFLATED_BYTES))
		err = -EFBIG;
	if (elf)
		elf_end(elf);
	if (err) {
		*why = CP_TF_INFLATES;
		cp_tf_count(*why);
		close(mfd);
		return err;
	}
	if (host)
		return mfd;
	switch (cp_parse_worker_vet(mfd, w->path)) {
	case CP_PW_PASSED:
	case CP_PW_FAILED: /* no worker: said once (parse_worker.c) */
		return mfd;
	case CP_PW_WAITING: /* no verdict yet: not a refusal, asked again later */
		cp_parse_worker_waited();
		close(mfd);
		*why = CP_TF_OK;
		return -EAGAIN;
	case CP_PW_MEMORY:
		*why = CP_TF_MEMORY;
		break;
	default:
		*why = CP_TF_PARSE;
		break;
	}
	cp_tf_count(*why);
	close(mfd);
	return -EIO;
}

Elf *cp_elf_guard_elf(int mfd)
{
	Elf *elf;

	elf_version(EV_CURRENT);
	elf = elf_begin(mfd, ELF_C_READ_MMAP_PRIVATE, NULL);
	if (elf && elf_cntl(elf, ELF_C_FDDONE)) {
		elf_end(elf);
		return NULL;
	}
	return elf;
}
