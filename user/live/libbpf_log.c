// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* libbpf's print callback, through the log (see libbpf_log.h). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <bpf/libbpf.h>

#include "live/libbpf_log.h"
#include "util/log.h"

static _Thread_local bool holding;
static _Thread_local char held[256];

static int libbpf_print(enum libbpf_print_level level, const char *fmt, va_list args)
{
	enum cp_log_level l = level == LIBBPF_WARN   ? CP_LOG_WARNING
			      : level == LIBBPF_INFO ? CP_LOG_INFO
						     : CP_LOG_DEBUG;
	bool keep = holding && level == LIBBPF_WARN && !held[0];
	char *text = NULL;

	if (holding && l == CP_LOG_WARNING)
		l = CP_LOG_DEBUG;
	if (!keep && !cp_log_enabled(l))
		return 0;
	/* the verifier log comes whole in one message: no fixed buffer */
	if (vasprintf(&text, fmt, args) < 0)
		return 0;
	if (keep)
		snprintf(held, sizeof(held), "%.*s", (int)strcspn(text, "\n"), text);
	cp_log_text(l, text);
	free(text);
	return 0;
}

void cp_libbpf_log_route(void)
{
	libbpf_set_print(libbpf_print);
}

void cp_libbpf_log_hold(bool on)
{
	holding = on;
	if (on)
		held[0] = '\0';
}

const char *cp_libbpf_log_held(void)
{
	return held;
}
