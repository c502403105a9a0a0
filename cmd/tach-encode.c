/* tach-encode: the samples text form to TACH. */
#include "common/runner.h"
#include "programs.h"

const struct tc_prog tc_prog_tach_encode = {
	.name = "tach-encode",
	.summary = "Write a TACH profile from the samples text form.",
	.reader = "samples",
	.outputs = tc_tach_output,
	.description = "Input lines are TID IID TIMESTAMP_US STATUS, a TAB, then frames "
		       "FILE:FUNC:LINE[:END_LINE:COL:END_COL:OPCODE] separated by ';', "
		       "innermost first (see tachfmt(5)).",
};
