/* pprof's profile.proto (gzip or plain): the format's table row and probe; the reader is
 * read.c (the wire and tables read_wire.c, frames read_frames.c), the writer write.c
 * (tables write_tables.c, encoding write_encode.c, types write_types.c, mappings
 * write_maps.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <zlib.h>

#include "base/bytes.h"
#include "base/protobuf.h"
#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/pprof/pprof.h"

/* Each Profile field's wire type: numbers are VARINT, messages and strings LEN; the
 * comments (repeated numbers) come packed or not. */
#define ANY_WT 9
static const uint8_t profile_wt[PROFILE_LAST + 1] = {
	[0] = ANY_WT,
	[PROFILE_SAMPLE_TYPE] = TACHI_PB_LEN, [PROFILE_SAMPLE] = TACHI_PB_LEN,
	[PROFILE_MAPPING] = TACHI_PB_LEN, [PROFILE_LOCATION] = TACHI_PB_LEN,
	[PROFILE_FUNCTION] = TACHI_PB_LEN, [PROFILE_STRING_TABLE] = TACHI_PB_LEN,
	[PROFILE_DROP_FRAMES] = TACHI_PB_VARINT, [PROFILE_KEEP_FRAMES] = TACHI_PB_VARINT,
	[PROFILE_TIME_NANOS] = TACHI_PB_VARINT, [PROFILE_DURATION_NANOS] = TACHI_PB_VARINT,
	[PROFILE_PERIOD_TYPE] = TACHI_PB_LEN, [PROFILE_PERIOD] = TACHI_PB_VARINT,
	[PROFILE_COMMENT] = ANY_WT, [PROFILE_DEFAULT_SAMPLE_TYPE] = TACHI_PB_VARINT,
};

/* Whether p[0, n) is a plausible start of a Profile message: known fields with their wire
 * types, value types made of numbers, a first string that is empty; a field cut by the end
 * of the peeked bytes is fine when cut says more may follow. */
static bool plausible(const uint8_t *p, size_t n, bool cut)
{
	size_t i = 0, fields = 0, strings = 0;
	while (i < n) {
		uint64_t key, v;
		size_t k = tachi_uvarint(p + i, p + n, &key);
		if (!k)
			return cut && fields > 0;
		uint64_t num = key >> 3;
		unsigned t = key & 7;
		if (!num || num > PROFILE_LAST ||
		    (profile_wt[num] != ANY_WT && profile_wt[num] != t) ||
		    (num == PROFILE_COMMENT && t != TACHI_PB_VARINT && t != TACHI_PB_LEN))
			return false;
		i += k;
		if (!(k = tachi_uvarint(p + i, p + n, &v)))
			return cut && fields > 0;
		i += k;
		if (t == TACHI_PB_LEN && v > n - i)
			return cut && fields > 0;
		if (t == TACHI_PB_LEN && num == PROFILE_STRING_TABLE && strings++ == 0 && v != 0)
			return false;
		if (t == TACHI_PB_LEN && (num == PROFILE_SAMPLE_TYPE || num == PROFILE_PERIOD_TYPE)) {
			for (size_t j = i; j < i + v;) {
				uint64_t sk, sv;
				size_t a = tachi_uvarint(p + j, p + i + v, &sk);
				size_t b = a ? tachi_uvarint(p + j + a, p + i + v, &sv) : 0;
				if (!a || !b || (sk != TACHI_PB_KEY(VALUE_TYPE_TYPE, TACHI_PB_VARINT) &&
						 sk != TACHI_PB_KEY(VALUE_TYPE_UNIT, TACHI_PB_VARINT)))
					return false;
				j += a + b;
			}
		}
		i += t == TACHI_PB_LEN ? (size_t)v : 0;
		fields++;
	}
	return fields > 0;
}

/* Whether p[0, n) reads as protobuf fields that a Profile message has, each with its wire
 * type, every length within the bytes (the last field may run past them): the wire shape
 * alone, not the checks of plausible(). */
static bool wire_shape(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint64_t key, v;
		size_t k = tachi_uvarint(p + i, p + n, &key);
		if (!k)
			return i > 0;
		uint64_t num = key >> 3;
		unsigned t = key & 7;
		if (!num || num > PROFILE_LAST || (t != TACHI_PB_VARINT && t != TACHI_PB_LEN) ||
		    (profile_wt[num] != ANY_WT && profile_wt[num] != t))
			return false;
		i += k;
		if (!(k = tachi_uvarint(p + i, p + n, &v)))
			return true;
		i += k;
		if (t == TACHI_PB_LEN && v > n - i)
			return true;
		i += t == TACHI_PB_LEN ? (size_t)v : 0;
	}
	return true;
}

/* gzip data (the one compressed format read), or binary data that reads as a Profile
 * message's fields. Text is not: most letters are such a key ('h' is field 13 as a varint),
 * and a message's lengths and varints are bytes that text has not. */
static bool pprof_resembles(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return true;
	return !tachi_probe_text(p, n) && wire_shape(p, n);
}

static bool pprof_probe(const uint8_t *p, size_t n)
{
	if (n < 2 || p[0] != 0x1f || p[1] != 0x8b)
		return plausible(p, n, n >= TACHI_PROBE_BYTES);
	uint8_t out[TACHI_PROBE_BYTES];
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return false;
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = sizeof(out);
	int zr;
	/* Members one after another, as the reader takes them: a first member of a few
	 * bytes says little about the profile. */
	while ((zr = inflate(&z, Z_SYNC_FLUSH)) == Z_STREAM_END && z.avail_out && z.avail_in >= 2 &&
	       z.next_in[0] == 0x1f && z.next_in[1] == 0x8b)
		inflateReset(&z);
	size_t got = sizeof(out) - z.avail_out;
	bool ended = zr == Z_STREAM_END && !z.avail_in;
	inflateEnd(&z);
	if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
		return false;
	return plausible(out, got, !ended);
}

const struct tachi_format tachi_fmt_pprof = {
	.name = "pprof",
	.reader = &tachi_pprof_reader_ops,
	.writer = &tachi_pprof_writer_ops,
	.probe = pprof_probe,
	.resembles = pprof_resembles,
};
