/* Visual Studio's CallTreeSummary CSV (read.c describes it): the table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/vsprof/vsprof.h"

/* The first line is the report's header, whole, as inferno knows it. */
static bool vsprof_probe(const uint8_t *p, size_t n)
{
	static const char head[] = "Level,Function Name,Number of Calls,Elapsed Inclusive Time %,"
				   "Elapsed Exclusive Time %,Avg Elapsed Inclusive Time,"
				   "Avg Elapsed Exclusive Time,Module Name,";
	return tachi_probe_text(p, n) && n >= sizeof(head) - 1 && !memcmp(p, head, sizeof(head) - 1);
}

const struct tachi_format tachi_fmt_vsprof = {
	.name = "vsprof",
	.reader = &tachi_vsprof_reader_ops,
	.probe = vsprof_probe,
};
