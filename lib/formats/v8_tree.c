/* The call tree and samples of V8 CPU profiles, shared by the .cpuprofile reader
 * (v8/read.c, where what they become is told) and the trace-event reader (chrome/read.c),
 * which holds several profiles: nodes, ids and samples carry the profile they belong to. */
#include <assert.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/json_read.h"
#include "formats/v8_tree.h"

#define NONE UINT64_MAX
#define NO_ID UINT32_MAX
#define DEPTH_UNKNOWN UINT32_MAX
#define DEPTH_BUSY (UINT32_MAX - 1)
#define DEFAULT_INTERVAL_US 1000

/* ---- the nodes ---- */

/* An integer id token. */
static int read_id(struct tach_reader *r, const struct tachi_jtok *t, const char *what, int64_t *id)
{
	if (tachi_json_tok_int(r->in.data, t, INT64_MIN, INT64_MAX, id))
		return TACH_OK;
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off, "%s must be an integer node id", what);
}

/* lineNumber or columnNumber: 0-based, -1 or absent for none; 1-based out. */
static int position(struct tach_reader *r, uint64_t off, const char *what, int32_t *out)
{
	int64_t x;
	int rc = tachi_jr_opt_int(r, off, what, -1, INT32_MAX - 1, false, &x);
	*out = x < 0 ? -1 : (int32_t)(x + 1);
	return rc;
}

int tachi_v8_call_frame(struct tach_reader *r, uint64_t off, struct tachi_v8_node *nd)
{
	static const char *const want[] = { "functionName", "url", "lineNumber", "columnNumber" };
	struct tachi_json j, c;
	struct tachi_jtok t;
	uint64_t o[4];
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc)
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "callFrame must be an object");
	uint64_t at = t.off;
	if ((rc = tachi_json_keys(&j, want, o, 4)))
		return rc;
	if ((rc = tachi_jr_need_string(r, o[0], at, "callFrame without a \"functionName\"",
					"functionName must be a string", &t)))
		return rc;
	nd->name_off = t.off;
	nd->root_name = tachi_json_str_eq(r->in.data, &t, "(root)");
	nd->idle = tachi_json_str_eq(r->in.data, &t, "(idle)");
	nd->url_off = NONE;
	if (o[1] != NONE) {
		if ((rc = tachi_jr_value_at(r, &c, o[1], &t)))
			return rc;
		if (t.type != TJ_STRING)
			return tachi_jr_bad(r, t.off, "url must be a string");
		nd->url_off = t.off;
	}
	if ((rc = position(r, o[2], "lineNumber", &nd->line)) ||
	    (rc = position(r, o[3], "columnNumber", &nd->col)))
		return rc;
	return TACH_OK;
}

void tachi_v8_node_init(struct tach_reader *r, struct tachi_v8_node *nd, uint64_t off,
			uint32_t parent)
{
	memset(nd, 0, sizeof(*nd));
	nd->off = off;
	nd->prof = ((struct tachi_v8 *)r->state)->cur_prof;
	nd->parent = parent;
	nd->depth = DEPTH_UNKNOWN;
	nd->frame = NO_ID;
	nd->kids_off = NONE;
	nd->parent_off = NONE;
	nd->link_off = off;
}

/* One node object, whose '{' j has just read at off. */
static int node_obj(struct tach_reader *r, struct tachi_json *j, uint64_t off, void *item)
{
	static const char *const want[] = { "id", "callFrame", "children", "parent" };
	struct tachi_v8_node *nd = item;
	struct tachi_json c;
	struct tachi_jtok t;
	uint64_t o[4];
	int rc = tachi_json_keys(j, want, o, 4);
	if (rc)
		return rc;
	tachi_v8_node_init(r, nd, off, NO_ID);
	nd->kids_off = o[2];
	nd->parent_off = o[3];
	if (o[0] == NONE)
		return tachi_jr_bad(r, off, "node without an \"id\"");
	if (o[1] == NONE)
		return tachi_jr_bad(r, off, "node without a \"callFrame\"");
	if ((rc = tachi_jr_value_at(r, &c, o[0], &t)) || (rc = read_id(r, &t, "\"id\"", &nd->id)))
		return rc;
	return tachi_v8_call_frame(r, o[1], nd);
}

