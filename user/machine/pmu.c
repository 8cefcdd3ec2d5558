// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * PMU detection: what sysfs and /proc/cpuinfo say, then the pure choice of
 * a sampling source. Sysfs layout and strings: arch/x86/events/intel/core.c
 * (EVENT_ATTR_STR mem_ld_hsw, mem_st_hsw, mem_st_spr, mem_ld_aux,
 * EVENT_ATTR_STR_HYBRID mem_ld_adl...) and arch/x86/events/amd/ibs.c.
 */
#include <dirent.h>
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "util/parse.h"
#include "machine/pmu.h"
#include "util/sysfs.h"

#define DEVICES_REL	   "sys/bus/event_source/devices"
#define CPUINFO_HEAD_BYTES 16384 /* the first processor block fits many times */

/* --- /proc/cpuinfo ------------------------------------------------------ */

/* The value of a "key\t\t: value" line, or NULL when @line is another key. */
static const char *cpuinfo_value(const char *line, const char *key)
{
	size_t n = strlen(key);

	if (strncmp(line, key, n) || (line[n] != '\t' && line[n] != ' ' && line[n] != ':'))
		return NULL;
	line += n;
	while (*line == '\t' || *line == ' ')
		line++;
	if (*line != ':')
		return NULL;
	line++;
	while (*line == ' ')
		line++;
	return line;
}

static bool has_word(const char *list, const char *word)
{
	size_t n = strlen(word);

	for (const char *p = list; (p = strstr(p, word)); p += n) {
		if ((p == list || p[-1] == ' ') && (p[n] == ' ' || p[n] == '\0'))
			return true;
	}
	return false;
}

int cp_cpuinfo_parse(const char *text, struct cp_cpu_id *id)
{
	bool vendor = false, family = false, model = false;
	char line[4096];
	const char *p = text;

	memset(id, 0, sizeof(*id));
	if (!p)
		return -EINVAL;
	while (*p) {
		const char *nl = strchr(p, '\n'), *v;
		size_t len = nl ? (size_t)(nl - p) : strlen(p);
		__u64 num;

		/* a blank line ends the first processor block */
		if (len == 0)
			break;
		if (len >= sizeof(line))
			len = sizeof(line) - 1;
		memcpy(line, p, len);
		line[len] = '\0';
		p = nl ? nl + 1 : p + strlen(p);

		if ((v = cpuinfo_value(line, "vendor_id"))) {
			vendor = true;
			if (!strcmp(v, "GenuineIntel"))
				id->vendor = CP_VENDOR_INTEL;
			else if (!strcmp(v, "AuthenticAMD") || !strcmp(v, "HygonGenuine"))
				id->vendor = CP_VENDOR_AMD;
			else
				id->vendor = CP_VENDOR_OTHER;
		} else if ((v = cpuinfo_value(line, "cpu family"))) {
			family = !cp_parse_u64(v, 0, 0xffff, &num);
			id->family = (unsigned int)num;
		} else if ((v = cpuinfo_value(line, "model"))) {
			model = !cp_parse_u64(v, 0, 0xffff, &num);
			id->model = (unsigned int)num;
		} else if ((v = cpuinfo_value(line, "flags"))) {
			id->hypervisor = has_word(v, "hypervisor");
		}
	}
	return vendor && family && model ? 0 : -EINVAL;
}

/* --- sysfs reading ------------------------------------------------------ */

/* Every file in @root/@dir/format; a missing directory leaves @fs empty. */
static int read_formats(const char *root, const char *dir, struct cp_pmu_formats *fs)
{
	char rel[512], text[256];
	struct dirent *de;
	DIR *d;
	int err = 0;

	snprintf(rel, sizeof(rel), "%s/format", dir);
	d = cp_sysfs_opendir(root, rel);
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		if (de->d_name[0] == '.')
			continue;
		snprintf(rel, sizeof(rel), "%s/format/%s", dir, de->d_name);
		if (cp_sysfs_read_value(root, rel, text, sizeof(text)))
			continue;
		/* a format this parser does not know must not hide the others */
		if (cp_pmu_formats_add(fs, de->d_name, text) == -ENOSPC)
			err = -ENOSPC;
	}
	closedir(d);
	return err;
}

