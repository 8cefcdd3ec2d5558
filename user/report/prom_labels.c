// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* The bounded labels of the Prometheus file (see prom_labels.h). */
#include <stdio.h>
#include <string.h>

#include "objects/object_stats.h"
#include "report/prom_labels.h"
#include "report/prom_writer.h"
#include "util/path.h"

/* Room for "function file.c:LINE" whole, before it is bounded. */
#define CP_PROM_TEXT_RAW (CP_LOC_FUNCTION_LEN + CP_LOC_FILE_LEN + 16)

void cp_prom_ident_make(struct cp_prom_ident *out, unsigned int pid, bool with_pid,
			const char *comm, const struct cp_cgroup_info *cg)
{
	memset(out, 0, sizeof(*out));
	if (with_pid)
		snprintf(out->pid, sizeof(out->pid), "%u", pid);
	/* a comm is at most 15 bytes: never cut, only made valid UTF-8 */
	cp_prom_label_bound(comm ? comm : "", out->comm, sizeof(out->comm) - 1);
	if (!cg)
		return;
	cp_prom_label_bound(cg->container_id, out->container, sizeof(out->container) - 1);
	cp_prom_label_bound(cg->path, out->cgroup, CP_PROM_CGROUP_MAX);
}

bool cp_prom_ident_equal(const struct cp_prom_ident *a, const struct cp_prom_ident *b)
{
	return !strcmp(a->pid, b->pid) && !strcmp(a->comm, b->comm) &&
	       !strcmp(a->container, b->container) && !strcmp(a->cgroup, b->cgroup);
}

/* "function file.c:12", "function", "file.c:12"; 1 when something was known. */
static int format_loc(const struct cp_src_loc *loc, char *buf, size_t sz)
{
	bool fl = loc->file[0] && loc->line;

	if (loc->function[0] && fl)
		snprintf(buf, sz, "%s %s:%u", loc->function, cp_base_name(loc->file), loc->line);
	else if (loc->function[0])
		snprintf(buf, sz, "%s", loc->function);
	else if (fl)
		snprintf(buf, sz, "%s:%u", cp_base_name(loc->file), loc->line);
	else
		return 0;
	return 1;
}

static void bound(const char *raw, char *buf, size_t sz)
{
	if (!sz)
		return;
	cp_prom_label_bound(raw, buf, sz - 1 < CP_PROM_TEXT_MAX ? sz - 1 : CP_PROM_TEXT_MAX);
}

void cp_prom_location(const struct cp_issue *is, char *buf, size_t sz)
{
	const struct cp_issue_insn *in = is->nr_insns ? &is->insns[0] : NULL;
	char raw[CP_PROM_TEXT_RAW] = "";

	if (in && (!in->have_loc || !format_loc(&in->loc, raw, sizeof(raw))))
		snprintf(raw, sizeof(raw), "0x%llx", (unsigned long long)in->ip);
	bound(raw, buf, sz);
}

void cp_prom_object(const struct cp_issue *is, char *buf, size_t sz)
{
	const struct cp_issue_object *o = is->nr_objects ? &is->objects[0] : NULL;
	char raw[CP_PROM_TEXT_RAW] = "";

	if (!o)
		goto out;
	switch (o->kind) {
	case CP_OBJ_GLOBAL:
	case CP_OBJ_TLS:
		snprintf(raw, sizeof(raw), "%s", o->name);
		goto out;
	case CP_OBJ_HEAP:
	case CP_OBJ_MAPPING:
		if (o->nr_frames && format_loc(&o->alloc_stack[0], raw, sizeof(raw)))
			goto out;
		break;
	default:
		break;
	}
	snprintf(raw, sizeof(raw), "%s", o->name[0] ? o->name : cp_object_kind_name(o->kind));
out:
	bound(raw, buf, sz);
}
