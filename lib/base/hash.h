/* Hashing and the id sets every interning table is built on (hash.c). */
#ifndef TACHFMT_HASH_H
#define TACHFMT_HASH_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

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

#endif
