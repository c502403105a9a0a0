/* callgrind writer: the text format of valgrind's callgrind tool, version 1, with name
 * compression for objects (ob=, cob=), files (fl=, cfi=) and functions (fn=, cfn=).
 *
 * A function is (object, file, name): a frame's own file and name, its mapping's file as
 * the object for native frames ("???" for empty names; the file "???" where the frame's file
 * is its binary: no source known). Positions are "line", or
 * "instr line" when some frame has a native address (frames without one get address 0):
 * Python frames keep their files and lines, native ones their objects and addresses. All
 * threads are one profile: callgrind's parts per thread have no readers that merge them.
 *
 * Costs: an event per value. Samples (the weights), then Time_ns where the samples carry
 * time (the sum of their time_ns: a V8 sample's time to the next, a perf period, weight ×
 * interval for TACH); or, where the input has value types (pprof's sample types), an event
 * per type instead, named after it with its unit in the event's long name, the one the
 * weights are first (the input's default, or --sample-index's). A cost line per (function,
 * address, line) holds the self cost of the samples whose innermost frame is there; samples
 * with an empty stack are the self cost of a function "(no stack)", so that "totals:",
 * which holds all of it, is the profile's total as every other view shows it.
 *
 * Calls: a line per (caller position, callee function), calls= the samples that passed
 * through it (a sampling profile has no call counts). Its inclusive cost counts a sample
 * only where the call enters the callee's outermost frame in that sample; calls into a
 * frame that is already on the stack further out cost 0. callgrind_annotate gives a
 * function the sum of its incoming calls as its inclusive cost (or its self cost plus its
 * outgoing calls when nothing calls it), so this counts each function once per sample
 * however deeply it recurs. When a function is a stack's outermost frame in some samples
 * and is called in others, a function "(root)" calls every stack's outermost frame, so that
 * every function's inclusive cost comes from its calls alone.
 *
 * Memory: the distinct stacks (a trie of positions), then at close per call edge; never
 * per sample.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "base/io.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/values.h"
#include "formats/collapse.h"
#include "formats/callgrind/callgrind.h"

#define NONE UINT32_MAX

struct cgfn {
	uint32_t ob, file, name; /* ids in names; ob NONE: no object */
};
struct cgpos {
	uint32_t fn;
	int32_t line;            /* 0: unknown */
	uint64_t addr;           /* 0: unknown */
};
struct cgcall {
	uint32_t from, to_fn, to_pos; /* caller position, callee, its first-seen position */
	uint64_t calls;               /* its costs: cgstate.call_cost */
};

enum { K_OB, K_FL, K_FN, NKINDS };

struct cgstate {
	const struct tach_dict *src;
	struct tach_dict names;
	struct cgfn *fns;
	size_t nfns, fns_cap;
	struct tachi_idset fn_index;
	struct cgpos *pos;
	size_t npos, pos_cap;
	struct tachi_idset pos_index;
	uint32_t *fmap;          /* source frame id -> position */
	size_t fmap_cap, nmapped;
	struct tachi_stacktab trie;
	struct tachi_threads threads;
	/* Events (choose_events): ncol costs per (context, leaf) pair of the trie, pair i's at
	 * counts[i * ncol]: its weight (not written: calls= counts it), then the nev events. */
	uint32_t nev, ncol;
	bool timed;              /* Samples, then Time_ns */
	uint32_t nvt;            /* or the input's value types, type i as event col[i] */
	uint32_t *col;
	uint64_t time_div;       /* a sample without values: the weight type's value is its
				  * time_ns / time_div (a time type), else its weight (0) */
	const struct tach_sample_ext *ext; /* the extras of the sample being put */
	uint64_t *counts;
	size_t ncounts, counts_cap; /* in pairs */
	uint64_t total;
	uint64_t *empty;         /* [nev]: samples with an empty stack, "(no stack)"'s cost */
	uint64_t *sum;           /* [nev]: all of it, for totals: */
	bool has_addr, has_ob, warned_ctrl;
	/* close */
	uint64_t *self;          /* per position, nev each */
	uint64_t *call_cost;     /* per call, nev each */
	struct cgcall *calls;
	size_t ncalls, calls_cap;
	struct tachi_idset call_index;
	uint64_t *mark;          /* per function: the last stack (1-based) that met it */
	uint8_t *role;           /* per function: 1 a stack's outermost frame, 2 called */
	uint32_t *path;
	size_t path_cap;
	uint32_t root_pos;       /* NONE: no "(root)" function */
	uint32_t unknown_name;      /* "???": the object of a function without one */
	uint32_t *pos_order, *fn_first, *call_order, *pos_first;
	uint32_t *cid[NKINDS];   /* names id -> compressed id, 0: not written yet */
	uint32_t next_cid[NKINDS];
	char (*event)[64];       /* [nev]; event_long[k][0] == 0: none */
	char (*event_long)[96];
	char *tmp;
	size_t tmp_cap;
};

