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
#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/pprof/pprof.h"

/* Whether p[0, n) is a plausible start of a Profile message: known fields with their wire
 * types, value types made of numbers, a first string that is empty; a field cut by the end
 * of the peeked bytes is fine when cut says more may follow. */
static bool plausible(const uint8_t *p, size_t n, bool cut)
{
	static const uint8_t wt[15] = { 9, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 9, 0 };
	size_t i = 0, fields = 0, strings = 0;
	while (i < n) {
		uint64_t key, v;
		size_t k = tachi_uvarint(p + i, p + n, &key);
		if (!k)
			return cut && fields > 0;
		uint64_t num = key >> 3;
		unsigned t = key & 7;
		if (!num || num > 14 || (wt[num] != 9 && wt[num] != t) ||
		    (num == 13 && t != 0 && t != 2))
			return false;
		i += k;
		if (!(k = tachi_uvarint(p + i, p + n, &v)))
			return cut && fields > 0;
		i += k;
		if (t == 2 && v > n - i)
			return cut && fields > 0;
		if (t == 2 && num == 6 && strings++ == 0 && v != 0)
			return false;
		if (t == 2 && (num == 1 || num == 11)) {
			for (size_t j = i; j < i + v;) {
				uint64_t sk, sv;
				size_t a = tachi_uvarint(p + j, p + i + v, &sk);
				size_t b = a ? tachi_uvarint(p + j + a, p + i + v, &sv) : 0;
				if (!a || !b || (sk != 8 && sk != 16))
					return false;
				j += a + b;
			}
		}
		i += t == 2 ? (size_t)v : 0;
		fields++;
	}
	return fields > 0;
}

/* Whether p[0, n) reads as protobuf fields that a Profile message has, each with its wire
 * type, every length within the bytes (the last field may run past them): the wire shape
 * alone, not the checks of plausible(). */
static bool wire_shape(const uint8_t *p, size_t n)
{
	static const uint8_t wt[15] = { 9, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 9, 0 };
	size_t i = 0;
	while (i < n) {
		uint64_t key, v;
		size_t k = tachi_uvarint(p + i, p + n, &key);
		if (!k)
			return i > 0;
		uint64_t num = key >> 3;
		unsigned t = key & 7;
		if (!num || num > 14 || (t != 0 && t != 2) || (wt[num] != 9 && wt[num] != t))
			return false;
		i += k;
		if (!(k = tachi_uvarint(p + i, p + n, &v)))
			return true;
		i += k;
		if (t == 2 && v > n - i)
			return true;
		i += t == 2 ? (size_t)v : 0;
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
