/* speedscope writer: the JSON file format speedscope (www.speedscope.app) imports, as its
 * npm package's file-format-schema.json describes it, plain (not compressed).
 *
 * What is written:
 *   - One "sampled" profile per (thread id, interpreter id), in first-seen order, named
 *     "Thread K (tid N)" (", interpreter I" when I is not 0) as tach2gecko names threads:
 *     the ordinal first, so that names differ where speedscope's profile menu cuts them.
 *     A thread whose stacks end in perf's process root (formats/comm.h) is named by its
 *     comm instead: "COMM (tid N)".
 *   - Frames in shared.frames, interned once by (function, file, line, column) text: name
 *     is the function, file the path, line and col 1-based (TACH columns are 0-based);
 *     line and col left out where the input has none. A native frame without a file
 *     takes its mapping's (the binary or library it is in), where the input names it.
 *   - Each profile's samples in time order, stacks root first, with consecutive identical
 *     stacks merged into one weighted sample (speedscope's time-ordered view joins them
 *     anyway). Samples with an empty stack are left out, as CPython's collectors skip them.
 *   - Units: where the samples carry time (meta.sample_time), "microseconds" and weights of
 *     the samples' own time (the sum of their time_ns: a V8 sample's time to the next, a
 *     perf period, weight * interval for TACH), to the ns (a fraction of a µs where there
 *     is one), so speedscope shows times (it formats them as ms or s) and the
 *     time-ordered view's widths are durations; samples without time (folded input
 *     without an interval) have "none" and weights in samples. startValue is 0 and endValue the
 *     sum of the profile's weights, the total speedscope takes for the profile. Weights
 *     that are not samples (a pprof heap profile's bytes: meta.weight_unit) are written as
 *     they are, in their unit when speedscope has it ("bytes", "nanoseconds", ...), else
 *     "none" (counts of objects, contentions).
 *   - exporter "tachfmt@VERSION". Numbers are written locale-free; strings are escaped
 *     JSON and valid UTF-8 (invalid bytes become U+FFFD, with one warning).
 *   - An input with several value types (a pprof heap profile's alloc_objects, alloc_space,
 *     inuse_objects, inuse_space) gives a profile per thread and type instead, named
 *     "Thread K (tid N) TYPE", the weights' type first, each distinct stack once with the
 *     sum of its samples' values of that type as its weight (stacks without any left
 *     out), in the type's unit: pprof has no time order to keep.
 * An input without samples gives an empty profile "No samples" (speedscope's importer
 * needs a profile to name the file).
 * Not written: status flags, timestamps (the format's sampled profiles have none), opcodes.
 *
 * Memory: the frames, one stack trie shared by the threads (distinct stacks), and per
 * thread a spool of runs (lib/model/spool.c: a chunk in memory, the rest in a temporary file),
 * joined at close; never the samples. A thread whose input goes back in time is sorted at
 * close (its runs then are in memory, with a warning).
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "base/io.h"
#include "base/jsonout.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/spool.h"
#include "core/handles.h"
#include "core/values.h"
#include "core/format.h"
#include "formats/speedscope/speedscope.h"
#include "base/buf.h"
#include "formats/comm.h"

#define NONE UINT32_MAX

struct speedscope_wframe {
	uint32_t file, func; /* source dict string ids (NONE: out of range) */
	int32_t line, col;
};

/* A run of consecutive samples of one thread with one stack; spooled until close. */
struct srun {
	uint64_t t;      /* time of its first sample */
	uint64_t v;      /* the time they stand for in ns (saturating), or their count where
			  * the samples carry no time (speedscope_wstate.by_time) */
	uint32_t node;   /* leaf trie node */
	uint32_t pad;
};

/* A distinct (thread, stack) of a profile with several value types: its sums, at
 * vals[i * nvt], and the thread's next one (first-seen order). */
struct sventry {
	uint32_t thread, leaf, next;
};

struct sthread {
	uint32_t vhead, vtail;  /* its sventries, NONE when none */
	uint64_t tid;
	uint32_t iid;
	bool unsorted, open;
	struct srun run;      /* the run being extended */
	uint64_t last_t;
	uint64_t total;       /* their time or count, as a run's v */
	struct tachi_stream runs;
	uint32_t comm;        /* the last perf process root of its samples (comm.h), or NONE */
};

