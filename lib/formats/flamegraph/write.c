/* Flame graph writer: one SVG as Brendan Gregg's flamegraph.pl draws it, from the stacks a
 * collapsed (folded) output would have.
 *
 * Frames are labelled as the collapsed writer labels them ("tid:N" thread root frames,
 * file:func:line, bare names for frames of file "~"), so that the graph of a profile is the
 * graph flamegraph.pl draws from tach-decode's collapsed output: the same merge order
 * (flamegraph.pl sorts whole lines as strings, which we reproduce on the merged tree: a
 * frame whose name is a prefix of a sibling's may be split in two, as there), the same
 * geometry (x, y, width, height, with the same rounding), the same titles
 * ("func (N samples, P%)"; a pprof input's weights that are not samples are counted in
 * their unit, "N bytes"), header texts and image size. Colours: the palettes and the
 * --hash colours are flamegraph.pl's; differential inputs are coloured by their delta as
 * there; otherwise a colour follows from the name alone (the sum of its code points seeds
 * the same 48-bit generator perl's rand uses), never from a random source.
 *
 * Differential input: samples with TACH_STATUS_BASELINE set (the collapsed reader's
 * diff=both) count as the "before" side; widths follow the others, the delta is theirs
 * minus the baseline's. Flame charts (flamechart=yes) keep time order: one run of samples
 * per stack change, threads by id, each thread's runs by timestamp. The embedded script
 * is our own: details on hover, click to zoom, Reset Zoom, Ctrl-F/F3 search (regular
 * expressions, Ctrl-I toggles case) with the matched percentage.
 *
 * Option value=count|time|TYPE: what the widths count, the samples (default), their time
 * in µs (the sum of their time_ns; the titles then say "N us") or a pprof input's sample
 * type (in its unit).
 *
 * Not supported: flamegraph.pl's --cp palette files, --nameattr, --total, --factor,
 * --fontwidth, --notes, --encoding; the "chain" palette colours frames above a "--" frame
 * as wakers without appending flamegraph.pl's extra "--" leaf. Memory grows with distinct
 * stacks (with runs of the same stack in a flame chart), never with the sample count.
 *
 * This file holds the options, the samples' aggregation and the layout: merging the
 * lines in flamegraph.pl's order (or a flame chart's runs), each frame's place and width
 * and the minimum width; flamegraph/write_svg.c writes what it lays out (the SVG, colours,
 * titles, the script), flamegraph/write.h is what the two share.
 */
#include <locale.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/buf.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/collapse.h"
#include "formats/flamegraph/flamegraph.h"
#include "formats/flamegraph/write.h"

static const char *const pal_names[PAL_COUNT] = {
	"hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "red", "green", "blue",
	"aqua", "yellow", "purple", "orange",
};

static bool parse_real(const char *s, double max, double *out)
{
	uint64_t mant = 0;
	unsigned digits = 0, scale = 0;
	bool dot = false;
	for (; *s; s++) {
		if (*s == '.' && !dot) {
			dot = true;
			continue;
		}
		if (*s < '0' || *s > '9' || digits >= 18)
			return false;
		mant = mant * 10 + (uint64_t)(*s - '0');
		digits++;
		scale += dot;
	}
	if (!digits)
		return false;
	double p = 1;
	for (unsigned i = 0; i < scale; i++)
		p *= 10;
	/* exact integers over an exact power of ten: correctly rounded, as strtod is */
	*out = (double)mant / p;
	return *out <= max;
}

static int set_str(struct tach_writer *w, char **dst, const char *value)
{
	char *c = strdup(value);
	if (!c)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	free(*dst);
	*dst = c;
	return TACH_OK;
}

