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
 * Not supported: flamegraph.pl's --cp palette files, --nameattr, --total, --factor,
 * --fontwidth, --notes, --encoding; the "chain" palette colours frames above a "--" frame
 * as wakers without appending flamegraph.pl's extra "--" leaf. Memory grows with distinct
 * stacks (with runs of the same stack in a flame chart), never with the sample count.
 */
#include <locale.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/buf.h"
#include "base/utf8.h"
#include "base/io.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/collapse.h"

enum {
	PAL_HOT, PAL_MEM, PAL_IO, PAL_WAKEUP, PAL_CHAIN, PAL_JAVA, PAL_JS, PAL_PERL, PAL_RED,
	PAL_GREEN, PAL_BLUE, PAL_AQUA, PAL_YELLOW, PAL_PURPLE, PAL_ORANGE, PAL_COUNT
};
static const char *const pal_names[PAL_COUNT] = {
	"hot", "mem", "io", "wakeup", "chain", "java", "js", "perl", "red", "green", "blue",
	"aqua", "yellow", "purple", "orange",
};
#define XPAD 10
#define FONTWIDTH 0.59
#define NO_LABEL UINT32_MAX

struct fopts {
	char *title, *subtitle, *countname, *nametype, *fonttype, *bgcolors;
	uint64_t width, frameheight;
	double fontsize, minwidth;
	bool minwidth_pct, minwidth_set;
	int palette;
	bool hash, reverse, inverted, flamechart, negate;
};

/* A flame chart's run: consecutive samples of one thread with one stack. */
struct run {
	uint64_t ts, seq;
	uint32_t entry;
	uint64_t count, base;
};

