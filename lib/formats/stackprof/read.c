/* Ruby stackprof dump reader: the JSON of `StackProf.run(..., raw: true)` written with
 * JSON.dump (or `stackprof --json`, or the results hash of any version from 0.2 on), read
 * as speedscope's stackprof importer reads it, so the stacks and weights are speedscope's.
 *
 * A dump is one JSON object: "mode" ("cpu", "wall", "object", or a custom one), "interval"
 * (µs between samples for cpu and wall; allocations between samples for object), "frames",
 * an object keyed by frame id (decimal) with {name, file, line, ...} (line: the method's
 * first line, null for C functions), "raw", the samples, and "raw_timestamp_deltas", µs
 * from the previous sample, one per sample. "raw" is a run of entries [N, id1 .. idN,
 * COUNT]: a stack of N frame ids, outermost first, taken COUNT times in a row. Not read:
 * the per-frame aggregates (samples, total_samples, edges, lines), raw_sample_timestamps
 * (an unknown clock), gc_samples, missed_samples, metadata.
 *
 * What a sample becomes: each raw entry is one sample of thread 0 weighing COUNT. Its time
 * is, as speedscope weighs it: in cpu mode COUNT × interval; in object mode none (the
 * weight counts samples of allocations, meta.sample_time 0); in any other mode the sum of
 * its COUNT deltas. A sample is at the sum of the deltas before its first one (µs from the
 * start of the profile, whose date is unknown: 0). Values (tach_sample_ext): "samples"
 * (count) and the time ("cpu" or "wall", nanoseconds), except in object mode.
 *
 * Frames: the name as given, "(unknown)" when absent or null (speedscope's); the file as
 * given ("<cfunc>" for C functions), "~" (none) when absent, null or empty, as for
 * stackprof's own "(garbage collection)", "(marking)" and "(sweeping)"; the line, -1 when
 * absent or null. An entry whose stack is "(garbage collection)" alone is put on top of
 * the previous entry's stack, as speedscope does (stackprof 0.2.x records a collection that
 * is neither marking nor sweeping so, without the stack it interrupted).
 *
 * The whole file is read and checked at open (strict JSON, json.c); "raw" is then read as
 * samples are asked for. Memory: the file, a record per frame, the deepest stack twice.
 * Duplicate keys: the last wins (as in JSON.parse), a frame id given twice too. Refused with
 * the byte offset: a dump without "raw" (recorded without raw: true: its call graph holds no
 * stacks), no "frames" or "mode", an entry cut short, of no frames or deeper than
 * max-depth, a frame id not in "frames", a count below 1, deltas that are negative or end
 * before the samples do (or absent, outside cpu and object mode), counts past
 * max-samples, times past 64 bits of nanoseconds. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/json_read.h"
#include "formats/stackprof/stackprof.h"

#define NONE UINT64_MAX
#define NO_ID UINT32_MAX

enum { M_TIME, M_CPU, M_OBJECT };

struct stackprof_frame {
	uint64_t id;
	uint64_t name_off, file_off;  /* string tokens; NONE: absent or null */
	int32_t line;
	uint32_t seq;                 /* order in "frames": the last of an id wins */
	uint32_t dict;                /* dict frame, NO_ID until first used */
	bool gc;                      /* named "(garbage collection)" */
};

struct stackprof_state {
	struct stackprof_frame *frames;
	size_t nframes, frames_cap;
	int mode;
	uint64_t interval;
	struct tachi_json raw, deltas;
	bool has_deltas;
	uint64_t now_us;              /* the deltas read so far */
	uint64_t total;               /* counts given, against max-samples */
	uint32_t *cur, *prev;         /* the entry's stack and the one before, outermost first */
	size_t cur_cap, prev_cap;
	uint32_t depth, prev_depth;
	uint32_t *out;
	size_t out_cap;
	char *sbuf;
	size_t sbuf_cap;
	struct tach_value_type vt[2];
	int64_t vals[2];
	struct tach_sample_ext ext;
};

/* ---- open ---- */

/* The frame object whose '{' j has just read, at off, into f. */
static int frame_obj(struct tach_reader *r, struct tachi_json *j, struct stackprof_frame *f)
{
	static const char *const want[] = { "name", "file", "line" };
	uint64_t o[3];
	struct tachi_json c;
	struct tachi_jtok t;
	int64_t line;
	int rc = tachi_json_keys(j, want, o, 3);
	f->name_off = f->file_off = NONE;
	for (int i = 0; i < 2 && !rc; i++) {
		if (o[i] == NONE || (rc = tachi_jr_value_at(r, &c, o[i], &t)))
			continue;
		if (t.type == TJ_STRING && (i == 0 || t.len))
			*(i ? &f->file_off : &f->name_off) = t.off;
		else if (t.type != TJ_NULL && t.type != TJ_STRING)
			return tachi_jr_bad(r, t.off, i ? "a frame's file must be a string or null" :
						  "a frame's name must be a string or null");
		if (i == 0 && t.type == TJ_STRING)
			f->gc = tachi_json_str_eq(r->in.data, &t, "(garbage collection)");
	}
	if (rc || (rc = tachi_jr_opt_int(r, o[2], "a frame's line", 0, INT32_MAX, true, &line)))
		return rc;
	f->line = (int32_t)line;
	f->dict = NO_ID;
	return TACH_OK;
}

