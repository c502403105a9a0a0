/* UTF-8 checks and repair (utf8.c): labels and JSON strings must be valid UTF-8. */
#ifndef TACHFMT_UTF8_H
#define TACHFMT_UTF8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

/* Valid UTF-8 check; repairs into out with U+FFFD when asked. */
bool tachi_utf8_valid(const uint8_t *p, size_t n);
/* Copies n bytes of s to out (room for 3 * n) as valid UTF-8, each invalid byte as U+FFFD;
 * returns the length written and sets *repaired when it replaced any. */
size_t tachi_utf8_repair(char *out, const char *s, size_t n, bool *repaired);
/* One character of p[*i] (a lead byte >= 0x80): the whole sequence when it is valid UTF-8,
 * else U+FFFD for that byte alone (*repaired set); advances *i, returns the bytes written
 * to out (at most 4). */
static inline size_t tachi_utf8_char(char *out, const uint8_t *p, size_t n, size_t *i,
				     bool *repaired)
{
	uint8_t c = p[*i];
	size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
	if (len > 1 && len <= n - *i && tachi_utf8_valid(p + *i, len)) {
		memcpy(out, p + *i, len);
		*i += len;
		return len;
	}
	memcpy(out, "\xEF\xBF\xBD", 3);
	*i += 1;
	*repaired = true;
	return 3;
}

#endif
