/* Internal interfaces shared by the library's modules. Nothing here is installed. */
#ifndef TACHFMT_INTERNAL_H
#define TACHFMT_INTERNAL_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "tachfmt.h"

#include "base.h"
#include "io.h"

struct tachi_warner {
	tach_warn_fn fn;
	void *ctx;
};
void tachi_warn(const struct tachi_warner *w, int pos_kind, uint64_t pos, const char *fmt, ...)
	TACHI_PRINTF(4, 5);

/* ---- memory ---- */
/* Grows an id map (source id -> our id) to hold index need - 1; new slots read
 * UINT32_MAX, "not mapped yet". */
bool tachi_idmap_reserve(uint32_t **map, size_t *cap, size_t need);
/* A bitmap in 64-bit words: grows *bits (cap in words) to hold bit n, new words clear. */
bool tachi_bits_hold(uint64_t **bits, size_t *cap, size_t n);
static inline bool tachi_bit(const uint64_t *bits, size_t n)
{
	return bits[n / 64] >> (n % 64) & 1;
}
static inline void tachi_bit_set(uint64_t *bits, size_t n)
{
	bits[n / 64] |= UINT64_C(1) << (n % 64);
}

static inline bool tachi_add_overflows(size_t a, size_t b, size_t *out)
{
	return __builtin_add_overflow(a, b, out);
}

/* ---- byte order helpers (never pointer casts) ---- */
static inline uint32_t tachi_rd32(const uint8_t *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}
static inline uint64_t tachi_rd64(const uint8_t *p, bool swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}
static inline uint32_t tachi_rd32be(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint32_t tachi_rd32le(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
static inline void tachi_wr32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void tachi_wr64le(uint8_t *p, uint64_t v)
{
	tachi_wr32le(p, (uint32_t)v);
	tachi_wr32le(p + 4, (uint32_t)(v >> 32));
}
static inline void tachi_wr32be(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* ---- varints (unsigned LEB128, zigzag) ---- */
/* Decodes at p (< end). Returns bytes used, 0 if incomplete or longer than 10 bytes. Like
 * CPython's reader, bits beyond 64 in a tenth byte are dropped. */
static inline size_t tachi_uvarint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	if (TACHI_LIKELY(p < end && p[0] < 0x80)) {
		*out = p[0];
		return 1;
	}
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *s = p;
	while (p < end) {
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return (size_t)(p - s);
		}
		shift += 7;
		if (shift >= 64)
			return 0;
	}
	return 0;
}
static inline size_t tachi_uvarint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}
static inline size_t tachi_put_uvarint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}
static inline uint32_t tachi_zigzag32(int32_t v)
{
	return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}
static inline int32_t tachi_unzigzag32(uint32_t z)
{
	return (int32_t)((z >> 1) ^ (0u - (z & 1)));
}

/* ---- hashing ---- */
uint64_t tachi_hash(const void *p, size_t n);
/* For fixed-size integer keys: a strong 64-bit mix (splitmix64's finalizer), far cheaper
 * than hashing bytes. */
static inline uint64_t tachi_mix64(uint64_t x)
{
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	x ^= x >> 31;
	return x;
}

/* An open-addressing set of u32 ids; the caller keeps the hash of each id and decides
 * equality. Deterministic: iteration is never done over it. */
struct tachi_idset {
	/* id + 1 (0 = empty) beside the high 32 bits of its hash, which also place it: one
	 * cache line per probe */
	struct tachi_slot { uint32_t id, tag; } *slots;
	size_t mask;
	size_t count;
};
typedef bool (*tachi_eq_fn)(void *ctx, uint32_t id, const void *key);
/* Looks key up; returns true and *id when found. Inline so that each caller's eq is too:
 * lookups sit on every writer's per-sample path. */
static inline bool tachi_idset_find(const struct tachi_idset *s, uint64_t h, const void *key,
				    tachi_eq_fn eq, void *ctx, uint32_t *id)
{
	if (!s->slots)
		return false;
	uint32_t tag = (uint32_t)(h >> 32);
	for (size_t i = tag & s->mask;; i = (i + 1) & s->mask) {
		uint32_t v = s->slots[i].id;
		if (!v)
			return false;
		if (s->slots[i].tag == tag && eq(ctx, v - 1, key)) {
			*id = v - 1;
			return true;
		}
	}
}
/* Inserts id (not already present) under hash h. */
bool tachi_idset_insert(struct tachi_idset *s, uint64_t h, uint32_t id);
void tachi_idset_free(struct tachi_idset *s);

