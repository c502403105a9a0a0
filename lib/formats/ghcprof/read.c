/* GHC .prof reader: the "Time and Allocation Profiling Report" that a program built with
 * -prof writes when run with +RTS -p (or -P, which adds the ticks and bytes columns), read
 * as inferno's ghcprof collapser reads it, so the stacks and their ticks are inferno's.
 *
 * The report opens with its title, the program's command line, "total time = S secs (T
 * ticks @ I us, N processors)" and "total alloc = B bytes", then a flat table of the most
 * costly cost centres, then the cost-centre tree: a header line "COST CENTRE MODULE SRC
 * no. entries %time %alloc %time %alloc [ticks bytes]" and a line per cost-centre stack,
 * indented one space per level below its parent:
 *
 *     MAIN        MAIN      <built-in>         337   0   0.0  0.0  100.0 100.0   0   728
 *      main       Main      app.hs:(10,1)-(12,5) 674  1  30.4  9.4   90.1  80.2   7  5617
 *
 * The individual columns come first, the inherited after them. Everything before the
 * tree's header (it is the header line with "no.") is skipped, the flat table too.
 *
 * What a sample becomes: each line with ticks or bytes of its own is one sample of its
 * stack, the path from the tree's root (outermost) to it, weighing its ticks, with values
 * "cpu" (ticks × the tick interval, ns) and "alloc" (bytes); a line with bytes and no
 * tick is a sample of values only (weight 0: pprof, callgrind and --value alloc show it).
 * A report without ticks and bytes columns (+RTS -p) has each line's estimated from its
 * individual %time and %alloc and the totals, said once. The tree holds each stack's
 * totals, not samples: their times and order are not known (every sample is at 0, thread
 * 0), said once (ghc_tree.c).
 *
 * Frames: "MODULE.COST_CENTRE" as the name (inferno's), the file and first line of SRC
 * ("app.hs:(10,1)-(12,5)": app.hs, line 10; "<built-in>", "<entire-module>": none). Not
 * read: entries, the inherited columns, the flat table. Refused, with the line: a tree
 * line with fewer columns than its header, or numbers where the header has them that are
 * not, a report without a tree, stacks deeper than max-depth, ticks past max-samples.
 * Memory follows the deepest stack and the distinct cost centres. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/ghc_tree.h"
#include "formats/ghcprof/ghcprof.h"

#define MAX_COLS 16

struct ghcprof_state {
	struct tachi_ghc g;
	bool in_tree;
	uint64_t interval_us, total_ticks, total_alloc;
	int ncols;              /* the columns after SRC */
	int ticks_col, bytes_col, time_col, alloc_col; /* their index; -1: absent */
	bool estimate;          /* no ticks and bytes columns: from the percentages */
};

static bool is_blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r';
}

/* The decimal digits at s (commas between them skipped), their end in *end. */
static bool digits(const char *s, size_t n, size_t *at, uint64_t *v)
{
	size_t i = *at, start = i;
	*v = 0;
	for (; i < n && ((s[i] >= '0' && s[i] <= '9') || (s[i] == ',' && i > start)); i++) {
		if (s[i] == ',')
			continue;
		if (*v > (UINT64_MAX - 9) / 10)
			return false;
		*v = *v * 10 + (uint64_t)(s[i] - '0');
	}
	*at = i;
	return i > start;
}

