/* The dictionary (first-seen numbering, byte strings, interning vs appending), the stack trie
 * and the per-thread path cache. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/hash.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/stackorder.h"

static uint32_t intern(struct tach_dict *d, const char *s, size_t len)
{
	uint32_t id = UINT32_MAX;
	CHECK_EQ_U64(tach_dict_intern_string(d, s, len, &id), TACH_OK);
	return id;
}

static void strings(void)
{
	struct tach_dict *d = tach_dict_new();
	CHECK_EQ_U64(tach_dict_string_count(d), 0);
	CHECK(tach_dict_string(d, 0, NULL) == NULL);
	/* first-seen numbering, repeats give the first id */
	CHECK_EQ_U64(intern(d, "main.py", 7), 0);
	CHECK_EQ_U64(intern(d, "run", 3), 1);
	CHECK_EQ_U64(intern(d, "main.py", 7), 0);
	CHECK_EQ_U64(intern(d, "", 0), 2);
	CHECK_EQ_U64(intern(d, "", 0), 2);
	/* NUL bytes are part of the string: these four are distinct */
	CHECK_EQ_U64(intern(d, "a\0b", 3), 3);
	CHECK_EQ_U64(intern(d, "a", 1), 4);
	CHECK_EQ_U64(intern(d, "a\0c", 3), 5);
	CHECK_EQ_U64(intern(d, "a\0", 2), 6);
	CHECK_EQ_U64(intern(d, "a\0b", 3), 3);
	/* a prefix of a stored string, and a string whose prefix is stored */
	CHECK_EQ_U64(intern(d, "main", 4), 7);
	CHECK_EQ_U64(intern(d, "main.pyc", 8), 8);
	CHECK_EQ_U64(tach_dict_string_count(d), 9);
	size_t len = 99;
	const char *s = tach_dict_string(d, 3, &len);
	CHECK_EQ_U64(len, 3);
	CHECK(s && !memcmp(s, "a\0b", 3) && s[3] == '\0');
	s = tach_dict_string(d, 2, &len);
	CHECK(s && len == 0 && s[0] == '\0');
	CHECK(tach_dict_string(d, 9, &len) == NULL);
	CHECK(tach_dict_string(d, UINT32_MAX, NULL) == NULL);
	/* len may be NULL */
	CHECK_EQ_STR(tach_dict_string(d, 1, NULL), "run");

	/* many strings: ids stay first-seen while the index grows */
	char buf[32];
	for (unsigned i = 0; i < 50000; i++) {
		int n = snprintf(buf, sizeof(buf), "s%u", i);
		if (intern(d, buf, (size_t)n) != 9 + i) {
			CHECK(!"first-seen id");
			break;
		}
	}
	for (unsigned i = 0; i < 50000; i += 997) {
		int n = snprintf(buf, sizeof(buf), "s%u", i);
		CHECK_EQ_U64(intern(d, buf, (size_t)n), 9 + i);
		s = tach_dict_string(d, 9 + i, &len);
		CHECK(s && len == (size_t)n && !memcmp(s, buf, len));
	}
	/* earlier strings are intact after all that growth */
	s = tach_dict_string(d, 5, &len);
	CHECK(s && len == 3 && !memcmp(s, "a\0c", 3));
	tach_dict_free(d);
	tach_dict_free(NULL);
}

static struct tach_frame fr(uint32_t file, uint32_t func, int32_t line, int32_t end_line,
			    int32_t col, int32_t end_col, uint8_t op)
{
	struct tach_frame f = { file, func, line, end_line, col, end_col, op };
	return f;
}

static uint32_t intern_frame(struct tach_dict *d, struct tach_frame f)
{
	uint32_t id = UINT32_MAX;
	CHECK_EQ_U64(tach_dict_intern_frame(d, &f, &id), TACH_OK);
	return id;
}

