/* The raw form of V8's tick log (read.c has the rules both forms share): the CSV lines
 * `node --prof` writes to isolate-0x...-v8.log, read as node's tick processor reads them
 * with --preprocess (V8's tools/tickprocessor.mjs, profile.mjs's JsonProfile, codemap.mjs,
 * logreader.mjs, csvparser.mjs), into the code entries and ticks its JSON would hold.
 *
 * Lines: split at commas, each field's escapes decoded (\n, \\, \xHH, \uHHHH, a surrogate
 * pair one character, a lone surrogate U+FFFD as node's JSON of it reads; a quote is a
 * character like any other, so node 8's quoted names keep their quotes, as today's tick
 * processor keeps them); the first field names the record:
 * - shared-library,NAME,START,END,SLIDE: a library, a SHARED_LIB entry; its pages (4 KiB,
 *   numbered modulo 2^32 as the tick processor's int32 arithmetic numbers them) are looked
 *   up as C++ code, never as JIT code. The tick processor reads the library's symbols with
 *   nm: here the project's ELF symbolizer reads them from the library file (its symbol
 *   table, the symbol at an address as perf picks it, named as nm -C names it: demangled
 *   with parameters, an ELF version kept), each symbol a CPP entry. Without the file (a
 *   log from another machine) or with symbolize off, addresses in it are the library's
 *   entry, as the tick processor names them when nm finds nothing.
 * - code-creation,TYPE,KIND,TIMESTAMP,START,SIZE,NAME[,SFI,STATE]: with a function (SFI and
 *   a state: "" compiled, ~ ignition, ^ sparkplug, + maglev, * turbofan) and TYPE not
 *   RegExp, a JS entry named NAME whose kind the state gives (any entry that starts at
 *   START goes: JsonProfile keeps none), its function's address a zero-size entry (which
 *   hides the code below it from lookups past it, as in the tick processor's map); a line
 *   whose state is none of those is passed over, as the tick processor passes it; else a
 *   CODE entry of kind TYPE (one that starts inside a C++ symbol takes that symbol's
 *   entry's place, the tick processor's JsonProfile reuse). An entry covers [START,
 *   START+SIZE) and removes those it overlaps.
 * - code-move,FROM,TO and sfi-move,FROM,TO (when an entry starts at FROM): the entry moves,
 *   removing those it then overlaps. code-delete is not in the tick processor's table:
 *   a deleted entry stays until another covers it, and so it does here.
 * - tick,PC,TIME,EXTERNAL,TOS,VM,FRAME...: PC (TOS when EXTERNAL is set) then the frames,
 *   "+N"/"-N" an offset from the previous offset-given frame (or PC), "o..." (overflow)
 *   dropped; each address resolved to its entry, or left out (speedscope skips -1). TIME
 *   is the tick's tm (µs).
 * - profiler,begin,N: the sampling interval, N µs (meta.interval_us).
 * Others are passed over. Reading stops at an empty line (the tick processor's loop does);
 * a last line without its newline is left out with a warning (the tick processor warns
 * of a broken file and leaves it out).
 *
 * Refused with the line: input whose first line is no v8-version record (at offset 0), a
 * record of those above with too few fields, or an address, size, time or VM state that
 * is no number (parseInt's syntax: decimal, 0x hex, a sign), a tick time before 0 or past
 * 2^63/1000 µs, a stack deeper than max-depth, more than 4096 shared-library records,
 * more ticks than max-samples. */
#include <stdlib.h>
#include <string.h>

#include <libiberty/demangle.h>

#include "base/base.h"
#include "base/hash.h"
#include "core/handles.h"
#include "formats/native_syms.h"
#include "formats/v8log/read.h"
#include "symbolize/symbolize.h"

#define NIL UINT32_MAX
#define NO_CODE UINT32_MAX
#define MAX_LIBS 4096u
#define MAX_FIELDS 4096u

/* ---- the JIT code map: an ordered map of start address to entry (a treap) ---- */