struct speedscope_wstate {
	const struct tach_dict *src;
	uint32_t *fmap;       /* source frame id -> index in frames */
	size_t fmap_cap;
	struct speedscope_wframe *frames;
	size_t nframes, frames_cap;
	struct tachi_idset frame_index;
	struct tachi_stacktab trie;
	struct tachi_threads paths;
	struct sthread *th;
	size_t nth, th_cap;
	struct tachi_spool spool;
	bool warned_utf8, warned_order;
	/* close */
	bool by_time;         /* runs sum time, not counts (begin) */
	bool micro;           /* weights are times, in µs (to the ns, unless whole_us) */
	bool whole_us;        /* a thread's ns pass 2^53: whole µs */
	const char *unit;     /* speedscope's name of the weights' unit */
	char *esc;
	size_t esc_cap;
	uint32_t *path;
	size_t path_cap;
	/* each distinct stack's text "[a,b,...]", spelt once (see stack_text) */
	uint64_t *text_at;    /* per trie node: offset in text + 1, 0 when not made */
	uint32_t *text_len;
	char *text;
	size_t text_n, text_cap;
	bool text_off;        /* the trie is too big to keep texts for */
	uint8_t *chunk;
	struct srun *all;     /* a sorted thread's runs */
	/* several value types (nvt > 1): sums per distinct (thread, stack) */
	uint32_t nvt;
	struct sventry *ve;
	size_t nve, ve_cap;
	int64_t *vals;
	size_t vals_cap;
	struct tachi_idset ve_index;
	uint32_t last_thread, last_leaf; /* the sample just put */
};

static int sw_option(struct tach_writer *w, const char *key, const char *value)
{
	(void)value;
	return WFAIL(w, TACH_E_USAGE, "speedscope writer has no option %s", key);
}

/* ---- frames ---- */

static const char *frame_text(const struct speedscope_wstate *st, uint32_t sid, size_t *len)
{
	if (sid == NONE) {
		*len = 0;
		return "";
	}
	return tachi_str(st->src, sid, len);
}

static uint64_t frame_hash(const struct speedscope_wstate *st, const struct speedscope_wframe *f)
{
	size_t fl, nl;
	const char *file = frame_text(st, f->file, &fl);
	const char *func = frame_text(st, f->func, &nl);
	uint64_t h = tachi_hash(file, fl) ^ tachi_mix64(tachi_hash(func, nl));
	return tachi_mix64(h ^ ((uint64_t)(uint32_t)f->line << 32 | (uint32_t)f->col));
}

static bool text_eq(const struct speedscope_wstate *st, uint32_t a, uint32_t b)
{
	size_t al, bl;
	const char *as = frame_text(st, a, &al), *bs = frame_text(st, b, &bl);
	return a == b || (al == bl && !memcmp(as, bs, al));
}

static bool frame_eq(void *ctx, uint32_t id, const void *k)
{
	const struct speedscope_wstate *st = ctx;
	const struct speedscope_wframe *a = &st->frames[id], *b = k;
	return a->line == b->line && a->col == b->col && text_eq(st, a->file, b->file) &&
	       text_eq(st, a->func, b->func);
}


/* A native frame without a file of its own (a function without line information) is
 * named after the file of its mapping, the binary or library its code is in. */
static uint32_t native_file(const struct tach_dict *d, uint32_t fid, uint32_t file)
{
	size_t fl = 0;
	if (file != NONE)
		tachi_str(d, file, &fl);
	const struct tach_frame_native *n = fl ? NULL : tach_dict_frame_native(d, fid);
	const struct tach_mapping *m = n ? tach_dict_mapping(d, n->mapping) : NULL;
	size_t ml = 0;
	if (m)
		tachi_str(d, m->file, &ml);
	return ml ? m->file : file;
}

static int map_frame(struct tach_writer *w, uint32_t fid)
{
	struct speedscope_wstate *st = w->state;
	const struct tach_dict *d = st->src;
	if (fid >= st->fmap_cap && !tachi_idmap_reserve(&st->fmap, &st->fmap_cap, (size_t)fid + 1))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	const struct tach_frame *f = &d->frames[fid];
	struct speedscope_wframe k = {
		.file = f->file < d->str_count ? f->file : NONE,
		.func = f->func < d->str_count ? f->func : NONE,
		.line = f->line < 0 ? -1 : f->line,
		.col = f->line < 0 || f->col < 0 ? -1 : f->col,
	};
	k.file = native_file(d, fid, k.file);
	uint64_t h = frame_hash(st, &k);
	uint32_t id;
	if (!tachi_idset_find(&st->frame_index, h, &k, frame_eq, st, &id)) {
		if (st->nframes >= UINT32_MAX - 1 ||
		    !TACHI_RESERVE(st->frames, st->frames_cap, st->nframes + 1))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		id = (uint32_t)st->nframes;
		st->frames[id] = k;
		if (!tachi_idset_insert(&st->frame_index, h, id))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		st->nframes++;
	}
	st->fmap[fid] = id;
	return TACH_OK;
}

/* ---- samples ---- */

