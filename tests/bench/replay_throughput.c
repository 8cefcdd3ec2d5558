// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * Replay throughput: a synthetic recording of NR sample events (default 10
 * million) replayed through the profile's handlers into the stores (miss
 * store, object store and per-object statistics, instruction store from
 * counter sections), on one core. Prints events/s of the replay alone (the
 * file is written first) and the process's peak RSS (ru_maxrss).
 *
 * The recording: 4 processes, each with 8 threads, 2000 instructions in its
 * code and 20000 heap objects (16 B to 64 KiB) allocated in a 256 MiB
 * region; each sample is a miss by a random thread at one of its process's
 * instructions, 1 in 8 a store, inside an object: "skewed" (the default)
 * sends 80 % of them to 64 hot objects per process (about 40000 lines in all), as real miss streams
 * concentrate on few lines (paper §2.2.2); "uniform" spreads them over all
 * objects, the miss store's worst case (every line new, constant eviction).
 * A counter section every million samples carries the per-instruction counts.
 *
 * usage: replay_throughput [NR [skewed|uniform [FILE]]]   (FILE: keep the recording there)
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <sys/resource.h>

#include "bench/bench.h"
#include "lib/rec_build.h"
#include "record/replay.h"

#define NR_PROCS	4
#define NR_THREADS	8
#define NR_IPS		2000
#define NR_OBJECTS	20000
#define CODE		0x400000ull
#define HEAP		0x10000000ull
#define HEAP_LEN	(256ull << 20)
#define INTERVAL	1000000
#define NR_HOT		64

struct proc {
	__u32 pid;
	__u64 start[NR_OBJECTS];
	__u64 size[NR_OBJECTS];
	struct cp_insn counts[NR_IPS];
};

static void write_process(struct cp_rec_writer *w, struct cp_rec_buf *b, struct proc *p, __u64 *x)
{
	char text[256];
	__u64 at = HEAP;

	snprintf(text, sizeof(text),
		 "%08llx-%08llx r-xp 00000000 00:00 0 \n%08llx-%08llx rw-p 00000000 00:00 0 \n",
		 CODE, CODE + 0x100000, HEAP, HEAP + HEAP_LEN);
	cp_rec_encode_maps(b, &(struct cp_rec_maps){ .pid = (pid_t)p->pid,
		.who = CP_REC_MAPS_OBJECTS, .text = text, .len = strlen(text) });
	rec_test_section(w, b, CP_SEC_MAPS);
	for (int i = 0; i < NR_OBJECTS; i++) {
		struct cp_object_event ev = {
			.type = CP_REC_OBJECT, .kind = CP_OBJ_EV_ALLOC, .func = CP_FN_MALLOC,
			.tgid = p->pid, .tid = p->pid + (__u32)(i % NR_THREADS),
			.caller = CODE + 0x1000 + (__u64)(i % 50) * 16, .stack_id = -1,
		};

		p->size[i] = 16ull << (rnd(x) % 13);
		p->start[i] = at;
		ev.addr = at;
		ev.size = p->size[i];
		at += (p->size[i] + 15) & ~15ull;
		cp_rec_writer__event(w, &ev, sizeof(ev));
	}
	for (int i = 0; i < NR_IPS; i++) {
		p->counts[i].key.tgid = p->pid;
		p->counts[i].key.ip = CODE + 0x2000 + (__u64)i * 4;
	}
}

static void flush_counts(struct cp_rec_writer *w, struct cp_rec_buf *b, struct proc *procs)
{
	for (int k = 0; k < NR_PROCS; k++) {
		cp_rec_encode_counters(b, procs[k].counts, NR_IPS);
		rec_test_section(w, b, CP_SEC_COUNTERS);
		for (int i = 0; i < NR_IPS; i++)
			memset(&procs[k].counts[i].counts, 0, sizeof(procs[k].counts[i].counts));
	}
}

