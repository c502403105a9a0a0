/* Spans of a Chrome trace-event file as stacks, read as speedscope 1.25 reads a trace of
 * them (its "evented" profiles), so that both show the same time per stack.
 *
 * Read: "B" (begin) and "E" (end) events, and "X" (complete) events, each a B at "ts" and
 * an E at ts + "dur" (else "tdur", else 0); "ts" in µs (fractions to the ns); "pid" and
 * "tid" integers (absent: 0); "thread_name" metadata ("M", args.name, the last one given).
 * Every other event is skipped. A span's frame is its name ("(unnamed)" when it has none)
 * and, when it has "args", a space and the args as JSON.stringify writes them: compact,
 * keys in their order, numbers as written (speedscope's key; JavaScript would also move
 * integer-like keys first and write numbers its own way, which no producer here does).
 *
 * Each thread (pid, tid) is read on its own: its begins in time order (file order, then
 * the X events' by start and longer first), its ends likewise, taken in turn, a begin
 * first when both come at one time with the same frame, an end first when the frames
 * differ. An end goes to the innermost open span: among ends at one time the one of that
 * span's frame is taken first, else one of its name; an end with no span open, or of
 * another name, is dropped (a warning says so once); a span still open at the thread's
 * last event is closed there. What a sample becomes: each stretch of time in which a
 * thread's open spans stay the same, with one span open at least, is a sample at its start
 * (µs from the trace's earliest event; the clock is no wall clock, so the start is
 * unknown) standing for its length as time, count 1, on the thread tid with the pid as
 * interpreter; a thread with a name gets it as its outermost frame (formats/comm.h).
 *
 * Memory is the file plus a record per event. Refused with the byte offset: a B, E or X
 * event whose "ts" is absent or no number, a "pid" or "tid" that is no integer, a "dur"
 * that is no number, times out of range, a stack deeper than the depth limit. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "base/json.h"
#include "core/handles.h"
#include "formats/json_read.h"
#include "formats/trace_events.h"
#include "formats/trace_spans.h"

#define NONE UINT64_MAX
#define NO_ID UINT32_MAX

enum { W_EMPTY = 1, W_OTHER = 2, W_OPEN = 4, W_SWAP = 8 };

/* A begin or an end (an X event until it is split: ts its start, dur its length). */
struct tachi_span_ev {
	int64_t pid, tid;
	int64_t ts, dur;          /* ns */
	uint64_t off;             /* the event */
	uint64_t name_off;        /* its "name" value, NONE when absent */
	uint64_t name_hash;       /* of that value's text (0: absent), to compare names fast */
	uint64_t ord;             /* the order among equal times: file order, then X's */
	uint32_t key;             /* the frame's name (dict string) */
};

struct tachi_span_thread {
	int64_t pid, tid;
	uint64_t name_off;
	uint32_t seq;
};

struct tachi_span_node {
	uint32_t parent, frame, depth, key;
	uint64_t name_off, name_hash;
};

struct tachi_span_sample {
	int64_t t, dur;           /* ns */
	uint64_t tid;
	int64_t pid;
	uint32_t node, seq;
};

struct span_ctx {
	struct tachi_spans *sp;
	bool any_bex;
};

/* ---- frame names ---- */

static int put(struct tach_reader *r, struct tachi_spans *sp, const void *p, size_t n)
{
	if (sp->buf_n + n > TACHI_MAX_STRING)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "a span's name and args longer "
			     "than %u bytes", TACHI_MAX_STRING);
	if (!TACHI_RESERVE(sp->buf, sp->buf_cap, sp->buf_n + n))
		return tachi_jr_nomem(r);
	memcpy(sp->buf + sp->buf_n, p, n);
	sp->buf_n += n;
	return TACH_OK;
}

