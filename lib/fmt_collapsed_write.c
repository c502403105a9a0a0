/* Collapsed ("folded") stack writer: one line per distinct (thread, stack), root first,
 * "frame;frame;... COUNT", for flamegraph.pl, inferno and speedscope.
 *
 * By default the output is what CPython 3.15's CollapsedStackCollector writes: a "tid:N"
 * root frame, frames as basename(file):func:line (line 0 without a location; frames with
 * file "~" and line 0 as the bare function name), empty stacks skipped, and lines sorted by
 * descending count and then by text. Frames are merged on (file, func, line) as CPython
 * does, so frames that differ only in columns or opcode add up.
 *
 * Options: labels=cpython|pyspy ("func (file:line)"), full-paths, thread-frames=no.
 * Output is valid UTF-8 with LF line ends; a ';' inside a label becomes ':' and control
 * bytes become '?', each with one warning, so that every consumer splits lines the same way.
 */
#include <stdlib.h>

#include "internal.h"


enum { LABEL_CPYTHON, LABEL_PYSPY };

struct cstate {
	int labels;
	bool full_paths;
	bool no_threads;
	struct tachi_stackcount sc; /* per (thread, stack) */
	bool warned_semi, warned_ctrl;
};

static int cw_option(struct tach_writer *w, const char *key, const char *value)
{
	struct cstate *st = w->state;
	bool b;
	if (!strcmp(key, "labels")) {
		if (!strcmp(value, "cpython"))
			st->labels = LABEL_CPYTHON;
		else if (!strcmp(value, "pyspy"))
			st->labels = LABEL_PYSPY;
		else
			return WFAIL(w, TACH_E_USAGE, "labels must be cpython or pyspy, not %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "full-paths")) {
		if (!tachi_parse_bool(value, &st->full_paths))
			return WFAIL(w, TACH_E_USAGE, "bad full-paths value %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "thread-frames")) {
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad thread-frames value %s", value);
		st->no_threads = !b;
		return TACH_OK;
	}
	return WFAIL(w, TACH_E_USAGE, "collapsed writer has no option %s", key);
}

static int cw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct cstate *st = w->state;
	/* Keyed by thread id as CPython's collector is (interpreters share a line). */
	return tachi_stackcount_put(w, &st->sc, d, s, st->no_threads ? 0 : s->thread_id);
}

/* ---- output ---- */

struct buf {
	char *p;
	size_t len, cap;
};

static bool buf_add(struct buf *b, const void *p, size_t n)
{
	/* An empty label may come with no buffer at all: memcpy must not see NULL. */
	if (n == 0)
		return true;
	if (!TACHI_RESERVE(b->p, b->cap, b->len + n))
		return false;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return true;
}

/* Appends s as valid UTF-8 (invalid bytes become U+FFFD, as CPython's reader decodes
 * them) with the bytes that would break a folded line replaced. */
static bool add_label_text(struct tach_writer *w, struct buf *b, const char *s, size_t n)
{
	struct cstate *st = w->state;
	size_t i = 0;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			char out = (char)c;
			if (c == ';') {
				out = ':';
				if (!st->warned_semi) {
					st->warned_semi = true;
					tachi_warn(&w->warn, TACH_POS_NONE, 0,
						   "a frame name contains ';': written as ':'");
				}
			} else if (c < 0x20 || c == 0x7f) {
				out = '?';
				if (!st->warned_ctrl) {
					st->warned_ctrl = true;
					tachi_warn(&w->warn, TACH_POS_NONE, 0,
						   "a frame name contains control characters: written as '?'");
				}
			}
			if (!buf_add(b, &out, 1))
				return false;
			i++;
			continue;
		}
		size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		if (len > 1 && i + len <= n && tachi_utf8_valid((const uint8_t *)s + i, len)) {
			if (!buf_add(b, s + i, len))
				return false;
			i += len;
			continue;
		}
		if (!buf_add(b, "\xEF\xBF\xBD", 3))
			return false;
		i++;
	}
	return true;
}

static bool add_num(struct buf *b, int64_t v)
{
	char t[24];
	return buf_add(b, t, tachi_fmt_i64(t, v));
}

static bool add_label(struct tach_writer *w, struct buf *b, const struct tachi_linekey *k)
{
	struct cstate *st = w->state;
	size_t fl, nl;
	const char *file = tachi_str(&st->sc.lk.names, k->file, &fl);
	const char *func = tachi_str(&st->sc.lk.names, k->func, &nl);
	if (fl == 1 && file[0] == '~' && k->line == 0)
		return add_label_text(w, b, func, nl);
	if (!st->full_paths) {
		const char *slash = NULL;
		for (size_t i = fl; i > 0; i--)
			if (file[i - 1] == '/') {
				slash = file + i - 1;
				break;
			}
		if (slash) {
			fl -= (size_t)(slash + 1 - file);
			file = slash + 1;
		}
	}
	if (st->labels == LABEL_PYSPY)
		return add_label_text(w, b, func, nl) && buf_add(b, " (", 2) &&
		       add_label_text(w, b, file, fl) && buf_add(b, ":", 1) &&
		       add_num(b, k->line) && buf_add(b, ")", 1);
	return add_label_text(w, b, file, fl) && buf_add(b, ":", 1) &&
	       add_label_text(w, b, func, nl) && buf_add(b, ":", 1) && add_num(b, k->line);
}

