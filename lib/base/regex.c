/* RE2-syntax regular expressions, matched by a lazy DFA over a Thompson NFA (see regex.h).
 *
 * Three steps: a recursive-descent parser builds a tree of nodes (literals and classes are
 * both classes: sorted code point ranges); the compiler expands it into a program of at most
 * TACHI_REGEX_MAX_INSNS instructions; the matcher advances every live thread one code point
 * at a time, each instruction at most once per position, so no input makes it backtrack,
 * and keeps each set of live threads it meets as a DFA state with its transitions.
 * The parser follows Go's regexp/syntax (Perl flags, as regexp.Compile uses): what it
 * accepts, what it refuses and the order of its checks, with its error names in the
 * messages. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/regex.h"

#define MAX_RUNE 0x10FFFFu
#define BAD_RUNE 0xFFFDu

enum { N_EMPTY, N_CLASS, N_ASSERT, N_CAT, N_ALT, N_REP };
enum { A_BOT, A_EOT, A_BOL, A_EOL, A_WORD, A_NOTWORD };
enum { F_FOLD = 1, F_DOTNL = 2, F_MULTI = 4, F_UNGREEDY = 8 };

struct node {
	uint8_t kind;
	bool counted;     /* N_REP written {n,m}: RE2 bounds the nesting of these */
	int32_t min, max; /* N_REP (max -1: no bound); N_CLASS: first range, count; N_ASSERT */
	int32_t child;    /* N_CAT, N_ALT, N_REP: first child, -1 none */
	int32_t last;     /* N_CAT, N_ALT: last child */
	int32_t next;     /* next sibling */
	int32_t height;   /* of the tree under this node: Go bounds it, our recursions follow it */
};

struct parser {
	const uint8_t *p;
	size_t n, i;
	struct node *nodes;
	size_t nnodes, nodes_cap;
	uint32_t *rg;     /* ranges: pairs lo, hi */
	size_t nrg, rg_cap;
	size_t *names;    /* capture names: pairs offset, length */
	size_t nnames, names_cap;
	struct tachi_regex_err *err;
	int rc;
	size_t uni_at;    /* the first \p, SIZE_MAX none */
};

enum { I_CLASS, I_ASSERT, I_SPLIT, I_JMP, I_MATCH };

struct insn {
	uint8_t op, kind;
	uint32_t x, y;    /* I_CLASS: first range, count; I_SPLIT, I_JMP: targets */
};

struct dstate;

struct tachi_regex {
	struct insn *prog;
	size_t n, cap;
	uint32_t *rg;
	bool anchored;    /* every path starts with \A: only offset 0 can start a match */
	size_t min_len;   /* no shorter subject matches (Go checks it too) */
	uint32_t *dense[2], *sparse[2], *stack;
	size_t count[2];
	uint64_t *bits;         /* a set of pcs, to list one in order */
	uint64_t work, budget;  /* instructions visited, over every search; the most allowed */
	uint32_t *bnd;          /* the code point classes' first code points, ascending */
	size_t nclass;
	uint32_t ascii[0x80];   /* the class of each ASCII code point */
	struct dstate *states;  /* the lazy DFA's cache */
	size_t nstates, states_cap;
	uint32_t *pcs;
	size_t npcs, pcs_cap;
	int32_t *next;          /* (nclass + 1) transitions a state; the last at the end */
	size_t next_cap;
	int32_t *htab;          /* states by kernel_hash, open addressing */
	size_t hcap, mem;
};

/* ---- errors ---- */

static int fail(struct parser *P, int code, size_t at, const char *fmt, ...) TACHI_PRINTF(4, 5);
static int fail(struct parser *P, int code, size_t at, const char *fmt, ...)
{
	if (P->rc)
		return -1;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(P->err->msg, sizeof(P->err->msg), fmt, ap);
	va_end(ap);
	P->err->at = at;
	P->rc = code;
	return -1;
}

static int nomem(struct parser *P)
{
	return fail(P, TACH_E_NOMEM, P->i, "out of memory");
}

/* ---- code points ---- */

/* One code point of s[0, n), n > 0, as Go's utf8.DecodeRune: anything but a valid shortest
 * sequence is U+FFFD of width 1. */
static uint32_t decode(const uint8_t *s, size_t n, size_t *w)
{
	uint8_t c = s[0], lo = 0x80, hi = 0xBF;
	uint32_t r;
	size_t len;
	*w = 1;
	if (c < 0x80)
		return c;
	if (c >= 0xC2 && c <= 0xDF)
		len = 2, r = c & 0x1F;
	else if (c >= 0xE0 && c <= 0xEF)
		len = 3, r = c & 0x0F, lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
	else if (c >= 0xF0 && c <= 0xF4)
		len = 4, r = c & 0x07, lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
	else
		return BAD_RUNE;
	if (n < len)
		return BAD_RUNE;
	for (size_t k = 1; k < len; k++) {
		uint8_t b = s[k];
		if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF))
			return BAD_RUNE;
		r = r << 6 | (b & 0x3F);
	}
	*w = len;
	return r;
}

/* The pattern's next code point; Go refuses a pattern that is not UTF-8. */
static int32_t next_rune(struct parser *P)
{
	size_t w;
	uint32_t r = decode(P->p + P->i, P->n - P->i, &w);
	if (w == 1 && P->p[P->i] >= 0x80)
		return fail(P, TACH_E_FORMAT, P->i, "invalid UTF-8");
	P->i += w;
	return (int32_t)r;
}

