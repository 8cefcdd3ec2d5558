// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * The ground-truth oracle: runs a workload built with the
 * tracing runtime (trace_rt.c), reads its complete access trace through a
 * pipe, simulates the caches on it (cache_sim.c), writes the true classes
 * per instruction, line and object with the dominant issue (truth.c), and
 * the recording a PEBS run would have made (pebs_emu.c).
 *
 * usage: oracle [-o REC] [-t TRUTH] [--cores N] [--cache SPEC]
 *               [--load-period N] [--store-period N] [--window-ratio PPM]
 *               [--seed N] [--ns-per-access N] [--no-breakpoints] -- PROG [ARGS...]
 * Thread i runs on core i mod N (N: the online CPUs). Exit status 0, 1 on
 * a failure (named on stderr), 2 on a usage error.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <libgen.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "cacheperf/abi.h"
#include "objects/elf_syms.h"
#include "machine/geometry.h"

#include "cache_sim.h"
#include "pebs_emu.h"
#include "trace.h"
#include "truth.h"

#define CHUNK	4096	/* trace records read at once */

struct run {
	struct cp_sim *sim;
	struct cp_truth *truth;
	struct cp_pebs_emu *emu;
	__u32 cores;
	char *maps;
	size_t maps_len;
	__u64 records;
};

static void usage(FILE *f)
{
	fprintf(f, "usage: oracle [-o REC] [-t TRUTH] [--cores N] [--cache SPEC] [--load-period N]\n"
		   "              [--store-period N] [--window-ratio PPM] [--seed N]\n"
		   "              [--ns-per-access N] [--no-breakpoints] -- PROG [ARGS...]\n");
}

static int read_full(int fd, void *p, size_t len)
{
	while (len) {
		ssize_t n = read(fd, p, len);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		p = (char *)p + n;
		len -= (size_t)n;
	}
	return 0;
}

/* The trace stream, buffered: records may straddle reads, the maps text follows the last. */
struct stream {
	int fd;
	size_t pos, len;
	char buf[CHUNK * sizeof(struct cp_trace_rec)];
};

/* The next record; -1 at the end of the stream. */
static int next_rec(struct stream *s, struct cp_trace_rec *out)
{
	while (s->len - s->pos < sizeof(*out)) {
		ssize_t n;

		memmove(s->buf, s->buf + s->pos, s->len - s->pos);
		s->len -= s->pos;
		s->pos = 0;
		n = read(s->fd, s->buf + s->len, sizeof(s->buf) - s->len);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			return -1;
		s->len += (size_t)n;
	}
	memcpy(out, s->buf + s->pos, sizeof(*out));
	s->pos += sizeof(*out);
	return 0;
}

/* The maps text of @len bytes after the last record. */
static int read_maps(struct run *r, struct stream *s, size_t len)
{
	size_t have = s->len - s->pos;

	if (len > CP_TRACE_MAX_MAPS || !(r->maps = malloc(len + 1)))
		return -1;
	if (have > len)
		have = len;
	memcpy(r->maps, s->buf + s->pos, have);
	if (read_full(s->fd, r->maps + have, len - have))
		return -1;
	r->maps[len] = '\0';
	r->maps_len = len;
	return 0;
}

/* Consumes records until the maps record; returns 0, or -1 when the trace ended without it. */
static int consume(struct run *r, struct stream *s)
{
	struct cp_trace_rec rec, size;
	struct cp_sim_result res;

	while (!next_rec(s, &rec)) {
		r->records++;
		if (rec.kind == CP_TR_READ || rec.kind == CP_TR_WRITE) {
			bool wr = rec.kind == CP_TR_WRITE;
			__u32 core = rec.tid % r->cores;

			if (cp_sim__access(r->sim, core, rec.addr, rec.size, wr, &res))
				return -1;
			cp_truth__access(r->truth, rec.tid, rec.ip, rec.addr, wr, &res);
			cp_pebs_emu__access(r->emu, rec.tid, core, rec.ip, rec.addr, rec.size, wr,
					    res.level);
		} else if (rec.kind == CP_TR_FREE) {
			cp_truth__free_obj(r->truth, rec.addr);
			cp_pebs_emu__object(r->emu, rec.tid, rec.ip, rec.addr, 0, false);
		} else if (next_rec(s, &size)) {	/* ALLOC and MAPS: a size record follows */
			return -1;
		} else if (rec.kind == CP_TR_ALLOC) {
			cp_truth__alloc(r->truth, rec.tid, rec.ip, rec.addr, size.addr);
			cp_pebs_emu__object(r->emu, rec.tid, rec.ip, rec.addr, size.addr, true);
		} else if (rec.kind == CP_TR_MAPS) {
			return read_maps(r, s, size.addr);
		}
	}
	return -1;
}

