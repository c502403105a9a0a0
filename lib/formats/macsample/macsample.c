/* macOS sample's reports (read.c describes them): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/macsample/macsample.h"

static bool starts(const uint8_t *s, size_t n, const char *p)
{
	size_t l = strlen(p);
	return n >= l && !memcmp(s, p, l);
}

/* The report's first line ("Analysis of sampling PROG (pid N) every ...", or the "Sampling
 * process N for S seconds ..." that sample prints before it on a terminal), or else a line
 * "Call graph:" and after it a thread's line: four spaces and a count. */
static bool macsample_probe(const uint8_t *p, size_t n)
{
	const uint8_t *s;
	size_t at = 0, len;
	bool complete, graph = false;
	if (!tachi_probe_text(p, n) || !tachi_probe_line(p, n, &at, &s, &len, &complete))
		return false;
	if (starts(s, len, "Analysis of sampling ") || starts(s, len, "Sampling process "))
		return true;
	for (;;) {
		if (graph)
			return len > 4 && starts(s, len, "    ") && s[4] >= '0' && s[4] <= '9';
		graph = starts(s, len, "Call graph:");
		if (!tachi_probe_line(p, n, &at, &s, &len, &complete))
			return false;
	}
}

const struct tachi_format tachi_fmt_macsample = {
	.name = "macsample",
	.reader = &tachi_macsample_reader_ops,
	.probe = macsample_probe,
};
