// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PMU detection and attribute building over the fake sysfs trees in
 * tests/data/pmu (see its README): the attrs each platform gets, the hybrid
 * CPU-to-PMU mapping, the precise_ip probe, period jitter, the AMD kernel
 * rule, --source decisions and the exact error for a VM without a PMU.
 */
#include <stdarg.h>
#include <stddef.h>
#include <setjmp.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <errno.h>
#include <cmocka.h>

#include "cli/options.h"
#include "machine/cpuset.h"
#include "machine/pmu.h"
#include "machine/pmu_attr.h"

/* IP | TID | ADDR | WEIGHT | DATA_SRC, spelled out independently of the header */
#define EXPECTED_SAMPLE_TYPE	0xc00bull
#define SEED			0x5eedull

/* tests/run.sh sets CP_ROOT; running a test binary by hand from the tree works too */
static const char *tree(const char *name, char *buf, size_t sz)
{
	const char *root = getenv("CP_ROOT");

	snprintf(buf, sz, "%s/tests/data/pmu/%s", root ? root : ".", name);
	return buf;
}

static struct cp_pmus *detect(const char *name)
{
	char root[4096];
	struct cp_pmus *p = cp_pmus__new(tree(name, root, sizeof(root)));

	assert_non_null(p);
	return p;
}

static void default_cfg(struct cp_sampling_cfg *cfg)
{
	struct cp_options opts;

	cp_options_defaults(&opts);
	cp_sampling_cfg_init(cfg, opts.ldlat_cycles, opts.load_period, opts.store_period, SEED);
}

/* --- the trees ---------------------------------------------------------- */

struct core_expect {
	const char *name;
	__u32 type;
	__u64 ld_config, ld_config1;
	bool aux;
	__u64 aux_config;
	bool store;
	__u64 st_config;
	int precise;
	const char *caps_name;
	int nr_cpus;		/* "cpus" file: 0 when absent */
};

struct tree_case {
	const char *tree;
	enum cp_cpu_vendor vendor;
	unsigned int family, model;
	bool hypervisor;
	int nr_core;
	struct core_expect core[CP_PMU_MAX_CORE];
	bool has_ibs;
	__u32 ibs_type;
	__u64 ibs_config, ibs_config2;
	bool ibs_exclude_kernel;
	bool zen4;
};

static const struct tree_case tree_cases[] = {
	{ .tree = "skylake-sp", .vendor = CP_VENDOR_INTEL, .family = 6, .model = 85,
	  .nr_core = 1,
	  .core = { { "cpu", 4, 0x1cd, 3, false, 0, true, 0x82d0, 3, "skylake", 0 } } },
	{ .tree = "icelake-sp", .vendor = CP_VENDOR_INTEL, .family = 6, .model = 106,
	  .nr_core = 1,
	  .core = { { "cpu", 4, 0x1cd, 3, false, 0, true, 0x82d0, 3, "icelake", 0 } } },
	{ .tree = "sapphire-rapids", .vendor = CP_VENDOR_INTEL, .family = 6, .model = 143,
	  .nr_core = 1,
	  .core = { { "cpu", 4, 0x1cd, 3, true, 0x8203, true, 0x2cd, 3, "sapphire_rapids", 0 } } },
	{ .tree = "alderlake-hybrid", .vendor = CP_VENDOR_INTEL, .family = 6, .model = 151,
	  .nr_core = 2,
	  .core = { { "cpu_core", 4, 0x1cd, 3, true, 0x8203, true, 0x2cd, 3, "alderlake_hybrid", 16 },
		    /*
		     * E-cores start at precise_ip 2: tnt_get_event_constraints()
		     * (arch/x86/events/intel/core.c) puts every :ppp event on
		     * counter 0, so loads and stores at 3 would multiplex
		     */
		    { "cpu_atom", 10, 0x5d0, 3, false, 0, true, 0x6d0, 2, "alderlake_hybrid", 8 } } },
	/*
	 * Arrow Lake-H: the SoC tile's low-power E-cores have a PMU of their own,
	 * cpu_lowpower (intel_hybrid_pmu_type_map: hybrid_tiny), with the atom
	 * strings (mem_ld_arl_h, mem_st_arl_h) and the atom's precise rule
	 */
	{ .tree = "arrowlake-h", .vendor = CP_VENDOR_INTEL, .family = 6, .model = 197,
	  .nr_core = 3,
	  .core = { { "cpu_core", 4, 0x1cd, 3, true, 0x8203, true, 0x2cd, 3, "arrowlake_h_hybrid", 6 },
		    { "cpu_atom", 10, 0x5d0, 3, false, 0, true, 0x6d0, 2, "arrowlake_h_hybrid", 8 },
		    { "cpu_lowpower", 11, 0x5d0, 3, false, 0, true, 0x6d0, 2, "arrowlake_h_hybrid",
		      2 } } },
	/*
	 * A kernel older than the CPU: a cpu PMU without events/mem-loads. No
	 * PEBS (it has no data-source decoding for the model: every sample's
	 * source would be NA)
	 */
	{ .tree = "skylake-old-kernel", .vendor = CP_VENDOR_INTEL, .family = 6, .model = 85 },
	{ .tree = "kvm-vpmu-no-pebs", .vendor = CP_VENDOR_INTEL, .family = 6, .model = 85,
	  .hypervisor = true },
	{ .tree = "zen3", .vendor = CP_VENDOR_AMD, .family = 25, .model = 1,
	  .has_ibs = true, .ibs_type = 11, .ibs_config = 1ull << 19 },
	{ .tree = "zen4", .vendor = CP_VENDOR_AMD, .family = 25, .model = 17,
	  .has_ibs = true, .ibs_type = 12, .ibs_config = 1ull << 19, .ibs_config2 = 1,
	  .ibs_exclude_kernel = true, .zen4 = true },
	{ .tree = "vm-no-pmu", .vendor = CP_VENDOR_AMD, .family = 26, .model = 2,
	  .hypervisor = true },
};