static void frames(void)
{
	struct tach_dict *d = tach_dict_new();
	CHECK(tach_dict_frame(d, 0) == NULL);
	/* a frame must name strings the dict has */
	uint32_t id = 7;
	struct tach_frame dangling = fr(0, 1, 10, 10, -1, -1, 255);
	CHECK_EQ_U64(tach_dict_intern_frame(d, &dangling, &id), (uint64_t)TACH_E_USAGE);
	CHECK_EQ_U64(id, 7);
	CHECK_EQ_U64(tach_dict_intern_string(d, "a.py", 4, &id), TACH_OK);
	dangling = fr(0, 1, 10, 10, -1, -1, 255);
	CHECK_EQ_U64(tach_dict_intern_frame(d, &dangling, &id), (uint64_t)TACH_E_USAGE);
	CHECK_EQ_U64(tach_dict_intern_string(d, "f", 1, &id), TACH_OK);
	CHECK_EQ_U64(tach_dict_frame_count(d), 0);
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, 10, 10, -1, -1, 255)), 0);
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, 10, 10, -1, -1, 255)), 0);
	/* every one of the seven fields is part of the key */
	CHECK_EQ_U64(intern_frame(d, fr(1, 1, 10, 10, -1, -1, 255)), 1);
	CHECK_EQ_U64(intern_frame(d, fr(0, 0, 10, 10, -1, -1, 255)), 2);
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, 11, 10, -1, -1, 255)), 3);
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, 10, 11, -1, -1, 255)), 4);
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, 10, 10, 0, -1, 255)), 5);
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, 10, 10, -1, 0, 255)), 6);
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, 10, 10, -1, -1, 0)), 7);
	/* no location, but different end values: still different frames (CPython's writer
	 * keys on what it was given, before it drops the end values) */
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, -1, 5, -1, -1, 255)), 8);
	CHECK_EQ_U64(intern_frame(d, fr(0, 1, -1, -1, -1, -1, 255)), 9);
	CHECK_EQ_U64(tach_dict_frame_count(d), 10);
	const struct tach_frame *f = tach_dict_frame(d, 8);
	CHECK(f && f->line == -1 && f->end_line == 5 && f->opcode == 255);
	CHECK(tach_dict_frame(d, 10) == NULL);
	tach_dict_free(d);
}

/* Native data is part of a frame's key; frames without it are as before; mappings are
 * numbered from 1 and interned. */
