/* callgrind reader: the text that valgrind's callgrind tool writes (callgrind.out.PID),
 * xdebug's profiler (cachegrind.out.*), and tach2callgrind, read as speedscope's importer
 * reads it, so that its stacks are speedscope's.
 *
 * The file: header lines "key: value" (only "events:", the cost columns' names, and
 * "positions:", how many position columns a cost line starts with, matter here), then
 * assignments "ob= fl= fi= fe= fn= cob= cfi= cfl= cfn= calls= jump= jcnd=", each name
 * either plain or compressed ("(7) name" defines id 7, "(7)" reuses it; files and functions
 * each have their own ids), and cost lines "POSITIONS COSTS", a position a number (0x for
 * hex), "+N", "-N" (relative to the previous cost line's) or "*" (the same); costs past
 * the line's end are 0. A cost line after "calls=COUNT TARGET" is the call's inclusive
 * cost, that of the function cfn= named (in cfi='s file, else the caller's); any other is
 * the current function's self cost. A function is (fl= file, fn= name): fi= and fe= move
 * the cost lines into an inlined file without making another function, and objects (ob=)
 * do not tell functions apart, as in speedscope. The line after jump= or jcnd= is a jump's
 * source position, no cost.
 *
 * What the call graph cannot say: which stacks the costs were spent in. A function's cost
 * is known, and what each caller's calls into it cost, not which of its callees' costs
 * came through which caller. So, per event, as speedscope builds its flame graph: every
 * function that nothing calls is a root with its total cost (self plus calls); a function
 * reached with weight w gives each callee w × (the call's cost / its own total), and keeps
 * the rest as its self cost at that stack; a callee already on the stack (recursion) or
 * whose share is under 1/10000 of the largest function total is not entered (its share
 * stays with the caller). Stacks through a function with one caller are exact; through
 * one with several, its callees' costs are split in proportion, which the program may not
 * have done. That is said once on stderr where some function has two callers or calls
 * itself. Shares are whole numbers (rounded down, the
 * remainder kept by the caller), so the total of every event is kept exactly, and in a
 * call tree (every function one caller) so is each function's self cost.
 *
 * What a sample becomes: one per stack with a self cost, thread 0, timestamp 0 (callgrind
 * has no times). Each event is a value of its type (meta.value_types: the event's name,
 * its unit from our own long names "Name (unit)", else "count"); the weights are the
 * first event's. tach2callgrind's own "Samples" event (with "Time_ns") is read back as it
 * was written: the weights count samples again, Time_ns is each sample's time and the
 * interval comes from "Samples, one per N us". A stack whose first event's cost is 0 has
 * no weight and is dropped (said once when another event had a cost there).
 *
 * Bounds: names to TACHI_MAX_STRING, up to MAX_EVENTS events, costs to 2^63 - 1 each and
 * summed, the stack to max-depth, MAX_STACKS stacks built; memory follows the functions
 * and the calls, never the lines. Refused with the line: a line that is none of these, a
 * cost line before "events:", a second "events:", a compressed id used before it is
 * defined or defined twice, more costs than events, a relative position with no previous
 * one. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/callgrind/callgrind.h"

#define NONE UINT32_MAX
#define MAX_EVENTS 256
#define MAX_POSITIONS 2
#define MAX_STACKS (1u << 24)
#define COST_MAX ((uint64_t)INT64_MAX)

struct cgr_name {
	uint64_t num;            /* the compressed id */
	uint32_t str;            /* dict string */
};
struct cgr_names {
	struct cgr_name *v;
	size_t n, cap;
	struct tachi_idset index;
};
struct cgr_fn {
	uint32_t file, name;     /* dict strings */
	uint32_t frame;          /* dict frame */
	uint32_t first, nkids;   /* its calls: kids[first, first + nkids) */
	bool called;
};
struct cgr_edge {
	uint32_t from, to;
};
/* One function on the stack being walked. */
struct cgr_level {
	uint32_t fn;
	uint32_t next;           /* its next call to try */
};

