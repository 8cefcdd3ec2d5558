// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tenant_elf: makes what a hostile tenant maps out of a shared library
 * (tests/e2e/test_tenant_files.sh), each still loadable by dlopen(). Each
 * attack costs libelf or libdw far more than the file's bytes, through
 * readers the profiler ran as root:
 *
 *   tenant_elf names IN OUT   65,000 section headers named in a 40 MiB
 *                             .shstrtab with no NUL: elf_strptr() looks
 *                             for one from each name to the table's end
 *   tenant_elf syms IN OUT    1,000,000 object symbols named in a 32 MiB
 *                             .strtab with no NUL (the same, per symbol)
 *   tenant_elf chdrs IN OUT   998 compressed sections over one MiB at an
 *                             odd offset: gelf_getchdr() copies each first
 *   tenant_elf notes IN OUT   1,000 note sections over one MiB at an odd
 *                             offset, no build-id: libdw's build-id reader
 *                             copies each first
 *   tenant_elf sections IN OUT  1,000,000 section headers (extended
 *                             numbering: 64 MB of file): libelf keeps
 *                             ~270 bytes of heap for each, 5 times the file
 *   tenant_elf gzip OUT       no ELF file: a gzip member holding, at file
 *                             offset 4096, code a process maps executable
 *                             and runs (tenant_files code OUT 4096 MS); the
 *                             caller appends a member inflating to what it
 *                             likes (libdw's opener inflates a file that is
 *                             not ELF, all of it, to look inside)
 *   tenant_elf overlap OUT    an ELF header whose section header table is
 *                             its program header table (e_shoff = e_phoff),
 *                             e_shnum 0: the section count is then the
 *                             null section's size, the first program
 *                             header's p_filesz, 2,000,000 (a 128 MB
 *                             sparse file; the same code at 4096)
 *   tenant_elf bigendian OUT  a big-endian ELF header, 1,000,000 section
 *                             headers (extended numbering, 64 MB written),
 *                             the same code at 4096: no process here runs
 *                             such a file, but it can map one
 *
 * IN is a 64-bit ELF file of this machine's byte order; OUT is IN with the
 * attack's bytes and new header tables appended (IN's own stay in place,
 * so the loader maps it as before).
 */
#include <elf.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define MIB (1ul << 20)

static unsigned char *img;
static size_t len, cap;

static void grow(size_t to)
{
	if (to <= cap)
		return;
	cap = to + to / 2;
	img = realloc(img, cap);
	if (!img) {
		perror("realloc");
		exit(1);
	}
}

/*
 * Appends @n bytes (IN's at @from, or @fill when @from is 0) at an offset
 * aligned to @align, plus @skew; returns it.
 */
static size_t put(size_t from, size_t n, int fill, size_t align, size_t skew)
{
	size_t at = (len + align - 1) / align * align + skew;

	grow(at + n);
	memset(img + len, 0, at - len);
	if (from)
		memcpy(img + at, img + from, n);
	else
		memset(img + at, fill, n);
	len = at + n;
	return at;
}

static Elf64_Ehdr *ehdr(void)
{
	return (Elf64_Ehdr *)img;
}

/* IN's section headers, then @extra more (zeroed), appended; returns the table. */
static Elf64_Shdr *more_sections(size_t extra)
{
	Elf64_Ehdr *eh = ehdr();
	size_t n = eh->e_shnum, at;

	at = put(eh->e_shoff, n * sizeof(Elf64_Shdr), 0, 8, 0);
	put(0, extra * sizeof(Elf64_Shdr), 0, 1, 0);
	eh = ehdr();
	eh->e_shoff = at;
	eh->e_shnum = (Elf64_Half)(n + extra);
	return (Elf64_Shdr *)(img + at);
}

static void names(void)
{
	size_t blob = put(0, 40 * MIB, 'A', 8, 0), n = ehdr()->e_shnum, total = 65000;
	Elf64_Shdr *sh = more_sections(total - n);

	sh[n] = (Elf64_Shdr){.sh_type = SHT_STRTAB, .sh_offset = blob, .sh_size = 40 * MIB};
	for (size_t i = n + 1; i < total; i++)
		sh[i] = (Elf64_Shdr){.sh_name = (Elf64_Word)(i * 613 % (40 * MIB / 2)),
				     .sh_type = SHT_PROGBITS,
				     .sh_addralign = 1};
	ehdr()->e_shstrndx = (Elf64_Half)n;
}