struct fstate {
	struct fopts o;
	struct tachi_labeler lab;
	struct tachi_collapse agg;
	uint64_t *count, *base;  /* per entry: the profile's and the baseline's samples */
	size_t ncount, count_cap, nbase, base_cap;
	bool differential;
	struct run *runs;
	size_t nruns, runs_cap;
	uint64_t last_run;       /* 1 + the last run, when every thread shares the chart */
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

static int fw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
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

struct frame {
	uint32_t lab;    /* NO_LABEL: the root, "all" */
	bool waker;      /* above a "--" frame (the chain palette) */
	uint64_t stime;
	int64_t delta;
};

struct render {
	struct tach_writer *w;
	struct fstate *st;
	struct tach_dict names;  /* label texts, one id per distinct text */
	uint32_t *keylab;        /* line key -> label id */
	uint32_t *path;
	size_t path_cap;
	bool pass2;              /* pass 1 finds the depth and the largest delta */
	uint64_t total;
	double wpt, minw_time, height, ypad1, ypad2;
	uint32_t depthmax;
	int64_t maxdelta;
	struct frame *open;
	size_t nopen, open_cap;
	uint64_t time;
	uint32_t *cp;            /* code points of a name */
	size_t cp_cap;
	bool failed;
};

static int tachi_flamegraph_frame(struct render *R, const struct frame *f, uint32_t depth,
				  uint64_t etime);
static int tachi_flamegraph_head(struct render *R);
static int tachi_flamegraph_tail(struct render *R);
static int tachi_flamegraph_empty(struct render *R);

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

/* The embedded script, our own: details on hover, zoom, search. One string a line (C
 * compilers need not take longer literals). */
static const char *const script[] = {
	"\"use strict\";\n",
	"var fg = null;\n",
	"function init(evt) {\n",
	"\tvar d = document, box = d.getElementById(\"frames\");\n",
	"\tfg = {\n",
	"\t\tdetails: d.getElementById(\"details\").firstChild,\n",
	"\t\tmatched: d.getElementById(\"matched\").firstChild,\n",
	"\t\tunzoom: d.getElementById(\"unzoom\"),\n",
	"\t\tsearch: d.getElementById(\"search\"),\n",
	"\t\tic: d.getElementById(\"ignorecase\"),\n",
	"\t\tnametype: box.getAttribute(\"data-nametype\"),\n",
	"\t\tinverted: box.getAttribute(\"data-inverted\") === \"1\",\n",
	"\t\tcharw: parseFloat(box.getAttribute(\"data-fontsize\")) * 0.59,\n",
	"\t\tfull: d.documentElement.width.baseVal.value - 20,\n",
	"\t\tframes: [], term: null, icase: false\n",
	"\t};\n",
	"\tfor (var g = box.firstElementChild; g; g = g.nextElementSibling) {\n",
	"\t\tvar r = g.getElementsByTagName(\"rect\")[0];\n",
	"\t\tvar title = g.getElementsByTagName(\"title\")[0].textContent;\n",
	"\t\tvar cut = title.lastIndexOf(\" (\");\n",
	"\t\tvar f = { g: g, r: r, t: g.getElementsByTagName(\"text\")[0], title: title,\n",
	"\t\t\tname: cut < 0 ? title : title.substring(0, cut),\n",
	"\t\t\tx: parseFloat(r.getAttribute(\"x\")), w: parseFloat(r.getAttribute(\"width\")),\n",
	"\t\t\ty: parseFloat(r.getAttribute(\"y\")), fill: r.getAttribute(\"fill\") };\n",
	"\t\tg.fgFrame = f;\n",
	"\t\tfg.frames.push(f);\n",
	"\t}\n",
	"\tbox.addEventListener(\"mouseover\", function (e) {\n",
	"\t\tvar f = frame_at(e.target);\n",
	"\t\tif (f)\n",
	"\t\t\tfg.details.nodeValue = fg.nametype + \" \" + f.title;\n",
	"\t});\n",
	"\tbox.addEventListener(\"mouseout\", function (e) {\n",
	"\t\tif (frame_at(e.target))\n",
	"\t\t\tfg.details.nodeValue = \" \";\n",
	"\t});\n",
	"\tbox.addEventListener(\"click\", function (e) {\n",
	"\t\tvar f = frame_at(e.target);\n",
	"\t\tif (f)\n",
	"\t\t\tzoom(f);\n",
	"\t});\n",
	"\tfg.unzoom.addEventListener(\"click\", function () { zoom(null); });\n",
	"\tfg.search.addEventListener(\"click\", search_prompt);\n",
	"\tfg.ic.addEventListener(\"click\", toggle_case);\n",
	"\twindow.addEventListener(\"keydown\", function (e) {\n",
	"\t\tif (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {\n",
	"\t\t\te.preventDefault();\n",
	"\t\t\tsearch_prompt();\n",
	"\t\t} else if (e.ctrlKey && e.keyCode === 73) {\n",
	"\t\t\te.preventDefault();\n",
	"\t\t\ttoggle_case();\n",
	"\t\t}\n",
	"\t});\n",
	"}\n",
	"// the frame an event happened in, if any\n",
	"function frame_at(el) {\n",
	"\twhile (el && !el.fgFrame)\n",
	"\t\tel = el.parentNode;\n",
	"\treturn el ? el.fgFrame : null;\n",
	"}\n",
	"// label text cut to what fits the box, measured by the renderer\n",
	"function fit_text(f, x, w) {\n",
	"\tvar t = f.t, room = w - 3, s = f.name;\n",
	"\tt.setAttribute(\"x\", (x + 3).toFixed(2));\n",
	"\tif (room < 2 * fg.charw || false) {\n",
	"\t\tt.textContent = \"\";\n",
	"\t\treturn;\n",
	"\t}\n",
	"\tt.textContent = s;\n",
	"\tvar len = t.getComputedTextLength();\n",
	"\tif (len <= room)\n",
	"\t\treturn;\n",
	"\tfor (var n = Math.floor(s.length * room / len); n > 0; n--) {\n",
	"\t\tt.textContent = s.substring(0, n) + \"..\";\n",
	"\t\tif (t.getComputedTextLength() <= room)\n",
	"\t\t\treturn;\n",
	"\t}\n",
	"\tt.textContent = \"\";\n",
	"}\n",
	"function place(f, x, w) {\n",
	"\tf.r.setAttribute(\"x\", x.toFixed(1));\n",
	"\tf.r.setAttribute(\"width\", w.toFixed(1));\n",
	"\tfit_text(f, x, w);\n",
	"}\n",
	"// zoom to frame z (null: everything); ancestors stay, dimmed, across the full width\n",
	"function zoom(z) {\n",
	"\tvar eps = 0.0001;\n",
	"\tif (z && z.w <= 0)\n",
	"\t\treturn;\n",
	"\tfg.unzoom.classList.toggle(\"hide\", !z);\n",
	"\tfor (var i = 0; i < fg.frames.length; i++) {\n",
	"\t\tvar e = fg.frames[i], show = true, parent = false;\n",
	"\t\tif (!z) {\n",
	"\t\t\tplace(e, e.x, e.w);\n",
	"\t\t} else if (fg.inverted ? e.y < z.y : e.y > z.y) {\n",
	"\t\t\tparent = e.x <= z.x + eps && e.x + e.w + eps >= z.x + z.w;\n",
	"\t\t\tshow = parent;\n",
	"\t\t\tif (parent)\n",
	"\t\t\t\tplace(e, 10, fg.full);\n",
	"\t\t} else {\n",
	"\t\t\tshow = e.x + eps >= z.x && e.x + eps < z.x + z.w;\n",
	"\t\t\tif (show) {\n",
	"\t\t\t\tvar k = fg.full / z.w;\n",
	"\t\t\t\tplace(e, 10 + (e.x - z.x) * k, e.w * k);\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\te.g.classList.toggle(\"hide\", !show);\n",
	"\t\te.g.classList.toggle(\"parent\", parent);\n",
	"\t}\n",
	"\tif (fg.term !== null)\n",
	"\t\tsearch(fg.term);\n",
	"}\n",
	"function toggle_case() {\n",
	"\tfg.icase = !fg.icase;\n",
	"\tfg.ic.classList.toggle(\"show\", fg.icase);\n",
	"\tif (fg.term !== null)\n",
	"\t\tsearch(fg.term);\n",
	"}\n",
	"function clear_search() {\n",
	"\tfg.term = null;\n",
	"\tfor (var i = 0; i < fg.frames.length; i++)\n",
	"\t\tfg.frames[i].r.setAttribute(\"fill\", fg.frames[i].fill);\n",
	"\tfg.search.classList.remove(\"show\");\n",
	"\tfg.search.firstChild.nodeValue = \"Search\";\n",
	"\tfg.matched.nodeValue = \" \";\n",
	"}\n",
	"function search_prompt() {\n",
	"\tif (fg.term !== null) {\n",
	"\t\tclear_search();\n",
	"\t\treturn;\n",
	"\t}\n",
	"\tvar term = prompt(\"Search for a regular expression (such as ^ext4_)\" +\n",
	"\t\t(fg.icase ? \", ignoring case\" : \"\") + \"\\nCtrl-I toggles case sensitivity\", \"\");\n",
	"\tif (term)\n",
	"\t\tsearch(term);\n",
	"}\n",
	"// highlight frames whose name matches; the matched share counts nested frames once\n",
	"function search(term) {\n",
	"\tvar re;\n",
	"\ttry {\n",
	"\t\tre = new RegExp(term, fg.icase ? \"i\" : \"\");\n",
	"\t} catch (err) {\n",
	"\t\talert(\"Not a regular expression: \" + term);\n",
	"\t\treturn;\n",
	"\t}\n",
	"\tfg.term = term;\n",
	"\tvar spans = [];\n",
	"\tfor (var i = 0; i < fg.frames.length; i++) {\n",
	"\t\tvar e = fg.frames[i], hit = re.test(e.name);\n",
	"\t\te.r.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : e.fill);\n",
	"\t\tif (hit && !e.g.classList.contains(\"hide\"))\n",
	"\t\t\tspans.push([parseFloat(e.r.getAttribute(\"x\")), parseFloat(e.r.getAttribute(\"width\"))]);\n",
	"\t}\n",
	"\tspans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n",
	"\tvar sum = 0, end = -1;\n",
	"\tfor (var j = 0; j < spans.length; j++)\n",
	"\t\tif (spans[j][0] >= end - 0.0001) {\n",
	"\t\t\tsum += spans[j][1];\n",
	"\t\t\tend = spans[j][0] + spans[j][1];\n",
	"\t\t}\n",
	"\tvar pct = 100 * sum / fg.full;\n",
	"\tfg.search.classList.add(\"show\");\n",
	"\tfg.search.firstChild.nodeValue = \"Reset Search\";\n",
	"\tfg.matched.nodeValue = \"Matched: \" + (Math.abs(pct - 100) < 0.05 ? \"100\" : pct.toFixed(1)) + \"%\";\n",
	"}\n",
	NULL,
};

/* ---- SVG output ---- */

static int outf(struct render *R, const char *fmt, ...) TACHI_PRINTF(2, 3);
static int outf(struct render *R, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return tachi_out_write(&R->w->out, buf, (size_t)n);
}

/* Text as XML character data: markup characters escaped, control bytes as '?', invalid
 * UTF-8 and the non-characters XML refuses as U+FFFD. */
static int xml_put(struct render *R, const char *s, size_t n)
{
	struct tachi_out *o = &R->w->out;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;
		size_t len = 1;
		if (c == '&')
			rep = "&amp;";
		else if (c == '<')
			rep = "&lt;";
		else if (c == '>')
			rep = "&gt;";
		else if (c == '"')
			rep = "&quot;";
		else if (c < 0x20 || c == 0x7f)
			rep = "?";
		else if (c >= 0x80) {
			len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
			if (len == 1 || i + len > n || !tachi_utf8_valid((const uint8_t *)s + i, len) ||
			    (len == 3 && c == 0xEF && (unsigned char)s[i + 1] == 0xBF &&
			     (unsigned char)s[i + 2] >= 0xBE)) {
				rep = "\xEF\xBF\xBD";
				len = c >= 0xC0 && i + len <= n && len > 1 &&
				      tachi_utf8_valid((const uint8_t *)s + i, len) ? len : 1;
			}
		}
		if (rep ? tachi_out_str(o, rep) : tachi_out_write(o, s + i, len))
			return -1;
		i += len;
	}
	return 0;
}

