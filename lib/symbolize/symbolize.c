/* Native symbolization with elfutils: each executable mapping of the profiled process is
 * matched to a binary on this machine (the recorded path, then a search path), its load
 * bias is computed as google/pprof computes it (internal/elfexec GetBase), and addresses
 * are resolved through libdwfl: DWARF function names, source lines, columns and inline
 * chains, ELF symbols where there is no DWARF, the bare address where there is nothing.
 *
 * Every binary is reported at bias 0 in a Dwfl of its own, so libdwfl works in the
 * object's own address space and overlapping or odd mappings cannot confuse it; we
 * subtract the bias ourselves. This file holds the mappings, finds and opens their
 * binaries and names frames without a symbol; one binary's symbol and DWARF lookups are
 * in symbolize/module.c, how functions are named in symbolize/names.c.
 */
#include <dwarf.h>
#include <elfutils/libdwfl.h>
#include <errno.h>
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"
#include "symbolize/impl.h"

struct mapping {
	uint64_t start, limit, offset;
	char *path;      /* as recorded */
	size_t seq;      /* order added, for a stable sort */
	struct module *m;
	bool tried;
	struct tachi_sym_map pub;  /* what frames point at */
	char *build_id;
};

struct tachi_sym *tachi_sym_new(const struct tachi_warner *warn, const char *search_path,
				bool symbolize)
{
	struct tachi_sym *s = calloc(1, sizeof(*s));
	if (!s)
		return NULL;
	s->warn = warn;
	s->symbolize = symbolize;
	/* Idempotent; libelf needs it before the first elf_begin. */
	elf_version(EV_CURRENT);
	size_t plen = search_path ? strlen(search_path) : 0;
	/* libdwfl's default, then our directories: they are searched by build ID
	 * (DIR/.build-id/xx/yyyy.debug) and by debuglink name. */
	static const char dflt[] = ":.debug:/usr/lib/debug";
	s->debuginfo_path = malloc(sizeof(dflt) + plen + 1);
	if (!s->debuginfo_path) {
		free(s);
		return NULL;
	}
	strcpy(s->debuginfo_path, dflt);
	for (const char *p = search_path; p && *p;) {
		const char *c = strchr(p, ':');
		size_t n = c ? (size_t)(c - p) : strlen(p);
		if (n) {
			char **nd = realloc(s->dirs, (s->ndirs + 1) * sizeof(*nd));
			char *d = strndup(p, n);
			if (!nd || !d) {
				free(d);
				if (nd)
					s->dirs = nd;
				tachi_sym_free(s);
				return NULL;
			}
			s->dirs = nd;
			s->dirs[s->ndirs++] = d;
			/* Relative entries would mean "beside the binary" to libdwfl. */
			if (d[0] == '/') {
				strcat(s->debuginfo_path, ":");
				strcat(s->debuginfo_path, d);
			}
		}
		p = c ? c + 1 : p + n;
	}
	s->cb.find_elf = dwfl_build_id_find_elf;
	s->cb.find_debuginfo = dwfl_standard_find_debuginfo;
	s->cb.section_address = dwfl_offline_section_address;
	s->cb.debuginfo_path = &s->debuginfo_path;
	return s;
}

void tachi_sym_set_cache(struct tachi_sym *s, struct tachi_symcache *c)
{
	tachi_symcache_ref(c);
	tachi_symcache_unref(s->cache);
	s->cache = c;
}

void tachi_sym_free(struct tachi_sym *s)
{
	if (!s)
		return;
	for (size_t i = 0; i < s->nmaps; i++) {
		tachi_sym_module_free(s->maps[i].m);
		free(s->maps[i].path);
		free(s->maps[i].build_id);
	}
	tachi_symcache_unref(s->cache);
	free(s->maps);
	for (size_t i = 0; i < s->ndirs; i++)
		free(s->dirs[i]);
	free(s->dirs);
	free(s->debuginfo_path);
	free(s->chain);
	tachi_sym_forget_names(s);
	free(s->made);
	for (size_t i = 0; i < s->named_cap; i++)
		free(s->named[i].name);
	free(s->named);
	free(s);
}

