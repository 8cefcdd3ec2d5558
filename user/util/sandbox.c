// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* A forked child bounded before it parses (sandbox.h). */
#include <errno.h>
#include <grp.h>
#include <signal.h>
#include <stddef.h>
#include <unistd.h>
#include <linux/audit.h>
#include <linux/close_range.h>
#include <linux/filter.h>
#include <linux/seccomp.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/syscall.h>

#include "util/privs.h"
#include "util/sandbox.h"
#include "util/sandbox_id.h"
#include "util/self_usage.h"

#if defined(__x86_64__)
#define CP_SANDBOX_ARCH AUDIT_ARCH_X86_64
#elif defined(__aarch64__)
#define CP_SANDBOX_ARCH AUDIT_ARCH_AARCH64
#endif

#ifdef CP_SANDBOX_ARCH
/*
 * What libelf, libdw and glibc (malloc, qsort's sysinfo, stdio) need on
 * descriptors already open. No signal to anyone (abort() then ends the
 * worker by its own fault), no fcntl (a lease on the copy would outlive
 * it); a stat of a path passes (metadata only). recvmsg is the describe
 * server's (symbols/sym_server.c): its requests come on the socket it was
 * given, each with a descriptor (SCM_RIGHTS) its client sends; it touches
 * no descriptor but its own, and it makes no socket (socket() fails).
 */
static const int allowed[] = {
	SYS_read,	   SYS_write,	       SYS_pread64,	 SYS_lseek,   SYS_close,
	SYS_fstat,	   SYS_newfstatat,     SYS_statx,	 SYS_mmap,    SYS_munmap,
	SYS_mremap,	   SYS_mprotect,       SYS_brk,		 SYS_madvise, SYS_futex,
	SYS_rt_sigreturn,  SYS_rt_sigprocmask, SYS_rt_sigaction, SYS_gettid,  SYS_getpid,
	SYS_clock_gettime, SYS_getrandom,      SYS_sched_yield,	 SYS_exit,    SYS_exit_group,
	SYS_getuid,	   SYS_geteuid,	       SYS_getgid,	 SYS_getegid, SYS_sysinfo,
	SYS_uname,	   SYS_getrlimit,      SYS_getrusage,	 SYS_dup,     SYS_recvmsg,
};

/* Paths fail cleanly: libdw looks for files beside the one it reads. */
static const int refused[] = {
#ifdef SYS_open
	SYS_open,   SYS_stat,	 SYS_lstat,	 SYS_access,	SYS_readlink,
#endif
	SYS_openat, SYS_openat2, SYS_readlinkat, SYS_faccessat, SYS_getcwd,
};

static int install_filter(void)
{
	enum {
		N_ALLOWED = sizeof(allowed) / sizeof(allowed[0]),
		N_REFUSED = sizeof(refused) / sizeof(refused[0])
	};
	/*
	 * The arch check (3), the number (1), x32's (1), one jump for each
	 * call, then ENOSYS, EACCES and the allow each jump lands on.
	 */
	struct sock_filter f[5 + N_ALLOWED + N_REFUSED + 3];
	struct sock_fprog prog = {.filter = f};
	unsigned int n = 0;

	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, arch));
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, CP_SANDBOX_ARCH, 1, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_KILL_PROCESS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_LD | BPF_W | BPF_ABS,
					      offsetof(struct seccomp_data, nr));
	/* x32's numbers carry bit 30: none is allowed (ENOSYS, as for every call not listed) */
	f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JGE | BPF_K, 0x40000000u,
					      N_ALLOWED + N_REFUSED, 0);
	for (unsigned int i = 0; i < N_ALLOWED; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)allowed[i],
						      N_ALLOWED - i + N_REFUSED + 1, 0);
	for (unsigned int i = 0; i < N_REFUSED; i++)
		f[n++] = (struct sock_filter)BPF_JUMP(BPF_JMP | BPF_JEQ | BPF_K, (__u32)refused[i],
						      N_REFUSED - i, 0);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | ENOSYS);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ERRNO | EACCES);
	f[n++] = (struct sock_filter)BPF_STMT(BPF_RET | BPF_K, SECCOMP_RET_ALLOW);
	prog.len = (unsigned short)n;
	return prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, &prog, 0, 0) ? -errno : 0;
}

