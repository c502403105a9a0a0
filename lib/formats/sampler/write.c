/* Apple Sampler trace writer: the layout Sampler is known to accept (kpreid 2008, see
 * sampler/read.c for the grammar). Big-endian 4-byte ids from 0x2122 upward, skipping
 * ids with a TAB, LF or CR byte (a byte-wise reader does not care, but tools that split
 * lines would); a symbol "Thread_XXXX" per thread, whose id is the hex in that thread's
 * "@threadV1.0" header; "@end" after the symbol table and at the end; one block per thread;
 * LF line ends; records "1 0 1 n ids..." leaf first, one per sample.
 *
 * The symbol table comes first, so nothing can be written before close. Memory stays
 * bounded by distinct stacks: samples are kept as (thread, stack) -> count over the stack
 * trie, and close writes each distinct stack count times, in first-seen order.
 *
 * What Sampler cannot hold, and what happens to it:
 *   - thread ids are 16-bit symbol ids: a thread's full TACH id and interpreter id go into
 *     the third field of its symbol, "tachfmt:tid=N:iid=M", which our reader maps back;
 *   - a symbol is (name, library, source, one word): frames that differ only in end line,
 *     columns or opcode become one symbol; the word holds the line (0 for none or <= 0);
 *   - TAB, LF and CR cannot appear in the text fields: they are written as '?' (one
 *     warning), which is also what the collapsed writer shows for them;
 *   - timestamps, status and the sampling interval are not stored, nor a sample's own time
 *     (a V8 sample's time to the next, a perf period): each sample counts as one, said once
 *     where the samples' times differ; values of other types (pprof's) neither, said once;
 *   - samples with an empty stack are not written (no known writer made empty records),
 *     with one warning giving their number.
 */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/io.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/linekeys.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/values.h"
#include "formats/sampler/sampler.h"

#define FIRST_ID 0x2122u
#define NONE UINT32_MAX

struct scount {
	uint64_t n;
	uint32_t next;       /* next entry of the same thread, first-seen order */
};

struct sampler_wstate {
	const struct tach_dict *src;
	struct tachi_linekeys lk; /* a symbol per (file, function, line) */
	struct tachi_stacktab trie;
	struct tachi_threads threads;
	uint32_t *head, *tail; /* per thread: its first and last count */
	size_t ht_cap;
	struct scount *counts; /* per (thread, stack) entry of the trie's whole-stack set */
	size_t ncounts, counts_cap;
	uint64_t empty;
	bool warned_ctrl;
	bool time_said;         /* a time that is not the first sample's was said (or none) */
	uint64_t each_ns;       /* the first sample's time a sample */
};

static int sw_begin(struct tach_writer *w)
{
	struct sampler_wstate *st = w->state;
	st->time_said = !w->meta.sample_time || w->meta.weight_unit;
	tachi_values_dropped(w);
	return TACH_OK;
}

/* Samples that stand for different times: a count cannot show them (said once). */
static __attribute__((noinline)) void time_differs(struct tach_writer *w,
						   const struct tach_sample *s)
{
	struct sampler_wstate *st = w->state;
	if (!st->each_ns) {
		st->each_ns = s->time_ns / s->weight + 1;
		return;
	}
	if (s->time_ns == (st->each_ns - 1) * s->weight)
		return;
	st->time_said = true;
	tachi_warn(&w->warn, TACH_POS_NONE, 0, "the sampler format has no time per sample: each "
		   "counts as one, though their times differ (%llu us at %llu us)",
		   (unsigned long long)(s->time_ns / 1000), (unsigned long long)s->timestamp_us);
}

/* ---- counts per (thread, stack) ---- */

static int add_weight(struct tach_writer *w, uint64_t *n, uint64_t weight)
{
	if (__builtin_add_overflow(*n, weight, n))
		return WFAIL(w, TACH_E_LIMIT, "more than 2^64 samples of one stack");
	return TACH_OK;
}

