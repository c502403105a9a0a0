/* callgrind: the profile format of valgrind's callgrind tool, which KCachegrind,
 * QCachegrind and callgrind_annotate read ("Callgrind Format Specification" in valgrind's
 * documentation), xdebug writes too: the format's table row and probe; the reader is
 * read.c (stacks built from the call graph as speedscope builds them), the writer write.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/callgrind/callgrind.h"

static bool starts(const uint8_t *s, size_t n, const char *lit)
{
	size_t k = strlen(lit);
	return n >= k && !memcmp(s, lit, k);
}

/* A header line "word: ...". */
static bool header_line(const uint8_t *s, size_t n)
{
	size_t k = 0;
	while (k < n && (s[k] == '_' || (s[k] >= '0' && s[k] <= '9') ||
			 ((s[k] | 32) >= 'a' && (s[k] | 32) <= 'z')))
		k++;
	return k && k < n && s[k] == ':';
}

/* Header lines ("# callgrind format" or "version: 1" first, or "events:" among them),
 * and then, once "events:" was seen, an assignment of a file, object or function; or a
 * window that ends in the header after "# callgrind format" (valgrind's long "desc:"
 * lines). */
static bool callgrind_probe(const uint8_t *p, size_t n)
{
	size_t at = 0;
	const uint8_t *s;
	size_t l;
	bool complete, first = true, magic = false, events = false;
	if (!tachi_probe_text(p, n))
		return false;
	if (starts(p, n, "# callgrind format"))
		magic = true;
	while (tachi_probe_line(p, n, &at, &s, &l, &complete)) {
		if (!complete)
			return magic || events;
		if (header_line(s, l)) {
			if (first && starts(s, l, "version:"))
				magic = true;
			events |= starts(s, l, "events:");
			first = false;
			continue;
		}
		first = false;
		return events && (starts(s, l, "fl=") || starts(s, l, "fn=") ||
				  starts(s, l, "ob=") || starts(s, l, "fi="));
	}
	return magic && events && n < TACHI_PROBE_BYTES;
}

const struct tachi_format tachi_fmt_callgrind = {
	.name = "callgrind",
	.reader = &tachi_callgrind_reader_ops,
	.writer = &tachi_callgrind_writer_ops,
	.probe = callgrind_probe,
};
