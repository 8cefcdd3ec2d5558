// SPDX-License-Identifier: (LGPL-2.1 OR BSD-2-Clause)
/*
 * One address of one module, described from its ELF symbols and DWARF.
 *
 * Names come from DWARF where it exists because only DWARF knows inlining:
 * the ELF symbol holding an inlined helper's code is the function it was
 * inlined into. Under the DW_TAG_subprogram holding the address, each
 * DW_TAG_inlined_subroutine holding it is one level of inlining, and its
 * DW_AT_call_file/DW_AT_call_line say where in the scope around it the call
 * was.
 *
 * Per module (in its Dwfl userdata slot) two lazily built indexes keep a
 * lookup at a binary search plus a walk down one function's DIEs: the
 * function symbols by address, and per compile unit its subprograms by
 * address range. Without them libdw walks a whole symbol table
 * (dwfl_module_addrinfo) and a whole CU's DIEs (dwarf_getscopes) per lookup:
 * ~57 µs per uncached lookup in libc with debug info, measured here.
 */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <elfutils/libdw.h>
#include <dwarf.h>
#include <gelf.h>

#include "machine/target_file.h"
#include "symbols/sym_dwarf.h"

/* DW_AT_name, following DW_AT_abstract_origin/specification: inlined and
 * out-of-line instances of inline functions carry their name only there. */
static const char *die_name(Dwarf_Die *die)
{
	Dwarf_Attribute attr;

	return dwarf_formstring(dwarf_attr_integrate(die, DW_AT_name, &attr));
}

static __u32 die_udata(Dwarf_Die *die, unsigned int name)
{
	Dwarf_Attribute attr;
	Dwarf_Word v;

	if (dwarf_formudata(dwarf_attr(die, name, &attr), &v) || v > UINT32_MAX)
		return 0;
	return (__u32)v;
}

/* Where @inl (an inlined subroutine) was called from. */
static void call_site(Dwarf_Die *inl, struct cp_inline_caller *c)
{
	Dwarf_Attribute attr;
	Dwarf_Word idx;
	Dwarf_Files *files;
	Dwarf_Die cu;
	size_t nr;

	c->line = die_udata(inl, DW_AT_call_line);
	c->column = die_udata(inl, DW_AT_call_column);
	c->file = NULL;
	/* the file index is into the line table of the unit holding @inl (with
	 * dwz that need not be the CU the address led us to) */
	if (dwarf_formudata(dwarf_attr(inl, DW_AT_call_file, &attr), &idx) ||
	    !dwarf_diecu(inl, &cu, NULL, NULL) || dwarf_getsrcfiles(&cu, &files, &nr) || idx >= nr)
		return;
	c->file = dwarf_filesrc(files, idx, NULL, NULL);
}

/* A function symbol of a module's symbol table. */
struct func_sym {
	__u64 addr;	    /* Dwfl address (load bias applied) */
	__u64 size;	    /* 0: hand-written assembly, or unknown */
	const char *name;   /* in libdw's copy of the string table */
	unsigned char bind; /* STB_* */
};

/*
 * A module's function symbols sorted by address. Besides speed, it answers
 * what dwfl_module_addrinfo() does not: the closest symbol below an address
 * no symbol covers (a static function in a stripped file), and the sized
 * function rather than a sizeless global label inside it, which addrinfo
 * sometimes prefers.
 */
struct func_index {
	size_t nr;
	struct func_sym syms[];
};

/* One address range of a subprogram (a function split hot/cold has two). */
struct func_range {
	Dwarf_Addr lo;
	Dwarf_Addr hi; /* one past the end */
	Dwarf_Die die;
};

struct cu_funcs {
	Dwarf_Off cu_off;
	size_t nr;
	struct func_range *ranges; /* sorted by lo */
	bool cut;		   /* past CP_MAX_FUNC_RANGES or CP_MAX_CU_RANGES */
};

struct mod_cache {
	struct func_index *syms; /* NULL until built */
	bool syms_failed;	 /* out of memory: use the slow paths */
	struct cu_funcs *cus;	 /* sorted by cu_off */
	size_t nr_cus;
	size_t cap_cus;
	bool deep_said;		       /* DWARF nested beyond our caps: counted */
	bool remote;		       /* cp_sym_set_remote() */
	struct cp_copy_key remote_key; /* ... the content judged */
};

