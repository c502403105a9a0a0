/* V8 CPU profile reader: the ".cpuprofile" JSON that `node --cpu-prof`, Chrome DevTools'
 * "Save profile" and the DevTools protocol's Profiler.stop give (the protocol's
 * Profiler.Profile type).
 *
 * A file is one JSON object, its keys in any order (node writes nodes, startTime, endTime,
 * samples, timeDeltas; other producers differ): "nodes", the call tree, each node
 * {id, callFrame {functionName, scriptId, url, lineNumber, columnNumber}, hitCount,
 * children [ids], positionTicks}, or with "parent" (an id) instead of "children" as older
 * profiles and trace-event chunks have it (both are accepted and must agree); "samples",
 * the node id of each sample in the order taken; "timeDeltas", µs from the previous sample
 * (the first from startTime); "startTime" and "endTime" in µs of the producer's monotonic
 * clock. Not read: the trace-event form (an array of events, "ProfileChunk"s), the legacy
 * "head" tree, hitCount and positionTicks (they are derived from samples).
 *
 * What a sample becomes: one sample per entry of "samples", thread 0, at startTime plus the
 * deltas up to it. V8's deltas can be negative (a sample listed after one it was taken
 * before): samples are put in time order by a stable sort on that timestamp, as Chrome
 * DevTools' CPUProfileDataModel does (speedscope's importer instead clamps a time that goes
 * back to the latest one, the Firefox Profiler's resamples at 500 µs and drops what goes
 * back; both keep every stack but lose the order in time). Deltas are read exactly (to the
 * nanosecond, no floating point); a timestamp rounds down to the µs.
 *
 * Weights are time, as DevTools and speedscope weigh a sample: the time up to the next
 * sample; the first's also from startTime (it is put there), the last's up to endTime (the
 * median gap without one), so the weights add up to the profile's span however uneven the
 * gaps (idle threads are sampled late: weighing each sample one median gap gave half the
 * span). The interval is the median gap (not moved by the odd long gap), halved while the
 * weights miss the total by more than 1%; a weight is the running total rounded to
 * intervals, at least 1. V8's clock is no wall clock: times count from startTime and the
 * start is unknown (0), so no writer shows a date.
 *
 * A lone-surrogate escape ("\ud800", which JSON.stringify writes for half a UTF-16 pair)
 * is read as U+FFFD with a warning; endTime before startTime is ignored with a warning.
 *
 * Frames: the path from the sampled node to its root, innermost first; a parentless node
 * named "(root)" is no frame. Function name as given, "(anonymous)" when empty; file the
 * url, "~" (no file, as CPython marks its special frames) when empty or absent; line and
 * column 1-based (V8's are 0-based; -1 or absent: none). V8's own nodes "(program)",
 * "(garbage collector)" and "(idle)" stay frames, so every writer shows them; the status
 * byte is on CPU for every sample but those of "(idle)", which have no state bit (the
 * programs' --status idle).
 *
 * The whole file is read and checked at open (strict JSON, json.c): memory is the file
 * plus a record per node and per sample, each grown as elements are read, never from a
 * count. Refused with the byte offset: a node without an integer id or a callFrame, an
 * id given twice, a child or parent or sample naming no node, a node with two parents,
 * parents that form a cycle, a stack deeper than max-depth, samples and timeDeltas of
 * different lengths, times that overflow or fall before 0. */
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
#include "formats/v8.h"

#define NONE UINT64_MAX
#define NO_ID UINT32_MAX
#define DEPTH_UNKNOWN UINT32_MAX
#define DEPTH_BUSY (UINT32_MAX - 1)
#define DEFAULT_INTERVAL_US 1000

struct vnode {
	int64_t id;
	uint64_t off;             /* the node object */
	uint64_t name_off, url_off; /* string tokens; url NONE when absent */
	uint64_t kids_off, parent_off; /* "children" and "parent" values, NONE when absent */
	uint64_t link_off;        /* the id token that gave this node its parent */
	uint32_t parent;          /* index, NO_ID for none */
	uint32_t depth;           /* frames from the root to here, this one included */
	uint32_t frame;           /* dict frame, NO_ID until first used */
	int32_t line, col;
	bool root_name, idle;
};

struct vid {
	int64_t id;
	uint32_t idx;
};

struct vsample {
	int64_t t;                /* ns */
	uint64_t w;               /* weight: intervals of the time it stands for */
	uint32_t node, seq;
};

