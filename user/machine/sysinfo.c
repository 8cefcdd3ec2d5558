// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Machine facts: pure parsers first, then one thin probe per fact, then --probe. */
#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statfs.h>
#include <sys/syscall.h>
#include <sys/utsname.h>
#include <linux/bpf.h>
#include <linux/hw_breakpoint.h>
#include <linux/magic.h>
#include <linux/perf_event.h>
#include <bpf/btf.h>

#include "util/parse.h"
#include "util/perf_open.h"
#include "util/privs.h"
#include "util/sysfs.h"
#include "machine/btf_scan.h"
#include "machine/sysinfo.h"

#define VERSION_PART_MAX 65535	   /* what KERNEL_VERSION-style codes can hold */
#define CPULIST_MAX_CPU	 (1 << 20) /* far above any CONFIG_NR_CPUS */

/* Leading decimal digits of *@s, advanced past them; -1 if none or above @max. */
static long take_number(const char **s, long max)
{
	long v = 0;

	if (!isdigit((unsigned char)**s))
		return -1;
	while (isdigit((unsigned char)**s)) {
		v = v * 10 + (**s - '0');
		if (v > max)
			return -1;
		(*s)++;
	}
	return v;
}

int cp_kernel_version_parse(const char *release, struct cp_kernel_version *v)
{
	const char *p = release;
	long major, minor, patch = 0;

	if (!p)
		return -EINVAL;
	major = take_number(&p, VERSION_PART_MAX);
	if (major < 0 || *p++ != '.')
		return -EINVAL;
	minor = take_number(&p, VERSION_PART_MAX);
	if (minor < 0)
		return -EINVAL;
	/* "6.10-rc7" has no patch level; "6.18.44-fc-v669" has one */
	if (p[0] == '.' && isdigit((unsigned char)p[1])) {
		p++;
		patch = take_number(&p, VERSION_PART_MAX);
		if (patch < 0)
			return -EINVAL;
	}
	v->major = (unsigned int)major;
	v->minor = (unsigned int)minor;
	v->patch = (unsigned int)patch;
	return 0;
}

int cp_kernel_version_cmp(const struct cp_kernel_version *v, unsigned int major, unsigned int minor,
			  unsigned int patch)
{
	if (v->major != major)
		return v->major < major ? -1 : 1;
	if (v->minor != minor)
		return v->minor < minor ? -1 : 1;
	if (v->patch != patch)
		return v->patch < patch ? -1 : 1;
	return 0;
}

int cp_cpulist_count(const char *text)
{
	const char *p = text;
	long count = 0;

	if (!p)
		return -EINVAL;
	/* an empty mask prints as "\n" (e.g. the offline file): zero CPUs */
	if (*p == '\0' || !strcmp(p, "\n"))
		return 0;
	for (;;) {
		long lo = take_number(&p, CPULIST_MAX_CPU), hi = lo;

		/* take_number() stops on the digit that overflowed, else on a non-digit */
		if (lo < 0)
			return isdigit((unsigned char)*p) ? -ERANGE : -EINVAL;
		if (*p == '-') {
			p++;
			hi = take_number(&p, CPULIST_MAX_CPU);
			if (hi < 0)
				return isdigit((unsigned char)*p) ? -ERANGE : -EINVAL;
			if (hi < lo)
				return -EINVAL;
		}
		count += hi - lo + 1;
		if (count > CPULIST_MAX_CPU)
			return -ERANGE;
		if (*p == ',') {
			p++;
			continue;
		}
		if (*p == '\n')
			p++;
		return *p ? -EINVAL : (int)count;
	}
}

int cp_parse_proc_int(const char *text, int *out)
{
	char buf[32];
	bool neg;
	__u64 v;
	int err;

	if (!text || strlen(text) >= sizeof(buf))
		return -EINVAL;
	strcpy(buf, text);
	cp_sysfs_chomp(buf);
	neg = buf[0] == '-';
	err = cp_parse_u64(buf + neg, 0, neg ? (__u64)INT_MAX + 1 : INT_MAX, &v);
	if (err)
		return err;
	*out = neg ? (int)-(long long)v : (int)v;
	return 0;
}

