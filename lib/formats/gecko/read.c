/* Firefox Profiler files in: the Gecko profile (Firefox's own, samply's, tach2gecko's; also
 * inside the {"profile": ...} a DevTools recording saves) and the processed format the
 * profiler's web app saves and uploads (tach2gecko --processed), read as the profiler's
 * importer reads them, so the stacks and names are the ones its call tree shows.
 *
 * A Gecko profile: "meta" (startTime, ms of the epoch; interval, ms), "libs", "threads",
 * and "processes", each a profile of the same shape for another process with its own
 * startTime and libraries. A thread: "name", "tid", "pid", and tables (read_tables.c):
 * samples (stack, time in ms from its profile's start), stackTable (prefix, frame),
 * frameTable (location, line, column), stringTable, markers. A processed profile: the same
 * threads with column tables, their strings in shared.stringArray (or, in older versions,
 * each thread's stringArray), funcTable and resourceTable, the libraries in "libs" (or each
 * thread's), and the samples weighed by samples.weight as samples.weightType says.
 *
 * What a sample becomes: one sample (weight 1) of its thread at its own time, µs: the
 * Gecko form has no other value. Processed samples weigh what their weight says: a count
 * (weightType "samples"), bytes ("bytes", meta.weight_unit), or the time the sample stands
 * for ("tracing-ms": time_ns, meta.sample_time). A sample without a stack is a sample of
 * an empty stack, but a thread's last one, which marks where the one before ends (as
 * tach2gecko writes it) and is no sample. The thread: "tid" (its place in the file,
 * counting from 1, when it has none), and unless the name is the one tach2gecko gives a
 * thread without one ("Thread N (tid T)"), a root frame "[comm]" of its name and pid,
 * which writers take thread names from (formats/comm.h). The thread states that
 * tach2gecko keeps as PythonThreadState markers (a state's name, where its run of samples
 * starts, how many) come back as each sample's status; without such markers the status is
 * unknown. Frames: read_names.c.
 *
 * The whole file is read and checked at open; a thread's tables are read when its first
 * sample is asked for, and dropped after its last. Memory: the file, the thread's
 * tables, a frame id per frame row. Refused with the byte offset: no meta or threads, a
 * table without its columns, a cell of the wrong kind, an index past its table, a stack
 * whose prefix is not an earlier row (which is how a loop is refused), a stack deeper than
 * max-depth, samples past max-samples, times before 0 or past 64 bits of µs, threads that
 * weigh their samples in different kinds. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/format.h"
#include "formats/comm.h"
#include "formats/json_read.h"
#include "formats/gecko/gecko.h"
#include "formats/gecko/read.h"

/* Processes nest: Firefox writes one level; more is allowed, up to this. */
#define GK_MAX_NESTING 16

/* ---- open ---- */

/* The meta's markerSchema names PythonThreadState, and its sampleUnits are there: what
 * tach2gecko writes where it keeps thread states. */
static bool states_kept(struct tach_reader *r, uint64_t schema, uint64_t units)
{
	static const char *const want[] = { "name" };
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	if (schema == GK_NONE || units == GK_NONE || tachi_jr_value_at(r, &j, schema, &t) ||
	    t.type != TJ_ARRAY)
		return false;
	while (!tachi_json_elem(&j, &more) && more) {
		struct tachi_json peek = j, c;
		uint64_t o;
		if (tachi_json_value(&peek, &t) || tachi_json_skip(&j))
			return false;
		if (t.type == TJ_OBJECT && !tachi_json_keys(&peek, want, &o, 1) && o != GK_NONE &&
		    !tachi_jr_value_at(r, &c, o, &t) && t.type == TJ_STRING &&
		    tachi_json_str_eq(r->in.data, &t, "PythonThreadState"))
			return true;
	}
	return false;
}

