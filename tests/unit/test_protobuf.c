/* The protobuf wire codec (base/protobuf.h): fields encoded and decoded back, and every way
 * a field can be wrong, with where it is. Encodings worked out by hand from the wire format
 * (protobuf.dev, "Encoding"): key = number << 3 | wire type, LEB128 varints. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/base.h"
#include "base/protobuf.h"

/* Decodes one field of d[0, n): its fault, and pos after it (or where the fault is). */
static enum tachi_pb_err one(const uint8_t *d, size_t n, struct tachi_pb_field *f, size_t *pos)
{
	*pos = 0;
	return tachi_pb_next(d, pos, n, f);
}

static void what_is(enum tachi_pb_err e, const struct tachi_pb_field *f, const char *want)
{
	char m[200];
	tachi_pb_what(m, sizeof(m), e, f);
	CHECK_EQ_STR(m, want);
}

static void varint_roundtrip(uint32_t num, uint64_t v)
{
	struct tachi_pb_buf b = { 0 };
	CHECK(tachi_pb_put_varint(&b, num, v));
	if (!v) {
		CHECK_EQ_U64(b.len, 0); /* proto3: a zero is not written */
		free(b.p);
		return;
	}
	struct tachi_pb_field f;
	size_t pos;
	CHECK_EQ_U64(one(b.p, b.len, &f, &pos), TACHI_PB_OK);
	CHECK_EQ_U64(pos, b.len);
	CHECK_EQ_U64(f.num, num);
	CHECK_EQ_U64(f.wt, TACHI_PB_VARINT);
	CHECK_EQ_U64(f.v, v);
	CHECK_EQ_U64(f.at, 0);
	/* every cut of it is a fault, never a field */
	for (size_t k = 1; k < b.len; k++)
		CHECK(one(b.p, k, &f, &pos) != TACHI_PB_OK);
	free(b.p);
}

static void test_roundtrips(void)
{
	varint_roundtrip(1, 1);
	varint_roundtrip(1, 0);
	varint_roundtrip(15, 127);
	varint_roundtrip(16, 128); /* a two-byte key */
	varint_roundtrip(UINT32_MAX, UINT64_MAX);
	varint_roundtrip((1u << 29) - 1, (uint64_t)1 << 63);

	/* a message: a number, bytes, an empty string, a packed run, as a writer builds it */
	struct tachi_pb_buf b = { 0 }, sub = { 0 };
	uint64_t nums[] = { 1, 150, 0, UINT64_MAX };
	for (size_t i = 0; i < 4; i++)
		CHECK(tachi_pb_put_uvarint(&sub, nums[i]));
	CHECK(tachi_pb_put_varint(&b, 2, 150));
	CHECK(tachi_pb_put_bytes(&b, 3, "abc", 3));
	CHECK(tachi_pb_put_bytes(&b, 6, NULL, 0));
	CHECK(tachi_pb_put_bytes(&b, 1, sub.p, sub.len));
	/* 150 is 0x96 0x01; "abc" after key 0x1a and length 3 */
	static const uint8_t want[] = { 0x10, 0x96, 0x01, 0x1a, 3, 'a', 'b', 'c', 0x32, 0 };
	CHECK(b.len > sizeof(want) && !memcmp(b.p, want, sizeof(want)));
	CHECK_EQ_U64(tachi_pb_len_size(1, sub.len), b.len - sizeof(want));

	struct tachi_pb_field f;
	size_t pos = 0;
	CHECK_EQ_U64(tachi_pb_next(b.p, &pos, b.len, &f), TACHI_PB_OK);
	CHECK(f.num == 2 && f.wt == TACHI_PB_VARINT && f.v == 150 && f.len == 0);
	CHECK_EQ_U64(tachi_pb_next(b.p, &pos, b.len, &f), TACHI_PB_OK);
	CHECK(f.num == 3 && f.wt == TACHI_PB_LEN && f.len == 3 && f.at == 3);
	CHECK(f.off == 5 && !memcmp(b.p + f.off, "abc", 3));
	CHECK_EQ_U64(tachi_pb_next(b.p, &pos, b.len, &f), TACHI_PB_OK);
	CHECK(f.num == 6 && f.wt == TACHI_PB_LEN && f.len == 0 && f.off == pos);
	CHECK_EQ_U64(tachi_pb_next(b.p, &pos, b.len, &f), TACHI_PB_OK);
	CHECK(f.num == 1 && f.len == sub.len);
	CHECK_EQ_U64(pos, b.len);

	/* the packed run's numbers, each with where it is */
	struct tachi_pb_nums it;
	CHECK(tachi_pb_nums_start(&it, &f));
	size_t i = 0, at = f.off;
	while (tachi_pb_nums_next(b.p, &it)) {
		CHECK(i < 4 && it.v == nums[i] && it.at == at);
		at += tachi_uvarint_len(nums[i++]);
	}
	CHECK_EQ_U64(i, 4);
	CHECK(!it.bad);

	/* a number not packed is one number, at its field */
	static const uint8_t unpacked[] = { 0x08, 0x2a };
	CHECK_EQ_U64(one(unpacked, 2, &f, &pos), TACHI_PB_OK);
	CHECK(tachi_pb_nums_start(&it, &f));
	CHECK(tachi_pb_nums_next(unpacked, &it) && it.v == 42 && it.at == 0);
	CHECK(!tachi_pb_nums_next(unpacked, &it) && !it.bad);

	/* an empty packed run has no numbers */
	static const uint8_t empty[] = { 0x0a, 0 };
	CHECK_EQ_U64(one(empty, 2, &f, &pos), TACHI_PB_OK);
	CHECK(tachi_pb_nums_start(&it, &f));
	CHECK(!tachi_pb_nums_next(empty, &it) && !it.bad);

	/* the fixed widths, little-endian */
	static const uint8_t fixed[] = { 0x09, 1, 2, 3, 4, 5, 6, 7, 8, 0x15, 1, 2, 3, 4 };
	pos = 0;
	CHECK_EQ_U64(tachi_pb_next(fixed, &pos, sizeof(fixed), &f), TACHI_PB_OK);
	CHECK(f.num == 1 && f.wt == TACHI_PB_I64 && f.v == 0x0807060504030201u);
	CHECK(!tachi_pb_nums_start(&it, &f)); /* not a number field's wire type */
	CHECK_EQ_U64(tachi_pb_next(fixed, &pos, sizeof(fixed), &f), TACHI_PB_OK);
	CHECK(f.num == 2 && f.wt == TACHI_PB_I32 && f.v == 0x04030201u && pos == sizeof(fixed));

	/* the header written in place is the one a buffer gets */
	uint8_t h[TACHI_PB_HEAD_MAX];
	size_t hl = tachi_pb_head(h, UINT32_MAX, UINT64_MAX);
	CHECK_EQ_U64(hl, TACHI_PB_HEAD_MAX);
	b.len = 0;
	CHECK(tachi_pb_put_head(&b, UINT32_MAX, UINT64_MAX));
	CHECK(b.len == hl && !memcmp(b.p, h, hl));
	CHECK_EQ_U64(tachi_pb_head(h, 2, 300), 3);
	CHECK(h[0] == 0x12 && h[1] == 0xac && h[2] == 0x02);
	CHECK_EQ_U64(TACHI_PB_KEY(2, TACHI_PB_LEN), 0x12);
	free(b.p);
	free(sub.p);
}

