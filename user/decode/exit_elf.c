// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "decode/exit_elf.h"

static size_t code_read(void *ctx, __u64 vaddr, __u8 *buf, size_t len)
{
	return cp_elf_code_read(ctx, vaddr, buf, len);
}

static enum cp_exit_target code_resolve(void *ctx, __u64 vaddr, __u64 *to)
{
	const char *name;

	switch (cp_elf_code_target(ctx, vaddr, to, &name)) {
	case CP_ELF_TGT_CODE:
		/* a PLT stub of the file's own function: a throw helper still never returns */
		return cp_exit_noreturn_name(name) ? CP_EXIT_TGT_NORETURN : CP_EXIT_TGT_CODE;
	case CP_ELF_TGT_EXTERN:
		return cp_exit_noreturn_name(name) ? CP_EXIT_TGT_NORETURN : CP_EXIT_TGT_UNKNOWN;
	default:
		return CP_EXIT_TGT_UNKNOWN;
	}
}

struct cp_exit_code cp_exit_code_of_elf(const struct cp_elf_code *code)
{
	return (struct cp_exit_code){
		.read = code_read, .resolve = code_resolve, .ctx = (void *)code};
}