/* An idset whose newest ids wait in a small one (pend) and move to the large one
 * TACHI_PEND_MAX at a time. An insert into a large set is a cache miss, and inputs that
 * make a new entry for most samples (a deep recursion's new stacks) would pay one each;
 * moved together, the slots are fetched ahead and the misses overlap. Such inputs also
 * look up mostly what is not there, so a bit per tag value (a Bloom filter of one hash,
 * 8 to 16 bits an id, a sixteenth of the large set's size) answers most of those without
 * a miss in the large set. */
#define TACHI_PEND_MAX 256
struct tachi_dset {
	struct tachi_idset main, pend;
	struct tachi_slot *order; /* pend's ids in the order they came */
	size_t order_cap;
	uint64_t *bloom;          /* NULL while main is empty */
	size_t bloom_mask;        /* bits - 1 */
};
static inline bool tachi_dset_find(const struct tachi_dset *s, uint64_t h, const void *key,
				   tachi_eq_fn eq, void *ctx, uint32_t *id)
{
	if (s->bloom && tachi_bit(s->bloom, (h >> 32) & s->bloom_mask) &&
	    tachi_idset_find(&s->main, h, key, eq, ctx, id))
		return true;
	return tachi_idset_find(&s->pend, h, key, eq, ctx, id);
}
bool tachi_dset_insert(struct tachi_dset *s, uint64_t h, uint32_t id);
void tachi_dset_free(struct tachi_dset *s);

/* ---- dictionary internals ---- */
struct tach_dict {
	char *bytes;         /* every string, each followed by a NUL */
	size_t bytes_len, bytes_cap;
	struct tachi_strent { uint64_t off; uint32_t len; } *strs;
	size_t str_count, str_cap;
	struct tach_frame *frames;
	size_t frame_count, frame_cap;
	struct tachi_idset str_index, frame_index;
	/* Native data, parallel to frames; NULL until a frame has some (Python profiles never
	 * pay for it). Zero entries are frames without it. */
	struct tach_frame_native *natives;
	size_t native_cap;
	struct tach_mapping *maps;   /* id 1 is maps[0] */
	size_t map_count, map_cap;
	struct tachi_idset map_index;
	bool indexed;        /* false: append-only table (TACH tables keep duplicates) */
};
/* Append without interning (a TACH table row); fails with TACH_E_NOMEM only. */
int tachi_dict_append_string(struct tach_dict *d, const char *s, size_t len);
int tachi_dict_append_frame(struct tach_dict *d, const struct tach_frame *f);
/* n may be NULL; a zero n on a dict without native data costs nothing. */
int tachi_dict_append_frame_native(struct tach_dict *d, const struct tach_frame *f,
				   const struct tach_frame_native *n);
void tachi_dict_init(struct tach_dict *d, bool indexed);
void tachi_dict_clear(struct tach_dict *d);
static inline const char *tachi_str(const struct tach_dict *d, uint32_t id, size_t *len)
{
	*len = d->strs[id].len;
	return d->bytes + d->strs[id].off;
}

struct tachi_ahead_item;
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
/* Lookahead (the end of stacktab.c; ahead.c). far: whether t's tables are past the caches,
 * and if so, its set may hold more stacks from now on. ahead: a queued sample's stage:
 * 0 works out it->hash (0 when its intern will not look the whole stack up), put in t->hint
 * right before that intern; 1 requests its set entry; with pairs, 2 its (ctx, leaf) pair's
 * slot and 3 the pair, whose likely number + 1 it returns (0 otherwise), for a writer's
 * own per-pair data. Each stage reads what the one before requested. */
bool tachi_stacktab_far(struct tachi_stacktab *t);
uint32_t tachi_stacktab_ahead(const struct tachi_stacktab *t, struct tachi_ahead_item *it,
			      bool pairs, uint64_t ctx, unsigned stage);