void cp_privileges_eval(uid_t euid, __u64 cap_effective, struct cp_privileges *p)
{
	bool admin = cap_effective & (1ULL << CAP_SYS_ADMIN);

	memset(p, 0, sizeof(*p));
	p->euid = euid;
	p->cap_effective = cap_effective;
	p->bpf = admin || (cap_effective & (1ULL << CAP_BPF));
	p->perfmon = admin || (cap_effective & (1ULL << CAP_PERFMON));
	p->ok = p->bpf && p->perfmon;
	snprintf(p->missing, sizeof(p->missing), "%s%s%s", p->bpf ? "" : "CAP_BPF",
		 !p->bpf && !p->perfmon ? ", " : "", p->perfmon ? "" : "CAP_PERFMON");
}

/* ---- thin edges: each returns data or a negative errno ---- */

int cp_sysinfo_kernel(char *release, size_t release_sz, struct cp_kernel_version *v)
{
	struct utsname u;

	if (uname(&u))
		return -errno;
	snprintf(release, release_sz, "%s", u.release);
	return cp_kernel_version_parse(u.release, v);
}

int cp_sysinfo_cpus(const char *root, int *online, int *possible)
{
	char buf[4096];
	int n;

	n = cp_sysfs_read(root, "sys/devices/system/cpu/online", buf, sizeof(buf));
	if (n < 0)
		return n;
	n = cp_cpulist_count(buf);
	if (n < 0)
		return n;
	*online = n;
	n = cp_sysfs_read(root, "sys/devices/system/cpu/possible", buf, sizeof(buf));
	if (n < 0)
		return n;
	n = cp_cpulist_count(buf);
	if (n < 0)
		return n;
	*possible = n;
	return 0;
}

int cp_sysinfo_perf_paranoid(const char *root, int *value)
{
	char buf[32];
	int n = cp_sysfs_read(root, "proc/sys/kernel/perf_event_paranoid", buf, sizeof(buf));

	return n < 0 ? n : cp_parse_proc_int(buf, value);
}

int cp_sysinfo_btf_vmlinux(const char *root)
{
	char path[4096];
	int err = cp_sysfs_path(path, sizeof(path), root, "sys/kernel/btf/vmlinux");

	if (err)
		return err;
	return access(path, R_OK) ? -errno : 0;
}

/*
 * This machine's BTF (root "/"), parsed once for the questions asked of it
 * at start (the machine's facts, the sample program's variant, whether
 * uprobe_multi links exist): each parse took 0.08 s of CPU, a tenth of the
 * profiler's start-up, three times. cp_sysinfo_btf_release() drops it.
 */
static pthread_mutex_t vmlinux_lock = PTHREAD_MUTEX_INITIALIZER;
static struct btf *vmlinux_btf;
/* its raw bytes, read once, for machine/btf_scan.c: 0.03 s where a parse takes 0.09 s */
static void *vmlinux_raw;
static size_t vmlinux_raw_size;
static bool vmlinux_raw_mapped; /* the kernel's own pages, not a copy: see read_vmlinux() */

/* Bytes from read_vmlinux(), done with. */
static void drop_vmlinux(void *data, size_t size, bool mapped)
{
	if (mapped)
		munmap(data, size);
	else
		free(data);
}

void cp_sysinfo_btf_release(void)
{
	pthread_mutex_lock(&vmlinux_lock);
	btf__free(vmlinux_btf);
	vmlinux_btf = NULL;
	if (vmlinux_raw)
		drop_vmlinux(vmlinux_raw, vmlinux_raw_size, vmlinux_raw_mapped);
	vmlinux_raw = NULL;
	pthread_mutex_unlock(&vmlinux_lock);
}

/* @btf from load_vmlinux_btf(), done with: freed unless it is this machine's, kept. */
static void put_vmlinux_btf(struct btf *btf)
{
	if (btf != vmlinux_btf)
		btf__free(btf);
	pthread_mutex_unlock(&vmlinux_lock);
}

/*
 * The kernel's BTF: libbpf's search with @root "/" (kept), else
 * @root/sys/kernel/btf/vmlinux. Hand it back with put_vmlinux_btf().
 */
static struct btf *load_vmlinux_btf(const char *root, int *err)
{
	char path[4096];
	struct btf *btf;

