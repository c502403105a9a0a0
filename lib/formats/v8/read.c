/* V8 CPU profile reader: the ".cpuprofile" JSON that `node --cpu-prof`, Chrome DevTools'
 * "Save profile" and the DevTools protocol's Profiler.stop give (the protocol's
 * Profiler.Profile type).
 *
 * A file is one JSON object, its keys in any order (node writes nodes, startTime, endTime,
 * samples, timeDeltas; other producers differ): "nodes", the call tree, each node
 * {id, callFrame {functionName, scriptId, url, lineNumber, columnNumber}, hitCount,
 * children [ids], positionTicks}, or with "parent" (an id) instead of "children" as older
 * profiles and trace-event chunks have it (both are accepted and must agree); "samples",
 * the node id of each sample in the order taken; "timeDeltas", µs from the previous sample
 * (the first from startTime); "startTime" and "endTime" in µs of the producer's monotonic
 * clock. The legacy form (node 10 and older, Chrome before 58) has "head", the root node
 * with its "children" nested in it and the call frame's keys in each node, and
 * "timestamps", each sample's time in µs of the clock, maybe with one more entry: the end
 * (startTime and endTime are in seconds there, node 10's whole ones: the first timestamp
 * is the start, as DevTools takes it). The tree is read without recursion, but the JSON
 * parser nests at most 512 levels: a head tree deeper than about 255 frames is refused
 * where it goes deeper. Not read: hitCount and positionTicks (they are derived
 * from samples). The trace-event form (an array of events, "ProfileChunk"s) is
 * chrome/read.c's; the tree and the samples are read by v8_tree.c for both.
 *
 * What a sample becomes: one sample per entry of "samples", thread 0, at startTime plus the
 * deltas up to it. V8's deltas can be negative (a sample listed after one it was taken
 * before): samples are put in time order by a stable sort on that timestamp, as Chrome
 * DevTools' CPUProfileDataModel does (speedscope's importer instead clamps a time that goes
 * back to the latest one, the Firefox Profiler's resamples at 500 µs and drops what goes
 * back; both keep every stack but lose the order in time). Deltas are read exactly (to the
 * nanosecond, no floating point); a timestamp rounds down to the µs.
 *
 * Weights are time, as DevTools and speedscope weigh a sample: the time up to the next
 * sample; the first's also from startTime (it is put there), the last's up to endTime (the
 * median gap without one), so the weights add up to the profile's span however uneven the
 * gaps (idle threads are sampled late: weighing each sample one median gap gave half the
 * span). The interval is the median gap (not moved by the odd long gap), halved while the
 * weights miss the total by more than 1%; a weight is the running total rounded to
 * intervals, at least 1. V8's clock is no wall clock: times count from startTime and the
 * start is unknown (0), so no writer shows a date.
 *
 * A lone-surrogate escape ("\ud800", which JSON.stringify writes for half a UTF-16 pair)
 * is read as U+FFFD with a warning; endTime before startTime is ignored with a warning.
 *
 * Frames: the path from the sampled node to its root, innermost first; a parentless node
 * named "(root)" is no frame. Function name as given, "(anonymous)" when empty; file the
 * url, "~" (no file, as CPython marks its special frames) when empty or absent; line and
 * column 1-based (V8's are 0-based; -1 or absent: none). V8's own nodes "(program)",
 * "(garbage collector)" and "(idle)" stay frames, so every writer shows them; the status
 * byte is on CPU for every sample but those of "(idle)", which have no state bit (the
 * programs' --status idle).
 *
 * The whole file is read and checked at open (strict JSON, json.c): memory is the file
 * plus a record per node and per sample, each grown as elements are read, never from a
 * count. Refused with the byte offset: a node without an integer id or a callFrame, an
 * id given twice, a child or parent or sample naming no node, a node with two parents,
 * parents that form a cycle, a stack deeper than max-depth, samples and timeDeltas of
 * different lengths, times that overflow or fall before 0. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/v8/v8.h"
#include "formats/json_read.h"
#include "formats/v8_tree.h"

/* ---- open ---- */

enum { K_NODES, K_SAMPLES, K_DELTAS, K_START, K_END, K_HEAD, K_STAMPS, NKEYS };

/* The legacy format's start: its first timestamp, as DevTools takes it (node 10 writes
 * startTime and endTime in whole seconds, so they miss the samples by up to one), or
 * startTime (seconds) without samples. */