static void natives(void)
{
	struct tach_dict *d = tach_dict_new();
	uint32_t lib, fn, bid, id = 0;
	CHECK_EQ_U64(tach_dict_intern_string(d, "/usr/lib/libc.so.6", 18, &lib), TACH_OK);
	CHECK_EQ_U64(tach_dict_intern_string(d, "memcpy", 6, &fn), TACH_OK);
	CHECK_EQ_U64(tach_dict_intern_string(d, "ab12", 4, &bid), TACH_OK);
	CHECK_EQ_U64(tach_dict_mapping_count(d), 0);
	CHECK(tach_dict_mapping(d, 0) == NULL && tach_dict_mapping(d, 1) == NULL);
	struct tach_mapping m = { 0x7f0000, 0x7f8000, 0x1000, lib, TACH_NO_STRING, 0 };
	CHECK_EQ_U64(tach_dict_intern_mapping(d, &m, &id), TACH_OK);
	CHECK_EQ_U64(id, 1);
	CHECK_EQ_U64(tach_dict_intern_mapping(d, &m, &id), TACH_OK);
	CHECK_EQ_U64(id, 1);
	m.build_id = bid;
	CHECK_EQ_U64(tach_dict_intern_mapping(d, &m, &id), TACH_OK);
	CHECK_EQ_U64(id, 2);
	m.build_id = 99;
	CHECK_EQ_U64(tach_dict_intern_mapping(d, &m, &id), (uint64_t)TACH_E_USAGE);
	CHECK_EQ_U64(tach_dict_mapping_count(d), 2);
	const struct tach_mapping *got = tach_dict_mapping(d, 2);
	CHECK(got && got->start == 0x7f0000 && got->limit == 0x7f8000 && got->build_id == bid);

	struct tach_frame f = fr(lib, fn, -1, -1, -1, -1, 255);
	CHECK_EQ_U64(intern_frame(d, f), 0);
	CHECK(tach_dict_frame_native(d, 0) == NULL);
	struct tach_frame_native n = { 0x7f0123, 1, 0 }, zero = { 0, 0, 0 };
	CHECK_EQ_U64(tach_dict_intern_frame_native(d, &f, &zero, &id), TACH_OK);
	CHECK_EQ_U64(id, 0);
	CHECK_EQ_U64(tach_dict_intern_frame_native(d, &f, &n, &id), TACH_OK);
	CHECK_EQ_U64(id, 1);
	CHECK_EQ_U64(tach_dict_intern_frame_native(d, &f, &n, &id), TACH_OK);
	CHECK_EQ_U64(id, 1);
	/* each native field is part of the key */
	n.address++;
	CHECK_EQ_U64(tach_dict_intern_frame_native(d, &f, &n, &id), TACH_OK);
	CHECK_EQ_U64(id, 2);
	n.mapping = 2;
	CHECK_EQ_U64(tach_dict_intern_frame_native(d, &f, &n, &id), TACH_OK);
	CHECK_EQ_U64(id, 3);
	n.inlined = 1;
	CHECK_EQ_U64(tach_dict_intern_frame_native(d, &f, &n, &id), TACH_OK);
	CHECK_EQ_U64(id, 4);
	/* a mapping the dict lacks, or a mark other than 0/1 */
	n.mapping = 3;
	CHECK_EQ_U64(tach_dict_intern_frame_native(d, &f, &n, &id), (uint64_t)TACH_E_USAGE);
	n.mapping = 1;
	n.inlined = 2;
	CHECK_EQ_U64(tach_dict_intern_frame_native(d, &f, &n, &id), (uint64_t)TACH_E_USAGE);
	/* a plain frame after native ones has none; the first frame still has none */
	CHECK_EQ_U64(intern_frame(d, fr(lib, lib, -1, -1, -1, -1, 255)), 5);
	CHECK(tach_dict_frame_native(d, 5) == NULL && tach_dict_frame_native(d, 0) == NULL);
	const struct tach_frame_native *g = tach_dict_frame_native(d, 4);
	CHECK(g && g->address == 0x7f0124 && g->mapping == 2 && g->inlined == 1);
	CHECK(tach_dict_frame_native(d, 6) == NULL);
	CHECK_EQ_U64(intern_frame(d, f), 0);
	tach_dict_free(d);
}

static void append_vs_intern(void)
{
	/* A TACH table keeps duplicate rows: the append-only dict numbers every row. */
	struct tach_dict d;
	tachi_dict_init(&d, false);
	CHECK_EQ_U64(tachi_dict_append_string(&d, "x", 1), TACH_OK);
	CHECK_EQ_U64(tachi_dict_append_string(&d, "x", 1), TACH_OK);
	CHECK_EQ_U64(tachi_dict_append_string(&d, "", 0), TACH_OK);
	CHECK_EQ_U64(tach_dict_string_count(&d), 3);
	struct tach_frame f = fr(0, 1, 3, 3, -1, -1, 255);
	CHECK_EQ_U64(tachi_dict_append_frame(&d, &f), TACH_OK);
	CHECK_EQ_U64(tachi_dict_append_frame(&d, &f), TACH_OK);
	CHECK_EQ_U64(tach_dict_frame_count(&d), 2);
	/* interning into an append-only dict is a usage error, not a silent duplicate */
	uint32_t id = 42;
	CHECK_EQ_U64(tach_dict_intern_string(&d, "x", 1, &id), (uint64_t)(int64_t)TACH_E_USAGE);
	CHECK_EQ_U64(tach_dict_intern_frame(&d, &f, &id), (uint64_t)(int64_t)TACH_E_USAGE);
	CHECK_EQ_U64(id, 42);
	size_t len;
	const char *s = tach_dict_string(&d, 1, &len);
	CHECK(s && len == 1 && s[0] == 'x');
	tachi_dict_clear(&d);
	CHECK_EQ_U64(tach_dict_string_count(&d), 0);

	/* in an interning dict, appended rows are not found by intern (the index only knows
	 * interned ones), but interning afterwards still returns first-seen ids */
	tachi_dict_init(&d, true);
	CHECK_EQ_U64(intern(&d, "a", 1), 0);
	CHECK_EQ_U64(intern(&d, "b", 1), 1);
	CHECK_EQ_U64(intern(&d, "a", 1), 0);
	tachi_dict_clear(&d);
}