static void check_sampling_attr(const struct perf_event_attr *a, __u32 type, __u64 config,
				__u64 config1, __u64 period, int precise)
{
	assert_int_equal(a->size, sizeof(*a));
	assert_int_equal(a->type, type);
	assert_int_equal(a->config, config);
	assert_int_equal(a->config1, config1);
	assert_int_equal(a->config2, 0);
	assert_int_equal(a->sample_period, period);
	assert_int_equal(a->freq, 0);
	assert_int_equal(a->sample_type, EXPECTED_SAMPLE_TYPE);
	assert_int_equal(a->precise_ip, precise);
	assert_int_equal(a->wakeup_events, 1);
	assert_int_equal(a->watermark, 0);
	assert_int_equal(a->exclude_kernel, 1);
	assert_int_equal(a->exclude_hv, 1);
	assert_int_equal(a->exclude_user, 0);
	assert_int_equal(a->disabled, 1);
	assert_int_equal(a->inherit, 0);	/* set per thread by perf_events.c */
}

static void check_core(const struct cp_pmu *pmu, const struct core_expect *x,
		       const struct cp_sampling_cfg *cfg)
{
	struct cp_mem_specs specs;
	char err[256] = "";

	assert_string_equal(pmu->name, x->name);
	assert_int_equal(pmu->kind, CP_PMU_PEBS);
	assert_int_equal(pmu->type, x->type);
	assert_string_equal(pmu->caps_name, x->caps_name);
	assert_int_equal(pmu->has_cpus, x->nr_cpus > 0);
	if (x->nr_cpus)
		assert_int_equal(cp_cpuset_count(&pmu->cpus), x->nr_cpus);

	assert_int_equal(cp_mem_specs_build(pmu, cfg, &specs, err, sizeof(err)), 0);
	assert_int_equal(specs.nr, x->store ? 2 : 1);

	assert_string_equal(specs.spec[0].name, "mem-loads");
	assert_int_equal(specs.spec[0].role, CP_EVENT_LOAD);
	assert_true(specs.spec[0].pmu_event);
	assert_true(specs.spec[0].probe_precise);
	check_sampling_attr(&specs.spec[0].attr, x->type, x->ld_config, x->ld_config1, 20000,
			    x->precise);
	assert_int_equal(specs.spec[0].has_leader, x->aux);
	if (x->aux) {
		const struct perf_event_attr *l = &specs.spec[0].leader;

		assert_string_equal(specs.spec[0].leader_name, "mem-loads-aux");
		assert_int_equal(l->type, x->type);
		assert_int_equal(l->config, x->aux_config);
		assert_int_equal(l->config1, 0);
		/* counting only, running from the start */
		assert_int_equal(l->sample_period, 0);
		assert_int_equal(l->sample_type, 0);
		assert_int_equal(l->precise_ip, 0);
		assert_int_equal(l->disabled, 0);
		assert_int_equal(l->exclude_kernel, 1);
	}
	if (!x->store)
		return;
	assert_string_equal(specs.spec[1].name, "mem-stores");
	assert_int_equal(specs.spec[1].role, CP_EVENT_STORE);
	assert_false(specs.spec[1].has_leader);
	check_sampling_attr(&specs.spec[1].attr, x->type, x->st_config, 0, 50000, x->precise);
}

