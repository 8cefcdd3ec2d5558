/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * perf_mem_data_src decoding, shared by the BPF programs and user space.
 *
 * The kernel describes a sampled access in one __u64 (union perf_mem_data_src
 * in <linux/perf_event.h>). BPF objects cannot include that uapi header next
 * to vmlinux.h, so the bit positions are repeated here as CP_MEM_*; the unit
 * test asserts at compile time that every one equals its PERF_MEM_* twin.
 *
 * Two generations of encoding coexist and the kernel often fills both:
 *  - the old one-hot mem_lvl bits (PERF_MEM_LVL_L1 ... _UNC, plus HIT/MISS/NA);
 *  - since 4.14 the level number mem_lvl_num at bit 33 with the separate
 *    remote bit 37, the extended snoop bits 38 (FWD, PEER), the blocked
 *    bits 40 and the hop distance at bit 43.
 * Encoders differ: Intel PEBS (arch/x86/events/intel/ds.c) sets both for loads
 * but only old bits for precise stores; AMD IBS (arch/x86/events/amd/ibs.c)
 * sets lvl_num with REMOTE and HOPS, and for PMEM and CXL nothing else. We
 * trust lvl_num when it names a level and fall back to the old bits.
 */
#ifndef CACHEPERF_DATA_SRC_H
#define CACHEPERF_DATA_SRC_H

#include "cacheperf/types.h"

/* The level that served an access, as the classifier counts it. */
enum cp_mem_lvl {
	CP_LVL_NA = 0, /* not available: unknown, never a miss */
	CP_LVL_L1,
	CP_LVL_LFB, /* line fill buffer: a miss already in flight */
	CP_LVL_L2,
	CP_LVL_L3,
	CP_LVL_LOCAL_RAM,
	CP_LVL_REMOTE_RAM,
	CP_LVL_REMOTE_CACHE, /* another node's (or, with FWD, another core's) cache */
	CP_LVL_PMEM,
	CP_LVL_IO,
	CP_LVL_UNCACHED,
	CP_LVL_L4,     /* a cache past the LLC: eDRAM L4, memory-side cache */
	CP_LVL_CXL,    /* CXL-attached memory */
	CP_LVL_BEYOND, /* past cp_data_src.miss_lvl, which it missed; where: unknown */
	CP_LVL_NR,
};

enum cp_mem_op {
	CP_OP_NA = 0, /* not a load or store we know of (IBS: any other op) */
	CP_OP_LOAD,
	CP_OP_STORE,
	CP_OP_PFETCH,
	CP_OP_EXEC,
};

enum cp_snoop {
	CP_SNOOP_NA = 0,
	CP_SNOOP_NONE, /* no snoop needed */
	CP_SNOOP_MISS, /* snooped, no other cache had the line */
	CP_SNOOP_HIT,  /* another core's cache had a clean copy */
	CP_SNOOP_HITM, /* another core's cache had it modified */
};

enum cp_tlb {
	CP_TLB_NA = 0,
	CP_TLB_HIT,
	CP_TLB_MISS,
};

/*
 * Which event took a sample: the bpf_cookie of the program's perf_event link
 * (kernel 5.15+; user/live/perf_events.c sets it from the event's role).
 * The event decides over data_src.mem_op where the kernel's decoding gets
 * the operation wrong (cp_data_src_for_event() below).
 */
enum cp_sample_event {
	CP_SEV_UNKNOWN = 0, /* no cookie (before 5.15), software events, soft ticks */
	CP_SEV_LOAD,	    /* PEBS mem-loads */
	CP_SEV_STORE,	    /* PEBS mem-stores */
	CP_SEV_IBS,	    /* AMD IBS op: any op, data_src.mem_op tells */
};

/*
 * Bit positions and values of union perf_mem_data_src, as in the uapi header
 * (v6.18). L2_MHB, MSC, L0 and UNC level numbers are newer than some distro
 * headers; the unit test checks those only where the header has them.
 */
