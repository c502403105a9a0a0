/* JSON string bodies: what a writer of JSON puts between the quotes of any text. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/jsonout.h"
#include "base/utf8.h"

size_t tachi_json_escape(char *out, const char *s, size_t n, bool *repaired)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)s;
	size_t o = 0, i = 0;
	while (i < n) {
		uint8_t c = p[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			out[o++] = (char)c;
			i++;
			continue;
		}
		if (c < 0x80) {
			out[o++] = '\\';
			switch (c) {
			case '"': out[o++] = '"'; break;
			case '\\': out[o++] = '\\'; break;
			case '\n': out[o++] = 'n'; break;
			case '\r': out[o++] = 'r'; break;
			case '\t': out[o++] = 't'; break;
			case '\b': out[o++] = 'b'; break;
			case '\f': out[o++] = 'f'; break;
			default:
				out[o++] = 'u';
				out[o++] = '0';
				out[o++] = '0';
				out[o++] = hex[c >> 4];
				out[o++] = hex[c & 15];
			}
			i++;
			continue;
		}
		o += tachi_utf8_char(out + o, p, n, &i, repaired);
	}
	return o;
}