/* A string as JSON.stringify writes it. */
static int put_string(struct tach_reader *r, struct tachi_spans *sp, const struct tachi_jtok *t)
{
	char *text = malloc(t->len ? t->len : 1);
	if (!text)
		return tachi_jr_nomem(r);
	size_t n = tachi_json_unescape(r->in.data, t, text);
	int rc = put(r, sp, "\"", 1);
	for (size_t i = 0; i < n && !rc; i++) {
		unsigned char c = (unsigned char)text[i];
		static const char short_esc[] = "btn\0fr";
		char e[7];
		if (c == '"' || c == '\\') {
			e[0] = '\\';
			e[1] = (char)c;
			rc = put(r, sp, e, 2);
		} else if (c >= 0x08 && c <= 0x0d && c != 0x0b) {
			e[0] = '\\';
			e[1] = short_esc[c - 8];
			rc = put(r, sp, e, 2);
		} else if (c < 0x20) {
			static const char hex[] = "0123456789abcdef";
			memcpy(e, "\\u00", 4);
			e[4] = hex[c >> 4];
			e[5] = hex[c & 15];
			rc = put(r, sp, e, 6);
		} else {
			rc = put(r, sp, &text[i], 1);
		}
	}
	free(text);
	return rc ? rc : put(r, sp, "\"", 1);
}

/* The value j is at, compact, as JSON.stringify writes it (numbers as written). */
static int put_value(struct tach_reader *r, struct tachi_spans *sp, struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more, first = true;
	int rc = tachi_json_value(j, &t);
	if (rc)
		return rc;
	if (t.type == TJ_STRING)
		return put_string(r, sp, &t);
	if (t.type != TJ_OBJECT && t.type != TJ_ARRAY) {
		static const char *const lit[] = { [TJ_TRUE] = "true", [TJ_FALSE] = "false",
						   [TJ_NULL] = "null" };
		return t.type == TJ_NUMBER ? put(r, sp, r->in.data + t.start, t.len)
					   : put(r, sp, lit[t.type], strlen(lit[t.type]));
	}
	bool obj = t.type == TJ_OBJECT;
	if ((rc = put(r, sp, obj ? "{" : "[", 1)))
		return rc;
	for (;;) {
		if ((rc = obj ? tachi_json_key(j, &k, &more) : tachi_json_elem(j, &more)))
			return rc;
		if (!more)
			break;
		if (!first && (rc = put(r, sp, ",", 1)))
			return rc;
		first = false;
		if (obj && ((rc = put_string(r, sp, &k)) || (rc = put(r, sp, ":", 1))))
			return rc;
		if ((rc = put_value(r, sp, j)))
			return rc;
	}
	return put(r, sp, obj ? "}" : "]", 1);
}

/* Whether a value is one that JavaScript takes as false (null, false, 0, ""). */
static bool falsy(const uint8_t *p, const struct tachi_jtok *t)
{
	if (t->type == TJ_NUMBER) {
		for (size_t i = 0; i < t->len && p[t->start + i] != 'e' && p[t->start + i] != 'E'; i++)
			if (p[t->start + i] >= '1' && p[t->start + i] <= '9')
				return false;
		return true;
	}
	return t->type == TJ_NULL || t->type == TJ_FALSE || (t->type == TJ_STRING && !t->len);
}

/* A string's text as it is (a span's name, as JavaScript's template string gives it). */
static int put_text(struct tach_reader *r, struct tachi_spans *sp, const struct tachi_jtok *t)
{
	if (!TACHI_RESERVE(sp->buf, sp->buf_cap, sp->buf_n + t->len + 1))
		return tachi_jr_nomem(r);
	sp->buf_n += tachi_json_unescape(r->in.data, t, sp->buf + sp->buf_n);
	return TACH_OK;
}