/* How many of s's frames, innermost first, are new to c's thread: the outer ones its
 * previous stack shares were seen (and mapped by a writer) with that stack. */
static inline uint32_t tachi_new_inner(const struct tachi_pathcache *c, const struct tach_sample *s)
{
	uint32_t outer = c->leaf == TACHI_NOMEM_NODE ? 0 : s->same_outer;
	if (outer > c->depth)
		outer = c->depth;
	return outer > s->depth ? 0 : s->depth - outer;
}
/* *ord gets, for every node, the rank of its root path's text "L1;L2;...;Lk" among all
 * nodes' texts in byte order (equal texts, equal ranks), where the label of key K is
 * text[off[K], off[K + 1]); labels must not contain sep. Costs a sort of the labels and a
 * walk of the trie, never a comparison of whole texts. False when out of memory. */
bool tachi_stack_order(const struct tachi_stacktab *t, const char *text, const size_t *off,
		       size_t nkeys, char sep, uint32_t **ord);

/* ---- frames as (file, function, line) keys, for writers that can show no more ---- */
struct tachi_linekey {
	uint32_t file, func; /* ids in the names dict, by text */
	int32_t line;        /* -1 (no location) becomes 0 */
};
struct tachi_linekeys {
	struct tach_dict names;
	uint32_t *smap;      /* source string id -> names id */
	size_t smap_cap;
	struct tachi_linekey *keys;
	size_t nkeys, keys_cap;
	struct tachi_idset index;
	uint32_t *fmap;      /* source frame id -> key id, the map for tachi_stack_intern */
	size_t fmap_cap, nmapped;
};
/* Maps the frames d gained since the last call; failures are recorded on w. */
int tachi_linekeys_update(struct tach_writer *w, struct tachi_linekeys *lk, const struct tach_dict *d);
void tachi_linekeys_free(struct tachi_linekeys *lk);

/* ---- collapsing stacks (fmt_collapsed_write.c): what the collapsed and flame graph
 * writers share ---- */
struct tachi_buf {
	char *p;
	size_t len, cap;
};
bool tachi_buf_add(struct tachi_buf *b, const void *p, size_t n);
/* Per (thread, stack) aggregation over (file, func, line) keys. */
struct tachi_collapse {
	const struct tach_dict *src;
	struct tachi_linekeys lk;
	struct tachi_stacktab trie;
	struct tachi_threads threads;
	bool no_threads;  /* one context for every thread */
};
struct tach_writer;
/* s's entry (an index into a->trie.pairs, dense from 0) into *entry; s has frames.
 * Failures are recorded on w. */
int tachi_collapse_entry(struct tach_writer *w, struct tachi_collapse *a,
			 const struct tach_dict *d, const struct tach_sample *s, uint32_t *entry);
void tachi_collapse_free(struct tachi_collapse *a);
/* Lookahead for writers built on a tachi_collapse: a queued sample's stage, which at stage 3
 * returns its likely entry + 1. */
uint32_t tachi_collapse_fetch(struct tachi_collapse *a, struct tachi_ahead_item *it,
			      unsigned stage);
/* Grows a zeroed per-entry array *v of *n used elements to hold index entry. */
bool tachi_counts_reserve(uint64_t **v, size_t *cap, size_t *n, uint32_t entry);
/* Frame labels as the collapsed writer prints them: valid UTF-8, ';' as ':' and control
 * bytes as '?' (one warning each). */
struct tachi_labeler {
	bool pyspy;       /* "func (file:line)" instead of "file:func:line" */
	bool full_paths;
	bool warned_semi, warned_ctrl;
};
bool tachi_collapsed_label(struct tach_writer *w, struct tachi_labeler *lb, struct tachi_buf *b,
			   const struct tachi_linekeys *lk, const struct tachi_linekey *k);
/* Samples counted per (thread, stack): the aggregate of writers that show (file, function,
 * line) frames (collapsed, pstats). counts[i] is the weight of agg.trie.pairs[i], pairs
 * numbered in first-seen order. Memory follows distinct stacks. */