struct cgr_state {
	struct cgr_names files, fnames;
	struct cgr_fn *fns;
	size_t nfns, fns_cap;
	struct tachi_idset fn_index;
	uint64_t *total;         /* [nfns * nev]: self plus calls */
	struct cgr_edge *edges;
	size_t nedges, edges_cap;
	struct tachi_idset edge_index;
	uint64_t *ecost;         /* [nedges * nev] */
	uint32_t *kids;          /* edges ordered by caller, first-seen order within */
	/* parsing */
	uint32_t nev, npos;
	bool has_events, has_positions, in_call, skip_line, prev_ok;
	uint32_t file, fn, cfile, cname; /* dict strings (fn: function index), NONE: unset */
	uint64_t prev[MAX_POSITIONS];
	uint64_t *cost;          /* [nev]: the cost line being read */
	uint64_t *maxtot;        /* [nev]: the largest function total, for the pruning */
	/* events and values */
	struct tach_value_type *vt;
	char **vt_own;
	size_t vt_cap;
	bool ours;               /* tach2callgrind's "Samples [Time_ns]" */
	bool guessed;            /* a function has two callers or calls itself */
	int time_col;            /* ours: Time_ns's column, -1 none */
	/* walking */
	uint32_t *roots;
	size_t nroots, root_at;
	struct cgr_level *path;
	size_t depth, path_cap;
	double *w;               /* [depth * nev]: the weight each level was entered with */
	double *rem;             /* [depth * nev]: what its calls tried so far left of it */
	size_t w_cap, rem_cap;
	uint8_t *onpath;         /* [nfns] */
	double *self, *share;    /* [nev] each */
	double *cum;             /* [nev]: every self cost handed out so far */
	int64_t *vals;           /* [nev] */
	uint32_t *out;
	size_t out_cap;
	uint64_t stacks, dropped;
	struct tach_sample_ext ext;
	char *sbuf;
	size_t sbuf_cap;
};

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

static int bad(struct tach_reader *r, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "%s", what);
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void trim(const char **s, size_t *n)
{
	while (*n && is_space(**s))
		(*s)++, (*n)--;
	while (*n && is_space((*s)[*n - 1]))
		(*n)--;
}

static int intern(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	if (n > TACHI_MAX_STRING)
		return bad(r, "a name longer than 1 MiB");
	return tach_dict_intern_string(&r->dict, s, n, id) ? nomem(r) : TACH_OK;
}

/* ---- names, functions, calls ---- */

static bool name_eq(void *ctx, uint32_t id, const void *key)
{
	const struct cgr_names *t = ctx;
	return t->v[id].num == *(const uint64_t *)key;
}

/* A name as written, "(id) name", "(id)" or "name", to a dict string. */
static int name_value(struct tach_reader *r, struct cgr_names *t, const char *s, size_t n,
		      uint32_t *str)
{
	trim(&s, &n);
	if (!n || s[0] != '(')
		return intern(r, s, n, str);
	const char *close = memchr(s, ')', n);
	uint64_t num;
	if (!close || !tachi_parse_dec(s + 1, (size_t)(close - s - 1), UINT64_MAX, &num))
		return intern(r, s, n, str);
	size_t rest = n - (size_t)(close - s) - 1;
	const char *name = close + 1;
	trim(&name, &rest);
	uint64_t h = tachi_mix64(num);
	uint32_t k;
	bool known = tachi_idset_find(&t->index, h, &num, name_eq, t, &k);
	if (!rest) {
		if (!known)
			return bad(r, "a compressed name used before it is defined");
		*str = t->v[k].str;
		return TACH_OK;
	}
	if (known)
		return bad(r, "a compressed name defined twice");
	if (t->n >= UINT32_MAX - 1)
		return bad(r, "more than 2^32 - 2 compressed names");
	int rc = intern(r, name, rest, str);
	if (rc)
		return rc;
	if (!TACHI_RESERVE(t->v, t->cap, t->n + 1) ||
	    !tachi_idset_insert(&t->index, h, (uint32_t)t->n))
		return nomem(r);
	t->v[t->n++] = (struct cgr_name){ num, *str };
	return TACH_OK;
}

static bool fn_eq(void *ctx, uint32_t id, const void *key)
{
	const struct cgr_state *st = ctx;
	const uint32_t *k = key;
	return st->fns[id].file == k[0] && st->fns[id].name == k[1];
}

/* The function (file, name), made on first use; an unset file or name is "(unknown)". */
/* Row n (zeroed) of a table of nev costs a row, grown to n + 1 rows. Never a size of 0:
 * realloc would free the table and give NULL (a file of no events). */
