/* CPython 3.15's sampling-profiler binary format (TACH): its table row and probe;
 * the reader is read.c, the writer write.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/tach/tach.h"

/* The magic in either byte order; the reader explains anything else wrong. */
static bool tach_probe(const uint8_t *p, size_t n)
{
	return n >= 4 && (!memcmp(p, "HCAT", 4) || !memcmp(p, "TACH", 4));
}

const struct tachi_format tachi_fmt_tach = {
	.name = "tach",
	.reader = &tachi_tach_reader_ops,
	.writer = &tachi_tach_writer_ops,
	.probe = tach_probe,
};
