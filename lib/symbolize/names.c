/* How the symbolizer names functions (beside symbolize/symbolize.c): symbol table names without
 * their ELF version and demangled as the naming mode wants, DWARF functions by their
 * linkage name demangled or by their name with its enclosing scopes, worked out once per
 * function DIE and kept for the profile's lifetime.
 *
 * Demangling is libiberty's cplus_demangle, as binutils (c++filt, nm -C, addr2line -C) uses
 * it: one well-kept demangler for C++ (Itanium), Rust (legacy and v0) and other styles,
 * callable from C, linked in statically (it ships no shared library), where the C++
 * runtime's __cxa_demangle would bring libstdc++ into a C library and knows no Rust.
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/impl.h"

#include <libiberty/demangle.h>

void tachi_sym_forget_names(struct tachi_sym *s)
{
	for (size_t i = 0; i < s->nmade; i++)
		free(s->made[i]);
	s->nmade = 0;
}

/* name demangled (with parameters unless short), or name itself when it is not a
 * mangled name or memory runs out; valid until the next lookup. */
static const char *demangled(struct tachi_sym *s, const char *name, bool params)
{
	/* Mangled names (Itanium _Z, Rust _R) start with '_': others are left alone. */
	if (!name || name[0] != '_')
		return name;
	int opts = DMGL_ANSI | DMGL_AUTO | (params ? DMGL_PARAMS : 0);
	char *d = cplus_demangle(name, opts);
	if (!d)
		return name;
	if (!TACHI_RESERVE(s->made, s->made_cap, s->nmade + 1)) {
		free(d);
		return name;
	}
	s->made[s->nmade++] = d;
	return d;
}

void tachi_sym_set_names(struct tachi_sym *s, int names)
{
	s->names = names;
}

/* name without an ELF symbol version ("__libc_start_main@@GLIBC_2.34"), as nm -D lists
 * the symbol and pprof shows it. */
const char *tachi_sym_unversioned(struct tachi_sym *s, const char *name)
{
	const char *at = name ? strchr(name, '@') : NULL;
	if (!at || at == name || !TACHI_RESERVE(s->made, s->made_cap, s->nmade + 1))
		return name;
	char *c = strndup(name, (size_t)(at - name));
	if (!c)
		return name;
	s->made[s->nmade++] = c;
	return c;
}

/* A symbol table name as the naming mode wants it. */
const char *tachi_sym_symbol_name(struct tachi_sym *s, const char *name)
{
	if (s->names == TACHI_NAMES_MANGLED)
		return name;
	/* perf prints a symbol table's versioned names (fopen@@GLIBC_2.2.5) as they are */
	if (s->perf)
		return demangled(s, name, false);
	return demangled(s, tachi_sym_unversioned(s, name), s->names == TACHI_NAMES_FULL);
}

/* ---- DWARF function names ---- */

/* The DIE that declares die: its abstract origin's or specification's, where the
 * enclosing scopes are. */
static void declaring_die(Dwarf_Die *die, Dwarf_Die *out)
{
	*out = *die;
	for (int hops = 0; hops < 8; hops++) {
		Dwarf_Attribute a;
		Dwarf_Die next;
		if (!(dwarf_attr(out, DW_AT_abstract_origin, &a) ||
		      dwarf_attr(out, DW_AT_specification, &a)) ||
		    !dwarf_formref_die(&a, &next))
			return;
		*out = next;
	}
}

/* A function without a linkage name (a lambda's operator(), a member of a class template
 * instance) named with its enclosing namespaces, classes and functions, so that two such
 * functions do not share a name: "main::<lambda(int)>::operator()". */
static const char *qualified(struct tachi_sym *s, Dwarf_Die *die, const char *name)
{
	Dwarf_Die decl, *scopes = NULL;
	/* its scopes would cost libdw more than the unit's size (module.c) */
	if (s->costly_unit)
		return name;
	declaring_die(die, &decl);
	int n = dwarf_getscopes_die(&decl, &scopes);
	size_t len = strlen(name) + 1, used = 0;
	const char *part[32];
	uint32_t pline[32];
	for (int i = 1; i < n && used < 32; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag != DW_TAG_namespace && tag != DW_TAG_class_type &&
		    tag != DW_TAG_structure_type && tag != DW_TAG_union_type &&
		    tag != DW_TAG_subprogram)
			continue;
		const char *p = dwarf_diename(&scopes[i]);
		Dwarf_Word line = 0;
		Dwarf_Attribute a;
		if (!p && tag != DW_TAG_namespace && dwarf_attr(&scopes[i], DW_AT_decl_line, &a))
			dwarf_formudata(&a, &line);
		/* An unnamed class (a lambda's) by the line it is declared on. */
		part[used] = p ? p : tag == DW_TAG_namespace ? "(anonymous namespace)" : NULL;
		pline[used++] = (uint32_t)line;
		len += (p ? strlen(p) : 32) + 2;
	}
	free(scopes);
	if (!used || !TACHI_RESERVE(s->made, s->made_cap, s->nmade + 1))
		return name;
	char *q = malloc(len), *w = q;
	if (!q)
		return name;
	for (size_t i = used; i-- > 0;)
		w += part[i] ? sprintf(w, "%s::", part[i]) : sprintf(w, "{unnamed:%u}::", pline[i]);
	strcpy(w, name);
	s->made[s->nmade++] = q;
	return q;
}

