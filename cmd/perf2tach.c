/* perf2tach: Linux `perf script` text to TACH. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "event", 0, "NAME", "r:event", NULL,
	  "read the samples of event NAME (default: the first event in the capture)", NULL,
	  false },
	{ 0 },
};

const struct tc_prog tc_prog_perf2tach = {
	.name = "perf2tach",
	.summary = "Convert Linux perf script output to a TACH profile.",
	.reader = "perf",
	.outputs = tc_tach_output,
	.opts = opts,
	.description = "Input is the text `perf script` writes for a `perf record -g` "
		       "capture: each sample's event line and call chain. The thread is "
		       "the tid, the root frame names the process (file [comm]), and "
		       "cpu-clock periods are read as time (see perf2tach(1)).",
};
