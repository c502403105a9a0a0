/* The byte order of stack texts, from the trie alone. Writers that print one line per
 * stack, "L1;L2;...;Lk" root first, and sort the lines by their text (collapsed stacks, as
 * CPython's collector sorts them) would otherwise hold every line's text and compare long
 * shared prefixes again and again: on deep recursive profiles that is gigabytes of text and
 * most of the run. Here each node gets the rank its text has among all nodes' texts, from
 * one walk of the trie with each node's children in the order of their labels, so a line's
 * text compares as one integer and is written only when it is output.
 *
 * The one subtlety: a child's own line "P;L" and the lines below it "P;L;..." are not
 * adjacent in byte order when a sibling's label extends L with a byte below the separator
 * ("P;L:x" sorts between them). So each child takes two places among its siblings, "L" and
 * "L" + separator, both ranked among all labels once. Labels must not contain the separator. */
#include <stdlib.h>
#include <string.h>

#include "model/stackorder.h"
#include "base/base.h"
#include "base/hash.h"
#include "model/stacktab.h"

struct variant {
	uint32_t key;
	bool cont; /* the label followed by the separator, else by the end of the text */
};

struct vctx {
	const char *text;
	const size_t *off;
	char sep;
};

/* The byte after the label's own bytes: the separator, or -1 for the end (below any byte). */
static int after(const struct vctx *c, const struct variant *v)
{
	return v->cont ? (unsigned char)c->sep : -1;
}

static int variant_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct vctx *c = ctx;
	const struct variant *a = pa, *b = pb;
	size_t la = c->off[a->key + 1] - c->off[a->key], lb = c->off[b->key + 1] - c->off[b->key];
	size_t m = la < lb ? la : lb;
	int r = m ? memcmp(c->text + c->off[a->key], c->text + c->off[b->key], m) : 0;
	if (r)
		return r;
	int xa = la > m ? (unsigned char)c->text[c->off[a->key] + m] : after(c, a);
	int xb = lb > m ? (unsigned char)c->text[c->off[b->key] + m] : after(c, b);
	if (xa != xb)
		return xa < xb ? -1 : 1;
	/* One text goes on past the other's separator: only a label holding the separator
	 * does that, which callers rule out; keep the order total all the same. */
	if (la != lb)
		return la < lb ? -1 : 1;
	return a->cont - b->cont;
}

/* rank[2 * key + cont]: the place of the key's label variant among all of them; labels of
 * equal text get equal ranks. *dup tells whether two keys share a label. */
static uint32_t *rank_labels(const char *text, const size_t *off, size_t nkeys, char sep,
			     bool *dup)
{
	struct variant *v = malloc((2 * nkeys + 1) * sizeof(*v));
	uint32_t *rank = malloc((2 * nkeys + 1) * sizeof(*rank));
	if (!v || !rank) {
		free(v);
		free(rank);
		return NULL;
	}
	for (size_t i = 0; i < 2 * nkeys; i++)
		v[i] = (struct variant){ (uint32_t)(i / 2), i % 2 };
	struct vctx c = { text, off, sep };
	qsort_r(v, 2 * nkeys, sizeof(*v), variant_cmp, &c);
	uint32_t r = 0;
	*dup = false;
	for (size_t i = 0; i < 2 * nkeys; i++) {
		if (i && variant_cmp(&v[i - 1], &v[i], &c))
			r++;
		else if (i)
			*dup = true;
		rank[2 * (size_t)v[i].key + v[i].cont] = r;
	}
	free(v);
	return rank;
}

struct canon_key {
	uint32_t parent, rank;
};

struct canon_ctx {
	const uint32_t *cparent, *crank;
};

static bool canon_eq(void *ctx, uint32_t id, const void *k)
{
	const struct canon_ctx *c = ctx;
	const struct canon_key *key = k;
	return c->cparent[id] == key->parent && c->crank[id] == key->rank;
}

static uint64_t canon_hash(uint32_t parent, uint32_t rank)
{
	return tachi_mix64((uint64_t)parent << 32 | rank);
}


/* canon[n]: the first node whose root path prints like n's, so that nodes whose keys differ
 * but whose labels do not sort as one. Nodes come after their parents (the trie numbers them
 * as it makes them), so one pass in node order does it. */