static int xml_str(struct render *R, const char *s)
{
	return xml_put(R, s, strlen(s));
}

/* The code points of s (valid UTF-8, as labels are) into R->cp. */
static bool code_points(struct render *R, const char *s, size_t n, size_t *out)
{
	if (!TACHI_RESERVE(R->cp, R->cp_cap, n ? n : 1))
		return false;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		if (i + len > n)
			len = n - i;
		uint32_t v = len == 1 ? c : c & (0x7f >> len);
		for (size_t j = 1; j < len; j++)
			v = v << 6 | ((unsigned char)s[i + j] & 0x3f);
		R->cp[k++] = v;
		i += len;
	}
	*out = k;
	return true;
}

/* flamegraph.pl's namehash: a "module`" prefix dropped, then the first three characters
 * weighted, earlier ones more. rev reads the name backwards. */
static double namehash(const uint32_t *cp, size_t n, bool rev)
{
#define AT(i) cp[rev ? n - 1 - (i) : (i)]
	size_t start = 0;
	for (size_t i = 1; i < n; i++)
		if (AT(i) == '`') {
			start = i + 1;
			break;
		}
	double vector = 0, weight = 1, max = 1;
	unsigned mod = 10;
	for (size_t i = start; i < n; i++) {
		unsigned k = AT(i) % mod;
		vector += ((double)k / (double)(mod - 1)) * weight;
		mod++;
		max += 1 * weight;
		weight *= 0.70;
		if (mod > 12)
			break;
	}
#undef AT
	return 1 - vector / max;
}

