// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * libFuzzer target: the bytes a tenant writes that the profiler reads with
 * its own code, not libdw's (docs/security.md), each taken as:
 *
 *  - a function's machine code: the sweep (cp_code_walk()), each
 *    instruction's operand and the skid charge of a tick on it, the
 *    read-modify-write and frame tests, the kernel-emulation test of probe
 *    placement, and the exit points of a throwing operator new, whose
 *    direct jumps land in the same bytes;
 *  - a heap's memory: the glibc chunk walk, from the [heap] mapping's start
 *    and from an arena's, to an address the input names;
 *  - /proc text: a maps file, a cgroup file (and the container id in each
 *    line), a thread's syscall line.
 *
 * A crash, a leak, an out-of-bounds access or a walk past its caps is a
 * bug; a refusal is not. Seeds: tests/fuzz/corpus_bytes.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "decode/decode.h"
#include "decode/exit_points.h"
#include "decode/insn_effects.h"
#include "decode/skid.h"
#include "machine/proc_cgroup.h"
#include "objects/glibc_chunks.h"
#include "objects/proc_maps.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* Where the input sits as code, and as the heap's memory. */
#define CODE_VADDR 0x401000ull
#define HEAP_VADDR 0x555555560000ull

struct bytes {
	const uint8_t *p;
	size_t n;
	__u64 at; /* the address of p[0] */
};

static size_t code_read(void *ctx, __u64 vaddr, __u8 *buf, size_t len)
{
	const struct bytes *b = ctx;
	size_t off, got;

	if (vaddr < b->at || vaddr - b->at >= b->n)
		return 0;
	off = (size_t)(vaddr - b->at);
	got = b->n - off < len ? b->n - off : len;
	memcpy(buf, b->p + off, got);
	return got;
}

/* A jump into the bytes is code there; one just past them never returns; the rest unknown. */
static enum cp_exit_target code_resolve(void *ctx, __u64 vaddr, __u64 *to)
{
	const struct bytes *b = ctx;

	if (vaddr >= b->at && vaddr - b->at < b->n) {
		*to = vaddr;
		return CP_EXIT_TGT_CODE;
	}
	return vaddr == b->at + b->n ? CP_EXIT_TGT_NORETURN : CP_EXIT_TGT_UNKNOWN;
}

static void as_code(const uint8_t *data, size_t size)
{
	struct bytes b = {.p = data, .n = size, .at = CODE_VADDR};
	struct cp_exit_code code = {.read = code_read, .resolve = code_resolve, .ctx = &b};
	struct cp_exit_points *pts = malloc(sizeof(*pts));
	struct cp_code_walk w;
	__u32 ilen;

	if (!cp_code_walk(data, size, &w)) {
		for (size_t i = 0; i < w.nr_starts; i++) {
			size_t off = w.starts[i];
			struct cp_operand op;
			struct cp_skid sk;

			cp_decode_operand(data + off, size - off, &op);
			cp_skid_charge(data, size, &w, off, &op, &sk);
			/* swept inside, as for an instruction the caller kept no sweep for */
			if (i < 4)
				cp_skid_find(data, size, NULL, off, &sk);
			if (op.status == CP_OPND_OK) {
				cp_skid_stack_access(data, size, &op);
				if (op.access == CP_OPND_READ)
					cp_skid_stored_back(data, size, off, &op);
			}
			cp_code_walk_target(&w, off);
			cp_code_walk_prev(&w, off);
			cp_probe_insn_emulated(data + off, size - off, &ilen);
		}
		cp_code_walk_free(&w);
	}
	if (pts) {
		cp_exit_points_find(&code, CODE_VADDR, pts);
		free(pts);
	}
}

static ssize_t heap_read(void *ctx, __u64 addr, void *buf, size_t len)
{
	const struct bytes *b = ctx;
	size_t off;

	if (addr < b->at || addr - b->at >= b->n)
		return -EFAULT;
	off = (size_t)(addr - b->at);
	if (len > b->n - off)
		len = b->n - off;
	memcpy(buf, b->p + off, len);
	return (ssize_t)len;
}

static void as_heap(const uint8_t *data, size_t size)
{
	/* small caps: the walk's bounds are reached in a few thousand bytes */
	struct cp_chunk_limits lim = {.max_steps = 512, .max_read_bytes = 1u << 20,
				      .batch_bytes = 256, .mark_every = 8, .max_marks = 16,
				      .max_heaps = 4, .bytes_per_s = 4u << 20};
	struct cp_glibc_chunks *c = cp_glibc_chunks__new(&lim);
	struct bytes b = {.p = data, .n = size, .at = HEAP_VADDR};
	__u64 pick = 0, end = HEAP_VADDR + ((size + 4095) & ~4095ull);
	struct cp_chunk out;

	if (!c)
		return;
	memcpy(&pick, data, size < sizeof(pick) ? size : sizeof(pick));
	for (int kind = CP_CHUNK_MAP_BRK; kind <= CP_CHUNK_MAP_ANON; kind++) {
		/* an address the input names, then one at its end: the walk goes further */
		cp_glibc_chunks__find(c, 1, HEAP_VADDR, end, kind, HEAP_VADDR + pick % size, 1,
				      heap_read, &b, &out);
		cp_glibc_chunks__find(c, 1, HEAP_VADDR, end, kind, HEAP_VADDR + size - 1, 2,
				      heap_read, &b, &out);
		cp_glibc_chunks__forget(c, 1);
	}
	cp_glibc_chunks__free(c);
}

static void as_text(const uint8_t *data, size_t size)
{
	char *text = malloc(size + 1), id[CP_CONTAINER_ID_LEN], *line, *save = NULL;
	struct cp_cgroup_info *cg = malloc(sizeof(*cg));
	const char *runtime;
	struct cp_maps *maps;
	__u64 sp;

	if (!text || !cg)
		goto out;
	memcpy(text, data, size);
	text[size] = '\0';
	if (!cp_maps__parse(text, size, &maps)) {
		cp_maps__find(maps, HEAP_VADDR);
		cp_maps__free(maps);
	}
	cp_cgroup_parse(text, cg);
	cp_parse_syscall_sp(text, &sp);
	for (line = strtok_r(text, "\n", &save); line; line = strtok_r(NULL, "\n", &save))
		cp_container_id(line, strlen(line), id, &runtime);
out:
	free(cg);
	free(text);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!size || size > (1u << 20))
		return 0;
	as_code(data, size);
	as_heap(data, size);
	as_text(data, size);
	return 0;
}
