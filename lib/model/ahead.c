/* Lookahead for aggregating writers. On high-cardinality input (hundreds of thousands of
 * distinct stacks, tables far larger than the caches) each sample's lookups are a chain of
 * cache misses: the whole-stack set's slot, its entry, the (thread, stack) pair's slot, the
 * pair. One after another they bound the speed; several samples' misses in flight at once
 * do not. So once the writer's stack trie has tables that large, samples are copied into a
 * short queue and put in the same order TACHI_AHEAD calls later, and each stage's lines are
 * requested a few samples before the stage reads them. The output is the same bytes; an
 * error met while putting a queued sample is returned by a later put, or by close. */
#include <stdlib.h>
#include <string.h>

#include "model/ahead.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/format.h"

/* Deeper stacks go straight through (after the queue): copying them costs more than their
 * few lookups save, and a deep input seldom has the tables this is for. */
#define AHEAD_MAX_DEPTH 1024u

/* How far from its turn a queued sample gets stages 1, 2 and 3. */
static const unsigned stage_at[3] = { 8, 4, 2 };

static void fetch(struct tach_writer *w, struct tachi_ahead_item *it, unsigned stage)
{
	if (w->fmt->writer->fetch)
		w->fmt->writer->fetch(w, it, stage);
	else
		tachi_stacktab_ahead(tachi_writer_trie(w), it, false, 0, stage);
}

static int put_head(struct tach_writer *w)
{
	struct tachi_ahead *a = w->ahead;
	const struct tachi_writer_ops *ops = w->fmt->writer;
	for (unsigned k = 0; k < 3; k++)
		if (stage_at[k] < a->n)
			fetch(w, &a->q[(a->head + stage_at[k]) % TACHI_AHEAD], k + 1);
	struct tachi_ahead_item *it = &a->q[a->head];
	a->head = (a->head + 1) % TACHI_AHEAD;
	a->n--;
	w->ahead_hash = it->hash;
	int rc = ops->put(w, it->d, &it->s);
	w->ahead_hash = 0;
	return rc;
}

int tachi_ahead_drain(struct tach_writer *w)
{
	int rc = TACH_OK;
	while (!rc && w->ahead && w->ahead->n)
		rc = put_head(w);
	return rc;
}

int tachi_ahead_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct tachi_ahead *a = w->ahead;
	int rc;
	if (s->depth > AHEAD_MAX_DEPTH) {
		if ((rc = tachi_ahead_drain(w)))
			return rc;
		return w->fmt->writer->put(w, d, s);
	}
	if (a->n == TACHI_AHEAD && (rc = put_head(w)))
		return rc;
	struct tachi_ahead_item *it = &a->q[(a->head + a->n) % TACHI_AHEAD];
	if (s->depth > it->cap) {
		uint32_t cap = s->depth < 64 ? 64 : s->depth;
		uint32_t *f = realloc(it->frames, (size_t)cap * sizeof(*f));
		if (!f)
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		it->frames = f;
		it->cap = cap;
	}
	it->s = *s;
	if (s->depth)
		memcpy(it->frames, s->frames, (size_t)s->depth * sizeof(*it->frames));
	it->s.frames = it->frames;
	it->d = d;
	it->hash = 0;
	fetch(w, it, 0);
	a->n++;
	return TACH_OK;
}

void tachi_ahead_free(struct tachi_ahead *a)
{
	if (!a)
		return;
	for (unsigned i = 0; i < TACHI_AHEAD; i++)
		free(a->q[i].frames);
	free(a);
}
