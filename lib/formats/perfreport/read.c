/* perf report --stdio text reader: the call graphs that `perf report --stdio --no-children`
 * prints in the forms whose numbers are exact, read as perf built them from the samples.
 *
 *   # Samples: 435  of event 'cpu-clock'
 *   # Event count (approx.): 435435435
 *   # Overhead       Samples  Command      Shared Object      Symbol
 *   # ........  ............  ...........  .................  ..............
 *       47.13%           205  livetest     livetest           [.] hot_a
 *
 * Each entry line (columns where the dots line puts them) is a comm, a dso and a symbol;
 * under it, its call chains:
 * - folded (-g folded,0,ORDER,count or period): "N f;g;h" lines, N the chain's samples or
 *   period;
 * - graph and fractal (-g graph,0,ORDER,function,count, fractal likewise, or period): the
 *   ASCII tree. "---f" starts a single root chain, lines in the same column go on with it;
 *   "|--N--f" (" --N--f" the last) starts a branch worth N, its column saying its depth
 *   (11 a level); a node's own samples are its N less its branches'. A single root chain
 *   has no number (it is the whole entry): the entry's Samples column (-n) or Period
 *   column (--show-total-period) gives it, and one of them is needed.
 * ORDER, caller (outermost first) or callee (innermost first), is not printed: the entry's
 * symbol is the innermost frame, so the chains that start with it and not end with it
 * (or the other way) tell which; where no chain tells, callee, perf's default.
 * Whether folded numbers are counts or periods is not printed either: they add up to the
 * header's sample count or to its event count, which says which (equal, they are both).
 *
 * What a record is: one chain, its stack innermost first then a root frame of file
 * "[comm]" naming the entry's comm (pid unknown: formats/comm.h), the innermost frame in
 * the entry's dso (its file; the other frames are bare names, the report naming no dso for
 * them); a count form's weight is the chain's samples; a period form's weight is the
 * period in its unit (nanoseconds for cpu-clock and task-clock, whose time_ns it is too,
 * else the event's count; meta.weight_unit). perf report has aggregated away each
 * sample's time and thread: no timestamps (0), thread 0, said once on stderr.
 *
 * Refused, with the line: the percent forms (the default, -g without count or period, the
 * Children columns), which give no exact counts; a tree line out of its tree's columns, a
 * branch deeper than one below its parent, a number that is none, branches worth more
 * than their parent, a part left out ("[...]"), numbers that do not add up to the
 * header's sample or event count (a threshold or --percent-limit left chains out, or the
 * text is cut short), a graph chain that does not end at its entry's symbol (a tree cut
 * short). Only the first event's section is read. Everything is read at open: memory
 * follows the records and their frames; depth is bounded by max-depth. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/perfreport/perfreport.h"

#define MAX_COLS 16
#define EVENT_MAX 128

/* A chain: frames fr[off, off + depth) in print order, its value, the entry's comm frame,
 * symbol frame and dso string, the line of its number. */
struct perfreport_rec {
	uint64_t value, line;
	uint32_t off, depth, comm, sym, dso;
};

/* A tree node being read: its worth, its branches' worth so far, where its chain ends in
 * the path, the line that gave it. */
struct perfreport_level {
	uint64_t cumul, kids, line;
	uint32_t end;
};

enum { C_OTHER, C_OVERHEAD, C_SAMPLES, C_PERIOD, C_COMM, C_DSO, C_SYM };
enum { F_NONE, F_FOLDED, F_TREE };

struct perfreport_rstate {
	/* the header */
	uint64_t nsamples, evcount;
	bool has_nsamples, has_evcount, in_section, columns;
	char event[EVENT_MAX + 1];
	size_t ncols;
	size_t col_at[MAX_COLS], col_end[MAX_COLS];
	int col_kind[MAX_COLS];
	int total_col;                 /* C_SAMPLES, C_PERIOD or C_OTHER (none) */
	/* the entry */
	bool in_entry;
	int form;
	uint32_t comm, sym, dso;
	uint64_t total, entry_line;
	size_t margin;                 /* the tree's column; SIZE_MAX before its first line */
	bool rooted;                   /* a "---" root chain */
	struct perfreport_level *lv;
	size_t lv_cap;
	uint32_t top;
	uint32_t *path;
	size_t path_cap;
	uint32_t plen;
	/* what was read */
	int folded_kind;               /* for a folded report: C_SAMPLES or C_PERIOD */
	uint64_t sum;
	bool sum_big, tree_seen, folded_seen;
	uint32_t *fr;
	size_t fr_len, fr_cap;
	struct perfreport_rec *recs;
	size_t nrecs, recs_cap, next;
	uint32_t *out;
	size_t out_cap;
	struct tach_value_type vt[1];
	bool clock;
};

