// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The describe server's client: requests, deadlines, verdicts (sym_server.h). */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <sys/wait.h>

#include "machine/self_mem.h"
#include "machine/target_file.h"
#include "symbols/parse_worker.h"
#include "symbols/sym_serve.h"
#include "symbols/sym_server.h"
#include "util/clock.h"
#include "util/log.h"
#include "util/sandbox_id.h"
#include "util/self_usage.h"

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
/*
 * A server now (pid 0: none): one describes, one walks stacks, so that a
 * walk, a frame's CFI, never waits behind a describe's parse of seconds.
 */
struct server {
	pid_t pid;
	int pfd;	     /* its pidfd; -1 without one (before Linux 5.3) */
	int sock;	     /* our end */
	int statm;	     /* its /proc/PID/statm; -1: none */
	__u64 room;	     /* the room it was given */
	clockid_t cpu_clock; /* its CPU time's clock */
	bool cpu_clock_ok;
	/* the request in flight (id 0: none) */
	__u64 id;
	size_t reply_size;	 /* the size of its answer */
	bool charged;		 /* its wall time counts to its file's (a describe's) */
	struct cp_copy_key file; /* its file, as verdicts know it */
	__u64 sent_ns;		 /* when it was sent */
	__u64 deadline_ns;	 /* when the server is killed if it has not answered */
	__u64 cpu_ns;		 /* the server's CPU time when it was sent */
	__u64 rss;		 /* its resident set then (its peak is reset to it) */
	unsigned int cpu_s;	 /* the CPU seconds the workers' budget lent it */
	bool lent;		 /* those seconds are held for it, its CPU time not spent yet */
	bool over;		 /* killed at those seconds, short of a worker's own */
	bool died;		 /* the last one died or was killed: the next is a restart */
	__u64 retry_ns;		 /* after a start that failed, none is tried before (cp_now_ns()) */
	unsigned int slot;	 /* its slot in self_mem's and self_usage's counts */
};
static struct server servers[CP_SYM_ROLES] = {
	[CP_SYM_DESCRIBER] = {.pfd = -1, .sock = -1, .statm = -1, .slot = CP_SYM_DESCRIBER},
	[CP_SYM_WALKER] = {.pfd = -1, .sock = -1, .statm = -1, .slot = CP_SYM_WALKER},
};
_Static_assert(CP_SYM_ROLES <= CP_PW_LOANS && CP_SYM_ROLES <= CP_SELF_MEM_SERVERS &&
		       CP_SYM_ROLES <= CP_SELF_HELPER_CLOCKS,
	       "a slot for each server");
/* The server the call at hand asks (under the lock). */
static struct server *srv = &servers[CP_SYM_DESCRIBER];

/*
 * The CPU seconds a request of @srv's may take at most, past which its file
 * is refused: a walk is one frame's CFI, a second is plenty, and a
 * describe's loan leaves it; a describe, a worker's own.
 */
static unsigned int cap_s(const struct server *s)
{
	return s->slot == CP_SYM_WALKER ? 1 : CP_PW_SECONDS;
}
static __u64 next_id = 1;
static unsigned int wait_ms = UINT_MAX, deadline_ms = CP_PW_SECONDS * 1000;
static struct cp_sym_server_stats stats;
/* The wall time the server spent on each file's requests (charge()), the last CP_SYM_SPENT files. */
#define CP_SYM_SPENT 64
static struct spent {
	struct cp_copy_key key;
	__u64 ns;
} spent[CP_SYM_SPENT];
static unsigned int next_spent;
static bool unbounded; /* a server could not bound itself: none is made again */
/* After a start that failed, none is tried again for this long. */
#define CP_SYM_RETRY_NS 1000000000ull

/* The server's CPU time so far, 0 when unknown. */
static __u64 server_cpu_ns(void)
{
	struct timespec ts;

	if (!srv->cpu_clock_ok || clock_gettime(srv->cpu_clock, &ts))
		return 0;
	return (__u64)ts.tv_sec * 1000000000ull + (__u64)ts.tv_nsec;
}

