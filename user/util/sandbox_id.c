// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The sandbox's user and group: an id no one holds (sandbox_id.h). */
#include <dirent.h>
#include <errno.h>
#include <grp.h>
#include <pthread.h>
#include <pwd.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/capability.h>
#include <sys/stat.h>

#include "util/caps.h"
#include "util/log.h"
#include "util/privs.h"
#include "util/sandbox_id.h"
#include "util/sysfs.h"

void cp_sandbox_ids_mark(__u64 *taken, __u64 first, __u64 count)
{
	for (unsigned int k = 0; k < CP_SANDBOX_ID_TRIES; k++) {
		__u64 id = CP_SANDBOX_ID_FIRST + (__u64)k * CP_SANDBOX_ID_STEP;

		if (id >= first && id - first < count)
			*taken |= 1ull << k;
	}
}

/* The ids of one line of @kind into @taken. */
static void mark_line(enum cp_id_text kind, const char *line, __u64 *taken)
{
	unsigned long long a, b, c, d, inside;
	const char *colon;

	switch (kind) {
	case CP_ID_SUBIDS:
		colon = strchr(line, ':');
		if (colon && sscanf(colon + 1, "%llu:%llu", &a, &b) == 2)
			cp_sandbox_ids_mark(taken, a, b);
		break;
	case CP_ID_MAP:
		if (sscanf(line, "%llu %llu %llu", &inside, &a, &b) == 3)
			cp_sandbox_ids_mark(taken, a, b);
		break;
	case CP_ID_STATUS:
		if ((!strncmp(line, "Uid:", 4) || !strncmp(line, "Gid:", 4)) &&
		    sscanf(line + 4, "%llu %llu %llu %llu", &a, &b, &c, &d) == 4) {
			cp_sandbox_ids_mark(taken, a, 1);
			cp_sandbox_ids_mark(taken, b, 1);
			cp_sandbox_ids_mark(taken, c, 1);
			cp_sandbox_ids_mark(taken, d, 1);
		}
		break;
	}
}

void cp_sandbox_ids_mark_text(enum cp_id_text kind, const char *text, __u64 *taken)
{
	char line[256];

	while (*text) {
		size_t len = strcspn(text, "\n");

		if (len < sizeof(line)) {
			memcpy(line, text, len);
			line[len] = '\0';
			mark_line(kind, line, taken);
		}
		text += len + (text[len] == '\n');
	}
}

static void mark_file(enum cp_id_text kind, const char *path, __u64 *taken)
{
	/* a map has at most 340 lines (the kernel's limit) of three numbers */
	static char text[16384];

	if (cp_sysfs_read_head("/", path, text, sizeof(text)) >= 0)
		cp_sandbox_ids_mark_text(kind, text, taken);
}

/*
 * The ids every process holds, and those every user namespace but ours
 * maps (a namespace's root may switch to any of them: kill(2) compares
 * the host's ids). A process that ends meanwhile is skipped.
 */
static void mark_processes(__u64 *taken)
{
	struct stat own, ns;
	struct dirent *e;
	char path[64];
	DIR *d = opendir("/proc");

	if (!d)
		return;
	if (stat("/proc/self/ns/user", &own))
		own.st_ino = 0;
	while ((e = readdir(d))) {
		if (e->d_name[0] < '1' || e->d_name[0] > '9')
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/status", e->d_name);
		mark_file(CP_ID_STATUS, path, taken);
		snprintf(path, sizeof(path), "/proc/%.16s/ns/user", e->d_name);
		if (stat(path, &ns) || (ns.st_ino == own.st_ino && ns.st_dev == own.st_dev))
			continue;
		snprintf(path, sizeof(path), "/proc/%.16s/uid_map", e->d_name);
		mark_file(CP_ID_MAP, path, taken);
		snprintf(path, sizeof(path), "/proc/%.16s/gid_map", e->d_name);
		mark_file(CP_ID_MAP, path, taken);
	}
	closedir(d);
}

/* Whether the user database names @id as a user or a group (an error counts as named). */
static bool named(__u32 id)
{
	char buf[16384];
	struct passwd pw, *p = NULL;
	struct group gr, *g = NULL;
	int e1 = getpwuid_r(id, &pw, buf, sizeof(buf), &p);
	int e2 = getgrgid_r(id, &gr, buf, sizeof(buf), &g);

	return p || g || (e1 && e1 != ENOENT) || (e2 && e2 != ENOENT);
}

static __u32 chosen = CP_SANDBOX_ID_NONE;
static pthread_once_t choose_once = PTHREAD_ONCE_INIT;

static void choose(void)
{
	const __u64 need = CP_CAP(CAP_SETUID) | CP_CAP(CAP_SETGID);
	struct cp_caps caps;
	__u64 taken = 0;

	if (cp_caps_get(&caps) || (caps.effective & need) != need)
		return; /* the child could not switch: nothing to choose */
	mark_file(CP_ID_SUBIDS, "/etc/subuid", &taken);
	mark_file(CP_ID_SUBIDS, "/etc/subgid", &taken);
	mark_processes(&taken);
	for (unsigned int k = 0; k < CP_SANDBOX_ID_TRIES; k++) {
		__u32 id = CP_SANDBOX_ID_FIRST + k * CP_SANDBOX_ID_STEP;

		if (!(taken & (1ull << k)) && !named(id)) {
			chosen = id;
			cp_info("sandboxed children run as user and group %u (no one else's)", id);
			return;
		}
	}
	cp_warn("no free id for the sandbox's user among %u from %u: its children stay root "
		"without capabilities",
		CP_SANDBOX_ID_TRIES, CP_SANDBOX_ID_FIRST);
}

__u32 cp_sandbox_id(void)
{
	pthread_once(&choose_once, choose);
	return chosen;
}