static struct mod_cache *mod_cache(Dwfl_Module *mod)
{
	void **userdata;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	if (!*userdata)
		*userdata = calloc(1, sizeof(struct mod_cache));
	return *userdata;
}

static int underscores(const char *name)
{
	int n = 0;

	while (name[n] == '_')
		n++;
	return n;
}

/*
 * By address; at one address the preferred name first: sized, global over
 * weak over local, fewest leading underscores (glibc's public "kill" over
 * its "__kill" and "__GI___kill" aliases), then by name so the choice never
 * depends on symbol table order.
 */
static int cmp_func(const void *a, const void *b)
{
	const struct func_sym *x = a, *y = b;

	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (!x->size != !y->size)
		return x->size ? -1 : 1;
	if (x->bind != y->bind)
		return x->bind == STB_GLOBAL   ? -1
		       : y->bind == STB_GLOBAL ? 1
		       : x->bind == STB_WEAK   ? -1
					       : 1;
	if (underscores(x->name) != underscores(y->name))
		return underscores(x->name) - underscores(y->name);
	return strcmp(x->name, y->name);
}

static struct func_index *module_index(Dwfl_Module *mod, struct mod_cache *mc)
{
	struct func_index *idx;
	int n;

	if (!mc || mc->syms || mc->syms_failed)
		return mc ? mc->syms : NULL;
	n = dwfl_module_getsymtab(mod);
	idx = malloc(sizeof(*idx) + (size_t)(n > 0 ? n : 0) * sizeof(idx->syms[0]));
	if (!idx) {
		mc->syms_failed = true;
		return NULL;
	}
	idx->nr = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		const char *name = dwfl_module_getsym_info(mod, i, &sym, &addr, NULL, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);

		/* not STT_NOTYPE: asm labels and linker markers (_end, __bss_start) */
		if (!name || !*name || sym.st_shndx == SHN_UNDEF ||
		    (type != STT_FUNC && type != STT_GNU_IFUNC))
			continue;
		idx->syms[idx->nr++] = (struct func_sym){
			.addr = addr,
			.size = sym.st_size,
			.name = name,
			.bind = GELF_ST_BIND(sym.st_info),
		};
	}
	qsort(idx->syms, idx->nr, sizeof(idx->syms[0]), cmp_func);
	mc->syms = idx;
	return idx;
}

/*
 * In @idx: the innermost sized function holding @ip (@cover), and the
 * closest function starting at or below @ip (@below); NULL when none.
 */