static void reap(void);

/*
 * The CPU time the request in flight took, the server's at @cpu_now_ns
 * (the kernel's count) less its count when it was sent, spent from the
 * workers' budget and counted; its loan returned.
 */
static void spend(__u64 cpu_now_ns)
{
	__u64 used = cpu_now_ns > srv->cpu_ns ? cpu_now_ns - srv->cpu_ns : 0;

	if (!srv->lent)
		return;
	srv->lent = false;
	stats.cpu_ns += used;
	cp_parse_worker_spent(srv->slot, used);
}

/*
 * Whether the request in flight used the CPU seconds it was lent; else,
 * in @wake_ns, the earliest time it can have (the server runs one thread).
 */
static bool over_loan(__u64 now, __u64 *wake_ns)
{
	__u64 cpu = server_cpu_ns(), used = cpu > srv->cpu_ns ? cpu - srv->cpu_ns : 0,
	      loan = srv->cpu_s * 1000000000ull;

	*wake_ns = UINT64_MAX;
	if (!srv->lent || !cpu)
		return false;
	if (used >= loan)
		return true;
	*wake_ns = now + (loan - used);
	return false;
}

/*
 * Waits for the new server's word that it bounded itself: 0, else it is
 * killed and reaped (no request in flight: an end before the word is the
 * sandbox's failure, not a file's) and -ENOSYS.
 */
static int ready(void)
{
	struct pollfd pf = {.fd = srv->sock, .events = POLLIN};
	char word[sizeof(CP_SYM_READY)];

	srv->id = 0;
	if (poll(&pf, 1, (int)deadline_ms) == 1 &&
	    recv(srv->sock, word, sizeof(word), MSG_DONTWAIT) == (ssize_t)sizeof(word) &&
	    !memcmp(word, CP_SYM_READY, sizeof(word)))
		return 0;
	reap();
	return -ENOSYS;
}

/* Forks a server: 0, or -ENOSYS when none could be made. */
static int start(void)
{
	char path[64];
	int sv[2];
	pid_t pid;

	if (socketpair(AF_UNIX, SOCK_SEQPACKET | SOCK_CLOEXEC, 0, sv))
		return -ENOSYS;
	srv->room = cp_pw_room();
	(void)cp_sandbox_id(); /* the sandbox's user, chosen once: the child inherits it */
	pid = fork();
	if (pid == 0)
		cp_sym_serve(sv[1], srv->room,
			     srv->slot == CP_SYM_WALKER ? "cp-unwind" : "cp-symbols");
	close(sv[1]);
	if (pid < 0) {
		close(sv[0]);
		return -ENOSYS;
	}
	srv->pid = pid;
	srv->sock = sv[0];
	/* its pidfd becomes readable when it ends: no polling meanwhile */
	srv->pfd = (int)syscall(SYS_pidfd_open, pid, 0);
	snprintf(path, sizeof(path), "/proc/%d/statm", pid);
	srv->statm = open(path, O_RDONLY | O_CLOEXEC);
	srv->cpu_clock_ok = !clock_getcpuclockid(pid, &srv->cpu_clock);
	/* the profiler's own cost as it goes, not only once it is reaped */
	if (srv->cpu_clock_ok)
		cp_self_helper_clock(srv->slot, srv->cpu_clock, true);
	cp_self_mem_set_server(srv->slot, pid);
	stats.started++;
	stats.restarts += srv->died;
	srv->died = false;
	return ready();
}

