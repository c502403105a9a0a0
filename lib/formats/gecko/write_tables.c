/* The Gecko writer's tables, thread by thread at close: its records read back from the
 * spool in time order, the samples table, the markers (thread states as intervals), the
 * stack table of the stacks the thread reached, and the frame table with its strings
 * (categories by file kind). State, interning and the document around the threads are in
 * gecko/write.c; the format note is there. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "base/base.h"
#include "base/hash.h"
#include "base/utf8.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "formats/gecko/write.h"
#include "formats/comm.h"

struct lbuf {
	char *p;
	size_t len, cap;
};

static bool lb_add(struct lbuf *b, const char *s, size_t n)
{
	if (!TACHI_RESERVE(b->p, b->cap, b->len + n))
		return false;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return true;
}

/* Location text: the importer's patterns do not match across a line break, so control
 * characters become '?' (as in collapsed output), with one warning. */
static bool lb_text(struct gstate *st, struct lbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if ((uint8_t)s[i] >= 0x20 && s[i] != 0x7f)
			continue;
		char *copy = malloc(n);
		if (!copy)
			return false;
		for (size_t k = 0; k < n; k++)
			copy[k] = (uint8_t)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
		st->ctrl_seen = true;
		bool ok = lb_text(st, b, copy, n);
		free(copy);
		return ok;
	}
	size_t need;
	if (__builtin_mul_overflow(n, 6, &need) || tachi_add_overflows(need, b->len, &need) ||
	    !TACHI_RESERVE(b->p, b->cap, need))
		return false;
	b->len += tachi_json_escape(b->p + b->len, s, n, &st->warned_utf8);
	return true;
}

/* How a function's location string reads, which decides what the importer makes of it:
 * "name (file:line)" a script function with the file as resource, "name (in file)" a
 * function of a library named file, or the bare name. A file with ')' would end the
 * library form early, and the script form needs a non-empty file. */
enum { LOC_JS, LOC_LIB, LOC_PLAIN, LOC_ADDR };

/* Native code written as such: any function with a mapping, and in a profile that is not
 * Python's, every function of the Native category (a script's stays a script's: V8). */
static bool func_is_native(const struct gstate *st, const struct gfunc *f)
{
	return f->mapping || (st->native && f->native_code);
}

/* The library a native function names: its mapping's file, else the frame's (a binary,
 * or a source without its binary), by its last component as the libs table names it. */
static const char *native_lib(const struct gstate *st, const struct gfunc *f, size_t *len)
{
	const struct tach_mapping *m = tach_dict_mapping(st->src, f->mapping);
	size_t n;
	const char *file = m ? tachi_str(st->src, m->file, &n) : "";
	if (!m || !n)
		file = tachi_str(st->src, f->file, &n);
	return tachi_gecko_basename(file, n, len);
}

/* A native function is never a script: an address its library places ("0x..."),
 * "name (in library)", or the bare name. */
static int native_kind(const struct gstate *st, const struct gfunc *f)
{
	if (f->unsym && tachi_gecko_listed(&st->libs, f->mapping))
		return LOC_ADDR;
	size_t n;
	const char *lib = native_lib(st, f, &n);
	if (!n || (n == 1 && lib[0] == '~') || memchr(lib, ')', n))
		return LOC_PLAIN;
	return LOC_LIB;
}

static int func_kind(const struct gstate *st, const struct gfunc *f)
{
	if (func_is_native(st, f))
		return native_kind(st, f);
	size_t fl;
	const char *file = tachi_str(st->src, f->file, &fl);
	/* CPython's "~" file marks a frame with no source (<GC>, native): no file shown, as
	 * in collapsed output, whatever its line. */
	if (!fl || (fl == 1 && file[0] == '~'))
		return LOC_PLAIN;
	if (f->min_line >= 0)
		return LOC_JS;
	if (memchr(file, ')', fl))
		return LOC_PLAIN;
	return LOC_LIB;
}

/* A native function's location: its address, or "name (in library)" with the source
 * file and first line seen after it (the importer reads only the name and the library,
 * which keeps the form out of its script pattern; the rest is for people). */
static bool native_location(struct gstate *st, struct lbuf *b, const struct gfunc *f,
			    int kind)
{
	size_t nl, ll, fl;
	const char *name = tachi_str(st->src, f->name, &nl);
	if (kind == LOC_ADDR) {
		char hex[24];
		return lb_add(b, hex, (size_t)snprintf(hex, sizeof(hex), "0x%" PRIx64, f->address));
	}
	if (!lb_text(st, b, name, nl))
		return false;
	if (kind != LOC_LIB)
		return true;
	const char *lib = native_lib(st, f, &ll);
	const char *file = tachi_str(st->src, f->file, &fl);
	if (!lb_add(b, " (in ", 5) || !lb_text(st, b, lib, ll) || !lb_add(b, ")", 1))
		return false;
	if (f->min_line < 0 || !fl)
		return true;
	char num[16];
	return lb_add(b, " (", 2) && lb_text(st, b, file, fl) && lb_add(b, ":", 1) &&
	       lb_add(b, num, tachi_fmt_i64(num, f->min_line)) && lb_add(b, ")", 1);
}

/* Every function's location string as a JSON literal, built once for all threads. */
int tachi_gecko_locations(struct tach_writer *w, struct scratch *sc)
{
	struct gstate *st = w->state;
	struct lbuf b = { 0 };
	bool was = st->warned_utf8;
	sc->loc_off = malloc((st->nfuncs + 1) * sizeof(*sc->loc_off));
	if (!sc->loc_off)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	for (size_t i = 0; i < st->nfuncs; i++) {
		const struct gfunc *f = &st->funcs[i];
		size_t fl, nl;
		const char *file = tachi_str(st->src, f->file, &fl);
		const char *name = tachi_str(st->src, f->name, &nl);
		sc->loc_off[i] = b.len;
		int kind = func_kind(st, f);
		bool native = func_is_native(st, f);
		bool ok = lb_add(&b, "\"", 1) && (native ? native_location(st, &b, f, kind)
							  : lb_text(st, &b, name, nl));
		if (native) {
			/* native_location wrote it whole */
		} else if (kind == LOC_JS) {
			char num[16];
			ok = ok && lb_add(&b, " (", 2) && lb_text(st, &b, file, fl) &&
			     lb_add(&b, ":", 1) && lb_add(&b, num, tachi_fmt_i64(num, f->min_line)) &&
			     lb_add(&b, ")", 1);
		} else if (kind == LOC_LIB) {
			ok = ok && lb_add(&b, " (in ", 5) && lb_text(st, &b, file, fl) &&
			     lb_add(&b, ")", 1);
		}
		if (!ok || !lb_add(&b, "\"", 1)) {
			free(b.p);
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		}
	}
	sc->loc_off[st->nfuncs] = b.len;
	sc->loc = b.p;
	if (st->warned_utf8 && !was)
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "a string is not valid UTF-8: invalid bytes written as U+FFFD");
	if (st->ctrl_seen)
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "a frame name contains control characters: written as '?'");
	return TACH_OK;
}

/* ---- a thread's records, in time order ---- */

/* Reads a byte stream of the spool back, chunk by chunk. */
struct bwalk {
	const struct tachi_spool *sp;
	const struct tachi_stream *s;
	uint8_t *buf;            /* a chunk read back from the file */
	size_t chunk;            /* next chunk to load */
	const uint8_t *p, *end;  /* the next record, the end of its chunk */
	int err;                 /* errno of a failed read; EIO for a record cut short */
};

static void bwalk_start(struct bwalk *b, const struct tachi_spool *sp,
			const struct tachi_stream *s, uint8_t *buf)
{
	memset(b, 0, sizeof(*b));
	b->sp = sp;
	b->s = s;
	b->buf = buf;
}

