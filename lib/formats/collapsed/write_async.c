/* The collapsed writer's "async-profiler" label style: the lines `jfrconv -o collapsed`
 * (async-profiler's converter, one.convert.JfrToFlame) prints for a JFR recording, from
 * the frames the JFR reader makes (formats/jfr/read.c), so that
 * `tach-decode --labels async-profiler app.jfr` replaces the JVM step:
 *
 *   - Frames root first, each its function ("java/util/HashMap.merge") and ":LINE" with
 *     ap-lines where it has a line: its title.
 *   - jfrconv adds each stack to a tree, where a Java frame (interpreted, JIT-compiled,
 *     inlined, C1-compiled, and an allocated or locked class, which it marks inlined) is
 *     one node per title whatever its type, counting how much of it was of each; native,
 *     C++ and kernel frames (and an allocation outside a TLAB, which it marks kernel) are
 *     nodes of their own type. Each node with samples of its own prints a line: its path,
 *     each node's title with the suffix of its type, "_[i]" where at least a third of its
 *     samples were inlined, else "_[1]" where half were C1-compiled, else "_[0]" where
 *     half were interpreted, else "_[j]"; "_[k]" for kernel nodes, none for native and C++
 *     ones. The same tree is built here, from the counts of the distinct stacks.
 *   - Java class names (the part before the method's '.') with '/' as '.' (ap-dot), or
 *     without their package (ap-simple: from the last '/' not before a digit, as jfrconv
 *     cuts them, so that a hidden class's "/0x..." suffix stays).
 *   - With ap-threads, a root "[NAME tid=N]" per thread (the thread's name, N its id), or
 *     "[tid=N]" for a thread without one; else no thread frames at all.
 *   - Frames from other formats print as their function, without a suffix.
 *   - Lines sorted by text (collapsed/textlines.c; jfrconv prints them in the tree's
 *     order). Two nodes that print alike (a native and a C++ frame of one name) print
 *     two lines, as jfrconv's do.
 * Bytes are printed as they are, as jfrconv prints its strings.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/buf.h"
#include "base/hash.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/linekeys.h"
#include "core/handles.h"
#include "formats/collapse.h"
#include "formats/collapsed/textlines.h"
#include "formats/collapsed/write_async.h"

int tachi_async_labels_option(struct tach_writer *w, struct tachi_async_labels *al,
			      const char *key, const char *value)
{
	static const char *const keys[] = { "ap-threads", "ap-lines", "ap-simple", "ap-dot" };
	bool *to[] = { &al->threads, &al->lines, &al->simple, &al->dot };
	for (int i = 0; i < 4; i++)
		if (!strcmp(key, keys[i])) {
			if (!tachi_parse_bool(value, to[i]))
				return WFAIL(w, TACH_E_USAGE, "bad %s value %s", key, value);
			return TACH_OK;
		}
	return 1;
}

/* What a frame type's file makes of a frame: how its name is a class's, its node group
 * and the type it counts as (jfrconv's numbers: 0 interpreted, 1 JIT, 2 inlined, 3 native,
 * 4 C++, 5 kernel, 6 C1). */
enum { N_PLAIN, N_METHOD, N_CLASS };
enum { T_INTERP = 0, T_JIT = 1, T_INLINED = 2, T_NATIVE = 3, T_CPP = 4, T_KERNEL = 5, T_C1 = 6 };
static const struct { const char *file; int name; uint8_t type; } kinds[] = {
	{ "[Interpreted]", N_METHOD, T_INTERP }, { "[JIT compiled]", N_METHOD, T_JIT },
	{ "[Inlined]", N_METHOD, T_INLINED }, { "[C1 compiled]", N_METHOD, T_C1 },
	{ "[Native]", N_METHOD, T_NATIVE }, { "[C++]", N_PLAIN, T_CPP },
	{ "[Kernel]", N_PLAIN, T_KERNEL }, { "[allocated class]", N_CLASS, T_INLINED },
	{ "[allocated outside TLAB]", N_CLASS, T_KERNEL }, { "[lock class]", N_CLASS, T_INLINED },
};

static bool java_type(uint8_t t)
{
	return t == T_INTERP || t == T_JIT || t == T_INLINED || t == T_C1;
}