static void check_ibs(const struct cp_pmus *p, const struct tree_case *c,
		      const struct cp_sampling_cfg *cfg)
{
	const struct perf_event_attr *a;
	struct cp_mem_specs specs;
	char err[256] = "";

	assert_string_equal(p->ibs.name, "ibs_op");
	assert_int_equal(p->ibs.kind, CP_PMU_IBS);
	assert_int_equal(p->ibs.type, c->ibs_type);
	assert_int_equal(p->ibs.zen4_ext, c->zen4);
	assert_int_equal(cp_mem_specs_build(&p->ibs, cfg, &specs, err, sizeof(err)), 0);
	assert_int_equal(specs.nr, 1);
	assert_string_equal(specs.spec[0].name, "ibs_op");
	assert_int_equal(specs.spec[0].role, CP_EVENT_MEM);
	assert_false(specs.spec[0].has_leader);
	assert_false(specs.spec[0].probe_precise);
	assert_int_equal(specs.spec[0].period_align, 16);
	a = &specs.spec[0].attr;
	assert_int_equal(a->type, c->ibs_type);
	assert_int_equal(a->config, c->ibs_config);	/* cnt_ctl: count ops */
	assert_int_equal(a->config1, 0);
	assert_int_equal(a->config2, c->ibs_config2);	/* swfilt where the kernel has it */
	/* one op in 80000: about one load in 20000, like PEBS' --load-period */
	assert_int_equal(a->sample_period, 80000);
	/* and the raw record, whose IbsOpData3 tells read-modify-writes from loads */
	assert_int_equal(a->sample_type, EXPECTED_SAMPLE_TYPE | PERF_SAMPLE_RAW);
	assert_int_equal(a->precise_ip, 0);
	assert_int_equal(a->wakeup_events, 1);
	/* without swfilt any exclude_* is EINVAL (PERF_PMU_CAP_NO_EXCLUDE) */
	assert_int_equal(a->exclude_kernel, c->ibs_exclude_kernel);
	assert_int_equal(a->exclude_hv, 0);
	assert_int_equal(a->exclude_user, 0);
	assert_int_equal(a->disabled, 1);
}

static void test_trees(void **state)
{
	struct cp_sampling_cfg cfg;

	(void)state;
	default_cfg(&cfg);
	for (size_t i = 0; i < sizeof(tree_cases) / sizeof(tree_cases[0]); i++) {
		const struct tree_case *c = &tree_cases[i];
		struct cp_pmus *p = detect(c->tree);

		print_message("# %s: pebs_why '%s' ibs_why '%s'\n", c->tree, p->pebs_why,
			      p->ibs_why);
		assert_int_equal(p->cpu_err, 0);
		assert_int_equal(p->cpu.vendor, c->vendor);
		assert_int_equal(p->cpu.family, c->family);
		assert_int_equal(p->cpu.model, c->model);
		assert_int_equal(p->cpu.hypervisor, c->hypervisor);
		assert_int_equal(p->nr_core, c->nr_core);
		assert_int_equal(p->pebs_why[0] == '\0', c->nr_core > 0);
		for (int k = 0; k < c->nr_core; k++)
			check_core(&p->core[k], &c->core[k], &cfg);
		assert_int_equal(p->has_ibs, c->has_ibs);
		assert_int_equal(p->ibs_why[0] == '\0', c->has_ibs);
		if (c->has_ibs)
			check_ibs(p, c, &cfg);
		cp_pmus__free(p);
	}
}

static void test_missing_root(void **state)
{
	struct cp_pmus *p = detect("no-such-tree");

	(void)state;
	assert_int_equal(p->cpu_err, -ENOENT);
	assert_int_equal(p->nr_core, 0);
	assert_false(p->has_ibs);
	/* without cpuinfo nothing says "VM": the other wording */
	assert_string_equal(p->pebs_why,
			    "no PEBS-capable PMU: /sys/bus/event_source/devices has no cpu or ibs_op directory, so the kernel exposes no hardware PMU (perf support for this CPU not built in?)");
	cp_pmus__free(p);
}

