/* SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause) */
/*
 * Command-line options: one plain struct, filled by a pure parser that never
 * exits or prints, so every error path is unit-tested.
 */
#ifndef CP_OPTIONS_H
#define CP_OPTIONS_H

#include <stdbool.h>
#include <getopt.h>
#include <stdio.h>
#include <sys/types.h>
#include <linux/types.h>

#include "cacheperf/abi.h"
#include "cacheperf/alloc.h"
#include "budget/budget.h"
#include "classify/classify.h"
#include "util/exit_code.h"
#include "machine/source.h"
#include "objects/alloc_wrappers.h"
#include "util/log.h"
#include "util/path_map.h"

#define CP_MAX_MEMORY_DEFAULT (256ull << 20) /* --max-memory */
#define CP_MAX_MEMORY_MIN     (16ull << 20)  /* below this the profiler cannot start */
#define CP_OVERHEAD_UNSET     0xffffffffu    /* --overhead not given: by target kind */
#define CP_STACK_BYTES_UNSET  0xffffffffu    /* --*-stack-bytes not given: by target kind */

enum cp_mode {
	CP_MODE_PROFILE = 0,
	CP_MODE_PROBE, /* --probe: print what this machine supports */
	CP_MODE_HELP,
	CP_MODE_VERSION,
	CP_MODE_REPORT, /* report FILE: a recording's report, offline */
	CP_MODE_DIFF,	/* diff BEFORE AFTER: two recordings' issues compared */
};

enum cp_target_kind {
	CP_TARGET_NONE = 0,
	CP_TARGET_PIDS, /* -p PID[,PID...] */
	CP_TARGET_ALL,	/* -a */
	CP_TARGET_CMD,	/* -- CMD [ARGS...] */
};

struct cp_options {
	enum cp_mode mode;
	enum cp_target_kind target;
	pid_t pids[CP_MAX_TGIDS];
	int nr_pids;
	char **cmd_argv;  /* points into argv, NULL-terminated */
	__u32 duration_s; /* 0: until the target exits or a signal */
	__u32 interval_s;
	int verbose;		     /* -v: 1, -vv: 2 (libbpf debug output) */
	enum cp_log_level log_level; /* --log-level; 0: not given */
	enum cp_source_kind source;
	const char *cache_spec; /* --cache, NULL: sysfs */
	const char *sysfs_root; /* --sysfs-root, default "/" */
	__u32 ldlat_cycles;
	__u64 load_period;
	__u64 store_period;
	__u32 max_sample_rate;	/* samples per second per CPU */
	__u64 max_alloc_rate;	/* allocator calls/s per process before backing off; 0: off */
	bool no_objects;	/* --no-objects: no allocation probes */
	bool no_debuginfod;	/* --no-debuginfod: never ask DEBUGINFOD_URLS' servers */
	__u32 window;		/* accesses in a miss window */
	__u32 stack_every;	/* --stack-every: one event's stack in N walked; 0: none */
	__u32 stack_copy_bytes; /* --stack-copy-bytes: copied where the walk stops short */
	__u32 window_ratio_ppm; /* miss ratio above which misses are forwarded */
	/* --top, --min-access-share, --min-miss-share, --app-load-miss, --app-store-miss */
	struct cp_classify_cfg classify;
	unsigned int callers;	   /* --callers: call paths per issue instruction in the text */
	const char *output;	   /* -o: the text report's file; NULL: stdout */
	const char *json;	   /* --json: the JSON report's file, "-": stdout */
	const char *html;	   /* --html: the HTML report's file; NULL: none */
	const char *record_path;   /* --record FILE; NULL: none */
	const char *report_path;   /* report FILE */
	const char *diff_paths[2]; /* diff BEFORE AFTER */
	bool fail_on_new;	   /* diff --fail-on-new: exit CP_EXIT_NEW_ISSUES on a new issue */
	__u32 bp_expiry_ms;	   /* a breakpoint without hits for this long is let go */
	__u32 max_bp_rate;	   /* breakpoint hits per second; 0: no breakpoints */
	__u32 soft_freq_hz;	   /* --source soft: ticks per second per CPU */
	__u32 overhead_ppm;	   /* --overhead: of the targets' CPU time; 0: no budget */
	__u32 window_s;		   /* --window-seconds: span of a rolling summary */
	bool quiet;		   /* --quiet: no status line */
	const char *prom_file;	   /* --prom-file: Prometheus text file; NULL: none */
	__u32 prom_top;		   /* --prom-top: issues written before "other" */
	const char *pprof;	   /* --pprof FILE: gzipped pprof profile; NULL: none */
	const char *folded;	   /* --folded FILE: collapsed stacks; NULL: none */
	const char *pprof_dir;	   /* --pprof-dir DIR: a profile per interval; NULL: none */
	__u32 pprof_keep;	   /* --pprof-keep: files kept in pprof_dir */
	bool prom_pid_label;	   /* --prom-pid-label: series by process, not by comm */
	const char *cgroup;	   /* --cgroup PATH (-a only); NULL: every cgroup */
	__u64 max_memory_bytes;	   /* --max-memory: the profiler's RSS limit */
	struct cp_path_map path_map; /* report --path-map: where recorded files are now */
	struct cp_alloc_wrappers alloc_wrappers; /* --alloc-wrapper, run and report */
	/* --alloc-stack-bytes: 0..4096, 0: frame pointers only; 4096 for -p and -- CMD, 0 for -a */
	__u32 alloc_stack_bytes;
};

/* Fills @opts with the defaults documented in --help. */
void cp_options_defaults(struct cp_options *opts);

/*
 * Parses argv into @opts (defaults first). Returns 0, or -EINVAL with a
 * one-line reason in @err for any usage error (exit code CP_EXIT_USAGE).
 * --help and --version set opts->mode and return 0. Never prints or exits.
 */
int cp_options_parse(int argc, char **argv, struct cp_options *opts, char *err, size_t err_sz);

/* The long options the parser accepts, ending with a zeroed entry (for doc checks). */
const struct option *cp_options_table(void);

/*
 * The messages said on stderr: --log-level (default warning), or more with
 * -v (info) and -vv (debug), whichever says more.
 */
enum cp_log_level cp_options_log_level(const struct cp_options *opts);

/* Writes the --help text to @f. */
void cp_options_usage(FILE *f);

#endif /* CP_OPTIONS_H */
