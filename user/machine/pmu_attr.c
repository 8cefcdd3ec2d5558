// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* perf_event_attr for PEBS and IBS memory sampling; the choices are in pmu_attr.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>
#include <linux/hw_breakpoint.h>

#include "machine/pmu_attr.h"

void cp_sampling_cfg_init(struct cp_sampling_cfg *cfg, __u32 ldlat_cycles, __u64 load_period,
			  __u64 store_period, __u64 seed)
{
	memset(cfg, 0, sizeof(*cfg));
	cfg->ldlat_cycles = ldlat_cycles;
	cfg->load_period = load_period;
	cfg->store_period = store_period;
	cfg->jitter_pct = CP_JITTER_PCT_DEFAULT;
	cfg->jitter_seed = seed;
}

static void common_attr(struct perf_event_attr *attr, __u32 type)
{
	memset(attr, 0, sizeof(*attr));
	attr->size = sizeof(*attr);
	attr->type = type;
	attr->sample_type = CP_MEM_SAMPLE_TYPE;
	attr->wakeup_events = 1;
	attr->disabled = 1;
}

/* config words -> attr; config3 is not in this uapi header (linux-libc-dev 6.1). */
static int set_config(struct perf_event_attr *attr, const __u64 config[CP_PMU_CONFIG_WORDS],
		      const char *what, char *err, size_t err_sz)
{
	if (config[3]) {
		snprintf(err, err_sz, "%s needs perf_event_attr.config3, which this build lacks",
			 what);
		return -EINVAL;
	}
	attr->config = config[0];
	attr->config1 = config[1];
	attr->config2 = config[2];
	return 0;
}

/* Parses event string @text of @pmu into @attr's config words. */
static int pebs_config(const struct cp_pmu *pmu, const char *event, const char *text, __u32 ldlat,
		       struct perf_event_attr *attr, char *err, size_t err_sz)
{
	__u64 config[CP_PMU_CONFIG_WORDS];
	char why[160];
	int ret;

	ret = cp_pmu_event_parse(&pmu->formats, text, config, why, sizeof(why));
	if (ret) {
		snprintf(err, err_sz, "cannot use %s/events/%s \"%s\": %s", pmu->name, event, text,
			 why);
		return ret;
	}
	if (cp_pmu_event_has_term(text, "ldlat")) {
		const struct cp_pmu_format *f = cp_pmu_formats_find(&pmu->formats, "ldlat");

		/* cp_pmu_event_parse() already resolved the term, so f exists */
		if (!f || cp_pmu_format_set(f, ldlat, config)) {
			snprintf(err, err_sz, "--ldlat %u does not fit the %s ldlat field", ldlat,
				 pmu->name);
			return -ERANGE;
		}
	}
	return set_config(attr, config, event, err, err_sz);
}

static void pebs_sampling(struct cp_event_spec *s, const struct cp_pmu *pmu,
			  const struct cp_sampling_cfg *cfg, const char *name,
			  enum cp_event_role role, __u64 period)
{
	snprintf(s->name, sizeof(s->name), "%s", name);
	s->role = role;
	s->attr.sample_period = period;
	s->attr.precise_ip = cp_pmu_precise_first(pmu);
	s->attr.exclude_kernel = 1;
	s->attr.exclude_hv = 1;
	s->pmu_event = true;
	s->probe_precise = true;
	s->jitter_pct = cfg->jitter_pct;
	s->jitter_seed = cfg->jitter_seed;
	s->period_align = 1;
	s->max_period = CP_PEBS_MAX_PERIOD;
}

static int build_pebs(const struct cp_pmu *pmu, const struct cp_sampling_cfg *cfg,
		      struct cp_mem_specs *out, char *err, size_t err_sz)
{
	struct cp_event_spec *ld = &out->spec[0], *st = &out->spec[1];
	int ret;

	common_attr(&ld->attr, pmu->type);
	ret = pebs_config(pmu, "mem-loads", pmu->mem_loads, cfg->ldlat_cycles, &ld->attr, err,
			  err_sz);
	if (ret)
		return ret;
	pebs_sampling(ld, pmu, cfg, "mem-loads", CP_EVENT_LOAD, cfg->load_period);
	if (pmu->mem_loads_aux[0]) {
		common_attr(&ld->leader, pmu->type);
		ret = pebs_config(pmu, "mem-loads-aux", pmu->mem_loads_aux, cfg->ldlat_cycles,
				  &ld->leader, err, err_sz);
		if (ret)
			return ret;
		/* counting only, and running: see pmu_attr.h */
		ld->leader.sample_type = 0;
		ld->leader.wakeup_events = 0;
		ld->leader.disabled = 0;
		ld->leader.exclude_kernel = 1;
		ld->leader.exclude_hv = 1;
		ld->has_leader = true;
		snprintf(ld->leader_name, sizeof(ld->leader_name), "mem-loads-aux");
	}
	out->nr = 1;
	if (!pmu->mem_stores[0])
		return 0;
	common_attr(&st->attr, pmu->type);
	ret = pebs_config(pmu, "mem-stores", pmu->mem_stores, cfg->ldlat_cycles, &st->attr, err,
			  err_sz);
	if (ret)
		return ret;
	pebs_sampling(st, pmu, cfg, "mem-stores", CP_EVENT_STORE, cfg->store_period);
	out->nr = 2;
	return 0;
}