struct v8log_node {
	uint64_t key, size;
	uint32_t code, prio, left, right;
};

struct v8log_lib {
	uint64_t start, size;
	uint32_t code;
};

/* pages [lo, hi] of the 2^32 page numbers */
struct v8log_pages {
	uint32_t lo, hi;
};

struct v8log_sym {
	const char *raw;
	uint32_t code;
};

struct v8log_log {
	struct v8log_node *nodes;
	size_t nnodes, nodes_cap;
	uint32_t root, free_list, seed;
	struct v8log_lib *libs;
	size_t nlibs, libs_cap;
	struct v8log_pages *pages;
	size_t npages, pages_cap;
	struct tachi_sym *sym;
	struct v8log_sym *syms;
	size_t nsyms, syms_cap;
	struct tachi_idset sym_index;
	size_t lib_lines;
	const char *fields[MAX_FIELDS];
	size_t lens[MAX_FIELDS];
	size_t nf;
	char *field;              /* a field's decoded text */
	size_t field_cap;
};

static struct v8log_log *lg(struct tach_reader *r)
{
	return ((struct v8log_state *)r->state)->log;
}

static uint32_t node_new(struct v8log_log *L, uint64_t key, uint64_t size, uint32_t code)
{
	uint32_t i;
	if (L->free_list != NIL) {
		i = L->free_list;
		L->free_list = L->nodes[i].left;
	} else {
		if (L->nnodes >= NIL - 1 || !TACHI_RESERVE(L->nodes, L->nodes_cap, L->nnodes + 1))
			return NIL;
		i = (uint32_t)L->nnodes++;
	}
	/* xorshift32: priorities the input cannot choose, the same every run */
	L->seed ^= L->seed << 13;
	L->seed ^= L->seed >> 17;
	L->seed ^= L->seed << 5;
	L->nodes[i] = (struct v8log_node){ key, size, code, L->seed, NIL, NIL };
	return i;
}

/* t's keys below key into *a, the rest into *b. */
static void split(struct v8log_log *L, uint32_t t, uint64_t key, uint32_t *a, uint32_t *b)
{
	if (t == NIL) {
		*a = *b = NIL;
		return;
	}
	struct v8log_node *n = &L->nodes[t];
	if (n->key < key) {
		split(L, n->right, key, &n->right, b);
		*a = t;
	} else {
		split(L, n->left, key, a, &n->left);
		*b = t;
	}
}

static uint32_t merge(struct v8log_log *L, uint32_t a, uint32_t b)
{
	if (a == NIL || b == NIL)
		return a == NIL ? b : a;
	if (L->nodes[a].prio > L->nodes[b].prio) {
		L->nodes[a].right = merge(L, L->nodes[a].right, b);
		return a;
	}
	L->nodes[b].left = merge(L, a, L->nodes[b].left);
	return b;
}

/* The node with the greatest key <= key, or NIL. */
static uint32_t greatest_le(const struct v8log_log *L, uint64_t key)
{
	uint32_t t = L->root, best = NIL;
	while (t != NIL) {
		if (L->nodes[t].key <= key) {
			best = t;
			t = L->nodes[t].right;
		} else {
			t = L->nodes[t].left;
		}
	}
	return best;
}

static uint32_t find(const struct v8log_log *L, uint64_t key)
{
	uint32_t t = greatest_le(L, key);
	return t != NIL && L->nodes[t].key == key ? t : NIL;
}

/* The splay tree's insert: a key already there keeps its entry. */
static int insert(struct tach_reader *r, uint64_t key, uint64_t size, uint32_t code)
{
	struct v8log_log *L = lg(r);
	if (find(L, key) != NIL)
		return TACH_OK;
	uint32_t n = node_new(L, key, size, code), a, b;
	if (n == NIL)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	split(L, L->root, key, &a, &b);
	L->root = merge(L, merge(L, a, n), b);
	return TACH_OK;
}