/* ---- stack trie and path cache ---- */

/* The leaf of a stack (innermost first) walked from the root without any cache. */
static uint32_t walk(struct tachi_stacktab *t, const uint32_t *frames, uint32_t depth,
		     const uint32_t *map)
{
	uint32_t node = TACHI_ROOT;
	for (uint32_t i = depth; i > 0; i--) {
		uint32_t key = map ? map[frames[i - 1]] : frames[i - 1];
		CHECK(tachi_stacktab_child(t, node, key, &node));
	}
	return node;
}

static void trie(void)
{
	struct tachi_stacktab t = { 0 };
	uint32_t a, b, c, a2;
	CHECK(tachi_stacktab_child(&t, TACHI_ROOT, 7, &a));
	CHECK(tachi_stacktab_child(&t, a, 8, &b));
	CHECK(tachi_stacktab_child(&t, TACHI_ROOT, 8, &c));
	CHECK(tachi_stacktab_child(&t, TACHI_ROOT, 7, &a2));
	CHECK_EQ_U64(a, a2);
	CHECK(a != b && b != c && a != c);
	CHECK_EQ_U64(tachi_stacktab_depth(&t, a), 1);
	CHECK_EQ_U64(tachi_stacktab_depth(&t, b), 2);
	CHECK_EQ_U64(t.nodes[b].parent, a);
	CHECK_EQ_U64(t.nodes[b].key, 8);
	CHECK_EQ_U64(t.count, 3);
	/* growth keeps every node */
	uint32_t node = TACHI_ROOT;
	for (uint32_t i = 0; i < 100000; i++)
		CHECK(tachi_stacktab_child(&t, node, i, &node));
	CHECK_EQ_U64(tachi_stacktab_depth(&t, node), 100000);
	uint32_t again = TACHI_ROOT;
	for (uint32_t i = 0; i < 100000; i++)
		tachi_stacktab_child(&t, again, i, &again);
	CHECK_EQ_U64(again, node);
	CHECK_EQ_U64(t.count, 100003);
	tachi_stacktab_free(&t);
}

/* Children asked for in an interleaved order (two walkers taking turns, as two threads'
 * samples do, so a node's first child is often not made right after it) against a plain
 * table of every (parent, key) seen: the same pair gives the same node, a new pair a new
 * one with that parent and key. */
static void trie_interleaved(void)
{
	enum { N = 20000, NK = 5 };
	struct tachi_stacktab t = { 0 };
	static uint32_t ref[N + 1][NK]; /* [parent + 1][key] -> node + 1 */
	memset(ref, 0, sizeof(ref));
	uint32_t at[2] = { TACHI_ROOT, TACHI_ROOT }, x = 12345;
	for (int i = 0; i < 4 * N && t.count < N; i++) {
		x = x * 1103515245u + 12345u;
		uint32_t *p = &at[i & 1];
		/* now and then a walker climbs back to the root: siblings of old nodes */
		if ((x >> 28) == 0)
			*p = TACHI_ROOT;
		uint32_t key = (x >> 16) % NK, node;
		CHECK(tachi_stacktab_child(&t, *p, key, &node));
		uint32_t *r = &ref[*p == TACHI_ROOT ? 0 : *p + 1][key];
		if (*r) {
			CHECK_EQ_U64(node, *r - 1);
		} else {
			CHECK_EQ_U64(node, t.count - 1);
			*r = node + 1;
		}
		CHECK_EQ_U64(t.nodes[node].parent, *p);
		CHECK_EQ_U64(t.nodes[node].key, key);
		*p = node;
	}
	CHECK(t.count == N);
	tachi_stacktab_free(&t);
}

static bool u32_eq(void *ctx, uint32_t id, const void *key)
{
	const uint32_t *v = ctx;
	return v[id] == *(const uint32_t *)key;
}

/* A deferred set answers for every id, whether it still waits or has been moved, and for
 * none it was not given: values under hashes that are all alike (one probe chain through
 * both tables) and spread. */