/* Loads the next chunk that has records; false at the end or on a read error. */
static bool bwalk_load(struct bwalk *b)
{
	for (;;) {
		if (b->chunk > b->s->nchunks)
			return false;
		const uint8_t *r;
		size_t n;
		b->err = tachi_stream_chunk(b->sp, b->s, b->chunk++, b->buf, &r, &n);
		if (b->err)
			return false;
		if (n && r[0]) {
			b->p = r;
			b->end = r + n;
			return true;
		}
	}
}

/* Whether there is a next record (at b->p) of at least min bytes. */
static inline bool bwalk_more(struct bwalk *b, size_t min)
{
	if (TACHI_UNLIKELY(b->p == b->end || !*b->p) && !bwalk_load(b))
		return false;
	if (TACHI_UNLIKELY((size_t)(b->end - b->p) < min)) {
		b->err = EIO;
		return false;
	}
	return true;
}

/* The values packed are mostly under 2^21: those take a test a byte. */
static inline bool bwalk_varint(struct bwalk *b, const uint8_t **p, uint64_t *v)
{
	const uint8_t *q = *p;
	if (TACHI_LIKELY(b->end - q >= 3)) {
		uint64_t x = q[0];
		if (x < 0x80) {
			*v = x;
			*p = q + 1;
			return true;
		}
		x = (x & 0x7f) | (uint64_t)q[1] << 7;
		if (q[1] < 0x80) {
			*v = x;
			*p = q + 2;
			return true;
		}
		x = (x & 0x3fff) | (uint64_t)q[2] << 14;
		if (q[2] < 0x80) {
			*v = x;
			*p = q + 3;
			return true;
		}
	}
	size_t k = tachi_uvarint(q, b->end, v);
	if (TACHI_UNLIKELY(!k)) {
		b->err = EIO;
		return false;
	}
	*p += k;
	return true;
}

/* Walks a thread's records: straight from its spool, or from a sorted copy when the input
 * went back in time (then, and only then, the thread's records are all in memory). */
struct recwalk {
	struct bwalk b;
	const struct grec *all;  /* sorted records, or NULL */
	size_t nall, i;
	uint64_t t;              /* the previous record's time */
	size_t nodes;            /* the trie's: a node past it is a damaged spool */
};

static void walk_start(struct recwalk *wk, const struct gstate *st, const struct gthread *t,
		       const struct scratch *sc)
{
	memset(wk, 0, sizeof(*wk));
	bwalk_start(&wk->b, &st->spool, &t->recs, sc->chunk);
	wk->nodes = st->trie.count;
	if (t->unsorted) {
		wk->all = sc->all;
		wk->nall = t->recs.total;
	}
}

/* Unpacks a record made by put_record. */
static inline bool walk_next(struct recwalk *wk, struct grec *out)
{
	if (wk->all) {
		if (wk->i == wk->nall)
			return false;
		*out = wk->all[wk->i++];
		return true;
	}
	struct bwalk *b = &wk->b;
	if (!bwalk_more(b, 3))
		return false;
	const uint8_t *p = b->p + 2;
	uint8_t f = b->p[0];
	uint64_t dt, dn = 0, weight = 1, step = STEP_IV;
	if (!bwalk_varint(b, &p, &dt) || (!(f & RF_NONODE) && !bwalk_varint(b, &p, &dn)) ||
	    ((f & RF_WEIGHT) && !bwalk_varint(b, &p, &weight)) ||
	    ((f & RF_STEP) && !bwalk_varint(b, &p, &step)))
		return false;
	uint64_t node = NONE;
	if (!(f & RF_NONODE))
		node = dn;
	if (TACHI_UNLIKELY((node != NONE && node >= wk->nodes) || !weight)) {
		b->err = EIO;
		return false;
	}
	wk->t += unzigzag64(dt);
	out->t = wk->t;
	out->weight = weight;
	out->step = step;
	out->node = (uint32_t)node;
	out->status = b->p[1];
	b->p = p;
	return true;
}

static int walk_failed(struct tach_writer *w, const struct bwalk *b)
{
	return WFAIL(w, TACH_E_IO, "reading spooled samples back: %s", strerror(b->err));
}

static int perm_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct grec *r = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	if (r[a].t != r[b].t)
		return r[a].t < r[b].t ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The records of a thread whose input went back in time, sorted by time (ties in input
 * order), into sc->all. */
static int sort_records(struct tach_writer *w, struct scratch *sc, const struct gthread *t)
{
	struct gstate *st = w->state;
	size_t n = (size_t)t->recs.total, cap = n ? n : 1;
	struct grec *in = malloc(cap * sizeof(*in));
	free(sc->all);
	sc->all = malloc(cap * sizeof(*sc->all));
	free(sc->perm);
	sc->perm = malloc(cap * sizeof(*sc->perm));
	if (!in || !sc->all || !sc->perm) {
		free(in);
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	struct recwalk wk;
	walk_start(&wk, st, t, sc);
	wk.all = NULL;
	size_t got = 0;
	while (got < n && walk_next(&wk, &in[got])) {
		sc->perm[got] = got;
		got++;
	}
	if (wk.b.err || got < n) {
		free(in);
		wk.b.err = wk.b.err ? wk.b.err : EIO;
		return walk_failed(w, &wk.b);
	}
	qsort_r(sc->perm, n, sizeof(*sc->perm), perm_cmp, in);
	for (size_t i = 0; i < n; i++)
		sc->all[i] = in[sc->perm[i]];
	free(in);
	if (!st->warned_order) {
		st->warned_order = true;
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "samples of thread %llu are not in time order: sorted",
			   (unsigned long long)t->tid);
	}
	return TACH_OK;
}

/* Inline: without -mpopcnt (the x86-64 baseline) the builtin is a call into libgcc, made
 * for every sample row. */
static inline uint32_t popcount64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (uint32_t)((x * 0x0101010101010101ULL) >> 56);
}

static int word_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* A thread with at least a record per SCAN_NODES trie nodes marks only its leaves and then
 * passes over the whole trie once, children before parents, to mark their ancestors: the
 * pass reads the nodes in order, where climbing from each leaf reads them at random (on
 * 3 M random stacks of eight threads, a cache miss a record). A thread with fewer records
 * climbs, so that the pass costs nothing when thousands of threads share one trie. */
#define SCAN_NODES 8

/* Leaves and ancestors by one pass over the trie; lists every touched word, in order. */
static uint32_t mark_by_scan(const struct tachi_stacktab *tr, struct scratch *sc)
{
	uint64_t *r = sc->reach;
	for (size_t i = tr->count; i > 0; i--) {
		uint32_t p = tr->nodes[i - 1].parent;
		if (p != TACHI_ROOT && tachi_bit(r, i - 1))
			tachi_bit_set(r, p);
	}
	uint32_t nw = 0;
	for (uint32_t k = 0; k <= tr->count / 64; k++)
		if (r[k])
			sc->words[nw++] = k;
	return nw;
}

/* Stacks that a thread's samples reach (their leaves, marked from its records, and every
 * node above), numbered in trie order (parents come first): a stack's number is the count
 * of reached nodes before it, from its word's count (rank) and the bits below it in the
 * word. The bitmap and the ranks span the whole trie and serve each thread in turn: only
 * the words that the thread's stacks touch (sc->words, sorted) are ranked, and
 * write_stack_table clears them. */
static int mark_stacks(struct tach_writer *w, struct scratch *sc, const struct gthread *t)
{
	struct gstate *st = w->state;
	const struct tachi_node *nodes = st->trie.nodes;
	const bool scan = t->recs.total >= st->trie.count / SCAN_NODES;
	uint64_t *r = sc->reach;
	uint32_t nw = 0, last = NONE;
	struct recwalk wk;
	struct grec rec;
	walk_start(&wk, st, t, sc);
	while (walk_next(&wk, &rec)) {
		if (rec.node == last)
			continue;
		last = rec.node;
		if (scan) {
			if (rec.node != NONE)
				tachi_bit_set(r, rec.node);
			continue;
		}
		for (uint32_t v = rec.node; v != TACHI_ROOT && !tachi_bit(r, v);
		     v = nodes[v].parent) {
			if (!r[v / 64])
				sc->words[nw++] = v / 64;
			tachi_bit_set(r, v);
		}
	}
	if (scan)
		nw = mark_by_scan(&st->trie, sc);
	else
		qsort(sc->words, nw, sizeof(*sc->words), word_cmp);
	sc->nwords = nw;
	if (wk.b.err)
		return walk_failed(w, &wk.b);
	uint32_t n = 0;
	for (uint32_t i = 0; i < nw; i++) {
		sc->rank[sc->words[i]] = n;
		n += popcount64(r[sc->words[i]]);
	}
	return TACH_OK;
}

