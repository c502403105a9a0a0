/* The "samples" text form (read.c describes it): its table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/samples/samples.h"

/* The first line that is not blank or a comment: a header line the reader knows, or
 * "TID IID TIMESTAMP_US STATUS" and a TAB. */
static bool samples_probe(const uint8_t *p, size_t n)
{
	static const char *const keys[] = { "@start_time_us ", "@interval_us ", "@python_version ",
					    "@profiling_config ", "@tachstat ", "@order " };
	const uint8_t *s;
	size_t at = 0, len;
	bool complete;
	if (!tachi_probe_text(p, n) || !tachi_probe_line(p, n, &at, &s, &len, &complete))
		return false;
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (len >= strlen(keys[i]) && !memcmp(s, keys[i], strlen(keys[i])))
			return true;
	const uint8_t *tab = memchr(s, '\t', len);
	if (!tab)
		return false;
	size_t fields = 0, digits = 0;
	for (const uint8_t *q = s; q <= tab; q++) {
		if (*q >= '0' && *q <= '9') {
			digits++;
			continue;
		}
		if (!digits || (*q != ' ' && q != tab))
			return false;
		fields++;
		digits = 0;
	}
	return fields == 4;
}

const struct tachi_format tachi_fmt_samples = {
	.name = "samples",
	.reader = &tachi_samples_reader_ops,
	.writer = &tachi_samples_writer_ops,
	.probe = samples_probe,
};
