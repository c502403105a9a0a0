/* Collapsed ("folded") stack reader: lines "frame;frame;... COUNT", root first, as written by
 * flamegraph.pl's stackcollapse scripts, perf, py-spy (-f raw), austin, CPython's --collapsed
 * and our own collapsed writer.
 *
 * Each line becomes one record; the format has no timestamps, so they are synthesized in
 * input order, each record after the time (or the samples) of the one before. What a count
 * is, the count-unit option says, or its auto default decides per file: samples (weight =
 * count; their time count × interval only where the interval is known, from --interval or
 * austin's "# interval:", else none: meta.sample_time 0, interval 0, nothing guessed), or a
 * time (austin's µs; stackcollapse-perf.pl's sums of perf periods in ns, told by counts that
 * are all multiples of one number >= 1000): the record's time_ns, weight 1, or where the
 * counts share such a period (not austin's, whose common divisor is its clock's resolution),
 * count / period samples, the period being the interval. A time is never cut into samples
 * of a guessed interval. Accepted: LF or CRLF,
 * blank lines, '#' comments (austin's "# interval:" and "# python:" go into the metadata),
 * space or TAB before the count, white space around the line, fractional counts (rounded, or
 * scaled by the factor option), differential lines "stack A B" (one column kept, or with
 * diff=both both: B as a sample, A as a sample marked TACH_STATUS_BASELINE; whether a file
 * is differential is decided once, from its first valid line), austin full mode "a,b,c" (the
 * metric option picks one), zero counts (skipped) and negative counts (skipped, one warning).
 *
 * Frame labels are read in one style per file, chosen from the first ~1000 frames unless the
 * labels option fixes it: py-spy "func (file:line)", "file:func:line" (CPython, austin; split
 * from the right so Windows drive letters survive, and a colon that is half of "::" never
 * splits), austin 2's "file:func;L<line>" pairs, or raw names. A label the style does not fit
 * is a bare name: file "~" and no location, the way CPython stores its special frames (<GC>),
 * so the collapsed writer prints it back unchanged. Thread pseudo-frames at the root (tid:N,
 * austin "P<pid>;T[<iid>:]<tid>", py-spy "process N:\"...\"" and "thread (ID)[: name]",
 * austin 1's "[Process PID;]Thread ID") set the sample's thread and interpreter ids; their
 * style is decided from the first valid line. stackcollapse-perf.pl's --pid and --tid roots
 * ("comm-PID", "comm-PID/TID", PID '?' when unknown) are decided from all the first lines,
 * and leave the process name as the root frame. austin 1's "func (file);L<line>" pairs
 * fold into one frame, and its -f lines "stack TIME MEM+ MEM-" are read as three metrics.
 *
 * Not supported: escapes (the format has none: ';' always splits frames, except inside
 * py-spy's quoted process command lines), colour annotations such as "_[k]" (kept in the
 * name), exponents in counts. Memory grows with distinct labels, never with input size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/detect.h"
#include "formats/collapsed/collapsed.h"
#include "formats/collapsed/read.h"

/* ---- numbers ---- */

/* digits[.digits] with an optional '-' when allow_neg. Fraction digits past 18 are dropped. */
static bool parse_num(const char *p, size_t n, bool allow_neg, struct num *out)
{
	size_t i = 0;
	*out = (struct num){ 0 };
	if (allow_neg && n && p[0] == '-') {
		out->neg = true;
		i = 1;
	}
	size_t d0 = i;
	for (; i < n && is_digit(p[i]); i++) {
		if (out->mant > UINT64_MAX / 10)
			out->big = true;
		else
			out->mant = out->mant * 10 + (unsigned)(p[i] - '0');
	}
	if (i == d0)
		return false;
	if (i < n && p[i] == '.') {
		for (i++; i < n && is_digit(p[i]); i++) {
			if (out->scale < 18) {
				out->mant = out->mant * 10 + (unsigned)(p[i] - '0');
				out->scale++;
			}
		}
	}
	return i == n;
}

/* count * factor * unit_mul rounded half up, saturating at UINT64_MAX: unit_mul turns a
 * time into ns (1 for samples). *rounded when that dropped a fraction. Exact integer
 * arithmetic, so the result never depends on the platform. */
