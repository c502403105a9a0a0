/* Papyrus profile reader: the logs that Skyrim's and Fallout 4's script engine writes
 * (StartPapyrusScriptProfile, StartStackProfiling, StartFormProfile; a file per script,
 * stack or form, Logs/Script/Profiling/), read as speedscope's importer (papyrus.ts) reads
 * them, so that the stacks and their times are speedscope's.
 *
 * After a line "Stack_3185 log opened (PC)", an event a line, "TIME:EVENT:STACK:N:FORM:NAME":
 * the time in ms, PUSH or POP of the function NAME on the script stack STACK (QUEUE_PUSH,
 * QUEUE_POP, START and STOP besides). Empty lines, a line "Log closed" and lines that hold
 * "log opened" are dropped; a line of fewer than three ':' fields is no event. Times are
 * JavaScript's parseInt of the field, from the first line's. As speedscope does: a PUSH
 * enters a frame "STACK N" first where the innermost such frame open is not that one
 * (leaving a lone one open at the bottom first, at the last event's time), then its
 * function; a later POP of the same function and stack at the same time, among the lines
 * right after it that have that time, leaves it at once (and is then gone). A POP leaves the
 * innermost frame when it is its function; one that is not, before any event past the
 * first line's time, is taken as run from the start (entered at 0, left now); else it is
 * ignored. Leaving a frame leaves a "QUEUE " frame under it too, and a "STACK " frame under
 * it unless that is the bottom one. QUEUE_PUSH opens no frame: speedscope's check for it
 * compares after resetting it. At the end the frames still open are left at the last
 * line's time. Frames are names (file "~").
 *
 * Each stretch of time in which the open frames stay the same, with one open at least, is
 * a sample at its start (the log's ms, as µs) standing for its length as time
 * (meta.sample_time 1), count 1, thread 0. meta.duration_ns is speedscope's total: up to
 * the last event, the time in which no frame is open too.
 *
 * Refused, with the line, where speedscope refuses the log (fails on it) or would never end
 * reading it: a first or last line that is no event; a time that goes back; a PUSH with
 * no line after it, or whose lines of the same time run to the end without its POP; a
 * QUEUE_PUSH without a name. And where speedscope's numbers are no profile: a time that is
 * NaN when it enters or leaves a frame, a PUSH (or a POP taken as run from the start)
 * without a name; a negative time, one past 9*10^12 ms (past 63 bits as ns), a stack
 * number past 2^53; a stack deeper than max-depth. Memory is a record per line and per
 * frame entered. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/js_text.h"
#include "formats/papyrus/papyrus.h"

#define NONE UINT32_MAX
#define NAN_AT INT64_MIN
#define MAX_MS 9000000000000LL /* ms: as ns, within 63 bits */

enum { EV_NULL, EV_PUSH, EV_POP, EV_QPUSH, EV_OTHER };

struct pyrec {
	uint64_t line;
	int64_t at;       /* ms from the first line's time, NAN_AT: NaN */
	int64_t stack;    /* NAN_AT: NaN */
	uint32_t name;    /* NONE: no sixth field */
	uint32_t run;     /* the lines right around it of the same time */
	uint8_t ev;
	bool gone;        /* a POP taken with its PUSH */
};

struct pyopen {
	uint32_t node, name;
	bool stack, queue;
	uint32_t inner_stack; /* the innermost "STACK " entry at or under it, NONE: none */
};

struct pynode {
	uint32_t parent, frame;
};

struct pysample {
	uint32_t node;
	int64_t at, dur;
};

struct pyread {
	struct pyrec *rec;
	size_t nrec, rec_cap;
	uint32_t *pops;         /* the POPs, by (run, name, stack, line) */
	uint32_t *cursor;       /* at a group's first entry: the next entry to try */
	size_t npops;
	struct pyopen *open;    /* the open frames, outermost first */
	size_t nopen, open_cap;
	struct pynode *node;
	size_t nnode, node_cap;
	struct pysample *smp;
	size_t nsmp, smp_cap, next;
	uint32_t *frames;
	size_t frames_cap;
	int64_t start, last, total, last_event;
	uint64_t line;          /* of the event being read */
	uint32_t empty, tilde;  /* "", "~" */
	bool warned;
	char *buf;
	size_t buf_cap;
};

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