/* The file of the request in flight refused with outcome @o: kept, counted, said. */
static void refuse(const struct cp_pw_outcome *o)
{
	static struct cp_log_limit said = CP_LOG_LIMIT_INIT(CP_LOG_WARNING, 3);

	/* one table of verdicts: the file is refused to the profiler's own libdw too */
	cp_parse_worker_keep(&srv->file, o);
	stats.refused++;
	/* the report's refusals, as a parse worker's are */
	cp_tf_count(o->v == CP_PW_MEMORY ? CP_TF_MEMORY : CP_TF_PARSE);
	cp_log_limited(&said,
		       "symbol server: a file (device %llu, inode %llu) ended it (%s); its symbols "
		       "are not read",
		       (unsigned long long)srv->file.dev, (unsigned long long)srv->file.ino,
		       cp_pw_verdict_name(o->v));
}

/*
 * Waits for the server, killed or ended, and judges its end: the file of
 * a request in flight refused (a server that ended unasked is no
 * verdict on any file), one that could not bound itself ends the making
 * of servers. Its CPU time is the profiler's cost.
 */
static void reap(void)
{
	struct cp_pw_outcome o = {.room = srv->room};
	struct rusage ru;
	int status = 0;
	pid_t got;

	/* a server that hung up and lives on (or loops) would be waited for ever */
	kill(srv->pid, SIGKILL);
	while ((got = wait4(srv->pid, &status, 0, &ru)) < 0 && errno == EINTR)
		;
	if (srv->pfd >= 0)
		close(srv->pfd);
	if (srv->statm >= 0)
		close(srv->statm);
	close(srv->sock);
	cp_self_mem_set_server(srv->slot, 0);
	cp_self_helper_clock(srv->slot, 0, false);
	if (got == srv->pid) {
		__u64 cpu = cp_rusage_cpu_ns(&ru), peak = (__u64)ru.ru_maxrss << 10;

		cp_self_helpers_add_ns(cpu);
		o.cpu_ns = cpu > srv->cpu_ns ? cpu - srv->cpu_ns : 0;
		spend(cpu);
		/* a parse worker's rules; its peak is the request's (reset as it began) */
		o.v = cp_pw_judge_in(status, 16, srv->id && peak > srv->rss ? peak - srv->rss : 0,
				     srv->room);
		/* it ended with a request in flight, after it bounded itself (ready()):
		 * whatever it says, that request ended it */
		if (srv->id && (o.v == CP_PW_PASSED || o.v == CP_PW_FAILED))
			o.v = CP_PW_CRASHED;
		if (o.v == CP_PW_FAILED && !unbounded)
			cp_warn("symbol server: it could not be bounded; no server is made again");
		unbounded |= o.v == CP_PW_FAILED;
		/* stopped at the seconds the budget lent it, as a worker at its RLIMIT_CPU:
		 * not the file's fault; it waits until the budget holds twice that */
		if (srv->id && srv->over && srv->cpu_s < cap_s(srv)) {
			o.v = CP_PW_WAITING;
			o.need_s = 2 * srv->cpu_s < cap_s(srv) ? 2 * srv->cpu_s : cap_s(srv);
			cp_parse_worker_keep(&srv->file, &o);
		} else if (srv->id && o.v != CP_PW_FAILED) {
			refuse(&o);
		}
	}
	spend(srv->cpu_ns); /* no count of its own: none spent */
	/* not our child any more (SIGCHLD ignored): no verdict, a new server next time */
	srv->died = true;
	srv->pid = 0;
	srv->pfd = srv->sock = srv->statm = -1;
	srv->id = 0;
	srv->over = false;
}

/* Kills the server (past its deadline: the request's file is refused for time) and reaps it. */
static void kill_server(void)
{
	kill(srv->pid, SIGKILL);
	reap();
}

/*
 * Adds @ns, the wall time of a request answered, to its file's: a file
 * that keeps the server busy past CP_PW_SECONDS in all (each request under
 * its deadline) is refused for time, as a worker past its time is.
 */
