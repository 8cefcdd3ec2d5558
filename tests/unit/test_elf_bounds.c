// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * A tenant's ELF names, compression headers and notes read in place
 * (machine/elf_bounds.h): ELF images made here, read through libelf's
 * elf_memory() as the profiler reads its copies; the build-id of real
 * files against libdw's own reader.
 */
#include <errno.h>
#include <fcntl.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <unistd.h>
#include <cmocka.h>
#include <elfutils/libdwelf.h>

#include "machine/elf_bounds.h"

#define IMG_BYTES 16384
#define DATA	  8192 /* where the images' contents start */

static unsigned char img[IMG_BYTES];

/*
 * An ELF image in img: the header, then the null section header and the
 * @n of @sh at 64 (section names in section @shstrndx), the @nph program
 * headers of @ph at 512 (with no sections); contents are put at DATA and
 * beyond by the caller. Returns its Elf.
 */
static Elf *image(const Elf64_Shdr *sh, size_t n, size_t shstrndx, const Elf64_Phdr *ph,
		  size_t nph)
{
	Elf64_Ehdr eh = {.e_type = ET_DYN,
			 .e_machine = EM_X86_64,
			 .e_version = EV_CURRENT,
			 .e_ehsize = sizeof(eh),
			 .e_shentsize = sizeof(Elf64_Shdr),
			 .e_shnum = (Elf64_Half)(n ? n + 1 : 0),
			 .e_shoff = n ? sizeof(eh) : 0,
			 .e_shstrndx = (Elf64_Half)shstrndx,
			 .e_phentsize = sizeof(Elf64_Phdr),
			 .e_phnum = (Elf64_Half)nph,
			 .e_phoff = nph ? 512 : 0};

	memcpy(eh.e_ident, ELFMAG, SELFMAG);
	eh.e_ident[EI_CLASS] = ELFCLASS64;
	eh.e_ident[EI_DATA] = ELFDATA2LSB;
	eh.e_ident[EI_VERSION] = EV_CURRENT;
	memcpy(img, &eh, sizeof(eh));
	memset(img + sizeof(eh), 0, sizeof(Elf64_Shdr));
	if (n)
		memcpy(img + sizeof(eh) + sizeof(Elf64_Shdr), sh, n * sizeof(*sh));
	if (nph)
		memcpy(img + 512, ph, nph * sizeof(*ph));
	elf_version(EV_CURRENT);
	return elf_memory((char *)img, IMG_BYTES);
}

/*
 * A note at @rel of the area at @area: @name (its NUL included), type
 * @type, descriptor @desc, offsets from the area's start padded to @align
 * (the gABI's, as libelf's gelf_getnote() reads them). Returns where the
 * next one goes.
 */
static size_t note(size_t area, size_t rel, const char *name, __u32 type, const void *desc,
		   __u32 descsz, size_t align)
{
	__u32 namesz = (__u32)strlen(name) + 1, hdr[3] = {namesz, descsz, type};
	size_t d = (rel + 12 + namesz + align - 1) / align * align;

	memcpy(img + area + rel, hdr, sizeof(hdr));
	memcpy(img + area + rel + 12, name, namesz);
	memcpy(img + area + d, desc, descsz);
	return (d + descsz + align - 1) / align * align;
}

/* What libdw's own reader finds in @elf: its build-id's length, 0 when none. */
static ssize_t libdw_build_id(Elf *elf, const void **bits)
{
	ssize_t n = dwelf_elf_gnu_build_id(elf, bits);

	return n > 0 ? n : 0;
}

static const unsigned char id20[20] = {0xde, 0xad, 0xbe, 0xef, 1,  2,  3,  4,  5,  6,
				       7,    8,	   9,	 10,   11, 12, 13, 14, 15, 16};

