/* tach-encode: the samples text form to TACH. */
#include "common/runner.h"

static const struct tc_opt opts[] = {
	{ "compression", 0, "KIND", "w:compression", NULL, "sample compression (default zstd)",
	  "zstd none", false },
	{ "level", 0, "N", "w:level", NULL, "zstd compression level, 1-22 (default 5)", NULL, false },
	{ 0 },
};

static const struct tc_output outputs[] = {
	{ "tach", "tach", true, NULL, "TACH binary" },
	{ 0 },
};

int main(int argc, char **argv)
{
	static const struct tc_prog prog = {
		.name = "tach-encode",
		.summary = "Write a TACH profile from the samples text form.",
		.reader = "samples",
		.outputs = outputs,
		.opts = opts,
		.description = "Input lines are TID IID TIMESTAMP_US STATUS, a TAB, then frames "
			       "FILE:FUNC:LINE[:END_LINE:COL:END_COL:OPCODE] separated by ';', "
			       "innermost first (see tachfmt(5)).",
	};
	return tc_main(argc, argv, &prog);
}
