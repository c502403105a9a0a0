/* Safari timeline recording reader: the JSON that Safari's Web Inspector exports from its
 * Timelines tab (Export, "NAME-recording.json"), read as speedscope's importer (safari.ts)
 * reads it, so that the stacks, their times and the total are speedscope's.
 *
 * A file is one object {"version": 1, "recording": {"displayName", "startTime",
 * "endTime", "instrumentTypes", "records", ..., "sampleStackTraces": [{"timestamp",
 * "stackFrames": [{"sourceID", "name", "line", "column", "url", ...}]}],
 * "sampleDurations": [seconds]}, "overview"}; only "version", the samples and their
 * durations are read (a version other than 1 is read as 1, with a warning, as speedscope
 * warns). A sample is JavaScriptCore's stack at its "timestamp" (seconds of the page's
 * clock), innermost frame first, standing for sampleDurations' entry of its index (seconds;
 * entries past the samples' count are not read). A frame is its function "name", or where
 * that is empty (or absent or null) "(anonymous BASENAME:LINE)" with the url's last path
 * segment, "(anonymous)" without a url; its "url" the file ("~" when empty, absent or
 * null), its "line" and "column" as Safari gives them (1-based). Frames are distinct by
 * (name, url, line, column), as speedscope keys them.
 *
 * What a record becomes: a sample at its timestamp (µs) standing for its duration as time
 * (meta.sample_time 1), count 1, thread 0; one whose duration is 0 is no record (speedscope
 * drops it); one with no frames is a record with an empty stack. meta.duration_ns is
 * speedscope's total: the larger of the last timestamp less the first plus the first
 * duration, and the sum of the durations with the gaps between samples longer than 2 ms
 * (a gap: a sample's timestamp less its duration less the timestamp before it). Times are
 * read to the nanosecond, exactly.
 *
 * Refused with the byte offset, where speedscope refuses the file (fails on it or imports
 * nothing): no "recording" object; no "sampleStackTraces" or "sampleDurations" array; no
 * sample; a sample or a frame that is no object, stackFrames that are no array; a negative
 * duration. And where speedscope's numbers would be NaN, or its names no names: a
 * timestamp or duration that is no number (or too few durations), a name or url that is
 * no string (or null), a line or column that is no integer 0..2^31-1 (or null); a negative
 * timestamp, a time past 2^63 ns; a stack deeper than max-depth. Memory is the file plus a
 * record per sample and a frame id per frame in them. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/json_read.h"
#include "formats/safari/safari.h"

#define NONE UINT64_MAX
#define GAP_NS 2000000

struct sfsample {
	int64_t ts, dur;        /* ns */
	size_t first;           /* its frames in sf->ids */
	uint32_t depth;
};

struct sfread {
	struct sfsample *smp;
	size_t nsmp, smp_cap, next;
	uint32_t *ids;
	size_t nids, ids_cap;
	int64_t *dur;
	size_t ndur, dur_cap;
	char *buf, *url, *name;
	size_t buf_cap, url_cap, name_cap;
};

/* A number of seconds at off as ns; what names it. */
static int seconds(struct tach_reader *r, const struct tachi_jtok *t, const char *what,
		   int64_t *ns)
{
	return tachi_jr_number(r, t, 9, what, ns);
}

/* An optional string (absent or null: *n 0, *given false) into *buf. */
static int opt_string(struct tach_reader *r, uint64_t off, const char *what, char **buf,
		      size_t *cap, size_t *n, bool *given)
{
	struct tachi_json j;
	struct tachi_jtok t;
	*n = 0, *given = false;
	if (off == NONE)
		return TACH_OK;
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc || t.type == TJ_NULL)
		return rc;
	if (t.type != TJ_STRING)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off,
			     "a Safari stack frame's %s must be a string or null", what);
	*given = true;
	return tachi_jr_string(r, &t, buf, cap, n);
}

/* The name speedscope shows for a frame: its own, else "(anonymous BASENAME:LINE)" where
 * it has a url (LINE as JavaScript writes the value: a number, null or undefined). */
static int display_name(struct tach_reader *r, struct sfread *s, size_t nl, size_t ul,
			uint64_t line_off, int64_t line, size_t *out)
{
	if (nl) {
		*out = nl;
		return TACH_OK;
	}
	if (!ul) {
		*out = 11;
		return TACHI_RESERVE(s->name, s->name_cap, 12) ? (memcpy(s->name, "(anonymous)", 11), TACH_OK)
							       : tachi_jr_nomem(r);
	}
	size_t b = ul;
	while (b && s->url[b - 1] != '/')
		b--;
	char num[24];
	if (line_off == NONE)
		snprintf(num, sizeof(num), "undefined");
	else if (line < 0)
		snprintf(num, sizeof(num), "null");
	else
		snprintf(num, sizeof(num), "%lld", (long long)line);
	size_t nn = strlen(num), len = 11 + (ul - b) + 1 + nn + 1;
	if (!TACHI_RESERVE(s->name, s->name_cap, len + 1))
		return tachi_jr_nomem(r);
	memcpy(s->name, "(anonymous ", 11);
	memcpy(s->name + 11, s->url + b, ul - b);
	s->name[11 + ul - b] = ':';
	memcpy(s->name + 12 + ul - b, num, nn);
	s->name[len - 1] = ')';
	*out = len;
	return TACH_OK;
}