static bool canonicalize(const struct tachi_stacktab *t, const uint32_t *rank, uint32_t *canon)
{
	struct tachi_idset set = { 0 };
	uint32_t *cparent = malloc((t->count + 1) * sizeof(*cparent));
	uint32_t *crank = malloc((t->count + 1) * sizeof(*crank));
	struct canon_ctx cc = { cparent, crank };
	bool ok = cparent && crank;
	for (size_t n = 0; ok && n < t->count; n++) {
		uint32_t p = t->nodes[n].parent == TACHI_ROOT ? TACHI_ROOT : canon[t->nodes[n].parent];
		struct canon_key k = { p, rank[2 * (size_t)t->nodes[n].key] };
		uint64_t h = canon_hash(k.parent, k.rank);
		uint32_t id;
		if (tachi_idset_find(&set, h, &k, canon_eq, &cc, &id)) {
			canon[n] = id;
			continue;
		}
		cparent[n] = k.parent;
		crank[n] = k.rank;
		canon[n] = (uint32_t)n;
		ok = tachi_idset_insert(&set, h, (uint32_t)n);
	}
	tachi_idset_free(&set);
	free(cparent);
	free(crank);
	return ok;
}

/* Children lists of the canonical nodes (the root's at index count), as one array:
 * list[start[p], start[p + 1]). */
struct kids {
	uint32_t *start;
	uint32_t *list;
};

/* canon NULL: every node is its own */
static size_t canon_parent(const struct tachi_stacktab *t, const uint32_t *canon, size_t c)
{
	uint32_t p = t->nodes[c].parent;
	return p == TACHI_ROOT ? t->count : canon ? canon[p] : p;
}

static bool kids_build(const struct tachi_stacktab *t, const uint32_t *canon, struct kids *k)
{
	size_t n = t->count;
	k->start = calloc(n + 2, sizeof(*k->start));
	k->list = malloc((n + 1) * sizeof(*k->list));
	if (!k->start || !k->list)
		return false;
	for (size_t c = 0; c < n; c++)
		if (!canon || canon[c] == c)
			k->start[canon_parent(t, canon, c) + 1]++;
	for (size_t i = 0; i <= n; i++)
		k->start[i + 1] += k->start[i];
	/* start[p] serves as p's fill cursor, ending where p + 1's list starts; then every
	 * entry moves up one place to be a start again. */
	for (size_t c = 0; c < n; c++)
		if (!canon || canon[c] == c)
			k->list[k->start[canon_parent(t, canon, c)]++] = (uint32_t)c;
	for (size_t i = n + 1; i > 0; i--)
		k->start[i] = k->start[i - 1];
	k->start[0] = 0;
	return true;
}

static void insertion_sort(uint64_t *v, size_t n)
{
	for (size_t i = 1; i < n; i++)
		for (size_t j = i; j > 0 && v[j - 1] > v[j]; j--) {
			uint64_t x = v[j];
			v[j] = v[j - 1];
			v[j - 1] = x;
		}
}

/* Sorts plain integers in place: qsort's call per comparison was a third of the walk on
 * wide tries. Quicksort on a median of three, the smaller side first by recursion, so the
 * stack stays logarithmic; short ranges by insertion. */
static void sort_items(uint64_t *v, size_t n)
{
	while (n > 16) {
		uint64_t a = v[0], b = v[n / 2], c = v[n - 1];
		uint64_t pivot = a < b ? (b < c ? b : a < c ? c : a) : (a < c ? a : b < c ? c : b);
		size_t i = 0, j = n - 1;
		for (;;) {
			while (v[i] < pivot)
				i++;
			while (v[j] > pivot)
				j--;
			if (i >= j)
				break;
			uint64_t x = v[i];
			v[i++] = v[j];
			v[j--] = x;
		}
		/* [0, j] and (j, n) */
		if (j + 1 < n - j - 1) {
			sort_items(v, j + 1);
			v += j + 1;
			n -= j + 1;
		} else {
			sort_items(v + j + 1, n - j - 1);
			n = j + 1;
		}
	}
	insertion_sort(v, n);
}

/* Pushes node's children as items (rank << 33 | child << 1 | cont), sorted: a stack of
 * item ranges, one per level of the walk. */
struct stackorder_walk {
	uint64_t *items;
	size_t len, cap;
	struct level { size_t base, pos, end; } *lv;
	size_t depth, lv_cap;
};