/*
 * A kernel older than the CPU exports a cpu PMU without events/mem-loads. It
 * has no PEBS constraints or data-source table for the model
 * (intel_pmu_init()'s default case), so raw codes would give data_src NA on
 * every sample: an empty profile without an error. No PEBS, and the reason.
 */
static void test_kernel_older_than_cpu(void **state)
{
	struct cp_pmus *p = detect("skylake-old-kernel");
	struct cp_source_choice ch;
	struct cp_kernel_version kv = { 4, 19, 0 };

	(void)state;
	assert_int_equal(p->nr_core, 0);
	assert_string_equal(p->pebs_why,
			    "no PEBS-capable PMU: the cpu PMU exports no mem-loads event: this kernel does not know CPU family 6 model 0x55, so it has no PEBS data-source decoding for it (a newer kernel would)");
	assert_int_equal(cp_source_decide(CP_SOURCE_AUTO, p, &kv, &ch), 0);
	assert_int_equal(ch.kind, CP_SOURCE_SOFT);
	assert_int_equal(cp_source_decide(CP_SOURCE_PEBS, p, &kv, &ch), -ENODEV);
	assert_non_null(strstr(ch.reason, "a newer kernel would); use --source soft"));
	cp_pmus__free(p);
}

static void test_hybrid_cpu_mapping(void **state)
{
	struct cp_pmus *p = detect("alderlake-hybrid");
	struct cp_pmus *s = detect("skylake-sp");

	(void)state;
	for (int cpu = 0; cpu < 16; cpu++)
		assert_int_equal(cp_pmus_core_for_cpu(p, cpu), 0);	/* P-cores + HT */
	for (int cpu = 16; cpu < 24; cpu++)
		assert_int_equal(cp_pmus_core_for_cpu(p, cpu), 1);	/* E-cores */
	assert_int_equal(cp_pmus_core_for_cpu(p, 24), -ENODEV);
	assert_int_equal(cp_pmus_core_for_cpu(p, -1), -ENODEV);
	assert_string_equal(p->core[cp_pmus_core_for_cpu(p, 3)].name, "cpu_core");
	assert_int_equal(p->core[cp_pmus_core_for_cpu(p, 3)].type, 4);
	assert_int_equal(p->core[cp_pmus_core_for_cpu(p, 20)].type, 10);
	/* one PMU without a cpus file takes every CPU */
	assert_int_equal(cp_pmus_core_for_cpu(s, 0), 0);
	assert_int_equal(cp_pmus_core_for_cpu(s, 63), 0);
	cp_pmus__free(p);
	cp_pmus__free(s);
	/* Arrow Lake-H: CPUs 14-15 are the low-power E-cores, sampled through cpu_lowpower */
	p = detect("arrowlake-h");
	assert_int_equal(cp_pmus_core_for_cpu(p, 5), 0);
	assert_int_equal(cp_pmus_core_for_cpu(p, 6), 1);
	assert_int_equal(cp_pmus_core_for_cpu(p, 14), 2);
	assert_string_equal(p->core[cp_pmus_core_for_cpu(p, 15)].name, "cpu_lowpower");
	assert_int_equal(cp_pmus_core_for_cpu(p, 16), -ENODEV);
	cp_pmus__free(p);
}