static const char hint[] = "; read with perf report --stdio --no-children -g folded,0,"
			   "caller,count (or graph,0,caller,function,count -n; period instead "
			   "of count: with --show-total-period)";

static int bad(struct tach_reader *r, uint64_t line, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, line, "a perf report line %s", what);
}

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

static bool is_sp(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

static void trim(const char **s, size_t *n)
{
	while (*n && is_sp((*s)[*n - 1]))
		(*n)--;
	while (*n && is_sp(**s))
		(*s)++, (*n)--;
}

static bool starts(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	return n >= k && !memcmp(s, w, k);
}

/* Decimal digits, past 64 bits refused. */
static bool dec(const char *s, size_t n, uint64_t *v)
{
	uint64_t x = 0;
	if (!n)
		return false;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9' || __builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(s[i] - '0'), &x))
			return false;
	}
	*v = x;
	return true;
}

static int intern(struct tach_reader *r, const char *file, size_t fl, const char *func,
		  size_t nl, int32_t line, uint32_t *id)
{
	struct tach_frame f = { 0, 0, line, line, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, file, fl, &f.file) ||
	    tach_dict_intern_string(&r->dict, func, nl, &f.func) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return nomem(r);
	return TACH_OK;
}

/* ---- the header ---- */

/* "# Samples: 435  of event 'cpu-clock'": the count (none where perf scaled it, "12K"). */
static void samples_line(struct perfreport_rstate *p, const char *s, size_t n)
{
	const char *q = s + 11, *e = s + n;
	size_t k = 0;
	while (q + k < e && q[k] >= '0' && q[k] <= '9')
		k++;
	p->has_nsamples = k && q + k < e && q[k] == ' ' && dec(q, k, &p->nsamples);
	const char *ev = memmem(s, n, " of event '", 11);
	if (ev) {
		ev += 11;
		size_t el = (size_t)(e - ev);
		if (el && ev[el - 1] == '\'')
			el--;
		if (el > EVENT_MAX)
			el = EVENT_MAX;
		memcpy(p->event, ev, el);
		p->event[el] = 0;
	}
	p->in_section = true;
}

/* The dots line: where each column is, named by the header line above it. */
static int dots_line(struct tach_reader *r, struct perfreport_rstate *p, const char *h, size_t hn,
		     const char *s, size_t n)
{
	p->ncols = 0;
	p->total_col = C_OTHER;
	for (size_t i = 2; i < n;) {
		if (s[i] != '.') {
			i++;
			continue;
		}
		size_t j = i;
		while (j < n && s[j] == '.')
			j++;
		if (p->ncols == MAX_COLS)
			return bad(r, r->in.line, "with more columns than perf report prints");
		const char *name = h + (i < hn ? i : hn);
		size_t nl = (j < hn ? j : hn) - (i < hn ? i : hn);
		trim(&name, &nl);
		int k = C_OTHER;
		static const struct { const char *name; int kind; } known[] = {
			{ "Overhead", C_OVERHEAD }, { "Samples", C_SAMPLES }, { "Period", C_PERIOD },
			{ "Command", C_COMM }, { "Shared Object", C_DSO }, { "Symbol", C_SYM },
		};
		for (size_t m = 0; m < sizeof(known) / sizeof(known[0]); m++)
			if (nl == strlen(known[m].name) && !memcmp(name, known[m].name, nl))
				k = known[m].kind;
		if (k == C_OTHER)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
				     "perf report column %.*s: only the default sort keys (comm, dso, "
				     "sym) are read%s", (int)(nl > 64 ? 64 : nl), name, hint);
		if (k == C_SAMPLES || k == C_PERIOD) {
			if (p->total_col != C_OTHER)
				return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
					     "perf report with both the Samples and Period columns: "
					     "give -n for count or --show-total-period for period");
			p->total_col = k;
		}
		p->col_at[p->ncols] = i;
		p->col_end[p->ncols] = j;
		p->col_kind[p->ncols++] = k;
		i = j;
	}
	bool has[C_SYM + 1] = { false };
	for (size_t c = 0; c < p->ncols; c++)
		has[p->col_kind[c]] = true;
	if (!has[C_OVERHEAD] || !has[C_COMM] || !has[C_DSO] || !has[C_SYM])
		return bad(r, r->in.line, "of columns without Overhead, Command, Shared Object "
			   "and Symbol");
	p->columns = true;
	return TACH_OK;
}

