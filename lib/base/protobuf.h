/* Protocol buffers' wire format (protobuf.dev/programming-guides/encoding), for the pprof
 * reader and writer: the wire types; a field decoded in place, bounded by its message's
 * end, with what is wrong and where when it is not a field; a repeated number field's
 * numbers, packed or not; and a growing buffer that fields are encoded into, proto3's zero
 * numbers left out. The schema (field numbers, which wire type each takes) is the format's.
 *
 * Inline but for the cold parts (protobuf.c): a reader decodes a field per number of every
 * sample, a writer encodes one per number of every message. */
#ifndef TACHFMT_PROTOBUF_H
#define TACHFMT_PROTOBUF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"

/* Wire types; 3 and 4 (groups, deprecated), 6 and 7 are refused. */
enum {
	TACHI_PB_VARINT = 0, TACHI_PB_I64 = 1, TACHI_PB_LEN = 2, TACHI_PB_SGROUP = 3,
	TACHI_PB_EGROUP = 4, TACHI_PB_I32 = 5,
};

/* A field's key: its number and wire type. A constant for a constant number (a Sample's
 * key is one byte). */
#define TACHI_PB_KEY(num, wt) ((uint64_t)(num) << 3 | (uint64_t)(wt))

/* The most bytes a LEN field's key and length take (a 32-bit number, a 64-bit length). */
#define TACHI_PB_HEAD_MAX 15

/* ---- decoding ---- */

/* A field as read: numbers up to 2^32-1 are taken (pprof's Go decoder takes as many). */
struct tachi_pb_field {
	uint32_t num;
	uint8_t wt;
	uint64_t v;          /* a number's value (I64, I32: the bits); LEN: the length */
	size_t off, len;     /* LEN: the field's bytes; 0 for the other wire types */
	size_t at;           /* where the field (its key) starts */
};

/* What is wrong with a field (tachi_pb_what says it in words). */
enum tachi_pb_err {
	TACHI_PB_OK = 0,
	TACHI_PB_E_KEY,       /* the key is no varint: cut short, or past 10 bytes */
	TACHI_PB_E_NUMBER,    /* field number 0 or past 2^32-1 (v holds it) */
	TACHI_PB_E_VARINT,    /* a VARINT field's value is no varint */
	TACHI_PB_E_FIXED,     /* an I64 or I32 field cut short */
	TACHI_PB_E_LENGTH,    /* a LEN field's length is no varint */
	TACHI_PB_E_PAST,      /* a LEN field's bytes run past its message's end */
	TACHI_PB_E_WIRE_TYPE, /* wire type 3, 4, 6 or 7 */
	TACHI_PB_E_PACKED,    /* a number of a packed run is no varint */
};

/* The field at d[*pos], within d[*pos, end) (*pos < end): *pos moves past it. On failure
 * *pos is where the fault is: the varint or fixed bytes that are bad, or the field's start
 * when it is the field (its number, its length, its wire type). */
static inline enum tachi_pb_err tachi_pb_next(const uint8_t *d, size_t *pos, size_t end,
					      struct tachi_pb_field *f)
{
	uint64_t key;
	*f = (struct tachi_pb_field){ .at = *pos };
	size_t k = tachi_uvarint(d + *pos, d + end, &key);
	if (!k)
		return TACHI_PB_E_KEY;
	*pos += k;
	if (key >> 3 > UINT32_MAX || key >> 3 == 0) {
		f->v = key >> 3;
		*pos = f->at;
		return TACHI_PB_E_NUMBER;
	}
	f->num = (uint32_t)(key >> 3);
	f->wt = key & 7;
	switch (f->wt) {
	case TACHI_PB_VARINT:
		if (!(k = tachi_uvarint(d + *pos, d + end, &f->v)))
			return TACHI_PB_E_VARINT;
		*pos += k;
		return TACHI_PB_OK;
	case TACHI_PB_I64:
	case TACHI_PB_I32: {
		size_t w = f->wt == TACHI_PB_I64 ? 8 : 4;
		if (end - *pos < w)
			return TACHI_PB_E_FIXED;
		f->v = w == 8 ? tachi_rd64(d + *pos, false) : tachi_rd32le(d + *pos);
		*pos += w;
		return TACHI_PB_OK;
	}
	case TACHI_PB_LEN:
		if (!(k = tachi_uvarint(d + *pos, d + end, &f->v)))
			return TACHI_PB_E_LENGTH;
		*pos += k;
		if (f->v > end - *pos) {
			*pos = f->at;
			return TACHI_PB_E_PAST;
		}
		f->off = *pos;
		f->len = (size_t)f->v;
		*pos += f->len;
		return TACHI_PB_OK;
	default:
		*pos = f->at;
		return TACHI_PB_E_WIRE_TYPE;
	}
}

