/* The span reader: a trace-event file's spans, however much else it holds (a CPU profile's
 * events are skipped); formats/trace_spans.c reads them. */
#include "core/format.h"
#include "core/handles.h"
#include "formats/spans/spans.h"
#include "formats/trace_spans.h"

struct spans_rstate {
	struct tachi_spans sp;
};

static int spans_open(struct tach_reader *r)
{
	struct spans_rstate *st = r->state;
	return tachi_spans_read(r, &st->sp, "no spans in this trace: no \"B\", \"E\" or \"X\" "
				"event");
}

static int spans_next(struct tach_reader *r, const struct tach_sample **s)
{
	struct spans_rstate *st = r->state;
	return tachi_spans_next(r, &st->sp, s);
}

static void spans_free(struct tach_reader *r)
{
	struct spans_rstate *st = r->state;
	tachi_spans_free(&st->sp);
}

const struct tachi_reader_ops tachi_spans_reader_ops = {
	.state_size = sizeof(struct spans_rstate),
	.open = spans_open,
	.next = spans_next,
	.free = spans_free,
	.whole_input = true,
};
