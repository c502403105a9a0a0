/* Instruments deep copy reader: the call tree that Instruments' Time Profiler (or
 * Allocations) puts on the clipboard with Edit > Deep Copy, pasted into a file, read as
 * speedscope's importer reads it, so the stacks and values are speedscope's.
 *
 * The first line names tab-separated columns; each next line is a node of the tree in
 * them: "Symbol Name" the function, indented a blank a level (its depth: the blanks
 * around the name), "Source Path" its file where the copy has that column, and the
 * node's total value in "Bytes Used" ("1.50 KB   12.3%": Bytes, KB, MB, GB, powers of
 * 1024), or else "Weight" or "Running Time" ("4273.0ms   99.9%", "1.20 s  47.8%": ms, s,
 * min), a value that is no such number being 0. The decimals are read: speedscope's
 * parseInt drops them (1.20 s is 1000 ms to it), and its minute is 1000 ms, which are
 * its slips, not the format's. Other columns ("Self (ms)") are not read; lines without a
 * name (blank ones) are skipped.
 *
 * A node's own value is its total less its children's (where the children's sum more,
 * the node spans them and has none of its own): a record for its stack, the path from the
 * root, for each node that has some. Times are the records' time_ns (meta.sample_time 1)
 * and their weights in ms, rounded, at least 1 (a sample a millisecond, as the Time
 * Profiler samples); bytes are the weights (meta.weight_unit "bytes"), no time. The tree keeps no timestamps (every
 * record at 0) nor threads (thread 0). Refused, with the line: a header without a "Symbol
 * Name" column, a node more than one level deeper than the line before it, a value past
 * 64 bits in the unit read, a tree deeper than max-depth, weights (ms or bytes) past
 * max-samples.
 * Memory follows the deepest stack and the distinct names. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "model/dict.h"
#include "formats/instruments/instruments.h"
#include "formats/text_stack.h"

#define NO_COL SIZE_MAX

struct inode {
	uint32_t frame;
	uint64_t total, children; /* the node's value, its children's extents so far */
};

struct iread {
	struct tachi_tstack st;
	struct inode *lv;      /* the open nodes from the root */
	size_t lv_cap;
	uint32_t levels, want; /* levels open; to keep before the pending node is pushed */
	struct inode pending;
	bool has_pending, eof, bytes;
	size_t c_name, c_path, c_value;
};

static bool blank(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* Column k of the line (tab-separated) into *f, *fn; false when the line has fewer. */
static bool column(const char *s, size_t n, size_t k, const char **f, size_t *fn)
{
	size_t at = 0;
	for (;;) {
		const char *tab = memchr(s + at, '\t', n - at);
		size_t e = tab ? (size_t)(tab - s) : n;
		if (!k--) {
			*f = s + at, *fn = e - at;
			return true;
		}
		if (!tab)
			return false;
		at = e + 1;
	}
}

static size_t find_column(const char *s, size_t n, const char *name)
{
	const char *f;
	size_t fn, l = strlen(name);
	for (size_t k = 0; column(s, n, k, &f, &fn); k++)
		if (fn == l && !memcmp(f, name, l))
			return k;
	return NO_COL;
}

static int header(struct tach_reader *r, struct iread *m, const char *s, size_t n)
{
	m->c_name = find_column(s, n, "Symbol Name");
	m->c_path = find_column(s, n, "Source Path");
	m->c_value = find_column(s, n, "Bytes Used");
	m->bytes = m->c_value != NO_COL;
	if (!m->bytes && (m->c_value = find_column(s, n, "Weight")) == NO_COL)
		m->c_value = find_column(s, n, "Running Time");
	if (m->c_name == NO_COL)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "an Instruments call tree header without a \"Symbol Name\" column");
	r->meta.sample_time = !m->bytes;
	r->meta.weight_unit = m->bytes ? "bytes" : NULL;
	return TACH_OK;
}

/* The unit after a value and its size in ns or bytes; 0 when none of the column's. */
static uint64_t unit_of(const struct iread *m, const char *u, size_t n)
{
	static const struct { const char *name; uint64_t mul; bool bytes; } units[] = {
		{ "Bytes", 1, true }, { "KB", 1024, true }, { "MB", 1024 * 1024, true },
		{ "GB", 1024 * 1024 * 1024, true }, { "ms", 1000000, false },
		{ "s", 1000000000, false }, { "min", 60000000000, false },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (units[i].bytes == m->bytes && strlen(units[i].name) == n &&
		    !memcmp(units[i].name, u, n))
			return units[i].mul;
	return 0;
}

/* "4273.0ms   99.9%" (or "1.50 KB   0.4%"): the number in ns or bytes (decimals past
 * the ninth dropped); 0 for what is no such value. Past 64 bits is refused. */
static int node_value(struct tach_reader *r, const struct iread *m, const char *s, size_t n,
		      uint64_t *v)
{
	size_t i = 0, d;
	uint64_t x = 0, frac = 0, scale = 1;
	bool big = false;
	*v = 0;
	while (i < n && blank(s[i]))
		i++;
	for (d = i; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		big |= x > (UINT64_MAX - 9) / 10;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == d)
		return TACH_OK;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			if (scale < 1000000000)
				frac = frac * 10 + (uint64_t)(s[i] - '0'), scale *= 10;
	if (i < n && s[i] == ' ')
		i++;
	size_t u = i;
	while (i < n && ((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= 'A' && s[i] <= 'Z')))
		i++;
	uint64_t mul = unit_of(m, s + u, i - u);
	if (!mul || i == n || !blank(s[i]) || !memchr(s + i, '%', n - i))
		return TACH_OK;
	/* frac < scale <= 1e9 and mul < 2^36: the fraction's product fits */
	if (big || __builtin_mul_overflow(x, mul, v) ||
	    __builtin_add_overflow(*v, frac * mul / scale, v))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "a node's value past 64 bits");
	return TACH_OK;
}

