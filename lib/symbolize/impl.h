/* What the symbolizer's files share (symbolize/symbolize.c: mappings, binaries and lookups;
 * symbolize/module.c: one binary's ELF symbols and DWARF inline chains;
 * symbolize/names.c: how functions are named): the symbolizer's state, a loaded binary,
 * and the calls between the files. Private to them; the gperftools reader uses
 * symbolize/symbolize.h. */
#ifndef TACHFMT_FMT_SYMBOLIZE_IMPL_H
#define TACHFMT_FMT_SYMBOLIZE_IMPL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "base/hash.h"
#include "symbolize/symbolize.h"

struct mapping;
struct symbol;
struct unit;

/* A binary, opened for one mapping and at its load bias. */
struct module {
	/* libdwfl reads these lazily, maybe after the symbolizer that loaded the binary is
	 * gone (another holds it through the cache): the module's own copies */
	Dwfl_Callbacks cb;
	char *debuginfo_path;
	/* shared through a cache: its references and what it was loaded as */
	unsigned refs;
	struct tachi_symcache *cache;
	char *found;
	uint64_t dev, ino, size, mtime_ns;
	Dwfl *dwfl;
	Dwfl_Module *mod;
	uint64_t base;   /* object address = runtime address - base */
	struct symbol *syms;
	size_t nsyms;
	bool syms_loaded;
	bool perf;                 /* perf's choice among aliases (tachi_sym_set_perf_rules) */
	char *plt_names;           /* perf's made-up NAME@plt symbols' names */
	struct unit **units;       /* DWARF units walked so far */
	size_t nunits, units_cap;
	struct tachi_idset unit_index;
	struct unit *last;         /* the last one asked for: the next address is often in it */
};

struct named {
	const Dwarf *dbg;  /* NULL: an empty slot */
	Dwarf_Off off;
	char *name;
	bool link;         /* the function has a linkage name */
};

struct tachi_sym {
	const struct tachi_warner *warn;
	struct tachi_symcache *cache; /* NULL: binaries are this symbolizer's own */
	char **dirs;
	size_t ndirs;
	char *debuginfo_path;
	Dwfl_Callbacks cb;
	bool symbolize;
	struct mapping *maps;
	size_t nmaps, cap;
	bool sorted;
	Dwarf_Die *chain;          /* scratch: the DIEs of one inline chain */
	size_t chain_cap;
	bool warned_depth;         /* an inline chain was cut (said once) */
	char name[4200];           /* a frame named by address or by module and offset */
	char io_error[4200];       /* tachi_sym_io_error's, "" before any */
	int names;                 /* TACHI_NAMES_* */
	bool perf;                 /* tachi_sym_set_perf_rules */
	bool perf_inlines;         /* within tachi_sym_lookup_inlines */
	bool costly_unit;          /* naming frames of a unit libdw's scope walks must not walk */
	const char *alias;         /* the global symbol at the address looked up, or NULL */
	char **made;               /* names demangled for the current lookup */
	size_t nmade, made_cap;
	struct named *named;       /* function names by DIE: demangled once per function */
	size_t named_cap, nnamed;  /* slots (a power of two or 0), used */
};

/* ---- names (symbolize/names.c) ----
 * A name these return is valid until the next tachi_sym_forget_names, which each lookup
 * starts with. */
void tachi_sym_forget_names(struct tachi_sym *s);
const char *tachi_sym_unversioned(struct tachi_sym *s, const char *name);
const char *tachi_sym_symbol_name(struct tachi_sym *s, const char *name);
const char *tachi_sym_die_name_cached(struct tachi_sym *s, Dwarf_Die *die, bool outer);

/* ---- one binary (symbolize/module.c); addr is an object address ---- */
/* Drops a reference; the last one frees it (and takes it out of its cache). */
void tachi_sym_module_free(struct module *m);
/* The cache's binary loaded as key says (found, file identity, base, perf rules, search
 * path), with a reference taken; NULL when it has none. */
struct module *tachi_symcache_find(struct tachi_symcache *c, const struct module *key);
/* Puts m (found and identity set) in c; false when out of memory (m is then c's no more). */
bool tachi_symcache_add(struct tachi_symcache *c, struct module *m);
void tachi_symcache_forget(struct tachi_symcache *c, struct module *m);
/* The name of the preferred ELF symbol holding addr, as recorded, or NULL; global_: only
 * an exported one (global, default visibility, typed). */
const char *tachi_sym_symbol_at(struct module *m, uint64_t addr);
const char *tachi_sym_global_symbol_at(struct module *m, uint64_t addr);
/* Emits the inline chain at addr, innermost first, through emit in fr (which comes with
 * the address, the mapping, and the file for frames DWARF gives none); false when DWARF
 * does not know addr. When true, *rc is TACH_OK or emit's first non-zero result. */
bool tachi_sym_dwarf_frames(struct tachi_sym *s, struct module *m, uint64_t addr,
			    struct tachi_sym_frame *fr, tachi_sym_emit_fn emit, void *ctx, int *rc);

#endif
