// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Capability masks (see caps.h). */
#include <stdio.h>

#include "util/caps.h"

void cp_caps_keep(const struct cp_caps *now, __u64 keep, struct cp_caps *out)
{
	out->permitted = now->permitted & keep;
	out->effective = out->permitted;
	out->inheritable = 0;
}

bool cp_caps_bound_drop(__u64 keep, unsigned int cap)
{
	return cap < 64 && !(keep & CP_CAP(cap));
}

/* The names the profiler's messages and docs use (capabilities(7)). */
static const char *const cap_names[] = {
	[CAP_CHOWN] = "CAP_CHOWN",
	[CAP_DAC_OVERRIDE] = "CAP_DAC_OVERRIDE",
	[CAP_DAC_READ_SEARCH] = "CAP_DAC_READ_SEARCH",
	[CAP_FOWNER] = "CAP_FOWNER",
	[CAP_KILL] = "CAP_KILL",
	[CAP_SETGID] = "CAP_SETGID",
	[CAP_SETUID] = "CAP_SETUID",
	[CAP_SETPCAP] = "CAP_SETPCAP",
	[CAP_IPC_LOCK] = "CAP_IPC_LOCK",
	[CAP_SYS_PTRACE] = "CAP_SYS_PTRACE",
	[CAP_SYS_ADMIN] = "CAP_SYS_ADMIN",
	[CAP_SYS_RESOURCE] = "CAP_SYS_RESOURCE",
	[CAP_PERFMON] = "CAP_PERFMON",
	[CAP_BPF] = "CAP_BPF",
};

const char *cp_caps_names(__u64 mask, char *buf, size_t sz)
{
	size_t n = 0;

	if (sz)
		buf[0] = '\0';
	for (unsigned int c = 0; c < 64 && n < sz; c++) {
		int w;

		if (!(mask & CP_CAP(c)))
			continue;
		if (c < sizeof(cap_names) / sizeof(cap_names[0]) && cap_names[c])
			w = snprintf(buf + n, sz - n, "%s%s", n ? " " : "", cap_names[c]);
		else
			w = snprintf(buf + n, sz - n, "%scap_%u", n ? " " : "", c);
		if (w < 0)
			break;
		n += (size_t)w;
	}
	return buf;
}
