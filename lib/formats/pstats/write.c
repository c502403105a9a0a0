/* pstats writer: the marshal'd stats dict that Python's pstats.Stats(path) loads, with the
 * meaning CPython 3.15's sampling profiler gives it (Lib/profiling/sampling/
 * pstats_collector.py, what `python -m profiling.sampling --pstats` writes).
 *
 * The dict maps (filename, line, funcname) -- line 0 for a frame without a location, frames
 * merged on those three as CPython merges them, threads and interpreters together -- to
 * (direct samples, cumulative samples, direct * interval s, cumulative * interval s,
 * {caller key: samples}). A key is counted once per sample for the cumulative column
 * however often it recurses; each adjacent pair of frames adds to the inner one's callers.
 * Samples with an empty stack count nowhere. The ("__sampled__",): True entry CPython adds
 * last (its pstats then shows sample columns) is written with sampled-marker=yes only:
 * Pythons before 3.15 ("Invalid timing data") and tools such as snakeviz fail on it, and
 * 3.15 loads the file without it, so the default is the file every pstats loads.
 *
 * Order: keys as CPython's collector first meets them (samples in input order, each stack
 * innermost first), callers likewise, so the dict iterates as CPython's file does. Times are
 * the samples' own (the sum of their time_ns, in seconds: a V8 sample's time to the next);
 * where each is one interval (TACH), samples * (interval_us / 1e6) in binary floats, as
 * CPython computes them. Samples that carry no time give times of 0, said once.
 *
 * Marshal (version 3 and later, what marshal.dump writes since Python 3.4): dict '{' ... '0',
 * tuples ')' , strings 'z' (short ASCII) / 'a' (ASCII) / 'u' (UTF-8; invalid bytes become
 * U+FFFD, with one warning), ints 'i' (32-bit) or 'l' (15-bit digits), floats 'g', True 'T'.
 * Every key tuple and every name string is written once and referenced after that ('r'),
 * as marshal.dump shares objects, so a caller costs a few bytes.
 *
 * Memory: the distinct stacks (tachi_stackcount), then at close per key and per (callee,
 * caller) pair; never per sample. Close walks each distinct stack once with a generation
 * mark per key, so deep recursion costs the stack's depth, not its square.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/utf8.h"
#include "base/io.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/linekeys.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/pstats/pstats.h"
#include "formats/collapse.h"

#define NONE UINT32_MAX

enum {
	M_DICT = '{', M_NULL = '0', M_SMALL_TUPLE = ')', M_SHORT_ASCII = 'z', M_ASCII = 'a',
	M_UNICODE = 'u', M_INT = 'i', M_LONG = 'l', M_FLOAT = 'g', M_TRUE = 'T', M_REF = 'r',
	M_FLAG_REF = 0x80,
};

struct kstat {
	uint64_t direct, cum;
	uint64_t tdirect, tcum; /* their time, ns */
	uint64_t mark;     /* the last stack (1-based) that counted this key */
	uint32_t ref;      /* marshal reference index, NONE until written */
	uint32_t ncallers; /* first caller pair in the grouped order: cstart */
	size_t cstart;
};

struct cpair {
	uint32_t callee, caller;
	uint64_t n;
};

struct pstats_wstate {
	bool marker;          /* sampled-marker=yes: CPython 3.15's ("__sampled__",) entry */
	bool warned_utf8;
	struct tachi_stackcount sc;
	/* close */
	struct kstat *ks;
	uint32_t *order;     /* keys in first-seen order */
	size_t norder;
	struct cpair *pairs;
	size_t npairs, pairs_cap;
	struct tachi_idset pair_index;
	uint32_t *grouped;   /* pair ids grouped by callee, first-seen order within */
	uint32_t *str_ref;   /* names dict string id -> reference index */
	uint32_t nrefs;
	char *tmp;
	size_t tmp_cap;
};

static int pw_option(struct tach_writer *w, const char *key, const char *value)
{
	struct pstats_wstate *st = w->state;
	if (!strcmp(key, "sampled-marker")) {
		bool b;
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad sampled-marker value %s", value);
		st->marker = b;
		return TACH_OK;
	}
	return WFAIL(w, TACH_E_USAGE, "pstats writer has no option %s", key);
}

