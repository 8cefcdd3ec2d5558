// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * data_src decoding and text, table-driven like perf's tests/mem.c. Inputs are
 * built with the uapi PERF_MEM_S() macros the way the kernel encoders build
 * them (arch/x86/events/intel/ds.c, arch/x86/events/amd/ibs.c), so a CP_MEM_*
 * mistake cannot cancel itself out.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <linux/perf_event.h>
#include <cmocka.h>

#include "cacheperf/data_src.h"
#include "report/data_src_text.h"

/* Every constant the BPF side decodes with must be the uapi one. */
#define SAME(cp, uapi) _Static_assert((cp) == (uapi), #cp " != " #uapi)
SAME(CP_MEM_OP_SHIFT, PERF_MEM_OP_SHIFT);
SAME(CP_MEM_OP_NA, PERF_MEM_OP_NA);
SAME(CP_MEM_OP_LOAD, PERF_MEM_OP_LOAD);
SAME(CP_MEM_OP_STORE, PERF_MEM_OP_STORE);
SAME(CP_MEM_OP_PFETCH, PERF_MEM_OP_PFETCH);
SAME(CP_MEM_OP_EXEC, PERF_MEM_OP_EXEC);
SAME(CP_MEM_LVL_SHIFT, PERF_MEM_LVL_SHIFT);
SAME(CP_MEM_LVL_NA, PERF_MEM_LVL_NA);
SAME(CP_MEM_LVL_HIT, PERF_MEM_LVL_HIT);
SAME(CP_MEM_LVL_MISS, PERF_MEM_LVL_MISS);
SAME(CP_MEM_LVL_L1, PERF_MEM_LVL_L1);
SAME(CP_MEM_LVL_LFB, PERF_MEM_LVL_LFB);
SAME(CP_MEM_LVL_L2, PERF_MEM_LVL_L2);
SAME(CP_MEM_LVL_L3, PERF_MEM_LVL_L3);
SAME(CP_MEM_LVL_LOC_RAM, PERF_MEM_LVL_LOC_RAM);
SAME(CP_MEM_LVL_REM_RAM1, PERF_MEM_LVL_REM_RAM1);
SAME(CP_MEM_LVL_REM_RAM2, PERF_MEM_LVL_REM_RAM2);
SAME(CP_MEM_LVL_REM_CCE1, PERF_MEM_LVL_REM_CCE1);
SAME(CP_MEM_LVL_REM_CCE2, PERF_MEM_LVL_REM_CCE2);
SAME(CP_MEM_LVL_IO, PERF_MEM_LVL_IO);
SAME(CP_MEM_LVL_UNC, PERF_MEM_LVL_UNC);
SAME(CP_MEM_SNOOP_SHIFT, PERF_MEM_SNOOP_SHIFT);
SAME(CP_MEM_SNOOP_NA, PERF_MEM_SNOOP_NA);
SAME(CP_MEM_SNOOP_NONE, PERF_MEM_SNOOP_NONE);
SAME(CP_MEM_SNOOP_HIT, PERF_MEM_SNOOP_HIT);
SAME(CP_MEM_SNOOP_MISS, PERF_MEM_SNOOP_MISS);
SAME(CP_MEM_SNOOP_HITM, PERF_MEM_SNOOP_HITM);
SAME(CP_MEM_LOCK_SHIFT, PERF_MEM_LOCK_SHIFT);
SAME(CP_MEM_LOCK_NA, PERF_MEM_LOCK_NA);
SAME(CP_MEM_LOCK_LOCKED, PERF_MEM_LOCK_LOCKED);
SAME(CP_MEM_TLB_SHIFT, PERF_MEM_TLB_SHIFT);
SAME(CP_MEM_TLB_NA, PERF_MEM_TLB_NA);
SAME(CP_MEM_TLB_HIT, PERF_MEM_TLB_HIT);
SAME(CP_MEM_TLB_MISS, PERF_MEM_TLB_MISS);
SAME(CP_MEM_TLB_L1, PERF_MEM_TLB_L1);
SAME(CP_MEM_TLB_L2, PERF_MEM_TLB_L2);
SAME(CP_MEM_TLB_WK, PERF_MEM_TLB_WK);
SAME(CP_MEM_TLB_OS, PERF_MEM_TLB_OS);
SAME(CP_MEM_LVLNUM_SHIFT, PERF_MEM_LVLNUM_SHIFT);
SAME(CP_MEM_LVLNUM_L1, PERF_MEM_LVLNUM_L1);
SAME(CP_MEM_LVLNUM_L2, PERF_MEM_LVLNUM_L2);
SAME(CP_MEM_LVLNUM_L3, PERF_MEM_LVLNUM_L3);
SAME(CP_MEM_LVLNUM_L4, PERF_MEM_LVLNUM_L4);
SAME(CP_MEM_LVLNUM_CXL, PERF_MEM_LVLNUM_CXL);
SAME(CP_MEM_LVLNUM_IO, PERF_MEM_LVLNUM_IO);
SAME(CP_MEM_LVLNUM_ANY_CACHE, PERF_MEM_LVLNUM_ANY_CACHE);
SAME(CP_MEM_LVLNUM_LFB, PERF_MEM_LVLNUM_LFB);
SAME(CP_MEM_LVLNUM_RAM, PERF_MEM_LVLNUM_RAM);
SAME(CP_MEM_LVLNUM_PMEM, PERF_MEM_LVLNUM_PMEM);
SAME(CP_MEM_LVLNUM_NA, PERF_MEM_LVLNUM_NA);
/* newer than some distribution headers (Debian 12 ships 6.1's) */
#ifdef PERF_MEM_LVLNUM_UNC
SAME(CP_MEM_LVLNUM_UNC, PERF_MEM_LVLNUM_UNC);
#endif
#ifdef PERF_MEM_LVLNUM_L2_MHB
SAME(CP_MEM_LVLNUM_L2_MHB, PERF_MEM_LVLNUM_L2_MHB);
SAME(CP_MEM_LVLNUM_MSC, PERF_MEM_LVLNUM_MSC);
#endif
#ifdef PERF_MEM_LVLNUM_L0
SAME(CP_MEM_LVLNUM_L0, PERF_MEM_LVLNUM_L0);
#endif
SAME(CP_MEM_REMOTE_SHIFT, PERF_MEM_REMOTE_SHIFT);
SAME(CP_MEM_REMOTE_REMOTE, PERF_MEM_REMOTE_REMOTE);
SAME(CP_MEM_SNOOPX_SHIFT, PERF_MEM_SNOOPX_SHIFT);
SAME(CP_MEM_SNOOPX_FWD, PERF_MEM_SNOOPX_FWD);
SAME(CP_MEM_SNOOPX_PEER, PERF_MEM_SNOOPX_PEER);
SAME(CP_MEM_BLK_SHIFT, PERF_MEM_BLK_SHIFT);
SAME(CP_MEM_BLK_NA, PERF_MEM_BLK_NA);
SAME(CP_MEM_BLK_DATA, PERF_MEM_BLK_DATA);
SAME(CP_MEM_BLK_ADDR, PERF_MEM_BLK_ADDR);
SAME(CP_MEM_HOPS_SHIFT, PERF_MEM_HOPS_SHIFT);
SAME(CP_MEM_HOPS_0, PERF_MEM_HOPS_0);
SAME(CP_MEM_HOPS_1, PERF_MEM_HOPS_1);
SAME(CP_MEM_HOPS_2, PERF_MEM_HOPS_2);
SAME(CP_MEM_HOPS_3, PERF_MEM_HOPS_3);
SAME(CP_MEM_NA, PERF_MEM_S(OP, NA) | PERF_MEM_S(LVL, NA) | PERF_MEM_S(SNOOP, NA) |
		PERF_MEM_S(LOCK, NA) | PERF_MEM_S(TLB, NA));
