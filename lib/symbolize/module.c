/* One binary's lookups for the symbolizer (symbolize/symbolize.c finds the binary and its load
 * bias; addresses here are the object's own): the ELF symbol at an address, and the DWARF
 * source line and inline chain, innermost first, each frame named by symbolize/names.c.
 *
 * ELF symbols go through a table sorted once per module, because dwfl_module_addrinfo
 * scans the symbol table linearly on every call; DWARF scopes through a tree built once
 * per unit, because dwarf_getscopes walks the unit from its root on every call (see
 * "DWARF scopes" below).
 */
#include <dwarf.h>
#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <gelf.h>
#include <stdlib.h>
#include <string.h>

#include "symbolize/impl.h"
#include "base/hash.h"

struct symbol {
	uint64_t addr, size;
	const char *name;
	uint8_t rank;    /* preference among symbols at one address: higher wins */
	uint32_t seq;    /* the symbol table's order (perf's rule keeps the first of equals) */
};

struct unit;
static void unit_free(struct unit *u);

void tachi_sym_module_free(struct module *m)
{
	if (!m || (m->refs && --m->refs))
		return;
	if (m->cache)
		tachi_symcache_forget(m->cache, m);
	free(m->found);
	free(m->debuginfo_path);
	if (m->dwfl)
		dwfl_end(m->dwfl);
	free(m->syms);
	free(m->plt_names);
	for (size_t i = 0; i < m->nunits; i++)
		unit_free(m->units[i]);
	free(m->units);
	tachi_idset_free(&m->unit_index);
	free(m);
}

/* ---- ELF symbols: sorted once per module ---- */

static int sym_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return strcmp(x->name, y->name);
}

/* perf's choose_best_symbol (tools/perf/util/symbol.c): a symbol with a size, then a
 * non-weak one, then a global one, then fewer leading underscores, then the longer name;
 * of equals the first in the table. rank holds the first three. */
static size_t underscores(const char *n)
{
	size_t k = 0;
	while (n[k] == '_')
		k++;
	return k;
}