bool cp_sandbox_filtered(void)
{
	return true;
}
#else
static int install_filter(void)
{
	return 0;
}

bool cp_sandbox_filtered(void)
{
	return false;
}
#endif

/* Closes every descriptor from @first on: close_range() (5.9), else one by one. */
static int close_from(unsigned int first)
{
	struct rlimit rl;

	if (!syscall(SYS_close_range, first, ~0u, 0))
		return 0;
	if (errno != ENOSYS || getrlimit(RLIMIT_NOFILE, &rl))
		return -errno;
	for (rlim_t fd = first; fd < rl.rlim_max && fd < (1u << 20); fd++)
		close((int)fd);
	return 0;
}

static int limit(int resource, __u64 soft, __u64 hard)
{
	struct rlimit rl = {.rlim_cur = soft, .rlim_max = hard};

	return setrlimit(resource, &rl) ? -errno : 0;
}

int cp_sandbox_enter(const struct cp_sandbox *sb)
{
	struct sigaction dfl = {.sa_handler = SIG_DFL};
	sigset_t none;
	__u64 data = 0, nofile = sb->keep_fds + 8ull + sb->more_fds;
	/* RLIMIT_CPU 0 would be one second (the kernel's reading of 0) */
	__u64 cpu = sb->cpu_s ? sb->cpu_s : RLIM_INFINITY;
	/* chosen by the parent before the fork, else here, while /proc still opens */
	__u32 id = cp_sandbox_id();
	int ret;

	for (int sig = 1; sig < NSIG; sig++)
		if (sig != SIGKILL && sig != SIGSTOP)
			sigaction(sig, &dfl, NULL); /* EINVAL for the few glibc keeps */
	sigemptyset(&none);
	if (sigprocmask(SIG_SETMASK, &none, NULL))
		return -errno;
	/* a terminal's ^C or a tenant's kill of the group is not the file's fault */
	if (setpgid(0, 0))
		return -errno;
	if ((ret = close_from(sb->keep_fds)))
		return ret;
	if ((ret = cp_self_status_bytes("VmData", &data))) /* what RLIMIT_DATA counts */
		return ret;
	if ((ret = limit(RLIMIT_CORE, 0, 0)) || (ret = limit(RLIMIT_FSIZE, 0, 0)) ||
	    (ret = limit(RLIMIT_NOFILE, nofile, nofile)) ||
	    (ret = limit(RLIMIT_DATA, data + sb->data_more_bytes, data + sb->data_more_bytes)) ||
	    (ret = limit(RLIMIT_STACK, sb->stack_bytes, sb->stack_bytes)) ||
	    (ret = limit(RLIMIT_CPU, cpu, sb->cpu_s ? cpu + 1 : cpu)))
		return ret;
	/*
	 * A user and group no one holds where the setuid capability is still
	 * ours (util/sandbox_id.h: nobody was any tenant's, who could stop or
	 * kill the child); a live run keeps none: the worker stays root
	 * without any capability, its calls filtered, and no tenant may signal
	 * it. No capability is kept either way. A change of user resets the
	 * death signal and dumpable, so those come after it.
	 */
	if (!setgroups(0, NULL) && id != CP_SANDBOX_ID_NONE && !setresgid(id, id, id))
		(void)setresuid(id, id, id);
	if ((ret = cp_privs_drop_thread()))
		return ret;
	if (prctl(PR_SET_PDEATHSIG, SIGKILL, 0, 0, 0) || prctl(PR_SET_DUMPABLE, 0, 0, 0, 0))
		return -errno;
	alarm(sb->wall_s);
	return install_filter();
}