/* DESIGN.md: the two "not available" values kernels hand out */
SAME(CP_MEM_NA, 0x5080021ULL);
SAME(CP_MEM_NA_KERNEL, 0x1e05080021ULL);

/* The encoders' shorthands, spelled with the uapi macros. */
#define P(a, b)		PERF_MEM_S(a, b)
#define OP_LH		(P(OP, LOAD) | P(LVL, HIT))		/* ds.c OP_LH */
#define LN(x)		P(LVLNUM, x)
#define REM		P(REMOTE, REMOTE)
#define HOPS(x)		P(HOPS, x)
#define L(x)		(P(LVL, x) | P(LVL, HIT))		/* ibs.c L() */
/* pebs_set_tlb_lock() */
#define TLB_HIT		(P(TLB, HIT) | P(TLB, L1) | P(TLB, L2))
#define TLB_MISS	(P(TLB, MISS) | P(TLB, L2))
/* level numbers the 6.1 uapi header lacks, at their v6.18 values */
#define LN_UNC		CP_MEM_S(LVLNUM, UNC)
#define LN_L2_MHB	CP_MEM_S(LVLNUM, L2_MHB)

struct dcase {
	const char *what;
	__u64 val;
	__u8 op, lvl, snoop, tlb;
	bool miss, remote;
	const char *text;
};