/* One context for every thread: a function's numbers are the same whichever ran it. */
static int pw_begin(struct tach_writer *w)
{
	struct pstats_wstate *st = w->state;
	st->sc.agg.no_threads = true;
	st->sc.timed = w->meta.sample_time;
	if (!st->sc.timed)
		tachi_warn(&w->warn, TACH_POS_NONE, 0, "the samples carry no time (no interval, no "
			   "time of their own): the pstats times are 0, the counts are kept");
	return TACH_OK;
}

static int pw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct pstats_wstate *st = w->state;
	return tachi_stackcount_put(w, &st->sc, d, s);
}

static void pw_fetch(struct tach_writer *w, struct tachi_ahead_item *it, unsigned stage)
{
	struct pstats_wstate *st = w->state;
	tachi_stackcount_fetch(&st->sc, it, stage);
}

/* ---- close: the counts, from each distinct stack once ---- */

static uint64_t pair_hash(uint32_t callee, uint32_t caller)
{
	return tachi_mix64((uint64_t)callee << 32 | caller);
}

static bool pair_eq(void *ctx, uint32_t id, const void *k)
{
	const struct pstats_wstate *st = ctx;
	const struct cpair *a = &st->pairs[id], *b = k;
	return a->callee == b->callee && a->caller == b->caller;
}


static bool add_pair(struct pstats_wstate *st, uint32_t callee, uint32_t caller, uint64_t n)
{
	struct cpair k = { callee, caller, 0 };
	uint64_t h = pair_hash(callee, caller);
	uint32_t id;
	if (tachi_idset_find(&st->pair_index, h, &k, pair_eq, st, &id)) {
		st->pairs[id].n += n;
		return true;
	}
	if (st->npairs >= UINT32_MAX - 1 || !TACHI_RESERVE(st->pairs, st->pairs_cap, st->npairs + 1))
		return false;
	id = (uint32_t)st->npairs;
	k.n = n;
	st->pairs[id] = k;
	if (!tachi_idset_insert(&st->pair_index, h, id))
		return false;
	st->npairs++;
	st->ks[callee].ncallers++;
	return true;
}

/* One distinct stack (number gen, 1-based) seen n times, walked leaf to root: innermost
 * first, the order in which CPython's collector meets its frames. */
static uint64_t add_sat(uint64_t a, uint64_t b)
{
	return __builtin_add_overflow(a, b, &a) ? UINT64_MAX : a;
}

static bool count_stack(struct pstats_wstate *st, uint32_t leaf, uint64_t n, uint64_t ns,
			uint64_t gen)
{
	const struct tachi_stacktab *t = &st->sc.agg.trie;
	struct kstat *inner = &st->ks[t->nodes[leaf].key];
	inner->direct += n;
	inner->tdirect = add_sat(inner->tdirect, ns);
	for (uint32_t node = leaf; node != TACHI_ROOT; node = t->nodes[node].parent) {
		uint32_t k = t->nodes[node].key;
		struct kstat *ks = &st->ks[k];
		if (ks->mark != gen) {
			if (!ks->mark)
				st->order[st->norder++] = k;
			ks->mark = gen;
			ks->cum += n;
			ks->tcum = add_sat(ks->tcum, ns);
		}
		uint32_t parent = t->nodes[node].parent;
		if (parent != TACHI_ROOT && !add_pair(st, k, t->nodes[parent].key, n))
			return false;
	}
	return true;
}