static int num_option(struct tach_writer *w, struct fopts *o, const char *key, const char *v)
{
	if (!strcmp(key, "width")) {
		if (!tachi_parse_u64(v, 1000000, &o->width) || o->width < 2 * XPAD + 1)
			return WFAIL(w, TACH_E_USAGE, "width must be 21 to 1000000 pixels, not %s", v);
	} else if (!strcmp(key, "height")) {
		if (!tachi_parse_u64(v, 10000, &o->frameheight) || o->frameheight < 2)
			return WFAIL(w, TACH_E_USAGE, "height must be 2 to 10000 pixels, not %s", v);
	} else if (!strcmp(key, "fontsize")) {
		if (!parse_real(v, 1000, &o->fontsize) || o->fontsize <= 0)
			return WFAIL(w, TACH_E_USAGE, "fontsize must be a number above 0 up to 1000, not %s", v);
	} else if (!strcmp(key, "minwidth")) {
		char t[32];
		size_t n = strlen(v);
		o->minwidth_pct = n && v[n - 1] == '%';
		if (o->minwidth_pct)
			n--;
		if (n >= sizeof(t))
			return WFAIL(w, TACH_E_USAGE, "bad minwidth %s", v);
		memcpy(t, v, n);
		t[n] = 0;
		if (!parse_real(t, 1e9, &o->minwidth))
			return WFAIL(w, TACH_E_USAGE, "minwidth must be pixels or a percentage (0.5%%), not %s", v);
		o->minwidth_set = true;
	} else {
		return 1;
	}
	return TACH_OK;
}

static int flag_option(struct tach_writer *w, struct fstate *st, const char *key, const char *v)
{
	static const char *const keys[] = { "hash", "reverse", "inverted", "flamechart", "negate" };
	bool *dst[] = { &st->o.hash, &st->o.reverse, &st->o.inverted, &st->o.flamechart, &st->o.negate };
	bool b;
	if (!strcmp(key, "thread-frames")) {
		if (!tachi_parse_bool(v, &b))
			return WFAIL(w, TACH_E_USAGE, "bad thread-frames value %s", v);
		st->agg.no_threads = !b;
		return TACH_OK;
	}
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (!strcmp(key, keys[i])) {
			if (!tachi_parse_bool(v, dst[i]))
				return WFAIL(w, TACH_E_USAGE, "bad %s value %s", key, v);
			return TACH_OK;
		}
	return 1;
}

static bool valid_bg(const char *v)
{
	static const char *const names[] = { "yellow", "blue", "green", "grey" };
	for (size_t i = 0; i < 4; i++)
		if (!strcmp(v, names[i]))
			return true;
	if (strlen(v) != 7 || v[0] != '#')
		return false;
	for (int i = 1; i < 7; i++)
		if (tachi_hexval(v[i]) < 0)
			return false;
	return true;
}

static int fw_option(struct tach_writer *w, const char *key, const char *value)
{
	struct fstate *st = w->state;
	int rc = num_option(w, &st->o, key, value);
	if (rc <= 0)
		return rc;
	if ((rc = flag_option(w, st, key, value)) <= 0)
		return rc;
	if (!strcmp(key, "colors")) {
		for (int i = 0; i < PAL_COUNT; i++)
			if (!strcmp(value, pal_names[i])) {
				st->o.palette = i;
				return TACH_OK;
			}
		return WFAIL(w, TACH_E_USAGE, "unknown palette %s", value);
	}
	if (!strcmp(key, "bgcolors")) {
		if (!valid_bg(value))
			return WFAIL(w, TACH_E_USAGE,
				     "bgcolors must be yellow, blue, green, grey or #rrggbb, not %s", value);
		return set_str(w, &st->o.bgcolors, value);
	}
	if (!strcmp(key, "value"))
		return tachi_value_option(w, &st->value, value);
	static const char *const skeys[] = { "title", "subtitle", "countname", "nametype", "fonttype" };
	char **sdst[] = { &st->o.title, &st->o.subtitle, &st->o.countname, &st->o.nametype,
			  &st->o.fonttype };
	for (size_t i = 0; i < sizeof(skeys) / sizeof(skeys[0]); i++)
		if (!strcmp(key, skeys[i]))
			return set_str(w, sdst[i], value);
	return WFAIL(w, TACH_E_USAGE, "flamegraph writer has no option %s", key);
}

static bool add_sat(uint64_t *a, uint64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = UINT64_MAX;
	return true;
}

