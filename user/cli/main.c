// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * cacheperf-bpf: why does a program miss in the CPU cache?
 *
 * main() is the table of contents: parse options -> run a command that
 * needs no live run (run_command(): --probe, report, diff) -> check capabilities ->
 * choose the source -> hold or check the targets -> open, configure, load
 * and attach the BPF programs -> loop -> final report -> cleanup.
 */
#include <errno.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "machine/source.h"
#include "machine/target_file.h"
#include "machine/geometry.h"
#include "cli/options.h"
#include "cli/run_cfg.h"
#include "live/calibrate.h"
#include "machine/cpu_time.h"
#include "machine/pmu.h"
#include "machine/self_mem.h"
#include "cli/probe.h"
#include "profile/proc_identity.h"
#include "live/run.h"
#include "cli/diff_cmd.h"
#include "cli/report_cmd.h"
#include "export/outputs.h"
#include "record/recorder.h"
#include "report/report.h"
#include "live/session.h"
#include "live/alloc_probes.h"
#include "live/signals.h"
#include "machine/sysinfo.h"
#include "machine/net_reach.h"
#include "symbols/debuginfod.h"
#include "symbols/sym_server.h"
#include "cli/target.h"
#include "util/log.h"
#include "util/privs.h"

#ifndef CP_VERSION
#define CP_VERSION "0.1.0"
#endif

#define CP_CHILD_GRACE_MS 2000

/* Everything main() sets up, so one cleanup path frees it all. */
struct cp_main {
	struct cp_options opts;
	struct cp_sysinfo si;
	bool bp_silent; /* breakpoints never fire here: none armed */
	struct cp_geometry geo;
	struct cp_pmus *pmus;
	struct cp_session_cfg cfg;
	struct cp_session *sess;
	struct cp_calibration *cal; /* measuring the probes' costs; NULL: done or none */
	struct cp_live *live;
	struct cp_recorder *rec; /* --record; the live run owns it once made */
	struct cp_child child;
	bool have_child;
	pid_t pids[CP_MAX_TGIDS];
	int nr_pids;
	/* their CPU time (the machine's with -a), held open: read once each loop */
	struct cp_cpu_src cpu[CP_MAX_TGIDS];
	int nr_cpu;
	/* whether each was alive at the last reading; taken by targets_gone() that turn */
	bool alive[CP_MAX_TGIDS];
	bool alive_fresh;
	struct cp_run_info info;
	struct cp_report_opts ro; /* where reports go */
	struct cp_outputs outs;	  /* the run's outputs (export/outputs.h) */
	char err[768];
};

/* What the report header (and a recording) says about the run. */
static void fill_info(struct cp_main *m)
{
	struct cp_run_info *in = &m->info;

	in->source = m->cfg.source.kind;
	snprintf(in->source_reason, sizeof(in->source_reason), "%s", m->cfg.source.reason);
	/* the precise_ip the PMUs took: skid differs between levels */
	if (m->sess && *cp_perf_events__precise(m->sess->events))
		snprintf(in->source_reason + strlen(in->source_reason),
			 sizeof(in->source_reason) - strlen(in->source_reason), "; precise_ip: %s",
			 cp_perf_events__precise(m->sess->events));
	in->nr_targets = m->opts.target == CP_TARGET_ALL ? 0 : (__u32)m->nr_pids;
	for (int i = 0; i < m->nr_pids; i++) {
		in->targets[i].pid = m->pids[i];
		cp_proc_read_comm(m->pids[i], in->targets[i].comm, sizeof(in->targets[i].comm));
	}
	in->launched = m->opts.target == CP_TARGET_CMD;
	in->load_period = m->opts.load_period;
	in->store_period = m->opts.store_period;
	in->ldlat_cycles = m->opts.ldlat_cycles;
	in->window = m->opts.window;
	in->window_ratio_ppm = m->opts.window_ratio_ppm;
	memcpy(in->cache, m->geo.slot, sizeof(in->cache));
}

