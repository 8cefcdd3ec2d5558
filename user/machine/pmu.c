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

#define DEVICES_REL		"sys/bus/event_source/devices"
#define CPUINFO_HEAD_BYTES	16384	/* the first processor block fits many times */

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

/* --- the fallback table ------------------------------------------------- */

/*
 * Raw PEBS memory events by Intel family 6 model, for kernels that predate
 * the CPU and so export a "cpu" PMU without events/mem-loads. The strings
 * are the kernel's own (intel/core.c): mem_ld_hsw, mem_st_hsw, and for
 * Golden Cove servers mem_st_spr plus the mem_ld_aux group leader. Hybrid
 * parts are left out on purpose (see cp_pmus__new()).
 */
#define LD_HSW	"event=0xcd,umask=0x1,ldlat=3"
#define ST_HSW	"event=0xd0,umask=0x82"
#define ST_SPR	"event=0xcd,umask=0x2"
#define LD_AUX	"event=0x03,umask=0x82"

static const struct pebs_model {
	unsigned int model;
	const char *loads, *stores, *loads_aux;
} pebs_models[] = {
	{ 0x3c, LD_HSW, ST_HSW, NULL },	/* Haswell */
	{ 0x3f, LD_HSW, ST_HSW, NULL },	/* Haswell-X */
	{ 0x45, LD_HSW, ST_HSW, NULL },
	{ 0x46, LD_HSW, ST_HSW, NULL },
	{ 0x3d, LD_HSW, ST_HSW, NULL },	/* Broadwell */
	{ 0x47, LD_HSW, ST_HSW, NULL },
	{ 0x4f, LD_HSW, ST_HSW, NULL },	/* Broadwell-X */
	{ 0x56, LD_HSW, ST_HSW, NULL },
	{ 0x4e, LD_HSW, ST_HSW, NULL },	/* Skylake */
	{ 0x5e, LD_HSW, ST_HSW, NULL },
	{ 0x55, LD_HSW, ST_HSW, NULL },	/* Skylake-X, Cascade Lake, Cooper Lake */
	{ 0x8e, LD_HSW, ST_HSW, NULL },	/* Kaby/Coffee/Whiskey Lake */
	{ 0x9e, LD_HSW, ST_HSW, NULL },
	{ 0xa5, LD_HSW, ST_HSW, NULL },	/* Comet Lake */
	{ 0xa6, LD_HSW, ST_HSW, NULL },
	{ 0x66, LD_HSW, ST_HSW, NULL },	/* Cannon Lake */
	{ 0x7d, LD_HSW, ST_HSW, NULL },	/* Ice Lake */
	{ 0x7e, LD_HSW, ST_HSW, NULL },
	{ 0x6a, LD_HSW, ST_HSW, NULL },	/* Ice Lake-X */
	{ 0x6c, LD_HSW, ST_HSW, NULL },	/* Ice Lake-D */
	{ 0x8c, LD_HSW, ST_HSW, NULL },	/* Tiger Lake */
	{ 0x8d, LD_HSW, ST_HSW, NULL },
	{ 0xa7, LD_HSW, ST_HSW, NULL },	/* Rocket Lake */
	{ 0x8f, LD_HSW, ST_SPR, LD_AUX },	/* Sapphire Rapids */
	{ 0xcf, LD_HSW, ST_SPR, LD_AUX },	/* Emerald Rapids */
	{ 0xad, LD_HSW, ST_SPR, LD_AUX },	/* Granite Rapids */
	{ 0xae, LD_HSW, ST_SPR, LD_AUX },	/* Granite Rapids-D */
};

/* The architectural layout of IA32_PERFEVTSELx and MSR_PEBS_LD_LAT_THRESHOLD. */
static void add_default_intel_formats(struct cp_pmu_formats *fs)
{
	if (!cp_pmu_formats_find(fs, "event"))
		cp_pmu_formats_add(fs, "event", "config:0-7");
	if (!cp_pmu_formats_find(fs, "umask"))
		cp_pmu_formats_add(fs, "umask", "config:8-15");
	if (!cp_pmu_formats_find(fs, "ldlat"))
		cp_pmu_formats_add(fs, "ldlat", "config1:0-15");
}

