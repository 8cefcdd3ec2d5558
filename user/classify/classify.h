/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The miss classifier (paper §3.5, Algorithm 1): turns the instruction
 * store, the miss store and object lookups into a ranked list of serious
 * issues, each with a type, an origin, the source lines and objects
 * involved, and a fix hint.
 *
 *   1. Application filter: nothing is reported when load misses are below
 *      3 % of sampled loads and store misses below 1 % of sampled stores.
 *   2. Coherence first: a line with >= 1 % of the forwarded misses, touched
 *      by several threads with at least one writing, is true sharing when
 *      the threads' bytes overlap, else false sharing (LASER's byte model);
 *      false sharing is the allocator's when the line holds several heap
 *      objects allocated by different threads. The instructions whose
 *      forwarded misses mostly fell on such lines are marked as explained.
 *   3. Every other instruction with >= 0.01 % of the sampled accesses and
 *      >= 1 % of the sampled misses: conflict when its access history
 *      (breakpoints, <= 64 addresses) puts >= 8 accesses on one L1 set
 *      with more distinct lines there than the set has ways (and that set
 *      holds >= 1 % of the misses); the allocator's when those lines lie in
 *      several heap objects; else capacity. With no history yet it is
 *      "capacity or conflict (pending access pattern)", never a guess.
 *   4. Issues of one process and type that share an object or a source line
 *      are merged; instructions are grouped by source line; issues are
 *      ranked by share of misses, then latency cost, then misses per second.
 *
 * Soft mode (the soft source: timer ticks, no hit/miss information): every
 * sample is an access weighted by time, and the rules only claim what the
 * access patterns show (docs/soft.md):
 *   - sharing: a line is shared only when threads touched it within the
 *     same epoch (miss_store.h, cp_line_sharing_concurrent()); a line needs
 *     >= 1 % of the time samples;
 *   - an instruction needs >= 1 % of the time samples; conflict when its
 *     history crowds a set as above; capacity only when its history is a
 *     stream whose footprint exceeds L2 (stream_evidence.h); else it is
 *     no issue, counted as unproven;
 *   - impact (score) is the share of time samples, never a miss share.
 *
 * Candidates that fail a ratio filter are minor issues (paper §2.2.2): not
 * reported, but counted. Pure: no libbpf, no syscalls; source locations
 * and objects come from caller-provided callbacks.
 */
#ifndef CP_CLASSIFY_H
#define CP_CLASSIFY_H

#include <stdbool.h>
#include <stddef.h>
#include <linux/types.h>

#include "machine/geometry.h"
#include "profile/insn_store.h"
#include "profile/miss_store.h"
#include "objects/object_store.h"

/* Defaults of the ratio filters (paper §3.5), in parts per million. */
#define CP_APP_LOAD_MISS_PPM_DEFAULT  30000 /* 3 % of sampled loads */
#define CP_APP_STORE_MISS_PPM_DEFAULT 10000 /* 1 % of sampled stores */
#define CP_MIN_ACCESS_PPM_DEFAULT     100   /* 0.01 % of sampled accesses */
#define CP_MIN_MISS_PPM_DEFAULT	      10000 /* 1 % of sampled misses */
#define CP_MIN_LINE_MISS_PPM_DEFAULT  10000 /* 1 % of forwarded misses, lines and sets */
#define CP_CONFLICT_MIN_ACCESSES      8	    /* history accesses on one set (paper §3.5) */
#define CP_ISSUES_TOP_DEFAULT	      10

#define CP_ISSUE_MAX_INSNS   8 /* source lines listed per issue */
#define CP_ISSUE_MAX_OBJECTS 4 /* object groups listed per issue */
#define CP_ISSUE_MAX_FRAMES  8 /* allocation stack frames per object, inline levels included */
#define CP_ISSUE_MAX_TIDS    4 /* allocating threads per object group */
#define CP_ISSUE_HINT_LEN    512
#define CP_LOC_MODULE_LEN    128
#define CP_LOC_FUNCTION_LEN  128
#define CP_LOC_FILE_LEN	     192
#define CP_OBJ_NAME_LEN	     128

