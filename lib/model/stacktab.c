/* Stacks as a prefix trie, root first: memory grows with distinct stacks, never with samples.
 * Aggregating writers (collapsed, pprof, Gecko, Sampler) share it. Each thread remembers its
 * last stack's path, so a repeated stack costs nothing and a stack whose inner frames
 * changed costs a step per changed frame: a look at the parent's first child, and a probe
 * of the index only past it. When many frames changed and stacks have lately been coming
 * again, a set of whole stacks already seen answers with one hash probe instead; it holds
 * only such stacks, so inputs that change a little at a time (most real ones) or seldom
 * repeat a stack (a deep recursion) keep to the trie's memory. */
#include <stdlib.h>
#include <string.h>

#include "model/stacktab.h"
#include "base/base.h"
#include "base/hash.h"

struct nkey {
	uint32_t parent, key;
};

static uint64_t node_hash(uint32_t parent, uint32_t key)
{
	return tachi_mix64((uint64_t)parent << 32 | key);
}

static bool node_eq(void *ctx, uint32_t id, const void *k)
{
	const struct tachi_stacktab *t = ctx;
	const struct nkey *n = k;
	return t->nodes[id].parent == n->parent && t->nodes[id].key == n->key;
}

static bool has_kids(const struct tachi_stacktab *t, uint32_t node)
{
	if (node == TACHI_ROOT)
		return t->root_kids;
	return node / 64 < t->kids_cap && tachi_bit(t->kids, node);
}

static bool set_kids(struct tachi_stacktab *t, uint32_t node)
{
	if (node == TACHI_ROOT) {
		t->root_kids = true;
		return true;
	}
	if (node / 64 >= t->kids_cap && !tachi_bits_hold(&t->kids, &t->kids_cap, node))
		return false;
	tachi_bit_set(t->kids, node);
	return true;
}

bool tachi_stacktab_child_slow(struct tachi_stacktab *t, uint32_t parent, uint32_t key,
			       uint32_t *node)
{
	struct nkey k = { parent, key };
	bool kids = has_kids(t, parent);
	uint64_t h = kids ? node_hash(parent, key) : 0;
	if (kids && tachi_dset_find(&t->index, h, &k, node_eq, t, node))
		return true;
	if (t->count >= TACHI_NOMEM_NODE - 1 ||
	    !TACHI_RESERVE(t->nodes, t->cap, t->count + 1))
		return false;
	uint32_t id = (uint32_t)t->count;
	/* one made right after its parent is found as the parent's id + 1 */
	if (parent + 1 != id &&
	    (!set_kids(t, parent) || !tachi_dset_insert(&t->index, node_hash(parent, key), id)))
		return false;
	t->nodes[id] = (struct tachi_node){ parent, key };
	t->count++;
	*node = id;
	return true;
}

void tachi_stacktab_drop_lookups(struct tachi_stacktab *t)
{
	free(t->kids);
	t->kids = NULL;
	t->kids_cap = 0;
	tachi_dset_free(&t->index);
	free(t->set);
	free(t->scratch);
	t->set = t->scratch = NULL;
	t->set_len = t->set_cap = t->scratch_cap = 0;
	tachi_idset_free(&t->set_index);
	tachi_dset_free(&t->pair_index);
}

uint32_t tachi_stacktab_depth(const struct tachi_stacktab *t, uint32_t node)
{
	uint32_t d = 0;
	for (; node != TACHI_ROOT; node = t->nodes[node].parent)
		d++;
	return d;
}

void tachi_stacktab_free(struct tachi_stacktab *t)
{
	free(t->nodes);
	free(t->kids);
	tachi_dset_free(&t->index);
	free(t->set);
	free(t->scratch);
	tachi_idset_free(&t->set_index);
	free(t->pairs);
	tachi_dset_free(&t->pair_index);
	memset(t, 0, sizeof(*t));
}

struct stacktab_tkey {
	uint64_t tid;
	uint32_t iid;
};

static uint64_t thread_hash(uint64_t tid, uint32_t iid)
{
	return tachi_mix64(tid ^ tachi_mix64(iid));
}

static bool thread_eq(void *ctx, uint32_t id, const void *k)
{
	const struct tachi_threads *t = ctx;
	const struct stacktab_tkey *key = k;
	return t->v[id].tid == key->tid && t->v[id].iid == key->iid;
}


