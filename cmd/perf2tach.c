/* perf2tach: Linux `perf script` text, or perf's own perf.data, to TACH. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "event", 0, "NAME", "r:event", NULL,
	  "read the samples of event NAME (default: the first event in the capture)", NULL,
	  false },
	{ "binary-path", 0, "DIR", "r:binary-path", NULL,
	  "perf.data input: also look for binaries in DIR (repeatable; TACHFMT_BINARY_PATH "
	  "adds more)", NULL, true },
	{ "no-symbolize", 0, NULL, "r:symbolize", "no",
	  "perf.data input: do not read binaries; name frames by module and file offset", NULL,
	  false },
	{ 0 },
};

const struct tc_prog tc_prog_perf2tach = {
	.name = "perf2tach",
	.summary = "Convert Linux perf script output or perf.data to a TACH profile.",
	.reader = "perf,perfdata",
	.outputs = tc_tach_output,
	.opts = opts,
	.description = "Input is the text `perf script` writes for a `perf record -g` "
		       "capture (each sample's event line and call chain), or the "
		       "perf.data file itself, read directly and named as perf script "
		       "names frames (also from a pipe: perf record -o -). The thread is "
		       "the tid, the root frame names the process (file [comm]), and "
		       "cpu-clock periods are read as time (see perf2tach(1)).",
};
