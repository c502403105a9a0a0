/* tach2speedscope: TACH to speedscope's JSON file format. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ 0 },
};

/* Plain JSON, for jq as much as for speedscope: not refused on a terminal. */
static const struct tc_output outputs[] = {
	{ "speedscope", "speedscope", false, NULL, "speedscope JSON (www.speedscope.app)", NULL, 0 },
	{ 0 },
};

const struct tc_prog tc_prog_tach2speedscope = {
	.name = "tach2speedscope",
	.summary = "Convert a profile to speedscope's JSON file format.",
	.reader = "auto",
	.outputs = outputs,
	.opts = opts,
	.description = "Writes one JSON document that speedscope imports: a sampled "
		       "profile per thread and interpreter, samples in time order with "
		       "consecutive identical stacks merged, weights in microseconds at the "
		       "sampling interval (see tach2speedscope(1)).",
};