static uint64_t scale_count(struct cread *st, const struct num *c, bool *rounded)
{
	const struct num *f = &st->factor;
	if (c->big || f->big)
		return UINT64_MAX;
	unsigned __int128 m;
	if (__builtin_mul_overflow(c->mant, f->mant, &m) ||
	    __builtin_mul_overflow(m, (unsigned __int128)st->unit_mul, &m))
		return UINT64_MAX;
	unsigned __int128 p10 = 1;
	for (unsigned k = 0; k < c->scale + f->scale; k++)
		p10 *= 10;
	unsigned __int128 q = m / p10, rem = m % p10;
	if (rem) {
		*rounded = true;
		if (rem * 2 >= p10)
			q++;
	}
	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

/* ---- line level ---- */

/* diff=both: the second count a in *count, the first b in st->base; the line counts when
 * either is positive. */
static int both_counts(struct cread *st, const char *s, size_t t2, const struct num *a,
		       const struct num *b, size_t *stack_len, uint64_t *count, bool *rounded)
{
	size_t e = t2;
	while (e > 0 && is_ws(s[e - 1]))
		e--;
	if (e == 0) {
		st->why = "no stack before the count";
		return L_INVALID;
	}
	*stack_len = e;
	*count = scale_count(st, a, rounded);
	st->base = scale_count(st, b, rounded);
	if (a->neg || b->neg)
		return (*count || st->base) ? L_NEGATIVE : L_ZERO;
	return (*count || st->base) ? L_DATA : L_ZERO;
}

/* The last white-space separated token of s[0, n): its start *t and the end *e of what
 * is before it, white space off; false when there is no white space. */
static bool last_token(const char *s, size_t n, size_t *t, size_t *e)
{
	size_t k = n;
	while (k > 0 && !is_ws(s[k - 1]))
		k--;
	if (k == 0)
		return false;
	*t = k;
	while (k > 0 && is_ws(s[k - 1]))
		k--;
	*e = k;
	return true;
}

/* austin 1's -f line ends "TIME MEM+ MEM-": the metric's field of the three, then the stack
 * before them. */
static int spaced_counts(struct cread *st, const char *s, size_t n, size_t *stack_len,
			 uint64_t *count, bool *rounded)
{
	size_t t[3], e = n;
	for (int k = 2; k >= 0; k--)
		if (!last_token(s, e, &t[k], &e)) {
			st->why = "austin full mode needs three counts on every line";
			return L_INVALID;
		}
	if (st->metric > 3) {
		st->why = "fewer space-separated counts than the metric asks for";
		return L_INVALID;
	}
	size_t f = t[st->metric - 1];
	size_t fe = st->metric < 3 ? t[st->metric] : n;
	while (fe > f && is_ws(s[fe - 1]))
		fe--;
	struct num a;
	if (!parse_num(s + f, fe - f, true, &a)) {
		st->why = "the count is not a number";
		return L_INVALID;
	}
	if (e == 0) {
		st->why = "no stack before the count";
		return L_INVALID;
	}
	*stack_len = e;
	*count = scale_count(st, &a, rounded);
	if (*count == 0)
		return L_ZERO;
	return a.neg ? L_NEGATIVE : L_DATA;
}

/* Whether a line is austin 1's -f form: three counts, the last one (memory freed) zero or
 * negative, the two before not negative. */
static bool is_spaced3(const char *s, size_t n)
{
	size_t t, e = n, end = n;
	struct num x;
	for (int k = 0; k < 3; k++) {
		if (!last_token(s, e, &t, &e) || !parse_num(s + t, end - t, true, &x) || x.scale)
			return false;
		if (k == 0 ? (x.neg == false && x.mant != 0) : x.neg)
			return false;
		end = e;
	}
	return e > 0;
}

/* Takes the count(s) off the end of a trimmed, non-empty data line; *stack_len is what is
 * left of the stack. Sets st->why for invalid lines. */
static int split_count(struct cread *st, const char *s, size_t n, size_t *stack_len,
		       uint64_t *count, bool *rounded)
{
	if (st->spaced3)
		return spaced_counts(st, s, n, stack_len, count, rounded);
	size_t t = n;
	while (t > 0 && !is_ws(s[t - 1]))
		t--;
	if (t == 0) {
		st->why = "no count after the stack";
		return L_INVALID;
	}
	const char *tok = s + t;
	size_t tl = n - t;
	size_t e = t;
	while (e > 0 && is_ws(s[e - 1]))
		e--;
	/* austin full mode: "time,idle,mem" */
	if (memchr(tok, ',', tl) || st->metric > 1) {
		const char *f = tok, *end = tok + tl;
		for (uint32_t k = 1; k < st->metric; k++) {
			const char *c = memchr(f, ',', (size_t)(end - f));
			if (!c) {
				st->why = "fewer comma-separated counts than the metric asks for";
				return L_INVALID;
			}
			f = c + 1;
		}
		const char *c = memchr(f, ',', (size_t)(end - f));
		tok = f;
		tl = (size_t)((c ? c : end) - f);
	}
	struct num a;
	if (!parse_num(tok, tl, true, &a)) {
		st->why = "the count is not a number";
		return L_INVALID;
	}
	if (st->differential) {
		size_t t2 = e;
		while (t2 > 0 && !is_ws(s[t2 - 1]))
			t2--;
		struct num b;
		if (t2 == 0 || !parse_num(s + t2, e - t2, true, &b)) {
			st->why = "a differential file needs two counts on every line";
			return L_INVALID;
		}
		if (st->diff_opt == DIFF_FIRST)
			a = b;
		if (st->diff_opt == DIFF_BOTH)
			return both_counts(st, s, t2, &a, &b, stack_len, count, rounded);
		e = t2;
		while (e > 0 && is_ws(s[e - 1]))
			e--;
	}
	if (e == 0) {
		st->why = "no stack before the count";
		return L_INVALID;
	}
	*stack_len = e;
	*count = scale_count(st, &a, rounded);
	if (*count == 0)
		return L_ZERO;
	return a.neg ? L_NEGATIVE : L_DATA;
}

/* Whether a valid line's stack ends in " NUMBER": a differential line. */
static bool ends_in_number(const char *s, size_t n)
{
	size_t t = n;
	while (t > 0 && !is_ws(s[t - 1]))
		t--;
	struct num x;
	return t > 0 && parse_num(s + t, n - t, true, &x);
}

static void trim(const char **s, size_t *n)
{
	const char *p = *s;
	size_t k = *n;
	while (k && (is_ws(p[k - 1]) || p[k - 1] == '\r'))
		k--;
	while (k && is_ws(p[0])) {
		p++;
		k--;
	}
	*s = p;
	*n = k;
}

/* "# key: value" metadata from austin: the interval (µs) and the Python version. */
static void meta_line(struct tach_reader *r, const char *s, size_t n)
{
	struct cread *st = r->state;
	size_t i = 1;
	while (i < n && is_ws(s[i]))
		i++;
	const char *key = s + i;
	const char *colon = memchr(key, ':', n - i);
	if (!colon)
		return;
	size_t kl = (size_t)(colon - key);
	const char *v = colon + 1;
	size_t vl = n - (size_t)(v - s);
	trim(&v, &vl);
	if (st->started) {
		if (!st->warned_meta_late && ((kl == 8 && !memcmp(key, "interval", 8)) ||
					      (kl == 6 && !memcmp(key, "python", 6)))) {
			st->warned_meta_late = true;
			tachi_warn(&r->warn, TACH_POS_LINE, r->in.line,
				   "metadata after the first samples ignored");
		}
		return;
	}
	uint64_t x;
	if (kl == 8 && !memcmp(key, "interval", 8)) {
		if (!st->interval_set && tachi_parse_dec(v, vl, UINT32_MAX, &x) && x > 0) {
			r->meta.interval_us = x;
			st->meta_interval = true;
		}
	} else if (kl == 6 && !memcmp(key, "austin", 6)) {
		st->meta_austin = true;
	} else if (kl == 4 && !memcmp(key, "mode", 4)) {
		st->meta_austin = true;
		st->meta_memory = vl == 6 && !memcmp(v, "memory", 6);
	} else if (kl == 6 && !memcmp(key, "python", 6)) {
		unsigned part[3] = { 0, 0, 0 };
		size_t k = 0, j = 0;
		for (; k < 3 && j < vl; k++) {
			size_t d = j;
			unsigned val = 0;
			while (j < vl && is_digit(v[j]) && val < 1000)
				val = val * 10 + (unsigned)(v[j++] - '0');
			if (j == d || val > 255)
				return;
			part[k] = val;
			if (j < vl && v[j] == '.')
				j++;
			else
				break;
		}
		r->meta.py_major = (uint8_t)part[0];
		r->meta.py_minor = (uint8_t)part[1];
		r->meta.py_micro = (uint8_t)part[2];
	}
}

struct collapsed_lkey {
	const char *p;
	size_t n;
};

static bool label_eq(void *ctx, uint32_t id, const void *key)
{
	const struct cread *st = ctx;
	const struct label *l = &st->labs[id];
	const struct collapsed_lkey *k = key;
	return l->len == k->n && !memcmp(st->lbytes + l->off, k->p, k->n);
}


static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

static int make_frame(struct tach_reader *r, const char *file, size_t fl, const char *func,
		      size_t nl, int32_t line, uint32_t *id)
{
	struct tach_frame f = { 0, 0, line, line, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, file, fl, &f.file) ||
	    tach_dict_intern_string(&r->dict, func, nl, &f.func) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return nomem(r);
	return TACH_OK;
}

static int bare_frame(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	struct cread *st = r->state;
	if (!n && !st->warned_empty) {
		st->warned_empty = true;
		tachi_warn(&r->warn, TACH_POS_LINE, st->line, "empty frame name (\";;\" in a stack)");
	}
	return make_frame(r, "~", 1, s, n, TACH_NO_LINE, id);
}

/* Turns a label (for austin 2, "file:func;L<line>") into one or two frames. */
static int parse_label(struct tach_reader *r, const char *s, size_t n, uint32_t *f1, uint32_t *f2)
{
	struct cread *st = r->state;
	size_t a, b, c;
	int32_t line;
	bool strict_path = !st->explicit_labels;
	*f2 = NO_FRAME;
	switch (st->labels) {
	case LAB_PYSPY:
		if (tachi_cr_split_pyspy(s, n, &a, &b, &c, &line) &&
		    (!strict_path || tachi_cr_path_like(s + b, c)))
			return make_frame(r, s + b, c, s, a, line, f1);
		break;
	case LAB_COLON:
		if (tachi_cr_split_colon(s, n, &a, &b, &c, &line) &&
		    (!strict_path || tachi_cr_path_like(s, a)))
			return make_frame(r, s, a, s + b, c, line, f1);
		break;
	case LAB_AUSTIN1: {
		const char *semi = memchr(s, ';', n);
		if (!semi) {
			if (tachi_cr_split_pyspy(s, n, &a, &b, &c, &line) &&
			    (!strict_path || tachi_cr_path_like(s + b, c)))
				return make_frame(r, s + b, c, s, a, line, f1);
			break;
		}
		size_t hl = (size_t)(semi - s);
		if (tachi_cr_split_pyspy(s, hl, &a, &b, &c, &line) && line == TACH_NO_LINE &&
		    (!strict_path || tachi_cr_path_like(s + b, c)) &&
		    tachi_cr_parse_line_no(semi + 2, n - hl - 2, &line))
			return make_frame(r, s + b, c, s, a, line, f1);
		int rc = bare_frame(r, s, hl, f1);
		return rc ? rc : bare_frame(r, semi + 1, n - hl - 1, f2);
	}
	case LAB_AUSTIN2: {
		const char *semi = memchr(s, ';', n);
		if (!semi)
			break;
		size_t hl = (size_t)(semi - s);
		const char *lf = semi + 1;
		size_t ll = n - hl - 1;
		if (tachi_cr_split_file_func(s, hl, &a) && (!strict_path || tachi_cr_path_like(s, a)) &&
		    tachi_cr_parse_line_no(lf + 1, ll - 1, &line))
			return make_frame(r, s, a, s + a + 1, hl - a - 1, line, f1);
		int rc = bare_frame(r, s, hl, f1);
		return rc ? rc : bare_frame(r, lf, ll, f2);
	}
	}
	return bare_frame(r, s, n, f1);
}

static int label_frames(struct tach_reader *r, const char *s, size_t n, const struct label **out)
{
	struct cread *st = r->state;
	uint64_t h = tachi_hash(s, n);
	struct collapsed_lkey key = { s, n };
	uint32_t id;
	if (TACHI_LIKELY(tachi_idset_find(&st->lindex, h, &key, label_eq, st, &id))) {
		*out = &st->labs[id];
		return TACH_OK;
	}
	uint32_t f1, f2;
	int rc = parse_label(r, s, n, &f1, &f2);
	if (rc)
		return rc;
	size_t need;
	if (st->nlabs >= UINT32_MAX - 1 || tachi_add_overflows(st->lbytes_len, n, &need) ||
	    !TACHI_RESERVE(st->lbytes, st->lbytes_cap, need ? need : 1) ||
	    !TACHI_RESERVE(st->labs, st->labs_cap, st->nlabs + 1))
		return nomem(r);
	memcpy(st->lbytes + st->lbytes_len, s, n);
	id = (uint32_t)st->nlabs;
	st->labs[id] = (struct label){ st->lbytes_len, (uint32_t)n, f1, f2 };
	st->lbytes_len = need;
	if (!tachi_idset_insert(&st->lindex, h, id))
		return nomem(r);
	st->nlabs++;
	*out = &st->labs[id];
	return TACH_OK;
}

/* ---- options ---- */

static int cr_option(struct tach_reader *r, const char *key, const char *value)
{
	struct cread *st = r->state;
	uint64_t v;
	if (!strcmp(key, "labels")) {
		static const char *const names[] = { "auto", "pyspy", "colon", "austin2", "raw",
						     "austin1" };
		for (int i = 0; i < 6; i++)
			if (!strcmp(value, names[i])) {
				st->labels_opt = i;
				return TACH_OK;
			}
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
			     "labels must be auto, pyspy, colon, austin1, austin2 or raw, not %s",
			     value);
	}
	if (!strcmp(key, "count-unit")) {
		static const char *const units[] = { "auto", "samples", "ns", "us", "ms" };
		for (int i = 0; i < 5; i++)
			if (!strcmp(value, units[i])) {
				st->unit_opt = i;
				return TACH_OK;
			}
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
			     "count-unit must be auto, samples, ns, us or ms, not %s", value);
	}
	if (!strcmp(key, "diff")) {
		if (!strcmp(value, "second"))
			st->diff_opt = DIFF_SECOND;
		else if (!strcmp(value, "first"))
			st->diff_opt = DIFF_FIRST;
		else if (!strcmp(value, "none"))
			st->diff_opt = DIFF_NONE;
		else if (!strcmp(value, "both"))
			st->diff_opt = DIFF_BOTH;
		else
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "diff must be first, second, both or none, not %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "keep-thread-frames")) {
		if (!tachi_parse_bool(value, &st->keep_threads))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad keep-thread-frames: %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "metric")) {
		if (!tachi_parse_u64(value, 64, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "metric must be a field number from 1 to 64, not %s", value);
		st->metric = (uint32_t)v;
		return TACH_OK;
	}
	if (!strcmp(key, "interval")) {
		if (!tachi_parse_u64(value, UINT32_MAX, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "interval must be 1 to %u microseconds, not %s", UINT32_MAX, value);
		r->meta.interval_us = v;
		st->interval_set = true;
		return TACH_OK;
	}
	if (!strcmp(key, "factor")) {
		struct num f;
		size_t len = strlen(value);
		const char *dot = memchr(value, '.', len);
		if (!parse_num(value, len, false, &f) || f.big || f.mant == 0 ||
		    (dot && len - (size_t)(dot - value) - 1 > 18))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "factor must be a positive decimal number with at most 18 "
				     "fraction digits, not %s", value);
		st->factor = f;
		st->factor_set = true;
		return TACH_OK;
	}
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "collapsed reader has no option %s", key);
}

