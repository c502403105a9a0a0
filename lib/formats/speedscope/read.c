/* speedscope JSON reader (https://www.speedscope.app/file-format-schema.json).
 *
 * A file is one JSON object: "shared": {"frames": [{name, file, line, col}...]} and
 * "profiles": [...], each profile "sampled" (samples: frame-index arrays root first,
 * weights: one number each) or "evented" (events: {type "O"|"C", frame, at}, in
 * non-decreasing "at", balanced), with a unit (nanoseconds, microseconds, milliseconds,
 * seconds, none, bytes) and a startValue. py-spy writes one sampled profile per thread
 * named 'Thread TID "name"' in seconds, austin2speedscope one per thread and metric named
 * '... profile for PID:[IID:]TID' in microseconds or bytes, speedscope itself evented.
 *
 * What a sample becomes: each profile is a thread: the id in its name (py-spy, austin, and
 * tach2speedscope's "... (tid N[, interpreter I])"),
 * else the profile's index. A sampled profile's sample i is at startValue plus the
 * weights before it; an evented profile gives a sample wherever the stack is not empty
 * between two events, at the first, weighing the time to the second. A weight in a time
 * unit is the sample's time, exact (time_ns, meta.sample_time), and the sample is one
 * sample (count 1): a time is never cut into samples of an interval. The interval
 * recorded (the header's, for writers that need one) is the "interval" option, else the
 * greatest common divisor of every weight in whole microseconds (py-spy's weights are all
 * its interval), at least one; it weighs nothing. With "none" or
 * "bytes" weights are counts already (rounded; at least one when positive) and a value v
 * is at v * interval µs (interval default 1000). Weight-0 samples are dropped, as
 * speedscope drops them. Frames are file "~" when the file is absent or null; line and
 * col are kept (-1 when absent). The status byte is TACH_STATUS_UNKNOWN.
 *
 * The whole file is read and checked at open (strict JSON, json.c); samples are then
 * parsed again from the bytes as they are asked for, so memory is the file's plus a
 * small record per frame and profile. Duplicate keys: the last wins (as in JSON.parse);
 * unknown keys are skipped. Refused with the byte offset: out-of-range, negative or
 * non-integer frame indices, negative weights, numbers that overflow, events out of order
 * or unbalanced, samples and weights of different lengths, stacks over max-depth. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/json_read.h"
#include "formats/speedscope/speedscope.h"
#include "formats/v8_tree.h"

#define DEFAULT_INTERVAL_US 1000
#define NONE UINT64_MAX
#define NO_ID UINT32_MAX

enum { U_NONE, U_BYTES, U_NS, U_US, U_MS, U_S };
/* Values are kept as integers of 10^-scale units: nanoseconds for time, thousandths of
 * a count otherwise. */
static const struct { const char *name; int scale; } units[] = {
	{ "none", 3 }, { "bytes", 3 }, { "nanoseconds", 0 },
	{ "microseconds", 3 }, { "milliseconds", 6 }, { "seconds", 9 },
};

struct speedscope_rframe {
	uint64_t name_off, file_off;  /* their string tokens; file NONE when absent */
	int32_t line, col;
	uint32_t id;                  /* dict frame, NO_ID until first used */
};

struct sprof {
	uint64_t off;                 /* the profile object */
	uint64_t a_off, b_off;        /* samples and weights, or events (a) */
	int64_t start;                /* startValue in sub-units */
	uint64_t tid;
	uint32_t iid;
	bool evented;
	int unit;
};

