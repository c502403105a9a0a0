/* Native address symbolization (symbolize/symbolize.c, symbolize/module.c, symbolize/names.c): the
 * mappings of a profiled process, the binaries behind them (found through a search path),
 * and libdwfl lookups of function, source file, line, column and inline chains. Internal;
 * used by the gperftools reader. */
#ifndef TACHFMT_SYMBOLIZE_H
#define TACHFMT_SYMBOLIZE_H

#include "base/base.h"

struct tachi_sym;

/* A mapping as the symbolizer knows it. build_id and flags are set once an address in it
 * was looked up with its file at hand; user is the caller's (0 until it sets it). */
struct tachi_sym_map {
	uint64_t start, limit, offset;
	const char *path;       /* as recorded */
	const char *build_id;   /* lowercase hex of the ELF build ID, or NULL */
	uint32_t flags;         /* TACH_MAPPING_*: what its file gave */
	uint32_t user;
};

/* One frame of a resolved address, innermost first. file is never NULL; line and col are
 * -1 when unknown. address is where the frame's code is (the leaf's PC, a return address
 * minus one, as pprof records them); map is NULL outside every mapping; inlined: inlined
 * into the next frame, which has the same address. The strings are valid until the next
 * tachi_sym_lookup call, map until the next tachi_sym_add_map. A frame with no symbol is
 * named <file's base name>+0x<file offset> (tachfmt(5)), or 0x<PC> outside any file. */
struct tachi_sym_frame {
	const char *file, *func;
	int32_t line, col;
	uint64_t address;
	struct tachi_sym_map *map;
	bool inlined;
	bool perf_elf;          /* named by perf's ELF rule (func NULL: no symbol), not DWARF */
};
typedef int (*tachi_sym_emit_fn)(void *ctx, const struct tachi_sym_frame *f);

/* Binaries loaded once for every symbolizer given the cache (readers of one run whose
 * inputs come from the same machine: tach-merge's), and what a format keeps beside them
 * (the perf.data reader's kernel symbols). A binary is shared where its file (device,
 * inode, size and time), load bias, naming rules and search path are the same, and let go
 * when the last symbolizer using it is freed. Counted references: freed with the last of
 * tachi_symcache_unref and the symbolizers set to it. One thread at a time uses a cache
 * and its symbolizers. */
struct tachi_symcache;
struct tachi_symcache *tachi_symcache_new(void);
void tachi_symcache_ref(struct tachi_symcache *c);
void tachi_symcache_unref(struct tachi_symcache *c);
/* Before the first lookup. */
void tachi_sym_set_cache(struct tachi_sym *s, struct tachi_symcache *c);
/* The one thing a format keeps in the cache (NULL until set), freed with it by free_fn. */
void *tachi_symcache_extra(const struct tachi_symcache *c);
void tachi_symcache_set_extra(struct tachi_symcache *c, void *extra, void (*free_fn)(void *));

/* search_path: colon-separated directories where binaries are looked for when they are
 * not at the recorded path (NULL or "" for none). With symbolize false only mappings are
 * used: frames get the mapping's path and the address. Returns NULL on allocation failure. */
struct tachi_sym *tachi_sym_new(const struct tachi_warner *warn, const char *search_path,
				bool symbolize);
void tachi_sym_free(struct tachi_sym *s);

/* How functions are named: demangled with scope, template arguments and parameters (the
 * default), the DWARF short name (symbol names demangled without parameters), or the
 * linkage or symbol name as recorded. */
enum { TACHI_NAMES_FULL, TACHI_NAMES_SHORT, TACHI_NAMES_MANGLED };
void tachi_sym_set_names(struct tachi_sym *s, int names);

/* Names frames as Linux perf does (tools/perf/util/symbol.c, symbol-elf.c), for the
 * perf.data reader: ELF symbols only, no DWARF names nor inline chains; among the symbols
 * at one address the one perf's choose_best_symbol prefers; a symbol of no size reaching
 * to the next, demangled without parameters (perf's default). A frame with no symbol then
 * has func NULL, named by the caller. */
void tachi_sym_set_perf_rules(struct tachi_sym *s);
/* Under perf's rules, the frames perf script gives an address of a --call-graph dwarf
 * chain (its append_inlines, through addr2line): DWARF's inline chain at pc, innermost
 * first, where the binary has DWARF from a compiler for it, else tachi_sym_lookup's ELF
 * symbol (perf_elf set). pc is looked up as it is. */
int tachi_sym_lookup_inlines(struct tachi_sym *s, uint64_t pc, tachi_sym_emit_fn emit, void *ctx);

/* Adds an executable mapping [start, limit) of the file path (len bytes, may be empty for an
 * anonymous mapping) at file offset offset. Returns TACH_OK or TACH_E_NOMEM. */
int tachi_sym_add_map(struct tachi_sym *s, uint64_t start, uint64_t limit, uint64_t offset,
		      const char *path, size_t len);
size_t tachi_sym_map_count(const struct tachi_sym *s);

/* What failed when a lookup returned TACH_E_IO: a binary that could not be opened for want
 * of file descriptors (naming its frames as if it were missing would be a wrong answer). */
const char *tachi_sym_io_error(const struct tachi_sym *s);

/* Resolves the address pc taken from a stack (leaf: the sampled PC; otherwise a return
 * address, looked up at pc - 1) and calls emit once per frame, innermost first. Returns
 * TACH_OK, or emit's non-zero result, or TACH_E_NOMEM, or TACH_E_IO (tachi_sym_io_error). */
int tachi_sym_lookup(struct tachi_sym *s, uint64_t pc, bool leaf, tachi_sym_emit_fn emit,
		     void *ctx);

/* Under perf's rules, the symbol tachi_sym_lookup(s, pc, true, ...) names, as a key:
 * *raw is the same for every address of one symbol while s lives, NULL where the lookup
 * would give no symbol. Returns TACH_OK or TACH_E_IO, as tachi_sym_lookup. */
int tachi_sym_perf_symbol(struct tachi_sym *s, uint64_t pc, const char **raw);

#endif