/* The frame name of an event: its name, and its args (offsets, NONE when absent). */
static int frame_name(struct tach_reader *r, struct tachi_spans *sp, uint64_t name,
		      uint64_t args, uint32_t *id)
{
	struct tachi_json j;
	struct tachi_jtok t;
	int rc;
	sp->buf_n = 0;
	if (name != NONE && (rc = tachi_jr_value_at(r, &j, name, &t)))
		return rc;
	if (name == NONE || falsy(r->in.data, &t))
		rc = put(r, sp, "(unnamed)", 9);
	else if (t.type == TJ_STRING)
		rc = t.len > TACHI_MAX_STRING ? put(r, sp, r->in.data, TACHI_MAX_STRING + 1)
					      : put_text(r, sp, &t);
	else if (t.type == TJ_NUMBER)
		rc = put(r, sp, r->in.data + t.start, t.len);
	else if (t.type == TJ_TRUE)
		rc = put(r, sp, "true", 4);
	else
		rc = put(r, sp, "[object Object]", 15);
	if (rc)
		return rc;
	if (args != NONE && !tachi_jr_value_at(r, &j, args, &t) && !falsy(r->in.data, &t)) {
		tachi_jr_cursor(r, &j, args);
		if ((rc = put(r, sp, " ", 1)) || (rc = put_value(r, sp, &j)))
			return rc;
	}
	if (tach_dict_intern_string(&r->dict, sp->buf, sp->buf_n, id))
		return tachi_jr_nomem(r);
	return TACH_OK;
}

/* ---- the events ---- */

/* An integer pid or tid at off, 0 when absent. */
static int id_at(struct tach_reader *r, uint64_t off, const char *what, int64_t *x)
{
	int rc = tachi_jr_opt_int(r, off, what, 0, INT64_MAX, false, x);
	if (!rc && *x < 0)
		*x = 0;
	return rc;
}

/* A time in µs at off into ns; absent: *there false (or refused, with need). */
static int time_at(struct tach_reader *r, uint64_t off, uint64_t at, const char *what,
		   bool need, int64_t *ns, bool *there)
{
	struct tachi_json j;
	struct tachi_jtok t;
	int rc;
	*there = false;
	if (off != NONE && (rc = tachi_jr_value_at(r, &j, off, &t)))
		return rc;
	if (off == NONE || t.type == TJ_NULL) {
		if (need)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at,
				     "a span event (\"ph\" B, E or X) without \"%s\"", what);
		return TACH_OK;
	}
	*there = true;
	return tachi_jr_number(r, &t, 3, what, ns);
}

static int thread_name(struct tach_reader *r, struct tachi_spans *sp, const uint64_t *o,
		       uint32_t seq)
{
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t name = NONE;
	int64_t pid, tid;
	if (o[7] == NONE || tachi_jr_value_at(r, &j, o[7], &t) || t.type != TJ_OBJECT ||
	    tachi_json_keys(&j, (const char *const[]){ "name" }, &name, 1) || name == NONE ||
	    tachi_jr_value_at(r, &j, name, &t) || t.type != TJ_STRING || !t.len)
		return TACH_OK;
	int rc;
	if ((rc = id_at(r, o[2], "pid", &pid)) || (rc = id_at(r, o[3], "tid", &tid)))
		return rc;
	if (!TACHI_RESERVE(sp->th, sp->th_cap, sp->nth + 1))
		return tachi_jr_nomem(r);
	sp->th[sp->nth++] = (struct tachi_span_thread){ pid, tid, t.off, seq };
	return TACH_OK;
}

/* A hash of the "name" value at off (NONE: absent, 0), never 0 for one that is there. */
static int name_hash(struct tach_reader *r, uint64_t off, uint64_t *h)
{
	struct tachi_json j;
	struct tachi_jtok t;
	int rc;
	*h = 0;
	if (off == NONE)
		return TACH_OK;
	if ((rc = tachi_jr_value_at(r, &j, off, &t)))
		return rc;
	*h = (tachi_hash(r->in.data + t.start, t.len) ^ (uint64_t)t.type) | 1;
	return TACH_OK;
}

static int add(struct tach_reader *r, struct tachi_span_ev **a, size_t *n, size_t *cap,
	       const struct tachi_span_ev *e)
{
	if (!TACHI_RESERVE(*a, *cap, *n + 1))
		return tachi_jr_nomem(r);
	(*a)[(*n)++] = *e;
	return TACH_OK;
}