static uint32_t stack_no(const struct scratch *sc, uint32_t node)
{
	uint64_t below = sc->reach[node / 64] & ((UINT64_C(1) << (node % 64)) - 1);
	return sc->rank[node / 64] + popcount64(below);
}

/* n bytes of text as the inside of a JSON string. */
static void j_text(struct tach_writer *w, const char *s, size_t n)
{
	bool repaired = false;
	char *b = n < (SIZE_MAX - 1) / 6 ? malloc(n * 6 + 1) : NULL;
	if (b)
		j_put(w, b, tachi_json_escape(b, s, n, &repaired));
	else
		j_put(w, "?", 1);
	free(b);
}

/* The pid member: a number in the Gecko format, a string in the processed one (whose pids
 * are strings since its version 47). */
static void j_pid(struct tach_writer *w, uint64_t pid)
{
	struct gstate *st = w->state;
	j_str(w, st->processed ? "\",\"pid\":\"" : "\",\"pid\":");
	j_u64(w, pid);
	if (st->processed)
		j_str(w, "\"");
}

/* A perf capture's thread: its comm names it ("comm (tid N)"), its pid is the process,
 * named by the comm of the thread whose tid the pid is (the process's own), else by its
 * own comm. False for threads of other inputs. */
static bool write_comm_head(struct tach_writer *w, const struct gthread *t)
{
	struct gstate *st = w->state;
	const char *name, *pname;
	size_t nl, pl;
	int32_t pid, ppid;
	if (t->placeholder || !st->src || t->comm == NONE ||
	    !tachi_comm_frame(st->src, t->comm, &name, &nl, &pid))
		return false;
	pname = name;
	pl = nl;
	const struct tachi_pathcache *c = pid >= 0 ? tachi_threads_find(&st->paths, (uint64_t)pid, t->iid) : NULL;
	const struct gthread *p = c ? &st->th[c->slot] : NULL;
	if (p && p->comm != NONE && !tachi_comm_frame(st->src, p->comm, &pname, &pl, &ppid)) {
		pname = name;
		pl = nl;
	}
	j_put(w, "\"", 1);
	j_text(w, name, nl);
	j_str(w, " (tid ");
	j_u64(w, t->tid);
	/* a second profile of one thread (Chrome traces) is told apart by its interpreter */
	if (t->iid && t->iid != (uint32_t)pid) {
		j_str(w, ", interpreter ");
		j_u64(w, t->iid);
	}
	j_str(w, ")\",\"processType\":\"default\",\"processName\":\"");
	/* without a pid (perf script prints tids only by default) the threads are the
	 * program's, when the input names one */
	if (pid < 0 && st->pname && w->meta.program)
		j_str(w, st->pname);
	else
		j_text(w, pname, pl);
	j_pid(w, pid >= 0 ? (uint64_t)pid : t->iid);
	return true;
}

/* What both formats say of a thread: its names, ids and times. */
static void write_thread_ids(struct tach_writer *w, const struct gthread *t, size_t ti,
			     bool is_main, uint64_t first)
{
	struct gstate *st = w->state;
	j_str(w, ti ? ",{\"name\":" : "{\"name\":");
	if (!is_main && write_comm_head(w, t))
		goto tid;
	char name[TACHI_THREAD_LABEL_MAX];
	size_t nl = 0;
	if (is_main) {
		memcpy(name, "GeckoMain", 9);
		nl = 9;
	} else if (t->placeholder) {
		memcpy(name, "No samples", 10);
		nl = 10;
	} else {
		nl = tachi_thread_label(name, ti + 1, t->tid, t->iid);
	}
	j_put(w, "\"", 1);
	j_put(w, name, nl);
	j_str(w, "\",\"processType\":\"default\",\"processName\":\"");
	j_str(w, st->pname ? st->pname : "Python");
	if (t->iid) {
		j_str(w, " interpreter ");
		j_u64(w, t->iid);
	}
	j_pid(w, t->iid);
tid:
	/* JSON numbers past 2^53 are rounded by the importer; such ids go as strings, which
	 * the profiler takes for a tid too. */
	j_str(w, ",\"tid\":");
	if (t->tid > (UINT64_C(1) << 53))
		j_str(w, "\"");
	j_u64(w, t->tid);
	if (t->tid > (UINT64_C(1) << 53))
		j_str(w, "\"");
	j_str(w, ",\"registerTime\":");
	if (t->recs.total)
		j_rel(w, first);
	else
		j_str(w, "0");
	j_str(w, ",\"unregisterTime\":null");
}

static void write_thread_head(struct tach_writer *w, const struct gthread *t, size_t ti,
			      bool is_main, uint64_t first)
{
	struct gstate *st = w->state;
	write_thread_ids(w, t, ti, is_main, first);
	j_str(w, ",\"samples\":{\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2");
	j_str(w, st->recorded ? ",\"threadCPUDelta\":3}" : "}");
	j_str(w, ",\"data\":[");
}

/* Samples one at a time: a record of weight N is N samples its step apart (the interval,
 * or its own time / N), and a sample is moved forward when a weighted record before it
 * overlaps it. */
struct sampwalk {
	struct recwalk rw;
	struct grec rec;
	uint64_t k, iv, prev;
	bool any;
};

static inline bool samp_next(struct sampwalk *sw, uint64_t *tt, uint64_t *elapsed)
{
	if (sw->k == 0 || sw->k == sw->rec.weight) {
		if (!walk_next(&sw->rw, &sw->rec))
			return false;
		sw->k = 0;
	}
	uint64_t span, step = sw->rec.step == STEP_IV ? sw->iv : sw->rec.step;
	if (__builtin_mul_overflow(sw->k, step, &span) ||
	    __builtin_add_overflow(sw->rec.t, span, tt))
		*tt = UINT64_MAX;
	if (sw->any && *tt < sw->prev)
		*tt = sw->prev;
	*elapsed = sw->any ? *tt - sw->prev : sw->iv;
	sw->prev = *tt;
	sw->any = true;
	sw->k++;
	return true;
}

static void samp_start(struct sampwalk *sw, const struct gstate *st, const struct gthread *t,
		       const struct scratch *sc, uint64_t iv)
{
	memset(sw, 0, sizeof(*sw));
	walk_start(&sw->rw, st, t, sc);
	sw->iv = iv;
}

/* The text of a time's whole ms, kept: consecutive times mostly share it (ten samples a ms
 * at the usual interval), and formatting it is most of a time's cost. */
struct tcache {
	uint64_t ms; /* UINT64_MAX: none yet (no time's whole ms is that) */
	size_t len;
	char txt[24];
};
#define TCACHE_INIT { UINT64_MAX, 0, { 0 } }

/* Time t (µs, absolute) in ms relative to the start time, as fmt_rel; writes up to 24
 * bytes at p whatever the length. */
static inline size_t fmt_rel_c(char *p, uint64_t t, uint64_t start, struct tcache *c)
{
	if (TACHI_UNLIKELY(t < start))
		return tachi_fmt_ms(p, true, start - t);
	uint64_t us = t - start, ms = us / 1000;
	if (ms != c->ms) {
		c->ms = ms;
		c->len = tachi_fmt_u64(c->txt, ms);
	}
	memcpy(p, c->txt, sizeof(c->txt));
	return c->len + tachi_fmt_frac(p + c->len, (unsigned)(us - ms * 1000));
}

