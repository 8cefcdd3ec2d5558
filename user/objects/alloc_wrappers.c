// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Allocation frames that are the allocator's or its wrappers'. */
#include <errno.h>
#include <string.h>

#include "objects/alloc_wrappers.h"

/* The allocator's entry points (what the probes see called) and glibc's own names. */
static const char *const entry_points[] = {
	"malloc",	  "calloc",	   "realloc",	     "reallocarray",	"free",
	"posix_memalign", "aligned_alloc", "memalign",	     "valloc",		"pvalloc",
	"__libc_malloc",  "__libc_calloc", "__libc_realloc", "__libc_memalign", "_int_malloc",
	"_int_realloc",	  "tcache_init",   "__libc_free",
};

/*
 * Prefixes: operator new and new[] with every argument list, mangled
 * (_Znwm, _ZnwmSt11align_val_t, _ZnamRKSt9nothrow_t, ...) or as DWARF and
 * demangling name them ("operator new", "operator new[](unsigned long)");
 * the standard allocators' members, mangled and demangled.
 */
static const char *const prefixes[] = {
	"_Znw",
	"_Zna",
	"operator new",
	"_ZNSaI",			 /* std::allocator<T>:: */
	"_ZNSt15__new_allocatorI",	 /* std::__new_allocator<T>:: (GCC 12) */
	"_ZN9__gnu_cxx13new_allocatorI", /* __gnu_cxx::new_allocator<T>:: */
	"_ZNSt16allocator_traitsI",	 /* std::allocator_traits<A>:: */
	"std::allocator<",
	"std::__new_allocator<",
	"__gnu_cxx::new_allocator<",
	"std::allocator_traits<",
};

/* Where the C++ standard library's headers are: GCC's libstdc++ and LLVM's libc++. */
static const char *const std_header_dirs[] = {
	"/include/c++/",
	"/c++/v1/",
};

static bool std_header(const char *file)
{
	for (size_t i = 0; file && i < sizeof(std_header_dirs) / sizeof(std_header_dirs[0]); i++)
		if (strstr(file, std_header_dirs[i]))
			return true;
	return false;
}

int cp_alloc_wrappers_add(struct cp_alloc_wrappers *w, const char *name)
{
	size_t len = name ? strlen(name) : 0;

	if (!len || len >= CP_ALLOC_WRAPPER_NAME_LEN)
		return -EINVAL;
	if (w->nr >= CP_MAX_ALLOC_WRAPPERS)
		return -ENOSPC;
	memcpy(w->names[w->nr++], name, len + 1);
	return 0;
}

static bool in_list(const char *const *list, size_t n, const char *s, bool prefix)
{
	for (size_t i = 0; i < n; i++)
		if (prefix ? !strncmp(s, list[i], strlen(list[i])) : !strcmp(s, list[i]))
			return true;
	return false;
}

bool cp_alloc_wrapper_frame(const struct cp_alloc_wrappers *w, const char *function,
			    const char *file)
{
	if (!function || !function[0])
		return false;
	if (std_header(file))
		return true;
	if (in_list(entry_points, sizeof(entry_points) / sizeof(entry_points[0]), function,
		    false) ||
	    in_list(prefixes, sizeof(prefixes) / sizeof(prefixes[0]), function, true))
		return true;
	for (__u32 i = 0; w && i < w->nr; i++)
		if (!strcmp(function, w->names[i]))
			return true;
	return false;
}