static const struct dcase cases[] = {
	/* Intel PEBS load-latency table (pebs_data_source[], Sandy Bridge and later) */
	{ "PEBS 0x01 L1", OP_LH | P(LVL, L1) | LN(L1) | P(SNOOP, NONE) | TLB_HIT,
	  CP_OP_LOAD, CP_LVL_L1, CP_SNOOP_NONE, CP_TLB_HIT, false, false, "L1 hit" },
	{ "PEBS 0x02 LFB", OP_LH | P(LVL, LFB) | LN(LFB) | P(SNOOP, NONE) | TLB_HIT,
	  CP_OP_LOAD, CP_LVL_LFB, CP_SNOOP_NONE, CP_TLB_HIT, true, false, "LFB hit" },
	{ "PEBS 0x03 L2", OP_LH | P(LVL, L2) | LN(L2) | P(SNOOP, NONE),
	  CP_OP_LOAD, CP_LVL_L2, CP_SNOOP_NONE, CP_TLB_NA, true, false, "L2 hit" },
	{ "PEBS 0x04 L3", OP_LH | P(LVL, L3) | LN(L3) | P(SNOOP, NONE),
	  CP_OP_LOAD, CP_LVL_L3, CP_SNOOP_NONE, CP_TLB_NA, true, false, "L3 hit" },
	{ "PEBS 0x06 L3 snoop hit", OP_LH | P(LVL, L3) | LN(L3) | P(SNOOP, HIT),
	  CP_OP_LOAD, CP_LVL_L3, CP_SNOOP_HIT, CP_TLB_NA, true, false, "L3 hit snoop hit" },
	{ "PEBS 0x07 L3 HITM", OP_LH | P(LVL, L3) | LN(L3) | P(SNOOP, HITM),
	  CP_OP_LOAD, CP_LVL_L3, CP_SNOOP_HITM, CP_TLB_NA, true, false, "L3 hit HITM" },
	{ "PEBS 0x00 unknown L3 miss", P(OP, LOAD) | P(LVL, MISS) | LN(L3) | P(SNOOP, NA),
	  CP_OP_LOAD, CP_LVL_BEYOND, CP_SNOOP_NA, CP_TLB_NA, true, false, "L3 miss" },
	{ "PEBS 0x0c local DRAM", OP_LH | P(LVL, LOC_RAM) | LN(RAM) | P(SNOOP, NONE) |
	  P(SNOOP, MISS),
	  CP_OP_LOAD, CP_LVL_LOCAL_RAM, CP_SNOOP_MISS, CP_TLB_NA, true, false, "Local RAM" },
	{ "PEBS 0x0d remote DRAM (pre-Skylake)", OP_LH | P(LVL, REM_RAM1) | LN(RAM) | REM |
	  P(SNOOP, NONE) | P(SNOOP, MISS),
	  CP_OP_LOAD, CP_LVL_REMOTE_RAM, CP_SNOOP_MISS, CP_TLB_NA, true, true,
	  "Remote RAM (1 hop)" },
	/* the 0x0b quirk: lvl_num says L3, the old bits say remote DRAM */
	{ "PEBS 0x0b remote DRAM shared", OP_LH | P(LVL, REM_RAM1) | REM | LN(L3) | P(SNOOP, HIT),
	  CP_OP_LOAD, CP_LVL_REMOTE_RAM, CP_SNOOP_HIT, CP_TLB_NA, true, true,
	  "Remote RAM (1 hop) snoop hit" },
	{ "PEBS 0x09 remote cache HITM", OP_LH | P(LVL, REM_CCE1) | REM | LN(L3) | P(SNOOP, HITM),
	  CP_OP_LOAD, CP_LVL_REMOTE_CACHE, CP_SNOOP_HITM, CP_TLB_NA, true, true,
	  "Remote Cache (1 hop) HITM" },
	{ "PEBS 0x0e I/O", OP_LH | P(LVL, IO) | LN(NA) | P(SNOOP, NONE),
	  CP_OP_LOAD, CP_LVL_IO, CP_SNOOP_NONE, CP_TLB_NA, true, false, "I/O" },
	{ "PEBS 0x0f uncached", OP_LH | P(LVL, UNC) | LN(NA) | P(SNOOP, NONE),
	  CP_OP_LOAD, CP_LVL_UNCACHED, CP_SNOOP_NONE, CP_TLB_NA, true, false, "Uncached" },
	/* Skylake server (__intel_pmu_pebs_data_source_skl): remote via the remote bit */
	{ "SKL 0x08 L4", OP_LH | LN(L4) | P(SNOOP, HIT),
	  CP_OP_LOAD, CP_LVL_L4, CP_SNOOP_HIT, CP_TLB_NA, true, false, "L4 hit snoop hit" },
	{ "SKL 0x08 PMEM", OP_LH | LN(PMEM) | P(SNOOP, HIT),
	  CP_OP_LOAD, CP_LVL_PMEM, CP_SNOOP_HIT, CP_TLB_NA, true, false, "PMEM snoop hit" },
	{ "SKL 0x0b remote DRAM", OP_LH | LN(RAM) | REM | P(SNOOP, NONE),
	  CP_OP_LOAD, CP_LVL_REMOTE_RAM, CP_SNOOP_NONE, CP_TLB_NA, true, true, "Remote RAM" },
	{ "SKL 0x0c remote cache FWD", OP_LH | LN(ANY_CACHE) | REM | P(SNOOPX, FWD),
	  CP_OP_LOAD, CP_LVL_REMOTE_CACHE, CP_SNOOP_HIT, CP_TLB_NA, true, true,
	  "Remote Cache FWD" },
	{ "SKL 0x0d remote cache HITM", OP_LH | LN(ANY_CACHE) | REM | P(SNOOP, HITM),
	  CP_OP_LOAD, CP_LVL_REMOTE_CACHE, CP_SNOOP_HITM, CP_TLB_NA, true, true,
	  "Remote Cache HITM" },
	/* Gracemont / Crestmont atoms: XSNP_FWD */
	{ "GRT 0x08 L3 FWD", OP_LH | P(LVL, L3) | LN(L3) | P(SNOOPX, FWD),
	  CP_OP_LOAD, CP_LVL_L3, CP_SNOOP_HIT, CP_TLB_NA, true, false, "L3 hit FWD" },
	{ "CMT 0x0c remote FWD", OP_LH | LN(RAM) | REM | P(SNOOPX, FWD),
	  CP_OP_LOAD, CP_LVL_REMOTE_CACHE, CP_SNOOP_HIT, CP_TLB_NA, true, true,
	  "Remote Cache FWD" },
	/* old-bit-only encodings (pre-4.14 kernels, other architectures) */
	{ "remote cache 2 hops HITM", P(OP, LOAD) | L(REM_CCE2) | P(SNOOP, HITM),
	  CP_OP_LOAD, CP_LVL_REMOTE_CACHE, CP_SNOOP_HITM, CP_TLB_NA, true, true,
	  "Remote Cache (2 hops) HITM" },
	{ "remote DRAM 2 hops", P(OP, LOAD) | L(REM_RAM2),
	  CP_OP_LOAD, CP_LVL_REMOTE_RAM, CP_SNOOP_NA, CP_TLB_NA, true, true,
	  "Remote RAM (2 hops)" },
	/* precise stores (precise_store_data): old bits only, L1 hit or L1 miss */
	{ "store L1 hit", P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(TLB, L2) | P(TLB, HIT) |
	  P(LVL, HIT),
	  CP_OP_STORE, CP_LVL_L1, CP_SNOOP_NA, CP_TLB_HIT, false, false, "L1 hit" },
	{ "store L1 miss", P(OP, STORE) | P(SNOOP, NA) | P(LVL, L1) | P(TLB, L2) | P(TLB, HIT) |
	  P(LVL, MISS),
	  CP_OP_STORE, CP_LVL_BEYOND, CP_SNOOP_NA, CP_TLB_HIT, true, false, "L1 miss" },
	{ "locked L1 hit", OP_LH | P(LVL, L1) | LN(L1) | P(SNOOP, NONE) | TLB_HIT |
	  P(LOCK, LOCKED),
	  CP_OP_LOAD, CP_LVL_L1, CP_SNOOP_NONE, CP_TLB_HIT, false, false, "L1 hit, locked" },
	{ "L2 hit, STLB miss", OP_LH | P(LVL, L2) | LN(L2) | P(SNOOP, NONE) | TLB_MISS,
	  CP_OP_LOAD, CP_LVL_L2, CP_SNOOP_NONE, CP_TLB_MISS, true, false, "L2 hit, TLB miss" },
	{ "L1 hit, blocked by a store", OP_LH | P(LVL, L1) | LN(L1) | P(SNOOP, NONE) | TLB_HIT |
	  P(BLK, DATA),
	  CP_OP_LOAD, CP_LVL_L1, CP_SNOOP_NONE, CP_TLB_HIT, false, false, "L1 hit, blocked" },
	/* AMD IBS (Zen 4 g_zen4_data_src[], older g_data_src[]) */
	{ "IBS L1", P(OP, LOAD) | L(L1) | LN(L1),
	  CP_OP_LOAD, CP_LVL_L1, CP_SNOOP_NA, CP_TLB_NA, false, false, "L1 hit" },
	{ "IBS MAB (LFB)", P(OP, LOAD) | L(LFB) | LN(LFB),
	  CP_OP_LOAD, CP_LVL_LFB, CP_SNOOP_NA, CP_TLB_NA, true, false, "LFB hit" },
	{ "IBS local cache (pre-Zen 4)", P(OP, LOAD) | L(L3) | L(REM_CCE1) | LN(ANY_CACHE) |
	  HOPS(0),
	  CP_OP_LOAD, CP_LVL_L3, CP_SNOOP_NA, CP_TLB_NA, true, false, "L3 hit" },
	/* another CCX of this socket: the remote bit, but HOPS_0 (same node): not remote */
	{ "IBS near CCX cache", P(OP, LOAD) | L(REM_CCE1) | LN(ANY_CACHE) | REM | HOPS(0),
	  CP_OP_LOAD, CP_LVL_REMOTE_CACHE, CP_SNOOP_NA, CP_TLB_NA, true, false,
	  "Remote Cache (other core)" },
	{ "IBS far CCX cache HITM", P(OP, LOAD) | L(REM_CCE2) | LN(ANY_CACHE) | REM | HOPS(1) |
	  P(SNOOP, HITM),
	  CP_OP_LOAD, CP_LVL_REMOTE_CACHE, CP_SNOOP_HITM, CP_TLB_NA, true, true,
	  "Remote Cache (other node) HITM" },
	{ "IBS remote DRAM", P(OP, LOAD) | L(REM_RAM1) | LN(RAM) | REM | HOPS(1),
	  CP_OP_LOAD, CP_LVL_REMOTE_RAM, CP_SNOOP_NA, CP_TLB_NA, true, true,
	  "Remote RAM (other node)" },
	/* lvl_num only: no old bits at all */
	{ "IBS PMEM", P(OP, LOAD) | LN(PMEM),
	  CP_OP_LOAD, CP_LVL_PMEM, CP_SNOOP_NA, CP_TLB_NA, true, false, "PMEM" },
	{ "IBS remote PMEM", P(OP, LOAD) | LN(PMEM) | REM | HOPS(1),
	  CP_OP_LOAD, CP_LVL_PMEM, CP_SNOOP_NA, CP_TLB_NA, true, true, "Remote PMEM (other node)" },
	{ "IBS CXL", P(OP, LOAD) | LN(CXL),
	  CP_OP_LOAD, CP_LVL_CXL, CP_SNOOP_NA, CP_TLB_NA, true, false, "CXL" },
	{ "IBS uncached", P(OP, LOAD) | L(UNC) | LN_UNC,
	  CP_OP_LOAD, CP_LVL_UNCACHED, CP_SNOOP_NA, CP_TLB_NA, true, false, "Uncached" },
	{ "lvl_num remote cache, other socket, HITM", P(OP, STORE) | LN(ANY_CACHE) | REM |
	  HOPS(2) | P(SNOOP, HITM),
	  CP_OP_STORE, CP_LVL_REMOTE_CACHE, CP_SNOOP_HITM, CP_TLB_NA, true, true,
	  "Remote Cache (other socket) HITM" },
	{ "Lunar Lake L2 MHB", OP_LH | LN_L2_MHB | P(SNOOP, NONE),
	  CP_OP_LOAD, CP_LVL_LFB, CP_SNOOP_NONE, CP_TLB_NA, true, false, "LFB hit" },
	{ "ARM SPE peer L2", P(OP, LOAD) | P(LVL, HIT) | LN(L2) | P(SNOOPX, PEER),
	  CP_OP_LOAD, CP_LVL_L2, CP_SNOOP_NA, CP_TLB_NA, true, false, "L2 hit PEER" },
	{ "prefetch L1 hit", P(OP, PFETCH) | L(L1) | LN(L1),
	  CP_OP_PFETCH, CP_LVL_L1, CP_SNOOP_NA, CP_TLB_NA, false, false, "L1 hit" },
	/* not available */
	{ "old PERF_MEM_NA", 0x5080021ULL,
	  CP_OP_NA, CP_LVL_NA, CP_SNOOP_NA, CP_TLB_NA, false, false, "N/A" },
	{ "kernel PERF_MEM_NA", 0x1e05080021ULL,
	  CP_OP_NA, CP_LVL_NA, CP_SNOOP_NA, CP_TLB_NA, false, false, "N/A" },
	{ "IBS load, level unknown", P(OP, LOAD) | P(LVL, NA) | LN(NA),
	  CP_OP_LOAD, CP_LVL_NA, CP_SNOOP_NA, CP_TLB_NA, false, false, "N/A" },
	{ "IBS other op", P(OP, NA),
	  CP_OP_NA, CP_LVL_NA, CP_SNOOP_NA, CP_TLB_NA, false, false, "N/A" },
	{ "zero (no data_src at all)", 0,
	  CP_OP_NA, CP_LVL_NA, CP_SNOOP_NA, CP_TLB_NA, false, false, "N/A" },
	/* a HIT bit with no level named is still unknown, not an L1 hit */
	{ "hit without a level", P(OP, LOAD) | P(LVL, HIT),
	  CP_OP_LOAD, CP_LVL_NA, CP_SNOOP_NA, CP_TLB_NA, false, false, "N/A" },
};