int tachi_v8_nodes(struct tach_reader *r, uint64_t off)
{
	static const struct tachi_jr_objects nodes = {
		"\"nodes\" must be an array", "a node must be an object",
		"more than 2^32 - 3 nodes", UINT32_MAX - 2, sizeof(struct tachi_v8_node), node_obj,
	};
	struct tachi_v8 *st = r->state;
	struct tachi_json j;
	tachi_jr_cursor(r, &j, off);
	return tachi_jr_objects(r, &j, &nodes, (void **)&st->nodes, &st->nnodes, &st->nodes_cap);
}

/* ---- the legacy head tree ---- */

/* A head tree node's object has just opened (token t): its record, on the walk's stack. */
static int head_open(struct tach_reader *r, const struct tachi_jtok *t, uint32_t parent)
{
	struct tachi_v8 *st = r->state;
	if (t->type != TJ_OBJECT)
		return tachi_jr_bad(r, t->off, "a node must be an object");
	if (st->nnodes >= UINT32_MAX - 2)
		return tachi_jr_bad(r, t->off, "more than 2^32 - 3 nodes");
	if (!TACHI_RESERVE(st->nodes, st->nodes_cap, st->nnodes + 1) ||
	    !TACHI_RESERVE(st->pending, st->pending_cap, st->pending_n + 1))
		return tachi_jr_nomem(r);
	struct tachi_v8_node *nd = &st->nodes[st->nnodes];
	tachi_v8_node_init(r, nd, t->off, parent);
	nd->line = nd->col = -1;
	nd->url_off = NONE;
	st->pending[st->pending_n++] = (struct tachi_v8_pending){ .idx = (uint32_t)st->nnodes++ };
	return TACH_OK;
}

/* The value t of a head node's key k: its id and call frame's keys (in the node itself,
 * the legacy form has no callFrame); others are passed over. */
static int head_key(struct tach_reader *r, struct tachi_json *j, const struct tachi_jtok *k,
		    struct tachi_v8_pending *p)
{
	struct tachi_v8_node *nd = &((struct tachi_v8 *)r->state)->nodes[p->idx];
	const uint8_t *d = r->in.data;
	struct tachi_jtok t;
	int64_t x;
	int rc;
	bool id = tachi_json_str_eq(d, k, "id"), name = tachi_json_str_eq(d, k, "functionName"),
	     url = tachi_json_str_eq(d, k, "url"), line = tachi_json_str_eq(d, k, "lineNumber"),
	     col = tachi_json_str_eq(d, k, "columnNumber");
	if (!id && !name && !url && !line && !col)
		return tachi_json_skip(j);
	if ((rc = tachi_json_value(j, &t)))
		return rc;
	if (id) {
		p->has_id = true;
		return read_id(r, &t, "\"id\"", &nd->id);
	}
	if ((name || url) && t.type != TJ_STRING)
		return tachi_jr_bad(r, t.off, name ? "functionName must be a string"
						   : "url must be a string");
	if (name) {
		p->has_name = true;
		nd->name_off = t.off;
		nd->root_name = tachi_json_str_eq(d, &t, "(root)");
		nd->idle = tachi_json_str_eq(d, &t, "(idle)");
	} else if (url) {
		nd->url_off = t.off;
	} else if (!tachi_json_tok_int(d, &t, -1, INT32_MAX - 1, &x)) {
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off, "%s must be an integer "
			     "-1..2147483646", line ? "lineNumber" : "columnNumber");
	} else {
		*(line ? &nd->line : &nd->col) = x < 0 ? -1 : (int32_t)(x + 1);
	}
	return TACH_OK;
}

/* One step of the walk at the node on top of the stack: its next key, or its next child. */
static int head_step(struct tach_reader *r, struct tachi_json *j)
{
	struct tachi_v8 *st = r->state;
	struct tachi_v8_pending *p = &st->pending[st->pending_n - 1];
	struct tachi_jtok k, t;
	bool more;
	int rc;
	if (p->in_children) {
		if ((rc = tachi_json_elem(j, &more)))
			return rc;
		if (!more) {
			p->in_children = false;
			return TACH_OK;
		}
		return (rc = tachi_json_value(j, &t)) ? rc : head_open(r, &t, p->idx);
	}
	if ((rc = tachi_json_key(j, &k, &more)))
		return rc;
	if (!more) {
		const struct tachi_v8_node *nd = &st->nodes[p->idx];
		if (!p->has_id || !p->has_name)
			return tachi_jr_bad(r, nd->off, p->has_id ? "node without a \"functionName\""
								  : "node without an \"id\"");
		st->pending_n--;
		return TACH_OK;
	}
	if (!tachi_json_str_eq(r->in.data, &k, "children"))
		return head_key(r, j, &k, p);
	if ((rc = tachi_json_value(j, &t)))
		return rc;
	if (t.type != TJ_ARRAY)
		return tachi_jr_bad(r, t.off, "\"children\" must be an array");
	p->in_children = true;
	return TACH_OK;
}

