/* Varint and zigzag edge cases, against encodings worked out by hand from the LEB128 and
 * zigzag definitions CPython's writer uses. */
#include <string.h>

#include "check.h"
#include "base/base.h"
#include "base/bytes.h"

static void roundtrip(uint64_t v, size_t expect_len)
{
	uint8_t b[10];
	size_t n = tachi_put_uvarint(b, v);
	CHECK_EQ_U64(n, expect_len);
	uint64_t got = 0;
	CHECK_EQ_U64(tachi_uvarint(b, b + n, &got), n);
	CHECK_EQ_U64(got, v);
	/* every truncation is incomplete, never a wrong value */
	for (size_t k = 0; k < n; k++)
		CHECK_EQ_U64(tachi_uvarint(b, b + k, &got), 0);
}

int main(void)
{
	roundtrip(0, 1);
	roundtrip(1, 1);
	roundtrip(127, 1);
	roundtrip(128, 2);
	roundtrip(16383, 2);
	roundtrip(16384, 3);
	roundtrip(UINT32_MAX, 5);
	roundtrip((uint64_t)1 << 63, 10);
	roundtrip(UINT64_MAX, 10);

	uint8_t b[16];
	uint64_t v = 0;
	/* 300 = 0xAC 0x02 */
	b[0] = 0xAC;
	b[1] = 0x02;
	CHECK_EQ_U64(tachi_uvarint(b, b + 2, &v), 2);
	CHECK_EQ_U64(v, 300);
	/* over-long but terminated encodings are accepted, as CPython's reader does */
	b[0] = 0x80;
	b[1] = 0x80;
	b[2] = 0x00;
	CHECK_EQ_U64(tachi_uvarint(b, b + 3, &v), 3);
	CHECK_EQ_U64(v, 0);
	/* eleven bytes never terminate within the 64-bit limit */
	memset(b, 0xFF, 11);
	b[10] = 0x01;
	CHECK_EQ_U64(tachi_uvarint(b, b + 11, &v), 0);
	/* a tenth byte's bits past 64 are dropped, not an error */
	memset(b, 0xFF, 9);
	b[9] = 0x7F;
	CHECK_EQ_U64(tachi_uvarint(b, b + 10, &v), 10);
	CHECK_EQ_U64(v, UINT64_MAX);

	/* zigzag: -1 -> 1, 10 -> 20, extremes */
	CHECK_EQ_U64(tachi_zigzag32(0), 0);
	CHECK_EQ_U64(tachi_zigzag32(-1), 1);
	CHECK_EQ_U64(tachi_zigzag32(1), 2);
	CHECK_EQ_U64(tachi_zigzag32(10), 20);
	CHECK_EQ_U64(tachi_zigzag32(INT32_MAX), 0xFFFFFFFEu);
	CHECK_EQ_U64(tachi_zigzag32(INT32_MIN), 0xFFFFFFFFu);
	int32_t vals[] = { 0, 1, -1, 2, -2, 1000, -1000, INT32_MAX, INT32_MIN };
	for (size_t i = 0; i < sizeof(vals) / sizeof(vals[0]); i++)
		CHECK_EQ_U64((uint32_t)tachi_unzigzag32(tachi_zigzag32(vals[i])), (uint32_t)vals[i]);

	/* byte helpers read both orders without alignment */
	uint8_t raw[9] = { 0, 1, 2, 3, 4, 5, 6, 7, 8 };
	CHECK_EQ_U64(tachi_rd32(raw + 1, false), 0x04030201u);
	CHECK_EQ_U64(tachi_rd32(raw + 1, true), 0x01020304u);
	CHECK_EQ_U64(tachi_rd64(raw + 1, false), 0x0807060504030201ull);
	CHECK_EQ_U64(tachi_rd32be(raw + 1), 0x01020304u);
	CHECK_EQ_U64(tachi_rd32le(raw + 1), 0x04030201u);

	char num[24];
	CHECK_EQ_U64(tachi_fmt_i64(num, INT64_MIN), 20);
	num[20] = 0;
	CHECK_EQ_STR(num, "-9223372036854775808");
	/* decimal two digits a step: every length, both ends of each, against printf */
	for (uint64_t p = 1, k = 0; k < 20; k++, p *= 10) {
		uint64_t around[] = { p - 1, p, p + 1, p * 9 + (p - 1) };
		for (size_t i = 0; i < 4; i++) {
			char want[24];
			snprintf(want, sizeof(want), "%" PRIu64, around[i]);
			num[tachi_fmt_u64(num, around[i])] = 0;
			CHECK_EQ_STR(num, want);
		}
	}
	/* the length comes from the bit length: both sides of every power of two */
	for (unsigned bit = 1; bit < 64; bit++) {
		uint64_t around[] = { (1ull << bit) - 1, 1ull << bit };
		for (size_t i = 0; i < 2; i++) {
			char want[24];
			snprintf(want, sizeof(want), "%" PRIu64, around[i]);
			num[tachi_fmt_u64(num, around[i])] = 0;
			CHECK_EQ_STR(num, want);
		}
	}
	num[tachi_fmt_u64(num, UINT64_MAX)] = 0;
	CHECK_EQ_STR(num, "18446744073709551615");
	return CHECK_DONE();
}
