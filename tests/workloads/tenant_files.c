// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * tenant_files: what a hostile tenant runs against the root profiler
 * (tests/e2e/test_tenant_files.sh). Each mode prints "ready PID" once its
 * files are mapped, then walks a 64 MiB buffer for MS milliseconds (in the
 * library when one is named, else in its own code) and exits 0.
 * flip forks: one child that flips the library, and children that walk in
 * it, a new one every 100 ms (each new to the profiler).
 *
 *   tenant_files spin MS              walk in the executable
 *   tenant_files lib PATH MS          dlopen(PATH) (lib/cp_tenantlib.c), walk in it
 *   tenant_files libs MS PATH...      dlopen(PATH) each (copies of lib/
 *                                     cp_tenantlib.c), walk in each in turn
 *   tenant_files libc MS              set the buffer with libc's memset (the libc
 *                                     the loader found: LD_LIBRARY_PATH's copy)
 *   tenant_files flip PATH MS         dlopen(PATH); meanwhile truncate PATH and
 *                                     write it back, over and over (a profiler
 *                                     with it mmapped dies of SIGBUS)
 *   tenant_files maps ELF DIR N MS    map N copies of the ELF file ELF made in
 *                                     DIR, and one more executable, then
 *                                     deleted (what makes a profiler open a
 *                                     process's every file)
 *   tenant_files longmaps DIR N MS    map one file N times under a path of
 *                                     ~4000 bytes (a long /proc/PID/maps)
 *   tenant_files forkmaps DIR K N MS  longmaps' N mappings, then K children
 *                                     that hold them (K long maps files); each
 *                                     walks 1 MiB every 20 ms for MS ms (so a
 *                                     timer samples it without starving the
 *                                     machine), then sleeps until killed
 *   tenant_files threads DIR N MS     N threads blocked in pause(), their
 *                                     stacks in one file mapping (no stacks
 *                                     the profiler keeps: it looks at all)
 *   tenant_files codefiles DIR N MS   map N one-page files made in DIR, each
 *                                     executable (N modules to a reader of
 *                                     maps that takes each file for code);
 *                                     walk in a new anonymous code page and
 *                                     buffer every 50 ms (on x86-64): each
 *                                     sample is in no snapshot, whose maps
 *                                     are read again
 *   tenant_files datafiles DIR N MS   the same with the files mapped
 *                                     readable only (data: no code)
 *   tenant_files code FILE OFF MS     walk with the code at offset OFF of
 *                                     FILE (any file: tenant_elf gzip makes
 *                                     one), mapped executable
 */
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <signal.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/stat.h>
#include <sys/wait.h>

#define BUF_BYTES (64u << 20)

typedef long (*stream_fn)(const volatile long *buf, size_t longs);

static __attribute__((noinline)) long own_stream(const volatile long *buf, size_t longs)
{
	long sum = 0;

	for (size_t i = 0; i < longs; i += 8)
		sum += buf[i];
	return sum;
}

/* The code at @off of @path (a page's offset), mapped executable. */
static stream_fn map_code(const char *path, long off)
{
	int fd = open(path, O_RDONLY);
	void *p = fd < 0 ? MAP_FAILED : mmap(NULL, 4096, PROT_READ | PROT_EXEC, MAP_PRIVATE, fd, off);

	if (p == MAP_FAILED) {
		perror(path);
		exit(1);
	}
	close(fd);
	return (stream_fn)p;
}

/* Reached through a pointer: the compiler cannot inline libc's memset. */
static void *(*volatile libc_set)(void *, int, size_t) = memset;

static long libc_stream(const volatile long *buf, size_t longs)
{
	libc_set((void *)buf, (int)longs & 0x7f, longs * sizeof(long));
	return buf[0];
}

static double now_ms(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

/* The whole of @path, to write back after each truncation. */
static char *slurp(const char *path, size_t *len)
{
	struct stat st;
	char *b;
	int fd = open(path, O_RDONLY);

	if (fd < 0 || fstat(fd, &st))
		return NULL;
	b = malloc((size_t)st.st_size);
	if (b && read(fd, b, (size_t)st.st_size) != st.st_size) {
		free(b);
		b = NULL;
	}
	close(fd);
	*len = (size_t)st.st_size;
	return b;
}

/* Truncates @path and writes @img back: the library shrinks under whoever maps it. */
static void flip(const char *path, const char *img, size_t len)
{
	int fd = open(path, O_WRONLY | O_TRUNC);

	if (fd < 0)
		return;
	usleep(3000);
	if (write(fd, img, len) != (ssize_t)len)
		perror("write");
	close(fd);
}

/*
 * Until @end: one child flips @path, and short-lived children walk @buf in
 * the library (@fn), a few at a time, each new to the profiler, which
 * looks their samples up in its copy of the library. @cut, shared, holds
 * the walks off while the file is cut short: its pages are then gone from
 * every mapping, and a walk would die of SIGBUS itself.
 */
static void flip_and_fork(const char *path, const char *img, size_t len, stream_fn fn, long *buf,
			  double end)
{
	volatile int *cut = mmap(NULL, 4096, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS,
				 -1, 0);
	if (cut == MAP_FAILED)
		exit(1);
	if (fork() == 0) {
		while (now_ms() < end) {
			*cut = 1;
			usleep(3000); /* walks in flight end (one takes about 1 ms) */
			flip(path, img, len);
			*cut = 0;
			usleep(6000);
		}
		_exit(0);
	}
	/* a new walker every 100 ms, each for 400 ms: long enough to be looked up alive */
	while (now_ms() < end) {
		pid_t c = fork();

		if (c == 0) {
			double stop = now_ms() + 400;

			while (now_ms() < stop) {
				if (*cut)
					usleep(500);
				else
					fn(buf, (1u << 20) / sizeof(long));
			}
			_exit(0);
		}
		usleep(100000);
		while (waitpid(-1, NULL, WNOHANG) > 0)
			;
	}
	while (wait(NULL) > 0)
		;
}

static stream_fn load(const char *path)
{
	void *h = dlopen(path, RTLD_NOW);
	stream_fn fn = h ? (stream_fn)dlsym(h, "cp_tenant_stream") : NULL;

	if (!fn) {
		fprintf(stderr, "tenant_files: %s\n", dlerror());
		exit(1);
	}
	return fn;
}

/* Copies @img to @path; returns its descriptor. */
static int make_copy(const char *path, const char *img, size_t len)
{
	int fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0755);

	if (fd < 0 || write(fd, img, len) != (ssize_t)len) {
		perror(path);
		exit(1);
	}
	return fd;
}

/* @n copies of @src in @dir, each mapped; one more mapped executable and deleted. */
static void map_copies(const char *src, const char *dir, long n)
{
	char path[256];
	size_t len;
	char *img = slurp(src, &len);

	if (!img)
		exit(1);
	for (long i = 0; i <= n; i++) {
		int fd, prot = i == n ? PROT_READ | PROT_EXEC : PROT_READ;

		snprintf(path, sizeof(path), "%s/f%ld.so", dir, i);
		fd = make_copy(path, img, len);
		if (mmap(NULL, len, prot, MAP_PRIVATE, fd, 0) == MAP_FAILED) {
			perror(path);
			exit(1);
		}
		close(fd);
	}
	unlink(path);
	free(img);
}

/* One file under a ~4000-byte path in @dir, mapped @n times (separate mappings). */
static void map_long(const char *dir, long n)
{
	char path[4096];
	size_t len = (size_t)snprintf(path, sizeof(path), "%s/", dir);
	int fd;

	/* nested directories: a component may not exceed 255 bytes */
	while (len + 250 < 4000) {
		memset(path + len, 'd', 200);
		path[len + 200] = '\0';
		if (mkdir(path, 0755) && errno != EEXIST) {
			perror("mkdir");
			exit(1);
		}
		path[len + 200] = '/';
		len += 201;
	}
	snprintf(path + len, sizeof(path) - len, "f");
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, 4096)) {
		perror("open");
		exit(1);
	}
	for (long i = 0; i < n; i++) {
		/* a guard page between keeps the kernel from merging them */
		char *p = mmap(NULL, 8192, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);

		if (p == MAP_FAILED ||
		    mmap(p, 4096, PROT_READ, MAP_SHARED | MAP_FIXED, fd, 0) == MAP_FAILED) {
			perror("mmap");
			exit(1);
		}
	}
	close(fd);
}

