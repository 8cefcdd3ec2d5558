/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * The describe server's side (symbols/sym_server.h is its client): the
 * forked child that bounds itself (util/sandbox.h) and answers requests
 * about tenants' files, and the messages both sides speak on their
 * SOCK_SEQPACKET socketpair, one request or one reply a message, of fixed
 * size. The client trusts nothing in a reply it has not checked.
 */
#ifndef CP_SYM_SERVE_H
#define CP_SYM_SERVE_H

#include <stddef.h>
#include <stdint.h>
#include <linux/types.h>

#include "cacheperf/abi.h"
#include "machine/copy_cache.h"
#include "machine/target_file.h"
#include "symbols/symbolizer.h"
#include "symbols/unwind.h"

/*
 * The bytes of strings one answer carries at most (C++ names run to
 * kilobytes): the function first, then the file, the nearest symbol and
 * the inline chain; a string past the end is cut, one with no room left
 * NULL.
 */
#define CP_SYM_SERVER_STRING_BYTES (16u << 10)
/* Files (their Dwfls) the server keeps parsed. */
#define CP_SYM_SERVER_FILES 16

/* The server's first message, once it bounded itself: its ends are requests' doing after it. */
#define CP_SYM_READY "ready"
/* An offset of a string not sent. */
#define CP_SYM_NO_STR UINT32_MAX
/* Strings of an answer: the function, the file, the nearest symbol, then each caller's two. */
enum {
	CP_SYM_STR_FUNCTION,
	CP_SYM_STR_FILE,
	CP_SYM_STR_NEAREST,
	CP_SYM_STR_INLINED,
	CP_SYM_NR_STR = CP_SYM_STR_INLINED + 2 * CP_MAX_INLINE_DEPTH
};

/*
 * A request: what is at @addr of the file of @key (its copy comes with it,
 * SCM_RIGHTS, and its separate debug file's when it has one). A message's
 * size says which request it is: this one, or struct cp_sym_unwind_request.
 */
struct cp_sym_request {
	__u64 id;
	__u64 addr;
	struct cp_copy_key key;
};

/* What every answer starts with: its request's @id, its error, what the parse counted. */
struct cp_sym_reply_head {
	__u64 id;
	__s32 err; /* 0, -ENOENT, -ENOEXEC, -ENOMEM, -EBADF, -EPROTO */
	/* 1 << reason: what the parse counted (machine/target_file.h, cp_tf_count()) */
	__u32 counted;
};

/* The answer to a request: cp_symbol_info's fields, its strings inside, never a pointer. */
struct cp_sym_reply {
	struct cp_sym_reply_head h;
	__u64 function_offset;
	__u64 nearest_offset;
	__u64 sym_start;
	__u64 sym_size;
	__u32 line;
	__u32 column;
	__u32 nr_inlined;
	__u32 used; /* bytes of strings[] */
	__u32 flags;
	__u32 inl_line[CP_MAX_INLINE_DEPTH];
	__u32 inl_column[CP_MAX_INLINE_DEPTH];
	__u32 str[CP_SYM_NR_STR]; /* offsets into strings[], CP_SYM_NO_STR: none */
	char strings[CP_SYM_SERVER_STRING_BYTES];
};

/* Frames one unwind request finds at most: a sample's stack, an allocation's. */
#define CP_SYM_UNWIND_FRAMES 32
_Static_assert(CP_SYM_UNWIND_FRAMES >= CP_STACK_DEPTH &&
		       CP_SYM_UNWIND_FRAMES >= CP_ALLOC_STACK_DEPTH,
	       "an unwind answer holds a whole stack");

/*
 * An unwind request: the walk (unwind.h, cp_unwind_walk()) from @from over
 * @stack's copy in the file of @head.key, the process having placed it at
 * @head.addr (address = link-time address + @head.addr), up to @max frames
 * and the first frame outside the file.
 */
struct cp_sym_unwind_request {
	struct cp_sym_request head;
	struct cp_unwind_regs from;
	__u32 max;
	__u32 __pad;
	struct cp_ustack_record stack;
};

/* The walk's end: it handed on (@next its first frame outside the file), or reached a start. */
enum {
	CP_SYM_UNWIND_HANDED = 1,
	CP_SYM_UNWIND_START = 2,
};

/* The answer to an unwind request: the frames found, in order, and how the walk ended. */
struct cp_sym_unwind_reply {
	struct cp_sym_reply_head h;
	__u32 nr;
	__u32 flags;
	struct cp_unwind_regs next;
	__u64 ips[CP_SYM_UNWIND_FRAMES];
};

_Static_assert(sizeof(struct cp_sym_request) == 64, "a request is 64 bytes");
_Static_assert(sizeof(struct cp_sym_unwind_request) ==
		       64 + sizeof(struct cp_unwind_regs) + 8 + sizeof(struct cp_ustack_record),
	       "an unwind request has no hidden padding");
_Static_assert(sizeof(struct cp_sym_unwind_reply) ==
		       24 + sizeof(struct cp_unwind_regs) + 8 * CP_SYM_UNWIND_FRAMES,
	       "an unwind answer has no hidden padding");
_Static_assert(CP_TF_NR <= 32, "a reply's counted reasons fit its mask");
_Static_assert(offsetof(struct cp_sym_reply, strings) % 8 == 0 &&
		       sizeof(struct cp_sym_reply) ==
			       offsetof(struct cp_sym_reply, strings) + CP_SYM_SERVER_STRING_BYTES,
	       "a reply has no hidden padding");

/*
 * The server, in a child just forked, its socket @sock, named @name in ps
 * (at most 15 bytes: "cp-symbols", "cp-unwind"): its descriptors
 * set (the standard three on /dev/null, the socket, its own statm and
 * clear_refs), bounded (util/sandbox.h: RLIMIT_DATA cp_pw_allowance(@room),
 * RLIMIT_STACK CP_PW_STACK_BYTES, no CPU limit nor alarm), then serving
 * until its client is gone. Never returns: it exits 0 when the client is
 * gone, CP_PW_EXIT_UNBOUNDED when it could not be bounded,
 * CP_PW_EXIT_MEMORY, unanswered, when one request grew its resident set
 * by more than half its allowance.
 */
__attribute__((noreturn)) void cp_sym_serve(int sock, __u64 room, const char *name);

#endif /* CP_SYM_SERVE_H */