/* ---- records ---- */

static int push_path(struct tach_reader *r, struct perfreport_rstate *p, const char *s, size_t n)
{
	uint32_t id;
	if (p->plen >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "stack deeper than the limit of %u frames (see --max-depth)",
			     r->lim.max_depth);
	int rc = intern(r, "~", 1, s, n, TACH_NO_LINE, &id);
	if (rc)
		return rc;
	if (!TACHI_RESERVE(p->path, p->path_cap, (size_t)p->plen + 1))
		return nomem(r);
	p->path[p->plen++] = id;
	return TACH_OK;
}

/* A record of the path's first len frames worth v. */
static int add_rec(struct tach_reader *r, struct perfreport_rstate *p, uint32_t len, uint64_t v,
		   uint64_t line)
{
	if (!TACHI_RESERVE(p->fr, p->fr_cap, p->fr_len + len) ||
	    !TACHI_RESERVE(p->recs, p->recs_cap, p->nrecs + 1))
		return nomem(r);
	memcpy(p->fr + p->fr_len, p->path, len * sizeof(*p->fr));
	p->recs[p->nrecs++] = (struct perfreport_rec){ v, line, (uint32_t)p->fr_len, len, p->comm,
					     p->sym, p->dso };
	p->fr_len += len;
	p->sum_big |= __builtin_add_overflow(p->sum, v, &p->sum);
	return TACH_OK;
}

/* ---- the tree ---- */

/* Closes the nodes deeper than depth: each one's own worth a record. */
static int close_to(struct tach_reader *r, struct perfreport_rstate *p, uint32_t depth)
{
	for (; p->top > depth; p->top--) {
		struct perfreport_level *l = &p->lv[p->top];
		if (l->kids > l->cumul)
			return bad(r, l->line, "whose branches are worth more than it");
		if (l->cumul > l->kids) {
			int rc = add_rec(r, p, l->end, l->cumul - l->kids, l->line);
			if (rc)
				return rc;
		}
	}
	return TACH_OK;
}

static int open_node(struct tach_reader *r, struct perfreport_rstate *p, uint32_t depth, uint64_t v)
{
	int rc = close_to(r, p, depth - 1);
	if (rc)
		return rc;
	if (depth != p->top + 1)
		return bad(r, r->in.line, "that branches more than one level below its parent");
	if (!TACHI_RESERVE(p->lv, p->lv_cap, (size_t)depth + 1))
		return nomem(r);
	if (__builtin_add_overflow(p->lv[p->top].kids, v, &p->lv[p->top].kids))
		return bad(r, r->in.line, "whose branches are worth more than 64 bits");
	p->plen = p->lv[p->top].end;
	p->top = depth;
	p->lv[depth] = (struct perfreport_level){ v, 0, r->in.line, p->plen };
	return TACH_OK;
}

/* A frame of the node last opened: its chain ends after it. */
static int node_frame(struct tach_reader *r, struct perfreport_rstate *p, const char *s, size_t n)
{
	int rc = push_path(r, p, s, n);
	if (!rc)
		p->lv[p->top].end = p->plen;
	return rc;
}

