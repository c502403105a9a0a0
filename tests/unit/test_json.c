/* The JSON pull parser: walking and skipping, strings and their escapes, numbers exactly,
 * and malformed inputs refused at the right byte. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/json.h"

/* Parses the whole of s (one value, skipped) and returns the status; *off gets the error
 * offset. */
static int parse(const char *s, size_t n, uint64_t *off)
{
	struct tachi_err e = { 0 };
	struct tachi_json j;
	tachi_json_init(&j, (const uint8_t *)s, n, 0, 16, &e);
	int rc = tachi_json_skip(&j);
	if (!rc)
		rc = tachi_json_end(&j);
	*off = e.pos;
	if (rc && !e.msg[0])
		rc = 99; /* every failure must say what */
	return rc;
}

static void valid(const char *s)
{
	uint64_t off;
	int rc = parse(s, strlen(s), &off);
	if (rc)
		fprintf(stderr, "valid input refused: %s\n", s);
	CHECK(rc == TACH_OK);
}

static void invalid(const char *s, size_t n, uint64_t want_off)
{
	uint64_t off;
	int rc = parse(s, n, &off);
	if (rc != TACH_E_FORMAT || off != want_off)
		fprintf(stderr, "input %.*s: rc %d offset %llu, wanted offset %llu\n", (int)n, s, rc,
			(unsigned long long)off, (unsigned long long)want_off);
	CHECK(rc == TACH_E_FORMAT && off == want_off);
}
#define INVALID(lit, off) invalid(lit, sizeof(lit) - 1, off)

static void test_valid(void)
{
	valid("{}");
	valid("[]");
	valid(" \t\r\n[ 1 , -2.5e+3 , 0 , -0 , 0.0e-0 , 1E5 ] \n");
	valid("{\"a\":{\"b\":[true,false,null,\"x\"]},\"c\":[[],{}]}");
	valid("\"\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0041\\ud83d\\ude00\"");
	valid("\"caf\xc3\xa9 \xe2\x82\xac \xf0\x9f\x98\x80\"");
	valid("123");
	valid("null");
	/* 16 levels: the limit given */
	valid("[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]");
}

static void test_invalid(void)
{
	INVALID("", 0);
	INVALID("   ", 3);
	INVALID("{", 1);
	INVALID("[1,]", 3);
	INVALID("[,1]", 1);
	INVALID("{\"a\":1,}", 7);
	INVALID("{\"a\" 1}", 5);
	INVALID("{1:2}", 1);
	INVALID("{\"a\":1 \"b\":2}", 7);
	INVALID("[1 2]", 3);
	INVALID("[01]", 1);
	INVALID("[1.]", 1);
	INVALID("[.5]", 1);
	INVALID("[-]", 1);
	INVALID("[1e]", 1);
	INVALID("[+1]", 1);
	INVALID("[NaN]", 1);
	INVALID("[Infinity]", 1);
	INVALID("[-Infinity]", 1);
	INVALID("[tru]", 1);
	INVALID("[nulll]", 5);
	INVALID("[1]x", 3);
	INVALID("[1]]", 3);
	INVALID("'a'", 0);
	INVALID("[\"abc", 1);
	INVALID("[\"\\x\"]", 2);
	INVALID("[\"\\u12\"]", 2);
	INVALID("[\"\\ud800\"]", 2);
	INVALID("[\"\\udc00\"]", 2);
	INVALID("[\"\\ud800\\u0041\"]", 2);
	INVALID("[\"a\x01\"]", 3);
	INVALID("[\"a\tb\"]", 3);
	INVALID("[\"\xc0\x80\"]", 2);         /* overlong */
	INVALID("[\"\xed\xa0\x80\"]", 2);     /* a surrogate in UTF-8 */
	INVALID("[\"\xf4\x90\x80\x80\"]", 2); /* past U+10FFFF */
	INVALID("[\"\xff\"]", 2);
	INVALID("[\"\xe2\x82\"]", 2);         /* cut short */
	INVALID("\xef\xbb\xbf[]", 0);         /* byte order mark */
	INVALID("[[[[[[[[[[[[[[[[[]]]]]]]]]]]]]]]]]", 16);
	INVALID("[1,\"a\":2]", 6);
	INVALID("{\"a\":}", 5);
	INVALID("[\"a\" \"b\"]", 5);
	INVALID("[1\x00]", 2);
}