static void dset(void)
{
	enum { N = 3 * TACHI_PEND_MAX + 7 };
	static uint32_t v[N];
	for (int alike = 0; alike < 2; alike++) {
		struct tachi_dset s = { 0 };
		uint32_t x = 99, id;
		for (uint32_t i = 0; i < N; i++) {
			v[i] = i * 7 + 3;
			uint64_t h = alike ? 0x5555555500000000ull : tachi_mix64(v[i]);
			CHECK(!tachi_dset_find(&s, h, &v[i], u32_eq, v, &id));
			CHECK(tachi_dset_insert(&s, h, i));
			x = x * 1103515245u + 12345u;
			uint32_t j = (x >> 8) % (i + 1), absent = v[i] + 1;
			uint64_t hj = alike ? 0x5555555500000000ull : tachi_mix64(v[j]);
			CHECK(tachi_dset_find(&s, hj, &v[j], u32_eq, v, &id) && id == j);
			uint64_t ha = alike ? 0x5555555500000000ull : tachi_mix64(absent);
			CHECK(!tachi_dset_find(&s, ha, &absent, u32_eq, v, &id));
		}
		CHECK_EQ_U64(s.main.count + s.pend.count, N);
		CHECK(s.main.count >= 3 * TACHI_PEND_MAX);
		tachi_dset_free(&s);
	}
}

/* A thread whose context changes from sample to sample (pprof's holds the status) gets one
 * pair per (context, stack), whether its memos or the shared index answer: more contexts
 * than a thread has memos, stacks that repeat, and a second thread that meets the same
 * pairs. */
static void pair_contexts(void)
{
	struct tachi_threads th = { 0 };
	struct tachi_stacktab t = { 0 };
	bool created;
	static const uint32_t stacks[][3] = { { 1, 2, 3 }, { 4, 2, 3 }, { 5, 6, 3 } };
	enum { NCTX = TACHI_LMEMOS + 3, NST = 3 };
	uint32_t seen[NCTX][NST];
	memset(seen, 0xff, sizeof(seen));
	for (int round = 0; round < 40; round++) {
		for (uint64_t tid = 1; tid <= 2; tid++) {
			struct tachi_pathcache *c = tachi_threads_get(&th, tid, 0, &created);
			CHECK(c != NULL);
			if (!c)
				return;
			/* contexts and stacks in a different order each round and thread */
			uint32_t x = (uint32_t)(round * 5 + tid * 3);
			uint64_t ctx = 100 + x % NCTX;
			uint32_t k = (x / NCTX) % NST;
			struct tach_sample s = { .depth = 3, .frames = stacks[k] };
			uint32_t leaf = tachi_stack_intern_ctx(&t, c, &s, NULL, ctx);
			CHECK(leaf != TACHI_NOMEM_NODE);
			uint32_t id = c->entry;
			CHECK(id < t.npairs && t.pairs[id].ctx == ctx && t.pairs[id].leaf == leaf);
			if (seen[ctx - 100][k] == UINT32_MAX)
				seen[ctx - 100][k] = id;
			CHECK_EQ_U64(id, seen[ctx - 100][k]);
		}
	}
	/* every pair is distinct and every one met was made once */
	size_t met = 0;
	for (int i = 0; i < NCTX; i++)
		for (int k = 0; k < NST; k++)
			met += seen[i][k] != UINT32_MAX;
	CHECK_EQ_U64(t.npairs, met);
	CHECK(th.v[0].nlmemo == TACHI_LMEMOS);
	tachi_stacktab_free(&t);
	tachi_threads_free(&th);
}

/* A thread's memo is made and grows while its misses are of pairs it met before, and is not
 * made while they are new ones (a thread whose stacks seldom come again). */