static void test_ldlat_replaced(void **state)
{
	struct cp_pmus *p = detect("sapphire-rapids");
	struct cp_sampling_cfg cfg;
	struct cp_mem_specs specs;
	char err[256] = "";

	(void)state;
	default_cfg(&cfg);
	cfg.ldlat_cycles = 30;
	assert_int_equal(cp_mem_specs_build(&p->core[0], &cfg, &specs, err, sizeof(err)), 0);
	assert_int_equal(specs.spec[0].attr.config, 0x1cd);
	assert_int_equal(specs.spec[0].attr.config1, 30);
	/* stores and the aux leader have no ldlat term and keep config1 0 */
	assert_int_equal(specs.spec[1].attr.config1, 0);
	assert_int_equal(specs.spec[0].leader.config1, 0);

	cfg.ldlat_cycles = 65535;
	assert_int_equal(cp_mem_specs_build(&p->core[0], &cfg, &specs, err, sizeof(err)), 0);
	assert_int_equal(specs.spec[0].attr.config1, 0xffff);

	/* a narrower field (AMD IBS op ldlat is config1:0-11) refuses a wide value */
	p->core[0].formats.nr = 0;
	assert_int_equal(cp_pmu_formats_add(&p->core[0].formats, "event", "config:0-7"), 0);
	assert_int_equal(cp_pmu_formats_add(&p->core[0].formats, "umask", "config:8-15"), 0);
	assert_int_equal(cp_pmu_formats_add(&p->core[0].formats, "ldlat", "config1:0-11"), 0);
	cfg.ldlat_cycles = 4096;
	assert_int_equal(cp_mem_specs_build(&p->core[0], &cfg, &specs, err, sizeof(err)),
			 -ERANGE);
	assert_string_equal(err, "--ldlat 4096 does not fit the cpu ldlat field");

	/* an event string the formats cannot express */
	snprintf(p->core[0].mem_stores, sizeof(p->core[0].mem_stores), "event=0xcd,umask=0x2,sn=1");
	cfg.ldlat_cycles = 3;
	assert_int_equal(cp_mem_specs_build(&p->core[0], &cfg, &specs, err, sizeof(err)),
			 -EINVAL);
	assert_string_equal(err,
			    "cannot use cpu/events/mem-stores \"event=0xcd,umask=0x2,sn=1\": term 'sn' has no format file");
	cp_pmus__free(p);
}

/* --- precise_ip probe --------------------------------------------------- */

struct probe_case {
	const char *tree;
	int results[4];		/* what each open returned, 0: success; ends at success */
	int nr;
	int ret;		/* 0: settled, else the errno the probe gives up with */
	int precise;		/* precise_ip after the probe */
};

static const struct probe_case probe_cases[] = {
	{ "skylake-sp", { 0 }, 1, 0, 3 },
	{ "skylake-sp", { -EOPNOTSUPP, 0 }, 2, 0, 2 },
	{ "skylake-sp", { -EOPNOTSUPP, -EINVAL, 0 }, 3, 0, 1 },
	/* PEBS memory events need precise_ip >= 1: a failure at 1 is final */
	{ "skylake-sp", { -EOPNOTSUPP, -EOPNOTSUPP, -EOPNOTSUPP }, 3, -EOPNOTSUPP, 1 },
	/* no PMU at all is not a precise problem: stop at once */
	{ "skylake-sp", { -ENOENT }, 1, -ENOENT, 3 },
	{ "skylake-sp", { -EACCES }, 1, -EACCES, 3 },
	{ "sapphire-rapids", { -ENODATA }, 1, -ENODATA, 3 },
};

static void test_precise_probe(void **state)
{
	struct cp_sampling_cfg cfg;

	(void)state;
	default_cfg(&cfg);
	for (size_t i = 0; i < sizeof(probe_cases) / sizeof(probe_cases[0]); i++) {
		const struct probe_case *c = &probe_cases[i];
		struct cp_pmus *p = detect(c->tree);
		struct cp_mem_specs specs;
		char err[256];
		int ret = 0;

		print_message("# case %zu (%s)\n", i, c->tree);
		assert_int_equal(cp_mem_specs_build(&p->core[0], &cfg, &specs, err, sizeof(err)), 0);
		for (int k = 0; k < c->nr; k++) {
			if (!c->results[k]) {
				ret = 0;
				break;
			}
			ret = cp_event_spec_lower_precise(&specs.spec[0], c->results[k]);
			if (ret)
				break;
		}
		assert_int_equal(ret, c->ret);
		assert_int_equal(specs.spec[0].attr.precise_ip, c->precise);
		cp_pmus__free(p);
	}
	/* the first level follows caps/max_precise, capped at 3; IBS takes none */
	assert_int_equal(cp_pmu_precise_first(&(struct cp_pmu){ .max_precise = 2 }), 2);
	assert_int_equal(cp_pmu_precise_first(&(struct cp_pmu){ .max_precise = -1 }), 3);
	assert_int_equal(cp_pmu_precise_first(&(struct cp_pmu){ .kind = CP_PMU_IBS,
								.max_precise = 3 }), 0);
	assert_int_equal(cp_pmu_precise_next(3, -EINVAL), 2);
	assert_int_equal(cp_pmu_precise_next(1, -EINVAL), -1);
	assert_int_equal(cp_pmu_precise_next(2, -EBUSY), -1);
}

/* --- period jitter ------------------------------------------------------ */

