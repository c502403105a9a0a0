/* Instruments' xctrace export XML (read.c describes it): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/xctrace/xctrace.h"

static bool blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* Whether p[*i, n) starts with lit; *i then past it. */
static bool take(const uint8_t *p, size_t n, size_t *i, const char *lit)
{
	size_t l = strlen(lit);
	if (n - *i < l || memcmp(p + *i, lit, l))
		return false;
	*i += l;
	return true;
}

/* The root element is <trace-query-result>, what xctrace export writes: after a byte
 * order mark, blanks, the XML declaration and comments, within the window. */
static bool xctrace_probe(const uint8_t *p, size_t n)
{
	size_t i = 0;
	if (!tachi_probe_text(p, n))
		return false;
	take(p, n, &i, "\xef\xbb\xbf");
	for (;;) {
		while (i < n && blank(p[i]))
			i++;
		const char *end = take(p, n, &i, "<?") ? "?>" : take(p, n, &i, "<!--") ? "-->" : NULL;
		if (!end)
			break;
		const uint8_t *e = memmem(p + i, n - i, end, strlen(end));
		if (!e)
			return false;
		i = (size_t)(e - p) + strlen(end);
	}
	return take(p, n, &i, "<trace-query-result") && i < n &&
	       (blank(p[i]) || p[i] == '>' || p[i] == '/');
}

const struct tachi_format tachi_fmt_xctrace = {
	.name = "xctrace",
	.reader = &tachi_xctrace_reader_ops,
	.probe = xctrace_probe,
};