#define CP_MEM_OP_SHIFT	 0
#define CP_MEM_OP_NA	 0x01ULL
#define CP_MEM_OP_LOAD	 0x02ULL
#define CP_MEM_OP_STORE	 0x04ULL
#define CP_MEM_OP_PFETCH 0x08ULL
#define CP_MEM_OP_EXEC	 0x10ULL

#define CP_MEM_LVL_SHIFT    5
#define CP_MEM_LVL_NA	    0x01ULL
#define CP_MEM_LVL_HIT	    0x02ULL
#define CP_MEM_LVL_MISS	    0x04ULL
#define CP_MEM_LVL_L1	    0x08ULL
#define CP_MEM_LVL_LFB	    0x10ULL
#define CP_MEM_LVL_L2	    0x20ULL
#define CP_MEM_LVL_L3	    0x40ULL
#define CP_MEM_LVL_LOC_RAM  0x80ULL
#define CP_MEM_LVL_REM_RAM1 0x100ULL
#define CP_MEM_LVL_REM_RAM2 0x200ULL
#define CP_MEM_LVL_REM_CCE1 0x400ULL
#define CP_MEM_LVL_REM_CCE2 0x800ULL
#define CP_MEM_LVL_IO	    0x1000ULL
#define CP_MEM_LVL_UNC	    0x2000ULL

#define CP_MEM_SNOOP_SHIFT 19
#define CP_MEM_SNOOP_NA	   0x01ULL
#define CP_MEM_SNOOP_NONE  0x02ULL
#define CP_MEM_SNOOP_HIT   0x04ULL
#define CP_MEM_SNOOP_MISS  0x08ULL
#define CP_MEM_SNOOP_HITM  0x10ULL

#define CP_MEM_LOCK_SHIFT  24
#define CP_MEM_LOCK_NA	   0x01ULL
#define CP_MEM_LOCK_LOCKED 0x02ULL

#define CP_MEM_TLB_SHIFT 26
#define CP_MEM_TLB_NA	 0x01ULL
#define CP_MEM_TLB_HIT	 0x02ULL
#define CP_MEM_TLB_MISS	 0x04ULL
#define CP_MEM_TLB_L1	 0x08ULL
#define CP_MEM_TLB_L2	 0x10ULL
#define CP_MEM_TLB_WK	 0x20ULL
#define CP_MEM_TLB_OS	 0x40ULL

#define CP_MEM_LVLNUM_SHIFT	33
#define CP_MEM_LVLNUM_L1	0x01ULL
#define CP_MEM_LVLNUM_L2	0x02ULL
#define CP_MEM_LVLNUM_L3	0x03ULL
#define CP_MEM_LVLNUM_L4	0x04ULL
#define CP_MEM_LVLNUM_L2_MHB	0x05ULL /* L2 miss handling buffer */
#define CP_MEM_LVLNUM_MSC	0x06ULL /* memory-side cache */
#define CP_MEM_LVLNUM_L0	0x07ULL
#define CP_MEM_LVLNUM_UNC	0x08ULL
#define CP_MEM_LVLNUM_CXL	0x09ULL
#define CP_MEM_LVLNUM_IO	0x0aULL
#define CP_MEM_LVLNUM_ANY_CACHE 0x0bULL
#define CP_MEM_LVLNUM_LFB	0x0cULL
#define CP_MEM_LVLNUM_RAM	0x0dULL
#define CP_MEM_LVLNUM_PMEM	0x0eULL
#define CP_MEM_LVLNUM_NA	0x0fULL

#define CP_MEM_REMOTE_SHIFT  37
#define CP_MEM_REMOTE_REMOTE 0x01ULL

#define CP_MEM_SNOOPX_SHIFT 38
#define CP_MEM_SNOOPX_FWD   0x01ULL
#define CP_MEM_SNOOPX_PEER  0x02ULL

