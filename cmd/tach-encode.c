/* tach-encode: the samples text form to TACH. */
#include "common/runner.h"

int main(int argc, char **argv)
{
	static const struct tc_prog prog = {
		.name = "tach-encode",
		.summary = "Write a TACH profile from the samples text form.",
		.reader = "samples",
		.outputs = tc_tach_output,
		.description = "Input lines are TID IID TIMESTAMP_US STATUS, a TAB, then frames "
			       "FILE:FUNC:LINE[:END_LINE:COL:END_COL:OPCODE] separated by ';', "
			       "innermost first (see tachfmt(5)).",
	};
	return tc_main(argc, argv, &prog);
}