/* A frame object whose '{' j has just read: its frame into *id. */
static int read_frame(struct tach_reader *r, struct tachi_json *j, uint32_t *id)
{
	static const char *const want[] = { "name", "url", "line", "column" };
	struct sfread *s = r->state;
	uint64_t o[4];
	size_t nl, ul, fl;
	bool has_name, has_url;
	int64_t line, col;
	int rc = tachi_json_keys(j, want, o, 4);
	if (rc || (rc = tachi_jr_opt_int(r, o[2], "a Safari stack frame's line", 0, INT32_MAX,
					 true, &line)) ||
	    (rc = tachi_jr_opt_int(r, o[3], "a Safari stack frame's column", 0, INT32_MAX, true,
				   &col)) ||
	    (rc = opt_string(r, o[0], "name", &s->buf, &s->buf_cap, &nl, &has_name)) ||
	    (rc = opt_string(r, o[1], "url", &s->url, &s->url_cap, &ul, &has_url)))
		return rc;
	if ((rc = display_name(r, s, nl, ul, o[2], line, &fl)))
		return rc;
	const char *func = nl ? s->buf : s->name;
	struct tach_frame f = { 0, 0, line < 0 ? TACH_NO_LINE : (int32_t)line, TACH_NO_LINE,
				col < 0 ? -1 : (int32_t)col, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, ul ? s->url : "~", ul ? ul : 1, &f.file) ||
	    tach_dict_intern_string(&r->dict, func, fl, &f.func) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return tachi_jr_nomem(r);
	return TACH_OK;
}

/* A sample object whose '{' j has just read at off. */
static int read_sample(struct tach_reader *r, struct tachi_json *j, uint64_t off)
{
	static const char *const want[] = { "timestamp", "stackFrames" };
	struct sfread *s = r->state;
	uint64_t o[2];
	struct tachi_json a;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_json_keys(j, want, o, 2);
	if (rc)
		return rc;
	if (o[0] == NONE || o[1] == NONE)
		return tachi_jr_bad(r, off, "a Safari sample without its \"timestamp\" and "
				    "\"stackFrames\"");
	if (!TACHI_RESERVE(s->smp, s->smp_cap, s->nsmp + 1))
		return tachi_jr_nomem(r);
	struct sfsample *x = &s->smp[s->nsmp];
	if ((rc = tachi_jr_value_at(r, &a, o[0], &t)) ||
	    (rc = seconds(r, &t, "a Safari sample's timestamp", &x->ts)))
		return rc;
	if (x->ts < 0)
		return tachi_jr_bad(r, t.off, "a Safari sample's timestamp is negative");
	if ((rc = tachi_jr_begin_array(r, &a, o[1], "stackFrames")))
		return rc;
	x->first = s->nids;
	x->depth = 0;
	while (!(rc = tachi_json_elem(&a, &more)) && more) {
		if ((rc = tachi_json_value(&a, &t)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "a Safari stack frame must be an object");
		if (x->depth >= r->lim.max_depth)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, t.off,
				     "stack deeper than the limit of %u frames (see --max-depth)",
				     r->lim.max_depth);
		if (!TACHI_RESERVE(s->ids, s->ids_cap, s->nids + 1))
			return tachi_jr_nomem(r);
		if ((rc = read_frame(r, &a, &s->ids[s->nids])))
			return rc;
		s->nids++, x->depth++;
	}
	if (rc)
		return rc;
	s->nsmp++;
	return TACH_OK;
}

static int read_samples(struct tach_reader *r, uint64_t off)
{
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_jr_begin_array(r, &j, off, "sampleStackTraces");
	while (!rc && !(rc = tachi_json_elem(&j, &more)) && more) {
		if ((rc = tachi_json_value(&j, &t)))
			break;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "a Safari sample must be an object");
		rc = read_sample(r, &j, t.off);
	}
	return rc;
}

