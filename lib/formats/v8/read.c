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
 * clock. Not read: the legacy "head" tree, hitCount and positionTicks (they are derived
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

/* The top object's keys: nodes, samples, timeDeltas, startTime, endTime; the profile. */
static int parse_top(struct tach_reader *r, uint64_t *o)
{
	static const char *const want[] = { "nodes", "samples", "timeDeltas", "startTime",
					    "endTime" };
	static const char *const names[] = { "\"nodes\"", "\"samples\"", "\"timeDeltas\"",
					     "\"startTime\"" };
	struct tachi_json j;
	struct tachi_jtok t;
	int64_t start;
	uint32_t prof;
	int rc = tachi_jr_top(r, &j, &t, "not a V8 CPU profile: expected a JSON object");
	if (rc || (rc = tachi_json_keys(&j, want, o, 5)) || (rc = tachi_json_end(&j)))
		return rc;
	for (int i = 0; i < 4; i++)
		if (o[i] == UINT64_MAX)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off,
				     "not a V8 CPU profile: no %s", names[i]);
	if ((rc = tachi_jr_value_at(r, &j, o[3], &t)) ||
	    (rc = tachi_v8_time_ns(r, &t, "startTime", &start)))
		return rc;
	if (start < 0)
		return tachi_jr_bad(r, t.off, "startTime before 0");
	if ((rc = tachi_v8_add_profile(r, start, &prof)))
		return rc;
	if (o[4] != UINT64_MAX && ((rc = tachi_jr_value_at(r, &j, o[4], &t)) ||
				   (rc = tachi_v8_end(r, prof, &t))))
		return rc;
	return TACH_OK;
}

static int v8_open(struct tach_reader *r)
{
	struct tachi_v8 *st = r->state;
	uint64_t o[5];
	int rc;
	r->json_lone_ok = true;
	if ((rc = parse_top(r, o)))
		return rc;
	tachi_v8_lone_warning(r);
	if ((rc = tachi_v8_nodes(r, o[0])) || (rc = tachi_v8_tree(r)) ||
	    (rc = tachi_v8_samples(r, 0, o[1], o[2])) || (rc = tachi_v8_finish(r)))
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
