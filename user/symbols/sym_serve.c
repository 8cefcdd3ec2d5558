// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The describe server's side: a bounded child answering requests (sym_serve.h). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/socket.h>

#include "symbols/debuginfod.h"
#include "symbols/parse_worker.h"
#include "symbols/sym_dwarf.h"
#include "symbols/sym_dwfl.h"
#include "symbols/sym_serve.h"
#include "util/sandbox.h"
#include "util/self_usage.h"

/* The server's descriptors: its socket, its own /proc/self/statm and clear_refs. */
enum { FD_SOCK = 3, FD_STATM = 4, FD_CLEAR = 5, FD_KEPT = 6 };
/* The descriptors a request brings: the file's copy, then its separate debug file if any. */
#define FDS_MAX 2

/* A file the server keeps parsed. */
static struct held {
	struct cp_copy_key key; /* ino 0: a free slot */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	int debug_fd; /* its separate debug file until libdwfl takes it; -1: none */
	__u64 last_use;
} held[CP_SYM_SERVER_FILES];
static __u64 held_clock;

static void held_drop(struct held *h)
{
	cp_sym_release(h->dwfl);
	dwfl_end(h->dwfl);
	if (h->debug_fd >= 0)
		close(h->debug_fd);
	*h = (struct held){.debug_fd = -1};
}

static void held_drop_all(void)
{
	for (unsigned int i = 0; i < CP_SYM_SERVER_FILES; i++)
		if (held[i].dwfl)
			held_drop(&held[i]);
	/* the freed heap back to the kernel: the next file's growth is measured from here */
	malloc_trim(0);
}

/* The file of @key held, NULL when none is. */
static struct held *held_find(const struct cp_copy_key *key)
{
	for (unsigned int i = 0; key->ino && i < CP_SYM_SERVER_FILES; i++)
		if (held[i].dwfl && cp_copy_key_equal(&held[i].key, key))
			return &held[i];
	return NULL;
}

/* A free slot, the least recently used one's Dwfl ended to make it. */
static struct held *held_slot(void)
{
	struct held *lru = &held[0];

	for (unsigned int i = 0; i < CP_SYM_SERVER_FILES; i++) {
		if (!held[i].dwfl)
			return &held[i];
		if (held[i].last_use < lru->last_use)
			lru = &held[i];
	}
	held_drop(lru);
	return lru;
}

/* The string @s into @r's strings, cut to what is left; its offset, CP_SYM_NO_STR when none. */
static __u32 pack_str(struct cp_sym_reply *r, const char *s)
{
	size_t left = sizeof(r->strings) - r->used, n;
	__u32 off = r->used;

	if (!s || left < 2)
		return CP_SYM_NO_STR;
	n = strnlen(s, left - 1);
	memcpy(r->strings + off, s, n);
	r->strings[off + n] = '\0';
	r->used += (__u32)(n + 1);
	return off;
}

/* @info into @r: its numbers, and its strings, most wanted first. */
static void pack(const struct cp_symbol_info *info, struct cp_sym_reply *r)
{
	r->flags = info->flags;
	r->function_offset = info->function_offset;
	r->nearest_offset = info->nearest_offset;
	r->sym_start = info->sym_start;
	r->sym_size = info->sym_size;
	r->line = info->line;
	r->column = info->column;
	r->nr_inlined = info->nr_inlined;
	r->str[CP_SYM_STR_FUNCTION] = pack_str(r, info->function);
	r->str[CP_SYM_STR_FILE] = pack_str(r, info->file);
	r->str[CP_SYM_STR_NEAREST] = pack_str(r, info->nearest);
	for (__u32 i = 0; i < info->nr_inlined && i < CP_MAX_INLINE_DEPTH; i++) {
		r->inl_line[i] = info->inlined[i].line;
		r->inl_column[i] = info->inlined[i].column;
		r->str[CP_SYM_STR_INLINED + 2 * i] = pack_str(r, info->inlined[i].function);
		r->str[CP_SYM_STR_INLINED + 2 * i + 1] = pack_str(r, info->inlined[i].file);
	}
}

/* Closes the descriptors a request brought (-1: none). */
static void close_fds(const int fds[FDS_MAX])
{
	for (unsigned int i = 0; i < FDS_MAX; i++)
		if (fds[i] >= 0)
			close(fds[i]);
}

/*
 * The Dwfl of @rq's file: held, or made from @fds (the copy, its separate
 * debug file or -1; taken over) and held when the file has a key. 0 or
 * -errno (-ENOEXEC: not ELF).
 */
static int file_dwfl(const struct cp_sym_request *rq, const int fds[FDS_MAX], struct held *tmp,
		     struct held **out)
{
	struct held *h = held_find(&rq->key);
	int err;

	if (h || fds[0] < 0) {
		close_fds(fds);
		*out = h;
		return h ? 0 : -EBADF;
	}
	h = rq->key.ino ? held_slot() : tmp;
	err = cp_sym_dwfl_file("file", fds[0], &h->dwfl, &h->mod);
	if (err) {
		if (fds[1] >= 0)
			close(fds[1]);
		memset(h, 0, sizeof(*h));
		return err;
	}
	h->key = rq->key;
	h->debug_fd = fds[1];
	*out = h;
	return 0;
}

