/* The event array of a Chrome trace-event file (trace_events.c), which the CPU profile
 * reader (chrome/read.c) and the span reader (trace_spans.c) both walk. */
#ifndef TACHFMT_FMT_TRACE_EVENTS_H
#define TACHFMT_FMT_TRACE_EVENTS_H

#include <stdint.h>

#include "base/json.h"
#include "core/handles.h"

/* One event, whose '{' j has just read at off (fn walks or skips the rest of it); seq
 * counts events in file order. */
typedef int (*tachi_trace_event_fn)(struct tach_reader *r, struct tachi_json *j, uint64_t off,
				    uint32_t seq, void *ctx);

/* Every event of the input (loaded whole): the top value when it is an array, else the
 * top object's "traceEvents"; a bare array may end without its "]". */
int tachi_trace_events(struct tach_reader *r, tachi_trace_event_fn fn, void *ctx);

#endif