static void test_strtab_names(void **state)
{
	static const char names[] = "\0.text\0.data"; /* ends in a NUL: 13 bytes */
	Elf64_Shdr sh[] = {{.sh_type = SHT_STRTAB, .sh_offset = DATA, .sh_size = sizeof(names)},
			   {.sh_type = SHT_STRTAB, .sh_offset = DATA + 64, .sh_size = 8}};
	struct cp_elf_strtab t;
	Elf *elf;

	(void)state;
	memset(img, 0, sizeof(img));
	memcpy(img + DATA, names, sizeof(names));
	memcpy(img + DATA + 64, "\0ab\0cdef", 8); /* no NUL at its end: "cdef" runs out */
	elf = image(sh, 2, 1, NULL, 0);
	assert_non_null(elf);
	assert_int_equal(cp_elf_strtab(elf, 1, &t), 0);
	assert_string_equal(cp_elf_strtab_name(&t, 1), ".text");
	assert_string_equal(cp_elf_strtab_name(&t, 7), ".data");
	assert_string_equal(cp_elf_strtab_name(&t, 0), "");
	assert_null(cp_elf_strtab_name(&t, sizeof(names)));
	assert_null(cp_elf_strtab_name(&t, ~0ull));
	assert_int_equal(cp_elf_strtab(elf, 2, &t), 0);
	assert_string_equal(cp_elf_strtab_name(&t, 1), "ab");
	assert_string_equal(cp_elf_strtab_name(&t, 3), "");
	assert_null(cp_elf_strtab_name(&t, 4)); /* "cdef": no NUL after it */
	/* the section names' table ends in a NUL; no symbol table names from the other */
	assert_true(cp_elf_strtabs_end(elf));
	elf_end(elf);
	/* the other as the section names' table: libdw would look for each name's end */
	elf = image(sh, 2, 2, NULL, 0);
	assert_false(cp_elf_strtabs_end(elf));
	/* not a string table, or past the file: no names */
	assert_int_equal(cp_elf_strtab(elf, 0, &t), -EINVAL);
	assert_null(cp_elf_strtab_name(&t, 0));
	assert_int_equal(cp_elf_strtab(elf, 7, &t), -EINVAL);
	elf_end(elf);
	sh[0].sh_size = IMG_BYTES; /* runs past the image */
	elf = image(sh, 2, 1, NULL, 0);
	assert_int_equal(cp_elf_strtab(elf, 1, &t), -EINVAL);
	elf_end(elf);
}

static void test_symbol_names_unterminated(void **state)
{
	Elf64_Shdr sh[] = {{.sh_type = SHT_STRTAB, .sh_offset = DATA, .sh_size = 16},
			   {.sh_type = SHT_STRTAB, .sh_offset = DATA + 64, .sh_size = 8},
			   {.sh_type = SHT_SYMTAB,
			    .sh_offset = DATA + 128,
			    .sh_size = 2 * sizeof(Elf64_Sym),
			    .sh_link = 2,
			    .sh_entsize = sizeof(Elf64_Sym)}};
	Elf *elf;

	(void)state;
	memset(img, 0, sizeof(img));
	memcpy(img + DATA + 64, "\0abcdefg", 8);
	elf = image(sh, 3, 1, NULL, 0);
	assert_false(cp_elf_strtabs_end(elf));
	elf_end(elf);
	img[DATA + 64 + 7] = '\0';
	elf = image(sh, 3, 1, NULL, 0);
	assert_true(cp_elf_strtabs_end(elf));
	elf_end(elf);
	/* its names' table compressed: libelf would inflate it, then look through it */
	sh[1].sh_flags = SHF_COMPRESSED;
	elf = image(sh, 3, 1, NULL, 0);
	assert_false(cp_elf_strtabs_end(elf));
	elf_end(elf);
	sh[1].sh_flags = 0;
	/* a symbol table naming from no string table at all */
	sh[2].sh_link = 0;
	elf = image(sh, 3, 1, NULL, 0);
	assert_false(cp_elf_strtabs_end(elf));
	elf_end(elf);
}