/* ---- reading ---- */

/* The positive counts of the first lines, to tell whether they are times. */
static void sniff_count(struct cread *st, uint64_t count)
{
	uint64_t a = st->cgcd, b = count;
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	st->cgcd = a;
	st->ncounts++;
	if (__builtin_add_overflow(st->csum, count, &st->csum))
		st->csum = UINT64_MAX;
}

/* Looks at one data line before any sample is made: the per-file decisions come from the
 * first valid line (threads, differential, austin 1's three counts) and the first lines
 * (labels, perf roots, the counts' unit). */
static void sniff_line(struct cread *st, const char *s, size_t n)
{
	size_t sl;
	uint64_t count;
	bool rounded = false;
	if (!st->first_valid) {
		st->spaced3 = is_spaced3(s, n);
		if (split_count(st, s, n, &sl, &count, &rounded) == L_INVALID) {
			st->spaced3 = false;
			return;
		}
		st->first_valid = true;
		st->differential = !st->spaced3 && st->diff_opt != DIFF_NONE && ends_in_number(s, sl);
		const char *end = s + sl;
		if (end > s && end[-1] == ';')
			end--;
		if (end > s)
			st->threads = st->keep_threads ? THR_NONE : tachi_cr_sniff_threads(s, end);
	}
	int kind = split_count(st, s, n, &sl, &count, &rounded);
	if (kind == L_INVALID)
		return;
	if (kind == L_DATA)
		sniff_count(st, count);
	const char *end = s + sl;
	if (end > s && end[-1] == ';')
		end--;
	if (st->threads == THR_NONE && !st->keep_threads && end > s)
		tachi_cr_sniff_perf_root(st, s, end);
	uint64_t tid = 0;
	uint32_t iid = 0;
	const char *p = tachi_cr_strip_threads(st, s, end, &tid, &iid);
	tachi_cr_sniff_labels(st, p, end);
}

