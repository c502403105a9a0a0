/* tach2pprof: a profile of any format to pprof's profile.proto (gzip-compressed). */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "no-gzip", 0, NULL, "w:gzip", "no", "write the raw protobuf, not gzip-compressed", NULL,
	  false },
	{ "level", 0, "N", "w:level", NULL, "gzip compression level (default 1)", "1-9", false },
	{ "cpu", 0, NULL, "w:cpu", "yes",
	  "call the time values cpu/nanoseconds (default: wall, or cpu for a CPU-mode profile)",
	  NULL, false },
	{ "no-labels", 0, NULL, "w:labels", "no",
	  "no thread id, interpreter id and thread state labels; merge threads", NULL, false },
	{ 0 },
};

static const struct tc_output outputs[] = {
	{ "pprof", "pprof", true, NULL, "pprof profile.proto", NULL, 1 },
	{ 0 },
};

const struct tc_prog tc_prog_tach2pprof = {
	.name = "tach2pprof",
	.summary = "Convert a profile to pprof's profile.proto format.",
	.reader = "auto",
	.outputs = outputs,
	.opts = opts,
	.description = "The output is gzip-compressed (.pb.gz) for go tool pprof and "
		       "profiling services. Samples are aggregated by stack, thread, "
		       "interpreter and thread state; a sample with an empty stack is a Sample "
		       "without locations, counted in the total.",
};
