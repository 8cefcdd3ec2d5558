/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Whether this process can reach the debuginfod servers DEBUGINFOD_URLS
 * names. The systemd unit runs the profiler in a network namespace of its
 * own (PrivateNetwork=yes: only lo) and lets it open AF_UNIX sockets only;
 * there every fetch fails, module after module. The profiler checks once
 * at start and says why, instead (packaging/systemd/debuginfod.conf lifts
 * both). Pure decisions over the text of /proc/net/route and
 * /proc/net/ipv6_route; cp_net_reach_check() reads them.
 */
#ifndef CP_NET_REACH_H
#define CP_NET_REACH_H

#include <stdbool.h>

enum cp_net_reach {
	CP_NET_REACH_OK,       /* a server is loopback, or there is a route off the host */
	CP_NET_REACH_NO_INET,  /* no AF_INET or AF_INET6 socket may be opened */
	CP_NET_REACH_NO_ROUTE, /* no route through an interface but lo */
};

/*
 * Pure: true when @route4 (the text of /proc/net/route) or @route6 (of
 * /proc/net/ipv6_route) has a route through an interface other than lo.
 * NULL: not read.
 */
bool cp_net_route_beyond_lo(const char *route4, const char *route6);

/* Pure: true when the host of @url (@len bytes) is localhost, 127.x.y.z or [::1]. */
bool cp_url_loopback(const char *url, int len);

/*
 * Pure: whether one of the space-separated @urls can be reached, given
 * whether an inet socket could be opened (@inet) and the route tables.
 */
enum cp_net_reach cp_net_reach_urls(const char *urls, bool inet, const char *route4,
				    const char *route6);

/* The decision for @urls on this process: reads the route tables, tries an inet socket. */
enum cp_net_reach cp_net_reach_check(const char *urls);

#endif /* CP_NET_REACH_H */