/* type, format/, caps/, cpus of PMU directory @name. 0 or -errno (no type). */
static int read_pmu_common(const char *root, const char *name, struct cp_pmu *pmu)
{
	char dir[128], rel[256], text[4096];
	__u64 v;
	int err;

	snprintf(dir, sizeof(dir), "%s/%s", DEVICES_REL, name);
	snprintf(pmu->name, sizeof(pmu->name), "%s", name);
	snprintf(rel, sizeof(rel), "%s/type", dir);
	err = cp_sysfs_read_value(root, rel, text, sizeof(text));
	if (err)
		return err;
	if (cp_parse_u64(text, 0, 0xffffffffu, &v))
		return -EINVAL;
	pmu->type = (__u32)v;
	read_formats(root, dir, &pmu->formats);

	pmu->max_precise = -1;
	snprintf(rel, sizeof(rel), "%s/caps/max_precise", dir);
	if (!cp_sysfs_read_value(root, rel, text, sizeof(text)) && !cp_parse_u64(text, 0, 3, &v))
		pmu->max_precise = (int)v;
	snprintf(rel, sizeof(rel), "%s/caps/pmu_name", dir);
	cp_sysfs_read_value(root, rel, pmu->caps_name, sizeof(pmu->caps_name));

	snprintf(rel, sizeof(rel), "%s/cpus", dir);
	if (!cp_sysfs_read_value(root, rel, text, sizeof(text)) &&
	    cp_cpuset_parse(text, &pmu->cpus) > 0)
		pmu->has_cpus = true;
	return 0;
}

/* --- detection ---------------------------------------------------------- */

static void no_pmu_reasons(struct cp_pmus *p, bool have_core_dir)
{
	const char *why = p->cpu.hypervisor ? "so this looks like a VM without a virtual PMU"
					    : "so the kernel exposes no hardware PMU (perf support "
					      "for this CPU not built in?)";

	if (!have_core_dir && !p->has_ibs)
		snprintf(p->pebs_why, sizeof(p->pebs_why),
			 "no PEBS-capable PMU: %s has no cpu or ibs_op directory, %s",
			 CP_PMU_DEVICES_DIR, why);
	else if (!have_core_dir)
		snprintf(p->pebs_why, sizeof(p->pebs_why),
			 "no PEBS-capable PMU: %s has no cpu directory", CP_PMU_DEVICES_DIR);
	if (p->has_ibs)
		return;
	if (!have_core_dir)
		snprintf(p->ibs_why, sizeof(p->ibs_why),
			 "no IBS PMU: %s has no ibs_op directory, %s", CP_PMU_DEVICES_DIR, why);
	else
		snprintf(p->ibs_why, sizeof(p->ibs_why),
			 "no IBS PMU: %s has no ibs_op directory (IBS is AMD-only, and VMs rarely "
			 "pass it through)",
			 CP_PMU_DEVICES_DIR);
}

/* Reads core PMU @name; adds it to p->core when PEBS memory events work there. */
static void detect_core(const char *root, const char *name, struct cp_pmus *p)
{
	struct cp_pmu *pmu = &p->core[p->nr_core];
	char rel[256];
	int err;

	memset(pmu, 0, sizeof(*pmu));
	pmu->kind = CP_PMU_PEBS;
	err = read_pmu_common(root, name, pmu);
	if (err) {
		snprintf(p->pebs_why, sizeof(p->pebs_why), "cannot read %s/%s/type: %s",
			 CP_PMU_DEVICES_DIR, name, strerror(-err));
		return;
	}
	snprintf(rel, sizeof(rel), "%s/%s/events/mem-loads", DEVICES_REL, name);
	cp_sysfs_read_value(root, rel, pmu->mem_loads, sizeof(pmu->mem_loads));
	snprintf(rel, sizeof(rel), "%s/%s/events/mem-stores", DEVICES_REL, name);
	cp_sysfs_read_value(root, rel, pmu->mem_stores, sizeof(pmu->mem_stores));
	snprintf(rel, sizeof(rel), "%s/%s/events/mem-loads-aux", DEVICES_REL, name);
	cp_sysfs_read_value(root, rel, pmu->mem_loads_aux, sizeof(pmu->mem_loads_aux));

	/*
	 * No mem-loads: an AMD core PMU, or a kernel older than the CPU. Such a
	 * kernel has no PEBS constraints or data-source table for the model
	 * (intel_pmu_init()'s switch falls to the default case), so raw event
	 * codes would sample with data_src NA: every sample dropped as not a
	 * memory access, a silent empty profile. Refused instead.
	 */
	if (!pmu->mem_loads[0]) {
		if (p->cpu.vendor == CP_VENDOR_AMD)
			snprintf(p->pebs_why, sizeof(p->pebs_why),
				 "no PEBS-capable PMU: the %s PMU exports no mem-loads event (PEBS "
				 "is Intel-only; AMD samples with IBS)",
				 name);
		else
			snprintf(p->pebs_why, sizeof(p->pebs_why),
				 "no PEBS-capable PMU: the %s PMU exports no mem-loads event: this "
				 "kernel does not know CPU family %u model 0x%x, so it has no PEBS "
				 "data-source decoding for it (a newer kernel would)",
				 name, p->cpu.family, p->cpu.model);
		return;
	}
	/* KVM exports the model's event strings even when the guest has no PEBS */
	if (pmu->max_precise == 0) {
		snprintf(p->pebs_why, sizeof(p->pebs_why),
			 "no PEBS: the %s PMU reports caps/max_precise 0 (a virtual PMU without "
			 "PEBS?)",
			 name);
		return;
	}
	p->nr_core++;
}