static struct sthread *thread_for(struct speedscope_wstate *st, const struct tach_sample *s,
				  struct tachi_pathcache **pc)
{
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&st->paths, s->thread_id, s->interp_id,
						      &created);
	if (!c)
		return NULL;
	if (created) {
		if (!TACHI_RESERVE(st->th, st->th_cap, st->nth + 1))
			return NULL;
		struct sthread *t = &st->th[st->nth];
		memset(t, 0, sizeof(*t));
		t->tid = s->thread_id;
		t->iid = s->interp_id;
		t->vhead = t->vtail = NONE;
		t->comm = NONE;
		c->slot = (uint32_t)st->nth++;
	}
	*pc = c;
	return &st->th[c->slot];
}

static int flush_run(struct tach_writer *w, struct sthread *t)
{
	struct speedscope_wstate *st = w->state;
	if (!t->open)
		return TACH_OK;
	t->open = false;
	int e = tachi_stream_add(&st->spool, &t->runs, &t->run);
	if (e)
		return WFAIL(w, e == ENOMEM ? TACH_E_NOMEM : TACH_E_IO,
			     "spooling samples to a temporary file: %s", strerror(e));
	return TACH_OK;
}

static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return __builtin_add_overflow(a, b, &a) ? UINT64_MAX : a;
}

static int sw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct speedscope_wstate *st = w->state;
	if (TACHI_UNLIKELY(!s->depth))
		return TACH_OK;
	/* the same dict for every sample: tach_writer_put checks it */
	if (TACHI_UNLIKELY(!st->src)) {
		st->src = d;
	}
	struct tachi_pathcache *c;
	struct sthread *t = thread_for(st, s, &c);
	if (!t)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	const char *cn;
	size_t cl;
	int32_t pid;
	if (s->frames[s->depth - 1] != t->comm &&
	    tachi_comm_frame(d, s->frames[s->depth - 1], &cn, &cl, &pid))
		t->comm = s->frames[s->depth - 1];
	bool same = s->same_outer >= s->depth && s->depth == c->depth && c->leaf != TACHI_NOMEM_NODE;
	for (uint32_t i = 0; !same && i < s->depth; i++) {
		uint32_t f = s->frames[i];
		if (TACHI_UNLIKELY(f >= st->fmap_cap || st->fmap[f] == NONE)) {
			int rc = map_frame(w, f);
			if (rc)
				return rc;
		}
	}
	st->trie.hint = w->ahead_hash;
	uint32_t leaf = tachi_stack_intern(&st->trie, c, s, st->fmap);
	if (leaf == TACHI_NOMEM_NODE)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	st->last_thread = c->slot;
	st->last_leaf = leaf;
	uint64_t n = s->weight ? s->weight : 1;
	if (t->total && s->timestamp_us < t->last_t)
		t->unsorted = true;
	if (!t->open || t->run.node != leaf || s->timestamp_us < t->last_t) {
		int rc = flush_run(w, t);
		if (rc)
			return rc;
		memset(&t->run, 0, sizeof(t->run)); /* padding too: runs go to a file */
		t->run.t = s->timestamp_us;
		t->run.node = leaf;
		t->open = true;
	}
	uint64_t v = st->by_time ? s->time_ns : n;
	t->run.v = add_sat(t->run.v, v);
	t->last_t = s->timestamp_us;
	t->total = add_sat(t->total, v);
	return TACH_OK;
}

static bool ve_eq(void *ctx, uint32_t id, const void *k)
{
	const struct speedscope_wstate *st = ctx;
	const struct sventry *a = &st->ve[id], *b = k;
	return a->thread == b->thread && a->leaf == b->leaf;
}

/* The values of the sample just put, added to its (thread, stack)'s sums. */
static int add_values(struct tach_writer *w, const struct tach_sample *s,
		      const struct tach_sample_ext *ext)
{
	struct speedscope_wstate *st = w->state;
	struct sventry k = { st->last_thread, st->last_leaf, NONE };
	uint64_t h = tachi_mix64((uint64_t)k.thread << 32 | k.leaf);
	uint32_t id;
	if (!tachi_idset_find(&st->ve_index, h, &k, ve_eq, st, &id)) {
		size_t old = st->vals_cap;
		if (st->nve >= UINT32_MAX - 1 || !TACHI_RESERVE(st->ve, st->ve_cap, st->nve + 1) ||
		    !TACHI_RESERVE(st->vals, st->vals_cap, (st->nve + 1) * st->nvt))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		memset(st->vals + old, 0, (st->vals_cap - old) * sizeof(*st->vals));
		id = (uint32_t)st->nve;
		st->ve[id] = k;
		if (!tachi_idset_insert(&st->ve_index, h, id))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		st->nve++;
		struct sthread *t = &st->th[k.thread];
		if (t->vtail == NONE)
			t->vhead = id;
		else
			st->ve[t->vtail].next = id;
		t->vtail = id;
	}
	int64_t *v = st->vals + (size_t)id * st->nvt;
	for (uint32_t i = 0; i < st->nvt; i++) {
		int64_t x = ext && ext->value_count == st->nvt ? ext->values[i] :
			    i == w->meta.weight_type ? (int64_t)(s->weight > INT64_MAX ? INT64_MAX : s->weight) : 0;
		if (x > 0 && __builtin_add_overflow(v[i], x, &v[i]))
			v[i] = INT64_MAX;
	}
	return TACH_OK;
}

