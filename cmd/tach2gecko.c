/* tach2gecko: TACH to a Gecko profile for the Firefox Profiler. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "no-gzip", 0, NULL, "w:gzip", "no", "write plain JSON instead of gzip", NULL, false },
	{ "level", 0, "N", "w:level", NULL, "gzip compression level (default 1)", "1-9", false },
	{ "processed", 0, NULL, "w:processed", "yes",
	  "write the Firefox Profiler's processed format: samples weigh their own time", NULL,
	  false },
	{ 0 },
};

/* Every sample is a row of the samples table: a weight N is N rows. */
static const struct tc_opt gecko_opts[] = {
	TC_MAX_SAMPLES_OPT,
	{ 0 },
};

/* Binary: gzip by default. With --no-gzip the JSON is text, but still one long line that a
 * terminal has no use for, so the same -f rule keeps things simple. */
static const struct tc_output outputs[] = {
	{ "gecko", "gecko", true, NULL, "Gecko profile JSON (Firefox Profiler)", gecko_opts, 1 },
	{ 0 },
};

const struct tc_prog tc_prog_tach2gecko = {
	.name = "tach2gecko",
	.summary = "Convert a profile to a Gecko profile for the Firefox Profiler.",
	.reader = "auto",
	.outputs = outputs,
	.opts = opts,
	.description = "Writes one gzip-compressed JSON document (plain with --no-gzip) that "
		       "profiler.firefox.com loads: one thread per thread and interpreter, "
		       "sample categories and markers from the GIL/CPU status (see "
		       "tach2gecko(1)).",
};
