// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Options to the configs of the session and the live run. */
#include "cli/run_cfg.h"

void cp_session_cfg_of(const struct cp_options *opts, struct cp_session_cfg *out)
{
	out->system_wide = opts->target == CP_TARGET_ALL;
	out->held = opts->target == CP_TARGET_CMD;
	out->sysfs_root = opts->sysfs_root;
	out->cgroup = opts->cgroup;
	out->window = opts->window;
	out->stack_every = opts->stack_every;
	out->stack_copy_bytes = opts->stack_copy_bytes;
	out->window_ratio_ppm = opts->window_ratio_ppm;
	out->ldlat_cycles = opts->ldlat_cycles;
	out->load_period = opts->load_period;
	out->store_period = opts->store_period;
	out->soft_freq_hz = opts->soft_freq_hz;
	out->max_bp_rate = opts->max_bp_rate;
	out->no_objects = opts->no_objects;
	out->alloc_stack_bytes = opts->alloc_stack_bytes;
	out->max_alloc_rate = opts->max_alloc_rate;
}