/* The tree is walked in one pass of one cursor, each node read once, a stack of the nodes
 * it is in (not recursion): time follows the input's size, memory its depth. The cursor
 * nests as deep as the parser goes, two levels a frame. */
int tachi_v8_head(struct tach_reader *r, uint64_t off)
{
	struct tachi_v8 *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	tachi_jr_cursor(r, &j, off);
	j.max_depth = TACHI_JSON_MAX_DEPTH;
	st->pending_n = 0;
	int rc = tachi_json_value(&j, &t);
	if (rc || (rc = head_open(r, &t, NO_ID)))
		return rc;
	while (st->pending_n)
		if ((rc = head_step(r, &j)))
			return rc;
	return TACH_OK;
}

static int cmp_id(const void *a, const void *b)
{
	const struct tachi_v8_id *x = a, *y = b;
	if (x->prof != y->prof)
		return x->prof < y->prof ? -1 : 1;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The ids sorted by profile and id, for lookups by binary search (time follows the nodes,
 * whatever the ids); an id given twice in a profile is refused where it is given the
 * second time. */
static int index_ids(struct tach_reader *r)
{
	struct tachi_v8 *st = r->state;
	if (!st->nnodes)
		return TACH_OK;
	if (!(st->ids = malloc(st->nnodes * sizeof(*st->ids))))
		return tachi_jr_nomem(r);
	for (size_t i = 0; i < st->nnodes; i++)
		st->ids[i] = (struct tachi_v8_id){ st->nodes[i].prof, (uint32_t)i, st->nodes[i].id };
	qsort(st->ids, st->nnodes, sizeof(*st->ids), cmp_id);
	for (size_t i = 1; i < st->nnodes; i++)
		if (st->ids[i].id == st->ids[i - 1].id && st->ids[i].prof == st->ids[i - 1].prof)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->nodes[st->ids[i].idx].off,
				     "node id %lld given twice", (long long)st->ids[i].id);
	return TACH_OK;
}

static uint32_t find(const struct tachi_v8 *st, uint32_t prof, int64_t id)
{
	size_t lo = 0, hi = st->nnodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct tachi_v8_id *m = &st->ids[mid];
		if (m->prof < prof || (m->prof == prof && m->id < id))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nnodes && st->ids[lo].prof == prof && st->ids[lo].id == id
		       ? st->ids[lo].idx
		       : NO_ID;
}

/* The node of profile prof that the id token t names, NO_ID refused. */
static int lookup(struct tach_reader *r, const struct tachi_jtok *t, const char *what,
		  uint32_t prof, uint32_t *idx)
{
	int64_t id;
	int rc = read_id(r, t, what, &id);
	if (rc)
		return rc;
	if ((*idx = find(r->state, prof, id)) == NO_ID)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off, "%s %lld names no node",
			     what, (long long)id);
	return TACH_OK;
}

/* As lookup, but an id naming no node gives NO_ID (a trace whose chunks Chrome dropped
 * names nodes only they had). */
static int unplaced(struct tach_reader *r, const struct tachi_jtok *t, const char *what,
		    uint32_t prof, uint32_t *idx)
{
	int64_t id;
	int rc = read_id(r, t, what, &id);
	if (!rc)
		*idx = find(r->state, prof, id);
	return rc;
}

/* child's parent is p, named by the id token at off. */
static int set_parent(struct tach_reader *r, uint32_t child, uint32_t p, uint64_t off)
{
	struct tachi_v8_node *c = &((struct tachi_v8 *)r->state)->nodes[child];
	if (c->parent != NO_ID && c->parent != p)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off, "node %lld has two parents",
			     (long long)c->id);
	if (c->parent == NO_ID) {
		c->parent = p;
		c->link_off = off;
	}
	return TACH_OK;
}