/* Whether the counts are austin's microseconds: its roots or header, and a time metric. */
static bool austin_time(const struct cread *st)
{
	bool austin = st->meta_austin || st->threads == THR_AUSTIN || st->threads == THR_AUSTIN1;
	return austin && !st->meta_memory && st->metric == 1;
}

/* With counts in a time unit (mul ns each): each line is the time it counts, and the
 * interval, which weighs nothing, the user's or the file's; else, where the counts of two
 * lines or more share a period (a perf period, as stackcollapse-perf.pl sums them), that
 * period, and a line then stands for its time over the period samples (unless the first
 * lines would make more than UNIT_MAX_WINDOW_SAMPLES); else none: measured times such as
 * austin's have no period (their common divisor is the clock's resolution), and a line is
 * one record of its time, never cut into guessed samples. */
static void choose_period(struct tach_reader *r, uint64_t mul)
{
	struct cread *st = r->state;
	unsigned __int128 g = (unsigned __int128)st->cgcd * mul;
	unsigned __int128 sum = (unsigned __int128)st->csum * mul;
	st->period = 0;
	if (st->interval_set || st->meta_interval || austin_time(st))
		return;
	r->meta.interval_us = 0;
	if (st->ncounts >= 2 && st->cgcd >= TIME_GCD_MIN && sum / g <= UNIT_MAX_WINDOW_SAMPLES &&
	    g <= (unsigned __int128)UINT32_MAX * 1000) {
		st->period = (uint64_t)g;
		r->meta.interval_us = (uint64_t)((g + 500) / 1000);
	}
}