static int bad(struct tach_reader *r, uint64_t line, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, line, "a Papyrus profile %s", what);
}

static bool starts(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);
	return n >= l && !memcmp(s, p, l);
}

/* A time or stack field: its parseInt, NAN_AT for NaN; false past what it may be. */
static bool number(const char *s, size_t n, int64_t lim, int64_t *v)
{
	int k = tachi_js_parse_int(s, n, v);
	if (k == TACHI_JS_NAN)
		*v = NAN_AT;
	return k != TACHI_JS_BIG && (k == TACHI_JS_NAN || (*v <= lim && *v >= -lim));
}

/* A line kept: its fields as speedscope splits them at ':'. */
static int parse_line(struct tach_reader *r, struct pyread *p, const char *s, size_t n,
		      struct pyrec *o)
{
	const char *f[7];
	size_t fl[7], nf = 0;
	for (size_t i = 0, b = 0; nf < 7; i++)
		if (i == n || s[i] == ':') {
			f[nf] = s + b, fl[nf++] = i - b, b = i + 1;
			if (i == n)
				break;
		}
	memset(o, 0, sizeof(*o));
	o->line = r->in.line;
	o->name = NONE;
	if (nf < 3)
		return TACH_OK;
	o->ev = fl[1] == 4 && !memcmp(f[1], "PUSH", 4) ? EV_PUSH
		: fl[1] == 3 && !memcmp(f[1], "POP", 3) ? EV_POP
		: fl[1] == 10 && !memcmp(f[1], "QUEUE_PUSH", 10) ? EV_QPUSH : EV_OTHER;
	if (!number(f[0], fl[0], MAX_MS, &o->at))
		return bad(r, o->line, "time past 9*10^12 ms");
	if (!number(f[2], fl[2], (int64_t)1 << 53, &o->stack))
		return bad(r, o->line, "stack number past 2^53");
	if (nf >= 6 && tach_dict_intern_string(&r->dict, f[5], fl[5], &o->name))
		return nomem(r);
	return TACH_OK;
}

/* Every line kept, parsed; times made relative to the first line's. */
static int read_lines(struct tach_reader *r, struct pyread *p)
{
	const char *s;
	size_t n;
	int rc;
	while (!(rc = tachi_in_line(r, &s, &n))) {
		if (!n || (n == 10 && !memcmp(s, "Log closed", 10)) || memmem(s, n, "log opened", 10))
			continue;
		if (!TACHI_RESERVE(p->rec, p->rec_cap, p->nrec + 1))
			return nomem(r);
		if ((rc = parse_line(r, p, s, n, &p->rec[p->nrec])))
			return rc;
		p->nrec++;
	}
	if (rc != TACH_EOF)
		return rc;
	if (!p->nrec)
		return r->in.line ? bad(r, r->in.line, "without a line of events") : TACH_EOF;
	const struct pyrec *a = &p->rec[0], *z = &p->rec[p->nrec - 1];
	if (a->ev == EV_NULL || z->ev == EV_NULL)
		return bad(r, a->ev == EV_NULL ? a->line : z->line,
			   "first or last line that is no event (fewer than three ':' fields)");
	if (a->at == NAN_AT || a->at < 0)
		return bad(r, a->line, "first line whose time is no number, or negative");
	p->start = a->at;
	for (size_t i = 0; i < p->nrec; i++)
		if (p->rec[i].ev != EV_NULL && p->rec[i].at != NAN_AT)
			p->rec[i].at -= p->start;
	return TACH_OK;
}

/* ---- the POPs a PUSH may take: grouped by run, name and stack ---- */