/* The interval markers of a thread: runs of consecutive samples with a state bit. Found in
 * the samples' pass, while they are written after all the samples, and there may be about
 * as many as samples: so the closed ones are spooled, packed as a flags byte (RF_ON | kind)
 * and varints of the end's difference from the previous marker's end (ends only move
 * forward), the run's time span and its sample count. */
struct marks {
	uint8_t bits;           /* the state bits of the last sample: the open runs */
	uint64_t start[NKINDS]; /* an open run's start time */
	uint64_t first[NKINDS]; /* the number of its first sample */
	uint64_t last_end;      /* of the last spooled marker */
	uint64_t n;             /* samples so far */
	uint64_t prev;          /* the last sample's time */
	uint64_t own;           /* and its own time (the interval, or its record's step) */
};
#define MARK_BITS (TACH_STATUS_HAS_GIL | TACH_STATUS_GIL_REQUESTED | TACH_STATUS_ON_CPU | \
		   TACH_STATUS_HAS_EXCEPTION)

static int mark_put(struct gstate *st, struct scratch *sc, struct marks *mk, size_t kind,
		    uint64_t start, uint64_t end, uint64_t count)
{
	struct tachi_stream *s = &sc->marks;
	int e = tachi_stream_room(&st->spool, s, REC_MAX);
	if (e)
		return e;
	uint8_t *p = s->buf + s->len;
	p[0] = (uint8_t)(RF_ON | kind);
	size_t o = 1 + tachi_put_uvarint(p + 1, end - mk->last_end);
	o += tachi_put_uvarint(p + o, end - start);
	o += tachi_put_uvarint(p + o, count);
	s->len += o;
	s->total++;
	mk->last_end = end;
	return 0;
}

/* Sample mk->n, at time tt, has state bits unlike the last one's: the runs it ends are
 * spooled (in kind order, as they are written), the runs it starts opened. */
static int mark_change(struct gstate *st, struct scratch *sc, struct marks *mk, uint8_t bits,
		       uint64_t tt)
{
	for (size_t m = 0; m < NKINDS; m++) {
		bool on = bits & kinds[m].bit, was = mk->bits & kinds[m].bit;
		if (on && !was) {
			mk->start[m] = tt;
			mk->first[m] = mk->n;
		} else if (!on && was) {
			int e = mark_put(st, sc, mk, m, mk->start[m], tt, mk->n - mk->first[m]);
			if (e)
				return e;
		}
	}
	mk->bits = bits;
	return 0;
}

static int marks_failed(struct tach_writer *w, int e)
{
	return WFAIL(w, e == ENOMEM ? TACH_E_NOMEM : TACH_E_IO,
		     "spooling markers to a temporary file: %s", strerror(e));
}

/* The importer's traced running time (the sidebar's; its call tree counts samples, as the
 * Gecko format has no sample weights: its importer sets every weight to null) gives a
 * sample the time to the next sample of its thread, and the last one meta.interval. Where
 * the last sample's own time is not the interval, a sample without a stack at its end
 * gives it that time: a stackless sample counts in no call node. */
static void write_end(struct tach_writer *w, uint64_t t0, const struct marks *mk)
{
	struct gstate *st = w->state;
	struct tcache tc = TCACHE_INIT;
	uint64_t end;
	if (__builtin_add_overflow(mk->prev, mk->own, &end))
		end = UINT64_MAX;
	char *p = (char *)j_room(w, 96);
	size_t o = 0;
	LIT(p, o, ",[null,");
	o += fmt_rel_c(p + o, end, t0, &tc);
	LIT(p, o, ",0");
	if (st->recorded)
		LIT(p, o, ",0");
	p[o++] = ']';
	st->jlen += o;
}

/* The samples' rows, and the thread's markers into mk and the spool. */
static int write_samples(struct tach_writer *w, struct scratch *sc, const struct gthread *t,
			 struct marks *mk)
{
	struct gstate *st = w->state;
	const uint64_t iv = w->meta.interval_us, t0 = w->meta.start_time_us;
	struct sampwalk sw;
	samp_start(&sw, st, t, sc, iv);
	memset(mk, 0, sizeof(*mk));
	tachi_stream_reset(&sc->marks);
	struct tcache tc = TCACHE_INIT;
	char ivt[24], stk[16];
	size_t ivl = tachi_fmt_u64(ivt, iv), stkl = 0;
	uint32_t node = NONE - 1; /* no node: the first record sets the text */
	uint64_t tt, elapsed;
	while (samp_next(&sw, &tt, &elapsed)) {
		if (sw.rec.node != node) {
			node = sw.rec.node;
			stkl = node == NONE ? (memcpy(stk, "null", 4), 4)
					    : tachi_fmt_u32(stk, stack_no(sc, node));
		}
		char *p = (char *)j_room(w, 96);
		size_t o = 0;
		p[0] = ',';
		o += mk->n != 0;
		p[o++] = '[';
		memcpy(p + o, stk, sizeof(stk));
		o += stkl;
		p[o++] = ',';
		o += fmt_rel_c(p + o, tt, t0, &tc);
		LIT(p, o, ",0");
		if (st->recorded) {
			p[o++] = ',';
			uint64_t cpu = 0;
			/* its own time on CPU, at most the time since the last sample */
			uint64_t own = sw.rec.step == STEP_IV ? iv : sw.rec.step;
			if (sw.rec.status & TACH_STATUS_ON_CPU)
				cpu = own && elapsed > own ? own : elapsed;
			if (cpu == iv) {
				memcpy(p + o, ivt, sizeof(ivt));
				o += ivl;
			} else {
				o += tachi_fmt_u64(p + o, cpu);
			}
		}
		p[o++] = ']';
		st->jlen += o;
		mk->own = sw.rec.step == STEP_IV ? iv : sw.rec.step;
		uint8_t bits = sw.rec.status & MARK_BITS;
		int e;
		if (TACHI_UNLIKELY(bits != mk->bits) && (e = mark_change(st, sc, mk, bits, tt)))
			return marks_failed(w, e);
		mk->n++;
		if (st->err)
			return st->err;
	}
	mk->prev = sw.prev;
	if (sw.rw.b.err)
		return walk_failed(w, &sw.rw.b);
	if (mk->n && mk->own != iv)
		write_end(w, t0, mk);
	return st->err;
}

static void write_marker(struct tach_writer *w, bool comma, size_t kind, uint64_t start,
			 uint64_t end, uint64_t count, struct tcache *cs, struct tcache *ce)
{
	struct gstate *st = w->state;
	char *p = (char *)j_room(w, 256);
	size_t o = 0;
	if (comma)
		p[o++] = ',';
	p[o++] = '[';
	p[o++] = (char)('0' + kind); /* kinds and categories are single digits */
	p[o++] = ',';
	o += fmt_rel_c(p + o, start, w->meta.start_time_us, cs);
	p[o++] = ',';
	o += fmt_rel_c(p + o, end, w->meta.start_time_us, ce);
	LIT(p, o, ",1,");
	p[o++] = (char)('0' + kinds[kind].cat);
	LIT(p, o, ",{\"type\":\"PythonThreadState\",\"samples\":");
	o += tachi_fmt_u64(p + o, count);
	LIT(p, o, "}]");
	st->jlen += o;
}

/* Interval markers for the runs of samples in each state, in the order the runs end: the
 * spooled ones, then those still open after the last sample. */