/* Removes key's node; false when there is none. */
static bool remove_key(struct v8log_log *L, uint64_t key, struct v8log_node *out)
{
	uint32_t t = find(L, key), a, b, m, c;
	if (t == NIL)
		return false;
	*out = L->nodes[t];
	split(L, L->root, key, &a, &b);
	if (key == UINT64_MAX) {
		m = b;
		c = NIL;
	} else {
		split(L, b, key + 1, &m, &c);
	}
	L->nodes[m].left = L->free_list;
	L->free_list = m;
	L->root = merge(L, a, c);
	return true;
}

static uint64_t end_of(uint64_t start, uint64_t size)
{
	return start + size < start ? UINT64_MAX : start + size;
}

/* codemap's deleteAllCoveredNodes_: the entries that overlap [start, end), walking down
 * from end; a zero-size entry at start itself stays. */
static void delete_covered(struct v8log_log *L, uint64_t start, uint64_t end)
{
	if (end <= start)
		return;
	uint64_t addr = end - 1;
	for (;;) {
		uint32_t t = greatest_le(L, addr);
		if (t == NIL)
			return;
		struct v8log_node n = L->nodes[t], gone;
		if (n.key < end && start < end_of(n.key, n.size))
			remove_key(L, n.key, &gone);
		if (n.key == 0 || n.key - 1 < start)
			return;
		addr = n.key - 1;
	}
}

static int add_dynamic(struct tach_reader *r, uint64_t start, uint64_t size, uint32_t code)
{
	delete_covered(lg(r), start, end_of(start, size));
	return insert(r, start, size, code);
}

/* ---- libraries and their symbols ---- */

static bool page_marked(const struct v8log_log *L, uint64_t addr)
{
	uint32_t p = (uint32_t)(addr >> 12);
	for (size_t lo = 0, hi = L->npages; lo < hi;) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->pages[mid].hi < p)
			lo = mid + 1;
		else if (L->pages[mid].lo > p)
			hi = mid;
		else
			return true;
	}
	return false;
}

