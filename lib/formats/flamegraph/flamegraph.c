/* Flame graph SVG, written only: its table row; the writer is write.c (options,
 * aggregation, layout), the SVG write_svg.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/flamegraph/flamegraph.h"

const struct tachi_format tachi_fmt_flamegraph = {
	.name = "flamegraph",
	.writer = &tachi_flamegraph_writer_ops,
};