static int sw_put_ext(struct tach_writer *w, const struct tach_dict *d,
		      const struct tach_sample *s, const struct tach_sample_ext *ext)
{
	struct speedscope_wstate *st = w->state;
	if (!s->depth || (!s->weight && st->nvt < 2))
		return TACH_OK;
	st->last_leaf = NONE;
	int rc = sw_put(w, d, s);
	if (rc || st->nvt < 2 || st->last_leaf == NONE)
		return rc;
	return add_values(w, s, ext);
}

static int sw_put_plain(struct tach_writer *w, const struct tach_dict *d,
			const struct tach_sample *s)
{
	return sw_put_ext(w, d, s, NULL);
}

/* ---- close: the JSON document ---- */

static int out_str(struct tach_writer *w, const char *s)
{
	return tachi_out_str(&w->out, s);
}

/* A JSON string from input bytes: quoted, escaped, valid UTF-8. */
static int out_json(struct tach_writer *w, const char *s, size_t n)
{
	struct speedscope_wstate *st = w->state;
	size_t room;
	if (__builtin_mul_overflow(n, 6, &room) || !TACHI_RESERVE(st->esc, st->esc_cap, room + 1))
		return TACH_E_NOMEM;
	bool repaired = false;
	size_t len = tachi_json_escape(st->esc, s, n, &repaired);
	if (repaired && !st->warned_utf8) {
		st->warned_utf8 = true;
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "a string is not valid UTF-8: invalid bytes written as U+FFFD");
	}
	return tachi_out_byte(&w->out, '"') || tachi_out_write(&w->out, st->esc, len) ||
	       tachi_out_byte(&w->out, '"') ? TACH_E_IO : TACH_OK;
}

static int write_frames(struct tach_writer *w)
{
	struct speedscope_wstate *st = w->state;
	for (size_t i = 0; i < st->nframes; i++) {
		const struct speedscope_wframe *f = &st->frames[i];
		size_t fl, nl;
		const char *file = frame_text(st, f->file, &fl);
		const char *func = frame_text(st, f->func, &nl);
		int rc;
		if (out_str(w, i ? ",{\"name\":" : "{\"name\":"))
			return TACH_E_IO;
		if ((rc = out_json(w, func, nl)) || out_str(w, ",\"file\":") ||
		    (rc = out_json(w, file, fl)))
			return rc ? rc : TACH_E_IO;
		if (f->line >= 0 && (out_str(w, ",\"line\":") || tachi_out_i64(&w->out, f->line)))
			return TACH_E_IO;
		if (f->col >= 0 &&
		    (out_str(w, ",\"col\":") || tachi_out_i64(&w->out, (int64_t)f->col + 1)))
			return TACH_E_IO;
		if (tachi_out_byte(&w->out, '}'))
			return TACH_E_IO;
	}
	return TACH_OK;
}

/* Walks a thread's runs in time order: from its spool, or from a sorted copy. Yields
 * merged runs (adjacent runs with one stack joined). */
struct speedscope_walk {
	struct speedscope_wstate *st;
	const struct sthread *t;
	size_t chunk, i, n;
	const uint8_t *recs;
	size_t all_i;
	bool sorted, have;
	struct srun pend;
	int err;
};

static bool next_raw(struct speedscope_walk *wk, struct srun *r)
{
	if (wk->sorted) {
		if (wk->all_i == wk->t->runs.total)
			return false;
		*r = wk->st->all[wk->all_i++];
		return true;
	}
	while (wk->i == wk->n) {
		if (wk->chunk > wk->t->runs.nchunks)
			return false;
		wk->err = tachi_stream_chunk(&wk->st->spool, &wk->t->runs, wk->chunk++,
					     wk->st->chunk, &wk->recs, &wk->n);
		wk->i = 0;
		if (wk->err)
			return false;
	}
	memcpy(r, wk->recs + wk->i++ * sizeof(*r), sizeof(*r));
	return true;
}

