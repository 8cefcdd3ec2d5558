/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The profiler's own [vdso] as a file: a memfd holding a copy of its pages.
 * Every 64-bit process on this kernel maps the same image, so the
 * symbolizer opens this once instead of reading each target's [vdso] from
 * its memory (which it can no longer do once the target has exited).
 */
#ifndef CP_OWN_VDSO_H
#define CP_OWN_VDSO_H

#include <stddef.h>

/*
 * A memfd (close-on-exec) holding this process's [vdso] image; its size in
 * @len. Returns the fd, or -errno (-ENOENT: no [vdso] mapped).
 */
int cp_own_vdso_memfd(size_t *len);

#endif /* CP_OWN_VDSO_H */