static int legacy_start(struct tach_reader *r, const uint64_t *o, int64_t *start)
{
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_jr_begin_array(r, &j, o[K_STAMPS], "timestamps");
	if (rc || (rc = tachi_json_elem(&j, &more)))
		return rc;
	if (more)
		return (rc = tachi_json_value(&j, &t)) ? rc : tachi_v8_time_ns(r, &t, "timestamp", start);
	if ((rc = tachi_jr_value_at(r, &j, o[K_START], &t)))
		return rc;
	return tachi_jr_number(r, &t, 9, "startTime", start);
}

/* The legacy endTime (seconds), where it is not before the last sample; else the end is
 * a timestamp past the last sample, or none. */
static int legacy_end(struct tach_reader *r, const uint64_t *o)
{
	struct tachi_v8 *st = r->state;
	struct tachi_v8_prof *p = &st->profs[0];
	struct tachi_json j;
	struct tachi_jtok t;
	int64_t end;
	if (o[K_END] == UINT64_MAX || p->end >= 0)
		return TACH_OK;
	int rc = tachi_jr_value_at(r, &j, o[K_END], &t);
	if (rc || (rc = tachi_jr_number(r, &t, 9, "endTime", &end)))
		return rc;
	if (end >= p->now)
		p->end = end;
	return TACH_OK;
}

/* The top object's keys: nodes (or the legacy head), samples, timeDeltas (or the legacy
 * timestamps), startTime, endTime; the profile. */
static int parse_top(struct tach_reader *r, uint64_t *o)
{
	static const char *const want[] = { "nodes", "samples", "timeDeltas", "startTime",
					    "endTime", "head", "timestamps" };
	static const char *const names[] = { "\"nodes\"", "\"samples\"", "\"timeDeltas\"",
					     "\"startTime\"" };
	struct tachi_v8 *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	int64_t start;
	uint32_t prof;
	int rc = tachi_jr_top(r, &j, &t, "not a V8 CPU profile: expected a JSON object");
	/* the legacy head tree nests two levels a frame: as deep as the parser goes */
	j.max_depth = TACHI_JSON_MAX_DEPTH;
	if (rc || (rc = tachi_json_keys(&j, want, o, NKEYS)) || (rc = tachi_json_end(&j)))
		return rc;
	st->stamps = o[K_NODES] == UINT64_MAX && o[K_HEAD] != UINT64_MAX &&
		     o[K_STAMPS] != UINT64_MAX;
	if (st->stamps) {
		o[K_NODES] = o[K_HEAD];
		o[K_DELTAS] = o[K_STAMPS];
	}
	for (int i = 0; i < 4; i++)
		if (o[i] == UINT64_MAX)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off,
				     "not a V8 CPU profile: no %s", names[i]);
	if (st->stamps)
		rc = legacy_start(r, o, &start);
	else if (!(rc = tachi_jr_value_at(r, &j, o[K_START], &t)))
		rc = tachi_v8_time_ns(r, &t, "startTime", &start);
	if (rc)
		return rc;
	if (start < 0)
		return tachi_jr_bad(r, o[K_START], "startTime before 0");
	if ((rc = tachi_v8_add_profile(r, start, &prof)))
		return rc;
	if (!st->stamps && o[K_END] != UINT64_MAX &&
	    ((rc = tachi_jr_value_at(r, &j, o[K_END], &t)) || (rc = tachi_v8_end(r, prof, &t))))
		return rc;
	return TACH_OK;
}

static int v8_open(struct tach_reader *r)
{
	struct tachi_v8 *st = r->state;
	uint64_t o[NKEYS];
	int rc;
	r->json_lone_ok = true;
	if ((rc = parse_top(r, o)))
		return rc;
	tachi_v8_lone_warning(r);
	if ((rc = (st->stamps ? tachi_v8_head : tachi_v8_nodes)(r, o[K_NODES])) ||
	    (rc = tachi_v8_tree(r)) || (rc = tachi_v8_samples(r, 0, o[K_SAMPLES], o[K_DELTAS])) ||
	    (st->stamps && (rc = legacy_end(r, o))) || (rc = tachi_v8_finish(r)))
		return rc;
	/* V8's clock is no wall clock (a monotonic one, from an unknown origin): times are
	 * given from startTime, and the start is unknown (0), so no writer shows a date. */
	r->meta.start_time_us = 0;
	/* the time profiled, for what shows the input's own facts (tach-decode -F info) */
	const struct tachi_v8_prof *p = &st->profs[0];
	r->meta.duration_ns = p->end >= 0 ? p->end - p->start : 0;
	return TACH_OK;
}

const struct tachi_reader_ops tachi_v8_reader_ops = {
	.state_size = sizeof(struct tachi_v8),
	.open = v8_open,
	.next = tachi_v8_next,
	.free = tachi_v8_free,
	.whole_input = true,
};
