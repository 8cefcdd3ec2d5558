// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Which allocation frames are the allocator's: operator new in its
 * variants as libstdc++'s ELF symbols and as DWARF names them, the
 * standard allocators, the allocator's entry points, and the names given
 * with --alloc-wrapper; and none of the user's, even with a similar name.
 */
#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <string.h>
#include <cmocka.h>

#include "objects/alloc_wrappers.h"

#define ARRAY_LEN(a) (sizeof(a) / sizeof((a)[0]))

static void test_built_in(void **state)
{
	static const struct {
		const char *function;
		bool wrapper;
	} cases[] = {
		/* operator new / new[]: plain, nothrow, aligned, aligned nothrow (Itanium ABI) */
		{ "_Znwm", true },
		{ "_Znam", true },
		{ "_ZnwmRKSt9nothrow_t", true },
		{ "_ZnamSt11align_val_t", true },
		{ "_ZnwmSt11align_val_tRKSt9nothrow_t", true },
		{ "operator new", true },
		{ "operator new[](unsigned long)", true },
		/* the standard allocators' members */
		{ "_ZNSaIlE8allocateEm", true },
		{ "_ZN9__gnu_cxx13new_allocatorIlE8allocateEmPKv", true },
		{ "_ZNSt15__new_allocatorIiE8allocateEmPKv", true },
		{ "std::allocator_traits<std::allocator<long> >::allocate", true },
		{ "__gnu_cxx::new_allocator<long>::allocate", true },
		/* the allocator's entry points, glibc's internal names */
		{ "malloc", true },
		{ "__libc_calloc", true },
		{ "_int_malloc", true },
		/* the user's: a container's own member, similar names, nothing */
		{ "main", false },
		{ "mallocate", false },
		{ "xmalloc", false },
		{ "std::vector<long, std::allocator<long> >::vector", false },
		{ "_ZNSt6vectorIlSaIlEEC2EmRKS0_", false },
		{ "operator delete", false },
		{ "", false },
		{ NULL, false },
	};

	(void)state;
	for (size_t i = 0; i < ARRAY_LEN(cases); i++)
		if (cp_alloc_wrapper_frame(NULL, cases[i].function, NULL) != cases[i].wrapper)
			fail_msg("%s: want %s", cases[i].function ? cases[i].function : "NULL",
				 cases[i].wrapper ? "a wrapper" : "the user's");
}

/*
 * The standard library's headers: DWARF names an inlined std::allocator
 * member "allocate", so its file tells; the user's own "allocate" does not.
 */
static void test_std_headers(void **state)
{
	(void)state;
	assert_true(cp_alloc_wrapper_frame(NULL, "allocate",
					   "/usr/include/c++/12/bits/new_allocator.h"));
	assert_true(cp_alloc_wrapper_frame(NULL, "_M_allocate",
					   "/usr/include/c++/12/bits/stl_vector.h"));
	assert_true(cp_alloc_wrapper_frame(NULL, "allocate",
					   "/usr/lib/llvm-14/include/c++/v1/__memory/allocator.h"));
	assert_false(cp_alloc_wrapper_frame(NULL, "allocate", "/src/app/pool.cc"));
	assert_false(cp_alloc_wrapper_frame(NULL, "make_counts", "tests/workloads/cxx_vector.cpp"));
	assert_false(cp_alloc_wrapper_frame(NULL, "", "/usr/include/c++/12/bits/stl_vector.h"));
}

static void test_user_wrappers(void **state)
{
	struct cp_alloc_wrappers w = { 0 };
	char long_name[CP_ALLOC_WRAPPER_NAME_LEN + 1];

	(void)state;
	assert_false(cp_alloc_wrapper_frame(&w, "zmalloc", NULL));
	assert_int_equal(cp_alloc_wrappers_add(&w, "zmalloc"), 0);
	assert_int_equal(cp_alloc_wrappers_add(&w, "g_malloc"), 0);
	assert_true(cp_alloc_wrapper_frame(&w, "zmalloc", NULL));
	assert_true(cp_alloc_wrapper_frame(&w, "g_malloc", NULL));
	/* whole names only: a prefix or a longer name is another function */
	assert_false(cp_alloc_wrapper_frame(&w, "zmalloc_usable", NULL));
	assert_false(cp_alloc_wrapper_frame(&w, "zmallo", NULL));
	/* the built-in ones still hold */
	assert_true(cp_alloc_wrapper_frame(&w, "_Znwm", NULL));

	assert_int_equal(cp_alloc_wrappers_add(&w, ""), -EINVAL);
	assert_int_equal(cp_alloc_wrappers_add(&w, NULL), -EINVAL);
	memset(long_name, 'x', CP_ALLOC_WRAPPER_NAME_LEN);
	long_name[CP_ALLOC_WRAPPER_NAME_LEN] = '\0';
	assert_int_equal(cp_alloc_wrappers_add(&w, long_name), -EINVAL);
	while (w.nr < CP_MAX_ALLOC_WRAPPERS)
		assert_int_equal(cp_alloc_wrappers_add(&w, "w"), 0);
	assert_int_equal(cp_alloc_wrappers_add(&w, "one_more"), -ENOSPC);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_built_in),
		cmocka_unit_test(test_std_headers),
		cmocka_unit_test(test_user_wrappers),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