static int sw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct sampler_wstate *st = w->state;
	if (TACHI_UNLIKELY(!st->time_said))
		time_differs(w, s);
	if (TACHI_UNLIKELY(!s->depth))
		return add_weight(w, &st->empty, s->weight);
	/* the same dict for every sample: tach_writer_put checks it */
	if (TACHI_UNLIKELY(!st->src)) {
		st->src = d;
	}
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&st->threads, s->thread_id, s->interp_id,
						      &created);
	if (!c)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	uint32_t thr = (uint32_t)(c - st->threads.v);
	if (created) {
		size_t cap = st->ht_cap;
		if (!TACHI_RESERVE(st->head, cap, st->threads.count))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		cap = st->ht_cap;
		if (!TACHI_RESERVE(st->tail, cap, st->threads.count))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		st->ht_cap = cap;
		st->head[thr] = st->tail[thr] = NONE;
	}
	/* The same stack as this thread's previous sample: only a counter moves. */
	if (s->same_outer >= s->depth && s->depth == c->depth && c->leaf != TACHI_NOMEM_NODE)
		return add_weight(w, &st->counts[c->entry].n, s->weight);
	/* Keys no written stack uses get no symbol (see sw_close). */
	if (TACHI_UNLIKELY(st->lk.nmapped < d->frame_count)) {
		int rc = tachi_linekeys_update(&w->err, &st->lk, d);
		if (rc)
			return rc;
	}
	for (uint32_t i = 0; i < s->depth; i++)
		if (TACHI_UNLIKELY(s->frames[i] >= st->lk.nmapped))
			return WFAIL(w, TACH_E_USAGE, "frame id %u out of range", s->frames[i]);
	/* Entries number distinct (thread, stack) pairs densely in first-seen order. */
	st->trie.hint = w->ahead_hash;
	uint32_t leaf = tachi_stack_intern_ctx(&st->trie, c, s, st->lk.fmap, thr);
	if (leaf == TACHI_NOMEM_NODE)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (c->entry >= st->ncounts) {
		if (!TACHI_RESERVE(st->counts, st->counts_cap, (size_t)c->entry + 1))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		for (size_t e = st->ncounts; e <= c->entry; e++)
			st->counts[e] = (struct scount){ 0, NONE };
		st->ncounts = (size_t)c->entry + 1;
		if (st->tail[thr] == NONE)
			st->head[thr] = c->entry;
		else
			st->counts[st->tail[thr]].next = c->entry;
		st->tail[thr] = c->entry;
	}
	return add_weight(w, &st->counts[c->entry].n, s->weight);
}

/* ---- output ---- */

/* The id after id whose bytes hold no TAB, LF or CR; false past 32 bits. */
static bool next_id(uint64_t *id)
{
	for (;;) {
		if (++*id > UINT32_MAX)
			return false;
		bool ok = true;
		for (int sh = 0; sh < 32; sh += 8) {
			uint8_t b = (uint8_t)(*id >> sh);
			if (b == '\t' || b == '\n' || b == '\r')
				ok = false;
		}
		if (ok)
			return true;
	}
}

static int put_be32(struct tachi_out *o, uint32_t v)
{
	uint8_t b[4];
	tachi_wr32be(b, v);
	return tachi_out_write(o, b, 4);
}

/* Text without the bytes that end fields and lines. */
static int put_text(struct tach_writer *w, const char *s, size_t n)
{
	struct sampler_wstate *st = w->state;
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '\t' && s[i] != '\n' && s[i] != '\r')
			continue;
		if (!st->warned_ctrl) {
			st->warned_ctrl = true;
			tachi_warn(&w->warn, TACH_POS_NONE, 0,
				   "a name contains TAB, LF or CR, which Sampler cannot hold: "
				   "written as '?'");
		}
		if (tachi_out_write(&w->out, s + run, i - run) || tachi_out_byte(&w->out, '?'))
			return TACH_E_IO;
		run = i + 1;
	}
	return tachi_out_write(&w->out, s + run, n - run);
}

static int write_symbols(struct tach_writer *w, const uint32_t *tsym, const uint32_t *ksym)
{
	struct sampler_wstate *st = w->state;
	struct tachi_out *o = &w->out;
	int rc = tachi_out_str(o, "@supersamplerV1.0\n@symboltableV1.1\n");
	for (size_t t = 0; t < st->threads.count && !rc; t++) {
		if (tsym[t] == NONE)
			continue;
		char name[16], marker[64];
		snprintf(name, sizeof(name), "Thread_%04X", tsym[t]);
		snprintf(marker, sizeof(marker), "tachfmt:tid=%llu:iid=%u",
			 (unsigned long long)st->threads.v[t].tid, st->threads.v[t].iid);
		rc |= tachi_out_byte(o, '\t');
		rc |= put_be32(o, tsym[t]);
		rc |= tachi_out_byte(o, '\t');
		rc |= put_be32(o, 0);
		rc |= tachi_out_byte(o, '\t');
		rc |= tachi_out_str(o, name);
		rc |= tachi_out_byte(o, '\t');
		rc |= tachi_out_str(o, name);
		rc |= tachi_out_byte(o, '\t');
		rc |= tachi_out_str(o, marker);
		rc |= tachi_out_byte(o, '\n');
	}
	for (size_t k = 0; k < st->lk.nkeys && !rc; k++) {
		if (ksym[k] == NONE)
			continue;
		const struct tachi_linekey *key = &st->lk.keys[k];
		size_t fl, nl;
		const char *file = tachi_str(&st->lk.names, key->file, &fl);
		const char *func = tachi_str(&st->lk.names, key->func, &nl);
		rc |= tachi_out_byte(o, '\t');
		rc |= put_be32(o, ksym[k]);
		rc |= tachi_out_byte(o, '\t');
		/* the "unknown" word holds the line; 0 when there is none */
		rc |= put_be32(o, key->line > 0 ? (uint32_t)key->line : 0);
		rc |= tachi_out_byte(o, '\t');
		rc |= put_text(w, func, nl);
		rc |= tachi_out_byte(o, '\t');
		rc |= put_text(w, file, fl);
		rc |= tachi_out_byte(o, '\t');
		rc |= put_text(w, file, fl);
		rc |= tachi_out_byte(o, '\n');
	}
	rc |= tachi_out_str(o, "@end\n");
	return rc ? tachi_writer_io(w) : TACH_OK;
}