/* A B, E or X event (ph its letter). */
static int span(struct tach_reader *r, struct tachi_spans *sp, const uint64_t *o, uint64_t off,
		uint32_t seq, char ph)
{
	struct tachi_span_ev e = { .off = off, .name_off = o[1], .ord = seq };
	bool there;
	int rc;
	if ((rc = id_at(r, o[2], "pid", &e.pid)) || (rc = id_at(r, o[3], "tid", &e.tid)) ||
	    (rc = time_at(r, o[4], off, "ts", true, &e.ts, &there)))
		return rc;
	if (ph == 'X' && (rc = time_at(r, o[5], off, "dur", false, &e.dur, &there)))
		return rc;
	if (ph == 'X' && !there && (rc = time_at(r, o[6], off, "tdur", false, &e.dur, &there)))
		return rc;
	/* ends (ts + dur) and the time between any two stay in range */
	if (e.ts < INT64_MIN / 4 || e.ts > INT64_MAX / 4 || e.dur < INT64_MIN / 4 ||
	    e.dur > INT64_MAX / 4)
		return tachi_jr_bad(r, off, "a span's time out of range");
	if ((rc = frame_name(r, sp, o[1], o[7], &e.key)) || (rc = name_hash(r, o[1], &e.name_hash)))
		return rc;
	if (ph == 'B')
		return add(r, &sp->b, &sp->nb, &sp->b_cap, &e);
	if (ph == 'E')
		return add(r, &sp->e, &sp->ne, &sp->e_cap, &e);
	return add(r, &sp->x, &sp->nx, &sp->x_cap, &e);
}

static int span_event(struct tach_reader *r, struct tachi_json *j, uint64_t off, uint32_t seq,
		      void *ctx)
{
	static const char *const want[] = { "ph", "name", "pid", "tid", "ts", "dur", "tdur", "args" };
	struct span_ctx *c = ctx;
	uint64_t o[8];
	struct tachi_json v;
	struct tachi_jtok t;
	int rc = tachi_json_keys(j, want, o, 8);
	if (rc || o[0] == NONE)
		return rc;
	if ((rc = tachi_jr_value_at(r, &v, o[0], &t)) || t.type != TJ_STRING || t.len != 1)
		return rc;
	char ph = (char)r->in.data[t.start];
	if (ph == 'M') {
		if (o[1] == NONE || tachi_jr_value_at(r, &v, o[1], &t) ||
		    !tachi_json_str_eq(r->in.data, &t, "thread_name"))
			return TACH_OK;
		return thread_name(r, c->sp, o, seq);
	}
	if (ph != 'B' && ph != 'E' && ph != 'X')
		return TACH_OK;
	c->any_bex = true;
	return span(r, c->sp, o, off, seq, ph);
}

/* ---- the threads ---- */

static int cmp_thread(int64_t pa, int64_t ta, int64_t pb, int64_t tb)
{
	if (pa != pb)
		return pa < pb ? -1 : 1;
	return ta < tb ? -1 : ta > tb;
}