/* The class c[0, n) as the options show it, appended to b; sep is its package separator
 * ('/' in a method's class as the JVM names it, '.' in an allocated class, already dotted). */
static bool class_text(const struct tachi_async_labels *al, struct tachi_buf *b, const char *c,
		       size_t n, char sep)
{
	size_t start = 0, end = n;
	if (sep == '.')
		while (end >= 2 && c[end - 2] == '[' && c[end - 1] == ']')
			end -= 2;
	if (al->simple)
		for (size_t i = end >= 2 ? end - 1 : 0; i-- > 0;)
			if (c[i] == sep && !(c[i + 1] >= '0' && c[i + 1] <= '9')) {
				start = i + 1;
				break;
			}
	size_t from = b->len;
	if (!tachi_buf_add(b, c + start, n - start))
		return false;
	for (size_t i = from; al->dot && i < b->len; i++)
		if (b->p[i] == '/')
			b->p[i] = '.';
	return true;
}

/* A frame's title appended to b, and its type (native for frames of other formats). */
static bool frame_title(const struct tachi_async_labels *al, struct tachi_buf *b,
			const char *file, size_t fl, const char *func, size_t nl, int32_t line,
			uint8_t *type)
{
	size_t k = 0, nk = sizeof(kinds) / sizeof(kinds[0]);
	while (k < nk && !(strlen(kinds[k].file) == fl && !memcmp(kinds[k].file, file, fl)))
		k++;
	int how = k < nk ? kinds[k].name : N_PLAIN;
	*type = k < nk ? kinds[k].type : T_NATIVE;
	const char *dot = NULL;
	for (size_t i = nl; how == N_METHOD && i-- > 0;)
		if (func[i] == '.') {
			dot = func + i;
			break;
		}
	bool ok;
	if (how == N_CLASS)
		ok = class_text(al, b, func, nl, '.');
	else if (dot)
		ok = class_text(al, b, func, (size_t)(dot - func), '/') &&
		     tachi_buf_add(b, dot, nl - (size_t)(dot - func));
	else
		ok = tachi_buf_add(b, func, nl);
	char num[24];
	if (ok && al->lines && line > 0)
		ok = tachi_buf_add(b, ":", 1) && tachi_buf_add(b, num, tachi_fmt_u64(num, (uint64_t)line));
	return ok;
}

/* A node of jfrconv's tree: its parent, title and group (T_JIT for every Java type), what
 * passed through it, what ended in it, and how much of it was of each Java type. */
struct anode {
	uint32_t parent, title;
	uint8_t group;
	uint64_t total, self, inlined, c1, interp;
};

struct aout {
	const struct tachi_async_labels *al;
	const struct tachi_linekeys *lk;
	struct tachi_buf titles;   /* distinct titles' texts */
	size_t *toff;              /* title t: [toff[t], toff[t + 1]) */
	size_t ntitles, toff_cap;
	struct tachi_idset title_ix;
	uint32_t *key_title;       /* per line key: its title, or NO_TITLE for a thread root */
	uint8_t *key_type;
	struct anode *nodes;       /* node 0: the root */
	size_t nnodes, nodes_cap;
	struct tachi_idset node_ix;
	struct tachi_buf line, scratch;
	struct tachi_textlines lines;
};
#define NO_TITLE UINT32_MAX

struct titlekey {
	const char *p;
	size_t n;
};

static bool title_eq(void *ctx, uint32_t id, const void *key)
{
	const struct aout *o = ctx;
	const struct titlekey *k = key;
	return o->toff[id + 1] - o->toff[id] == k->n && !memcmp(o->titles.p + o->toff[id], k->p, k->n);
}

