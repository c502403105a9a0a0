/* Java Flight Recorder recordings (read.c describes them): the format's table row and
 * probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/jfr/jfr.h"

/* Every chunk starts with the magic and a 16-bit major version; 1.x is taken too, so
 * that the reader refuses it by name rather than detection not knowing it. */
static bool jfr_probe(const uint8_t *p, size_t n)
{
	return n >= 8 && !memcmp(p, "FLR\0", 4) && p[4] == 0 && (p[5] == 1 || p[5] == 2);
}

static bool jfr_resembles(const uint8_t *p, size_t n)
{
	return n >= 4 && !memcmp(p, "FLR\0", 4);
}

const struct tachi_format tachi_fmt_jfr = {
	.name = "jfr",
	.reader = &tachi_jfr_reader_ops,
	.probe = jfr_probe,
	.resembles = jfr_resembles,
};