enum cp_issue_type {
	CP_ISSUE_FALSE_SHARING = 0,
	CP_ISSUE_TRUE_SHARING,
	CP_ISSUE_CONFLICT,
	CP_ISSUE_CAPACITY,
	CP_ISSUE_CAPACITY_OR_CONFLICT, /* no access history yet: pending access pattern */
	CP_ISSUE_TYPE_NR,
};

enum cp_issue_origin {
	CP_ORIGIN_APPLICATION = 0,
	CP_ORIGIN_ALLOCATOR, /* the allocator's placement of objects */
	CP_ORIGIN_NR,
};

/* A source location; empty strings and line 0 for what is not known. */
struct cp_src_loc {
	char module[CP_LOC_MODULE_LEN]; /* path of the mapped file */
	char function[CP_LOC_FUNCTION_LEN];
	char file[CP_LOC_FILE_LEN];
	__u32 line;
	/*
	 * an allocation frame only: @function was inlined into the next
	 * frame's, whose file and line are where that call is written (each
	 * level of an inline chain is a frame of its own)
	 */
	bool inlined;
};

#define CP_LOC_MAX_CALLERS 3 /* inline callers an instruction's location lists */
#define CP_LOC_CALLER_LEN  64

/* A function the one before it was inlined into, and the line of that call in it. */
struct cp_src_caller {
	char function[CP_LOC_CALLER_LEN];
	char file[CP_LOC_CALLER_LEN]; /* base name */
	__u32 line;
};

/* The inline chain around an instruction, innermost caller first. */
struct cp_src_callers {
	__u32 nr;
	bool more; /* deeper than CP_LOC_MAX_CALLERS */
	struct cp_src_caller c[CP_LOC_MAX_CALLERS];
};

/*
 * Fills @out with the location of (@tgid, @ip), the innermost function
 * (an inlined one if inlined), and @callers with the functions it was
 * inlined into. Returns 0, or < 0 when nothing is known (the instruction is
 * then listed by address).
 */
typedef int (*cp_class_locate_fn)(void *ctx, __u32 tgid, __u64 ip, struct cp_src_loc *out,
				  struct cp_src_callers *callers);

/* One source line of an issue: its instructions' sampled counts summed. */
struct cp_issue_insn {
	__u32 tgid;
	__u32 nr_ips;  /* instructions of this line in the issue */
	__u64 ip;      /* the one with the most misses (as merged) */
	__u64 samples; /* sampled accesses */
	__u64 misses;  /* sampled misses */
	bool have_loc; /* loc is filled */
	struct cp_src_loc loc;
	struct cp_src_callers callers; /* loc's function inlined into these */
};

/*
 * An object, or a group of heap objects from one allocation call site.
 * Filled by the object callback for one address; merged by the classifier.
 */
struct cp_issue_object {
	enum cp_obj_kind kind;	    /* heap, global, tls, stack, mapping, unknown */
	__u64 start;		    /* first byte (of the first object seen) */
	__u64 size;		    /* bytes */
	__u64 callsite;		    /* call-site id in its process, 0 if none: what groups */
	__u32 nr_objects;	    /* distinct objects in the group (>= 1) */
	__u32 refs;		    /* sampled addresses of the issue that fell in it */
	char name[CP_OBJ_NAME_LEN]; /* variable, mapping or file name; "" for heap */
	__u16 flags;		    /* CP_OBJ_F_*; CP_OBJ_F_CHUNK: from glibc's chunk headers */
	bool before_attach;	    /* CP_OBJ_F_CHUNK: allocated before profiling began */
	/* unknown memory: the allocator ("jemalloc") whose metadata cannot be read,
	 * so no object is named; "" otherwise */
	char allocator[16];
	__u32 nr_frames;
	bool more_frames; /* the stack had more than CP_ISSUE_MAX_FRAMES */
	struct cp_src_loc alloc_stack[CP_ISSUE_MAX_FRAMES]; /* innermost first */
	__u32 nr_tids;
	__u32 alloc_tids[CP_ISSUE_MAX_TIDS]; /* allocating threads */
};