/* The frame of a node: its name, in its source file where the copy names one. */
static int node_frame(struct tach_reader *r, struct iread *m, const char *s, size_t n,
		      const char *line, size_t ln, uint32_t *id)
{
	const char *p = NULL;
	size_t pn = 0;
	if (m->c_path == NO_COL || !column(line, ln, m->c_path, &p, &pn))
		pn = 0;
	while (pn && blank(*p))
		p++, pn--;
	while (pn && blank(p[pn - 1]))
		pn--;
	if (!pn)
		return tachi_tstack_intern(r, s, n, id);
	struct tach_frame f = { 0, 0, TACH_NO_LINE, TACH_NO_LINE, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, p, pn, &f.file) ||
	    tach_dict_intern_string(&r->dict, s, n, &f.func) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

/* A line of the tree: its node pending, to be pushed once the deeper ones are closed. */
static int node_line(struct tach_reader *r, struct iread *m, const char *s, size_t n)
{
	const char *f;
	size_t fn, depth = 0;
	int rc;
	if (!column(s, n, m->c_name, &f, &fn))
		return TACH_OK;
	while (fn && blank(*f))
		f++, fn--, depth++;
	while (fn && blank(f[fn - 1]))
		fn--, depth++;
	if (!fn)
		return TACH_OK;
	if (depth > m->levels)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "a call tree node more than one level deeper than the line before it");
	if (depth >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "stack deeper than the limit of %u frames (see --max-depth)",
			     r->lim.max_depth);
	const char *v;
	size_t vn;
	m->pending.total = 0;
	if (m->c_value != NO_COL && column(s, n, m->c_value, &v, &vn) &&
	    (rc = node_value(r, m, v, vn, &m->pending.total)))
		return rc;
	if ((rc = node_frame(r, m, f, fn, s, n, &m->pending.frame)))
		return rc;
	m->pending.children = 0;
	m->has_pending = true;
	m->want = (uint32_t)depth;
	return TACH_OK;
}

/* The deepest open node closed: its own value, where it has some, as r->sample (*gave). */
static int close_node(struct tach_reader *r, struct iread *m, bool *gave)
{
	struct inode *nd = &m->lv[m->levels - 1];
	uint64_t extent = nd->total > nd->children ? nd->total : nd->children;
	uint64_t own = extent - nd->children;
	int rc;
	if (m->levels > 1) {
		uint64_t *c = &m->lv[m->levels - 2].children;
		*c = extent < UINT64_MAX - *c ? *c + extent : UINT64_MAX;
	}
	*gave = own > 0;
	if (*gave) {
		/* a time weighs its ms, at least one: what the Time Profiler's 1 ms samples count */
		uint64_t w = m->bytes ? own : own / 1000000 + (own % 1000000 >= 500000);
		w += !w;
		for (uint32_t i = m->levels; i > 0; i--)
			if ((rc = tachi_tstack_push_id(r, &m->st, m->lv[i - 1].frame)))
				return rc;
		/* the samples text gives a line a unit of weight: bytes count as samples */
		if ((rc = tachi_tstack_sample(r, &m->st, w)))
			return rc;
		r->sample.time_ns = m->bytes ? 0 : own;
	}
	m->levels--;
	return TACH_OK;
}

static int in_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct iread *m = r->state;
	const char *s;
	size_t n;
	int rc;
	bool gave;
	for (;;) {
		if (m->levels > m->want) {
			if ((rc = close_node(r, m, &gave)))
				return rc;
			if (gave)
				break;
			continue;
		}
		if (m->has_pending) {
			if (!TACHI_RESERVE(m->lv, m->lv_cap, (size_t)m->levels + 1))
				return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
			m->lv[m->levels++] = m->pending;
			m->has_pending = false;
		}
		if (m->eof)
			return TACH_EOF;
		rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF) {
			m->eof = true, m->want = 0;
			continue;
		}
		if (rc)
			return rc;
		if (n && s[n - 1] == '\r')
			n--;
		if ((rc = node_line(r, m, s, n)))
			return rc;
	}
	*out = &r->sample;
	return TACH_OK;
}

/* The header line, read before the samples so that the meta says what the values are. */
static int in_open(struct tach_reader *r)
{
	const char *s;
	size_t n;
	int rc = tachi_in_line(r, &s, &n);
	r->meta.interval_us = 0;
	if (rc == TACH_EOF) { /* an empty input: no sample, which the core says */
		((struct iread *)r->state)->eof = true;
		return TACH_OK;
	}
	if (rc)
		return rc;
	if (n && s[n - 1] == '\r')
		n--;
	return header(r, r->state, s, n);
}

static void in_free(struct tach_reader *r)
{
	struct iread *m = r->state;
	tachi_tstack_free(&m->st);
	free(m->lv);
}

const struct tachi_reader_ops tachi_instruments_reader_ops = {
	.state_size = sizeof(struct iread),
	.open = in_open,
	.next = in_next,
	.free = in_free,
};