/* By thread, time, then order. */
static int cmp_ev(const void *a, const void *b)
{
	const struct tachi_span_ev *x = a, *y = b;
	int c = cmp_thread(x->pid, x->tid, y->pid, y->tid);
	if (c)
		return c;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

/* X events: by start, the longer first, then in file order (speedscope's order). */
static int cmp_x(const void *a, const void *b)
{
	const struct tachi_span_ev *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	if (x->dur != y->dur)
		return x->dur > y->dur ? -1 : 1;
	return x->ord < y->ord ? -1 : x->ord > y->ord;
}

static int cmp_name(const void *a, const void *b)
{
	const struct tachi_span_thread *x = a, *y = b;
	int c = cmp_thread(x->pid, x->tid, y->pid, y->tid);
	return c ? c : x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Each X event a begin and an end, after the B and E events of their time. */
static int split_x(struct tach_reader *r, struct tachi_spans *sp)
{
	int rc;
	if (sp->nx > 1)
		qsort(sp->x, sp->nx, sizeof(*sp->x), cmp_x);
	for (size_t i = 0; i < sp->nx; i++) {
		struct tachi_span_ev e = sp->x[i];
		e.ord = ((uint64_t)1 << 32) + i;
		e.dur = 0;
		if ((rc = add(r, &sp->b, &sp->nb, &sp->b_cap, &e)))
			return rc;
		e.ts += sp->x[i].dur;
		if ((rc = add(r, &sp->e, &sp->ne, &sp->e_cap, &e)))
			return rc;
	}
	free(sp->x);
	sp->x = NULL;
	sp->nx = sp->x_cap = 0;
	if (sp->nb > 1)
		qsort(sp->b, sp->nb, sizeof(*sp->b), cmp_ev);
	if (sp->ne > 1)
		qsort(sp->e, sp->ne, sizeof(*sp->e), cmp_ev);
	return TACH_OK;
}

/* The last name given to thread pid/tid, NONE when none (th sorted). */
static uint64_t name_of(const struct tachi_spans *sp, int64_t pid, int64_t tid)
{
	size_t lo = 0, hi = sp->nth;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (cmp_thread(sp->th[mid].pid, sp->th[mid].tid, pid, tid) <= 0)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && !cmp_thread(sp->th[lo - 1].pid, sp->th[lo - 1].tid, pid, tid)
		       ? sp->th[lo - 1].name_off
		       : NONE;
}

static int add_node(struct tach_reader *r, struct tachi_spans *sp, uint32_t parent,
		    const struct tach_frame *f, const struct tachi_span_ev *ev, uint64_t off)
{
	uint32_t depth = parent == NO_ID ? 1 : sp->nodes[parent].depth + 1;
	if (depth > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off,
			     "stack deeper than the depth limit of %u frames", r->lim.max_depth);
	if (sp->nnodes >= NO_ID)
		return tachi_jr_bad(r, off, "more than 2^32 - 1 spans");
	if (!TACHI_RESERVE(sp->nodes, sp->nodes_cap, sp->nnodes + 1))
		return tachi_jr_nomem(r);
	struct tachi_span_node *n = &sp->nodes[sp->nnodes];
	*n = (struct tachi_span_node){ parent, 0, depth, ev ? ev->key : NO_ID,
				       ev ? ev->name_off : NONE, ev ? ev->name_hash : 0 };
	if (tach_dict_intern_frame(&r->dict, f, &n->frame))
		return tachi_jr_nomem(r);
	sp->nnodes++;
	return TACH_OK;
}

/* The thread's name root (formats/comm.h), NO_ID when it has no name. */
static int thread_root(struct tach_reader *r, struct tachi_spans *sp, int64_t pid, int64_t tid,
		       uint64_t off, uint32_t *root)
{
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t name = name_of(sp, pid, tid);
	int32_t line = pid <= INT32_MAX ? (int32_t)pid : -1;
	struct tach_frame f = { 0, 0, line, line, -1, -1, TACH_NO_OPCODE };
	int rc;
	*root = NO_ID;
	if (name == NONE)
		return TACH_OK;
	sp->buf_n = 0;
	if ((rc = tachi_jr_value_at(r, &j, name, &t)) || (rc = put_text(r, sp, &t)))
		return rc;
	if (tach_dict_intern_string(&r->dict, sp->buf, sp->buf_n, &f.func) ||
	    tach_dict_intern_string(&r->dict, "[comm]", 6, &f.file))
		return tachi_jr_nomem(r);
	if ((rc = add_node(r, sp, NO_ID, &f, NULL, off)))
		return rc;
	*root = (uint32_t)(sp->nnodes - 1);
	return TACH_OK;
}

/* One thread's walk: its begins and ends (sorted), the open spans in sp->open. */
struct span_walk {
	struct tachi_span_ev *b, *e;
	size_t nb, ne, ib, ie, nopen;
	int64_t last;             /* the time the open spans last changed */
	uint32_t root;            /* the thread's name node, NO_ID */
	/* the last look for an end of node miss_node among the ends at miss_ts found none
	 * before miss_end: a next look for the same goes on from there (dropped ends move
	 * nothing), so many ends at one time cost their number, not its square */
	uint32_t miss_node;
	int64_t miss_ts;
	size_t miss_end;
};

/* Whether two events' "name" values are the same (both absent, or the same text). */
static bool same_name(const struct tach_reader *r, uint64_t a, uint64_t ha, uint64_t b,
		      uint64_t hb)
{
	if (ha != hb)
		return false;
	if (a == NONE || b == NONE)
		return a == b;
	struct tachi_json j;
	struct tachi_jtok x, y;
	struct tach_reader *rw = (struct tach_reader *)r;
	if (tachi_jr_value_at(rw, &j, a, &x) || tachi_jr_value_at(rw, &j, b, &y))
		return false;
	return x.type == y.type && x.len == y.len &&
	       !memcmp(r->in.data + x.start, r->in.data + y.start, x.len);
}

/* Time passes to ts: the open spans' stack is a sample of the time since the last change. */
static int advance(struct tach_reader *r, struct tachi_spans *sp, struct span_walk *w,
		   int64_t ts, uint64_t off)
{
	if (w->nopen && ts > w->last) {
		if (sp->ns >= r->lim.max_samples || sp->ns >= NO_ID)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off,
				     "more than %llu samples (see --max-samples)",
				     (unsigned long long)(r->lim.max_samples < NO_ID ? r->lim.max_samples
										  : NO_ID));
		if (!TACHI_RESERVE(sp->s, sp->s_cap, sp->ns + 1))
			return tachi_jr_nomem(r);
		const struct tachi_span_ev *any = w->nb ? &w->b[0] : &w->e[0];
		sp->s[sp->ns] = (struct tachi_span_sample){ w->last, ts - w->last, (uint64_t)any->tid,
							    any->pid, sp->open[w->nopen - 1],
							    (uint32_t)sp->ns };
		sp->ns++;
	}
	w->last = ts;
	return TACH_OK;
}

static int begin_span(struct tach_reader *r, struct tachi_spans *sp, struct span_walk *w)
{
	const struct tachi_span_ev *ev = &w->b[w->ib++];
	uint32_t parent = w->nopen ? sp->open[w->nopen - 1] : w->root, file;
	int rc;
	if ((rc = advance(r, sp, w, ev->ts, ev->off)))
		return rc;
	if (tach_dict_intern_string(&r->dict, "~", 1, &file))
		return tachi_jr_nomem(r);
	struct tach_frame f = { file, ev->key, TACH_NO_LINE, TACH_NO_LINE, -1, -1, TACH_NO_OPCODE };
	if ((rc = add_node(r, sp, parent, &f, ev, ev->off)))
		return rc;
	if (!TACHI_RESERVE(sp->open, sp->open_cap, w->nopen + 1))
		return tachi_jr_nomem(r);
	sp->open[w->nopen++] = (uint32_t)(sp->nnodes - 1);
	return TACH_OK;
}

static void warn_once(struct tach_reader *r, struct tachi_spans *sp, uint64_t kind, uint64_t off,
		      const char *what)
{
	if (sp->warned & kind)
		return;
	sp->warned |= kind;
	tachi_warn(&r->warn, off == NONE ? TACH_POS_NONE : TACH_POS_OFFSET, off == NONE ? 0 : off,
		   "%s (as speedscope reads it)", what);
}

/* How far among the ends of one time an end of the innermost open span is looked for:
 * speedscope looks at them all, which a trace of many ends at one time would make cost
 * their number squared; no producer ends a thousand spans at once. */
#define END_SCAN 1024

/* Among the ends at the first one's time (up to END_SCAN), the one of the innermost open
 * span's frame goes first, else one of its name. */
static void pick_end(const struct tach_reader *r, struct tachi_spans *sp, struct span_walk *w)
{
	uint32_t node = sp->open[w->nopen - 1];
	const struct tachi_span_node *top = &sp->nodes[node];
	struct tachi_span_ev *e = w->e, tmp;
	int64_t ts = e[w->ie].ts;
	/* the first is one of the span's frame already: another such is no other end */
	if (e[w->ie].key == top->key)
		return;
	size_t from = w->ie + 1;
	if (w->miss_end && w->miss_node == node && w->miss_ts == ts && w->miss_end > from)
		from = w->miss_end;
	size_t to = from;
	while (to < w->ne && to <= w->ie + END_SCAN && e[to].ts == ts)
		to++;
	for (int pass = 0; pass < 2; pass++)
		for (size_t u = from; u < to; u++)
			if (pass ? same_name(r, e[u].name_off, e[u].name_hash, top->name_off,
					     top->name_hash)
				 : e[u].key == top->key) {
				tmp = e[w->ie];
				e[w->ie] = e[u];
				e[u] = tmp;
				w->miss_end = 0;
				return;
			}
	w->miss_node = node;
	w->miss_ts = ts;
	w->miss_end = to > from ? to : from;
}

static int end_span(struct tach_reader *r, struct tachi_spans *sp, struct span_walk *w)
{
	if (w->nopen)
		pick_end(r, sp, w);
	const struct tachi_span_ev *ev = &w->e[w->ie++];
	if (!w->nopen) {
		warn_once(r, sp, W_EMPTY, ev->off, "an end of a span with none open is dropped");
		return TACH_OK;
	}
	const struct tachi_span_node *top = &sp->nodes[sp->open[w->nopen - 1]];
	if (!same_name(r, ev->name_off, ev->name_hash, top->name_off, top->name_hash)) {
		warn_once(r, sp, W_OTHER, ev->off, "an end of a span other than the innermost "
			  "open one is dropped");
		return TACH_OK;
	}
	if (ev->key != top->key)
		warn_once(r, sp, W_SWAP, ev->off, "an end whose args differ from its span's ends "
			  "that span");
	int rc = advance(r, sp, w, ev->ts, ev->off);
	w->nopen--;
	return rc;
}

/* One thread's spans: w's events. */
static int thread(struct tach_reader *r, struct tachi_spans *sp, struct span_walk *w)
{
	const struct tachi_span_ev *first = w->nb ? &w->b[0] : &w->e[0];
	int rc = thread_root(r, sp, first->pid, first->tid, first->off, &w->root);
	if (rc)
		return rc;
	w->last = INT64_MIN;
	while (w->ib < w->nb || w->ie < w->ne) {
		bool take_b = w->ie == w->ne;
		if (!take_b && w->ib < w->nb) {
			const struct tachi_span_ev *b = &w->b[w->ib], *e = &w->e[w->ie];
			take_b = b->ts < e->ts || (b->ts == e->ts && b->key == e->key);
		}
		if ((rc = take_b ? begin_span(r, sp, w) : end_span(r, sp, w)))
			return rc;
	}
	if (w->nopen)
		warn_once(r, sp, W_OPEN, NONE, "a span still open at its thread's last event is closed there");
	return TACH_OK;
}

/* Every thread, in (pid, tid) order. */
static int threads(struct tach_reader *r, struct tachi_spans *sp)
{
	size_t ib = 0, ie = 0;
	while (ib < sp->nb || ie < sp->ne) {
		const struct tachi_span_ev *k;
		if (ib == sp->nb)
			k = &sp->e[ie];
		else if (ie == sp->ne)
			k = &sp->b[ib];
		else
			k = cmp_thread(sp->b[ib].pid, sp->b[ib].tid, sp->e[ie].pid, sp->e[ie].tid) <= 0
				    ? &sp->b[ib]
				    : &sp->e[ie];
		int64_t pid = k->pid, tid = k->tid;
		struct span_walk w = { 0 };
		size_t jb = ib, je = ie;
		while (jb < sp->nb && !cmp_thread(sp->b[jb].pid, sp->b[jb].tid, pid, tid))
			jb++;
		while (je < sp->ne && !cmp_thread(sp->e[je].pid, sp->e[je].tid, pid, tid))
			je++;
		w.b = sp->b ? sp->b + ib : NULL;
		w.nb = jb - ib;
		w.e = sp->e ? sp->e + ie : NULL;
		w.ne = je - ie;
		int rc = thread(r, sp, &w);
		if (rc)
			return rc;
		ib = jb;
		ie = je;
	}
	return TACH_OK;
}

static int cmp_sample(const void *a, const void *b)
{
	const struct tachi_span_sample *x = a, *y = b;
	if (x->t != y->t)
		return x->t < y->t ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

int tachi_spans_read(struct tach_reader *r, struct tachi_spans *sp, const char *none)
{
	struct span_ctx c = { sp, false };
	int rc = tachi_trace_events(r, span_event, &c);
	if (rc)
		return rc;
	if (!c.any_bex)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0, "%s", none);
	if (sp->nth > 1)
		qsort(sp->th, sp->nth, sizeof(*sp->th), cmp_name);
	if ((rc = split_x(r, sp)))
		return rc;
	int64_t lo = INT64_MAX, hi = INT64_MIN;
	for (size_t i = 0; i < sp->nb; i++)
		lo = sp->b[i].ts < lo ? sp->b[i].ts : lo;
	for (size_t i = 0; i < sp->ne; i++)
		lo = sp->e[i].ts < lo ? sp->e[i].ts : lo;
	if ((rc = threads(r, sp)))
		return rc;
	if (sp->ns > 1)
		qsort(sp->s, sp->ns, sizeof(*sp->s), cmp_sample);
	for (size_t i = 0; i < sp->ns; i++)
		hi = sp->s[i].t + sp->s[i].dur > hi ? sp->s[i].t + sp->s[i].dur : hi;
	sp->origin = lo;
	r->meta.sample_time = 1;
	r->meta.interval_us = 0;
	/* the trace clock is no wall clock: the start is unknown (0), so no writer shows a date */
	r->meta.start_time_us = 0;
	r->meta.duration_ns = sp->ns ? hi - lo : 0;
	return TACH_OK;
}

int tachi_spans_next(struct tach_reader *r, struct tachi_spans *sp, const struct tach_sample **out)
{
	if (sp->cur >= sp->ns)
		return TACH_EOF;
	const struct tachi_span_sample *ss = &sp->s[sp->cur++];
	uint32_t depth = sp->nodes[ss->node].depth, k = 0;
	if (!TACHI_RESERVE(sp->out, sp->out_cap, depth))
		return tachi_jr_nomem(r);
	for (uint32_t i = ss->node; i != NO_ID; i = sp->nodes[i].parent)
		sp->out[k++] = sp->nodes[i].frame;
	struct tach_sample *s = &r->sample;
	s->thread_id = ss->tid;
	s->interp_id = ss->pid <= UINT32_MAX ? (uint32_t)ss->pid : 0;
	s->timestamp_us = (uint64_t)(ss->t - sp->origin) / 1000;
	s->weight = 1;
	s->time_ns = (uint64_t)ss->dur;
	s->status = TACH_STATUS_ON_CPU;
	s->depth = depth;
	s->same_outer = 0;
	s->frames = sp->out;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples++;
	*out = s;
	return TACH_OK;
}

void tachi_spans_free(struct tachi_spans *sp)
{
	free(sp->b);
	free(sp->e);
	free(sp->x);
	free(sp->th);
	free(sp->nodes);
	free(sp->s);
	free(sp->open);
	free(sp->out);
	free(sp->buf);
}
