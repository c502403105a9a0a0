/* A strict RFC 8259 JSON pull parser (json.h says how it is used). It keeps no tree: a
 * cursor is an offset, a depth and one bit per open level, so a reader can walk a
 * profile of any size in the memory of the bytes themselves. */
#include <assert.h>
#include <stdio.h>
#include <string.h>

#include "base/json.h"

static int fail(struct tachi_json *j, size_t off, const char *what)
{
	return tachi_fail(j->err, TACH_E_FORMAT, TACH_POS_OFFSET, off, "JSON: %s", what);
}

/* A punctuation mark was expected at j->pos: a cut-short input says so. */
static int fail_here(struct tachi_json *j, const char *what)
{
	return fail(j, j->pos, j->pos >= j->n ? "unexpected end of input" : what);
}

static void skip_ws(struct tachi_json *j)
{
	const uint8_t *p = j->p;
	size_t i = j->pos, n = j->n;
	while (i < n && (p[i] == ' ' || p[i] == '\n' || p[i] == '\r' || p[i] == '\t'))
		i++;
	j->pos = i;
}

void tachi_json_init(struct tachi_json *j, const uint8_t *p, size_t n, size_t pos,
		     uint32_t max_depth, struct tachi_err *err)
{
	memset(j, 0, sizeof(*j));
	j->p = p;
	j->n = n;
	j->pos = pos < n ? pos : n;
	j->max_depth = max_depth && max_depth < TACHI_JSON_MAX_DEPTH ? max_depth : TACHI_JSON_MAX_DEPTH;
	j->err = err;
}

static bool top_is_obj(const struct tachi_json *j)
{
	uint32_t d = j->depth - 1;
	return j->is_obj[d / 8] >> (d % 8) & 1;
}

/* The length of the UTF-8 sequence at p (n bytes left), 0 when it is not valid: no
 * overlong forms, no surrogates, nothing past U+10FFFF. */
static size_t utf8_seq(const uint8_t *p, size_t n)
{
	uint8_t c = p[0];
	size_t len;
	uint32_t min, v;
	if (c >= 0xc2 && c <= 0xdf)
		len = 2, min = 0x80, v = c & 0x1f;
	else if (c >= 0xe0 && c <= 0xef)
		len = 3, min = 0x800, v = c & 0x0f;
	else if (c >= 0xf0 && c <= 0xf4)
		len = 4, min = 0x10000, v = c & 0x07;
	else
		return 0;
	if (n < len)
		return 0;
	for (size_t i = 1; i < len; i++) {
		if ((p[i] & 0xc0) != 0x80)
			return 0;
		v = v << 6 | (p[i] & 0x3f);
	}
	if (v < min || v > 0x10ffff || (v >= 0xd800 && v <= 0xdfff))
		return 0;
	return len;
}

static int hex4(const uint8_t *p, size_t left, uint32_t *v)
{
	if (left < 4)
		return -1;
	uint32_t x = 0;
	for (int i = 0; i < 4; i++) {
		int h = p[i] >= '0' && p[i] <= '9' ? p[i] - '0' :
			(p[i] | 0x20) >= 'a' && (p[i] | 0x20) <= 'f' ? (p[i] | 0x20) - 'a' + 10 : -1;
		if (h < 0)
			return -1;
		x = x << 4 | (uint32_t)h;
	}
	*v = x;
	return 0;
}

/* The escape at p[i] (the byte after a backslash); *i moves past it. */
static int check_escape(struct tachi_json *j, size_t *i)
{
	const uint8_t *p = j->p;
	size_t k = *i;
	if (k >= j->n)
		return fail(j, k - 1, "unterminated string");
	if (p[k] && strchr("\"\\/bfnrt", p[k])) {
		*i = k + 1;
		return TACH_OK;
	}
	uint32_t u, lo;
	if (p[k] != 'u')
		return fail(j, k - 1, "invalid escape in string");
	if (hex4(p + k + 1, j->n - k - 1, &u))
		return fail(j, k - 1, "\\u needs four hexadecimal digits");
	k += 5;
	bool paired = u >= 0xd800 && u <= 0xdbff && j->n - k >= 6 && p[k] == '\\' &&
		      p[k + 1] == 'u' && !hex4(p + k + 2, j->n - k - 2, &lo) && lo >= 0xdc00 &&
		      lo <= 0xdfff;
	if (u >= 0xd800 && u <= 0xdfff && !paired) {
		if (!j->lone_at)
			return fail(j, k - 6, u >= 0xdc00 ? "\\u escape of a lone low surrogate"
						  : "\\u escape of a high surrogate without its low half");
		if (!*j->lone_at)
			*j->lone_at = k - 6 + 1;
	}
	*i = k + (paired ? 6 : 0);
	return TACH_OK;
}

