/* pmcstat call graph reader: the text FreeBSD's pmcstat writes with `pmcstat -R FILE -G
 * OUT` (its pmcpl_callgraph.c), read as speedscope's importer (pmcstat-callgraph.ts) reads
 * it, so that the stacks, counts and total are speedscope's.
 *
 * The graph is inverted: a node at no indent is a sampled function, a node one space deeper
 * a caller of the one above it, each "PCT%  [N]  NAME", with " @ FILE" where the file is
 * not the line before's. A line is a node when speedscope's pattern takes it: spaces, a
 * percentage ([0-9.]+ and '%'), two spaces, "[N]", blanks, a name without blanks, then the
 * end or " @ " and the file up to the end. Every other line (each event's "@ EVENT [N
 * samples]", blank lines) is skipped, as speedscope skips it. Lines are what speedscope's
 * pattern sees in its multiline mode: a CR (or U+2028, U+2029) inside a line ends what the
 * name or file can take and starts a place a node can begin; blanks are JavaScript's (its
 * Unicode spaces too).
 *
 * A node that the next node is not deeper than (the last node too) closes a stack: the
 * frames from its level up to the one at no indent, standing for its count of samples
 * (those of the callers on its path; a caller's samples beyond its own callers' are left
 * out, as speedscope leaves them out). A level's frame is the last node at that level, one
 * of an earlier event's graph too, as speedscope keeps it. A node without " @ " keeps the
 * file of the node before it. A frame is its name: the file it first comes with in a stack
 * with samples (root first; "~", none, before any " @ ") is its file in every stack. A
 * stack of 0 samples is no record. The counts are the event's samples: no time
 * (meta.sample_time 0), no threads, every record at 0.
 *
 * Refused, with the line: a stack with samples on a level no node has been at (speedscope
 * fails on it), its count past 64 bits, a node deeper than max-depth, a name or file past
 * TACHI_MAX_STRING, counts past max-samples; and an input without a node (speedscope
 * imports none). Memory follows the deepest node and the distinct names and files. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "model/dict.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/pmcstat/pmcstat.h"
#include "formats/js_text.h"
#include "formats/text_stack.h"

#define UNSET UINT32_MAX

struct pmslot {
	uint32_t name, file;  /* string ids; name UNSET: no node at the level yet */
};

struct pmread {
	struct tachi_tstack st;
	struct pmslot *slot;     /* each level's last node */
	size_t slot_cap;
	uint32_t nslot;
	uint32_t *ids;          /* the stack being given, by level */
	size_t ids_cap;
	uint32_t *frame_of;     /* 1 + the frame of a name's string id, 0: none yet */
	size_t frame_of_cap;
	size_t nframe_of;
	uint32_t file;          /* the file a node without " @ " has */
	uint32_t none;          /* "~" */
	int64_t prev;           /* the last node's level, -1 before any */
	uint64_t prev_count, prev_line;
	bool prev_big, eof;
};

struct pmnode {
	size_t indent;
	const char *count, *name, *file;
	size_t count_len, name_len, file_len;
};

static size_t run_of(const char *s, size_t n, size_t i, bool dots)
{
	size_t j = i;
	while (j < n && ((s[j] >= '0' && s[j] <= '9') || (dots && s[j] == '.')))
		j++;
	return j - i;
}

/* The node speedscope's pattern finds from s[0], if it finds one. */
static bool node_at(const char *s, size_t n, struct pmnode *o)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k;
	while (i < n && s[i] == ' ')
		i++;
	o->indent = i;
	size_t d = run_of(s, n, i, true);
	i += d;
	if (!d || n - i < 4 || memcmp(s + i, "%  [", 4))
		return false;
	o->count = s + i + 4;
	o->count_len = run_of(s, n, i + 4, false);
	i += 4 + o->count_len;
	if (!o->count_len || i == n || s[i++] != ']')
		return false;
	while (i < n && (k = tachi_js_space(u, n, i)))
		i += k;
	o->name = s + i;
	while (i < n && !tachi_js_space(u, n, i))
		i++;
	o->name_len = (size_t)(s + i - o->name);
	o->file = NULL, o->file_len = 0;
	if (!o->name_len)
		return false;
	if (i == n || tachi_js_term(u, n, i))
		return true;
	if (n - i < 3 || memcmp(s + i, " @ ", 3))
		return false;
	o->file = s + i + 3;
	for (i += 3; i < n && !tachi_js_term(u, n, i);)
		i++;
	o->file_len = (size_t)(s + i - o->file);
	return true;
}

/* The first node in the line, from its start or after a line terminator inside it. */
static bool node_in(const char *s, size_t n, struct pmnode *o)
{
	const unsigned char *u = (const unsigned char *)s;
	for (size_t p = 0;;) {
		if (node_at(s + p, n - p, o))
			return true;
		size_t k = 0;
		while (p < n && !(k = tachi_js_term(u, n, p)))
			p++;
		if (p == n)
			return false;
		p += k;
	}
}

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