static int by_id(const void *a, const void *b)
{
	const struct stackprof_frame *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* Sorted by id, the last of each id kept (JSON.parse keeps the last of a key). */
static void index_frames(struct stackprof_state *st)
{
	if (!st->nframes)
		return;
	qsort(st->frames, st->nframes, sizeof(st->frames[0]), by_id);
	size_t k = 0;
	for (size_t i = 0; i < st->nframes; i++) {
		if (k && st->frames[k - 1].id == st->frames[i].id)
			k--;
		st->frames[k++] = st->frames[i];
	}
	st->nframes = k;
}

/* "frames" at off: each entry keyed by a decimal id (others can name no frame of "raw",
 * whose ids are numbers: skipped). */
static int parse_frames(struct tach_reader *r, uint64_t off)
{
	struct stackprof_state *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t, k;
	bool more;
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc)
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "\"frames\" must be an object");
	while (!(rc = tachi_json_key(&j, &k, &more)) && more) {
		uint64_t id;
		if (k.escaped || !tachi_parse_dec((const char *)r->in.data + k.start, k.len,
						 INT64_MAX, &id)) {
			if ((rc = tachi_json_skip(&j)))
				return rc;
			continue;
		}
		if ((rc = tachi_json_value(&j, &t)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "a frame must be an object");
		if (st->nframes >= UINT32_MAX - 1)
			return tachi_jr_bad(r, t.off, "more than 2^32 - 2 frames");
		if (!TACHI_RESERVE(st->frames, st->frames_cap, st->nframes + 1))
			return tachi_jr_nomem(r);
		struct stackprof_frame *f = &st->frames[st->nframes];
		*f = (struct stackprof_frame){ .id = id, .seq = (uint32_t)st->nframes };
		if ((rc = frame_obj(r, &j, f)))
			return rc;
		st->nframes++;
	}
	if (rc)
		return rc;
	index_frames(st);
	return TACH_OK;
}

static int parse_mode(struct tach_reader *r, const uint64_t *o, uint64_t at)
{
	struct stackprof_state *st = r->state;
	struct tachi_jtok t;
	int64_t iv;
	int rc = tachi_jr_need_string(r, o[0], at, "not a stackprof dump: no \"mode\"",
				      "\"mode\" must be a string", &t);
	if (rc)
		return rc;
	st->mode = tachi_json_str_eq(r->in.data, &t, "cpu")	  ? M_CPU :
		   tachi_json_str_eq(r->in.data, &t, "object") ? M_OBJECT : M_TIME;
	if ((rc = tachi_jr_opt_int(r, o[1], "\"interval\"", 1, INT64_MAX, false, &iv)))
		return rc;
	if (iv < 0 && st->mode == M_CPU)
		return tachi_jr_bad(r, at, "a cpu-mode dump without its \"interval\"");
	if (iv > (int64_t)TACHI_MAX_INTERVAL_US && st->mode != M_OBJECT)
		return tachi_jr_bad(r, o[1], "\"interval\" is out of range");
	st->interval = iv < 0 ? 0 : (uint64_t)iv;
	return TACH_OK;
}

static void set_values(struct tach_reader *r)
{
	struct stackprof_state *st = r->state;
	struct tach_meta *m = &r->meta;
	m->start_time_us = 0;
	m->sample_time = st->mode != M_OBJECT;
	m->interval_us = st->mode != M_OBJECT ? st->interval : 0;
	if (st->mode == M_OBJECT)
		return;
	st->vt[0] = (struct tach_value_type){ "samples", "count" };
	st->vt[1] = (struct tach_value_type){ st->mode == M_CPU ? "cpu" : "wall", "nanoseconds" };
	m->value_type_count = 2;
	m->value_types = st->vt;
	m->weight_type = 0;
	m->default_type = 2;
	st->ext = (struct tach_sample_ext){ .size = sizeof(st->ext), .value_count = 2,
					    .values = st->vals };
}