/* What the counts are (see cr_option's count-unit), said once when it is a guess. */
static void decide_unit(struct tach_reader *r)
{
	static const uint64_t ns_per[] = { 1, 1, 1, 1000, 1000000 };
	struct cread *st = r->state;
	bool austin = austin_time(st);
	bool timelike = st->ncounts >= 2 && st->cgcd >= TIME_GCD_MIN;
	st->unit = st->unit_opt;
	if (st->unit == UNIT_AUTO)
		st->unit = austin ? UNIT_US : timelike ? UNIT_NS : UNIT_SAMPLES;
	if (st->unit_opt == UNIT_AUTO && st->unit == UNIT_NS)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "counts read as nanoseconds: every count is a multiple of %llu, as "
			   "stackcollapse-perf.pl's sums of perf periods are (--count-unit samples "
			   "takes them as samples)", (unsigned long long)st->cgcd);
	else if (st->unit == UNIT_SAMPLES && austin)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "counts taken as samples, but austin writes microseconds "
			   "(--count-unit us reads them as time)");
	else if (st->unit == UNIT_SAMPLES && timelike)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "counts taken as samples, but every count is a multiple of %llu, as "
			   "times in nanoseconds such as perf periods are (--count-unit ns reads "
			   "them as time)", (unsigned long long)st->cgcd);
	r->meta.sample_time = 1;
	if (st->unit != UNIT_SAMPLES) {
		st->unit_mul = ns_per[st->unit];
		choose_period(r, st->unit_mul);
	} else if (!st->interval_set && !st->meta_interval) {
		/* counts of samples of an unknown interval: no time, none guessed */
		r->meta.sample_time = 0;
		r->meta.interval_us = 0;
	}
}

