/* JSON output pieces for the writers of JSON formats (Gecko, speedscope): numbers inline,
 * for the per-row paths, and string bodies (jsonout.c). */
#ifndef TACHFMT_JSONOUT_H
#define TACHFMT_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

static const char tachi_digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal as tachi_fmt_u64, for the u32 values (stack and frame indices) of every row:
 * 32-bit divisions and the length by comparisons cost about half. Writes up to 10 bytes. */
static inline size_t tachi_fmt_u32(char *buf, uint32_t v)
{
	size_t n = v < 100000 ? (v < 100 ? 1 + (v >= 10) : v < 1000 ? 3 : v < 10000 ? 4 : 5)
			      : v < 10000000 ? 6 + (v >= 1000000)
					     : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
	char *q = buf + n;
	while (v >= 100) {
		uint32_t r = v % 100;
		v /= 100;
		q -= 2;
		memcpy(q, tachi_digit_pairs + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(q - 2, tachi_digit_pairs + 2 * v, 2);
	else
		q[-1] = (char)('0' + v);
	return n;
}

/* The fraction f/1000 of a ms, shortest (nothing for 0); writes 4 bytes whatever the
 * length. */
static inline size_t tachi_fmt_frac(char *buf, unsigned f)
{
	unsigned h = f / 10, d = f - h * 10;
	buf[0] = '.';
	memcpy(buf + 1, tachi_digit_pairs + 2 * h, 2);
	buf[3] = (char)('0' + d);
	return d ? 4 : !f ? 0 : h % 10 ? 3 : 2;
}

/* µs as exact decimal ms ("12.5", "-0.001"), at most 23 bytes. */
static inline size_t tachi_fmt_ms(char *buf, bool neg, uint64_t us)
{
	size_t n = 0;
	if (neg && us)
		buf[n++] = '-';
	n += tachi_fmt_u64(buf + n, us / 1000);
	return n + tachi_fmt_frac(buf + n, (unsigned)(us % 1000));
}

/* A JSON string body from bytes, invalid UTF-8 as U+FFFD (*repaired set), at most 6 * n
 * bytes. */
size_t tachi_json_escape(char *out, const char *s, size_t n, bool *repaired);

#endif