struct tachi_pathcache *tachi_threads_get(struct tachi_threads *t, uint64_t tid, uint32_t iid,
					  bool *created)
{
	*created = false;
	struct tachi_tmemo *m = tachi_tmemo_slot(t->memo, tid, iid);
	if (TACHI_LIKELY(m->id1 && m->tid == tid && m->iid == iid))
		return &t->v[m->id1 - 1];
	struct stacktab_tkey k = { tid, iid };
	uint64_t h = thread_hash(tid, iid);
	uint32_t id;
	if (!tachi_idset_find(&t->index, h, &k, thread_eq, t, &id)) {
		if (t->count >= UINT32_MAX - 2 || !TACHI_RESERVE(t->v, t->cap, t->count + 1))
			return NULL;
		id = (uint32_t)t->count;
		memset(&t->v[id], 0, sizeof(t->v[id]));
		t->v[id].tid = tid;
		t->v[id].iid = iid;
		t->v[id].leaf = TACHI_NOMEM_NODE;
		if (!tachi_idset_insert(&t->index, h, id))
			return NULL;
		t->count++;
		*created = true;
	}
	*m = (struct tachi_tmemo){ tid, iid, id + 1 };
	return &t->v[id];
}

const struct tachi_pathcache *tachi_threads_find(const struct tachi_threads *t, uint64_t tid,
						 uint32_t iid)
{
	struct stacktab_tkey k = { tid, iid };
	uint32_t id;
	if (!tachi_idset_find(&t->index, thread_hash(tid, iid), &k, thread_eq, (void *)t, &id))
		return NULL;
	return &t->v[id];
}

void tachi_threads_free(struct tachi_threads *t)
{
	for (size_t i = 0; i < t->count; i++) {
		free(t->v[i].path);
		free(t->v[i].keys);
		for (uint32_t k = 0; k < t->v[i].nlmemo; k++)
			free(t->v[i].lmemo[k].v);
	}
	free(t->v);
	tachi_idset_free(&t->index);
	memset(t, 0, sizeof(*t));
}

struct stacktab_pkey {
	uint64_t ctx;
	uint32_t leaf;
};

static uint64_t pair_hash(uint64_t ctx, uint32_t leaf)
{
	return tachi_mix64(ctx ^ tachi_mix64(leaf));
}

static bool pair_eq(void *ctx, uint32_t id, const void *k)
{
	const struct tachi_stacktab *t = ctx;
	const struct stacktab_pkey *key = k;
	return t->pairs[id].leaf == key->leaf && t->pairs[id].ctx == key->ctx;
}


/* The shared index's answer, created if new; a leaf made by this sample (fresh) is in no
 * pair yet, so nothing is looked up. */
static bool pair_find_add(struct tachi_stacktab *t, uint64_t ctx, uint32_t leaf, uint32_t depth,
			  bool fresh, uint32_t *id)
{
	struct stacktab_pkey k = { ctx, leaf };
	uint64_t h = pair_hash(ctx, leaf);
	if (!fresh && tachi_dset_find(&t->pair_index, h, &k, pair_eq, t, id))
		return true;
	if (t->npairs >= UINT32_MAX - 1 || !TACHI_RESERVE(t->pairs, t->pairs_cap, t->npairs + 1))
		return false;
	*id = (uint32_t)t->npairs;
	t->pairs[*id] = (struct tachi_pair){ ctx, leaf, depth };
	if (!tachi_dset_insert(&t->pair_index, h, *id))
		return false;
	t->npairs++;
	return true;
}

static uint32_t lmemo_start(const struct tachi_lmemo *m, uint32_t leaf)
{
	return (uint32_t)(tachi_mix64(leaf) >> 32) & m->mask;
}

static void lmemo_place(struct tachi_lmemo *m, uint32_t leaf, uint32_t entry)
{
	uint32_t i = lmemo_start(m, leaf);
	while (m->v[i].entry1)
		i = (i + 1) & m->mask;
	m->v[i] = (struct tachi_lslot){ leaf, entry + 1 };
}

/* A memo's first size in slots: small, since a thread may have a memo for each of a few
 * states and a profile may have tens of thousands of threads with a few samples each. */
#define LMEMO_FIRST 8

