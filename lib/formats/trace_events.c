/* The event array of a Chrome trace-event file: an object with a "traceEvents" array
 * (other keys skipped) or a bare array of events, which may end without its "]" (the
 * format allows it: Chrome leaves it open when tracing stops abruptly). */
#include "formats/trace_events.h"
#include "formats/json_read.h"

#define NONE UINT64_MAX

/* A bare event array that the input ends inside, after a whole event (and its comma). */
static bool ends_open(const struct tachi_json *j)
{
	size_t i = j->pos;
	bool comma = false;
	for (; i < j->n; i++) {
		uint8_t c = j->p[i];
		if (c == ',' && !comma)
			comma = true;
		else if (c != ' ' && c != '\t' && c != '\n' && c != '\r')
			return false;
	}
	return j->depth == 1;
}

/* j inside the event array: off is "traceEvents"' value, NONE for a bare array. */
static int begin(struct tach_reader *r, struct tachi_json *j, uint64_t *off)
{
	struct tachi_jtok t;
	int rc = tachi_jr_value_at(r, j, tachi_json_bom(r->in.data, r->in.size), &t);
	*off = NONE;
	if (rc)
		return rc;
	if (t.type == TJ_OBJECT) {
		uint64_t at = t.off;
		if ((rc = tachi_json_keys(j, (const char *const[]){ "traceEvents" }, off, 1)) ||
		    (rc = tachi_json_end(j)))
			return rc;
		if (*off == NONE)
			return tachi_jr_bad(r, at, "not a Chrome trace: no \"traceEvents\"");
		return tachi_jr_begin_array(r, j, *off, "traceEvents");
	}
	if (t.type != TJ_ARRAY)
		return tachi_jr_bad(r, t.off, "not a Chrome trace: expected an object or an array");
	return TACH_OK;
}

int tachi_trace_events(struct tach_reader *r, tachi_trace_event_fn fn, void *ctx)
{
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t off;
	bool more, open = false;
	int rc = begin(r, &j, &off);
	if (rc)
		return rc;
	uint32_t seq = 0;
	while (!(open = off == NONE && ends_open(&j)) && !(rc = tachi_json_elem(&j, &more)) && more) {
		if ((rc = tachi_json_value(&j, &t)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, "an event must be an object");
		if (seq == UINT32_MAX)
			return tachi_jr_bad(r, t.off, "more than 2^32 - 1 events");
		if ((rc = fn(r, &j, t.off, seq++, ctx)))
			return rc;
	}
	if (!rc && off == NONE && !open)
		rc = tachi_json_end(&j);
	return rc;
}
