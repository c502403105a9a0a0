/* speedscope2tach: a speedscope JSON profile (py-spy, austin2speedscope, speedscope) to TACH. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "interval", 0, "US", "r:interval", NULL,
	  "the sampling interval recorded, and the spacing of unit none or bytes values "
	  "(default: the time weights' common divisor, else 1000); a time weight stays its "
	  "sample's own time", NULL, false },
	{ "profile", 0, "N", "r:profile", NULL,
	  "read only profile N of the file (0 is the first; default every profile)", NULL, false },
	{ 0 },
};

const struct tc_prog tc_prog_speedscope2tach = {
	.name = "speedscope2tach",
	.summary = "Convert a speedscope JSON profile to a TACH profile.",
	.reader = "speedscope",
	.outputs = tc_tach_output,
	.opts = opts,
	.description = "Input is a speedscope file (https://www.speedscope.app/"
		       "file-format-schema.json) as py-spy, austin2speedscope and speedscope "
		       "write it: every profile becomes a thread, sampled profiles sample by "
		       "sample, evented ones as the stacks between their events "
		       "(see speedscope2tach(1)).",
};
