/* Collapsed ("folded") stack writer: one line per distinct (thread, stack), root first,
 * "frame;frame;... COUNT", for flamegraph.pl, inferno and speedscope.
 *
 * By default the output is what CPython 3.15's CollapsedStackCollector writes: a "tid:N"
 * root frame, frames as basename(file):func:line (line 0 without a location; frames with
 * file "~" and line 0 as the bare function name), empty stacks skipped, and lines sorted by
 * descending count and then by text. Frames are merged on (file, func, line) as CPython
 * does, so frames that differ only in columns or opcode add up.
 *
 * Options: labels=cpython|pyspy ("func (file:line)")|perf (stackcollapse-perf.pl's lines, see
 * collapsed/write_perf.c, with perf-root, annotate and addrs)|async-profiler (jfrconv's
 * lines, see collapsed/write_async.c, with ap-threads, ap-lines, ap-simple and ap-dot),
 * full-paths, thread-frames=no, run-ids=no (no process id on a perf "[comm]" root, an
 * unsymbolized address as "0x...": what tach-diff compares between two runs; stacks that
 * then read the same print as separate lines, which tach-diff's join adds up),
 * value=count|time|TYPE: what a line's number is, the samples (default), their time in µs
 * (the sum of their time_ns, rounded per line), or a pprof input's sample type.
 * Output is valid UTF-8 with LF line ends; a ';' inside a label becomes ':' and control
 * bytes become '?', each with one warning, so that every consumer splits lines the same way.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/buf.h"
#include "base/utf8.h"
#include "base/io.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/stackorder.h"
#include "model/linekeys.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/collapse.h"
#include "formats/collapsed/collapsed.h"
#include "formats/collapsed/write_perf.h"
#include "formats/collapsed/write_async.h"

struct collapsed_wstate {
	struct tachi_labeler lab;
	struct tachi_perf_labels perf;
	struct tachi_async_labels async;
	struct tachi_stackcount sc;
	bool no_threads; /* option thread-frames=no */
	struct tachi_valuesel value;
};

/* Stacks are kept per (thread, stack) when the lines show threads. perf labels show one
 * only with perf-root tid: a capture of a build, a new thread a compiler, keeps one entry
 * per stack, not one per thread and stack. */
static void set_threads(struct collapsed_wstate *st)
{
	st->sc.agg.no_threads = st->no_threads || (st->perf.on && st->perf.root != PERF_ROOT_TID) ||
				(st->async.on && !st->async.threads);
}

static int cw_option_of(struct tach_writer *w, const char *key, const char *value);

static int cw_option(struct tach_writer *w, const char *key, const char *value)
{
	int rc = cw_option_of(w, key, value);
	set_threads(w->state);
	return rc;
}

static int cw_option_of(struct tach_writer *w, const char *key, const char *value)
{
	struct collapsed_wstate *st = w->state;
	bool b;
	if (!strcmp(key, "labels")) {
		st->perf.on = !strcmp(value, "perf");
		st->async.on = !strcmp(value, "async-profiler");
		if (!strcmp(value, "cpython"))
			st->lab.pyspy = false;
		else if (!strcmp(value, "pyspy"))
			st->lab.pyspy = true;
		else if (!st->perf.on && !st->async.on)
			return WFAIL(w, TACH_E_USAGE, "labels must be cpython, pyspy, perf or "
				     "async-profiler, not %s", value);
		return TACH_OK;
	}
	int rc = tachi_perf_labels_option(w, &st->perf, key, value);
	if (rc != 1 || (rc = tachi_async_labels_option(w, &st->async, key, value)) != 1)
		return rc;
	if (!strcmp(key, "full-paths")) {
		if (!tachi_parse_bool(value, &st->lab.full_paths))
			return WFAIL(w, TACH_E_USAGE, "bad full-paths value %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "run-ids")) {
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad run-ids value %s", value);
		st->lab.no_run_ids = !b;
		return TACH_OK;
	}
	if (!strcmp(key, "value"))
		return tachi_value_option(w, &st->value, value);
	if (!strcmp(key, "thread-frames")) {
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad thread-frames value %s", value);
		st->no_threads = !b;
		return TACH_OK;
	}
	return WFAIL(w, TACH_E_USAGE, "collapsed writer has no option %s", key);
}

static int cw_begin(struct tach_writer *w)
{
	struct collapsed_wstate *st = w->state;
	return tachi_value_begin(w, &st->value);
}

/* Another value than the count: the stack counts it in the weight's place (a time in ns,
 * rounded to µs at close). */
static int cw_put_ext(struct tach_writer *w, const struct tach_dict *d,
		      const struct tach_sample *s, const struct tach_sample_ext *ext)
{
	struct collapsed_wstate *st = w->state;
	if (TACHI_LIKELY(st->value.kind == TACHI_VALUE_COUNT))
		return s->weight ? tachi_stackcount_put(w, &st->sc, d, s) : TACH_OK;
	struct tach_sample c = *s;
	c.weight = tachi_value_of(w, &st->value, s, ext);
	return tachi_stackcount_put(w, &st->sc, d, &c);
}

static int cw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	return cw_put_ext(w, d, s, NULL);
}

