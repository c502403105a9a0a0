/* The Firefox Profiler's processed profile format (Gecko JSON), written only: its table
 * row; the writer is write.c (the tables write_tables.c, the JSON write_json.c, native
 * libraries write_native.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/gecko/gecko.h"

const struct tachi_format tachi_fmt_gecko = {
	.name = "gecko",
	.reader = NULL,
	.writer = &tachi_gecko_writer_ops,
};