/* A string whose opening quote is at j->pos. */
static int scan_string(struct tachi_json *j, struct tachi_jtok *t)
{
	const uint8_t *p = j->p;
	size_t i = j->pos + 1, n = j->n;
	t->type = TJ_STRING;
	t->off = j->pos;
	t->start = i;
	t->escaped = false;
	for (;;) {
		/* the common bytes in a tight loop */
		while (i < n && p[i] >= 0x20 && p[i] < 0x80 && p[i] != '"' && p[i] != '\\')
			i++;
		if (i >= n)
			return fail(j, t->off, "unterminated string");
		uint8_t c = p[i];
		if (c == '"')
			break;
		if (c == '\\') {
			t->escaped = true;
			i++;
			int rc = check_escape(j, &i);
			if (rc)
				return rc;
		} else if (c < 0x20) {
			return fail(j, i, "control character in string (escape it)");
		} else {
			size_t k = utf8_seq(p + i, n - i);
			if (!k)
				return fail(j, i, "invalid UTF-8 in string");
			i += k;
		}
	}
	t->len = i - t->start;
	j->pos = i + 1;
	return TACH_OK;
}

static bool is_digit(const uint8_t *p, size_t i, size_t n)
{
	return i < n && p[i] >= '0' && p[i] <= '9';
}

static int scan_number(struct tachi_json *j, struct tachi_jtok *t)
{
	const uint8_t *p = j->p;
	size_t i = j->pos, n = j->n;
	t->type = TJ_NUMBER;
	t->off = t->start = i;
	t->escaped = false;
	if (p[i] == '-')
		i++;
	if (!is_digit(p, i, n))
		return fail(j, t->off, "malformed number");
	if (p[i] == '0') {
		if (is_digit(p, ++i, n))
			return fail(j, t->off, "number with a leading zero");
	} else {
		while (is_digit(p, i, n))
			i++;
	}
	if (i < n && p[i] == '.') {
		if (!is_digit(p, ++i, n))
			return fail(j, t->off, "malformed number: no digit after '.'");
		while (is_digit(p, i, n))
			i++;
	}
	if (i < n && (p[i] == 'e' || p[i] == 'E')) {
		i++;
		if (i < n && (p[i] == '+' || p[i] == '-'))
			i++;
		if (!is_digit(p, i, n))
			return fail(j, t->off, "malformed number: no digit in the exponent");
		while (is_digit(p, i, n))
			i++;
	}
	t->len = i - t->start;
	j->pos = i;
	return TACH_OK;
}

static int literal(struct tachi_json *j, struct tachi_jtok *t, const char *word, int type)
{
	size_t k = strlen(word);
	if (j->n - j->pos < k || memcmp(j->p + j->pos, word, k))
		return fail(j, j->pos, "unexpected character");
	t->type = type;
	t->off = t->start = j->pos;
	t->len = k;
	t->escaped = false;
	j->pos += k;
	return TACH_OK;
}

static int open_container(struct tachi_json *j, struct tachi_jtok *t, bool obj)
{
	if (j->depth >= j->max_depth) {
		char msg[64];
		snprintf(msg, sizeof(msg), "nested deeper than %u levels", j->max_depth);
		return fail(j, j->pos, msg);
	}
	uint32_t d = j->depth++;
	if (obj)
		j->is_obj[d / 8] |= (uint8_t)(1u << (d % 8));
	else
		j->is_obj[d / 8] &= (uint8_t)~(1u << (d % 8));
	t->type = obj ? TJ_OBJECT : TJ_ARRAY;
	t->off = t->start = j->pos++;
	t->len = 1;
	t->escaped = false;
	j->fresh = true;
	return TACH_OK;
}

int tachi_json_value(struct tachi_json *j, struct tachi_jtok *t)
{
	skip_ws(j);
	j->fresh = false;
	if (j->pos >= j->n)
		return fail(j, j->pos, "unexpected end of input");
	switch (j->p[j->pos]) {
	case '{':
		return open_container(j, t, true);
	case '[':
		return open_container(j, t, false);
	case '"':
		return scan_string(j, t);
	case 't':
		return literal(j, t, "true", TJ_TRUE);
	case 'f':
		return literal(j, t, "false", TJ_FALSE);
	case 'n':
		return literal(j, t, "null", TJ_NULL);
	default:
		if (j->p[j->pos] == '-' || (j->p[j->pos] >= '0' && j->p[j->pos] <= '9'))
			return scan_number(j, t);
		if (j->pos == 0 && j->n >= 3 && !memcmp(j->p, "\xef\xbb\xbf", 3))
			return fail(j, 0, "byte order mark (RFC 8259 JSON has none)");
		return fail(j, j->pos, "unexpected character");
	}
}