static void test_period_jitter(void **state)
{
	struct cp_pmus *p = detect("skylake-sp"), *z = detect("zen4");
	struct cp_sampling_cfg cfg;
	struct cp_mem_specs specs, ibs;
	struct perf_event_attr a, b;
	char err[256];
	int distinct = 0, below = 0, above = 0;
	__u64 prev = 0;

	(void)state;
	default_cfg(&cfg);
	assert_int_equal(cp_mem_specs_build(&p->core[0], &cfg, &specs, err, sizeof(err)), 0);
	assert_int_equal(specs.spec[0].jitter_pct, 10);
	for (int cpu = 0; cpu < 256; cpu++) {
		cp_event_spec_instance(&specs.spec[0], cpu, &a);
		assert_in_range(a.sample_period, 18000, 22000);
		cp_event_spec_instance(&specs.spec[1], cpu, &b);
		assert_in_range(b.sample_period, 45000, 55000);
		/* only the period differs between instances */
		assert_int_equal(a.config, 0x1cd);
		assert_int_equal(a.precise_ip, 3);
		distinct += a.sample_period != prev;
		below += a.sample_period < 19000;
		above += a.sample_period > 21000;
		prev = a.sample_period;
	}
	/* CPUs do not sample in lock-step, and the spread covers the range */
	assert_true(distinct > 200);
	assert_true(below > 30 && above > 30);

	/* seedable: same seed and key, same period; another seed, another */
	cp_event_spec_instance(&specs.spec[0], 7, &a);
	cp_event_spec_instance(&specs.spec[0], 7, &b);
	assert_int_equal(a.sample_period, b.sample_period);
	specs.spec[0].jitter_seed = SEED + 1;
	distinct = 0;
	for (int cpu = 0; cpu < 16; cpu++) {
		cp_event_spec_instance(&specs.spec[0], cpu, &b);
		specs.spec[0].jitter_seed = SEED;
		cp_event_spec_instance(&specs.spec[0], cpu, &a);
		specs.spec[0].jitter_seed = SEED + 1;
		distinct += a.sample_period != b.sample_period;
	}
	assert_true(distinct >= 14);

	/* IBS periods stay multiples of 16, around 4 ops per load of the load period */
	assert_int_equal(cp_mem_specs_build(&z->ibs, &cfg, &ibs, err, sizeof(err)), 0);
	for (int cpu = 0; cpu < 64; cpu++) {
		cp_event_spec_instance(&ibs.spec[0], cpu, &a);
		assert_int_equal(a.sample_period % 16, 0);
		assert_in_range(a.sample_period, 72000 - 15, 88000);
	}
	/* capped at IbsOpMaxCnt's reach, still a multiple of 16 */
	assert_int_equal(cp_ibs_op_period(1000000), CP_IBS_MAX_PERIOD);
	assert_int_equal(cp_ibs_op_period(5), 16);	/* 20 ops, rounded down to 16 */

	/* bounds of the helper itself */
	assert_int_equal(cp_period_jitter(20000, 0, 1, 2, 1), 20000);
	assert_int_equal(cp_period_jitter(1, 10, 1, 2, 1), 1);		/* 10 % of 1 is 0 */
	assert_int_equal(cp_period_jitter(5, 0, 1, 2, 16), 16);		/* never below align */
	assert_int_equal(cp_period_jitter(0, 10, 1, 2, 1), 1);
	assert_in_range(cp_period_jitter(~0ull / 2, 10, 1, 2, 1), ~0ull / 2 - ~0ull / 20,
			~0ull / 2 + ~0ull / 20);
	cp_pmus__free(p);
	cp_pmus__free(z);
}

/* --- AMD kernel rule and --source --------------------------------------- */

struct ibs_kernel_case {
	struct cp_kernel_version kv;
	int ret;
	bool per_task;
};

static const struct ibs_kernel_case ibs_kernel_cases[] = {
	{ { 5, 15, 0 }, -EOPNOTSUPP, false },
	{ { 6, 0, 19 }, -EOPNOTSUPP, false },
	{ { 6, 1, 0 }, 0, false },	/* data_src/addr, but IBS is CPU-wide only */
	{ { 6, 1, 192 }, 0, false },	/* Debian 12 */
	{ { 6, 2, 0 }, 0, true },
	{ { 6, 18, 44 }, 0, true },
	{ { 7, 0, 0 }, 0, true },
};

