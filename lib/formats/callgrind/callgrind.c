/* callgrind: the profile format of valgrind's callgrind tool, which KCachegrind,
 * QCachegrind and callgrind_annotate read ("Callgrind Format Specification" in valgrind's
 * documentation). Written only (write.c): a sampling profile has no call counts or
 * instruction counts to read back from one. */
#include "core/formats.h"
#include "formats/callgrind/callgrind.h"

const struct tachi_format tachi_fmt_callgrind = {
	.name = "callgrind",
	.writer = &tachi_callgrind_writer_ops,
};