static void charge(__u64 ns)
{
	struct spent *e = NULL;

	for (unsigned int i = 0; i < CP_SYM_SPENT && !e; i++)
		if (cp_copy_key_equal(&spent[i].key, &srv->file))
			e = &spent[i];
	if (!e) {
		e = &spent[next_spent++ % CP_SYM_SPENT];
		*e = (struct spent){.key = srv->file};
	}
	e->ns += ns;
	if (e->ns > CP_PW_SECONDS * 1000000000ull) {
		struct cp_pw_outcome o = {.v = CP_PW_TIME, .room = srv->room, .cpu_ns = e->ns};

		refuse(&o);
		e->ns = 0;
	}
}

/*
 * Reads an answer into @r when one is there: 1 for the request in flight
 * (no longer in flight), 0 for none yet; one of another size or id (no
 * answer of ours) is dropped.
 */
static int take_answer(void *r)
{
	const struct cp_sym_reply_head *h = r;
	ssize_t n = recv(srv->sock, r, srv->reply_size, MSG_DONTWAIT | MSG_TRUNC);

	if (n != (ssize_t)srv->reply_size || h->id != srv->id)
		return 0;
	srv->id = 0;
	spend(server_cpu_ns());
	/* a walk is one frame's CFI: a file walked in many processes is walked without end */
	if (srv->charged)
		charge(cp_now_ns() - srv->sent_ns);
	/*
	 * what the server's parse counted of the file's content, once a reason an
	 * answer, a late one's too: the server counts a module's once (not its opens,
	 * which the sandbox refuses: separate debug information)
	 */
	if (h->counted & (1u << CP_TF_DEEP_DWARF))
		cp_tf_count(CP_TF_DEEP_DWARF);
	if (h->counted & (1u << CP_TF_BAD_CFI))
		cp_tf_count(CP_TF_BAD_CFI);
	return 1;
}

/*
 * Waits until @until_ns for the answer to the request in flight, into
 * @r: 1 when it came, 0 when the wait ended first, -EIO when the server
 * ended (reaped; past the request's deadline it is killed), -EAGAIN when
 * it was killed at the CPU seconds the budget lent the request, short of
 * CP_PW_SECONDS.
 */
static int await(__u64 until_ns, void *r)
{
	for (;;) {
		struct pollfd pf[2] = {{.fd = srv->sock, .events = POLLIN},
				       {.fd = srv->pfd, .events = POLLIN}};
		__u64 now = cp_now_ns(),
		      end = until_ns < srv->deadline_ns ? until_ns : srv->deadline_ns, wake;

		if (take_answer(r))
			return 1;
		srv->over = over_loan(now, &wake);
		if (srv->over) {
			/* short of its role's seconds, its file waits (reap()); at them, it
			 * is refused for time as a worker would be: a walk's cap is one
			 * second, which a walk past it would otherwise wait for forever */
			int err = srv->cpu_s < cap_s(srv) ? -EAGAIN : -EIO;

			kill_server();
			return err;
		}
		if (now >= srv->deadline_ns) {
			kill_server();
			return -EIO;
		}
		end = end < wake ? end : wake;
		if (now >= end)
			return 0;
		/* no pidfd: a socket's hangup says it too */
		if (poll(pf, srv->pfd >= 0 ? 2 : 1, (int)((end - now) / 1000000 + 1)) < 0 &&
		    errno != EINTR)
			usleep(2000);
		/* its end (no pidfd: the socket's hangup says it), after an answer sent before it */
		if ((pf[1].revents & POLLIN) || (pf[0].revents & (POLLHUP | POLLERR))) {
			if (take_answer(r))
				return 1;
			reap();
			return -EIO;
		}
	}
}

/*
 * Sends request @rq (@size bytes, its answer @reply_size) with the copy
 * @fds[0] and its separate debug file @fds[1] (-1: none); the request is
 * in flight then. 0 or -errno.
 */
