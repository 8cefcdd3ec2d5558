// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The describe server's side: a bounded child answering requests (sym_serve.h). */
#include <errno.h>
#include <fcntl.h>
#include <malloc.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>

#include "symbols/cfi_guard.h"
#include "symbols/debuginfod.h"
#include "symbols/parse_worker.h"
#include "symbols/sym_dwarf.h"
#include "symbols/sym_dwfl.h"
#include "symbols/sym_serve.h"
#include "symbols/sym_server.h"
#include "util/sandbox.h"
#include "util/self_usage.h"

/* The server's descriptors: its socket, its own /proc/self/statm and clear_refs. */
enum { FD_SOCK = 3, FD_STATM = 4, FD_CLEAR = 5, FD_KEPT = 6 };
/* The descriptors a request brings: the file's copy, then its separate debug file if any. */
#define FDS_MAX 2

/*
 * A file the server keeps parsed, at link-time addresses (describing) or
 * where a process placed it (unwinding: one a process of a file, its
 * addresses randomized): a pool each, so neither evicts the other's.
 */
static struct held {
	struct cp_copy_key key; /* ino 0: a free slot */
	__u64 base;		/* 0, or (unwinding) a process's bias */
	Dwfl *dwfl;
	Dwfl_Module *mod;
	int debug_fd;		  /* its separate debug file until libdwfl takes it; -1: none */
	bool cfi_checked, cfi_ok; /* its CFI, before the first walk: passed, or hidden */
	__u64 bytes;		  /* the pages of its copies (cp_tf_copy_bytes()) */
	__u64 last_use;
} held[2][CP_SYM_SERVER_FILES];
static __u64 held_clock;

/* The CFI verdicts of files walked, by content (a file walked in many processes: checked once). */
#define CFI_SEEN 64
static struct cfi_seen {
	struct cp_copy_key key;
	bool hide; /* it failed the check: hidden in each Elf of it walked */
} cfi_seen[CFI_SEEN];
static unsigned int next_cfi_seen;

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
	for (unsigned int p = 0; p < 2; p++)
		for (unsigned int i = 0; i < CP_SYM_SERVER_FILES; i++)
			if (held[p][i].dwfl)
				held_drop(&held[p][i]);
	/* the freed heap back to the kernel: the next file's growth is measured from here */
	malloc_trim(0);
}

/* The file of @key held at @base in pool @pool, NULL when none is. */
static struct held *held_find(unsigned int pool, const struct cp_copy_key *key, __u64 base)
{
	struct held *h = held[pool];

	for (unsigned int i = 0; key->ino && i < CP_SYM_SERVER_FILES; i++)
		if (h[i].dwfl && h[i].base == base && cp_copy_key_equal(&h[i].key, key))
			return &h[i];
	return NULL;
}

/*
 * Room for a file whose copies hold @bytes: the least recently used files
 * of either pool let go until those held fit this server's share of what
 * the profiler's Dwfls keep to (half the kept copies' bound, a quarter of
 * --max-memory: this process is the profiler's fork), shared by the
 * CP_SYM_ROLES servers. A file the profiler let go stays in memory while
 * held here, and 32 big files held were the whole limit.
 */
static void held_room(__u64 bytes)
{
	__u64 max = cp_tf_kept_max_bytes() / 2 / CP_SYM_ROLES, sum = 0;

	for (unsigned int p = 0; p < 2; p++)
		for (unsigned int i = 0; i < CP_SYM_SERVER_FILES; i++)
			sum += held[p][i].dwfl ? held[p][i].bytes : 0;
	while (sum && sum + bytes > max) {
		struct held *lru = NULL;

		for (unsigned int p = 0; p < 2; p++)
			for (unsigned int i = 0; i < CP_SYM_SERVER_FILES; i++)
				if (held[p][i].dwfl &&
				    (!lru || held[p][i].last_use < lru->last_use))
					lru = &held[p][i];
		sum -= lru->bytes;
		held_drop(lru);
	}
}

/* A free slot of pool @pool, the least recently used one's Dwfl ended to make it. */
static struct held *held_slot(unsigned int pool)
{
	struct held *h = held[pool], *lru = &h[0];

