/* Stacks as a prefix trie, root first: memory grows with distinct stacks, never with samples.
 * Aggregating writers (collapsed, pprof, Gecko) share it, and the per-thread path cache
 * makes a repeated or partly repeated stack cost only its changed inner frames. */
#include <stdlib.h>

#include "internal.h"

struct nkey {
	uint32_t parent, key;
};

static uint64_t node_hash(uint32_t parent, uint32_t key)
{
	uint64_t x = (uint64_t)parent << 32 | key;
	/* A strong 64-bit mix (from splitmix64) is enough for fixed-size keys. */
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

static bool node_eq(void *ctx, uint32_t id, const void *k)
{
	const struct tachi_stacktab *t = ctx;
	const struct nkey *n = k;
	return t->parent[id] == n->parent && t->key[id] == n->key;
}

static uint64_t node_rehash(void *ctx, uint32_t id)
{
	const struct tachi_stacktab *t = ctx;
	return node_hash(t->parent[id], t->key[id]);
}

bool tachi_stacktab_child(struct tachi_stacktab *t, uint32_t parent, uint32_t key, uint32_t *node)
{
	struct nkey k = { parent, key };
	uint64_t h = node_hash(parent, key);
	if (tachi_idset_find(&t->index, h, &k, node_eq, t, node))
		return true;
	if (t->count >= TACHI_NOMEM_NODE - 1)
		return false;
	size_t cap = t->cap;
	if (!TACHI_RESERVE(t->parent, cap, t->count + 1))
		return false;
	cap = t->cap;
	if (!TACHI_RESERVE(t->key, cap, t->count + 1))
		return false;
	cap = t->cap;
	if (!TACHI_RESERVE(t->depth, cap, t->count + 1))
		return false;
	t->cap = cap;
	uint32_t id = (uint32_t)t->count;
	t->parent[id] = parent;
	t->key[id] = key;
	t->depth[id] = parent == TACHI_ROOT ? 1 : t->depth[parent] + 1;
	if (!tachi_idset_insert(&t->index, h, id, node_rehash, t))
		return false;
	t->count++;
	*node = id;
	return true;
}

void tachi_stacktab_free(struct tachi_stacktab *t)
{
	free(t->parent);
	free(t->key);
	free(t->depth);
	tachi_idset_free(&t->index);
	memset(t, 0, sizeof(*t));
}

struct tkey {
	uint64_t tid;
	uint32_t iid;
};

static uint64_t thread_hash(uint64_t tid, uint32_t iid)
{
	return node_hash((uint32_t)(tid >> 32) ^ iid * 0x9E3779B9u, (uint32_t)tid);
}

static bool thread_eq(void *ctx, uint32_t id, const void *k)
{
	const struct tachi_threads *t = ctx;
	const struct tkey *key = k;
	return t->v[id].tid == key->tid && t->v[id].iid == key->iid;
}

static uint64_t thread_rehash(void *ctx, uint32_t id)
{
	const struct tachi_threads *t = ctx;
	return thread_hash(t->v[id].tid, t->v[id].iid);
}

struct tachi_pathcache *tachi_threads_get(struct tachi_threads *t, uint64_t tid, uint32_t iid,
					  bool *created)
{
	*created = false;
	if (t->count && t->v[t->last].tid == tid && t->v[t->last].iid == iid)
		return &t->v[t->last];
	struct tkey k = { tid, iid };
	uint64_t h = thread_hash(tid, iid);
	uint32_t id;
	if (!tachi_idset_find(&t->index, h, &k, thread_eq, t, &id)) {
		if (t->count >= UINT32_MAX - 2 || !TACHI_RESERVE(t->v, t->cap, t->count + 1))
			return NULL;
		id = (uint32_t)t->count;
		memset(&t->v[id], 0, sizeof(t->v[id]));
		t->v[id].tid = tid;
		t->v[id].iid = iid;
		if (!tachi_idset_insert(&t->index, h, id, thread_rehash, t))
			return NULL;
		t->count++;
		*created = true;
	}
	t->last = id;
	return &t->v[id];
}

void tachi_threads_free(struct tachi_threads *t)
{
	for (size_t i = 0; i < t->count; i++) {
		free(t->v[i].nodes);
		free(t->v[i].keys);
	}
	free(t->v);
	tachi_idset_free(&t->index);
	memset(t, 0, sizeof(*t));
}

uint32_t tachi_stack_intern(struct tachi_stacktab *t, struct tachi_pathcache *c,
			    const struct tach_sample *s, const uint32_t *map)
{
	uint32_t depth = s->depth;
	if (depth > c->cap) {
		size_t cap = c->cap;
		if (!TACHI_RESERVE(c->nodes, cap, depth))
			return TACHI_NOMEM_NODE;
		cap = c->cap;
		if (!TACHI_RESERVE(c->keys, cap, depth))
			return TACHI_NOMEM_NODE;
		c->cap = cap;
	}
	/* Keep the cached outer part only where the keys still agree: same_outer is a hint in
	 * frame ids, and the map may send different frames to one key anyway. */
	uint32_t keep = s->same_outer;
	if (keep > c->depth)
		keep = c->depth;
	if (keep > depth)
		keep = depth;
	uint32_t parent = keep ? c->nodes[keep - 1] : TACHI_ROOT;
	for (uint32_t i = keep; i < depth; i++) {
		/* i counts from the root; frames are innermost first. */
		uint32_t f = s->frames[depth - 1 - i];
		uint32_t key = map ? map[f] : f;
		if (i < c->depth && c->keys[i] == key) {
			parent = c->nodes[i];
			continue;
		}
		uint32_t node;
		if (!tachi_stacktab_child(t, parent, key, &node))
			return TACHI_NOMEM_NODE;
		c->nodes[i] = node;
		c->keys[i] = key;
		parent = node;
		/* Past a change the rest of the old path is stale. */
		if (i < c->depth)
			c->depth = i + 1;
	}
	c->depth = depth;
	return parent;
}