static void memo_size(void)
{
	struct tachi_threads th = { 0 };
	struct tachi_stacktab t = { 0 };
	bool created;
	enum { N = 5000 };
	/* thread 1 makes the leaves, so that thread 2 meets them not fresh */
	struct tachi_pathcache *a = tachi_threads_get(&th, 1, 0, &created);
	for (uint32_t i = 0; i < N && a; i++) {
		uint32_t fr[2] = { 1000 + i, 7 };
		struct tach_sample s = { .depth = 2, .frames = fr };
		CHECK(tachi_stack_intern_ctx(&t, a, &s, NULL, 1) != TACHI_NOMEM_NODE);
	}
	/* every pair thread 2 meets is new to it: it makes no memo */
	struct tachi_pathcache *b = tachi_threads_get(&th, 2, 0, &created);
	for (uint32_t i = 0; i < N && b; i++) {
		uint32_t fr[2] = { 1000 + i, 7 };
		struct tach_sample s = { .depth = 2, .frames = fr };
		CHECK(tachi_stack_intern_ctx(&t, b, &s, NULL, 2) != TACHI_NOMEM_NODE);
	}
	CHECK(b && b->nlmemo == 1 && !b->lmemo[0].v);
	/* the same pairs again and again: it grows to hold them all */
	for (int round = 0; round < 8 && b; round++)
		for (uint32_t i = 0; i < N; i++) {
			uint32_t fr[2] = { 1000 + i, 7 };
			struct tach_sample s = { .depth = 2, .frames = fr };
			CHECK(tachi_stack_intern_ctx(&t, b, &s, NULL, 2) != TACHI_NOMEM_NODE);
			CHECK(t.pairs[b->entry].ctx == 2 && t.pairs[b->entry].leaf == b->leaf);
		}
	CHECK(b && b->lmemo[0].count == N && b->lmemo[0].mask + 1 >= 2 * N);
	CHECK_EQ_U64(t.npairs, 2 * N);
	/* then only new pairs again, more than it holds: it starts afresh, never grows */
	uint32_t size = b ? b->lmemo[0].mask + 1 : 0;
	for (uint32_t i = 0; i < 3 * size && a && b; i++) {
		uint32_t fr[2] = { 100000 + i, 7 };
		struct tach_sample s = { .depth = 2, .frames = fr };
		CHECK(tachi_stack_intern_ctx(&t, a, &s, NULL, 1) != TACHI_NOMEM_NODE);
		CHECK(tachi_stack_intern_ctx(&t, b, &s, NULL, 2) != TACHI_NOMEM_NODE);
	}
	CHECK(b && b->lmemo[0].mask + 1 == size);
	tachi_stacktab_free(&t);
	tachi_threads_free(&th);
}