struct speedscope_rstate {
	uint64_t opt_interval, opt_profile;
	bool has_profile;
	uint64_t interval;
	struct speedscope_rframe *frames;
	size_t nframes, frames_cap;
	struct sprof *profs;
	size_t nprofs, profs_cap;
	/* walking one profile */
	size_t cur;
	bool active;
	struct tachi_json a, b;
	int64_t v, at;                /* the running value; the sample's */
	int64_t w;                    /* the sample's weight in sub-units */
	uint64_t off;                 /* where the sample is, for messages */
	uint32_t *idx;                /* its stack: frame indices, root first */
	size_t idx_cap;
	uint32_t depth;
	bool pending;                 /* an evented profile's event read but not applied */
	bool pend_open;
	uint32_t pend_frame;
	uint64_t pend_off;
	uint64_t total;               /* the weights handed out, against max-samples */
	uint32_t *out;
	size_t out_cap;
	char *sbuf;
	size_t sbuf_cap;
};

static int sc_option(struct tach_reader *r, const char *key, const char *value)
{
	struct speedscope_rstate *st = r->state;
	uint64_t v;
	if (!strcmp(key, "interval")) {
		if (!tachi_parse_u64(value, UINT32_MAX, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "interval must be 1..%u microseconds, not %s", UINT32_MAX, value);
		st->opt_interval = v;
		return TACH_OK;
	}
	if (!strcmp(key, "profile")) {
		if (!tachi_parse_u64(value, UINT32_MAX, &v))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "profile must be an index 0..%u, not %s", UINT32_MAX, value);
		st->opt_profile = v;
		st->has_profile = true;
		return TACH_OK;
	}
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "speedscope reader has no option %s", key);
}

bool tachi_speedscope_schema_named(const uint8_t *p, const struct tachi_jtok *t)
{
	char buf[256];
	if (t->type != TJ_STRING || t->len >= sizeof(buf))
		return false;
	size_t n = tachi_json_unescape(p, t, buf);
	buf[n] = 0;
	return strstr(buf, "speedscope") && strstr(buf, "file-format-schema");
}

/* An optional integer field (absent or null: -1). */
static int opt_int(struct tach_reader *r, uint64_t off, const char *what, int32_t *out)
{
	int64_t x;
	int rc = tachi_jr_opt_int(r, off, what, 0, INT32_MAX, true, &x);
	*out = (int32_t)x;
	return rc;
}

static int frame_obj(struct tach_reader *r, struct tachi_json *j, uint64_t at, void *item)
{
	static const char *const want[] = { "name", "file", "line", "col" };
	struct speedscope_rframe *f = item;
	uint64_t o[4];
	struct tachi_json c;
	struct tachi_jtok t;
	int rc = tachi_json_keys(j, want, o, 4);
	if (rc)
		return rc;
	if ((rc = tachi_jr_need_string(r, o[0], at, "frame without a \"name\"",
					"frame name must be a string", &t)))
		return rc;
	f->name_off = t.off;
	f->file_off = NONE;
	if (o[1] != NONE) {
		if ((rc = tachi_jr_value_at(r, &c, o[1], &t)))
			return rc;
		if (t.type == TJ_STRING)
			f->file_off = t.off;
		else if (t.type != TJ_NULL)
			return tachi_jr_bad(r, t.off, "frame file must be a string or null");
	}
	f->id = NO_ID;
	if ((rc = opt_int(r, o[2], "frame line", &f->line)) ||
	    (rc = opt_int(r, o[3], "frame col", &f->col)))
		return rc;
	return TACH_OK;
}

static int parse_frames(struct tach_reader *r, uint64_t off)
{
	static const struct tachi_jr_objects frames = {
		"shared.frames must be an array", "a frame must be an object",
		"more than 2^32 - 2 frames", UINT32_MAX - 1, sizeof(struct speedscope_rframe), frame_obj,
	};
	struct speedscope_rstate *st = r->state;
	struct tachi_json j;
	tachi_jr_cursor(r, &j, off);
	return tachi_jr_objects(r, &j, &frames, (void **)&st->frames, &st->nframes,
				&st->frames_cap);
}

static int parse_shared(struct tach_reader *r, uint64_t off)
{
	static const char *const want[] = { "frames" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o;
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc)
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "\"shared\" must be an object");
	if ((rc = tachi_json_keys(&j, want, &o, 1)))
		return rc;
	if (o == NONE)
		return tachi_jr_bad(r, t.off, "\"shared\" has no \"frames\"");
	return parse_frames(r, o);
}

