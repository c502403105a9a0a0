/* DTrace aggregations of stacks (read.c describes them): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/dtrace/dtrace.h"

/* Past the header's blank line, the first lines are frames ("module`func", or 0x and hex
 * digits) and then a line that is only a count, as inferno guesses it; a window that ends
 * inside the first stack, after frames, is taken too. */
static bool dtrace_probe(const uint8_t *p, size_t n)
{
	size_t at = 0;
	bool data = false, frames = false;
	if (!tachi_probe_text(p, n))
		return false;
	while (at < n) {
		const uint8_t *s = p + at, *nl = memchr(s, '\n', n - at);
		size_t l = nl ? (size_t)(nl - s) : n - at;
		at += l + (nl != NULL);
		if (!nl && n >= TACHI_PROBE_BYTES)
			return frames; /* a cut line: what came before decides */
		while (l && (*s == ' ' || *s == '\t'))
			s++, l--;
		while (l && (s[l - 1] == ' ' || s[l - 1] == '\t' || s[l - 1] == '\r'))
			l--;
		if (!l) {
			data = true;
			continue;
		}
		if (!data)
			continue;
		size_t d = 0;
		while (d < l && s[d] >= '0' && s[d] <= '9')
			d++;
		if (d == l)
			return frames;
		bool hex = l > 2 && s[0] == '0' && s[1] == 'x';
		for (size_t i = 2; hex && i < l; i++)
			hex = (s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f') ||
			      (s[i] >= 'A' && s[i] <= 'F');
		if (!hex && !memchr(s, '`', l))
			return false;
		frames = true;
	}
	return false;
}

const struct tachi_format tachi_fmt_dtrace = {
	.name = "dtrace",
	.reader = &tachi_dtrace_reader_ops,
	.probe = dtrace_probe,
};
