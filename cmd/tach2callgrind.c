/* tach2callgrind: a profile to valgrind callgrind's format, for KCachegrind, QCachegrind
 * and callgrind_annotate. */
#include "common/runner.h"
#include "programs.h"

static const struct tc_opt opts[] = {
	{ 0 },
};

/* Plain text, for callgrind_annotate as much as for KCachegrind: not refused on a
 * terminal. */
static const struct tc_output outputs[] = {
	{ "callgrind", "callgrind", false, NULL, "callgrind profile (KCachegrind, callgrind_annotate)",
	  NULL, 0 },
	{ 0 },
};

const struct tc_prog tc_prog_tach2callgrind = {
	.name = "tach2callgrind",
	.summary = "Convert a profile to valgrind callgrind's format.",
	.reader = "auto",
	.outputs = outputs,
	.opts = opts,
	.description = "Writes one callgrind profile that KCachegrind, QCachegrind and "
		       "callgrind_annotate read: every thread together, a function's self "
		       "cost per source line (and address, for native code), calls with "
		       "inclusive costs that count a function once per sample however "
		       "deeply it recurs (see tach2callgrind(1)).",
};