/* A thread id as profilers print them: decimal, 0x hex, or (bare_hex) plain hex. */
static bool parse_id(const char *s, size_t n, bool bare_hex, uint64_t *v)
{
	bool hex = n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X');
	if (!hex && tachi_parse_dec(s, n, UINT64_MAX, v))
		return true;
	if (hex) {
		s += 2;
		n -= 2;
	} else if (!bare_hex) {
		return false;
	}
	if (!n || n > 16)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		int h = tachi_hexval(s[i]);
		if (h < 0)
			return false;
		x = x << 4 | (uint64_t)h;
	}
	*v = x;
	return true;
}

static size_t word_len(const char *s, size_t n)
{
	const char *sp = memchr(s, ' ', n);
	return sp ? (size_t)(sp - s) : n;
}

/* py-spy: [Process PID ]Thread TID ["name"]. */
static bool pyspy_name(const char *s, size_t n, struct sprof *p)
{
	uint64_t pid, tid;
	bool has_pid = n > 8 && !memcmp(s, "Process ", 8);
	if (has_pid) {
		size_t k = word_len(s + 8, n - 8);
		if (!tachi_parse_dec(s + 8, k, UINT64_MAX, &pid) || 8 + k >= n)
			return false;
		s += 9 + k;
		n -= 9 + k;
	}
	if (n <= 7 || memcmp(s, "Thread ", 7) || !parse_id(s + 7, word_len(s + 7, n - 7), false, &tid))
		return false;
	p->tid = tid;
	if (has_pid && pid <= UINT32_MAX)
		p->iid = (uint32_t)pid;
	return true;
}

/* austin2speedscope: "... profile for PID:TID" or "PID:IID:TID". */
static bool austin_name(const char *s, size_t n, struct sprof *p)
{
	static const char mark[] = " profile for ";
	const char *m = memmem(s, n, mark, sizeof(mark) - 1);
	if (!m)
		return false;
	const char *f = m + sizeof(mark) - 1, *e = s + n;
	const char *c1 = memchr(f, ':', (size_t)(e - f));
	if (!c1)
		return false;
	const char *c2 = memchr(c1 + 1, ':', (size_t)(e - c1 - 1));
	const char *t = c2 ? c2 + 1 : c1 + 1;
	uint64_t pid, iid = 0, tid;
	if (!tachi_parse_dec(f, (size_t)(c1 - f), UINT64_MAX, &pid) ||
	    (c2 && !tachi_parse_dec(c1 + 1, (size_t)(c2 - c1 - 1), UINT32_MAX, &iid)) ||
	    !parse_id(t, (size_t)(e - t), true, &tid))
		return false;
	p->tid = tid;
	p->iid = c2 ? (uint32_t)iid : pid <= UINT32_MAX ? (uint32_t)pid : 0;
	return true;
}

/* Our own writer's (and tach2gecko's) names: "... (tid N)" or "... (tid N, interpreter I)"
 * at the end, the thread id back where it came from. */
static bool own_name(const char *s, size_t n, struct sprof *p)
{
	static const char mark[] = " (tid ";
	const char *m = NULL;
	for (const char *q = s; (q = memmem(q, (size_t)(s + n - q), mark, sizeof(mark) - 1));
	     q++)
		m = q; /* the last one: a comm may hold the mark too */
	if (!m || s[n - 1] != ')')
		return false;
	const char *t = m + sizeof(mark) - 1, *e = s + n - 1;
	static const char interp[] = ", interpreter ";
	const char *c = memmem(t, (size_t)(e - t), interp, sizeof(interp) - 1);
	uint64_t tid, iid = 0;
	if (!tachi_parse_dec(t, (size_t)((c ? c : e) - t), UINT64_MAX, &tid) ||
	    (c && !tachi_parse_dec(c + sizeof(interp) - 1, (size_t)(e - c - sizeof(interp) + 1),
				   UINT32_MAX, &iid)))
		return false;
	p->tid = tid;
	p->iid = (uint32_t)iid;
	return true;
}