/* A flame chart keeps runs: a sample with the stack of its thread's last run extends it. */
static int add_run(struct tach_writer *w, struct fstate *st, const struct tach_sample *s,
		   uint32_t e, bool base)
{
	uint64_t last = st->last_run;
	struct tachi_pathcache *c = NULL;
	if (!st->agg.no_threads) {
		bool created;
		c = tachi_threads_get(&st->agg.threads, s->thread_id, s->interp_id, &created);
		if (!c)
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		last = c->slot;
	}
	if (last && st->runs[last - 1].entry == e) {
		struct run *r = &st->runs[last - 1];
		add_sat(base ? &r->base : &r->count, s->weight);
		return TACH_OK;
	}
	if (st->nruns >= UINT32_MAX - 1)
		return WFAIL(w, TACH_E_LIMIT, "more than 2^32 stack changes in a flame chart");
	if (!TACHI_RESERVE(st->runs, st->runs_cap, st->nruns + 1))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	struct run *r = &st->runs[st->nruns];
	*r = (struct run){ s->timestamp_us, st->nruns, e, 0, 0 };
	*(base ? &r->base : &r->count) = s->weight;
	st->nruns++;
	if (c)
		c->slot = (uint32_t)st->nruns;
	else
		st->last_run = st->nruns;
	return TACH_OK;
}

static int fw_put_value(struct tach_writer *w, const struct tach_dict *d,
			const struct tach_sample *s);

/* Another value than the count: counted in the weight's place (a time in ns, in µs at
 * close). */
static int fw_put_ext(struct tach_writer *w, const struct tach_dict *d,
		      const struct tach_sample *s, const struct tach_sample_ext *ext)
{
	struct fstate *st = w->state;
	if (TACHI_LIKELY(st->value.kind == TACHI_VALUE_COUNT))
		return s->weight ? fw_put_value(w, d, s) : TACH_OK;
	struct tach_sample c = *s;
	c.weight = tachi_value_of(w, &st->value, s, ext);
	return fw_put_value(w, d, &c);
}

static int fw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	return fw_put_ext(w, d, s, NULL);
}

static int fw_put_value(struct tach_writer *w, const struct tach_dict *d,
			const struct tach_sample *s)
{
	struct fstate *st = w->state;
	if (TACHI_UNLIKELY(!s->depth))
		return TACH_OK;
	uint32_t e = 0;
	int rc = tachi_collapse_entry(w, &st->agg, d, s, &e);
	if (rc)
		return rc;
	bool base = s->status & TACH_STATUS_BASELINE;
	st->differential |= base;
	if (st->o.flamechart)
		return add_run(w, st, s, e, base);
	if (base) {
		if (TACHI_UNLIKELY(e >= st->nbase) &&
		    !tachi_counts_reserve(&st->base, &st->base_cap, &st->nbase, e))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		add_sat(&st->base[e], s->weight);
		return TACH_OK;
	}
	if (TACHI_UNLIKELY(e >= st->ncount) &&
	    !tachi_counts_reserve(&st->count, &st->count_cap, &st->ncount, e))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	add_sat(&st->count[e], s->weight);
	return TACH_OK;
}

static void fw_fetch(struct tach_writer *w, struct tachi_ahead_item *it, unsigned stage)
{
	struct fstate *st = w->state;
	uint32_t e1 = tachi_collapse_fetch(&st->agg, it, stage);
	if (e1 && e1 - 1 < st->ncount)
		__builtin_prefetch(&st->count[e1 - 1]);
}

/* ---- rendering ---- */

/* The label ids of entry e's stack, root first, as the graph shows it; *n its length. */
static bool entry_path(struct render *R, uint32_t e, uint32_t *n)
{
	const struct tachi_stacktab *t = &R->st->agg.trie;
	const struct tachi_pair *p = &t->pairs[e];
	uint32_t depth = p->depth;
	uint32_t th = R->st->agg.no_threads ? 0 : 1;
	if (!TACHI_RESERVE(R->path, R->path_cap, (size_t)depth + th))
		return false;
	uint32_t node = p->leaf;
	for (uint32_t k = depth; k > 0; k--) {
		R->path[th + k - 1] = R->keylab[t->nodes[node].key];
		node = t->nodes[node].parent;
	}
	if (th) {
		char buf[32];
		memcpy(buf, "tid:", 4);
		size_t l = 4 + tachi_fmt_u64(buf + 4, p->ctx);
		if (tach_dict_intern_string(&R->names, buf, l, &R->path[0]))
			return false;
	}
	*n = depth + th;
	if (R->st->o.reverse)
		for (uint32_t i = 0, j = *n; i + 1 < j; i++, j--) {
			uint32_t x = R->path[i];
			R->path[i] = R->path[j - 1];
			R->path[j - 1] = x;
		}
	return true;
}

