/* tach2flamegraph: any profile to a flame graph SVG, drawn as flamegraph.pl draws it. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ "title", 0, "TEXT", "w:title", NULL,
	  "title (default \"Flame Graph\", \"Icicle Graph\" with --inverted, \"Flame Chart\")", NULL, false },
	{ "subtitle", 0, "TEXT", "w:subtitle", NULL, "second title line", NULL, false },
	{ "width", 0, "PX", "w:width", NULL, "image width (default 1200)", NULL, false },
	{ "height", 0, "PX", "w:height", NULL, "frame height (default 16)", NULL, false },
	{ "minwidth", 0, "PX", "w:minwidth", NULL,
	  "omit frames narrower than PX pixels, or than a share of all (0.5%; default 0.1)", NULL, false },
	{ "fonttype", 0, "FONT", "w:fonttype", NULL, "font family (default Verdana)", NULL, false },
	{ "fontsize", 0, "SIZE", "w:fontsize", NULL, "font size (default 12)", NULL, false },
	{ "countname", 0, "TEXT", "w:countname", NULL, "what a count is (default samples)", NULL, false },
	{ "nametype", 0, "TEXT", "w:nametype", NULL, "label before a hovered frame (default Function:)",
	  NULL, false },
	{ "colors", 0, "PALETTE", "w:colors", NULL, "colour palette (default hot)",
	  "hot mem io wakeup chain java js perl red green blue aqua yellow purple orange", false },
	{ "bgcolors", 0, "COLOR", "w:bgcolors", NULL,
	  "background: a named colour or #rrggbb (default by palette)", "yellow blue green grey",
	  false },
	{ "hash", 0, NULL, "w:hash", "yes", "colours by a hash of the name, as flamegraph.pl --hash",
	  NULL, false },
	{ "reverse", 0, NULL, "w:reverse", "yes", "reverse every stack (merge from the leaves)",
	  NULL, false },
	{ "inverted", 0, NULL, "w:inverted", "yes", "an icicle graph: roots at the top", NULL, false },
	{ "flamechart", 0, NULL, "w:flamechart", "yes",
	  "a flame chart: time order per thread, no merging of separate runs", NULL, false },
	{ "negate", 0, NULL, "w:negate", "yes", "differential input: swap red and blue", NULL, false },
	{ "no-thread-frames", 0, NULL, "w:thread-frames", "no",
	  "no tid:N root frame per thread (threads merge)", NULL, false },
	{ "value", 0, "NAME", "w:value", NULL,
	  "what the widths count: count (samples, default), time (us) or a pprof sample type",
	  NULL, false },
	{ 0 },
};

static const struct tc_output outputs[] = {
	{ "flamegraph", "flamegraph", false, NULL, "flame graph SVG", tc_relabel_opts, 0 },
	{ 0 },
};

/* Folded stacks are drawn as flamegraph.pl draws them: each frame's text as it is, a
 * "tid:N" frame a frame like any other, two counts a differential line, a count a number
 * of samples whatever it measures. */
static const struct tc_setting folded[] = {
	{ "r:labels", "raw" },
	{ "r:keep-thread-frames", "yes" },
	{ "r:diff", "both" },
	{ "r:count-unit", "samples" },
	{ "w:thread-frames", "no" },
	{ 0 },
};

const struct tc_prog tc_prog_tach2flamegraph = {
	.name = "tach2flamegraph",
	.summary = "Draw a profile as a flame graph SVG.",
	.reader = "auto",
	.outputs = outputs,
	.opts = opts,
	.folded = folded,
	.description = "Writes one interactive SVG as flamegraph.pl draws it from the "
		       "profile's collapsed stacks (tach-decode's output): the same frames, "
		       "order, sizes, titles and --hash colours, with our own script for "
		       "details, zoom and search (see tach2flamegraph(1)).",
};