static int pop_cmp(const void *a, const void *b, void *ctx)
{
	const struct pyrec *rec = ctx, *x = &rec[*(const uint32_t *)a], *y = &rec[*(const uint32_t *)b];
	if (x->run != y->run)
		return x->run < y->run ? -1 : 1;
	if (x->name != y->name)
		return x->name < y->name ? -1 : 1;
	if (x->stack != y->stack)
		return x->stack < y->stack ? -1 : 1;
	return x->line < y->line ? -1 : x->line > y->line;
}

static int group_pops(struct tach_reader *r, struct pyread *p)
{
	uint32_t run = 0;
	for (size_t i = 0; i < p->nrec; i++) {
		struct pyrec *x = &p->rec[i];
		bool joins = i && x->ev != EV_NULL && x->at != NAN_AT &&
			     p->rec[i - 1].ev != EV_NULL && p->rec[i - 1].at == x->at;
		run += !joins;
		x->run = run;
		p->npops += x->ev == EV_POP && x->at != NAN_AT && x->stack != NAN_AT;
	}
	if (p->nrec > UINT32_MAX)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "a Papyrus profile of too many lines");
	p->pops = malloc((p->npops + 1) * sizeof(*p->pops));
	p->cursor = malloc((p->npops + 1) * sizeof(*p->cursor));
	if (!p->pops || !p->cursor)
		return nomem(r);
	size_t k = 0;
	for (size_t i = 0; i < p->nrec; i++) {
		const struct pyrec *x = &p->rec[i];
		if (x->ev == EV_POP && x->at != NAN_AT && x->stack != NAN_AT)
			p->pops[k++] = (uint32_t)i;
	}
	qsort_r(p->pops, p->npops, sizeof(*p->pops), pop_cmp, p->rec);
	for (size_t i = 0; i < p->npops; i++)
		p->cursor[i] = (uint32_t)i;
	return TACH_OK;
}

static bool same_key(const struct pyrec *a, const struct pyrec *b)
{
	return a->run == b->run && a->name == b->name && a->stack == b->stack;
}

/* The first POP after the PUSH at i among the lines right after it of its time, of its
 * function and stack, not taken yet: its index, or SIZE_MAX. */
static size_t pop_for(struct pyread *p, size_t i)
{
	const struct pyrec *x = &p->rec[i];
	if (x->stack == NAN_AT)
		return SIZE_MAX;
	size_t lo = 0, hi = p->npops;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct pyrec *m = &p->rec[p->pops[mid]];
		bool before = m->run != x->run ? m->run < x->run
			: m->name != x->name ? m->name < x->name : m->stack < x->stack;
		if (before)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == p->npops || !same_key(&p->rec[p->pops[lo]], x))
		return SIZE_MAX;
	size_t at = p->cursor[lo];
	while (at < p->npops && same_key(&p->rec[p->pops[at]], x) && p->pops[at] <= i)
		at++;
	p->cursor[lo] = (uint32_t)at;
	if (at == p->npops || !same_key(&p->rec[p->pops[at]], x))
		return SIZE_MAX;
	p->cursor[lo] = (uint32_t)at + 1;
	return p->pops[at];
}

/* ---- speedscope's frame stack and its call tree builder ---- */

static int advance(struct tach_reader *r, struct pyread *p, int64_t t)
{
	if (t == NAN_AT)
		return bad(r, p->line, "event whose time is no number enters or leaves a frame");
	if (t < p->last)
		return bad(r, p->line, "time that goes back (speedscope wants them in order)");
	if (t > p->last && p->nopen) {
		if (!TACHI_RESERVE(p->smp, p->smp_cap, p->nsmp + 1))
			return nomem(r);
		p->smp[p->nsmp++] = (struct pysample){ p->open[p->nopen - 1].node, p->last,
						       t - p->last };
	}
	p->last = t;
	p->total = p->total > t ? p->total : t;
	return TACH_OK;
}