static void cw_fetch(struct tach_writer *w, struct tachi_ahead_item *it, unsigned stage)
{
	struct collapsed_wstate *st = w->state;
	tachi_stackcount_fetch(&st->sc, it, stage);
}

/* A line to print: its count, then its text's place as two ranks (its thread's "tid:N;"
 * among the threads', its stack's among the stacks'), so sorting never compares text. */
struct line {
	uint64_t n;
	uint32_t trank, ord;
	uint32_t pair; /* lines that print alike stay in pair order: the sort is stable */
};

/* The digit of pass k (16 bits): text rank, then thread rank, then the count descending,
 * least significant first, so that stable passes leave (count desc, thread, text). */
static uint32_t line_digit(const struct line *l, unsigned k)
{
	if (k < 2)
		return l->ord >> (16 * k) & 0xffff;
	if (k < 4)
		return l->trank >> (16 * (k - 2)) & 0xffff;
	return (uint32_t)(~l->n >> (16 * (k - 4))) & 0xffff;
}

/* An LSD radix sort: a comparison sort of a million lines was most of the output stage.
 * Passes whose digit is the same for every line (high bits of small counts, few threads)
 * cost one counting loop and move nothing. */
static bool sort_lines(struct line *v, size_t n)
{
	struct line *tmp = malloc((n + 1) * sizeof(*tmp));
	uint32_t *count = malloc(65536 * sizeof(*count));
	if (!tmp || !count) {
		free(tmp);
		free(count);
		return false;
	}
	for (unsigned k = 0; k < 8; k++) {
		memset(count, 0, 65536 * sizeof(*count));
		for (size_t i = 0; i < n; i++)
			count[line_digit(&v[i], k)]++;
		if (n && count[line_digit(&v[0], k)] == n)
			continue;
		uint32_t sum = 0;
		for (size_t d = 0; d < 65536; d++) {
			uint32_t c = count[d];
			count[d] = sum;
			sum += c;
		}
		for (size_t i = 0; i < n; i++)
			tmp[count[line_digit(&v[i], k)]++] = v[i];
		memcpy(v, tmp, n * sizeof(*v));
	}
	free(tmp);
	free(count);
	return true;
}

struct tid_rank {
	uint64_t tid;
	uint32_t rank;
};

static int tid_text_cmp(const void *pa, const void *pb)
{
	const struct tid_rank *a = pa, *b = pb;
	char x[24], y[24];
	size_t lx = tachi_fmt_u64(x, a->tid), ly = tachi_fmt_u64(y, b->tid);
	/* "tid:N;": at the first difference, or where one number ends and its ';' meets a
	 * digit of the other */
	x[lx] = ';';
	y[ly] = ';';
	size_t m = (lx < ly ? lx : ly) + 1;
	return memcmp(x, y, m);
}

static int tid_cmp(const void *pa, const void *pb)
{
	const struct tid_rank *a = pa, *b = pb;
	return (a->tid > b->tid) - (a->tid < b->tid);
}

/* The threads' ranks in text order, sorted by id for lookup. */
static struct tid_rank *thread_ranks(const struct collapsed_wstate *st, size_t *n)
{
	struct tid_rank *v = malloc((st->sc.agg.threads.count + 1) * sizeof(*v));
	if (!v)
		return NULL;
	for (size_t i = 0; i < st->sc.agg.threads.count; i++)
		v[i] = (struct tid_rank){ st->sc.agg.no_threads ? 0 : st->sc.agg.threads.v[i].tid, 0 };
	qsort(v, st->sc.agg.threads.count, sizeof(*v), tid_text_cmp);
	size_t k = 0;
	for (size_t i = 0; i < st->sc.agg.threads.count; i++)
		if (!k || v[k - 1].tid != v[i].tid) {
			v[k] = (struct tid_rank){ v[i].tid, (uint32_t)k };
			k++;
		}
	qsort(v, k, sizeof(*v), tid_cmp);
	*n = k;
	return v;
}

