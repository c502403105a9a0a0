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
#include "model/stacktab.h"

/* Deeper stacks go straight through (after the queue): copying them costs more than their
 * few lookups save, and a deep input seldom has the tables this is for. */
#define AHEAD_MAX_DEPTH 1024u

/* How far from its turn a queued sample gets stages 1, 2 and 3. */
static const unsigned stage_at[3] = { 8, 4, 2 };

static void fetch(struct tachi_ahead *a, struct tachi_ahead_item *it, unsigned stage)
{
	if (a->fetch)
		a->fetch(a->ctx, it, stage);
	else
		tachi_stacktab_ahead(a->trie, it, false, 0, stage);
}

static int put_head(struct tachi_ahead *a)
{
	for (unsigned k = 0; k < 3; k++)
		if (stage_at[k] < a->n)
			fetch(a, &a->q[(a->head + stage_at[k]) % TACHI_AHEAD], k + 1);
	struct tachi_ahead_item *it = &a->q[a->head];
	a->head = (a->head + 1) % TACHI_AHEAD;
	a->n--;
	return a->put(a->ctx, it->d, &it->s, it->hash);
}

int tachi_ahead_start(struct tachi_ahead **a, struct tachi_stacktab *trie, tachi_ahead_put_fn put,
		      tachi_ahead_fetch_fn fetch_fn, void *ctx, struct tachi_err *err)
{
	if (!tachi_stacktab_far(trie))
		return TACH_OK;
	if (!(*a = calloc(1, sizeof(**a))))
		return tachi_fail(err, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	(*a)->trie = trie;
	(*a)->put = put;
	(*a)->fetch = fetch_fn;
	(*a)->ctx = ctx;
	(*a)->err = err;
	return TACH_OK;
}

int tachi_ahead_drain(struct tachi_ahead *a)
{
	int rc = TACH_OK;
	while (!rc && a && a->n)
		rc = put_head(a);
	return rc;
}

int tachi_ahead_put(struct tachi_ahead *a, const struct tach_dict *d, const struct tach_sample *s)
{
	int rc;
	if (s->depth > AHEAD_MAX_DEPTH) {
		if ((rc = tachi_ahead_drain(a)))
			return rc;
		return a->put(a->ctx, d, s, 0);
	}
	if (a->n == TACHI_AHEAD && (rc = put_head(a)))
		return rc;
	struct tachi_ahead_item *it = &a->q[(a->head + a->n) % TACHI_AHEAD];
	if (s->depth > it->cap) {
		uint32_t cap = s->depth < 64 ? 64 : s->depth;
		uint32_t *f = realloc(it->frames, (size_t)cap * sizeof(*f));
		if (!f)
			return tachi_fail(a->err, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		it->frames = f;
		it->cap = cap;
	}
	it->s = *s;
	if (s->depth)
		memcpy(it->frames, s->frames, (size_t)s->depth * sizeof(*it->frames));
	it->s.frames = it->frames;
	it->d = d;
	it->hash = 0;
	fetch(a, it, 0);
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
