/* perf report --stdio text (read.c describes what is read): the format's table row and
 * probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/perfreport/perfreport.h"

static bool starts(const uint8_t *l, size_t n, const char *w)
{
	size_t k = strlen(w);
	return n >= k && !memcmp(l, w, k);
}

/* Comment lines only, up to the column header: perf report's first line ("# To display
 * the perf.data header info, ..."), or, after --header's block, a "# Samples: N of event"
 * line and then the "# Overhead" or "# Children" column header. perf script's text has
 * neither (its --header block is followed by samples), nor has folded text. */
static bool prp_probe(const uint8_t *p, size_t n)
{
	size_t at = 0;
	bool samples = false;
	if (!tachi_probe_text(p, n))
		return false;
	while (at < n) {
		const uint8_t *l = p + at, *nl = memchr(l, '\n', n - at);
		if (!nl)
			return false;
		size_t len = (size_t)(nl - l);
		if (!len || l[0] != '#')
			return false;
		if (!at && starts(l, len, "# To display the perf.data header info, "))
			return true;
		if (starts(l, len, "# Samples: "))
			samples = memmem(l, len, " of event '", 11) != NULL;
		else if (samples && (starts(l, len, "# Overhead  ") || starts(l, len, "# Children  ")))
			return true;
		at += len + 1;
	}
	return false;
}

const struct tachi_format tachi_fmt_perfreport = {
	.name = "perfreport",
	.reader = &tachi_perfreport_reader_ops,
	.probe = prp_probe,
};