static bool next_merged(struct speedscope_walk *wk, struct srun *out)
{
	struct srun r;
	while (next_raw(wk, &r)) {
		if (wk->have && r.node == wk->pend.node) {
			wk->pend.v = add_sat(wk->pend.v, r.v);
			continue;
		}
		bool had = wk->have;
		*out = wk->pend;
		wk->pend = r;
		wk->have = true;
		if (had)
			return true;
	}
	if (!wk->have || wk->err)
		return false;
	*out = wk->pend;
	wk->have = false;
	return true;
}

static void walk_start(struct speedscope_walk *wk, struct speedscope_wstate *st,
		       const struct sthread *t, bool sorted)
{
	memset(wk, 0, sizeof(*wk));
	wk->st = st;
	wk->t = t;
	wk->sorted = sorted;
}

static int run_cmp(const void *pa, const void *pb)
{
	const struct srun *a = pa, *b = pb;
	if (a->t != b->t)
		return a->t < b->t ? -1 : 1;
	/* pad holds the input position: ties keep input order */
	return a->pad < b->pad ? -1 : a->pad > b->pad;
}

/* The runs of a thread whose input went back in time, sorted by time into st->all. */
static int sort_runs(struct tach_writer *w, const struct sthread *t)
{
	struct speedscope_wstate *st = w->state;
	size_t n = (size_t)t->runs.total;
	free(st->all);
	st->all = malloc((n ? n : 1) * sizeof(*st->all));
	if (!st->all || n > UINT32_MAX)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	struct speedscope_walk wk;
	walk_start(&wk, st, t, false);
	for (size_t i = 0; i < n && next_raw(&wk, &st->all[i]); i++)
		st->all[i].pad = (uint32_t)i;
	if (wk.err)
		return WFAIL(w, TACH_E_IO, "reading spooled samples back: %s", strerror(wk.err));
	qsort(st->all, n, sizeof(*st->all), run_cmp);
	if (!st->warned_order) {
		st->warned_order = true;
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "samples of thread %llu are not in time order: sorted",
			   (unsigned long long)t->tid);
	}
	return TACH_OK;
}

/* A stack as frame indices, root first, spelt into buf (NULL: just its length). */
static size_t spell_stack(struct speedscope_wstate *st, uint32_t leaf, uint32_t depth, char *buf)
{
	uint32_t node = leaf;
	for (uint32_t k = depth; k > 0; k--, node = st->trie.nodes[node].parent)
		st->path[k - 1] = st->trie.nodes[node].key;
	char num[24];
	size_t n = 0;
	for (uint32_t k = 0; k < depth; k++) {
		size_t l = tachi_fmt_u64(num, st->path[k]);
		if (buf) {
			buf[n] = k ? ',' : '[';
			memcpy(buf + n + 1, num, l);
		}
		n += l + 1;
	}
	if (buf) {
		if (!depth)
			buf[n] = '[';
		buf[n + !depth] = ']';
	}
	return n + !depth + 1;
}

/* Texts kept for at most this many trie nodes and bytes: past them a stack is spelt each
 * time it is written, so memory stays bounded on a profile of millions of distinct stacks. */
#define TEXT_NODES_MAX (UINT32_C(1) << 22)
#define TEXT_BYTES_MAX ((size_t)64 << 20)

/* The text of stack leaf, made the first time: a churning thread writes the same few
 * thousand stacks millions of times, and spelling each again was most of the writer's
 * time. NULL when it is not kept (then *len is 0) or out of memory (*len 1). */
static const char *stack_text(struct speedscope_wstate *st, uint32_t leaf, uint32_t depth,
			      size_t *len)
{
	*len = 0;
	if (st->text_off || leaf >= st->trie.count)
		return NULL;
	if (!st->text_at) {
		st->text_off = st->trie.count > TEXT_NODES_MAX;
		if (st->text_off)
			return NULL;
		st->text_at = calloc(st->trie.count, sizeof(*st->text_at));
		st->text_len = calloc(st->trie.count, sizeof(*st->text_len));
		if (!st->text_at || !st->text_len)
			return (*len = 1, NULL);
	}
	if (!st->text_at[leaf]) {
		size_t n = spell_stack(st, leaf, depth, NULL);
		if (n > UINT32_MAX || st->text_n + n > TEXT_BYTES_MAX)
			return NULL;
		if (!TACHI_RESERVE(st->text, st->text_cap, st->text_n + n))
			return (*len = 1, NULL);
		spell_stack(st, leaf, depth, st->text + st->text_n);
		st->text_at[leaf] = st->text_n + 1;
		st->text_len[leaf] = (uint32_t)n;
		st->text_n += n;
	}
	*len = st->text_len[leaf];
	return st->text + st->text_at[leaf] - 1;
}

