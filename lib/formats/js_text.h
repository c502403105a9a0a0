/* Text as speedscope's importers see it (js_text.c): JavaScript's white space, line
 * terminators and parseInt over UTF-8 bytes, for the readers that read a format as one of
 * speedscope's importers does (pmcstat, papyrus). */
#ifndef TACHFMT_JS_TEXT_H
#define TACHFMT_JS_TEXT_H

#include <stddef.h>
#include <stdint.h>

/* The length of the JavaScript line terminator at s[i] (LF, CR, U+2028, U+2029), else 0;
 * i < n. */
size_t tachi_js_term(const unsigned char *s, size_t n, size_t i);
/* The length of the character at s[i] that JavaScript's \s takes (its Unicode spaces
 * too), else 0; i < n. */
size_t tachi_js_space(const unsigned char *s, size_t n, size_t i);

enum { TACHI_JS_NUM, TACHI_JS_NAN, TACHI_JS_BIG };
/* parseInt(s) with no radix: leading white space, a sign, "0x" for hex, the digits up to
 * the first that is none. TACHI_JS_NAN where it gives NaN, TACHI_JS_BIG past 2^53 (where
 * JavaScript's number is no longer the integer written), else *v. */
int tachi_js_parse_int(const char *s, size_t n, int64_t *v);

#endif
