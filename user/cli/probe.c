// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* --probe and the capability check before a session. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "cli/probe.h"

int cp_preflight(const struct cp_sysinfo *si, char *err, size_t err_sz)
{
	if (!si->priv_err && !si->priv.ok) {
		snprintf(err, err_sz,
			 "not enough privileges: missing %s; run as root or grant CAP_BPF and "
			 "CAP_PERFMON (CAP_SYS_ADMIN before Linux 5.8)",
			 si->priv.missing);
		return -EPERM;
	}
	if (si->btf_err) {
		snprintf(err, err_sz,
			 "the kernel has no BTF (/sys/kernel/btf/vmlinux: %s); cacheperf-bpf needs "
			 "a kernel built with CONFIG_DEBUG_INFO_BTF=y",
			 strerror(-si->btf_err));
		return -ENOENT;
	}
	if (si->bpf_load_err == -ENOSYS) {
		snprintf(err, err_sz, "this kernel has no bpf() system call (CONFIG_BPF_SYSCALL)");
		return -ENOSYS;
	}
	if (si->bpf_load_err == -EPERM) {
		snprintf(err, err_sz,
			 "the kernel refuses to load BPF programs (EPERM): check "
			 "kernel.unprivileged_bpf_disabled, lockdown and the capabilities CAP_BPF "
			 "and CAP_PERFMON");
		return -EPERM;
	}
	return 0;
}

static void print_pmu(const struct cp_pmus *pmus, const struct cp_pmu *p, FILE *f)
{
	if (p->kind == CP_PMU_IBS) {
		bool swfilt = cp_pmu_formats_find(&p->formats, "swfilt") != NULL;

		fprintf(f, "  ibs: %s PMU, type %u%s\n", p->name, p->type,
			p->zen4_ext ? ", Zen 4 extensions" : "");
		fprintf(f, "        kernel samples: %s\n",
			swfilt ? "excluded (swfilt)"
			       : "sampled too (no swfilt before Linux 6.14): dropped and counted");
		fprintf(f, "        HITM: %s\n",
			cp_ibs_has_hitm(&pmus->cpu)
				? "loads served modified by another core's cache"
				: "never on this CPU (Zen 3): sharing is judged from stores");
		fprintf(f, "        store levels: L1 or L2 hit; past L2 a miss of unknown level "
			   "(IBS has no data source for stores)\n");
		fprintf(f, "        read-modify-write ops: loads to the kernel, stores here "
			   "(IbsOpData3 in the raw record)\n");
		return;
	}
	fprintf(f, "  pebs: %s PMU (%s), type %u, max precise %d, precise_ip from %d\n", p->name,
		p->caps_name[0] ? p->caps_name : "unnamed", p->type, p->max_precise,
		cp_pmu_precise_first(p));
	if (p->has_cpus)
		fprintf(f, "        CPUs: %d of them\n", cp_cpuset_count(&p->cpus));
	fprintf(f, "        mem-loads %s\n", p->mem_loads);
	if (p->mem_stores[0])
		fprintf(f, "        mem-stores %s\n", p->mem_stores);
	if (p->mem_loads_aux[0])
		fprintf(f, "        mem-loads-aux %s (group leader)\n", p->mem_loads_aux);
	fprintf(f, "        HITM: loads (snoop bits)\n");
	if (!p->mem_stores[0])
		fprintf(f, "        stores: not sampled (no mem-stores event)\n");
	else if (cp_pmu_is_atom(p))
		fprintf(f, "        store levels: decoded with the load table by the kernel; the "
			   "event tells stores from loads (Linux 5.15+)\n");
	else if (cp_pmu_store_levels(p))
		fprintf(f, "        store levels: yes (store latency facility)\n");
	else
		fprintf(f, "        store levels: L1 hit or miss only\n");
}

void cp_pmus_print(const struct cp_pmus *pmus, FILE *f)
{
	static const char *const vendors[] = {"unknown", "Intel", "AMD", "other"};

	if (!pmus->cpu_err)
		fprintf(f, "CPU: %s family %u model 0x%x%s\n",
			vendors[pmus->cpu.vendor <= CP_VENDOR_OTHER ? pmus->cpu.vendor : 0],
			pmus->cpu.family, pmus->cpu.model,
			pmus->cpu.hypervisor ? " (virtual machine)" : "");
	fprintf(f, "sampling PMUs:\n");
	for (int i = 0; i < pmus->nr_core; i++)
		print_pmu(pmus, &pmus->core[i], f);
	if (!pmus->nr_core)
		fprintf(f, "  pebs: none: %s\n", pmus->pebs_why);
	if (pmus->has_ibs)
		print_pmu(pmus, &pmus->ibs, f);
	else
		fprintf(f, "  ibs: none: %s\n", pmus->ibs_why);
}

int cp_probe_print(const char *root, const char *cache_spec, FILE *f)
{
	struct cp_source_choice choice;
	struct cp_geometry geo;
	struct cp_sysinfo si;
	struct cp_pmus *pmus;
	char err[512];
	int ret;

	cp_sysinfo_collect(root, &si);
	cp_sysinfo_print(&si, f);

	pmus = cp_pmus__new(root);
	if (!pmus) {
		fprintf(f, "sampling PMUs: cannot read them: %s\n", strerror(errno));
	} else {
		cp_pmus_print(pmus, f);
		/* cpu-clock needs no PMU: the soft source runs where perf_event programs load */
		fprintf(f, "--source soft: %s\n",
			si.bpf_load_err ? "not available: BPF perf_event programs do not load"
					: "available (cpu-clock timer ticks: addresses and time, "
					  "no cache levels)");
		if (!cp_source_decide(CP_SOURCE_AUTO, pmus, &si.kernel, &choice))
			fprintf(f, "--source auto: %s\n", choice.reason);
		cp_pmus__free(pmus);
	}

	cp_geometry_read_sysfs(&geo, root);
	if (cache_spec && cp_geometry_apply_override(&geo, cache_spec, err, sizeof(err)))
		fprintf(f, "cache geometry: --cache: %s\n", err);
	fprintf(f, "cache geometry:\n");
	cp_geometry_print(&geo, f);

	ret = cp_preflight(&si, err, sizeof(err));
	fprintf(f, "verdict: %s\n", ret ? err : "ready to profile");
	return ret;
}
