/* sampler2tach: an Apple Sampler trace to TACH. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "interval", 0, "US", "r:interval", NULL,
	  "microseconds between a thread's samples; timestamps are made from it (default 1000)",
	  NULL, false },
	{ 0 },
};

const struct tc_prog tc_prog_sampler2tach = {
	.name = "sampler2tach",
	.summary = "Convert an Apple Sampler trace (@supersamplerV1.0) to a TACH profile.",
	.reader = "sampler",
	.outputs = tc_tach_output,
	.opts = opts,
	.description = "Each record is one sample; the format has no timestamps, so the "
		       "k-th sample of a thread is put at k times --interval "
		       "(see sampler2tach(1)).",
};