static bool is_text(const struct render *R, uint32_t lab, const char *s)
{
	if (lab == NO_LABEL)
		return false;
	size_t n;
	const char *t = tachi_str(&R->names, lab, &n);
	return n == strlen(s) && !memcmp(t, s, n);
}

/* Closes the open frames from depth k up, as flamegraph.pl's flow() does. */
static void close_to(struct render *R, size_t k)
{
	while (R->nopen > k) {
		R->nopen--;
		const struct frame *f = &R->open[R->nopen];
		uint64_t etime = R->time;
		if ((double)(etime - f->stime) < R->minw_time)
			continue;
		if (!R->pass2) {
			if (R->nopen > R->depthmax)
				R->depthmax = (uint32_t)R->nopen;
			continue;
		}
		if (!R->failed && tachi_flamegraph_frame(R, f, (uint32_t)R->nopen, etime))
			R->failed = true;
	}
}

/* One line of the sorted (or time-ordered) input: frames it shares with the open ones
 * continue, the others close and open. */
static bool flow_line(struct render *R, const uint32_t *p, uint32_t n, uint64_t count,
		      uint64_t base)
{
	size_t same = 0;
	if (R->nopen) {
		same = 1;
		while (same < R->nopen && same - 1 < n && R->open[same].lab == p[same - 1])
			same++;
	}
	close_to(R, same);
	if (!TACHI_RESERVE(R->open, R->open_cap, (size_t)n + 1))
		return false;
	int64_t d = 0;
	if (R->st->differential) {
		uint64_t a = count > INT64_MAX ? INT64_MAX : count;
		uint64_t b = base > INT64_MAX ? INT64_MAX : base;
		d = (int64_t)a - (int64_t)b;
		int64_t ad = d < 0 ? -d : d;
		if (ad > R->maxdelta)
			R->maxdelta = ad;
	}
	for (size_t i = same; i <= n; i++) {
		struct frame *f = &R->open[i];
		f->lab = i ? p[i - 1] : NO_LABEL;
		f->stime = R->time;
		f->delta = i == n ? d : 0;
		f->waker = i > 1 && (R->open[i - 1].waker || is_text(R, R->open[i - 1].lab, "--"));
	}
	R->nopen = (size_t)n + 1;
	R->time += count;
	return true;
}

/* ---- the merged tree, in flamegraph.pl's order ---- */

struct ltree {
	struct tachi_stacktab t;
	uint64_t *cnt, *bas;
	size_t ncnt, cnt_cap, nbas, bas_cap;
	uint32_t *first;          /* items of parent p: first[p] .. first[p + 1] (root: count) */
	struct item { uint32_t node; uint32_t term; } *items;
	const struct render *R;
};

static void ltree_free(struct ltree *lt)
{
	tachi_stacktab_free(&lt->t);
	free(lt->cnt);
	free(lt->bas);
	free(lt->first);
	free(lt->items);
}

/* Every (thread, stack) line into a tree keyed by label text. */
static bool ltree_fill(struct render *R, struct ltree *lt)
{
	struct fstate *st = R->st;
	size_t n = st->ncount > st->nbase ? st->ncount : st->nbase;
	for (size_t e = 0; e < n; e++) {
		uint64_t c = e < st->ncount ? st->count[e] : 0;
		uint64_t b = e < st->nbase ? st->base[e] : 0;
		uint32_t len;
		if ((!c && !b) || !entry_path(R, (uint32_t)e, &len))
			continue;
		uint32_t node = TACHI_ROOT;
		for (uint32_t k = 0; k < len; k++)
			if (!tachi_stacktab_child(&lt->t, node, R->path[k], &node))
				return false;
		if (node == TACHI_ROOT)
			continue;
		if (!tachi_counts_reserve(&lt->cnt, &lt->cnt_cap, &lt->ncnt, node) ||
		    !tachi_counts_reserve(&lt->bas, &lt->bas_cap, &lt->nbas, node))
			return false;
		add_sat(&lt->cnt[node], c);
		add_sat(&lt->bas[node], b);
	}
	return true;
}

