/* The stack trie, its whole-stack set and (context, leaf) pairs, and the per-thread
 * memory of the last stack (stacktab.c): what aggregating writers intern stacks into. */
#ifndef TACHFMT_STACKTAB_H
#define TACHFMT_STACKTAB_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tachfmt.h"
#include "base/base.h"
#include "base/hash.h"

/* ---- stack trie: (parent node, key) -> node, root-first paths ---- */
#define TACHI_ROOT UINT32_MAX
struct tachi_stacktab {
	/* Eight bytes a node: on deep stacks that share little (a real recursion's profile)
	 * the trie has a node for most frames, and its nodes are most of a writer's memory. A
	 * node made right after its parent is its first child, found as id + 1 without
	 * hashing: a new stack's frames past the known ones make such a chain. Other children
	 * go into the index, and their parent's bit in kids is set, so a node without them
	 * (most of a deep chain) is never looked up there. The root's first child is node 0
	 * (TACHI_ROOT + 1 wraps to it). */
	struct tachi_node { uint32_t parent, key; } *nodes;
	size_t count, cap;
	uint64_t *kids;
	size_t kids_cap; /* words */
	bool root_kids;
	struct tachi_dset index;
	/* Whole stacks already seen whose inner part changed a lot since the thread's previous
	 * stack: one hash probe instead of a probe per changed frame. Stored as [leaf, owner,
	 * pair + 1, depth << 1 | narrow, frames...], the source frame ids innermost first, one
	 * byte each when all fit one (narrow), else four; known by offset. Owner is the serial
	 * of the leaf memo (thread and context) that first met the stack with a pair, 0 while
	 * none has: its pair is then read beside the frames, with no memo probe. */
	uint8_t *set, *scratch;
	size_t set_len, set_cap, scratch_cap;
	struct tachi_idset set_index;
	/* New stacks per 2^16 of those that changed more than WALK_MAX frames, lately (a
	 * moving average, so 0 at first): see set_pays in stacktab.c. */
	uint32_t set_miss;
	/* (context, leaf) pairs, numbered densely in first-seen order, with the leaf's depth
	 * (which the trie's nodes do not keep). */
	struct tachi_pair { uint64_t ctx; uint32_t leaf, depth; } *pairs;
	size_t npairs, pairs_cap;
	struct tachi_dset pair_index;
	/* The next interned stack's whole-stack hash when worked out ahead
	 * (tachi_stacktab_ahead), 0 when not; good for that one stack only. */
	uint64_t hint;
	/* Set bytes allowed per trie node (see set_add in stacktab.c): raised by a writer
	 * that looks stacks up ahead, for which the set's lookups cost least. */
	uint32_t set_per_node;
	/* The set entry (offset + 1) that the stack being interned was found in or added as; 0
	 * when none. Good until the next intern. */
	uint32_t hit;
	uint32_t serials; /* leaf memos numbered so far */
};
/* Node for key under parent, created if new. Returns false on allocation failure. */
bool tachi_stacktab_child_slow(struct tachi_stacktab *t, uint32_t parent, uint32_t key,
			       uint32_t *node);
static inline bool tachi_stacktab_child(struct tachi_stacktab *t, uint32_t parent, uint32_t key,
					uint32_t *node)
{
	uint32_t n = parent + 1;
	if (TACHI_LIKELY(n < t->count && t->nodes[n].parent == parent && t->nodes[n].key == key)) {
		*node = n;
		return true;
	}
	return tachi_stacktab_child_slow(t, parent, key, node);
}
/* How many items ahead a loop over items in one order fetches what it will read of them in
 * another (an output stage reading a trie's leaves in line order): about the misses a
 * core keeps in flight. */
#define TACHI_FETCH_AHEAD 8
/* Whether leaf, interned when the trie had before nodes, was made then: such a leaf is in
 * no pair or aggregate yet, so its owner need not look it up. The root (an empty stack) is
 * never made. */
static inline bool tachi_stacktab_fresh(size_t before, uint32_t leaf)
{
	return leaf != TACHI_ROOT && leaf >= before;
}
/* Depth of node (0 for TACHI_ROOT), by a climb to the root. */
uint32_t tachi_stacktab_depth(const struct tachi_stacktab *t, uint32_t node);
void tachi_stacktab_free(struct tachi_stacktab *t);
/* Frees the indexes and the whole-stack set, keeping the nodes and pairs: for a close that
 * only reads them, with no lookup or intern after. */
void tachi_stacktab_drop_lookups(struct tachi_stacktab *t);

/* One thread's leaf -> pair memo for one context, keys inline: one cache line a probe
 * instead of the shared pair index's two. It is made, and when full grows, only if the
 * pairs it missed since it last grew were mostly ones the thread had met before, which a
 * larger memo would have held; else it starts afresh, so that a thread whose stacks seldom
 * come again keeps a small one or none. */
struct tachi_lmemo {
	uint64_t ctx;
	struct tachi_lslot { uint32_t leaf, entry1; } *v; /* entry1 0: empty */
	uint32_t mask, count;
	uint32_t serial; /* its number in the stack table, 0 past 2^32 - 1 */
	int64_t gain; /* since it was made or last grew: misses of known pairs, less two for each
		       * new one */
};
#define TACHI_LMEMOS 4
/* Per-(thread, interpreter) memory of the last stack, so a sample whose stack did not
 * change costs nothing. */