/* "--N--sym" at s: the node's worth and its first frame. */
static int branch(struct tach_reader *r, struct perfreport_rstate *p, uint32_t depth, const char *s,
		  size_t n)
{
	const char *e = s + n, *q = s + 2, *end = memmem(q, (size_t)(e - q), "--", 2);
	uint64_t v;
	if (!end)
		return bad(r, r->in.line, "whose branch has no --N-- worth");
	size_t k = (size_t)(end - q);
	if (k && q[k - 1] == '%')
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "perf report call graph in percent: no exact counts%s", hint);
	if (!dec(q, k, &v))
		return bad(r, r->in.line, "whose branch's worth is no number");
	const char *sym = end + 2;
	size_t sl = (size_t)(e - sym);
	if (sl == 5 && !memcmp(sym, "[...]", 5))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "perf report call graph with a part left out ([...])%s", hint);
	int rc = open_node(r, p, depth, v);
	return rc ? rc : node_frame(r, p, sym, sl);
}

static int tree_line(struct tach_reader *r, struct perfreport_rstate *p, const char *s, size_t n)
{
	size_t i = 0;
	if (p->margin == SIZE_MAX) {
		if (p->total_col == C_OTHER)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
				     "perf report call graph without the entries' Samples or "
				     "Period column: no exact counts%s", hint);
		for (p->margin = 0; p->margin < n && s[p->margin] == ' '; p->margin++)
			;
		p->lv[0] = (struct perfreport_level){ p->total, 0, r->in.line, 0 };
		p->top = 0;
		p->plen = 0;
		p->tree_seen = true;
	}
	while (i < n && (s[i] == ' ' || s[i] == '|'))
		i++;
	if (i == n)
		return TACH_OK;
	size_t m = p->margin;
	if (!p->rooted && p->top == 0 && n > m + 3 && !memcmp(s + m, "---", 3) &&
	    p->lv[0].kids == 0) {
		p->rooted = true;
		int rc = open_node(r, p, 1, p->total);
		return rc ? rc : node_frame(r, p, s + m + 3, n - m - 3);
	}
	size_t base = m + (p->rooted ? 3 : 0), from = 0;
	for (uint32_t d = 0;; d++) {
		size_t at = base + 11 * (size_t)d;
		if (at >= n)
			return bad(r, r->in.line, "out of its call graph's columns");
		for (size_t j = from; j < at; j++)
			if (s[j] != ' ')
				return bad(r, r->in.line, "out of its call graph's columns");
		if (s[at] != ' ' && s[at] != '|') {
			uint32_t depth = d + (p->rooted ? 1 : 0);
			if (!depth || depth != p->top)
				return bad(r, r->in.line, "that goes on a chain it is not under");
			return node_frame(r, p, s + at, n - at);
		}
		if (at + 2 < n && s[at + 1] == '-' && s[at + 2] == '-')
			return branch(r, p, d + 1 + (p->rooted ? 1 : 0), s + at + 1, n - at - 1);
		from = at + 1;
	}
}

static int end_entry(struct tach_reader *r, struct perfreport_rstate *p)
{
	int rc = TACH_OK;
	if (p->in_entry && p->form == F_NONE)
		return bad(r, p->entry_line, "of an entry without call chains (a threshold hid "
			   "them, or the capture has none: record with -g, and report with -g "
			   "folded,0,caller,count)");
	if (p->in_entry && p->form == F_TREE) {
		if ((rc = close_to(r, p, 0)))
			return rc;
		if (p->lv[0].kids != p->total)
			return bad(r, p->lv[0].line, "whose call graph is worth other than its entry");
	}
	p->in_entry = false;
	return rc;
}

/* ---- entries ---- */

