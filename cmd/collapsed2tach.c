/* collapsed2tach: folded stacks (flamegraph.pl, perf, py-spy, austin, CPython) to TACH. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "labels", 0, "STYLE", "r:labels", NULL,
	  "frame label style, decided once per file (default auto)",
	  "auto pyspy colon austin1 austin2 raw", false },
	{ "diff", 0, "WHICH", "r:diff", NULL,
	  "differential files (two counts per line): keep which count (default second; both: "
	  "the first as baseline samples, for tach2flamegraph)",
	  "first second both none", false },
	{ "keep-thread-frames", 0, NULL, "r:keep-thread-frames", "yes",
	  "keep thread/process root frames as frames instead of thread ids", NULL, false },
	{ "metric", 0, "N", "r:metric", NULL,
	  "use field N of comma-separated counts (austin full mode; default 1)", NULL, false },
	{ "factor", 0, "F", "r:factor", NULL,
	  "multiply every count by F before rounding to whole samples", NULL, false },
	{ "count-unit", 0, "UNIT", "r:count-unit", NULL,
	  "what a count is: samples, or a time in ns, us or ms (default auto: austin's are us, "
	  "counts that are all multiples of 1000 or more are ns, as perf periods are)",
	  "auto samples ns us ms", false },
	{ "interval", 0, "US", "r:interval", NULL,
	  "microseconds between synthesized samples (default 1000, or the file's)", NULL, false },
	{ 0 },
};

const struct tc_prog tc_prog_collapsed2tach = {
	.name = "collapsed2tach",
	.summary = "Convert collapsed (folded) stacks to a TACH profile.",
	.reader = "collapsed",
	.outputs = tc_tach_output,
	.opts = opts,
	.description = "Input lines are FRAME;FRAME;... COUNT, root first, as written by "
		       "flamegraph.pl's stackcollapse scripts, py-spy, austin, CPython's "
		       "--collapsed and tach-decode. A count N becomes N samples one "
		       "interval apart, or as many intervals as it lasts when counts are "
		       "times (--count-unit; see collapsed2tach(1)).",
};