static int send_request(const struct cp_sym_request *rq, size_t size, size_t reply_size,
			const int fds[2])
{
	union {
		char buf[CMSG_SPACE(2 * sizeof(int))];
		struct cmsghdr align;
	} c = {0};
	struct iovec iov = {.iov_base = (void *)rq, .iov_len = size};
	struct msghdr msg = {.msg_iov = &iov,
			     .msg_iovlen = 1,
			     .msg_control = c.buf,
			     .msg_controllen = sizeof(c)};
	struct cmsghdr *cm = CMSG_FIRSTHDR(&msg);
	size_t nfds = fds[1] >= 0 ? 2 : 1;
	ssize_t n;

	msg.msg_controllen = CMSG_SPACE(nfds * sizeof(int));
	cm->cmsg_level = SOL_SOCKET;
	cm->cmsg_type = SCM_RIGHTS;
	cm->cmsg_len = CMSG_LEN(nfds * sizeof(int));
	memcpy(CMSG_DATA(cm), fds, nfds * sizeof(int));
	srv->cpu_ns = server_cpu_ns();
	srv->rss = cp_statm_resident_bytes(srv->statm);
	n = sendmsg(srv->sock, &msg, MSG_NOSIGNAL);
	if (n != (ssize_t)size)
		return n < 0 ? -errno : -EIO;
	srv->id = rq->id;
	srv->reply_size = reply_size;
	srv->charged = size == sizeof(*rq);
	srv->sent_ns = cp_now_ns();
	srv->deadline_ns = srv->sent_ns + deadline_ms * 1000000ull;
	return 0;
}

/* The string at offset @off of an answer copied into @strings (@n bytes), NULL when none. */
static const char *unpack_str(__u32 off, const char *strings, size_t n)
{
	return off < n ? strings + off : NULL;
}

/* An answer's error, -EPROTO when it is none the server may give. */
static int answer_err(const struct cp_sym_reply_head *h)
{
	if (h->err && h->err != -ENOENT && h->err != -ENOEXEC && h->err != -ENOMEM &&
	    h->err != -EBADF)
		return -EPROTO;
	return h->err;
}

/*
 * @r, checked, into @out and @strings (@size bytes): strings past the
 * buffer are NULL, the last one in it cut. Returns the answer's error.
 */
static int unpack(const struct cp_sym_reply *r, struct cp_symbol_info *out, char *strings,
		  size_t size)
{
	size_t n = r->used < sizeof(r->strings) ? r->used : sizeof(r->strings);

	if (r->h.err)
		return answer_err(&r->h);
	n = n < size ? n : size;
	if (n) {
		memcpy(strings, r->strings, n);
		strings[n - 1] = '\0'; /* every string ends in the buffer, whatever was sent */
	}
	out->flags = r->flags;
	out->function_offset = r->function_offset;
	out->nearest_offset = r->nearest_offset;
	out->sym_start = r->sym_start;
	out->sym_size = r->sym_size;
	out->line = r->line;
	out->column = r->column;
	out->function = unpack_str(r->str[CP_SYM_STR_FUNCTION], strings, n);
	out->file = unpack_str(r->str[CP_SYM_STR_FILE], strings, n);
	out->nearest = unpack_str(r->str[CP_SYM_STR_NEAREST], strings, n);
	out->nr_inlined = r->nr_inlined < CP_MAX_INLINE_DEPTH ? r->nr_inlined : CP_MAX_INLINE_DEPTH;
	for (__u32 i = 0; i < out->nr_inlined; i++) {
		struct cp_inline_caller *c = &out->inlined[i];

		c->function = unpack_str(r->str[CP_SYM_STR_INLINED + 2 * i], strings, n);
		c->file = unpack_str(r->str[CP_SYM_STR_INLINED + 2 * i + 1], strings, n);
		c->line = r->inl_line[i];
		c->column = r->inl_column[i];
	}
	return 0;
}

/*
 * The file of copy @mfd as verdicts know it, into @file: its content's
 * key (@key), else the copy's own. 0, or -errno when @mfd is no descriptor.
 */