static bool walk_push(struct stackorder_walk *wk, const struct tachi_stacktab *t,
		      const uint32_t *rank, const struct kids *k, size_t node)
{
	size_t b = k->start[node], nk = k->start[node + 1] - b;
	if (!TACHI_RESERVE(wk->items, wk->cap, wk->len + 2 * nk) ||
	    !TACHI_RESERVE(wk->lv, wk->lv_cap, wk->depth + 1))
		return false;
	uint64_t *it = wk->items + wk->len;
	for (size_t i = 0; i < nk; i++) {
		/* the children of a wide node lie anywhere in the trie */
		if (i + TACHI_FETCH_AHEAD < nk)
			__builtin_prefetch(&t->nodes[k->list[b + i + TACHI_FETCH_AHEAD]]);
		uint32_t c = k->list[b + i];
		size_t key = t->nodes[c].key;
		it[2 * i] = (uint64_t)rank[2 * key] << 33 | (uint64_t)c << 1;
		it[2 * i + 1] = (uint64_t)rank[2 * key + 1] << 33 | (uint64_t)c << 1 | 1;
	}
	sort_items(it, 2 * nk);
	wk->lv[wk->depth++] = (struct level){ wk->len, wk->len, wk->len + 2 * nk };
	wk->len += 2 * nk;
	return true;
}

/* Goes down into node's children. An only child's own text comes before the texts below
 * it ("L" before "L;..."), so chains of only children, most of a deep trie, are numbered
 * straight down with no level of their own. */
static bool walk_down(struct stackorder_walk *wk, const struct tachi_stacktab *t,
		      const uint32_t *rank, const struct kids *k, size_t node, uint32_t *ord,
		      uint32_t *next)
{
	while (k->start[node + 1] - k->start[node] == 1) {
		node = k->list[k->start[node]];
		ord[node] = (*next)++;
	}
	return k->start[node + 1] == k->start[node] || walk_push(wk, t, rank, k, node);
}

/* Depth first, each level's items in order: a plain item numbers the child's own text,
 * a separator item goes down into the child's children. */
static bool walk_order(const struct tachi_stacktab *t, const uint32_t *rank,
		       const struct kids *k, uint32_t *ord)
{
	struct stackorder_walk wk = { 0 };
	uint32_t next = 0;
	bool ok = walk_down(&wk, t, rank, k, t->count, ord, &next);
	while (ok && wk.depth) {
		struct level *l = &wk.lv[wk.depth - 1];
		if (l->pos == l->end) {
			wk.len = l->base;
			wk.depth--;
			continue;
		}
		/* a level's items, in text order, jump about the trie: their kids' places and
		 * ranks are requested ahead, so that each chain below starts without a wait */
		if (l->pos + TACHI_FETCH_AHEAD < l->end) {
			uint32_t f = (uint32_t)(wk.items[l->pos + TACHI_FETCH_AHEAD] >> 1);
			__builtin_prefetch(&k->start[f]);
			__builtin_prefetch(&ord[f], 1);
		}
		uint64_t it = wk.items[l->pos++];
		uint32_t c = (uint32_t)(it >> 1);
		if (!(it & 1))
			ord[c] = next++;
		else
			ok = walk_down(&wk, t, rank, k, c, ord, &next);
	}
	free(wk.items);
	free(wk.lv);
	return ok;
}

bool tachi_stack_order(const struct tachi_stacktab *t, const char *text, const size_t *off,
		       size_t nkeys, char sep, uint32_t **ord_out)
{
	*ord_out = NULL;
	if (nkeys >= (1u << 30))
		return false;
	bool dup;
	uint32_t *rank = rank_labels(text, off, nkeys, sep, &dup);
	/* only keys that share a label need nodes mapped onto others */
	uint32_t *canon = rank && dup ? malloc((t->count + 1) * sizeof(*canon)) : NULL;
	uint32_t *ord = malloc((t->count + 1) * sizeof(*ord));
	struct kids k = { 0 };
	bool ok = rank && ord && (canon || !dup);
	if (ok && dup) {
		for (size_t i = 0; i < t->count; i++)
			canon[i] = (uint32_t)i;
		ok = canonicalize(t, rank, canon);
	}
	ok = ok && kids_build(t, canon, &k) && walk_order(t, rank, &k, ord);
	/* nodes that print like an earlier one share its rank */
	for (size_t i = 0; ok && dup && i < t->count; i++)
		ord[i] = ord[canon[i]];
	free(rank);
	free(canon);
	free(k.start);
	free(k.list);
	if (!ok) {
		free(ord);
		return false;
	}
	*ord_out = ord;
	return true;
}