/* Without --hash: the sum of the code points seeds perl's drand48, as newer flamegraph.pl
 * versions do for stable colours; one value serves all three channels. */
static double name_rand(const uint32_t *cp, size_t n)
{
	uint32_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += cp[i];
	uint64_t x = (0x330EULL + ((uint64_t)sum << 16)) & 0xFFFFFFFFFFFFULL;
	x = (x * 0x5DEECE66DULL + 0xB) & 0xFFFFFFFFFFFFULL;
	return (double)x / 281474976710656.0;
}

static bool ends_with(const char *s, size_t n, const char *t)
{
	size_t k = strlen(t);
	return n >= k && !memcmp(s + n - k, t, k);
}

static bool has(const char *s, size_t n, const char *t)
{
	return memmem(s, n, t, strlen(t)) != NULL;
}

/* The multi-palettes pick a flat palette by what the name looks like. */
static int pick_palette(int pal, const char *s, size_t n, bool waker)
{
	static const char *const jprefix[] = { "java/", "javax/", "jdk/", "net/", "org/",
					       "com/", "io/", "sun/" };
	if (pal == PAL_JAVA) {
		if (ends_with(s, n, "_[j]"))
			return PAL_GREEN;
		if (ends_with(s, n, "_[i]"))
			return PAL_AQUA;
		const char *p = n && s[0] == 'L' ? s + 1 : s;
		size_t pn = n - (size_t)(p - s);
		for (size_t i = 0; i < sizeof(jprefix) / sizeof(jprefix[0]); i++)
			if (pn >= strlen(jprefix[i]) && !memcmp(p, jprefix[i], strlen(jprefix[i])))
				return PAL_GREEN;
		if (has(s, n, ":::"))
			return PAL_GREEN;
		if (has(s, n, "::"))
			return PAL_YELLOW;
		return ends_with(s, n, "_[k]") ? PAL_ORANGE : PAL_RED;
	}
	if (pal == PAL_PERL) {
		if (has(s, n, "::"))
			return PAL_YELLOW;
		if (has(s, n, "Perl") || has(s, n, ".pl"))
			return PAL_GREEN;
		return ends_with(s, n, "_[k]") ? PAL_ORANGE : PAL_RED;
	}
	if (pal == PAL_JS) {
		const char *slash = memchr(s, '/', n);
		if (ends_with(s, n, "_[j]"))
			return slash ? PAL_GREEN : PAL_AQUA;
		if (has(s, n, "::"))
			return PAL_YELLOW;
		if (slash && has(slash, n - (size_t)(slash - s), ".js"))
			return PAL_GREEN;
		if (memchr(s, ':', n))
			return PAL_AQUA;
		if (n == 1 && s[0] == ' ')
			return PAL_GREEN;
		return has(s, n, "_[k]") ? PAL_ORANGE : PAL_RED;
	}
	if (pal == PAL_WAKEUP)
		return PAL_AQUA;
	if (pal == PAL_CHAIN)
		return waker || has(s, n, "_[w]") ? PAL_AQUA : PAL_BLUE;
	return pal;
}