static int profile_name(struct tach_reader *r, uint64_t off, struct sprof *p)
{
	struct speedscope_rstate *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	p->tid = st->nprofs;
	p->iid = 0;
	if (off == NONE)
		return TACH_OK;
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc)
		return rc;
	if (t.type != TJ_STRING)
		return tachi_jr_bad(r, t.off, "profile name must be a string");
	size_t n;
	if ((rc = tachi_jr_string(r, &t, &st->sbuf, &st->sbuf_cap, &n)))
		return rc;
	/* ours first: "Thread K (tid N)" would read as py-spy's thread K */
	if (!own_name(st->sbuf, n, p) && !pyspy_name(st->sbuf, n, p) &&
	    !austin_name(st->sbuf, n, p)) {
		p->tid = st->nprofs;
		p->iid = 0;
	}
	return TACH_OK;
}

static int profile_kind(struct tach_reader *r, const uint64_t *o, struct sprof *p)
{
	struct tachi_json j;
	struct tachi_jtok t;
	int rc;
	if (o[0] == NONE)
		return tachi_jr_bad(r, p->off, "profile without a \"type\"");
	if ((rc = tachi_jr_value_at(r, &j, o[0], &t)))
		return rc;
	if (tachi_json_str_eq(r->in.data, &t, "evented"))
		p->evented = true;
	else if (!tachi_json_str_eq(r->in.data, &t, "sampled"))
		return tachi_jr_bad(r, t.off, "profile type must be \"sampled\" or \"evented\"");
	if (o[1] == NONE)
		return tachi_jr_bad(r, p->off, "profile without a \"unit\"");
	if ((rc = tachi_jr_value_at(r, &j, o[1], &t)))
		return rc;
	p->unit = -1;
	for (int i = 0; i < (int)(sizeof(units) / sizeof(units[0])); i++)
		if (tachi_json_str_eq(r->in.data, &t, units[i].name))
			p->unit = i;
	if (p->unit < 0)
		return tachi_jr_bad(r, t.off, "profile unit must be one of none, bytes, "
				    "nanoseconds, microseconds, milliseconds, seconds");
	p->start = 0;
	if (o[2] != NONE &&
	    ((rc = tachi_jr_value_at(r, &j, o[2], &t)) ||
	     (rc = tachi_jr_number(r, &t, units[p->unit].scale, "startValue", &p->start))))
		return rc;
	p->a_off = p->evented ? o[5] : o[3];
	p->b_off = p->evented ? NONE : o[4];
	if (p->a_off == NONE)
		return tachi_jr_bad(r, p->off, p->evented ? "evented profile without \"events\""
						       : "sampled profile without \"samples\"");
	if (!p->evented && p->b_off == NONE)
		return tachi_jr_bad(r, p->off, "sampled profile without \"weights\"");
	return TACH_OK;
}

/* One profile: its keys, kind and thread. */
static int profile_obj(struct tach_reader *r, struct tachi_json *j, uint64_t off, void *item)
{
	static const char *const want[] = { "type", "unit", "startValue", "samples", "weights",
					    "events", "name" };
	struct sprof *p = item;
	uint64_t o[7];
	int rc;
	memset(p, 0, sizeof(*p));
	p->off = off;
	if ((rc = tachi_json_keys(j, want, o, 7)) || (rc = profile_kind(r, o, p)) ||
	    (rc = profile_name(r, o[6], p)))
		return rc;
	return TACH_OK;
}

/* The "profiles" array, read where j stands. A later "profiles" key replaces what an
 * earlier one gave. */