#define CP_MEM_BLK_SHIFT 40
#define CP_MEM_BLK_NA	 0x01ULL
#define CP_MEM_BLK_DATA	 0x02ULL
#define CP_MEM_BLK_ADDR	 0x04ULL

#define CP_MEM_HOPS_SHIFT 43
#define CP_MEM_HOPS_0	  0x01ULL /* remote core, same node */
#define CP_MEM_HOPS_1	  0x02ULL /* remote node, same socket */
#define CP_MEM_HOPS_2	  0x03ULL /* remote socket, same board */
#define CP_MEM_HOPS_3	  0x04ULL /* remote board */

#define CP_MEM_S(field, val) ((__u64)CP_MEM_##field##_##val << CP_MEM_##field##_SHIFT)

/*
 * "Nothing known", 0x5080021: PERF_MEM_NA of kernels before lvl_num NA was
 * added to it, and of perf's own tools. PERF_MEM_NA is not uapi.
 */
#define CP_MEM_NA                                                                                  \
	(CP_MEM_S(OP, NA) | CP_MEM_S(LVL, NA) | CP_MEM_S(SNOOP, NA) | CP_MEM_S(LOCK, NA) |         \
	 CP_MEM_S(TLB, NA))
/* Today's PERF_MEM_NA (include/linux/perf_event.h) also sets lvl_num NA: 0x1e05080021. */
#define CP_MEM_NA_KERNEL (CP_MEM_NA | CP_MEM_S(LVLNUM, NA))

/* One decoded sample source; every field is known-or-NA, never garbage. */
struct cp_data_src {
	__u8 op;       /* enum cp_mem_op */
	__u8 lvl;      /* enum cp_mem_lvl: the level that served the access */
	__u8 miss_lvl; /* with CP_LVL_BEYOND: the level reported as missed (L1, L3) */
	__u8 snoop;    /* enum cp_snoop, after folding in SNOOPX_FWD */
	__u8 tlb;      /* enum cp_tlb */
	__u8 hops;     /* raw mem_hops: CP_MEM_HOPS_0..3, 0 if not reported */
	__u8 lvl_hops; /* 1 or 2 from the old REM_RAM1/2, REM_CCE1/2 bits, else 0 */
	__u8 blk;      /* CP_MEM_BLK_DATA | CP_MEM_BLK_ADDR: load blocked by a store */
	bool remote;   /* served from another node (or socket) */
	bool locked;   /* locked (atomic) access */
	bool fwd;      /* snoopx FWD: data forwarded from another core's cache */
	bool peer;     /* snoopx PEER: data transferred from a peer cache */
	bool miss;     /* not served by L1 (an LFB hit is a miss in flight); never for NA */
};

/* The level named by a valid lvl_num, or CP_LVL_NA to fall back to the old bits. */
CP_INLINE __u8 cp_data_src_lvlnum(__u64 num, __u64 old, bool remote)
{
	switch (num) {
	case CP_MEM_LVLNUM_L0: /* closer than L1: not a miss */
	case CP_MEM_LVLNUM_L1:
		return CP_LVL_L1;
	case CP_MEM_LVLNUM_LFB:
	/*
	 * Lunar Lake and later: the line is already being fetched by an L2
	 * miss. Like an LFB hit it is a miss in flight, not an L2 hit.
	 */
	case CP_MEM_LVLNUM_L2_MHB:
		return CP_LVL_LFB;
	case CP_MEM_LVLNUM_L2:
		return CP_LVL_L2;
	case CP_MEM_LVLNUM_L3:
		/*
		 * Sandy Bridge .. Broadwell encoding 0x0b (remote DRAM, shared)
		 * carries lvl_num L3 but the old bits say REM_RAM1: believe the
		 * old bits, the line came from remote memory.
		 */
		if (old & (CP_MEM_LVL_REM_RAM1 | CP_MEM_LVL_REM_RAM2))
			return CP_LVL_REMOTE_RAM;
		return remote ? CP_LVL_REMOTE_CACHE : CP_LVL_L3;
	case CP_MEM_LVLNUM_L4:
	case CP_MEM_LVLNUM_MSC:
		return remote ? CP_LVL_REMOTE_CACHE : CP_LVL_L4;
	case CP_MEM_LVLNUM_ANY_CACHE:
		/*
		 * Skylake and later report a remote socket's cache as ANY_CACHE
		 * plus the separate remote bit (ds.c, encodings 0x0c/0x0d). AMD
		 * IBS before Zen 4 says ANY_CACHE + HOPS_0 without the remote bit
		 * for "L3 or a peer core in this CCX": served within the local
		 * last-level cache domain, so L3.
		 */
		return remote ? CP_LVL_REMOTE_CACHE : CP_LVL_L3;
	case CP_MEM_LVLNUM_RAM:
		return remote ? CP_LVL_REMOTE_RAM : CP_LVL_LOCAL_RAM;
	case CP_MEM_LVLNUM_PMEM:
		return CP_LVL_PMEM;
	case CP_MEM_LVLNUM_CXL:
		return CP_LVL_CXL;
	case CP_MEM_LVLNUM_IO:
		return CP_LVL_IO;
	case CP_MEM_LVLNUM_UNC:
		return CP_LVL_UNCACHED;
	default: /* 0: not filled (old kernels, precise stores); NA */
		return CP_LVL_NA;
	}
}