static void index_lookup(const struct func_index *idx, __u64 ip, const struct func_sym **cover,
			 const struct func_sym **below)
{
	size_t lo = 0, hi = idx->nr;

	*cover = *below = NULL;
	while (lo < hi) { /* lo: the first symbol above ip */
		size_t mid = lo + (hi - lo) / 2;

		if (idx->syms[mid].addr <= ip)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* walking down: the last one seen at an address is the preferred one;
	 * nested functions are rare, so a few steps find the cover if any */
	for (size_t j = lo, steps = 0; j-- > 0 && steps < 64; steps++) {
		const struct func_sym *f = &idx->syms[j];

		if (!*below || f->addr == (*below)->addr)
			*below = f;
		if (*cover && f->addr < (*cover)->addr)
			break;
		if (f->size && ip - f->addr < f->size)
			*cover = f;
	}
}

/*
 * The function symbol naming @ip in @idx: the innermost sized one holding
 * it, else a sizeless one right below (hand-written assembly); NULL when
 * none. @below: the closest function at or below @ip.
 */
static const struct func_sym *index_name(const struct func_index *idx, __u64 ip,
					 const struct func_sym **below)
{
	const struct func_sym *cover;

	index_lookup(idx, ip, &cover, below);
	if (!cover && *below && !(*below)->size)
		cover = *below;
	return cover;
}

const char *cp_sym_function(Dwfl_Module *mod, __u64 ip)
{
	const struct func_index *idx = module_index(mod, mod_cache(mod));
	const struct func_sym *f, *below;

	if (!idx)
		return dwfl_module_addrname(mod, ip);
	f = index_name(idx, ip, &below);
	return f ? f->name : NULL;
}

/* The ELF symbol part of @out; returns the name of the symbol holding @ip. */
static const char *describe_symbol(Dwfl_Module *mod, struct mod_cache *mc, __u64 ip,
				   struct cp_symbol_info *out, __u64 *offset)
{
	const struct func_index *idx = module_index(mod, mc);
	const struct func_sym *cover, *below;
	GElf_Off off;
	GElf_Sym sym;
	const char *name;

	if (!idx) {
		/* out of memory for the index: the slow way, nothing nearest */
		name = dwfl_module_addrinfo(mod, ip, &off, &sym, NULL, NULL, NULL);
		*offset = off;
		if (name && sym.st_size && off < sym.st_size) {
			out->sym_start = ip - off;
			out->sym_size = sym.st_size;
		}
		return name;
	}
	cover = index_name(idx, ip, &below);
	if (cover) {
		*offset = ip - cover->addr;
		if (cover->size) {
			out->sym_start = cover->addr;
			out->sym_size = cover->size;
		}
		return cover->name;
	}
	if (below) {
		out->nearest = below->name;
		out->nearest_offset = ip - below->addr;
	}
	return NULL;
}

bool cp_sym_set_remote(Dwfl_Module *mod, const struct cp_copy_key *key)
{
	struct mod_cache *mc = mod_cache(mod);

	if (mc) {
		mc->remote = true;
		mc->remote_key = *key;
	}
	return mc != NULL;
}

/* @mod's mark, NULL when it has none. */
static const struct mod_cache *remote_mark(Dwfl_Module *mod)
{
	void **userdata = NULL;
	const struct mod_cache *mc;

	dwfl_module_info(mod, &userdata, NULL, NULL, NULL, NULL, NULL, NULL);
	mc = userdata ? *userdata : NULL;
	return mc && mc->remote ? mc : NULL;
}

bool cp_sym_remote(Dwfl_Module *mod)
{
	return remote_mark(mod) != NULL;
}

bool cp_sym_remote_key(Dwfl_Module *mod, struct cp_copy_key *key)
{
	const struct mod_cache *mc = remote_mark(mod);

	if (mc)
		*key = mc->remote_key;
	return mc && mc->remote_key.ino;
}

static int release_module(Dwfl_Module *mod, void **userdata, const char *name, Dwarf_Addr start,
			  void *arg)
{
	struct mod_cache *mc = *userdata;

	(void)mod;
	(void)name;
	(void)start;
	(void)arg;
	if (!mc)
		return DWARF_CB_OK;
	for (size_t i = 0; i < mc->nr_cus; i++)
		free(mc->cus[i].ranges);
	free(mc->cus);
	free(mc->syms);
	free(mc);
	*userdata = NULL;
	return DWARF_CB_OK;
}

void cp_sym_release(Dwfl *dwfl)
{
	dwfl_getmodules(dwfl, release_module, NULL, 0);
}

/* ---- DWARF: subprograms by address, then down through inlined code ---- */

/* By start, then in DWARF order: gas describes each alias of an assembly
 * function as a subprogram of its own, all with one range, and the first
 * is what dwarf_getscopes() would have found. */
static int cmp_range(const void *a, const void *b)
{
	const struct func_range *x = a, *y = b;
	Dwarf_Off xo, yo;

	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	xo = dwarf_dieoffset((Dwarf_Die *)&x->die);
	yo = dwarf_dieoffset((Dwarf_Die *)&y->die);
	return xo < yo ? -1 : xo > yo;
}

/*
 * @die's ranges into @cf, at most CP_MAX_FUNC_RANGES of them and
 * CP_MAX_CU_RANGES in the unit (a tenant's subprograms may all name one
 * list of millions): past either, the rest is not read and @cf->cut set.
 */
static int add_ranges(struct cu_funcs *cf, size_t *cap, Dwarf_Die *die)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	unsigned int n = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (n++ == CP_MAX_FUNC_RANGES || cf->nr == CP_MAX_CU_RANGES) {
			cf->cut = true;
			break;
		}
		if (cf->nr == *cap) {
			size_t n = *cap ? *cap * 2 : 64;
			struct func_range *r = realloc(cf->ranges, n * sizeof(*r));

			if (!r)
				return -1;
			cf->ranges = r;
			*cap = n;
		}
		cf->ranges[cf->nr++] = (struct func_range){.lo = lo, .hi = hi, .die = *die};
	}
	return 0;
}

