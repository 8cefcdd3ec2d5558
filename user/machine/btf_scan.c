// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/* One walk over raw BTF for a named type (see btf_scan.h). */
#include <errno.h>
#include <stdbool.h>
#include <string.h>
#include <linux/btf.h>

#include "machine/btf_scan.h"

/* The bytes that follow a type's struct btf_type, by kind; -1: a kind not known here. */
static long type_extra(__u32 kind, __u32 vlen)
{
	switch (kind) {
	case BTF_KIND_PTR:
	case BTF_KIND_FWD:
	case BTF_KIND_TYPEDEF:
	case BTF_KIND_VOLATILE:
	case BTF_KIND_CONST:
	case BTF_KIND_RESTRICT:
	case BTF_KIND_FUNC:
	case BTF_KIND_FLOAT:
	case BTF_KIND_TYPE_TAG:
		return 0;
	case BTF_KIND_INT:
	case BTF_KIND_VAR:
	case BTF_KIND_DECL_TAG:
		return 4;
	case BTF_KIND_ARRAY:
		return (long)sizeof(struct btf_array);
	case BTF_KIND_STRUCT:
	case BTF_KIND_UNION:
		return (long)vlen * (long)sizeof(struct btf_member);
	case BTF_KIND_ENUM:
		return (long)vlen * (long)sizeof(struct btf_enum);
	case BTF_KIND_FUNC_PROTO:
		return (long)vlen * (long)sizeof(struct btf_param);
	case BTF_KIND_DATASEC:
		return (long)vlen * (long)sizeof(struct btf_var_secinfo);
	case BTF_KIND_ENUM64:
		return (long)vlen * (long)sizeof(struct btf_enum64);
	}
	return -1;
}

/* The string section, for names. */
struct strs {
	const char *base;
	__u32 len;
};

/* Whether the string at @off is @name; false for an offset out of the section. */
static bool name_is(const struct strs *s, __u32 off, const char *name)
{
	size_t n = strlen(name);

	return off < s->len && s->len - off > n && !memcmp(s->base + off, name, n + 1);
}

/* Whether one of the @vlen enumerators at @e is @name. */
static bool has_enumerator(const struct strs *s, const struct btf_enum *e, __u32 vlen,
			   const char *name)
{
	for (__u32 i = 0; i < vlen; i++)
		if (name_is(s, e[i].name_off, name))
			return true;
	return false;
}

int cp_btf_scan_has(const void *data, size_t size, __u32 kind, const char *name,
		    const char *enumerator)
{
	const struct btf_header *h = data;
	const unsigned char *types;
	struct strs s;
	size_t off = 0;

	if (size < sizeof(*h) || h->magic != BTF_MAGIC || h->hdr_len < sizeof(*h) ||
	    h->hdr_len > size || h->hdr_len % 4 ||
	    (__u64)h->type_off + h->type_len > size - h->hdr_len ||
	    (__u64)h->str_off + h->str_len > size - h->hdr_len || h->type_off % 4)
		return -EINVAL;
	types = (const unsigned char *)data + h->hdr_len + h->type_off;
	s = (struct strs){(const char *)data + h->hdr_len + h->str_off, h->str_len};
	while (off < h->type_len) {
		const struct btf_type *t = (const void *)(types + off);
		__u32 k, vlen;
		long extra;

		if (h->type_len - off < sizeof(*t))
			return -EINVAL;
		k = BTF_INFO_KIND(t->info);
		vlen = BTF_INFO_VLEN(t->info);
		extra = type_extra(k, vlen);
		if (extra < 0 || (size_t)extra > h->type_len - off - sizeof(*t))
			return -EINVAL;
		if (k == kind && name_is(&s, t->name_off, name) &&
		    (!enumerator || (k == BTF_KIND_ENUM &&
				     has_enumerator(&s, (const void *)(t + 1), vlen, enumerator))))
			return 1;
		off += sizeof(*t) + (size_t)extra;
	}
	return 0;
}
