/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/* Short text for decoded data sources, as reports and recordings show them. */
#ifndef CP_DATA_SRC_TEXT_H
#define CP_DATA_SRC_TEXT_H

#include <stddef.h>
#include "cacheperf/data_src.h"

/* "L1", "LFB", "Local RAM", ...: the name of @lvl; "?" for a value out of range. */
const char *cp_mem_lvl_name(enum cp_mem_lvl lvl);

/*
 * Renders @d in the spirit of perf mem's level column: the level and its
 * outcome ("L1 hit", "LFB hit", "L3 miss", "Local RAM", "N/A"), the distance
 * of remote levels ("Remote Cache (1 hop)", "Remote RAM (other socket)"),
 * the snoop result when it tells about sharing (" HITM", " FWD", " PEER",
 * " snoop hit"), then ", TLB miss", ", locked", ", blocked" when set.
 * snprintf semantics: always terminated when @size > 0; returns the length
 * the full text has.
 */
int cp_data_src_text(const struct cp_data_src *d, char *buf, size_t size);

#endif /* CP_DATA_SRC_TEXT_H */