static int link_children(struct tach_reader *r, uint32_t i)
{
	struct tachi_v8 *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_jr_value_at(r, &j, st->nodes[i].kids_off, &t);
	if (rc)
		return rc;
	if (t.type != TJ_ARRAY)
		return tachi_jr_bad(r, t.off, "\"children\" must be an array of node ids");
	while (!(rc = tachi_json_elem(&j, &more)) && more) {
		uint32_t c;
		if ((rc = tachi_json_value(&j, &t)) || (rc = lookup(r, &t, "child", st->nodes[i].prof, &c)) ||
		    (rc = set_parent(r, c, i, t.off)))
			return rc;
	}
	return rc;
}

/* Parent links from "children", then from "parent" where given. */
static int link_all(struct tach_reader *r)
{
	struct tachi_v8 *st = r->state;
	int rc;
	for (uint32_t i = 0; i < st->nnodes; i++)
		if (st->nodes[i].kids_off != NONE && (rc = link_children(r, i)))
			return rc;
	for (uint32_t i = 0; i < st->nnodes; i++) {
		struct tachi_json j;
		struct tachi_jtok t;
		uint32_t p;
		if (st->nodes[i].parent_off == NONE)
			continue;
		if ((rc = tachi_jr_value_at(r, &j, st->nodes[i].parent_off, &t)))
			return rc;
		if (t.type == TJ_NULL)
			continue;
		if (st->lenient && (rc = unplaced(r, &t, "parent", st->nodes[i].prof, &p)))
			return rc;
		if (st->lenient && p == NO_ID) {
			st->unplaced_parents++;
			continue;
		}
		if ((!st->lenient && (rc = lookup(r, &t, "parent", st->nodes[i].prof, &p))) ||
		    (rc = set_parent(r, i, p, t.off)))
			return rc;
	}
	return TACH_OK;
}

static bool is_root(const struct tachi_v8_node *nd)
{
	return nd->parent == NO_ID && nd->root_name;
}

/* Node i's depth: its ancestors up to one whose depth is known, then back down. A node
 * met again on the way up closes a cycle. Each node is walked once. */
static int depth_of(struct tach_reader *r, uint32_t i)
{
	struct tachi_v8 *st = r->state;
	size_t n = 0;
	uint32_t k = i;
	while (k != NO_ID && st->nodes[k].depth == DEPTH_UNKNOWN) {
		if (!TACHI_RESERVE(st->walk, st->walk_cap, n + 1))
			return tachi_jr_nomem(r);
		st->walk[n++] = k;
		st->nodes[k].depth = DEPTH_BUSY;
		k = st->nodes[k].parent;
	}
	if (k != NO_ID && st->nodes[k].depth == DEPTH_BUSY)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->nodes[k].link_off,
			     "node %lld is its own ancestor: the parent links form a cycle",
			     (long long)st->nodes[k].id);
	uint32_t d = k == NO_ID ? 0 : st->nodes[k].depth;
	while (n--) {
		struct tachi_v8_node *nd = &st->nodes[st->walk[n]];
		d += !is_root(nd);
		nd->depth = d;
	}
	return TACH_OK;
}

/* ---- the samples ---- */

/* A time in µs, to ns. */
int tachi_v8_time_ns(struct tach_reader *r, const struct tachi_jtok *t, const char *what,
		     int64_t *out)
{
	return tachi_jr_number(r, t, 3, what, out);
}