struct tachi_stackcount {
	struct tachi_collapse agg;
	uint64_t *counts;
	size_t ncounts, counts_cap;
};
/* Adds s (empty stacks skipped); failures are recorded on w. */
int tachi_stackcount_put(struct tach_writer *w, struct tachi_stackcount *sc,
			 const struct tach_dict *d, const struct tach_sample *s);
/* tachi_collapse_fetch, and at stage 3 the entry's count requested too. */
void tachi_stackcount_fetch(struct tachi_stackcount *sc, struct tachi_ahead_item *it,
			    unsigned stage);
void tachi_stackcount_free(struct tachi_stackcount *sc);


/* ---- handles ---- */
struct tachi_format;

struct tachi_limits {
	uint32_t max_depth;     /* frames per stack */
	uint64_t max_samples;   /* samples produced from one input */
	uint64_t max_input;     /* bytes a whole-input reader may hold */
	bool strict;
};

struct tach_reader {
	const struct tachi_format *fmt;
	struct tachi_err err;
	struct tachi_warner warn;
	struct tachi_limits lim;
	struct tachi_in in;
	struct tach_dict dict;
	struct tach_meta meta;
	struct tach_stats stats;
	struct tach_sample sample;
	void *state;
	bool opened;
	/* the last sample's extras (values.c), NULL when none; set by the format's next */
	const struct tach_sample_ext *ext;
	bool dict_grows;        /* next interns strings (labels) after all: no reading thread */
};

struct tach_writer {
	const struct tachi_format *fmt;
	struct tachi_err err;
	struct tachi_warner warn;
	struct tachi_out out;
	struct tach_meta meta;
	char *program;          /* meta.program's own copy */
	void *state;
	bool opened, has_meta, closed;
	/* Samples queued ahead (ahead.c), once its trie is far past the caches; NULL before. */
	struct tachi_ahead *ahead;
	uint32_t ahead_tick;    /* puts until the trie is looked at again (handles.c) */
	uint64_t ahead_hash;    /* during a queued sample's put: its fetch's hash */
	void *values_own;       /* meta's value types and their strings, copied (values.c) */
	bool warned_labels;     /* dropped labels were warned about */
};

struct tachi_reader_ops {
	size_t state_size;
	/* Called once before open for each option; return TACH_E_USAGE for unknown keys. */
	int (*option)(struct tach_reader *r, const char *key, const char *value);
	/* Parse headers. The input is attached (r->in). */
	int (*open)(struct tach_reader *r);
	int (*next)(struct tach_reader *r, const struct tach_sample **s);
	void (*free)(struct tach_reader *r);
	bool whole_input;       /* open gets the whole input in r->in.data (mmap or slurp) */
	bool dict_at_open;      /* open reads every frame the samples can use */
};

/* ---- lookahead (ahead.c): a writer whose per-sample lookups miss the caches gets its
 * samples TACHI_AHEAD late, each copied, so that it can request the lines of several
 * before it needs them. Order and output stay as without. ---- */
#define TACHI_AHEAD 16
struct tachi_ahead_item {
	struct tach_sample s;    /* frames: the copy below */
	const struct tach_dict *d;
	uint32_t *frames, cap;
	uint64_t hash;           /* the writer's, from its fetch at stage 0 */
};
struct tachi_ahead {
	struct tachi_ahead_item q[TACHI_AHEAD];
	unsigned head, n;
};
/* tach_writer_put once w->ahead is set, and the rest of the queue before close. */
int tachi_ahead_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s);
int tachi_ahead_drain(struct tach_writer *w);
void tachi_ahead_free(struct tachi_ahead *a);

