/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Decoded operands of the instructions a breakpoint manager arms, so a hot
 * instruction is read and decoded once, not at every arming. Bounded:
 * 4-way set-associative with LRU replacement within a set.
 *
 * The key is the code, not the process: (device, inode, file offset) for
 * file-backed code, shared by every process that maps the same binary
 * wherever it is loaded (operands hold no absolute addresses: RIP-relative
 * ones are relative). Anonymous code (JIT) is keyed by (pid, ip).
 *
 * Bytes come from the file for file-backed code, through
 * /proc/PID/map_files (the very file mapped, even if deleted or in another
 * mount namespace): the file has no int3 a uprobe or debugger put into the
 * text. /proc/PID/mem is the fallback and the source for anonymous code.
 */
#ifndef CP_DECODE_CACHE_H
#define CP_DECODE_CACHE_H

#include <stdbool.h>
#include <stddef.h>
#include <sys/types.h>
#include <linux/types.h>

#include "cacheperf/operand.h"
#include "decode/insn_effects.h"
#include "objects/proc_maps.h"

#define CP_DECODE_WAYS		4
#define CP_DECODE_CACHE_DEFAULT 4096 /* entries */
#define CP_CODE_FILES		16   /* code files held open for their bytes (cp_insn_read()) */
#define CP_CODE_WALKS		64   /* functions' sweeps kept (cp_decode_cache__walk()) */
#define CP_CODE_WALK_BYTES	(8u << 20) /* and at most this much of them */

/*
 * The [vdso]'s device in keys: every process of the machine maps the same
 * image of the kernel's, so its instructions are keyed by their offset in
 * it and its size (a 32-bit process's image is another), not by pid: a
 * build's processes each ticked there, and each exit then looked through
 * the whole cache for its own entries.
 */
#define CP_DECODE_VDSO_DEV (~0ull)

struct cp_decode_key {
	__u64 dev; /* major << 32 | minor; 0 for anonymous code; CP_DECODE_VDSO_DEV */
	__u64 ino; /* inode; anonymous code: the pid; [vdso]: its size */
	__u64 off; /* offset of the instruction in the file or [vdso]; anonymous code: its address */
};

/*
 * What the soft source charges the ticks on an instruction to, as the code
 * decides it (user/live/soft_source.c, decode/skid.h): the same for every
 * process that maps the code, so it is kept beside the operand.
 */
struct cp_decode_charge {
	bool to_prev;	      /* to the access just before it (skid) */
	bool rmw;	      /* a load whose bytes the code right after it stores back */
	__u32 back;	      /* to_prev: bytes from that access's start to this instruction's */
	struct cp_operand op; /* to_prev: that access's operand */
};

struct cp_decode_cache_stats {
	__u64 hits;
	__u64 decodes;	   /* misses: bytes read and decoded */
	__u64 evictions;   /* entries replaced by newer ones */
	__u64 unreadable;  /* reads that failed (status CP_OPND_UNREADABLE, not cached) */
	__u64 charge_hits; /* charges found decided (cp_decode_cache__charge()) */
	__u64 walks;	   /* functions swept (cp_decode_cache__walk()) */
	__u64 walk_hits;   /* sweeps served kept */
};

struct cp_decode_cache;

/* A cache of at least @max entries (0: CP_DECODE_CACHE_DEFAULT); NULL when out of memory. */
struct cp_decode_cache *cp_decode_cache__new(size_t max);
void cp_decode_cache__free(struct cp_decode_cache *c);

/* Pure: the key of the instruction at @ip of process @pid, which mapping @map holds. */
void cp_decode_key_of(pid_t pid, const struct cp_map *map, __u64 ip, struct cp_decode_key *key);

/* The cached operand of @key, or NULL. Counts a hit. */
const struct cp_operand *cp_decode_cache__lookup(struct cp_decode_cache *c,
						 const struct cp_decode_key *key);

/* Caches @op under @key, replacing the least recently used entry of its set. */
void cp_decode_cache__insert(struct cp_decode_cache *c, const struct cp_decode_key *key,
			     const struct cp_operand *op);

/*
 * The charge decided for @key's instruction: true with @out filled, false
 * when none was (or its operand's entry is gone). Counts a hit.
 */
bool cp_decode_cache__charge(struct cp_decode_cache *c, const struct cp_decode_key *key,
			     struct cp_decode_charge *out);

/* Keeps @ch for @key's instruction, when its operand is cached (else nothing). */
void cp_decode_cache__set_charge(struct cp_decode_cache *c, const struct cp_decode_key *key,
				 const struct cp_decode_charge *ch);

/*
 * The sweep (cp_code_walk()) of the function whose entry is @key and whose
 * code is @code (@len bytes): kept, as the instructions of one function
 * ask for it one after another (a compiler's thousand processes, each
 * ticked at other instructions of the same big functions), or made and
 * kept, the least recently used going when CP_CODE_WALKS or
 * CP_CODE_WALK_BYTES would be passed. Valid until the next call; NULL when
 * out of memory.
 */
const struct cp_code_walk *cp_decode_cache__walk(struct cp_decode_cache *c,
						 const struct cp_decode_key *key, const __u8 *code,
						 size_t len);

/*
 * Process @pid exited or exec'd: its anonymous code's entries (keyed by the
 * pid) go, and their sweeps, so a process that takes the pid, or the new
 * image, never gets its operands. File-backed entries are the file's and stay.
 */
void cp_decode_cache__forget(struct cp_decode_cache *c, pid_t pid);

/*
 * Reads up to @cap bytes of the instruction at @ip of process @pid, which
 * @map holds (never past its end): from the mapped file, held open in @c
 * (CP_CODE_FILES of them, the least recently read replaced; @c NULL: opened
 * for this read), else from the process's memory. Returns the number of
 * bytes, or a negative errno.
 */
int cp_insn_read(struct cp_decode_cache *c, pid_t pid, const struct cp_map *map, __u64 ip,
		 __u8 *buf, size_t cap);

/*
 * The operand of the instruction at @ip in process @pid: cached, or read,
 * decoded and cached. @maps is a snapshot of the process's mappings
 * (cp_maps__read()). Returns 0 with @out filled (its status may say "not
 * computable"; unreadable bytes give CP_OPND_UNREADABLE, not cached, so a
 * later call retries), or -ENOENT when no mapping holds @ip.
 */
int cp_decode_cache__get(struct cp_decode_cache *c, pid_t pid, const struct cp_maps *maps, __u64 ip,
			 struct cp_operand *out);

void cp_decode_cache__stats(const struct cp_decode_cache *c, struct cp_decode_cache_stats *out);

#endif /* CP_DECODE_CACHE_H */