static void detect_ibs(const char *root, struct cp_pmus *p)
{
	char rel[256], text[16];

	memset(&p->ibs, 0, sizeof(p->ibs));
	p->ibs.kind = CP_PMU_IBS;
	if (!cp_sysfs_dir_exists(root, DEVICES_REL "/ibs_op"))
		return;
	if (read_pmu_common(root, "ibs_op", &p->ibs)) {
		snprintf(p->ibs_why, sizeof(p->ibs_why), "no IBS PMU: cannot read %s/ibs_op/type",
			 CP_PMU_DEVICES_DIR);
		return;
	}
	/* IBS takes no precise modifier: not a caps file of ibs_op */
	p->ibs.max_precise = -1;
	snprintf(rel, sizeof(rel), "%s/ibs_op/caps/zen4_ibs_extensions", DEVICES_REL);
	p->ibs.zen4_ext = !cp_sysfs_read_value(root, rel, text, sizeof(text)) && !strcmp(text, "1");
	p->has_ibs = true;
}

struct cp_pmus *cp_pmus__new(const char *root)
{
	struct cp_pmus *p = calloc(1, sizeof(*p));
	bool hybrid, core_dir;
	char *text;
	int n;

	if (!p)
		return NULL;
	text = malloc(CPUINFO_HEAD_BYTES);
	if (!text) {
		free(p);
		errno = ENOMEM;
		return NULL;
	}
	n = cp_sysfs_read_head(root, "proc/cpuinfo", text, CPUINFO_HEAD_BYTES);
	p->cpu_err = n < 0 ? n : cp_cpuinfo_parse(text, &p->cpu);
	free(text);

	detect_ibs(root, p);
	hybrid = cp_sysfs_dir_exists(root, DEVICES_REL "/cpu_core");
	core_dir = hybrid || cp_sysfs_dir_exists(root, DEVICES_REL "/cpu");
	if (hybrid) {
		/*
		 * intel_hybrid_pmu_type_map (arch/x86/events/intel/core.c): P-cores
		 * cpu_core, E-cores cpu_atom, and on Arrow Lake-H the low-power
		 * E-cores of the SoC tile cpu_lowpower. Each PMU counts only on its
		 * own CPUs: one left out leaves the threads there unsampled.
		 */
		static const char *const hybrid_pmus[] = {"cpu_core", "cpu_atom", "cpu_lowpower"};

		for (size_t i = 0; i < sizeof(hybrid_pmus) / sizeof(hybrid_pmus[0]); i++) {
			char rel[128];

			snprintf(rel, sizeof(rel), "%s/%s", DEVICES_REL, hybrid_pmus[i]);
			if (cp_sysfs_dir_exists(root, rel) && p->nr_core < CP_PMU_MAX_CORE)
				detect_core(root, hybrid_pmus[i], p);
		}
	} else if (core_dir) {
		detect_core(root, "cpu", p);
	}
	no_pmu_reasons(p, core_dir);
	if (p->nr_core > 0)
		p->pebs_why[0] = '\0';
	return p;
}

void cp_pmus__free(struct cp_pmus *pmus)
{
	free(pmus);
}

int cp_pmus_core_for_cpu(const struct cp_pmus *pmus, int cpu)
{
	for (int i = 0; i < pmus->nr_core; i++) {
		if (!pmus->core[i].has_cpus || cp_cpuset_has(&pmus->core[i].cpus, cpu))
			return i;
	}
	return -ENODEV;
}

/* --- decisions ---------------------------------------------------------- */

int cp_ibs_kernel_check(const struct cp_kernel_version *kv, bool *per_task)
{
	/* 6.1: perf_ibs_parse_ld_st_data() fills data_src, addr, weight */
	if (cp_kernel_version_cmp(kv, 6, 1, 0) < 0) {
		*per_task = false;
		return -EOPNOTSUPP;
	}
	/* 6.2: the context rework gave ibs_op a task context (perf_hw_context) */
	*per_task = cp_kernel_version_cmp(kv, 6, 2, 0) >= 0;
	return 0;
}

static void describe_pebs(const struct cp_pmus *p, char *buf, size_t sz)
{
	const struct cp_pmu *c = &p->core[0];
	char names[CP_PMU_MAX_CORE * (CP_PMU_NAME_LEN + 5)] = "";
	size_t len = 0;

	if (p->nr_core > 1) {
		/* "cpu_core and cpu_atom", "cpu_core, cpu_atom and cpu_lowpower" */
		for (int i = 0; i < p->nr_core; i++)
			len += snprintf(names + len, sizeof(names) - len, "%s%s",
					!i		      ? ""
					: i == p->nr_core - 1 ? " and "
							      : ", ",
					p->core[i].name);
		snprintf(buf, sz, "pebs: %s PMUs (%s) export mem-loads and mem-stores", names,
			 c->caps_name[0] ? c->caps_name : "hybrid");
	} else
		snprintf(buf, sz, "pebs: the %s PMU (%s) exports mem-loads and mem-stores", c->name,
			 c->caps_name[0] ? c->caps_name : "unnamed");
}