/* A stack as frame indices, root first. */
static int write_stack(struct tach_writer *w, uint32_t leaf)
{
	struct speedscope_wstate *st = w->state;
	uint32_t depth = tachi_stacktab_depth(&st->trie, leaf);
	if (!TACHI_RESERVE(st->path, st->path_cap, depth))
		return TACH_E_NOMEM;
	size_t n;
	const char *text = stack_text(st, leaf, depth, &n);
	if (text)
		return tachi_out_write(&w->out, text, n) ? TACH_E_IO : TACH_OK;
	if (n)
		return TACH_E_NOMEM;
	if (tachi_out_byte(&w->out, '['))
		return TACH_E_IO;
	spell_stack(st, leaf, depth, NULL);
	for (uint32_t k = 0; k < depth; k++)
		if ((k && tachi_out_byte(&w->out, ',')) || tachi_out_u64(&w->out, st->path[k]))
			return TACH_E_IO;
	return tachi_out_byte(&w->out, ']') ? TACH_E_IO : TACH_OK;
}

/* A weight: the time in µs, with the ns as a fraction where there are any, or the count. */
static int out_weight(struct tach_writer *w, uint64_t v)
{
	struct speedscope_wstate *st = w->state;
	if (!st->micro)
		return tachi_out_u64(&w->out, v) ? TACH_E_IO : TACH_OK;
	uint64_t ns = v;
	if (st->whole_us)
		return tachi_out_u64(&w->out, ns / 1000 + (ns % 1000 >= 500)) ? TACH_E_IO : TACH_OK;
	if (tachi_out_u64(&w->out, ns / 1000))
		return TACH_E_IO;
	unsigned f = (unsigned)(ns % 1000);
	if (!f)
		return TACH_OK;
	char b[5] = { '.', (char)('0' + f / 100), (char)('0' + f / 10 % 10), (char)('0' + f % 10) };
	size_t n = 4;
	while (b[n - 1] == '0')
		n--;
	return tachi_out_write(&w->out, b, n) ? TACH_E_IO : TACH_OK;
}

static int write_runs(struct tach_writer *w, const struct sthread *t, bool weights)
{
	struct speedscope_wstate *st = w->state;
	struct speedscope_walk wk;
	struct srun r;
	walk_start(&wk, st, t, t->unsorted);
	for (bool first = true; next_merged(&wk, &r); first = false) {
		if (!first && tachi_out_byte(&w->out, ','))
			return TACH_E_IO;
		int rc = weights ? out_weight(w, r.v) : write_stack(w, r.node);
		if (rc)
			return rc;
	}
	if (wk.err)
		return WFAIL(w, TACH_E_IO, "reading spooled samples back: %s", strerror(wk.err));
	return TACH_OK;
}

/* A thread with a name root is named by it: "comm (tid N)". */
static int comm_name(struct tach_writer *w, const struct sthread *t, const char *ns, bool *done)
{
	struct speedscope_wstate *st = w->state;
	const char *cn;
	size_t cl;
	int32_t pid;
	*done = false;
	if (t->comm == NONE || !tachi_comm_frame(st->src, t->comm, &cn, &cl, &pid))
		return TACH_OK;
	struct tachi_buf b = { 0 };
	char tail[64];
	size_t tl = (size_t)snprintf(tail, sizeof(tail), " (tid %llu)", (unsigned long long)t->tid);
	/* a second profile of one thread (Chrome traces) is told apart by its interpreter */
	if (t->iid && t->iid != (uint32_t)pid)
		tl = (size_t)snprintf(tail, sizeof(tail), " (tid %llu, interpreter %lu)",
				      (unsigned long long)t->tid, (unsigned long)t->iid);
	int rc = tachi_buf_add(&b, cn, cl) && tachi_buf_add(&b, tail, tl) ? TACH_OK : TACH_E_NOMEM;
	if (!rc && out_str(w, ns))
		rc = TACH_E_IO;
	if (!rc)
		rc = out_json(w, b.p, b.len);
	free(b.p);
	*done = !rc;
	return rc;
}

static int write_head(struct tach_writer *w, const struct sthread *t, size_t ti)
{
	struct speedscope_wstate *st = w->state;
	char name[TACHI_THREAD_LABEL_MAX];
	size_t nl;
	bool done = false;
	const char *ns = ti ? ",{\"type\":\"sampled\",\"name\":" : "{\"type\":\"sampled\",\"name\":";
	int rc = t ? comm_name(w, t, ns, &done) : TACH_OK;
	if (rc)
		return rc;
	if (done)
		goto unit;
	if (!t) {
		nl = 10;
		memcpy(name, "No samples", 10);
	} else {
		nl = tachi_thread_label(name, ti + 1, t->tid, t->iid);
	}
	if (out_str(w, ti ? ",{\"type\":\"sampled\",\"name\":\"" : "{\"type\":\"sampled\",\"name\":\"") ||
	    tachi_out_write(&w->out, name, nl) || out_str(w, "\""))
		return TACH_E_IO;
unit:
	if (out_str(w, ",\"unit\":\"") || out_str(w, st->unit) ||
	    out_str(w, "\",\"startValue\":0,\"endValue\":") ||
	    (t ? out_weight(w, t->total) : tachi_out_byte(&w->out, '0')))
		return TACH_E_IO;
	return TACH_OK;
}