/* ---- put: frames to positions, stacks into the trie ---- */

static uint64_t fn_hash(const struct cgfn *f)
{
	return tachi_mix64(((uint64_t)f->ob << 32 | f->file) ^ tachi_mix64(f->name));
}

static bool fn_eq(void *ctx, uint32_t id, const void *k)
{
	const struct cgstate *st = ctx;
	const struct cgfn *a = &st->fns[id], *b = k;
	return a->ob == b->ob && a->file == b->file && a->name == b->name;
}

static uint64_t pos_hash(const struct cgpos *p)
{
	return tachi_mix64(((uint64_t)p->fn << 32 | (uint32_t)p->line) ^ tachi_mix64(p->addr));
}

static bool pos_eq(void *ctx, uint32_t id, const void *k)
{
	const struct cgstate *st = ctx;
	const struct cgpos *a = &st->pos[id], *b = k;
	return a->fn == b->fn && a->line == b->line && a->addr == b->addr;
}

static bool add_fn(struct cgstate *st, const struct cgfn *f, uint32_t *id)
{
	uint64_t h = fn_hash(f);
	if (tachi_idset_find(&st->fn_index, h, f, fn_eq, st, id))
		return true;
	if (st->nfns >= UINT32_MAX - 2 || !TACHI_RESERVE(st->fns, st->fns_cap, st->nfns + 1))
		return false;
	*id = (uint32_t)st->nfns;
	st->fns[*id] = *f;
	if (!tachi_idset_insert(&st->fn_index, h, *id))
		return false;
	st->nfns++;
	return true;
}

static bool add_pos(struct cgstate *st, const struct cgpos *p, uint32_t *id)
{
	uint64_t h = pos_hash(p);
	if (tachi_idset_find(&st->pos_index, h, p, pos_eq, st, id))
		return true;
	if (st->npos >= UINT32_MAX - 2 || !TACHI_RESERVE(st->pos, st->pos_cap, st->npos + 1))
		return false;
	*id = (uint32_t)st->npos;
	st->pos[*id] = *p;
	if (!tachi_idset_insert(&st->pos_index, h, *id))
		return false;
	st->npos++;
	return true;
}

/* A source string by text in names; an id out of range (a TACH table's frame that no
 * sample uses: its reader fails the sample that would) becomes "". */
static bool name_of(struct cgstate *st, const struct tach_dict *d, uint32_t sid, uint32_t *id)
{
	size_t n = 0;
	const char *s = sid < d->str_count ? tachi_str(d, sid, &n) : "";
	return !tach_dict_intern_string(&st->names, s, n, id);
}

static bool map_frame(struct cgstate *st, const struct tach_dict *d, uint32_t fid)
{
	const struct tach_frame *f = &d->frames[fid];
	const struct tach_frame_native *n = tach_dict_frame_native(d, fid);
	struct cgfn fn = { NONE, 0, 0 };
	if (!name_of(st, d, f->file, &fn.file) || !name_of(st, d, f->func, &fn.name))
		return false;
	const struct tach_mapping *m = n && n->mapping ? tach_dict_mapping(d, n->mapping) : NULL;
	if (m && m->file != TACH_NO_STRING) {
		if (!name_of(st, d, m->file, &fn.ob))
			return false;
		st->has_ob = true;
		/* a native frame without a source file is named by its binary: that is its
		 * object, and its file unknown, as valgrind writes it ("???"), so that
		 * callgrind_annotate does not read the binary as source */
		if (fn.file == fn.ob && tach_dict_intern_string(&st->names, "???", 3, &fn.file))
			return false;
	}
	struct cgpos p = { 0, f->line > 0 ? f->line : 0, n ? n->address : 0 };
	st->has_addr |= p.addr != 0;
	return add_fn(st, &fn, &p.fn) && add_pos(st, &p, &st->fmap[fid]);
}