	*err = 0;
	pthread_mutex_lock(&vmlinux_lock);
	if (!strcmp(root, "/")) {
		/* also finds vmlinux images in /boot on kernels without sysfs BTF */
		if (!vmlinux_btf)
			vmlinux_btf = btf__load_vmlinux_btf();
		btf = vmlinux_btf;
	} else {
		*err = cp_sysfs_path(path, sizeof(path), root, "sys/kernel/btf/vmlinux");
		btf = *err ? NULL : btf__parse(path, NULL);
	}
	if (!btf) {
		if (!*err)
			*err = errno ? -errno : -ENOENT;
		pthread_mutex_unlock(&vmlinux_lock);
	}
	return btf;
}

/*
 * @root/sys/kernel/btf/vmlinux's bytes into @data, for drop_vmlinux(): 0 or
 * a negative errno. Where the file is sysfs's (Linux 6.16 on), the kernel's
 * own pages are mapped read-only (@mapped): no 5 MiB copy, a tenth of the
 * start-up's BTF cost, and no heap kept. A file elsewhere (a fixture tree)
 * is read, since one mapped could be truncated under the walk.
 */
static int read_vmlinux(const char *root, void **data, size_t *size, bool *mapped)
{
	char path[4096], *buf = NULL;
	size_t got = 0;
	struct statfs fs;
	struct stat st;
	int fd, err = cp_sysfs_path(path, sizeof(path), root, "sys/kernel/btf/vmlinux");

	if (err)
		return err;
	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st))
		err = -errno;
	else if (!S_ISREG(st.st_mode) || st.st_size <= 0)
		err = -EINVAL;
	*mapped = false;
	if (!err && !fstatfs(fd, &fs) && fs.f_type == SYSFS_MAGIC) {
		void *p = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);

		if (p != MAP_FAILED) {
			close(fd);
			*data = p;
			*size = (size_t)st.st_size;
			*mapped = true;
			return 0;
		}
	}
	if (!err && !(buf = malloc((size_t)st.st_size)))
		err = -ENOMEM;
	while (!err && got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n <= 0)
			err = n ? -errno : -EIO;
		else
			got += (size_t)n;
	}
	close(fd);
	if (err) {
		free(buf);
		return err;
	}
	*data = buf;
	*size = got;
	return 0;
}

/*
 * cp_btf_scan_has() over @root/sys/kernel/btf/vmlinux (with root "/", read
 * once and kept until cp_sysinfo_btf_release()): 1, 0, or a negative errno
 * when the file cannot be read or is not BTF the walk knows, for the caller
 * to ask libbpf's parse.
 */
static int scan_vmlinux(const char *root, __u32 kind, const char *name, const char *enumerator)
{
	bool mine = !strcmp(root, "/");
	void *data = NULL;
	size_t size = 0;
	bool mapped = false;
	int err = 0;

	pthread_mutex_lock(&vmlinux_lock);
	if (mine && vmlinux_raw) {
		data = vmlinux_raw;
		size = vmlinux_raw_size;
	} else {
		err = read_vmlinux(root, &data, &size, &mapped);
		if (!err && mine) {
			vmlinux_raw = data;
			vmlinux_raw_size = size;
			vmlinux_raw_mapped = mapped;
		}
	}
	if (!err)
		err = cp_btf_scan_has(data, size, kind, name, enumerator);
	if (data && data != vmlinux_raw)
		drop_vmlinux(data, size, mapped);
	pthread_mutex_unlock(&vmlinux_lock);
	return err;
}

int cp_sysinfo_btf_has_func(const char *root, const char *name)
{
	struct btf *btf;
	int id, err = scan_vmlinux(root, BTF_KIND_FUNC, name, NULL);

	if (err >= 0)
		return err;
	btf = load_vmlinux_btf(root, &err);
	if (!btf)
		return err;
	id = btf__find_by_name_kind(btf, name, BTF_KIND_FUNC);
	put_vmlinux_btf(btf);
	if (id == -ENOENT)
		return 0;
	return id > 0 ? 1 : id;
}

/* Whether @t, a BTF enum, has an enumerator @name. */
static bool enum_has(const struct btf *btf, const struct btf_type *t, const char *name)
{
	const struct btf_enum *e = btf_enum(t);

	for (int i = 0; i < btf_vlen(t); i++)
		if (!strcmp(btf__name_by_offset(btf, e[i].name_off), name))
			return true;
	return false;
}