enum { OPT_CORES = 256, OPT_CACHE, OPT_LOAD, OPT_STORE, OPT_RATIO, OPT_SEED, OPT_NS, OPT_NO_BP };

static const struct option longopts[] = {
	{ "cores", required_argument, NULL, OPT_CORES },
	{ "cache", required_argument, NULL, OPT_CACHE },
	{ "load-period", required_argument, NULL, OPT_LOAD },
	{ "store-period", required_argument, NULL, OPT_STORE },
	{ "window-ratio", required_argument, NULL, OPT_RATIO },
	{ "seed", required_argument, NULL, OPT_SEED },
	{ "ns-per-access", required_argument, NULL, OPT_NS },
	{ "no-breakpoints", no_argument, NULL, OPT_NO_BP },
	{ "help", no_argument, NULL, 'h' },
	{ 0 },
};

static struct cp_lru_geom lru_of(const struct cp_cache_level *l)
{
	return (struct cp_lru_geom){ .line_bytes = l->line_bytes, .sets = l->sets, .ways = l->ways };
}

static int number(const char *s, unsigned long long *out)
{
	char *end;

	errno = 0;
	*out = strtoull(s, &end, 10);
	return errno || !*s || *end ? -1 : 0;
}

int main(int argc, char **argv)
{
	struct cp_pebs_emu_cfg ec = {
		.load_period = 20000, .store_period = 50000, .jitter_pct = 10, .seed = 42,
		.window = CP_WINDOW_DEFAULT, .window_ratio_ppm = CP_WINDOW_RATIO_DEFAULT_PPM,
		.ns_per_access = 4, .bp_expiry_ns = 100000000ull, .bp_rate = 2000,
		.breakpoints = true,
	};
	const char *rec_path = NULL, *truth_path = NULL, *cache = NULL;
	char exe[PATH_MAX], err[512];
	struct cp_elf_syms *syms = NULL;
	struct cp_geometry geo;
	struct cp_sim_geom sg;
	struct run r = { 0 };
	struct stream *stream = NULL;
	unsigned long long v;
	int c, fds[2], status = 0, ret = 1, efd;
	pid_t pid;
	FILE *tf = stdout;

	r.cores = (__u32)sysconf(_SC_NPROCESSORS_ONLN);
	while ((c = getopt_long(argc, argv, "+o:t:h", longopts, NULL)) != -1) {
		if (c == 'o' || c == 't' || c == OPT_CACHE || c == 'h') {
			if (c == 'o')
				rec_path = optarg;
			else if (c == 't')
				truth_path = optarg;
			else if (c == OPT_CACHE)
				cache = optarg;
			else
				return usage(stdout), 0;
			continue;
		}
		if (c == OPT_NO_BP) {
			ec.breakpoints = false;
			continue;
		}
		if (c == '?' || number(optarg, &v) || (!v && c != OPT_RATIO)) {
			fprintf(stderr, "oracle: %s needs a positive number\n", argv[optind - 1]);
			return usage(stderr), 2;
		}
		switch (c) {
		case OPT_CORES: r.cores = (__u32)v; break;
		case OPT_LOAD: ec.load_period = v; break;
		case OPT_STORE: ec.store_period = v; break;
		case OPT_RATIO: ec.window_ratio_ppm = (__u32)v; break;
		case OPT_SEED: ec.seed = v; break;
		case OPT_NS: ec.ns_per_access = v; break;
		}
	}
	if (optind >= argc || r.cores > CP_SIM_MAX_CORES) {
		fprintf(stderr, "oracle: %s\n", optind >= argc ? "no program to run" :
			"at most 8 cores");
		return usage(stderr), 2;
	}
	/* the machine's geometry, as the profiler reads it, or --cache */
	cp_geometry_read_sysfs(&geo, "/");
	if (cache && cp_geometry_apply_override(&geo, cache, err, sizeof(err))) {
		fprintf(stderr, "oracle: --cache: %s\n", err);
		return 2;
	}
	sg = (struct cp_sim_geom){ .l1 = lru_of(&geo.slot[CP_CACHE_L1D]),
		.l2 = lru_of(&geo.slot[CP_CACHE_L2]), .llc = lru_of(&geo.slot[CP_CACHE_LLC]),
		.cores = r.cores };
	if (!realpath(argv[optind], exe)) {
		fprintf(stderr, "oracle: %s: %s\n", argv[optind], strerror(errno));
		return 1;
	}
	if (pipe(fds)) {
		perror("oracle: pipe");
		return 1;
	}
	pid = fork();
	if (pid == 0) {
		char fd_text[16];

		close(fds[0]);
		snprintf(fd_text, sizeof(fd_text), "%d", fds[1]);
		setenv(CP_TRACE_FD_ENV, fd_text, 1);
		execv(exe, &argv[optind]);
		fprintf(stderr, "oracle: cannot run %s: %s\n", exe, strerror(errno));
		_exit(127);
	}
	close(fds[1]);
	ec.pid = pid;
	snprintf(ec.comm, sizeof(ec.comm), "%s", basename(exe));
	ec.cores = r.cores;
	memcpy(ec.cache, geo.slot, sizeof(ec.cache));
	r.sim = cp_sim__new(&sg);
	r.truth = cp_truth__new(sg.l1.line_bytes);
	r.emu = cp_pebs_emu__new(&ec);
	efd = open(exe, O_RDONLY);
	if (efd >= 0 && !cp_elf_syms__read_fd(efd, &syms))
		cp_truth__set_globals(r.truth, syms);
	if (efd >= 0)
		close(efd);
	if (!r.sim || !r.truth || !r.emu) {
		fprintf(stderr, "oracle: out of memory (or an unusable cache geometry)\n");
		goto out;
	}
	stream = malloc(sizeof(*stream));
	if (stream)
		stream->fd = fds[0], stream->pos = stream->len = 0;
	if (!stream || consume(&r, stream)) {
		fprintf(stderr, "oracle: the trace of %s ended early (%llu records): was it built "
			"with tests/oracle/trace_rt.c, and did it exit normally?\n", exe,
			(unsigned long long)r.records);
		goto out;
	}
	waitpid(pid, &status, 0);
	pid = 0;
	if (!WIFEXITED(status) || WEXITSTATUS(status)) {
		fprintf(stderr, "oracle: %s failed (status %d)\n", exe, status);
		goto out;
	}
	if (truth_path && !(tf = fopen(truth_path, "w"))) {
		fprintf(stderr, "oracle: %s: %s\n", truth_path, strerror(errno));
		tf = stdout;
		goto out;
	}
	fprintf(tf, "workload: %s (%llu records)\n", exe, (unsigned long long)r.records);
	cp_truth__print(r.truth, exe, tf);
	if (rec_path && cp_pebs_emu__write(r.emu, rec_path, r.maps, r.maps_len, exe, err,
					   sizeof(err))) {
		fprintf(stderr, "oracle: %s\n", err);
		goto out;
	}
	{
		struct cp_pebs_emu_stats st;

		cp_pebs_emu__stats(r.emu, &st);
		fprintf(tf, "sampled: %llu loads (%llu misses), %llu stores (%llu misses), "
			"%llu forwarded, %llu histories\n",
			(unsigned long long)st.samples[0], (unsigned long long)st.misses[0],
			(unsigned long long)st.samples[1], (unsigned long long)st.misses[1],
			(unsigned long long)st.forwarded, (unsigned long long)st.histories);
	}
	ret = 0;
out:
	if (tf != stdout)
		fclose(tf);
	close(fds[0]);
	if (pid > 0)
		waitpid(pid, &status, 0);
	cp_sim__free(r.sim);
	cp_truth__free(r.truth);
	cp_pebs_emu__free(r.emu);
	cp_elf_syms__free(syms);
	free(r.maps);
	free(stream);
	return ret;
}