/* Every fault: its code, where it is, and its words (the pprof reader's messages). */
static void test_faults(void)
{
	struct tachi_pb_field f;
	size_t pos;

	/* a key cut short, and a key of eleven bytes */
	static const uint8_t cut_key[] = { 0x80 };
	CHECK_EQ_U64(one(cut_key, 1, &f, &pos), TACHI_PB_E_KEY);
	CHECK_EQ_U64(pos, 0);
	what_is(TACHI_PB_E_KEY, &f, "bad varint in a field key");
	uint8_t long_key[12];
	memset(long_key, 0xff, 10);
	long_key[10] = 0x01;
	long_key[11] = 0;
	CHECK_EQ_U64(one(long_key, 12, &f, &pos), TACHI_PB_E_KEY);

	/* field 0, and a number past 2^32-1 (a ten-byte key whose bits past 64 drop) */
	static const uint8_t zero[] = { 0x00, 0x01 };
	CHECK_EQ_U64(one(zero, 2, &f, &pos), TACHI_PB_E_NUMBER);
	CHECK_EQ_U64(pos, 0);
	what_is(TACHI_PB_E_NUMBER, &f, "field number 0 is not valid");
	static const uint8_t big[] = { 0x80, 0x80, 0x80, 0x80, 0x80, 0x01, 0x01 }; /* 2^32, VARINT */
	CHECK_EQ_U64(one(big, sizeof(big), &f, &pos), TACHI_PB_E_NUMBER);
	what_is(TACHI_PB_E_NUMBER, &f, "field number 4294967296 is not valid");
	static const uint8_t top[] = { 0xf8, 0xff, 0xff, 0xff, 0x7f, 0x01 }; /* 2^32-1 */
	CHECK_EQ_U64(one(top, sizeof(top), &f, &pos), TACHI_PB_OK);
	CHECK_EQ_U64(f.num, UINT32_MAX);

	/* a value cut short, and one of eleven bytes: where the value starts */
	static const uint8_t cut_val[] = { 0x08, 0x80, 0x80 };
	CHECK_EQ_U64(one(cut_val, sizeof(cut_val), &f, &pos), TACHI_PB_E_VARINT);
	CHECK_EQ_U64(pos, 1);
	what_is(TACHI_PB_E_VARINT, &f, "bad varint in field 1");
	uint8_t long_val[13] = { 0x18 };
	memset(long_val + 1, 0xff, 10);
	long_val[11] = 0x01;
	long_val[12] = 0;
	CHECK_EQ_U64(one(long_val, sizeof(long_val), &f, &pos), TACHI_PB_E_VARINT);
	CHECK_EQ_U64(pos, 1);
	/* ten bytes are a varint when the tenth ends it */
	CHECK_EQ_U64(one(long_val, 11, &f, &pos), TACHI_PB_E_VARINT);
	long_val[10] = 0x01;
	CHECK_EQ_U64(one(long_val, 11, &f, &pos), TACHI_PB_OK);
	CHECK_EQ_U64(f.v, UINT64_MAX);

	/* fixed widths cut short */
	static const uint8_t cut64[] = { 0x21, 1, 2, 3, 4, 5, 6, 7 };
	CHECK_EQ_U64(one(cut64, sizeof(cut64), &f, &pos), TACHI_PB_E_FIXED);
	CHECK_EQ_U64(pos, 1);
	what_is(TACHI_PB_E_FIXED, &f, "field 4: not enough data");
	static const uint8_t cut32[] = { 0x2d, 1, 2, 3 };
	CHECK_EQ_U64(one(cut32, sizeof(cut32), &f, &pos), TACHI_PB_E_FIXED);

	/* a length that is no varint, and one past the end: the field's start */
	static const uint8_t cut_len[] = { 0x01, 0x32, 0xff };
	pos = 1;
	CHECK_EQ_U64(tachi_pb_next(cut_len, &pos, sizeof(cut_len), &f), TACHI_PB_E_LENGTH);
	CHECK_EQ_U64(pos, 2);
	what_is(TACHI_PB_E_LENGTH, &f, "bad varint in the length of field 6");
	static const uint8_t past[] = { 0x00, 0x22, 0x03, 'a', 'b' };
	pos = 1;
	CHECK_EQ_U64(tachi_pb_next(past, &pos, sizeof(past), &f), TACHI_PB_E_PAST);
	CHECK_EQ_U64(pos, 1);
	what_is(TACHI_PB_E_PAST, &f, "field 4: length 3 runs past its message");
	/* a length near 2^64 does not wrap around */
	static const uint8_t huge[] = { 0x22, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff,
					0xff, 0x01, 'a' };
	CHECK_EQ_U64(one(huge, sizeof(huge), &f, &pos), TACHI_PB_E_PAST);
	/* the end is the message's, not the input's */
	static const uint8_t inner[] = { 0x22, 0x02, 'a', 'b' };
	pos = 0;
	CHECK_EQ_U64(tachi_pb_next(inner, &pos, 3, &f), TACHI_PB_E_PAST);

	/* groups (3, 4) and the wire types that do not exist (6, 7) */
	for (uint8_t wt = 3; wt <= 7; wt++) {
		if (wt == TACHI_PB_I32)
			continue;
		uint8_t d[] = { (uint8_t)(5 << 3 | wt), 0, 0, 0, 0, 0, 0, 0, 0 };
		CHECK_EQ_U64(one(d, sizeof(d), &f, &pos), TACHI_PB_E_WIRE_TYPE);
		CHECK_EQ_U64(pos, 0);
		CHECK_EQ_U64(f.wt, wt);
	}
	f.num = 5;
	f.wt = 3;
	what_is(TACHI_PB_E_WIRE_TYPE, &f, "field 5: unknown wire type 3");

	/* a packed run with a number cut short: where that number starts */
	static const uint8_t packed[] = { 0x0a, 0x03, 0x01, 0x80, 0x80, 0x08 };
	CHECK_EQ_U64(one(packed, sizeof(packed), &f, &pos), TACHI_PB_OK);
	struct tachi_pb_nums it;
	CHECK(tachi_pb_nums_start(&it, &f));
	CHECK(tachi_pb_nums_next(packed, &it) && it.v == 1 && it.at == 2);
	CHECK(!tachi_pb_nums_next(packed, &it) && it.bad && it.at == 3);
	what_is(TACHI_PB_E_PACKED, &f, "bad varint in packed field 1");
}

int main(void)
{
	test_roundtrips();
	test_faults();
	return CHECK_DONE();
}