struct vstate {
	struct vnode *nodes;
	size_t nnodes, nodes_cap;
	struct vid *ids;
	struct vsample *s;
	size_t ns, s_cap, cur;
	int64_t start;            /* startTime, ns */
	int64_t end;              /* endTime, ns; -1 when absent or before startTime */
	uint32_t *walk;
	size_t walk_cap;
	uint32_t *out;
	size_t out_cap;
	char *sbuf;
	size_t sbuf_cap;
};

/* ---- detection ---- */

/* In the first element of "nodes", which j has just entered: a "callFrame" key. */
static bool first_node_has_callframe(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more;
	if (tachi_json_elem(j, &more) || !more || tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (tachi_json_str_eq(j->p, &k, "callFrame"))
			return !tachi_json_value(j, &t) && t.type == TJ_OBJECT;
		if (tachi_json_skip(j))
			return false;
	}
	return false;
}

/* A JSON object that names a key of V8's profile in the peeked bytes. */
bool tachi_v8_resembles(const uint8_t *p, size_t n)
{
	return tachi_json_object_start(p, n) &&
	       (memmem(p, n, "\"nodes\"", 7) || memmem(p, n, "\"timeDeltas\"", 12) ||
		memmem(p, n, "\"callFrame\"", 11));
}

/* node writes "nodes" first and it may fill the peeked bytes: its first node decides. */
static bool nodes_decide(struct tachi_json *j)
{
	struct tachi_jtok t;
	return !tachi_json_value(j, &t) && t.type == TJ_ARRAY && first_node_has_callframe(j);
}

bool tachi_v8_probe(const uint8_t *p, size_t n)
{
	return tachi_jr_probe_keys(p, n, "nodes", nodes_decide, "samples", "timeDeltas");
}

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

static int call_frame(struct tach_reader *r, uint64_t off, struct vnode *nd)
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

/* One node object, whose '{' j has just read at off. */
static int node_obj(struct tach_reader *r, struct tachi_json *j, uint64_t off, void *item)
{
	static const char *const want[] = { "id", "callFrame", "children", "parent" };
	struct vnode *nd = item;
	struct tachi_json c;
	struct tachi_jtok t;
	uint64_t o[4];
	int rc = tachi_json_keys(j, want, o, 4);
	if (rc)
		return rc;
	memset(nd, 0, sizeof(*nd));
	nd->off = off;
	nd->parent = NO_ID;
	nd->depth = DEPTH_UNKNOWN;
	nd->frame = NO_ID;
	nd->kids_off = o[2];
	nd->parent_off = o[3];
	nd->link_off = off;
	if (o[0] == NONE)
		return tachi_jr_bad(r, off, "node without an \"id\"");
	if (o[1] == NONE)
		return tachi_jr_bad(r, off, "node without a \"callFrame\"");
	if ((rc = tachi_jr_value_at(r, &c, o[0], &t)) || (rc = read_id(r, &t, "\"id\"", &nd->id)))
		return rc;
	return call_frame(r, o[1], nd);
}

static int parse_nodes(struct tach_reader *r, uint64_t off)
{
	static const struct tachi_jr_objects nodes = {
		"\"nodes\" must be an array", "a node must be an object",
		"more than 2^32 - 3 nodes", UINT32_MAX - 2, sizeof(struct vnode), node_obj,
	};
	struct vstate *st = r->state;
	struct tachi_json j;
	tachi_jr_cursor(r, &j, off);
	return tachi_jr_objects(r, &j, &nodes, (void **)&st->nodes, &st->nnodes, &st->nodes_cap);
}

static int cmp_id(const void *a, const void *b)
{
	const struct vid *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* The ids sorted, for lookups by binary search; an id given twice is refused where it
 * is given the second time. */
static int index_ids(struct tach_reader *r)
{
	struct vstate *st = r->state;
	if (!st->nnodes)
		return TACH_OK;
	if (!(st->ids = malloc(st->nnodes * sizeof(*st->ids))))
		return tachi_jr_nomem(r);
	for (size_t i = 0; i < st->nnodes; i++)
		st->ids[i] = (struct vid){ st->nodes[i].id, (uint32_t)i };
	qsort(st->ids, st->nnodes, sizeof(*st->ids), cmp_id);
	for (size_t i = 1; i < st->nnodes; i++)
		if (st->ids[i].id == st->ids[i - 1].id)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->nodes[st->ids[i].idx].off,
				     "node id %lld given twice", (long long)st->ids[i].id);
	return TACH_OK;
}