/* One entry of each array: the sample's node and its time, checked. */
static int one_sample(struct tach_reader *r, struct tachi_json *a, struct tachi_json *b,
		      uint32_t prof, int64_t *now)
{
	struct tachi_v8 *st = r->state;
	struct tachi_jtok t, d;
	uint32_t idx;
	int64_t delta;
	int rc;
	if ((rc = tachi_json_value(a, &t)) ||
	    (rc = (st->lenient ? unplaced : lookup)(r, &t, "sample", prof, &idx)) ||
	    (rc = tachi_json_value(b, &d)) ||
	    (rc = tachi_v8_time_ns(r, &d, st->stamps ? "timestamp" : "time delta", &delta)))
		return rc;
	if (st->stamps && __builtin_sub_overflow(delta, *now, &delta))
		return tachi_jr_bad(r, d.off, "a timestamp out of range");
	if (idx == NO_ID) {
		/* its time is the sample's before, as DevTools and speedscope count it */
		st->unplaced_samples++;
		if (__builtin_add_overflow(*now, delta, now))
			return tachi_jr_bad(r, d.off, "the time deltas add up past the range of times");
		return TACH_OK;
	}
	/* a thread's name is one more frame (tachi_v8_next) */
	if (st->nodes[idx].depth + (st->profs[prof].name_off != NONE) > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, t.off,
			     "stack deeper than the depth limit of %u frames", r->lim.max_depth);
	if (__builtin_add_overflow(*now, delta, now))
		return tachi_jr_bad(r, d.off, "the time deltas add up past the range of times");
	if (*now < 0)
		return tachi_jr_bad(r, d.off, "a sample time before 0");
	if (st->ns >= r->lim.max_samples || st->ns >= UINT32_MAX)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, t.off,
			     "more than %llu samples (see --max-samples)",
			     (unsigned long long)(r->lim.max_samples < UINT32_MAX ? r->lim.max_samples
										 : UINT32_MAX));
	if (!TACHI_RESERVE(st->s, st->s_cap, st->ns + 1))
		return tachi_jr_nomem(r);
	st->s[st->ns] = (struct tachi_v8_sample){ .t = *now, .node = idx, .prof = prof,
						    .seq = (uint32_t)st->ns };
	st->ns++;
	return TACH_OK;
}

/* A "timestamps" entry past the last sample (node writes one): the profile's end, as
 * DevTools takes it; any more is refused. */
static int last_stamp(struct tach_reader *r, uint32_t prof, struct tachi_json *b)
{
	struct tachi_v8_prof *p = &((struct tachi_v8 *)r->state)->profs[prof];
	struct tachi_jtok d;
	bool more;
	int rc = tachi_json_value(b, &d);
	if (rc || (rc = tachi_v8_time_ns(r, &d, "timestamp", &p->end)))
		return rc;
	if (p->end < p->now)
		p->end = -1;
	if ((rc = tachi_json_elem(b, &more)))
		return rc;
	return more ? tachi_jr_bad(r, b->pos, "\"timestamps\" longer than \"samples\" by more "
					      "than one")
		    : TACH_OK;
}

int tachi_v8_samples(struct tach_reader *r, uint32_t prof, uint64_t s_off, uint64_t d_off)
{
	struct tachi_v8 *st = r->state;
	struct tachi_json a, b;
	int64_t *now = &st->profs[prof].now;
	int rc;
	if ((rc = tachi_jr_begin_array(r, &a, s_off, "samples")) ||
	    (rc = tachi_jr_begin_array(r, &b, d_off, st->stamps ? "timestamps" : "timeDeltas")))
		return rc;
	for (;;) {
		bool ma, mb;
		if ((rc = tachi_json_elem(&a, &ma)) || (rc = tachi_json_elem(&b, &mb)))
			return rc;
		if (!ma && mb && st->stamps)
			return last_stamp(r, prof, &b);
		if (ma != mb)
			return tachi_jr_bad(r, ma ? b.pos - 1 : a.pos - 1,
					    st->stamps ? "\"samples\" and \"timestamps\" differ in length"
						       : "\"samples\" and \"timeDeltas\" differ in length");
		if (!ma)
			return TACH_OK;
		if ((rc = one_sample(r, &a, &b, prof, now)))
			return rc;
	}
}