/* Where the outputs go and how issues are judged: their paths and the filters. */
static struct cp_report_opts report_opts(const struct cp_main *m)
{
	return (struct cp_report_opts){
		.classify = &m->opts.classify,
		.output = m->opts.output,
		.json = m->opts.json,
		.html = m->opts.html,
		.prom = m->opts.prom_file,
		.prom_top = m->opts.prom_top,
		.prom_pid_label = m->opts.prom_pid_label,
		.pprof = m->opts.pprof,
		.folded = m->opts.folded,
		.pprof_dir = m->opts.mode == CP_MODE_PROFILE ? m->opts.pprof_dir : NULL,
		.pprof_keep = m->opts.pprof_keep,
		.record = m->opts.mode == CP_MODE_REPORT ? NULL : m->opts.record_path,
		.path_map = &m->opts.path_map,
		.alloc_wrappers = &m->opts.alloc_wrappers,
		.callers = m->opts.callers,
	};
}

/* SIGUSR1: the summary of the last window as a report. */
static void print_summary(struct cp_profile *p, void *ctx)
{
	struct cp_main *m = ctx;

	if (cp_outputs_write(&m->outs, CP_OUT_USR1, p, m->err, sizeof(m->err)))
		cp_err("%s", m->err);
}

static void on_interval(struct cp_profile *p, void *ctx)
{
	struct cp_main *m = ctx;

	cp_outputs_write(&m->outs, CP_OUT_INTERVAL, p, m->err, sizeof(m->err));
}

/* SIGHUP: the Prometheus file now. */
static void on_reopen(struct cp_profile *p, void *ctx)
{
	struct cp_main *m = ctx;

	if (cp_outputs_write(&m->outs, CP_OUT_HUP, p, m->err, sizeof(m->err)))
		cp_warn("%s", m->err);
}

/* The sampling PMU this machine has, for cacheperf_source_info. */
static const char *pmu_name(const struct cp_pmus *pmus)
{
	return pmus->nr_core ? "pebs" : pmus->has_ibs ? "ibs" : "none";
}

static int fail(struct cp_main *m, int ret)
{
	cp_err("%s", m->err);
	return ret;
}

/*
 * DEBUGINFOD_URLS set where no server can be reached (the systemd unit's
 * private network): said once at start, and no fetch is tried, rather than
 * each module's fetch failing in silence.
 */
static void debuginfod_check(void)
{
	const char *why = NULL;

	if (!cp_debuginfod_enabled())
		return;
	switch (cp_net_reach_check(getenv("DEBUGINFOD_URLS"))) {
	case CP_NET_REACH_NO_INET:
		why = "this process may not open network sockets (the systemd unit's "
		      "RestrictAddressFamilies=AF_UNIX)";
		break;
	case CP_NET_REACH_NO_ROUTE:
		why = "this process has no network route to its servers (a private network "
		      "namespace: the systemd unit's PrivateNetwork=yes)";
		break;
	case CP_NET_REACH_OK:
		return;
	}
	cp_warn("DEBUGINFOD_URLS is set, but %s: no debug info will be downloaded; for the "
		"service, "
		"enable the drop-in /usr/share/cacheperf-bpf/debuginfod.conf (cacheperf-bpf(8), "
		"DEBUGINFOD), else unset DEBUGINFOD_URLS or pass --no-debuginfod",
		why);
	cp_debuginfod_enable(false);
}

/* Parses argv; returns -1 to go on, else the exit code. */
static int parse_options(struct cp_main *m, int argc, char **argv)
{
	if (cp_options_parse(argc, argv, &m->opts, m->err, sizeof(m->err))) {
		cp_err("%s", m->err);
		fprintf(stderr, "Try 'cacheperf-bpf --help'.\n");
		return CP_EXIT_USAGE;
	}
	cp_log_init(cp_options_log_level(&m->opts));
	cp_debuginfod_enable(!m->opts.no_debuginfod);
	return -1;
}