int cp_source_decide(enum cp_source_kind want, const struct cp_pmus *pmus,
		     const struct cp_kernel_version *kv, struct cp_source_choice *out)
{
	bool ibs_ok = false, per_task = false;
	int ibs_err = -ENODEV;

	memset(out, 0, sizeof(*out));
	if (pmus->has_ibs) {
		ibs_err = cp_ibs_kernel_check(kv, &per_task);
		ibs_ok = !ibs_err;
	}

	switch (want) {
	case CP_SOURCE_FAULTS:
		out->kind = CP_SOURCE_FAULTS;
		out->per_task = true;
		snprintf(out->reason, sizeof(out->reason),
			 "faults: page-fault samples with their addresses (a pipeline check: no "
			 "cache levels)");
		return 0;
	case CP_SOURCE_SOFT:
		out->kind = CP_SOURCE_SOFT;
		out->per_task = true;
		snprintf(out->reason, sizeof(out->reason), "soft: requested with --source soft");
		return 0;
	case CP_SOURCE_PEBS:
		if (!pmus->nr_core) {
			snprintf(out->reason, sizeof(out->reason), "%s; use --source soft",
				 pmus->pebs_why);
			return -ENODEV;
		}
		break;
	case CP_SOURCE_IBS:
		if (!pmus->has_ibs) {
			snprintf(out->reason, sizeof(out->reason), "%s; use --source soft",
				 pmus->ibs_why);
			return -ENODEV;
		}
		if (!ibs_ok) {
			snprintf(out->reason, sizeof(out->reason),
				 "IBS needs kernel 6.1 or newer for data addresses and sources "
				 "(this is %u.%u); use --source soft",
				 kv->major, kv->minor);
			return ibs_err;
		}
		break;
	case CP_SOURCE_AUTO:
	default:
		break;
	}

	if (want != CP_SOURCE_IBS && pmus->nr_core) {
		out->kind = CP_SOURCE_PEBS;
		out->per_task = true;
		describe_pebs(pmus, out->reason, sizeof(out->reason));
		return 0;
	}
	if (ibs_ok) {
		out->kind = CP_SOURCE_IBS;
		out->per_task = per_task;
		snprintf(out->reason, sizeof(out->reason),
			 "ibs: the ibs_op PMU (type %u) samples every op; kernel %u.%u %s",
			 pmus->ibs.type, kv->major, kv->minor,
			 per_task
				 ? "has per-thread IBS"
				 : "has no per-thread IBS (6.2): per-CPU events with a PID filter");
		return 0;
	}
	out->kind = CP_SOURCE_SOFT;
	out->per_task = true;
	if (pmus->has_ibs)
		snprintf(out->reason, sizeof(out->reason),
			 "soft: %s, and IBS needs kernel 6.1 for data addresses (this is %u.%u)",
			 pmus->pebs_why, kv->major, kv->minor);
	else
		snprintf(out->reason, sizeof(out->reason), "soft: %s", pmus->pebs_why);
	return 0;
}

bool cp_ibs_has_hitm(const struct cp_cpu_id *cpu)
{
	return !(cpu->family == 0x19 &&
		 (cpu->model <= 0x0f || (cpu->model >= 0x20 && cpu->model <= 0x5f)));
}

bool cp_pmu_store_levels(const struct cp_pmu *pmu)
{
	return pmu->kind == CP_PMU_PEBS && !cp_pmu_is_atom(pmu) &&
	       strstr(pmu->mem_stores, "event=0xcd") != NULL;
}

bool cp_pmu_is_atom(const struct cp_pmu *pmu)
{
	return pmu->kind == CP_PMU_PEBS &&
	       (!strcmp(pmu->name, "cpu_atom") || !strcmp(pmu->name, "cpu_lowpower"));
}

int cp_pmu_precise_first(const struct cp_pmu *pmu)
{
	int max = cp_pmu_is_atom(pmu) ? 2 : 3;

	if (pmu->kind == CP_PMU_IBS)
		return 0;
	if (pmu->max_precise < 0 || pmu->max_precise > max)
		return max;
	return pmu->max_precise;
}

int cp_pmu_precise_next(int tried, int err)
{
	if (err != -EOPNOTSUPP && err != -EINVAL)
		return -1;
	return tried > 1 ? tried - 1 : -1;
}