static bool cost_row(uint64_t **table, size_t n, size_t nev)
{
	size_t cells;
	if (__builtin_mul_overflow(n + 1, nev ? nev : 1, &cells) ||
	    cells > SIZE_MAX / sizeof(uint64_t))
		return false;
	uint64_t *t = realloc(*table, cells * sizeof(*t));
	if (!t)
		return false;
	*table = t;
	memset(t + n * nev, 0, nev * sizeof(*t));
	return true;
}

static int function(struct tach_reader *r, uint32_t file, uint32_t name, uint32_t *out)
{
	struct cgr_state *st = r->state;
	int rc;
	if (file == NONE && (rc = intern(r, "(unknown)", 9, &file)))
		return rc;
	if (name == NONE && (rc = intern(r, "(unknown)", 9, &name)))
		return rc;
	uint32_t key[2] = { file, name };
	uint64_t h = tachi_mix64((uint64_t)file << 32 | name);
	if (tachi_idset_find(&st->fn_index, h, key, fn_eq, st, out))
		return TACH_OK;
	if (st->nfns >= UINT32_MAX - 1)
		return bad(r, "more than 2^32 - 2 functions");
	if (!TACHI_RESERVE(st->fns, st->fns_cap, st->nfns + 1) ||
	    !tachi_idset_insert(&st->fn_index, h, (uint32_t)st->nfns))
		return nomem(r);
	if (!cost_row(&st->total, st->nfns, st->nev))
		return nomem(r);
	st->fns[st->nfns] = (struct cgr_fn){ file, name, NONE, 0, 0, false };
	*out = (uint32_t)st->nfns++;
	return TACH_OK;
}

static bool edge_eq(void *ctx, uint32_t id, const void *key)
{
	const struct cgr_state *st = ctx;
	const struct cgr_edge *k = key;
	return st->edges[id].from == k->from && st->edges[id].to == k->to;
}

static int edge(struct tach_reader *r, uint32_t from, uint32_t to, uint32_t *out)
{
	struct cgr_state *st = r->state;
	struct cgr_edge k = { from, to };
	uint64_t h = tachi_mix64((uint64_t)from << 32 | to);
	if (tachi_idset_find(&st->edge_index, h, &k, edge_eq, st, out))
		return TACH_OK;
	if (st->nedges >= UINT32_MAX - 1)
		return bad(r, "more than 2^32 - 2 calls");
	if (!TACHI_RESERVE(st->edges, st->edges_cap, st->nedges + 1) ||
	    !tachi_idset_insert(&st->edge_index, h, (uint32_t)st->nedges))
		return nomem(r);
	if (!cost_row(&st->ecost, st->nedges, st->nev))
		return nomem(r);
	st->edges[st->nedges] = k;
	st->fns[to].called = true;
	*out = (uint32_t)st->nedges++;
	return TACH_OK;
}

static int add_costs(struct tach_reader *r, uint64_t *to)
{
	struct cgr_state *st = r->state;
	for (uint32_t e = 0; e < st->nev; e++)
		if (__builtin_add_overflow(to[e], st->cost[e], &to[e]) || to[e] > COST_MAX)
			return bad(r, "costs add up past 2^63 - 1");
	return TACH_OK;
}

/* ---- lines ---- */

/* "events: A B ..." into value types; "positions: instr line". */
static int header_events(struct tach_reader *r, const char *v, size_t n)
{
	struct cgr_state *st = r->state;
	if (st->has_events)
		return bad(r, "a second \"events:\" line");
	st->has_events = true;
	for (size_t i = 0; i < n;) {
		while (i < n && is_space(v[i]))
			i++;
		size_t s = i;
		while (i < n && !is_space(v[i]))
			i++;
		if (i == s)
			break;
		if (st->nev >= MAX_EVENTS)
			return bad(r, "more than 256 events");
		if (!TACHI_RESERVE(st->vt_own, st->vt_cap, st->nev + 1))
			return nomem(r);
		char *name = malloc(i - s + 1);
		if (!name)
			return nomem(r);
		memcpy(name, v + s, i - s);
		name[i - s] = 0;
		st->vt_own[st->nev++] = name;
	}
	if (!st->nev)
		return bad(r, "\"events:\" names no event");
	st->vt = calloc(st->nev, sizeof(*st->vt));
	st->cost = calloc(st->nev, sizeof(*st->cost));
	st->maxtot = calloc(st->nev, sizeof(*st->maxtot));
	st->self = calloc(st->nev, sizeof(*st->self));
	st->share = calloc(st->nev, sizeof(*st->share));
	st->cum = calloc(st->nev, sizeof(*st->cum));
	st->vals = calloc(st->nev, sizeof(*st->vals));
	if (!st->vt || !st->cost || !st->maxtot || !st->self || !st->share || !st->cum || !st->vals)
		return nomem(r);
	for (uint32_t e = 0; e < st->nev; e++)
		st->vt[e] = (struct tach_value_type){ st->vt_own[e], "count" };
	return TACH_OK;
}

