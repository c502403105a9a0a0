/* The symbolizers' shared binaries (see tachi_symcache in symbolize.h). A cache holds no
 * reference of its own: a binary stays while a symbolizer uses it, so an input that ends
 * lets go of the binaries no other input needs. A run has tens or hundreds of distinct
 * binaries, looked up once each per mapping: a list is enough. */
#include <stdlib.h>
#include <string.h>

#include "symbolize/impl.h"

struct tachi_symcache {
	unsigned refs;             /* tachi_symcache_ref's and the symbolizers' */
	struct module **mods;
	size_t n, cap;
	void *extra;
	void (*extra_free)(void *);
};

struct tachi_symcache *tachi_symcache_new(void)
{
	struct tachi_symcache *c = calloc(1, sizeof(*c));
	if (c)
		c->refs = 1;
	return c;
}

void tachi_symcache_ref(struct tachi_symcache *c)
{
	if (c)
		c->refs++;
}

void tachi_symcache_unref(struct tachi_symcache *c)
{
	if (!c || --c->refs)
		return;
	/* every binary has gone with the last symbolizer: the list is empty */
	free(c->mods);
	if (c->extra_free)
		c->extra_free(c->extra);
	free(c);
}

void *tachi_symcache_extra(const struct tachi_symcache *c)
{
	return c ? c->extra : NULL;
}

void tachi_symcache_set_extra(struct tachi_symcache *c, void *extra, void (*free_fn)(void *))
{
	if (c->extra_free)
		c->extra_free(c->extra);
	c->extra = extra;
	c->extra_free = free_fn;
}

static bool same(const struct module *a, const struct module *b)
{
	return a->dev == b->dev && a->ino == b->ino && a->size == b->size &&
	       a->mtime_ns == b->mtime_ns && a->base == b->base && a->perf == b->perf &&
	       !strcmp(a->found, b->found) && !strcmp(a->debuginfo_path, b->debuginfo_path);
}

struct module *tachi_symcache_find(struct tachi_symcache *c, const struct module *key)
{
	for (size_t i = 0; i < c->n; i++)
		if (same(c->mods[i], key)) {
			c->mods[i]->refs++;
			return c->mods[i];
		}
	return NULL;
}

bool tachi_symcache_add(struct tachi_symcache *c, struct module *m)
{
	if (!TACHI_RESERVE(c->mods, c->cap, c->n + 1))
		return false;
	c->mods[c->n++] = m;
	m->cache = c;
	return true;
}

void tachi_symcache_forget(struct tachi_symcache *c, struct module *m)
{
	for (size_t i = 0; i < c->n; i++)
		if (c->mods[i] == m) {
			c->mods[i] = c->mods[--c->n];
			return;
		}
}
