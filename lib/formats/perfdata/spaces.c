/* Processes' address spaces for the perf.data reader (read_symbols.c): which mapping holds
 * an address, as perf's maps__fixup_overlappings leaves them, a newer mapping hiding (and
 * cutting in pieces) whatever older ones it overlaps, however many.
 *
 * A space is a treap of disjoint intervals keyed by start, and persistent where it is
 * shared: a FORK gives the child its parent's root as it is, and both then copy the
 * O(log n) nodes on an insertion's paths rather than change a node the other may reach.
 * Each node records the epoch it was made in, and a process its own epoch, new at each
 * fork: a node of the process's epoch is reachable from that process alone and is changed
 * in place, so a process that does not fork costs a node or three per mapping. Memory
 * follows mappings, not processes times mappings, and a lookup is one descent. Nodes live
 * in one arena until the reader ends. */
#include <stdlib.h>

#include "base/base.h"
#include "base/hash.h"
#include "formats/perfdata/perfdata.h"

struct pd_tnode {
	uint64_t start, end;  /* [start, end), end > start */
	uint32_t map, prio;
	uint32_t l, r;        /* 0: none */
	uint32_t epoch;       /* made by the process of this epoch, which alone reaches it */
};

/* the arena's node 0 is "none" */
static uint32_t node(struct pd_spaces *a, uint64_t start, uint64_t end, uint32_t map,
		     uint32_t prio, uint32_t l, uint32_t r)
{
	if (!a->nn)
		a->nn = 1;
	if (a->nn >= UINT32_MAX - 1 || !TACHI_RESERVE(a->n, a->cap, a->nn + 1)) {
		a->failed = true;
		return 0;
	}
	a->n[a->nn] = (struct pd_tnode){ start, end, map, prio, l, r, a->cur };
	return (uint32_t)a->nn++;
}

/* t with those children: t itself when the process owns it, else a copy. */
static uint32_t with_kids(struct pd_spaces *a, uint32_t t, uint32_t l, uint32_t r)
{
	if (a->n[t].epoch == a->cur) {
		a->n[t].l = l;
		a->n[t].r = r;
		return t;
	}
	struct pd_tnode n = a->n[t];
	return node(a, n.start, n.end, n.map, n.prio, l, r);
}

uint32_t pd_space_epoch(struct pd_spaces *a)
{
	return ++a->epochs;
}

/* t's intervals starting before k (*lo) and at or after it (*hi). */
static void split(struct pd_spaces *a, uint32_t t, uint64_t k, uint32_t *lo, uint32_t *hi)
{
	if (!t || a->failed) {
		*lo = *hi = 0;
		return;
	}
	uint32_t x, y;
	if (a->n[t].start < k) {
		split(a, a->n[t].r, k, &x, &y);
		*lo = with_kids(a, t, a->n[t].l, x);
		*hi = y;
	} else {
		split(a, a->n[t].l, k, &x, &y);
		*lo = x;
		*hi = with_kids(a, t, y, a->n[t].r);
	}
}

/* Every interval of l starts before every one of r. */
static uint32_t merge(struct pd_spaces *a, uint32_t l, uint32_t r)
{
	if (!l || !r || a->failed)
		return l ? l : r;
	if (a->n[l].prio > a->n[r].prio)
		return with_kids(a, l, a->n[l].l, merge(a, a->n[l].r, r));
	return with_kids(a, r, merge(a, l, a->n[r].l), a->n[r].r);
}

static uint32_t last_of(const struct pd_spaces *a, uint32_t t)
{
	while (t && a->n[t].r)
		t = a->n[t].r;
	return t;
}

static uint32_t prio_of(uint64_t start, uint64_t seq)
{
	return (uint32_t)tachi_mix64(start * 0x9e3779b97f4a7c15ull ^ seq);
}

int pd_space_insert(struct pd_spaces *a, uint32_t *root, uint32_t epoch, uint64_t start,
		    uint64_t end, uint32_t map, uint64_t seq)
{
	if (end <= start)
		return TACH_OK;
	a->cur = epoch;
	uint32_t before, from, mid, after, piece = 0;
	split(a, *root, start, &before, &from);
	split(a, from, end, &mid, &after);
	/* what starts before and reaches into [start, end): cut to end at start, its tail
	 * past end kept */
	uint32_t b = last_of(a, before);
	if (b && a->n[b].end > start) {
		struct pd_tnode o = a->n[b];
		uint32_t head, last;
		split(a, before, o.start, &head, &last);
		before = merge(a, head, node(a, o.start, start, o.map, o.prio, 0, 0));
		if (o.end > end)
			piece = node(a, end, o.end, o.map, prio_of(end, seq), 0, 0);
	}
	/* what starts inside is hidden, but for the tail of the last past end */
	uint32_t m = last_of(a, mid);
	if (m && a->n[m].end > end)
		piece = node(a, end, a->n[m].end, a->n[m].map, prio_of(end, seq), 0, 0);
	after = merge(a, piece, after);
	uint32_t t = merge(a, before, merge(a, node(a, start, end, map, prio_of(start, seq), 0, 0), after));
	if (a->failed)
		return TACH_E_NOMEM;
	*root = t;
	return TACH_OK;
}

uint32_t pd_space_find(const struct pd_spaces *a, uint32_t root, uint64_t addr)
{
	uint32_t best = 0;
	for (uint32_t t = root; t;) {
		if (a->n[t].start <= addr) {
			best = t;
			t = a->n[t].r;
		} else {
			t = a->n[t].l;
		}
	}
	return best && addr < a->n[best].end ? a->n[best].map : UINT32_MAX;
}

/* In address order; a treap's depth is logarithmic in its size (random priorities), so
 * a depth past 128 is a damaged tree, not a real one: the walk then stops there. */
static bool walk(const struct pd_spaces *a, uint32_t t, unsigned depth,
		 bool (*fn)(void *ctx, uint32_t map), void *ctx)
{
	if (!t || depth > 128)
		return true;
	return walk(a, a->n[t].l, depth + 1, fn, ctx) && fn(ctx, a->n[t].map) &&
	       walk(a, a->n[t].r, depth + 1, fn, ctx);
}

void pd_space_walk(const struct pd_spaces *a, uint32_t root, bool (*fn)(void *ctx, uint32_t map),
		   void *ctx)
{
	walk(a, root, 0, fn, ctx);
}

void pd_spaces_free(struct pd_spaces *a)
{
	free(a->n);
	*a = (struct pd_spaces){ 0 };
}