static int perf_sym_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	if (x->rank != y->rank)
		return x->rank > y->rank ? -1 : 1;
	size_t ux = underscores(x->name), uy = underscores(y->name);
	if (ux != uy)
		return ux < uy ? -1 : 1;
	size_t lx = strlen(x->name), ly = strlen(y->name);
	if (lx != ly)
		return lx > ly ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int addr_seq_cmp(const void *a, const void *b)
{
	const struct symbol *x = a, *y = b;
	if (x->addr != y->addr)
		return x->addr < y->addr ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* perf's symbols__fixup_end, before it picks among aliases: a symbol of no size reaches
 * the next one in address and table order (so of aliases without size only the last
 * gets any, and is preferred), the last one to the end of the next page. */
static void perf_fixup_ends(struct symbol *y, size_t n)
{
	qsort(y, n, sizeof(*y), addr_seq_cmp);
	for (size_t i = 0; i < n; i++) {
		if (y[i].size)
			continue;
		y[i].size = i + 1 < n ? y[i + 1].addr - y[i].addr
				      : ((y[i].addr + 4095) & ~4095ull) + 4096 - y[i].addr;
		if (y[i].size)
			y[i].rank |= 4;
	}
}

static uint8_t perf_rank(const GElf_Sym *sym)
{
	int bind = GELF_ST_BIND(sym->st_info);
	return (uint8_t)((sym->st_size != 0) * 4 + (bind != STB_WEAK) * 2 + (bind == STB_GLOBAL));
}

/* Among aliases of one address, the name nm and pprof users know: an exported (global,
 * default visibility) name over a weak one, over a hidden one (glibc's internal __GI_
 * aliases), over a local one (__libc_start_main_impl); a function over an untyped label. */
static uint8_t sym_rank(const GElf_Sym *sym, const char *name)
{
	int bind = GELF_ST_BIND(sym->st_info);
	bool hidden = GELF_ST_VISIBILITY(sym->st_other) != STV_DEFAULT ||
		      !strncmp(name, "__GI_", 5);
	int r = bind == STB_LOCAL ? 0 : hidden ? 2 : bind == STB_GLOBAL ? 6 : 4;
	return (uint8_t)(r + (GELF_ST_TYPE(sym->st_info) != STT_NOTYPE));
}

/* A section of e by name, or NULL. */
static Elf_Scn *section_named(Elf *e, const char *name, GElf_Shdr *sh)
{
	size_t strndx;
	if (elf_getshdrstrndx(e, &strndx))
		return NULL;
	for (Elf_Scn *scn = NULL; (scn = elf_nextscn(e, scn));) {
		const char *n;
		if (gelf_getshdr(scn, sh) && (n = elf_strptr(e, strndx, sh->sh_name)) && !strcmp(n, name))
			return scn;
	}
	return NULL;
}

/* perf's symbols for PLT entries (symbol-elf.c, dso__synthesize_plt_symbols): the entry
 * of each .rela.plt relocation is "NAME@plt", NAME its dynamic symbol's ("" for none);
 * the entries follow a 16-byte header in .plt, or fill .plt.sec where there is one. */
static size_t plt_symbols(struct module *m, struct symbol *out, size_t room)
{
	GElf_Addr bias;
	Elf *e = dwfl_module_getelf(m->mod, &bias);
	GElf_Shdr rel, plt, sec, dyn;
	Elf_Scn *rs = e ? section_named(e, ".rela.plt", &rel) : NULL;
	if (!rs || !section_named(e, ".plt", &plt) || rel.sh_type != SHT_RELA || !rel.sh_entsize)
		return 0;
	bool has_sec = section_named(e, ".plt.sec", &sec) != NULL;
	uint64_t base = has_sec ? sec.sh_addr : plt.sh_addr + 16, entry = 16;
	Elf_Scn *ds = elf_getscn(e, rel.sh_link);
	Elf_Data *rd = elf_getdata(rs, NULL), *dd = ds ? elf_getdata(ds, NULL) : NULL;
	if (!rd || !dd || !gelf_getshdr(ds, &dyn))
		return 0;
	size_t n = rel.sh_size / rel.sh_entsize, total = 0;
	for (size_t pass = 0; pass < 2; pass++) {
		size_t at = 0, k = 0;
		for (size_t i = 0; i < n && k < room; i++) {
			GElf_Rela ra;
			GElf_Sym sym;
			const char *name = "";
			if (!gelf_getrela(rd, (int)i, &ra))
				break;
			if (GELF_R_SYM(ra.r_info) && gelf_getsym(dd, (int)GELF_R_SYM(ra.r_info), &sym))
				name = elf_strptr(e, dyn.sh_link, sym.st_name);
			name = name ? name : "";
			size_t len = strlen(name) + 5;
			if (pass) {
				char *d = m->plt_names + at;
				memcpy(d, name, len - 5);
				memcpy(d + len - 5, "@plt", 5);
				out[k++] = (struct symbol){ base + i * entry, entry, d, 4 + 2 + 1,
							    (uint32_t)(UINT32_MAX - n + i) };
			}
			at += len;
		}
		if (!pass && !(m->plt_names = malloc(at ? at : 1)))
			return 0;
		total = k;
	}
	return total;
}

static void load_symbols(struct module *m)
{
	m->syms_loaded = true;
	int n = dwfl_module_getsymtab(m->mod);
	size_t plt = 0;
	if (m->perf) {
		GElf_Addr bias;
		Elf *e = dwfl_module_getelf(m->mod, &bias);
		GElf_Shdr rel;
		if (e && section_named(e, ".rela.plt", &rel) && rel.sh_entsize)
			plt = rel.sh_size / rel.sh_entsize;
	}
	if (n <= 0 && !plt)
		return;
	if (n < 0)
		n = 0;
	m->syms = malloc(((size_t)n + plt + 1) * sizeof(*m->syms));
	if (!m->syms)
		return;
	size_t k = 0;
	for (int i = 1; i < n; i++) {
		GElf_Sym sym;
		GElf_Addr addr;
		GElf_Word shndx;
		const char *name = dwfl_module_getsym_info(m->mod, i, &sym, &addr, &shndx, NULL, NULL);
		int type = GELF_ST_TYPE(sym.st_info);
		if (!name || !name[0] || sym.st_shndx == SHN_UNDEF)
			continue;
		if (type != STT_FUNC && type != STT_GNU_IFUNC && type != STT_NOTYPE)
			continue;
		if (type == STT_NOTYPE && sym.st_shndx == SHN_ABS)
			continue;
		m->syms[k++] = (struct symbol){ addr, sym.st_size, name,
						m->perf ? perf_rank(&sym) : sym_rank(&sym, name),
						(uint32_t)i };
	}
	if (plt)
		k += plt_symbols(m, m->syms + k, plt);
	size_t w = 0;
	if (m->perf) {
		/* one sort: the preferred of each address's run is found in it */
		perf_fixup_ends(m->syms, k);
		for (size_t i = 0; i < k; i++)
			if (!w || m->syms[w - 1].addr != m->syms[i].addr)
				m->syms[w++] = m->syms[i];
			else if (perf_sym_cmp(&m->syms[i], &m->syms[w - 1]) < 0)
				m->syms[w - 1] = m->syms[i];
		m->nsyms = w;
		return;
	}
	qsort(m->syms, k, sizeof(*m->syms), sym_cmp);
	/* Keep the preferred symbol of each address. */
	for (size_t i = 0; i < k; i++)
		if (!w || m->syms[w - 1].addr != m->syms[i].addr)
			m->syms[w++] = m->syms[i];
	m->nsyms = w;
}

static const struct symbol *symbol_entry(struct module *m, uint64_t addr);

const char *tachi_sym_symbol_at(struct module *m, uint64_t addr)
{
	const struct symbol *y = symbol_entry(m, addr);
	return y ? y->name : NULL;
}

/* The symbol at addr when it is global, of default visibility and typed: an exported name. */
const char *tachi_sym_global_symbol_at(struct module *m, uint64_t addr)
{
	const struct symbol *y = symbol_entry(m, addr);
	return y && y->rank == 7 ? y->name : NULL;
}

static const struct symbol *symbol_entry(struct module *m, uint64_t addr)
{
	if (!m->syms_loaded)
		load_symbols(m);
	size_t lo = 0, hi = m->nsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (m->syms[mid].addr <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo)
		return NULL;
	const struct symbol *y = &m->syms[lo - 1];
	if (y->size && addr - y->addr >= y->size)
		return NULL;
	return y;
}

/* ---- DWARF: source lines and inline chains ---- */

static int32_t clamp_num(Dwarf_Word v)
{
	return v == 0 || v > INT32_MAX ? -1 : (int32_t)v;
}

struct module_loc {
	const char *file;
	int32_t line, col;
};

/* Inline chains deeper than this keep their innermost frames and their function, with the
 * frames between dropped (and said once): real chains are a few frames, and a sample's
 * frames are bounded by the depth limit anyway. */
#define MAX_INLINE 64

/* The frames of chain (innermost first; DIEs other than subprograms and inlined subroutines
 * are skipped) up to the first subprogram: the innermost at cur, each caller at the call
 * site its inlined callee records. All but the last are marked inlined: one address. */
static void emit_chain(struct tachi_sym *s, Dwarf_Die *cu, Dwarf_Die *chain, size_t nc,
		       struct module_loc cur, struct tachi_sym_frame *fr, tachi_sym_emit_fn emit,
		       void *ctx, int *rc)
{
	Dwarf_Files *files = NULL;
	size_t nfiles = 0;
	bool have_files = false;
	const char *fallback_file = fr->file;
	/* The frames to emit: those up to the first subprogram, the last of them unmarked. */
	size_t last = 0, count = 0;
	for (size_t i = 0; i < nc; i++) {
		int tag = dwarf_tag(&chain[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		count++;
		last = i;
		if (tag == DW_TAG_subprogram)
			break;
	}
	*rc = TACH_OK;
	if (!count)
		return;
	if (count > MAX_INLINE && !s->warned_depth) {
		s->warned_depth = true;
		tachi_warn(s->warn, TACH_POS_NONE, 0, "an inline chain of %zu frames at 0x%llx keeps "
			   "its %d innermost frames and its function", count,
			   (unsigned long long)fr->address, MAX_INLINE - 1);
	}
	size_t emitted = 0;
	for (size_t i = 0; i <= last && !*rc; i++) {
		int tag = dwarf_tag(&chain[i]);
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		if (i == last || emitted < MAX_INLINE - 1) {
			const char *name = tachi_sym_die_name_cached(s, &chain[i], tag == DW_TAG_subprogram);
			fr->file = cur.file;
			fr->func = name ? name : "??";
			fr->line = cur.line;
			fr->col = cur.col;
			fr->inlined = i != last;
			*rc = emit(ctx, fr);
			emitted++;
		}
		if (i == last)
			break;
		Dwarf_Attribute a;
		Dwarf_Word v;
		cur.file = fallback_file;
		cur.line = cur.col = -1;
		if (dwarf_attr(&chain[i], DW_AT_call_file, &a) && !dwarf_formudata(&a, &v)) {
			if (!have_files) {
				have_files = true;
				if (dwarf_getsrcfiles(cu, &files, &nfiles))
					files = NULL;
			}
			const char *f = files && v < nfiles ? dwarf_filesrc(files, v, NULL, NULL) : NULL;
			if (f)
				cur.file = f;
		}
		if (dwarf_attr(&chain[i], DW_AT_call_line, &a) && !dwarf_formudata(&a, &v))
			cur.line = clamp_num(v);
		if (dwarf_attr(&chain[i], DW_AT_call_column, &a) && !dwarf_formudata(&a, &v))
			cur.col = clamp_num(v);
	}
}

static struct module_loc line_at(struct module *m, uint64_t addr, const char *fallback_file)
{
	struct module_loc cur = { fallback_file, -1, -1 };
	Dwfl_Line *ln = dwfl_module_getsrc(m->mod, addr);
	if (ln) {
		int line = 0, col = 0;
		const char *f = dwfl_lineinfo(ln, NULL, &line, &col, NULL, NULL);
		if (f) {
			cur.file = f;
			cur.line = line > 0 ? line : -1;
			cur.col = col > 0 ? col : -1;
		}
	}
	return cur;
}

/* The inline chain through libdw's own scope walks, which start from the unit's root on
 * every call: the reference the cached walk below reproduces, and what units it cannot
 * reproduce use. False when DWARF does not know addr. */
static bool frames_libdw(struct tachi_sym *s, struct module *m, Dwarf_Die *cu, uint64_t pc,
			 uint64_t addr, struct tachi_sym_frame *fr, tachi_sym_emit_fn emit, void *ctx,
			 int *rc)
{
	Dwarf_Die *scopes = NULL;
	int n = dwarf_getscopes(cu, pc, &scopes);
	int fn = -1;
	for (int i = 0; i < n; i++) {
		int tag = dwarf_tag(&scopes[i]);
		if (tag == DW_TAG_subprogram || tag == DW_TAG_inlined_subroutine) {
			fn = i;
			break;
		}
	}
	if (fn < 0) {
		free(scopes);
		return false;
	}
	struct module_loc cur = line_at(m, addr, fr->file);
	/* The rest of scopes follows abstract origins; the concrete callers of an inlined
	 * instance come from walking its own parents. */
	Dwarf_Die *chain = NULL;
	int nc = dwarf_getscopes_die(&scopes[fn], &chain);
	*rc = TACH_OK;
	if (nc > 0)
		emit_chain(s, cu, chain, (size_t)nc, cur, fr, emit, ctx, rc);
	free(chain);
	free(scopes);
	return nc > 0;
}

/* ---- DWARF scopes, walked once per unit ----
 *
 * dwarf_getscopes walks a unit from its root for every address, and dwarf_getscopes_die
 * walks it again to find an inlined instance's callers: about 40 µs per address on libc.
 * Here each unit is walked once, the way libdw's scope walk goes (descending into the tags
 * it descends into, imported partial units spliced in place), keeping
 * - the DIEs that walk can enter for some address: those with PC ranges whose ancestors
 *   all have PC ranges, as a tree where each node's children's ranges are sorted;
 * - the addresses of every DW_TAG_subprogram the walk reaches: dwarf_getscopes gives up
 *   on an inlined instance whose abstract origin its walk of the origin's unit misses.
 * A lookup takes the path dwarf_getscopes takes (at each level the first child, in DIE
 * order, whose ranges hold the address) and so finds the same DIEs. One difference, on
 * purpose: the abstract origin is looked for in its own unit, as newer elfutils do;
 * elfutils 0.188 looks only in the concrete instance's unit and so loses every inline chain
 * that gcc -flto builds across units. A unit whose walk meets what is not mirrored here (a
 * libdw error, a range list error, DIEs with addresses inside an imported unit, nesting
 * deeper than MAX_NEST) is left to libdw's walks.
 */

#define NO_NODE UINT32_MAX
#define MAX_NEST 256

struct dnode {
	Dwarf_Die die;
	uint32_t parent;     /* node 0 is the unit's root */
	uint32_t ent, nent;  /* the children's ranges: unit.ents[ent, ent + nent) */
	int tag;
	uint8_t origin;      /* inlined subroutine: 0 not checked, else an ORIGIN_ value */
};

struct dent {
	uint64_t lo, hi;
	uint64_t maxhi;      /* the largest hi of this and the earlier entries of its slice */
	uint32_t node, parent;
};

struct unit {
	const void *key;     /* the unit DIE's address in the debug data */
	uint64_t hash;
	struct dnode *nodes;
	size_t nnodes, nodes_cap;
	struct dent *ents;
	size_t nents, ents_cap;
	const void **subs;   /* sorted */
	size_t nsubs, subs_cap;
	bool complete;       /* the walk reached the end: subs is every subprogram */
	bool slow;           /* lookups go through frames_libdw */
	bool costly;         /* libdw's walks, which visit an imported unit at each import,
				would take more than MAX_VISITS steps (2^n for n levels
				importing the next twice) or loop: they are never used here */
};

enum { ORIGIN_FOUND = 1, ORIGIN_MISSED, ORIGIN_SLOW };

static bool may_have_scopes(int tag)
{
	switch (tag) {
	case DW_TAG_compile_unit:
	case DW_TAG_module:
	case DW_TAG_lexical_block:
	case DW_TAG_with_stmt:
	case DW_TAG_catch_block:
	case DW_TAG_try_block:
	case DW_TAG_entry_point:
	case DW_TAG_inlined_subroutine:
	case DW_TAG_subprogram:
	case DW_TAG_namespace:
	case DW_TAG_class_type:
	case DW_TAG_structure_type:
		return true;
	default:
		return false;
	}
}

/* The partial units one walk has spliced in, each once, so that DWARF importing one unit
 * from many places (n levels importing the next twice: 2^n visits) costs its size; with
 * the DIEs libdw's walks would visit for each (its own and its imports', again at each
 * import), to know when those walks cost too much. */
#define MAX_VISITS (1u << 18)

struct seen {
	const void *key;     /* NULL: an empty slot */
	uint64_t visits;     /* UINT64_MAX while its walk is under way */
};

struct walker {
	struct unit *u;
	bool stop;
	struct seen *seen;   /* open addressing */
	size_t seen_mask, nseen;
	uint64_t visits;     /* DIEs libdw's walk of the unit would visit so far */
};

/* The slot of the unit at key, added empty (visits 0) when new; NULL when out of memory. */
static struct seen *walk_seen(struct walker *w, const void *key, bool *is_new)
{
	if (!w->seen || (w->nseen + 1) * 2 > w->seen_mask + 1) {
		size_t cap = w->seen ? (w->seen_mask + 1) * 2 : 16;
		struct seen *ns = calloc(cap, sizeof(*ns));
		if (!ns)
			return NULL;
		for (size_t i = 0; w->seen && i <= w->seen_mask; i++) {
			if (!w->seen[i].key)
				continue;
			size_t k = tachi_mix64((uint64_t)(uintptr_t)w->seen[i].key) & (cap - 1);
			while (ns[k].key)
				k = (k + 1) & (cap - 1);
			ns[k] = w->seen[i];
		}
		free(w->seen);
		w->seen = ns;
		w->seen_mask = cap - 1;
	}
	size_t k = tachi_mix64((uint64_t)(uintptr_t)key) & w->seen_mask;
	for (; w->seen[k].key; k = (k + 1) & w->seen_mask)
		if (w->seen[k].key == key) {
			*is_new = false;
			return &w->seen[k];
		}
	w->seen[k] = (struct seen){ key, 0 };
	w->nseen++;
	*is_new = true;
	return &w->seen[k];
}

static void walk_visits(struct walker *w, uint64_t n)
{
	w->visits = n > UINT64_MAX - w->visits ? UINT64_MAX : w->visits + n;
	if (w->visits > MAX_VISITS)
		w->u->costly = true;
}

static void walk(struct walker *w, Dwarf_Die *first, uint32_t parent, bool imported,
		 unsigned nest);
static void walk_stop(struct walker *w);

/* An imported partial unit's children (first), spliced in where the import is. */
static void walk_import(struct walker *w, Dwarf_Die *unit, uint32_t parent, unsigned nest)
{
	bool is_new;
	struct seen *sn = walk_seen(w, unit->addr, &is_new);
	if (!sn) {
		walk_stop(w);
		return;
	}
	if (!is_new) {
		/* a unit importing itself: libdw's walk would not end */
		walk_visits(w, sn->visits);
		return;
	}
	sn->visits = UINT64_MAX;
	uint64_t before = w->visits;
	Dwarf_Die kid;
	if (dwarf_child(unit, &kid) == 0)
		walk(w, &kid, parent, true, nest + 1);
	/* the table may have grown: found again */
	sn = walk_seen(w, unit->addr, &is_new);
	if (sn)
		sn->visits = w->visits - before;
}

static void walk_stop(struct walker *w)
{
	w->u->slow = true;
	w->stop = true;
}

/* A node for die when it has PC ranges (NO_NODE if not); stops the walk where the ranges
 * cannot be mirrored. */
static uint32_t walk_node(struct walker *w, Dwarf_Die *die, int tag, uint32_t parent,
			  bool imported)
{
	struct unit *u = w->u;
	size_t first = u->nents;
	uint32_t id = (uint32_t)u->nnodes;
	Dwarf_Addr base, lo, hi;
	ptrdiff_t off = 0;
	while ((off = dwarf_ranges(die, off, &base, &lo, &hi)) > 0) {
		if (!TACHI_RESERVE(u->ents, u->ents_cap, u->nents + 1)) {
			walk_stop(w);
			return NO_NODE;
		}
		u->ents[u->nents++] = (struct dent){ lo, hi, 0, id, parent };
	}
	if (off < 0 || (u->nents > first && imported)) {
		walk_stop(w);
		return NO_NODE;
	}
	if (u->nents == first)
		return NO_NODE;
	if (u->nnodes >= NO_NODE - 1 || !TACHI_RESERVE(u->nodes, u->nodes_cap, u->nnodes + 1)) {
		walk_stop(w);
		return NO_NODE;
	}
	u->nodes[u->nnodes++] = (struct dnode){ *die, parent, 0, 0, tag, 0 };
	return id;
}

/* The siblings from first on, as __libdw_visit_scopes visits them; parent is the node
 * they hang under, NO_NODE where an ancestor has no ranges (dwarf_getscopes prunes there). */
static void walk(struct walker *w, Dwarf_Die *first, uint32_t parent, bool imported,
		 unsigned nest)
{
	if (nest > MAX_NEST) {
		walk_stop(w);
		return;
	}
	struct unit *u = w->u;
	Dwarf_Die child = *first;
	int ret;
	do {
		while (dwarf_tag(&child) == DW_TAG_imported_unit) {
			Dwarf_Die orig = child, sub;
			Dwarf_Attribute a;
			/* Some gcc -flto versions imported whole compile units: skipped. */
			if (dwarf_formref_die(dwarf_attr(&child, DW_AT_import, &a), &sub) &&
			    dwarf_tag(&sub) != DW_TAG_compile_unit) {
				/* a second import adds nothing the first did not (DIEs with
				 * addresses in an imported unit stop the walk anyway) */
				walk_import(w, &sub, parent, nest);
				if (w->stop)
					return;
			}
			if ((ret = dwarf_siblingof(&orig, &child)) != 0) {
				if (ret < 0)
					walk_stop(w);
				return;
			}
		}
		int tag = dwarf_tag(&child);
		walk_visits(w, 1);
		if (tag == DW_TAG_subprogram) {
			if (!TACHI_RESERVE(u->subs, u->subs_cap, u->nsubs + 1)) {
				walk_stop(w);
				return;
			}
			u->subs[u->nsubs++] = child.addr;
		}
		uint32_t node = NO_NODE;
		if (parent != NO_NODE) {
			node = walk_node(w, &child, tag, parent, imported);
			if (w->stop)
				return;
		}
		if (may_have_scopes(tag) && dwarf_haschildren(&child)) {
			Dwarf_Die kid;
			if ((ret = dwarf_child(&child, &kid)) < 0) {
				walk_stop(w);
				return;
			}
			if (ret == 0) {
				walk(w, &kid, node, imported, nest + 1);
				if (w->stop)
					return;
			}
		}
	} while ((ret = dwarf_siblingof(&child, &child)) == 0);
	if (ret < 0)
		walk_stop(w);
}

static int dent_cmp(const void *a, const void *b)
{
	const struct dent *x = a, *y = b;
	if (x->parent != y->parent)
		return x->parent < y->parent ? -1 : 1;
	if (x->lo != y->lo)
		return x->lo < y->lo ? -1 : 1;
	if (x->node != y->node)
		return x->node < y->node ? -1 : 1;
	return x->hi < y->hi ? -1 : x->hi > y->hi;
}

static int ptr_cmp(const void *a, const void *b)
{
	uintptr_t x = (uintptr_t)*(const void *const *)a, y = (uintptr_t)*(const void *const *)b;
	return x < y ? -1 : x > y;
}

static void unit_free(struct unit *u)
{
	if (!u)
		return;
	free(u->nodes);
	free(u->ents);
	free(u->subs);
	free(u);
}

static void unit_build(struct unit *u, Dwarf_Die *root)
{
	if (!TACHI_RESERVE(u->nodes, u->nodes_cap, 1)) {
		u->slow = true;
		return;
	}
	u->nodes[u->nnodes++] = (struct dnode){ *root, NO_NODE, 0, 0, dwarf_tag(root), 0 };
	struct walker w = { u, false, NULL, 0, 0, 0 };
	Dwarf_Die first;
	int ret = dwarf_child(root, &first);
	if (ret < 0)
		walk_stop(&w);
	else if (ret == 0)
		walk(&w, &first, 0, false, 0);
	free(w.seen);
	u->complete = !w.stop;
	/* In DIE order already unless imported units were spliced in. */
	bool sorted = true;
	for (size_t i = 1; i < u->nsubs && sorted; i++)
		sorted = (uintptr_t)u->subs[i - 1] < (uintptr_t)u->subs[i];
	if (!sorted)
		qsort(u->subs, u->nsubs, sizeof(*u->subs), ptr_cmp);
	if (u->slow) {
		/* The tree is not used; the subprograms may still answer origin queries. */
		free(u->ents);
		u->ents = NULL;
		u->nents = u->ents_cap = 0;
		return;
	}
	if (u->nents > 1)
		qsort(u->ents, u->nents, sizeof(*u->ents), dent_cmp);
	for (size_t i = 0; i < u->nents;) {
		struct dnode *p = &u->nodes[u->ents[i].parent];
		p->ent = (uint32_t)i;
		uint64_t maxhi = 0;
		size_t j = i;
		for (; j < u->nents && u->ents[j].parent == u->ents[i].parent; j++) {
			if (u->ents[j].hi > maxhi)
				maxhi = u->ents[j].hi;
			u->ents[j].maxhi = maxhi;
		}
		p->nent = (uint32_t)(j - i);
		i = j;
	}
}

static bool unit_eq(void *ctx, uint32_t id, const void *key)
{
	const struct module *m = ctx;
	return m->units[id]->key == key;
}


/* The walked unit whose root DIE is root, or NULL when out of memory. */
static struct unit *unit_get(struct module *m, Dwarf_Die *root)
{
	if (m->last && m->last->key == root->addr)
		return m->last;
	uint64_t h = tachi_mix64((uint64_t)(uintptr_t)root->addr);
	uint32_t id;
	if (tachi_idset_find(&m->unit_index, h, root->addr, unit_eq, m, &id))
		return m->last = m->units[id];
	if (m->nunits >= UINT32_MAX - 1 || !TACHI_RESERVE(m->units, m->units_cap, m->nunits + 1))
		return NULL;
	struct unit *u = calloc(1, sizeof(*u));
	if (!u)
		return NULL;
	u->key = root->addr;
	u->hash = h;
	unit_build(u, root);
	m->units[m->nunits] = u;
	if (!tachi_idset_insert(&m->unit_index, h, (uint32_t)m->nunits)) {
		unit_free(u);
		return NULL;
	}
	m->nunits++;
	return m->last = u;
}

/* The innermost node whose ranges hold pc on dwarf_getscopes' path; 0 when none does. */
static uint32_t unit_find(const struct unit *u, uint64_t pc)
{
	uint32_t at = 0;
	for (;;) {
		const struct dnode *n = &u->nodes[at];
		if (!n->nent)
			return at;
		const struct dent *e = u->ents + n->ent;
		size_t lo = 0, hi = n->nent;
		while (lo < hi) {
			size_t mid = lo + (hi - lo) / 2;
			if (e[mid].lo <= pc)
				lo = mid + 1;
			else
				hi = mid;
		}
		uint32_t best = NO_NODE;
		for (size_t i = lo; i-- > 0 && e[i].maxhi > pc;)
			if (pc < e[i].hi && e[i].node < best)
				best = e[i].node;
		if (best == NO_NODE)
			return at;
		at = best;
	}
}

/* Whether dwarf_getscopes' walk of the abstract origin's unit finds the origin of the
 * inlined instance n. */
static int origin_state(struct module *m, struct dnode *n)
{
	if (n->origin)
		return n->origin;
	Dwarf_Attribute a;
	Dwarf_Die o, ocu;
	int st;
	if (!dwarf_formref_die(dwarf_attr(&n->die, DW_AT_abstract_origin, &a), &o)) {
		st = ORIGIN_MISSED;
	} else if (dwarf_tag(&o) != DW_TAG_subprogram || !dwarf_diecu(&o, &ocu, NULL, NULL)) {
		st = ORIGIN_SLOW;
	} else {
		const struct unit *ou = unit_get(m, &ocu);
		if (ou && ou->costly && !ou->complete)
			st = ORIGIN_MISSED; /* libdw's walk of it could take 2^n steps */
		else if (!ou || !ou->complete)
			st = ORIGIN_SLOW;
		else if (!ou->nsubs)
			st = ORIGIN_MISSED;
		else
			st = bsearch(&o.addr, ou->subs, ou->nsubs, sizeof(*ou->subs), ptr_cmp) ?
			     ORIGIN_FOUND : ORIGIN_MISSED;
	}
	n->origin = (uint8_t)st;
	return st;
}

/* Emits the inline chain at addr (object address); false when DWARF does not know it. */
bool tachi_sym_dwarf_frames(struct tachi_sym *s, struct module *m, uint64_t addr,
			    struct tachi_sym_frame *fr, tachi_sym_emit_fn emit, void *ctx, int *rc)
{
	Dwarf_Addr cubias;
	Dwarf_Die *cu = dwfl_module_addrdie(m->mod, addr, &cubias);
	if (!cu)
		return false;
	uint64_t pc = addr - cubias;
	struct unit *u = unit_get(m, cu);
	/* libdw's walks of a unit that shares imports could take 2^n steps: none there */
	if (u && u->costly && u->slow)
		return false;
	if (!u || u->slow)
		return frames_libdw(s, m, cu, pc, addr, fr, emit, ctx, rc);
	uint32_t in = unit_find(u, pc);
	if (!in)
		return false;
	/* dwarf_getscopes continues from the innermost inlined instance to its abstract
	 * origin, and fails when it cannot find it. */
	for (uint32_t k = in; k; k = u->nodes[k].parent) {
		if (u->nodes[k].tag != DW_TAG_inlined_subroutine)
			continue;
		int st = origin_state(m, &u->nodes[k]);
		if (st == ORIGIN_MISSED)
			return false;
		if (st == ORIGIN_SLOW)
			return !u->costly && frames_libdw(s, m, cu, pc, addr, fr, emit, ctx, rc);
		break;
	}
	/* unit_get may have grown m->units, never u->nodes. */
	size_t nc = 0;
	for (uint32_t k = in; k; k = u->nodes[k].parent) {
		int tag = u->nodes[k].tag;
		if (tag != DW_TAG_subprogram && tag != DW_TAG_inlined_subroutine)
			continue;
		if (!TACHI_RESERVE(s->chain, s->chain_cap, nc + 1))
			return !u->costly && frames_libdw(s, m, cu, pc, addr, fr, emit, ctx, rc);
		s->chain[nc++] = u->nodes[k].die;
		if (tag == DW_TAG_subprogram)
			break;
	}
	if (!nc)
		return false;
	/* names.c's scope walks are libdw's too */
	s->costly_unit = u->costly;
	emit_chain(s, cu, s->chain, nc, line_at(m, addr, fr->file), fr, emit, ctx, rc);
	s->costly_unit = false;
	return true;
}