static uint32_t find(const struct vstate *st, int64_t id)
{
	size_t lo = 0, hi = st->nnodes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nnodes && st->ids[lo].id == id ? st->ids[lo].idx : NO_ID;
}

/* The node that the id token t names, NO_ID refused. */
static int lookup(struct tach_reader *r, const struct tachi_jtok *t, const char *what, uint32_t *idx)
{
	int64_t id;
	int rc = read_id(r, t, what, &id);
	if (rc)
		return rc;
	if ((*idx = find(r->state, id)) == NO_ID)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off, "%s %lld names no node",
			     what, (long long)id);
	return TACH_OK;
}

/* child's parent is p, named by the id token at off. */
static int set_parent(struct tach_reader *r, uint32_t child, uint32_t p, uint64_t off)
{
	struct vnode *c = &((struct vstate *)r->state)->nodes[child];
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
	struct vstate *st = r->state;
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
		if ((rc = tachi_json_value(&j, &t)) || (rc = lookup(r, &t, "child", &c)) ||
		    (rc = set_parent(r, c, i, t.off)))
			return rc;
	}
	return rc;
}

/* Parent links from "children", then from "parent" where given. */
static int link(struct tach_reader *r)
{
	struct vstate *st = r->state;
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
		if ((rc = lookup(r, &t, "parent", &p)) || (rc = set_parent(r, i, p, t.off)))
			return rc;
	}
	return TACH_OK;
}

static bool is_root(const struct vnode *nd)
{
	return nd->parent == NO_ID && nd->root_name;
}

/* Node i's depth: its ancestors up to one whose depth is known, then back down. A node
 * met again on the way up closes a cycle. Each node is walked once. */
static int depth_of(struct tach_reader *r, uint32_t i)
{
	struct vstate *st = r->state;
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
		struct vnode *nd = &st->nodes[st->walk[n]];
		d += !is_root(nd);
		nd->depth = d;
	}
	return TACH_OK;
}

/* ---- the samples ---- */

/* A time in µs, to ns. */
static int time_ns(struct tach_reader *r, const struct tachi_jtok *t, const char *what,
		   int64_t *out)
{
	return tachi_jr_number(r, t, 3, what, out);
}

/* One entry of each array: the sample's node and its time, checked. */
static int one_sample(struct tach_reader *r, struct tachi_json *a, struct tachi_json *b,
		      int64_t *now)
{
	struct vstate *st = r->state;
	struct tachi_jtok t, d;
	uint32_t idx;
	int64_t delta;
	int rc;
	if ((rc = tachi_json_value(a, &t)) || (rc = lookup(r, &t, "sample", &idx)) ||
	    (rc = tachi_json_value(b, &d)) || (rc = time_ns(r, &d, "time delta", &delta)))
		return rc;
	if (st->nodes[idx].depth > r->lim.max_depth)
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
	st->s[st->ns] = (struct vsample){ .t = *now, .node = idx, .seq = (uint32_t)st->ns };
	st->ns++;
	return TACH_OK;
}

static int parse_samples(struct tach_reader *r, uint64_t s_off, uint64_t d_off)
{
	struct vstate *st = r->state;
	struct tachi_json a, b;
	int64_t now = st->start;
	int rc;
	if ((rc = tachi_jr_begin_array(r, &a, s_off, "samples")) ||
	    (rc = tachi_jr_begin_array(r, &b, d_off, "timeDeltas")))
		return rc;
	for (;;) {
		bool ma, mb;
		if ((rc = tachi_json_elem(&a, &ma)) || (rc = tachi_json_elem(&b, &mb)))
			return rc;
		if (ma != mb)
			return tachi_jr_bad(r, ma ? b.pos - 1 : a.pos - 1,
					    "\"samples\" and \"timeDeltas\" differ in length");
		if (!ma)
			return TACH_OK;
		if ((rc = one_sample(r, &a, &b, &now)))
			return rc;
	}
}