/* Subprograms with code among @parent's children, into namespaces and classes (C++). */
static int collect_funcs(struct cu_funcs *cf, size_t *cap, Dwarf_Die *parent, int depth)
{
	Dwarf_Die die;

	if (depth > 8 || dwarf_child(parent, &die))
		return 0;
	do {
		switch (dwarf_tag(&die)) {
		case DW_TAG_subprogram:
			if (add_ranges(cf, cap, &die))
				return -1;
			break;
		case DW_TAG_namespace:
		case DW_TAG_class_type:
		case DW_TAG_structure_type:
		case DW_TAG_union_type:
			if (collect_funcs(cf, cap, &die, depth + 1))
				return -1;
			break;
		}
	} while (cf->nr < CP_MAX_CU_RANGES && dwarf_siblingof(&die, &die) == 0);
	return 0;
}

/* The subprograms of @cu, indexed at the first lookup in it; NULL on OOM. */
static const struct cu_funcs *cu_funcs(struct mod_cache *mc, Dwarf_Die *cu)
{
	Dwarf_Off off = dwarf_dieoffset(cu);
	size_t lo = 0, hi = mc->nr_cus, cap = 0;
	struct cu_funcs cf = {.cu_off = off};

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (mc->cus[mid].cu_off == off)
			return &mc->cus[mid];
		if (mc->cus[mid].cu_off < off)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (mc->nr_cus == mc->cap_cus) {
		size_t n = mc->cap_cus ? mc->cap_cus * 2 : 16;
		struct cu_funcs *c = realloc(mc->cus, n * sizeof(*c));

		if (!c)
			return NULL;
		mc->cus = c;
		mc->cap_cus = n;
	}
	if (collect_funcs(&cf, &cap, cu, 0)) {
		free(cf.ranges);
		return NULL;
	}
	qsort(cf.ranges, cf.nr, sizeof(cf.ranges[0]), cmp_range);
	memmove(&mc->cus[lo + 1], &mc->cus[lo], (mc->nr_cus - lo) * sizeof(mc->cus[0]));
	mc->cus[lo] = cf;
	mc->nr_cus++;
	return &mc->cus[lo];
}

/* The innermost subprogram whose range holds @pc (nested functions are rare). */
static bool find_subprogram(const struct cu_funcs *cf, Dwarf_Addr pc, Dwarf_Die *out)
{
	size_t lo = 0, hi = cf->nr;

	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;

		if (cf->ranges[mid].lo <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	for (size_t j = lo, steps = 0; j-- > 0 && steps < 16; steps++) {
		if (pc >= cf->ranges[j].hi)
			continue;
		/* the first of those starting at the same address */
		while (j > 0 && cf->ranges[j - 1].lo == cf->ranges[j].lo &&
		       pc < cf->ranges[j - 1].hi)
			j--;
		*out = cf->ranges[j].die;
		return true;
	}
	return false;
}

/*
 * dwarf_haspc() that reads at most @budget range entries of this lookup
 * (a tenant's DIEs may each name a list of millions): 1 when @die holds
 * @pc, 0 when not, -1 on an error or once the budget is spent (@cut set).
 */
static int haspc(Dwarf_Die *die, Dwarf_Addr pc, unsigned int *budget, bool *cut)
{
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;

	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!*budget) {
			*cut = true;
			return -1;
		}
		--*budget;
		if (pc >= lo && pc < hi)
			return 1;
	}
	return off < 0 ? -1 : 0;
}