static int header_positions(struct tach_reader *r, const char *v, size_t n)
{
	struct cgr_state *st = r->state;
	uint32_t k = 0;
	for (size_t i = 0; i < n;) {
		while (i < n && is_space(v[i]))
			i++;
		size_t s = i;
		while (i < n && !is_space(v[i]))
			i++;
		if (i == s)
			break;
		if ((i - s != 4 || memcmp(v + s, "line", 4)) &&
		    (i - s != 5 || memcmp(v + s, "instr", 5)))
			return bad(r, "\"positions:\" names other than instr and line");
		if (++k > MAX_POSITIONS)
			return bad(r, "\"positions:\" names more than instr and line");
	}
	if (!k || st->has_positions || st->has_events)
		return bad(r, k ? "\"positions:\" after the events or twice"
				: "\"positions:\" names no position");
	st->npos = k;
	st->has_positions = true;
	return TACH_OK;
}

/* "WORD: value": a header line; only events: and positions: are read. */
static bool header(struct tach_reader *r, const char *s, size_t n, int *rc)
{
	size_t k = 0;
	while (k < n && (s[k] == '_' || (s[k] >= '0' && s[k] <= '9') ||
			 ((s[k] | 32) >= 'a' && (s[k] | 32) <= 'z')))
		k++;
	if (!k || k >= n || s[k] != ':')
		return false;
	const char *v = s + k + 1;
	size_t vn = n - k - 1;
	trim(&v, &vn);
	*rc = TACH_OK;
	if (k == 6 && !memcmp(s, "events", 6))
		*rc = header_events(r, v, vn);
	else if (k == 9 && !memcmp(s, "positions", 9))
		*rc = header_positions(r, v, vn);
	return true;
}

static bool parse_hex(const char *s, size_t n, uint64_t *out)
{
	uint64_t x = 0;
	if (!n || n > 16)
		return false;
	for (size_t i = 0; i < n; i++) {
		int h = tachi_hexval(s[i]);
		if (h < 0)
			return false;
		x = x << 4 | (uint64_t)h;
	}
	*out = x;
	return true;
}

/* One position: a number (0x hex), +N, -N or *, against the previous line's. */
static bool position(const char *s, size_t n, bool prev_ok, uint64_t prev, uint64_t *out)
{
	uint64_t v;
	if (n == 1 && s[0] == '*') {
		*out = prev;
		return prev_ok;
	}
	if (s[0] == '+' || s[0] == '-') {
		bool hex = n > 3 && s[1] == '0' && (s[2] | 32) == 'x';
		if (!prev_ok || (hex ? !parse_hex(s + 3, n - 3, &v)
				     : !tachi_parse_dec(s + 1, n - 1, UINT64_MAX, &v)))
			return false;
		return s[0] == '+' ? !__builtin_add_overflow(prev, v, out)
				   : !__builtin_sub_overflow(prev, v, out);
	}
	if (n > 2 && s[0] == '0' && (s[1] | 32) == 'x')
		return parse_hex(s + 2, n - 2, out);
	return tachi_parse_dec(s, n, UINT64_MAX, out);
}

