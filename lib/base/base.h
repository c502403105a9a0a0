/* What every module uses, io.c included, which knows nothing else of the library:
 * compiler hints, error records (the status, where in the input, a message), growing
 * arrays, locale-free decimal numbers. */
#ifndef TACHFMT_BASE_H
#define TACHFMT_BASE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

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

#endif