/* A line's text after a frame name: " COUNT" (" BEFORE AFTER" when differential) and the
 * newline perl's sort still sees, or ";" when the line goes deeper. */
static size_t item_suffix(const struct ltree *lt, const struct item *it, char *buf)
{
	if (!it->term) {
		buf[0] = ';';
		return 1;
	}
	size_t n = 0;
	uint64_t c = it->node < lt->ncnt ? lt->cnt[it->node] : 0;
	uint64_t b = it->node < lt->nbas ? lt->bas[it->node] : 0;
	buf[n++] = ' ';
	if (lt->R->st->differential) {
		n += tachi_fmt_u64(buf + n, b);
		buf[n++] = ' ';
	}
	n += tachi_fmt_u64(buf + n, c);
	buf[n++] = '\n';
	return n;
}

static int item_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct ltree *lt = ctx;
	const struct item *a = pa, *b = pb;
	size_t na, nb;
	const char *sa = tachi_str(&lt->R->names, lt->t.nodes[a->node].key, &na);
	const char *sb = tachi_str(&lt->R->names, lt->t.nodes[b->node].key, &nb);
	int c = memcmp(sa, sb, na < nb ? na : nb);
	if (c)
		return c;
	char xa[48], xb[48];
	size_t la = item_suffix(lt, a, xa), lb = item_suffix(lt, b, xb);
	/* names alike up to the shorter: compare what follows as bytes */
	size_t ta = na + la, tb = nb + lb;
	for (size_t i = na < nb ? na : nb; i < ta && i < tb; i++) {
		unsigned char x = (unsigned char)(i < na ? sa[i] : xa[i - na]);
		unsigned char y = (unsigned char)(i < nb ? sb[i] : xb[i - nb]);
		if (x != y)
			return x < y ? -1 : 1;
	}
	return ta < tb ? -1 : ta > tb;
}

/* Per parent, its children's lines ending there and going deeper, sorted. */
static bool ltree_items(struct ltree *lt)
{
	size_t n = lt->t.count;
	uint32_t *kids = calloc(n + 1, sizeof(*kids));
	uint32_t *fill = malloc((n + 1) * sizeof(*fill));
	lt->first = calloc(n + 2, sizeof(*lt->first));
	lt->items = malloc((2 * n + 1) * sizeof(*lt->items));
	bool ok = kids && fill && lt->first && lt->items;
	for (size_t i = 0; ok && i < n; i++)
		if (lt->t.nodes[i].parent != TACHI_ROOT)
			kids[lt->t.nodes[i].parent]++;
	for (size_t i = 0; ok && i < n; i++) {
		uint32_t p = lt->t.nodes[i].parent == TACHI_ROOT ? (uint32_t)n : lt->t.nodes[i].parent;
		bool term = (i < lt->ncnt && lt->cnt[i]) || (i < lt->nbas && lt->bas[i]);
		lt->first[p + 1] += (uint32_t)term + (kids[i] > 0);
	}
	for (size_t p = 0; ok && p <= n; p++) {
		lt->first[p + 1] += lt->first[p];
		fill[p] = lt->first[p];
	}
	for (size_t i = 0; ok && i < n; i++) {
		uint32_t p = lt->t.nodes[i].parent == TACHI_ROOT ? (uint32_t)n : lt->t.nodes[i].parent;
		if ((i < lt->ncnt && lt->cnt[i]) || (i < lt->nbas && lt->bas[i]))
			lt->items[fill[p]++] = (struct item){ (uint32_t)i, 1 };
		if (kids[i])
			lt->items[fill[p]++] = (struct item){ (uint32_t)i, 0 };
	}
	for (size_t p = 0; ok && p <= n; p++)
		qsort_r(lt->items + lt->first[p], lt->first[p + 1] - lt->first[p],
			sizeof(*lt->items), item_cmp, lt);
	free(kids);
	free(fill);
	return ok;
}