static int count_all(struct tach_writer *w)
{
	struct pstats_wstate *st = w->state;
	size_t nkeys = st->sc.agg.lk.nkeys;
	st->ks = calloc(nkeys ? nkeys : 1, sizeof(*st->ks));
	st->order = malloc((nkeys ? nkeys : 1) * sizeof(*st->order));
	if (!st->ks || !st->order)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	for (size_t k = 0; k < nkeys; k++)
		st->ks[k].ref = NONE;
	uint64_t gen = 0;
	for (size_t i = 0; i < st->sc.ncounts; i++) {
		uint32_t leaf = st->sc.agg.trie.pairs[i].leaf;
		if (!st->sc.counts[i] || leaf == TACHI_ROOT)
			continue;
		uint64_t ns = i < st->sc.ntimes ? st->sc.times[i] : 0;
		if (!count_stack(st, leaf, st->sc.counts[i], ns, ++gen))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	/* Pairs grouped by callee, stably: each callee's callers in first-seen order. */
	st->grouped = malloc((st->npairs ? st->npairs : 1) * sizeof(*st->grouped));
	if (!st->grouped)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	size_t at = 0;
	for (size_t i = 0; i < st->norder; i++) {
		struct kstat *ks = &st->ks[st->order[i]];
		ks->cstart = at;
		at += ks->ncallers;
		ks->ncallers = 0;
	}
	for (size_t p = 0; p < st->npairs; p++) {
		struct kstat *ks = &st->ks[st->pairs[p].callee];
		st->grouped[ks->cstart + ks->ncallers++] = (uint32_t)p;
	}
	return TACH_OK;
}

/* ---- marshal output ---- */

static int m_byte(struct tach_writer *w, uint8_t c)
{
	return tachi_out_byte(&w->out, c);
}

static int m_u32(struct tach_writer *w, uint32_t v)
{
	uint8_t b[4];
	tachi_wr32le(b, v);
	return tachi_out_write(&w->out, b, 4);
}

static int m_ref(struct tach_writer *w, uint32_t ref)
{
	return m_byte(w, M_REF) || m_u32(w, ref);
}

/* A positive int beyond 32 bits: 'l', the digit count, 15-bit digits least first. */
static int m_long(struct tach_writer *w, uint64_t mag)
{
	uint8_t digits[5 * 2]; /* 64 bits in five digits */
	int32_t nd = 0;
	for (; mag; mag >>= 15, nd++) {
		digits[2 * nd] = (uint8_t)(mag & 0xff);
		digits[2 * nd + 1] = (uint8_t)(mag >> 8 & 0x7f);
	}
	return m_byte(w, M_LONG) || m_u32(w, (uint32_t)nd) ||
	       tachi_out_write(&w->out, digits, (size_t)nd * 2);
}

static int m_int(struct tach_writer *w, int32_t v)
{
	return m_byte(w, M_INT) || m_u32(w, (uint32_t)v);
}

static int m_u64(struct tach_writer *w, uint64_t v)
{
	return v <= INT32_MAX ? m_int(w, (int32_t)v) : m_long(w, v);
}

static int m_float(struct tach_writer *w, double d)
{
	uint64_t bits;
	memcpy(&bits, &d, 8);
	uint8_t b[8];
	tachi_wr64le(b, bits);
	return m_byte(w, M_FLOAT) || tachi_out_write(&w->out, b, 8);
}

/* A str, repaired to UTF-8; flag adds marshal's reference flag. */
static int m_str(struct tach_writer *w, const char *s, size_t n, uint8_t flag)
{
	struct pstats_wstate *st = w->state;
	size_t room;
	if (__builtin_mul_overflow(n, 3, &room) || !TACHI_RESERVE(st->tmp, st->tmp_cap, room + 1))
		return TACH_E_NOMEM;
	bool repaired = false;
	size_t len = tachi_utf8_repair(st->tmp, s, n, &repaired);
	if (repaired && !st->warned_utf8) {
		st->warned_utf8 = true;
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "a string is not valid UTF-8: invalid bytes written as U+FFFD");
	}
	if (len > INT32_MAX)
		return TACH_E_LIMIT;
	bool ascii = true;
	for (size_t i = 0; i < len && ascii; i++)
		ascii = !((uint8_t)st->tmp[i] & 0x80);
	int rc;
	if (ascii && len < 256)
		rc = m_byte(w, M_SHORT_ASCII | flag) || m_byte(w, (uint8_t)len);
	else
		rc = m_byte(w, (ascii ? M_ASCII : M_UNICODE) | flag) || m_u32(w, (uint32_t)len);
	return rc || tachi_out_write(&w->out, st->tmp, len) ? TACH_E_IO : TACH_OK;
}

/* A names-dict string, written once and referenced after. */
static int m_name(struct tach_writer *w, uint32_t sid)
{
	struct pstats_wstate *st = w->state;
	if (st->str_ref[sid] != NONE)
		return m_ref(w, st->str_ref[sid]) ? TACH_E_IO : TACH_OK;
	st->str_ref[sid] = st->nrefs++;
	size_t n;
	const char *s = tachi_str(&st->sc.agg.lk.names, sid, &n);
	return m_str(w, s, n, M_FLAG_REF);
}

/* A key tuple (filename, line, funcname); the tuple's reference index comes before its
 * items', as marshal.loads numbers them. */