static int map_frames(struct tach_writer *w, const struct tach_dict *d)
{
	struct cgstate *st = w->state;
	if (!tachi_idmap_reserve(&st->fmap, &st->fmap_cap, d->frame_count))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	for (; st->nmapped < d->frame_count; st->nmapped++)
		if (!map_frame(st, d, (uint32_t)st->nmapped))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
	return TACH_OK;
}

static void add_sat(uint64_t *a, uint64_t b)
{
	if (__builtin_add_overflow(*a, b, a))
		*a = UINT64_MAX;
}

/* s's costs, one per event, added to v. */
static void add_costs(struct cgstate *st, uint64_t *v, const struct tach_sample *s,
		      uint32_t weight_type)
{
	add_sat(&v[0], s->weight);
	uint64_t *t = v + 1;
	const struct tach_sample_ext *e = st->ext;
	if (!st->nvt) {
		add_sat(&t[0], s->weight);
		if (st->timed)
			add_sat(&t[1], s->time_ns);
	} else if (e && e->value_count == st->nvt) {
		/* pprof's values are signed; a negative one (a diff profile) counts as 0 */
		for (uint32_t i = 0; i < st->nvt; i++)
			add_sat(&t[st->col[i]], e->values[i] > 0 ? (uint64_t)e->values[i] : 0);
	} else {
		add_sat(&t[st->col[weight_type]], st->time_div ? s->time_ns / st->time_div : s->weight);
	}
}

static bool reserve_costs(struct cgstate *st, uint32_t e)
{
	if (e < st->ncounts)
		return true;
	size_t want, old = st->counts_cap;
	if (__builtin_mul_overflow((size_t)e + 1, st->ncol, &want) ||
	    !TACHI_RESERVE(st->counts, st->counts_cap, want))
		return false;
	memset(st->counts + old, 0, (st->counts_cap - old) * sizeof(*st->counts));
	st->ncounts = (size_t)e + 1;
	return true;
}

static int cg_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct cgstate *st = w->state;
	if (__builtin_add_overflow(st->total, s->weight, &st->total))
		return WFAIL(w, TACH_E_LIMIT, "the weights add up past 2^64");
	if (!s->depth) {
		add_costs(st, st->empty, s, w->meta.weight_type);
		return TACH_OK;
	}
	/* the same dict for every sample: tach_writer_put checks it */
	if (TACHI_UNLIKELY(!st->src)) {
		st->src = d;
	}
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&st->threads, s->thread_id, s->interp_id,
						      &created);
	if (!c)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	/* The same stack as this thread's previous sample: nothing to look up. */
	if (!(s->same_outer >= s->depth && s->depth == c->depth && c->leaf != TACHI_NOMEM_NODE)) {
		int rc = st->nmapped < d->frame_count ? map_frames(w, d) : TACH_OK;
		if (rc)
			return rc;
		if (tachi_stack_intern_ctx(&st->trie, c, s, st->fmap, 0) == TACHI_NOMEM_NODE)
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	uint32_t e = c->entry;
	if (!reserve_costs(st, e))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	add_costs(st, st->counts + (size_t)e * st->ncol, s, w->meta.weight_type);
	return TACH_OK;
}

static int cg_put_ext(struct tach_writer *w, const struct tach_dict *d,
		      const struct tach_sample *s, const struct tach_sample_ext *ext)
{
	struct cgstate *st = w->state;
	st->ext = ext;
	int rc = cg_put(w, d, s);
	st->ext = NULL;
	return rc;
}

/* ---- close: self costs and calls, from each distinct stack once ---- */

static uint64_t call_hash(uint32_t from, uint32_t to_fn)
{
	return tachi_mix64((uint64_t)from << 32 | to_fn);
}

static bool call_eq(void *ctx, uint32_t id, const void *k)
{
	const struct cgstate *st = ctx;
	const struct cgcall *a = &st->calls[id], *b = k;
	return a->from == b->from && a->to_fn == b->to_fn;
}

/* A call passed by n samples, with their costs where it enters the callee (cost: nev
 * values, NULL for none). */