static void pathcache(void)
{
	struct tachi_threads th = { 0 };
	bool created;
	struct tachi_pathcache *c1 = tachi_threads_get(&th, 5, 0, &created);
	CHECK(c1 && created);
	struct tachi_pathcache *c2 = tachi_threads_get(&th, 5, 1, &created);
	CHECK(c2 && created); /* same thread id, other interpreter: another thread */
	struct tachi_pathcache *c3 = tachi_threads_get(&th, 4, 0, &created);
	CHECK(c3 && created);
	CHECK(tachi_threads_get(&th, 5, 0, &created) == &th.v[0] && !created);
	CHECK(tachi_threads_get(&th, 5, 1, &created) == &th.v[1] && !created);
	/* creation order is kept */
	CHECK_EQ_U64(th.count, 3);
	CHECK(th.v[0].tid == 5 && th.v[0].iid == 0);
	CHECK(th.v[1].tid == 5 && th.v[1].iid == 1);
	CHECK(th.v[2].tid == 4 && th.v[2].iid == 0);
	for (uint64_t i = 0; i < 5000; i++)
		CHECK(tachi_threads_get(&th, 1000 + i, 0, &created) && created);
	CHECK(tachi_threads_get(&th, 4, 0, &created) == &th.v[2] && !created);

	/* Stacks through the cache land on the same leaves as a cold walk, whatever the
	 * same_outer hint (when it is true). */
	struct tachi_stacktab t = { 0 }, ref = { 0 };
	struct tachi_pathcache *c = &th.v[0];
	static const uint32_t stacks[][6] = {
		{ 3, 1, 2, 0 },      /* depth 4: innermost 3, outermost 0 */
		{ 3, 1, 2, 0 },      /* the same */
		{ 4, 3, 1, 2, 0 },   /* one more inner frame */
		{ 5, 2, 0 },         /* pop two, push one */
		{ 0 },               /* only the root */
		{ 9, 8, 7 },         /* nothing shared */
		{ 1, 9, 8, 7 },
		{ 1, 9, 8, 7 },
	};
	static const uint32_t depths[] = { 4, 4, 5, 3, 1, 3, 4, 4 };
	/* same_outer: the outermost frames equal to the previous sample's */
	static const uint32_t same[] = { 0, 4, 4, 2, 1, 0, 3, 4 };
	for (size_t i = 0; i < sizeof(depths) / sizeof(depths[0]); i++) {
		struct tach_sample s = { .depth = depths[i], .same_outer = same[i],
					 .frames = stacks[i] };
		uint32_t leaf = tachi_stack_intern(&t, c, &s, NULL);
		/* a second cache given no hint at all agrees */
		struct tach_sample s0 = s;
		s0.same_outer = 0;
		uint32_t leaf0 = tachi_stack_intern(&t, &th.v[1], &s0, NULL);
		CHECK_EQ_U64(leaf, leaf0);
		CHECK_EQ_U64(tachi_stacktab_depth(&t, leaf), depths[i]);
		/* the path back from the leaf spells the stack */
		uint32_t n = leaf;
		for (uint32_t k = 0; k < depths[i]; k++) {
			CHECK_EQ_U64(t.nodes[n].key, stacks[i][k]);
			n = t.nodes[n].parent;
		}
		CHECK_EQ_U64(n, TACHI_ROOT);
		CHECK_EQ_U64(c->depth, depths[i]);
		(void)walk(&ref, stacks[i], depths[i], NULL);
	}
	/* the trie holds exactly the distinct prefixes, as a cold walk builds them */
	CHECK_EQ_U64(t.count, ref.count);
	/* an empty stack is the root and leaves the cache empty */
	struct tach_sample e = { .depth = 0, .frames = NULL };
	CHECK_EQ_U64(tachi_stack_intern(&t, c, &e, NULL), TACHI_ROOT);
	CHECK_EQ_U64(c->depth, 0);
	/* a hint larger than what the cache holds is clamped */
	struct tach_sample big = { .depth = 2, .same_outer = 2, .frames = stacks[5] + 1 };
	uint32_t leaf = tachi_stack_intern(&t, c, &big, NULL);
	CHECK_EQ_U64(leaf, walk(&t, stacks[5] + 1, 2, NULL));

	/* with a map, frames sent to one key share nodes; the cache compares keys */
	uint32_t map[10] = { 0, 1, 1, 3, 3, 5, 6, 7, 8, 9 };
	struct tachi_stacktab tm = { 0 };
	struct tachi_pathcache *cm = &th.v[2];
	static const uint32_t m1[] = { 3, 1, 0 }, m2[] = { 4, 2, 0 }, m3[] = { 5, 2, 0 };
	struct tach_sample s1 = { .depth = 3, .frames = m1 };
	struct tach_sample s2 = { .depth = 3, .same_outer = 1, .frames = m2 };
	struct tach_sample s3 = { .depth = 3, .same_outer = 2, .frames = m3 };
	uint32_t l1 = tachi_stack_intern(&tm, cm, &s1, map);
	uint32_t l2 = tachi_stack_intern(&tm, cm, &s2, map);
	uint32_t l3 = tachi_stack_intern(&tm, cm, &s3, map);
	CHECK_EQ_U64(l1, l2);
	CHECK(l3 != l2);
	CHECK_EQ_U64(tm.count, 4);
	CHECK_EQ_U64(l3, walk(&tm, m3, 3, map));

	tachi_stacktab_free(&t);
	tachi_stacktab_free(&ref);
	tachi_stacktab_free(&tm);
	tachi_threads_free(&th);
}

/* tachi_stack_order against the plain way: every node's root path joined with ';' and the
 * texts sorted bytewise. The labels are made to trip a walk that ignores the separator
 * ("a" < "a:" < "a;..." puts a sibling between a node's own line and its children's) or
 * that trusts keys to print differently (keys 7 and 8 share a label). */
struct otext {
	char s[256];
	uint32_t node;
};

static int otext_cmp(const void *a, const void *b)
{
	return strcmp(((const struct otext *)a)->s, ((const struct otext *)b)->s);
}