/*
 * The commands that need no live run (--help, --version, --probe, report,
 * diff), run to their end; for a profile, the outputs checked before
 * anything runs. Returns -1 to go on profiling, else the exit code.
 */
static int run_command(struct cp_main *m)
{
	switch (m->opts.mode) {
	case CP_MODE_HELP:
		cp_options_usage(stdout);
		return CP_EXIT_OK;
	case CP_MODE_VERSION:
		printf("cacheperf-bpf %s\n", CP_VERSION);
		return CP_EXIT_OK;
	case CP_MODE_PROBE:
		return cp_probe_print(m->opts.sysfs_root, m->opts.cache_spec, stdout)
			       ? CP_EXIT_RUNTIME
			       : CP_EXIT_OK;
	case CP_MODE_REPORT: {
		struct cp_report_opts o = report_opts(m);

		debuginfod_check();
		if (cp_outputs_check(&o, m->err, sizeof(m->err)))
			return fail(m, CP_EXIT_RUNTIME);
		if (cp_replay_report(m->opts.report_path, &o, cp_log_file(CP_LOG_WARNING), m->err,
				     sizeof(m->err)))
			return fail(m, CP_EXIT_RUNTIME);
		return CP_EXIT_OK;
	}
	case CP_MODE_DIFF: {
		struct cp_report_opts o = report_opts(m);
		struct cp_diff_counts c;

		if (cp_outputs_check(&o, m->err, sizeof(m->err)) ||
		    cp_diff_cmd(m->opts.diff_paths[0], m->opts.diff_paths[1], &o, stderr, &c,
				m->err, sizeof(m->err)))
			return fail(m, CP_EXIT_RUNTIME);
		return m->opts.fail_on_new && c.added ? CP_EXIT_NEW_ISSUES : CP_EXIT_OK;
	}
	case CP_MODE_PROFILE:
	default: {
		struct cp_report_opts o = report_opts(m);

		debuginfod_check();
		/* a file we could not write is said before anything runs */
		if (cp_outputs_check(&o, m->err, sizeof(m->err)))
			return fail(m, CP_EXIT_RUNTIME);
		return -1;
	}
	}
}

/* Capabilities, cache geometry and the sample source; returns -1 to go on, else the exit code. */
static int check_machine(struct cp_main *m)
{
	cp_sysinfo_collect(m->opts.sysfs_root, &m->si);
	if (cp_preflight(&m->si, m->err, sizeof(m->err)))
		return fail(m, CP_EXIT_RUNTIME);
	/* armed, they would cost a slot each and never give a history */
	if (m->opts.max_bp_rate && m->si.hw_breakpoint_slots > 0 && !m->si.hw_breakpoint_fires) {
		cp_warn("hardware breakpoints: %s; none are armed (as with --max-bp-rate 0)",
			CP_HW_BREAKPOINT_SILENT);
		m->opts.max_bp_rate = 0;
		m->bp_silent = true;
	}

	cp_geometry_read_sysfs(&m->geo, m->opts.sysfs_root);
	if (m->opts.cache_spec &&
	    cp_geometry_apply_override(&m->geo, m->opts.cache_spec, m->err, sizeof(m->err)))
		return fail(m, CP_EXIT_USAGE);
	for (unsigned int w = 0; w < m->geo.nr_warnings; w++)
		cp_warn("%s", m->geo.warnings[w]);

	m->pmus = cp_pmus__new(m->opts.sysfs_root);
	if (!m->pmus) {
		snprintf(m->err, sizeof(m->err), "cannot read the PMUs: %s", strerror(errno));
		return fail(m, CP_EXIT_RUNTIME);
	}
	if (cp_source_decide(m->opts.source, m->pmus, &m->si.kernel, &m->cfg.source)) {
		snprintf(m->err, sizeof(m->err), "%s", m->cfg.source.reason);
		return fail(m, CP_EXIT_RUNTIME);
	}
	cp_notice("source %s", m->cfg.source.reason);
	return -1;
}