/* Answers @rq about the copy @fds brought (taken over; -1: none came) into @r. */
static void answer(const struct cp_sym_request *rq, const int fds[FDS_MAX], struct cp_sym_reply *r)
{
	__u64 before[CP_TF_NR], after[CP_TF_NR];
	struct cp_symbol_info info;
	struct held tmp = {0}, *h;

	r->id = rq->id;
	for (unsigned int i = 0; i < CP_SYM_NR_STR; i++)
		r->str[i] = CP_SYM_NO_STR;
	cp_tf_refusals(before);
	r->err = file_dwfl(rq, fds, &tmp, &h);
	if (!r->err) {
		h->last_use = ++held_clock;
		/* libdwfl asks for the debug file when it first needs DWARF the copy lacks */
		cp_sym_dwfl_give_debug(h->debug_fd);
		if (!dwfl_addrmodule(h->dwfl, rq->addr)) {
			r->err = -ENOENT;
		} else {
			cp_sym_describe(h->mod, rq->addr, &info);
			pack(&info, r);
		}
		h->debug_fd = cp_sym_dwfl_debug_back();
		if (h == &tmp)
			held_drop(&tmp);
	}
	/* what the parse counted here is the profiler's to count (DWARF past the caps) */
	cp_tf_refusals(after);
	r->counted = 0;
	for (unsigned int i = 0; i < CP_TF_NR; i++)
		if (after[i] > before[i])
			r->counted |= 1u << i;
}

/*
 * The next request and its descriptors (-1: none) from the socket: 1, 0
 * when the client is gone, -1 for a message that is no request.
 */
static int receive(struct cp_sym_request *rq, int fds[FDS_MAX])
{
	union {
		char buf[CMSG_SPACE(FDS_MAX * sizeof(int))];
		struct cmsghdr align;
	} c;
	struct iovec iov = {.iov_base = rq, .iov_len = sizeof(*rq)};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c)};
	struct cmsghdr *cm;
	ssize_t n;

	size_t nfds;

	fds[0] = fds[1] = -1;
	do
		n = recvmsg(FD_SOCK, &msg, MSG_CMSG_CLOEXEC);
	while (n < 0 && errno == EINTR);
	if (n <= 0)
		return 0;
	cm = CMSG_FIRSTHDR(&msg);
	if (cm && cm->cmsg_level == SOL_SOCKET && cm->cmsg_type == SCM_RIGHTS &&
	    cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
		nfds = (cm->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		memcpy(fds, CMSG_DATA(cm), (nfds < FDS_MAX ? nfds : FDS_MAX) * sizeof(int));
	}
	return n == sizeof(*rq) && !(msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)) ? 1 : -1;
}

/*
 * Serves requests until the client is gone. A request that grows the
 * resident set by more than half the allowance @more stops the server
 * unanswered (CP_PW_EXIT_MEMORY: its file is refused, as a parse worker's
 * would be); past half of it in all, every file held is let go first.
 */
__attribute__((noreturn)) static void serve(__u64 more)
{
	static struct cp_sym_reply r;
	__u64 start = cp_statm_resident_bytes(FD_STATM);

	for (;;) {
		struct cp_sym_request rq = {0};
		__u64 before;
		int fds[FDS_MAX], got = receive(&rq, fds);

		if (!got)
			_exit(0);
		memset(&r, 0, sizeof(r));
		/* the peak its client judges a death by is this request's */
		if (write(FD_CLEAR, "5", 1) != 1)
			_exit(CP_PW_EXIT_UNBOUNDED);
		before = cp_statm_resident_bytes(FD_STATM);
		if (got < 0) {
			close_fds(fds);
			r.id = rq.id;
			r.err = -EPROTO;
		} else {
			answer(&rq, fds, &r);
		}
		if (cp_statm_resident_bytes(FD_STATM) > before + more / 2)
			_exit(CP_PW_EXIT_MEMORY);
		if (cp_statm_resident_bytes(FD_STATM) > start + more / 2)
			held_drop_all();
		if (write(FD_SOCK, &r, sizeof(r)) != (ssize_t)sizeof(r))
			_exit(0);
	}
}

void cp_sym_serve(int sock, __u64 room)
{
	struct cp_sandbox sb = {
		.data_more_bytes = cp_pw_allowance(room),
		.stack_bytes = CP_PW_STACK_BYTES,
		.keep_fds = FD_KEPT,
		/* the files held and their debug files, the two a request brings, one libdw may dup */
		.more_fds = FDS_MAX * (CP_SYM_SERVER_FILES + 1) + 1,
	};
	int null = open("/dev/null", O_RDWR), s = fcntl(sock, F_DUPFD, FD_KEPT),
	    statm = open("/proc/self/statm", O_RDONLY), st = fcntl(statm, F_DUPFD, FD_KEPT),
	    clear = open("/proc/self/clear_refs", O_WRONLY), cl = fcntl(clear, F_DUPFD, FD_KEPT);

	if (null < 0 || s < 0 || st < 0 || cl < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(s, FD_SOCK) < 0 || dup2(st, FD_STATM) < 0 ||
	    dup2(cl, FD_CLEAR) < 0)
		_exit(CP_PW_EXIT_UNBOUNDED);
	/* what ps and top call it: the profiler's, not a tenant's */
	prctl(PR_SET_NAME, "cp-symbols");
	/* no fetch from inside: a socket would fail anyway, after a resolver's files did */
	cp_debuginfod_enable(false);
	if (cp_sandbox_enter(&sb))
		_exit(CP_PW_EXIT_UNBOUNDED);
	/* bounded: from here on, its end is a request's doing (sym_server.c, start()) */
	if (write(FD_SOCK, CP_SYM_READY, sizeof(CP_SYM_READY)) != sizeof(CP_SYM_READY))
		_exit(CP_PW_EXIT_UNBOUNDED);
	serve(sb.data_more_bytes);
}