__u64 cp_ibs_op_period(__u64 load_period)
{
	unsigned __int128 p = (unsigned __int128)load_period * CP_IBS_OPS_PER_LOAD;

	if (p > CP_IBS_MAX_PERIOD)
		p = CP_IBS_MAX_PERIOD;
	return cp_period_jitter((__u64)p, 0, 0, 0, CP_IBS_PERIOD_ALIGN);
}

static int build_ibs(const struct cp_pmu *pmu, const struct cp_sampling_cfg *cfg,
		     struct cp_mem_specs *out, char *err, size_t err_sz)
{
	struct cp_event_spec *s = &out->spec[0];
	const struct cp_pmu_format *cnt_ctl, *swfilt;
	__u64 config[CP_PMU_CONFIG_WORDS] = {0};
	int ret;

	common_attr(&s->attr, pmu->type);
	/* older kernels lack the file on CPUs without IbsOpCntCtl: cycles then */
	cnt_ctl = cp_pmu_formats_find(&pmu->formats, "cnt_ctl");
	if (cnt_ctl)
		cp_pmu_format_set(cnt_ctl, 1, config);
	swfilt = cp_pmu_formats_find(&pmu->formats, "swfilt");
	if (swfilt) {
		cp_pmu_format_set(swfilt, 1, config);
		s->attr.exclude_kernel = 1;
	}
	ret = set_config(&s->attr, config, "ibs_op", err, err_sz);
	if (ret)
		return ret;
	snprintf(s->name, sizeof(s->name), "ibs_op");
	s->role = CP_EVENT_MEM;
	/* IbsOpData3 tells read-modify-writes from loads (bpf/sample_read.bpf.h) */
	s->attr.sample_type |= PERF_SAMPLE_RAW;
	s->attr.sample_period = cp_ibs_op_period(cfg->load_period);
	s->pmu_event = true;
	s->jitter_pct = cfg->jitter_pct;
	s->jitter_seed = cfg->jitter_seed;
	s->period_align = CP_IBS_PERIOD_ALIGN;
	s->max_period = CP_IBS_MAX_PERIOD;
	out->nr = 1;
	return 0;
}

int cp_mem_specs_build(const struct cp_pmu *pmu, const struct cp_sampling_cfg *cfg,
		       struct cp_mem_specs *out, char *err, size_t err_sz)
{
	memset(out, 0, sizeof(*out));
	if (pmu->kind == CP_PMU_IBS)
		return build_ibs(pmu, cfg, out, err, err_sz);
	if (!pmu->mem_loads[0]) {
		snprintf(err, err_sz, "the %s PMU has no mem-loads event", pmu->name);
		return -EINVAL;
	}
	return build_pebs(pmu, cfg, out, err, err_sz);
}

/* A user-space-only sampling spec of @type / @config that wakes at every sample. */
static void user_event_spec(struct cp_event_spec *spec, const char *name, __u32 type, __u64 config,
			    __u64 period)
{
	memset(spec, 0, sizeof(*spec));
	snprintf(spec->name, sizeof(spec->name), "%s", name);
	spec->role = CP_EVENT_OTHER;
	spec->attr.size = sizeof(spec->attr);
	spec->attr.type = type;
	spec->attr.config = config;
	spec->attr.sample_period = period;
	spec->attr.wakeup_events = 1;
	spec->attr.disabled = 1;
	spec->attr.exclude_kernel = 1;
	spec->attr.exclude_hv = 1;
	spec->period_align = 1;
}

void cp_page_fault_spec(struct cp_event_spec *spec, __u64 period)
{
	user_event_spec(spec, "page-faults", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_PAGE_FAULTS, period);
	spec->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_ADDR;
}

void cp_breakpoint_spec(struct cp_event_spec *spec, __u64 ip)
{
	user_event_spec(spec, "breakpoint", PERF_TYPE_BREAKPOINT, 0, 1);
	spec->attr.bp_type = HW_BREAKPOINT_X;
	spec->attr.bp_addr = ip;
	spec->attr.bp_len = sizeof(long);
}

void cp_cpu_clock_spec(struct cp_event_spec *spec, __u32 freq_hz)
{
	user_event_spec(spec, "cpu-clock", PERF_TYPE_SOFTWARE, PERF_COUNT_SW_CPU_CLOCK, freq_hz);
	spec->attr.freq = 1;
	/* on_tick counts the ticks of targets in the kernel, and skips them */
	spec->attr.exclude_kernel = 0;
	/* the program reads the registers; nobody reads the perf buffer */
	spec->attr.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID;
	spec->attr.wakeup_events = 0;
}