struct tachi_pathcache {
	uint64_t tid;
	uint32_t iid;
	uint32_t depth;  /* depth of the last stack interned through this entry */
	uint32_t leaf;   /* its leaf node; TACHI_NOMEM_NODE when none yet */
	uint32_t entry;  /* its (context, leaf) pair, through tachi_stack_intern_ctx */
	uint32_t slot;   /* writer's own per-thread data */
	/* Its trie path and keys, root first; entries below path_lo are stale (refilled from
	 * the leaf up when needed). */
	uint32_t *path, *keys;
	size_t path_cap;
	uint32_t path_lo;
	/* Leaf -> pair memos for the first contexts the thread's pairs came in (a writer whose
	 * context holds the thread's status has a few); pairs of any other context come from
	 * the shared index. */
	struct tachi_lmemo lmemo[TACHI_LMEMOS];
	uint32_t nlmemo;
};
/* A direct-mapped memo of recent (thread id, interpreter id) -> index + 1 (0: empty), in
 * front of a thread table's hash index: samplers take every thread in turn, so the previous
 * sample's thread is rarely the next one's. */
struct tachi_tmemo {
	uint64_t tid;
	uint32_t iid, id1;
};
#define TACHI_TMEMO_SIZE 64
static inline struct tachi_tmemo *tachi_tmemo_slot(struct tachi_tmemo *memo, uint64_t tid,
						   uint32_t iid)
{
	/* thread ids are often addresses, their low bits alike: multiply, take the top */
	return &memo[((tid + iid) * 0x9e3779b97f4a7c15ULL) >> 58];
}
struct tachi_threads {
	struct tachi_pathcache *v;
	size_t count, cap;
	struct tachi_idset index;
	struct tachi_tmemo memo[TACHI_TMEMO_SIZE];
};
/* The cache entry for (tid, iid), created in first-seen order; *created tells. */
struct tachi_pathcache *tachi_threads_get(struct tachi_threads *t, uint64_t tid, uint32_t iid,
					  bool *created);
/* The thread's entry, or NULL when it has none. */
const struct tachi_pathcache *tachi_threads_find(const struct tachi_threads *t, uint64_t tid,
						 uint32_t iid);
void tachi_threads_free(struct tachi_threads *t);
/* Interns s's stack (keys = map[frame id], or the frame id itself when map is NULL) into the
 * trie and returns its leaf node (TACHI_ROOT for an empty stack), or TACHI_NOMEM_NODE on
 * allocation failure. c remembers the result for the thread's next sample. */
uint32_t tachi_stack_intern(struct tachi_stacktab *t, struct tachi_pathcache *c,
			    const struct tach_sample *s, const uint32_t *map);
/* The same, with a caller's context value (a thread, a label set): c->entry is then the
 * index of the (ctx, leaf) pair in t->pairs, numbered densely from 0 in first-seen order,
 * so a writer can keep per-pair data in a plain array. Only this one keeps pairs; a writer
 * uses one or the other for a pathcache. */
uint32_t tachi_stack_intern_ctx(struct tachi_stacktab *t, struct tachi_pathcache *c,
				const struct tach_sample *s, const uint32_t *map, uint64_t ctx);
#define TACHI_NOMEM_NODE (UINT32_MAX - 1)
/* How many of s's frames, innermost first, are new to c's thread: the outer ones its
 * previous stack shares were seen (and mapped by a writer) with that stack. */
static inline uint32_t tachi_new_inner(const struct tachi_pathcache *c, const struct tach_sample *s)
{
	uint32_t outer = c->leaf == TACHI_NOMEM_NODE ? 0 : s->same_outer;
	if (outer > c->depth)
		outer = c->depth;
	return outer > s->depth ? 0 : s->depth - outer;
}

/* A sample queued for lookahead (model/ahead.h): a copy of it (frames point to its own
 * array), its dictionary, and the hash stage 0 worked out. */
struct tachi_ahead_item {
	struct tach_sample s;    /* frames: the copy below */
	const struct tach_dict *d;
	uint32_t *frames, cap;
	uint64_t hash;           /* the writer's, from its fetch at stage 0 */
};
/* Lookahead (the end of stacktab.c; the queue is ahead.c). far: whether t's tables are
 * past the caches, and if so, its set may hold more stacks from now on. ahead: a queued sample's stage:
 * 0 works out it->hash (0 when its intern will not look the whole stack up), put in t->hint
 * right before that intern; 1 requests its set entry; with pairs, 2 its (ctx, leaf) pair's
 * slot and 3 the pair, whose likely number + 1 it returns (0 otherwise), for a writer's
 * own per-pair data. Each stage reads what the one before requested. */
bool tachi_stacktab_far(struct tachi_stacktab *t);
uint32_t tachi_stacktab_ahead(const struct tachi_stacktab *t, struct tachi_ahead_item *it,
			      bool pairs, uint64_t ctx, unsigned stage);

#endif