/* Checks ord against the texts' byte order; labels[k] is key k's label. */
static void order_check(const struct tachi_stacktab *t, const char *const *labels,
			const char *text, const size_t *off, size_t nk)
{
	uint32_t *ord;
	CHECK(tachi_stack_order(t, text, off, nk, ';', &ord));
	struct otext *v = calloc(t->count, sizeof(*v));
	for (uint32_t n = 0; n < t->count; n++) {
		char tmp[256] = "";
		for (uint32_t m = n; m != TACHI_ROOT; m = t->nodes[m].parent) {
			char piece[256];
			snprintf(piece, sizeof(piece), "%s%s%s", labels[t->nodes[m].key],
				 tmp[0] || m != n ? ";" : "", tmp);
			snprintf(tmp, sizeof(tmp), "%s", piece);
		}
		snprintf(v[n].s, sizeof(v[n].s), "%s", tmp);
		v[n].node = n;
	}
	qsort(v, t->count, sizeof(*v), otext_cmp);
	for (uint32_t i = 1; i < t->count; i++) {
		int c = strcmp(v[i - 1].s, v[i].s);
		if (c == 0)
			CHECK_EQ_U64(ord[v[i - 1].node], ord[v[i].node]);
		else
			CHECK(ord[v[i - 1].node] < ord[v[i].node]);
	}
	free(v);
	free(ord);
}

/* A random trie of stacks 1 to maxdepth deep over nk keys. */
static void random_trie(struct tachi_stacktab *t, uint32_t seed, int stacks, uint32_t maxdepth,
			size_t nk)
{
	uint32_t x = seed * 2654435761u;
	for (int k = 0; k < stacks; k++) {
		uint32_t node = TACHI_ROOT, depth = 1 + (x >> 7) % maxdepth;
		for (uint32_t d = 0; d < depth; d++) {
			x = x * 1103515245u + 12345u;
			CHECK(tachi_stacktab_child(t, node, (x >> 9) % nk, &node));
		}
	}
}

static void stack_order(void)
{
	static const char *const labels[] = { "a", "a:", "a-b", "ab", "", "b", "a!", "x", "x",
					      "\xc3\xa9", "A", "a:1" };
	size_t nk = sizeof(labels) / sizeof(labels[0]), off[16], len = 0;
	char text[64];
	for (size_t i = 0; i < nk; i++) {
		off[i] = len;
		memcpy(text + len, labels[i], strlen(labels[i]));
		len += strlen(labels[i]);
	}
	off[nk] = len;
	for (uint32_t seed = 1; seed <= 40; seed++) {
		struct tachi_stacktab t = { 0 };
		random_trie(&t, seed, 60, 6, nk);
		order_check(&t, labels, text, off, nk);
		tachi_stacktab_free(&t);
	}
}

/* Nodes with hundreds of children: their variants are sorted in ranges far past the short
 * ones sorted by insertion, in every arrangement the random keys give. */
static void stack_order_wide(void)
{
	enum { NK = 400 };
	static char names[NK][8];
	const char *labels[NK];
	char text[NK * 8];
	size_t off[NK + 1], len = 0;
	for (size_t i = 0; i < NK; i++) {
		/* labels that extend others ("f4" and "f4:", "f1" and "f10"), all distinct */
		if (i % 5 || !i)
			snprintf(names[i], sizeof(names[i]), "f%zu", i);
		else
			snprintf(names[i], sizeof(names[i]), "f%zu:", i - 1);
		labels[i] = names[i];
		off[i] = len;
		memcpy(text + len, names[i], strlen(names[i]));
		len += strlen(names[i]);
	}
	off[NK] = len;
	for (uint32_t seed = 1; seed <= 6; seed++) {
		struct tachi_stacktab t = { 0 };
		random_trie(&t, seed, 3000, 3, NK);
		order_check(&t, labels, text, off, NK);
		tachi_stacktab_free(&t);
	}
}

int main(void)
{
	strings();
	frames();
	natives();
	append_vs_intern();
	trie();
	trie_interleaved();
	dset();
	pathcache();
	pair_contexts();
	memo_size();
	stack_order();
	stack_order_wide();
	return CHECK_DONE();
}