static void test_ibs_kernel_rule(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(ibs_kernel_cases) / sizeof(ibs_kernel_cases[0]); i++) {
		const struct ibs_kernel_case *c = &ibs_kernel_cases[i];
		bool per_task = !c->per_task;

		assert_int_equal(cp_ibs_kernel_check(&c->kv, &per_task), c->ret);
		assert_int_equal(per_task, c->per_task);
	}
}

struct source_case {
	const char *tree;
	enum cp_source_kind want;
	struct cp_kernel_version kv;
	int ret;
	enum cp_source_kind kind;
	bool per_task;
	const char *reason;
};

#define VM_WHY "no PEBS-capable PMU: /sys/bus/event_source/devices has no cpu or ibs_op directory, so this looks like a VM without a virtual PMU"

static const struct source_case source_cases[] = {
	{ "skylake-sp", CP_SOURCE_AUTO, { 6, 1, 0 }, 0, CP_SOURCE_PEBS, true,
	  "pebs: the cpu PMU (skylake) exports mem-loads and mem-stores" },
	{ "skylake-sp", CP_SOURCE_PEBS, { 6, 1, 0 }, 0, CP_SOURCE_PEBS, true, NULL },
	{ "skylake-sp", CP_SOURCE_SOFT, { 6, 1, 0 }, 0, CP_SOURCE_SOFT, true,
	  "soft: requested with --source soft" },
	{ "skylake-sp", CP_SOURCE_IBS, { 6, 1, 0 }, -ENODEV, 0, false,
	  "no IBS PMU: /sys/bus/event_source/devices has no ibs_op directory (IBS is AMD-only, and VMs rarely pass it through); use --source soft" },
	{ "alderlake-hybrid", CP_SOURCE_AUTO, { 6, 18, 0 }, 0, CP_SOURCE_PEBS, true,
	  "pebs: cpu_core and cpu_atom PMUs (alderlake_hybrid) export mem-loads and mem-stores" },
	{ "arrowlake-h", CP_SOURCE_AUTO, { 6, 18, 0 }, 0, CP_SOURCE_PEBS, true,
	  "pebs: cpu_core, cpu_atom and cpu_lowpower PMUs (arrowlake_h_hybrid) export mem-loads and mem-stores" },
	{ "zen4", CP_SOURCE_AUTO, { 6, 18, 44 }, 0, CP_SOURCE_IBS, true,
	  "ibs: the ibs_op PMU (type 12) samples every op; kernel 6.18 has per-thread IBS" },
	{ "zen3", CP_SOURCE_AUTO, { 6, 1, 0 }, 0, CP_SOURCE_IBS, false,
	  "ibs: the ibs_op PMU (type 11) samples every op; kernel 6.1 has no per-thread IBS (6.2): per-CPU events with a PID filter" },
	{ "zen3", CP_SOURCE_IBS, { 5, 15, 0 }, -EOPNOTSUPP, 0, false,
	  "IBS needs kernel 6.1 or newer for data addresses and sources (this is 5.15); use --source soft" },
	{ "zen3", CP_SOURCE_AUTO, { 5, 15, 0 }, 0, CP_SOURCE_SOFT, true,
	  "soft: no PEBS-capable PMU: the cpu PMU exports no mem-loads event (PEBS is Intel-only; AMD samples with IBS), and IBS needs kernel 6.1 for data addresses (this is 5.15)" },
	{ "zen3", CP_SOURCE_PEBS, { 6, 1, 0 }, -ENODEV, 0, false,
	  "no PEBS-capable PMU: the cpu PMU exports no mem-loads event (PEBS is Intel-only; AMD samples with IBS); use --source soft" },
	{ "kvm-vpmu-no-pebs", CP_SOURCE_AUTO, { 6, 1, 0 }, 0, CP_SOURCE_SOFT, true,
	  "soft: no PEBS: the cpu PMU reports caps/max_precise 0 (a virtual PMU without PEBS?)" },
	{ "kvm-vpmu-no-pebs", CP_SOURCE_PEBS, { 6, 1, 0 }, -ENODEV, 0, false,
	  "no PEBS: the cpu PMU reports caps/max_precise 0 (a virtual PMU without PEBS?); use --source soft" },
	{ "vm-no-pmu", CP_SOURCE_AUTO, { 6, 18, 44 }, 0, CP_SOURCE_SOFT, true, "soft: " VM_WHY },
	{ "vm-no-pmu", CP_SOURCE_PEBS, { 6, 18, 44 }, -ENODEV, 0, false,
	  VM_WHY "; use --source soft" },
	{ "vm-no-pmu", CP_SOURCE_IBS, { 6, 18, 44 }, -ENODEV, 0, false,
	  "no IBS PMU: /sys/bus/event_source/devices has no ibs_op directory, so this looks like a VM without a virtual PMU; use --source soft" },
	{ "vm-no-pmu", CP_SOURCE_SOFT, { 6, 18, 44 }, 0, CP_SOURCE_SOFT, true, NULL },
};

