/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Separate debug info from debuginfod servers, for modules that have none
 * on this machine (a distribution's stripped binaries): libdebuginfod's
 * client, so the servers are $DEBUGINFOD_URLS and the cache is the usual
 * one ($DEBUGINFOD_CACHE_PATH, else ~/.cache/debuginfod_client). Off unless
 * DEBUGINFOD_URLS is set, and --no-debuginfod refuses it.
 *
 * Symbolizing runs on the thread that drains the ring buffer, so a fetch
 * never takes longer than CP_DEBUGINFOD_TIMEOUT_MS (the client's progress
 * callback aborts it), and a build-id that failed is not asked again for
 * the run (the last CP_DEBUGINFOD_FAILED of them are remembered). What the
 * server sends is opened as any debug file is: through elf_guard.h.
 */
#ifndef CP_DEBUGINFOD_H
#define CP_DEBUGINFOD_H

#include <stdbool.h>

#define CP_DEBUGINFOD_TIMEOUT_MS 5000 /* a whole fetch, connection included */
#define CP_DEBUGINFOD_FAILED	 64   /* build-ids that failed, not asked again */

/* --no-debuginfod: @on false; before the first fetch. */
void cp_debuginfod_enable(bool on);

/* True when fetches may be tried: not refused, and DEBUGINFOD_URLS names a server. */
bool cp_debuginfod_enabled(void);

/*
 * The debug file of build-id @id (@len bytes) from a server, into the
 * cache: its path there (malloc'd, the caller frees it), or NULL (off, not
 * found, timed out, failed before).
 */
char *cp_debuginfod_fetch(const unsigned char *id, int len);

#endif /* CP_DEBUGINFOD_H */