static void test_decode_table(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		const struct dcase *c = &cases[i];
		struct cp_data_src d;
		char text[96];

		memset(&d, 0xa5, sizeof(d));
		cp_data_src_decode(c->val, &d);
		print_message("# %-42s %#014llx -> %s\n", c->what, (unsigned long long)c->val,
			      cp_mem_lvl_name(d.lvl));
		assert_int_equal(d.op, c->op);
		assert_int_equal(d.lvl, c->lvl);
		assert_int_equal(d.snoop, c->snoop);
		assert_int_equal(d.tlb, c->tlb);
		assert_int_equal(d.miss, c->miss);
		assert_int_equal(d.remote, c->remote);
		assert_int_equal(cp_data_src_text(&d, text, sizeof(text)), strlen(c->text));
		assert_string_equal(text, c->text);
	}
}

/*
 * What the event knows better (cp_data_src_for_event()), on the values the
 * kernel emits. The numbers are computed by hand from the encoders and
 * written out, so that the macros above cannot cancel a mistake:
 *  - cpu_atom mem-stores (event 0xd0 umask 0x6): __grt_latency_data() in
 *    arch/x86/events/intel/ds.c indexes the load table pebs_data_source[]
 *    (OP_LH = OP LOAD | LVL HIT), e.g. dse 0x01 "L1 hit", TLB HIT|L1|L2,
 *    LOCK 0, BLK NA: 0x10268100142; dse 0x00 (miss, LEVEL(L3), SNOOP NA):
 *    0x10668080082. mem_op says load; the event is mem-stores.
 *  - IBS store that missed L1 and L2 (IbsOpData3 st_op, dc_miss, l2_miss;
 *    no MAB hit): perf_ibs_get_mem_lvl() in arch/x86/events/amd/ibs.c skips
 *    the data source (loads only) and returns LVL NA | LN(NA); with dTLB
 *    L1 hit: 0x1e29080024. A store L1 hit is 0x229080144.
 *  - IBS read-modify-write: perf_ibs_get_mem_op() tests ld_op first, so it
 *    is a load (0x1a29081042: local DRAM): nothing in data_src tells it from
 *    a load, and it stays one.
 */
