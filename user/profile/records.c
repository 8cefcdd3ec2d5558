// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "profile/records.h"

int cp_record_dispatch(const struct cp_record_ops *ops, struct cp_record_counts *c,
		       const void *data, size_t size)
{
	__u32 type;

	if (size < sizeof(type)) {
		c->malformed++;
		return 0;
	}
	memcpy(&type, data, sizeof(type));
	if (type == CP_REC_SAMPLE) {
		if (size != sizeof(struct cp_sample)) {
			c->malformed++;
			return 0;
		}
		return ops->sample ? ops->sample(data, ops->ctx) : 0;
	}
	if (!ops->record) {
		c->unknown++;
		return 0;
	}
	return ops->record(type, data, size, ops->ctx);
}
