// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The link reaper (user/live/link_reaper.h) with links that are plain
 * descriptors (a link made by bpf() is destroyed by closing it): every link
 * handed over is destroyed by the flush, and a hand-over of a few links
 * wakes a few of its 32 workers, not all of them.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <cmocka.h>

#include "lib/thread_sleeps.h"
#include "live/link_reaper.h"

#define NR_LINKS 100

static bool is_open(int fd)
{
	return fcntl(fd, F_GETFD) != -1 || errno != EBADF;
}

static void hand_over(struct cp_link_reaper *r, int *fds, size_t n)
{
	struct cp_probe_link links[NR_LINKS];

	for (size_t i = 0; i < n; i++) {
		fds[i] = eventfd(0, EFD_CLOEXEC);
		assert_true(fds[i] >= 0);
		links[i] = (struct cp_probe_link){.link = NULL, .fd = fds[i]};
	}
	cp_link_reaper__add(r, links, n);
}

static void test_every_link_destroyed(void **state)
{
	struct cp_link_reaper *r = cp_link_reaper__new();
	int fds[NR_LINKS];

	(void)state;
	assert_non_null(r);
	hand_over(r, fds, NR_LINKS);
	cp_link_reaper__flush(r);
	assert_int_equal(cp_link_reaper__pending(r), 0);
	for (int i = 0; i < NR_LINKS; i++)
		assert_false(is_open(fds[i]));
	cp_link_reaper__free(r);
}

/*
 * Two links wake two workers: the others sleep on (a broadcast woke all
 * 32, which then went back to sleep: 30 sleeps more than needed).
 */
static void test_few_links_wake_few(void **state)
{
	struct cp_link_reaper *r = cp_link_reaper__new();
	unsigned long long before, woke;
	int fds[2];

	(void)state;
	assert_non_null(r);
	usleep(50000); /* every worker waiting */
	before = thread_sleeps("cp-reaper");
	hand_over(r, fds, 2);
	cp_link_reaper__flush(r);
	usleep(50000);
	woke = thread_sleeps("cp-reaper") - before;
	print_message("# %llu sleeps of the workers for 2 links\n", woke);
	assert_false(is_open(fds[0]));
	assert_false(is_open(fds[1]));
	assert_true(woke <= 8);
	cp_link_reaper__free(r);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_every_link_destroyed),
		cmocka_unit_test(test_few_links_wake_few),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
