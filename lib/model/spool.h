/* Record spools (spool.c): per-stream records kept past a chunk in a temporary file. */
#ifndef TACHFMT_SPOOL_H
#define TACHFMT_SPOOL_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct tachi_spool {
	int fd;
	bool open;          /* the file exists (made when a first chunk fills) */
	uint64_t end;       /* its size */
	size_t rec_size, chunk_recs;
};
struct tachi_stream {
	uint8_t *buf;       /* the last chunk, in memory */
	size_t len;         /* records in buf */
	uint64_t *chunks;   /* file offsets of the full chunks, in order */
	size_t nchunks, chunks_cap;
	uint64_t total;     /* records added */
};
void tachi_spool_init(struct tachi_spool *sp, size_t rec_size);
/* Returns 0 or an errno value (ENOMEM, or the file's). */
int tachi_stream_add(struct tachi_spool *sp, struct tachi_stream *s, const void *rec);
int tachi_stream_chunk(const struct tachi_spool *sp, const struct tachi_stream *s, size_t k,
		       uint8_t *buf, const uint8_t **recs, size_t *n);
/* Byte spools (records of the caller's packing, at most a chunk each): chunk_bytes a chunk.
 * A writer asks for room for its longest record, writes it at s->buf + s->len, and adds its
 * length to s->len and 1 to s->total. Records must not start with a zero byte: zero bytes
 * fill the end of a chunk that a record did not fit in. */
void tachi_spool_init_bytes(struct tachi_spool *sp, size_t chunk_bytes);
int tachi_stream_room_slow(struct tachi_spool *sp, struct tachi_stream *s, size_t n);
/* Returns 0 or an errno value (ENOMEM, EINVAL for n over a chunk, or the file's). */
static inline int tachi_stream_room(struct tachi_spool *sp, struct tachi_stream *s, size_t n)
{
	if (TACHI_LIKELY(s->buf && sp->chunk_recs - s->len >= n))
		return 0;
	return tachi_stream_room_slow(sp, s, n);
}
/* Empties a stream for reuse, keeping its memory chunk (its old chunks stay in the file). */
void tachi_stream_reset(struct tachi_stream *s);
void tachi_stream_free(struct tachi_stream *s);
void tachi_spool_free(struct tachi_spool *sp);

#endif
