/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The user and group a sandboxed child (util/sandbox.h) switches to where
 * the profiler may still change users: one id, used as both, that no one
 * else holds, so that no tenant can signal the child (kill(2) lets a
 * process signal one whose real or saved uid is its own real or effective
 * uid) nor share its per-user limits. The user nobody, used before issue
 * #29, is every tenant's to run as.
 *
 * The candidates are CP_SANDBOX_ID_FIRST + k * CP_SANDBOX_ID_STEP, k below
 * CP_SANDBOX_ID_TRIES: inside 1879048192 .. 2147352575 (0x70000000 ..
 * 0x7ffdffff), which systemd's UIDS-GIDS.md leaves unused, above the
 * container ranges systemd-nspawn picks from (524288 .. 1879048191), and the
 * subordinate ranges shadow's useradd hands out by default (100000 ..
 * 600100000) and the kubelet gives pods (blocks of 65536 from 65536 on,
 * one per pod slot), below systemd's foreign range (0x7ffe0000) and 2^31 (the ids
 * some programs and setfsuid() take for negative). Their low 16 bits are
 * neither 0 nor 65534: a container whose block held one would not hand it
 * to its root or its nobody. The first candidate that no process holds
 * (the Uid and Gid lines of /proc/PID/status: real, effective, saved,
 * file system), no user namespace maps (/proc/PID/uid_map and gid_map of
 * every namespace but the profiler's own), no subordinate range names
 * (/etc/subuid, /etc/subgid) and no passwd or group entry has is taken,
 * once per profiler (cp_sandbox_id()).
 */
#ifndef CP_SANDBOX_ID_H
#define CP_SANDBOX_ID_H

#include <linux/types.h>

#define CP_SANDBOX_ID_FIRST 0x70005a5au /* 1879071322 */
#define CP_SANDBOX_ID_STEP  0x10000u	/* one candidate per 64 Ki block */
#define CP_SANDBOX_ID_TRIES 64		/* bits of the mask of candidates taken */
#define CP_SANDBOX_ID_NONE  0u		/* no id: the child stays root, capabilities dropped */

/* What a text lists ids in. */
enum cp_id_text {
	CP_ID_SUBIDS, /* /etc/subuid, /etc/subgid: "name:first:count" lines */
	CP_ID_MAP,    /* /proc/PID/uid_map, gid_map: "inside outside count" lines */
	CP_ID_STATUS, /* /proc/PID/status: its "Uid:" and "Gid:" lines, four ids each */
};

/* Sets in @taken bit k of each candidate k inside [@first, @first + @count). Pure. */
void cp_sandbox_ids_mark(__u64 *taken, __u64 first, __u64 count);

/*
 * Sets in @taken the candidates the ids of @text (a NUL-terminated file of
 * kind @kind) name; lines that do not parse are skipped. Pure.
 */
void cp_sandbox_ids_mark_text(enum cp_id_text kind, const char *text, __u64 *taken);

/*
 * The id the sandbox takes as user and group: chosen at the first call, by
 * the scan above, and kept for the process; CP_SANDBOX_ID_NONE when this
 * process cannot change users (no CAP_SETUID and CAP_SETGID: a live run's
 * loop; nothing is scanned then) or when every candidate is taken (said
 * once in the log). Call it before forking a child that will sandbox
 * itself: the child inherits the choice. Thread-safe.
 */
__u32 cp_sandbox_id(void);

#endif /* CP_SANDBOX_ID_H */