static void syms(void)
{
	size_t nsyms = 1000000, str = put(0, 32 * MIB, 'B', 8, 0), tab, n;
	Elf64_Sym *s;
	Elf64_Shdr *sh;

	tab = put(0, nsyms * sizeof(*s), 0, 8, 0);
	s = (Elf64_Sym *)(img + tab);
	for (size_t i = 1; i < nsyms; i++)
		s[i] = (Elf64_Sym){.st_name = (Elf64_Word)(i * 7919 % (16 * MIB)),
				   .st_info = ELF64_ST_INFO(STB_GLOBAL, STT_OBJECT),
				   .st_shndx = 1,
				   .st_value = i * 8,
				   .st_size = 8};
	n = ehdr()->e_shnum;
	sh = more_sections(2);
	/* IN's own tables step aside: the readers take the first .symtab */
	for (size_t i = 0; i < n; i++)
		if (sh[i].sh_type == SHT_SYMTAB)
			sh[i].sh_type = SHT_PROGBITS;
	sh[n] = (Elf64_Shdr){.sh_type = SHT_STRTAB, .sh_offset = str, .sh_size = 32 * MIB};
	sh[n + 1] = (Elf64_Shdr){.sh_type = SHT_SYMTAB,
				 .sh_offset = tab,
				 .sh_size = nsyms * sizeof(*s),
				 .sh_link = (Elf64_Word)n,
				 .sh_info = 1,
				 .sh_addralign = 8,
				 .sh_entsize = sizeof(*s)};
}

static void chdrs(void)
{
	Elf64_Chdr ch = {.ch_type = ELFCOMPRESS_ZLIB, .ch_size = 4096, .ch_addralign = 1};
	size_t blob = put(0, MIB, 0, 8, 1), n = ehdr()->e_shnum;
	Elf64_Shdr *sh;

	memcpy(img + blob, &ch, sizeof(ch));
	sh = more_sections(998);
	for (size_t i = n; i < n + 998; i++)
		sh[i] = (Elf64_Shdr){.sh_type = SHT_PROGBITS,
				     .sh_flags = SHF_COMPRESSED,
				     .sh_offset = blob,
				     .sh_size = MIB,
				     .sh_addralign = 1};
}

static void notes(void)
{
	size_t blob = put(0, MIB, 0, 8, 1), n = ehdr()->e_shnum;
	Elf64_Shdr *sh = more_sections(1000);

	for (size_t i = 0; i < n; i++)
		if (sh[i].sh_type == SHT_NOTE)
			sh[i].sh_type = SHT_PROGBITS; /* IN's build-id goes */
	for (size_t i = n; i < n + 1000; i++)
		sh[i] = (Elf64_Shdr){
			.sh_type = SHT_NOTE, .sh_offset = blob, .sh_size = MIB, .sh_addralign = 4};
}

static void sections(void)
{
	size_t total = 1000000, n = ehdr()->e_shnum;
	Elf64_Shdr *sh = more_sections(total - n);

	ehdr()->e_shnum = 0;
	sh[0].sh_size = total; /* the count in the null section's size */
}

/* zlib's CRC-32 of @n bytes at @p (gzip's trailer). */
static unsigned int crc32_of(const unsigned char *p, size_t n)
{
	unsigned int c = 0xffffffffu;

	for (size_t i = 0; i < n; i++) {
		c ^= p[i];
		for (int k = 0; k < 8; k++)
			c = c >> 1 ^ (0xedb88320u & -(c & 1));
	}
	return ~c;
}

/*
 * A walk of tenant_files' stream_fn kind (sum of @longs longs at @buf), the
 * code the standalone files hold at offset 4096:
 *   xor eax,eax; 1: test rsi,rsi; je 2f; add rax,[rdi]; add rdi,8;
 *   dec rsi; jmp 1b; 2: ret
 */
static const unsigned char code[] = {0x31, 0xc0, 0x48, 0x85, 0xf6, 0x74, 0x0c,
				     0x48, 0x03, 0x07, 0x48, 0x83, 0xc7, 0x08,
				     0x48, 0xff, 0xce, 0xeb, 0xef, 0xc3};

/*
 * A gzip member of one stored deflate block: the 10-byte header, the
 * block's 5 (final, stored; its length and the length's complement), its
 * bytes from offset 15: up to 4096, nothing, then the code.
 */
static void gzip_code(void)
{
	static const unsigned char head[10] = {0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3};
	size_t n = 4096 - 15 + sizeof(code), at;
	unsigned int crc;

	at = put(0, 15 + n + 8, 0, 1, 0);
	memcpy(img + at, head, sizeof(head));
	img[at + 10] = 1; /* BFINAL, stored */
	img[at + 11] = (unsigned char)n;
	img[at + 12] = (unsigned char)(n >> 8);
	img[at + 13] = (unsigned char)~n;
	img[at + 14] = (unsigned char)(~n >> 8);
	memcpy(img + 4096, code, sizeof(code));
	crc = crc32_of(img + 15, n);
	for (int i = 0; i < 4; i++) {
		img[15 + n + i] = (unsigned char)(crc >> 8 * i);
		img[15 + n + 4 + i] = (unsigned char)(n >> 8 * i);
	}
}