/* Thread ti's profile of value type k (several value types), its stacks and their sums. */
static int write_type_profile(struct tach_writer *w, size_t ti, uint32_t k, bool first)
{
	struct speedscope_wstate *st = w->state;
	const struct sthread *t = &st->th[ti];
	const struct tach_value_type *vt = &w->meta.value_types[k];
	char name[TACHI_THREAD_LABEL_MAX + 2];
	size_t nl = tachi_thread_label(name, ti + 1, t->tid, t->iid);
	name[nl++] = ' ';
	struct tachi_buf b = { 0 };
	const char *type = vt->type ? vt->type : "";
	if (!tachi_buf_add(&b, name, nl) || !tachi_buf_add(&b, type, strlen(type)))
		return TACH_E_NOMEM;
	const char *u = tachi_unit_name(vt->unit);
	uint64_t sum = 0;
	for (uint32_t e = t->vhead; e != NONE; e = st->ve[e].next)
		sum += (uint64_t)st->vals[(size_t)e * st->nvt + k];
	int rc = out_str(w, first ? "{\"type\":\"sampled\",\"name\":" : ",{\"type\":\"sampled\",\"name\":") ?
		 TACH_E_IO : out_json(w, b.p, b.len);
	free(b.p);
	if (rc || out_str(w, ",\"unit\":\"") || out_str(w, u ? u : "none") ||
	    out_str(w, "\",\"startValue\":0,\"endValue\":") || tachi_out_u64(&w->out, sum) ||
	    out_str(w, ",\"samples\":["))
		return rc ? rc : TACH_E_IO;
	for (int pass = 0; pass < 2; pass++) {
		bool any = false;
		for (uint32_t e = t->vhead; e != NONE; e = st->ve[e].next) {
			int64_t v = st->vals[(size_t)e * st->nvt + k];
			if (v <= 0)
				continue;
			if (any && tachi_out_byte(&w->out, ','))
				return TACH_E_IO;
			any = true;
			rc = pass ? (tachi_out_u64(&w->out, (uint64_t)v) ? TACH_E_IO : TACH_OK)
				  : write_stack(w, st->ve[e].leaf);
			if (rc)
				return rc;
		}
		if (out_str(w, pass ? "]}" : "],\"weights\":["))
			return TACH_E_IO;
	}
	return TACH_OK;
}

/* A profile per thread and value type, the weights' type first. */
static int write_type_profiles(struct tach_writer *w)
{
	struct speedscope_wstate *st = w->state;
	uint32_t first = w->meta.weight_type < st->nvt ? w->meta.weight_type : 0;
	for (size_t ti = 0; ti < st->nth; ti++)
		for (uint32_t j = 0; j < st->nvt; j++) {
			uint32_t k = j == 0 ? first : j <= first ? j - 1 : j;
			int rc = write_type_profile(w, ti, k, !ti && !j);
			if (rc)
				return rc;
		}
	return TACH_OK;
}

static int write_profile(struct tach_writer *w, size_t ti)
{
	struct speedscope_wstate *st = w->state;
	const struct sthread *t = ti < st->nth ? &st->th[ti] : NULL;
	int rc = write_head(w, t, ti);
	if (rc)
		return rc;
	if (t && t->unsorted && (rc = sort_runs(w, t)))
		return rc;
	if (out_str(w, ",\"samples\":["))
		return TACH_E_IO;
	if (t && (rc = write_runs(w, t, false)))
		return rc;
	if (out_str(w, "],\"weights\":["))
		return TACH_E_IO;
	if (t && (rc = write_runs(w, t, true)))
		return rc;
	return out_str(w, "]}") ? TACH_E_IO : TACH_OK;
}

/* Weights in µs where the samples carry time, to the ns while every thread's total fits 53
 * bits of ns (exact in JavaScript), else in whole µs (said once); else in samples. */