/* A cost line into st->cost; false (no error) when it is none. */
static int cost_line(struct tach_reader *r, const char *s, size_t n, bool *is_cost)
{
	struct cgr_state *st = r->state;
	uint32_t col = 0;
	uint64_t pos[MAX_POSITIONS];
	*is_cost = false;
	if (!n || !((s[0] >= '0' && s[0] <= '9') || s[0] == '+' || s[0] == '-' || s[0] == '*'))
		return TACH_OK;
	*is_cost = true;
	if (!st->has_events)
		return bad(r, "a cost line before \"events:\"");
	memset(st->cost, 0, st->nev * sizeof(*st->cost));
	for (size_t i = 0; i < n;) {
		while (i < n && is_space(s[i]))
			i++;
		size_t b = i;
		while (i < n && !is_space(s[i]))
			i++;
		if (i == b)
			break;
		if (col < st->npos) {
			if (!position(s + b, i - b, st->prev_ok, st->prev[col], &pos[col]))
				return bad(r, "a cost line's position is no number, or relative "
					   "to none");
		} else if (col - st->npos >= st->nev) {
			return bad(r, "a cost line with more costs than events");
		} else if (!tachi_parse_dec(s + b, i - b, COST_MAX, &st->cost[col - st->npos])) {
			return bad(r, "a cost is no number 0..2^63 - 1");
		}
		col++;
	}
	if (col < st->npos)
		return bad(r, "a cost line with fewer positions than \"positions:\" names");
	memcpy(st->prev, pos, st->npos * sizeof(*pos));
	st->prev_ok = true;
	return TACH_OK;
}

/* The cost just read: the current function's self cost, or a call's. */
static int book_cost(struct tach_reader *r)
{
	struct cgr_state *st = r->state;
	uint32_t fn, callee, e = 0;
	int rc;
	if (st->fn == NONE && (rc = function(r, st->file, NONE, &st->fn)))
		return rc;
	fn = st->fn;
	if (!st->in_call)
		return add_costs(r, st->total + (size_t)fn * st->nev);
	st->in_call = false;
	if ((rc = function(r, st->cfile != NONE ? st->cfile : st->file, st->cname, &callee)) ||
	    (rc = edge(r, fn, callee, &e)))
		return rc;
	st->cfile = st->cname = NONE;
	if ((rc = add_costs(r, st->ecost + (size_t)e * st->nev)))
		return rc;
	return add_costs(r, st->total + (size_t)fn * st->nev);
}

/* "key=value": the assignments speedscope reads; false when the line is none. */
static bool assignment(struct tach_reader *r, const char *s, size_t n, int *rc)
{
	struct cgr_state *st = r->state;
	const char *eq = memchr(s, '=', n);
	if (!eq || eq == s)
		return false;
	size_t k = (size_t)(eq - s), vn = n - k - 1;
	const char *v = eq + 1;
	for (size_t i = 0; i < k; i++)
		if (!(s[i] == '_' || (s[i] >= '0' && s[i] <= '9') ||
		      ((s[i] | 32) >= 'a' && (s[i] | 32) <= 'z')))
			return false;
#define KEY(lit) (k == sizeof(lit) - 1 && !memcmp(s, lit, k))
	*rc = TACH_OK;
	uint32_t ignored;
	if (KEY("fl"))
		*rc = name_value(r, &st->files, v, vn, &st->file), st->fn = NONE;
	else if (KEY("fi") || KEY("fe"))
		*rc = name_value(r, &st->files, v, vn, &ignored);
	else if (KEY("fn")) {
		uint32_t name;
		if (!(*rc = name_value(r, &st->fnames, v, vn, &name)))
			*rc = function(r, st->file, name, &st->fn);
	} else if (KEY("cfi") || KEY("cfl"))
		*rc = name_value(r, &st->files, v, vn, &st->cfile);
	else if (KEY("cfn"))
		*rc = name_value(r, &st->fnames, v, vn, &st->cname);
	else if (KEY("calls"))
		st->in_call = true;
	else if (KEY("jump") || KEY("jcnd"))
		st->skip_line = true;
	/* ob=, cob= and keys of later versions: not read */
#undef KEY
	return true;
}

static int parse_line(struct tach_reader *r, const char *s, size_t n)
{
	struct cgr_state *st = r->state;
	int rc = TACH_OK;
	bool cost;
	trim(&s, &n);
	if (st->skip_line) {
		st->skip_line = false;
		return TACH_OK;
	}
	if (!n || s[0] == '#')
		return TACH_OK;
	if ((rc = cost_line(r, s, n, &cost)) || cost)
		return rc ? rc : book_cost(r);
	if (st->in_call)
		return bad(r, "\"calls=\" not followed by the call's cost line");
	if (header(r, s, n, &rc) || assignment(r, s, n, &rc))
		return rc;
	return bad(r, "not a callgrind line (header, assignment or cost)");
}

