/* V8 sampling heap profile reader: the ".heapprofile" JSON that `node --heap-prof` and
 * Chrome DevTools' Memory panel ("Allocation sampling", Save) write, the DevTools
 * protocol's HeapProfiler.SamplingHeapProfile.
 *
 * A file is one JSON object: "head", the root of the allocation call tree, each node
 * {callFrame {functionName, scriptId, url, lineNumber, columnNumber}, selfSize, id,
 * children [nodes]} with its children nested in it; "samples", the sampled allocations
 * still alive when the profile was taken, each {size, nodeId, ordinal}. selfSize is the
 * bytes V8 attributes to the node itself (its allocations' sizes, each scaled up by the
 * chance that the sampling interval missed it), which is what DevTools' tree and
 * speedscope's importer (importFromChromeHeapProfile) show; "samples" is not read: its
 * sizes are per-allocation estimates that do not add up to the nodes' (V8 scales each
 * sample and each node's aggregate apart), its ordinals an order and no time, and older
 * profiles have none.
 *
 * What a record becomes: one per node with a selfSize above 0, in the file's order (the
 * tree's preorder, as speedscope lists them): its stack the node and its ancestors,
 * innermost first, the root "(root)" no frame (DevTools shows none; speedscope puts it
 * under every stack); its weight the bytes (meta.weight_unit "bytes", value type
 * "space"), thread 0, no timestamp (0), no time, status unknown. Frames are as in a
 * .cpuprofile (v8_tree.c): the function name, "(anonymous)" when empty (speedscope names
 * one "(anonymous FILE:LINE)"), the url as the file ("~" when empty), V8's 0-based line
 * and column plus 1 as DevTools shows them (speedscope's heap importer shows V8's line
 * as it is, one less). V8's own nodes ("(V8 API)", "(BYTECODE_COMPILER)", "(GC)"...)
 * stay frames.
 *
 * The whole file is read and checked at open (strict JSON, json.c; a lone-surrogate
 * escape read as U+FFFD with a warning, as for V8's CPU profiles): memory is the file plus
 * a record per node, grown as nodes are read. The tree is walked without recursion, but
 * the JSON parser nests at most 512 levels, two a frame: a tree deeper than about 255
 * frames is refused where it goes deeper (V8's sampling heap profiler keeps 128 frames
 * when DevTools or node start it). Refused with the byte offset: a node that is not an
 * object or lacks a callFrame (with a string functionName) or a selfSize, a selfSize that
 * is no integer from 0 to 2^63 - 1, children that are no array, a stack deeper than
 * max-depth, selfSizes that add up past 2^63 - 1 or max-samples. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/heapprofile/heapprofile.h"
#include "formats/json_read.h"
#include "formats/v8_tree.h"

#define NONE UINT64_MAX
#define NO_NODE UINT32_MAX

/* A node being read (the walk's stack: its ancestors below it). */
struct hp_pending {
	uint32_t idx;
	bool in_children;         /* in its "children" array, else in its keys */
	bool has_frame, has_size;
};

struct hp_state {
	struct tachi_v8 v;        /* first: the shared frame steps take r->state as one */
	uint64_t *self;           /* each node's selfSize, by node index */
	size_t self_cap;
	struct hp_pending *pending;
	size_t pending_n, pending_cap;
	size_t cur;               /* the next node to give a record for */
	struct tach_value_type vtype;
};

/* ---- the tree ---- */

