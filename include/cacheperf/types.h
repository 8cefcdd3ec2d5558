/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Fixed-width types for headers shared by BPF programs and user space.
 * BPF objects get them from vmlinux.h, user space from the uapi headers,
 * so every shared header can be included first, on its own.
 */
#ifndef CACHEPERF_TYPES_H
#define CACHEPERF_TYPES_H

#ifdef __bpf__
#include "vmlinux.h"
#else
#include <linux/types.h>
#include <stdbool.h>
#endif

#ifndef CP_INLINE
#define CP_INLINE static __always_inline
#endif

#ifndef __bpf__
#ifndef __always_inline
#define __always_inline inline __attribute__((always_inline))
#endif
#endif

#endif /* CACHEPERF_TYPES_H */