struct tachi_writer_ops {
	size_t state_size;
	int (*option)(struct tach_writer *w, const char *key, const char *value);
	int (*begin)(struct tach_writer *w); /* after open_fd and set_meta */
	int (*put)(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s);
	int (*close)(struct tach_writer *w);
	void (*free)(struct tach_writer *w);
	/* Lookahead (ahead.c), for a writer whose state holds the stack trie it interns into
	 * at offset trie_at - 1 (0: none): once tachi_stacktab_far says the trie's tables are
	 * past the caches, samples are queued, and each one's whole-stack lookup is requested
	 * ahead (tachi_stacktab_ahead without pairs; put gets the hash in w->ahead_hash).
	 * fetch, when set, does that instead, for a writer whose pairs' context and per-pair
	 * data only it knows. */
	size_t trie_at;
	void (*fetch)(struct tach_writer *w, struct tachi_ahead_item *it, unsigned stage);
	/* Set by a writer that keeps values and labels (values.c): put with the extras. */
	int (*put_ext)(struct tach_writer *w, const struct tach_dict *d,
		       const struct tach_sample *s, const struct tach_sample_ext *ext);
};
/* ---- values and labels (values.c) ---- */
/* Nanoseconds in one of unit s[0, n) ("ms", "nanoseconds", ...); 0: not a time unit. */
uint64_t tachi_time_unit_ns(const char *s, size_t n);
/* The full name of unit u as speedscope and flame graphs spell it: "bytes", "nanoseconds",
 * ... "seconds"; NULL for any other (a count). */
const char *tachi_unit_name(const char *u);
/* At set_meta: the writer's own copy of m's value-type block (m holds n bytes). */
int tachi_writer_keep_values(struct tach_writer *w, const struct tach_meta *m, size_t n);
/* The failure of a writer that stores samples given weights that are not (meta.weight_unit
 * set): it names the options that choose otherwise. */
int tachi_weights_not_samples(struct tach_writer *w);

/* Detection reads this much of the start of an input (less at its end). */
#define TACHI_PROBE_BYTES 4096u
/* The window probes are asked again of when none took the first TACHI_PROBE_BYTES. */
#define TACHI_PROBE_MORE (1u << 20)

struct tachi_format {
	const char *name;
	const struct tachi_reader_ops *reader;
	const struct tachi_writer_ops *writer;
	/* Whether the first n bytes (n < TACHI_PROBE_BYTES only at the end of the input) look
	 * like this format; readers only. Asked in table order: the first yes wins. */
	bool (*probe)(const uint8_t *p, size_t n);
	/* Weaker than probe: whether input that no probe took looks like a damaged or unusual
	 * file of this format (its first bytes are what this format's files start with), to
	 * name it in the message. NULL for formats whose probe is all there is to say. */
	bool (*resembles)(const uint8_t *p, size_t n);
};
/* The stack trie of a writer with lookahead. */
static inline struct tachi_stacktab *tachi_writer_trie(struct tach_writer *w)
{
	return (struct tachi_stacktab *)((char *)w->state + w->fmt->writer->trie_at - 1);
}
/* A format by name; "auto" is the detecting reader (detect.c), not in the table. */
const struct tachi_format *tachi_format_find(const char *name);
/* The table's i-th format, NULL past the end. */
const struct tachi_format *tachi_format_at(size_t i);
extern const struct tachi_format tachi_fmt_auto;
/* For probes: the next line from *at that is neither blank nor a '#' comment, without its
 * LF (and CR); *complete is false when it may go on past the peeked bytes. */
bool tachi_probe_line(const uint8_t *p, size_t n, size_t *at, const uint8_t **line,
		      size_t *len, bool *complete);
/* For probes: non-empty, and no control bytes but TAB, CR and LF. */
bool tachi_probe_text(const uint8_t *p, size_t n);
/* Records a write failure of w->out on w and returns TACH_E_IO. */
int tachi_writer_io(struct tach_writer *w);
/* ---- record spools (spool.c): per-stream records kept past a chunk in a temp file ---- */
struct tachi_spool {
	int fd;
	bool open;          /* the file exists (made when a first chunk fills) */
	uint64_t end;       /* its size */
	size_t rec_size, chunk_recs;
};
struct tachi_stream {
	uint8_t *buf;       /* the last chunk, in memory */
	size_t len;         /* records in buf */
	uint64_t *chunks;   /* file offsets of the full chunks, in order */
	size_t nchunks, chunks_cap;
	uint64_t total;     /* records added */
};
void tachi_spool_init(struct tachi_spool *sp, size_t rec_size);
/* Returns 0 or an errno value (ENOMEM, or the file's). */
int tachi_stream_add(struct tachi_spool *sp, struct tachi_stream *s, const void *rec);
int tachi_stream_chunk(const struct tachi_spool *sp, const struct tachi_stream *s, size_t k,
		       uint8_t *buf, const uint8_t **recs, size_t *n);