/* Doubles m (or makes its first table); false when out of memory. */
static bool lmemo_grow(struct tachi_lmemo *m)
{
	size_t n = m->v ? ((size_t)m->mask + 1) * 2 : LMEMO_FIRST;
	struct tachi_lslot *old = m->v;
	size_t old_n = old ? (size_t)m->mask + 1 : 0;
	struct tachi_lslot *v = calloc(n, sizeof(*v));
	if (!v)
		return false;
	m->v = v;
	m->mask = (uint32_t)(n - 1);
	for (size_t i = 0; i < old_n; i++)
		if (old[i].entry1)
			lmemo_place(m, old[i].leaf, old[i].entry1 - 1);
	free(old);
	return true;
}

/* c's memo for ctx, begun if there is room for one more; NULL when there is not. */
static struct tachi_lmemo *lmemo_for(struct tachi_stacktab *t, struct tachi_pathcache *c,
				     uint64_t ctx)
{
	for (uint32_t k = 0; k < c->nlmemo; k++)
		if (c->lmemo[k].ctx == ctx)
			return &c->lmemo[k];
	if (c->nlmemo == TACHI_LMEMOS)
		return NULL;
	struct tachi_lmemo *m = &c->lmemo[c->nlmemo++];
	*m = (struct tachi_lmemo){ .ctx = ctx };
	if (t->serials < UINT32_MAX)
		m->serial = ++t->serials;
	return m;
}

/* Puts leaf's pair id into m after a miss; made says the pair is new. A memo is made only
 * once its misses have been mostly of pairs met before (gain), so that the many threads of
 * some profiles, each with a few samples, cost none. Load factor at most 1/2: when full, m
 * grows on the same condition, else, or past 2^31 slots, it starts afresh. False when out
 * of memory. */
static bool lmemo_add(struct tachi_lmemo *m, uint32_t leaf, uint32_t id, bool made)
{
	m->gain += made ? -2 : 1;
	if (!m->v && m->gain <= 0)
		return true;
	if (!m->v || ((size_t)m->count + 1) * 2 > (size_t)m->mask + 1) {
		if (m->v && (m->gain < 0 || m->mask >= UINT32_MAX / 2)) {
			memset(m->v, 0, ((size_t)m->mask + 1) * sizeof(*m->v));
			m->count = 0;
		} else if (!lmemo_grow(m)) {
			return false;
		}
		m->gain = 0;
	}
	lmemo_place(m, leaf, id);
	m->count++;
	return true;
}

/* The (ctx, leaf) pair's number: from the thread's memo for ctx (m, NULL when it has none),
 * else from the shared index. A fresh leaf (made by this sample) makes a new pair, and goes
 * into the memo only when it comes again: a deep recursion, whose every sample makes a
 * leaf, would otherwise pay a cache miss in the memo for each. Inlined into its one
 * caller's two calls: as a call it cost churning input 3% more instructions. */
static inline __attribute__((always_inline)) bool
pair_get(struct tachi_stacktab *t, struct tachi_lmemo *m, uint64_t ctx, uint32_t leaf,
	 uint32_t depth, bool fresh, uint32_t *id)
{
	if (fresh)
		return pair_find_add(t, ctx, leaf, depth, true, id);
	if (TACHI_LIKELY(m && m->v)) {
		for (uint32_t i = lmemo_start(m, leaf);; i = (i + 1) & m->mask) {
			const struct tachi_lslot *e = &m->v[i];
			if (!e->entry1)
				break;
			if (e->leaf == leaf) {
				*id = e->entry1 - 1;
				return true;
			}
		}
	}
	size_t known = t->npairs;
	return pair_find_add(t, ctx, leaf, depth, false, id) &&
	       (!m || lmemo_add(m, leaf, *id, t->npairs != known));
}

/* pair_get, through the whole-stack entry that this intern found or added when there is one
 * (t->hit): the first (thread, context) to meet the stack there keeps its pair beside the
 * frames, so that a thread meeting its own stacks again probes no memo, a cache miss a
 * sample on a deep profile whose memo is past the cache. Only the first is kept: samplers
 * take threads in turn, and an entry rewritten by each would be written on most lookups. */
static bool pair_of(struct tachi_stacktab *t, struct tachi_pathcache *c, uint64_t ctx,
		    uint32_t leaf, uint32_t depth, bool fresh, uint32_t *id)
{
	if (!t->hit)
		return pair_get(t, fresh ? NULL : lmemo_for(t, c, ctx), ctx, leaf, depth, fresh, id);
	uint8_t *e = t->set + t->hit - 1;
	struct tachi_lmemo *m = lmemo_for(t, c, ctx);
	uint32_t own = m ? m->serial : 0, cur, p1;
	memcpy(&cur, e + 4, 4);
	if (own && cur == own) {
		memcpy(&p1, e + 8, 4);
		*id = p1 - 1;
		return true;
	}
	if (!pair_get(t, m, ctx, leaf, depth, fresh, id))
		return false;
	if (own && !cur) {
		p1 = *id + 1;
		memcpy(e + 4, &own, 4);
		memcpy(e + 8, &p1, 4);
	}
	return true;
}