static int write_markers(struct tach_writer *w, struct scratch *sc, const struct marks *mk)
{
	struct gstate *st = w->state;
	j_str(w, "]},\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
		 "\"category\":4,\"data\":5},\"data\":[");
	struct bwalk b;
	bwalk_start(&b, &st->spool, &sc->marks, sc->chunk);
	struct tcache cs = TCACHE_INIT, ce = TCACHE_INIT;
	uint64_t end = 0;
	bool comma = false;
	while (bwalk_more(&b, 4)) {
		const uint8_t *p = b.p + 1;
		uint64_t de, span, count;
		if (!bwalk_varint(&b, &p, &de) || !bwalk_varint(&b, &p, &span) ||
		    !bwalk_varint(&b, &p, &count))
			break;
		end += de;
		write_marker(w, comma, b.p[0] & 3, end - span, end, count, &cs, &ce);
		comma = true;
		b.p = p;
		if (st->err)
			return st->err;
	}
	if (b.err)
		return WFAIL(w, TACH_E_IO, "reading spooled markers back: %s", strerror(b.err));
	uint64_t fin;
	if (__builtin_add_overflow(mk->prev, mk->own, &fin))
		fin = UINT64_MAX;
	for (size_t m = 0; m < NKINDS; m++)
		if (mk->bits & kinds[m].bit) {
			write_marker(w, comma, m, mk->start[m], fin, mk->n - mk->first[m], &cs, &ce);
			comma = true;
		}
	return st->err;
}

/* The decimal text of the number after the one in s (n digits; none stands for -1). */
static void dec_next(char *s, size_t *n)
{
	size_t i = *n;
	while (i && s[i - 1] == '9')
		s[--i] = '0';
	if (i) {
		s[i - 1]++;
		return;
	}
	memmove(s + 1, s, *n);
	s[0] = *n ? '1' : '0';
	(*n)++;
}

/* The stack table of the stacks mark_stacks found, whose marks it then clears; frames get
 * thread indices in first-use order. Returns their number. */
static uint32_t write_stack_table(struct tach_writer *w, struct scratch *sc, uint32_t stamp)
{
	struct gstate *st = w->state;
	j_str(w, "]},\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[");
	const struct tachi_node *nodes = st->trie.nodes;
	uint32_t nfr = 0, last = TACHI_ROOT;
	/* The previous row's number as text: a row's number is its rank among the rows, and
	 * most rows of a deep trie (its chains) have the previous row as their prefix, so the
	 * text is counted up a row at a time rather than formatted for each. */
	char prev[16];
	size_t plen = 0;
	bool comma = false;
	for (uint32_t k = 0; k < sc->nwords; k++) {
		uint32_t base = sc->words[k] * 64;
		for (uint64_t bits = sc->reach[sc->words[k]]; bits; bits &= bits - 1) {
			uint32_t i = base + (uint32_t)__builtin_ctzll(bits), g = nodes[i].key;
			if (sc->fstamp[g] != stamp) {
				sc->fstamp[g] = stamp;
				sc->fidx[g] = nfr;
				sc->flist[nfr++] = g;
			}
			char *p = (char *)j_room(w, 48);
			size_t o = 0;
			if (comma)
				p[o++] = ',';
			comma = true;
			p[o++] = '[';
			uint32_t parent = nodes[i].parent;
			if (parent == TACHI_ROOT) {
				LIT(p, o, "null");
			} else if (parent == last) {
				memcpy(p + o, prev, sizeof(prev));
				o += plen;
			} else {
				o += tachi_fmt_u32(p + o, stack_no(sc, parent));
			}
			p[o++] = ',';
			o += tachi_fmt_u32(p + o, sc->fidx[g]);
			p[o++] = ']';
			st->jlen += o;
			dec_next(prev, &plen);
			last = i;
		}
	}
	for (uint32_t k = 0; k < sc->nwords; k++)
		sc->reach[sc->words[k]] = 0;
	return nfr;
}

static void write_frame_row(struct tach_writer *w, const struct gframe *g, uint32_t sidx,
			    bool comma)
{
	struct gstate *st = w->state;
	const struct gfunc *f = &st->funcs[g->func];
	/* Python's pseudo frames (<GC>, ~) stay in the JavaScript-only view; native code does
	 * not belong there. */
	bool plain = func_kind(st, f) == LOC_PLAIN && !func_is_native(st, f);
	j_str(w, comma ? ",[" : "[");
	j_u64(w, sidx);
	j_str(w, plain ? ",true,null,null," : ",false,null,null,");
	if (g->line >= 0)
		j_i64(w, g->line);
	else
		j_str(w, "null");
	j_str(w, ",");
	if (g->col >= 0)
		j_i64(w, g->col);
	else
		j_str(w, "null");
	j_str(w, ",");
	uint8_t cat = g->cat, sub = g->sub;
	if (!st->recorded && cat == CAT_IDLE) {
		cat = g->base_cat;
		sub = SUB_NONE;
	}
	j_u64(w, cat);
	j_str(w, ",");
	j_u64(w, sub);
	j_str(w, "]");
}

/* The frame table, then the string table: the marker names, then the location strings
 * in first-use order. */
static void write_frames_strings(struct tach_writer *w, struct scratch *sc, uint32_t nfr,
				 uint32_t stamp)
{
	struct gstate *st = w->state;
	j_str(w, "]},\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
		 "\"innerWindowID\":2,\"implementation\":3,\"line\":4,\"column\":5,"
		 "\"category\":6,\"subcategory\":7},\"data\":[");
	uint32_t nstr = NKINDS;
	size_t nslist = 0;
	for (uint32_t i = 0; i < nfr; i++) {
		const struct gframe *g = &st->frames[sc->flist[i]];
		if (sc->sstamp[g->func] != stamp) {
			sc->sstamp[g->func] = stamp;
			sc->sidx[g->func] = nstr++;
			sc->slist[nslist++] = g->func;
		}
		write_frame_row(w, g, sc->sidx[g->func], i > 0);
	}
	j_str(w, "]},\"stringTable\":[");
	for (size_t m = 0; m < NKINDS; m++) {
		j_str(w, m ? ",\"" : "\"");
		j_str(w, kinds[m].name);
		j_str(w, "\"");
	}
	for (size_t i = 0; i < nslist; i++) {
		j_str(w, ",");
		j_put(w, sc->loc + sc->loc_off[sc->slist[i]],
		      sc->loc_off[sc->slist[i] + 1] - sc->loc_off[sc->slist[i]]);
	}
	j_str(w, "]}");
}

int tachi_gecko_write_thread(struct tach_writer *w, struct scratch *sc, size_t ti,
			     bool is_main)
{
	struct gstate *st = w->state;
	struct gthread *t = &st->th[ti];
	const uint32_t stamp = (uint32_t)ti + 1;
	struct marks mk;
	int rc;
	if (t->unsorted && (rc = sort_records(w, sc, t)))
		return rc;
	if ((rc = mark_stacks(w, sc, t)))
		return rc;
	write_thread_head(w, t, ti, is_main, t->first);
	if ((rc = write_samples(w, sc, t, &mk)) || (rc = write_markers(w, sc, &mk)))
		return rc;
	uint32_t nfr = write_stack_table(w, sc, stamp);
	write_frames_strings(w, sc, nfr, stamp);
	return st->err;
}
/* Interpreters that already have their main thread. */

/* ---- the processed format ----
 * The Firefox Profiler's own format, as its app saves profiles, at version 57 (which its
 * importer upgrades to its own): column tables, strings shared by all threads, and sample
 * weights, which a Gecko profile cannot carry (its importer sets them to null, so that its
 * call tree counts samples). Here a sample weighs its own time (weightType tracing-ms): the
 * call tree shows each function's time. Functions are what the importer makes of the Gecko
 * writer's location strings, so that both outputs show the same names. */

struct sa_key {
	const char *lit;
	size_t n;
};

static bool sa_eq(void *ctx, uint32_t id, const void *k)
{
	const struct gstate *st = ctx;
	const struct sa_key *key = k;
	size_t end = id + 1 < st->sa_n ? st->sa_off[id + 1] - 1 : st->sa_len;
	return end - st->sa_off[id] == key->n && !memcmp(st->sa + st->sa_off[id], key->lit, key->n);
}

/* A JSON literal (quotes included) as a shared string, added unless there; its index, or
 * NONE. */