static bool add_call(struct cgstate *st, uint32_t from, uint32_t to_pos, uint64_t n,
		     const uint64_t *cost)
{
	struct cgcall k = { from, st->pos[to_pos].fn, to_pos, n };
	uint64_t h = call_hash(from, k.to_fn);
	uint32_t id;
	if (tachi_idset_find(&st->call_index, h, &k, call_eq, st, &id)) {
		add_sat(&st->calls[id].calls, n);
	} else {
		size_t cap = st->calls_cap;
		if (st->ncalls >= UINT32_MAX - 1 ||
		    !TACHI_RESERVE(st->calls, st->calls_cap, st->ncalls + 1))
			return false;
		if (st->calls_cap != cap) {
			size_t bytes = st->calls_cap * st->ncol * sizeof(uint64_t);
			uint64_t *c = realloc(st->call_cost, bytes ? bytes : 1);
			if (!c)
				return false;
			st->call_cost = c;
		}
		id = (uint32_t)st->ncalls;
		st->calls[id] = k;
		memset(st->call_cost + (size_t)id * st->ncol, 0, st->ncol * sizeof(uint64_t));
		if (!tachi_idset_insert(&st->call_index, h, id))
			return false;
		st->ncalls++;
	}
	for (uint32_t k2 = 0; cost && k2 < st->ncol; k2++)
		add_sat(&st->call_cost[(size_t)id * st->ncol + k2], cost[k2]);
	return true;
}

static bool any_cost(const struct cgstate *st, const uint64_t *cost)
{
	for (uint32_t k = 0; k < st->ncol; k++)
		if (cost[k])
			return true;
	return false;
}

/* The stack of pair i as positions, outermost first, into st->path; its depth. */
static bool stack_path(struct cgstate *st, size_t i, uint32_t *depth)
{
	const struct tachi_stacktab *t = &st->trie;
	uint32_t dep = t->pairs[i].depth;
	if (!TACHI_RESERVE(st->path, st->path_cap, dep ? dep : 1))
		return false;
	uint32_t node = t->pairs[i].leaf;
	for (uint32_t k = dep; k > 0 && node != TACHI_ROOT; node = t->nodes[node].parent)
		st->path[--k] = t->nodes[node].key;
	*depth = dep;
	return true;
}

/* Whether some function is a stack's outermost frame in one sample and called in another:
 * then "(root)" calls every outermost frame. */
static bool find_roles(struct cgstate *st)
{
	bool both = false;
	for (size_t i = 0; i < st->ncounts; i++) {
		uint32_t dep;
		if (!any_cost(st, st->counts + i * st->ncol))
			continue;
		if (!stack_path(st, i, &dep))
			return false;
		for (uint32_t k = 0; k < dep; k++) {
			uint8_t *r = &st->role[st->pos[st->path[k]].fn];
			*r |= k ? 2 : 1;
			both |= *r == 3;
		}
	}
	if (!both)
		return true;
	uint32_t file, name;
	if (tach_dict_intern_string(&st->names, "???", 3, &file) ||
	    tach_dict_intern_string(&st->names, "(root)", 6, &name))
		return false;
	struct cgfn fn = { NONE, file, name };
	struct cgpos p = { 0, 0, 0 };
	return add_fn(st, &fn, &p.fn) && add_pos(st, &p, &st->root_pos);
}

/* A distinct stack's costs v (nev values, v[0] its samples). */
static bool count_stack(struct cgstate *st, uint32_t dep, const uint64_t *v, uint64_t gen)
{
	uint64_t *self = st->self + (size_t)st->path[dep - 1] * st->ncol;
	for (uint32_t k = 0; k < st->ncol; k++)
		add_sat(&self[k], v[k]);
	for (uint32_t k = 0; k < dep; k++) {
		uint32_t p = st->path[k], f = st->pos[p].fn;
		bool outermost = st->mark[f] != gen;
		st->mark[f] = gen;
		uint32_t from = k ? st->path[k - 1] : st->root_pos;
		if (from != NONE && !add_call(st, from, p, v[0], outermost ? v : NULL))
			return false;
	}
	return true;
}