static bool path_reserve(struct tachi_pathcache *c, uint32_t depth)
{
	if (depth <= c->path_cap)
		return true;
	size_t cap = c->path_cap;
	if (!TACHI_RESERVE(c->path, cap, depth))
		return false;
	cap = c->path_cap;
	if (!TACHI_RESERVE(c->keys, cap, depth))
		return false;
	c->path_cap = cap;
	return true;
}

/* Makes c->path and c->keys hold the previous stack's entries from index from up, climbing
 * from the lowest valid one: after a whole-stack hit only the frames about to be replaced
 * cost a step each, not the whole depth. */
static void path_fill(const struct tachi_stacktab *t, struct tachi_pathcache *c, uint32_t from)
{
	uint32_t i = c->path_lo;
	if (i <= from)
		return;
	uint32_t node = i == c->depth ? c->leaf : t->nodes[c->path[i]].parent;
	for (; i > from; i--) {
		c->path[i - 1] = node;
		c->keys[i - 1] = t->nodes[node].key;
		node = t->nodes[node].parent;
	}
	c->path_lo = from;
}

/* Past a new node every frame is a new node too, each the first child of the one made just
 * before it: no lookup, no index, only the appends (a deep stack that leaves the known
 * ones early, as most of a real recursion's do). */
static uint32_t append_chain(struct tachi_stacktab *t, struct tachi_pathcache *c,
			     const struct tach_sample *s, const uint32_t *map, uint32_t from,
			     uint32_t parent)
{
	uint32_t depth = s->depth;
	if (t->count + (depth - from) >= TACHI_NOMEM_NODE - 1 ||
	    !TACHI_RESERVE(t->nodes, t->cap, t->count + (depth - from)))
		return TACHI_NOMEM_NODE;
	struct tachi_node *n = t->nodes;
	uint32_t id = (uint32_t)t->count;
	for (uint32_t i = from; i < depth; i++, id++) {
		uint32_t f = s->frames[depth - 1 - i];
		uint32_t key = map ? map[f] : f;
		n[id] = (struct tachi_node){ parent, key };
		c->path[i] = id;
		c->keys[i] = key;
		parent = id;
	}
	t->count = id;
	return parent;
}

/* Walks the frames past the first keep (root first) into the trie from c's path. */
static uint32_t walk(struct tachi_stacktab *t, struct tachi_pathcache *c,
		     const struct tach_sample *s, const uint32_t *map, uint32_t keep)
{
	uint32_t depth = s->depth;
	if (keep)
		path_fill(t, c, keep - 1);
	else
		c->path_lo = 0;
	uint32_t parent = keep ? c->path[keep - 1] : TACHI_ROOT;
	for (uint32_t i = keep; i < depth; i++) {
		/* frames are innermost first; the path is root first */
		uint32_t f = s->frames[depth - 1 - i];
		uint32_t key = map ? map[f] : f;
		size_t made = t->count;
		if (!tachi_stacktab_child(t, parent, key, &parent))
			return TACHI_NOMEM_NODE;
		c->path[i] = parent;
		c->keys[i] = key;
		if (t->count != made)
			return append_chain(t, c, s, map, i + 1, parent);
	}
	return parent;
}

/* ---- whole stacks: a stack that shares little with its thread's previous one costs a
 * hash of its frame ids instead of a step per frame when it comes again. Ids are stored
 * in the narrowest width that holds them (most inputs have few frames), so the set stays
 * a fraction of the trie, whose nodes take eight bytes a frame. ---- */

/* An entry's leaf, owner and pair + 1, before its key */
#define SET_HEAD 12

/* A stack to look up: hashed from its frame ids as they are, encoded only when recorded. */
struct stacktab_skey {
	const struct tach_sample *s;
	const uint8_t *p; /* NULL until encoded */
	uint32_t n;
};

/* k's frame ids, one byte each when they all fit one (the few distinct frames of most
 * deep profiles), else four, into the scratch buffer after a word of the depth and the
 * width; false when out of memory. Two bytes would save more on some inputs but compare
 * at half the speed of four in the lookups that churning inputs make by the million. */
