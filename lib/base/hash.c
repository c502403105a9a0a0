/* Hashing and the id set every interning table is built on. */
#include <stdlib.h>
#include <string.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "base/hash.h"

uint64_t tachi_hash(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

/* The tag is the hash's high half and a slot's place comes from it, so growing moves
 * slots by their tags alone, never reading the entries they name (a random read each:
 * a third of the time of building a large stack trie). */
static void idset_place(struct tachi_slot *slots, size_t mask, uint32_t tag, uint32_t id)
{
	size_t i = tag & mask;
	while (slots[i].id)
		i = (i + 1) & mask;
	slots[i].id = id + 1;
	slots[i].tag = tag;
}

/* Slots ahead of the one being stored to whose lines are requested: about what a core
 * keeps in flight. */
#define MOVE_AHEAD 16

/* Room for n ids at a load factor of at most 1/2, which keeps probe chains short. With
 * bloom, a deferred set's filter is made anew in the same pass: four bits a slot, a bit
 * standing for every tag equal to its number in the low bits. */
static bool idset_hold(struct tachi_idset *s, size_t n, uint64_t **bloom, size_t *bloom_mask)
{
	if (s->slots && n * 2 <= s->mask + 1)
		return true;
	size_t size = s->slots ? (s->mask + 1) * 2 : 64;
	while (n * 2 > size)
		size *= 2;
	/* up to 2^30 bits: past that more false hits, never a missed id */
	size_t bits = (size < ((size_t)1 << 28) ? size : (size_t)1 << 28) * 4;
	struct tachi_slot *slots = calloc(size, sizeof(*slots));
	uint64_t *b = bloom ? calloc(bits / 64, sizeof(*b)) : NULL;
	if (!slots || (bloom && !b)) {
		free(slots);
		free(b);
		return false;
	}
	for (size_t i = 0; s->slots && i <= s->mask; i++) {
		if (!s->slots[i].id)
			continue;
		idset_place(slots, size - 1, s->slots[i].tag, s->slots[i].id - 1);
		if (b)
			tachi_bit_set(b, s->slots[i].tag & (bits - 1));
	}
	free(s->slots);
	s->slots = slots;
	s->mask = size - 1;
	if (bloom) {
		free(*bloom);
		*bloom = b;
		*bloom_mask = bits - 1;
	}
	return true;
}

bool tachi_idset_insert(struct tachi_idset *s, uint64_t h, uint32_t id)
{
	if (!idset_hold(s, s->count + 1, NULL, NULL))
		return false;
	idset_place(s->slots, s->mask, (uint32_t)(h >> 32), id);
	s->count++;
	return true;
}

void tachi_idset_free(struct tachi_idset *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

/* Moves the waiting ids into main, in the order they came, and empties pend. */
static bool dset_move(struct tachi_dset *s)
{
	size_t n = s->pend.count;
	/* grown first, so that every line fetched is where its id goes */
	if (!idset_hold(&s->main, s->main.count + n, &s->bloom, &s->bloom_mask))
		return false;
	struct tachi_slot *slots = s->main.slots;
	size_t mask = s->main.mask, bmask = s->bloom_mask;
	for (size_t i = 0; i < n; i++) {
		if (i + MOVE_AHEAD < n) {
			uint32_t tag = s->order[i + MOVE_AHEAD].tag;
			__builtin_prefetch(&slots[tag & mask], 1);
			__builtin_prefetch(&s->bloom[(tag & bmask) / 64], 1);
		}
		idset_place(slots, mask, s->order[i].tag, s->order[i].id - 1);
		tachi_bit_set(s->bloom, s->order[i].tag & bmask);
	}
	s->main.count += n;
	memset(s->pend.slots, 0, (s->pend.mask + 1) * sizeof(*s->pend.slots));
	s->pend.count = 0;
	return true;
}

bool tachi_dset_insert(struct tachi_dset *s, uint64_t h, uint32_t id)
{
	if (s->pend.count >= TACHI_PEND_MAX && !dset_move(s))
		return false;
	/* grown as pend is, so that a small input's sets stay small */
	if (!TACHI_RESERVE(s->order, s->order_cap, s->pend.count + 1) ||
	    !tachi_idset_insert(&s->pend, h, id))
		return false;
	s->order[s->pend.count - 1] = (struct tachi_slot){ id + 1, (uint32_t)(h >> 32) };
	return true;
}

void tachi_dset_free(struct tachi_dset *s)
{
	tachi_idset_free(&s->main);
	tachi_idset_free(&s->pend);
	free(s->order);
	free(s->bloom);
	memset(s, 0, sizeof(*s));
}