static bool table_lookup(const struct cp_cpu_id *id, struct cp_pmu *pmu)
{
	if (id->vendor != CP_VENDOR_INTEL || id->family != 6)
		return false;
	for (size_t i = 0; i < sizeof(pebs_models) / sizeof(pebs_models[0]); i++) {
		const struct pebs_model *m = &pebs_models[i];

		if (m->model != id->model)
			continue;
		snprintf(pmu->mem_loads, sizeof(pmu->mem_loads), "%s", m->loads);
		snprintf(pmu->mem_stores, sizeof(pmu->mem_stores), "%s", m->stores);
		snprintf(pmu->mem_loads_aux, sizeof(pmu->mem_loads_aux), "%s",
			 m->loads_aux ? m->loads_aux : "");
		add_default_intel_formats(&pmu->formats);
		pmu->from_table = true;
		return true;
	}
	return false;
}

/* --- detection ---------------------------------------------------------- */

static void no_pmu_reasons(struct cp_pmus *p, bool have_core_dir)
{
	const char *why = p->cpu.hypervisor ?
		"so this looks like a VM without a virtual PMU" :
		"so the kernel exposes no hardware PMU (perf support for this CPU not built in?)";

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
			 "no IBS PMU: %s has no ibs_op directory (IBS is AMD-only, and VMs rarely pass it through)",
			 CP_PMU_DEVICES_DIR);
}

/* Reads core PMU @name; adds it to p->core when PEBS memory events work there. */
static void detect_core(const char *root, const char *name, bool hybrid, struct cp_pmus *p)
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

	if (!pmu->mem_loads[0] && (hybrid || !table_lookup(&p->cpu, pmu))) {
		if (p->cpu.vendor == CP_VENDOR_AMD)
			snprintf(p->pebs_why, sizeof(p->pebs_why),
				 "no PEBS-capable PMU: the %s PMU exports no mem-loads event (PEBS is Intel-only; AMD samples with IBS)",
				 name);
		else
			snprintf(p->pebs_why, sizeof(p->pebs_why),
				 "no PEBS-capable PMU: the %s PMU exports no mem-loads event and CPU family %u model 0x%x is not in the built-in table",
				 name, p->cpu.family, p->cpu.model);
		return;
	}
	/* KVM exports the model's event strings even when the guest has no PEBS */
	if (pmu->max_precise == 0) {
		snprintf(p->pebs_why, sizeof(p->pebs_why),
			 "no PEBS: the %s PMU reports caps/max_precise 0 (a virtual PMU without PEBS?)",
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
		detect_core(root, "cpu_core", true, p);
		if (cp_sysfs_dir_exists(root, DEVICES_REL "/cpu_atom"))
			detect_core(root, "cpu_atom", true, p);
	} else if (core_dir) {
		detect_core(root, "cpu", false, p);
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

	if (p->nr_core > 1)
		snprintf(buf, sz, "pebs: %s and %s PMUs (%s) export mem-loads and mem-stores",
			 c->name, p->core[1].name, c->caps_name[0] ? c->caps_name : "hybrid");
	else if (c->from_table)
		snprintf(buf, sz,
			 "pebs: the %s PMU exports no mem-loads event; using the built-in codes for family %u model 0x%x",
			 c->name, p->cpu.family, p->cpu.model);
	else
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
			 "faults: page-fault samples with their addresses (a pipeline check: no cache levels)");
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
				 "IBS needs kernel 6.1 or newer for data addresses and sources (this is %u.%u); use --source soft",
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
			 per_task ? "has per-thread IBS" :
				    "has no per-thread IBS (6.2): per-CPU events with a PID filter");
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

int cp_pmu_precise_first(const struct cp_pmu *pmu)
{
	if (pmu->kind == CP_PMU_IBS)
		return 0;
	if (pmu->max_precise < 0 || pmu->max_precise > 3)
		return 3;
	return pmu->max_precise;
}

int cp_pmu_precise_next(int tried, int err)
{
	if (err != -EOPNOTSUPP && err != -EINVAL)
		return -1;
	return tried > 1 ? tried - 1 : -1;
}
