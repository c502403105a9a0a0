/* Byte order and varints over byte arrays, inline (no .c): every binary format reads
 * and writes through these, never through pointer casts. */
#ifndef TACHFMT_BYTES_H
#define TACHFMT_BYTES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

/* ---- byte order helpers (never pointer casts) ---- */
static inline uint32_t tachi_rd32(const uint8_t *p, bool swap)
{
	uint32_t v;
	memcpy(&v, p, 4);
	return swap ? __builtin_bswap32(v) : v;
}
static inline uint64_t tachi_rd64(const uint8_t *p, bool swap)
{
	uint64_t v;
	memcpy(&v, p, 8);
	return swap ? __builtin_bswap64(v) : v;
}
static inline uint32_t tachi_rd32be(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}
static inline uint32_t tachi_rd32le(const uint8_t *p)
{
	return (uint32_t)p[3] << 24 | (uint32_t)p[2] << 16 | (uint32_t)p[1] << 8 | p[0];
}
static inline void tachi_wr32le(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)v; p[1] = (uint8_t)(v >> 8); p[2] = (uint8_t)(v >> 16); p[3] = (uint8_t)(v >> 24);
}
static inline void tachi_wr64le(uint8_t *p, uint64_t v)
{
	tachi_wr32le(p, (uint32_t)v);
	tachi_wr32le(p + 4, (uint32_t)(v >> 32));
}
static inline void tachi_wr32be(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24); p[1] = (uint8_t)(v >> 16); p[2] = (uint8_t)(v >> 8); p[3] = (uint8_t)v;
}

/* ---- varints (unsigned LEB128, zigzag) ---- */
/* Decodes at p (< end). Returns bytes used, 0 if incomplete or longer than 10 bytes. Like
 * CPython's reader, bits beyond 64 in a tenth byte are dropped. */
static inline size_t tachi_uvarint(const uint8_t *p, const uint8_t *end, uint64_t *out)
{
	if (TACHI_LIKELY(p < end && p[0] < 0x80)) {
		*out = p[0];
		return 1;
	}
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *s = p;
	while (p < end) {
		uint8_t b = *p++;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*out = v;
			return (size_t)(p - s);
		}
		shift += 7;
		if (shift >= 64)
			return 0;
	}
	return 0;
}
static inline size_t tachi_uvarint_len(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}
static inline size_t tachi_put_uvarint(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}
static inline uint32_t tachi_zigzag32(int32_t v)
{
	return ((uint32_t)v << 1) ^ (uint32_t)(v >> 31);
}
static inline int32_t tachi_unzigzag32(uint32_t z)
{
	return (int32_t)((z >> 1) ^ (0u - (z & 1)));
}

#endif