/* "total time = 0.02 secs (23 ticks @ 1000 us, 1 processor)", "total alloc = 5,424 bytes" */
static void header_totals(struct ghcprof_state *d, const char *s, size_t n)
{
	const char *p = memmem(s, n, "ticks @ ", 8);
	if (p) {
		size_t at = (size_t)(p - s) + 8, back = (size_t)(p - s);
		uint64_t v;
		if (digits(s, n, &at, &v) && n - at >= 3 && !memcmp(s + at, " us", 3) &&
		    v <= TACHI_MAX_INTERVAL_US)
			d->interval_us = v;
		while (back && s[back - 1] == ' ')
			back--;
		while (back && ((s[back - 1] >= '0' && s[back - 1] <= '9') || s[back - 1] == ','))
			back--;
		if (digits(s, n, &back, &v))
			d->total_ticks = v;
	}
	p = memmem(s, n, "total alloc =", 13);
	if (p) {
		size_t at = (size_t)(p - s) + 13;
		while (at < n && s[at] == ' ')
			at++;
		uint64_t v;
		if (digits(s, n, &at, &v))
			d->total_alloc = v;
	}
}

/* The next word of s from *at: its start and length (0 at the end). */
static size_t word(const char *s, size_t n, size_t *at, const char **w)
{
	while (*at < n && is_blank(s[*at]))
		(*at)++;
	*w = s + *at;
	size_t k = *at;
	while (*at < n && !is_blank(s[*at]))
		(*at)++;
	return *at - k;
}

static bool word_is(const char *w, size_t l, const char *lit)
{
	return l == strlen(lit) && !memcmp(w, lit, l);
}

/* The tree's header line: "COST CENTRE MODULE [SRC] no. entries ..."; false if s is not. */
static int tree_header(struct tach_reader *r, struct ghcprof_state *d, const char *s, size_t n)
{
	size_t at = 0, l;
	const char *w;
	const char *lead[] = { "COST", "CENTRE", "MODULE" };
	for (int i = 0; i < 3; i++) {
		l = word(s, n, &at, &w);
		if (!word_is(w, l, lead[i]))
			return 0;
	}
	d->ncols = 0;
	d->ticks_col = d->bytes_col = d->time_col = d->alloc_col = -1;
	bool no = false;
	while ((l = word(s, n, &at, &w))) {
		if (word_is(w, l, "SRC") && !d->ncols)
			continue;
		if (d->ncols == MAX_COLS)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
				     "more than %d columns in the cost-centre tree's header", MAX_COLS);
		no |= word_is(w, l, "no.");
		int *col = word_is(w, l, "ticks") ? &d->ticks_col : word_is(w, l, "bytes") ? &d->bytes_col :
			   word_is(w, l, "%time") ? &d->time_col : word_is(w, l, "%alloc") ? &d->alloc_col :
			   NULL;
		if (col && *col < 0)
			*col = d->ncols;
		d->ncols++;
	}
	if (!no)
		return 0; /* the flat table's header */
	if (d->ticks_col < 0 || d->bytes_col < 0) {
		if (d->time_col < 0 || d->alloc_col < 0)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "the cost-centre "
				     "tree has neither ticks and bytes nor %%time and %%alloc columns");
		d->estimate = true;
		tachi_warn(&r->warn, TACH_POS_LINE, r->in.line, "no ticks and bytes columns (+RTS "
			   "-P writes them): each stack's are estimated from its %%time and %%alloc");
	}
	d->in_tree = true;
	tachi_ghc_open(r, &d->g, d->interval_us);
	return 1;
}

/* A percentage with one decimal ("30.4") scaled to total, rounded. */
static bool from_percent(const char *w, size_t l, uint64_t total, uint64_t *v)
{
	size_t at = 0;
	uint64_t whole, tenth = 0;
	if (!digits(w, l, &at, &whole) || whole > 100)
		return false;
	if (at < l) {
		if (w[at] != '.' || at + 2 != l || w[at + 1] < '0' || w[at + 1] > '9')
			return false;
		tenth = (uint64_t)(w[at + 1] - '0');
	}
	unsigned __int128 x = (unsigned __int128)(whole * 10 + tenth) * total + 500;
	*v = (uint64_t)(x / 1000);
	return true;
}

