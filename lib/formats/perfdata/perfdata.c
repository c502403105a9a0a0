/* Linux perf's own capture, perf.data, as `perf record` writes it (tools/perf/util/header.c):
 * a file header (magic "PERFILE2", in the byte order of the machine that wrote it), the
 * events' attributes, the data section of records, and feature sections after it; or in
 * pipe mode (`perf record -o -`) a 16-byte header and records only, attributes and
 * features among them. The reader is read.c and the files it names. */
#include <string.h>

#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/perfdata/perfdata.h"

/* "PERFILE2" as the writer's u64: the bytes in order on a little-endian machine, reversed
 * on a big-endian one. The header's size word tells a file (104 and up) from a pipe (16). */
static bool perfdata_probe(const uint8_t *p, size_t n)
{
	return n >= 8 && (!memcmp(p, "PERFILE2", 8) || !memcmp(p, "2ELIFREP", 8));
}

const struct tachi_format tachi_fmt_perfdata = {
	.name = "perfdata",
	.reader = &tachi_perfdata_reader_ops,
	.probe = perfdata_probe,
};