/* A node's object has just opened (token t): its record, on the walk's stack. */
static int node_open(struct tach_reader *r, const struct tachi_jtok *t, uint32_t parent)
{
	struct hp_state *st = r->state;
	struct tachi_v8 *v = &st->v;
	if (t->type != TJ_OBJECT)
		return tachi_jr_bad(r, t->off, "a node must be an object");
	if (v->nnodes >= UINT32_MAX - 2)
		return tachi_jr_bad(r, t->off, "more than 2^32 - 3 nodes");
	if (!TACHI_RESERVE(v->nodes, v->nodes_cap, v->nnodes + 1) ||
	    !TACHI_RESERVE(st->self, st->self_cap, v->nnodes + 1) ||
	    !TACHI_RESERVE(st->pending, st->pending_cap, st->pending_n + 1))
		return tachi_jr_nomem(r);
	tachi_v8_node_init(r, &v->nodes[v->nnodes], t->off, parent);
	st->self[v->nnodes] = 0;
	st->pending[st->pending_n++] = (struct hp_pending){ .idx = (uint32_t)v->nnodes++ };
	return TACH_OK;
}

/* The value of a node's key k (j just after its colon): its call frame and selfSize;
 * others (its id, which only "samples" names) are passed over. */
static int node_key(struct tach_reader *r, struct tachi_json *j, const struct tachi_jtok *k,
		    struct hp_pending *p)
{
	struct hp_state *st = r->state;
	const uint8_t *d = r->in.data;
	struct tachi_jtok t;
	int64_t x;
	int rc;
	if (tachi_json_str_eq(d, k, "callFrame")) {
		p->has_frame = true;
		rc = tachi_v8_call_frame(r, j->pos, &st->v.nodes[p->idx]);
		return rc ? rc : tachi_json_skip(j);
	}
	if (!tachi_json_str_eq(d, k, "selfSize"))
		return tachi_json_skip(j);
	if ((rc = tachi_json_value(j, &t)))
		return rc;
	if (!tachi_json_tok_int(d, &t, 0, INT64_MAX, &x))
		return tachi_jr_bad(r, t.off, "selfSize must be an integer 0..2^63-1 (bytes)");
	p->has_size = true;
	st->self[p->idx] = (uint64_t)x;
	return TACH_OK;
}

/* A node's keys are done: it had what every node has. */
static int node_close(struct tach_reader *r, const struct hp_pending *p)
{
	struct hp_state *st = r->state;
	uint64_t off = st->v.nodes[p->idx].off;
	if (!p->has_frame)
		return tachi_jr_bad(r, off, "node without a \"callFrame\"");
	if (!p->has_size)
		return tachi_jr_bad(r, off, "node without a \"selfSize\"");
	st->pending_n--;
	return TACH_OK;
}

/* One step of the walk at the node on top of the stack: its next key, or its next child. */
static int walk_step(struct tach_reader *r, struct tachi_json *j)
{
	struct hp_state *st = r->state;
	struct hp_pending *p = &st->pending[st->pending_n - 1];
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
		return (rc = tachi_json_value(j, &t)) ? rc : node_open(r, &t, p->idx);
	}
	if ((rc = tachi_json_key(j, &k, &more)))
		return rc;
	if (!more)
		return node_close(r, p);
	if (!tachi_json_str_eq(r->in.data, &k, "children"))
		return node_key(r, j, &k, p);
	if ((rc = tachi_json_value(j, &t)))
		return rc;
	if (t.type != TJ_ARRAY)
		return tachi_jr_bad(r, t.off, "\"children\" must be an array of nodes");
	p->in_children = true;
	return TACH_OK;
}

/* The tree at off in one pass of one cursor, each node read once, a stack of the nodes it
 * is in (not recursion): time follows the input's size, memory its depth. */
static int read_tree(struct tach_reader *r, uint64_t off)
{
	struct hp_state *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	tachi_jr_cursor(r, &j, off);
	j.max_depth = TACHI_JSON_MAX_DEPTH;
	int rc = tachi_json_value(&j, &t);
	if (rc || (rc = node_open(r, &t, NO_NODE)))
		return rc;
	while (st->pending_n)
		if ((rc = walk_step(r, &j)))
			return rc;
	return TACH_OK;
}

/* Each node's depth (its parent comes before it: the walk numbers them in preorder), the
 * root "(root)" no frame; the stacks of the nodes with bytes within max-depth, their
 * bytes within 63 bits and max-samples. */