static void palette_rgb(int pal, double v1, double v2, double v3, int rgb[3])
{
	int r = 0, g = 0, b = 0;
	switch (pal) {
	case PAL_HOT: r = 205 + (int)(50 * v3); g = (int)(230 * v1); b = (int)(55 * v2); break;
	case PAL_MEM: g = 190 + (int)(50 * v2); b = (int)(210 * v1); break;
	case PAL_IO: r = g = 80 + (int)(60 * v1); b = 190 + (int)(55 * v2); break;
	case PAL_RED: r = 200 + (int)(55 * v1); g = b = 50 + (int)(80 * v1); break;
	case PAL_GREEN: g = 200 + (int)(55 * v1); r = b = 50 + (int)(60 * v1); break;
	case PAL_BLUE: b = 205 + (int)(50 * v1); r = g = 80 + (int)(60 * v1); break;
	case PAL_YELLOW: r = g = 175 + (int)(55 * v1); b = 50 + (int)(20 * v1); break;
	case PAL_PURPLE: r = b = 190 + (int)(65 * v1); g = 80 + (int)(60 * v1); break;
	case PAL_AQUA: r = 50 + (int)(60 * v1); g = b = 165 + (int)(55 * v1); break;
	case PAL_ORANGE: r = 190 + (int)(65 * v1); g = 90 + (int)(65 * v1); break;
	}
	rgb[0] = r;
	rgb[1] = g;
	rgb[2] = b;
}