static bool set_key(struct tachi_stacktab *t, struct stacktab_skey *k)
{
	uint32_t depth = k->s->depth, bits = 0;
	const uint32_t *fr = k->s->frames;
	if (!TACHI_RESERVE(t->scratch, t->scratch_cap, (size_t)depth * 4 + 4))
		return false;
	/* the highest bit set in any id, as the largest id has it */
	for (uint32_t i = 0; i < depth; i++)
		bits |= fr[i];
	uint32_t w = bits < 0x100 ? 1 : 4, hdr = depth << 1 | (w == 1);
	uint8_t *restrict q = t->scratch;
	memcpy(q, &hdr, 4);
	if (w == 1)
		for (uint32_t i = 0; i < depth; i++)
			q[4 + i] = (uint8_t)fr[i];
	else if (depth)
		memcpy(q + 4, fr, (size_t)depth * 4);
	k->n = 4 + depth * w;
	k->p = q;
	return true;
}

/* Compared in place, never encoded: a stored stack holds its frames at the narrowest width,
 * so an equal stack's frames all fit that width and compare equal one by one. */
static bool set_eq(void *ctx, uint32_t off, const void *key)
{
	const struct tachi_stacktab *t = ctx;
	const struct stacktab_skey *k = key;
	const uint8_t *e = t->set + off + SET_HEAD;
	const uint32_t *fr = k->s->frames;
	uint32_t hdr, depth = k->s->depth;
	memcpy(&hdr, e, 4);
	if (hdr >> 1 != depth)
		return false;
	e += 4;
	if (!(hdr & 1))
		return !depth || !memcmp(e, fr, (size_t)depth * 4);
	uint32_t diff = 0;
	for (uint32_t i = 0; i < depth; i++)
		diff |= fr[i] ^ e[i];
	return !diff;
}

/* The set keeps whole copies, where the trie shares prefixes: a deep recursion whose
 * stacks rarely come again would fill it with copies that are never asked for. So it takes
 * new stacks only while it holds at most SET_PER_NODE bytes per trie node, plus SET_SLACK. */
#define SET_PER_NODE 2
#define SET_SLACK (1u << 20)
#define SET_SHALLOW 32

/* Records the stack k (hash h) as leading to leaf, with no owner yet, while the set has
 * room; false when out of memory. */
static bool set_add(struct tachi_stacktab *t, struct stacktab_skey *k, uint64_t h, uint32_t leaf)
{
	size_t need;
	if (!set_key(t, k))
		return false;
	/* a writer's larger allowance is for shallow stacks, whose copies are small and whose
	 * walks start near the root, a miss a frame */
	size_t per = t->set_per_node && k->s->depth <= SET_SHALLOW ? t->set_per_node : SET_PER_NODE;
	if (t->set_len + (size_t)k->n + SET_HEAD > per * t->count + SET_SLACK)
		return true;
	if (tachi_add_overflows(t->set_len, (size_t)k->n + SET_HEAD, &need) || need >= UINT32_MAX ||
	    !TACHI_RESERVE(t->set, t->set_cap, need))
		return false;
	uint8_t *e = t->set + t->set_len;
	memcpy(e, &leaf, 4);
	memset(e + 4, 0, 8);
	memcpy(e + SET_HEAD, k->p, k->n);
	if (!tachi_idset_insert(&t->set_index, h, (uint32_t)t->set_len))
		return false;
	t->hit = (uint32_t)t->set_len + 1;
	t->set_len = need;
	return true;
}

static uint64_t stack_hash(const struct tach_sample *s)
{
	return s->depth ? tachi_hash(s->frames, (size_t)s->depth * sizeof(uint32_t)) : 0;
}

/* Whether looking the whole stack up is likely cheaper than walking its changed frames. A
 * lookup hashes and compares every frame, and when the stack is new it walks as well; a
 * walk step costs about as much as hashing STEP_COST frames. So inputs whose stacks seldom
 * come again (a deep recursion's random walk) walk, and those that revisit a few (churn)
 * look up. How often stacks come again is learnt from every stack past WALK_MAX, walked or
 * looked up alike, so the choice follows the input. */
#define STEP_COST 15u

static bool set_pays(const struct tachi_stacktab *t, uint32_t changed, uint32_t depth)
{
	uint64_t seen = 65536 - t->set_miss;
	return seen * changed * STEP_COST >= (uint64_t)depth << 16;
}

