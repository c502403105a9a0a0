/* Errors and warnings, memory growth, option values, locale-free decimal numbers. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"

TACH_API const char *tach_version(void)
{
	return TACHFMT_VERSION_STRING;
}

TACH_API const char *tach_strerror(int code)
{
	switch (code) {
	case TACH_OK: return "success";
	case TACH_EOF: return "end of samples";
	case TACH_E_NOMEM: return "out of memory";
	case TACH_E_IO: return "input/output error";
	case TACH_E_FORMAT: return "invalid data";
	case TACH_E_LIMIT: return "limit exceeded";
	case TACH_E_USAGE: return "invalid usage";
	case TACH_E_UNSUPPORTED: return "unsupported";
	default: return "unknown error";
	}
}

int tachi_fail(struct tachi_err *e, int code, int pos_kind, uint64_t pos, const char *fmt, ...)
{
	/* The first failure is the one worth reporting; later ones are consequences. */
	if (e->code < 0)
		return e->code;
	e->code = code;
	e->pos_kind = pos_kind;
	e->pos = pos;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void tachi_warn(const struct tachi_warner *w, int pos_kind, uint64_t pos, const char *fmt, ...)
{
	if (!w->fn)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->fn(w->ctx, msg, pos_kind, pos);
}

bool tachi_reserve(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return false;
		n *= 2;
	}
	size_t bytes;
	if (__builtin_mul_overflow(n, elem, &bytes))
		return false;
	void *q = realloc(*p, bytes);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

bool tachi_idmap_reserve(uint32_t **map, size_t *cap, size_t need)
{
	size_t old = *cap;
	if (!tachi_reserve((void **)map, cap, need, sizeof(**map)))
		return false;
	memset(*map + old, 0xff, (*cap - old) * sizeof(**map));
	return true;
}

bool tachi_bits_hold(uint64_t **bits, size_t *cap, size_t n)
{
	size_t old = *cap;
	if (!tachi_reserve((void **)bits, cap, n / 64 + 1, sizeof(**bits)))
		return false;
	memset(*bits + old, 0, (*cap - old) * sizeof(**bits));
	return true;
}

bool tachi_parse_dec(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	if (!n)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		/* 19 digits always fit: the division only from the 20th */
		if (i >= 19 && v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

bool tachi_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	return s && tachi_parse_dec(s, strlen(s), max, out);
}

bool tachi_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	if (!s)
		return false;
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	unsigned shift = 0;
	const char *u = s + n;
	if (*u && strchr(units, *u)) {
		shift = 10 * (unsigned)(strchr(units, *u) - units + 1);
		u++;
		if (!strcmp(u, "iB"))
			u += 2;
	}
	uint64_t v;
	if (*u || !tachi_parse_dec(s, n, UINT64_MAX, &v) || (shift && v > UINT64_MAX >> shift))
		return false;
	*out = v << shift;
	return true;
}

int tachi_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool tachi_parse_bool(const char *s, bool *out)
{
	if (!s || !strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "true")) {
		*out = true;
		return true;
	}
	if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "false")) {
		*out = false;
		return true;
	}
	return false;
}

/* "00" to "99": two digits a step, written from the end, halve the divisions; JSON and
 * text outputs print numbers by the million. */
static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

size_t tachi_fmt_u64(char *buf, uint64_t v)
{
	/* Most numbers written are small ids and counts. */
	if (v < 100) {
		if (v < 10) {
			buf[0] = (char)('0' + v);
			return 1;
		}
		memcpy(buf, digit_pairs + 2 * v, 2);
		return 2;
	}
	/* The length first, so the digits go straight to their place: log10 from the bit
	 * length (1233 / 4096 is just above log10(2)), less one below that power of ten. */
	unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12;
	size_t n = t + 1 - (v < pow10_u64[t]);
	char *q = buf + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		q[0] = digit_pairs[2 * r];
		q[1] = digit_pairs[2 * r + 1];
	}
	if (v >= 10) {
		q[-2] = digit_pairs[2 * v];
		q[-1] = digit_pairs[2 * v + 1];
	} else {
		q[-1] = (char)('0' + v);
	}
	return n;
}

size_t tachi_fmt_i64(char *buf, int64_t v)
{
	if (v < 0) {
		buf[0] = '-';
		return 1 + tachi_fmt_u64(buf + 1, (uint64_t)0 - (uint64_t)v);
	}
	return tachi_fmt_u64(buf, (uint64_t)v);
}