/* The lines in sorted order, depth first, into flow_line. */
static bool ltree_walk(struct render *R, struct ltree *lt)
{
	size_t n = lt->t.count;
	struct pos { uint32_t at, end; } *stk = NULL;
	size_t cap = 0, sp = 0;
	if (!TACHI_RESERVE(stk, cap, 1))
		return false;
	stk[sp++] = (struct pos){ lt->first[n], lt->first[n + 1] };
	bool ok = true;
	while (ok && sp) {
		struct pos *top = &stk[sp - 1];
		if (top->at == top->end) {
			sp--;
			continue;
		}
		const struct item *it = &lt->items[top->at++];
		ok = TACHI_RESERVE(R->path, R->path_cap, sp);
		if (!ok)
			break;
		R->path[sp - 1] = lt->t.nodes[it->node].key;
		uint32_t c = it->node;
		if (it->term)
			ok = flow_line(R, R->path, (uint32_t)sp, c < lt->ncnt ? lt->cnt[c] : 0,
				       c < lt->nbas ? lt->bas[c] : 0);
		else if ((ok = TACHI_RESERVE(stk, cap, sp + 1)))
			stk[sp++] = (struct pos){ lt->first[c], lt->first[c + 1] };
	}
	free(stk);
	return ok;
}

/* ---- flame charts ---- */

static int run_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct tachi_stacktab *t = ctx;
	const struct run *a = pa, *b = pb;
	uint64_t ca = t->pairs[a->entry].ctx, cb = t->pairs[b->entry].ctx;
	if (ca != cb)
		return ca < cb ? -1 : 1;
	if (a->ts != b->ts)
		return a->ts < b->ts ? -1 : 1;
	return a->seq < b->seq ? -1 : a->seq > b->seq;
}

static bool chart_walk(struct render *R)
{
	struct fstate *st = R->st;
	for (size_t i = 0; i < st->nruns; i++) {
		uint32_t len;
		if (!entry_path(R, st->runs[i].entry, &len) ||
		    !flow_line(R, R->path, len, st->runs[i].count, st->runs[i].base))
			return false;
	}
	return true;
}

/* One pass over the lines: pass 1 measures, pass 2 writes. */
static bool walk(struct render *R, struct ltree *lt)
{
	R->nopen = 0;
	R->time = 0;
	bool ok = R->st->o.flamechart ? chart_walk(R) : ltree_walk(R, lt);
	if (ok)
		close_to(R, 0);
	return ok && !R->failed;
}

/* Labels once per line key, interned by text. */
static bool make_labels(struct render *R)
{
	struct fstate *st = R->st;
	struct tachi_buf b = { 0 };
	size_t nk = st->agg.lk.nkeys;
	R->keylab = malloc((nk ? nk : 1) * sizeof(*R->keylab));
	if (!R->keylab)
		return false;
	for (size_t i = 0; i < nk; i++) {
		b.len = 0;
		if (!tachi_collapsed_label(R->w, &st->lab, &b, &st->agg.lk, &st->agg.lk.keys[i]) ||
		    tach_dict_intern_string(&R->names, b.len ? b.p : "", b.len, &R->keylab[i])) {
			free(b.p);
			return false;
		}
	}
	free(b.p);
	return true;
}

static uint64_t total_count(const struct fstate *st, bool *overflow)
{
	uint64_t t = 0;
	*overflow = false;
	if (st->o.flamechart)
		for (size_t i = 0; i < st->nruns; i++)
			*overflow |= __builtin_add_overflow(t, st->runs[i].count, &t);
	else
		for (size_t i = 0; i < st->ncount; i++)
			*overflow |= __builtin_add_overflow(t, st->count[i], &t);
	return t;
}

static int render(struct render *R, struct ltree *lt)
{
	struct fstate *st = R->st;
	bool over;
	if (!make_labels(R))
		return WFAIL(R->w, TACH_E_NOMEM, "out of memory");
	R->total = total_count(st, &over);
	if (over)
		return WFAIL(R->w, TACH_E_LIMIT, "the sample counts add up to more than 2^64");
	if (st->o.flamechart) {
		if (st->nruns)
			qsort_r(st->runs, st->nruns, sizeof(*st->runs), run_cmp, &st->agg.trie);
	}
	else if (!ltree_fill(R, lt) || !ltree_items(lt))
		return WFAIL(R->w, TACH_E_NOMEM, "out of memory");
	if (!R->total && !(st->differential && (st->nruns || lt->t.count)))
		return tachi_flamegraph_empty(R);
	/* flamegraph.pl's scale: a total of 0 (only a baseline) still draws the frames */
	uint64_t tm = R->total ? R->total : 1;
	R->wpt = (double)(st->o.width - 2 * XPAD) / (double)tm;
	R->minw_time = st->o.minwidth_pct ? (double)tm * st->o.minwidth / 100
					  : st->o.minwidth / R->wpt;
	R->maxdelta = 1;
	if (!walk(R, lt))
		return R->failed ? TACH_E_IO : WFAIL(R->w, TACH_E_NOMEM, "out of memory");
	R->pass2 = true;
	if (tachi_flamegraph_head(R) || !walk(R, lt) || tachi_flamegraph_tail(R))
		return R->failed || R->w->err.code ? tachi_writer_io(R->w)
						   : WFAIL(R->w, TACH_E_NOMEM, "out of memory");
	return TACH_OK;
}