/* A frame's fill: grey separators, the delta's red or blue, else the palette's. */
static bool frame_rgb(struct render *R, const struct frame *f, const char *s, size_t n,
		      int rgb[3])
{
	const struct fopts *o = &R->st->o;
	if ((n == 2 && !memcmp(s, "--", 2)) || (n == 1 && s[0] == '-')) {
		rgb[0] = rgb[1] = rgb[2] = n == 2 ? 160 : 200;
		return true;
	}
	if (R->st->differential) {
		int64_t v = o->negate ? -f->delta : f->delta, max = R->maxdelta;
		rgb[0] = rgb[1] = rgb[2] = 255;
		if (v > 0)
			rgb[1] = rgb[2] = (int)(210.0 * (double)(max - v) / (double)max);
		else if (v < 0)
			rgb[0] = rgb[1] = (int)(210.0 * (double)(max + v) / (double)max);
		return true;
	}
	size_t k;
	if (!code_points(R, s, n, &k))
		return false;
	double v1, v2, v3;
	if (o->hash) {
		v1 = namehash(R->cp, k, false);
		v2 = v3 = namehash(R->cp, k, true);
	} else {
		v1 = v2 = v3 = name_rand(R->cp, k);
	}
	palette_rgb(pick_palette(o->palette, s, n, f->waker), v1, v2, v3, rgb);
	return true;
}

/* "1234567" as "1,234,567". */
static size_t commas(char *out, uint64_t v)
{
	char d[24];
	size_t n = tachi_fmt_u64(d, v), k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = d[i];
	}
	out[k] = 0;
	return k;
}

static double pct_of(uint64_t part, uint64_t total)
{
	double t = (double)(total ? total : 1);
	if (part <= UINT64_MAX / 100)
		return (double)(part * 100) / t;
	return 100.0 * (double)part / t;
}

/* <title>: "name (N samples, P%)", with "; D%" when differential. */
static int write_title(struct render *R, const struct frame *f, const char *s, size_t n,
		       uint64_t samples)
{
	const struct fopts *o = &R->st->o;
	char num[40];
	commas(num, samples);
	if (f->lab == NO_LABEL)
		return outf(R, "<title>all (%s ", num) || xml_str(R, o->countname) ||
		       outf(R, ", 100%%)</title>");
	if (outf(R, "<title>") || xml_put(R, s, n) || outf(R, " (%s ", num) ||
	    xml_str(R, o->countname) || outf(R, ", %.2f%%", pct_of(samples, R->total)))
		return -1;
	if (R->st->differential) {
		int64_t d = o->negate ? -f->delta : f->delta;
		double p = 100.0 * (double)d / (double)(R->total ? R->total : 1);
		if (outf(R, "; %s%.2f%%", d > 0 ? "+" : "", p))
			return -1;
	}
	return outf(R, ")</title>");
}

/* The label text shown in the frame: as many characters as fit, ".." when cut. */
static int write_text(struct render *R, const char *s, size_t n, double w)
{
	double fit = w / (R->st->o.fontsize * FONTWIDTH);
	if (!(fit >= 3) || !n)
		return 0;
	/* a tiny font: every name fits (and the count stays an integer) */
	size_t chars = fit > (double)n ? n + 1 : (size_t)fit;
	size_t k = 0, cut = 0, keep2 = 0;
	for (size_t i = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xC0) == 0x80)
			continue;
		if (k == chars - 2)
			keep2 = i;
		if (k == chars) {
			cut = i;
			break;
		}
		k++;
	}
	if (!cut)
		return xml_put(R, s, n);
	return xml_put(R, s, keep2) || tachi_out_str(&R->w->out, "..");
}