static void close_container(struct tachi_json *j)
{
	j->depth--;
	j->pos++;
	j->fresh = false;
}

int tachi_json_key(struct tachi_json *j, struct tachi_jtok *key, bool *more)
{
	assert(j->depth > 0 && top_is_obj(j));
	skip_ws(j);
	bool first = j->fresh;
	j->fresh = false;
	if (j->pos < j->n && j->p[j->pos] == '}') {
		close_container(j);
		*more = false;
		return TACH_OK;
	}
	if (!first) {
		if (j->pos >= j->n || j->p[j->pos] != ',')
			return fail_here(j, "expected ',' or '}' in an object");
		j->pos++;
		skip_ws(j);
	}
	if (j->pos >= j->n || j->p[j->pos] != '"')
		return fail_here(j, "expected a string key in an object");
	int rc = scan_string(j, key);
	if (rc)
		return rc;
	skip_ws(j);
	if (j->pos >= j->n || j->p[j->pos] != ':')
		return fail_here(j, "expected ':' after an object key");
	j->pos++;
	*more = true;
	return TACH_OK;
}

int tachi_json_elem(struct tachi_json *j, bool *more)
{
	assert(j->depth > 0 && !top_is_obj(j));
	skip_ws(j);
	bool first = j->fresh;
	j->fresh = false;
	if (j->pos < j->n && j->p[j->pos] == ']') {
		close_container(j);
		*more = false;
		return TACH_OK;
	}
	if (!first) {
		if (j->pos >= j->n || j->p[j->pos] != ',')
			return fail_here(j, "expected ',' or ']' in an array");
		j->pos++;
		skip_ws(j);
		if (j->pos < j->n && j->p[j->pos] == ']')
			return fail(j, j->pos, "']' after ','");
	}
	*more = true;
	return TACH_OK;
}

int tachi_json_skip(struct tachi_json *j)
{
	uint32_t base = j->depth;
	struct tachi_jtok t;
	int rc = tachi_json_value(j, &t);
	while (!rc && j->depth > base) {
		bool more;
		rc = top_is_obj(j) ? tachi_json_key(j, &t, &more) : tachi_json_elem(j, &more);
		if (!rc && more)
			rc = tachi_json_value(j, &t);
	}
	return rc;
}

int tachi_json_end(struct tachi_json *j)
{
	skip_ws(j);
	if (j->pos < j->n)
		return fail(j, j->pos, "unexpected bytes after the value");
	return TACH_OK;
}