int cp_sysinfo_btf_has_enumerator(const char *root, const char *type, const char *name)
{
	struct btf *btf;
	int id, err = scan_vmlinux(root, BTF_KIND_ENUM, type, name), found;

	if (err >= 0)
		return err;
	btf = load_vmlinux_btf(root, &err);
	if (!btf)
		return err;
	id = btf__find_by_name_kind(btf, type, BTF_KIND_ENUM);
	found = id > 0 && enum_has(btf, btf__type_by_id(btf, id), name);
	put_vmlinux_btf(btf);
	return id > 0 || id == -ENOENT ? found : id;
}

int cp_sysinfo_uprobe_type(const char *root)
{
	char buf[32];
	__u64 type;
	int n;

	n = cp_sysfs_read(root, "sys/bus/event_source/devices/uprobe/type", buf, sizeof(buf));
	if (n < 0)
		return n;
	if (cp_parse_u64(cp_sysfs_chomp(buf), 1, INT_MAX, &type))
		return -EINVAL;
	return (int)type;
}

/*
 * Watched by the slot count's disabled breakpoints, and called under an
 * enabled one by cp_sysinfo_hw_breakpoint_fires().
 */
static __attribute__((noinline, used)) void breakpoint_probe_target(void)
{
	__asm__ __volatile__("");
}

static void breakpoint_attr(struct perf_event_attr *attr)
{
	memset(attr, 0, sizeof(*attr));
	attr->type = PERF_TYPE_BREAKPOINT;
	attr->size = sizeof(*attr);
	attr->bp_type = HW_BREAKPOINT_X;
	attr->bp_addr = (__u64)(uintptr_t)breakpoint_probe_target;
	attr->bp_len = sizeof(long); /* x86 accepts only this for X */
	attr->exclude_kernel = 1;
	attr->exclude_hv = 1;
}

int cp_sysinfo_hw_breakpoint_fires(void)
{
	void (*volatile target)(void) = breakpoint_probe_target;
	struct perf_event_attr attr;
	__u64 count = 0;
	int fd;

	breakpoint_attr(&attr);
	fd = cp_perf_event_open(&attr, 0, -1, -1);
	if (fd < 0)
		return fd;
	for (int i = 0; i < CP_HW_BREAKPOINT_PROBE_CALLS; i++)
		target();
	if (read(fd, &count, sizeof(count)) != sizeof(count))
		count = 0;
	close(fd);
	return count > 0;
}

int cp_sysinfo_hw_breakpoint_slots(void)
{
	struct perf_event_attr attr;
	int fds[CP_HW_BREAKPOINT_SLOTS], n = 0, err = 0;

	breakpoint_attr(&attr);
	/*
	 * A slot is reserved when the event is created, enabled or not, so a
	 * disabled event measures the pool without ever trapping. User-only,
	 * so perf_event_paranoid <= 2 allows it without CAP_PERFMON.
	 */
	attr.disabled = 1;
	while (n < CP_HW_BREAKPOINT_SLOTS) {
		int fd = cp_perf_event_open(&attr, 0, -1, -1);

		if (fd < 0) {
			if (fd != -ENOSPC)
				err = fd;
			break;
		}
		fds[n++] = fd;
	}
	for (int i = 0; i < n; i++)
		close(fds[i]);
	return err ? err : n;
}

int cp_sysinfo_privileges(struct cp_privileges *p)
{
	struct cp_caps c;
	int ret = cp_caps_get(&c);

	if (ret)
		return ret;
	cp_privileges_eval(geteuid(), c.effective, p);
	return 0;
}

/*
 * Loads @n instructions as a BPF_PROG_TYPE_PERF_EVENT program with the raw
 * bpf(2) syscall (no libbpf, no BTF): its fd, or a negative errno.
 */
static int load_perf_event_prog(const struct bpf_insn *insns, __u32 n)
{
	union bpf_attr attr;
	int fd, tries = 0;

	memset(&attr, 0, sizeof(attr));
	/* a tracing type, not a socket filter: it needs CAP_BPF and CAP_PERFMON as ours do */
	attr.prog_type = BPF_PROG_TYPE_PERF_EVENT;
	attr.insns = (__u64)(uintptr_t)insns;
	attr.insn_cnt = n;
	attr.license = (__u64)(uintptr_t) "GPL";
	/* the verifier returns EAGAIN when interrupted by a signal; libbpf retries too */
	do {
		fd = (int)syscall(__NR_bpf, BPF_PROG_LOAD, &attr, sizeof(attr));
	} while (fd < 0 && errno == EAGAIN && ++tries < 5);
	return fd < 0 ? -errno : fd;
}

