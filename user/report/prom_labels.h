/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The free-text labels of the Prometheus file, bounded: an issue's
 * location and object (at most CP_PROM_TEXT_MAX bytes, cut at a character
 * boundary with a marker, docs/prometheus.md) and a process's identity
 * that outlives a restart (comm, container, cgroup; the pid only when
 * asked, --prom-pid-label). Every value is valid UTF-8 (prom_writer.h), so
 * two series with equal values here are one series in the file. Pure.
 */
#ifndef CP_PROM_LABELS_H
#define CP_PROM_LABELS_H

#include <stdbool.h>
#include <stddef.h>

#include "classify/classify.h"
#include "machine/proc_cgroup.h"
#include "profile/run_facts.h"

#define CP_PROM_TEXT_MAX   128 /* location and object labels: bytes, marker included */
#define CP_PROM_CGROUP_MAX 256 /* the cgroup label: bytes (the parser keeps the leaf) */
#define CP_PROM_PID_LEN	   16

/* Who a series is about: label values, each valid UTF-8 and bounded. */
struct cp_prom_ident {
	char pid[CP_PROM_PID_LEN];	     /* "" unless --prom-pid-label */
	char comm[CP_COMM_LEN * 3 + 1];	     /* each invalid byte may become 3 */
	char container[CP_CONTAINER_ID_LEN]; /* 64 hex digits, or "" */
	char cgroup[CP_PROM_CGROUP_MAX + 1]; /* "/system.slice/foo.service", or "" */
};

/*
 * Pure: the identity of process @pid: @comm (any bytes), @cg (NULL: not
 * known, as in a recording), and the pid only when @with_pid.
 */
void cp_prom_ident_make(struct cp_prom_ident *out, unsigned int pid, bool with_pid,
			const char *comm, const struct cp_cgroup_info *cg);

bool cp_prom_ident_equal(const struct cp_prom_ident *a, const struct cp_prom_ident *b);

/*
 * Pure: the label of an issue's location, "function file.c:12" (the
 * instruction with the most misses), or its address when nothing is known;
 * at most min(@sz - 1, CP_PROM_TEXT_MAX) bytes.
 */
void cp_prom_location(const struct cp_issue *is, char *buf, size_t sz);

/*
 * Pure: the label of an issue's object: a global's name, a heap or mapped
 * object's allocation call site "function file.c:40", else the kind of
 * memory; "" when the issue names no object. Bounded as cp_prom_location().
 */
void cp_prom_object(const struct cp_issue *is, char *buf, size_t sz);

#endif /* CP_PROM_LABELS_H */
