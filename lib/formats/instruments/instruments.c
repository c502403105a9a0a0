/* Instruments' "deep copy" call trees (read.c describes them): the table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/instruments/instruments.h"

/* Whether the tab-separated header line s has a column named name. */
static bool has_column(const uint8_t *s, size_t n, const char *name)
{
	size_t l = strlen(name), at = 0;
	while (at <= n) {
		const uint8_t *tab = memchr(s + at, '\t', n - at);
		size_t e = tab ? (size_t)(tab - s) : n;
		if (e - at == l && !memcmp(s + at, name, l))
			return true;
		at = e + 1;
	}
	return false;
}

/* The first line is the copy's header: tab-separated columns, one "Symbol Name" and one
 * of the values ("Running Time", "Weight", "Bytes Used"), whole within the window. */
static bool instruments_probe(const uint8_t *p, size_t n)
{
	const uint8_t *nl = memchr(p, '\n', n);
	size_t l = nl ? (size_t)(nl - p) : n;
	if (!tachi_probe_text(p, n) || (!nl && n >= TACHI_PROBE_BYTES) || !memchr(p, '\t', l))
		return false;
	if (l && p[l - 1] == '\r')
		l--;
	return has_column(p, l, "Symbol Name") &&
	       (has_column(p, l, "Running Time") || has_column(p, l, "Weight") ||
		has_column(p, l, "Bytes Used"));
}

const struct tachi_format tachi_fmt_instruments = {
	.name = "instruments",
	.reader = &tachi_instruments_reader_ops,
	.probe = instruments_probe,
};
