// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "objects/backoff_marks.h"

void cp_backoff_marks_on_guard(struct cp_backoff_marks *m, bool backed_off, __u64 now_ns)
{
	m->unseen = true;
	if (backed_off) {
		if (!m->since_ns)
			m->since_ns = now_ns ? now_ns : 1;
		return;
	}
	/* everything allocated before the resume lived through the back-off */
	m->since_ns = 0;
	if (now_ns > m->doubt_before_ns)
		m->doubt_before_ns = now_ns;
}

bool cp_backoff_marks_doubt(const struct cp_backoff_marks *m, __u64 alloc_ns)
{
	/* while backed off, every object may already be gone */
	return m->since_ns || alloc_ns < m->doubt_before_ns;
}

void cp_backoff_marks_on_exec(struct cp_backoff_marks *m)
{
	m->doubt_before_ns = 0;
	m->unseen = m->since_ns != 0;
}