static int write_recording(const char *path, __u64 nr, bool uniform)
{
	char err[256];
	struct cp_rec_writer *w = cp_rec_writer__open(path, err, sizeof(err));
	struct proc *procs = calloc(NR_PROCS, sizeof(*procs));
	struct cp_rec_buf b = { 0 };
	struct cp_run_info in;
	struct cp_run_end end = { 0 };
	__u64 x = 88172645463325252ull;

	if (!w || !procs) {
		fprintf(stderr, "%s\n", w ? "out of memory" : err);
		return -1;
	}
	rec_test_info(&in, 1000);
	in.source = CP_SOURCE_PEBS;
	cp_rec_encode_info(&b, &in);
	rec_test_section(w, &b, CP_SEC_HEADER);
	for (int k = 0; k < NR_PROCS; k++) {
		procs[k].pid = 1000 + (__u32)k * 100;
		write_process(w, &b, &procs[k], &x);
	}
	for (__u64 n = 0; n < nr; n++) {
		struct proc *p = &procs[rnd(&x) % NR_PROCS];
		__u64 r = rnd(&x);
		bool hot = !uniform && (r >> 56) % 10 < 8;
		int o = (int)(r % (hot ? NR_HOT : NR_OBJECTS)), ip = (int)((r >> 20) % NR_IPS);
		struct cp_sample s = rec_test_sample(p->pid, p->pid + (__u32)((r >> 40) % NR_THREADS),
						     p->counts[ip].key.ip,
						     p->start[o] + ((r >> 8) % p->size[o] & ~7ull));
		struct cp_ip_counts *c = &p->counts[ip].counts;
		bool store = (r >> 50) % 8 == 0;

		s.data_src = 0;
		s.flags = CP_SAMPLE_MISS | (store ? CP_SAMPLE_STORE : 0);
		cp_rec_writer__event(w, &s, sizeof(s));
		if (store) {
			c->stores++;
			c->store_misses++;
		} else {
			c->loads++;
			c->load_misses++;
		}
		if ((n + 1) % INTERVAL == 0 || n + 1 == nr)
			flush_counts(w, &b, procs);
	}
	end.end_ns = in.start_ns + 10000000000ull;
	end.bpf.forwarded = nr;
	cp_rec_encode_end(&b, &end);
	rec_test_section(w, &b, CP_SEC_END);
	cp_rec_buf_free(&b);
	free(procs);
	if (cp_rec_writer__close(w)) {
		fprintf(stderr, "writing %s failed\n", path);
		return -1;
	}
	return 0;
}

int main(int argc, char **argv)
{
	__u64 nr = argc > 1 ? strtoull(argv[1], NULL, 10) : 10000000ull;
	char tmp[] = "/tmp/cp-replay-XXXXXX";
	bool uniform = argc > 2 && !strcmp(argv[2], "uniform");
	const char *path = argc > 3 ? argv[3] : tmp;
	struct cp_replay_stats st;
	struct cp_replay *r;
	struct rusage ru;
	char err[512];
	double t0, t1, c0, c1;
	FILE *f;
	int fd;

	if (argc <= 3) {
		fd = mkstemp(tmp);
		if (fd < 0)
			return 1;
		close(fd);
	}
	t0 = now_s();
	if (write_recording(path, nr, uniform))
		return 1;
	t1 = now_s();
	f = fopen(path, "re");
	if (!f || fseek(f, 0, SEEK_END))
		return 1;
	printf("wrote %llu %s samples in %.1f s (%.0f MB)\n", (unsigned long long)nr,
	       uniform ? "uniform" : "skewed", t1 - t0, (double)ftell(f) / 1e6);
	rewind(f);
	t0 = now_s();
	c0 = cpu_s();
	if (cp_replay__run(f, path, stderr, NULL, &r, err, sizeof(err))) {
		fprintf(stderr, "%s\n", err);
		return 1;
	}
	t1 = now_s();
	c1 = cpu_s();
	fclose(f);
	if (argc <= 3)
		unlink(path);
	cp_replay__stats(r, &st);
	getrusage(RUSAGE_SELF, &ru);
	printf("replayed %llu records, %llu counter entries in %.2f s: %.2f M records/s\n",
	       (unsigned long long)st.records, (unsigned long long)st.counters, t1 - t0,
	       (double)st.records / (t1 - t0) / 1e6);
	printf("CPU time %.2f s: %.2f M records per CPU second\n", c1 - c0,
	       (double)st.records / (c1 - c0) / 1e6);
	printf("peak RSS %.0f MiB\n", (double)ru.ru_maxrss / 1024);
	cp_replay__free(r);
	return 0;
}