static int cmp_sample(const void *a, const void *b)
{
	const struct vsample *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int cmp_i64(const void *a, const void *b)
{
	int64_t x = *(const int64_t *)a, y = *(const int64_t *)b;
	return x < y ? -1 : x > y;
}

/* The time each sample stands for, in ns, into w (before it becomes a weight): up to the
 * next sample, as Chrome DevTools and speedscope weigh a sample; the first also from
 * startTime, and it is put there (a weight is that many samples from its timestamp on), the
 * last up to endTime (when that is not before it; else the median gap), so that the
 * samples cover the profile's span. */
static void durations(struct vstate *st, uint64_t median_ns)
{
	for (size_t i = 0; i + 1 < st->ns; i++)
		st->s[i].w = (uint64_t)(st->s[i + 1].t - st->s[i].t);
	struct vsample *last = &st->s[st->ns - 1];
	last->w = st->end >= last->t ? (uint64_t)(st->end - last->t) : median_ns;
	if (st->s[0].t > st->start) {
		st->s[0].w += (uint64_t)(st->s[0].t - st->start);
		st->s[0].t = st->start;
	}
}

/* Durations (ns) to weights in intervals of q ns: the running total rounded, so the
 * weights add up to the whole time within one interval; a sample shorter than that still
 * weighs 1 (the next ones make up for it). The total weight, or 0 when it passes max. */
static uint64_t weights(struct vstate *st, uint64_t q, uint64_t max, bool apply)
{
	unsigned __int128 sum = 0;
	uint64_t emitted = 0;
	for (size_t i = 0; i < st->ns; i++) {
		sum += st->s[i].w;
		uint64_t upto = (uint64_t)((sum + q / 2) / q);
		uint64_t w = upto > emitted ? upto - emitted : 1;
		if (w > max - emitted)
			return 0;
		emitted += w;
		if (apply)
			st->s[i].w = w;
	}
	return emitted;
}

/* The interval: the median gap, halved while the weights it gives miss the total time by
 * more than 1% (gaps that vary a lot, short ones weighing 1 each), down to 1 µs. */
static uint64_t choose_interval(struct vstate *st, uint64_t median_ns, uint64_t max)
{
	unsigned __int128 total = 0;
	for (size_t i = 0; i < st->ns; i++)
		total += st->s[i].w;
	uint64_t us = (median_ns + 500) / 1000;
	for (us = us ? us : 1; us > 1; us /= 2) {
		uint64_t n = weights(st, us * 1000, max, false);
		if (!n)
			return us * 2;
		unsigned __int128 got = (unsigned __int128)n * us * 1000;
		unsigned __int128 off = got > total ? got - total : total - got;
		if (off * 100 <= total)
			break;
	}
	return us;
}

/* Time order (ties in file order); the interval and each sample's weight. */
static int order_and_weigh(struct tach_reader *r)
{
	struct vstate *st = r->state;
	bool sorted = true;
	for (size_t i = 1; i < st->ns && sorted; i++)
		sorted = st->s[i].t >= st->s[i - 1].t;
	if (!sorted)
		qsort(st->s, st->ns, sizeof(*st->s), cmp_sample);
	r->meta.interval_us = DEFAULT_INTERVAL_US;
	if (!st->ns)
		return TACH_OK;
	uint64_t median = DEFAULT_INTERVAL_US * 1000;
	if (st->ns >= 2) {
		int64_t *gaps = malloc((st->ns - 1) * sizeof(*gaps));
		if (!gaps)
			return tachi_jr_nomem(r);
		for (size_t i = 1; i < st->ns; i++)
			gaps[i - 1] = st->s[i].t - st->s[i - 1].t;
		qsort(gaps, st->ns - 1, sizeof(*gaps), cmp_i64);
		median = (uint64_t)gaps[(st->ns - 1) / 2];
		free(gaps);
	}
	durations(st, median ? median : 1000);
	uint64_t us = choose_interval(st, median, r->lim.max_samples);
	if (!weights(st, us * 1000, r->lim.max_samples, true))
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0,
			     "the samples' times add up to more than %llu samples of %llu us "
			     "(see --max-samples)", (unsigned long long)r->lim.max_samples,
			     (unsigned long long)us);
	r->meta.interval_us = us;
	return TACH_OK;
}

/* ---- open ---- */