/*
 * Walks for @ms in a new anonymous code page over a new 1 MiB buffer every
 * 50 ms: each is in no snapshot the profiler took (x86-64: the loop of
 * own_stream by hand, with no frame pointer, so its stacks are unwound by
 * CFI; elsewhere own_stream).
 */
static void fresh_walk(int ms)
{
	static const unsigned char loop[] = {
		0x55,			/* push %rbp */
		0x31, 0xed,		/* xor %ebp,%ebp: no frame-pointer walk */
		0x31, 0xc0,		/* xor %eax,%eax */
		0x31, 0xc9,		/* xor %ecx,%ecx */
		0x48, 0x39, 0xf1,	/* cmp %rsi,%rcx */
		0x73, 0x0a,		/* jae ret */
		0x48, 0x03, 0x04, 0xcf, /* add (%rdi,%rcx,8),%rax */
		0x48, 0x83, 0xc1, 0x08, /* add $8,%rcx */
		0xeb, 0xf1,		/* jmp cmp */
		0x5d,			/* pop %rbp */
		0xc3,			/* ret */
	};
	double end = now_ms() + ms;

	while (now_ms() < end) {
		void *code = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
		long *buf = mmap(NULL, 1 << 20, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS,
				 -1, 0);
		stream_fn fn = own_stream;
		double next = now_ms() + 50;

		if (code == MAP_FAILED || buf == MAP_FAILED)
			exit(1);
#ifdef __x86_64__
		memcpy(code, loop, sizeof(loop));
		fn = (stream_fn)code;
#endif
		memset(buf, 1, 1 << 20);
		while (now_ms() < next)
			fn(buf, (1 << 20) / sizeof(long));
		munmap(code, 4096);
		munmap(buf, 1 << 20);
	}
}