/* ---- open: the graph, then what the walk needs ---- */

/* Calls ordered by caller (a counting sort: first-seen order among a caller's), roots
 * (functions nothing calls, in first-seen order) and the pruning floor. */
static int index_graph(struct tach_reader *r)
{
	struct cgr_state *st = r->state;
	st->kids = malloc((st->nedges ? st->nedges : 1) * sizeof(*st->kids));
	st->roots = malloc((st->nfns ? st->nfns : 1) * sizeof(*st->roots));
	st->onpath = calloc(st->nfns ? st->nfns : 1, 1);
	if (!st->kids || !st->roots || !st->onpath)
		return nomem(r);
	for (size_t i = 0; i < st->nedges; i++) {
		const struct cgr_edge *ed = &st->edges[i];
		st->fns[ed->from].nkids++;
		/* a second caller, or recursion: stacks the graph does not tell */
		st->guessed |= st->onpath[ed->to] || ed->from == ed->to;
		st->onpath[ed->to] = 1;
	}
	memset(st->onpath, 0, st->nfns ? st->nfns : 1);
	uint32_t at = 0;
	for (size_t f = 0; f < st->nfns; f++) {
		st->fns[f].first = at;
		at += st->fns[f].nkids;
		st->fns[f].nkids = 0;
		if (!st->fns[f].called)
			st->roots[st->nroots++] = (uint32_t)f;
		for (uint32_t e = 0; e < st->nev; e++)
			if (st->total[f * st->nev + e] > st->maxtot[e])
				st->maxtot[e] = st->total[f * st->nev + e];
	}
	/* the stacks hand out the roots' totals: they must add up within a value */
	for (uint32_t e = 0; e < st->nev; e++) {
		uint64_t sum = 0;
		for (size_t k = 0; k < st->nroots; k++)
			if (__builtin_add_overflow(sum, st->total[st->roots[k] * st->nev + e], &sum) ||
			    sum > COST_MAX)
				return RFAIL(r, TACH_E_FORMAT, TACH_POS_NONE, 0,
					     "the costs of the functions nothing calls add up past "
					     "2^63 - 1");
	}
	for (size_t i = 0; i < st->nedges; i++) {
		struct cgr_fn *f = &st->fns[st->edges[i].from];
		st->kids[f->first + f->nkids++] = (uint32_t)i;
	}
	return TACH_OK;
}

/* Each function's frame: its name in its file, no line (a function's cost lines are on
 * many). */
static int make_frames(struct tach_reader *r)
{
	struct cgr_state *st = r->state;
	for (size_t f = 0; f < st->nfns; f++) {
		struct tach_frame fr = { st->fns[f].file, st->fns[f].name, -1, -1, -1, -1,
					 TACH_NO_OPCODE };
		if (tach_dict_intern_frame(&r->dict, &fr, &st->fns[f].frame))
			return nomem(r);
	}
	return TACH_OK;
}

/* tach2callgrind's events: "Samples" (then "Time_ns"), read back as samples and times. */
static void own_events(struct tach_reader *r)
{
	struct cgr_state *st = r->state;
	st->time_col = -1;
	if (strcmp(st->vt_own[0], "Samples") ||
	    (st->nev == 2 ? strcmp(st->vt_own[1], "Time_ns") : st->nev != 1))
		return;
	st->ours = true;
	st->time_col = st->nev == 2 ? 1 : -1;
	r->meta.sample_time = st->nev == 2;
}

/* Our own long name "Samples, one per N us" gives the interval back. */
static void own_interval(struct tach_reader *r, const char *s, size_t n)
{
	static const char mark[] = "event: Samples : Samples, one per ";
	uint64_t v;
	size_t k = sizeof(mark) - 1;
	if (n > k + 3 && !memcmp(s, mark, k) && !memcmp(s + n - 3, " us", 3) &&
	    tachi_parse_dec(s + k, n - k - 3, TACHI_MAX_INTERVAL_US, &v))
		r->meta.interval_us = v;
}