static void test_chdr_at_an_odd_offset(void **state)
{
	Elf64_Chdr ch = {.ch_type = ELFCOMPRESS_ZLIB, .ch_size = 123456789, .ch_addralign = 1};
	Elf64_Shdr sh[] = {{.sh_type = SHT_PROGBITS,
			    .sh_flags = SHF_COMPRESSED,
			    .sh_offset = DATA + 1,
			    .sh_size = sizeof(ch) + 10}};
	GElf_Shdr gsh;
	__u64 size = 0;
	Elf *elf;

	(void)state;
	memset(img, 0, sizeof(img));
	memcpy(img + DATA + 1, &ch, sizeof(ch));
	elf = image(sh, 1, 0, NULL, 0);
	assert_non_null(gelf_getshdr(elf_getscn(elf, 1), &gsh));
	assert_int_equal(cp_elf_chdr_size(elf, &gsh, &size), 0);
	assert_int_equal(size, 123456789);
	/* a section shorter than its header, a header past the file */
	gsh.sh_size = sizeof(ch) - 1;
	assert_int_equal(cp_elf_chdr_size(elf, &gsh, &size), -EINVAL);
	gsh.sh_size = sizeof(ch);
	gsh.sh_offset = IMG_BYTES - sizeof(ch) + 1;
	assert_int_equal(cp_elf_chdr_size(elf, &gsh, &size), -EINVAL);
	elf_end(elf);
}

static void test_in_place(void **state)
{
	Elf64_Shdr sh[] = {{.sh_type = SHT_SYMTAB, .sh_offset = DATA, .sh_entsize = 24},
			   {.sh_type = SHT_SYMTAB, .sh_offset = DATA + 4, .sh_entsize = 24},
			   {.sh_type = SHT_NOTE, .sh_offset = DATA + 4},
			   {.sh_type = SHT_NOTE, .sh_offset = DATA + 2},
			   {.sh_type = SHT_STRTAB, .sh_offset = DATA + 1}};
	bool want[] = {true, false, true, false, true};
	GElf_Shdr gsh;
	Elf *elf;

	(void)state;
	memset(img, 0, sizeof(img));
	elf = image(sh, 5, 0, NULL, 0);
	for (size_t i = 0; i < 5; i++) {
		assert_non_null(gelf_getshdr(elf_getscn(elf, i + 1), &gsh));
		assert_int_equal(cp_elf_in_place(elf, &gsh), want[i]);
	}
	elf_end(elf);
}

/* The image of sections @sh (@n) has id20 for its build-id, where libdw's reader finds it. */
static void found_as_libdw(const Elf64_Shdr *sh, size_t n)
{
	const void *bits = NULL, *theirs = NULL;
	Elf *elf = image(sh, n, 0, NULL, 0);

	assert_int_equal(cp_elf_build_id(elf, &bits), 20);
	assert_memory_equal(bits, id20, 20);
	assert_int_equal(libdw_build_id(elf, &theirs), 20);
	assert_ptr_equal(bits, theirs);
	elf_end(elf);
}

static void test_build_id_in_notes(void **state)
{
	Elf64_Shdr sh[] = {{.sh_type = SHT_NOTE, .sh_offset = DATA, .sh_addralign = 4},
			   {.sh_type = SHT_NOTE, .sh_offset = DATA + 256, .sh_addralign = 8}};
	const void *bits = NULL, *theirs = NULL;
	size_t end;
	Elf *elf;

	(void)state;
	memset(img, 0, sizeof(img));
	/* another note first, then the build-id: 4-byte padding */
	end = note(DATA, 0, "GNU", NT_GNU_ABI_TAG, "\0\0\0\0\3\0\0\0\2\0\0\0\0\0\0\0", 16, 4);
	end = note(DATA, end, "GNU", NT_GNU_BUILD_ID, id20, sizeof(id20), 4);
	sh[0].sh_size = end;
	found_as_libdw(sh, 2);
	/* in an area aligned to 8, a 5-byte name puts the descriptor at 24, not 20 */
	memset(img, 0, sizeof(img));
	end = note(DATA + 256, 0, "abcd", 1, "xyzw", 4, 8);
	end = note(DATA + 256, end, "GNU", NT_GNU_BUILD_ID, id20, sizeof(id20), 8);
	sh[0].sh_size = 0;
	sh[1].sh_size = end;
	found_as_libdw(sh, 2);
	/* a descriptor running past its area ends the search, as libdw's */
	sh[1].sh_size -= 8;
	elf = image(sh, 2, 0, NULL, 0);
	assert_int_equal(cp_elf_build_id(elf, &bits), 0);
	assert_int_equal(libdw_build_id(elf, &theirs), 0);
	elf_end(elf);
}

