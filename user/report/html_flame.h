/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The flame graph of an issue's samples: call stacks merged into a tree of
 * frames by name (a frame's children in name order, as flamegraph.pl
 * does, so the picture does not depend on the order samples came in), laid
 * out as rectangles, drawn as SVG. Pure; bounded at CP_FLAME_MAX_NODES
 * frames, what does not fit counted and said.
 */
#ifndef CP_HTML_FLAME_H
#define CP_HTML_FLAME_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>
#include <linux/types.h>

#define CP_FLAME_MAX_NODES 4096 /* frames in one graph */
#define CP_FLAME_MAX_DEPTH 64	/* frames of one stack taken, the innermost first */
#define CP_FLAME_NAME_LEN  160

struct cp_flame;

struct cp_flame *cp_flame__new(void);
void cp_flame__free(struct cp_flame *f);

/*
 * Adds a stack of @nr frame names, the outermost first, weighing @value.
 * Returns 0, or -ENOSPC when a frame found no room (its value is counted
 * in cp_flame__dropped(), the frames above it are not drawn).
 */
int cp_flame__add(struct cp_flame *f, const char *const *frames, __u32 nr, __u64 value);

/*
 * Names the frame of @pc in process @tgid (@leaf: the sampled instruction,
 * else a call); < 0: unknown (shown by address).
 */
typedef int (*cp_frame_name_fn)(void *ctx, __u32 tgid, __u64 pc, bool leaf, char *buf, size_t sz);

/*
 * Adds a sampled stack as profile/ gives it: @pcs[0] the sampled
 * instruction, @pcs[1..@nr-1] its callers' return addresses, innermost
 * first. The leaf is named at its pc, each caller at pc - 1: a return
 * address is the instruction after the call, which may be another line or
 * even another function (a call that does not return ends one).
 */
int cp_flame__add_stack(struct cp_flame *f, __u32 tgid, const __u64 *pcs, __u32 nr, __u64 value,
			cp_frame_name_fn name, void *ctx);

__u64 cp_flame__total(const struct cp_flame *f);
__u64 cp_flame__dropped(const struct cp_flame *f);

/* One frame of the graph: @start and @value in the unit of the stacks' values. */
struct cp_flame_rect {
	const char *name; /* the tree's: valid while it lives */
	__u32 depth;	  /* 0: the root, "all" */
	__u64 start;
	__u64 value;
};

/*
 * Pure: the frames, parents before children, siblings in name order, into
 * @out (at most @max). Returns how many there are (may exceed @max).
 */
size_t cp_flame__layout(const struct cp_flame *f, struct cp_flame_rect *out, size_t max);

/* The graph as an <svg role="img"> with a text alternative; @unit: "samples". */
void cp_flame_svg(FILE *out, const char *id, const struct cp_flame *f, const char *unit);

#endif /* CP_HTML_FLAME_H */
