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

/* Whether a line ends in a count after white space: digits with the signs, points and
 * commas the reader takes (austin's full mode "3000,0,-512"), at least one digit, after a
 * stack that is not numbers alone (a callgrind cost line "16 400 23000" is no stack). */
static bool ends_in_count(const uint8_t *s, size_t len)
{
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	size_t t = len;
	bool digit = false;
	while (t && strchr("0123456789.,+-", s[t - 1]) && s[t - 1]) {
		digit |= s[t - 1] >= '0' && s[t - 1] <= '9';
		t--;
	}
	if (!digit || t < 2 || (s[t - 1] != ' ' && s[t - 1] != '\t'))
		return false;
	for (size_t i = 0; i < t; i++)
		if (!strchr("0123456789 \t", s[i]))
			return true;
	return false;
}

/* A first line too long to end in the window: a deep stack, unless it opens as JSON does
 * (an object, or an array of values; perf's "[unknown]" frames open with a letter). */
static bool long_line_is_stack(const uint8_t *s, size_t len)
{
	if (!len || s[0] == '{')
		return false;
	if (s[0] == '[' && len > 1 && strchr("{[\" \t\r\n-0123456789", s[1]))
		return false;
	return memchr(s, ';', len) != NULL;
}

/* The last resort of detection, so it must not take text that is something else (a
 * callgrind file's "16 400" cost lines and "version: 1", pprof's legacy texts, CSV, logs):
 * the first data line ends in a count, and so do at least two in three of the complete
 * lines in the window (speedscope reads a file with an invalid line among valid ones, and
 * so does the reader, with a warning). '#' and '//' lines are comments. A first line that
 * runs on past the peeked bytes is a deep stack when it has a ';' and does not open as
 * JSON. Only comments and blank lines: a profile without samples. */
static bool collapsed_probe(const uint8_t *p, size_t n)
{
	const uint8_t *s;
	size_t at = 0, len, good = 0, bad = 0;
	bool complete;
	if (!tachi_probe_text(p, n))
		return false;
	while (tachi_probe_line(p, n, &at, &s, &len, &complete)) {
		size_t k = 0;
		while (k < len && (s[k] == ' ' || s[k] == '\t'))
			k++;
		if (tachi_collapsed_slash_comment((const char *)s + k, len - k))
			continue;
		if (!complete) {
			if (!good && !bad)
				return long_line_is_stack(s, len);
			break;
		}
		if (ends_in_count(s, len))
			good++;
		else if (!good)
			return false;
		else
			bad++;
	}
	return bad * 2 <= good;
}

const struct tachi_format tachi_fmt_collapsed = {
	.name = "collapsed",
	.reader = &tachi_collapsed_reader_ops,
	.writer = &tachi_collapsed_writer_ops,
	.probe = collapsed_probe,
};