int cp_sysinfo_bpf_load(void)
{
	/* r0 = 0; exit: the smallest program the verifier accepts */
	struct bpf_insn insns[2] = {
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	int fd = load_perf_event_prog(insns, 2);

	if (fd < 0)
		return fd;
	close(fd);
	return 0;
}

int cp_sysinfo_bpf_runtime_alloc(void)
{
	union bpf_attr attr;
	int map, fd;

	memset(&attr, 0, sizeof(attr));
	attr.map_type = BPF_MAP_TYPE_HASH;
	attr.key_size = attr.value_size = 8;
	attr.max_entries = 1;
	attr.map_flags = BPF_F_NO_PREALLOC;
	map = (int)syscall(__NR_bpf, BPF_MAP_CREATE, &attr, sizeof(attr));
	if (map < 0)
		return -errno;
	/* *(u64 *)(r10 - 8) = 0; r1 = map; r2 = r10 - 8; lookup; r0 = 0; exit */
	struct bpf_insn insns[] = {
		{.code = BPF_ST | BPF_DW | BPF_MEM, .dst_reg = BPF_REG_10, .off = -8},
		{.code = BPF_LD | BPF_DW | BPF_IMM,
		 .dst_reg = BPF_REG_1,
		 .src_reg = BPF_PSEUDO_MAP_FD,
		 .imm = map},
		{0},
		{.code = BPF_ALU64 | BPF_MOV | BPF_X, .dst_reg = BPF_REG_2, .src_reg = BPF_REG_10},
		{.code = BPF_ALU64 | BPF_ADD | BPF_K, .dst_reg = BPF_REG_2, .imm = -8},
		{.code = BPF_JMP | BPF_CALL, .imm = BPF_FUNC_map_lookup_elem},
		{.code = BPF_ALU64 | BPF_MOV | BPF_K, .dst_reg = BPF_REG_0, .imm = 0},
		{.code = BPF_JMP | BPF_EXIT},
	};
	fd = load_perf_event_prog(insns, sizeof(insns) / sizeof(insns[0]));
	close(map);
	if (fd >= 0)
		close(fd);
	/* EINVAL: "perf_event programs can only use preallocated hash map" */
	return fd >= 0 ? 1 : fd == -EINVAL ? 0 : fd;
}

void cp_sysinfo_collect(const char *root, struct cp_sysinfo *si)
{
	memset(si, 0, sizeof(*si));
	si->kernel_err = cp_sysinfo_kernel(si->release, sizeof(si->release), &si->kernel);
	si->cpus_err = cp_sysinfo_cpus(root, &si->cpus_online, &si->cpus_possible);
	si->btf_err = cp_sysinfo_btf_vmlinux(root);
	si->kfunc_cast_to_kern_ctx = cp_sysinfo_btf_has_func(root, "bpf_cast_to_kern_ctx");
	si->uprobe_type = cp_sysinfo_uprobe_type(root);
	si->hw_breakpoint_slots = cp_sysinfo_hw_breakpoint_slots();
	si->hw_breakpoint_fires =
		si->hw_breakpoint_slots > 0 ? cp_sysinfo_hw_breakpoint_fires() : -ENOSPC;
	si->perf_paranoid_err = cp_sysinfo_perf_paranoid(root, &si->perf_paranoid);
	si->priv_err = cp_sysinfo_privileges(&si->priv);
	si->bpf_load_err = cp_sysinfo_bpf_load();
}

/* ---- --probe output: pure over the struct ---- */

static void print_kernel(const struct cp_sysinfo *si, FILE *f)
{
	if (si->kernel_err)
		fprintf(f, "kernel: '%s', version not understood (%s)\n", si->release,
			strerror(-si->kernel_err));
	else
		fprintf(f, "kernel: %s (%u.%u.%u)\n", si->release, si->kernel.major,
			si->kernel.minor, si->kernel.patch);
	if (si->cpus_err)
		fprintf(f, "cpus: unknown (%s)\n", strerror(-si->cpus_err));
	else
		fprintf(f, "cpus: %d online, %d possible\n", si->cpus_online, si->cpus_possible);
}

static void print_privileges(const struct cp_sysinfo *si, FILE *f)
{
	if (si->priv_err)
		fprintf(f, "privileges: unknown, capget failed (%s)\n", strerror(-si->priv_err));
	else if (si->priv.ok)
		fprintf(f, "privileges: ok (euid %u, CAP_BPF and CAP_PERFMON)\n",
			(unsigned int)si->priv.euid);
	else
		fprintf(f,
			"privileges: missing %s (euid %u); run as root or grant them: "
			"setcap cap_bpf,cap_perfmon+ep cacheperf-bpf\n",
			si->priv.missing, (unsigned int)si->priv.euid);
	if (si->perf_paranoid_err)
		fprintf(f, "perf_event_paranoid: unknown (%s)\n", strerror(-si->perf_paranoid_err));
	else
		fprintf(f, "perf_event_paranoid: %d\n", si->perf_paranoid);
	if (!si->bpf_load_err)
		fprintf(f, "bpf(): loads a perf_event program\n");
	else if (si->bpf_load_err == -EPERM || si->bpf_load_err == -EACCES)
		fprintf(f,
			"bpf(): cannot load a perf_event program (%s); needs CAP_BPF and "
			"CAP_PERFMON\n",
			strerror(-si->bpf_load_err));
	else
		fprintf(f,
			"bpf(): cannot load a perf_event program (%s); needs a kernel with "
			"CONFIG_BPF_SYSCALL=y and CONFIG_BPF_EVENTS=y\n",
			strerror(-si->bpf_load_err));
}

static void print_features(const struct cp_sysinfo *si, FILE *f)
{
	if (si->btf_err)
		fprintf(f,
			"BTF: /sys/kernel/btf/vmlinux unreadable (%s); needs a kernel with "
			"CONFIG_DEBUG_INFO_BTF=y\n",
			strerror(-si->btf_err));
	else
		fprintf(f, "BTF: /sys/kernel/btf/vmlinux\n");
	if (si->kfunc_cast_to_kern_ctx > 0)
		fprintf(f, "kfunc bpf_cast_to_kern_ctx: present (data_src read directly)\n");
	else if (si->kfunc_cast_to_kern_ctx == 0)
		fprintf(f, "kfunc bpf_cast_to_kern_ctx: absent (kernel before 6.2); data_src read "
			   "with bpf_probe_read_kernel\n");
	else
		fprintf(f, "kfunc bpf_cast_to_kern_ctx: unknown, no BTF (%s)\n",
			strerror(-si->kfunc_cast_to_kern_ctx));
	if (si->uprobe_type > 0)
		fprintf(f, "uprobes: available (perf type %d)\n", si->uprobe_type);
	else
		fprintf(f,
			"uprobes: unavailable (%s); heap objects cannot be tracked without a "
			"kernel with CONFIG_UPROBE_EVENTS=y\n",
			strerror(-si->uprobe_type));
	if (si->hw_breakpoint_slots < 0)
		fprintf(f,
			"hardware breakpoints: unavailable (%s); conflict and capacity misses "
			"cannot be told apart\n",
			strerror(-si->hw_breakpoint_slots));
	else if (si->hw_breakpoint_slots == 0)
		fprintf(f,
			"hardware breakpoints: 0 of %d free; another tool holds them "
			"(perf record -e mem:..., a debugger); conflict and capacity misses cannot "
			"be told apart until it stops\n",
			CP_HW_BREAKPOINT_SLOTS);
	else if (si->hw_breakpoint_slots < CP_HW_BREAKPOINT_SLOTS)
		fprintf(f,
			"hardware breakpoints: %d of %d free; the others are held by CPU-wide "
			"breakpoints (perf record -a -e mem:...)\n",
			si->hw_breakpoint_slots, CP_HW_BREAKPOINT_SLOTS);
	else
		fprintf(f, "hardware breakpoints: %d of %d free\n", si->hw_breakpoint_slots,
			CP_HW_BREAKPOINT_SLOTS);
	if (si->hw_breakpoint_slots > 0 && !si->hw_breakpoint_fires)
		fprintf(f, "hardware breakpoints: %s\n", CP_HW_BREAKPOINT_SILENT);
}

void cp_sysinfo_print(const struct cp_sysinfo *si, FILE *f)
{
	print_kernel(si, f);
	print_privileges(si, f);
	print_features(si, f);
}