/*
 * @path[0] = @sub, then the inlined subroutines holding @pc, outermost
 * first; lexical blocks are gone through, not kept. Returns the length;
 * sets @cut when the DIEs went on deeper than CP_MAX_DIE_DEPTH.
 */
static int inline_path(Dwarf_Die *sub, Dwarf_Addr pc, Dwarf_Die *path, bool *cut)
{
	unsigned int budget = CP_MAX_LOOKUP_RANGES;
	Dwarf_Die cur = *sub, child;
	int n = 1;

	path[0] = *sub;
	for (int depth = 0;; depth++) {
		bool down = false;

		if (dwarf_child(&cur, &child))
			break;
		if (depth == CP_MAX_DIE_DEPTH || n == CP_MAX_DIE_DEPTH) {
			*cut = true;
			break;
		}
		do {
			int tag = dwarf_tag(&child);

			if ((tag == DW_TAG_inlined_subroutine || tag == DW_TAG_lexical_block) &&
			    haspc(&child, pc, &budget, cut) == 1) {
				if (tag == DW_TAG_inlined_subroutine)
					path[n++] = child;
				cur = child;
				down = true;
				break;
			}
		} while (budget && dwarf_siblingof(&child, &child) == 0);
		*cut |= !budget;
		if (!down)
			break;
	}
	return n;
}

/* How dwarf_getscopes() treats a DIE (libdw_visit_scopes.c, classify_die()). */
enum scope_kind { SCOPE_IGNORE, SCOPE_MATCH, SCOPE_WALK };

static enum scope_kind scope_kind(Dwarf_Die *die)
{
	switch (dwarf_tag(die)) {
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
		return SCOPE_MATCH;
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return SCOPE_WALK;
	default: /* DW_TAG_imported_unit too: a partial unit may import itself */
		return SCOPE_IGNORE;
	}
}

/*
 * The physical nesting at @pc, for a CU our index cannot serve (code in no
 * subprogram it knows): what dwarf_getscopes() and dwarf_getscopes_die()
 * find, but iterative, over an explicit stack of CP_MAX_SCOPE_DEPTH DIEs
 * (libdw recurses once per level: a tenant's 300,000 nested lexical blocks
 * overflowed the profiler's stack). Depth first through DIEs that may own
 * code, a DIE with addresses entered only when it holds @pc; from the
 * first DIE holding @pc on, only down through the child holding it. Same
 * layout as inline_path(): the innermost subprogram, then the inlined
 * subroutines in it; returns 0 if nothing holds @pc. Sets @cut when DIEs holding
 * @pc went on deeper than the stack.
 */
int cp_sym_scope_path(Dwarf_Die *cu, Dwarf_Addr pc, Dwarf_Die *path, bool *cut)
{
	Dwarf_Die stack[CP_MAX_SCOPE_DEPTH];
	unsigned int budget = CP_MAX_LOOKUP_RANGES, dies = CP_MAX_LOOKUP_DIES;
	int depth = 0, len = 0;
	bool inside = false; /* below a DIE holding @pc */

	if (dwarf_child(cu, &stack[0]))
		return 0;
	for (;;) {
		Dwarf_Die *d = &stack[depth];

		if (!dies--) {
			*cut = true;
			return len;
		}
		enum scope_kind kind = scope_kind(d);
		int r = kind == SCOPE_MATCH ? haspc(d, pc, &budget, cut) : 0;

		if (!budget)
			return len; /* cut (counted): the scopes found so far */
		bool enter = r == 1;

		if (!inside && r == 0)
			enter = kind == SCOPE_WALK ||
				(kind == SCOPE_MATCH && !dwarf_hasattr(d, DW_AT_low_pc) &&
				 !dwarf_hasattr(d, DW_AT_ranges));
		if (r == 1) {
			int tag = dwarf_tag(d);

			inside = true;
			if (tag == DW_TAG_subprogram) /* a nested function: the innermost */
				len = 0;
			if (len < CP_MAX_DIE_DEPTH &&
			    (tag == DW_TAG_subprogram || (tag == DW_TAG_inlined_subroutine && len)))
				path[len++] = *d;
		}
		if (enter && dwarf_haschildren(d) > 0 && depth + 1 == CP_MAX_SCOPE_DEPTH) {
			*cut |= r == 1;
		} else if (enter && dwarf_haschildren(d) > 0 &&
			   dwarf_child(d, &stack[depth + 1]) == 0) {
			depth++;
			continue;
		}
		if (r == 1)
			return len; /* no child holds @pc */
		/* the next sibling, up through containers without addresses */
		while (dwarf_siblingof(&stack[depth], &stack[depth]) != 0) {
			if (depth == 0)
				return len;
			depth--;
			if (inside && haspc(&stack[depth], pc, &budget, cut) == 1)
				return len; /* back up to a DIE holding @pc: none below did */
		}
	}
}

