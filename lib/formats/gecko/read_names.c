/* A Gecko frame as the Firefox Profiler's importer reads it (read.h). In the Gecko form a
 * frame is a location string, which the importer takes apart by these rules, in order:
 * - "0x..." an address: a native function of the library whose range holds it (the
 *   libraries of the frame's own process), named by the string;
 * - "NAME (in LIB)", optionally followed by " + N" or " (FILE:LINE)": a native function NAME
 *   of library LIB (a C++ thunk's "non-virtual thunk to " dropped from NAME, as the importer
 *   does); FILE, where given, is the source file (as tach2gecko writes it);
 * - "NAME (URL:LINE)" or "NAME (URL:LINE:COLUMN)", maybe with "[N]" after, or "URL:LINE..."
 *   alone: a script function in URL (its part after the last " -> "), "(root scope) URL"
 *   when NAME is empty; the URL is the shortest that leaves ":LINE[:COLUMN]" after it;
 * - anything else a label, a function of that name with no file ("~").
 * The frame's own line and column columns win over the string's. In the processed form a
 * frame's function is a row of the function table: its name, its file (fileName, or its
 * resource's name), and for native code its library and the address within it. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "formats/json_read.h"
#include "formats/gecko/read.h"

struct gecko_loc {
	const char *name, *file;
	size_t name_n, file_n;
	int32_t line, col;
	int64_t lib;       /* an index into the state's libs, or -1 */
	uint64_t address;  /* in the process */
	bool inlined;
};

static bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The decimal s[a, b) as a line or column; -1 when it does not fit. */
static int32_t dec(const char *s, size_t a, size_t b)
{
	uint64_t v;
	return tachi_parse_dec(s + a, b - a, INT32_MAX, &v) ? (int32_t)v : -1;
}

/* At most 16 hex digits s[0, n) into *v. */
static bool hex(const char *s, size_t n, uint64_t *v)
{
	*v = 0;
	if (!n || n > 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		char c = s[i];
		unsigned d = is_digit(c) ? (unsigned)(c - '0') : (c | 0x20) >= 'a' && (c | 0x20) <= 'f' ?
			     (unsigned)((c | 0x20) - 'a' + 10) : 16;
		if (d > 15)
			return false;
		*v = *v << 4 | d;
	}
	return true;
}

/* The end of s less a "[N]" suffix. */
static size_t strip_index(const char *s, size_t n)
{
	if (!n || s[n - 1] != ']')
		return n;
	size_t k = n - 1;
	while (k && is_digit(s[k - 1]))
		k--;
	return k < n - 1 && k && s[k - 1] == '[' ? k - 1 : n;
}

/* ":LINE" (or ":LINE:COLUMN") ending at e: where the URL before it ends in each reading
 * (*short_end the one with a column, 0 when there is none). */
static bool line_suffix(const char *s, size_t e, size_t *long_end, size_t *short_end,
			size_t *digits)
{
	size_t k = e;
	while (k && is_digit(s[k - 1]))
		k--;
	if (k == e || !k || s[k - 1] != ':')
		return false;
	*digits = k;
	*long_end = k - 1;
	*short_end = 0;
	size_t j = k - 1;
	while (j && is_digit(s[j - 1]))
		j--;
	if (j < k - 1 && j && s[j - 1] == ':')
		*short_end = j - 1;
	return true;
}

static void js_url(struct gecko_loc *L, const char *s, size_t a, size_t b, size_t e)
{
	/* the line (and column) follow the URL's end b, up to e */
	size_t colon = b + 1;
	size_t next = colon;
	while (next < e && is_digit(s[next]))
		next++;
	L->line = dec(s, colon, next);
	L->col = next < e ? dec(s, next + 1, e) : -1;
	L->file = s + a;
	L->file_n = b - a;
	for (size_t i = a; i + 4 <= b; i++)
		if (!memcmp(s + i, " -> ", 4)) {
			L->file = s + i + 4;
			L->file_n = b - i - 4;
		}
}

/* The script forms; L->name is set to the whole string by the caller. */
static bool parse_js(const char *s, size_t n, struct gecko_loc *L)
{
	size_t e = strip_index(s, n), le, se, dg;
	if (e && s[e - 1] == ')' && line_suffix(s, e - 1, &le, &se, &dg)) {
		for (size_t p = le >= 3 ? le - 3 + 1 : 0; p-- > 0;) {
			if (s[p] != ' ' || s[p + 1] != '(')
				continue;
			size_t end = se >= p + 3 ? se : le;
			js_url(L, s, p + 2, end, e - 1);
			L->name_n = p;
			return true;
		}
	}
	if (!line_suffix(s, e, &le, &se, &dg))
		return false;
	size_t end = se >= 1 ? se : le;
	if (end < 1)
		return false;
	js_url(L, s, 0, end, e);
	L->name_n = 0;
	return true;
}