/* The durations of the samples (the entries after them are not read). */
static int read_durations(struct tach_reader *r, uint64_t off)
{
	struct sfread *s = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_jr_begin_array(r, &j, off, "sampleDurations");
	while (!rc && s->ndur < s->nsmp && !(rc = tachi_json_elem(&j, &more)) && more) {
		if ((rc = tachi_json_value(&j, &t)))
			break;
		if (!TACHI_RESERVE(s->dur, s->dur_cap, s->ndur + 1))
			return tachi_jr_nomem(r);
		if ((rc = seconds(r, &t, "a Safari sample duration", &s->dur[s->ndur])))
			return rc;
		if (s->dur[s->ndur++] < 0)
			return tachi_jr_bad(r, t.off, "a Safari sample duration is negative "
					    "(speedscope wants them non-negative)");
	}
	if (!rc && s->ndur < s->nsmp)
		return tachi_jr_bad(r, off, "fewer \"sampleDurations\" than samples");
	return rc;
}

/* speedscope's total: the samples' span from the first one's start, or the sum of what
 * it weighs (the durations, and the gaps longer than 2 ms), the larger. */
static int total(struct tach_reader *r, int64_t *out)
{
	struct sfread *s = r->state;
	const struct sfsample *a = &s->smp[0], *z = &s->smp[s->nsmp - 1];
	int64_t span, sum = 0, gap;
	bool over = __builtin_sub_overflow(z->ts, a->ts, &span) ||
		    __builtin_add_overflow(span, s->dur[0], &span);
	for (size_t i = 0; i < s->nsmp && !over; i++) {
		over |= __builtin_add_overflow(sum, s->dur[i], &sum);
		if (i && !__builtin_sub_overflow(s->smp[i].ts, s->dur[i], &gap) &&
		    !__builtin_sub_overflow(gap, s->smp[i - 1].ts, &gap) && gap > GAP_NS)
			over |= __builtin_add_overflow(sum, gap, &sum);
	}
	if (over)
		return tachi_jr_bad(r, 0, "a Safari recording's times add up past 2^63 ns");
	*out = span > sum ? span : sum;
	return TACH_OK;
}

static int sf_open(struct tach_reader *r)
{
	static const char *const top_keys[] = { "version", "recording" };
	static const char *const rec_keys[] = { "sampleStackTraces", "sampleDurations" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[2], ro[2];
	int rc = tachi_jr_top(r, &j, &t, "not a Safari timeline recording: expected a JSON object");
	if (rc || (rc = tachi_json_keys(&j, top_keys, o, 2)) || (rc = tachi_json_end(&j)))
		return rc;
	if (o[1] == NONE)
		return tachi_jr_bad(r, t.off, "not a Safari timeline recording: no \"recording\"");
	if ((rc = tachi_jr_value_at(r, &j, o[1], &t)))
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "a Safari recording's \"recording\" must be an object");
	if ((rc = tachi_json_keys(&j, rec_keys, ro, 2)))
		return rc;
	if (ro[0] == NONE || ro[1] == NONE)
		return tachi_jr_bad(r, t.off, "a Safari recording without \"sampleStackTraces\" and "
				    "\"sampleDurations\": no samples");
	int64_t version = 0;
	if (o[0] != NONE && (rc = tachi_jr_value_at(r, &j, o[0], &t)))
		return rc;
	if (o[0] == NONE || !tachi_json_tok_int(r->in.data, &t, 1, 1, &version))
		tachi_warn(&r->warn, TACH_POS_OFFSET, o[0] == NONE ? 0 : o[0],
			   "a Safari recording whose version is not 1: read as version 1");
	if ((rc = read_samples(r, ro[0])))
		return rc;
	struct sfread *s = r->state;
	if (!s->nsmp)
		return tachi_jr_bad(r, ro[0], "a Safari recording without samples (speedscope "
				    "imports none)");
	int64_t tot = 0;
	if ((rc = read_durations(r, ro[1])) || (rc = total(r, &tot)))
		return rc;
	r->meta.sample_time = 1;
	r->meta.interval_us = 0;
	r->meta.duration_ns = tot;
	return TACH_OK;
}

static int sf_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct sfread *s = r->state;
	while (s->next < s->nsmp && !s->dur[s->next])
		s->next++;
	if (s->next == s->nsmp)
		return TACH_EOF;
	size_t i = s->next++;
	const struct sfsample *x = &s->smp[i];
	struct tach_sample *o = &r->sample;
	o->thread_id = 0;
	o->interp_id = 0;
	o->timestamp_us = (uint64_t)x->ts / 1000;
	o->time_ns = (uint64_t)s->dur[i];
	o->status = TACH_STATUS_UNKNOWN;
	o->weight = 1;
	o->depth = x->depth;
	o->same_outer = 0;
	o->frames = s->ids + x->first;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples++;
	*out = o;
	return TACH_OK;
}

static void sf_free(struct tach_reader *r)
{
	struct sfread *s = r->state;
	free(s->smp);
	free(s->ids);
	free(s->dur);
	free(s->buf);
	free(s->url);
	free(s->name);
}

const struct tachi_reader_ops tachi_safari_reader_ops = {
	.state_size = sizeof(struct sfread),
	.open = sf_open,
	.next = sf_next,
	.free = sf_free,
	.whole_input = true,
};
