// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* Collapsed stacks (see folded.h). */
#include <ctype.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "export/folded.h"
#include "util/grow.h"
#include "util/path.h"
#include "util/printable.h"

#define CP_FOLDED_NAME_LEN 1024 /* bytes of one frame's name kept */

struct folded_line {
	char *stack;
	__u64 value;
};

struct cp_folded {
	struct folded_line *v;
	size_t nr, cap;
	char *buf; /* the stack being written */
	size_t len, buf_cap;
};

struct cp_folded *cp_folded__new(void)
{
	return calloc(1, sizeof(struct cp_folded));
}

void cp_folded__free(struct cp_folded *f)
{
	if (!f)
		return;
	for (size_t i = 0; i < f->nr; i++)
		free(f->v[i].stack);
	free(f->v);
	free(f->buf);
	free(f);
}

/*
 * A name ending in spaces and a number ("f 12345", "f 1.5") joined to it
 * by '_': at the end of a stack, readers take the last number after a
 * space as the count (speedscope), and the one before it as a second
 * count (flamegraph.pl's and inferno's differential mode), so a tenant
 * could set its own stack's weight.
 */
static void join_number(char *name, size_t n)
{
	size_t i = n, digits;

	while (i > 0 && (isdigit((unsigned char)name[i - 1]) || name[i - 1] == '.'))
		i--;
	digits = n - i;
	if (!digits || !isdigit((unsigned char)name[i]))
		return;
	while (i > 0 && name[i - 1] == ' ')
		name[--i] = '_';
}

/*
 * Appends @name, printable, ';' made ':' and a number at its end joined to
 * it, after a ';' unless it is the first.
 */
static int put_name(struct cp_folded *f, const char *name)
{
	char safe[CP_FOLDED_NAME_LEN];
	size_t n;

	cp_printable(name, safe, sizeof(safe));
	for (char *c = safe; *c; c++)
		if (*c == ';')
			*c = ':';
	n = strlen(safe);
	join_number(safe, n);
	while (f->len + n + 2 > f->buf_cap) {
		size_t cap = f->buf_cap ? 2 * f->buf_cap : 256;
		char *b = realloc(f->buf, cap);

		if (!b)
			return -ENOMEM;
		f->buf = b;
		f->buf_cap = cap;
	}
	if (f->len)
		f->buf[f->len++] = ';';
	memcpy(f->buf + f->len, safe, n + 1);
	f->len += n;
	return 0;
}

/* Frame @fr, its outermost inlining function first. */
static int put_frame(struct cp_folded *f, const struct cp_pprof_frame *fr)
{
	char name[CP_FOLDED_NAME_LEN];
	int ret = 0;

	if (!fr->nr_lines) {
		if (fr->mapping && fr->mapping->file)
			snprintf(name, sizeof(name), "0x%llx in %s",
				 (unsigned long long)fr->address, cp_base_name(fr->mapping->file));
		else
			snprintf(name, sizeof(name), "[unknown]");
		return put_name(f, name);
	}
	for (__u32 i = fr->nr_lines; i-- > 0 && !ret;)
		ret = put_name(f, fr->lines[i].function ?: "[unknown]");
	return ret;
}

int cp_folded__add(struct cp_folded *f, const struct cp_export_stack *s, __u64 value)
{
	char comm[32];
	int ret;

	if (!value)
		return 0;
	f->len = 0;
	if (s->comm && s->comm[0])
		ret = put_name(f, s->comm);
	else
		ret = put_name(f, (snprintf(comm, sizeof(comm), "pid-%u", s->tgid), comm));
	for (__u32 i = s->nr_frames; i-- > 0 && !ret;)
		ret = put_frame(f, &s->frames[i]);
	if (ret || cp_grow((void **)&f->v, &f->cap, f->nr, sizeof(*f->v), 64))
		return -ENOMEM;
	f->v[f->nr].stack = strdup(f->buf);
	if (!f->v[f->nr].stack)
		return -ENOMEM;
	f->v[f->nr++].value = value;
	return 0;
}

static int by_stack(const void *a, const void *b)
{
	return strcmp(((const struct folded_line *)a)->stack,
		      ((const struct folded_line *)b)->stack);
}

int cp_folded__write(struct cp_folded *f, FILE *out)
{
	qsort(f->v, f->nr, sizeof(*f->v), by_stack);
	for (size_t i = 0; i < f->nr;) {
		__u64 sum = 0;
		size_t j = i;

		for (; j < f->nr && !strcmp(f->v[j].stack, f->v[i].stack); j++)
			sum += f->v[j].value;
		fprintf(out, "%s %llu\n", f->v[i].stack, (unsigned long long)sum);
		i = j;
	}
	return ferror(out) ? -EIO : 0;
}