/* The index of the category named name in the categories at off, or -1. */
static int64_t category(struct tach_reader *r, uint64_t off, const char *name)
{
	static const char *const want[] = { "name" };
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	if (off == GK_NONE || tachi_jr_value_at(r, &j, off, &t) || t.type != TJ_ARRAY)
		return -1;
	for (int64_t i = 0; !tachi_json_elem(&j, &more) && more; i++) {
		struct tachi_json peek = j, c;
		uint64_t o;
		if (tachi_json_value(&peek, &t) || tachi_json_skip(&j))
			return -1;
		if (t.type == TJ_OBJECT && !tachi_json_keys(&peek, want, &o, 1) && o != GK_NONE &&
		    !tachi_jr_value_at(r, &c, o, &t) && t.type == TJ_STRING &&
		    tachi_json_str_eq(r->in.data, &t, name))
			return i;
	}
	return -1;
}

static int meta_times(struct tach_reader *r, uint64_t off, int64_t *start, int64_t *interval)
{
	static const char *const want[] = { "startTime", "interval", "markerSchema",
					    "sampleUnits", "categories" };
	struct gecko_rstate *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[5];
	int64_t *out[2] = { start, interval };
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc)
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "\"meta\" must be an object");
	if ((rc = tachi_json_keys(&j, want, o, 5)))
		return rc;
	if (!st->recorded && states_kept(r, o[2], o[3])) {
		st->recorded = true;
		st->cat_other = category(r, o[4], "Other");
	}
	for (int i = 0; i < 2; i++) {
		*out[i] = 0;
		if (o[i] == GK_NONE || (rc = tachi_jr_value_at(r, &j, o[i], &t)) ||
		    t.type == TJ_NULL)
			continue;
		if ((rc = tachi_jr_number(r, &t, i ? 3 : 6, i ? "meta.interval" : "meta.startTime",
					  out[i])))
			return rc;
		if (*out[i] < 0 || (i && (uint64_t)*out[i] > TACHI_MAX_INTERVAL_US))
			return tachi_jr_bad(r, t.off, i ? "meta.interval is out of range" :
						      "meta.startTime is before 1970");
	}
	return rc;
}

static int add_threads(struct tach_reader *r, uint64_t off, int64_t start_ns, size_t libs_at,
		       size_t nlibs)
{
	struct gecko_rstate *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_jr_begin_array(r, &j, off, "threads");
	while (!rc && !(rc = tachi_json_elem(&j, &more)) && more) {
		struct tachi_json peek = j;
		if ((rc = tachi_json_value(&peek, &t)) || (rc = tachi_json_skip(&j)))
			break;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "a thread must be an object");
		if (st->nth >= UINT32_MAX - 1)
			return tachi_jr_bad(r, t.off, "more than 2^32 - 2 threads");
		if (!TACHI_RESERVE(st->th, st->th_cap, st->nth + 1))
			return tachi_jr_nomem(r);
		st->th[st->nth] = (struct gecko_rthread){ t.off, start_ns, libs_at, nlibs,
							  (uint32_t)st->nth + 1 };
		st->nth++;
	}
	return rc;
}