static int cg_open(struct tach_reader *r)
{
	struct cgr_state *st = r->state;
	const char *s;
	size_t n;
	int rc;
	st->file = st->fn = st->cfile = st->cname = NONE;
	st->npos = 1;
	while (!(rc = tachi_in_line(r, &s, &n))) {
		own_interval(r, s, n);
		if ((rc = parse_line(r, s, n)))
			return rc;
	}
	if (rc != TACH_EOF)
		return rc;
	if (st->in_call)
		return bad(r, "the input ends after \"calls=\", before the call's cost line");
	if (!st->has_events && !r->in.line)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0, "empty input: no profile in it");
	if (!st->has_events)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "not a callgrind profile: no \"events:\" line");
	own_events(r);
	if ((rc = index_graph(r)) || (rc = make_frames(r)))
		return rc;
	if (!st->ours) {
		r->meta.value_type_count = st->nev;
		r->meta.value_types = st->vt;
		r->meta.weight_type = 0;
		r->meta.default_type = 1;
		r->meta.weight_unit = "count";
	}
	if (st->guessed)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "callgrind input holds a call graph, not stacks: the stacks are built "
			   "as speedscope builds them, a function's costs split among its callers "
			   "in proportion to their calls' (exact only where a function has one "
			   "caller and no recursion)");
	return TACH_OK;
}

/* ---- next: the stacks, walked depth first ---- */

/* What call kid of the function at the top (entered with weight w, its calls before kid
 * having taken rem) hands its callee, into st->share; false when it is not entered. rem
 * is lowered by the share. */
static bool call_share(struct cgr_state *st, uint32_t kid, double *rem)
{
	const struct cgr_edge *ed = &st->edges[kid];
	const uint64_t *ct = st->ecost + (size_t)kid * st->nev;
	const uint64_t *from = st->total + (size_t)ed->from * st->nev;
	const uint64_t *to = st->total + (size_t)ed->to * st->nev;
	const double *w = st->w + (st->depth - 1) * st->nev;
	bool any = false;
	for (uint32_t e = 0; e < st->nev; e++) {
		double s = 0;
		if (!st->onpath[ed->to] && from[e] && to[e])
			s = w[e] * ((double)ct[e] / (double)from[e]);
		if (s > rem[e])
			s = rem[e];
		/* speedscope's floor: what is under 1/10000 of the largest total */
		if (!(s > 0) || s < 1e-4 * (double)st->maxtot[e])
			s = 0;
		st->share[e] = s;
		rem[e] -= s;
		any |= s != 0;
	}
	return any;
}

/* Enter fn with weight st->share; its self cost (what its calls do not take) into
 * st->self. */
static int enter(struct tach_reader *r, uint32_t fn)
{
	struct cgr_state *st = r->state;
	if (st->depth >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0,
			     "a stack built from the call graph is deeper than the depth limit "
			     "of %u frames", r->lim.max_depth);
	if (++st->stacks > MAX_STACKS)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0,
			     "the call graph makes more than %u stacks", MAX_STACKS);
	if (!TACHI_RESERVE(st->path, st->path_cap, st->depth + 1) ||
	    !TACHI_RESERVE(st->w, st->w_cap, (st->depth + 1) * st->nev) ||
	    !TACHI_RESERVE(st->rem, st->rem_cap, (st->depth + 1) * st->nev))
		return nomem(r);
	st->path[st->depth] = (struct cgr_level){ fn, 0 };
	memcpy(st->w + st->depth * st->nev, st->share, st->nev * sizeof(*st->w));
	memcpy(st->rem + st->depth * st->nev, st->share, st->nev * sizeof(*st->rem));
	st->depth++;
	st->onpath[fn] = 1;
	memcpy(st->self, st->share, st->nev * sizeof(*st->self));
	const struct cgr_fn *f = &st->fns[fn];
	for (uint32_t k = 0; k < f->nkids; k++)
		call_share(st, st->kids[f->first + k], st->self);
	return TACH_OK;
}

static void leave(struct cgr_state *st)
{
	st->onpath[st->path[--st->depth].fn] = 0;
}