	for (unsigned int i = 0; i < CP_SYM_SERVER_FILES; i++) {
		if (!h[i].dwfl)
			return &h[i];
		if (h[i].last_use < lru->last_use)
			lru = &h[i];
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
 * The Dwfl of the file of @key at @base in pool @pool: held, or made from
 * @fds (the copy, its separate debug file or -1; taken over) and held
 * when the file has a key. 0 or -errno (-ENOEXEC: not ELF).
 */
static int file_dwfl(unsigned int pool, const struct cp_copy_key *key, __u64 base,
		     const int fds[FDS_MAX], struct held *tmp, struct held **out)
{
	struct held *h = held_find(pool, key, base);
	__u64 bytes;
	int err;

	if (h || fds[0] < 0) {
		close_fds(fds);
		*out = h;
		return h ? 0 : -EBADF;
	}
	bytes = cp_tf_copy_bytes(fds[0]) + cp_tf_copy_bytes(fds[1]);
	if (key->ino)
		held_room(bytes);
	h = key->ino ? held_slot(pool) : tmp;
	err = cp_sym_dwfl_placed("file", fds[0], base, &h->dwfl, &h->mod);
	if (err) {
		if (fds[1] >= 0)
			close(fds[1]);
		*h = (struct held){.debug_fd = -1};
		return err;
	}
	h->key = *key;
	h->base = base;
	h->bytes = bytes;
	h->debug_fd = fds[1];
	*out = h;
	return 0;
}

/* Answers @rq about the copy @fds brought (taken over; -1: none came) into @r. */
static void answer(const struct cp_sym_request *rq, const int fds[FDS_MAX], struct cp_sym_reply *r)
{
	struct cp_symbol_info info;
	struct held tmp = {.debug_fd = -1}, *h;

	for (unsigned int i = 0; i < CP_SYM_NR_STR; i++)
		r->str[i] = CP_SYM_NO_STR;
	r->h.err = file_dwfl(0, &rq->key, 0, fds, &tmp, &h);
	if (r->h.err)
		return;
	h->last_use = ++held_clock;
	/* libdwfl asks for the debug file when it first needs DWARF the copy lacks */
	cp_sym_dwfl_give_debug(h->debug_fd);
	if (!dwfl_addrmodule(h->dwfl, rq->addr)) {
		r->h.err = -ENOENT;
	} else {
		cp_sym_describe(h->mod, rq->addr, &info);
		pack(&info, r);
	}
	h->debug_fd = cp_sym_dwfl_debug_back();
	if (h == &tmp)
		held_drop(&tmp);
}

/*
 * Whether @h's file may be walked: its CFI checked (cfi_guard.h) before
 * libdw's unwinder first executes it, hidden when it fails (counted: its
 * frames are walked by frame pointer alone); false when it failed and
 * stays visible.
 */
static bool cfi_guarded(struct held *h)
{
	struct cfi_seen *seen = NULL;
	GElf_Addr bias;
	bool hide;
	Elf *elf;

	if (h->cfi_checked)
		return h->cfi_ok;
	h->cfi_checked = true;
	elf = dwfl_module_getelf(h->mod, &bias);
	if (!elf)
		return h->cfi_ok = false;
	for (unsigned int i = 0; h->key.ino && i < CFI_SEEN && !seen; i++)
		if (cp_copy_key_equal(&cfi_seen[i].key, &h->key))
			seen = &cfi_seen[i];
	hide = seen ? seen->hide : cp_cfi_guard_check(elf, true) != CP_CFI_OK;
	if (hide && !seen)
		cp_tf_count(CP_TF_BAD_CFI); /* once a file */
	h->cfi_ok = !hide || !cp_cfi_guard_hide(elf);
	if (!seen && h->key.ino)
		cfi_seen[next_cfi_seen++ % CFI_SEEN] =
			(struct cfi_seen){.key = h->key, .hide = hide};
	return h->cfi_ok;
}

/* An unwind walk's hand-over: the first frame outside the file walked (@ctx, its module). */
static bool other_module(Dwfl_Module *m, void *ctx)
{
	return m != ctx;
}

/* Walks @rq's stack copy in the file the copy @fds brought is (unwind.h) into @r. */
static void answer_unwind(const struct cp_sym_unwind_request *rq, const int fds[FDS_MAX],
			  struct cp_sym_unwind_reply *r)
{
	struct held tmp = {.debug_fd = -1}, *h;
	struct cp_unwind_walk w = {
		.r = &rq->stack,
		.from = rq->from,
		.ips = r->ips,
		.max = rq->max < CP_SYM_UNWIND_FRAMES ? rq->max : CP_SYM_UNWIND_FRAMES,
		.hand_on = other_module,
	};

	if (rq->stack.len > sizeof(rq->stack.stack)) {
		close_fds(fds);
		r->h.err = -EPROTO;
		return;
	}
	r->h.err = file_dwfl(1, &rq->head.key, rq->head.addr, fds, &tmp, &h);
	if (r->h.err)
		return;
	h->last_use = ++held_clock;
	if (!cfi_guarded(h)) {
		r->h.err = -ENOEXEC;
		goto out;
	}
	w.ctx = h->mod;
	/* CFI in .debug_frame only: the debug file's */
	cp_sym_dwfl_give_debug(h->debug_fd);
	cp_unwind_walk(h->dwfl, 1, &w);
	h->debug_fd = cp_sym_dwfl_debug_back();
	r->nr = (__u32)w.n;
	r->flags =
		(w.handed ? CP_SYM_UNWIND_HANDED : 0) | (w.reached_start ? CP_SYM_UNWIND_START : 0);
	r->next = w.next;
out:
	if (h == &tmp)
		held_drop(&tmp);
}

/* A request, whichever it is: its size tells. */
union request {
	struct cp_sym_request describe;
	struct cp_sym_unwind_request unwind;
};

/*
 * The next request and its descriptors (-1: none) from the socket: its
 * size, 0 when the client is gone, -1 for a message that is no request.
 */
static ssize_t receive(union request *rq, int fds[FDS_MAX])
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
	size_t nfds;
	ssize_t n;

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
	if ((n != sizeof(rq->describe) && n != sizeof(rq->unwind)) ||
	    (msg.msg_flags & (MSG_TRUNC | MSG_CTRUNC)))
		return -1;
	return n;
}

/* The resident set's peak since the last reset (clear_refs 5), 0 when unknown. */
static __u64 peak_bytes(void)
{
	struct rusage ru;

	return getrusage(RUSAGE_SELF, &ru) ? 0 : (__u64)ru.ru_maxrss << 10;
}

/*
 * Serves requests until the client is gone. A request that grows the
 * resident set (now or at its peak) by more than half the allowance @more stops the server
 * unanswered (CP_PW_EXIT_MEMORY: its file is refused, as a parse worker's
 * would be); past half of it in all, every file held is let go first.
 */
__attribute__((noreturn)) static void serve(__u64 more)
{
	static union request rq;
	static struct cp_sym_reply r;
	static struct cp_sym_unwind_reply u;
	__u64 start = cp_statm_resident_bytes(FD_STATM);

	for (;;) {
		__u64 before, counts[CP_TF_NR], after[CP_TF_NR];
		int fds[FDS_MAX];
		ssize_t got;
		struct cp_sym_reply_head *h = &r.h;
		const void *out = &r;
		size_t size = sizeof(r);

		memset(&rq, 0, sizeof(rq));
		got = receive(&rq, fds);
		if (!got)
			_exit(0);
		memset(&r, 0, sizeof(r));
		memset(&u, 0, sizeof(u));
		/* the peak its client judges a death by is this request's */
		if (write(FD_CLEAR, "5", 1) != 1)
			_exit(CP_PW_EXIT_UNBOUNDED);
		before = cp_statm_resident_bytes(FD_STATM);
		cp_tf_refusals(counts);
		if (got == sizeof(rq.unwind)) {
			h = &u.h;
			out = &u;
			size = sizeof(u);
			answer_unwind(&rq.unwind, fds, &u);
		} else if (got == sizeof(rq.describe)) {
			answer(&rq.describe, fds, &r);
		} else {
			close_fds(fds);
			r.h.err = -EPROTO;
		}
		h->id = rq.describe.id;
		/* what the parse counted here is the profiler's to count (DWARF past the caps) */
		cp_tf_refusals(after);
		for (unsigned int i = 0; i < CP_TF_NR; i++)
			if (after[i] > counts[i])
				h->counted |= 1u << i;
		/* its peak too: an allocation storm libdw survived (a MiniDebugInfo bomb cut at
		 * RLIMIT_DATA) is the file's, as it would have been in a parse worker */
		if (cp_statm_resident_bytes(FD_STATM) > before + more / 2 ||
		    peak_bytes() > before + more / 2)
			_exit(CP_PW_EXIT_MEMORY);
		if (cp_statm_resident_bytes(FD_STATM) > start + more / 2)
			held_drop_all();
		if (write(FD_SOCK, out, size) != (ssize_t)size)
			_exit(0);
	}
}

void cp_sym_serve(int sock, __u64 room, const char *name)
{
	struct cp_sandbox sb = {
		.data_more_bytes = cp_pw_allowance(room),
		.stack_bytes = CP_PW_STACK_BYTES,
		.keep_fds = FD_KEPT,
		/* the files held (two pools) and their debug files, the two a request brings,
		 * one libdw may dup */
		.more_fds = FDS_MAX * (2 * CP_SYM_SERVER_FILES + 1) + 1,
	};
	int null = open("/dev/null", O_RDWR), s = fcntl(sock, F_DUPFD, FD_KEPT),
	    statm = open("/proc/self/statm", O_RDONLY), st = fcntl(statm, F_DUPFD, FD_KEPT),
	    clear = open("/proc/self/clear_refs", O_WRONLY), cl = fcntl(clear, F_DUPFD, FD_KEPT);

	if (null < 0 || s < 0 || st < 0 || cl < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
	    dup2(null, 2) < 0 || dup2(s, FD_SOCK) < 0 || dup2(st, FD_STATM) < 0 ||
	    dup2(cl, FD_CLEAR) < 0)
		_exit(CP_PW_EXIT_UNBOUNDED);
	/* what ps and top call it: the profiler's, not a tenant's */
	prctl(PR_SET_NAME, name);
	/* no fetch from inside: a socket would fail anyway, after a resolver's files did */
	cp_debuginfod_enable(false);
	if (cp_sandbox_enter(&sb))
		_exit(CP_PW_EXIT_UNBOUNDED);
	/* bounded: from here on, its end is a request's doing (sym_server.c, start()) */
	if (write(FD_SOCK, CP_SYM_READY, sizeof(CP_SYM_READY)) != sizeof(CP_SYM_READY))
		_exit(CP_PW_EXIT_UNBOUNDED);
	serve(sb.data_more_bytes);
}