static int parse_profiles(struct tach_reader *r, struct tachi_json *j)
{
	static const struct tachi_jr_objects profiles = {
		"\"profiles\" must be an array", "a profile must be an object", NULL, SIZE_MAX,
		sizeof(struct sprof), profile_obj,
	};
	struct speedscope_rstate *st = r->state;
	st->nprofs = 0;
	return tachi_jr_objects(r, j, &profiles, (void **)&st->profs, &st->nprofs, &st->profs_cap);
}

/* The top object: "$schema" and "shared" found, "profiles" read on the way (the file's
 * largest part is walked once here, not skipped and then walked). */
static int parse_top(struct tach_reader *r)
{
	struct tachi_json j;
	struct tachi_jtok t, k;
	uint64_t schema = NONE, shared = NONE;
	bool more, profiles = false;
	int rc = tachi_jr_top(r, &j, &t, "not a speedscope file: expected a JSON object");
	if (rc)
		return rc;
	while (!(rc = tachi_json_key(&j, &k, &more)) && more) {
		if (tachi_json_str_eq(j.p, &k, "profiles")) {
			profiles = true;
			rc = parse_profiles(r, &j);
		} else {
			if (tachi_json_str_eq(j.p, &k, "$schema"))
				schema = j.pos;
			else if (tachi_json_str_eq(j.p, &k, "shared"))
				shared = j.pos;
			rc = tachi_json_skip(&j);
		}
		if (rc)
			return rc;
	}
	if (rc || (rc = tachi_json_end(&j)))
		return rc;
	if (schema != NONE) {
		if ((rc = tachi_jr_value_at(r, &j, schema, &k)))
			return rc;
		if (!tachi_speedscope_schema_named(r->in.data, &k))
			return tachi_jr_bad(r, k.off,
					    "$schema does not name speedscope's file-format-schema");
	}
	if (shared == NONE || !profiles)
		return tachi_jr_bad(r, t.off,
				    "not a speedscope file: no \"shared\" and \"profiles\"");
	return parse_shared(r, shared);
}

/* ---- walking the samples of a profile ---- */

static int begin_profile(struct tach_reader *r, const struct sprof *p)
{
	struct speedscope_rstate *st = r->state;
	int rc = tachi_jr_begin_array(r, &st->a, p->a_off, p->evented ? "events" : "samples");
	if (!rc && !p->evented)
		rc = tachi_jr_begin_array(r, &st->b, p->b_off, "weights");
	st->v = p->evented ? INT64_MIN : p->start;
	st->depth = 0;
	st->pending = false;
	st->active = true;
	return rc;
}

static int push(struct tach_reader *r, uint32_t frame, uint64_t off)
{
	struct speedscope_rstate *st = r->state;
	if (st->depth >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off,
			     "stack deeper than the depth limit of %u frames", r->lim.max_depth);
	if (!TACHI_RESERVE(st->idx, st->idx_cap, (size_t)st->depth + 1))
		return tachi_jr_nomem(r);
	st->idx[st->depth++] = frame;
	return TACH_OK;
}

static int frame_index(struct tach_reader *r, const struct tachi_jtok *t, uint32_t *out)
{
	struct speedscope_rstate *st = r->state;
	int64_t x;
	uint64_t u;
	if (t->type == TJ_NUMBER && tachi_json_digits(r->in.data, t, &u) && u < st->nframes) {
		*out = (uint32_t)u;
		return TACH_OK;
	}
	if (st->nframes && tachi_json_tok_int(r->in.data, t, 0, (int64_t)st->nframes - 1, &x)) {
		*out = (uint32_t)x;
		return TACH_OK;
	}
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off,
		     "frame index %.*s is not an index into shared.frames (%zu frames)",
		     (int)(t->len > 40 ? 40 : t->len), (const char *)r->in.data + t->start,
		     st->nframes);
}

