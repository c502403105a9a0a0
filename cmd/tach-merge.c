/* tach-merge: several profiles into one (TACH by default, or pprof or the samples text),
 * through the runner's merge (common/merge.c). */
#include "common/runner.h"
#include "programs.h"

static int merge(struct tc_run *run, struct tc_input *in, size_t n, struct tach_writer *w,
		 int outfd)
{
	return tc_merge(run, in, n, w, outfd, tc_opt_value(run, "concat"),
			tc_opt_value(run, "tag-inputs"));
}

static const struct tc_opt opts[] = {
	{ "concat", 0, NULL, NULL, NULL,
	  "write the inputs one after another, not interleaved by timestamp", NULL, false },
	{ "tag-inputs", 0, NULL, NULL, NULL,
	  "give each input's samples an outermost frame named after the input", NULL, false },
	{ 0 },
};

static const struct tc_many many = { 1, 0, "FILE...", merge, false };

const struct tc_prog tc_prog_tach_merge = {
	.name = "tach-merge",
	.summary = "Merge profiles of any readable format into one TACH (or pprof) profile.",
	.reader = "auto",
	.outputs = tc_tach_values_output,
	.opts = opts,
	.description = "Samples are interleaved by timestamp (ties in input order), or "
		       "written input after input with --concat. Thread ids are kept, and "
		       "each sample's time and values (-F pprof keeps them all; TACH has one "
		       "interval).",
	.many = &many,
};
