// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Sealed, size-checked ELF copies for libdw (elf_guard.h). */
#include <errno.h>
#include <pthread.h>
#include <string.h>
#include <unistd.h>
#include <gelf.h>

#include "machine/elf_bounds.h"
#include "machine/elf_hdr.h"
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
	struct cp_elf_strtab names;
	Elf_Scn *scn = NULL;
	size_t shstrndx;

	*bytes = 0;
	if (elf_kind(elf) != ELF_K_ELF)
		return 0;
	if (elf_getshdrstrndx(elf, &shstrndx))
		return -EINVAL;
	cp_elf_strtab(elf, shstrndx, &names);
	while ((scn = elf_nextscn(elf, scn))) {
		const char *name;
		GElf_Shdr sh;
		__u64 size;

		if (!gelf_getshdr(scn, &sh) || sh.sh_type == SHT_NOBITS)
			continue;
		name = cp_elf_strtab_name(&names, sh.sh_name);
		if (sh.sh_flags & SHF_COMPRESSED) {
			if (cp_elf_chdr_size(elf, &sh, &size))
				return -EINVAL;
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

/* Contents refused here once copied (their compressed sections, their string tables). */
static struct {
	struct cp_copy_key key;
	enum cp_tf_refusal why;
} guard_refused[CP_ELF_GUARD_REFUSED];
static unsigned int guard_next;
static pthread_mutex_t guard_lock = PTHREAD_MUTEX_INITIALIZER;

/* Counts refusal @bad, said in @why: -EFBIG (inflating) or -EBADMSG. */
static int refuse(enum cp_tf_refusal bad, enum cp_tf_refusal *why)
{
	*why = bad;
	cp_tf_count(bad);
	return bad == CP_TF_INFLATES ? -EFBIG : -EBADMSG;
}

/* Keeps @key (an inode of 0: none) refused for @why; the oldest kept goes first. */
static void keep_refused(const struct cp_copy_key *key, enum cp_tf_refusal why)
{
	if (!key->ino)
		return;
	pthread_mutex_lock(&guard_lock);
	guard_refused[guard_next].key = *key;
	guard_refused[guard_next].why = why;
	guard_next = (guard_next + 1) % CP_ELF_GUARD_REFUSED;
	pthread_mutex_unlock(&guard_lock);
}

int cp_elf_guard_refused(const struct cp_copy_key *key, enum cp_tf_refusal *why)
{
	enum cp_tf_refusal bad = CP_TF_OK;

	if (!key->ino)
		return 0;
	pthread_mutex_lock(&guard_lock);
	for (unsigned int i = 0; i < CP_ELF_GUARD_REFUSED && bad == CP_TF_OK; i++)
		if (guard_refused[i].key.ino && cp_copy_key_equal(&guard_refused[i].key, key))
			bad = guard_refused[i].why;
	pthread_mutex_unlock(&guard_lock);
	return bad == CP_TF_OK ? 0 : refuse(bad, why);
}

/* A worker's refusal of a file: counted, said as @why; -EIO. */
static int refused(enum cp_pw_verdict v, enum cp_tf_refusal *why)
{
	*why = v == CP_PW_MEMORY ? CP_TF_MEMORY : CP_TF_PARSE;
	cp_tf_count(*why);
	return -EIO;
}

/* -EAGAIN: the file waits for a parse worker's verdict (not a refusal, counted apart). */
static int waits(enum cp_tf_refusal *why)
{
	cp_parse_worker_waited();
	*why = CP_TF_OK;
	return -EAGAIN;
}

int cp_elf_guard_open(const struct cp_tf_where *w, const struct cp_tf_want *want,
		      enum cp_tf_refusal *why)
{
	struct cp_elf_guard_info info;

	return cp_elf_guard_file(w, want, false, why, &info);
}

/* @fd's ELF header, read when it is one of this machine's byte order (cp_elf_ehdr()). */
static bool native_ehdr(int fd, Elf64_Ehdr *eh)
{
	unsigned char head[sizeof(Elf64_Ehdr)];
	ssize_t n = pread(fd, head, sizeof(head), 0);
	bool is64;

	return n > 0 && cp_elf_ehdr(head, (size_t)n, eh, &is64);
}

bool cp_elf_native(int fd)
{
	Elf64_Ehdr eh;

	return native_ehdr(fd, &eh);
}

/*
 * Whether @fd holds an ELF file not cp_elf_native(): of the other byte
 * order (or class, or cut short). x86's loader runs one (it looks at
 * e_machine alone), but no compiler here makes one: a tenant's, whose
 * symbols are not worth libelf's heap (a million sections took 364 MiB).
 */
static bool foreign_elf(int fd)
{
	char m[SELFMAG];

	return pread(fd, m, sizeof(m), 0) == SELFMAG && !memcmp(m, ELFMAG, SELFMAG) &&
	       !cp_elf_native(fd);
}

int cp_elf_guard_file(const struct cp_tf_where *w, const struct cp_tf_want *want, bool served,
		      enum cp_tf_refusal *why, struct cp_elf_guard_info *info)
{
	struct cp_tf_want mine = *want;
	struct cp_copy_key *key = &info->key;
	enum cp_tf_refusal bad = CP_TF_OK;
	enum cp_pw_verdict v = CP_PW_FAILED;
	struct cp_tf_stat st;
	__u64 bytes = 0;
	int fd, mfd, err;
	bool host, keyed, known = false, wait, foreign;
	Elf *elf;

	*info = (struct cp_elf_guard_info){0};
	/* symbols, DWARF, CFI and notes are what libdw reads here, never the code */
	mine.no_code = true;
	fd = cp_tf_open(w, &mine, &st, why);
	if (fd < 0)
		return fd;
	/* the host's own files (root's alone) need no worker: it would cost a parse more */
	host = cp_tf_host_file(w, want, &st);
	*info = (struct cp_elf_guard_info){.tenant = !host};
	/* a content judged before: refused again uncopied, or copied while workers wait */
	keyed = !host && !cp_tf_key(fd, key) && key->size == st.size;
	if (keyed) {
		key->no_code = true;
		known = cp_parse_worker_known(key, &v);
	} else {
		key->ino = 0;
	}
	if (known && v != CP_PW_PASSED) {
		close(fd);
		return refused(v, why);
	}
	err = keyed ? cp_elf_guard_refused(key, why) : 0;
	if (err) {
		close(fd);
		return err;
	}
	/* while no worker may take a new file, a tenant's is not even copied: a churn of
	 * new big files costs no copying; one copied before (with its verdict) serves */
	wait = !host && !known && cp_parse_worker_must_wait();
	/* waiting, the kept copy of the content just keyed, not of a key read again: a file
	 * changed meanwhile would have one content's copy judged under the other's key */
	mfd = wait ? cp_tf_kept_copy(key) : cp_tf_copy_keyed(fd, st.size, true, key, why);
	close(fd);
	if (wait && mfd < 0)
		return waits(why);
	if (mfd < 0)
		return mfd;
	elf_version(EV_CURRENT);
	foreign = foreign_elf(mfd);
	elf = foreign ? NULL : elf_begin(mfd, ELF_C_READ_MMAP, NULL);
	if (foreign)
		bad = CP_TF_NOT_LOADABLE;
	else if (elf && (cp_elf_inflated_bytes(elf, &bytes) || bytes > CP_MAX_INFLATED_BYTES))
		bad = CP_TF_INFLATES;
	else if (elf && elf_kind(elf) == ELF_K_ELF && !cp_elf_strtabs_end(elf))
		bad = CP_TF_MALFORMED; /* libdw's elf_strptr() would look for each name's end */
	/* only an executable or a shared object is the server's alone: libdwfl lays out
	 * and relocates any other ELF file (a .o) wherever it is reported */
	served &= !elf || cp_elf_loadable(elf);
	if (elf)
		elf_end(elf);
	if (bad != CP_TF_OK) {
		/* its copy may be kept for others: the content is not judged again */
		keep_refused(key, bad);
		close(mfd);
		return refuse(bad, why);
	}
	if (host || served)
		return mfd;
	info->vetted = true;
	/* a kept copy is the content of the key read before it */
	v = cp_parse_worker_vet(mfd, key, w->path);
	if (v == CP_PW_PASSED || v == CP_PW_FAILED) /* no worker: said once (parse_worker.c) */
		return mfd;
	close(mfd);
	return v == CP_PW_WAITING ? waits(why) : refused(v, why);
}

int cp_elf_guard_served(const struct cp_tf_where *w, const struct cp_tf_want *want,
			struct cp_copy_key *key, enum cp_tf_refusal *why)
{
	struct cp_tf_want mine = *want;
	struct cp_tf_stat st;
	Elf64_Ehdr eh;
	bool tenant, loadable;
	int fd;

	mine.no_code = true;
	fd = cp_tf_open(w, &mine, &st, why);
	if (fd < 0)
		return fd;
	tenant = !cp_tf_host_file(w, want, &st);
	loadable = tenant && native_ehdr(fd, &eh) && (eh.e_type == ET_EXEC || eh.e_type == ET_DYN);
	/* the key cp_elf_guard_file() would give the copy it makes (no code) */
	if (tenant && !cp_tf_key(fd, key) && key->size == st.size)
		key->no_code = true;
	else
		*key = (struct cp_copy_key){0};
	close(fd);
	return loadable;
}

bool cp_elf_loadable(Elf *elf)
{
	GElf_Ehdr eh;

	if (elf_kind(elf) != ELF_K_ELF || !gelf_getehdr(elf, &eh))
		return true;
	return eh.e_type == ET_EXEC || eh.e_type == ET_DYN;
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