static bool is_alnum(int c)
{
	return (c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z');
}

static bool is_word(int c)
{
	return is_alnum(c) || c == '_';
}

static int hex_val(int c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	c |= 0x20;
	return c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
}

/* ---- nodes and ranges ---- */

static int32_t new_node(struct parser *P, int kind)
{
	if (P->nnodes >= INT32_MAX || !TACHI_RESERVE(P->nodes, P->nodes_cap, P->nnodes + 1))
		return nomem(P);
	P->nodes[P->nnodes] = (struct node){ .kind = (uint8_t)kind, .child = -1, .last = -1,
					     .next = -1, .height = 1 };
	return (int32_t)P->nnodes++;
}

static bool set_height(struct parser *P, int32_t x, int32_t h)
{
	if (h > TACHI_REGEX_MAX_DEPTH)
		return fail(P, TACH_E_FORMAT, P->i, "expression nests too deeply (over %d levels)",
			    TACHI_REGEX_MAX_DEPTH), false;
	if (P->nodes[x].height < h)
		P->nodes[x].height = h;
	return true;
}

static bool add_child(struct parser *P, int32_t parent, int32_t c)
{
	struct node *p = &P->nodes[parent];
	if (p->last < 0)
		p->child = c;
	else
		P->nodes[p->last].next = c;
	p->last = c;
	return set_height(P, parent, P->nodes[c].height + 1);
}

static bool add_range(struct parser *P, uint32_t lo, uint32_t hi)
{
	if (!TACHI_RESERVE(P->rg, P->rg_cap, P->nrg + 2))
		return nomem(P), false;
	P->rg[P->nrg++] = lo;
	P->rg[P->nrg++] = hi;
	return true;
}

static int cmp_range(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* Ranges from r0 on: sorted, merged, and complemented when neg. */
static bool clean_class(struct parser *P, size_t r0, bool neg)
{
	size_t k = (P->nrg - r0) / 2, out = r0;
	if (k > 1)
		qsort(P->rg + r0, k, 2 * sizeof(uint32_t), cmp_range);
	for (size_t j = r0; j < P->nrg; j += 2) {
		if (out > r0 && P->rg[j] <= P->rg[out - 1] + 1) {
			if (P->rg[j + 1] > P->rg[out - 1])
				P->rg[out - 1] = P->rg[j + 1];
			continue;
		}
		P->rg[out++] = P->rg[j], P->rg[out++] = P->rg[j + 1];
	}
	P->nrg = out;
	if (!neg)
		return true;
	/* the complement has at most one range more: append it, then move it down */
	size_t end = P->nrg;
	uint32_t from = 0;
	for (size_t j = r0; j < end; j += 2) {
		if (P->rg[j] > from && !add_range(P, from, P->rg[j] - 1))
			return false;
		from = P->rg[j + 1] + 1;
	}
	if (from <= MAX_RUNE && !add_range(P, from, MAX_RUNE))
		return false;
	memmove(P->rg + r0, P->rg + end, (P->nrg - end) * sizeof(uint32_t));
	P->nrg = r0 + (P->nrg - end);
	return true;
}

struct fold_run {
	uint32_t lo, hi;
	int32_t delta;
	uint8_t pairs;
};
#include "base/regex_unicode.h"

/* Adds to the class from r0 on the image of [lo, hi] under one step of Go's SimpleFold,
 * joined with [lo, hi] itself, run by run. */
static bool fold_image(struct parser *P, uint32_t lo, uint32_t hi)
{
	size_t a = 0, b = sizeof(fold_runs) / sizeof(fold_runs[0]);
	while (a < b) { /* the first run that ends at lo or later */
		size_t m = a + (b - a) / 2;
		if (fold_runs[m].hi < lo)
			a = m + 1;
		else
			b = m;
	}
	for (; a < sizeof(fold_runs) / sizeof(fold_runs[0]) && fold_runs[a].lo <= hi; a++) {
		const struct fold_run *f = &fold_runs[a];
		uint32_t x = lo > f->lo ? lo : f->lo, y = hi < f->hi ? hi : f->hi;
		if (f->pairs) /* each one's partner is next to it: widen to the whole pairs */
			x -= (x - f->lo) % 2, y += (y - f->lo) % 2 == 0;
		else
			x = (uint32_t)((int32_t)x + f->delta), y = (uint32_t)((int32_t)y + f->delta);
		if (!add_range(P, x, y))
			return false;
	}
	return true;
}

static uint64_t class_width(const struct parser *P, size_t r0)
{
	uint64_t w = 0;
	for (size_t j = r0; j < P->nrg; j += 2)
		w += P->rg[j + 1] - P->rg[j] + 1;
	return w;
}

/* Under (?i), the class from r0 on takes in the whole orbit of each of its code points,
 * as Go's regexp folds: one step of SimpleFold at a time until nothing is added (an orbit
 * has at most four members). */
static bool fold_class(struct parser *P, size_t r0)
{
	if (!clean_class(P, r0, false))
		return false;
	for (uint64_t w = class_width(P, r0), was = 0; w != was; w = class_width(P, r0)) {
		size_t end = P->nrg;
		for (size_t j = r0; j < end; j += 2)
			if (!fold_image(P, P->rg[j], P->rg[j + 1]))
				return false;
		if (!clean_class(P, r0, false))
			return false;
		was = w;
	}
	return true;
}

static int32_t class_node(struct parser *P, size_t r0)
{
	int32_t c = new_node(P, N_CLASS);
	if (c >= 0)
		P->nodes[c].min = (int32_t)r0, P->nodes[c].max = (int32_t)((P->nrg - r0) / 2);
	return c;
}

static int32_t literal(struct parser *P, uint32_t r, unsigned flags)
{
	size_t r0 = P->nrg;
	if (!add_range(P, r, r) || ((flags & F_FOLD) && !fold_class(P, r0)))
		return -1;
	return class_node(P, r0);
}

static int32_t assertion(struct parser *P, int kind)
{
	int32_t a = new_node(P, N_ASSERT);
	if (a >= 0)
		P->nodes[a].min = kind;
	return a;
}

/* ---- classes ---- */

/* \d \s \w (ASCII, as RE2's Perl classes) and POSIX [:name:]: pairs lo, hi, 0-terminated. */
static const struct {
	const char *name;
	uint8_t r[12];
} groups[] = {
	{ "d", { '0', '9' } },
	{ "s", { '\t', '\n', '\f', '\r', ' ', ' ' } },
	{ "w", { '0', '9', 'A', 'Z', '_', '_', 'a', 'z' } },
	{ "alnum", { '0', '9', 'A', 'Z', 'a', 'z' } },
	{ "alpha", { 'A', 'Z', 'a', 'z' } },
	{ "ascii", { 1, 0x7f } }, /* and 0: below */
	{ "blank", { '\t', '\t', ' ', ' ' } },
	{ "cntrl", { 1, 0x1f, 0x7f, 0x7f } },
	{ "digit", { '0', '9' } },
	{ "graph", { '!', '~' } },
	{ "lower", { 'a', 'z' } },
	{ "print", { ' ', '~' } },
	{ "punct", { '!', '/', ':', '@', '[', '`', '{', '~' } },
	{ "space", { '\t', '\r', ' ', ' ' } },
	{ "upper", { 'A', 'Z' } },
	{ "word", { '0', '9', 'A', 'Z', '_', '_', 'a', 'z' } },
	{ "xdigit", { '0', '9', 'A', 'F', 'a', 'f' } },
};

static int find_group(const uint8_t *name, size_t len)
{
	for (size_t g = 0; g < sizeof(groups) / sizeof(groups[0]); g++)
		if (strlen(groups[g].name) == len && !memcmp(groups[g].name, name, len))
			return (int)g;
	return -1;
}

/* Group g into the class being built (r0 on), negated when neg: the group is folded first,
 * then complemented, as Go does. */
static bool add_group(struct parser *P, int g, bool neg, unsigned flags)
{
	size_t r0 = P->nrg;
	bool nul = !strcmp(groups[g].name, "ascii") || !strcmp(groups[g].name, "cntrl");
	if (nul && !add_range(P, 0, 0))
		return false;
	for (int k = 0; k < 12 && groups[g].r[k]; k += 2)
		if (!add_range(P, groups[g].r[k], groups[g].r[k + 1]))
			return false;
	return (!(flags & F_FOLD) || fold_class(P, r0)) && clean_class(P, r0, neg);
}

/* \xHH or \x{H...} (at: the backslash), P->i after the x. */
static int32_t parse_hex(struct parser *P, size_t at)
{
	const uint8_t *p = P->p;
	uint32_t r = 0;
	if (P->i < P->n && p[P->i] == '{') {
		size_t k = P->i + 1;
		for (; k < P->n && hex_val(p[k]) >= 0 && r <= MAX_RUNE; k++)
			r = r * 16 + (uint32_t)hex_val(p[k]);
		if (k < P->n && p[k] == '}' && k > P->i + 1 && r <= MAX_RUNE) {
			P->i = k + 1;
			return (int32_t)r;
		}
	} else if (P->n - P->i >= 2 && hex_val(p[P->i]) >= 0 && hex_val(p[P->i + 1]) >= 0) {
		r = (uint32_t)(hex_val(p[P->i]) * 16 + hex_val(p[P->i + 1]));
		P->i += 2;
		return (int32_t)r;
	}
	return fail(P, TACH_E_FORMAT, at, "invalid escape sequence \\x: two hex digits or "
		    "\\x{...} with at most 10FFFF");
}

/* The escape after a backslash at P->i - 1 (P->i on the escaped character), in or out of
 * a class: a code point, or -1 with the error set. */
static int32_t parse_escape(struct parser *P)
{
	size_t at = P->i - 1;
	if (P->i >= P->n)
		return fail(P, TACH_E_FORMAT, at, "trailing backslash at end of expression");
	int32_t c = next_rune(P);
	if (c < 0)
		return -1;
	if (c < 0x80 && !is_alnum(c)) /* escaped punctuation is itself */
		return c;
	if (c >= '1' && c <= '9' && (P->i >= P->n || P->p[P->i] < '0' || P->p[P->i] > '7'))
		return fail(P, TACH_E_FORMAT, at, "backreference \\%c: RE2 has none", (char)c);
	if (c >= '0' && c <= '7') {
		int32_t r = c - '0';
		for (int k = 1; k < 3 && P->i < P->n && P->p[P->i] >= '0' && P->p[P->i] <= '7'; k++)
			r = r * 8 + (P->p[P->i++] - '0');
		return r;
	}
	static const char cesc[] = "a\af\fn\nr\rt\tv\v";
	const char *e = c < 0x80 && c ? strchr(cesc, c) : NULL;
	if (e && (e - cesc) % 2 == 0)
		return e[1];
	if (c == 'x')
		return parse_hex(P, at);
	return fail(P, TACH_E_FORMAT, at, "invalid escape sequence \\%.*s", (int)(P->i - at - 1),
		    (const char *)P->p + at + 1);
}

/* [:name:] or [:^name:] at P->i (on the first '['), into the class from the current range
 * on. Returns 1 done, 0 not a named class (the '[' is a literal), -1 error. */
static int named_class(struct parser *P, unsigned flags)
{
	const uint8_t *p = P->p + P->i, *e = P->p + P->n;
	if (e - p <= 2 || p[0] != '[' || p[1] != ':')
		return 0;
	const uint8_t *end = NULL;
	for (const uint8_t *q = p + 2; q + 1 < e && !end; q++)
		if (q[0] == ':' && q[1] == ']')
			end = q;
	if (!end)
		return 0;
	bool neg = p[2] == '^';
	const uint8_t *name = p + 2 + neg;
	int g = end >= name ? find_group(name, (size_t)(end - name)) : -1;
	if (g < 3) /* the first three are Perl's, not POSIX names */
		return fail(P, TACH_E_FORMAT, P->i, "invalid character class range %.*s",
			    (int)(end + 2 - p), (const char *)p);
	P->i += (size_t)(end + 2 - p);
	return add_group(P, g, neg, flags) ? 1 : -1;
}

/* \d \D \s \S \w \W at P->i: 1 added, 0 not one. */
static int perl_class(struct parser *P, unsigned flags)
{
	if (P->n - P->i < 2 || P->p[P->i] != '\\')
		return 0;
	uint8_t c = P->p[P->i + 1], lc = c | 0x20;
	if (lc != 'd' && lc != 's' && lc != 'w')
		return 0;
	P->i += 2;
	return add_group(P, lc == 'd' ? 0 : lc == 's' ? 1 : 2, c != lc, flags) ? 1 : -1;
}

static bool unicode_name(const uint8_t *name, size_t len)
{
	size_t a = 0, b = sizeof(unicode_names) / sizeof(unicode_names[0]);
	while (a < b) {
		size_t m = a + (b - a) / 2;
		const char *u = unicode_names[m];
		size_t ul = strlen(u);
		int c = memcmp(u, name, ul < len ? ul : len);
		if (!c)
			c = (ul > len) - (ul < len);
		if (!c)
			return true;
		if (c < 0)
			a = m + 1;
		else
			b = m;
	}
	return false;
}

/* \p or \P at P->i, as Go's parser reads one: a letter or {name}, the name one Go knows
 * (a name Go does not know is a refusal of Go's too). We have no Unicode classes: it
 * stands for an empty class while the rest is parsed, so that an error Go finds after it
 * is the one reported, and the pattern is refused as unsupported at the end. Returns 1
 * read, 0 not one, -1 error. */
static int unicode_class(struct parser *P)
{
	if (P->n - P->i < 2 || P->p[P->i] != '\\' || (P->p[P->i + 1] | 0x20) != 'p')
		return 0;
	size_t at = P->i, j = P->i + 2, name = j, len = 0, end = j;
	if (j < P->n && P->p[j] == '{') {
		const uint8_t *c = memchr(P->p + j, '}', P->n - j);
		for (P->i = j; P->i < (c ? (size_t)(c - P->p) : P->n);)
			if (next_rune(P) < 0)
				return -1;
		if (!c)
			return fail(P, TACH_E_FORMAT, at, "invalid character class range %.*s: no "
				    "closing }", (int)(P->n - at > 20 ? 20 : P->n - at),
				    (const char *)P->p + at);
		name = j + 1, len = (size_t)(c - P->p) - name, end = (size_t)(c - P->p) + 1;
	} else if (j < P->n) {
		P->i = j;
		if (next_rune(P) < 0)
			return -1;
		len = P->i - j, end = P->i;
	}
	P->i = at;
	if (len && P->p[name] == '^')
		name++, len--;
	if (!unicode_name(P->p + name, len))
		return fail(P, TACH_E_FORMAT, at, "invalid character class range %.*s",
			    (int)(end - at), (const char *)P->p + at);
	if (P->uni_at == SIZE_MAX)
		P->uni_at = at;
	P->i = end;
	return 1;
}

/* One character of a class, escaped or not. */
static int32_t class_char(struct parser *P, size_t open)
{
	if (P->i >= P->n)
		return fail(P, TACH_E_FORMAT, open, "missing closing ]");
	if (P->p[P->i] == '\\') {
		P->i++;
		return parse_escape(P);
	}
	return next_rune(P);
}

/* A bracketed class, P->i on the '['. */
static int32_t parse_class(struct parser *P, unsigned flags)
{
	size_t open = P->i++, r0 = P->nrg;
	bool neg = P->i < P->n && P->p[P->i] == '^', first = true;
	P->i += neg;
	while (P->i >= P->n || P->p[P->i] != ']' || first) {
		first = false;
		int k = named_class(P, flags);
		if (!k)
			k = unicode_class(P);
		if (!k)
			k = perl_class(P, flags);
		if (k < 0)
			return -1;
		if (k)
			continue;
		size_t at = P->i;
		int32_t lo = class_char(P, open), hi = lo;
		if (lo < 0)
			return -1;
		if (P->n - P->i >= 2 && P->p[P->i] == '-' && P->p[P->i + 1] != ']') {
			P->i++;
			if ((hi = class_char(P, open)) < 0)
				return -1;
			if (hi < lo)
				return fail(P, TACH_E_FORMAT, at, "invalid character class range "
					    "%.*s", (int)(P->i - at), (const char *)P->p + at);
		}
		if (!add_range(P, (uint32_t)lo, (uint32_t)hi))
			return -1;
	}
	P->i++;
	if (((flags & F_FOLD) && !fold_class(P, r0)) || !clean_class(P, r0, neg))
		return -1;
	return class_node(P, r0);
}

/* ---- groups, atoms, repeats ---- */

static int32_t parse_alt(struct parser *P, unsigned *flags, int depth);

/* After "(?" : flags i m s U, a '-' to clear those after it, then ')' (for the rest of the
 * group) or ':' (for a new group). Returns 0 flags only, 1 group with *gflags, -1 error. */
static int parse_flags(struct parser *P, size_t open, unsigned *flags, unsigned *gflags)
{
	unsigned f = *flags;
	bool neg = false, saw = false;
	while (P->i < P->n) {
		uint8_t c = P->p[P->i++];
		unsigned bit = c == 'i' ? F_FOLD : c == 's' ? F_DOTNL : c == 'm' ? F_MULTI :
			       c == 'U' ? F_UNGREEDY : 0;
		if (bit) {
			f = neg ? f & ~bit : f | bit;
			saw = true;
		} else if (c == '-' && !neg) {
			neg = true, saw = false;
		} else if ((c == ':' || c == ')') && (!neg || saw)) {
			if (c == ')')
				*flags = f;
			*gflags = f;
			return c == ':';
		} else {
			break;
		}
	}
	return fail(P, TACH_E_FORMAT, open, "invalid or unsupported Perl syntax %.*s",
		    (int)(P->i - open), (const char *)P->p + open);
}

/* What follows "(?" that is not flags: a named group, or what RE2 refuses. Returns 1 a
 * named group (P->i after the '>'), 0 not one of these, -1 error. */
static int group_name(struct parser *P, size_t open)
{
	const uint8_t *p = P->p + P->i;
	size_t left = P->n - P->i;
	if (left >= 1 && (p[0] == '=' || p[0] == '!'))
		return fail(P, TACH_E_FORMAT, open, "lookahead (?%c: RE2 has none", p[0]);
	if (left >= 2 && p[0] == '<' && (p[1] == '=' || p[1] == '!'))
		return fail(P, TACH_E_FORMAT, open, "lookbehind (?<%c: RE2 has none", p[1]);
	if (left >= 1 && p[0] == '>')
		return fail(P, TACH_E_FORMAT, open, "atomic group (?>: RE2 has none");
	size_t k = left >= 2 && p[0] == 'P' && p[1] == '<' ? 2 : left >= 1 && p[0] == '<' ? 1 : 0;
	if (!k)
		return 0;
	size_t j = k;
	while (j < left && is_word(p[j]))
		j++;
	if (j == k || j >= left || p[j] != '>')
		return fail(P, TACH_E_FORMAT, open, "invalid named capture %.*s",
			    (int)(j < left ? j + 3 : j + 2), (const char *)P->p + open);
	P->i += j + 1;
	return 1;
}

/* A group, P->i on the '('. Returns the group's tree, -2 for flags only, -1 error. */
static int32_t parse_group(struct parser *P, unsigned *flags, int depth)
{
	size_t open = P->i++;
	unsigned gflags = *flags;
	if (depth >= TACHI_REGEX_MAX_DEPTH)
		return fail(P, TACH_E_FORMAT, open, "expression nests too deeply (over %d levels)",
			    TACHI_REGEX_MAX_DEPTH);
	if (P->i < P->n && P->p[P->i] == '?') {
		P->i++;
		int k = group_name(P, open);
		if (!k)
			k = parse_flags(P, open, flags, &gflags);
		if (k <= 0)
			return k < 0 ? -1 : -2;
	}
	int32_t x = parse_alt(P, &gflags, depth + 1);
	if (x < 0)
		return -1;
	if (P->i >= P->n)
		return fail(P, TACH_E_FORMAT, open, "missing closing )");
	P->i++;
	return x;
}

/* \ at P->i outside a class: an assertion, a class, \Q...\E (-2 when it holds no literal;
 * its literals but the last are added to cat here), or one code point. */
static int32_t parse_backslash(struct parser *P, unsigned flags, int32_t cat)
{
	uint8_t c = P->i + 1 < P->n ? P->p[P->i + 1] : 0;
	int kind = c == 'A' ? A_BOT : c == 'z' ? A_EOT : c == 'b' ? A_WORD : c == 'B' ? A_NOTWORD : -1;
	if (kind >= 0) {
		P->i += 2;
		return assertion(P, kind);
	}
	if (c == 'C')
		return fail(P, TACH_E_FORMAT, P->i, "invalid escape sequence \\C (any byte): RE2 "
			    "syntax, but not supported by Go");
	if (c == 'Q') {
		size_t end = P->i + 2;
		while (end < P->n && !(P->p[end] == '\\' && end + 1 < P->n && P->p[end + 1] == 'E'))
			end++;
		int32_t last = -2;
		P->i += 2;
		while (P->i < end) {
			if (last >= 0 && !add_child(P, cat, last))
				return -1;
			int32_t r = next_rune(P);
			if (r < 0 || (last = literal(P, (uint32_t)r, flags)) < 0)
				return -1;
		}
		P->i = end < P->n ? end + 2 : end;
		return last;
	}
	size_t r0 = P->nrg;
	int k = unicode_class(P);
	if (!k)
		k = perl_class(P, flags);
	if (k)
		return k < 0 ? -1 : class_node(P, r0);
	P->i++;
	int32_t r = parse_escape(P);
	return r < 0 ? -1 : literal(P, (uint32_t)r, flags);
}

/* One atom at P->i (not a repeat, '|' or ')'): its node, -2 when it adds none, -1 error. */
static int32_t parse_atom(struct parser *P, unsigned *flags, int depth, int32_t cat)
{
	uint8_t c = P->p[P->i];
	size_t r0 = P->nrg;
	switch (c) {
	case '(':
		return parse_group(P, flags, depth);
	case '[':
		return parse_class(P, *flags);
	case '\\':
		return parse_backslash(P, *flags, cat);
	case '^':
	case '$':
		P->i++;
		if (*flags & F_MULTI)
			return assertion(P, c == '^' ? A_BOL : A_EOL);
		return assertion(P, c == '^' ? A_BOT : A_EOT);
	case '.':
		P->i++;
		if ((!(*flags & F_DOTNL) && !add_range(P, '\n', '\n')) || !clean_class(P, r0, true))
			return -1;
		return class_node(P, r0);
	default: {
		int32_t r = next_rune(P);
		return r < 0 ? -1 : literal(P, (uint32_t)r, *flags);
	}
	}
}

/* A decimal count as Go's parser reads one: no leading zero, -1 when over 10^8. */
static bool parse_int(struct parser *P, int *v)
{
	size_t i = P->i;
	if (i >= P->n || P->p[i] < '0' || P->p[i] > '9' ||
	    (P->n - i >= 2 && P->p[i] == '0' && P->p[i + 1] >= '0' && P->p[i + 1] <= '9'))
		return false;
	int x = 0;
	for (; i < P->n && P->p[i] >= '0' && P->p[i] <= '9'; i++)
		if (x >= 0)
			x = x >= 100000000 ? -1 : x * 10 + (P->p[i] - '0');
	P->i = i;
	*v = x;
	return true;
}

/* {n}, {n,} or {n,m} at P->i; anything else leaves P->i and is a literal '{'. */
static bool parse_braces(struct parser *P, int *min, int *max)
{
	size_t start = P->i++;
	if (!parse_int(P, min) || P->i >= P->n)
		goto no;
	if (P->p[P->i] != ',') {
		*max = *min;
	} else if (++P->i >= P->n) {
		goto no;
	} else if (P->p[P->i] == '}') {
		*max = -1;
	} else if (!parse_int(P, max)) {
		goto no;
	} else if (*max < 0) {
		*min = -1;
	}
	if (P->i >= P->n || P->p[P->i] != '}')
		goto no;
	P->i++;
	return true;
no:
	P->i = start;
	return false;
}

/* RE2's bound on nested counted repeats: at most n copies of the innermost thing. */
static bool repeat_ok(const struct parser *P, int32_t x, int n)
{
	const struct node *d = &P->nodes[x];
	if (d->kind == N_REP && d->counted) {
		int m = d->max < 0 ? d->min : d->max;
		if (d->max == 0)
			return true;
		if (m > n)
			return false;
		if (m > 0)
			n /= m;
	}
	for (int32_t c = d->child; c >= 0; c = P->nodes[c].next)
		if (!repeat_ok(P, c, n))
			return false;
	return true;
}

/* Makes cat's last child sub the child of a repeat that takes its place. */
static bool wrap_repeat(struct parser *P, int32_t cat, int32_t sub, int min, int max, bool counted)
{
	int32_t copy = new_node(P, N_EMPTY);
	if (copy < 0)
		return false;
	P->nodes[copy] = P->nodes[sub];
	P->nodes[copy].next = -1;
	P->nodes[sub] = (struct node){ .kind = N_REP, .counted = counted, .min = min, .max = max,
				       .child = copy, .last = -1, .next = -1, .height = 1 };
	return set_height(P, sub, P->nodes[copy].height + 1) &&
	       set_height(P, cat, P->nodes[sub].height + 1);
}

/* A repeat operator at P->i for cat's last child: 1 done, 0 none here, -1 error. *last_rep:
 * where the previous token's repeat began, if it was one (RE2 refuses a** and a*+). */
static int parse_repeat(struct parser *P, int32_t cat, size_t *last_rep)
{
	size_t at = P->i;
	uint8_t c = P->p[at];
	int min = c == '+', max = c == '?' ? 1 : -1;
	if (c == '*' || c == '+' || c == '?')
		P->i++;
	else if (c != '{' || !parse_braces(P, &min, &max))
		return 0;
	const char *what = (const char *)P->p + at;
	if (c == '{' && (min < 0 || min > TACHI_REGEX_MAX_REPEAT || max > TACHI_REGEX_MAX_REPEAT ||
			 (max >= 0 && min > max)))
		return fail(P, TACH_E_FORMAT, at, "invalid repeat count %.*s", (int)(P->i - at), what);
	if (P->i < P->n && P->p[P->i] == '?')
		P->i++; /* lazy: the same set of matches */
	if (*last_rep != SIZE_MAX)
		return fail(P, TACH_E_FORMAT, *last_rep, "invalid nested repetition operator %.*s",
			    (int)(P->i - *last_rep), (const char *)P->p + *last_rep);
	int32_t sub = P->nodes[cat].last;
	if (sub < 0)
		return fail(P, TACH_E_FORMAT, at, "missing argument to repetition operator %.*s",
			    (int)(P->i - at), what);
	if (!wrap_repeat(P, cat, sub, min, max, c == '{'))
		return -1;
	if (c == '{' && (min >= 2 || max >= 2) && !repeat_ok(P, sub, TACHI_REGEX_MAX_REPEAT))
		return fail(P, TACH_E_FORMAT, at, "invalid repeat count %.*s: nested repeats over "
			    "%d copies", (int)(P->i - at), what, TACHI_REGEX_MAX_REPEAT);
	*last_rep = at;
	return 1;
}

/* Its only child stands for a node of one child. */
static int32_t single(const struct parser *P, int32_t x)
{
	int32_t c = P->nodes[x].child;
	return c >= 0 && P->nodes[c].next < 0 ? c : x;
}

static int32_t parse_cat(struct parser *P, unsigned *flags, int depth)
{
	int32_t cat = new_node(P, N_CAT);
	size_t last_rep = SIZE_MAX;
	while (cat >= 0 && P->i < P->n && P->p[P->i] != '|' && P->p[P->i] != ')') {
		int k = parse_repeat(P, cat, &last_rep);
		if (k < 0)
			return -1;
		if (k)
			continue;
		last_rep = SIZE_MAX;
		int32_t a = parse_atom(P, flags, depth, cat);
		if (a == -1 || (a >= 0 && !add_child(P, cat, a)))
			return -1;
	}
	return cat < 0 ? -1 : single(P, cat);
}

static int32_t parse_alt(struct parser *P, unsigned *flags, int depth)
{
	int32_t alt = new_node(P, N_ALT);
	while (alt >= 0) {
		int32_t c = parse_cat(P, flags, depth);
		if (c < 0 || !add_child(P, alt, c))
			return -1;
		if (P->i >= P->n || P->p[P->i] != '|')
			return single(P, alt);
		P->i++;
	}
	return -1;
}

/* ---- the program ---- */

static bool emit(struct parser *P, struct tachi_regex *re, int op, int kind, uint32_t x, uint32_t y)
{
	if (re->n >= TACHI_REGEX_MAX_INSNS)
		return fail(P, TACH_E_LIMIT, 0, "expression too large: over %d instructions once "
			    "repeats are expanded", TACHI_REGEX_MAX_INSNS), false;
	if (!TACHI_RESERVE(re->prog, re->cap, re->n + 1))
		return nomem(P), false;
	re->prog[re->n++] = (struct insn){ (uint8_t)op, (uint8_t)kind, x, y };
	return true;
}

static bool gen(struct parser *P, struct tachi_regex *re, int32_t x);

/* Each branch but the last: split to it or the next; it jumps to the end. */
static bool gen_alt(struct parser *P, struct tachi_regex *re, int32_t x)
{
	uint32_t chain = UINT32_MAX;
	for (int32_t c = P->nodes[x].child; c >= 0; c = P->nodes[c].next) {
		if (P->nodes[c].next < 0) {
			if (!gen(P, re, c))
				return false;
			break;
		}
		uint32_t s = (uint32_t)re->n;
		if (!emit(P, re, I_SPLIT, 0, s + 1, 0) || !gen(P, re, c) ||
		    !emit(P, re, I_JMP, 0, chain, 0))
			return false;
		chain = (uint32_t)re->n - 1;
		re->prog[s].y = (uint32_t)re->n;
	}
	while (chain != UINT32_MAX) {
		uint32_t next = re->prog[chain].x;
		re->prog[chain].x = (uint32_t)re->n;
		chain = next;
	}
	return true;
}

/* x{n,m}: n copies, then m - n optional ones that each may end the repeat; x{n,}: n - 1
 * copies and a loop over the last (x* when n is 0). */
static bool gen_rep(struct parser *P, struct tachi_regex *re, int32_t x)
{
	const struct node *d = &P->nodes[x];
	int32_t sub = d->child;
	int min = d->max < 0 && d->min > 0 ? d->min - 1 : d->min;
	for (int k = 0; k < min; k++)
		if (!gen(P, re, sub))
			return false;
	uint32_t s = (uint32_t)re->n, chain = UINT32_MAX;
	if (d->max < 0 && d->min > 0)
		return gen(P, re, sub) && emit(P, re, I_SPLIT, 0, s, (uint32_t)re->n + 1);
	if (d->max < 0) {
		if (!emit(P, re, I_SPLIT, 0, s + 1, 0) || !gen(P, re, sub) ||
		    !emit(P, re, I_JMP, 0, s, 0))
			return false;
		re->prog[s].y = (uint32_t)re->n;
		return true;
	}
	for (int k = d->min; k < d->max; k++) {
		s = (uint32_t)re->n;
		if (!emit(P, re, I_SPLIT, 0, s + 1, chain) || !gen(P, re, sub))
			return false;
		chain = s;
	}
	while (chain != UINT32_MAX) {
		uint32_t next = re->prog[chain].y;
		re->prog[chain].y = (uint32_t)re->n;
		chain = next;
	}
	return true;
}

static bool gen(struct parser *P, struct tachi_regex *re, int32_t x)
{
	const struct node *d = &P->nodes[x];
	switch (d->kind) {
	case N_CLASS:
		return emit(P, re, I_CLASS, 0, (uint32_t)d->min, (uint32_t)d->max);
	case N_ASSERT:
		return emit(P, re, I_ASSERT, d->min, 0, 0);
	case N_CAT:
		for (int32_t c = d->child; c >= 0; c = P->nodes[c].next)
			if (!gen(P, re, c))
				return false;
		return true;
	case N_ALT:
		return gen_alt(P, re, x);
	case N_REP:
		return gen_rep(P, re, x);
	default:
		return true;
	}
}

/* The fewest bytes a match takes (a code point takes at least one), saturating. */
static size_t min_len(const struct parser *P, int32_t x)
{
	const struct node *d = &P->nodes[x];
	size_t sum = 0, m = SIZE_MAX;
	switch (d->kind) {
	case N_CLASS:
		return 1;
	case N_CAT:
		for (int32_t c = d->child; c >= 0; c = P->nodes[c].next)
			if (__builtin_add_overflow(sum, min_len(P, c), &sum))
				return SIZE_MAX;
		return sum;
	case N_ALT:
		for (int32_t c = d->child; c >= 0; c = P->nodes[c].next) {
			size_t k = min_len(P, c);
			m = k < m ? k : m;
		}
		return m;
	case N_REP:
		return __builtin_mul_overflow(min_len(P, d->child), (size_t)d->min, &sum) ?
			       SIZE_MAX : sum;
	default:
		return 0;
	}
}

/* ---- matching ---- */

/* What an assertion sees at a position: the byte before it and the code point after it
 * (a byte >= 0x80 is neither a word character nor a newline, and neither is a code point
 * that it starts). */
enum { C_START = 1, C_WORD = 2, C_NL = 4, C_END = 8 };

static unsigned rune_ctx(uint32_t r)
{
	return (r < 0x80 && is_word((int)r) ? C_WORD : 0) | (r == '\n' ? C_NL : 0);
}

/* prev: C_START or the byte before's C_WORD, C_NL; next: C_END or the next one's. */
static bool holds(int kind, unsigned prev, unsigned next)
{
	switch (kind) {
	case A_BOT: return prev & C_START;
	case A_EOT: return next & C_END;
	case A_BOL: return prev & (C_START | C_NL);
	case A_EOL: return next & (C_END | C_NL);
	default: return (!(prev & C_WORD) != !(next & C_WORD)) == (kind == A_WORD);
	}
}

/* Adds pc to list l with every instruction it reaches without consuming input, each once
 * per list: true when that reaches MATCH. */
static bool add_thread(struct tachi_regex *re, int l, uint32_t pc, unsigned prev, unsigned next)
{
	uint32_t *dense = re->dense[l], *sparse = re->sparse[l], *st = re->stack;
	size_t sp = 0;
	st[sp++] = pc;
	while (sp) {
		pc = st[--sp];
		uint32_t k = sparse[pc];
		if (k < re->count[l] && dense[k] == pc)
			continue;
		sparse[pc] = (uint32_t)re->count[l];
		dense[re->count[l]++] = pc;
		re->work++;
		const struct insn *in = &re->prog[pc];
		if (in->op == I_MATCH)
			return true;
		if (in->op == I_JMP)
			st[sp++] = in->x;
		else if (in->op == I_SPLIT)
			st[sp++] = in->y, st[sp++] = in->x;
		else if (in->op == I_ASSERT && holds(in->kind, prev, next))
			st[sp++] = pc + 1;
	}
	return false;
}

/* Ranges are sorted and disjoint: a binary search. */
static bool in_class(const uint32_t *rg, uint32_t count, uint32_t r)
{
	uint32_t lo = 0, hi = count;
	while (lo < hi) {
		uint32_t mid = lo + (hi - lo) / 2;
		if (r < rg[2 * mid])
			hi = mid;
		else if (r > rg[2 * mid + 1])
			lo = mid + 1;
		else
			return true;
	}
	return false;
}

static unsigned byte_ctx(const uint8_t *s, size_t n, size_t pos, bool before)
{
	if (before)
		return pos == 0 ? C_START : rune_ctx(s[pos - 1]);
	return pos == n ? C_END : rune_ctx(s[pos]);
}

bool tachi_regex_search_nfa(struct tachi_regex *re, const char *str, size_t n)
{
	const uint8_t *s = (const uint8_t *)str;
	int cur = 0;
	if (n < re->min_len)
		return false;
	re->count[0] = 0;
	for (size_t pos = 0;;) {
		if ((pos == 0 || !re->anchored) &&
		    add_thread(re, cur, 0, byte_ctx(s, n, pos, true), byte_ctx(s, n, pos, false)))
			return true;
		if (pos >= n || (re->anchored && !re->count[cur]))
			return false;
		size_t w;
		uint32_t r = decode(s + pos, n - pos, &w);
		int nx = !cur;
		re->count[nx] = 0;
		unsigned prev = rune_ctx(r), next = byte_ctx(s, n, pos + w, false);
		for (size_t t = 0; t < re->count[cur]; t++) {
			uint32_t pc = re->dense[cur][t];
			const struct insn *in = &re->prog[pc];
			if (in->op == I_CLASS && in_class(re->rg + in->x, in->y, r) &&
			    add_thread(re, nx, pc + 1, prev, next))
				return true;
		}
		cur = nx;
		pos += w;
	}
}

/* ---- the lazy DFA ----
 *
 * As RE2 does: a state is the set of instructions the NFA would be at (before following
 * empty moves) plus what assertions need of the byte before; its transitions are made the
 * first time they are taken, on classes of code points that every instruction treats
 * alike. Making one costs up to the program's size; taking a made one costs a lookup. The
 * states are kept under TACHI_REGEX_DFA_MEM bytes (all dropped when full), and the work
 * of making them is counted against the handle's budget: some patterns have a new state
 * at almost every byte (.*a.{500}), and no cache helps those. */

#define T_UNKNOWN (-1)
#define T_DEAD (-2)
#define T_MATCH (-3)

struct dstate {
	uint32_t off, n; /* its instructions: pcs[off, off + n), sorted */
	uint32_t ctx;    /* C_START, C_WORD, C_NL of the byte before */
	uint32_t hash;
};

static uint32_t kernel_hash(const uint32_t *pc, size_t n, unsigned ctx)
{
	uint32_t h = 2166136261u ^ ctx;
	for (size_t k = 0; k < n; k++)
		h = (h ^ pc[k]) * 16777619u;
	return h;
}

static int cmp_u32(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* The code point classes: boundaries of every range, of word characters and of '\n'. The
 * copies a repeat makes of a class share its ranges: each set is read once. */
static bool make_classes(struct tachi_regex *re)
{
	static const uint32_t fixed[] = { 0, '\n', '\n' + 1, '0', '9' + 1, 'A', 'Z' + 1,
					  '_', '_' + 1, 'a', 'z' + 1, 0x80 };
	size_t nf = sizeof(fixed) / sizeof(fixed[0]), cap = nf, n = 0, nsets = 0;
	uint32_t *sets = malloc((re->n + 1) * 2 * sizeof(uint32_t));
	if (!sets)
		return false;
	for (size_t pc = 0; pc < re->n; pc++)
		if (re->prog[pc].op == I_CLASS)
			sets[2 * nsets] = re->prog[pc].x, sets[2 * nsets++ + 1] = re->prog[pc].y;
	qsort(sets, nsets, 2 * sizeof(uint32_t), cmp_range);
	size_t u = 0;
	for (size_t k = 0; k < nsets; k++)
		if (!u || sets[2 * k] != sets[2 * (u - 1)]) {
			sets[2 * u] = sets[2 * k], sets[2 * u + 1] = sets[2 * k + 1];
			cap += 2 * (size_t)sets[2 * u++ + 1];
		}
	uint32_t *b = malloc(cap * sizeof(uint32_t));
	if (!b)
		return free(sets), false;
	for (size_t k = 0; k < nf; k++)
		b[n++] = fixed[k];
	for (size_t k = 0; k < u; k++)
		for (uint32_t j = 0; j < sets[2 * k + 1]; j++) {
			const uint32_t *r = re->rg + sets[2 * k] + 2 * j;
			b[n++] = r[0];
			if (r[1] < MAX_RUNE)
				b[n++] = r[1] + 1;
		}
	free(sets);
	qsort(b, n, sizeof(uint32_t), cmp_u32);
	u = 0;
	for (size_t k = 0; k < n; k++)
		if (!u || b[k] != b[u - 1])
			b[u++] = b[k];
	re->bnd = b;
	re->nclass = u;
	for (uint32_t c = 0, k = 0; c < 0x80; c++) {
		while (k + 1 < u && b[k + 1] <= c)
			k++;
		re->ascii[c] = k;
	}
	return true;
}

static uint32_t class_of(const struct tachi_regex *re, uint32_t r)
{
	if (r < 0x80)
		return re->ascii[r];
	size_t lo = 0, hi = re->nclass; /* the last boundary <= r */
	while (hi - lo > 1) {
		size_t mid = lo + (hi - lo) / 2;
		if (re->bnd[mid] <= r)
			lo = mid;
		else
			hi = mid;
	}
	return (uint32_t)lo;
}

static void dfa_flush(struct tachi_regex *re)
{
	re->nstates = re->npcs = re->mem = 0;
	if (re->htab)
		memset(re->htab, 0xff, re->hcap * sizeof(int32_t));
}

static bool dfa_rehash(struct tachi_regex *re)
{
	size_t cap = re->hcap ? re->hcap * 2 : 64;
	int32_t *h = malloc(cap * sizeof(int32_t));
	if (!h)
		return false;
	memset(h, 0xff, cap * sizeof(int32_t));
	for (size_t k = 0; k < re->nstates; k++) {
		size_t j = re->states[k].hash & (cap - 1);
		while (h[j] >= 0)
			j = (j + 1) & (cap - 1);
		h[j] = (int32_t)k;
	}
	free(re->htab);
	re->htab = h, re->hcap = cap;
	return true;
}

/* The state of kernel pc[0, n) after a byte of context ctx: found or added. -1 out of
 * memory; *flushed when the cache was emptied to make room. */
static int32_t dfa_state(struct tachi_regex *re, const uint32_t *pc, size_t n, unsigned ctx,
			 bool *flushed)
{
	uint32_t h = kernel_hash(pc, n, ctx);
	for (size_t j = h & (re->hcap - 1); re->hcap && re->htab[j] >= 0; j = (j + 1) & (re->hcap - 1)) {
		const struct dstate *d = &re->states[re->htab[j]];
		if (d->hash == h && d->ctx == ctx && d->n == n &&
		    !memcmp(re->pcs + d->off, pc, n * sizeof(uint32_t)))
			return re->htab[j];
	}
	size_t cost = n * sizeof(uint32_t) + (re->nclass + 1) * sizeof(int32_t) +
		      sizeof(struct dstate) + 2 * sizeof(int32_t);
	if (re->mem + cost > TACHI_REGEX_DFA_MEM && re->nstates) {
		dfa_flush(re);
		*flushed = true;
	}
	if ((2 * (re->nstates + 1) > re->hcap && !dfa_rehash(re)) ||
	    !TACHI_RESERVE(re->states, re->states_cap, re->nstates + 1) ||
	    !TACHI_RESERVE(re->pcs, re->pcs_cap, re->npcs + n) ||
	    !TACHI_RESERVE(re->next, re->next_cap, (re->nstates + 1) * (re->nclass + 1)))
		return -1;
	int32_t id = (int32_t)re->nstates++;
	re->states[id] = (struct dstate){ (uint32_t)re->npcs, (uint32_t)n, ctx, h };
	memcpy(re->pcs + re->npcs, pc, n * sizeof(uint32_t));
	re->npcs += n;
	memset(re->next + (size_t)id * (re->nclass + 1), 0xff, (re->nclass + 1) * sizeof(int32_t));
	size_t j = h & (re->hcap - 1);
	while (re->htab[j] >= 0)
		j = (j + 1) & (re->hcap - 1);
	re->htab[j] = id;
	re->mem += cost;
	re->work += (re->nclass + 1) / 16; /* its row of transitions, cleared */
	return id;
}

/* The state after id's kernel reads class c (nclass: the end of the subject): T_DEAD,
 * T_MATCH, a state, or -4 out of memory; *flushed when that emptied the cache. */
static int32_t dfa_next(struct tachi_regex *re, int32_t id, uint32_t c, bool *flushed)
{
	const struct dstate d = re->states[id];
	bool end = c == re->nclass;
	uint32_t rep = end ? 0 : re->bnd[c];
	unsigned next = end ? C_END : rune_ctx(rep);
	re->count[0] = re->count[1] = 0;
	for (uint32_t k = 0; k < d.n; k++)
		if (add_thread(re, 0, re->pcs[d.off + k], d.ctx, next))
			return T_MATCH;
	if (end)
		return T_DEAD;
	/* the next kernel in pc order, through a bitmap: sorting would cost more than the
	 * rest of the step */
	uint64_t *bits = re->bits;
	size_t n = 0, words = (re->n + 64) / 64;
	memset(bits, 0, words * sizeof(uint64_t));
	if (!re->anchored)
		bits[0] = 1, n++; /* a match may start at the next position */
	for (size_t t = 0; t < re->count[0]; t++) {
		uint32_t pc = re->dense[0][t];
		const struct insn *in = &re->prog[pc];
		if (in->op == I_CLASS && in_class(re->rg + in->x, in->y, rep))
			bits[(pc + 1) / 64] |= 1ull << ((pc + 1) % 64), n++;
	}
	re->work += n + words / 8;
	if (!n)
		return T_DEAD;
	uint32_t *out = re->dense[1];
	n = 0;
	for (size_t k = 0; k < words; k++)
		for (uint64_t b = bits[k]; b; b &= b - 1)
			out[n++] = (uint32_t)(k * 64 + (unsigned)__builtin_ctzll(b));
	int32_t to = dfa_state(re, out, n, rune_ctx(rep), flushed);
	return to < 0 ? -4 : to;
}

/* Makes state id's transition on class c: as dfa_next, or T_UNKNOWN when the budget is
 * spent. */
static int32_t dfa_step(struct tachi_regex *re, int32_t id, uint32_t c)
{
	if (re->work > re->budget)
		return T_UNKNOWN;
	bool flushed = false;
	int32_t to = dfa_next(re, id, c, &flushed);
	if (to != -4 && !flushed)
		re->next[(size_t)id * (re->nclass + 1) + c] = to;
	return to;
}

int tachi_regex_match(struct tachi_regex *re, const char *str, size_t n)
{
	const uint8_t *s = (const uint8_t *)str;
	if (n < re->min_len)
		return 0;
	bool flushed = false;
	uint32_t zero = 0;
	int32_t cur = dfa_state(re, &zero, 1, C_START, &flushed);
	if (cur < 0)
		return TACH_E_NOMEM;
	for (size_t pos = 0;;) {
		uint32_t c = (uint32_t)re->nclass;
		size_t w = 0;
		if (pos < n)
			c = class_of(re, decode(s + pos, n - pos, &w));
		int32_t to = re->next[(size_t)cur * (re->nclass + 1) + c];
		if (to == T_UNKNOWN && (to = dfa_step(re, cur, c)) == T_UNKNOWN)
			return TACH_E_LIMIT;
		if (to == -4)
			return TACH_E_NOMEM;
		if (to == T_MATCH || to == T_DEAD)
			return to == T_MATCH;
		cur = to;
		pos += w;
	}
}

/* ---- the handle ---- */

static bool scratch(struct tachi_regex *re)
{
	for (int l = 0; l < 2; l++)
		if (!(re->dense[l] = calloc(re->n, sizeof(uint32_t))) ||
		    !(re->sparse[l] = calloc(re->n, sizeof(uint32_t))))
			return false;
	return (re->stack = calloc(2 * re->n + 2, sizeof(uint32_t))) != NULL &&
	       (re->bits = calloc(re->n / 64 + 1, sizeof(uint64_t))) != NULL;
}

int tachi_regex_compile(const char *pat, size_t n, struct tachi_regex **out,
			struct tachi_regex_err *err)
{
	struct parser P = { .p = (const uint8_t *)pat, .n = n, .err = err, .uni_at = SIZE_MAX };
	unsigned flags = 0;
	*out = NULL;
	err->at = 0;
	err->msg[0] = 0;
	struct tachi_regex *re = calloc(1, sizeof(*re));
	if (!re)
		return nomem(&P), P.rc;
	int32_t root = parse_alt(&P, &flags, 0);
	if (root >= 0 && P.i < P.n)
		fail(&P, TACH_E_FORMAT, P.i, "unexpected )");
	if (P.uni_at != SIZE_MAX)
		fail(&P, TACH_E_UNSUPPORTED, P.uni_at, "Unicode class \\%c: not supported here "
		     "(ASCII classes are: [[:alpha:]], \\d, \\w, \\s)", P.p[P.uni_at + 1]);
	re->rg = P.rg;
	if (!P.rc && gen(&P, re, root) && emit(&P, re, I_MATCH, 0, 0, 0) &&
	    (!scratch(re) || !make_classes(re)))
		nomem(&P);
	re->budget = UINT64_MAX;
	if (!P.rc)
		re->min_len = min_len(&P, root);
	free(P.nodes);
	re->rg = P.rg;
	if (P.rc) {
		tachi_regex_free(re);
		return P.rc;
	}
	re->anchored = re->prog[0].op == I_ASSERT && re->prog[0].kind == A_BOT;
	*out = re;
	return TACH_OK;
}

size_t tachi_regex_size(const struct tachi_regex *re)
{
	return re->n;
}

void tachi_regex_set_budget(struct tachi_regex *re, uint64_t steps)
{
	re->budget = steps;
}

uint64_t tachi_regex_work(const struct tachi_regex *re)
{
	return re->work;
}

void tachi_regex_free(struct tachi_regex *re)
{
	if (!re)
		return;
	for (int l = 0; l < 2; l++)
		free(re->dense[l]), free(re->sparse[l]);
	free(re->stack);
	free(re->bits);
	free(re->prog);
	free(re->rg);
	free(re->bnd);
	free(re->states);
	free(re->pcs);
	free(re->next);
	free(re->htab);
	free(re);
}