static int sampled_step(struct tach_reader *r, const struct sprof *p)
{
	struct speedscope_rstate *st = r->state;
	struct tachi_jtok t;
	bool ma, mb;
	int rc;
	if ((rc = tachi_json_elem(&st->a, &ma)) || (rc = tachi_json_elem(&st->b, &mb)))
		return rc;
	if (ma != mb)
		return tachi_jr_bad(r, ma ? st->b.pos - 1 : st->a.pos - 1,
				    "\"samples\" and \"weights\" differ in length");
	if (!ma)
		return TACH_EOF;
	if ((rc = tachi_json_value(&st->a, &t)))
		return rc;
	if (t.type != TJ_ARRAY)
		return tachi_jr_bad(r, t.off, "a sample must be an array of frame indices");
	st->off = t.off;
	st->depth = 0;
	while (!(rc = tachi_json_elem(&st->a, &ma)) && ma) {
		uint32_t f;
		if ((rc = tachi_json_value(&st->a, &t)) || (rc = frame_index(r, &t, &f)) ||
		    (rc = push(r, f, t.off)))
			return rc;
	}
	if (rc || (rc = tachi_json_value(&st->b, &t)) ||
	    (rc = tachi_jr_number(r, &t, units[p->unit].scale, "weight", &st->w)))
		return rc;
	if (st->w < 0)
		return tachi_jr_bad(r, t.off, "negative weight");
	st->at = st->v;
	if (__builtin_add_overflow(st->v, st->w, &st->v))
		return tachi_jr_bad(r, t.off, "the weights add up past the range of values");
	return TACH_OK;
}

/* One event object: its type, frame and time (the last of duplicated keys). */
static int read_event(struct tach_reader *r, const struct sprof *p, bool *open, uint32_t *frame,
		      int64_t *at)
{
	static const char *const want[] = { "type", "frame", "at" };
	struct speedscope_rstate *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[3];
	int rc = tachi_json_value(&st->a, &t);
	if (rc)
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "an event must be an object");
	uint64_t ev = t.off;
	if ((rc = tachi_json_keys(&st->a, want, o, 3)))
		return rc;
	if (o[0] == NONE || o[1] == NONE || o[2] == NONE)
		return tachi_jr_bad(r, ev, "an event needs \"type\", \"frame\" and \"at\"");
	if ((rc = tachi_jr_value_at(r, &j, o[0], &t)))
		return rc;
	*open = tachi_json_str_eq(r->in.data, &t, "O");
	if (!*open && !tachi_json_str_eq(r->in.data, &t, "C"))
		return tachi_jr_bad(r, t.off, "event type must be \"O\" or \"C\"");
	if ((rc = tachi_jr_value_at(r, &j, o[1], &t)) || (rc = frame_index(r, &t, frame)) ||
	    (rc = tachi_jr_value_at(r, &j, o[2], &t)) ||
	    (rc = tachi_jr_number(r, &t, units[p->unit].scale, "at", at)))
		return rc;
	st->off = ev;
	return TACH_OK;
}

static int apply_event(struct tach_reader *r, bool open, uint32_t frame, uint64_t off)
{
	struct speedscope_rstate *st = r->state;
	if (open)
		return push(r, frame, off);
	if (!st->depth)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "close of frame %u with no frame open", frame);
	if (st->idx[st->depth - 1] != frame)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "close of frame %u while frame %u is the innermost open", frame,
			     st->idx[st->depth - 1]);
	st->depth--;
	return TACH_OK;
}

/* The next stretch between two events with frames open: the stack then, from st->at for
 * st->w. The event that ends it is applied on the next call. */