/* The per-file choices, once the first lines have been seen. */
static void decide(struct tach_reader *r)
{
	struct cread *st = r->state;
	tachi_cr_decide_labels(st);
	if (st->threads == THR_NONE && !st->keep_threads)
		st->threads = tachi_cr_decide_perf_roots(st);
	decide_unit(r);
}

static int add_ahead(struct tach_reader *r, const char *s, size_t n)
{
	struct cread *st = r->state;
	size_t need;
	if (tachi_add_overflows(st->ahead_len, n, &need) ||
	    !TACHI_RESERVE(st->ahead, st->ahead_cap, need ? need : 1) ||
	    !TACHI_RESERVE(st->alines, st->alines_cap, st->nalines + 1))
		return nomem(r);
	memcpy(st->ahead + st->ahead_len, s, n);
	st->alines[st->nalines++] = (struct aline){ st->ahead_len, n, r->in.line };
	st->ahead_len = need;
	return TACH_OK;
}

static int cr_open(struct tach_reader *r)
{
	struct cread *st = r->state;
	if (!st->factor_set)
		st->factor = (struct num){ .mant = 1 };
	if (!st->metric)
		st->metric = 1;
	st->unit_mul = 1;
	/* Read ahead until the label style is clear; the lines are replayed by next. */
	while (st->n_frames < SNIFF_FRAMES && st->nalines < SNIFF_LINES &&
	       st->ahead_len < SNIFF_BYTES) {
		const char *s;
		size_t n;
		int rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF)
			break;
		if (rc)
			return rc;
		trim(&s, &n);
		if (!n)
			continue;
		if (s[0] == '#') {
			meta_line(r, s, n);
			continue;
		}
		if ((rc = add_ahead(r, s, n)))
			return rc;
		sniff_line(st, s, n);
		/* a stack line, held here: the stream is folded stacks (tachi_in_line's limit) */
		r->any_sample |= st->first_valid != 0;
	}
	if (st->first_valid)
		decide(r);
	return TACH_OK;
}

static void note_invalid(struct cread *st, const char *s, size_t n)
{
	if (st->invalid++)
		return;
	st->first_invalid = st->line;
	snprintf(st->first_why, sizeof(st->first_why), "%s", st->why);
	/* Enough of the line to tell what the file is (a PNG, JSON), bytes outside
	 * printable ASCII as '?'. */
	size_t k = 0, max = sizeof(st->first_seen) - 4;
	for (size_t i = 0; i < n && k < max; i++) {
		unsigned char c = (unsigned char)s[i];
		st->first_seen[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (n > max)
		memcpy(st->first_seen + k, "...", 3), k += 3;
	st->first_seen[k] = 0;
}

static int finish(struct tach_reader *r)
{
	struct cread *st = r->state;
	if (st->finished)
		return TACH_EOF;
	st->finished = true;
	/* Lenient skipping is for a stray line in a real file; input of which no line is a
	 * stack (an image, a JSON profile) is not folded stacks at all. */
	if (st->invalid && !st->any_stack)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, st->first_invalid,
			     "not folded stacks: no line is a stack and a count (here: %s: \"%s\")",
			     st->first_why, st->first_seen);
	if (st->invalid)
		tachi_warn(&r->warn, TACH_POS_LINE, st->first_invalid,
			   "%llu line%s with invalid format ignored; the first is here: %s",
			   (unsigned long long)st->invalid, st->invalid == 1 ? "" : "s", st->first_why);
	if (!st->any_data && (st->negative || st->zero))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE,
			     st->negative ? st->first_negative : st->first_zero,
			     "no samples: every stack line was skipped (%llu with a negative count, "
			     "%llu with a count of 0; the first is here)",
			     (unsigned long long)st->negative, (unsigned long long)st->zero);
	if (st->negative)
		tachi_warn(&r->warn, TACH_POS_LINE, st->first_negative,
			   "%llu line%s with a negative count skipped; the first is here",
			   (unsigned long long)st->negative, st->negative == 1 ? "" : "s");
	return TACH_EOF;
}