static uint32_t sa_lit(struct gstate *st, const char *lit, size_t n)
{
	struct sa_key key = { lit, n };
	uint64_t h = tachi_hash(lit, n);
	uint32_t id;
	if (tachi_idset_find(&st->sa_index, h, &key, sa_eq, st, &id))
		return id;
	size_t need;
	if (tachi_add_overflows(st->sa_len, n + 1, &need) ||
	    !TACHI_RESERVE(st->sa, st->sa_cap, need) ||
	    !TACHI_RESERVE(st->sa_off, st->sa_off_cap, (size_t)st->sa_n + 1) ||
	    !tachi_idset_insert(&st->sa_index, h, st->sa_n))
		return NONE;
	if (st->sa_n)
		st->sa[st->sa_len++] = ',';
	st->sa_off[st->sa_n] = st->sa_len;
	memcpy(st->sa + st->sa_len, lit, n);
	st->sa_len += n;
	return st->sa_n++;
}

/* Text added to the shared strings as location text is written (lb_text). */
static uint32_t sa_text(struct gstate *st, struct lbuf *tmp, const char *s, size_t n)
{
	tmp->len = 0;
	if (!lb_add(tmp, "\"", 1) || !lb_text(st, tmp, s, n) || !lb_add(tmp, "\"", 1))
		return NONE;
	return sa_lit(st, tmp->p, tmp->len);
}