/* The top of the stack as speedscope's lastOf gives it: none when empty, or "". */
static uint32_t top(const struct pyread *p)
{
	uint32_t n = p->nopen ? p->open[p->nopen - 1].name : NONE;
	return n == p->empty ? NONE : n;
}

static int push(struct tach_reader *r, struct pyread *p, int64_t t, uint32_t name)
{
	int rc = advance(r, p, t);
	if (rc)
		return rc;
	if (p->nopen >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, p->line,
			     "stack deeper than the limit of %u frames (see --max-depth)",
			     r->lim.max_depth);
	struct tach_frame f = { p->tilde, name, TACH_NO_LINE, TACH_NO_LINE, -1, -1,
				TACH_NO_OPCODE };
	uint32_t fid;
	if (!TACHI_RESERVE(p->open, p->open_cap, p->nopen + 1) ||
	    !TACHI_RESERVE(p->node, p->node_cap, p->nnode + 1) || p->nnode >= UINT32_MAX ||
	    tach_dict_intern_frame(&r->dict, &f, &fid))
		return nomem(r);
	size_t len;
	const char *text = tach_dict_string(&r->dict, name, &len);
	struct pyopen *o = &p->open[p->nopen];
	o->name = name;
	o->stack = starts(text, len, "STACK ");
	o->queue = starts(text, len, "QUEUE ");
	o->inner_stack = o->stack ? (uint32_t)p->nopen
		: p->nopen ? p->open[p->nopen - 1].inner_stack : NONE;
	p->node[p->nnode] = (struct pynode){ p->nopen ? p->open[p->nopen - 1].node : NONE, fid };
	o->node = (uint32_t)p->nnode++;
	p->nopen++;
	p->last_event = t;
	return TACH_OK;
}

/* speedscope's leaveFrame: the innermost frame, then each QUEUE frame, or STACK frame but
 * the bottom one, that is innermost after it. (Its recursion, one call a frame, leaves
 * neither kind innermost when it returns: this loop leaves the same frames.) */
static int leave(struct tach_reader *r, struct pyread *p, int64_t t)
{
	do {
		int rc = advance(r, p, t);
		if (rc)
			return rc;
		p->nopen--;
	} while (p->nopen && (p->open[p->nopen - 1].queue ||
			      (p->nopen > 1 && p->open[p->nopen - 1].stack)));
	p->last_event = t;
	return TACH_OK;
}

/* speedscope's enterFrame: the stack's STACK frame where it is not the innermost one, then
 * the function. */
static int enter(struct tach_reader *r, struct pyread *p, int64_t stack, int64_t t,
		 uint32_t name)
{
	if (name == NONE)
		return bad(r, p->line, "function entered without a name (no sixth field)");
	int n = stack == NAN_AT ? snprintf(p->buf, p->buf_cap, "STACK NaN")
		: snprintf(p->buf, p->buf_cap, "STACK %lld", (long long)stack);
	uint32_t sid;
	if (n < 0 || (size_t)n >= p->buf_cap ||
	    tach_dict_intern_string(&r->dict, p->buf, (size_t)n, &sid))
		return nomem(r);
	uint32_t inner = p->nopen ? p->open[p->nopen - 1].inner_stack : NONE;
	int rc;
	if (inner == NONE || p->open[inner].name != sid) {
		if (p->nopen == 1 && (rc = leave(r, p, p->last_event)))
			return rc;
		if ((rc = push(r, p, t, sid)))
			return rc;
	}
	return push(r, p, t, name);
}

/* speedscope's tryToLeaveFrame. */
static int try_leave(struct tach_reader *r, struct pyread *p, const struct pyrec *x)
{
	if (top(p) == x->name && x->name != NONE)
		return leave(r, p, x->at);
	if (p->last_event != 0) {
		if (!p->warned)
			tachi_warn(&r->warn, TACH_POS_LINE, x->line,
				   "a POP of a function that is not the innermost one open is "
				   "ignored, as speedscope ignores it");
		p->warned = true;
		return TACH_OK;
	}
	int rc = enter(r, p, x->stack, 0, x->name);
	return rc ? rc : leave(r, p, x->at);
}

