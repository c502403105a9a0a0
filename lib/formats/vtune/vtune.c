/* VTune's CSV call stacks (read.c describes them): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/vtune/vtune.h"

/* The first line is the report's header, as inferno knows it. */
static bool vtune_probe(const uint8_t *p, size_t n)
{
	static const char head[] = "Function Stack,CPU Time:Self,Module";
	return tachi_probe_text(p, n) && n >= sizeof(head) - 1 && !memcmp(p, head, sizeof(head) - 1);
}

const struct tachi_format tachi_fmt_vtune = {
	.name = "vtune",
	.reader = &tachi_vtune_reader_ops,
	.probe = vtune_probe,
};
