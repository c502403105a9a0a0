/* Record spools: records appended per stream (a thread) and read back in order at close,
 * for writers whose format wants every sample but only after all of them (Gecko's and
 * speedscope's per-thread sample tables). A stream keeps its last chunk in memory; full
 * chunks go to one unlinked temporary file per spool, made only when the first chunk fills,
 * so small inputs never touch the disk and memory stays at a chunk per stream whatever the
 * sample count. Records are fixed-size, or in a byte spool of the writer's own packing
 * (variable length, each whole within a chunk): a packed record is a quarter of a fixed
 * one, and so is the file to write and read back. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "model/spool.h"
#include "base/base.h"

#define SPOOL_CHUNK_BYTES (64u << 10)

void tachi_spool_init(struct tachi_spool *sp, size_t rec_size)
{
	memset(sp, 0, sizeof(*sp));
	sp->rec_size = rec_size;
	sp->chunk_recs = SPOOL_CHUNK_BYTES / rec_size;
}

void tachi_spool_init_bytes(struct tachi_spool *sp, size_t chunk_bytes)
{
	memset(sp, 0, sizeof(*sp));
	sp->rec_size = 1;
	sp->chunk_recs = chunk_bytes;
}

static int spool_open(struct tachi_spool *sp)
{
	const char *dir = getenv("TMPDIR");
	char path[4096];
	int n = snprintf(path, sizeof(path), "%s/tachfmt-spool-XXXXXX", dir && *dir ? dir : "/tmp");
	if (n < 0 || (size_t)n >= sizeof(path))
		return ENAMETOOLONG;
	int fd = mkstemp(path);
	if (fd < 0)
		return errno;
	/* Unlinked at once: nothing is left behind, however the program ends. */
	unlink(path);
	sp->fd = fd;
	sp->open = true;
	return 0;
}

/* Moves a stream's full in-memory chunk to the file. Returns 0 or an errno value. */
static int spill(struct tachi_spool *sp, struct tachi_stream *s)
{
	if (!sp->open) {
		int e = spool_open(sp);
		if (e)
			return e;
	}
	if (!TACHI_RESERVE(s->chunks, s->chunks_cap, s->nchunks + 1))
		return ENOMEM;
	size_t len = s->len * sp->rec_size, done = 0;
	while (done < len) {
		ssize_t k = pwrite(sp->fd, s->buf + done, len - done, (off_t)(sp->end + done));
		if (k < 0 && errno == EINTR)
			continue;
		if (k <= 0)
			return k < 0 ? errno : ENOSPC;
		done += (size_t)k;
	}
	s->chunks[s->nchunks++] = sp->end;
	sp->end += len;
	s->len = 0;
	return 0;
}

int tachi_stream_add(struct tachi_spool *sp, struct tachi_stream *s, const void *rec)
{
	if (s->len == sp->chunk_recs) {
		int e = spill(sp, s);
		if (e)
			return e;
	}
	if (!s->buf && !(s->buf = malloc(sp->chunk_recs * sp->rec_size)))
		return ENOMEM;
	memcpy(s->buf + s->len * sp->rec_size, rec, sp->rec_size);
	s->len++;
	s->total++;
	return 0;
}

/* The slow path of tachi_stream_room: the stream's first chunk, or a chunk too full for n
 * more bytes, whose unused end becomes zero bytes (no record starts with one, so a reader
 * knows where the chunk's records end) before it goes to the file. */
int tachi_stream_room_slow(struct tachi_spool *sp, struct tachi_stream *s, size_t n)
{
	if (n > sp->chunk_recs)
		return EINVAL;
	if (!s->buf)
		return (s->buf = malloc(sp->chunk_recs)) ? 0 : ENOMEM;
	if (sp->chunk_recs - s->len >= n)
		return 0;
	memset(s->buf + s->len, 0, sp->chunk_recs - s->len);
	s->len = sp->chunk_recs;
	return spill(sp, s);
}

void tachi_stream_reset(struct tachi_stream *s)
{
	s->len = 0;
	s->nchunks = 0;
	s->total = 0;
}

/* Chunk k of the stream (k < nchunks from the file, k == nchunks the memory tail) into
 * *recs; *n gets its record count. buf holds a chunk. Returns 0 or an errno value. */
int tachi_stream_chunk(const struct tachi_spool *sp, const struct tachi_stream *s, size_t k,
		       uint8_t *buf, const uint8_t **recs, size_t *n)
{
	if (k == s->nchunks) {
		*recs = s->buf;
		*n = s->len;
		return 0;
	}
	size_t len = sp->chunk_recs * sp->rec_size, done = 0;
	while (done < len) {
		ssize_t r = pread(sp->fd, buf + done, len - done, (off_t)(s->chunks[k] + done));
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r < 0 ? errno : EIO;
		done += (size_t)r;
	}
	*recs = buf;
	*n = sp->chunk_recs;
	return 0;
}

void tachi_stream_free(struct tachi_stream *s)
{
	free(s->buf);
	free(s->chunks);
	memset(s, 0, sizeof(*s));
}

void tachi_spool_free(struct tachi_spool *sp)
{
	if (sp->open)
		close(sp->fd);
	sp->open = false;
}