/*
 * The overhead budget, first half: the probes' unit costs are measured on a
 * thread of their own while the BPF programs load.
 */
static void start_calibration(struct cp_main *m)
{
	if (!m->opts.overhead_ppm)
		return;
	m->cal = cp_calibrate__start(cp_source_of(m->cfg.source.kind)->by_time, !m->opts.no_objects,
				     m->opts.max_bp_rate > 0);
	if (!m->cal)
		cp_warn("cannot measure the probes' costs: %s", strerror(errno));
}

/*
 * Second half, before the events are opened: the soft frequency, breakpoint
 * rate and allocation probes' share that fit in the budget.
 */
static void plan_budget(struct cp_main *m, struct cp_live_cfg *lcfg)
{
	bool soft = cp_source_of(m->cfg.source.kind)->by_time;
	struct cp_budget_plan *plan = &m->info.budget;
	struct cp_unit_costs *u = &m->info.unit;
	char why[256], ticks[64] = "";

	if (m->cal && cp_calibrate__join(m->cal, u, why, sizeof(why)))
		cp_warn("%s; that source is not held to the budget", why);
	m->cal = NULL;
	cp_budget_plan(m->opts.overhead_ppm, u, soft, m->opts.soft_freq_hz, m->opts.max_bp_rate,
		       plan);
	if (soft)
		m->cfg.soft_freq_hz = plan->soft_freq_hz;
	lcfg->max_bp_rate = plan->bp_rate;
	lcfg->bp_rate_follows_cpu = plan->budget_ppm != 0;
	cp_session__set_budget(m->sess, plan, u);
	if (!plan->budget_ppm)
		return;
	if (soft)
		snprintf(ticks, sizeof(ticks), "; %u ticks/s (asked %u)", plan->soft_freq_hz,
			 plan->soft_freq_asked_hz);
	cp_notice("overhead budget %.2f %%: tick %.1f us, uprobe %.2f + return %.2f us, breakpoint "
		  "hit %.1f us%s; breakpoints %u hits/s; wakeup %.1f us, at most one per %.1f ms; "
		  "allocation probes %.2f %%",
		  plan->budget_ppm / 1e4, u->tick_ns / 1e3, u->uprobe_ns / 1e3,
		  u->uretprobe_ns / 1e3, u->bp_hit_ns / 1e3, ticks, plan->bp_rate,
		  u->wakeup_ns / 1e3, plan->wakeup_min_ns / 1e6, plan->alloc_ppm / 1e4);
}

/* cp_live_cfg.targets_cpu_ns: the targets' CPU time, or the machine's with -a. */
static __u64 targets_cpu_ns(void *ctx)
{
	struct cp_main *m = ctx;
	__u64 ns = 0;

	for (int i = 0; i < m->nr_cpu; i++)
		ns += cp_cpu_src_ns(&m->cpu[i], &m->alive[i]);
	/* the loop asks targets_gone() right after: this reading answers it */
	m->alive_fresh = true;
	return ns;
}

/* The CPU time sources of the targets, or of the machine with -a. */
static void open_cpu_sources(struct cp_main *m)
{
	if (m->opts.target == CP_TARGET_ALL) {
		cp_cpu_src_open(&m->cpu[0], NULL, 0);
		m->nr_cpu = 1;
		return;
	}
	for (m->nr_cpu = 0; m->nr_cpu < m->nr_pids; m->nr_cpu++)
		cp_cpu_src_open(&m->cpu[m->nr_cpu], NULL, m->pids[m->nr_cpu]);
}