struct ecase {
	const char *what;
	__u8 event;
	__u64 val;
	__u8 op, lvl, miss_lvl;
	bool miss;
};

static const struct ecase ecases[] = {
	{ "atom store L1 hit", CP_SEV_STORE, 0x10268100142ULL, CP_OP_STORE, CP_LVL_L1, CP_LVL_NA, false },
	{ "atom store L1 hit, no cookie", CP_SEV_UNKNOWN, 0x10268100142ULL, CP_OP_LOAD, CP_LVL_L1,
	  CP_LVL_NA, false },
	{ "atom store miss", CP_SEV_STORE, 0x10668080082ULL, CP_OP_STORE, CP_LVL_BEYOND, CP_LVL_L3,
	  true },
	{ "atom load L1 hit", CP_SEV_LOAD, 0x10268100142ULL, CP_OP_LOAD, CP_LVL_L1, CP_LVL_NA, false },
	{ "IBS store past L2", CP_SEV_IBS, 0x1e29080024ULL, CP_OP_STORE, CP_LVL_BEYOND, CP_LVL_L2,
	  true },
	{ "IBS store past L2, no cookie", CP_SEV_UNKNOWN, 0x1e29080024ULL, CP_OP_STORE, CP_LVL_NA,
	  CP_LVL_NA, false },
	{ "IBS store L1 hit", CP_SEV_IBS, 0x229080144ULL, CP_OP_STORE, CP_LVL_L1, CP_LVL_NA, false },
	{ "IBS RMW (a load) from DRAM", CP_SEV_IBS, 0x1a29081042ULL, CP_OP_LOAD, CP_LVL_LOCAL_RAM,
	  CP_LVL_NA, true },
	/* a load of unknown level stays unknown: only stores are known to have missed */
	{ "IBS load, level unknown", CP_SEV_IBS, 0x1e29080022ULL, CP_OP_LOAD, CP_LVL_NA, CP_LVL_NA,
	  false },
};