struct line {
	size_t off, len;
	uint64_t n;
};

static int line_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct line *a = pa, *b = pb;
	const char *sort_base = ctx;
	if (a->n != b->n)
		return a->n > b->n ? -1 : 1;
	size_t m = a->len < b->len ? a->len : b->len;
	int c = memcmp(sort_base + a->off, sort_base + b->off, m);
	if (c)
		return c;
	return a->len < b->len ? -1 : a->len > b->len;
}

static int cw_close(struct tach_writer *w)
{
	struct cstate *st = w->state;
	if (!st->sc.ncounts)
		return TACH_OK;
	/* Labels once per key, then each line built root first from its trie path. */
	struct buf labels = { 0 };
	size_t nkeys = st->sc.lk.nkeys;
	size_t *loff = malloc((nkeys + 1) * sizeof(*loff));
	struct line *lines = malloc(st->sc.ncounts * sizeof(*lines));
	struct buf text = { 0 };
	uint32_t *path = NULL;
	size_t path_cap = 0;
	int rc = TACH_OK;
	/* Both buffers exist even when every label is empty: pointer arithmetic on NULL is
	 * undefined, even by zero. */
	if (!loff || !lines || !TACHI_RESERVE(labels.p, labels.cap, 1) ||
	    !TACHI_RESERVE(text.p, text.cap, 1))
		goto nomem;
	for (size_t i = 0; i < nkeys; i++) {
		loff[i] = labels.len;
		if (!add_label(w, &labels, &st->sc.lk.keys[i]))
			goto nomem;
	}
	loff[nkeys] = labels.len;
	/* One line per (thread, leaf) pair: stacks whose frames differ only where the labels
	 * do not look (columns, opcode) already share a leaf, as CPython's collector keys on
	 * (file, line, func). */
	size_t nlines = 0;
	for (size_t i = 0; i < st->sc.ncounts; i++) {
		const struct tachi_pair *e = &st->sc.trie.pairs[i];
		if (!st->sc.counts[i] || e->leaf == TACHI_ROOT)
			continue;
		uint32_t depth = st->sc.trie.depth[e->leaf];
		if (!TACHI_RESERVE(path, path_cap, depth))
			goto nomem;
		uint32_t node = e->leaf;
		for (uint32_t k = depth; k > 0; k--) {
			path[k - 1] = st->sc.trie.key[node];
			node = st->sc.trie.parent[node];
		}
		struct line *ln = &lines[nlines++];
		ln->off = text.len;
		ln->n = st->sc.counts[i];
		if (!st->no_threads) {
			char t[24];
			if (!buf_add(&text, "tid:", 4) || !buf_add(&text, t, tachi_fmt_u64(t, e->ctx)))
				goto nomem;
		}
		for (uint32_t k = 0; k < depth; k++) {
			if ((k || !st->no_threads) && !buf_add(&text, ";", 1))
				goto nomem;
			if (!buf_add(&text, labels.p + loff[path[k]], loff[path[k] + 1] - loff[path[k]]))
				goto nomem;
		}
		ln->len = text.len - ln->off;
	}
	/* Two lines can still print alike (two files with one basename): CPython prints both
	 * too. */
	qsort_r(lines, nlines, sizeof(*lines), line_cmp, text.p);
	for (size_t i = 0; i < nlines; i++) {
		if (tachi_out_write(&w->out, text.p + lines[i].off, lines[i].len) ||
		    tachi_out_byte(&w->out, ' ') || tachi_out_u64(&w->out, lines[i].n) ||
		    tachi_out_byte(&w->out, '\n')) {
			rc = tachi_writer_io(w);
			break;
		}
	}
	goto out;
nomem:
	rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
out:
	free(labels.p);
	free(loff);
	free(lines);
	free(text.p);
	free(path);
	return rc;
}

static void cw_free(struct tach_writer *w)
{
	struct cstate *st = w->state;
	tachi_stackcount_free(&st->sc);
}

static const struct tachi_writer_ops writer_ops = {
	.state_size = sizeof(struct cstate),
	.option = cw_option,
	.put = cw_put,
	.close = cw_close,
	.free = cw_free,
};

const struct tachi_format tachi_fmt_collapsed = {
	.name = "collapsed",
	.reader = &tachi_collapsed_reader_ops,
	.writer = &writer_ops,
};