static void test_walk(void)
{
	const char *s = "{\"k\\u0031\":[1,{\"x\":2}],\"k2\":\"v\\n\",\"k3\":null}";
	struct tachi_err e = { 0 };
	struct tachi_json j;
	struct tachi_jtok t, k;
	bool more;
	const uint8_t *p = (const uint8_t *)s;
	tachi_json_init(&j, p, strlen(s), 0, 8, &e);
	CHECK(tachi_json_value(&j, &t) == TACH_OK && t.type == TJ_OBJECT);
	CHECK(tachi_json_key(&j, &k, &more) == TACH_OK && more);
	CHECK(k.escaped && tachi_json_str_eq(p, &k, "k1") && !tachi_json_str_eq(p, &k, "k"));
	CHECK(tachi_json_value(&j, &t) == TACH_OK && t.type == TJ_ARRAY);
	CHECK(tachi_json_elem(&j, &more) == TACH_OK && more);
	CHECK(tachi_json_value(&j, &t) == TACH_OK && t.type == TJ_NUMBER && t.len == 1);
	CHECK(tachi_json_elem(&j, &more) == TACH_OK && more);
	CHECK(tachi_json_skip(&j) == TACH_OK);
	CHECK(tachi_json_elem(&j, &more) == TACH_OK && !more);
	CHECK(tachi_json_key(&j, &k, &more) == TACH_OK && more && tachi_json_str_eq(p, &k, "k2"));
	CHECK(tachi_json_value(&j, &t) == TACH_OK && t.type == TJ_STRING);
	char buf[16];
	size_t n = tachi_json_unescape(p, &t, buf);
	CHECK(n == 2 && !memcmp(buf, "v\n", 2));
	CHECK(tachi_json_key(&j, &k, &more) == TACH_OK && more);
	CHECK(tachi_json_value(&j, &t) == TACH_OK && t.type == TJ_NULL);
	CHECK(tachi_json_key(&j, &k, &more) == TACH_OK && !more);
	CHECK(tachi_json_end(&j) == TACH_OK);
	/* a second cursor from the middle of the same bytes */
	struct tachi_json j2;
	tachi_json_init(&j2, p, strlen(s), 11, 8, &e);
	CHECK(tachi_json_value(&j2, &t) == TACH_OK && t.type == TJ_ARRAY);
}

static void test_unescape(void)
{
	const char *s = "\"\\u00e9\\ud83d\\ude00\\\"\\\\\\/\\b\\f\\n\\r\\t\\u0000x\"";
	struct tachi_err e = { 0 };
	struct tachi_json j;
	struct tachi_jtok t;
	tachi_json_init(&j, (const uint8_t *)s, strlen(s), 0, 8, &e);
	CHECK(tachi_json_value(&j, &t) == TACH_OK);
	char buf[64];
	size_t n = tachi_json_unescape((const uint8_t *)s, &t, buf);
	const char want[] = "\xc3\xa9\xf0\x9f\x98\x80\"\\/\b\f\n\r\t\0x";
	CHECK(n == sizeof(want) - 1 && !memcmp(buf, want, n));
	CHECK(n <= t.len);
}

static struct tachi_jnum num(const char *s)
{
	struct tachi_err e = { 0 };
	struct tachi_json j;
	struct tachi_jtok t;
	struct tachi_jnum v = { 0 };
	tachi_json_init(&j, (const uint8_t *)s, strlen(s), 0, 8, &e);
	CHECK(tachi_json_value(&j, &t) == TACH_OK && t.type == TJ_NUMBER);
	tachi_json_number((const uint8_t *)s, &t, &v);
	return v;
}