static void test_for_event(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ecases) / sizeof(ecases[0]); i++) {
		const struct ecase *c = &ecases[i];
		struct cp_data_src d;

		print_message("# %s\n", c->what);
		cp_data_src_decode(cp_data_src_for_event(c->event, c->val), &d);
		assert_int_equal(d.op, c->op);
		assert_int_equal(d.lvl, c->lvl);
		assert_int_equal(d.miss_lvl, c->miss_lvl);
		assert_int_equal(d.miss, c->miss);
	}
	/* only the op changes for PEBS events; everything else stays */
	assert_int_equal(cp_data_src_for_event(CP_SEV_STORE, 0x10268100142ULL), 0x10268100144ULL);
	assert_int_equal(cp_data_src_for_event(CP_SEV_UNKNOWN, 0x1e29080024ULL), 0x1e29080024ULL);
	/* the IBS store past L2 becomes "L2 miss", the TLB and the rest kept */
	assert_int_equal(cp_data_src_for_event(CP_SEV_IBS, 0x1e29080024ULL), 0x429080484ULL);
}

/* The fields the table does not cover one by one. */
static void test_decode_details(void **state)
{
	struct cp_data_src d;

	(void)state;
	cp_data_src_decode(P(OP, STORE) | P(LVL, L1) | P(LVL, MISS), &d);
	assert_int_equal(d.miss_lvl, CP_LVL_L1);
	cp_data_src_decode(P(OP, LOAD) | P(LVL, MISS) | LN(L3), &d);
	assert_int_equal(d.miss_lvl, CP_LVL_L3);
	cp_data_src_decode(OP_LH | P(LVL, L3) | LN(L3), &d);
	assert_int_equal(d.miss_lvl, CP_LVL_NA);

	cp_data_src_decode(OP_LH | P(LVL, L1) | LN(L1) | P(LOCK, LOCKED) | P(BLK, ADDR), &d);
	assert_true(d.locked);
	assert_int_equal(d.blk, CP_MEM_BLK_ADDR);
	cp_data_src_decode(OP_LH | P(LVL, L1) | LN(L1) | P(LOCK, NA) | P(BLK, NA), &d);
	assert_false(d.locked);
	assert_int_equal(d.blk, 0);

	cp_data_src_decode(P(OP, LOAD) | LN(ANY_CACHE) | REM | HOPS(3), &d);
	assert_int_equal(d.hops, PERF_MEM_HOPS_3);
	assert_int_equal(d.lvl_hops, 0);
	cp_data_src_decode(P(OP, LOAD) | L(REM_CCE2), &d);
	assert_int_equal(d.hops, 0);
	assert_int_equal(d.lvl_hops, 2);

	cp_data_src_decode(OP_LH | LN(ANY_CACHE) | REM | P(SNOOPX, FWD), &d);
	assert_true(d.fwd);
	assert_false(d.peer);
	/* FWD with HITM stays HITM: the modified copy is the stronger fact */
	cp_data_src_decode(OP_LH | LN(L3) | P(SNOOP, HITM) | P(SNOOPX, FWD), &d);
	assert_int_equal(d.snoop, CP_SNOOP_HITM);
	/* an RMW sets both op bits: a store for coherence */
	cp_data_src_decode(P(OP, LOAD) | P(OP, STORE) | L(L1), &d);
	assert_int_equal(d.op, CP_OP_STORE);
	cp_data_src_decode(P(OP, EXEC) | L(L2), &d);
	assert_int_equal(d.op, CP_OP_EXEC);
	/* L0 (newest Intel cores) is closer than L1: a hit */
	cp_data_src_decode(OP_LH | CP_MEM_S(LVLNUM, L0), &d);
	assert_int_equal(d.lvl, CP_LVL_L1);
	assert_false(d.miss);
	/* memory-side cache: past the LLC */
	cp_data_src_decode(OP_LH | CP_MEM_S(LVLNUM, MSC), &d);
	assert_int_equal(d.lvl, CP_LVL_L4);
	assert_true(d.miss);
}