static int tachi_flamegraph_frame(struct render *R, const struct frame *f, uint32_t depth,
				  uint64_t etime)
{
	const struct fopts *o = &R->st->o;
	double fh = (double)o->frameheight, y1, y2;
	if (f->lab == NO_LABEL)
		etime = R->total;
	double x1 = XPAD + (double)f->stime * R->wpt, x2 = XPAD + (double)etime * R->wpt;
	if (!o->inverted) {
		y1 = R->height - R->ypad2 - (depth + 1) * fh + 1;
		y2 = R->height - R->ypad2 - depth * fh;
	} else {
		y1 = R->ypad1 + depth * fh;
		y2 = R->ypad1 + (depth + 1) * fh - 1;
	}
	size_t n = 0;
	const char *s = f->lab == NO_LABEL ? "" : tachi_str(&R->names, f->lab, &n);
	int rgb[3];
	if (!frame_rgb(R, f, s, n, rgb))
		return -1;
	/* flamegraph.pl's annotations (_[k] kernel, _[j] JIT, ...) choose colours only */
	size_t shown = n;
	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    memchr("kwij", s[n - 2], 4))
		shown -= 4;
	/* Widths from the rounded ends, as flamegraph.pl computes them. */
	char sx1[48], sx2[48];
	snprintf(sx1, sizeof(sx1), "%.1f", x1);
	snprintf(sx2, sizeof(sx2), "%.1f", x2);
	double wr = strtod(sx2, NULL) - strtod(sx1, NULL);
	return outf(R, "<g>\n") || write_title(R, f, s, shown, etime - f->stime) ||
	       outf(R, "<rect x=\"%s\" y=\"%.15g\" width=\"%.1f\" height=\"%.1f\" "
		       "fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>\n<text x=\"%.2f\" y=\"%.15g\">",
		    sx1, y1, wr, y2 - y1, rgb[0], rgb[1], rgb[2], x1 + 3, 3 + (y1 + y2) / 2) ||
	       write_text(R, s, shown, x2 - x1) || outf(R, "</text>\n</g>\n");
}

static const char *bg_color(const struct fopts *o, int which)
{
	static const char *const grads[][3] = {
		{ "yellow", "#eeeeee", "#eeeeb0" }, { "blue", "#eeeeee", "#e0e0ff" },
		{ "green", "#eef2ee", "#e0ffe0" }, { "grey", "#f8f8f8", "#e8e8e8" },
	};
	const char *bg = o->bgcolors;
	if (!bg) {
		int p = o->palette;
		bg = p == PAL_MEM ? "green"
		   : p == PAL_IO || p == PAL_WAKEUP || p == PAL_CHAIN ? "blue"
		   : p >= PAL_RED ? "grey" : "yellow";
	}
	if (bg[0] == '#')
		return bg;
	for (size_t i = 0; i < 4; i++)
		if (!strcmp(bg, grads[i][0]))
			return grads[i][1 + which];
	return grads[0][1 + which];
}

static int write_style(struct render *R)
{
	const struct fopts *o = &R->st->o;
	if (outf(R, "<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
		    "\t\t<stop stop-color=\"%s\" offset=\"5%%\"/>\n\t\t<stop stop-color=\"%s\" "
		    "offset=\"95%%\"/>\n\t</linearGradient>\n</defs>\n<style type=\"text/css\">\n"
		    "\ttext { font-family:", bg_color(o, 0), bg_color(o, 1)) ||
	    xml_str(R, o->fonttype) ||
	    outf(R, "; font-size:%.15gpx; fill:rgb(0,0,0); }\n"
		    "\t#title { text-anchor:middle; font-size:%.15gpx; }\n"
		    "\t#subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
		    "\t#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
		    "\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
		    "\t#unzoom { cursor:pointer; }\n", o->fontsize, o->fontsize + 5) ||
	    outf(R, "\t#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
		    "\t.hide { display:none; }\n\t.parent { opacity:0.5; }\n</style>\n"
		    "<script type=\"text/ecmascript\"><![CDATA[\n"))
		return -1;
	for (size_t i = 0; script[i]; i++)
		if (tachi_out_str(&R->w->out, script[i]))
			return -1;
	return outf(R, "]]></script>\n");
}

