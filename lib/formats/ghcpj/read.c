/* GHC -pj reader: the JSON profile that a program built with -prof writes when run with
 * +RTS -pj, read as speedscope's Haskell importer reads it, so the stacks and their ticks
 * and allocations are speedscope's.
 *
 * A profile is one JSON object: "program", "arguments", "rts_arguments", "end_time",
 * "initial_capabilities", "total_time", "total_ticks", "tick_interval" (µs), "total_alloc",
 * "cost_centres", an array of {id, label, module, src_loc, is_caf}, and "profile", the
 * cost-centre tree: a node {id (a cost centre's), entries, alloc (bytes), ticks, children
 * [nodes]} from the root (MAIN) down.
 *
 * What a sample becomes, as for the .prof text (ghcprof/read.c): each node with ticks or
 * bytes of its own is one sample of its stack (the path from the root to it) weighing its
 * ticks, with values "cpu" (ticks × tick_interval, ns) and "alloc" (bytes); one with bytes
 * and no tick is a sample of values only (weight 0). The tree holds each stack's totals,
 * not samples: their times and order are not known (every sample is at 0), said once.
 * Frames: "MODULE.LABEL", the file and first line of src_loc (none for "<built-in>" and
 * the like; speedscope keeps the whole span as the file).
 *
 * The whole file is read and checked at open (strict JSON, json.c; a tree of up to 255
 * levels, two JSON levels each); the tree is then walked as samples are asked for, a
 * cursor per level. Memory: the file, a record per cost centre, a cursor per level.
 * Refused with the byte offset: no "cost_centres" or "profile", a cost centre without an
 * integer id or string label, module and src_loc, a node naming no cost centre, ticks or
 * alloc that are no integer of 0 or more, children that are no array of objects, a stack
 * deeper than max-depth, ticks past max-samples. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/json_read.h"
#include "formats/ghc_tree.h"
#include "formats/ghcpj/ghcpj.h"

#define NONE UINT64_MAX

struct ghcpj_cc {
	int64_t id;
	uint32_t frame;
	uint32_t seq;                /* order in the array: the last of an id wins */
};

struct ghcpj_state {
	struct tachi_ghc g;
	struct ghcpj_cc *ccs;
	size_t nccs, ccs_cap;
	struct tachi_json *levels;   /* per tree level: a cursor in its children array */
	size_t nlevels, levels_cap;
	uint64_t pending;            /* a node to read next (the root at first); NONE: none */
	char *buf[3];
	size_t cap[3];
};

static void cursor(struct tach_reader *r, struct tachi_json *j, uint64_t off)
{
	tachi_json_init(j, r->in.data, r->in.size, (size_t)off, TACHI_JSON_MAX_DEPTH, &r->err);
}

/* ---- open ---- */

static int by_id(const void *a, const void *b)
{
	const struct ghcpj_cc *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* The cost centre object at off: its frame. */
static int cost_centre(struct tach_reader *r, uint64_t off, struct ghcpj_cc *cc)
{
	static const char *const want[] = { "id", "label", "module", "src_loc" };
	struct ghcpj_state *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[4];
	size_t n[3];
	int rc;
	cursor(r, &j, off);
	if ((rc = tachi_json_value(&j, &t)) || (rc = tachi_json_keys(&j, want, o, 4)))
		return rc;
	if ((rc = tachi_jr_opt_int(r, o[0], "a cost centre's id", 0, INT64_MAX, false, &cc->id)))
		return rc;
	if (cc->id < 0)
		return tachi_jr_bad(r, off, "a cost centre without an id");
	for (int i = 0; i < 3; i++)
		if ((rc = tachi_jr_need_string(r, o[i + 1], off, "a cost centre without its label, "
					       "module or src_loc", "a cost centre's label, module and "
					       "src_loc must be strings", &t)) ||
		    (rc = tachi_jr_string(r, &t, &st->buf[i], &st->cap[i], &n[i])))
			return rc;
	return tachi_ghc_frame(r, st->buf[0], n[0], st->buf[1], n[1], st->buf[2], n[2],
			       &cc->frame);
}

static int parse_ccs(struct tach_reader *r, uint64_t off)
{
	struct ghcpj_state *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_jr_begin_array(r, &j, off, "cost_centres");
	while (!rc && !(rc = tachi_json_elem(&j, &more)) && more) {
		if ((rc = tachi_json_value(&j, &t)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "a cost centre must be an object");
		if ((rc = tachi_json_keys(&j, NULL, NULL, 0)))
			return rc;
		if (!TACHI_RESERVE(st->ccs, st->ccs_cap, st->nccs + 1))
			return tachi_jr_nomem(r);
		if (st->nccs >= UINT32_MAX - 1)
			return tachi_jr_bad(r, t.off, "more than 2^32 - 2 cost centres");
		st->ccs[st->nccs].seq = (uint32_t)st->nccs;
		if ((rc = cost_centre(r, t.off, &st->ccs[st->nccs])))
			return rc;
		st->nccs++;
	}
	if (rc)
		return rc;
	if (st->nccs)
		qsort(st->ccs, st->nccs, sizeof(st->ccs[0]), by_id);
	return TACH_OK;
}

static int gj_open(struct tach_reader *r)
{
	static const char *const want[] = { "cost_centres", "profile", "tick_interval" };
	struct ghcpj_state *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[3];
	int64_t iv;
	size_t bom = tachi_json_bom(r->in.data, r->in.size);
	cursor(r, &j, bom);
	int rc = tachi_json_value(&j, &t);
	if (rc)
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "not a GHC -pj profile: expected a JSON object");
	if ((rc = tachi_json_keys(&j, want, o, 3)) || (rc = tachi_json_end(&j)))
		return rc;
	if (o[0] == NONE || o[1] == NONE)
		return tachi_jr_bad(r, t.off, "not a GHC -pj profile: no \"cost_centres\" and "
				    "\"profile\"");
	if ((rc = tachi_jr_opt_int(r, o[2], "\"tick_interval\"", 0,
				   (int64_t)TACHI_MAX_INTERVAL_US, false, &iv)) ||
	    (rc = parse_ccs(r, o[0])))
		return rc;
	st->pending = o[1];
	tachi_ghc_open(r, &st->g, iv < 0 ? 0 : (uint64_t)iv);
	return TACH_OK;
}

/* ---- the tree ---- */

static int find_cc(struct tach_reader *r, int64_t id, uint64_t off, uint32_t *frame)
{
	struct ghcpj_state *st = r->state;
	size_t lo = 0, hi = st->nccs;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->ccs[mid].id <= id)
			lo = mid + 1;
		else
			hi = mid;
	}
	/* lo is past the last of id: that one (JSON.parse keeps the last) */
	if (!lo || st->ccs[lo - 1].id != id)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "cost centre %lld is not in \"cost_centres\"", (long long)id);
	*frame = st->ccs[lo - 1].frame;
	return TACH_OK;
}