static int sp_open(struct tach_reader *r)
{
	static const char *const want[] = { "mode", "interval", "frames", "raw",
					    "raw_timestamp_deltas" };
	struct stackprof_state *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[5];
	int rc = tachi_jr_top(r, &j, &t, "not a stackprof dump: expected a JSON object");
	if (rc || (rc = tachi_json_keys(&j, want, o, 5)) || (rc = tachi_json_end(&j)))
		return rc;
	uint64_t at = t.off;
	if (o[2] == NONE)
		return tachi_jr_bad(r, at, "not a stackprof dump: no \"frames\"");
	if (o[3] == NONE)
		return tachi_jr_bad(r, at, "a stackprof dump without \"raw\" (recorded without "
				    "raw: true): its call graph holds no stacks");
	if ((rc = parse_mode(r, o, at)))
		return rc;
	if (o[4] == NONE && st->mode == M_TIME)
		return tachi_jr_bad(r, at, "no \"raw_timestamp_deltas\", which weigh the samples");
	if ((rc = parse_frames(r, o[2])) ||
	    (rc = tachi_jr_begin_array(r, &st->raw, o[3], "raw")))
		return rc;
	st->has_deltas = o[4] != NONE;
	if (st->has_deltas &&
	    (rc = tachi_jr_begin_array(r, &st->deltas, o[4], "raw_timestamp_deltas")))
		return rc;
	set_values(r);
	return TACH_OK;
}

/* ---- samples ---- */

/* The next element of raw, an integer in [min, max]; what names it. */
static int raw_int(struct tach_reader *r, int64_t min, int64_t max, const char *what,
		   uint64_t *off, int64_t *v)
{
	struct stackprof_state *st = r->state;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_json_elem(&st->raw, &more);
	if (rc)
		return rc;
	if (!more)
		return tachi_jr_bad(r, st->raw.pos - 1, "\"raw\" ends inside an entry");
	if ((rc = tachi_json_value(&st->raw, &t)))
		return rc;
	*off = t.off;
	if (!tachi_json_tok_int(r->in.data, &t, min, max, v))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off,
			     "%s must be an integer %lld..%lld", what, (long long)min, (long long)max);
	return TACH_OK;
}

/* The frame of id at off: its index. */
static int find_frame(struct tach_reader *r, int64_t id, uint64_t off, uint32_t *idx)
{
	struct stackprof_state *st = r->state;
	size_t lo = 0, hi = st->nframes;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->frames[mid].id < (uint64_t)id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo == st->nframes || st->frames[lo].id != (uint64_t)id)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "frame id %lld is not in \"frames\"", (long long)id);
	*idx = (uint32_t)lo;
	return TACH_OK;
}

/* The entry's stack into st->cur, the previous one kept in st->prev. */
static int read_stack(struct tach_reader *r, int64_t n, uint64_t at)
{
	struct stackprof_state *st = r->state;
	uint32_t *sw = st->prev;
	size_t swc = st->prev_cap;
	st->prev = st->cur, st->prev_cap = st->cur_cap, st->prev_depth = st->depth;
	st->cur = sw, st->cur_cap = swc, st->depth = 0;
	if (!TACHI_RESERVE(st->cur, st->cur_cap, (size_t)n + 1))
		return tachi_jr_nomem(r);
	for (int64_t i = 0; i < n; i++) {
		int64_t id;
		uint64_t off;
		int rc = raw_int(r, 0, INT64_MAX, "a frame id", &off, &id);
		if (rc || (rc = find_frame(r, id, off, &st->cur[st->depth])))
			return rc;
		st->depth++;
	}
	if (n != 1 || !st->frames[st->cur[0]].gc || !st->prev_depth)
		return TACH_OK;
	/* a collection alone: on the stack it interrupted, as speedscope puts it */
	if ((uint64_t)st->prev_depth + 1 > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, at, "a stack of %llu frames is deeper "
			     "than the limit of %u", (unsigned long long)st->prev_depth + 1,
			     r->lim.max_depth);
	if (!TACHI_RESERVE(st->cur, st->cur_cap, (size_t)st->prev_depth + 1))
		return tachi_jr_nomem(r);
	uint32_t gc = st->cur[0];
	memcpy(st->cur, st->prev, st->prev_depth * sizeof(uint32_t));
	st->cur[st->prev_depth] = gc;
	st->depth = st->prev_depth + 1;
	return TACH_OK;
}

/* The next count deltas: the time they add up to (µs) and the first one's end. */
static int read_deltas(struct tach_reader *r, int64_t count, uint64_t at, uint64_t *sum,
		       uint64_t *first)
{
	struct stackprof_state *st = r->state;
	*sum = 0;
	*first = st->now_us;
	for (int64_t i = 0; st->has_deltas && i < count; i++) {
		struct tachi_jtok t;
		bool more;
		int64_t d;
		int rc = tachi_json_elem(&st->deltas, &more);
		if (rc || (rc = more ? tachi_json_value(&st->deltas, &t) : TACH_OK))
			return rc;
		if (!more)
			return tachi_jr_bad(r, at, "\"raw_timestamp_deltas\" ends before this "
					    "entry's samples");
		if (!tachi_json_tok_int(r->in.data, &t, 0, INT64_MAX, &d))
			return tachi_jr_bad(r, t.off, "a timestamp delta must be an integer 0.."
					    "9223372036854775807");
		if (__builtin_add_overflow(st->now_us, (uint64_t)d, &st->now_us) ||
		    st->now_us > UINT64_MAX / 1000)
			return tachi_jr_bad(r, t.off, "the timestamps run past 64 bits of nanoseconds");
		if (!i)
			*first = st->now_us;
		*sum += (uint64_t)d;
	}
	return TACH_OK;
}

