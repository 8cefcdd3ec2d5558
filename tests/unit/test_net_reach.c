// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Whether debuginfod servers can be reached: the route tables of a host and
 * of a private network namespace (only lo), loopback URLs, and sockets the
 * sandbox refuses (net_reach.h).
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>
#include <cmocka.h>

#include "machine/net_reach.h"

/* /proc/net/route of a host with a default route through eth0 */
static const char host4[] =
	"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n"
	"eth0\t00000000\t0102A8C0\t0003\t0\t0\t100\t00000000\t0\t0\t0\n"
	"eth0\t0002A8C0\t00000000\t0001\t0\t0\t100\t00FFFFFF\t0\t0\t0\n";
/* ... of a private namespace: the header only (lo's routes are in the local table) */
static const char private4[] =
	"Iface\tDestination\tGateway \tFlags\tRefCnt\tUse\tMetric\tMask\t\tMTU\tWindow\tIRTT\n";
/* /proc/net/ipv6_route with only lo, and with eth0 */
static const char lo6[] =
	"00000000000000000000000000000001 80 00000000000000000000000000000000 00 "
	"00000000000000000000000000000000 00000000 00000001 00000000 80200001       lo\n";
static const char eth6[] =
	"fe800000000000000000000000000000 40 00000000000000000000000000000000 00 "
	"00000000000000000000000000000000 00000100 00000001 00000000 00000001     eth0\n";

static void test_routes(void **state)
{
	(void)state;
	assert_true(cp_net_route_beyond_lo(host4, NULL));
	assert_false(cp_net_route_beyond_lo(private4, lo6));
	assert_true(cp_net_route_beyond_lo(private4, eth6));
	assert_false(cp_net_route_beyond_lo(NULL, NULL));
	assert_false(cp_net_route_beyond_lo("", ""));
}

struct url_case {
	const char *url;
	bool loopback;
};

static const struct url_case url_cases[] = {
	{ "http://127.0.0.1:8002", true },
	{ "https://127.1.2.3/x", true },
	{ "http://localhost", true },
	{ "http://localhost:8002/", true },
	{ "http://[::1]:8002", true },
	{ "http://user@localhost:1", true },
	{ "https://debuginfod.debian.net", false },
	{ "http://localhost.example.org", false },	/* not the loopback name */
	{ "http://1127.0.0.1", false },
	{ "http://example.org/127.0.0.1", false },	/* a path, not the host */
};

static void test_loopback_urls(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(url_cases) / sizeof(url_cases[0]); i++) {
		const struct url_case *c = &url_cases[i];

		if (cp_url_loopback(c->url, (int)strlen(c->url)) != c->loopback)
			fail_msg("%s: want loopback %d", c->url, c->loopback);
	}
}

static void test_decision(void **state)
{
	const char *remote = "https://debuginfod.debian.net";

	(void)state;
	assert_int_equal(cp_net_reach_urls(remote, true, host4, lo6), CP_NET_REACH_OK);
	/* PrivateNetwork=yes: only lo */
	assert_int_equal(cp_net_reach_urls(remote, true, private4, lo6), CP_NET_REACH_NO_ROUTE);
	/* a loopback server among them is reachable there */
	assert_int_equal(cp_net_reach_urls("https://debuginfod.debian.net  http://127.0.0.1:8002",
					   true, private4, lo6),
			 CP_NET_REACH_OK);
	/* RestrictAddressFamilies=AF_UNIX: nothing, loopback or not */
	assert_int_equal(cp_net_reach_urls("http://127.0.0.1:8002", false, host4, lo6),
			 CP_NET_REACH_NO_INET);
	assert_int_equal(cp_net_reach_urls("", true, private4, lo6), CP_NET_REACH_NO_ROUTE);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_routes),
		cmocka_unit_test(test_loopback_urls),
		cmocka_unit_test(test_decision),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