/* Marks pages [a, b] (< 2^32), kept sorted and merged. */
static int mark(struct tach_reader *r, uint32_t a, uint32_t b)
{
	struct v8log_log *L = lg(r);
	if (!TACHI_RESERVE(L->pages, L->pages_cap, L->npages + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	size_t i = L->npages, k = 0;
	while (i > 0 && L->pages[i - 1].lo > a) {
		L->pages[i] = L->pages[i - 1];
		i--;
	}
	L->pages[i] = (struct v8log_pages){ a, b };
	L->npages++;
	for (size_t j = 1; j < L->npages; j++) {
		if ((uint64_t)L->pages[k].hi + 1 >= L->pages[j].lo) {
			if (L->pages[j].hi > L->pages[k].hi)
				L->pages[k].hi = L->pages[j].hi;
		} else {
			L->pages[++k] = L->pages[j];
		}
	}
	L->npages = k + 1;
	return TACH_OK;
}

/* codemap's markPages_: the page of start and of each 4 KiB step up to end. */
static int mark_pages(struct tach_reader *r, uint64_t start, uint64_t end)
{
	if (end < start)
		return TACH_OK;
	uint64_t first = start >> 12, last = (start + ((end - start) & ~(uint64_t)4095)) >> 12;
	if (last - first >= UINT32_MAX)
		return mark(r, 0, UINT32_MAX);
	uint32_t a = (uint32_t)first, b = (uint32_t)last;
	if (a <= b)
		return mark(r, a, b);
	int rc = mark(r, a, UINT32_MAX);
	return rc ? rc : mark(r, 0, b);
}

static int add_library(struct tach_reader *r, const char *name, size_t n, uint64_t start,
		       uint64_t end)
{
	struct v8log_log *L = lg(r);
	uint32_t code;
	int rc = tachi_v8log_add_code(r, V8L_LIB, V8L_K_NONE, name, n, &code);
	if (rc || (rc = mark_pages(r, start, end)))
		return rc;
	if (L->sym && end > start && tachi_sym_add_map(L->sym, start, end, 0, name, n))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	size_t i = 0;
	while (i < L->nlibs && L->libs[i].start < start)
		i++;
	if (i < L->nlibs && L->libs[i].start == start)
		return TACH_OK;
	if (!TACHI_RESERVE(L->libs, L->libs_cap, L->nlibs + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	memmove(L->libs + i + 1, L->libs + i, (L->nlibs - i) * sizeof(*L->libs));
	L->libs[i] = (struct v8log_lib){ start, end - start, code };
	if (end < start)
		L->libs[i].size = 0;
	L->nlibs++;
	return TACH_OK;
}

static uint32_t library_at(const struct v8log_log *L, uint64_t addr)
{
	size_t lo = 0, hi = L->nlibs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (L->libs[mid].start <= addr)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || addr - L->libs[lo - 1].start >= L->libs[lo - 1].size)
		return NO_CODE;
	return L->libs[lo - 1].code;
}

static bool sym_eq(void *ctx, uint32_t id, const void *key)
{
	return ((struct v8log_log *)ctx)->syms[id].raw == key;
}

/* raw as nm -C lists it: demangled with parameters, its ELF version kept after it. */
static int cpp_code(struct tach_reader *r, const char *raw, uint32_t *code)
{
	const char *at = strchr(raw, '@');
	size_t bn = at && at != raw ? (size_t)(at - raw) : strlen(raw);
	char *base = strndup(raw, bn), *d = NULL;
	if (!base)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	if (base[0] == '_')
		d = cplus_demangle(base, DMGL_ANSI | DMGL_PARAMS);
	const char *name = d ? d : base;
	size_t n = strlen(name), sn = strlen(raw + bn);
	char *full = malloc(n + sn + 1);
	int rc = TACH_OK;
	if (!full) {
		rc = RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	} else {
		memcpy(full, name, n);
		memcpy(full + n, raw + bn, sn + 1);
		rc = tachi_v8log_add_code(r, V8L_CPP, V8L_K_NONE, full, n + sn, code);
	}
	free(full);
	free(d);
	free(base);
	return rc;
}

/* The CPP entry of the library symbol at addr (NO_CODE: none), one per symbol. */
static int static_at(struct tach_reader *r, uint64_t addr, uint32_t *code)
{
	struct v8log_log *L = lg(r);
	const char *raw = NULL;
	*code = NO_CODE;
	if (!L->sym)
		return TACH_OK;
	if (tachi_sym_perf_symbol(L->sym, addr, &raw))
		return RFAIL(r, TACH_E_IO, TACH_POS_NONE, 0, "%s", tachi_sym_io_error(L->sym));
	if (!raw)
		return TACH_OK;
	uint64_t h = tachi_mix64((uint64_t)(uintptr_t)raw);
	uint32_t id;
	if (tachi_idset_find(&L->sym_index, h, raw, sym_eq, L, &id)) {
		*code = L->syms[id].code;
		return TACH_OK;
	}
	int rc = cpp_code(r, raw, code);
	if (rc)
		return rc;
	if (!TACHI_RESERVE(L->syms, L->syms_cap, L->nsyms + 1) ||
	    !tachi_idset_insert(&L->sym_index, h, (uint32_t)L->nsyms))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	L->syms[L->nsyms++] = (struct v8log_sym){ raw, *code };
	return TACH_OK;
}

/* codemap's findAddress: a library page's symbol or library, else the JIT entry that holds
 * addr; NO_CODE when none does. */
static int resolve(struct tach_reader *r, uint64_t addr, uint32_t *code)
{
	struct v8log_log *L = lg(r);
	*code = NO_CODE;
	if (page_marked(L, addr)) {
		int rc = static_at(r, addr, code);
		if (!rc && *code == NO_CODE)
			*code = library_at(L, addr);
		return rc;
	}
	if (L->root == NIL)
		return TACH_OK;
	uint32_t lo = L->root, hi = L->root;
	while (L->nodes[lo].left != NIL)
		lo = L->nodes[lo].left;
	while (L->nodes[hi].right != NIL)
		hi = L->nodes[hi].right;
	if (addr < L->nodes[lo].key || addr >= end_of(L->nodes[hi].key, L->nodes[hi].size))
		return TACH_OK;
	uint32_t t = greatest_le(L, addr);
	if (t != NIL && addr - L->nodes[t].key < L->nodes[t].size)
		*code = L->nodes[t].code;
	return TACH_OK;
}

/* ---- fields ---- */

static int bad_line(struct tach_reader *r, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "%s", what);
}

/* JavaScript's parseInt(s) where it gives a number: spaces, a sign, decimal digits or
 * 0x and hex digits, up to the first other character. */
static bool parse_int(const char *s, size_t n, int64_t *v)
{
	size_t i = 0;
	bool neg = false;
	while (i < n && (s[i] == ' ' || s[i] == '\t'))
		i++;
	if (i < n && (s[i] == '-' || s[i] == '+'))
		neg = s[i++] == '-';
	unsigned base = 10;
	if (i + 1 < n && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X')) {
		base = 16;
		i += 2;
	}
	uint64_t x = 0;
	size_t from = i;
	for (; i < n; i++) {
		unsigned c = (unsigned char)s[i], d = c - '0';
		if (base == 16 && d > 9)
			d = (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ? (c | 0x20) - 'a' + 10 : 99;
		if (d >= base)
			break;
		x = x > (UINT64_MAX - d) / base ? UINT64_MAX : x * base + d;
	}
	*v = neg ? -(int64_t)x : (int64_t)x;
	return i > from;
}

/* Field i as a number; what names it in the message. */
static int num(struct tach_reader *r, size_t i, const char *what, int64_t *v)
{
	struct v8log_log *L = lg(r);
	if (i >= L->nf || !parse_int(L->fields[i], L->lens[i], v))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "%.*s: %s is no number",
			     (int)L->lens[0], L->fields[0], what);
	return TACH_OK;
}

/* parseInt(s, 16) as String.fromCharCode takes it: the leading hex digits' value, 0 (NaN)
 * without one. */
static unsigned hexval(const char *s, size_t n)
{
	unsigned v = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned c = (unsigned char)s[i] | 0x20;
		unsigned d = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 : 16;
		if (d > 15)
			break;
		v = v * 16 + d;
	}
	return v;
}

/* One UTF-16 code unit as UTF-8 (a surrogate as U+FFFD) at out. */
static size_t put_unit(unsigned u, char *out)
{
	if (u >= 0xd800 && u <= 0xdfff)
		u = 0xfffd;
	if (u < 0x80) {
		out[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		out[0] = (char)(0xc0 | (u >> 6));
		out[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	out[0] = (char)(0xe0 | (u >> 12));
	out[1] = (char)(0x80 | ((u >> 6) & 0x3f));
	out[2] = (char)(0x80 | (u & 0x3f));
	return 3;
}

/* A character above U+FFFF as UTF-8 at out. */
static size_t put_pair(unsigned c, char *out)
{
	out[0] = (char)(0xf0 | (c >> 18));
	out[1] = (char)(0x80 | ((c >> 12) & 0x3f));
	out[2] = (char)(0x80 | ((c >> 6) & 0x3f));
	out[3] = (char)(0x80 | (c & 0x3f));
	return 4;
}

/* csvparser's escapeField into L->field: \n, \\, \xHH and \uHHHH (other letters take
 * four characters too); *len its length. */
static int decoded(struct tach_reader *r, size_t i, size_t *len)
{
	struct v8log_log *L = lg(r);
	const char *s = L->fields[i];
	size_t n = L->lens[i], k = 0;
	if (!TACHI_RESERVE(L->field, L->field_cap, n * 3 + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	for (size_t p = 0; p < n;) {
		if (s[p] != '\\') {
			L->field[k++] = s[p++];
			continue;
		}
		/* a backslash at the end: an escape of no digits, NaN, U+0000 */
		if (p + 1 >= n) {
			k += put_unit(0, L->field + k);
			break;
		}
		char e = s[p + 1];
		p += 2;
		if (e == 'n' || e == '\\') {
			L->field[k++] = e == 'n' ? '\n' : '\\';
			continue;
		}
		size_t w = e == 'x' ? 2 : 4, h = n - p < w ? n - p : w;
		unsigned u = hexval(s + p, h), lo;
		p += h;
		/* a high surrogate and a low one escaped after it are one character */
		if (u >= 0xd800 && u <= 0xdbff && p + 6 <= n && s[p] == '\\' && s[p + 1] != 'x' &&
		    s[p + 1] != 'n' && s[p + 1] != '\\' && (lo = hexval(s + p + 2, 4)) >= 0xdc00 &&
		    lo <= 0xdfff) {
			k += put_pair(0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00), L->field + k);
			p += 6;
			continue;
		}
		k += put_unit(u, L->field + k);
	}
	*len = k;
	return TACH_OK;
}

/* ---- records ---- */

/* profile.mjs's parseState: 0 compiled, 1 ignition, 2 sparkplug, 3 maglev, 4 turbofan;
 * -1 none of them. */
static int code_state(const char *s, size_t n)
{
	static const char *const states[] = { "", "~", "^", "+", "+'", "*", "*'" };
	static const int values[] = { 0, 1, 2, 3, 3, 4, 4 };
	for (int i = 0; i < 7; i++)
		if (strlen(states[i]) == n && !memcmp(states[i], s, n))
			return values[i];
	return -1;
}

/* JsonProfile.addFuncCode. */
static int func_code(struct tach_reader *r, uint64_t start, uint64_t size)
{
	struct v8log_log *L = lg(r);
	struct v8log_node gone;
	int64_t sfi;
	int rc = num(r, 7, "the function's address", &sfi);
	if (rc)
		return rc;
	if (find(L, (uint64_t)sfi) == NIL && (rc = insert(r, (uint64_t)sfi, 0, NO_CODE)))
		return rc;
	remove_key(L, start, &gone);
	size_t n;
	uint32_t code;
	if ((rc = decoded(r, 6, &n)) ||
	    (rc = tachi_v8log_add_code(r, V8L_JS, V8L_K_NONE, L->field, n, &code)))
		return rc;
	return add_dynamic(r, start, size, code);
}

/* JsonProfile.addCode: a CODE entry, in the place of the C++ symbol's it starts in. */
static int plain_code(struct tach_reader *r, uint64_t start, uint64_t size)
{
	struct v8log_state *st = r->state;
	struct v8log_log *L = lg(r);
	uint32_t code = NO_CODE;
	size_t n;
	int rc = TACH_OK;
	if (page_marked(L, start) && (rc = static_at(r, start, &code)))
		return rc;
	if ((rc = decoded(r, 1, &n)))
		return rc;
	uint8_t kind = (uint8_t)tachi_v8log_kind_of(L->field, n);
	if ((rc = decoded(r, 6, &n)))
		return rc;
	if (code == NO_CODE) {
		if ((rc = tachi_v8log_add_code(r, V8L_CODE, kind, L->field, n, &code)))
			return rc;
	} else {
		struct v8log_code *c = &st->codes[code];
		if (n > TACHI_MAX_STRING)
			return bad_line(r, "a code name longer than 1 MiB");
		if ((rc = tachi_v8log_add_text(r, L->field, n, &c->name)))
			return rc;
		c->name_len = (uint32_t)n;
		c->type = V8L_CODE;
		c->kind = kind;
	}
	return add_dynamic(r, start, size, code);
}

static int code_creation(struct tach_reader *r)
{
	struct v8log_log *L = lg(r);
	int64_t start, size, ts;
	int rc;
	if (L->nf < 7)
		return bad_line(r, "code-creation: fewer than 6 fields");
	if ((rc = num(r, 3, "the timestamp", &ts)) || (rc = num(r, 4, "the start", &start)) ||
	    (rc = num(r, 5, "the size", &size)))
		return rc;
	if (size < 0)
		size = 0;
	bool regexp = L->lens[1] == 6 && !memcmp(L->fields[1], "RegExp", 6);
	if (regexp || L->nf == 7)
		return plain_code(r, (uint64_t)start, (uint64_t)size);
	/* the entry's kind, which the state gives, is not shown: a state of none of
	 * parseState's is the tick processor's exception, and its line is passed over */
	if (L->nf < 9 || code_state(L->fields[8], L->lens[8]) < 0)
		return TACH_OK;
	return func_code(r, (uint64_t)start, (uint64_t)size);
}

static int code_move(struct tach_reader *r, bool sfi)
{
	struct v8log_log *L = lg(r);
	struct v8log_node n;
	int64_t from, to;
	int rc;
	if ((rc = num(r, 1, "the address", &from)) || (rc = num(r, 2, "the new address", &to)))
		return rc;
	if (sfi && find(L, (uint64_t)from) == NIL)
		return TACH_OK;
	/* an entry not there: the tick processor's "unknown code", passed over */
	if (!remove_key(L, (uint64_t)from, &n))
		return TACH_OK;
	return add_dynamic(r, (uint64_t)to, n.size, n.code);
}

static int shared_library(struct tach_reader *r)
{
	int64_t start, end;
	size_t n;
	int rc;
	if ((rc = num(r, 2, "the start", &start)) || (rc = num(r, 3, "the end", &end)) ||
	    (rc = decoded(r, 1, &n)))
		return rc;
	/* the decoded name stays in L->field until the next field is decoded */
	return add_library(r, lg(r)->field, n, (uint64_t)start, (uint64_t)end);
}

/* logreader's processStack after the pc: each frame resolved, those no entry holds left
 * out; the ids go outermost first, so they are added after, reversed. */
static int tick_frames(struct tach_reader *r, uint64_t pc, uint32_t *n)
{
	struct v8log_state *st = r->state;
	struct v8log_log *L = lg(r);
	uint64_t prev = pc, addr = pc;
	size_t from = st->nids;
	for (size_t i = 5; i < L->nf; i++) {
		const char *f = L->fields[i];
		int64_t v;
		if (i > 5) {
			if (L->lens[i] && f[0] == 'o')
				continue;
			if (!parse_int(f, L->lens[i], &v))
				return bad_line(r, "tick: a frame is no number");
			bool rel = L->lens[i] && (f[0] == '+' || f[0] == '-');
			addr = rel ? (prev += (uint64_t)v) : (uint64_t)v;
		}
		uint32_t code;
		int rc = resolve(r, addr, &code);
		if (rc)
			return rc;
		if (code != NO_CODE && (rc = tachi_v8log_add_id(r, code)))
			return rc;
		if (st->nids - from > r->lim.max_depth)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
				     "stack deeper than the depth limit of %u frames",
				     r->lim.max_depth);
	}
	for (size_t a = from, b = st->nids; a + 1 < b; a++, b--) {
		uint64_t x = st->ids[a];
		st->ids[a] = st->ids[b - 1];
		st->ids[b - 1] = x;
	}
	*n = (uint32_t)(st->nids - from);
	return TACH_OK;
}

static int tick(struct tach_reader *r, uint64_t off)
{
	struct v8log_log *L = lg(r);
	int64_t pc, tm, ext, tos, vm;
	uint32_t n = 0;
	int rc;
	if (L->nf < 6)
		return bad_line(r, "tick: fewer than 5 fields");
	if ((rc = num(r, 1, "the pc", &pc)) || (rc = num(r, 2, "the time", &tm)) ||
	    (rc = num(r, 3, "the external callback flag", &ext)) ||
	    (rc = num(r, 4, "the top of stack", &tos)) || (rc = num(r, 5, "the VM state", &vm)))
		return rc;
	if (tm < 0 || tm > INT64_MAX / 1000)
		return bad_line(r, "tick: the time must be 0..2^63/1000 (us)");
	if (vm < 0 || vm > INT32_MAX)
		return bad_line(r, "tick: the VM state must be 0..2^31-1");
	/* in an external callback the pc may lie inside the callback's code: the callback
	 * stands for it; JsonProfile takes no frameless top of stack */
	if ((rc = tick_frames(r, (uint64_t)(ext ? tos : pc), &n)))
		return rc;
	return tachi_v8log_add_tick(r, tm, (int32_t)vm, n, off);
}

/* Splits the line into L's fields. */
static int split_fields(struct tach_reader *r, const char *s, size_t n)
{
	struct v8log_log *L = lg(r);
	L->nf = 0;
	for (size_t p = 0;;) {
		const char *c = memchr(s + p, ',', n - p);
		size_t e = c ? (size_t)(c - s) : n;
		if (L->nf >= MAX_FIELDS)
			return bad_line(r, "a line of more than 4096 fields");
		L->fields[L->nf] = s + p;
		L->lens[L->nf++] = e - p;
		if (!c)
			return TACH_OK;
		p = e + 1;
	}
}

static bool is(const struct v8log_log *L, const char *name)
{
	size_t n = strlen(name);
	return L->lens[0] == n && !memcmp(L->fields[0], name, n);
}

static int record(struct tach_reader *r, const char *s, size_t n, uint64_t off)
{
	struct v8log_log *L = lg(r);
	int rc = split_fields(r, s, n);
	int64_t v;
	if (rc)
		return rc;
	if (is(L, "tick"))
		return tick(r, off);
	if (is(L, "code-creation"))
		return code_creation(r);
	if (is(L, "code-move") || is(L, "sfi-move"))
		return code_move(r, is(L, "sfi-move"));
	if (is(L, "shared-library"))
		return shared_library(r);
	if (is(L, "profiler") && L->nf >= 3 && L->lens[1] == 5 && !memcmp(L->fields[1], "begin", 5) &&
	    parse_int(L->fields[2], L->lens[2], &v) && v > 0 && (uint64_t)v <= TACHI_MAX_INTERVAL_US)
		r->meta.interval_us = (uint64_t)v;
	return TACH_OK;
}

static int open_log(struct tach_reader *r)
{
	struct v8log_state *st = r->state;
	struct v8log_log *L = calloc(1, sizeof(*L));
	if (!L)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->log = L;
	L->root = L->free_list = NIL;
	L->seed = 2463534242u;
	if (!st->opt.no_symbolize) {
		if (!(L->sym = tachi_native_sym_new(r, &st->opt)))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		tachi_sym_set_perf_rules(L->sym);
	}
	return TACH_OK;
}

int tachi_v8log_read_log(struct tach_reader *r)
{
	const char *d = (const char *)r->in.data;
	size_t n = r->in.size, p = 0;
	int rc = open_log(r);
	if (rc)
		return rc;
	if (n < 11 || memcmp(d, "v8-version,", 11))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
			     "not a V8 tick log: its first line is no v8-version record");
	r->in.line = 0;
	while (p < n) {
		const char *nl = memchr(d + p, '\n', n - p);
		r->in.line++;
		if (!nl)
			return tachi_soft_fail(r, p, "line %llu: the log ends inside a line, which "
						     "is left out", (unsigned long long)r->in.line);
		size_t len = (size_t)(nl - (d + p));
		/* the tick processor's loop ends at the first empty line */
		if (!len)
			return TACH_OK;
		if ((rc = record(r, d + p, len, p)))
			return rc;
		p += len + 1;
	}
	return TACH_OK;
}

void tachi_v8log_free_log(struct tach_reader *r)
{
	struct v8log_log *L = lg(r);
	if (!L)
		return;
	tachi_sym_free(L->sym);
	tachi_idset_free(&L->sym_index);
	free(L->nodes);
	free(L->libs);
	free(L->pages);
	free(L->syms);
	free(L->field);
	free(L);
}