static int write_threads(struct tach_writer *w, const uint32_t *tsym, const uint32_t *ksym)
{
	struct sampler_wstate *st = w->state;
	struct tachi_out *o = &w->out;
	uint8_t *rec = NULL;
	size_t rec_cap = 0;
	int rc = 0;
	for (size_t t = 0; t < st->threads.count && !rc; t++) {
		if (tsym[t] == NONE)
			continue;
		char hdr[32];
		snprintf(hdr, sizeof(hdr), "@threadV1.0\t%04X\n", tsym[t]);
		rc |= tachi_out_str(o, hdr);
		for (uint32_t c = st->head[t]; c != NONE && !rc; c = st->counts[c].next) {
			uint32_t node = st->trie.pairs[c].leaf;
			uint32_t depth = st->trie.pairs[c].depth;
			size_t len = 18 + 4 * (size_t)depth;
			if (!TACHI_RESERVE(rec, rec_cap, len)) {
				free(rec);
				return WFAIL(w, TACH_E_NOMEM, "out of memory");
			}
			rec[0] = '\t';
			tachi_wr32be(rec + 1, 1);
			tachi_wr32be(rec + 5, 0);
			tachi_wr32be(rec + 9, 1);
			tachi_wr32be(rec + 13, depth);
			/* From the leaf up the trie is leaf first, Sampler's order. */
			for (uint32_t i = 0; i < depth; i++) {
				tachi_wr32be(rec + 17 + 4 * (size_t)i, ksym[st->trie.nodes[node].key]);
				node = st->trie.nodes[node].parent;
			}
			rec[len - 1] = '\n';
			for (uint64_t k = 0; k < st->counts[c].n && !rc; k++)
				rc |= tachi_out_write(o, rec, len);
		}
	}
	free(rec);
	rc |= tachi_out_str(o, "@end\n");
	return rc ? tachi_writer_io(w) : TACH_OK;
}

static int sw_close(struct tach_writer *w)
{
	struct sampler_wstate *st = w->state;
	if (st->empty)
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "%llu samples with an empty stack not written: Sampler records hold frames",
			   (unsigned long long)st->empty);
	uint32_t *tsym = malloc((st->threads.count + 1) * sizeof(*tsym));
	uint32_t *ksym = malloc((st->lk.nkeys + 1) * sizeof(*ksym));
	int rc = TACH_OK;
	if (!tsym || !ksym) {
		rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
		goto out;
	}
	/* Thread symbols first: their ids must fit the header's four hex digits. */
	uint64_t id = FIRST_ID - 1;
	for (size_t t = 0; t < st->threads.count; t++) {
		tsym[t] = NONE;
		if (st->head[t] == NONE)
			continue;
		if (!next_id(&id) || id > 0xFFFF) {
			rc = WFAIL(w, TACH_E_LIMIT, "more threads than Sampler's 16-bit thread ids hold "
				   "(%zu)", st->threads.count);
			goto out;
		}
		tsym[t] = (uint32_t)id;
	}
	/* Only keys on some written stack (every trie node is) get a symbol. */
	for (size_t k = 0; k < st->lk.nkeys; k++)
		ksym[k] = NONE;
	for (size_t n = 0; n < st->trie.count; n++)
		ksym[st->trie.nodes[n].key] = 0;
	for (size_t k = 0; k < st->lk.nkeys; k++) {
		if (ksym[k] == NONE)
			continue;
		if (!next_id(&id)) {
			rc = WFAIL(w, TACH_E_LIMIT, "more distinct frames than 32-bit ids hold");
			goto out;
		}
		ksym[k] = (uint32_t)id;
	}
	if (!(rc = write_symbols(w, tsym, ksym)))
		rc = write_threads(w, tsym, ksym);
out:
	free(tsym);
	free(ksym);
	return rc;
}

static void sw_free(struct tach_writer *w)
{
	struct sampler_wstate *st = w->state;
	tachi_linekeys_free(&st->lk);
	tachi_stacktab_free(&st->trie);
	tachi_threads_free(&st->threads);
	free(st->head);
	free(st->tail);
	free(st->counts);
}

const struct tachi_writer_ops tachi_sampler_writer_ops = {
	.state_size = sizeof(struct sampler_wstate),
	.begin = sw_begin,
	.put = sw_put,
	.close = sw_close,
	.free = sw_free,
	.trie_at = offsetof(struct sampler_wstate, trie) + 1,
};