/* A tree line: its cost centre pushed at its depth, its own ticks and bytes. */
static int tree_line(struct tach_reader *r, struct ghcprof_state *d, const char *s, size_t n,
		     uint64_t *ticks, uint64_t *bytes)
{
	const char *cw[MAX_COLS];
	size_t cl[MAX_COLS], end = n, indent = 0;
	while (indent < n && s[indent] == ' ')
		indent++;
	/* the numeric columns from the right, so that a SRC with blanks stays whole */
	for (int i = d->ncols - 1; i >= 0; i--) {
		while (end && is_blank(s[end - 1]))
			end--;
		size_t k = end;
		while (k > indent && !is_blank(s[k - 1]))
			k--;
		if (k == end || k == indent)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "a cost centre line "
				     "with fewer columns than the tree's header");
		cw[i] = s + k, cl[i] = end - k, end = k;
	}
	size_t at = indent, ln, mn;
	const char *label, *module;
	ln = word(s, end, &at, &label);
	mn = word(s, end, &at, &module);
	if (!mn)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "a cost centre line "
			     "with fewer columns than the tree's header");
	while (at < end && is_blank(s[at]))
		at++;
	while (end > at && is_blank(s[end - 1]))
		end--;
	uint32_t frame;
	int rc = tachi_ghc_frame(r, label, ln, module, mn, s + at, end - at, &frame);
	if (rc || (rc = tachi_ghc_push(r, &d->g, indent > UINT32_MAX ? UINT32_MAX : (uint32_t)indent,
				       frame, TACH_POS_LINE, r->in.line)))
		return rc;
	bool ok;
	if (d->estimate)
		ok = from_percent(cw[d->time_col], cl[d->time_col], d->total_ticks, ticks) &&
		     from_percent(cw[d->alloc_col], cl[d->alloc_col], d->total_alloc, bytes);
	else
		ok = tachi_parse_dec(cw[d->ticks_col], cl[d->ticks_col], UINT64_MAX, ticks) &&
		     tachi_parse_dec(cw[d->bytes_col], cl[d->bytes_col], UINT64_MAX, bytes);
	if (!ok)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, d->estimate ?
			     "a cost centre's %%time or %%alloc is no percentage" :
			     "a cost centre's ticks or bytes are no number");
	return TACH_OK;
}

/* Up to the tree's header: the totals, and the header's columns. */
static int gp_open(struct tach_reader *r)
{
	struct ghcprof_state *d = r->state;
	const char *s;
	size_t n;
	r->meta.sample_time = 0;
	while (!d->in_tree) {
		int rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF && !r->in.line)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0, "empty input: no profile in it");
		if (rc == TACH_EOF)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "no cost-centre tree "
				     "(its header line, COST CENTRE MODULE ... no. ...) in the report");
		if (rc)
			return rc;
		while (n && is_blank(s[n - 1]))
			n--;
		header_totals(d, s, n);
		if ((rc = tree_header(r, d, s, n)) < 0)
			return rc;
	}
	return TACH_OK;
}

static int gp_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct ghcprof_state *d = r->state;
	const char *s;
	size_t n;
	for (;;) {
		int rc = tachi_in_line(r, &s, &n);
		if (rc)
			return rc;
		while (n && is_blank(s[n - 1]))
			n--;
		if (!n)
			continue;
		uint64_t ticks, bytes;
		bool given;
		if ((rc = tree_line(r, d, s, n, &ticks, &bytes)) ||
		    (rc = tachi_ghc_sample(r, &d->g, ticks, bytes, TACH_POS_LINE, r->in.line, &given)))
			return rc;
		if (given) {
			*out = &r->sample;
			return TACH_OK;
		}
	}
}

static void gp_free(struct tach_reader *r)
{
	struct ghcprof_state *d = r->state;
	tachi_ghc_free(&d->g);
}

const struct tachi_reader_ops tachi_ghcprof_reader_ops = {
	.state_size = sizeof(struct ghcprof_state),
	.open = gp_open,
	.next = gp_next,
	.free = gp_free,
};