static int count_all(struct tach_writer *w)
{
	struct cgstate *st = w->state;
	size_t nf = st->nfns + 1, np = st->npos + 1; /* room for "(root)" */
	st->root_pos = NONE;
	st->self = calloc(np * st->ncol, sizeof(*st->self));
	st->mark = calloc(nf, sizeof(*st->mark));
	st->role = calloc(nf, 1);
	if (!st->self || !st->mark || !st->role || !find_roles(st))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	uint64_t gen = 0;
	for (size_t i = 0; i < st->ncounts; i++) {
		uint32_t dep;
		const uint64_t *v = st->counts + i * st->ncol;
		for (uint32_t k = 0; k < st->ncol; k++)
			add_sat(&st->sum[k], v[k]);
		if (!any_cost(st, v))
			continue;
		if (!stack_path(st, i, &dep) || !count_stack(st, dep, v, ++gen))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	for (uint32_t k = 0; k < st->ncol; k++)
		add_sat(&st->sum[k], st->empty[k]);
	return TACH_OK;
}

/* ---- output ---- */

/* Positions grouped by function and calls by caller position, each in first-seen order. */
static bool group(struct cgstate *st)
{
	size_t nf = st->nfns, np = st->npos;
	st->fn_first = calloc(nf + 1, sizeof(uint32_t));
	st->pos_first = calloc(np + 1, sizeof(uint32_t));
	st->pos_order = malloc((np ? np : 1) * sizeof(uint32_t));
	st->call_order = malloc((st->ncalls ? st->ncalls : 1) * sizeof(uint32_t));
	if (!st->fn_first || !st->pos_first || !st->pos_order || !st->call_order)
		return false;
	for (size_t p = 0; p < np; p++)
		st->fn_first[st->pos[p].fn + 1]++;
	for (size_t f = 0; f < nf; f++)
		st->fn_first[f + 1] += st->fn_first[f];
	for (size_t c = 0; c < st->ncalls; c++)
		st->pos_first[st->calls[c].from + 1]++;
	for (size_t p = 0; p < np; p++)
		st->pos_first[p + 1] += st->pos_first[p];
	/* fill with the counts of the slot before as cursors, then restore them */
	for (size_t p = 0; p < np; p++)
		st->pos_order[st->fn_first[st->pos[p].fn]++] = (uint32_t)p;
	for (size_t f = nf; f > 0; f--)
		st->fn_first[f] = st->fn_first[f - 1];
	st->fn_first[0] = 0;
	for (size_t c = 0; c < st->ncalls; c++)
		st->call_order[st->pos_first[st->calls[c].from]++] = (uint32_t)c;
	for (size_t p = np; p > 0; p--)
		st->pos_first[p] = st->pos_first[p - 1];
	st->pos_first[0] = 0;
	return true;
}

static int out_str(struct tach_writer *w, const char *s)
{
	return tachi_out_str(&w->out, s) ? TACH_E_IO : TACH_OK;
}

/* Name text on one line: control bytes would end or corrupt it, so they become '?'. */
static int out_text(struct tach_writer *w, const char *s, size_t n)
{
	struct cgstate *st = w->state;
	if (!n)
		return out_str(w, "???");
	if (!TACHI_RESERVE(st->tmp, st->tmp_cap, n))
		return TACH_E_NOMEM;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		bool ctrl = c < 0x20 || c == 0x7f;
		if (ctrl && !st->warned_ctrl) {
			st->warned_ctrl = true;
			tachi_warn(&w->warn, TACH_POS_NONE, 0,
				   "a name contains control characters: written as '?'");
		}
		st->tmp[i] = ctrl ? '?' : (char)c;
	}
	return tachi_out_write(&w->out, st->tmp, n) ? TACH_E_IO : TACH_OK;
}

/* "KEY=(id) name" the first time a name is written in its kind, "KEY=(id)" after. */
static int out_name(struct tach_writer *w, const char *key, int kind, uint32_t sid)
{
	struct cgstate *st = w->state;
	uint32_t *cid = &st->cid[kind][sid];
	bool first = !*cid;
	if (first)
		*cid = ++st->next_cid[kind];
	if (out_str(w, key) || tachi_out_byte(&w->out, '(') || tachi_out_u64(&w->out, *cid) ||
	    tachi_out_byte(&w->out, ')'))
		return TACH_E_IO;
	int rc = TACH_OK;
	if (first) {
		size_t n;
		const char *s = tachi_str(&st->names, sid, &n);
		rc = tachi_out_byte(&w->out, ' ') ? TACH_E_IO : out_text(w, s, n);
	}
	return rc ? rc : tachi_out_byte(&w->out, '\n') ? TACH_E_IO : TACH_OK;
}