static int entry_line(struct tach_reader *r, struct perfreport_rstate *p, const char *s, size_t n)
{
	const char *comm = NULL, *dso = NULL, *sym = NULL;
	size_t cl = 0, dl = 0, sl = 0;
	int rc = end_entry(r, p);
	if (rc)
		return rc;
	p->total = 0;
	for (size_t c = 0; c < p->ncols; c++) {
		size_t a = p->col_at[c], e = c + 1 < p->ncols ? p->col_end[c] : n;
		if (a > n || e > n)
			return bad(r, r->in.line, "shorter than its columns");
		const char *f = s + a;
		size_t fl = e - a;
		trim(&f, &fl);
		switch (p->col_kind[c]) {
		case C_SAMPLES:
		case C_PERIOD:
			if (!dec(f, fl, &p->total))
				return bad(r, r->in.line, "whose Samples or Period is no number");
			break;
		case C_COMM: comm = f, cl = fl; break;
		case C_DSO: dso = f, dl = fl; break;
		case C_SYM: sym = f, sl = fl; break;
		default: break;
		}
	}
	if (sl > 4 && sym[0] == '[' && sym[2] == ']' && sym[3] == ' ')
		sym += 4, sl -= 4;
	if (!cl || !sl)
		return bad(r, r->in.line, "of an entry without its command or symbol");
	if ((rc = intern(r, "[comm]", 6, comm, cl, -1, &p->comm)) ||
	    (rc = intern(r, "~", 1, sym, sl, TACH_NO_LINE, &p->sym)))
		return rc;
	if (tach_dict_intern_string(&r->dict, dso, dl, &p->dso))
		return nomem(r);
	p->in_entry = true;
	p->entry_line = r->in.line;
	p->form = F_NONE;
	p->margin = SIZE_MAX;
	p->rooted = false;
	p->top = 0;
	if (!TACHI_RESERVE(p->lv, p->lv_cap, 1))
		return nomem(r);
	return TACH_OK;
}

/* "N f;g;h". */
static int folded_line(struct tach_reader *r, struct perfreport_rstate *p, const char *s, size_t n)
{
	const char *sp = memchr(s, ' ', n);
	uint64_t v;
	if (!sp)
		return bad(r, r->in.line, "of a folded chain without its frames");
	size_t k = (size_t)(sp - s);
	if (k && s[k - 1] == '%')
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "perf report folded chains in percent: no exact counts%s", hint);
	if (!dec(s, k, &v))
		return bad(r, r->in.line, "whose folded chain's count is no number");
	p->plen = 0;
	p->folded_seen = true;
	const char *f = sp + 1, *e = s + n;
	while (f <= e) {
		const char *semi = memchr(f, ';', (size_t)(e - f));
		const char *fe = semi ? semi : e;
		if (fe == f)
			return bad(r, r->in.line, "with an empty frame");
		int rc = push_path(r, p, f, (size_t)(fe - f));
		if (rc)
			return rc;
		f = fe + 1;
	}
	return add_rec(r, p, p->plen, v, r->in.line);
}

static bool is_entry(const char *s, size_t n)
{
	size_t i = 0;
	while (i < n && s[i] == ' ')
		i++;
	if (!i || i == n || s[i] < '0' || s[i] > '9')
		return false;
	while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
		i++;
	return i < n && s[i] == '%';
}

static int data_line(struct tach_reader *r, struct perfreport_rstate *p, const char *s, size_t n)
{
	if (is_entry(s, n)) {
		if (!p->columns)
			return bad(r, r->in.line, "of an entry before the column header");
		return entry_line(r, p, s, n);
	}
	if (!p->in_entry)
		return bad(r, r->in.line, "that is no entry nor comment, outside an entry");
	int form = s[0] >= '0' && s[0] <= '9' ? F_FOLDED : F_TREE;
	if (p->form != F_NONE && p->form != form)
		return bad(r, r->in.line, "of another call graph form than the lines before");
	p->form = form;
	return form == F_FOLDED ? folded_line(r, p, s, n) : tree_line(r, p, s, n);
}

/* A comment line: the header's facts; a second event's section ends the reading. */
static int comment_line(struct tach_reader *r, struct perfreport_rstate *p, const char *s, size_t n,
			const char **prev, size_t *prevn, bool *stop)
{
	int rc = end_entry(r, p);
	if (rc)
		return rc;
	if (starts(s, n, "# Samples: ")) {
		if (p->columns) {
			tachi_warn(&r->warn, TACH_POS_LINE, r->in.line,
				   "the report's other events from here on are not read; only %s is",
				   p->event);
			*stop = true;
			return TACH_OK;
		}
		samples_line(p, s, n);
	} else if (starts(s, n, "# Event count (approx.): ")) {
		p->has_evcount = dec(s + 25, n - 25, &p->evcount);
	} else if (starts(s, n, "# Children  ")) {
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "perf report with the Children column: its chains are in percent "
			     "and count each sample under every caller%s", hint);
	} else if (starts(s, n, "# ..") && *prev && p->in_section) {
		return dots_line(r, p, *prev, *prevn, s, n);
	}
	return TACH_OK;
}