static uint32_t thread_rank(const struct tid_rank *v, size_t n, uint64_t tid)
{
	struct tid_rank key = { tid, 0 };
	const struct tid_rank *e = bsearch(&key, v, n, sizeof(*v), tid_cmp);
	return e ? e->rank : 0;
}

/* The lines with a count, ranked. */
static struct line *rank_lines(struct collapsed_wstate *st, const uint32_t *ord, size_t *nlines)
{
	size_t nt;
	struct tid_rank *tr = thread_ranks(st, &nt);
	struct line *lines = malloc((st->sc.ncounts + 1) * sizeof(*lines));
	if (!tr || !lines) {
		free(tr);
		free(lines);
		return NULL;
	}
	size_t k = 0;
	const struct tachi_pair *pairs = st->sc.agg.trie.pairs;
	for (size_t i = 0; i < st->sc.ncounts; i++) {
		const struct tachi_pair *e = &pairs[i];
		/* a leaf's rank is a cache miss on a large trie: fetch it some pairs ahead */
		if (i + TACHI_FETCH_AHEAD < st->sc.ncounts)
			__builtin_prefetch(&ord[pairs[i + TACHI_FETCH_AHEAD].leaf]);
		if (!st->sc.counts[i] || e->leaf == TACHI_ROOT)
			continue;
		lines[k++] = (struct line){ st->sc.counts[i], thread_rank(tr, nt, e->ctx), ord[e->leaf],
					    (uint32_t)i };
	}
	free(tr);
	if (k > UINT32_MAX || !sort_lines(lines, k)) {
		free(lines);
		return NULL;
	}
	*nlines = k;
	return lines;
}

/* The line being written: its text, and for each depth the node there and where its
 * label ends. Lines in text order share long prefixes (deep recursions above all), so the
 * next line keeps what it shares with this one and climbs the trie only to there. */
struct linebuf {
	struct tachi_buf text;
	uint32_t *node;
	size_t *end;
	size_t cap;
	uint32_t depth;
	uint64_t ctx;
	bool started;
};

static bool linebuf_set(struct tach_writer *w, struct linebuf *lb, const struct tachi_buf *labels,
			const size_t *loff, const struct tachi_pair *e)
{
	struct collapsed_wstate *st = w->state;
	const struct tachi_stacktab *t = &st->sc.agg.trie;
	uint32_t depth = e->depth, keep = 0;
	if (depth > lb->cap) {
		size_t cap = lb->cap;
		if (!TACHI_RESERVE(lb->node, cap, depth))
			return false;
		cap = lb->cap;
		if (!TACHI_RESERVE(lb->end, cap, depth))
			return false;
		lb->cap = cap;
	}
	/* climb from the leaf to the deepest node this line shares with the last one */
	uint32_t n = e->leaf, d = depth;
	bool same_root = lb->started && lb->ctx == e->ctx;
	for (; d > 0; d--, n = t->nodes[n].parent) {
		if (same_root && d <= lb->depth && lb->node[d - 1] == n)
			break;
		lb->node[d - 1] = n;
	}
	keep = d;
	lb->text.len = keep ? lb->end[keep - 1] : 0;
	if (!keep && !st->sc.agg.no_threads) {
		char b[24];
		if (!tachi_buf_add(&lb->text, "tid:", 4) || !tachi_buf_add(&lb->text, b, tachi_fmt_u64(b, e->ctx)))
			return false;
	}
	for (uint32_t k = keep; k < depth; k++) {
		uint32_t key = t->nodes[lb->node[k]].key;
		if ((k || !st->sc.agg.no_threads) && !tachi_buf_add(&lb->text, ";", 1))
			return false;
		if (!tachi_buf_add(&lb->text, labels->p + loff[key], loff[key + 1] - loff[key]))
			return false;
		lb->end[k] = lb->text.len;
	}
	lb->depth = depth;
	lb->ctx = e->ctx;
	lb->started = true;
	return true;
}

