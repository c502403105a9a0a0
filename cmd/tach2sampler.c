/* tach2sampler: a profile of any format to an Apple Sampler trace. */
#include "common/runner.h"
#include "programs.h"

/* A record per sample: a run of N repeats is N records. */
static const struct tc_opt sampler_opts[] = {
	TC_MAX_SAMPLES_OPT,
	{ 0 },
};

static const struct tc_output outputs[] = {
	/* Ids are raw bytes: binary as far as a terminal is concerned. */
	{ "sampler", "sampler", true, NULL, "Apple Sampler trace", sampler_opts, 0 },
	{ 0 },
};

const struct tc_prog tc_prog_tach2sampler = {
	.name = "tach2sampler",
	.summary = "Convert a profile to an Apple Sampler trace (@supersamplerV1.0).",
	.reader = "auto",
	.outputs = outputs,
	.description = "Writes one @threadV1.0 block per thread and one record per sample; "
		       "timestamps, status, columns and opcodes are not kept "
		       "(see tach2sampler(1)).",
};