/* By profile, then time (ties in file order): where durations are found. */
static int cmp_prof_time(const void *a, const void *b)
{
	const struct tachi_v8_sample *x = a, *y = b;
	if (x->prof != y->prof)
		return x->prof < y->prof ? -1 : 1;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* By time, then profile (ties in file order): the order out. */
static int cmp_time(const void *a, const void *b)
{
	const struct tachi_v8_sample *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	if (x->prof != y->prof)
		return x->prof < y->prof ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The time each sample stands for, in ns: up to the next sample of its profile, as Chrome
 * DevTools and speedscope weigh a sample; a profile's last up to its endTime (0 without
 * one, or when it is before the sample). Deltas are whole µs, so these are exact. */
static void durations(struct tachi_v8 *st)
{
	for (size_t i = 0; i < st->ns; i++) {
		struct tachi_v8_sample *x = &st->s[i];
		const struct tachi_v8_prof *p = &st->profs[x->prof];
		if (i + 1 < st->ns && st->s[i + 1].prof == x->prof)
			x->time = (uint64_t)(st->s[i + 1].t - x->t);
		else
			x->time = p->end >= x->t ? (uint64_t)(p->end - x->t) : 0;
	}
}

/* The median gap between a profile's samples, in µs rounded, at least 1 (1000 when there
 * is no gap): the interval writers name, weighing nothing. */
static int median_gap(struct tach_reader *r, uint64_t *us)
{
	struct tachi_v8 *st = r->state;
	*us = DEFAULT_INTERVAL_US;
	if (st->ns < 2)
		return TACH_OK;
	int64_t *gaps = malloc((st->ns - 1) * sizeof(*gaps));
	if (!gaps)
		return tachi_jr_nomem(r);
	size_t n = 0;
	for (size_t i = 1; i < st->ns; i++)
		if (st->s[i].prof == st->s[i - 1].prof)
			gaps[n++] = st->s[i].t - st->s[i - 1].t;
	if (n) {
		qsort(gaps, n, sizeof(*gaps), cmp_i64);
		uint64_t m = ((uint64_t)gaps[n / 2] + 500) / 1000;
		*us = m ? m : 1;
	}
	free(gaps);
	return TACH_OK;
}

/* Time order and each sample's time. Samples of dropped profiles are gone by now; the
 * origin is the earliest startTime of the profiles kept. */
int tachi_v8_finish(struct tach_reader *r)
{
	struct tachi_v8 *st = r->state;
	bool sorted = true;
	for (size_t i = 1; i < st->ns && sorted; i++)
		sorted = cmp_prof_time(&st->s[i - 1], &st->s[i]) < 0;
	if (!sorted)
		qsort(st->s, st->ns, sizeof(*st->s), cmp_prof_time);
	bool first = true;
	for (size_t i = 0; i < st->nprofs; i++)
		if (!st->profs[i].dropped && (first || st->profs[i].start < st->origin)) {
			st->origin = st->profs[i].start;
			first = false;
		}
	r->meta.sample_time = 1;
	int rc = median_gap(r, &r->meta.interval_us);
	if (rc)
		return rc;
	durations(st);
	/* (no qsort of no samples: their array may be NULL, every profile's dropped) */
	if (st->nprofs > 1 && st->ns > 1)
		qsort(st->s, st->ns, sizeof(*st->s), cmp_time);
	return TACH_OK;
}

/* ---- profiles ---- */

int tachi_v8_add_profile(struct tach_reader *r, int64_t start, uint32_t *prof)
{
	struct tachi_v8 *st = r->state;
	if (st->nprofs >= UINT32_MAX - 1)
		return tachi_jr_bad(r, 0, "more than 2^32 - 2 profiles");
	if (!TACHI_RESERVE(st->profs, st->profs_cap, st->nprofs + 1))
		return tachi_jr_nomem(r);
	if (!st->nprofs || start < st->origin)
		st->origin = start;
	st->profs[st->nprofs] = (struct tachi_v8_prof){
		.start = start, .end = -1, .now = start, .pid = -1, .name_off = NONE,
		.name_frame = NO_ID,
	};
	*prof = (uint32_t)st->nprofs++;
	return TACH_OK;
}

int tachi_v8_end(struct tach_reader *r, uint32_t prof, const struct tachi_jtok *t)
{
	struct tachi_v8_prof *p = &((struct tachi_v8 *)r->state)->profs[prof];
	int rc = tachi_v8_time_ns(r, t, "endTime", &p->end);
	if (rc)
		return rc;
	if (p->end < p->start) {
		tachi_warn(&r->warn, TACH_POS_OFFSET, t->off,
			   "endTime is before startTime: ignored (the last sample stands for no "
			   "time)");
		p->end = -1;
	}
	return TACH_OK;
}

void tachi_v8_lone_warning(struct tach_reader *r)
{
	if (r->json_lone_at)
		tachi_warn(&r->warn, TACH_POS_OFFSET, r->json_lone_at - 1,
			   "a \\u escape of a lone surrogate (JSON.stringify writes one for a name "
			   "with half a UTF-16 pair): read as U+FFFD");
}

int tachi_v8_tree(struct tach_reader *r)
{
	struct tachi_v8 *st = r->state;
	int rc;
	if ((rc = index_ids(r)) || (rc = link_all(r)))
		return rc;
	for (uint32_t i = 0; i < st->nnodes; i++)
		if (st->nodes[i].depth == DEPTH_UNKNOWN && (rc = depth_of(r, i)))
			return rc;
	return TACH_OK;
}

/* ---- samples out ---- */

/* The token at off as a string into sbuf (alt when empty or off NONE). */
static int string_id(struct tach_reader *r, uint64_t off, const char *alt, uint32_t *id)
{
	struct tachi_v8 *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	size_t n = 0;
	if (off != NONE) {
		int rc = tachi_jr_value_at(r, &j, off, &t);
		if (rc || (rc = tachi_jr_string(r, &t, &st->sbuf, &st->sbuf_cap, &n)))
			return rc;
	}
	const char *s = n ? st->sbuf : alt;
	if (tach_dict_intern_string(&r->dict, s, n ? n : strlen(alt), id))
		return tachi_jr_nomem(r);
	return TACH_OK;
}

int tachi_v8_frame(struct tach_reader *r, struct tachi_v8_node *nd, uint32_t *id)
{
	if (nd->frame == NO_ID) {
		struct tach_frame f = { 0, 0, nd->line, nd->line, nd->col, -1, TACH_NO_OPCODE };
		int rc;
		if ((rc = string_id(r, nd->name_off, "(anonymous)", &f.func)) ||
		    (rc = string_id(r, nd->url_off, "~", &f.file)))
			return rc;
		if (tach_dict_intern_frame(&r->dict, &f, &nd->frame))
			return tachi_jr_nomem(r);
	}
	*id = nd->frame;
	return TACH_OK;
}

/* The thread's name as its outermost frame, as the perf reader names a thread (file
 * "[comm]", line the process id: formats/comm.h), for the writers that name threads. */
static int name_frame(struct tach_reader *r, struct tachi_v8_prof *p, uint32_t *id)
{
	if (p->name_frame == NO_ID) {
		struct tach_frame f = { 0, 0, p->pid, p->pid, -1, -1, TACH_NO_OPCODE };
		int rc = string_id(r, p->name_off, "?", &f.func);
		if (rc)
			return rc;
		if (tach_dict_intern_string(&r->dict, "[comm]", 6, &f.file) ||
		    tach_dict_intern_frame(&r->dict, &f, &p->name_frame))
			return tachi_jr_nomem(r);
	}
	*id = p->name_frame;
	return TACH_OK;
}

int tachi_v8_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct tachi_v8 *st = r->state;
	if (st->cur >= st->ns)
		return TACH_EOF;
	const struct tachi_v8_sample *vs = &st->s[st->cur++];
	struct tachi_v8_node *leaf = &st->nodes[vs->node];
	struct tachi_v8_prof *p = &st->profs[vs->prof];
	uint32_t depth = leaf->depth + (p->name_off != NONE), k = 0;
	int rc;
	if (depth && !TACHI_RESERVE(st->out, st->out_cap, depth))
		return tachi_jr_nomem(r);
	for (uint32_t i = vs->node; i != NO_ID; i = st->nodes[i].parent) {
		struct tachi_v8_node *nd = &st->nodes[i];
		if (!is_root(nd) && (rc = tachi_v8_frame(r, nd, &st->out[k++])))
			return rc;
	}
	if (p->name_off != NONE && (rc = name_frame(r, p, &st->out[k++])))
		return rc;
	assert(k == depth);
	struct tach_sample *s = &r->sample;
	s->thread_id = p->tid;
	s->interp_id = p->iid;
	s->timestamp_us = vs->t > st->origin ? (uint64_t)(vs->t - st->origin) / 1000 : 0;
	s->weight = 1;
	s->time_ns = vs->time;
	s->status = leaf->idle ? 0 : TACH_STATUS_ON_CPU;
	s->depth = depth;
	s->same_outer = 0;
	s->frames = st->out;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples++;
	*out = s;
	return TACH_OK;
}

void tachi_v8_free(struct tach_reader *r)
{
	struct tachi_v8 *st = r->state;
	free(st->nodes);
	free(st->ids);
	free(st->s);
	free(st->profs);
	free(st->walk);
	free(st->out);
	free(st->sbuf);
	free(st->pending);
}
