/* What every module uses, io.c included, which knows nothing else of the library:
 * compiler hints, error records (the status, where in the input, a message) and warnings,
 * growing arrays, id maps and bitmaps, locale-free decimal numbers, option values (base.c). */
#ifndef TACHFMT_BASE_H
#define TACHFMT_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdarg.h>

#include "tachfmt.h"

#define TACHI_PRINTF(a, b) __attribute__((format(printf, a, b)))
#define TACHI_LIKELY(x) __builtin_expect(!!(x), 1)
#define TACHI_UNLIKELY(x) __builtin_expect(!!(x), 0)

struct tachi_err {
	int code;
	int pos_kind;
	uint64_t pos;
	char msg[512];
};
int tachi_fail(struct tachi_err *e, int code, int pos_kind, uint64_t pos, const char *fmt, ...)
	TACHI_PRINTF(5, 6);

/* Grows *p (elements of size elem) so that at least need fit; returns false on overflow or
 * allocation failure, leaving *p unchanged. */
bool tachi_reserve(void **p, size_t *cap, size_t need, size_t elem);
/* The common case (room already there) stays inline: per-frame and per-node paths call it. */
#define TACHI_RESERVE(arr, cap, need)                                                        \
	((size_t)(need) <= (cap) || tachi_reserve((void **)&(arr), &(cap), (need), sizeof(*(arr))))

/* The longest string a reader takes from its input: far longer than any symbol (C++ and Rust
 * names reach some KB), so that a string meant only to cost memory is refused at once. */
#define TACHI_MAX_STRING (1u << 20)

/* Locale-free decimal; returns the length written (<= 20 digits + sign). */
size_t tachi_fmt_u64(char *buf, uint64_t v);
size_t tachi_fmt_i64(char *buf, int64_t v);

struct tachi_warner {
	tach_warn_fn fn;
	void *ctx;
};
void tachi_warn(const struct tachi_warner *w, int pos_kind, uint64_t pos, const char *fmt, ...)
	TACHI_PRINTF(4, 5);

/* ---- memory ---- */
/* Grows an id map (source id -> our id) to hold index need - 1; new slots read
 * UINT32_MAX, "not mapped yet". */
bool tachi_idmap_reserve(uint32_t **map, size_t *cap, size_t need);
/* A bitmap in 64-bit words: grows *bits (cap in words) to hold bit n, new words clear. */
bool tachi_bits_hold(uint64_t **bits, size_t *cap, size_t n);
static inline bool tachi_bit(const uint64_t *bits, size_t n)
{
	return bits[n / 64] >> (n % 64) & 1;
}
static inline void tachi_bit_set(uint64_t *bits, size_t n)
{
	bits[n / 64] |= UINT64_C(1) << (n % 64);
}

static inline bool tachi_add_overflows(size_t a, size_t b, size_t *out)
{
	return __builtin_add_overflow(a, b, out);
}

/* Parses an unsigned decimal option value; false if malformed or > max. */
bool tachi_parse_u64(const char *s, uint64_t max, uint64_t *out);
/* A byte count: decimal, optionally followed by K, M, G or T (powers of 1024, with or
 * without "iB"). */
bool tachi_parse_size(const char *s, uint64_t *out);
/* The same for n bytes at s (no sign, no space, at least one digit). */
bool tachi_parse_dec(const char *s, size_t n, uint64_t max, uint64_t *out);
/* The value of a hexadecimal digit, -1 for any other byte. */
int tachi_hexval(char c);
bool tachi_parse_bool(const char *s, bool *out);

/* The last component of path p[0, n) (all of it without a '/'); *len its length. */
static inline const char *tachi_base_name(const char *p, size_t n, size_t *len)
{
	const char *b = p + n;
	while (b > p && b[-1] != '/')
		b--;
	*len = (size_t)(p + n - b);
	return b;
}

#endif