/*
 * Fills @out with the object holding @addr in process @tgid (alloc_tids[0]
 * its allocating thread, if known). Returns 0, or < 0 when nothing is
 * known about @addr.
 */
typedef int (*cp_class_object_fn)(void *ctx, __u32 tgid, __u64 addr, struct cp_issue_object *out);

/* One thread's bytes of the shared line: bit i = byte i of the line. */
struct cp_issue_thread {
	__u32 tid;
	__u32 accesses; /* forwarded misses of the thread on the line */
	__u64 read_mask;
	__u64 write_mask;
	__u32 pid; /* its process: another than the issue's on a shared mapping */
	__u32 __pad;
};

/* The evidence of a sharing issue: its line with the most misses. */
struct cp_issue_sharing {
	__u64 line_addr; /* first byte of the line */
	__u32 line_bytes;
	__u32 nr_lines; /* shared lines merged into the issue */
	__u64 line_misses;
	__u64 object_start; /* the object on the line (first one), 0 if unknown */
	__u64 object_size;  /* the struct/object size, 0 if unknown */
	__u32 nr_threads;
	__u32 more_threads; /* accesses by threads beyond thr[] */
	struct cp_issue_thread thr[CP_LINE_MAX_THREADS];
	/*
	 * A line both truly and falsely shared gives two issues, each with its
	 * part of the bytes: the bytes the other one has (0: the whole line)
	 */
	__u64 other_part;
	/*
	 * the miss store's line space (cp_space_is_file()): the issue's
	 * process, or a shared file whose offset line_addr then is
	 */
	__u32 line_space;
	__u32 __pad;
};

/* The evidence of a conflict issue: the set its history crowded. */
struct cp_issue_conflict {
	__u32 set;	      /* L1 set */
	__u32 ways;	      /* L1 associativity */
	__u32 accesses;	      /* history accesses on the set */
	__u32 history;	      /* history length */
	__u32 distinct_lines; /* distinct lines on the set */
	__u32 __pad;
	__u64 set_misses; /* forwarded misses on the set */
};

/* The evidence of a capacity issue in soft mode: a stream larger than a cache. */
struct cp_issue_capacity {
	bool stream;		  /* the evidence below is filled */
	enum cp_cache_slot level; /* the cache it streams through (L2, LLC) */
	__s64 stride;		  /* bytes between consecutive accesses */
	__u64 footprint;	  /* bytes one pass touches (stream_evidence.h) */
	__u64 object_bytes;	  /* the largest object under the history, 0: none */
	__u64 sampled_lines;	  /* distinct lines sampled (when no object is known) */
	__u64 level_bytes;	  /* size of that cache */
};

/* What soft mode says about itself, in every output that carries its issues. */
#define CP_SOFT_NOTE "pattern-based, no PMU: impact is time share, not measured misses"

struct cp_issue {
	enum cp_issue_type type;
	enum cp_issue_origin origin;
	__u32 tgid;
	double score;	     /* share of sampled misses, 0..1 */
	double misses_per_s; /* samples x period / duration; 0 if unknown */
	/* latency-weighted cost: sample weights x period / duration (cycles/s);
	 * have_cost false when the source gave no weights */
	double cost_cycles_per_s;
	bool have_cost;
	__u64 samples; /* sampled accesses of its instructions */
	__u64 misses;  /* sampled misses (sharing: forwarded misses on its lines) */
	__u32 nr_insns;
	__u32 more_insns;				/* source lines beyond insns[] */
	struct cp_issue_insn insns[CP_ISSUE_MAX_INSNS]; /* most misses first */
	__u32 nr_objects;
	__u32 more_objects;				      /* object groups beyond objects[] */
	struct cp_issue_object objects[CP_ISSUE_MAX_OBJECTS]; /* most refs first */
	struct cp_issue_sharing sharing;		      /* false/true sharing only */
	struct cp_issue_conflict conflict;		      /* conflict only */
	struct cp_issue_capacity capacity;		      /* capacity in soft mode only */
	char hint[CP_ISSUE_HINT_LEN];
};