/* Checks -p PIDs or launches `-- CMD` held before exec; returns -1 to go on. */
static int prepare_targets(struct cp_main *m)
{
	int ret;

	switch (m->opts.target) {
	case CP_TARGET_PIDS:
		if (cp_target_check_pids(m->opts.pids, m->opts.nr_pids, m->err, sizeof(m->err)))
			return fail(m, CP_EXIT_RUNTIME);
		memcpy(m->pids, m->opts.pids, sizeof(pid_t) * (size_t)m->opts.nr_pids);
		m->nr_pids = m->opts.nr_pids;
		break;
	case CP_TARGET_CMD:
		ret = cp_child_spawn(m->opts.cmd_argv, &m->child, m->err, sizeof(m->err));
		if (ret)
			return fail(m, CP_EXIT_RUNTIME);
		m->have_child = true;
		/* the profiler's child, but a target: its memory is not the profiler's */
		cp_self_mem_set_command(m->child.pid);
		m->pids[0] = m->child.pid;
		m->nr_pids = 1;
		break;
	case CP_TARGET_ALL:
	default:
		break;
	}
	open_cpu_sources(m);
	cp_session_cfg_of(&m->opts, &m->cfg);
	m->cfg.pmus = m->pmus;
	m->cfg.pids = m->pids;
	m->cfg.nr_pids = m->nr_pids;
	m->cfg.geo = &m->geo;
	return -1;
}

/*
 * Set up: keep only what the loop needs (CP_LIVE_CAPS), on every thread,
 * and no_new_privs. A failure is said and the run goes on: it only loses a
 * defence.
 */
static void drop_privileges(void)
{
	struct cp_privs_result res;
	char err[256], names[160];

	if (cp_privs_drop(CP_LIVE_CAPS, &res, err, sizeof(err))) {
		cp_warn("%s; the run keeps them", err);
		return;
	}
	cp_info("capabilities kept: %s; bounding set %s; no_new_privs (%u threads)",
		res.now.permitted ? cp_caps_names(res.now.permitted, names, sizeof(names)) : "none",
		res.bounding ? "cut to them" : "left (no CAP_SETPCAP)", res.threads + 1);
}

/* cp_live_cfg.targets_gone: the command exited, or every -p process. */
static bool targets_gone(void *ctx, char *reason, size_t sz)
{
	struct cp_main *m = ctx;
	bool fresh;

	if (m->have_child) {
		if (!cp_child_poll(&m->child))
			return false;
		snprintf(reason, sz, "the command exited with status %d",
			 cp_exit_code(m->child.status));
		return true;
	}
	fresh = m->alive_fresh;
	m->alive_fresh = false;
	for (int i = 0; i < m->nr_cpu; i++) {
		bool alive = m->alive[i];

		if (!fresh)
			cp_cpu_src_ns(&m->cpu[i], &alive);
		if (alive)
			return false;
	}
	snprintf(reason, sz, "%s exited", m->nr_pids == 1 ? "the target" : "every target");
	return true;
}

/*
 * The released command stops in its loader before its libraries are mapped
 * and once they are (cp_alloc_probes__stop_in_loader()); its allocator is
 * probed at each stop until known, at most CP_LOADER_STOPS stops, each
 * within CP_LOADER_WAIT_MS, then it goes on. A command of another loader,
 * or a static one, never stops: it is neither waited for nor continued
 * (a SIGCONT runs its handler and cuts its sleeps short), and is probed
 * when its exec is read, as before.
 */
#define CP_LOADER_STOPS	  4
#define CP_LOADER_WAIT_MS 500
#define CP_LOADER_RACE_MS 10