static int verdict_key(int mfd, const struct cp_copy_key *key, struct cp_copy_key *file)
{
	*file = *key;
	return key->ino ? 0 : cp_tf_key(mfd, file);
}

/* Whether @file is refused now. */
static bool refused(const struct cp_copy_key *file)
{
	enum cp_pw_verdict v;

	return cp_parse_worker_known(file, &v) && v != CP_PW_PASSED;
}

/* Whether @file waits for the budget: its request was stopped at the seconds it was lent. */
static bool waits(const struct cp_copy_key *file)
{
	enum cp_pw_verdict v = CP_PW_FAILED;

	return !cp_parse_worker_known(file, &v) && v == CP_PW_WAITING;
}

/*
 * Asks the server @rq (@size bytes: which request it is) about the copy
 * @fds[0] of @file (its debug file @fds[1]) and waits for the answer as
 * cp_sym_server_pace() says, into @r (@reply_size bytes). 1 with an
 * answer, else as cp_sym_server_describe() returns. Under the lock.
 */
static int ask(const struct cp_sym_request *rq, size_t size, const int fds[2],
	       const struct cp_copy_key *file, void *r, size_t reply_size)
{
	static union {
		struct cp_sym_reply describe;
		struct cp_sym_unwind_reply unwind;
	} late;
	__u64 until_ns = wait_ms == UINT_MAX ? UINT64_MAX : cp_now_ns() + wait_ms * 1000000ull;
	/* an earlier request's answer is only looked for: this lookup does not wait for
	 * another file's parse (a live drain would stall at each), unless told to wait */
	int got = srv->pid && srv->id ? await(wait_ms == UINT_MAX ? until_ns : 0, &late) : -1;

	/* an earlier request first: its answer, late, is dropped */
	if (!got)
		return -EAGAIN;
	stats.late += got == 1;
	if (refused(file))
		return -EIO;
	if (unbounded)
		return -ENOSYS;
	/* the server's CPU time is the workers' budget's: spent, the file waits as theirs
	 * (no server is forked meanwhile) */
	srv->cpu_s = waits(file) ? 0 : cp_parse_worker_lend(srv->slot, cap_s(srv));
	if (!srv->cpu_s) {
		stats.waited++;
		return -EAGAIN;
	}
	/* a start that failed (fork, socketpair, no word in time) is not tried again at once:
	 * each lookup would fork, and wait for the word under the lock */
	if (!srv->pid && (cp_now_ns() < srv->retry_ns || start())) {
		cp_parse_worker_spent(srv->slot, 0); /* the loan back */
		if (!srv->pid && cp_now_ns() >= srv->retry_ns)
			srv->retry_ns = cp_now_ns() + CP_SYM_RETRY_NS;
		return -ENOSYS;
	}
	srv->lent = true;
	srv->file = *file;
	if (send_request(rq, size, reply_size, fds)) {
		kill_server(); /* a server that takes no request is no use (none in flight) */
		return -EAGAIN;
	}
	got = await(until_ns, r);
	if (got == -EAGAIN) /* stopped at its loan: waits */
		return -EAGAIN;
	if (got < 0)
		return unbounded ? -ENOSYS : -EIO;
	return got ? 1 : -EAGAIN;
}

int cp_sym_server_describe(int mfd, int debug_fd, const struct cp_copy_key *key, __u64 addr,
			   struct cp_symbol_info *out, char *strings, size_t size)
{
	static struct cp_sym_reply r;
	struct cp_sym_request rq = {.addr = addr, .key = *key};
	struct cp_copy_key file;
	int err = verdict_key(mfd, key, &file);

	memset(out, 0, sizeof(*out));
	out->ip = addr;
	if (err)
		return err;
	pthread_mutex_lock(&lock);
	srv = &servers[CP_SYM_DESCRIBER];
	stats.requests++;
	rq.id = next_id++;
	err = ask(&rq, sizeof(rq), (const int[2]){mfd, debug_fd}, &file, &r, sizeof(r));
	if (err == 1)
		err = unpack(&r, out, strings, size);
	pthread_mutex_unlock(&lock);
	return err;
}