/* Any 64-bit value decodes to in-range fields, and "miss" means what it says. */
static void test_decode_total(void **state)
{
	__u64 x = 0x9e3779b97f4a7c15ULL;

	(void)state;
	for (int i = 0; i < 200000; i++) {
		struct cp_data_src d;
		char text[96];
		int n;

		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		cp_data_src_decode(x & 0xffffffffffffULL, &d);
		assert_true(d.op <= CP_OP_EXEC);
		assert_true(d.lvl < CP_LVL_NR);
		assert_true(d.snoop <= CP_SNOOP_HITM);
		assert_true(d.tlb <= CP_TLB_MISS);
		assert_true(d.hops <= 7);
		assert_int_equal(d.miss, d.lvl != CP_LVL_NA && d.lvl != CP_LVL_L1);
		assert_int_equal(d.lvl == CP_LVL_BEYOND, d.miss_lvl != CP_LVL_NA);
		/* another core's cache of this node (HOPS_0) is the one not remote */
		if (d.lvl == CP_LVL_REMOTE_RAM ||
		    (d.lvl == CP_LVL_REMOTE_CACHE && d.hops != CP_MEM_HOPS_0))
			assert_true(d.remote);
		n = cp_data_src_text(&d, text, sizeof(text));
		assert_true(n > 0 && (size_t)n < sizeof(text));
		assert_int_equal(strlen(text), n);
	}
}

static void test_text_truncates_like_snprintf(void **state)
{
	struct cp_data_src d;
	char small[8], one[1] = { 'x' };

	(void)state;
	cp_data_src_decode(P(OP, LOAD) | L(REM_CCE1) | P(SNOOP, HITM), &d);
	assert_int_equal(cp_data_src_text(&d, small, sizeof(small)),
			 strlen("Remote Cache (1 hop) HITM"));
	assert_string_equal(small, "Remote ");
	assert_int_equal(cp_data_src_text(&d, one, sizeof(one)), 25);
	assert_int_equal(one[0], '\0');
	assert_int_equal(cp_data_src_text(&d, NULL, 0), 25);
	assert_string_equal(cp_mem_lvl_name(CP_LVL_NR), "?");
	assert_string_equal(cp_mem_lvl_name(CP_LVL_LOCAL_RAM), "Local RAM");
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_decode_table),
		cmocka_unit_test(test_decode_details),
		cmocka_unit_test(test_for_event),
		cmocka_unit_test(test_decode_total),
		cmocka_unit_test(test_text_truncates_like_snprintf),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
