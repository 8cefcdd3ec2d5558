// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Call sites' stack copies waiting for their object event. */
#include <string.h>

#include "symbols/stack_copies.h"

void cp_stack_copies_put(struct cp_stack_copies *c, const struct cp_ustack_record *r)
{
	unsigned int i = c->next++ % CP_STACK_COPIES;

	memcpy(&c->r[i], r, sizeof(*r));
	c->used[i] = true;
}

const struct cp_ustack_record *cp_stack_copies_take(struct cp_stack_copies *c, __u32 tgid,
						    __u64 caller)
{
	for (unsigned int i = 0; i < CP_STACK_COPIES; i++) {
		if (!c->used[i] || c->r[i].tgid != tgid || c->r[i].caller != caller)
			continue;
		c->used[i] = false;
		return &c->r[i]; /* valid until the next put */
	}
	return NULL;
}