static int out_pos(struct tach_writer *w, uint32_t p)
{
	struct cgstate *st = w->state;
	const struct cgpos *ps = &st->pos[p];
	if (st->has_addr) {
		char hex[24];
		snprintf(hex, sizeof(hex), "0x%llx ", (unsigned long long)ps->addr);
		if (out_str(w, hex))
			return TACH_E_IO;
	}
	return tachi_out_i64(&w->out, ps->line) ? TACH_E_IO : TACH_OK;
}

/* A cost line's events (cost[1..nev]), each after a space, then the end of the line. */
static int out_costs(struct tach_writer *w, const uint64_t *cost)
{
	struct cgstate *st = w->state;
	for (uint32_t k = 1; k < st->ncol; k++)
		if (tachi_out_byte(&w->out, ' ') || tachi_out_u64(&w->out, cost[k]))
			return TACH_E_IO;
	return tachi_out_byte(&w->out, '\n') ? TACH_E_IO : TACH_OK;
}

static int out_cost(struct tach_writer *w, uint32_t p, const uint64_t *cost)
{
	int rc = out_pos(w, p);
	return rc ? rc : out_costs(w, cost);
}



/* cob= and cfi= only where the callee's object or file is not the caller's, as callgrind
 * writes them: callgrind_annotate shortens the current directory off fl= names but not off
 * cfi= names, so a same-file call named by cfi= would be another function to it. */
static int out_call(struct tach_writer *w, const struct cgfn *from, const struct cgcall *c)
{
	struct cgstate *st = w->state;
	const struct cgfn *to = &st->fns[c->to_fn];
	int rc = TACH_OK;
	if (st->has_ob && to->ob != from->ob)
		rc = out_name(w, "cob=", K_OB, to->ob != NONE ? to->ob : st->unknown_name);
	if (!rc && to->file != from->file)
		rc = out_name(w, "cfi=", K_FL, to->file);
	if (rc || (rc = out_name(w, "cfn=", K_FN, to->name)))
		return rc;
	if (out_str(w, "calls=") || tachi_out_u64(&w->out, c->calls) || tachi_out_byte(&w->out, ' '))
		return TACH_E_IO;
	if ((rc = out_pos(w, c->to_pos)) || tachi_out_byte(&w->out, '\n'))
		return rc ? rc : TACH_E_IO;
	return out_cost(w, c->from, st->call_cost + (size_t)(c - st->calls) * st->ncol);
}

/* A function's block: its names, then per position its self cost and its calls. */
static int out_fn(struct tach_writer *w, uint32_t f)
{
	struct cgstate *st = w->state;
	const struct cgfn *fn = &st->fns[f];
	bool any = false;
	for (uint32_t i = st->fn_first[f]; i < st->fn_first[f + 1] && !any; i++) {
		uint32_t p = st->pos_order[i];
		any = any_cost(st, st->self + (size_t)p * st->ncol) ||
		      st->pos_first[p] < st->pos_first[p + 1];
	}
	if (!any)
		return TACH_OK;
	int rc = tachi_out_byte(&w->out, '\n') ? TACH_E_IO : TACH_OK;
	if (!rc && st->has_ob)
		rc = out_name(w, "ob=", K_OB, fn->ob != NONE ? fn->ob : st->unknown_name);
	if (rc || (rc = out_name(w, "fl=", K_FL, fn->file)) || (rc = out_name(w, "fn=", K_FN, fn->name)))
		return rc;
	for (uint32_t i = st->fn_first[f]; i < st->fn_first[f + 1]; i++) {
		uint32_t p = st->pos_order[i];
		const uint64_t *self = st->self + (size_t)p * st->ncol;
		if (any_cost(st, self) && (rc = out_cost(w, p, self)))
			return rc;
		for (uint32_t k = st->pos_first[p]; k < st->pos_first[p + 1]; k++)
			if ((rc = out_call(w, fn, &st->calls[st->call_order[k]])))
				return rc;
	}
	return TACH_OK;
}

/* An event's name: one word of letters, digits and '_' to callgrind's readers, told apart
 * from the events before it. */
