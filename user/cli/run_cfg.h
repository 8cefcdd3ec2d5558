/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The command line's options, handed down as the small config of the layer
 * below: the session (what to open and load). Only cli/ knows struct
 * cp_options; main() fills the live run's config (live/run.h) itself.
 */
#ifndef CP_RUN_CFG_H
#define CP_RUN_CFG_H

#include "cli/options.h"
#include "live/session.h"

/* The session's knobs from @opts; targets, PMUs, source and geometry are left as they are. */
void cp_session_cfg_of(const struct cp_options *opts, struct cp_session_cfg *out);

#endif /* CP_RUN_CFG_H */