/* The ratio filters and limits; cp_classify_cfg_defaults() gives the paper's. */
struct cp_classify_cfg {
	__u32 app_load_miss_ppm;     /* --app-load-miss */
	__u32 app_store_miss_ppm;    /* --app-store-miss */
	__u32 min_access_ppm;	     /* --min-access-share: per instruction */
	__u32 min_miss_ppm;	     /* --min-miss-share: per instruction */
	__u32 min_line_miss_ppm;     /* per line and per set */
	__u32 conflict_min_accesses; /* history accesses on one set */
	unsigned int top;	     /* --top: issues kept; 0: CP_ISSUES_TOP_DEFAULT */
};

/* What the classifier reads. Totals are the sampled counts (struct cp_stats). */
struct cp_classify_input {
	const struct cp_cache_level *l1; /* the L1D the miss store maps onto */
	const struct cp_insn_store *insns;
	const struct cp_miss_store *misses;
	__u64 loads;	   /* sampled loads */
	__u64 stores;	   /* sampled stores */
	__u64 load_misses; /* ... of them misses */
	__u64 store_misses;
	/* the source says nothing about hits (soft, faults): every sample is
	 * taken as a miss and the application filter does not apply */
	bool no_levels;
	/* the soft source: soft mode (implies no_levels) */
	bool soft;
	__u64 time_samples;	       /* soft: ticks in the targets, 0: taken as loads + stores */
	const struct cp_geometry *geo; /* soft: the caches a stream must exceed; NULL: none */
	__u64 load_period;	       /* events per load sample; 0: rates unknown */
	__u64 store_period;
	double duration_s;
	cp_class_locate_fn locate; /* NULL: instructions by address only */
	void *locate_ctx;
	cp_class_object_fn object_at; /* NULL: no objects */
	void *object_ctx;
};

struct cp_classification {
	struct cp_issue *issues; /* ranked, most impact first */
	size_t nr_issues;
	size_t suppressed;	 /* minor candidates below a ratio filter (§2.2.2) */
	size_t beyond_top;	 /* serious issues past cfg.top */
	bool app_filter_applies; /* false: no_levels or no samples */
	bool app_filter_passed;	 /* load or store miss ratio reached its threshold */
	double load_miss_ratio;	 /* 0..1 */
	double store_miss_ratio;
	__u64 accesses;		    /* sampled accesses */
	__u64 sampled_misses;	    /* sampled misses */
	__u64 forwarded_misses;	    /* misses in the miss store */
	__u64 explained_insns;	    /* instructions attributed to sharing lines */
	bool soft;		    /* soft mode: scores are time shares (CP_SOFT_NOTE) */
	__u64 time_samples;	    /* soft: the time samples shares are taken of */
	size_t unproven;	    /* soft: hot instructions with no conflict or stream evidence */
	size_t unproven_no_history; /* ... of them without an access history yet */
};

/* The paper's thresholds (DESIGN.md "Classification"). */
void cp_classify_cfg_defaults(struct cp_classify_cfg *cfg);

/*
 * Classifies @in under @cfg into @out (zeroed first; free it with
 * cp_classification_free()). Returns 0, -EINVAL for a missing store or
 * geometry, -ENOMEM.
 */
int cp_classify(const struct cp_classify_input *in, const struct cp_classify_cfg *cfg,
		struct cp_classification *out);

void cp_classification_free(struct cp_classification *c);

/* "false_sharing", "true_sharing", "conflict", "capacity", "capacity_or_conflict". */
const char *cp_issue_type_name(enum cp_issue_type t);

/* "false sharing", ..., "capacity or conflict misses (pending access pattern)": report wording. */
const char *cp_issue_type_text(enum cp_issue_type t);

/* "application", "allocator". */
const char *cp_issue_origin_name(enum cp_issue_origin o);

/*
 * True when @file:@line is @loc's source line: the same line number, and
 * @file equal to @loc->file as far as @loc could keep it (CP_LOC_FILE_LEN:
 * a longer path is kept cut). False when @loc has no line or no file.
 */
bool cp_src_loc_at(const struct cp_src_loc *loc, const char *file, __u32 line);

#endif /* CP_CLASSIFY_H */