/* The level named by the old one-hot bits, the closest one if several are set. */
CP_INLINE __u8 cp_data_src_lvlbits(__u64 old)
{
	if (old & CP_MEM_LVL_L1)
		return CP_LVL_L1;
	if (old & CP_MEM_LVL_LFB)
		return CP_LVL_LFB;
	if (old & CP_MEM_LVL_L2)
		return CP_LVL_L2;
	/* AMD IBS says "L3 | REM_CCE1" for its local cache: L3 wins */
	if (old & CP_MEM_LVL_L3)
		return CP_LVL_L3;
	if (old & CP_MEM_LVL_LOC_RAM)
		return CP_LVL_LOCAL_RAM;
	if (old & (CP_MEM_LVL_REM_RAM1 | CP_MEM_LVL_REM_RAM2))
		return CP_LVL_REMOTE_RAM;
	if (old & (CP_MEM_LVL_REM_CCE1 | CP_MEM_LVL_REM_CCE2))
		return CP_LVL_REMOTE_CACHE;
	if (old & CP_MEM_LVL_IO)
		return CP_LVL_IO;
	if (old & CP_MEM_LVL_UNC)
		return CP_LVL_UNCACHED;
	return CP_LVL_NA;
}

/*
 * Decodes the raw perf_mem_data_src value @v into @d. Pure and total: any
 * 64-bit value gives a consistent result, unknown parts decode as NA. An
 * access is a miss when something other than L1 served it; "L1 miss" and
 * "L3 miss" without a serving level (Intel precise stores, PEBS encoding 0)
 * are misses at CP_LVL_BEYOND; an NA level is never a miss.
 */