/* The node at off, at depth: pushed, its children's cursor a new level, its ticks and
 * bytes. */
static int node(struct tach_reader *r, uint64_t off, uint32_t depth, uint64_t *ticks,
		uint64_t *bytes)
{
	static const char *const want[] = { "id", "ticks", "alloc", "children" };
	struct ghcpj_state *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[4];
	int64_t id, v[2];
	uint32_t frame = 0;
	cursor(r, &j, off);
	int rc = tachi_json_value(&j, &t);
	if (rc || (rc = tachi_json_keys(&j, want, o, 4)))
		return rc;
	if ((rc = tachi_jr_opt_int(r, o[0], "a node's id", 0, INT64_MAX, false, &id)))
		return rc;
	if (id < 0)
		return tachi_jr_bad(r, off, "a node without an id");
	if ((rc = tachi_jr_opt_int(r, o[1], "a node's ticks", 0, INT64_MAX, false, &v[0])) ||
	    (rc = tachi_jr_opt_int(r, o[2], "a node's alloc", 0, INT64_MAX, false, &v[1])) ||
	    (rc = find_cc(r, id, off, &frame)) ||
	    (rc = tachi_ghc_push(r, &st->g, depth, frame, TACH_POS_OFFSET, off)))
		return rc;
	*ticks = v[0] < 0 ? 0 : (uint64_t)v[0];
	*bytes = v[1] < 0 ? 0 : (uint64_t)v[1];
	if (o[3] == NONE)
		return TACH_OK;
	if (!TACHI_RESERVE(st->levels, st->levels_cap, st->nlevels + 1))
		return tachi_jr_nomem(r);
	struct tachi_json *c = &st->levels[st->nlevels];
	cursor(r, c, o[3]);
	if ((rc = tachi_json_value(c, &t)))
		return rc;
	if (t.type != TJ_ARRAY)
		return tachi_jr_bad(r, t.off, "a node's children must be an array");
	st->nlevels++;
	return TACH_OK;
}

/* The next node in the walk (depth first, from the root): its offset and depth; NONE at
 * the end. */
static int next_node(struct tach_reader *r, uint64_t *off, uint32_t *depth)
{
	struct ghcpj_state *st = r->state;
	if (st->pending != NONE) {
		*off = st->pending, *depth = 0;
		st->pending = NONE;
		return TACH_OK;
	}
	while (st->nlevels) {
		struct tachi_json *c = &st->levels[st->nlevels - 1];
		struct tachi_jtok t;
		bool more;
		int rc = tachi_json_elem(c, &more);
		if (rc)
			return rc;
		if (!more) {
			st->nlevels--;
			continue;
		}
		if ((rc = tachi_json_value(c, &t)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "a node must be an object");
		if ((rc = tachi_json_keys(c, NULL, NULL, 0)))
			return rc;
		*off = t.off;
		*depth = (uint32_t)st->nlevels;
		return TACH_OK;
	}
	*off = NONE;
	return TACH_OK;
}

static int gj_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct ghcpj_state *st = r->state;
	for (;;) {
		uint64_t off, ticks = 0, bytes = 0;
		uint32_t depth;
		bool given;
		int rc = next_node(r, &off, &depth);
		if (rc)
			return rc;
		if (off == NONE)
			return TACH_EOF;
		if ((rc = node(r, off, depth, &ticks, &bytes)) ||
		    (rc = tachi_ghc_sample(r, &st->g, ticks, bytes, TACH_POS_OFFSET, off, &given)))
			return rc;
		if (given) {
			*out = &r->sample;
			return TACH_OK;
		}
	}
}

static void gj_free(struct tach_reader *r)
{
	struct ghcpj_state *st = r->state;
	tachi_ghc_free(&st->g);
	free(st->ccs);
	free(st->levels);
	for (int i = 0; i < 3; i++)
		free(st->buf[i]);
}

const struct tachi_reader_ops tachi_ghcpj_reader_ops = {
	.state_size = sizeof(struct ghcpj_state),
	.open = gj_open,
	.next = gj_next,
	.free = gj_free,
	.whole_input = true,
};