/* The leaf of a stack that changed more than WALK_MAX frames: looked up whole when that
 * pays (and recorded when new), else walked. A stack whose walk made many nodes is not
 * recorded on that count alone: walking it again costs a compare per frame along a chain
 * of first children, about what hashing it costs, and on a real deep profile the copies
 * took 4 MiB of 32 and 13% of the instructions (bench/gperf_deep.sh's repeated profile,
 * which does meet its stacks again, is 2% dearer without them). */
static uint32_t intern_whole(struct tachi_stacktab *t, struct tachi_pathcache *c,
			     const struct tach_sample *s, const uint32_t *map, uint32_t keep,
			     uint64_t hint)
{
	size_t nodes = t->count;
	struct stacktab_skey k = { s, NULL, 0 };
	uint32_t leaf, off;
	uint64_t h = 0;
	/* depths past 2^30 do not fit the key's header word */
	bool pays = s->depth < 1u << 30 && set_pays(t, s->depth - keep, s->depth);
	if (pays)
		h = hint ? hint : stack_hash(s);
	if (pays && tachi_idset_find(&t->set_index, h, &k, set_eq, t, &off)) {
		memcpy(&leaf, t->set + off, 4);
		t->hit = off + 1;
		c->path_lo = s->depth; /* none of the new path is known */
	} else {
		leaf = walk(t, c, s, map, keep);
		if (leaf != TACHI_NOMEM_NODE && pays && !set_add(t, &k, h, leaf))
			leaf = TACHI_NOMEM_NODE;
	}
	/* a stack seen before made no node */
	if (t->count == nodes)
		t->set_miss -= t->set_miss >> 5;
	else
		t->set_miss += (65536 - t->set_miss) >> 5;
	return leaf;
}

/* Up to this many changed frames, walking the trie beats hashing the whole stack. */
#define WALK_MAX 2

/* Interns s's stack for c's thread and records it as the thread's last one; the caller has
 * ruled out a repeat of that last stack. hint: the stack's hash if known, else 0. */
static uint32_t intern_leaf(struct tachi_stacktab *t, struct tachi_pathcache *c,
			    const struct tach_sample *s, const uint32_t *map, uint64_t hint)
{
	uint32_t depth = s->depth;
	if (!path_reserve(c, depth))
		return c->leaf = TACHI_NOMEM_NODE;
	/* The outer frames the reader says are unchanged, then as many more as still agree
	 * with the previous path (readers that give no hint get the same benefit). */
	uint32_t old = c->leaf != TACHI_NOMEM_NODE ? c->depth : 0;
	uint32_t lim = old < depth ? old : depth;
	uint32_t keep = s->same_outer < lim ? s->same_outer : lim;
	if (c->path_lo <= keep) {
		while (keep < lim) {
			uint32_t f = s->frames[depth - 1 - keep];
			if (c->keys[keep] != (map ? map[f] : f))
				break;
			keep++;
		}
	}
	uint32_t leaf = depth - keep <= WALK_MAX ? walk(t, c, s, map, keep)
						 : intern_whole(t, c, s, map, keep, hint);
	c->depth = depth;
	/* after a failure nothing of the path is trusted */
	if (leaf == TACHI_NOMEM_NODE)
		c->path_lo = depth;
	return c->leaf = leaf;
}

static bool repeats_last(const struct tachi_pathcache *c, const struct tach_sample *s)
{
	return s->same_outer >= s->depth && s->depth == c->depth && c->leaf != TACHI_NOMEM_NODE;
}

uint32_t tachi_stack_intern(struct tachi_stacktab *t, struct tachi_pathcache *c,
			    const struct tach_sample *s, const uint32_t *map)
{
	uint64_t hint = t->hint;
	if (TACHI_UNLIKELY(hint))
		t->hint = 0;
	if (repeats_last(c, s))
		return c->leaf;
	return intern_leaf(t, c, s, map, hint);
}

uint32_t tachi_stack_intern_ctx(struct tachi_stacktab *t, struct tachi_pathcache *c,
				const struct tach_sample *s, const uint32_t *map, uint64_t ctx)
{
	uint64_t hint = t->hint;
	if (TACHI_UNLIKELY(hint))
		t->hint = 0;
	if (repeats_last(c, s) && t->pairs[c->entry].ctx == ctx)
		return c->leaf;
	size_t nodes = t->count;
	t->hit = 0;
	uint32_t leaf = intern_leaf(t, c, s, map, hint);
	if (leaf == TACHI_NOMEM_NODE ||
	    !pair_of(t, c, ctx, leaf, s->depth, tachi_stacktab_fresh(nodes, leaf), &c->entry))
		return c->leaf = TACHI_NOMEM_NODE;
	return leaf;
}