/* The frame of the name at a level: the one the name has, else a new one in its file. */
static int frame_for(struct tach_reader *r, struct pmread *v, const struct pmslot *sl,
		     uint32_t *id)
{
	if (sl->name >= v->nframe_of) {
		if (!TACHI_RESERVE(v->frame_of, v->frame_of_cap, (size_t)sl->name + 1))
			return nomem(r);
		memset(v->frame_of + v->nframe_of, 0,
		       ((size_t)sl->name + 1 - v->nframe_of) * sizeof(*v->frame_of));
		v->nframe_of = (size_t)sl->name + 1;
	}
	if (v->frame_of[sl->name]) {
		*id = v->frame_of[sl->name] - 1;
		return TACH_OK;
	}
	struct tach_frame f = { sl->file == UNSET ? v->none : sl->file, sl->name, TACH_NO_LINE,
				TACH_NO_LINE, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_frame(&r->dict, &f, id))
		return nomem(r);
	v->frame_of[sl->name] = *id + 1;
	return TACH_OK;
}

/* The stack the last node closes, as r->sample (*gave), or none where it has no samples. */
static int close_stack(struct tach_reader *r, struct pmread *v, bool *gave)
{
	*gave = false;
	if (!v->prev_count && !v->prev_big)
		return TACH_OK;
	if (v->prev_big)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, v->prev_line,
			     "a pmcstat call graph node whose count is past 64 bits");
	size_t levels = (size_t)v->prev + 1;
	if (!TACHI_RESERVE(v->ids, v->ids_cap, levels))
		return nomem(r);
	for (size_t i = levels; i-- > 0;) {
		if (i >= v->nslot || v->slot[i].name == UNSET)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, v->prev_line,
				     "a pmcstat call graph node indented %zu spaces without a node "
				     "indented %zu before it", levels - 1, i);
		int rc = frame_for(r, v, &v->slot[i], &v->ids[i]);
		if (rc)
			return rc;
	}
	for (size_t i = 0; i < levels; i++) {
		int rc = tachi_tstack_push_id(r, &v->st, v->ids[i]);
		if (rc)
			return rc;
	}
	int rc = tachi_tstack_sample(r, &v->st, v->prev_count);
	*gave = rc == TACH_OK;
	return rc;
}

/* The node at its level, the last node from now. */
static int keep_node(struct tach_reader *r, struct pmread *v, const struct pmnode *o)
{
	if (o->indent >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "stack deeper than the limit of %u frames (see --max-depth)",
			     r->lim.max_depth);
	if (o->name_len > TACHI_MAX_STRING || o->file_len > TACHI_MAX_STRING)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "a pmcstat call graph name or file longer than %u bytes",
			     TACHI_MAX_STRING);
	if (!TACHI_RESERVE(v->slot, v->slot_cap, o->indent + 1))
		return nomem(r);
	for (; v->nslot <= o->indent; v->nslot++)
		v->slot[v->nslot].name = UNSET;
	struct pmslot *sl = &v->slot[o->indent];
	if (o->file_len && tach_dict_intern_string(&r->dict, o->file, o->file_len, &v->file))
		return nomem(r);
	if (tach_dict_intern_string(&r->dict, o->name, o->name_len, &sl->name))
		return nomem(r);
	sl->file = v->file;
	v->prev = (int64_t)o->indent;
	v->prev_line = r->in.line;
	tachi_tstack_count(o->count, o->count_len, &v->prev_count, &v->prev_big);
	return TACH_OK;
}

static int pm_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct pmread *v = r->state;
	const char *s;
	size_t n;
	struct pmnode o;
	bool gave = false;
	while (!gave) {
		if (v->eof)
			return TACH_EOF;
		int rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF) {
			v->eof = true;
			if (v->prev < 0 && !r->in.line) /* empty: the core says so */
				return TACH_EOF;
			if (v->prev < 0)
				return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
					     "no pmcstat call graph node (\"PCT%%  [N]  NAME\") "
					     "in the input");
			rc = close_stack(r, v, &gave);
		} else if (!rc && node_in(s, n, &o)) {
			if (v->prev >= 0 && o.indent <= (size_t)v->prev)
				rc = close_stack(r, v, &gave);
			if (!rc)
				rc = keep_node(r, v, &o);
		}
		if (rc)
			return rc;
	}
	*out = &r->sample;
	return TACH_OK;
}

static int pm_open(struct tach_reader *r)
{
	struct pmread *v = r->state;
	v->prev = -1;
	v->file = UNSET;
	r->meta.sample_time = 0;
	r->meta.interval_us = 0;
	return tach_dict_intern_string(&r->dict, "~", 1, &v->none) ? nomem(r) : TACH_OK;
}

static void pm_free(struct tach_reader *r)
{
	struct pmread *v = r->state;
	tachi_tstack_free(&v->st);
	free(v->slot);
	free(v->ids);
	free(v->frame_of);
}

const struct tachi_reader_ops tachi_pmcstat_reader_ops = {
	.state_size = sizeof(struct pmread),
	.open = pm_open,
	.next = pm_next,
	.free = pm_free,
};