int tachi_gecko_strings_init(struct tach_writer *w)
{
	struct gstate *st = w->state;
	char lit[64];
	for (size_t m = 0; m < NKINDS; m++) {
		int n = snprintf(lit, sizeof(lit), "\"%s\"", kinds[m].name);
		if (sa_lit(st, lit, (size_t)n) == NONE)
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	return TACH_OK;
}

enum { PS_STACK, PS_TIME, PS_WEIGHT, PS_CPU };

/* Samples weigh their time, unless some stand for intervals of a profile without one
 * (JFR's execution samples): then one each, as in the Gecko format. */
static bool by_time(const struct tach_writer *w)
{
	const struct gstate *st = w->state;
	return w->meta.interval_us || !st->untimed;
}

/* The stack column's cell of a sample, and the markers it opens or closes. */
static int p_stack_cell(struct tach_writer *w, struct scratch *sc, const struct sampwalk *sw,
			uint64_t tt, struct marks *mk, char *p, size_t *o)
{
	struct gstate *st = w->state;
	if (sw->rec.node == NONE)
		LIT(p, *o, "null");
	else
		*o += tachi_fmt_u32(p + *o, stack_no(sc, sw->rec.node));
	mk->own = sw->rec.step == STEP_IV ? w->meta.interval_us : sw->rec.step;
	uint8_t bits = sw->rec.status & MARK_BITS;
	int e;
	if (TACHI_UNLIKELY(bits != mk->bits) && (e = mark_change(st, sc, mk, bits, tt)))
		return marks_failed(w, e);
	mk->n++;
	return TACH_OK;
}

/* One column of the samples table, the samples walked as write_samples walks them: their
 * stacks (a pass that also finds the markers), times, weights (each sample's own time, in
 * ms) or CPU times (as write_samples has them). */
static int p_sample_column(struct tach_writer *w, struct scratch *sc, const struct gthread *t,
			   int col, struct marks *mk)
{
	struct gstate *st = w->state;
	const uint64_t iv = w->meta.interval_us, t0 = w->meta.start_time_us;
	struct sampwalk sw;
	struct tcache tc = TCACHE_INIT;
	uint64_t tt, elapsed, n = 0;
	samp_start(&sw, st, t, sc, iv);
	if (col == PS_STACK) {
		memset(mk, 0, sizeof(*mk));
		tachi_stream_reset(&sc->marks);
	}
	while (samp_next(&sw, &tt, &elapsed)) {
		char *p = (char *)j_room(w, 48);
		size_t o = 0;
		int rc;
		if (n++)
			p[o++] = ',';
		uint64_t own = sw.rec.step == STEP_IV ? iv : sw.rec.step;
		if (col == PS_STACK && (rc = p_stack_cell(w, sc, &sw, tt, mk, p, &o)))
			return rc;
		if (col == PS_TIME)
			o += fmt_rel_c(p + o, tt, t0, &tc);
		if (col == PS_WEIGHT && by_time(w))
			o += tachi_fmt_ms(p + o, false, own);
		else if (col == PS_WEIGHT)
			p[o++] = '1';
		if (col == PS_CPU)
			o += tachi_fmt_u64(p + o, !(sw.rec.status & TACH_STATUS_ON_CPU) ? 0
						  : own && elapsed > own ? own : elapsed);
		st->jlen += o;
		if (st->err)
			return st->err;
	}
	if (col == PS_STACK)
		mk->prev = sw.prev;
	if (sw.rw.b.err)
		return walk_failed(w, &sw.rw.b);
	return st->err;
}

static int p_samples(struct tach_writer *w, struct scratch *sc, const struct gthread *t,
		     struct marks *mk)
{
	struct gstate *st = w->state;
	static const char *const heads[] = { ",\"samples\":{\"stack\":[", "],\"time\":[",
					     "],\"weight\":[", "],\"threadCPUDelta\":[" };
	for (int c = PS_STACK; c <= (st->recorded ? PS_CPU : PS_WEIGHT); c++) {
		j_str(w, heads[c]);
		int rc = p_sample_column(w, sc, t, c, mk);
		if (rc)
			return rc;
	}
	j_str(w, by_time(w) ? "],\"weightType\":\"tracing-ms\",\"length\":"
			    : "],\"weightType\":\"samples\",\"length\":");
	j_u64(w, mk->n);
	j_str(w, "}");
	return st->err;
}

enum { PM_NAME, PM_START, PM_END, PM_PHASE, PM_CAT, PM_DATA, PM_NCOLS };

struct pmark {
	size_t kind;
	uint64_t start, end, count;
};

static void p_marker_cell(struct tach_writer *w, int col, bool comma, const struct pmark *m,
			  struct tcache *cs, struct tcache *ce)
{
	struct gstate *st = w->state;
	char *p = (char *)j_room(w, 128);
	size_t o = 0;
	if (comma)
		p[o++] = ',';
	if (col == PM_NAME) /* the kinds' names are the first shared strings */
		p[o++] = (char)('0' + m->kind);
	if (col == PM_START)
		o += fmt_rel_c(p + o, m->start, w->meta.start_time_us, cs);
	if (col == PM_END)
		o += fmt_rel_c(p + o, m->end, w->meta.start_time_us, ce);
	if (col == PM_PHASE)
		p[o++] = '1';
	if (col == PM_CAT)
		p[o++] = (char)('0' + kinds[m->kind].cat);
	if (col == PM_DATA) {
		LIT(p, o, "{\"type\":\"PythonThreadState\",\"samples\":");
		o += tachi_fmt_u64(p + o, m->count);
		p[o++] = '}';
	}
	st->jlen += o;
}

/* One column of the markers table, the markers in write_markers' order; their number. */
static int p_marker_column(struct tach_writer *w, struct scratch *sc, const struct marks *mk,
			   int col, uint64_t *count)
{
	struct gstate *st = w->state;
	struct bwalk b;
	struct tcache cs = TCACHE_INIT, ce = TCACHE_INIT;
	struct pmark m;
	uint64_t end = 0, n = 0;
	bwalk_start(&b, &st->spool, &sc->marks, sc->chunk);
	while (bwalk_more(&b, 4)) {
		const uint8_t *p = b.p + 1;
		uint64_t de, span;
		if (!bwalk_varint(&b, &p, &de) || !bwalk_varint(&b, &p, &span) ||
		    !bwalk_varint(&b, &p, &m.count))
			break;
		end += de;
		m.kind = b.p[0] & 3;
		m.start = end - span;
		m.end = end;
		p_marker_cell(w, col, n++ > 0, &m, &cs, &ce);
		b.p = p;
		if (st->err)
			return st->err;
	}
	if (b.err)
		return WFAIL(w, TACH_E_IO, "reading spooled markers back: %s", strerror(b.err));
	if (__builtin_add_overflow(mk->prev, mk->own, &m.end))
		m.end = UINT64_MAX;
	for (m.kind = 0; m.kind < NKINDS; m.kind++)
		if (mk->bits & kinds[m.kind].bit) {
			m.start = mk->start[m.kind];
			m.count = mk->n - mk->first[m.kind];
			p_marker_cell(w, col, n++ > 0, &m, &cs, &ce);
		}
	*count = n;
	return st->err;
}

static int p_markers(struct tach_writer *w, struct scratch *sc, const struct marks *mk)
{
	static const char *const heads[] = { ",\"markers\":{\"name\":[", "],\"startTime\":[",
					     "],\"endTime\":[", "],\"phase\":[", "],\"category\":[",
					     "],\"data\":[" };
	uint64_t n = 0;
	for (int c = 0; c < PM_NCOLS; c++) {
		j_str(w, heads[c]);
		int rc = p_marker_column(w, sc, mk, c, &n);
		if (rc)
			return rc;
	}
	j_str(w, "],\"length\":");
	j_u64(w, n);
	j_str(w, "}");
	return TACH_OK;
}

/* The stack table (columns of write_stack_table's rows, frames numbered as it numbers
 * them), whose marks it then clears; the number of frames. */
static uint32_t p_stack_table(struct tach_writer *w, struct scratch *sc, uint32_t stamp)
{
	const struct gstate *st = w->state;
	const struct tachi_node *nodes = st->trie.nodes;
	uint32_t nfr = 0, n = 0;
	for (int col = 0; col < 2; col++) {
		j_str(w, col ? "],\"prefix\":[" : ",\"stackTable\":{\"frame\":[");
		n = 0;
		for (uint32_t k = 0; k < sc->nwords; k++) {
			uint32_t base = sc->words[k] * 64;
			for (uint64_t bits = sc->reach[sc->words[k]]; bits; bits &= bits - 1) {
				uint32_t i = base + (uint32_t)__builtin_ctzll(bits), g = nodes[i].key;
				if (n++)
					j_put(w, ",", 1);
				if (col == 0 && sc->fstamp[g] != stamp) {
					sc->fstamp[g] = stamp;
					sc->fidx[g] = nfr;
					sc->flist[nfr++] = g;
				}
				if (col == 0)
					j_u64(w, sc->fidx[g]);
				else if (nodes[i].parent == TACHI_ROOT)
					j_str(w, "null");
				else
					j_u64(w, stack_no(sc, nodes[i].parent));
			}
		}
	}
	j_str(w, "],\"length\":");
	j_u64(w, n);
	j_str(w, "}");
	for (uint32_t k = 0; k < sc->nwords; k++)
		sc->reach[sc->words[k]] = 0;
	return nfr;
}


/* A script's origin and host as the importer's URL parser gives them, for the schemes it
 * takes for web hosts (http, https, moz-extension): the scheme and host in lower case,
 * without user info or the scheme's default port. False for any other script. */
static bool web_origin(const char *s, size_t n, struct lbuf *origin, size_t *host_at)
{
	static const char *const schemes[] = { "http", "https", "moz-extension" };
	const char *sep = memmem(s, n, "://", 3), *end = s + n;
	size_t sl = sep ? (size_t)(sep - s) : 0, which = 3;
	for (size_t i = 0; sep && i < 3; i++)
		if (strlen(schemes[i]) == sl && !strncasecmp(s, schemes[i], sl))
			which = i;
	if (which == 3)
		return false;
	const char *h = sep + 3, *e = h;
	while (e < end && *e != '/' && *e != '?' && *e != '#' && *e != '\\')
		e++;
	for (const char *q = h; q < e; q++)
		if (*q == '@')
			h = q + 1;
	size_t hl = (size_t)(e - h);
	if (which == 0 && hl > 3 && !memcmp(e - 3, ":80", 3))
		hl -= 3;
	if (which == 1 && hl > 4 && !memcmp(e - 4, ":443", 4))
		hl -= 4;
	origin->len = 0;
	if (!hl || !lb_add(origin, schemes[which], strlen(schemes[which])) ||
	    !lb_add(origin, "://", 3))
		return false;
	*host_at = origin->len;
	for (size_t i = 0; i < hl; i++) {
		char c = h[i] >= 'A' && h[i] <= 'Z' ? (char)(h[i] - 'A' + 'a') : h[i];
		if (!lb_add(origin, &c, 1))
			return false;
	}
	return true;
}

/* A script function: its name (the importer's "(root scope) FILE" for none), its file
 * (the last of a " -> " chain), line, and the file's resource. */
static bool p_script(struct gstate *st, struct lbuf *tmp, const struct gfunc *f,
		     struct pfunc *pf)
{
	size_t fl, nl, at;
	const char *file = tachi_str(st->src, f->file, &fl);
	const char *name = tachi_str(st->src, f->name, &nl);
	for (const char *a; (a = memmem(file, fl, " -> ", 4));) {
		fl -= (size_t)(a + 4 - file);
		file = a + 4;
	}
	struct lbuf b = { 0 };
	bool ok = nl ? lb_add(&b, name, nl)
		     : lb_add(&b, "(root scope) ", 13) && lb_add(&b, file, fl);
	pf->name = ok ? sa_text(st, tmp, b.p, b.len) : NONE;
	pf->file = sa_text(st, tmp, file, fl);
	pf->js = true;
	pf->line = f->min_line;
	if (web_origin(file, fl, &b, &at)) {
		pf->res_type = 3;
		pf->res_name = sa_text(st, tmp, b.p, b.len);
		pf->res_host = sa_text(st, tmp, b.p + at, b.len - at);
	} else {
		pf->res_type = 5;
		pf->res_name = pf->file;
	}
	free(b.p);
	return ok && pf->name != NONE && pf->file != NONE && pf->res_name != NONE &&
	       (pf->res_type != 3 || pf->res_host != NONE);
}

/* One function, from its kind and location string (loc, a JSON literal) as the importer
 * reads them: an address ("0x...", the whole string) in its library where the libs place
 * it, "NAME (in LIB)" a function of that library, the script form, or a label. */
static bool p_func(struct gstate *st, struct lbuf *tmp, const struct gfunc *f,
		   const char *loc, size_t loclen, struct pfunc *pf)
{
	static const char thunk[] = "non-virtual thunk to ";
	int kind = func_kind(st, f);
	bool native = func_is_native(st, f);
	size_t nl, ll;
	const char *name = tachi_str(st->src, f->name, &nl);
	memset(pf, 0, sizeof(*pf));
	pf->file = pf->res_name = pf->res_host = NONE;
	pf->line = -1;
	pf->rel = kind == LOC_PLAIN && !native;
	if (kind == LOC_JS && !native)
		return p_script(st, tmp, f, pf);
	if (loclen >= 4 && !memcmp(loc, "\"0x", 3))
		pf->name = sa_lit(st, loc, loclen);
	else if (kind == LOC_PLAIN)
		return (pf->name = sa_lit(st, loc, loclen)) != NONE;
	else if (nl >= sizeof(thunk) - 1 && !memcmp(name, thunk, sizeof(thunk) - 1))
		pf->name = sa_text(st, tmp, name + sizeof(thunk) - 1, nl - (sizeof(thunk) - 1));
	else
		pf->name = sa_text(st, tmp, name, nl);
	if (kind == LOC_LIB || kind == LOC_ADDR) {
		const char *lib = native ? native_lib(st, f, &ll) : tachi_str(st->src, f->file, &ll);
		pf->res_type = 1;
		pf->res_name = sa_text(st, tmp, lib, ll);
	}
	if (loclen >= 4 && !memcmp(loc, "\"0x", 3) && kind != LOC_ADDR)
		pf->res_type = 0;
	return pf->name != NONE && (!pf->res_type || pf->res_name != NONE);
}

/* A column of numbers or nulls (v < 0) for the n items of a table. */
static void p_ints(struct tach_writer *w, const char *head, const int64_t *v, size_t n)
{
	j_str(w, head);
	for (size_t i = 0; i < n; i++) {
		if (i)
			j_put(w, ",", 1);
		if (v[i] < 0)
			j_str(w, "null");
		else
			j_i64(w, v[i]);
	}
}

/* The frame table: the Gecko writer's rows as columns, each frame its function's. */
static int p_frames(struct tach_writer *w, struct scratch *sc, uint32_t nfr, int64_t *col)
{
	struct gstate *st = w->state;
	static const char *const heads[] = { ",\"frameTable\":{\"category\":[", "],\"subcategory\":[",
					     "],\"func\":[", "],\"line\":[", "],\"column\":[" };
	for (size_t c = 0; c < sizeof(heads) / sizeof(heads[0]); c++) {
		for (uint32_t i = 0; i < nfr; i++) {
			const struct gframe *g = &st->frames[sc->flist[i]];
			bool idle = !st->recorded && g->cat == CAT_IDLE;
			int64_t v[] = { idle ? g->base_cat : g->cat, idle ? SUB_NONE : g->sub,
					sc->sidx[g->func], g->line, g->col };
			col[i] = v[c];
		}
		p_ints(w, heads[c], col, nfr);
	}
	for (uint32_t i = 0; i < nfr; i++)
		col[i] = -1;
	p_ints(w, "],\"nativeSymbol\":[", col, nfr);
	j_str(w, "],\"address\":[");
	for (uint32_t i = 0; i < nfr; i++)
		j_str(w, i ? ",-1" : "-1");
	for (uint32_t i = 0; i < nfr; i++)
		col[i] = 0;
	p_ints(w, "],\"inlineDepth\":[", col, nfr);
	p_ints(w, "],\"innerWindowID\":[", col, nfr);
	j_str(w, "],\"length\":");
	j_u64(w, nfr);
	j_str(w, "}");
	return st->err;
}

static void p_bools(struct tach_writer *w, const char *head, const struct pfunc *pf, size_t n,
		    bool js)
{
	j_str(w, head);
	for (size_t i = 0; i < n; i++) {
		if (i)
			j_put(w, ",", 1);
		j_str(w, (js ? pf[i].js : pf[i].rel) ? "true" : "false");
	}
}

/* The function table and the resources its functions have, one each (the importer's
 * upgraders merge equal ones). */
static void p_funcs(struct tach_writer *w, const struct pfunc *pf, size_t nf, int64_t *col)
{
	for (size_t i = 0; i < nf; i++)
		col[i] = pf[i].name;
	p_ints(w, ",\"funcTable\":{\"name\":[", col, nf);
	p_bools(w, "],\"isJS\":[", pf, nf, true);
	p_bools(w, "],\"relevantForJS\":[", pf, nf, false);
	j_str(w, "],\"resource\":[");
	size_t nres = 0;
	for (size_t i = 0; i < nf; i++) {
		if (i)
			j_put(w, ",", 1);
		j_i64(w, pf[i].res_type ? (int64_t)nres++ : -1);
	}
	for (size_t i = 0; i < nf; i++)
		col[i] = pf[i].file == NONE ? -1 : (int64_t)pf[i].file;
	p_ints(w, "],\"fileName\":[", col, nf);
	for (size_t i = 0; i < nf; i++)
		col[i] = pf[i].line;
	p_ints(w, "],\"lineNumber\":[", col, nf);
	for (size_t i = 0; i < nf; i++)
		col[i] = -1;
	p_ints(w, "],\"columnNumber\":[", col, nf);
	j_str(w, "],\"length\":");
	j_u64(w, nf);
	size_t k = 0;
	for (size_t i = 0; i < nf; i++)
		if (pf[i].res_type)
			col[k++] = pf[i].res_name;
	p_ints(w, "},\"resourceTable\":{\"name\":[", col, nres);
	k = 0;
	for (size_t i = 0; i < nf; i++)
		if (pf[i].res_type)
			col[k++] = pf[i].res_host == NONE ? -1 : (int64_t)pf[i].res_host;
	p_ints(w, "],\"host\":[", col, nres);
	k = 0;
	for (size_t i = 0; i < nf; i++)
		if (pf[i].res_type)
			col[k++] = pf[i].res_type;
	p_ints(w, "],\"type\":[", col, nres);
	for (size_t i = 0; i < nres; i++)
		col[i] = -1;
	p_ints(w, "],\"lib\":[", col, nres);
	j_str(w, "],\"length\":");
	j_u64(w, nres);
	j_str(w, "},\"nativeSymbols\":{\"libIndex\":[],\"address\":[],\"name\":[],"
		 "\"functionSize\":[],\"length\":0}");
}

/* The thread's functions in first-use order of its frames (sc->sidx their numbers), as
 * the importer reads their locations, into *out. */
static int p_thread_funcs(struct tach_writer *w, struct scratch *sc, uint32_t nfr,
			  uint32_t stamp, struct pfunc **out, size_t *nf)
{
	struct gstate *st = w->state;
	struct pfunc *pf = malloc((nfr ? nfr : 1) * sizeof(*pf));
	struct lbuf tmp = { 0 };
	size_t n = 0;
	bool ok = pf != NULL;
	/* a function's strings are added once, whichever threads use it */
	if (ok && !st->pcache && !(st->pcache = calloc(st->nfuncs ? st->nfuncs : 1,
						       sizeof(*st->pcache))))
		ok = false;
	for (uint32_t i = 0; ok && i < nfr; i++) {
		uint32_t fn = st->frames[sc->flist[i]].func;
		if (sc->sstamp[fn] == stamp)
			continue;
		sc->sstamp[fn] = stamp;
		sc->sidx[fn] = (uint32_t)n;
		size_t off = sc->loc_off[fn];
		if (!st->pcache[fn].done)
			ok = p_func(st, &tmp, &st->funcs[fn], sc->loc + off,
				    sc->loc_off[fn + 1] - off, &st->pcache[fn]);
		st->pcache[fn].done = ok;
		pf[n++] = st->pcache[fn];
	}
	free(tmp.p);
	*out = pf;
	*nf = n;
	return ok ? TACH_OK : WFAIL(w, TACH_E_NOMEM, "out of memory");
}

int tachi_gecko_write_thread_processed(struct tach_writer *w, struct scratch *sc, size_t ti,
				       bool is_main)
{
	struct gstate *st = w->state;
	struct gthread *t = &st->th[ti];
	const uint32_t stamp = (uint32_t)ti + 1;
	struct marks mk;
	struct pfunc *pf = NULL;
	int64_t *col = NULL;
	size_t nf = 0;
	int rc;
	if ((t->unsorted && (rc = sort_records(w, sc, t))) || (rc = mark_stacks(w, sc, t)))
		return rc;
	write_thread_ids(w, t, ti, is_main, t->first);
	j_str(w, is_main ? ",\"isMainThread\":true" : ",\"isMainThread\":false");
	j_str(w, ",\"processStartupTime\":0,\"processShutdownTime\":null,\"pausedRanges\":[]");
	if ((rc = p_samples(w, sc, t, &mk)) || (rc = p_markers(w, sc, &mk)))
		return rc;
	uint32_t nfr = p_stack_table(w, sc, stamp);
	if ((rc = p_thread_funcs(w, sc, nfr, stamp, &pf, &nf)))
		goto out;
	col = malloc((nfr > nf ? nfr : nf ? nf : 1) * sizeof(*col));
	if (!col) {
		rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
		goto out;
	}
	p_frames(w, sc, nfr, col);
	p_funcs(w, pf, nf, col);
	j_str(w, "}");
	rc = st->err;
out:
	free(pf);
	free(col);
	return rc;
}