static int write_texts(struct render *R)
{
	const struct fopts *o = &R->st->o;
	double top = o->fontsize * 2, bottom = R->height - R->ypad2 / 2;
	double mid = (double)(o->width / 2), right = (double)o->width - XPAD - 100;
	const char *title = o->title ? o->title
			  : o->flamechart ? "Flame Chart" : o->inverted ? "Icicle Graph" : "Flame Graph";
	if (outf(R, "<rect x=\"0.0\" y=\"0\" width=\"%.1f\" height=\"%.1f\" fill=\"url(#background)\"/>\n"
		    "<text id=\"title\" x=\"%.2f\" y=\"%.15g\">", (double)o->width, R->height, mid, top) ||
	    xml_str(R, title) || outf(R, "</text>\n"))
		return -1;
	if (o->subtitle && o->subtitle[0] &&
	    (outf(R, "<text id=\"subtitle\" x=\"%.2f\" y=\"%.15g\">", mid, o->fontsize * 4) ||
	     xml_str(R, o->subtitle) || outf(R, "</text>\n")))
		return -1;
	return outf(R, "<text id=\"details\" x=\"%.2f\" y=\"%.15g\"> </text>\n"
		       "<text id=\"unzoom\" x=\"%.2f\" y=\"%.15g\" class=\"hide\">Reset Zoom</text>\n",
		    (double)XPAD, bottom, (double)XPAD, top) ||
	       outf(R, "<text id=\"search\" x=\"%.2f\" y=\"%.15g\">Search</text>\n"
		       "<text id=\"ignorecase\" x=\"%.2f\" y=\"%.15g\">ic</text>\n"
		       "<text id=\"matched\" x=\"%.2f\" y=\"%.15g\"> </text>\n",
		    right, top, (double)o->width - XPAD - 16, top, right, bottom);
}

static int svg_open(struct render *R, double height)
{
	uint64_t w = R->st->o.width;
	return outf(R, "<?xml version=\"1.0\" standalone=\"no\"?>\n<!DOCTYPE svg PUBLIC "
		       "\"-//W3C//DTD SVG 1.1//EN\" "
		       "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n") ||
	       outf(R, "<svg version=\"1.1\" width=\"%llu\" height=\"%.15g\" onload=\"init(evt)\" "
		       "viewBox=\"0 0 %llu %.15g\" xmlns=\"http://www.w3.org/2000/svg\" "
		       "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		    (unsigned long long)w, height, (unsigned long long)w, height) ||
	       outf(R, "<!-- Flame graph by tachfmt, drawn as flamegraph.pl "
		       "(https://github.com/brendangregg/FlameGraph) draws it. -->\n");
}

static int tachi_flamegraph_head(struct render *R)
{
	const struct fopts *o = &R->st->o;
	R->ypad1 = o->fontsize * 3;
	R->ypad2 = o->fontsize * 2 + 10;
	R->height = (R->depthmax + 1) * (double)o->frameheight + R->ypad1 + R->ypad2;
	if (o->subtitle && o->subtitle[0])
		R->height += o->fontsize * 2;
	if (svg_open(R, R->height) || write_style(R) || write_texts(R) ||
	    outf(R, "<g id=\"frames\" data-inverted=\"%d\" data-fontsize=\"%.15g\" data-nametype=\"",
		 o->inverted, o->fontsize) ||
	    xml_str(R, o->nametype) || outf(R, "\">\n"))
		return R->failed = true, -1;
	return 0;
}

static int tachi_flamegraph_tail(struct render *R)
{
	if (outf(R, "</g>\n</svg>\n"))
		return R->failed = true, -1;
	return 0;
}

/* No samples: an image that says so, as flamegraph.pl draws one. */
static int tachi_flamegraph_empty(struct render *R)
{
	const struct fopts *o = &R->st->o;
	tachi_warn(&R->w->warn, TACH_POS_NONE, 0, "no stack counts found: the graph is empty");
	if (svg_open(R, o->fontsize * 5) ||
	    outf(R, "<text x=\"%.2f\" y=\"%.15g\" text-anchor=\"middle\" font-size=\"%.15g\">"
		    "ERROR: No stack counts found</text>\n</svg>\n",
		 (double)(o->width / 2), o->fontsize * 2, o->fontsize))
		return tachi_writer_io(R->w);
	return TACH_OK;
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
	/* weights that are not samples (pprof bytes, objects) are counted in their unit */
	const char *unit = w->meta.weight_unit;
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

static const struct tachi_writer_ops writer_ops = {
	.state_size = sizeof(struct fstate),
	.option = fw_option,
	.begin = fw_begin,
	.put = fw_put,
	.close = fw_close,
	.free = fw_free,
	.trie_at = offsetof(struct fstate, agg.trie) + 1,
	.fetch = fw_fetch,
};

const struct tachi_format tachi_fmt_flamegraph = {
	.name = "flamegraph",
	.writer = &writer_ops,
};
