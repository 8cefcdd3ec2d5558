// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The maps, knobs and functions that cacheperf.bpf.h, cpu_cost.bpf.h,
 * stacks.bpf.h and wakeup.bpf.h declare for every object.
 */
#define CP_DEFINE_SHARED
#include "cacheperf.bpf.h"
#include "wakeup.bpf.h"
#include "stacks.bpf.h"

char LICENSE[] SEC("license") = "Dual BSD/GPL";