/*
 * The innermost function and its inline callers at @ip. Returns the entry
 * address of the out-of-line function holding @ip, 0 if DWARF has none.
 */
static __u64 describe_scopes(Dwfl_Module *mod, struct mod_cache *mc, __u64 ip,
			     struct cp_symbol_info *out)
{
	Dwarf_Die path[CP_MAX_DIE_DEPTH], sub, *cu;
	const struct cu_funcs *cf;
	Dwarf_Addr bias, entry = 0;
	bool cut = false;
	int n;

	cu = dwfl_module_addrdie(mod, ip, &bias);
	if (!cu)
		return 0;
	cf = mc ? cu_funcs(mc, cu) : NULL;
	cut = cf && cf->cut;
	if (cf && find_subprogram(cf, ip - bias, &sub))
		n = inline_path(&sub, ip - bias, path, &cut);
	else
		n = cp_sym_scope_path(cu, ip - bias, path, &cut);
	/* said once per module: its functions are still named, to the cap */
	if (cut && mc && !mc->deep_said) {
		mc->deep_said = true;
		cp_tf_count(CP_TF_DEEP_DWARF);
	}
	if (!n)
		return 0;
	out->function = die_name(&path[n - 1]);
	for (int i = n - 2; i >= 0; i--) {
		struct cp_inline_caller *c;

		if (out->nr_inlined == CP_MAX_INLINE_DEPTH) {
			out->flags |= CP_SYM_INLINE_TRUNCATED;
			break;
		}
		c = &out->inlined[out->nr_inlined++];
		call_site(&path[i + 1], c);
		c->function = die_name(&path[i]);
	}
	if (dwarf_entrypc(&path[0], &entry) == 0)
		entry += bias;
	return entry;
}

void cp_sym_describe(Dwfl_Module *mod, __u64 ip, struct cp_symbol_info *out)
{
	Dwarf_Addr start, end;
	GElf_Addr bias, entry;
	__u64 sym_off = 0;
	struct mod_cache *mc;
	const char *name, *sym_name;
	Dwfl_Line *line;
	int lineno, col;

	memset(out, 0, sizeof(*out));
	out->ip = ip;
	name = dwfl_module_info(mod, NULL, &start, &end, NULL, NULL, NULL, NULL);
	/* dwfl_linux_proc_report names it "[vdso: PID]": one name for all */
	out->module = name && !strncmp(name, "[vdso", 5) ? "[vdso]" : name;
	out->module_offset = dwfl_module_getelf(mod, &bias) ? ip - bias : ip - start;

	mc = mod_cache(mod);
	sym_name = describe_symbol(mod, mc, ip, out, &sym_off);
	entry = describe_scopes(mod, mc, ip, out);
	if (sym_name) {
		if (!out->function)
			out->function = sym_name;
		out->function_offset = sym_off;
	} else if (entry && entry <= ip) {
		out->function_offset = ip - entry;
	}
	if (out->function) {
		out->nearest = NULL; /* DWARF named it */
		out->nearest_offset = 0;
	}

	line = dwfl_module_getsrc(mod, ip);
	if (line) {
		out->file = dwfl_lineinfo(line, NULL, &lineno, &col, NULL, NULL);
		if (out->file) {
			out->line = lineno > 0 ? (__u32)lineno : 0;
			out->column = col > 0 ? (__u32)col : 0;
			out->flags |= CP_SYM_DEBUG_INFO;
		}
	}
}