/* The profile object at off and the processes in it, nest deep. */
static int walk_profile(struct tach_reader *r, uint64_t off, int nest)
{
	struct gecko_rstate *st = r->state;
	static const char *const want[] = { "meta", "libs", "threads", "processes" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[4];
	int64_t start, interval;
	bool more;
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc || (rc = tachi_json_keys(&j, want, o, 4)))
		return rc;
	if (o[0] == GK_NONE || o[2] == GK_NONE)
		return tachi_jr_bad(r, off, "not a Firefox Profiler profile: no \"meta\" and "
				    "\"threads\"");
	if ((rc = meta_times(r, o[0], &start, &interval)))
		return rc;
	if (!nest)
		r->meta.interval_us = (uint64_t)interval;
	size_t at = st->nlibs;
	if (o[1] != GK_NONE && (rc = tachi_gk_libs(r, o[1])))
		return rc;
	if ((rc = add_threads(r, o[2], start, at, st->nlibs - at)) || o[3] == GK_NONE ||
	    st->processed)
		return rc;
	if (nest >= GK_MAX_NESTING)
		return tachi_jr_bad(r, o[3], "processes nested too deep");
	if ((rc = tachi_jr_begin_array(r, &j, o[3], "processes")))
		return rc;
	while (!(rc = tachi_json_elem(&j, &more)) && more) {
		struct tachi_json peek = j;
		if ((rc = tachi_json_value(&peek, &t)) || (rc = tachi_json_skip(&j)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "a process must be an object");
		if ((rc = walk_profile(r, t.off, nest + 1)))
			return rc;
	}
	return rc;
}

/* Which form the profile at off is: processed when its meta has a processed version or
 * its first thread a function table (the processed format's older versions). */
static int find_form(struct tach_reader *r, uint64_t meta, uint64_t threads)
{
	struct gecko_rstate *st = r->state;
	static const char *const mwant[] = { "preprocessedProfileVersion" };
	static const char *const twant[] = { "funcTable" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o;
	bool more;
	int rc = tachi_jr_value_at(r, &j, meta, &t);
	if (rc || t.type != TJ_OBJECT || (rc = tachi_json_keys(&j, mwant, &o, 1)))
		return rc;
	st->processed = o != GK_NONE;
	st->old = false;
	if (st->processed || (rc = tachi_jr_value_at(r, &j, threads, &t)) || t.type != TJ_ARRAY ||
	    (rc = tachi_json_elem(&j, &more)) || !more || (rc = tachi_json_value(&j, &t)) ||
	    t.type != TJ_OBJECT || (rc = tachi_json_keys(&j, twant, &o, 1)))
		return rc;
	st->processed = st->old = o != GK_NONE;
	return TACH_OK;
}

/* The profile's weight kind: every thread's must be the same. */
static int weight_kind(struct tach_reader *r)
{
	struct gecko_rstate *st = r->state;
	static const char *const want[] = { "samples" };
	st->wkind = GW_NONE;
	for (size_t i = 0; st->processed && i < st->nth; i++) {
		struct tachi_json j;
		struct tachi_jtok t;
		uint64_t o;
		int kind;
		int rc = tachi_jr_value_at(r, &j, st->th[i].off, &t);
		if (rc || (rc = tachi_json_keys(&j, want, &o, 1)))
			return rc;
		if (o == GK_NONE)
			return tachi_jr_bad(r, st->th[i].off, "a thread without its \"samples\"");
		if ((rc = tachi_gk_wkind(r, o, &kind)))
			return rc;
		if (i && kind != st->wkind)
			return tachi_jr_bad(r, o, "the threads weigh their samples in different kinds");
		st->wkind = kind;
	}
	return TACH_OK;
}

static void set_values(struct tach_reader *r)
{
	struct gecko_rstate *st = r->state;
	struct tach_meta *m = &r->meta;
	m->sample_time = st->wkind == GW_MS;
	if (st->wkind == GW_MS) {
		st->vt[0] = (struct tach_value_type){ "samples", "count" };
		st->vt[1] = (struct tach_value_type){ "wall", "nanoseconds" };
		m->value_type_count = 2;
		m->default_type = 2;
	} else if (st->wkind == GW_BYTES) {
		st->vt[0] = (struct tach_value_type){ "bytes", "bytes" };
		m->value_type_count = 1;
		m->default_type = 1;
		m->weight_unit = "bytes";
	}
	if (m->value_type_count)
		m->value_types = st->vt;
	m->weight_type = 0;
	st->ext = (struct tach_sample_ext){ .size = sizeof(st->ext),
					    .value_count = m->value_type_count,
					    .values = st->vals };
}

static int gk_open(struct tach_reader *r)
{
	struct gecko_rstate *st = r->state;
	static const char *const want[] = { "meta", "threads", "profile", "shared" };
	static const char *const swant[] = { "stringArray" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[4], top, sa;
	int64_t start, interval;
	int rc = tachi_jr_top(r, &j, &t, "not a Firefox Profiler profile: expected a JSON object");
	if (rc || (rc = tachi_json_keys(&j, want, o, 4)) || (rc = tachi_json_end(&j)))
		return rc;
	top = t.off;
	/* a DevTools recording: the profile is inside */
	if (o[0] == GK_NONE && o[2] != GK_NONE) {
		if ((rc = tachi_jr_value_at(r, &j, o[2], &t)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "\"profile\" must be an object");
		top = t.off;
		if ((rc = tachi_json_keys(&j, want, o, 4)))
			return rc;
	}
	if (o[0] == GK_NONE || o[1] == GK_NONE)
		return tachi_jr_bad(r, top, "not a Firefox Profiler profile: no \"meta\" and "
				    "\"threads\"");
	if ((rc = find_form(r, o[0], o[1])) || (rc = meta_times(r, o[0], &start, &interval)))
		return rc;
	st->shared_strings = GK_NONE;
	if (st->processed && o[3] != GK_NONE) {
		if ((rc = tachi_jr_value_at(r, &j, o[3], &t)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "\"shared\" must be an object");
		if ((rc = tachi_json_keys(&j, swant, &sa, 1)))
			return rc;
		st->shared_strings = sa;
	}
	r->meta.start_time_ns = start;
	r->meta.start_time_us = (uint64_t)(start / 1000 + (start % 1000 >= 500));
	if ((rc = walk_profile(r, top, 0)) || (rc = weight_kind(r)))
		return rc;
	st->libs_base = st->nlibs;
	set_values(r);
	return TACH_OK;
}

/* ---- samples ---- */

/* What the thread's name says, as tach2gecko names threads: "GeckoMain" the main thread
 * (no name of its own); "Thread N (tid T)" made up for a thread without one; "NAME (tid
 * T)" the thread NAME (its [comm] frame). ", interpreter I" before the ')' gives the
 * interpreter. Any other name is the thread's. *n is left the length of its own name, 0
 * for none. */
static void thread_name(struct gecko_rstate *st, const char *s, size_t *n)
{
	char buf[TACHI_THREAD_LABEL_MAX];
	static const char iid[] = ", interpreter ", tid[] = " (tid ";
	uint64_t v, t;
	st->main = *n == 9 && !memcmp(s, "GeckoMain", 9);
	if (st->main || (*n == tachi_thread_label(buf, st->t->ordinal, st->tid, 0) &&
			 !memcmp(buf, s, *n))) {
		*n = 0;
		return;
	}
	size_t at = 0, end = *n;
	for (size_t i = 0; i + sizeof(tid) - 1 < *n; i++)
		if (!memcmp(s + i, tid, sizeof(tid) - 1))
			at = i;
	if (!at || s[*n - 1] != ')')
		return;
	size_t a = at + sizeof(tid) - 1, b = a;
	while (b < end - 1 && s[b] >= '0' && s[b] <= '9')
		b++;
	if (!tachi_parse_dec(s + a, b - a, UINT64_MAX, &t) || t != st->tid)
		return;
	if (b != end - 1) {
		size_t c = b + sizeof(iid) - 1;
		if (end - 1 < c || memcmp(s + b, iid, sizeof(iid) - 1) ||
		    !tachi_parse_dec(s + c, end - 1 - c, UINT32_MAX, &v) || !v)
			return;
		st->iid = (uint32_t)v;
	}
	if (!memcmp(s, "Thread ", 7) && (size_t)(at - 7) < 21) {
		bool digits = at > 7;
		for (size_t i = 7; i < at; i++)
			digits &= s[i] >= '0' && s[i] <= '9';
		if (digits) {
			*n = 0;
			return;
		}
	}
	*n = at;
}

/* The id the thread's value at off gives (a number, or digits in a string), else -1. */
static int64_t thread_num(struct tach_reader *r, uint64_t off)
{
	struct tachi_json j;
	struct tachi_jtok t;
	int64_t v;
	uint64_t u;
	if (off == GK_NONE || tachi_jr_value_at(r, &j, off, &t))
		return -1;
	if (t.type == TJ_NUMBER)
		return tachi_json_tok_int(r->in.data, &t, 0, INT64_MAX, &v) ? v : -1;
	if (t.type == TJ_STRING && !t.escaped &&
	    tachi_parse_dec((const char *)r->in.data + t.start, t.len, INT64_MAX, &u))
		return (int64_t)u;
	return -1;
}

static int thread_ids(struct tach_reader *r)
{
	struct gecko_rstate *st = r->state;
	static const char *const want[] = { "tid", "pid", "name" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[3];
	int rc = tachi_jr_value_at(r, &j, st->t->off, &t);
	if (rc || (rc = tachi_json_keys(&j, want, o, 3)))
		return rc;
	int64_t tid = thread_num(r, o[0]), pid = thread_num(r, o[1]);
	st->tid = tid >= 0 ? (uint64_t)tid : st->t->ordinal;
	st->iid = 0;
	st->comm = GK_NO_ID;
	st->main = false;
	size_t n;
	if (o[2] == GK_NONE || (rc = tachi_jr_value_at(r, &j, o[2], &t)) || t.type != TJ_STRING)
		return rc;
	if ((rc = tachi_jr_string(r, &t, &st->sbuf, &st->sbuf_cap, &n)))
		return rc;
	/* the old processed versions' content process main thread, as the upgrade names it */
	if (st->old && n == 7 && !memcmp(st->sbuf, "Content", 7)) {
		if (!TACHI_RESERVE(st->sbuf, st->sbuf_cap, 9))
			return tachi_jr_nomem(r);
		memcpy(st->sbuf, "GeckoMain", 9);
		n = 9;
	}
	thread_name(st, st->sbuf, &n);
	if (!n)
		return TACH_OK;
	struct tach_frame fr = { .line = pid > 0 && pid <= INT32_MAX ? (int32_t)pid : -1,
				 .col = -1, .end_col = -1, .opcode = TACH_NO_OPCODE };
	fr.end_line = fr.line;
	if (tach_dict_intern_string(&r->dict, st->sbuf, n, &fr.func) ||
	    tach_dict_intern_string(&r->dict, "[comm]", 6, &st->comm_file) ||
	    (fr.file = st->comm_file, tach_dict_intern_frame(&r->dict, &fr, &st->comm)))
		return tachi_jr_nomem(r);
	return TACH_OK;
}

/* The next thread with samples, its tables read; false at the end. */
static int next_thread(struct tach_reader *r, bool *any)
{
	struct gecko_rstate *st = r->state;
	*any = false;
	while (st->cur < st->nth) {
		st->t = &st->th[st->cur++];
		st->si = 0;
		int rc = tachi_gk_tables(r);
		if (rc || (rc = thread_ids(r)))
			return rc;
		if (!st->s_stack.n)
			continue;
		size_t nf = st->processed ? st->f_func.n : st->f_loc.n;
		if (!TACHI_RESERVE(st->fdict, st->fdict_cap, nf + 1))
			return tachi_jr_nomem(r);
		for (size_t i = 0; i < nf; i++)
			st->fdict[i] = GK_NO_ID;
		free(st->status);
		st->status = NULL;
		st->status_cap = 0;
		if ((rc = tachi_gk_states(r)))
			return rc;
		*any = true;
		return TACH_OK;
	}
	return TACH_OK;
}

/* The stack of row (GK_NULL: empty) into st->out, innermost first, the [comm] root last. */
static int walk_stack(struct tach_reader *r, int64_t row, uint32_t *depth)
{
	struct gecko_rstate *st = r->state;
	size_t nrows = st->st_frame.n, nframes = st->processed ? st->f_func.n : st->f_loc.n;
	uint32_t d = 0;
	while (row != GK_NULL) {
		if (row < 0 || (size_t)row >= nrows)
			return tachi_jr_bad(r, st->t->off, "a stack index is past the stack table");
		int64_t fr = st->st_frame.v[row], prefix = gk_cell(&st->st_prefix, (size_t)row);
		if (fr < 0 || (size_t)fr >= nframes)
			return tachi_jr_bad(r, st->t->off, "a stack's frame is not in the frame table");
		if (prefix != GK_NULL && (prefix < 0 || prefix >= row))
			return tachi_jr_bad(r, st->t->off, "a stack's prefix is not an earlier row of "
					    "the stack table");
		if (d + 1 > r->lim.max_depth)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, st->t->off, "a stack deeper than "
				     "the limit of %u frames", r->lim.max_depth);
		if (!TACHI_RESERVE(st->out, st->out_cap, (size_t)d + 2))
			return tachi_jr_nomem(r);
		int rc = tachi_gk_frame(r, (size_t)fr, &st->out[d]);
		if (rc)
			return rc;
		d++;
		row = prefix;
	}
	/* tach2gecko keeps a perf or Chrome stack's own [comm] root */
	const struct tach_frame *root = d ? tach_dict_frame(&r->dict, st->out[d - 1]) : NULL;
	if (st->comm != GK_NO_ID && (!root || root->file != st->comm_file)) {
		if (!TACHI_RESERVE(st->out, st->out_cap, (size_t)d + 1))
			return tachi_jr_nomem(r);
		st->out[d++] = st->comm;
	}
	*depth = d;
	return TACH_OK;
}

/* The sample's weight and time as its thread weighs it; false: it weighs nothing. */
static int weigh(struct tach_reader *r, size_t i, bool *keep)
{
	struct gecko_rstate *st = r->state;
	struct tach_sample *s = &r->sample;
	int64_t w = gk_cell(&st->s_weight, i);
	s->weight = 1;
	s->time_ns = 0;
	*keep = true;
	if (st->t_wkind == GW_MS) {
		if (w != GK_NULL && w < 0)
			return tachi_jr_bad(r, st->t->off, "a sample's weight is negative");
		s->time_ns = w == GK_NULL ? 0 : (uint64_t)w;
	} else if (st->t_wkind != GW_NONE && w != GK_NULL) {
		*keep = w > 0;
		s->weight = w > 0 ? (uint64_t)w : 0;
	}
	if (*keep && s->weight > r->lim.max_samples - st->total)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, st->t->off, "more than %llu samples "
			     "(see --max-samples)", (unsigned long long)r->lim.max_samples);
	st->total += *keep ? s->weight : 0;
	st->vals[0] = (int64_t)s->weight;
	st->vals[1] = (int64_t)s->time_ns;
	return TACH_OK;
}

static int gk_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct gecko_rstate *st = r->state;
	struct tach_sample *s = &r->sample;
	for (;;) {
		bool any = true, keep;
		int rc = TACH_OK;
		if (!st->t || st->si >= st->s_stack.n)
			rc = next_thread(r, &any);
		if (rc || !any)
			return rc ? rc : TACH_EOF;
		size_t i = st->si++;
		int64_t stack = st->s_stack.v[i], tm = gk_cell(&st->s_time, i), ts;
		if (stack == GK_NULL && i + 1 == st->s_stack.n)
			continue;
		if (tm == GK_NULL)
			return tachi_jr_bad(r, st->t->off, "a sample without its time");
		/* one rounding, of the sum: a start and a time in ms, each rounded to the µs
		 * first, could be a µs off */
		if (__builtin_add_overflow(st->t->start_ns, tm, &ts) || ts < 0)
			return tachi_jr_bad(r, st->t->off, "a sample's time is before 1970 or past 64 "
					    "bits of nanoseconds");
		ts = ts / 1000 + (ts % 1000 >= 500);
		if ((rc = weigh(r, i, &keep)))
			return rc;
		if (!keep)
			continue;
		if ((rc = walk_stack(r, stack, &s->depth)))
			return rc;
		s->thread_id = st->tid;
		s->interp_id = st->iid;
		s->timestamp_us = (uint64_t)ts;
		s->status = st->status ? st->status[i] :
			    TACH_STATUS_UNKNOWN | (st->main ? TACH_STATUS_MAIN_THREAD : 0);
		s->same_outer = 0;
		s->frames = st->out;
		r->ext = st->ext.value_count ? &st->ext : NULL;
		r->stats.full_records++;
		r->stats.total_records++;
		r->stats.total_samples += s->weight;
		*out = s;
		return TACH_OK;
	}
}

static void gk_free(struct tach_reader *r)
{
	struct gecko_rstate *st = r->state;
	struct gecko_col *cols[] = { &st->s_stack, &st->s_time, &st->s_weight, &st->st_prefix,
				     &st->st_frame, &st->f_loc, &st->f_func, &st->f_line,
				     &st->f_col, &st->f_addr, &st->f_inline, &st->f_cat, &st->fn_name,
				     &st->fn_file, &st->fn_res, &st->fn_js, &st->r_lib, &st->r_name,
				     &st->m_name, &st->m_start, &st->m_data };
	for (size_t i = 0; i < sizeof(cols) / sizeof(cols[0]); i++)
		free(cols[i]->v);
	free(st->th);
	free(st->libs);
	free(st->str);
	free(st->fdict);
	free(st->status);
	free(st->out);
	free(st->sbuf);
}

const struct tachi_reader_ops tachi_gecko_reader_ops = {
	.state_size = sizeof(struct gecko_rstate),
	.open = gk_open,
	.next = gk_next,
	.free = gk_free,
	.whole_input = true,
};
