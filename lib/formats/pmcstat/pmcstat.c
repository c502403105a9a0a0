/* FreeBSD pmcstat's call graph text (read.c describes it): the format's table row and
 * probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/pmcstat/pmcstat.h"

static size_t digits(const uint8_t *s, size_t n, size_t i)
{
	size_t j = i;
	while (j < n && s[j] >= '0' && s[j] <= '9')
		j++;
	return j - i;
}

/* "@ EVENT [N samples]", the line pmcstat -G begins each event's graph with. */
static bool header(const uint8_t *s, size_t n)
{
	static const char tail[] = " samples]";
	const size_t tl = sizeof(tail) - 1;
	if (n < 2 + 1 + 2 + 1 + tl || memcmp(s, "@ ", 2) || memcmp(s + n - tl, tail, tl))
		return false;
	size_t e = n - tl;
	size_t d = 0;
	while (d < e && s[e - d - 1] >= '0' && s[e - d - 1] <= '9')
		d++;
	return d && e - d >= 5 && s[e - d - 1] == '[' && s[e - d - 2] == ' ';
}

/* A top node's line: "PCT%  [N]" at no indent. */
static bool top_node(const uint8_t *s, size_t n)
{
	size_t i = 0;
	while (i < n && ((s[i] >= '0' && s[i] <= '9') || s[i] == '.'))
		i++;
	if (!i || n - i < 4 || memcmp(s + i, "%  [", 4))
		return false;
	size_t d = digits(s, n, i + 4);
	return d && i + 4 + d < n && s[i + 4 + d] == ']';
}

/* The graph's header line, and the first node after it where the window holds it whole. */
static bool pmcstat_probe(const uint8_t *p, size_t n)
{
	const uint8_t *s;
	size_t at = 0, len;
	bool complete;
	if (!tachi_probe_text(p, n) || !tachi_probe_line(p, n, &at, &s, &len, &complete) ||
	    !complete || s != p || !header(s, len))
		return false;
	if (!tachi_probe_line(p, n, &at, &s, &len, &complete))
		return n < TACHI_PROBE_BYTES;
	return !complete || top_node(s, len);
}

const struct tachi_format tachi_fmt_pmcstat = {
	.name = "pmcstat",
	.reader = &tachi_pmcstat_reader_ops,
	.probe = pmcstat_probe,
};