static size_t put_utf8(char *o, uint32_t u)
{
	if (u < 0x80) {
		o[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		o[0] = (char)(0xc0 | u >> 6);
		o[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	if (u < 0x10000) {
		o[0] = (char)(0xe0 | u >> 12);
		o[1] = (char)(0x80 | (u >> 6 & 0x3f));
		o[2] = (char)(0x80 | (u & 0x3f));
		return 3;
	}
	o[0] = (char)(0xf0 | u >> 18);
	o[1] = (char)(0x80 | (u >> 12 & 0x3f));
	o[2] = (char)(0x80 | (u >> 6 & 0x3f));
	o[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

size_t tachi_json_unescape(const uint8_t *p, const struct tachi_jtok *t, char *out)
{
	const uint8_t *s = p + t->start, *e = s + t->len;
	if (!t->escaped) {
		memcpy(out, s, t->len);
		return t->len;
	}
	size_t o = 0;
	while (s < e) {
		if (*s != '\\') {
			out[o++] = (char)*s++;
			continue;
		}
		uint8_t c = s[1];
		s += 2;
		static const char from[] = "bfnrt", to[] = "\b\f\n\r\t";
		const char *k = c ? strchr(from, c) : NULL;
		if (c != 'u') {
			out[o++] = k ? to[k - from] : (char)c;
			continue;
		}
		uint32_t u = 0, lo = 0;
		hex4(s, 4, &u);
		s += 4;
		/* a lone surrogate (taken only where the cursor allowed it) is U+FFFD */
		if (u >= 0xd800 && u <= 0xdbff && e - s >= 6 && s[0] == '\\' && s[1] == 'u' &&
		    !hex4(s + 2, 4, &lo) && lo >= 0xdc00 && lo <= 0xdfff) {
			s += 6;
			u = 0x10000 + ((u - 0xd800) << 10) + (lo - 0xdc00);
		} else if (u >= 0xd800 && u <= 0xdfff) {
			u = 0xfffd;
		}
		o += put_utf8(out + o, u);
	}
	return o;
}

bool tachi_json_str_eq(const uint8_t *p, const struct tachi_jtok *t, const char *lit)
{
	size_t k = strlen(lit);
	if (!t->escaped)
		return t->len == k && !memcmp(p + t->start, lit, k);
	char buf[256];
	/* an escape is at most 6 bytes per decoded byte */
	if (t->len > sizeof(buf) || t->len > 6 * k)
		return false;
	size_t n = tachi_json_unescape(p, t, buf);
	return n == k && !memcmp(buf, lit, k);
}

#define MANT_DIGITS 19
#define EXP_CLAMP 1000000000

void tachi_json_number(const uint8_t *p, const struct tachi_jtok *t, struct tachi_jnum *v)
{
	const uint8_t *s = p + t->start, *e = s + t->len;
	memset(v, 0, sizeof(*v));
	if (*s == '-') {
		v->neg = true;
		s++;
	}
	int digits = 0;
	bool frac = false;
	for (; s < e && *s != 'e' && *s != 'E'; s++) {
		if (*s == '.') {
			frac = true;
			continue;
		}
		unsigned d = *s - '0';
		if (digits < MANT_DIGITS && (digits || d)) {
			v->mant = v->mant * 10 + d;
			digits++;
			v->exp -= frac;
		} else if (digits >= MANT_DIGITS) {
			/* a digit past the 19th: the integer part still scales, a fraction's not */
			v->exp += !frac;
			v->inexact |= d != 0;
		} else {
			v->exp -= frac; /* a zero before any significant digit */
		}
	}
	if (s < e) {
		s++;
		bool eneg = *s == '-';
		if (*s == '-' || *s == '+')
			s++;
		int64_t x = 0;
		for (; s < e; s++)
			if (x < EXP_CLAMP)
				x = x * 10 + (*s - '0');
		v->exp += eneg ? -x : x;
	}
	if (!v->mant)
		v->exp = 0;
}

static const uint64_t pow10_tab[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

/* |value| * 10^scale as an unsigned integer, rounded; false when it passes 2^64 - 1. */
static bool magnitude(const struct tachi_jnum *v, int64_t e, bool exact, uint64_t *out)
{
	uint64_t m = v->mant;
	if (!m) {
		*out = 0;
		return true;
	}
	if (e >= 0) {
		if (e > 19 || __builtin_mul_overflow(m, pow10_tab[e], &m))
			return false;
		*out = m;
		return !exact || !v->inexact;
	}
	if (-e > 19) {
		*out = 0;
		return !exact;
	}
	uint64_t d = pow10_tab[-e], q = m / d, r = m % d;
	if (exact)
		return r == 0 && !v->inexact && (*out = q, true);
	*out = q + (r >= d - r); /* a half rounds away from zero */
	return true;
}

bool tachi_json_int(const struct tachi_jnum *v, int64_t min, int64_t max, int64_t *out)
{
	uint64_t m;
	if (!magnitude(v, v->exp, true, &m))
		return false;
	if (v->neg ? m > (uint64_t)INT64_MAX + 1 : m > (uint64_t)INT64_MAX)
		return false;
	int64_t x = v->neg ? (int64_t)(0 - m) : (int64_t)m;
	if (x < min || x > max)
		return false;
	*out = x;
	return true;
}

bool tachi_json_tok_int(const uint8_t *p, const struct tachi_jtok *t, int64_t min, int64_t max,
			int64_t *out)
{
	struct tachi_jnum v;
	if (t->type != TJ_NUMBER)
		return false;
	tachi_json_number(p, t, &v);
	return tachi_json_int(&v, min, max, out);
}

bool tachi_json_scaled(const struct tachi_jnum *v, int scale, int64_t *out)
{
	uint64_t m;
	if (!magnitude(v, v->exp + scale, false, &m) || m > (uint64_t)INT64_MAX)
		return false;
	*out = v->neg ? -(int64_t)m : (int64_t)m;
	return true;
}

int tachi_json_keys(struct tachi_json *j, const char *const *want, uint64_t *offs, size_t n)
{
	for (size_t i = 0; i < n; i++)
		offs[i] = UINT64_MAX;
	for (;;) {
		struct tachi_jtok k;
		bool more;
		int rc = tachi_json_key(j, &k, &more);
		if (rc || !more)
			return rc;
		for (size_t i = 0; i < n; i++)
			if (tachi_json_str_eq(j->p, &k, want[i]))
				offs[i] = j->pos;
		if ((rc = tachi_json_skip(j)))
			return rc;
	}
}

size_t tachi_json_bom(const uint8_t *p, size_t n)
{
	return n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3) ? 3 : 0;
}

bool tachi_json_object_start(const uint8_t *p, size_t n)
{
	size_t i = tachi_json_bom(p, n);
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	return i < n && p[i] == '{';
}
