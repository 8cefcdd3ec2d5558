// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
#include "cacheperf/abi.h"
#include "cacheperf.skel.h"
int main(void) { struct cacheperf *s = cacheperf__open(); cacheperf__destroy(s); return 0; }