static bool as_int(const char *s, int64_t *x)
{
	struct tachi_jnum v = num(s);
	return tachi_json_int(&v, INT64_MIN, INT64_MAX, x);
}

static bool as_scaled(const char *s, int scale, int64_t *x)
{
	struct tachi_jnum v = num(s);
	return tachi_json_scaled(&v, scale, x);
}

static void test_numbers(void)
{
	int64_t x;
	CHECK(as_int("9007199254740993", &x) && x == 9007199254740993LL); /* 2^53 + 1, exactly */
	CHECK(as_int("3.0", &x) && x == 3);
	CHECK(as_int("30e-1", &x) && x == 3);
	CHECK(as_int("0.1e1", &x) && x == 1);
	CHECK(as_int("1e2", &x) && x == 100);
	CHECK(as_int("-0", &x) && x == 0);
	CHECK(as_int("0.000", &x) && x == 0);
	CHECK(as_int("9223372036854775807", &x) && x == INT64_MAX);
	CHECK(as_int("-9223372036854775808", &x) && x == INT64_MIN);
	CHECK(!as_int("9223372036854775808", &x));
	CHECK(!as_int("3.5", &x));
	CHECK(!as_int("1e19", &x));
	CHECK(!as_int("1e-1", &x));
	CHECK(!as_int("12345678901234567890123", &x));
	CHECK(as_int("100000000000000000000e-2", &x) && x == 1000000000000000000LL);
	/* the plain-digits fast path agrees, and leaves the rest to the exact one */
	const char *toks[] = { "0", "42", "123456789012345678", "1234567890123456789", "-1", "1.0", "1e2" };
	for (size_t i = 0; i < sizeof(toks) / sizeof(toks[0]); i++) {
		struct tachi_jtok t = { .type = TJ_NUMBER, .start = 0, .len = strlen(toks[i]) };
		uint64_t u;
		bool fast = tachi_json_digits((const uint8_t *)toks[i], &t, &u);
		CHECK(fast == (i < 3));
		if (fast)
			CHECK(as_int(toks[i], &x) && (uint64_t)x == u);
	}
	struct tachi_jnum v = num("42");
	CHECK(!tachi_json_int(&v, 0, 41, &x));
	CHECK(tachi_json_int(&v, 42, 42, &x) && x == 42);
	/* a token: a number, an integer exactly, in range; anything else is no integer */
	const uint8_t *thirty = (const uint8_t *)"30.0";
	struct tachi_jtok nt = { .type = TJ_NUMBER, .start = 0, .len = 4 };
	CHECK(tachi_json_tok_int(thirty, &nt, 0, 30, &x) && x == 30);
	CHECK(!tachi_json_tok_int(thirty, &nt, 0, 29, &x));
	nt.type = TJ_STRING;
	CHECK(!tachi_json_tok_int(thirty, &nt, 0, 30, &x));

	CHECK(as_scaled("0.01", 9, &x) && x == 10000000);
	CHECK(as_scaled("0.003003003003003003", 9, &x) && x == 3003003);
	CHECK(as_scaled("1.5", 0, &x) && x == 2);
	CHECK(as_scaled("-1.5", 0, &x) && x == -2);
	CHECK(as_scaled("1.49", 0, &x) && x == 1);
	CHECK(as_scaled("2.5e-1", 0, &x) && x == 0);
	CHECK(as_scaled("0.0000000005", 9, &x) && x == 1);
	CHECK(as_scaled("123.456", 3, &x) && x == 123456);
	CHECK(as_scaled("1763700000000.25", 6, &x) && x == 1763700000000250000LL);
	CHECK(as_scaled("1e-300", 9, &x) && x == 0);
	CHECK(!as_scaled("1e300", 9, &x));
	CHECK(!as_scaled("1e100000000000", 0, &x));
	CHECK(!as_scaled("9223372036854775808", 0, &x));
	CHECK(as_scaled("9223372036.854775807", 9, &x) && x == INT64_MAX);
}

int main(void)
{
	test_valid();
	test_invalid();
	test_walk();
	test_unescape();
	test_numbers();
	return CHECK_DONE();
}
