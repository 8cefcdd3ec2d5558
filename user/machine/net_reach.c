// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Can the debuginfod servers be reached (see net_reach.h). */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "machine/net_reach.h"

#define CP_ROUTE_TEXT_MAX (256 * 1024) /* route tables read, at most */

/* The interface of one route line: @col-th field (0: first, -1: last). */
static bool line_beyond_lo(const char *line, size_t len, int col)
{
	char buf[512], *save = NULL, *tok, *want = NULL;
	int i = 0;

	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, line, len);
	buf[len] = '\0';
	for (tok = strtok_r(buf, " \t", &save); tok; tok = strtok_r(NULL, " \t", &save), i++)
		if (col < 0 || i == col)
			want = tok;
	return want && strcmp(want, "lo") != 0;
}

static bool table_beyond_lo(const char *text, bool header, int col)
{
	for (const char *l = text; l && *l;) {
		const char *nl = strchr(l, '\n');
		size_t len = nl ? (size_t)(nl - l) : strlen(l);

		if (!header && len && line_beyond_lo(l, len, col))
			return true;
		header = false;
		l = nl ? nl + 1 : NULL;
	}
	return false;
}

bool cp_net_route_beyond_lo(const char *route4, const char *route6)
{
	/* /proc/net/route: a header, then "Iface Destination ..."; ipv6_route: the device last */
	return (route4 && table_beyond_lo(route4, true, 0)) ||
	       (route6 && table_beyond_lo(route6, false, -1));
}

bool cp_url_loopback(const char *url, int len)
{
	const char *host = memmem(url, (size_t)len, "://", 3);
	size_t n;

	host = host ? host + 3 : url;
	n = (size_t)(url + len - host);
	/* user info, if any, ends at '@' before the host */
	for (size_t i = 0; i < n && host[i] != '/'; i++)
		if (host[i] == '@') {
			n -= i + 1;
			host += i + 1;
			break;
		}
	if (n >= 5 && !strncmp(host, "[::1]", 5))
		return true;
	if (n >= 4 && !strncmp(host, "127.", 4))
		return true;
	return n >= 9 && !strncmp(host, "localhost", 9) &&
	       (n == 9 || host[9] == ':' || host[9] == '/');
}

enum cp_net_reach cp_net_reach_urls(const char *urls, bool inet, const char *route4,
				    const char *route6)
{
	bool beyond = cp_net_route_beyond_lo(route4, route6);

	if (!inet)
		return CP_NET_REACH_NO_INET;
	for (const char *u = urls; u && *u;) {
		size_t len = strcspn(u, " \t\n");

		if (len && (beyond || cp_url_loopback(u, (int)len)))
			return CP_NET_REACH_OK;
		u += len;
		u += strspn(u, " \t\n");
	}
	return CP_NET_REACH_NO_ROUTE;
}

/* The text of @path (malloc'd), or NULL. */
static char *read_text(const char *path)
{
	FILE *f = fopen(path, "re");
	char *buf = f ? malloc(CP_ROUTE_TEXT_MAX + 1) : NULL;
	size_t n;

	if (!buf) {
		if (f)
			fclose(f);
		return NULL;
	}
	n = fread(buf, 1, CP_ROUTE_TEXT_MAX, f);
	fclose(f);
	buf[n] = '\0';
	return buf;
}

enum cp_net_reach cp_net_reach_check(const char *urls)
{
	/* RestrictAddressFamilies= refuses the socket with EAFNOSUPPORT */
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	char *r4, *r6;
	enum cp_net_reach ret;

	if (fd < 0)
		fd = socket(AF_INET6, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd >= 0)
		close(fd);
	r4 = read_text("/proc/net/route");
	r6 = read_text("/proc/net/ipv6_route");
	/* tables we cannot read tell nothing: no warning on a guess */
	ret = !r4 && !r6 && fd >= 0 ? CP_NET_REACH_OK : cp_net_reach_urls(urls, fd >= 0, r4, r6);
	free(r4);
	free(r6);
	return ret;
}