/* The title whose text is o->scratch, interned. */
static bool title_id(struct aout *o, uint32_t *id)
{
	struct titlekey k = { o->scratch.p, o->scratch.len };
	uint64_t h = tachi_hash(k.p, k.n);
	if (tachi_idset_find(&o->title_ix, h, &k, title_eq, o, id))
		return true;
	if (o->ntitles >= NO_TITLE - 1 || !TACHI_RESERVE(o->toff, o->toff_cap, o->ntitles + 2) ||
	    !TACHI_RESERVE(o->titles.p, o->titles.cap, 1))
		return false;
	if (!o->ntitles)
		o->toff[0] = 0;
	if (!tachi_buf_add(&o->titles, k.p, k.n) ||
	    !tachi_idset_insert(&o->title_ix, h, (uint32_t)o->ntitles))
		return false;
	*id = (uint32_t)o->ntitles++;
	o->toff[o->ntitles] = o->titles.len;
	return true;
}

static bool key_titles(struct aout *o)
{
	size_t nkeys = o->lk->nkeys;
	o->key_title = malloc((nkeys + 1) * sizeof(*o->key_title));
	o->key_type = malloc(nkeys + 1);
	if (!o->key_title || !o->key_type || !TACHI_RESERVE(o->scratch.p, o->scratch.cap, 1))
		return false;
	for (size_t k = 0; k < nkeys; k++) {
		const struct tachi_linekey *key = &o->lk->keys[k];
		size_t fl, nl;
		const char *file = tachi_str(&o->lk->names, key->file, &fl);
		const char *func = tachi_str(&o->lk->names, key->func, &nl);
		o->scratch.len = 0;
		o->key_type[k] = T_NATIVE;
		if (fl == 6 && !memcmp(file, "[comm]", 6)) {
			o->key_title[k] = NO_TITLE;
			continue;
		}
		if (!frame_title(o->al, &o->scratch, file, fl, func, nl, key->line, &o->key_type[k]) ||
		    !title_id(o, &o->key_title[k]))
			return false;
	}
	return true;
}

static bool node_eq(void *ctx, uint32_t id, const void *key)
{
	const struct aout *o = ctx;
	const struct anode *k = key;
	const struct anode *n = &o->nodes[id];
	return n->parent == k->parent && n->title == k->title && n->group == k->group;
}

/* The child of parent for (title, type), created when new; NO_TITLE when out of memory. */
static uint32_t child(struct aout *o, uint32_t parent, uint32_t title, uint8_t type, uint64_t c)
{
	struct anode k = { parent, title, java_type(type) ? T_JIT : type, 0, 0, 0, 0, 0 };
	uint64_t h = tachi_mix64((uint64_t)parent << 32 ^ title) ^ k.group;
	uint32_t id;
	if (!tachi_idset_find(&o->node_ix, h, &k, node_eq, o, &id)) {
		if (o->nnodes >= NO_TITLE - 1 || !TACHI_RESERVE(o->nodes, o->nodes_cap, o->nnodes + 1) ||
		    !tachi_idset_insert(&o->node_ix, h, (uint32_t)o->nnodes))
			return NO_TITLE;
		id = (uint32_t)o->nnodes++;
		o->nodes[id] = k;
	}
	struct anode *n = &o->nodes[id];
	n->total += c;
	n->inlined += type == T_INLINED ? c : 0;
	n->c1 += type == T_C1 ? c : 0;
	n->interp += type == T_INTERP ? c : 0;
	return id;
}

/* "[NAME tid=N]" for a thread root's name (NULL: none), as jfrconv names threads, into
 * o->scratch. */
static bool thread_title(struct aout *o, const char *name, size_t n, uint64_t tid)
{
	char b[24];
	o->scratch.len = 0;
	if (name && n >= 5 && !memcmp(name, "[tid=", 5))
		return tachi_buf_add(&o->scratch, name, n);
	return tachi_buf_add(&o->scratch, "[", 1) &&
	       (!name || (tachi_buf_add(&o->scratch, name, n) && tachi_buf_add(&o->scratch, " ", 1))) &&
	       tachi_buf_add(&o->scratch, "tid=", 4) &&
	       tachi_buf_add(&o->scratch, b, tachi_fmt_u64(b, tid)) && tachi_buf_add(&o->scratch, "]", 1);
}