static int fw_close(struct tach_writer *w)
{
	struct fstate *st = w->state;
	struct render R = { .w = w, .st = st };
	struct ltree lt = { .R = &R };
	if (st->value.kind == TACHI_VALUE_TIME) {
		for (size_t i = 0; i < st->ncount; i++)
			st->count[i] = tachi_value_shown(&st->value, st->count[i]);
		for (size_t i = 0; i < st->nbase; i++)
			st->base[i] = tachi_value_shown(&st->value, st->base[i]);
		for (size_t i = 0; i < st->nruns; i++) {
			st->runs[i].count = tachi_value_shown(&st->value, st->runs[i].count);
			st->runs[i].base = tachi_value_shown(&st->value, st->runs[i].base);
		}
	}
	tachi_dict_init(&R.names, true);
	/* Numbers in the SVG are written with '.', whatever locale the caller set. */
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (c == (locale_t)0)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	locale_t old = uselocale(c);
	int rc = render(&R, &lt);
	uselocale(old);
	freelocale(c);
	ltree_free(&lt);
	tachi_dict_clear(&R.names);
	free(R.keylab);
	free(R.path);
	free(R.open);
	free(R.cp);
	return rc;
}

static void fw_free(struct tach_writer *w)
{
	struct fstate *st = w->state;
	tachi_collapse_free(&st->agg);
	free(st->count);
	free(st->base);
	free(st->runs);
	free(st->o.title);
	free(st->o.subtitle);
	free(st->o.countname);
	free(st->o.nametype);
	free(st->o.fonttype);
	free(st->o.bgcolors);
	tachi_value_free(&st->value);
}

static int fw_begin(struct tach_writer *w)
{
	struct fstate *st = w->state;
	if (!st->o.width)
		st->o.width = 1200;
	if (!st->o.frameheight)
		st->o.frameheight = 16;
	if (st->o.fontsize == 0)
		st->o.fontsize = 12;
	if (!st->o.minwidth_set)
		st->o.minwidth = 0.1;
	int rc = tachi_value_begin(w, &st->value);
	if (rc)
		return rc;
	/* weights that are not samples (pprof bytes, objects) are counted in their unit, a
	 * chosen value in its own */
	const char *unit = w->meta.weight_unit;
	if (st->value.kind == TACHI_VALUE_TIME)
		unit = "us";
	else if (st->value.kind == TACHI_VALUE_TYPE)
		unit = w->meta.value_types[st->value.type].unit;
	else if (st->value.name)
		unit = "samples"; /* value time where the samples carry none: counts */
	const char *defaults[][2] = {
		{ "countname", unit ? unit : "samples" }, { "nametype", "Function:" },
		{ "fonttype", "Verdana" },
	};
	char **dst[] = { &st->o.countname, &st->o.nametype, &st->o.fonttype };
	for (size_t i = 0; i < 3; i++)
		if (!*dst[i] && set_str(w, dst[i], defaults[i][1]))
			return TACH_E_NOMEM;
	return TACH_OK;
}

const struct tachi_writer_ops tachi_flamegraph_writer_ops = {
	.state_size = sizeof(struct fstate),
	.option = fw_option,
	.begin = fw_begin,
	.put = fw_put,
	.put_ext = fw_put_ext,
	.close = fw_close,
	.free = fw_free,
	.trie_at = offsetof(struct fstate, agg.trie) + 1,
	.fetch = fw_fetch,
};