/* Byte spools (records of the caller's packing, at most a chunk each): chunk_bytes a chunk.
 * A writer asks for room for its longest record, writes it at s->buf + s->len, and adds its
 * length to s->len and 1 to s->total. Records must not start with a zero byte: zero bytes
 * fill the end of a chunk that a record did not fit in. */
void tachi_spool_init_bytes(struct tachi_spool *sp, size_t chunk_bytes);
int tachi_stream_room_slow(struct tachi_spool *sp, struct tachi_stream *s, size_t n);
/* Returns 0 or an errno value (ENOMEM, EINVAL for n over a chunk, or the file's). */
static inline int tachi_stream_room(struct tachi_spool *sp, struct tachi_stream *s, size_t n)
{
	if (TACHI_LIKELY(s->buf && sp->chunk_recs - s->len >= n))
		return 0;
	return tachi_stream_room_slow(sp, s, n);
}
/* Empties a stream for reuse, keeping its memory chunk (its old chunks stay in the file). */
void tachi_stream_reset(struct tachi_stream *s);
void tachi_stream_free(struct tachi_stream *s);
void tachi_spool_free(struct tachi_spool *sp);


/* One row per format; each module defines its own. */
extern const struct tachi_format tachi_fmt_tach;
extern const struct tachi_format tachi_fmt_samples;
extern const struct tachi_format tachi_fmt_collapsed;
extern const struct tachi_format tachi_fmt_gecko;
extern const struct tachi_format tachi_fmt_gperf;
extern const struct tachi_reader_ops tachi_collapsed_reader_ops;
bool tachi_collapsed_probe(const uint8_t *p, size_t n);
extern const struct tachi_format tachi_fmt_pprof;
/* The pprof format's two files: the reader's ops and probe, for the writer file's row. */
extern const struct tachi_reader_ops tachi_pprof_reader_ops;
bool tachi_pprof_probe(const uint8_t *p, size_t n);
bool tachi_pprof_resembles(const uint8_t *p, size_t n);
extern const struct tachi_format tachi_fmt_sampler;
extern const struct tachi_format tachi_fmt_flamegraph;
extern const struct tachi_format tachi_fmt_pstats;
/* Linux perf script text (fmt_perf_read.c); before folded stacks in detection. */
extern const struct tachi_format tachi_fmt_perf;
/* The sampler format's two files: the writer's ops, for the reader file's table row. */
extern const struct tachi_writer_ops tachi_sampler_writer_ops;
/* speedscope JSON: the row (in the reader's file), both directions' ops, and the probe: the
 * first object's "$schema" names speedscope's schema, or it has both "shared" and
 * "profiles" keys. p may be just the input's first bytes. */
extern const struct tachi_format tachi_fmt_speedscope;
extern const struct tachi_reader_ops tachi_speedscope_reader_ops;
extern const struct tachi_writer_ops tachi_speedscope_writer_ops;
bool tachi_speedscope_probe(const uint8_t *p, size_t n);
bool tachi_speedscope_resembles(const uint8_t *p, size_t n);
/* V8 CPU profiles (.cpuprofile, fmt_v8_read.c): the row, and the probe: the first object's
 * "nodes" array starts with a node that has a "callFrame" object, or the object has both
 * "samples" and "timeDeltas" keys. p may be just the input's first bytes. */
extern const struct tachi_format tachi_fmt_v8;
bool tachi_v8_probe(const uint8_t *p, size_t n);
bool tachi_v8_resembles(const uint8_t *p, size_t n);

/* Helpers for format modules. */
#define RFAIL(r, code, kind, pos, ...) tachi_fail(&(r)->err, (code), (kind), (pos), __VA_ARGS__)
#define WFAIL(w, code, ...) tachi_fail(&(w)->err, (code), TACH_POS_NONE, 0, __VA_ARGS__)
/* A recoverable fault in the input at byte offset off: a warning, or the error under the
 * reader's strict option. Returns TACH_OK or the error code. */
