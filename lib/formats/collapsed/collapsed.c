/* Collapsed (folded) stacks: the format's table row and probe; the reader is read.c (its
 * producers' forms read_forms.c), the writer write.c (stackcollapse-perf.pl's labels
 * write_perf.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/collapsed/collapsed.h"

/* The last resort of detection: text whose first data line ends in a count (digits, with
 * the sign, point and commas the reader takes) after white space, or runs on past the
 * peeked bytes (deep stacks make long lines). Only comments and blank lines: a profile
 * without samples. */
static bool collapsed_probe(const uint8_t *p, size_t n)
{
	const uint8_t *s;
	size_t at = 0, len;
	bool complete;
	if (!tachi_probe_text(p, n))
		return false;
	if (!tachi_probe_line(p, n, &at, &s, &len, &complete))
		return true;
	if (!complete)
		return true;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	size_t t = len;
	while (t && ((s[t - 1] >= '0' && s[t - 1] <= '9') || s[t - 1] == '.' || s[t - 1] == ',' ||
		     s[t - 1] == '-' || s[t - 1] == '+'))
		t--;
	return t < len && t > 1 && (s[t - 1] == ' ' || s[t - 1] == '\t');
}

const struct tachi_format tachi_fmt_collapsed = {
	.name = "collapsed",
	.reader = &tachi_collapsed_reader_ops,
	.writer = &tachi_collapsed_writer_ops,
	.probe = collapsed_probe,
};