static void test_source_decide(void **state)
{
	(void)state;
	for (size_t i = 0; i < sizeof(source_cases) / sizeof(source_cases[0]); i++) {
		const struct source_case *c = &source_cases[i];
		struct cp_pmus *p = detect(c->tree);
		struct cp_source_choice ch;

		print_message("# %s --source %s\n", c->tree, cp_source_name(c->want));
		assert_int_equal(cp_source_decide(c->want, p, &c->kv, &ch), c->ret);
		if (c->reason)
			assert_string_equal(ch.reason, c->reason);
		/* one line, always */
		assert_non_null(ch.reason[0] ? ch.reason : NULL);
		assert_null(strchr(ch.reason, '\n'));
		if (!c->ret) {
			assert_int_equal(ch.kind, c->kind);
			assert_int_equal(ch.per_task, c->per_task);
		}
		cp_pmus__free(p);
	}
}

/* The sentence a user of this VM sees for --source pebs, word for word. */
static void test_vm_error_text(void **state)
{
	struct cp_pmus *p = detect("vm-no-pmu");
	struct cp_kernel_version kv = { 6, 18, 44 };
	struct cp_source_choice ch;

	(void)state;
	assert_int_equal(cp_source_decide(CP_SOURCE_PEBS, p, &kv, &ch), -ENODEV);
	assert_string_equal(ch.reason,
			    "no PEBS-capable PMU: /sys/bus/event_source/devices has no cpu or ibs_op directory, so this looks like a VM without a virtual PMU; use --source soft");
	cp_pmus__free(p);
}

/* --source soft: cpu-clock in freq mode, kernel ticks kept so on_tick can count them. */
static void test_cpu_clock_spec(void **state)
{
	struct cp_event_spec s;
	struct perf_event_attr a;

	(void)state;
	cp_cpu_clock_spec(&s, 4999);
	assert_string_equal(s.name, "cpu-clock");
	assert_false(s.pmu_event);
	cp_event_spec_instance(&s, 1, &a);
	assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.config, PERF_COUNT_SW_CPU_CLOCK);
	assert_int_equal(a.freq, 1);
	assert_int_equal(a.sample_freq, 4999);	/* no jitter */
	assert_int_equal(a.exclude_kernel, 0);
	assert_int_equal(a.disabled, 1);
}

static void test_page_fault_spec(void **state)
{
	struct cp_event_spec s;
	struct perf_event_attr a;

	(void)state;
	cp_page_fault_spec(&s, 1);
	assert_string_equal(s.name, "page-faults");
	assert_int_equal(s.role, CP_EVENT_OTHER);
	assert_false(s.pmu_event);
	assert_false(s.has_leader);
	cp_event_spec_instance(&s, 3, &a);
	assert_int_equal(a.type, PERF_TYPE_SOFTWARE);
	assert_int_equal(a.config, PERF_COUNT_SW_PAGE_FAULTS);
	assert_int_equal(a.sample_period, 1);	/* no jitter: every fault */
	assert_true(a.sample_type & PERF_SAMPLE_ADDR);
	assert_int_equal(a.exclude_kernel, 1);
	assert_int_equal(a.disabled, 1);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
		cmocka_unit_test(test_trees),
		cmocka_unit_test(test_missing_root),
		cmocka_unit_test(test_kernel_older_than_cpu),
		cmocka_unit_test(test_hybrid_cpu_mapping),
		cmocka_unit_test(test_ldlat_replaced),
		cmocka_unit_test(test_precise_probe),
		cmocka_unit_test(test_period_jitter),
		cmocka_unit_test(test_ibs_kernel_rule),
		cmocka_unit_test(test_source_decide),
		cmocka_unit_test(test_vm_error_text),
		cmocka_unit_test(test_page_fault_spec),
		cmocka_unit_test(test_cpu_clock_spec),
	};

	return cmocka_run_group_tests(tests, NULL, NULL);
}