static void choose_unit(struct tach_writer *w)
{
	struct speedscope_wstate *st = w->state;
	st->micro = st->by_time;
	for (size_t i = 0; i < st->nth && st->micro && !st->whole_us; i++)
		if (st->th[i].total > (UINT64_C(1) << 53)) {
			st->whole_us = true;
			tachi_warn(&w->warn, TACH_POS_NONE, 0, "a thread's time in ns does not fit "
				   "JavaScript's exact numbers: the weights are whole microseconds");
		}
	if (!st->micro && !w->meta.sample_time && !w->meta.weight_unit && st->nth)
		tachi_warn(&w->warn, TACH_POS_NONE, 0, "the samples carry no time (no interval, no "
			   "time of their own): the weights are sample counts");
	st->unit = st->micro ? "microseconds" : "none";
	if (w->meta.weight_unit) {
		const char *u = tachi_unit_name(w->meta.weight_unit);
		st->unit = u ? u : "none";
	}
}

/* The document's name, which speedscope shows as its title, when a Python profile names
 * its profiling mode (CPython's profiling.sampling): "Python 3.15 (cpu mode)". Otherwise
 * (gperftools says CPU too) the importer names it after the file, as before. */
static int write_name(struct tach_writer *w)
{
	const struct tach_meta *m = &w->meta;
	const char *mode = tach_profiling_mode(m->profiling_config);
	if (!mode || !m->py_major)
		return 0;
	char b[64];
	snprintf(b, sizeof(b), "\"name\":\"Python %u.%u (%s mode)\",", m->py_major,
		 m->py_minor, mode);
	return out_str(w, b);
}

static int write_doc(struct tach_writer *w)
{
	struct speedscope_wstate *st = w->state;
	char ver[64];
	snprintf(ver, sizeof(ver), "tachfmt@%s", tach_version());
	int rc;
	if (out_str(w, "{\"$schema\":\"https://www.speedscope.app/file-format-schema.json\","
		       "\"exporter\":\"") || out_str(w, ver) || out_str(w, "\",") ||
	    write_name(w) || out_str(w, "\"activeProfileIndex\":0,\"shared\":{\"frames\":["))
		return TACH_E_IO;
	if ((rc = write_frames(w)))
		return rc;
	if (out_str(w, "]},\"profiles\":["))
		return TACH_E_IO;
	if (st->nvt > 1 && st->nth) {
		if ((rc = write_type_profiles(w)))
			return rc;
		return out_str(w, "]}\n") ? TACH_E_IO : TACH_OK;
	}
	for (size_t i = 0; i < (st->nth ? st->nth : 1); i++)
		if ((rc = write_profile(w, i)))
			return rc;
	return out_str(w, "]}\n") ? TACH_E_IO : TACH_OK;
}

static int sw_close(struct tach_writer *w)
{
	struct speedscope_wstate *st = w->state;
	for (size_t i = 0; i < st->nth; i++) {
		int rc = flush_run(w, &st->th[i]);
		if (rc)
			return rc;
	}
	choose_unit(w);
	st->chunk = malloc(st->spool.chunk_recs * sizeof(struct srun));
	if (!st->chunk)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	int rc = write_doc(w);
	if (rc == TACH_E_IO && !w->err.code)
		return tachi_writer_io(w);
	if (rc == TACH_E_NOMEM)
		return WFAIL(w, rc, "out of memory");
	return rc;
}

static int sw_begin(struct tach_writer *w)
{
	struct speedscope_wstate *st = w->state;
	tachi_spool_init(&st->spool, sizeof(struct srun));
	st->nvt = w->meta.value_types ? w->meta.value_type_count : 0;
	st->by_time = w->meta.sample_time && !w->meta.weight_unit;
	return TACH_OK;
}

static void sw_free(struct tach_writer *w)
{
	struct speedscope_wstate *st = w->state;
	free(st->fmap);
	free(st->frames);
	tachi_idset_free(&st->frame_index);
	tachi_stacktab_free(&st->trie);
	tachi_threads_free(&st->paths);
	for (size_t i = 0; i < st->nth; i++)
		tachi_stream_free(&st->th[i].runs);
	free(st->th);
	tachi_spool_free(&st->spool);
	free(st->esc);
	free(st->path);
	free(st->text_at);
	free(st->text_len);
	free(st->text);
	free(st->chunk);
	free(st->all);
	free(st->ve);
	free(st->vals);
	tachi_idset_free(&st->ve_index);
}

/* The format's table row is in speedscope/read.c, beside the reader and its probe. */
const struct tachi_writer_ops tachi_speedscope_writer_ops = {
	.state_size = sizeof(struct speedscope_wstate),
	.option = sw_option,
	.begin = sw_begin,
	.put = sw_put_plain,
	.put_ext = sw_put_ext,
	.close = sw_close,
	.free = sw_free,
	.trie_at = offsetof(struct speedscope_wstate, trie) + 1,
};