/* ---- lookahead: a writer that queues samples (ahead.c) requests the lines a queued
 * sample's intern will read, a stage at a time as its turn nears, so that the cache misses
 * of several samples overlap instead of coming one after another. Requests only: the tables
 * may change before the sample's turn, and its intern finds the answer as it always does. */

/* Lookahead pays once the whole-stack set holds more stacks than this: its table and the
 * pairs' are then past the second-level cache, and lookups of whole stacks, the ones it can
 * fetch ahead, are common. Trie nodes and pairs alone do not count: a deep recursion makes
 * millions of each, walks most of its stacks a frame or two, and would only pay the copies
 * (deep 1 M samples: 14% more time). */
#define FAR_STACKS (1u << 16)
/* The whole-stack set's bytes per trie node while looking ahead: enough for the set to hold
 * every shallow stack of a high-cardinality input, whose lookups are then the ones fetched
 * ahead, where walking the trie would miss once a frame. */
#define AHEAD_SET_PER_NODE 16

bool tachi_stacktab_far(struct tachi_stacktab *t)
{
	if (t->set_index.count < FAR_STACKS)
		return false;
	t->set_per_node = AHEAD_SET_PER_NODE;
	return true;
}

static uint64_t ahead_hash(const struct tachi_stacktab *t, const struct tach_sample *s)
{
	uint32_t changed = s->same_outer < s->depth ? s->depth - s->same_outer : 0;
	/* what intern_leaf and intern_whole would decide, from the reader's hint */
	if (changed <= WALK_MAX || s->depth >= 1u << 30 || !set_pays(t, changed, s->depth))
		return 0;
	uint64_t h = stack_hash(s);
	if (t->set_index.slots)
		__builtin_prefetch(&t->set_index.slots[(uint32_t)(h >> 32) & t->set_index.mask]);
	return h;
}

/* The set entry in h's home slot when its tag is h's (most hits need no further probe). */
static const uint8_t *ahead_entry(const struct tachi_stacktab *t, uint64_t h)
{
	if (!t->set_index.slots)
		return NULL;
	uint32_t tag = (uint32_t)(h >> 32);
	const struct tachi_slot *sl = &t->set_index.slots[tag & t->set_index.mask];
	return sl->id && sl->tag == tag ? t->set + sl->id - 1 : NULL;
}

static uint32_t fetch(const struct tachi_stacktab *t, uint64_t h, uint64_t ctx, uint32_t depth,
		      unsigned stage)
{
	const uint8_t *e = h ? ahead_entry(t, h) : NULL;
	if (!e)
		return 0;
	if (stage == 1) {
		/* the entry: its head and the key's header, then up to four bytes a frame */
		size_t n = SET_HEAD + 4 + (size_t)(depth < 64 ? depth : 64) * 4;
		for (size_t off = 0; off < n; off += 64)
			__builtin_prefetch(e + off);
		return 0;
	}
	uint32_t leaf;
	memcpy(&leaf, e, 4);
	uint32_t tag = (uint32_t)(pair_hash(ctx, leaf) >> 32);
	const struct tachi_dset *pi = &t->pair_index;
	if (!pi->main.slots)
		return 0;
	const struct tachi_slot *sl = &pi->main.slots[tag & pi->main.mask];
	if (stage == 2) {
		__builtin_prefetch(sl);
		__builtin_prefetch(&pi->bloom[(tag & pi->bloom_mask) / 64]);
		return 0;
	}
	if (!sl->id || sl->tag != tag)
		return 0;
	__builtin_prefetch(&t->pairs[sl->id - 1]);
	return sl->id;
}

uint32_t tachi_stacktab_ahead(const struct tachi_stacktab *t, struct tachi_ahead_item *it,
			      bool pairs, uint64_t ctx, unsigned stage)
{
	if (!stage) {
		it->hash = ahead_hash(t, &it->s);
		return 0;
	}
	if (stage > 1 && !pairs)
		return 0;
	return fetch(t, it->hash, ctx, it->s.depth, stage);
}