/*
 * @r, checked, into @w: its frames after @w's (at most @max), how the walk
 * ended, and the frame it handed on. Returns the answer's error.
 */
static int unpack_unwind(const struct cp_sym_unwind_reply *r, __u32 max, struct cp_unwind_walk *w)
{
	if (r->h.err)
		return answer_err(&r->h);
	if (r->nr > max || (r->flags & ~(__u32)(CP_SYM_UNWIND_HANDED | CP_SYM_UNWIND_START)) ||
	    ((r->flags & CP_SYM_UNWIND_HANDED) && !r->next.pc))
		return -EPROTO;
	memcpy(w->ips + w->n, r->ips, r->nr * sizeof(*r->ips));
	w->n += r->nr;
	w->handed = r->flags & CP_SYM_UNWIND_HANDED;
	w->reached_start = r->flags & CP_SYM_UNWIND_START;
	w->next = r->next;
	w->next.known &= CP_UNWIND_REGS_KEPT;
	w->next.flags &= CP_UNWIND_RET | CP_UNWIND_KEPT;
	return 0;
}

int cp_sym_server_unwind(const struct cp_sym_remote *f, struct cp_unwind_walk *w)
{
	static struct cp_sym_unwind_request rq;
	static struct cp_sym_unwind_reply r;
	size_t room = w->n < w->max ? w->max - w->n : 0;
	struct cp_copy_key file;
	int err = verdict_key(f->fd, &f->key, &file);

	w->handed = w->reached_start = false;
	if (err || !room)
		return err;
	pthread_mutex_lock(&lock);
	srv = &servers[CP_SYM_WALKER];
	stats.unwinds++;
	rq.head = (struct cp_sym_request){.id = next_id++, .addr = f->bias, .key = f->key};
	rq.from = w->from;
	rq.max = room < CP_SYM_UNWIND_FRAMES ? (__u32)room : CP_SYM_UNWIND_FRAMES;
	rq.stack = *w->r;
	err = ask(&rq.head, sizeof(rq), (const int[2]){f->fd, f->debug_fd}, &file, &r, sizeof(r));
	if (err == 1)
		err = unpack_unwind(&r, rq.max, w);
	/* the walk keeps its frames so far: its stack, the frame-pointer walk from here */
	stats.unwinds_later += err == -EAGAIN;
	pthread_mutex_unlock(&lock);
	return err;
}

void cp_sym_server_pace(unsigned int ms, unsigned int dl_ms)
{
	pthread_mutex_lock(&lock);
	wait_ms = ms;
	deadline_ms = dl_ms ? dl_ms : CP_PW_SECONDS * 1000;
	pthread_mutex_unlock(&lock);
}

void cp_sym_server_stats(struct cp_sym_server_stats *out)
{
	pthread_mutex_lock(&lock);
	*out = stats;
	pthread_mutex_unlock(&lock);
}

bool cp_sym_server_usable(void)
{
	bool usable;

	pthread_mutex_lock(&lock);
	usable = !unbounded;
	pthread_mutex_unlock(&lock);
	return usable;
}

pid_t cp_sym_server_pid(enum cp_sym_role role)
{
	pid_t pid;

	pthread_mutex_lock(&lock);
	pid = servers[role].pid;
	pthread_mutex_unlock(&lock);
	return pid;
}

void cp_sym_server_stop(void)
{
	pthread_mutex_lock(&lock);
	for (unsigned int i = 0; i < CP_SYM_ROLES; i++) {
		srv = &servers[i];
		if (srv->pid) {
			/* whatever it does (at work, stopped): no verdict on any file */
			srv->id = 0;
			kill_server();
			srv->died = false;
		}
	}
	pthread_mutex_unlock(&lock);
}
