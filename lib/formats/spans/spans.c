/* Chrome trace-event spans: "B"/"E" and "X" events as stacks (formats/trace_spans.c says
 * how). The format has no probe of its own: a trace-event file is detected as "chrome",
 * whose reader reads the CPU profile in it, and its spans when it holds none (as speedscope
 * does), so that no file is taken by two formats; --from spans reads a trace's spans even
 * beside a CPU profile. */
#include "core/format.h"
#include "core/formats.h"
#include "formats/spans/spans.h"

const struct tachi_format tachi_fmt_spans = {
	.name = "spans",
	.reader = &tachi_spans_reader_ops,
};
