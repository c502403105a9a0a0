/* one_probe: the yardstick issue 18 names for an aggregating writer, measured rather than
 * guessed: decode a TACH file through the public API and, for each sample whose stack is
 * not its thread's previous one, hash the whole (thread id, stack) and make one probe of a
 * single open-addressing table whose entries hold a copy of the key, then add the weight to
 * that entry's count. Nothing is written: no labels, no sort, no output text.
 *
 *   one_probe FILE
 *
 * Prints the samples, the distinct (thread, stack) entries and the bytes the table's keys
 * take; bench/stacks.sh times it beside the real writers. The table is the
 * simplest layout that gives the answer in one probe: a (hash tag, offset) slot per entry at
 * load 1/2, and the keys one after another in an arena, so a hit costs the slot and the key.
 */
#include <fcntl.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "tachfmt.h"

struct slot {
	uint32_t tag;
	uint32_t off1; /* offset in the arena + 1; 0: empty */
};

struct table {
	struct slot *slots;
	size_t mask, count;
	uint8_t *arena; /* entries: [count u64, key length u32, key...] */
	size_t len, cap;
};

/* The last entry of a thread, so that a repeated stack costs no probe. */
struct last {
	uint64_t tid;
	uint32_t off1, depth;
};

static void *xrealloc(void *p, size_t n)
{
	void *q = realloc(p, n);
	if (!q) {
		fputs("one_probe: out of memory\n", stderr);
		exit(1);
	}
	return q;
}

static void place(struct slot *slots, size_t mask, struct slot s)
{
	size_t i = s.tag & mask;
	while (slots[i].off1)
		i = (i + 1) & mask;
	slots[i] = s;
}

static void grow(struct table *t)
{
	size_t n = t->slots ? (t->mask + 1) * 2 : 1024;
	struct slot *s = xrealloc(NULL, n * sizeof(*s));
	memset(s, 0, n * sizeof(*s));
	for (size_t i = 0; t->slots && i <= t->mask; i++)
		if (t->slots[i].off1)
			place(s, n - 1, t->slots[i]);
	free(t->slots);
	t->slots = s;
	t->mask = n - 1;
}

/* The entry of key (n bytes), made if new: its offset + 1. */
static uint32_t probe(struct table *t, const uint8_t *key, uint32_t n)
{
	uint64_t h = XXH3_64bits(key, n);
	uint32_t tag = (uint32_t)(h >> 32);
	size_t i = tag & t->mask;
	for (; t->slots[i].off1; i = (i + 1) & t->mask) {
		const uint8_t *e = t->arena + t->slots[i].off1 - 1;
		uint32_t len;
		memcpy(&len, e + 8, 4);
		if (t->slots[i].tag == tag && len == n && !memcmp(e + 12, key, n))
			return t->slots[i].off1;
	}
	size_t need = t->len + 12 + n;
	if (need > UINT32_MAX - 1) {
		fputs("one_probe: keys past 4 GiB\n", stderr);
		exit(1);
	}
	if (need > t->cap) {
		t->cap = need * 2;
		t->arena = xrealloc(t->arena, t->cap);
	}
	uint8_t *e = t->arena + t->len;
	memset(e, 0, 8);
	memcpy(e + 8, &n, 4);
	memcpy(e + 12, key, n);
	uint32_t off1 = (uint32_t)t->len + 1;
	t->slots[i] = (struct slot){ tag, off1 };
	t->len = need;
	if (++t->count * 2 > t->mask)
		grow(t);
	return off1;
}

/* The previous entry of thread tid's slot in a small direct-mapped memo. */
static struct last *last_of(struct last *memo, uint64_t tid)
{
	return &memo[(tid ^ tid >> 17 ^ tid >> 31) & 255];
}

int main(int argc, char **argv)
{
	if (argc != 2) {
		fputs("usage: one_probe FILE\n", stderr);
		return 2;
	}
	int fd = open(argv[1], O_RDONLY);
	struct tach_reader *r = tach_reader_new("tach");
	if (fd < 0 || !r || tach_reader_open_fd(r, fd)) {
		fprintf(stderr, "one_probe: cannot read %s\n", argv[1]);
		return 1;
	}
	struct table t = { 0 };
	grow(&t);
	static struct last memo[256];
	uint8_t *key = NULL;
	size_t key_cap = 0;
	uint64_t samples = 0;
	const struct tach_sample *s;
	int rc;
	while ((rc = tach_reader_next(r, &s)) == TACH_OK) {
		samples += s->weight;
		if (!s->depth)
			continue;
		struct last *l = last_of(memo, s->thread_id);
		uint32_t off1;
		if (l->off1 && l->tid == s->thread_id && l->depth == s->depth &&
		    s->same_outer >= s->depth) {
			off1 = l->off1;
		} else {
			size_t n = 8 + (size_t)s->depth * 4;
			if (n > key_cap)
				key = xrealloc(key, key_cap = n * 2);
			memcpy(key, &s->thread_id, 8);
			memcpy(key + 8, s->frames, (size_t)s->depth * 4);
			off1 = probe(&t, key, (uint32_t)n);
			*l = (struct last){ s->thread_id, off1, s->depth };
		}
		uint64_t c;
		memcpy(&c, t.arena + off1 - 1, 8);
		c += s->weight;
		memcpy(t.arena + off1 - 1, &c, 8);
	}
	if (rc != TACH_EOF) {
		fprintf(stderr, "one_probe: %s: %s\n", argv[1], tach_reader_error(r, NULL, NULL));
		return 1;
	}
	printf("one_probe: %llu samples, %zu distinct (thread, stack), %zu MiB of keys\n",
		(unsigned long long)samples, t.count, t.len >> 20);
	tach_reader_free(r);
	free(t.slots);
	free(t.arena);
	free(key);
	close(fd);
	return 0;
}
