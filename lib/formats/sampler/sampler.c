/* Apple Sampler traces: the format's table row and probe; the reader is read.c, the
 * writer write.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/sampler/sampler.h"

/* The first line's tag; the reader takes a V1.0 or V1.1 and explains any other. */
static bool sampler_probe(const uint8_t *p, size_t n)
{
	return n >= 14 && !memcmp(p, "@supersamplerV", 14);
}

const struct tachi_format tachi_fmt_sampler = {
	.name = "sampler",
	.reader = &tachi_sampler_reader_ops,
	.writer = &tachi_sampler_writer_ops,
	.probe = sampler_probe,
};
