/* tach2pstats: TACH to the stats file Python's pstats module loads. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "sampled-marker", 0, NULL, "w:sampled-marker", "yes",
	  "add CPython 3.15's (\"__sampled__\",) entry (sample columns in 3.15's pstats; "
	  "Pythons before 3.15 and snakeviz reject it)", NULL, false },
	{ "no-sampled-marker", 0, NULL, "w:sampled-marker", "no",
	  "without that entry (the default)", NULL, false },
	{ 0 },
};

static const struct tc_output outputs[] = {
	{ "pstats", "pstats", true, NULL, "marshal'd pstats dict (python3 -m pstats)", NULL, 0 },
	{ 0 },
};

const struct tc_prog tc_prog_tach2pstats = {
	.name = "tach2pstats",
	.summary = "Convert a profile to a pstats file for Python's pstats module.",
	.reader = "auto",
	.outputs = outputs,
	.opts = opts,
	.description = "Writes the marshal'd stats dict that pstats.Stats loads, with the "
		       "meaning CPython's sampling profiler gives it: per (file, line, "
		       "function), direct and cumulative samples, their time at the "
		       "sampling interval, and callers (see tach2pstats(1)).",
};