/* The library forms: "NAME (in LIB)" with " + N" or " (FILE:LINE)" after, or nothing. */
static bool parse_lib(const char *s, size_t n, struct gecko_loc *L)
{
	size_t e = n;
	size_t k = n;
	while (k && is_digit(s[k - 1]))
		k--;
	bool plus = k < n && k >= 3 && !memcmp(s + k - 3, " + ", 3);
	if (plus)
		e = k - 3;
	/* " (FILE:LINE)": the last " (in " whose library ends at ") (" */
	for (size_t p = e >= 6 ? e - 6 + 1 : 0, tries = 0; !plus && p-- > 0 && tries < 256;) {
		if (memcmp(s + p, " (in ", 5))
			continue;
		tries++;
		const char *q = memchr(s + p + 5, ')', e - p - 5);
		size_t qi = q ? (size_t)(q - s) : e;
		if (!q || qi + 2 >= e || s[qi + 1] != ' ' || s[qi + 2] != '(' || s[e - 1] != ')' ||
		    !memchr(s + qi + 3, ':', e - 1 - (qi + 3)))
			continue;
		L->name_n = p;
		L->file = s + p + 5;
		L->file_n = qi - p - 5;
		return true;
	}
	if (!e || s[e - 1] != ')')
		return false;
	for (size_t p = e - 1; p >= 5; p--) {
		if (s[p - 1] == ')')
			return false;
		if (!memcmp(s + p - 5, " (in ", 5)) {
			L->name_n = p - 5;
			L->file = s + p;
			L->file_n = e - 1 - p;
			return true;
		}
	}
	return false;
}

static const char thunk[] = "non-virtual thunk to ";

/* The library of the frame's process whose range holds a (its libraries sorted by start). */
static int64_t lib_at(const struct gecko_rstate *st, uint64_t a)
{
	size_t lo = 0, hi = st->thread_nlibs;
	const struct gecko_lib *l = st->libs + st->thread_libs_at;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (l[mid].start <= a)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (!lo || !l[lo - 1].usable || a >= l[lo - 1].end)
		return -1;
	return (int64_t)(st->thread_libs_at + lo - 1);
}

static void parse_location(struct gecko_rstate *st, const char *s, size_t n,
			   struct gecko_loc *L)
{
	uint64_t a;
	L->name = s;
	L->name_n = n;
	L->file = "~";
	L->file_n = 1;
	if (n > 2 && s[0] == '0' && s[1] == 'x') {
		if (hex(s + 2, n - 2, &a) && (L->lib = lib_at(st, a)) >= 0)
			L->address = a;
		return;
	}
	if (parse_lib(s, n, L)) {
		if (L->name_n >= sizeof(thunk) - 1 && !memcmp(s, thunk, sizeof(thunk) - 1)) {
			L->name += sizeof(thunk) - 1;
			L->name_n -= sizeof(thunk) - 1;
		}
		return;
	}
	if (parse_js(s, n, L) && !L->name_n) {
		L->name = NULL; /* "(root scope) URL", made by the caller */
	}
}

static int intern(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	return tach_dict_intern_string(&r->dict, s, n, id) ? tachi_jr_nomem(r) : TACH_OK;
}

static int lib_mapping(struct tach_reader *r, struct gecko_lib *l, uint32_t *id)
{
	struct gecko_rstate *st = r->state;
	if (!l->mapping) {
		struct tach_mapping m = { .start = l->start, .limit = l->end, .offset = l->offset,
					  .build_id = TACH_NO_STRING };
		size_t n;
		uint64_t off = l->path_off != GK_NONE ? l->path_off : l->name_off;
		int rc = off == GK_NONE ? intern(r, "", 0, &m.file) :
			 tachi_gk_text_at(r, off, &st->sbuf, &st->sbuf_cap, &n) ?:
			 intern(r, st->sbuf, n, &m.file);
		if (rc)
			return rc;
		if (tach_dict_intern_mapping(&r->dict, &m, &l->mapping))
			return tachi_jr_nomem(r);
	}
	*id = l->mapping;
	return TACH_OK;
}

/* The library's name (its last path component where only a path is given) as a file. */
static int lib_file(struct tach_reader *r, const struct gecko_lib *l, uint32_t *id)
{
	struct gecko_rstate *st = r->state;
	size_t n;
	uint64_t off = l->name_off != GK_NONE ? l->name_off : l->path_off;
	if (off == GK_NONE)
		return intern(r, "~", 1, id);
	int rc = tachi_gk_text_at(r, off, &st->sbuf, &st->sbuf_cap, &n);
	if (rc)
		return rc;
	const char *s = st->sbuf, *slash = NULL;
	for (size_t i = 0; i < n; i++)
		if (s[i] == '/')
			slash = s + i;
	size_t skip = slash && off == l->path_off ? (size_t)(slash - s) + 1 : 0;
	return intern(r, s + skip, n - skip, id);
}