/* The next data line, trimmed, from the read-ahead lines or the input. */
static int next_line(struct tach_reader *r, const char **s, size_t *n)
{
	struct cread *st = r->state;
	for (;;) {
		if (st->apos < st->nalines) {
			const struct aline *a = &st->alines[st->apos++];
			*s = st->ahead + a->off;
			*n = a->len;
			st->line = a->line;
			return TACH_OK;
		}
		if (st->nalines) {
			/* The read-ahead copy is no longer needed. */
			free(st->ahead);
			free(st->alines);
			st->ahead = NULL;
			st->alines = NULL;
			st->ahead_len = st->ahead_cap = st->nalines = st->alines_cap = st->apos = 0;
		}
		int rc = tachi_in_line(r, s, n);
		if (rc)
			return rc;
		st->line = r->in.line;
		trim(s, n);
		if (!*n)
			continue;
		if ((*s)[0] == '#') {
			meta_line(r, *s, *n);
			continue;
		}
		return TACH_OK;
	}
}

/* The next line that is a stack with a count: *s, *n the line, *sl the stack's length.
 * Invalid lines are counted (or, strict, an error), negative ones noted. */
static int next_stack_line(struct tach_reader *r, const char **s, size_t *n, size_t *sl,
			   uint64_t *count)
{
	struct cread *st = r->state;
	for (;;) {
		int rc = next_line(r, s, n);
		if (rc == TACH_EOF)
			return finish(r);
		if (rc)
			return rc;
		if (TACHI_UNLIKELY(!st->decided)) {
			sniff_line(st, *s, *n);
			if (st->first_valid)
				decide(r);
		}
		bool rounded = false;
		int kind = split_count(st, *s, *n, sl, count, &rounded);
		if (TACHI_UNLIKELY(rounded) && !st->warned_round && st->unit == UNIT_SAMPLES) {
			st->warned_round = true;
			tachi_warn(&r->warn, TACH_POS_LINE, st->line,
				   "fractional count rounded to an integer (use --factor to scale counts)");
		}
		if (kind != L_INVALID)
			st->any_stack = true;
		if (TACHI_LIKELY(kind == L_DATA)) {
			st->any_data = true;
			return TACH_OK;
		}
		if (kind == L_INVALID) {
			if (r->lim.strict)
				return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, st->line, "%s", st->why);
			note_invalid(st, *s, *n);
		} else if (kind == L_NEGATIVE) {
			if (!st->negative++)
				st->first_negative = st->line;
		} else if (!st->zero++) {
			st->first_zero = st->line;
		}
	}
}

/* The frames of the stack [p, end), root first, into st->root; *depth their number. */
static int parse_stack(struct tach_reader *r, const char *p, const char *end, uint32_t *depth)
{
	struct cread *st = r->state;
	*depth = 0;
	while (p) {
		const char *nx;
		const char *fe = frame_end(p, end, &nx);
		if (st->root_len && !*depth) {
			/* a perf root: its process name is the frame */
			fe = p + st->root_len;
		} else if ((st->labels == LAB_AUSTIN2 || st->labels == LAB_AUSTIN1) && nx) {
			const char *nx2;
			const char *fe2 = frame_end(nx, end, &nx2);
			if (tachi_cr_is_lframe(nx, (size_t)(fe2 - nx))) {
				fe = fe2;
				nx = nx2;
			}
		}
		const struct label *l = NULL;
		int rc = label_frames(r, p, (size_t)(fe - p), &l);
		if (rc)
			return rc;
		uint32_t add = l->frame2 == NO_FRAME ? 1 : 2;
		if (TACHI_UNLIKELY(*depth + add > r->lim.max_depth))
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
				     "stack deeper than the limit of %u frames", r->lim.max_depth);
		if (TACHI_UNLIKELY(*depth + add > st->root_cap) &&
		    !TACHI_RESERVE(st->root, st->root_cap, (size_t)*depth + add))
			return nomem(r);
		st->root[(*depth)++] = l->frame;
		if (add == 2)
			st->root[(*depth)++] = l->frame2;
		p = nx;
	}
	return TACH_OK;
}

/* The sample of a parsed stack: innermost first, with how much of its outer part the
 * previous sample of the thread shares. */
static int make_sample(struct tach_reader *r, uint64_t tid, uint32_t iid, uint32_t depth,
		       uint64_t count, uint64_t next_clock)
{
	struct cread *st = r->state;
	if (depth > st->frames_cap && !TACHI_RESERVE(st->frames, st->frames_cap, depth))
		return nomem(r);
	for (uint32_t i = 0; i < depth; i++)
		st->frames[i] = st->root[depth - 1 - i];
	uint32_t same = 0;
	if (st->has_prev && st->prev_tid == tid && st->prev_iid == iid) {
		uint32_t m = depth < st->prev_depth ? depth : st->prev_depth;
		while (same < m && st->prev[same] == st->root[same])
			same++;
	}
	if (depth > st->prev_cap && !TACHI_RESERVE(st->prev, st->prev_cap, depth))
		return nomem(r);
	if (depth)
		memcpy(st->prev, st->root, depth * sizeof(*st->prev));
	st->prev_depth = depth;
	st->prev_tid = tid;
	st->prev_iid = iid;
	st->has_prev = true;
	struct tach_sample *smp = &r->sample;
	smp->thread_id = tid;
	smp->interp_id = iid;
	smp->timestamp_us = st->clock;
	/* The format says nothing of the thread's state. */
	smp->status = TACH_STATUS_UNKNOWN;
	smp->weight = count;
	smp->depth = depth;
	smp->same_outer = same;
	smp->frames = st->frames;
	st->clock = next_clock;
	st->total += count;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += count;
	return TACH_OK;
}

