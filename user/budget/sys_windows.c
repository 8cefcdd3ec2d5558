// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include <string.h>

#include "budget/sys_windows.h"

void cp_sys_windows_init(struct cp_sys_windows *w)
{
	memset(w, 0, sizeof(*w));
	w->every = 1;
}

bool cp_sys_windows_begin(struct cp_sys_windows *w)
{
	if (w->since + 1 >= w->every) {
		w->since = 0;
		w->with++;
		return true;
	}
	w->since++;
	w->without++;
	return false;
}

void cp_sys_windows_end(struct cp_sys_windows *w, bool mapped)
{
	if (mapped)
		w->every = 1;
	else if (w->every < CP_SYS_EVERY_MAX)
		w->every *= 2;
}