static void probe_in_loader(struct cp_main *m)
{
	struct cp_alloc_probes *ap = m->sess->alloc;
	bool ours = cp_alloc_probes__in_loader(ap, m->child.pid);
	int stops = 0, ret = -EAGAIN;

	while (ours && ret == -EAGAIN && stops < CP_LOADER_STOPS &&
	       cp_child_wait_stop(&m->child, CP_LOADER_WAIT_MS) == 1) {
		stops++;
		ret = cp_session__probe_allocs(m->sess, m->child.pid, false);
		if (ret == -EAGAIN)
			kill(m->child.pid, SIGCONT);
	}
	cp_alloc_probes__loader_done(ap);
	/*
	 * ours: stopped, or stopping (a stop sent as the probe went off). Any
	 * other: continued only if it stopped after all (a static program that
	 * exec'd one of ours at once), never on a guess (a SIGCONT runs its
	 * handler and cuts its sleeps short).
	 */
	if (!m->child.exited && (ours || cp_child_wait_stop(&m->child, CP_LOADER_RACE_MS) == 1))
		kill(m->child.pid, SIGCONT);
	cp_info("the command %s; %s",
		ours ? "stopped in its loader" : "runs another loader than ours, or none",
		ret == -EAGAIN ? "its allocator is probed once its exec is read"
			       : "its allocator probed before its libraries ran");
}

static int run(struct cp_main *m)
{
	struct cp_live_cfg lcfg = {
		.duration_s = m->opts.duration_s,
		.interval_s = m->opts.interval_s,
		.window_s = m->opts.window_s,
		.max_sample_rate = m->opts.max_sample_rate,
		.max_memory_bytes = m->opts.max_memory_bytes,
		.sysfs_root = m->opts.sysfs_root,
		.bp_expiry_ms = m->opts.bp_expiry_ms,
		.max_bp_rate = m->opts.max_bp_rate,
		.bp_silent = m->bp_silent,
		.targets_gone = m->opts.target == CP_TARGET_ALL ? NULL : targets_gone,
		.targets_cpu_ns = targets_cpu_ns,
		.on_report = print_summary,
		.on_interval = on_interval,
		.on_reopen = on_reopen,
		.ctx = m,
	};
	struct cp_profile *prof;
	int ret, lost;
	bool stops;

	/* Open, set knobs, load & verify BPF programs */
	if (cp_session__open(&m->cfg, &m->sess, m->err, sizeof(m->err)))
		return fail(m, CP_EXIT_RUNTIME);
	/* Fit the sources in the overhead budget */
	plan_budget(m, &lcfg);
	/* Attach to the sampling events */
	if (cp_session__attach(m->sess, &m->cfg, m->err, sizeof(m->err)))
		return fail(m, CP_EXIT_RUNTIME);
	if (m->opts.record_path &&
	    !(m->rec = cp_recorder__open(m->opts.record_path, m->err, sizeof(m->err))))
		return fail(m, CP_EXIT_RUNTIME);
	/* the live run owns the recording from here on, made or not */
	ret = cp_live__new(m->sess, &m->geo, m->rec, &m->live, m->err, sizeof(m->err));
	m->rec = NULL;
	if (ret)
		return fail(m, CP_EXIT_RUNTIME);
	prof = cp_live__profile(m->live);
	prof->alloc_wrappers = &m->opts.alloc_wrappers;
	cp_live__limit_memory(m->live, lcfg.max_memory_bytes);
	/* Let a held command run: probes see it from its first instruction */
	if (m->have_child)
		cp_session__attach_allocs(m->sess, &m->cfg);
	stops = m->have_child && m->sess->alloc &&
		!cp_alloc_probes__stop_in_loader(m->sess->alloc, m->child.pid);
	if (m->have_child && cp_child_release(&m->child, m->err, sizeof(m->err)))
		return fail(m, CP_EXIT_RUNTIME);
	if (stops)
		probe_in_loader(m);
	fill_info(m);
	cp_live__set_info(m->live, &m->info);
	for (int i = 0; i < m->nr_pids; i++)
		cp_profile__snapshot(prof, m->pids[i]);
	/* running targets' allocation probes last: the loop times their first window */
	if (!m->have_child)
		cp_session__attach_allocs(m->sess, &m->cfg);
	/* Keep only the capabilities the loop needs */
	drop_privileges();
	cp_info("%d sampling events, %s, program %s", m->sess->nr_events, m->sess->scope.reason,
		m->sess->soft_on ? "on_tick" : cp_mem_prog_name(m->sess->variant));

	/* Loop until the duration, a signal or the targets' exit */
	m->ro = report_opts(m);
	cp_outputs_init(&m->outs, &m->ro, &m->geo, pmu_name(m->pmus), true,
			!m->opts.quiet && isatty(STDERR_FILENO) ? stderr : NULL);
	if (cp_live__run(m->live, &lcfg, m->err, sizeof(m->err)))
		return fail(m, CP_EXIT_RUNTIME);

	/* Final report and outputs, then the recording's end: it has what the report read */
	lost = cp_outputs_write(&m->outs, CP_OUT_END, prof, m->err, sizeof(m->err));
	if (lost)
		cp_err("%s", m->err);
	ret = cp_live__finish(m->live, m->err, sizeof(m->err));
	if (ret)
		return fail(m, CP_EXIT_RUNTIME);
	/* the outputs are what the run was for: one not written, the run failed */
	if (lost)
		return CP_EXIT_RUNTIME;
	if (m->have_child && m->child.exited)
		return cp_exit_code(m->child.status);
	return CP_EXIT_OK;
}