static int make_frame(struct tach_reader *r, const struct gecko_loc *L, size_t row,
		      uint32_t *id)
{
	struct gecko_rstate *st = r->state;
	int64_t line = gk_cell(&st->f_line, row), col = gk_cell(&st->f_col, row);
	struct tach_frame fr = { .line = L->line, .col = L->col, .end_col = -1,
				 .opcode = TACH_NO_OPCODE };
	if (line != GK_NULL)
		fr.line = line >= 0 && line <= INT32_MAX ? (int32_t)line : -1;
	if (col != GK_NULL)
		fr.col = col >= 0 && col <= INT32_MAX ? (int32_t)col : -1;
	fr.end_line = fr.line;
	struct tach_frame_native nat = { .inlined = L->inlined };
	int rc = intern(r, L->name, L->name_n, &fr.func);
	if (!rc && L->lib >= 0 && L->file == NULL)
		rc = lib_file(r, &st->libs[L->lib], &fr.file);
	else if (!rc)
		rc = intern(r, L->file, L->file_n, &fr.file);
	if (!rc && L->lib >= 0) {
		nat.address = L->address;
		rc = lib_mapping(r, &st->libs[L->lib], &nat.mapping);
	}
	if (rc)
		return rc;
	if (tach_dict_intern_frame_native(&r->dict, &fr, &nat, id))
		return tachi_jr_nomem(r);
	return TACH_OK;
}

static int gecko_frame(struct tach_reader *r, size_t row, uint32_t *id)
{
	struct gecko_rstate *st = r->state;
	struct gecko_loc L = { .line = -1, .col = -1, .lib = -1 };
	const char *s;
	size_t n;
	int rc = tachi_gk_string(r, gk_cell(&st->f_loc, row), &s, &n);
	if (rc)
		return rc;
	/* the location is in sbuf, which the library's names reuse: keep a copy */
	char *copy = malloc(n + 1);
	if (!copy)
		return tachi_jr_nomem(r);
	memcpy(copy, s, n);
	parse_location(st, copy, n, &L);
	char *root = NULL;
	if (!L.name) {
		root = malloc(13 + L.file_n + 1);
		if (!root) {
			free(copy);
			return tachi_jr_nomem(r);
		}
		memcpy(root, "(root scope) ", 13);
		memcpy(root + 13, L.file, L.file_n);
		L.name = root;
		L.name_n = 13 + L.file_n;
	}
	if (L.lib >= 0)
		L.file = NULL;
	rc = make_frame(r, &L, row, id);
	free(root);
	free(copy);
	return rc;
}

/* A processed frame: its function's strings, copied out of sbuf one after the other. */
static int processed_frame(struct tach_reader *r, size_t row, uint32_t *id)
{
	struct gecko_rstate *st = r->state;
	struct gecko_loc L = { .line = -1, .col = -1, .lib = -1, .file = NULL };
	int64_t fn = gk_cell(&st->f_func, row);
	if (fn < 0 || (size_t)fn >= st->fn_name.n)
		return tachi_jr_bad(r, st->t->off, "a frame's function is not in the function table");
	int64_t res = gk_cell(&st->fn_res, (size_t)fn), file = gk_cell(&st->fn_file, (size_t)fn);
	int64_t lib = res >= 0 ? gk_cell(&st->r_lib, (size_t)res) : GK_NULL;
	int64_t addr = gk_cell(&st->f_addr, row);
	const char *s;
	size_t n;
	char *name = NULL;
	int rc = tachi_gk_string(r, gk_cell(&st->fn_name, (size_t)fn), &s, &n);
	if (rc)
		return rc;
	if (!(name = malloc(n + 1)))
		return tachi_jr_nomem(r);
	memcpy(name, s, n);
	L.name = name;
	L.name_n = n;
	/* the versions before fileName kept a script function's location in its name, which
	 * the importer's upgrade takes apart as it takes a Gecko location */
	struct gecko_loc js = L;
	if (st->old && !st->fn_file.n && gk_cell(&st->fn_js, (size_t)fn) == 1 &&
	    parse_js(name, n, &js) && js.name_n) {
		L = js;
		file = GK_NULL;
	} else if (file == GK_NULL && res >= 0) {
		file = gk_cell(&st->r_name, (size_t)res);
	}
	if (L.file) {
		/* the script's URL, from the name */
	} else if (file != GK_NULL && !(rc = tachi_gk_string(r, file, &s, &n))) {
		L.file = s;
		L.file_n = n;
	} else if (!rc) {
		L.file = "~";
		L.file_n = 1;
	}
	if (lib >= 0 && (uint64_t)lib < st->thread_nlibs && addr >= 0 &&
	    st->libs[st->thread_libs_at + lib].usable) {
		L.lib = (int64_t)(st->thread_libs_at + lib);
		L.address = st->libs[L.lib].start + (uint64_t)addr;
		L.inlined = gk_cell(&st->f_inline, row) > 0;
	}
	if (!rc)
		rc = make_frame(r, &L, row, id);
	free(name);
	return rc;
}

int tachi_gk_frame(struct tach_reader *r, size_t row, uint32_t *id)
{
	struct gecko_rstate *st = r->state;
	if (st->fdict[row] == GK_NO_ID) {
		int rc = st->processed ? processed_frame(r, row, id) : gecko_frame(r, row, id);
		if (rc)
			return rc;
		st->fdict[row] = *id;
	}
	*id = st->fdict[row];
	return TACH_OK;
}