/* One (thread, stack) of count c into the tree, root first from the trie. */
static bool add_stack(struct aout *o, const struct tachi_stacktab *t, const struct tachi_pair *e,
		      uint64_t c, uint32_t **path, size_t *cap)
{
	if (e->depth > *cap && !TACHI_RESERVE(*path, *cap, e->depth))
		return false;
	uint32_t d = e->depth, n = e->leaf, node = 0;
	for (; d > 0; d--, n = t->nodes[n].parent)
		(*path)[d - 1] = t->nodes[n].key;
	if (o->al->threads) {
		const char *name = NULL;
		size_t nl = 0;
		uint32_t title;
		if (e->depth && o->key_title[(*path)[0]] == NO_TITLE)
			name = tachi_str(&o->lk->names, o->lk->keys[(*path)[0]].func, &nl);
		if (!thread_title(o, name, nl, e->ctx) || !title_id(o, &title) ||
		    (node = child(o, node, title, T_NATIVE, c)) == NO_TITLE)
			return false;
	}
	for (uint32_t i = 0; i < e->depth; i++) {
		uint32_t k = (*path)[i];
		if (o->key_title[k] == NO_TITLE)
			continue;
		if ((node = child(o, node, o->key_title[k], o->key_type[k], c)) == NO_TITLE)
			return false;
	}
	o->nodes[0].total += c;
	if (node)
		o->nodes[node].self += c;
	return true;
}

static const char *node_suffix(const struct anode *n)
{
	if (n->group == T_KERNEL)
		return "_[k]";
	if (n->group != T_JIT)
		return "";
	return n->inlined * 3 >= n->total ? "_[i]" : n->c1 * 2 >= n->total ? "_[1]" :
	       n->interp * 2 >= n->total ? "_[0]" : "_[j]";
}

/* Node id's line: its path's titles, root first, with their suffixes. */
static bool node_line(struct aout *o, uint32_t id, uint32_t **path, size_t *cap)
{
	size_t d = 0;
	for (uint32_t n = id; n; n = o->nodes[n].parent) {
		if (!TACHI_RESERVE(*path, *cap, d + 1))
			return false;
		(*path)[d++] = n;
	}
	o->line.len = 0;
	while (d-- > 0) {
		const struct anode *n = &o->nodes[(*path)[d]];
		const char *sfx = node_suffix(n);
		if ((o->line.len && !tachi_buf_add(&o->line, ";", 1)) ||
		    !tachi_buf_add(&o->line, o->titles.p + o->toff[n->title],
				   o->toff[n->title + 1] - o->toff[n->title]) ||
		    !tachi_buf_add(&o->line, sfx, strlen(sfx)))
			return false;
	}
	return true;
}

static bool build(struct aout *o, const struct tachi_stackcount *sc)
{
	const struct tachi_stacktab *t = &sc->agg.trie;
	uint32_t *path = NULL;
	size_t cap = 0;
	bool ok = key_titles(o) && TACHI_RESERVE(o->nodes, o->nodes_cap, 1);
	if (ok)
		o->nodes[o->nnodes++] = (struct anode){ NO_TITLE, NO_TITLE, 0, 0, 0, 0, 0, 0 };
	for (size_t i = 0; ok && i < sc->ncounts; i++) {
		const struct tachi_pair *e = &t->pairs[i];
		if (sc->counts[i] && e->leaf != TACHI_ROOT)
			ok = add_stack(o, t, e, sc->counts[i], &path, &cap);
	}
	for (uint32_t id = 1; ok && id < o->nnodes; id++)
		if (o->nodes[id].self)
			ok = node_line(o, id, &path, &cap) &&
			     tachi_textlines_push(&o->lines, o->line.p, o->line.len, o->nodes[id].self);
	free(path);
	return ok;
}

int tachi_async_labels_write(struct tach_writer *w, const struct tachi_async_labels *al,
			     const struct tachi_stackcount *sc)
{
	struct aout o = { .al = al, .lk = &sc->agg.lk };
	int rc = build(&o, sc) ? tachi_textlines_print(w, &o.lines) :
		 WFAIL(w, TACH_E_NOMEM, "out of memory");
	free(o.titles.p);
	free(o.toff);
	tachi_idset_free(&o.title_ix);
	free(o.key_title);
	free(o.key_type);
	free(o.nodes);
	tachi_idset_free(&o.node_ix);
	free(o.line.p);
	free(o.scratch.p);
	tachi_textlines_free(&o.lines);
	return rc;
}
