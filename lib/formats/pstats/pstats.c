/* Python's pstats (marshal) format, written only: its table row; the writer is write.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/pstats/pstats.h"

const struct tachi_format tachi_fmt_pstats = {
	.name = "pstats",
	.writer = &tachi_pstats_writer_ops,
};
