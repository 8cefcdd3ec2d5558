// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Debug info from debuginfod servers, bounded in time. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <elfutils/debuginfod.h>

#include "symbols/debuginfod.h"
#include "util/clock.h"

#define CP_BUILD_ID_MAX 64

struct failed_id {
	int len;
	unsigned char id[CP_BUILD_ID_MAX];
};

static bool refused;		  /* --no-debuginfod */
static debuginfod_client *client; /* made at the first fetch */
static __u64 fetch_start_ns;
static struct failed_id failed[CP_DEBUGINFOD_FAILED];
static unsigned int next_failed;

void cp_debuginfod_enable(bool on)
{
	refused = !on;
}

bool cp_debuginfod_enabled(void)
{
	const char *urls = getenv("DEBUGINFOD_URLS");

	return !refused && urls && urls[0];
}

/* The client's progress callback: non-zero aborts the fetch. */
static int past_deadline(debuginfod_client *c, long done, long total)
{
	(void)c;
	(void)done;
	(void)total;
	return cp_now_ns() - fetch_start_ns > CP_DEBUGINFOD_TIMEOUT_MS * 1000000ull;
}

static bool failed_before(const unsigned char *id, int len)
{
	for (unsigned int i = 0; i < CP_DEBUGINFOD_FAILED; i++)
		if (failed[i].len == len && !memcmp(failed[i].id, id, (size_t)len))
			return true;
	return false;
}

static void note_failed(const unsigned char *id, int len)
{
	struct failed_id *f = &failed[next_failed++ % CP_DEBUGINFOD_FAILED];

	f->len = len;
	memcpy(f->id, id, (size_t)len);
}

char *cp_debuginfod_fetch(const unsigned char *id, int len)
{
	char *path = NULL;
	int fd;

	if (len <= 0 || len > CP_BUILD_ID_MAX || !cp_debuginfod_enabled() || failed_before(id, len))
		return NULL;
	if (!client) {
		client = debuginfod_begin();
		if (!client) {
			note_failed(id, len);
			return NULL;
		}
		debuginfod_set_progressfn(client, past_deadline);
	}
	fetch_start_ns = cp_now_ns();
	fd = debuginfod_find_debuginfo(client, id, len, &path);
	if (fd < 0) {
		free(path);
		note_failed(id, len);
		return NULL;
	}
	close(fd);
	return path;
}
