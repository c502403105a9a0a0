/* VTune CSV reader: the top-down call stacks that VTune's command line writes with
 * `vtune -report top-down -call-stack-mode all -column="CPU Time:Self,Module"
 * -report-out out.csv -format csv -csv-delimiter comma` (amplxe-cl before it), read as
 * inferno's vtune collapser reads them, so the stacks and times are inferno's.
 *
 * Lines before the header "Function Stack,CPU Time:Self,Module" are skipped. Each next
 * line is a node of the tree: its function indented a space a level (a name with a comma
 * or a blank in double quotes, what follows the first "\"," after the opening quote being
 * the rest: a quote in the name is not undone, as inferno does not undo it), its own CPU
 * time in seconds, and its module; the frame is "MODULE`FUNCTION" (a bare name,
 * text_stack.h), or the function alone where the module is empty. Each node with time of
 * its own is one record, its stack the path from the root: the time is its time_ns
 * (meta.sample_time 1), its weight the time in ms, rounded (inferno's count); a node of
 * less than half a millisecond is left out, as inferno leaves it. No threads, no
 * timestamps (every record at 0).
 *
 * Refused, with the line: a node more than one level deeper than the line before it, a
 * line without the three fields, a time that is no decimal number of seconds (or past 64
 * bits of ns), a tree deeper than max-depth, ms past max-samples. Memory follows the
 * deepest stack and the distinct names. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/vtune/vtune.h"
#include "formats/text_stack.h"

struct vread {
	struct tachi_tstack st;
	uint32_t *path;     /* each level's frame from the root */
	size_t path_cap;
	uint32_t levels;
	bool in_data;       /* past the header */
	char *buf;
	size_t cap;
};

static int bad(struct tach_reader *r, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "a VTune call stack line %s",
		     what);
}

/* Seconds with decimals into ns (past the ninth decimal dropped); false when s is none. */
static bool seconds_ns(const char *s, size_t n, uint64_t *ns, bool *big)
{
	size_t i = 0;
	uint64_t x = 0, frac = 0, scale = 1;
	*big = false;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		*big |= x > (UINT64_MAX - 9) / 10;
		x = x * 10 + (uint64_t)(s[i] - '0');
	}
	bool digits = i > 0;
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++, digits = true)
			if (scale < 1000000000)
				frac = frac * 10 + (uint64_t)(s[i] - '0'), scale *= 10;
	if (!digits || i != n)
		return false;
	*big |= __builtin_mul_overflow(x, (uint64_t)1000000000, ns) ||
		__builtin_add_overflow(*ns, frac * (1000000000 / scale), ns);
	return !*big;
}

/* The path's frames, innermost first, as r->sample weighing ns's rounded ms. */
static int give(struct tach_reader *r, struct vread *v, uint64_t ns)
{
	int rc;
	for (uint32_t i = v->levels; i > 0; i--)
		if ((rc = tachi_tstack_push_id(r, &v->st, v->path[i - 1])))
			return rc;
	if ((rc = tachi_tstack_sample(r, &v->st, ns / 1000000 + (ns % 1000000 >= 500000))))
		return rc;
	r->sample.time_ns = ns;
	return TACH_OK;
}

/* A node's line: its frame at its level, and a record where its own time is (*gave). */
static int node_line(struct tach_reader *r, struct vread *v, const char *s, size_t n,
		     bool *gave)
{
	size_t sp = 0, fl;
	const char *f, *rest;
	while (sp < n && s[sp] == ' ')
		sp++;
	if (sp > v->levels)
		return bad(r, "more than one level deeper than the line before it");
	if (sp >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "stack deeper than the limit of %u frames (see --max-depth)",
			     r->lim.max_depth);
	s += sp, n -= sp;
	if (n && *s == '"') {
		f = s + 1;
		rest = memmem(f, n - 1, "\",", 2);
		fl = rest ? (size_t)(rest - f) : 0;
		rest = rest ? rest + 2 : NULL;
	} else {
		f = s;
		rest = memchr(s, ',', n);
		fl = rest ? (size_t)(rest - s) : 0;
		rest = rest ? rest + 1 : NULL;
	}
	const char *tend = rest ? memchr(rest, ',', n - (size_t)(rest - s)) : NULL;
	if (!tend)
		return bad(r, "without its function, CPU time and module");
	const char *mod = tend + 1;
	size_t ml = n - (size_t)(mod - s);
	uint64_t ns;
	bool big;
	if (!seconds_ns(rest, (size_t)(tend - rest), &ns, &big))
		return bad(r, big ? "whose CPU time is past 64 bits of ns"
				  : "whose CPU time is no number of seconds");
	if (!TACHI_RESERVE(v->buf, v->cap, ml + fl + 1) ||
	    !TACHI_RESERVE(v->path, v->path_cap, sp + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	size_t o = 0;
	if (ml) {
		memcpy(v->buf, mod, ml);
		v->buf[ml] = '`';
		o = ml + 1;
	}
	memcpy(v->buf + o, f, fl);
	int rc = tachi_tstack_intern(r, v->buf, o + fl, &v->path[sp]);
	if (rc)
		return rc;
	v->levels = (uint32_t)sp + 1;
	*gave = ns / 1000000 + (ns % 1000000 >= 500000) > 0;
	return *gave ? give(r, v, ns) : TACH_OK;
}

static int vt_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct vread *v = r->state;
	const char *s;
	size_t n;
	int rc;
	bool gave = false;
	static const char head[] = "Function Stack,CPU Time:Self,Module";
	do {
		rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF && !v->in_data && r->in.line)
			tachi_warn(&r->warn, TACH_POS_NONE, 0,
				   "no call stacks: the input has no VTune header line");
		if (rc)
			return rc;
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
			n--;
		if (!v->in_data)
			v->in_data = n >= sizeof(head) - 1 && !memcmp(s, head, sizeof(head) - 1);
		else if (n && (rc = node_line(r, v, s, n, &gave)))
			return rc;
	} while (!gave);
	*out = &r->sample;
	return TACH_OK;
}

static int vt_open(struct tach_reader *r)
{
	r->meta.sample_time = 1;
	r->meta.interval_us = 0;
	return TACH_OK;
}

static void vt_free(struct tach_reader *r)
{
	struct vread *v = r->state;
	tachi_tstack_free(&v->st);
	free(v->path);
	free(v->buf);
}

const struct tachi_reader_ops tachi_vtune_reader_ops = {
	.state_size = sizeof(struct vread),
	.open = vt_open,
	.next = vt_next,
	.free = vt_free,
};