/* The sample of the stack on the path with self cost st->self; false when it has none. */
static int emit(struct tach_reader *r, bool *made)
{
	struct cgr_state *st = r->state;
	struct tach_sample *s = &r->sample;
	*made = false;
	/* rounded as a running sum, so that the rounding adds up to nothing */
	for (uint32_t e = 0; e < st->nev; e++) {
		double c = st->cum[e] + st->self[e];
		st->vals[e] = llround(c) - llround(st->cum[e]);
		st->cum[e] = c;
	}
	if (st->vals[0] <= 0) {
		for (uint32_t e = 1; e < st->nev; e++)
			st->dropped += st->vals[e] != 0;
		return TACH_OK;
	}
	if (!TACHI_RESERVE(st->out, st->out_cap, st->depth))
		return nomem(r);
	for (size_t i = 0; i < st->depth; i++)
		st->out[st->depth - 1 - i] = st->fns[st->path[i].fn].frame;
	*s = (struct tach_sample){ .weight = (uint64_t)st->vals[0], .status = TACH_STATUS_UNKNOWN,
				   .depth = (uint32_t)st->depth, .frames = st->out };
	if (st->time_col >= 0)
		s->time_ns = (uint64_t)st->vals[st->time_col];
	r->ext = NULL;
	if (!st->ours) {
		st->ext = (struct tach_sample_ext){ sizeof(st->ext), st->nev, st->vals, 0, NULL };
		r->ext = &st->ext;
	}
	if (s->weight > r->lim.max_samples - r->stats.total_samples)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0,
			     "the costs add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += s->weight;
	*made = true;
	return TACH_OK;
}

/* One step of the walk: into the next call of the top function, or out of it, or into
 * the next root; TACH_EOF after the last. *made when the function entered has a sample. */
static int step(struct tach_reader *r, bool *made)
{
	struct cgr_state *st = r->state;
	int rc;
	*made = false;
	if (!st->depth) {
		if (st->root_at >= st->nroots)
			return TACH_EOF;
		uint32_t fn = st->roots[st->root_at++];
		bool any = false;
		for (uint32_t e = 0; e < st->nev; e++) {
			st->share[e] = (double)st->total[(size_t)fn * st->nev + e];
			any |= st->share[e] != 0;
		}
		return !any ? TACH_OK : (rc = enter(r, fn)) ? rc : emit(r, made);
	}
	struct cgr_level *top = &st->path[st->depth - 1];
	const struct cgr_fn *f = &st->fns[top->fn];
	double *rem = st->rem + (st->depth - 1) * st->nev;
	while (top->next < f->nkids) {
		uint32_t kid = st->kids[f->first + top->next++];
		if (call_share(st, kid, rem))
			return (rc = enter(r, st->edges[kid].to)) ? rc : emit(r, made);
	}
	leave(st);
	return TACH_OK;
}

static int cg_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct cgr_state *st = r->state;
	bool made;
	int rc;
	while (!(rc = step(r, &made)))
		if (made) {
			*out = &r->sample;
			return TACH_OK;
		}
	if (rc == TACH_EOF && st->dropped)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "%llu stacks with costs of other events but none of %s dropped (their "
			   "weight, the first event's, is 0)", (unsigned long long)st->dropped,
			   st->vt_own[0]);
	return rc;
}

static void names_free(struct cgr_names *t)
{
	free(t->v);
	tachi_idset_free(&t->index);
}

static void cg_free(struct tach_reader *r)
{
	struct cgr_state *st = r->state;
	names_free(&st->files);
	names_free(&st->fnames);
	tachi_idset_free(&st->fn_index);
	tachi_idset_free(&st->edge_index);
	for (uint32_t e = 0; e < st->nev; e++)
		free(st->vt_own[e]);
	free(st->vt_own);
	void *all[] = { st->fns, st->total, st->edges, st->ecost, st->kids, st->cost,
			st->maxtot, st->vt, st->roots, st->path, st->w, st->rem, st->onpath, st->self,
			st->share, st->cum, st->vals, st->out, st->sbuf };
	for (size_t i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		free(all[i]);
}

const struct tachi_reader_ops tachi_callgrind_reader_ops = {
	.state_size = sizeof(struct cgr_state),
	.open = cg_open,
	.next = cg_next,
	.free = cg_free,
	/* every frame is made at open, but dict_at_open would move next to another thread,
	 * which hands the writer no values (the events past the first) */
};