static int m_key(struct tach_writer *w, uint32_t k)
{
	struct pstats_wstate *st = w->state;
	struct kstat *ks = &st->ks[k];
	if (ks->ref != NONE)
		return m_ref(w, ks->ref) ? TACH_E_IO : TACH_OK;
	ks->ref = st->nrefs++;
	const struct tachi_linekey *lk = &st->sc.agg.lk.keys[k];
	int rc;
	if (m_byte(w, M_SMALL_TUPLE | M_FLAG_REF) || m_byte(w, 3))
		return TACH_E_IO;
	if ((rc = m_name(w, lk->file)))
		return rc;
	if (m_int(w, lk->line))
		return TACH_E_IO;
	return m_name(w, lk->func);
}

/* n samples' time of ns in seconds: as CPython computes it (interval in seconds, times
 * samples) where each sample is one interval, so that TACH input gives CPython's bytes. */
static double seconds(const struct tach_meta *m, uint64_t n, uint64_t ns, double interval_s)
{
	uint64_t each;
	if (m->interval_us && !__builtin_mul_overflow(m->interval_us, 1000, &each) &&
	    !__builtin_mul_overflow(each, n, &each) && each == ns)
		return (double)n * interval_s;
	return (double)ns / 1e9;
}

static int m_entry(struct tach_writer *w, uint32_t k, double interval_s)
{
	struct pstats_wstate *st = w->state;
	const struct kstat *ks = &st->ks[k];
	int rc = m_key(w, k);
	if (rc)
		return rc;
	if (m_byte(w, M_SMALL_TUPLE) || m_byte(w, 5) || m_u64(w, ks->direct) || m_u64(w, ks->cum) ||
	    m_float(w, seconds(&w->meta, ks->direct, ks->tdirect, interval_s)) ||
	    m_float(w, seconds(&w->meta, ks->cum, ks->tcum, interval_s)) ||
	    m_byte(w, M_DICT))
		return TACH_E_IO;
	for (uint32_t i = 0; i < ks->ncallers; i++) {
		const struct cpair *p = &st->pairs[st->grouped[ks->cstart + i]];
		if ((rc = m_key(w, p->caller)))
			return rc;
		if (m_u64(w, p->n))
			return TACH_E_IO;
	}
	return m_byte(w, M_NULL) ? TACH_E_IO : TACH_OK;
}

static int write_dict(struct tach_writer *w)
{
	struct pstats_wstate *st = w->state;
	uint32_t nstr = (uint32_t)st->sc.agg.lk.names.str_count;
	st->str_ref = malloc((nstr ? nstr : 1) * sizeof(*st->str_ref));
	if (!st->str_ref)
		return TACH_E_NOMEM;
	for (uint32_t i = 0; i < nstr; i++)
		st->str_ref[i] = NONE;
	/* As CPython computes it: interval in seconds first, then times samples. */
	double interval_s = (double)w->meta.interval_us / 1e6;
	if (m_byte(w, M_DICT))
		return TACH_E_IO;
	for (size_t i = 0; i < st->norder; i++) {
		int rc = m_entry(w, st->order[i], interval_s);
		if (rc)
			return rc;
	}
	if (st->marker &&
	    (m_byte(w, M_SMALL_TUPLE) || m_byte(w, 1) || m_str(w, "__sampled__", 11, 0) ||
	     m_byte(w, M_TRUE)))
		return TACH_E_IO;
	return m_byte(w, M_NULL) ? TACH_E_IO : TACH_OK;
}

static int pw_close(struct tach_writer *w)
{
	int rc = count_all(w);
	if (rc)
		return rc;
	rc = write_dict(w);
	if (rc == TACH_E_IO)
		return tachi_writer_io(w);
	if (rc == TACH_E_NOMEM)
		return WFAIL(w, rc, "out of memory");
	if (rc)
		return WFAIL(w, rc, "a string is too long for marshal");
	return TACH_OK;
}

static void pw_free(struct tach_writer *w)
{
	struct pstats_wstate *st = w->state;
	tachi_stackcount_free(&st->sc);
	free(st->ks);
	free(st->order);
	free(st->pairs);
	tachi_idset_free(&st->pair_index);
	free(st->grouped);
	free(st->str_ref);
	free(st->tmp);
}

const struct tachi_writer_ops tachi_pstats_writer_ops = {
	.state_size = sizeof(struct pstats_wstate),
	.option = pw_option,
	.begin = pw_begin,
	.put = pw_put,
	.close = pw_close,
	.free = pw_free,
	.trie_at = offsetof(struct pstats_wstate, sc.agg.trie) + 1,
	.fetch = pw_fetch,
};
