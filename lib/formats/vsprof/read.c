/* Visual Studio CallTreeSummary reader: the CSV of a call tree that Visual Studio's
 * profiler (VSPerfReport /summary:calltree, the instrumentation mode's report) writes,
 * read as inferno's vsprof collapser reads it, so the stacks and counts are inferno's.
 *
 * The first line is the header "Level,Function Name,Number of Calls,Elapsed Inclusive
 * Time %,...,Module Name,"; each next line a node: its level, its function in double
 * quotes, and its number of calls (in double quotes with thousands separators past 999),
 * the other columns not read. The values are calls, not samples nor time (the format's
 * times are averages per call): meta.sample_time 0, every record at 0, thread 0.
 *
 * As inferno: a node that the next line does not go deeper than is a record, its stack
 * the path from the root (bare names, text_stack.h), weighing its calls; closing nodes
 * whose children are done, each one weighs its calls less the calls of the child closed
 * before it (where it has more), and one with as many calls as that child gives no
 * record; at the input's end only the last node is a record. Nodes of 0 calls give none.
 * Refused, with the line: a header that is not the report's, a line without its level,
 * quoted name or number of calls, a number past 64 bits, a tree deeper than max-depth,
 * counts past max-samples. Memory follows the deepest stack and the distinct names. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/vsprof/vsprof.h"
#include "formats/text_stack.h"

struct vsnode {
	uint32_t frame;
	uint64_t calls;
};

struct vsread {
	struct tachi_tstack st;
	struct vsnode *stack;
	size_t cap;
	uint32_t depth;
	struct { uint32_t len; uint64_t calls; } *out; /* records of the line, to give */
	size_t out_cap, nout, given;
	struct vsnode next;     /* the line's node, pushed at next_depth once they are given */
	uint32_t next_depth;
	bool has_next, header, eof;
};

static int bad(struct tach_reader *r, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
		     "a Visual Studio call tree line %s", what);
}

/* A number at *s (a ',' before it skipped): digits, or digits and ',' in quotes. */
static int number(struct tach_reader *r, const char **s, const char *e, uint64_t *v)
{
	const char *p = *s;
	bool q, any = false;
	*v = 0;
	if (p < e && *p == ',')
		p++;
	q = p < e && *p == '"';
	p += q;
	for (; p < e && ((*p >= '0' && *p <= '9') || (q && *p == ',')); p++) {
		if (*p == ',')
			continue;
		if (*v > (UINT64_MAX - 9) / 10)
			return bad(r, "with a number past 64 bits");
		*v = *v * 10 + (uint64_t)(*p - '0');
		any = true;
	}
	if (!any || (q && (p == e || *p != '"')) || (!q && (p == e || *p != ',')))
		return bad(r, "without its level and number of calls");
	p += q;
	*s = p < e && *p == ',' ? p + 1 : p;
	return TACH_OK;
}

static int add_out(struct tach_reader *r, struct vsread *v, uint32_t len, uint64_t calls)
{
	if (!len || !calls)
		return TACH_OK;
	if (!TACHI_RESERVE(v->out, v->out_cap, v->nout + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	v->out[v->nout].len = len;
	v->out[v->nout++].calls = calls;
	return TACH_OK;
}

/* The records a node at depth d closes, as inferno writes them; the pops wait. */
static int plan(struct tach_reader *r, struct vsread *v, uint32_t d)
{
	int rc;
	if (d > v->depth)
		return TACH_OK;
	if (d == v->depth)
		return d ? add_out(r, v, d, v->stack[d - 1].calls) : TACH_OK;
	uint64_t prev = 0;
	uint32_t len = v->depth;
	for (uint32_t k = 0; k < v->depth - d + 1 && len; k++) {
		if (prev != v->stack[len - 1].calls && (rc = add_out(r, v, len, v->stack[len - 1].calls)))
			return rc;
		prev = v->stack[--len].calls;
		if (len && prev < v->stack[len - 1].calls)
			v->stack[len - 1].calls -= prev;
	}
	return TACH_OK;
}

static int line(struct tach_reader *r, struct vsread *v, const char *s, size_t n)
{
	const char *e = s + n, *name, *q;
	uint64_t level, calls;
	int rc;
	if ((rc = number(r, &s, e, &level)))
		return rc;
	if (s >= e || *s != '"' || !(q = memchr(s + 1, '"', (size_t)(e - s - 1))))
		return bad(r, "without its function name in quotes");
	name = s + 1;
	s = q + 1;
	if ((rc = number(r, &s, e, &calls)))
		return rc;
	if (level >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "stack deeper than the limit of %u frames (see --max-depth)",
			     r->lim.max_depth);
	if ((rc = tachi_tstack_intern(r, name, (size_t)(q - name), &v->next.frame)))
		return rc;
	v->next.calls = calls;
	/* where inferno's stack puts it: on top where the level is deeper (however much
	 * deeper), else in place of the node at the level (level 0 and 1 share the root) */
	v->next_depth = level > v->depth ? v->depth : level ? (uint32_t)level - 1 : 0;
	v->has_next = true;
	v->nout = v->given = 0;
	return plan(r, v, (uint32_t)level);
}

static int give(struct tach_reader *r, struct vsread *v)
{
	int rc;
	uint32_t len = v->out[v->given].len;
	for (uint32_t i = len; i > 0; i--)
		if ((rc = tachi_tstack_push_id(r, &v->st, v->stack[i - 1].frame)))
			return rc;
	return tachi_tstack_sample(r, &v->st, v->out[v->given++].calls);
}

static int next_line(struct tach_reader *r, struct vsread *v)
{
	static const char head[] = "Level,Function Name,Number of Calls,Elapsed Inclusive Time %,"
				   "Elapsed Exclusive Time %,Avg Elapsed Inclusive Time,"
				   "Avg Elapsed Exclusive Time,Module Name,";
	const char *s;
	size_t n;
	int rc = tachi_in_line(r, &s, &n);
	if (rc == TACH_EOF) {
		v->eof = true;
		v->nout = v->given = 0;
		return v->depth ? add_out(r, v, v->depth, v->stack[v->depth - 1].calls) : TACH_OK;
	}
	if (rc)
		return rc;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (!v->header) {
		v->header = true;
		if (n != sizeof(head) - 1 || memcmp(s, head, n))
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
				     "not a Visual Studio CallTreeSummary header");
		return TACH_OK;
	}
	return n ? line(r, v, s, n) : TACH_OK;
}

static int vs_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct vsread *v = r->state;
	int rc;
	for (;;) {
		if (v->given < v->nout) {
			if ((rc = give(r, v)))
				return rc;
			*out = &r->sample;
			return TACH_OK;
		}
		if (v->has_next) {
			if (!TACHI_RESERVE(v->stack, v->cap, (size_t)v->next_depth + 1))
				return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
			v->stack[v->next_depth] = v->next;
			v->depth = v->next_depth + 1;
			v->has_next = false;
		}
		if (v->eof)
			return TACH_EOF;
		if ((rc = next_line(r, v)))
			return rc;
	}
}

static int vs_open(struct tach_reader *r)
{
	r->meta.sample_time = 0;
	r->meta.interval_us = 0;
	return TACH_OK;
}

static void vs_free(struct tach_reader *r)
{
	struct vsread *v = r->state;
	tachi_tstack_free(&v->st);
	free(v->stack);
	free(v->out);
}

const struct tachi_reader_ops tachi_vsprof_reader_ops = {
	.state_size = sizeof(struct vsread),
	.open = vs_open,
	.next = vs_next,
	.free = vs_free,
};