/* The entry's weight, time and values, its count at off. */
static int weigh(struct tach_reader *r, int64_t count, uint64_t off)
{
	struct stackprof_state *st = r->state;
	struct tach_sample *s = &r->sample;
	uint64_t sum, first, us;
	if ((uint64_t)count > r->lim.max_samples - st->total)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off,
			     "the counts add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	st->total += (uint64_t)count;
	int rc = read_deltas(r, count, off, &sum, &first);
	if (rc)
		return rc;
	us = st->mode == M_TIME ? sum : 0;
	if (st->mode == M_CPU && (__builtin_mul_overflow((uint64_t)count, st->interval, &us) ||
				  us > INT64_MAX / 1000))
		return tachi_jr_bad(r, off, "count × interval runs past 64 bits of nanoseconds");
	s->weight = (uint64_t)count;
	s->time_ns = us * 1000;
	s->timestamp_us = first;
	st->vals[0] = count;
	st->vals[1] = (int64_t)s->time_ns;
	r->ext = st->mode == M_OBJECT ? NULL : &st->ext;
	return TACH_OK;
}

static int frame_id(struct tach_reader *r, struct stackprof_frame *f, uint32_t *id)
{
	struct stackprof_state *st = r->state;
	if (f->dict == NO_ID) {
		struct tach_frame fr = { 0, 0, f->line, f->line, -1, -1, TACH_NO_OPCODE };
		uint64_t offs[2] = { f->name_off, f->file_off };
		uint32_t *ids[2] = { &fr.func, &fr.file };
		static const char *const none[2] = { "(unknown)", "~" };
		for (int i = 0; i < 2; i++) {
			struct tachi_json j;
			struct tachi_jtok t;
			size_t n = strlen(none[i]);
			const char *s = none[i];
			if (offs[i] != NONE) {
				int rc = tachi_jr_value_at(r, &j, offs[i], &t);
				if (rc || (rc = tachi_jr_string(r, &t, &st->sbuf, &st->sbuf_cap, &n)))
					return rc;
				s = st->sbuf;
			}
			if (tach_dict_intern_string(&r->dict, s, n, ids[i]))
				return tachi_jr_nomem(r);
		}
		if (tach_dict_intern_frame(&r->dict, &fr, &f->dict))
			return tachi_jr_nomem(r);
	}
	*id = f->dict;
	return TACH_OK;
}

static int sp_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct stackprof_state *st = r->state;
	struct tach_sample *s = &r->sample;
	struct tachi_jtok t;
	bool more;
	int64_t n, count;
	uint64_t off;
	int rc = tachi_json_elem(&st->raw, &more);
	if (rc || !more)
		return rc ? rc : TACH_EOF;
	if ((rc = tachi_json_value(&st->raw, &t)))
		return rc;
	if (!tachi_json_tok_int(r->in.data, &t, 1, INT64_MAX, &n))
		return tachi_jr_bad(r, t.off, "an entry's frame count must be an integer of 1 or more");
	if ((uint64_t)n > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, t.off, "a stack of %lld frames is "
			     "deeper than the limit of %u", (long long)n, r->lim.max_depth);
	if ((rc = read_stack(r, n, t.off)) ||
	    (rc = raw_int(r, 1, INT64_MAX, "an entry's count", &off, &count)) ||
	    (rc = weigh(r, count, off)))
		return rc;
	if (!TACHI_RESERVE(st->out, st->out_cap, st->depth))
		return tachi_jr_nomem(r);
	for (uint32_t i = 0; i < st->depth; i++)
		if ((rc = frame_id(r, &st->frames[st->cur[i]], &st->out[st->depth - 1 - i])))
			return rc;
	s->thread_id = 0;
	s->interp_id = 0;
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

static void sp_free(struct tach_reader *r)
{
	struct stackprof_state *st = r->state;
	free(st->frames);
	free(st->cur);
	free(st->prev);
	free(st->out);
	free(st->sbuf);
}

const struct tachi_reader_ops tachi_stackprof_reader_ops = {
	.state_size = sizeof(struct stackprof_state),
	.open = sp_open,
	.next = sp_next,
	.free = sp_free,
	.whole_input = true,
};