static int run_push(struct tach_reader *r, struct pyread *p, size_t i)
{
	const struct pyrec *x = &p->rec[i];
	int rc = enter(r, p, x->stack, x->at, x->name);
	if (rc)
		return rc;
	size_t next = i + 1;
	while (next < p->nrec && p->rec[next].gone)
		next++;
	if (next == p->nrec)
		return bad(r, x->line, "PUSH with no line after it");
	size_t k = pop_for(p, i);
	if (k != SIZE_MAX) {
		p->rec[k].gone = true;
		p->line = p->rec[k].line;
		return try_leave(r, p, &p->rec[k]);
	}
	/* speedscope's look for the POP goes on past the end when every line after it has
	 * its time: it never ends */
	if (p->rec[next].run == x->run && p->rec[p->nrec - 1].run == x->run)
		return bad(r, x->line, "PUSH whose time every line after it has, with no POP of it "
				       "among them (speedscope never ends reading it)");
	return TACH_OK;
}

static int simulate(struct tach_reader *r, struct pyread *p)
{
	int rc = TACH_OK;
	for (size_t i = 0; i < p->nrec && !rc; i++) {
		const struct pyrec *x = &p->rec[i];
		p->line = x->line;
		if (x->gone || x->ev == EV_NULL)
			continue;
		if (x->ev == EV_PUSH)
			rc = run_push(r, p, i);
		else if (x->ev == EV_POP)
			rc = try_leave(r, p, x);
		else if (x->ev == EV_QPUSH && x->name == NONE)
			rc = bad(r, x->line, "QUEUE_PUSH without a name (no sixth field)");
	}
	p->line = p->rec[p->nrec - 1].line;
	while (!rc && p->nopen)
		rc = leave(r, p, p->rec[p->nrec - 1].at);
	return rc;
}

static int py_open(struct tach_reader *r)
{
	struct pyread *p = r->state;
	r->meta.sample_time = 1;
	r->meta.interval_us = 0;
	p->buf_cap = 32;
	if (!(p->buf = malloc(p->buf_cap)) || tach_dict_intern_string(&r->dict, "", 0, &p->empty) ||
	    tach_dict_intern_string(&r->dict, "~", 1, &p->tilde))
		return nomem(r);
	int rc = read_lines(r, p);
	if (rc == TACH_EOF)
		return TACH_OK;
	if (rc || (rc = group_pops(r, p)) || (rc = simulate(r, p)))
		return rc;
	r->meta.duration_ns = p->total * 1000000;
	return TACH_OK;
}

static int py_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct pyread *p = r->state;
	if (p->next == p->nsmp)
		return TACH_EOF;
	const struct pysample *s = &p->smp[p->next++];
	uint32_t depth = 0;
	for (uint32_t n = s->node; n != NONE; n = p->node[n].parent) {
		if (!TACHI_RESERVE(p->frames, p->frames_cap, (size_t)depth + 1))
			return nomem(r);
		p->frames[depth++] = p->node[n].frame;
	}
	struct tach_sample *o = &r->sample;
	o->thread_id = 0;
	o->interp_id = 0;
	o->timestamp_us = (uint64_t)(p->start + s->at) * 1000;
	o->time_ns = (uint64_t)s->dur * 1000000;
	o->status = TACH_STATUS_UNKNOWN;
	o->weight = 1;
	o->depth = depth;
	o->same_outer = 0;
	o->frames = p->frames;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples++;
	*out = o;
	return TACH_OK;
}

static void py_free(struct tach_reader *r)
{
	struct pyread *p = r->state;
	free(p->rec);
	free(p->pops);
	free(p->cursor);
	free(p->open);
	free(p->node);
	free(p->smp);
	free(p->frames);
	free(p->buf);
}

const struct tachi_reader_ops tachi_papyrus_reader_ops = {
	.state_size = sizeof(struct pyread),
	.open = py_open,
	.next = py_next,
	.free = py_free,
};