static void event_name(struct cgstate *st, uint32_t k, const char *name)
{
	char *e = st->event[k];
	size_t n = 0, cap = sizeof(st->event[0]) - 8;
	for (; name && name[n] && n < cap; n++) {
		char c = name[n];
		bool ok = (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' ||
			  (n && c >= '0' && c <= '9');
		e[n] = ok ? c : '_';
	}
	if (!n)
		e[n++] = 'v';
	e[n] = 0;
	for (uint32_t j = 0; j < k; j++)
		if (!strcmp(st->event[j], e)) {
			snprintf(e + n, 8, "_%u", (unsigned)(k + 1));
			break;
		}
}

/* The events (see the top of the file): the input's value types, the weights' first; else
 * Samples and, where the samples carry time, Time_ns. */
static int choose_events(struct tach_writer *w)
{
	struct cgstate *st = w->state;
	const struct tach_meta *m = &w->meta;
	st->timed = m->sample_time;
	st->nvt = m->value_types ? m->value_type_count : 0;
	if (st->nvt > 4096)
		return WFAIL(w, TACH_E_LIMIT, "%u value types: more events than callgrind's readers "
			     "take", (unsigned)st->nvt);
	st->nev = st->nvt ? st->nvt : 1u + st->timed;
	st->ncol = 1 + st->nev;
	st->event = calloc(st->nev, sizeof(*st->event));
	st->event_long = calloc(st->nev, sizeof(*st->event_long));
	st->empty = calloc(st->ncol, sizeof(*st->empty));
	st->sum = calloc(st->ncol, sizeof(*st->sum));
	st->col = calloc(st->nvt ? st->nvt : 1, sizeof(*st->col));
	if (!st->event || !st->event_long || !st->empty || !st->sum || !st->col)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (!st->nvt) {
		event_name(st, 0, "Samples");
		if (m->interval_us)
			snprintf(st->event_long[0], sizeof(st->event_long[0]),
				 "Samples, one per %llu us", (unsigned long long)m->interval_us);
		if (st->timed) {
			event_name(st, 1, "Time_ns");
			snprintf(st->event_long[1], sizeof(st->event_long[1]), "Time (nanoseconds)");
		}
		return TACH_OK;
	}
	/* the type the weights are (the input's default, or the one --sample-index chose)
	 * first: callgrind's readers show and sort by the first event */
	uint32_t first = m->weight_type < st->nvt ? m->weight_type : 0, k = 1;
	for (uint32_t i = 0; i < st->nvt; i++)
		st->col[i] = i == first ? 0u : k++;
	for (uint32_t i = 0; i < st->nvt; i++) {
		const struct tach_value_type *vt = &m->value_types[i];
		event_name(st, st->col[i], vt->type);
		snprintf(st->event_long[st->col[i]], sizeof(st->event_long[0]), "%.40s (%.40s)",
			 vt->type ? vt->type : "", vt->unit ? vt->unit : "");
	}
	const struct tach_value_type *wt = m->weight_type < st->nvt ?
					   &m->value_types[m->weight_type] : NULL;
	st->time_div = wt && wt->unit && !m->weight_unit && m->sample_time ?
		       tachi_time_unit_ns(wt->unit, strlen(wt->unit)) : 0;
	return TACH_OK;
}

static int out_header(struct tach_writer *w)
{
	struct cgstate *st = w->state;
	char line[256];
	snprintf(line, sizeof(line), "# callgrind format\nversion: 1\ncreator: tachfmt %s\n",
		 tach_version());
	int rc = out_str(w, line);
	if (!rc && w->meta.program && *w->meta.program &&
	    !(rc = out_str(w, "cmd: ")) &&
	    !(rc = out_text(w, w->meta.program, strlen(w->meta.program))))
		rc = out_str(w, "\n");
	if (rc || out_str(w, st->has_addr ? "positions: instr line\n" : "positions: line\n"))
		return rc ? rc : TACH_E_IO;
	for (uint32_t k = 0; k < st->nev; k++) {
		if (!st->event_long[k][0])
			continue;
		snprintf(line, sizeof(line), "event: %s : %s\n", st->event[k], st->event_long[k]);
		if (out_str(w, line))
			return TACH_E_IO;
	}
	if (out_str(w, "events:"))
		return TACH_E_IO;
	for (uint32_t k = 0; k < st->nev; k++)
		if (out_str(w, " ") || out_str(w, st->event[k]))
			return TACH_E_IO;
	return out_str(w, "\n");
}

/* The samples with an empty stack: the self cost of a function "(no stack)" (no function
 * of the profile bears them, yet they are part of its total). */
static int out_no_stack(struct tach_writer *w)
{
	struct cgstate *st = w->state;
	uint32_t file, name;
	size_t old = st->names.str_count;
	if (tach_dict_intern_string(&st->names, "???", 3, &file) ||
	    tach_dict_intern_string(&st->names, "(no stack)", 10, &name))
		return TACH_E_NOMEM;
	for (int k = 0; k < NKINDS && st->names.str_count > old; k++) {
		uint32_t *c = realloc(st->cid[k], st->names.str_count * sizeof(uint32_t));
		if (!c)
			return TACH_E_NOMEM;
		memset(c + old, 0, (st->names.str_count - old) * sizeof(uint32_t));
		st->cid[k] = c;
	}
	int rc = tachi_out_byte(&w->out, '\n') ? TACH_E_IO : TACH_OK;
	if (!rc && st->has_ob)
		rc = out_name(w, "ob=", K_OB, st->unknown_name);
	if (rc || (rc = out_name(w, "fl=", K_FL, file)) || (rc = out_name(w, "fn=", K_FN, name)))
		return rc;
	if (out_str(w, st->has_addr ? "0x0 0" : "0"))
		return TACH_E_IO;
	return out_costs(w, st->empty);
}

static int write_all(struct tach_writer *w)
{
	struct cgstate *st = w->state;
	if (!group(st))
		return TACH_E_NOMEM;
	size_t ns = st->names.str_count ? st->names.str_count : 1;
	for (int k = 0; k < NKINDS; k++)
		if (!(st->cid[k] = calloc(ns, sizeof(uint32_t))))
			return TACH_E_NOMEM;
	int rc = out_header(w);
	for (uint32_t f = 0; f < st->nfns && !rc; f++)
		rc = out_fn(w, f);
	if (!rc && any_cost(st, st->empty))
		rc = out_no_stack(w);
	if (rc || out_str(w, "\ntotals:"))
		return rc ? rc : TACH_E_IO;
	return out_costs(w, st->sum);
}

static int cg_begin(struct tach_writer *w)
{
	struct cgstate *st = w->state;
	tachi_dict_init(&st->names, true);
	uint32_t id;
	if (tach_dict_intern_string(&st->names, "???", 3, &id))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	st->unknown_name = id;
	return choose_events(w);
}

static int cg_close(struct tach_writer *w)
{
	int rc = count_all(w);
	if (rc)
		return rc;
	rc = write_all(w);
	if (rc == TACH_E_IO)
		return tachi_writer_io(w);
	if (rc)
		return WFAIL(w, rc, "out of memory");
	return TACH_OK;
}

static void cg_free(struct tach_writer *w)
{
	struct cgstate *st = w->state;
	tachi_dict_clear(&st->names);
	free(st->fns);
	tachi_idset_free(&st->fn_index);
	free(st->pos);
	tachi_idset_free(&st->pos_index);
	free(st->fmap);
	tachi_stacktab_free(&st->trie);
	tachi_threads_free(&st->threads);
	free(st->counts);
	free(st->self);
	free(st->call_cost);
	free(st->event);
	free(st->event_long);
	free(st->col);
	free(st->empty);
	free(st->sum);
	free(st->calls);
	tachi_idset_free(&st->call_index);
	free(st->mark);
	free(st->role);
	free(st->path);
	free(st->pos_order);
	free(st->fn_first);
	free(st->call_order);
	free(st->pos_first);
	for (int k = 0; k < NKINDS; k++)
		free(st->cid[k]);
	free(st->tmp);
}

static int cg_option(struct tach_writer *w, const char *key, const char *value)
{
	(void)value;
	return WFAIL(w, TACH_E_USAGE, "callgrind writer has no option %s", key);
}

const struct tachi_writer_ops tachi_callgrind_writer_ops = {
	.state_size = sizeof(struct cgstate),
	.option = cg_option,
	.begin = cg_begin,
	.put = cg_put,
	.close = cg_close,
	.free = cg_free,
	.put_ext = cg_put_ext,
};