/* What a line's count stands for: samples (weight count, time count intervals where the
 * interval is known), or a time in ns (one record of it, count / period samples where the
 * counts share a period); and where the synthesized clock goes next (by its time, else by
 * its samples of the interval, 1 ms without one). */
struct amount {
	uint64_t weight, time_ns, next_clock;
};

static int amount_of(struct tach_reader *r, uint64_t count, struct amount *a)
{
	struct cread *st = r->state;
	uint64_t step;
	if (st->unit == UNIT_SAMPLES) {
		uint64_t iv = r->meta.interval_us;
		a->weight = count;
		if (!r->meta.sample_time ||
		    __builtin_mul_overflow(count, iv * 1000, &a->time_ns))
			a->time_ns = r->meta.sample_time ? UINT64_MAX : 0;
		if (__builtin_mul_overflow(count, iv ? iv : 1000, &step))
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
				     "synthesized timestamps exceed 64 bits");
	} else {
		a->time_ns = count;
		a->weight = st->period ? (count + st->period / 2) / st->period : 1;
		if (!a->weight)
			a->weight = 1;
		step = count / 1000;
	}
	if (TACHI_UNLIKELY(a->weight > r->lim.max_samples - st->total))
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
			     "the counts add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	if (__builtin_add_overflow(st->clock, step, &a->next_clock))
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
			     "synthesized timestamps exceed 64 bits");
	return TACH_OK;
}

/* diff=both: the baseline count of the last line, on its stack, marked; same: the sample
 * before was that line's own. */
static int baseline_sample(struct tach_reader *r, uint64_t count, bool same)
{
	struct cread *st = r->state;
	struct tach_sample *smp = &r->sample;
	struct amount a;
	int rc = amount_of(r, count, &a);
	if (rc)
		return rc;
	smp->timestamp_us = st->clock;
	smp->status = TACH_STATUS_UNKNOWN | TACH_STATUS_BASELINE;
	smp->weight = a.weight;
	smp->time_ns = a.time_ns;
	if (same)
		smp->same_outer = smp->depth;
	st->clock = a.next_clock;
	st->total += a.weight;
	r->stats.total_samples += a.weight;
	return TACH_OK;
}

static int cr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct cread *st = r->state;
	st->started = true;
	const char *s;
	size_t n, sl;
	uint64_t count;
	int rc;
	if (st->pending) {
		uint64_t b = st->pending;
		st->pending = 0;
		if ((rc = baseline_sample(r, b, true)))
			return rc;
		*out = &r->sample;
		return TACH_OK;
	}
	st->base = 0;
	if ((rc = next_stack_line(r, &s, &n, &sl, &count)))
		return rc;
	const char *end = s + sl;
	if (end > s && end[-1] == ';')
		end--;
	uint64_t tid = 0;
	uint32_t iid = 0;
	const char *p = s;
	st->root_len = 0;
	if (st->threads != THR_NONE)
		p = tachi_cr_strip_threads(st, s, end, &tid, &iid);
	/* At the end, a frame is left only when a ';' ends the thread frames ("tid:1;;"). */
	if (p == end && !(p > s && p[-1] == ';'))
		p = NULL;
	uint32_t depth;
	if ((rc = parse_stack(r, p, end, &depth)))
		return rc;
	if (!count) { /* diff=both, a stack only the baseline has */
		if ((rc = make_sample(r, tid, iid, depth, 1, st->clock)) ||
		    (rc = baseline_sample(r, st->base, false)))
			return rc;
		st->total--;
		r->stats.total_samples--;
		*out = &r->sample;
		return TACH_OK;
	}
	st->pending = st->base;
	struct amount a;
	if ((rc = amount_of(r, count, &a)) ||
	    (rc = make_sample(r, tid, iid, depth, a.weight, a.next_clock)))
		return rc;
	r->sample.time_ns = a.time_ns;
	*out = &r->sample;
	return TACH_OK;
}

static void cr_free(struct tach_reader *r)
{
	struct cread *st = r->state;
	free(st->lbytes);
	free(st->labs);
	tachi_idset_free(&st->lindex);
	free(st->ahead);
	free(st->alines);
	free(st->root);
	free(st->frames);
	free(st->prev);
}

const struct tachi_reader_ops tachi_collapsed_reader_ops = {
	.state_size = sizeof(struct cread),
	.option = cr_option,
	.open = cr_open,
	.next = cr_next,
	.free = cr_free,
};