/* @n one-page files in @dir, each mapped readable (and executable: @code). */
static void map_files(const char *dir, long n, bool code)
{
	char path[256], page[4096];

	memset(page, 'x', sizeof(page));
	for (long i = 0; i < n; i++) {
		int fd;

		snprintf(path, sizeof(path), "%s/c%ld", dir, i);
		fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
		if (fd < 0 || write(fd, page, sizeof(page)) != (ssize_t)sizeof(page) ||
		    mmap(NULL, 4096, PROT_READ | (code ? PROT_EXEC : 0), MAP_PRIVATE, fd, 0) ==
			    MAP_FAILED) {
			perror(path);
			exit(1);
		}
		close(fd);
	}
}

static void *sleeper(void *arg)
{
	(void)arg;
	for (;;)
		pause();
	return NULL;
}

/* @n threads blocked in pause(), on 64 KiB stacks carved out of one file mapping in @dir. */
static void file_stack_threads(const char *dir, long n)
{
	const size_t sz = 64 << 10;
	char path[256];
	pthread_attr_t attr;
	char *base;
	int fd;

	snprintf(path, sizeof(path), "%s/stacks", dir);
	fd = open(path, O_RDWR | O_CREAT, 0644);
	if (fd < 0 || ftruncate(fd, (off_t)(n * sz))) {
		perror(path);
		exit(1);
	}
	base = mmap(NULL, n * sz, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (base == MAP_FAILED) {
		perror("mmap");
		exit(1);
	}
	close(fd);
	pthread_attr_init(&attr);
	for (long i = 0; i < n; i++) {
		pthread_t t;

		if (pthread_attr_setstack(&attr, base + i * sz, sz) ||
		    pthread_create(&t, &attr, sleeper, NULL)) {
			fprintf(stderr, "thread %ld not started\n", i);
			exit(1);
		}
	}
	pthread_attr_destroy(&attr);
}

/*
 * @k children of this process, each with its mappings (fork copies them),
 * walking a little for @ms then sleeping until killed; they die with it.
 */
static void fork_walkers(long k, int ms, stream_fn fn, long *buf)
{
	for (long i = 0; i < k; i++) {
		pid_t c = fork();

		if (c < 0) {
			perror("fork");
			exit(1);
		}
		if (c == 0) {
			double end = now_ms() + ms;

			prctl(PR_SET_PDEATHSIG, SIGKILL);
			while (now_ms() < end) {
				if (fn(buf, (1u << 20) / sizeof(long)) == 42)
					putchar('.');
				usleep(20000);
			}
			for (;;)
				pause();
		}
	}
}

int main(int argc, char **argv)
{
	stream_fn fn = own_stream, fns[64];
	size_t nfns = 0;
	const char *mode = argc > 1 ? argv[1] : "";
	const char *path = NULL;
	char *img = NULL;
	size_t len = 0;
	long *buf;
	double end;
	int ms_arg = 2;

	if (!strcmp(mode, "lib") || !strcmp(mode, "flip")) {
		path = argv[2];
		fn = load(path);
		ms_arg = 3;
		if (!strcmp(mode, "flip") && !(img = slurp(path, &len)))
			return 1;
	} else if (!strcmp(mode, "maps")) {
		if (argc < 6)
			return 2;
		map_copies(argv[2], argv[3], atol(argv[4]));
		ms_arg = 5;
	} else if (!strcmp(mode, "longmaps")) {
		if (argc < 5)
			return 2;
		map_long(argv[2], atol(argv[3]));
		ms_arg = 4;
	} else if (!strcmp(mode, "forkmaps")) {
		if (argc < 6)
			return 2;
		map_long(argv[2], atol(argv[4]));
		ms_arg = 5;
	} else if (!strcmp(mode, "codefiles") || !strcmp(mode, "datafiles")) {
		if (argc < 5)
			return 2;
		map_files(argv[2], atol(argv[3]), !strcmp(mode, "codefiles"));
		ms_arg = 4;
	} else if (!strcmp(mode, "threads")) {
		if (argc < 5)
			return 2;
		file_stack_threads(argv[2], atol(argv[3]));
		ms_arg = 4;
	} else if (!strcmp(mode, "code")) {
		if (argc < 5)
			return 2;
		fn = map_code(argv[2], atol(argv[3]));
		ms_arg = 4;
	} else if (!strcmp(mode, "libs")) {
		for (int i = 3; i < argc && nfns < sizeof(fns) / sizeof(fns[0]); i++)
			fns[nfns++] = load(argv[i]);
	} else if (!strcmp(mode, "libc")) {
		fn = libc_stream;
	} else if (strcmp(mode, "spin")) {
		fprintf(stderr,
			"usage: tenant_files spin|lib|libs|libc|flip|maps|longmaps|forkmaps|threads|codefiles|datafiles|code ...\n");
		return 2;
	}
	if (argc <= ms_arg)
		return 2;
	buf = malloc(BUF_BYTES);
	if (!buf)
		return 1;
	memset(buf, 1, BUF_BYTES);
	if (!strcmp(mode, "forkmaps"))
		fork_walkers(atol(argv[3]), atoi(argv[ms_arg]), fn, buf);
	printf("ready %d\n", (int)getpid());
	fflush(stdout);
	if (!strcmp(mode, "codefiles") || !strcmp(mode, "datafiles")) {
		fresh_walk(atoi(argv[ms_arg]));
		return 0;
	}
	end = now_ms() + atoi(argv[ms_arg]);
	if (img) {
		flip_and_fork(path, img, len, fn, buf, end);
		return 0;
	}
	for (size_t i = 0; now_ms() < end; i++)
		if ((nfns ? fns[i % nfns] : fn)(buf, BUF_BYTES / sizeof(long)) == 42)
			putchar('.');
	return 0;
}