int tachi_sym_add_map(struct tachi_sym *s, uint64_t start, uint64_t limit, uint64_t offset,
		      const char *path, size_t len)
{
	if (!TACHI_RESERVE(s->maps, s->cap, s->nmaps + 1))
		return TACH_E_NOMEM;
	char *p = strndup(path, len);
	if (!p)
		return TACH_E_NOMEM;
	s->maps[s->nmaps] = (struct mapping){
		start, limit, offset, p, s->nmaps, NULL, false,
		{ start, limit, offset, p, NULL, 0, 0 }, NULL,
	};
	s->nmaps++;
	s->sorted = false;
	return TACH_OK;
}

const char *tachi_sym_io_error(const struct tachi_sym *s)
{
	return s->io_error;
}

size_t tachi_sym_map_count(const struct tachi_sym *s)
{
	return s->nmaps;
}

static int map_cmp(const void *a, const void *b)
{
	const struct mapping *x = a, *y = b;
	if (x->start != y->start)
		return x->start < y->start ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The mapping holding addr, as pprof assigns locations: start <= addr < limit, else a
 * mapping with a file offset whose start - offset <= addr < start. */
static struct mapping *find_map(struct tachi_sym *s, uint64_t addr)
{
	if (!s->sorted) {
		qsort(s->maps, s->nmaps, sizeof(*s->maps), map_cmp);
		s->sorted = true;
	}
	size_t lo = 0, hi = s->nmaps;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (s->maps[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* Mappings may overlap in junk input: the latest start at or below addr first. */
	for (size_t i = lo; i-- > 0;) {
		if (addr < s->maps[i].limit)
			return &s->maps[i];
		if (i + 8 < lo)
			break;
	}
	for (size_t i = 0; i < s->nmaps; i++) {
		const struct mapping *m = &s->maps[i];
		if (m->offset && m->start >= m->offset && m->start - m->offset <= addr && addr < m->start)
			return &s->maps[i];
	}
	return NULL;
}

/* Names pprof never tries to open. */
static bool unsymbolizable(const char *p)
{
	return !p[0] || p[0] == '[' || !strncmp(p, "linux-vdso", 10) || !strncmp(p, "/dev/", 5) ||
	       !strncmp(p, "//anon", 6) || !strncmp(p, "/memfd:", 7);
}

/* ---- load bias (pprof internal/elfexec) ---- */

#define PAGE 4096u

/* The PT_LOAD segment behind a mapping at file offset off of size sz, or NULL. */
static bool load_segment(Elf *e, uint64_t off, uint64_t sz, GElf_Phdr *out)
{
	size_t n;
	if (elf_getphdrnum(e, &n))
		return false;
	uint64_t lim = off + sz;
	if (lim < off)
		lim = UINT64_MAX;
	int found = 0;
	GElf_Phdr first = { 0 }, hit = { 0 };
	bool has_hit = false;
	for (size_t i = 0; i < n; i++) {
		GElf_Phdr ph;
		if (!gelf_getphdr(e, (int)i, &ph) || ph.p_type != PT_LOAD || ph.p_filesz == 0)
			continue;
		uint64_t seg_lim = ph.p_offset + ph.p_memsz;
		if (!(off < seg_lim && ph.p_offset < lim))
			continue;
		uint64_t aligned = ph.p_offset > (ph.p_vaddr & (PAGE - 1)) ?
			ph.p_offset - (ph.p_vaddr & (PAGE - 1)) : 0;
		if (off < aligned)
			continue;
		if (off > ph.p_offset && seg_lim < off + PAGE && lim >= seg_lim + PAGE)
			continue;
		if (!found++)
			first = ph;
		if (!has_hit && ph.p_offset <= off && off < ph.p_offset + ph.p_filesz) {
			hit = ph;
			has_hit = true;
		}
	}
	if (!found)
		return false;
	*out = found > 1 && has_hit ? hit : first;
	return true;
}

static bool get_base(Elf *e, const struct mapping *m, uint64_t *base)
{
	GElf_Ehdr eh;
	if (!gelf_getehdr(e, &eh))
		return false;
	GElf_Phdr seg;
	bool has = m->start < m->limit && m->limit < (1ull << 63) &&
		   load_segment(e, m->offset, m->limit - m->start, &seg);
	switch (eh.e_type) {
	case ET_EXEC:
		*base = has && m->start > 0 ? m->start - m->offset + seg.p_offset - seg.p_vaddr : 0;
		return true;
	case ET_DYN:
		*base = has ? m->start - m->offset + seg.p_offset - seg.p_vaddr : m->start - m->offset;
		return true;
	default:
		return false;
	}
}

/* Opens path if it is a regular ELF file; returns the fd or -1. */
static int open_elf(const char *path)
{
	/* a FIFO or a device named by a mapping is never opened for reading */
	int fd = tachi_open_regular(path, NULL);
	if (fd < 0)
		return -1;
	unsigned char magic[4];
	if (pread(fd, magic, 4, 0) != 4 ||
	    memcmp(magic, ELFMAG, SELFMAG)) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Out of file descriptors: every later open would fail the same way. */
static bool no_fds(void)
{
	return errno == EMFILE || errno == ENFILE;
}

/* The recorded path, then DIR/basename and DIR/recorded-path for each search dir; -1 when
 * none is there, -2 when out of file descriptors. */
static int locate(struct tachi_sym *s, const char *path, char *found, size_t cap)
{
	int fd = open_elf(path);
	if (fd >= 0) {
		snprintf(found, cap, "%s", path);
		return fd;
	}
	if (no_fds())
		return -2;
	const char *base = strrchr(path, '/');
	base = base ? base + 1 : path;
	for (size_t i = 0; i < s->ndirs; i++) {
		for (int k = 0; k < 2; k++) {
			const char *tail = k ? path : base;
			int n = snprintf(found, cap, "%s%s%s", s->dirs[i],
					 tail[0] == '/' ? "" : "/", tail);
			if (n < 0 || (size_t)n >= cap)
				continue;
			if ((fd = open_elf(found)) >= 0)
				return fd;
			if (no_fds())
				return -2;
		}
	}
	return -1;
}

/* What tells one file from another for the cache: a file replaced or rewritten between
 * two inputs' lookups is another binary. */
static void identify(struct module *mod, int fd)
{
	struct stat st;
	if (fstat(fd, &st))
		return;
	mod->dev = (uint64_t)st.st_dev;
	mod->ino = (uint64_t)st.st_ino;
	mod->size = (uint64_t)st.st_size;
	mod->mtime_ns = (uint64_t)st.st_mtim.tv_sec * 1000000000u + (uint64_t)st.st_mtim.tv_nsec;
}

static struct module *load_module(struct tachi_sym *s, const struct mapping *m)
{
	char found[4096];
	int fd = locate(s, m->path, found, sizeof(found));
	if (fd == -2) {
		snprintf(s->io_error, sizeof(s->io_error), "%.4096s: cannot be opened: %s", m->path,
			 strerror(EMFILE));
		return NULL;
	}
	if (fd < 0) {
		tachi_warn(s->warn, TACH_POS_NONE, 0,
			   "%s: binary not found (tried the recorded path and %zu --binary-path "
			   "directories); its frames are named by module and file offset", m->path, s->ndirs);
		return NULL;
	}
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	uint64_t base = 0;
	bool ok = e && get_base(e, m, &base);
	if (e)
		elf_end(e);
	if (!ok) {
		close(fd);
		tachi_warn(s->warn, TACH_POS_NONE, 0, "%s: not an executable or shared object", found);
		return NULL;
	}
	struct module *mod = calloc(1, sizeof(*mod)), *had;
	if (!mod || !(mod->found = strdup(found)) ||
	    !(mod->debuginfo_path = strdup(s->debuginfo_path))) {
		close(fd);
		tachi_sym_module_free(mod);
		return NULL;
	}
	mod->refs = 1;
	mod->base = base;
	mod->perf = s->perf;
	identify(mod, fd);
	if (s->cache && (had = tachi_symcache_find(s->cache, mod))) {
		close(fd);
		tachi_sym_module_free(mod);
		return had;
	}
	mod->cb = s->cb;
	mod->cb.debuginfo_path = &mod->debuginfo_path;
	mod->dwfl = dwfl_begin(&mod->cb);
	if (!mod->dwfl) {
		close(fd);
		tachi_sym_module_free(mod);
		return NULL;
	}
	dwfl_report_begin(mod->dwfl);
	/* Bias 0: libdwfl works in object addresses; the bias is applied in lookups. */
	mod->mod = dwfl_report_elf(mod->dwfl, found, found, fd, 0, true);
	if (!mod->mod)
		close(fd);
	dwfl_report_end(mod->dwfl, NULL, NULL);
	if (!mod->mod) {
		tachi_warn(s->warn, TACH_POS_NONE, 0, "%s: %s", found, dwfl_errmsg(-1));
		tachi_sym_module_free(mod);
		return NULL;
	}
	/* out of memory for the list: the binary is still this symbolizer's own */
	if (s->cache)
		(void)tachi_symcache_add(s->cache, mod);
	return mod;
}

/* Names a frame that has no symbol: by module and file offset when the mapping names a
 * file, so that it stays symbolizable where no mapping table goes (TACH, folded stacks);
 * by its PC, as before, outside any mapping or in an anonymous one. A module+offset frame
 * has no line, so its column (which CPython drops when there is no line) keeps the file
 * offset its mapping starts at, as the profile's memory map says: where the executable
 * segment is, which a symbolizer needs without the binary at hand (tachfmt(5)). */
static const char *unnamed(struct tachi_sym *s, const struct mapping *m, uint64_t pc,
			   uint64_t addr, int32_t *col)
{
	*col = -1;
	if (!m || !m->path[0]) {
		snprintf(s->name, sizeof(s->name), "0x%llx", (unsigned long long)pc);
		return s->name;
	}
	const char *base = strrchr(m->path, '/');
	base = base && base[1] ? base + 1 : m->path;
	/* Wraps back into range for an address below start (find_map's offset rule). */
	uint64_t off = addr - m->start + m->offset;
	if (m->offset <= INT32_MAX)
		*col = (int32_t)m->offset;
	snprintf(s->name, sizeof(s->name), "%.4096s+0x%llx", base, (unsigned long long)off);
	return s->name;
}

/* The build ID and what the file gives, for its frames' native data: functions where it
 * has symbols or DWARF, file names, lines and inline chains where it has DWARF. */
static void describe(struct mapping *m)
{
	const unsigned char *bits;
	GElf_Addr vaddr;
	int n = dwfl_module_build_id(m->m->mod, &bits, &vaddr);
	/* GNU build IDs are 8 to 20 bytes; anything up to 64 is kept. */
	if (n > 0 && n <= 64 && (m->build_id = malloc((size_t)n * 2 + 1))) {
		for (int i = 0; i < n; i++)
			snprintf(m->build_id + 2 * i, 3, "%02x", bits[i]);
		m->pub.build_id = m->build_id;
	}
	Dwarf_Addr bias;
	/* perf's rules read no DWARF: its sections are not even inflated */
	bool dw = !m->m->perf && dwfl_module_getdwarf(m->m->mod, &bias) != NULL;
	bool syms = dwfl_module_getsymtab(m->m->mod) > 0;
	m->pub.flags = (dw || syms ? TACH_MAPPING_HAS_FUNCTIONS : 0) |
		       (dw ? TACH_MAPPING_HAS_FILENAMES | TACH_MAPPING_HAS_LINE_NUMBERS |
			     TACH_MAPPING_HAS_INLINE_FRAMES : 0);
}

void tachi_sym_set_perf_rules(struct tachi_sym *s)
{
	s->perf = true;
	/* perf demangles without parameters or return types unless verbose (symbol-elf.c) */
	s->names = TACHI_NAMES_SHORT;
}

/* Whether the code at obj was assembled from assembly: addr2line (binutils), which
 * perf script asks for inline chains, names such code by its ELF symbol, not by what an
 * assembler's DWARF says. */
static bool assembled(struct module *mod, uint64_t obj)
{
	Dwarf_Addr bias;
	Dwarf_Die *cu = dwfl_module_addrdie(mod->mod, obj, &bias);
	Dwarf_Attribute a;
	const char *p = cu && dwarf_attr(cu, DW_AT_producer, &a) ? dwarf_formstring(&a) : NULL;
	return !cu || (p && !strncmp(p, "GNU AS", 6));
}

int tachi_sym_lookup_inlines(struct tachi_sym *s, uint64_t pc, tachi_sym_emit_fn emit, void *ctx)
{
	s->perf_inlines = true;
	int rc = tachi_sym_lookup(s, pc, true, emit, ctx);
	s->perf_inlines = false;
	return rc;
}

/* perf's naming: the ELF symbol or nothing (NULL: the caller names it as perf does). */
static int perf_lookup(struct tachi_sym *s, struct mapping *m, struct tachi_sym_frame *fr,
		       tachi_sym_emit_fn emit, void *ctx)
{
	const char *sym = m && m->m ? tachi_sym_symbol_at(m->m, fr->address - m->m->base) : NULL;
	fr->func = sym ? tachi_sym_symbol_name(s, sym) : NULL;
	fr->perf_elf = true;
	return emit(ctx, fr);
}

/* What tachi_sym_lookup's perf rule picks for a leaf pc, before any naming: the symbol's
 * name as the binary spells it, the same pointer for every address of one symbol. */
int tachi_sym_perf_symbol(struct tachi_sym *s, uint64_t pc, const char **raw)
{
	*raw = NULL;
	struct mapping *m = s->nmaps ? find_map(s, pc) : NULL;
	if (!s->perf || s->perf_inlines || !m || !s->symbolize || unsymbolizable(m->path))
		return TACH_OK;
	if (!m->tried) {
		m->tried = true;
		if ((m->m = load_module(s, m)))
			describe(m);
		else if (s->io_error[0])
			return TACH_E_IO;
	}
	*raw = m->m ? tachi_sym_symbol_at(m->m, pc - m->m->base) : NULL;
	return TACH_OK;
}

int tachi_sym_lookup(struct tachi_sym *s, uint64_t pc, bool leaf, tachi_sym_emit_fn emit,
		     void *ctx)
{
	/* Callers' PCs are return addresses: pc - 1 lies inside the call instruction. */
	uint64_t addr = leaf || pc == 0 ? pc : pc - 1;
	tachi_sym_forget_names(s);
	struct mapping *m = s->nmaps ? find_map(s, addr) : NULL;
	struct tachi_sym_frame fr = { m && m->path[0] ? m->path : "[unknown]", NULL, -1, -1, addr,
				      m ? &m->pub : NULL, false, false };
	if (!m || !s->symbolize || unsymbolizable(m->path)) {
		if (s->perf)
			return perf_lookup(s, NULL, &fr, emit, ctx);
		fr.func = unnamed(s, m, pc, addr, &fr.col);
		return emit(ctx, &fr);
	}
	if (!m->tried) {
		m->tried = true;
		if ((m->m = load_module(s, m)))
			describe(m);
		else if (s->io_error[0])
			return TACH_E_IO;
	}
	if (s->perf && !(s->perf_inlines && m->m && !assembled(m->m, addr - m->m->base)))
		return perf_lookup(s, m, &fr, emit, ctx);
	if (!m->m) {
		fr.func = unnamed(s, m, pc, addr, &fr.col);
		return emit(ctx, &fr);
	}
	uint64_t obj = addr - m->m->base;
	int rc = TACH_OK;
	s->alias = tachi_sym_unversioned(s, tachi_sym_global_symbol_at(m->m, obj));
	if (tachi_sym_dwarf_frames(s, m->m, obj, &fr, emit, ctx, &rc))
		return rc;
	if (s->perf)
		return perf_lookup(s, m, &fr, emit, ctx);
	const char *sym = tachi_sym_symbol_at(m->m, obj);
	fr.func = sym ? tachi_sym_symbol_name(s, sym) : unnamed(s, m, pc, addr, &fr.col);
	return emit(ctx, &fr);
}
