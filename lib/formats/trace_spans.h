/* Spans of a Chrome trace-event file read as stacks (trace_spans.c), as speedscope reads
 * such a file: the span reader (spans/read.c) and the CPU profile reader (chrome/read.c),
 * for a trace that holds no CPU profile, share it. A state holds a struct tachi_spans. */
#ifndef TACHFMT_FMT_TRACE_SPANS_H
#define TACHFMT_FMT_TRACE_SPANS_H

#include <stddef.h>
#include <stdint.h>

#include "core/handles.h"

struct tachi_span_ev;
struct tachi_span_node;
struct tachi_span_sample;
struct tachi_span_thread;

struct tachi_spans {
	struct tachi_span_ev *b, *e;      /* begins and ends (X events give one of each) */
	size_t nb, b_cap, ne, e_cap;
	struct tachi_span_ev *x;          /* complete events, until they are split */
	size_t nx, x_cap;
	struct tachi_span_thread *th;     /* thread_name events, then the threads */
	size_t nth, th_cap;
	struct tachi_span_node *nodes;    /* one per span entered: frame and parent */
	size_t nnodes, nodes_cap;
	struct tachi_span_sample *s;
	size_t ns, s_cap, cur;
	uint32_t *open;                   /* the open spans of the thread being read */
	size_t open_cap;
	uint32_t *out;
	size_t out_cap;
	char *buf;                        /* a frame name being built */
	size_t buf_n, buf_cap;
	int64_t origin;                   /* the earliest event, ns */
	uint64_t warned;                  /* bit per kind of unmatched event warned about */
};

/* Every "B", "E" and "X" event of the (whole) input, and the "thread_name" metadata; none
 * is refused with message none. */
int tachi_spans_read(struct tach_reader *r, struct tachi_spans *sp, const char *none);
int tachi_spans_next(struct tach_reader *r, struct tachi_spans *sp, const struct tach_sample **out);
void tachi_spans_free(struct tachi_spans *sp);

#endif
