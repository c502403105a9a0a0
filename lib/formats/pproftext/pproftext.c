/* pprof's and gperftools' legacy text profiles (heap, growth, fragmentation, contention,
 * thread and Go count profiles): the table row and probe; the reader is read.c. The kinds
 * are told apart by their first line as google/pprof's legacy parser tells them. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/pproftext/pproftext.h"

/* The first line that is not blank or a '#' comment names the kind. */
static bool pproftext_probe(const uint8_t *p, size_t n)
{
	const uint8_t *s;
	size_t at = 0, len;
	bool complete;
	if (!tachi_probe_text(p, n))
		return false;
	while (tachi_probe_line(p, n, &at, &s, &len, &complete)) {
		size_t k = 0;
		while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
			k++;
		if (k == len || s[k] == '#')
			continue;
		return tachi_ppt_kind((const char *)s, len) != PPT_NONE;
	}
	return false;
}

const struct tachi_format tachi_fmt_pproftext = {
	.name = "pproftext",
	.reader = &tachi_pproftext_reader_ops,
	.probe = pproftext_probe,
};