CP_INLINE void cp_data_src_decode(__u64 v, struct cp_data_src *d)
{
	__u64 op = (v >> CP_MEM_OP_SHIFT) & 0x1f;
	__u64 old = (v >> CP_MEM_LVL_SHIFT) & 0x3fff;
	__u64 snoop = (v >> CP_MEM_SNOOP_SHIFT) & 0x1f;
	__u64 tlb = (v >> CP_MEM_TLB_SHIFT) & 0x7f;
	__u64 num = (v >> CP_MEM_LVLNUM_SHIFT) & 0xf;
	__u64 snoopx = (v >> CP_MEM_SNOOPX_SHIFT) & 0x3;
	__u8 lvl;

	d->remote = (v >> CP_MEM_REMOTE_SHIFT) & CP_MEM_REMOTE_REMOTE;
	d->locked = (v >> CP_MEM_LOCK_SHIFT) & CP_MEM_LOCK_LOCKED;
	d->blk = (v >> CP_MEM_BLK_SHIFT) & (CP_MEM_BLK_DATA | CP_MEM_BLK_ADDR);
	d->hops = (v >> CP_MEM_HOPS_SHIFT) & 0x7;
	d->fwd = snoopx & CP_MEM_SNOOPX_FWD;
	d->peer = snoopx & CP_MEM_SNOOPX_PEER;

	/* A store that also loads (RMW) needs ownership: count it as a store. */
	if (op & CP_MEM_OP_STORE)
		d->op = CP_OP_STORE;
	else if (op & CP_MEM_OP_LOAD)
		d->op = CP_OP_LOAD;
	else if (op & CP_MEM_OP_PFETCH)
		d->op = CP_OP_PFETCH;
	else if (op & CP_MEM_OP_EXEC)
		d->op = CP_OP_EXEC;
	else
		d->op = CP_OP_NA;

	if (snoop & CP_MEM_SNOOP_HITM)
		d->snoop = CP_SNOOP_HITM;
	else if (snoop & CP_MEM_SNOOP_HIT)
		d->snoop = CP_SNOOP_HIT;
	else if (snoop & CP_MEM_SNOOP_MISS)
		d->snoop = CP_SNOOP_MISS;
	else if (snoop & CP_MEM_SNOOP_NONE)
		d->snoop = CP_SNOOP_NONE;
	else
		d->snoop = CP_SNOOP_NA;

	if (tlb & CP_MEM_TLB_MISS)
		d->tlb = CP_TLB_MISS;
	else if (tlb & CP_MEM_TLB_HIT)
		d->tlb = CP_TLB_HIT;
	else
		d->tlb = CP_TLB_NA;

	lvl = cp_data_src_lvlnum(num, old, d->remote);
	if (lvl == CP_LVL_NA)
		lvl = cp_data_src_lvlbits(old);

	/*
	 * Intel XSNP_FWD (snoopx FWD; Goldmont+ atoms, Ice Lake and later
	 * servers): another core's cache held the line and forwarded it. It is
	 * a snoop hit; when that core is remote the line came from a remote
	 * cache, even where Crestmont's encoding 0x0c says lvl_num RAM.
	 */
	if (d->fwd && d->snoop != CP_SNOOP_HITM)
		d->snoop = CP_SNOOP_HIT;
	if (d->fwd && d->remote && lvl != CP_LVL_NA)
		lvl = CP_LVL_REMOTE_CACHE;

	/*
	 * HOPS_0 is "remote core, same node": AMD Zen 4's near-CCX cache (IBS
	 * g_zen4_data_src[EXT_NEAR_CCX_CACHE] = REM_CCE1 | ANY_CACHE | REM |
	 * HOPS(0)) sets the remote bit for another CCX's cache of this socket.
	 * Another core's cache, not another node's: never remote.
	 */
	if (d->hops == CP_MEM_HOPS_0 && lvl != CP_LVL_REMOTE_RAM)
		d->remote = false;
	else if (lvl == CP_LVL_REMOTE_RAM || lvl == CP_LVL_REMOTE_CACHE)
		d->remote = true;
	d->lvl_hops = 0;
	if (!d->remote)
		d->lvl_hops = 0;
	else if (lvl == CP_LVL_REMOTE_RAM)
		d->lvl_hops = (old & CP_MEM_LVL_REM_RAM2) ? 2 : (old & CP_MEM_LVL_REM_RAM1) ? 1 : 0;
	else if (lvl == CP_LVL_REMOTE_CACHE)
		d->lvl_hops = (old & CP_MEM_LVL_REM_CCE2) ? 2 : (old & CP_MEM_LVL_REM_CCE1) ? 1 : 0;

	/* "missed this level" without a serving level: Intel stores, PEBS 0x00 */
	d->miss_lvl = CP_LVL_NA;
	if (lvl != CP_LVL_NA && (old & CP_MEM_LVL_MISS) && !(old & CP_MEM_LVL_HIT)) {
		d->miss_lvl = lvl;
		lvl = CP_LVL_BEYOND;
	}
	d->lvl = lvl;
	d->miss = lvl != CP_LVL_NA && lvl != CP_LVL_L1;
}