static int evented_step(struct tach_reader *r, const struct sprof *p)
{
	struct speedscope_rstate *st = r->state;
	int rc;
	if (st->pending) {
		st->pending = false;
		if ((rc = apply_event(r, st->pend_open, st->pend_frame, st->pend_off)))
			return rc;
	}
	for (;;) {
		bool more, open;
		uint32_t frame;
		int64_t at;
		if ((rc = tachi_json_elem(&st->a, &more)))
			return rc;
		if (!more) {
			if (st->depth)
				return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->a.pos - 1,
					     "%u frames still open at the end of the events", st->depth);
			return TACH_EOF;
		}
		if ((rc = read_event(r, p, &open, &frame, &at)))
			return rc;
		if (at < st->v)
			return tachi_jr_bad(r, st->off, "event \"at\" before the previous event's");
		if (st->depth && at > st->v) {
			st->at = st->v;
			if (__builtin_sub_overflow(at, st->v, &st->w))
				return tachi_jr_bad(r, st->off,
						    "time between two events out of range");
			st->v = at;
			st->pending = true;
			st->pend_open = open;
			st->pend_frame = frame;
			st->pend_off = st->off;
			return TACH_OK;
		}
		st->v = at;
		if ((rc = apply_event(r, open, frame, st->off)))
			return rc;
	}
}

static int step(struct tach_reader *r, const struct sprof *p)
{
	return p->evented ? evented_step(r, p) : sampled_step(r, p);
}

static bool is_time(const struct sprof *p)
{
	return p->unit >= U_NS;
}

static bool selected(const struct speedscope_rstate *st, size_t k)
{
	return !st->has_profile || st->opt_profile == k;
}

static uint64_t gcd(uint64_t a, uint64_t b)
{
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	return a;
}

/* A weight in whole microseconds (time units), at least one. */
static uint64_t weight_us(int64_t w)
{
	uint64_t us = ((uint64_t)w + 500) / 1000;
	return us ? us : 1;
}

/* The sample's timestamp in microseconds. */
static int timestamp(struct tach_reader *r, const struct sprof *p, uint64_t *ts)
{
	struct speedscope_rstate *st = r->state;
	if (st->at < 0)
		return tachi_jr_bad(r, st->off, "negative time");
	if (is_time(p)) {
		*ts = (uint64_t)st->at / 1000;
		return TACH_OK;
	}
	uint64_t x;
	if (__builtin_mul_overflow((uint64_t)st->at, st->interval, &x))
		return tachi_jr_bad(r, st->off, "value times the interval overflows a timestamp");
	*ts = x / 1000;
	return TACH_OK;
}

/* Every selected profile once through, before any sample is handed out: the whole file
 * is checked and the interval found. */
static int prepass(struct tach_reader *r)
{
	struct speedscope_rstate *st = r->state;
	uint64_t g = 0;
	int64_t count_max = 0;
	size_t count_prof = 0;
	for (size_t k = 0; k < st->nprofs; k++) {
		const struct sprof *p = &st->profs[k];
		if (!selected(st, k))
			continue;
		int rc = begin_profile(r, p);
		while (!rc && !(rc = step(r, p))) {
			if (!st->w)
				continue;
			if (st->at < 0)
				return tachi_jr_bad(r, st->off, "negative time");
			if (is_time(p))
				g = gcd(g, weight_us(st->w));
			else if (st->at >= count_max)
				count_max = st->at, count_prof = k;
		}
		if (rc != TACH_EOF)
			return rc;
	}
	st->interval = st->opt_interval ? st->opt_interval : g ? g : DEFAULT_INTERVAL_US;
	st->active = false;
	if (count_max) {
		/* the latest value of a count unit must still make a timestamp */
		uint64_t ts;
		st->at = count_max;
		return timestamp(r, &st->profs[count_prof], &ts);
	}
	return TACH_OK;
}

static int sc_open(struct tach_reader *r)
{
	struct speedscope_rstate *st = r->state;
	int rc = parse_top(r);
	if (rc)
		return rc;
	if (st->has_profile && st->opt_profile >= st->nprofs)
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
			     "profile %llu asked for, but the file has %zu profiles",
			     (unsigned long long)st->opt_profile, st->nprofs);
	if ((rc = prepass(r)))
		return rc;
	st->cur = 0;
	r->meta.interval_us = st->interval;
	r->meta.start_time_us = 0;
	/* a time unit's weights are each sample's time (those of a count unit beside one are
	 * their intervals, as they always were) */
	for (size_t k = 0; k < st->nprofs; k++)
		if (selected(st, k) && is_time(&st->profs[k]))
			r->meta.sample_time = 1;
	return TACH_OK;
}

