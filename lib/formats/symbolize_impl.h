/* What the symbolizer's files share (symbolize.c: mappings, binaries and lookups;
 * symbolize_names.c: how functions are named): the symbolizer's state and the calls
 * between the files. Private to them; the gperftools reader uses symbolize.h. */
#ifndef TACHFMT_FMT_SYMBOLIZE_IMPL_H
#define TACHFMT_FMT_SYMBOLIZE_IMPL_H

#include <elfutils/libdw.h>
#include <elfutils/libdwfl.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "formats/symbolize.h"

struct mapping;

struct named {
	const Dwarf *dbg;  /* NULL: an empty slot */
	Dwarf_Off off;
	char *name;
	bool link;         /* the function has a linkage name */
};

struct tachi_sym {
	const struct tachi_warner *warn;
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
	int names;                 /* TACHI_NAMES_* */
	const char *alias;         /* the global symbol at the address looked up, or NULL */
	char **made;               /* names demangled for the current lookup */
	size_t nmade, made_cap;
	struct named *named;       /* function names by DIE: demangled once per function */
	size_t named_cap, nnamed;  /* slots (a power of two or 0), used */
};

/* ---- names (symbolize_names.c) ----
 * A name these return is valid until the next tachi_sym_forget_names, which each lookup
 * starts with. */
void tachi_sym_forget_names(struct tachi_sym *s);
const char *tachi_sym_unversioned(struct tachi_sym *s, const char *name);
const char *tachi_sym_symbol_name(struct tachi_sym *s, const char *name);
const char *tachi_sym_die_name_cached(struct tachi_sym *s, Dwarf_Die *die, bool outer);

#endif
