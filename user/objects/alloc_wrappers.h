/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Which frames of an allocation stack are the allocator's, not the site the
 * user has to change: the allocator's entry points and internal helpers,
 * C++'s operator new and new[] in all their variants (aligned, nothrow),
 * std::allocator and its kin (__gnu_cxx::new_allocator,
 * std::__new_allocator, std::allocator_traits), by their mangled ELF names
 * (a library without debug info) or as DWARF and demangling name them,
 * code of the C++ standard library's headers (a container's _M_allocate
 * inlined or not: DWARF names such members unqualified, "allocate", so
 * their file tells), and the project's own wrappers given with
 * --alloc-wrapper (xmalloc, zmalloc, g_malloc). The report skips such frames at the top of a stack,
 * so that the first frame shown is the user's. Pure.
 */
#ifndef CP_ALLOC_WRAPPERS_H
#define CP_ALLOC_WRAPPERS_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#define CP_MAX_ALLOC_WRAPPERS	  32 /* --alloc-wrapper names */
#define CP_ALLOC_WRAPPER_NAME_LEN 64

/* The project's own wrappers, matched whole (function names as the report shows them). */
struct cp_alloc_wrappers {
	__u32 nr;
	char names[CP_MAX_ALLOC_WRAPPERS][CP_ALLOC_WRAPPER_NAME_LEN];
};

/*
 * Adds @name (--alloc-wrapper). Returns 0, -EINVAL for an empty or too long
 * name, -ENOSPC past CP_MAX_ALLOC_WRAPPERS.
 */
int cp_alloc_wrappers_add(struct cp_alloc_wrappers *w, const char *name);

/*
 * True when a frame in @function, at source file @file (NULL or "":
 * unknown), belongs to the allocator or a wrapper of it: a built-in one,
 * code in the C++ standard library's headers, or one of @w's (NULL: the
 * built-in ones only). @function as symbolized: "_Znwm", "operator new",
 * "zmalloc"; NULL or "" is never one.
 */
bool cp_alloc_wrapper_frame(const struct cp_alloc_wrappers *w, const char *function,
			    const char *file);

#endif /* CP_ALLOC_WRAPPERS_H */