/*
 * Blocks of 1 MiB and more (a maps text of 16 MiB, its parse, a read's
 * buffer) are mapped apart and given back when freed. glibc's default
 * moves that threshold up to 32 MiB after the first such block is freed,
 * and later ones then stay in the heap: a tenant's long maps held the
 * profiler 40-60 MiB above what it kept, once past --max-memory.
 */
#define CP_MMAP_THRESHOLD (1 << 20)

int main(int argc, char **argv)
{
	struct cp_main *m;
	int ret;

	mallopt(M_MMAP_THRESHOLD, CP_MMAP_THRESHOLD);
	m = calloc(1, sizeof(*m));

	/* stderr may be the journal from the first message on */
	cp_log_init(CP_LOG_WARNING);
	if (!m) {
		cp_err("out of memory");
		return CP_EXIT_RUNTIME;
	}
	/* Parse options */
	ret = parse_options(m, argc, argv);
	if (ret < 0)
		ret = run_command(m);
	if (ret >= 0)
		goto cleanup;
	cp_session_route_libbpf();
	/* Room for every target's files: a process may map thousands (docs/security.md) */
	cp_tf_raise_nofile();
	if (cp_signals_install()) {
		snprintf(m->err, sizeof(m->err), "cannot install signal handlers: %s",
			 strerror(errno));
		ret = fail(m, CP_EXIT_RUNTIME);
		goto cleanup;
	}
	/* Check capabilities, cache geometry, sample source */
	ret = check_machine(m);
	if (ret >= 0)
		goto cleanup;
	/* Check or launch the targets */
	ret = prepare_targets(m);
	if (ret >= 0)
		goto cleanup;
	/* Measure the probes' costs meanwhile */
	start_calibration(m);
	/* Load, attach, loop, report */
	ret = run(m);

cleanup:
	/* the counts of what repeated since the last summary, whatever ended the run */
	cp_log_flush();
	/* a command we launched does not outlive the profile it was launched for */
	if (m->have_child && !m->child.exited)
		cp_child_stop(&m->child, CP_CHILD_GRACE_MS);
	if (m->cal) {
		struct cp_unit_costs u;
		char why[8];

		cp_calibrate__join(m->cal, &u, why, sizeof(why));
	}
	cp_live__free(m->live);
	/* the describe server ends with the symbolizers that asked it */
	cp_sym_server_stop();
	cp_recorder__close(m->rec, NULL, NULL, 0);
	cp_session__free(m->sess);
	cp_pmus__free(m->pmus);
	cp_outputs_free(&m->outs);
	for (int i = 0; i < m->nr_cpu; i++)
		cp_cpu_src_close(&m->cpu[i]);
	free(m);
	return ret;
}