static int frame_id(struct tach_reader *r, uint32_t k, uint32_t *id)
{
	struct speedscope_rstate *st = r->state;
	struct speedscope_rframe *f = &st->frames[k];
	if (f->id != NO_ID) {
		*id = f->id;
		return TACH_OK;
	}
	struct tach_frame fr = { 0, 0, f->line, f->line, f->col, -1, TACH_NO_OPCODE };
	uint64_t offs[2] = { f->name_off, f->file_off };
	uint32_t *ids[2] = { &fr.func, &fr.file };
	for (int i = 0; i < 2; i++) {
		struct tachi_json j;
		struct tachi_jtok t;
		size_t n = 1;
		if (offs[i] == NONE) {
			if (!TACHI_RESERVE(st->sbuf, st->sbuf_cap, 1))
				return tachi_jr_nomem(r);
			st->sbuf[0] = '~';
		} else {
			int rc = tachi_jr_value_at(r, &j, offs[i], &t);
			if (rc || (rc = tachi_jr_string(r, &t, &st->sbuf, &st->sbuf_cap, &n)))
				return rc;
		}
		if (tach_dict_intern_string(&r->dict, st->sbuf, n, ids[i]))
			return tachi_jr_nomem(r);
	}
	if (tach_dict_intern_frame(&r->dict, &fr, &f->id))
		return tachi_jr_nomem(r);
	*id = f->id;
	return TACH_OK;
}

static int emit(struct tach_reader *r, const struct sprof *p, const struct tach_sample **out)
{
	struct speedscope_rstate *st = r->state;
	struct tach_sample *s = &r->sample;
	int rc = timestamp(r, p, &s->timestamp_us);
	if (rc)
		return rc;
	uint64_t w = is_time(p) ? 1 : ((uint64_t)st->w + 500) / 1000;
	if (!w)
		w = 1;
	if (w > r->lim.max_samples - st->total)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, st->off,
			     "the weights add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	st->total += w;
	if (st->depth && !TACHI_RESERVE(st->out, st->out_cap, st->depth))
		return tachi_jr_nomem(r);
	for (uint32_t i = 0; i < st->depth; i++)
		if ((rc = frame_id(r, st->idx[i], &st->out[st->depth - 1 - i])))
			return rc;
	s->thread_id = p->tid;
	s->interp_id = p->iid;
	s->weight = w;
	if (is_time(p))
		s->time_ns = (uint64_t)st->w;
	else if (!r->meta.sample_time || __builtin_mul_overflow(w, st->interval * 1000, &s->time_ns))
		s->time_ns = r->meta.sample_time ? UINT64_MAX : 0;
	s->status = TACH_STATUS_UNKNOWN;
	s->depth = st->depth;
	s->same_outer = 0;
	s->frames = st->out;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += s->weight;
	*out = s;
	return TACH_OK;
}

static int sc_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct speedscope_rstate *st = r->state;
	for (; st->cur < st->nprofs; st->cur++) {
		const struct sprof *p = &st->profs[st->cur];
		if (!selected(st, st->cur))
			continue;
		int rc = st->active ? TACH_OK : begin_profile(r, p);
		while (!rc && !(rc = step(r, p)))
			if (st->w)
				return emit(r, p, out);
		if (rc != TACH_EOF)
			return rc;
		st->active = false;
	}
	return TACH_EOF;
}

static void sc_free(struct tach_reader *r)
{
	struct speedscope_rstate *st = r->state;
	free(st->frames);
	free(st->profs);
	free(st->idx);
	free(st->out);
	free(st->sbuf);
}

const struct tachi_reader_ops tachi_speedscope_reader_ops = {
	.state_size = sizeof(struct speedscope_rstate),
	.option = sc_option,
	.open = sc_open,
	.next = sc_next,
	.free = sc_free,
	.whole_input = true,
};