static int depths(struct tach_reader *r)
{
	struct hp_state *st = r->state;
	struct tachi_v8 *v = &st->v;
	uint64_t total = 0;
	for (size_t i = 0; i < v->nnodes; i++) {
		struct tachi_v8_node *nd = &v->nodes[i];
		bool root = nd->parent == NO_NODE;
		nd->depth = (root ? 0 : v->nodes[nd->parent].depth) + !(root && nd->root_name);
		if (!st->self[i])
			continue;
		if (nd->depth > r->lim.max_depth)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, nd->off,
				     "stack deeper than the depth limit of %u frames", r->lim.max_depth);
		if (__builtin_add_overflow(total, st->self[i], &total) || total > INT64_MAX)
			return tachi_jr_bad(r, nd->off, "the selfSizes add up past 2^63-1 bytes");
		if (total > r->lim.max_samples)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, nd->off,
				     "the selfSizes add up to more than %llu (see --max-samples)",
				     (unsigned long long)r->lim.max_samples);
	}
	return TACH_OK;
}

/* ---- open / next ---- */

static void set_meta(struct tach_reader *r)
{
	struct hp_state *st = r->state;
	struct tach_meta *m = &r->meta;
	st->vtype = (struct tach_value_type){ "space", "bytes" };
	m->value_type_count = 1;
	m->value_types = &st->vtype;
	m->weight_type = 0;
	m->default_type = 1;
	m->weight_unit = "bytes";
	m->sample_time = 0;
	m->interval_us = 0;
	/* V8's clock is not in the file: no start, no duration */
	m->start_time_us = 0;
}

static int hp_open(struct tach_reader *r)
{
	static const char *const want[] = { "head" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[1];
	r->json_lone_ok = true;
	int rc = tachi_jr_top(r, &j, &t, "not a V8 heap profile: expected a JSON object");
	/* the tree nests two levels a frame: as deep as the parser goes */
	j.max_depth = TACHI_JSON_MAX_DEPTH;
	if (rc || (rc = tachi_json_keys(&j, want, o, 1)) || (rc = tachi_json_end(&j)))
		return rc;
	if (o[0] == NONE)
		return tachi_jr_bad(r, t.off, "not a V8 heap profile: no \"head\"");
	tachi_v8_lone_warning(r);
	if ((rc = read_tree(r, o[0])) || (rc = depths(r)))
		return rc;
	set_meta(r);
	return TACH_OK;
}

static int hp_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct hp_state *st = r->state;
	struct tachi_v8 *v = &st->v;
	while (st->cur < v->nnodes && !st->self[st->cur])
		st->cur++;
	if (st->cur >= v->nnodes)
		return TACH_EOF;
	size_t leaf = st->cur++;
	uint32_t depth = v->nodes[leaf].depth, k = 0;
	int rc;
	if (depth && !TACHI_RESERVE(v->out, v->out_cap, depth))
		return tachi_jr_nomem(r);
	for (uint32_t i = (uint32_t)leaf; i != NO_NODE; i = v->nodes[i].parent) {
		struct tachi_v8_node *nd = &v->nodes[i];
		if (k < depth && (rc = tachi_v8_frame(r, nd, &v->out[k++])))
			return rc;
	}
	struct tach_sample *s = &r->sample;
	memset(s, 0, sizeof(*s));
	s->weight = st->self[leaf];
	s->status = TACH_STATUS_UNKNOWN;
	s->depth = depth;
	s->frames = v->out;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += s->weight;
	*out = s;
	return TACH_OK;
}

static void hp_free(struct tach_reader *r)
{
	struct hp_state *st = r->state;
	tachi_v8_free(r);
	free(st->self);
	free(st->pending);
}

const struct tachi_reader_ops tachi_heapprofile_reader_ops = {
	.state_size = sizeof(struct hp_state),
	.open = hp_open,
	.next = hp_next,
	.free = hp_free,
	.whole_input = true,
};
