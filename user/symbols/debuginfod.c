// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Debug info from debuginfod servers, bounded in time. */
#include <dlfcn.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <linux/types.h>
#include <elfutils/debuginfod.h>

#include "symbols/debuginfod.h"
#include "util/clock.h"
#include "util/log.h"

#define CP_BUILD_ID_MAX 64

struct failed_id {
	int len;
	unsigned char id[CP_BUILD_ID_MAX];
};

/*
 * libdebuginfod is opened at the first fetch, not linked: it brings
 * libcurl, GnuTLS, Kerberos and LDAP, 28 libraries whose loading and
 * relocation took 6.5 ms of every start's CPU time (a program linked with
 * the same libraries, 7.9 ms with it and 1.3 ms without), for a client most
 * runs never make (DEBUGINFOD_URLS unset).
 */
#define CP_DEBUGINFOD_SONAME "libdebuginfod.so.1"

struct client_lib {
	debuginfod_client *(*begin)(void);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len, char **path);
};

static bool refused;		  /* --no-debuginfod */
static debuginfod_client *client; /* made at the first fetch */
static struct client_lib lib;	  /* its functions, once opened */
static bool lib_tried;
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

/* The client library's functions, opened once: false when it is not installed. */
static bool lib_open(void)
{
	void *h;

	if (lib_tried)
		return lib.begin != NULL;
	lib_tried = true;
	h = dlopen(CP_DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);
	if (!h) {
		cp_warn("DEBUGINFOD_URLS is set, but %s cannot be opened (%s): no debug info is "
			"fetched; install libdebuginfod1",
			CP_DEBUGINFOD_SONAME, dlerror());
		return false;
	}
	lib.set_progressfn = (void (*)(debuginfod_client *, debuginfod_progressfn_t))dlsym(
		h, "debuginfod_set_progressfn");
	lib.find_debuginfo = (int (*)(debuginfod_client *, const unsigned char *, int,
				      char **))dlsym(h, "debuginfod_find_debuginfo");
	lib.begin = (debuginfod_client * (*)(void)) dlsym(h, "debuginfod_begin");
	if (!lib.set_progressfn || !lib.find_debuginfo || !lib.begin) {
		memset(&lib, 0, sizeof(lib));
		dlclose(h);
		return false;
	}
	return true; /* kept open for the run: the client lives in it */
}

char *cp_debuginfod_fetch(const unsigned char *id, int len)
{
	char *path = NULL;
	int fd;

	if (len <= 0 || len > CP_BUILD_ID_MAX || !cp_debuginfod_enabled() || failed_before(id, len))
		return NULL;
	if (!client) {
		client = lib_open() ? lib.begin() : NULL;
		if (!client) {
			note_failed(id, len);
			return NULL;
		}
		lib.set_progressfn(client, past_deadline);
	}
	fetch_start_ns = cp_now_ns();
	fd = lib.find_debuginfo(client, id, len, &path);
	if (fd < 0) {
		free(path);
		note_failed(id, len);
		return NULL;
	}
	close(fd);
	return path;
}