/* An x86-64 ELF header, the code at 4096, @size bytes of file (the rest zeros). */
static Elf64_Ehdr *code_elf(size_t size)
{
	static const Elf64_Ehdr head = {
		.e_ident = {ELFMAG0, ELFMAG1, ELFMAG2, ELFMAG3, ELFCLASS64, ELFDATA2LSB, EV_CURRENT},
		.e_type = ET_DYN,
		.e_machine = EM_X86_64,
		.e_version = EV_CURRENT,
		.e_ehsize = sizeof(Elf64_Ehdr),
		.e_phentsize = sizeof(Elf64_Phdr),
		.e_shentsize = sizeof(Elf64_Shdr),
	};

	grow(size);
	memset(img, 0, size);
	len = size;
	memcpy(img, &head, sizeof(head));
	memcpy(img + 4096, code, sizeof(code));
	return ehdr();
}

/* The header and code only: the caller extends the file, sparse, to @*size. */
static void overlap(size_t *size)
{
	size_t total = 2000000;
	Elf64_Ehdr *eh = code_elf(4096 + sizeof(code));
	Elf64_Phdr *ph = (Elf64_Phdr *)(img + sizeof(*eh));

	eh->e_phoff = eh->e_shoff = sizeof(*eh);
	eh->e_phnum = 1;
	ph->p_type = PT_NULL;
	/* at sh_size's offset in a section header */
	ph->p_filesz = total;
	*size = sizeof(*eh) + total * sizeof(Elf64_Shdr);
}

/* @v's @n bytes, most significant first, at @at. */
static void put_be(size_t at, unsigned long v, int n)
{
	for (int i = n - 1; i >= 0; i--, v >>= 8)
		img[at + i] = (unsigned char)v;
}

static void bigendian(void)
{
	size_t total = 1000000;

	code_elf(sizeof(Elf64_Ehdr) + total * sizeof(Elf64_Shdr));
	img[EI_DATA] = ELFDATA2MSB;
	put_be(offsetof(Elf64_Ehdr, e_type), ET_DYN, 2);
	put_be(offsetof(Elf64_Ehdr, e_machine), EM_X86_64, 2);
	put_be(offsetof(Elf64_Ehdr, e_version), EV_CURRENT, 4);
	put_be(offsetof(Elf64_Ehdr, e_shoff), sizeof(Elf64_Ehdr), 8);
	put_be(offsetof(Elf64_Ehdr, e_ehsize), sizeof(Elf64_Ehdr), 2);
	put_be(offsetof(Elf64_Ehdr, e_phentsize), sizeof(Elf64_Phdr), 2);
	put_be(offsetof(Elf64_Ehdr, e_shentsize), sizeof(Elf64_Shdr), 2);
	/* e_shnum 0: the count in the null section's size */
	put_be(sizeof(Elf64_Ehdr) + offsetof(Elf64_Shdr, sh_size), total, 8);
}

int main(int argc, char **argv)
{
	const char *out;
	size_t extend = 0;
	FILE *f;
	long size;

	if (argc == 3 && !strcmp(argv[1], "gzip")) {
		gzip_code();
		out = argv[2];
		goto write;
	}
	if (argc == 3 && !strcmp(argv[1], "overlap")) {
		overlap(&extend);
		out = argv[2];
		goto write;
	}
	if (argc == 3 && !strcmp(argv[1], "bigendian")) {
		bigendian();
		out = argv[2];
		goto write;
	}
	if (argc != 4) {
		fprintf(stderr, "usage: tenant_elf names|syms|chdrs|notes|sections IN OUT | "
				"gzip|overlap|bigendian OUT\n");
		return 2;
	}
	f = fopen(argv[2], "rb");
	if (!f || fseek(f, 0, SEEK_END) || (size = ftell(f)) < (long)sizeof(Elf64_Ehdr) ||
	    fseek(f, 0, SEEK_SET)) {
		perror(argv[2]);
		return 1;
	}
	grow((size_t)size);
	len = fread(img, 1, (size_t)size, f);
	fclose(f);
	if (len != (size_t)size || memcmp(img, ELFMAG, SELFMAG) || img[EI_CLASS] != ELFCLASS64) {
		fprintf(stderr, "%s: not a 64-bit ELF file\n", argv[2]);
		return 1;
	}
	if (!strcmp(argv[1], "names"))
		names();
	else if (!strcmp(argv[1], "syms"))
		syms();
	else if (!strcmp(argv[1], "chdrs"))
		chdrs();
	else if (!strcmp(argv[1], "notes"))
		notes();
	else if (!strcmp(argv[1], "sections"))
		sections();
	else
		return 2;
	out = argv[3];
write:
	f = fopen(out, "wb");
	if (!f || fwrite(img, 1, len, f) != len || fclose(f) ||
	    (extend > len && truncate(out, (off_t)extend))) {
		perror(out);
		return 1;
	}
	return 0;
}