/* The top object's keys: nodes, samples, timeDeltas, startTime, endTime. */
static int parse_top(struct tach_reader *r, uint64_t *o)
{
	static const char *const want[] = { "nodes", "samples", "timeDeltas", "startTime",
					    "endTime" };
	static const char *const names[] = { "\"nodes\"", "\"samples\"", "\"timeDeltas\"",
					     "\"startTime\"" };
	struct vstate *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	int rc = tachi_jr_top(r, &j, &t, "not a V8 CPU profile: expected a JSON object");
	if (rc || (rc = tachi_json_keys(&j, want, o, 5)) || (rc = tachi_json_end(&j)))
		return rc;
	for (int i = 0; i < 4; i++)
		if (o[i] == NONE)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off,
				     "not a V8 CPU profile: no %s", names[i]);
	if ((rc = tachi_jr_value_at(r, &j, o[3], &t)) ||
	    (rc = time_ns(r, &t, "startTime", &st->start)))
		return rc;
	if (st->start < 0)
		return tachi_jr_bad(r, t.off, "startTime before 0");
	st->end = -1;
	if (o[4] != NONE &&
	    ((rc = tachi_jr_value_at(r, &j, o[4], &t)) || (rc = time_ns(r, &t, "endTime", &st->end))))
		return rc;
	if (o[4] != NONE && st->end < st->start) {
		tachi_warn(&r->warn, TACH_POS_OFFSET, t.off,
			   "endTime is before startTime: ignored (the last sample stands for the "
			   "median gap)");
		st->end = -1;
	}
	return TACH_OK;
}

static int v8_open(struct tach_reader *r)
{
	struct vstate *st = r->state;
	uint64_t o[5];
	int rc;
	r->json_lone_ok = true;
	if ((rc = parse_top(r, o)))
		return rc;
	if (r->json_lone_at)
		tachi_warn(&r->warn, TACH_POS_OFFSET, r->json_lone_at - 1,
			   "a \\u escape of a lone surrogate (JSON.stringify writes one for a name "
			   "with half a UTF-16 pair): read as U+FFFD");
	if ((rc = parse_nodes(r, o[0])) || (rc = index_ids(r)) || (rc = link(r)))
		return rc;
	for (uint32_t i = 0; i < st->nnodes; i++)
		if (st->nodes[i].depth == DEPTH_UNKNOWN && (rc = depth_of(r, i)))
			return rc;
	if ((rc = parse_samples(r, o[1], o[2])) || (rc = order_and_weigh(r)))
		return rc;
	/* V8's clock is no wall clock (a monotonic one, from an unknown origin): times are
	 * given from startTime, and the start is unknown (0), so no writer shows a date. */
	r->meta.start_time_us = 0;
	/* the time profiled, for what shows the input's own facts (tach-decode -F info) */
	r->meta.duration_ns = st->end >= 0 ? st->end - st->start : 0;
	return TACH_OK;
}

/* ---- samples out ---- */

/* The token at off as a string into sbuf (alt when empty or off NONE). */
static int string_id(struct tach_reader *r, uint64_t off, const char *alt, uint32_t *id)
{
	struct vstate *st = r->state;
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

static int frame_id(struct tach_reader *r, struct vnode *nd, uint32_t *id)
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

static int v8_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct vstate *st = r->state;
	if (st->cur >= st->ns)
		return TACH_EOF;
	const struct vsample *vs = &st->s[st->cur++];
	struct vnode *leaf = &st->nodes[vs->node];
	uint32_t depth = leaf->depth, k = 0;
	if (depth && !TACHI_RESERVE(st->out, st->out_cap, depth))
		return tachi_jr_nomem(r);
	for (uint32_t i = vs->node; i != NO_ID; i = st->nodes[i].parent) {
		struct vnode *nd = &st->nodes[i];
		int rc;
		if (!is_root(nd) && (rc = frame_id(r, nd, &st->out[k++])))
			return rc;
	}
	assert(k == depth);
	struct tach_sample *s = &r->sample;
	s->thread_id = 0;
	s->interp_id = 0;
	s->timestamp_us = vs->t > st->start ? (uint64_t)(vs->t - st->start) / 1000 : 0;
	s->weight = vs->w;
	s->status = leaf->idle ? 0 : TACH_STATUS_ON_CPU;
	s->depth = depth;
	s->same_outer = 0;
	s->frames = st->out;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += vs->w;
	*out = s;
	return TACH_OK;
}

static void v8_free(struct tach_reader *r)
{
	struct vstate *st = r->state;
	free(st->nodes);
	free(st->ids);
	free(st->s);
	free(st->walk);
	free(st->out);
	free(st->sbuf);
}

static const struct tachi_reader_ops v8_reader_ops = {
	.state_size = sizeof(struct vstate),
	.open = v8_open,
	.next = v8_next,
	.free = v8_free,
	.whole_input = true,
};

const struct tachi_format tachi_fmt_v8 = {
	.name = "v8",
	.reader = &v8_reader_ops,
	.probe = tachi_v8_probe,
	.resembles = tachi_v8_resembles,
};