static int put_line(struct tach_writer *w, const struct linebuf *lb, uint64_t n)
{
	struct tachi_out *o = &w->out;
	if (tachi_out_write(o, lb->text.p, lb->text.len) || tachi_out_byte(o, ' ') ||
	    tachi_out_u64(o, n) || tachi_out_byte(o, '\n'))
		return tachi_writer_io(w);
	return TACH_OK;
}

/* Labels once per key; lines ordered by count, then by text through the trie's order of
 * texts; each line's text made only as it is written. One line per (thread, leaf): stacks
 * whose frames differ only where the labels do not look (columns, opcode) already share a
 * leaf, as CPython's collector keys on (file, line, func). */
static int cw_close(struct tach_writer *w)
{
	struct collapsed_wstate *st = w->state;
	if (!st->sc.ncounts)
		return TACH_OK;
	for (size_t i = 0; st->value.kind == TACHI_VALUE_TIME && i < st->sc.ncounts; i++)
		st->sc.counts[i] = tachi_value_shown(&st->value, st->sc.counts[i]);
	if (st->perf.on || st->async.on) {
		/* the lines need the trie's nodes and pairs only: the lookups go first, as
		 * the lines' texts take their place (peak memory) */
		tachi_threads_free(&st->sc.agg.threads);
		tachi_stacktab_drop_lookups(&st->sc.agg.trie);
		return st->perf.on ? tachi_perf_labels_write(w, &st->perf, &st->sc) :
		       tachi_async_labels_write(w, &st->async, &st->sc);
	}
	struct tachi_buf labels = { 0 };
	size_t nkeys = st->sc.agg.lk.nkeys, nlines = 0;
	size_t *loff = malloc((nkeys + 1) * sizeof(*loff));
	uint32_t *ord = NULL;
	struct line *lines = NULL;
	struct linebuf lb = { 0 };
	int rc = TACH_OK;
	/* the labels buffer exists even when every label is empty: no arithmetic on NULL */
	if (!loff || !TACHI_RESERVE(labels.p, labels.cap, 1))
		goto nomem;
	for (size_t i = 0; i < nkeys; i++) {
		loff[i] = labels.len;
		if (!tachi_collapsed_label(w, &st->lab, &labels, &st->sc.agg.lk, &st->sc.agg.lk.keys[i]))
			goto nomem;
	}
	loff[nkeys] = labels.len;
	if (!tachi_stack_order(&st->sc.agg.trie, labels.p, loff, nkeys, ';', &ord) ||
	    !(lines = rank_lines(st, ord, &nlines)))
		goto nomem;
	free(ord);
	ord = NULL;
	const struct tachi_pair *pairs = st->sc.agg.trie.pairs;
	for (size_t i = 0; i < nlines && !rc; i++) {
		/* Lines in this order visit pairs and leaves at random: fetch a line's pair
		 * twice as far ahead as its leaf, which is read through the pair. */
		const size_t ahead = TACHI_FETCH_AHEAD;
		if (i + 2 * ahead < nlines)
			__builtin_prefetch(&pairs[lines[i + 2 * ahead].pair]);
		if (i + ahead < nlines)
			__builtin_prefetch(&st->sc.agg.trie.nodes[pairs[lines[i + ahead].pair].leaf]);
		if (!linebuf_set(w, &lb, &labels, loff, &pairs[lines[i].pair]))
			goto nomem;
		rc = put_line(w, &lb, lines[i].n);
	}
	goto out;
nomem:
	rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
out:
	free(labels.p);
	free(loff);
	free(ord);
	free(lines);
	free(lb.text.p);
	free(lb.node);
	free(lb.end);
	return rc;
}

static void cw_free(struct tach_writer *w)
{
	struct collapsed_wstate *st = w->state;
	tachi_stackcount_free(&st->sc);
	tachi_value_free(&st->value);
}

const struct tachi_writer_ops tachi_collapsed_writer_ops = {
	.state_size = sizeof(struct collapsed_wstate),
	.option = cw_option,
	.begin = cw_begin,
	.put = cw_put,
	.put_ext = cw_put_ext,
	.close = cw_close,
	.free = cw_free,
	.trie_at = offsetof(struct collapsed_wstate, sc.agg.trie) + 1,
	.fetch = cw_fetch,
};