static void test_build_id_bounded(void **state)
{
	Elf64_Shdr sh[CP_ELF_NOTE_AREAS + 1];
	const void *bits = NULL;
	Elf *elf;

	(void)state;
	memset(img, 0, sizeof(img));
	/* CP_ELF_NOTE_AREAS empty note sections, then the build-id's: not looked in */
	for (size_t i = 0; i < CP_ELF_NOTE_AREAS; i++)
		sh[i] = (Elf64_Shdr){.sh_type = SHT_NOTE, .sh_offset = DATA, .sh_size = 12};
	note(DATA + 64, 0, "GNU", NT_GNU_BUILD_ID, id20, sizeof(id20), 4);
	sh[CP_ELF_NOTE_AREAS] =
		(Elf64_Shdr){.sh_type = SHT_NOTE, .sh_offset = DATA + 64, .sh_size = 36};
	elf = image(sh, CP_ELF_NOTE_AREAS + 1, 0, NULL, 0);
	assert_int_equal(cp_elf_build_id(elf, &bits), 0);
	elf_end(elf);
	/* one empty area fewer: found */
	elf = image(sh + 1, CP_ELF_NOTE_AREAS, 0, NULL, 0);
	assert_int_equal(cp_elf_build_id(elf, &bits), 20);
	assert_memory_equal(bits, id20, 20);
	elf_end(elf);
}

static void test_build_id_in_segments(void **state)
{
	Elf64_Phdr ph[] = {{.p_type = PT_LOAD, .p_filesz = DATA},
			   {.p_type = PT_NOTE, .p_offset = DATA + 1, .p_filesz = 36, .p_align = 4}};
	const void *bits = NULL;
	Elf *elf;

	(void)state;
	memset(img, 0, sizeof(img));
	/* no section headers: the note segments, at an odd offset too */
	note(DATA + 1, 0, "GNU", NT_GNU_BUILD_ID, id20, sizeof(id20), 4);
	elf = image(NULL, 0, 0, ph, 2);
	assert_int_equal(cp_elf_build_id(elf, &bits), 20);
	assert_memory_equal(bits, id20, 20);
	elf_end(elf);
}

/* The build-id of a real file, as libdw's own reader finds it. */
static void test_build_id_as_libdw(void **state)
{
	const char *files[] = {"/proc/self/exe", "/bin/sh"};

	(void)state;
	elf_version(EV_CURRENT);
	for (size_t i = 0; i < sizeof(files) / sizeof(files[0]); i++) {
		int fd = open(files[i], O_RDONLY);
		const void *ours = NULL, *theirs = NULL;
		Elf *elf;
		ssize_t n;

		assert_true(fd >= 0);
		elf = elf_begin(fd, ELF_C_READ_MMAP, NULL);
		assert_non_null(elf);
		n = dwelf_elf_gnu_build_id(elf, &theirs);
		assert_true(n > 0); /* Debian's files have one */
		assert_int_equal(cp_elf_build_id(elf, &ours), n);
		assert_memory_equal(ours, theirs, (size_t)n);
		elf_end(elf);
		close(fd);
	}
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_strtab_names),
		cmocka_unit_test(test_symbol_names_unterminated),
		cmocka_unit_test(test_chdr_at_an_odd_offset),
		cmocka_unit_test(test_in_place),
		cmocka_unit_test(test_build_id_in_notes),
		cmocka_unit_test(test_build_id_bounded),
		cmocka_unit_test(test_build_id_in_segments),
		cmocka_unit_test(test_build_id_as_libdw),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