/* A function's name: by default its linkage name demangled, with scope, template
 * arguments and parameters, as pprof and c++filt show it (inlined instances reach it
 * through their abstract origin); the DWARF short name (short), or the linkage name as is
 * (mangled). A function without a linkage name (C) has its plain name in every mode. */
static const char *die_name(struct tachi_sym *s, Dwarf_Die *die, bool outer)
{
	Dwarf_Attribute a;
	const char *n = NULL, *link = NULL;
	if (dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
	    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a))
		link = dwarf_formstring(&a);
	if (link && s->names == TACHI_NAMES_MANGLED)
		return link;
	/* perf script names an inline chain's frames as addr2line gives them, by the linkage
	 * name, demangled as perf demangles symbols (without parameters): with its namespaces,
	 * classes and template arguments ("std::vector<int, ...>::push_back"), where the DWARF
	 * name is the bare "push_back". */
	if (link && s->perf)
		return demangled(s, link, false);
	if (link && s->names == TACHI_NAMES_FULL)
		return demangled(s, link, true);
	/* A C function known under an exported alias (glibc's __libc_start_main_impl is
	 * __libc_start_main) goes by the alias, as nm and pprof show it. */
	if (!link && outer && s->alias && s->names == TACHI_NAMES_FULL)
		return s->alias;
	if (dwarf_attr_integrate(die, DW_AT_name, &a))
		n = dwarf_formstring(&a);
	if (n && s->names == TACHI_NAMES_FULL)
		return qualified(s, die, n);
	return n ? n : link;
}

static size_t named_slot(const struct named *t, size_t cap, const Dwarf *dbg, Dwarf_Off off)
{
	uint64_t h = ((uint64_t)(uintptr_t)dbg ^ off) * 0x9e3779b97f4a7c15u;
	size_t i = (size_t)(h >> 32) & (cap - 1);
	while (t[i].dbg && (t[i].dbg != dbg || t[i].off != off))
		i = (i + 1) & (cap - 1);
	return i;
}

static bool named_grow(struct tachi_sym *s)
{
	size_t cap = s->named_cap ? s->named_cap * 2 : 256;
	struct named *t = calloc(cap, sizeof(*t));
	if (!t)
		return false;
	for (size_t i = 0; i < s->named_cap; i++)
		if (s->named[i].dbg)
			t[named_slot(t, cap, s->named[i].dbg, s->named[i].off)] = s->named[i];
	free(s->named);
	s->named = t;
	s->named_cap = cap;
	return true;
}

/* die_name, worked out once per function DIE: demangling and the scope walk cost far
 * more than a lookup, and every PC in a function asks again. Only the exported alias
 * depends on the PC looked up: applied here, after the cache. */
const char *tachi_sym_die_name_cached(struct tachi_sym *s, Dwarf_Die *die, bool outer)
{
	const Dwarf *dbg = dwarf_cu_getdwarf(die->cu);
	Dwarf_Off off = dwarf_dieoffset(die);
	if (!dbg || off == (Dwarf_Off)-1 ||
	    (s->nnamed * 2 >= s->named_cap && !named_grow(s)))
		return die_name(s, die, outer);
	size_t i = named_slot(s->named, s->named_cap, dbg, off);
	if (!s->named[i].dbg) {
		Dwarf_Attribute a;
		const char *name = die_name(s, die, false);
		char *copy = name ? strdup(name) : NULL;
		if (!copy)
			return die_name(s, die, outer);
		bool link = dwarf_attr_integrate(die, DW_AT_linkage_name, &a) ||
			    dwarf_attr_integrate(die, DW_AT_MIPS_linkage_name, &a);
		s->named[i] = (struct named){ dbg, off, copy, link };
		s->nnamed++;
	}
	if (!s->named[i].link && outer && s->alias && s->names == TACHI_NAMES_FULL)
		return s->alias;
	return s->named[i].name;
}
