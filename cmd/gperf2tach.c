/* gperf2tach: a gperftools legacy CPU profile to TACH, frames symbolized from the binaries. */
#include "common/runner.h"
#include "programs.h"

const struct tc_prog tc_prog_gperf2tach = {
	.name = "gperf2tach",
	.summary = "Convert a gperftools CPU profile to TACH, naming frames from the binaries.",
	.reader = "gperf",
	.outputs = tc_tach_output,
	.opts = tc_gperf_opts,
	.description = "Binaries are looked for at the paths recorded in the profile, then in "
		       "each --binary-path DIR and each directory of TACHFMT_BINARY_PATH "
		       "(colon-separated), by base name and by full path; debug files through "
		       "elfutils' standard search, including DIR/.build-id/ (see gperf2tach(1)).",
};