/* ---- the end: order, checks, meta ---- */

static bool same_sym(const struct tach_dict *d, uint32_t a, uint32_t b)
{
	if (a == b)
		return true;
	size_t al, bl;
	const char *as = tach_dict_string(d, tach_dict_frame(d, a)->func, &al);
	const char *bs = tach_dict_string(d, tach_dict_frame(d, b)->func, &bl);
	/* an unknown symbol: the entry pads its address, the chain does not */
	if (al < 3 || bl < 3 || memcmp(as, "0x", 2) || memcmp(bs, "0x", 2) || al > 66 || bl > 66)
		return false;
	char x[67], y[67];
	memcpy(x, as, al), x[al] = 0;
	memcpy(y, bs, bl), y[bl] = 0;
	return strtoull(x, NULL, 16) == strtoull(y, NULL, 16);
}

/* Caller (outermost first) or callee: which the chains say, callee where none says. */
static bool caller_order(struct tach_reader *r, const struct perfreport_rstate *p)
{
	uint64_t caller = 0, callee = 0;
	for (size_t i = 0; i < p->nrecs; i++) {
		const struct perfreport_rec *c = &p->recs[i];
		bool first = same_sym(&r->dict, p->fr[c->off], c->sym);
		bool last = same_sym(&r->dict, p->fr[c->off + c->depth - 1], c->sym);
		caller += last && !first;
		callee += first && !last;
	}
	return caller > callee;
}

static int check_totals(struct tach_reader *r, struct perfreport_rstate *p)
{
	bool by_n = p->has_nsamples && p->sum == p->nsamples;
	bool by_e = p->has_evcount && p->sum == p->evcount;
	int kind = p->tree_seen ? p->total_col : by_n ? C_SAMPLES : by_e ? C_PERIOD
			      : p->has_nsamples ? C_OTHER : C_SAMPLES;
	bool ok = !p->sum_big && (kind == C_SAMPLES   ? !p->has_nsamples || by_n
				  : kind == C_PERIOD ? !p->has_evcount || by_e
						     : false);
	if (!ok) {
		char want[96];
		if (kind == C_PERIOD)
			snprintf(want, sizeof(want), "event count of %llu",
				 (unsigned long long)p->evcount);
		else
			snprintf(want, sizeof(want), "%llu samples%s",
				 (unsigned long long)p->nsamples,
				 p->tree_seen ? "" : " nor its event count");
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "perf report's chains add up to %llu, not the header's %s: part of "
			     "the report is left out (a threshold, --percent-limit) or cut short%s",
			     (unsigned long long)p->sum, want, hint);
	}
	if (kind == C_SAMPLES && p->sum > r->lim.max_samples)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "the counts add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	p->folded_kind = kind;
	return TACH_OK;
}