/* A fault in words, with the field's number where it has one: "bad varint in field 3". */
void tachi_pb_what(char *m, size_t size, enum tachi_pb_err e, const struct tachi_pb_field *f);

/* The numbers of a repeated number field: a VARINT field is one, a LEN field a packed run
 * of them (proto3 writes them packed; a decoder takes both). */
struct tachi_pb_nums {
	size_t p, end;       /* the packed bytes still to read */
	uint64_t v;          /* the number read */
	size_t at;           /* where it is: its own field's start when not packed */
	bool one;            /* not packed, and v not yet taken */
	bool bad;            /* stopped at a bad varint, at `at` (TACHI_PB_E_PACKED) */
};

/* Starts on f's numbers; false when f is neither VARINT nor LEN. */
static inline bool tachi_pb_nums_start(struct tachi_pb_nums *it, const struct tachi_pb_field *f)
{
	*it = (struct tachi_pb_nums){ .p = f->off, .end = f->off + f->len, .v = f->v,
				      .at = f->at, .one = f->wt == TACHI_PB_VARINT };
	return it->one || f->wt == TACHI_PB_LEN;
}

/* The next number into it->v and it->at; false after the last, or at a bad one (it->bad). */
static inline bool tachi_pb_nums_next(const uint8_t *d, struct tachi_pb_nums *it)
{
	if (it->one) {
		it->one = false;
		return true;
	}
	if (it->p >= it->end)
		return false;
	it->at = it->p;
	size_t k = tachi_uvarint(d + it->p, d + it->end, &it->v);
	if (!k) {
		it->bad = true;
		return false;
	}
	it->p += k;
	return true;
}

/* ---- encoding ---- */

struct tachi_pb_buf {
	uint8_t *p;
	size_t len, cap;
};

/* Room for n more bytes. */
static inline bool tachi_pb_reserve(struct tachi_pb_buf *b, size_t n)
{
	size_t need;
	return !tachi_add_overflows(b->len, n, &need) && TACHI_RESERVE(b->p, b->cap, need);
}

/* A bare varint (a key, a length, a packed number). */
static inline bool tachi_pb_put_uvarint(struct tachi_pb_buf *b, uint64_t v)
{
	if (!tachi_pb_reserve(b, 10))
		return false;
	b->len += tachi_put_uvarint(b->p + b->len, v);
	return true;
}

/* A VARINT field; proto3 leaves a zero out (a decoder reads its absence as 0). */
static inline bool tachi_pb_put_varint(struct tachi_pb_buf *b, uint32_t num, uint64_t v)
{
	if (!v)
		return true;
	return tachi_pb_put_uvarint(b, TACHI_PB_KEY(num, TACHI_PB_VARINT)) &&
	       tachi_pb_put_uvarint(b, v);
}

/* A LEN field's key and length, its n bytes to follow: into p (TACHI_PB_HEAD_MAX bytes of
 * room), returning the bytes written; or onto a buffer. */
static inline size_t tachi_pb_head(uint8_t *p, uint32_t num, uint64_t n)
{
	size_t k = tachi_put_uvarint(p, TACHI_PB_KEY(num, TACHI_PB_LEN));
	return k + tachi_put_uvarint(p + k, n);
}

static inline bool tachi_pb_put_head(struct tachi_pb_buf *b, uint32_t num, uint64_t n)
{
	if (!tachi_pb_reserve(b, TACHI_PB_HEAD_MAX))
		return false;
	b->len += tachi_pb_head(b->p + b->len, num, n);
	return true;
}

/* The bytes a LEN field of n bytes takes, its key and length too. */
static inline size_t tachi_pb_len_size(uint32_t num, size_t n)
{
	return tachi_uvarint_len(TACHI_PB_KEY(num, TACHI_PB_LEN)) + tachi_uvarint_len(n) + n;
}

/* A LEN field: bytes, a string, or a message encoded apart. */
bool tachi_pb_put_bytes(struct tachi_pb_buf *b, uint32_t num, const void *p, size_t n);

#endif