int tachi_soft_fail(struct tach_reader *r, uint64_t off, const char *fmt, ...) TACHI_PRINTF(3, 4);
/* Parses an unsigned decimal option value; false if malformed or > max. */
bool tachi_parse_u64(const char *s, uint64_t max, uint64_t *out);
/* A byte count: decimal, optionally followed by K, M, G or T (powers of 1024, with or
 * without "iB"). */
bool tachi_parse_size(const char *s, uint64_t *out);
/* The same for n bytes at s (no sign, no space, at least one digit). */
bool tachi_parse_dec(const char *s, size_t n, uint64_t max, uint64_t *out);
/* The value of a hexadecimal digit, -1 for any other byte. */
int tachi_hexval(char c);
bool tachi_parse_bool(const char *s, bool *out);
/* A writer's gzip "level" option, 1 to 9, into *level; a usage error otherwise. */
int tachi_gzip_level(struct tach_writer *w, const char *value, int *level);
/* A writer's gzip "threads" option (compression workers, 0 to TACHI_GZ_MAX_WORKERS). */
int tachi_gzip_threads(struct tach_writer *w, const char *value, unsigned *n);

/* ---- gzip output in fixed chunks (gzip.c): the same bytes for any number of workers ---- */
#define TACHI_GZ_MAX_WORKERS 64
struct tachi_gz;
/* Writes the gzip header to out and makes *g; workers 0 compresses in the caller's thread.
 * Returns TACH_OK, TACH_E_NOMEM, or TACH_E_IO with out->err set. */
int tachi_gz_open(struct tachi_gz **g, struct tachi_out *out, int level, unsigned workers);
/* Compresses n bytes of output into out; the same codes, and once failed, failed. */
int tachi_gz_write(struct tachi_gz *g, const void *p, size_t n);
/* Ends the stream: the last chunk and the trailer. */
int tachi_gz_finish(struct tachi_gz *g);
/* Stops the workers and frees g (NULL is fine); unfinished output stays unfinished. */
void tachi_gz_free(struct tachi_gz *g);
/* The writer's failure for a tachi_gz code. */
int tachi_gz_failed(struct tach_writer *w, int code);
/* A reader's input (io.h), failures on the reader. */
static inline int tachi_in_load_whole(struct tach_reader *r)
{
	return tachi_in_load(&r->in, r->lim.max_input, &r->err);
}
/* Streaming line input: the next line without its LF (a CR before it is kept), or TACH_EOF. */
static inline int tachi_in_line(struct tach_reader *r, const char **line, size_t *len)
{
	return tachi_in_next_line(&r->in, &r->err, line, len);
}
/* Byte offset of the start of the last line returned. */
static inline uint64_t tachi_in_line_offset(const struct tach_reader *r)
{
	return tachi_in_offset(&r->in);
}
/* Valid UTF-8 check; repairs into out with U+FFFD when asked. */
bool tachi_utf8_valid(const uint8_t *p, size_t n);
/* Copies n bytes of s to out (room for 3 * n) as valid UTF-8, each invalid byte as U+FFFD;
 * returns the length written and sets *repaired when it replaced any. */
size_t tachi_utf8_repair(char *out, const char *s, size_t n, bool *repaired);
/* One character of p[*i] (a lead byte >= 0x80): the whole sequence when it is valid UTF-8,
 * else U+FFFD for that byte alone (*repaired set); advances *i, returns the bytes written
 * to out (at most 4). */
static inline size_t tachi_utf8_char(char *out, const uint8_t *p, size_t n, size_t *i,
				     bool *repaired)
{
	uint8_t c = p[*i];
	size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	if (len > 1 && len <= n - *i && tachi_utf8_valid(p + *i, len)) {
		memcpy(out, p + *i, len);
		*i += len;
		return len;
	}
	memcpy(out, "\xEF\xBF\xBD", 3);
	*i += 1;
	*repaired = true;
	return 3;
}

/* JSON pieces (fmt_gecko_write.c). µs as exact decimal ms ("12.5", "-0.001"), at most 23
 * bytes; a JSON string body from bytes, invalid UTF-8 as U+FFFD (*repaired set), at most
 * 6 * n bytes. */
size_t tachi_fmt_ms(char *buf, bool neg, uint64_t us);
size_t tachi_json_escape(char *out, const char *s, size_t n, bool *repaired);

#endif