static int finish(struct tach_reader *r, struct perfreport_rstate *p)
{
	int rc = end_entry(r, p);
	if (rc)
		return rc;
	if (p->tree_seen && p->folded_seen)
		return bad(r, r->in.line, "of a report with both folded and tree call graphs");
	/* an empty input is said so where every reader's is */
	if (!p->columns && !r->in.line)
		return TACH_OK;
	if (!p->columns)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
			     "not perf report --stdio output: no column header (# Overhead ...)");
	bool caller = caller_order(r, p);
	for (size_t i = 0; i < p->nrecs && p->tree_seen; i++) {
		const struct perfreport_rec *c = &p->recs[i];
		uint32_t inner = p->fr[caller ? c->off + c->depth - 1 : c->off];
		if (!same_sym(&r->dict, inner, c->sym))
			return bad(r, c->line, "of a call chain that does not end at its entry's "
				   "symbol: the call graph is cut short or has a part left out");
	}
	if ((p->nrecs || p->has_nsamples || p->has_evcount) && (rc = check_totals(r, p)))
		return rc;
	for (size_t i = 0; i < p->nrecs && caller; i++) {
		uint32_t *f = p->fr + p->recs[i].off;
		for (uint32_t a = 0, b = p->recs[i].depth - 1; a < b; a++, b--) {
			uint32_t t = f[a];
			f[a] = f[b];
			f[b] = t;
		}
	}
	const char *ev = p->event;
	size_t el = strcspn(ev, ":");
	p->clock = (el == 9 && !memcmp(ev, "cpu-clock", 9)) ||
		   (el == 10 && !memcmp(ev, "task-clock", 10));
	if (p->folded_kind == C_PERIOD) {
		p->vt[0] = (struct tach_value_type){ p->clock ? "cpu" : p->event,
						     p->clock ? "nanoseconds" : "count" };
		r->meta.value_type_count = 1;
		r->meta.value_types = p->vt;
		r->meta.weight_type = 0;
		r->meta.default_type = 1;
		r->meta.weight_unit = p->vt[0].unit;
		r->meta.sample_time = p->clock;
	}
	tachi_warn(&r->warn, TACH_POS_NONE, 0,
		   "perf report input aggregates the samples: each call chain is one record of "
		   "its %s, without the samples' times and threads",
		   p->folded_kind == C_PERIOD ? "period" : "samples");
	return TACH_OK;
}

static int prp_open(struct tach_reader *r)
{
	struct perfreport_rstate *p = r->state;
	const char *s, *prev = NULL;
	size_t n, prevn = 0;
	char *hold = NULL;
	size_t hold_cap = 0;
	bool stop = false;
	int rc;
	r->meta.sample_time = 0;
	r->meta.interval_us = 0;
	while (!stop && !(rc = tachi_in_line(r, &s, &n))) {
		while (n && is_sp(s[n - 1]))
			n--;
		if (!n)
			continue;
		if (s[0] == '#')
			rc = comment_line(r, p, s, n, &prev, &prevn, &stop);
		else
			rc = data_line(r, p, s, n);
		if (rc)
			break;
		/* the header line, for the dots line under it (the line buffer moves) */
		if (s[0] == '#' && TACHI_RESERVE(hold, hold_cap, n + 1)) {
			memcpy(hold, s, n);
			prev = hold;
			prevn = n;
		}
	}
	if (rc == TACH_EOF)
		rc = finish(r, p);
	else if (!rc && stop)
		rc = finish(r, p);
	free(hold);
	return rc;
}

static int prp_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct perfreport_rstate *p = r->state;
	if (p->next == p->nrecs)
		return TACH_EOF;
	const struct perfreport_rec *c = &p->recs[p->next++];
	if (!TACHI_RESERVE(p->out, p->out_cap, (size_t)c->depth + 1))
		return nomem(r);
	memcpy(p->out, p->fr + c->off, c->depth * sizeof(*p->out));
	size_t fl;
	const struct tach_frame *in = tach_dict_frame(&r->dict, p->out[0]);
	const char *func = tach_dict_string(&r->dict, in->func, &fl);
	size_t dl;
	const char *dso = tach_dict_string(&r->dict, c->dso, &dl);
	int rc = dl ? intern(r, dso, dl, func, fl, TACH_NO_LINE, &p->out[0]) : TACH_OK;
	if (rc)
		return rc;
	p->out[c->depth] = c->comm;
	struct tach_sample *smp = &r->sample;
	*smp = (struct tach_sample){ .status = TACH_STATUS_UNKNOWN, .weight = c->value,
				     .depth = c->depth + 1, .frames = p->out };
	if (p->folded_kind == C_PERIOD && p->clock)
		smp->time_ns = c->value;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += c->value;
	*out = smp;
	return TACH_OK;
}

static void prp_free(struct tach_reader *r)
{
	struct perfreport_rstate *p = r->state;
	free(p->lv);
	free(p->path);
	free(p->fr);
	free(p->recs);
	free(p->out);
}

const struct tachi_reader_ops tachi_perfreport_reader_ops = {
	.state_size = sizeof(struct perfreport_rstate),
	.open = prp_open,
	.next = prp_next,
	.free = prp_free,
};
