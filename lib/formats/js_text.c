/* Text as speedscope's importers see it: js_text.h. */
#include <stdbool.h>

#include "formats/js_text.h"

size_t tachi_js_term(const unsigned char *s, size_t n, size_t i)
{
	if (s[i] == '\n' || s[i] == '\r')
		return 1;
	return n - i >= 3 && s[i] == 0xe2 && s[i + 1] == 0x80 &&
	       (s[i + 2] == 0xa8 || s[i + 2] == 0xa9) ? 3 : 0;
}

size_t tachi_js_space(const unsigned char *s, size_t n, size_t i)
{
	unsigned char c = s[i];
	if (c == ' ' || (c >= '\t' && c <= '\r'))
		return 1;
	if (c == 0xc2)
		return n - i >= 2 && s[i + 1] == 0xa0 ? 2 : 0;
	if (n - i < 3 || c < 0xe1)
		return 0;
	unsigned a = s[i + 1], b = s[i + 2];
	bool sp = (c == 0xe1 && a == 0x9a && b == 0x80) ||
		  (c == 0xe2 && a == 0x80 && (b <= 0x8a || b == 0xa8 || b == 0xa9 || b == 0xaf)) ||
		  (c == 0xe2 && a == 0x81 && b == 0x9f) || (c == 0xe3 && a == 0x80 && b == 0x80) ||
		  (c == 0xef && a == 0xbb && b == 0xbf);
	return sp && b >= 0x80 ? 3 : 0;
}

static int digit(char c, int radix)
{
	int d = c >= '0' && c <= '9' ? c - '0'
		: c >= 'a' && c <= 'z' ? c - 'a' + 10
		: c >= 'A' && c <= 'Z' ? c - 'A' + 10 : 99;
	return d < radix ? d : -1;
}

int tachi_js_parse_int(const char *s, size_t n, int64_t *v)
{
	const unsigned char *u = (const unsigned char *)s;
	size_t i = 0, k;
	while (i < n && (k = tachi_js_space(u, n, i)))
		i += k;
	bool neg = i < n && s[i] == '-';
	i += i < n && (s[i] == '-' || s[i] == '+');
	int radix = 10;
	if (n - i >= 2 && s[i] == '0' && (s[i + 1] == 'x' || s[i + 1] == 'X'))
		radix = 16, i += 2;
	const uint64_t lim = (uint64_t)1 << 53;
	uint64_t x = 0;
	bool any = false, big = false;
	for (int d; i < n && (d = digit(s[i], radix)) >= 0; i++, any = true) {
		big |= x > (lim - (uint64_t)d) / (uint64_t)radix;
		if (!big)
			x = x * (uint64_t)radix + (uint64_t)d;
	}
	if (!any)
		return TACHI_JS_NAN;
	if (big)
		return TACHI_JS_BIG;
	*v = neg ? -(int64_t)x : (int64_t)x;
	return TACHI_JS_NUM;
}