/*
 * What the event that took a sample knows better than its data_src
 * (@event: enum cp_sample_event): returns the raw value @v corrected, which
 * BPF counts and forwards, so every later reader decodes the same thing.
 *
 *  - PEBS mem-stores on E-cores (cpu_atom, cpu_lowpower): the kernel decodes
 *    their records with the load tables (adl_latency_data_small(),
 *    grt_latency_data(), cmt_latency_data() in arch/x86/events/intel/ds.c
 *    never set PERF_MEM_OP_STORE), so a store reads as a load. The event is
 *    the truth: a mem-stores sample is a store, a mem-loads one a load.
 *  - AMD IBS stores past L2: perf_ibs_get_mem_lvl() (arch/x86/events/amd/
 *    ibs.c) returns L1 for a store that hit the data cache, L2 for one that
 *    hit L2, LFB for a miss-address-buffer hit, and otherwise LVL_NA |
 *    LN(NA): it reads IbsOpData2's data source for loads only. Such a store
 *    missed L1 and L2, so it is rewritten "L2 miss" (LVL L2|MISS, lvl_num L2),
 *    which decodes as CP_LVL_BEYOND with miss_lvl L2: false-sharing RFOs
 *    on AMD are exactly these. An IBS store with no
 *    data-cache information at all does not reach the level code: it is
 *    mem_op NA, not a store.
 *  - IBS read-modify-write ops set both ld_op and st_op in IbsOpData3;
 *    perf_ibs_get_mem_op() tests ld_op first and reports them as loads,
 *    with the load's data source. For sharing they are stores (they take
 *    the line in Modified state), but data_src cannot tell them from loads:
 *    IbsOpData3 in the raw record (PERF_SAMPLE_RAW) does, and
 *    cp_sample_read_ibs_rmw() (bpf/sample_read.bpf.h) makes them stores
 *    before this function sees them.
 *  - Zen 4 "near CCX" data sources (another CCX of the same socket):
 *    REM_CCE1 with HOPS_0 and no remote bit. Not remote-node: the decoder
 *    above only calls an access remote with the remote bit or REM_RAM/
 *    REM_CCE bits, and those old bits name a remote cache, not another node.
 *  - IBS on Zen 3 and earlier sets no snoop bits: no HITM. Sharing there is
 *    judged from stores (--probe says so).
 */
CP_INLINE __u64 cp_data_src_for_event(__u8 event, __u64 v)
{
	const __u64 op_mask = 0x1fULL << CP_MEM_OP_SHIFT;
	const __u64 lvl_mask = (0x3fffULL << CP_MEM_LVL_SHIFT) | (0xfULL << CP_MEM_LVLNUM_SHIFT);
	__u64 num = (v >> CP_MEM_LVLNUM_SHIFT) & 0xf, old = (v >> CP_MEM_LVL_SHIFT) & 0x3fff;

	switch (event) {
	case CP_SEV_LOAD:
		return (v & ~op_mask) | CP_MEM_S(OP, LOAD);
	case CP_SEV_STORE:
		return (v & ~op_mask) | CP_MEM_S(OP, STORE);
	case CP_SEV_IBS:
		if (!((v >> CP_MEM_OP_SHIFT) & CP_MEM_OP_STORE) ||
		    cp_data_src_lvlnum(num, old, false) != CP_LVL_NA ||
		    cp_data_src_lvlbits(old) != CP_LVL_NA)
			return v;
		/* "missed L2": decodes as CP_LVL_BEYOND with miss_lvl L2 */
		return (v & ~lvl_mask) | CP_MEM_S(LVL, L2) | CP_MEM_S(LVL, MISS) |
		       CP_MEM_S(LVLNUM, L2);
	default:
		return v;
	}
}

#endif /* CACHEPERF_DATA_SRC_H */
