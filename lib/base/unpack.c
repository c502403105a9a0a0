/* Compressed input: gzip through zlib, zstd through libzstd's streaming decoder, both
 * pulled a buffer at a time, so a pipe streams and memory follows the reader, not the
 * input. Every gzip member is read, one after another (gzip -d, Go's gzip.Reader); bytes
 * after a member that are not another member are an error, as Go says. Every zstd frame
 * is read (skippable frames are skipped by libzstd); its window is libzstd's default
 * limit (128 MiB), so a frame cannot ask for more. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "base/unpack.h"

#define RAW_CHUNK (64u << 10)

struct tachi_unpack {
	bool zstd;
	int fd;                 /* -1: raw holds the whole compressed input */
	uint8_t *raw;           /* compressed bytes [pos, end) not yet decoded */
	const uint8_t *mem;     /* fd -1: the caller's bytes, raw points into them */
	size_t cap, pos, end;
	bool raw_eof;
	uint64_t off;           /* input offset of raw[pos] */
	uint64_t out, max_out;
	z_stream z;
	bool z_ready, member_end;
	ZSTD_DStream *zd;
	size_t zret;            /* libzstd's last return: 0 when a frame ended */
};

const char *tachi_unpack_kind(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return "gzip";
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return "zstd";
	return NULL;
}

const char *tachi_unpack_name(const struct tachi_unpack *u)
{
	return u->zstd ? "zstd" : "gzip";
}

int tachi_unpack_new(struct tachi_unpack **out, const uint8_t *p, size_t n, int fd,
		     uint64_t max_out, struct tachi_err *e)
{
	const char *kind = tachi_unpack_kind(p, n);
	struct tachi_unpack *u = calloc(1, sizeof(*u));
	if (!u)
		return tachi_fail(e, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	u->zstd = kind && !strcmp(kind, "zstd");
	u->fd = fd;
	u->max_out = max_out;
	u->zret = 1;
	if (fd < 0) {
		u->mem = p;
		u->raw = (uint8_t *)p; /* read, never written: fd -1 never refills */
		u->end = n;
		u->raw_eof = true;
	} else {
		u->cap = n > RAW_CHUNK ? n : RAW_CHUNK;
		if (!(u->raw = malloc(u->cap)))
			goto nomem;
		memcpy(u->raw, p, n);
		u->end = n;
	}
	if (u->zstd ? !(u->zd = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(u->zd))
		    : inflateInit2(&u->z, 16 + MAX_WBITS) != Z_OK)
		goto nomem;
	u->z_ready = !u->zstd;
	*out = u;
	return TACH_OK;
nomem:
	tachi_unpack_free(u);
	return tachi_fail(e, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

void tachi_unpack_free(struct tachi_unpack *u)
{
	if (!u)
		return;
	if (u->z_ready)
		inflateEnd(&u->z);
	ZSTD_freeDStream(u->zd);
	if (!u->mem)
		free(u->raw);
	free(u);
}

/* At least want compressed bytes at raw[pos] unless the input ends first. */
static int fill(struct tachi_unpack *u, size_t want, struct tachi_err *e)
{
	while (u->end - u->pos < want && !u->raw_eof) {
		if (u->pos) {
			memmove(u->raw, u->raw + u->pos, u->end - u->pos);
			u->end -= u->pos;
			u->pos = 0;
		}
		ssize_t k = read(u->fd, u->raw + u->end, u->cap - u->end);
		if (k < 0 && errno == EINTR)
			continue;
		if (k < 0)
			return tachi_fail(e, TACH_E_IO, TACH_POS_NONE, 0, "read error: %s", strerror(errno));
		if (!k)
			u->raw_eof = true;
		u->end += (size_t)k;
	}
	return TACH_OK;
}

static int cut_short(struct tachi_unpack *u, struct tachi_err *e)
{
	return tachi_fail(e, TACH_E_FORMAT, TACH_POS_OFFSET, u->off,
			  "%s data: cut short (the compressed input ends inside a %s)",
			  tachi_unpack_name(u), u->zstd ? "frame" : "member");
}

/* After a gzip member: the end, or the next member's magic. */
static int next_member(struct tachi_unpack *u, bool *end, struct tachi_err *e)
{
	int rc = fill(u, 2, e);
	if (rc)
		return rc;
	*end = u->pos == u->end;
	if (*end)
		return TACH_OK;
	if (u->end - u->pos < 2 || u->raw[u->pos] != 0x1f || u->raw[u->pos + 1] != 0x8b)
		return tachi_fail(e, TACH_E_FORMAT, TACH_POS_OFFSET, u->off,
				  "bytes after the gzip data that are not another gzip member");
	inflateReset(&u->z);
	u->member_end = false;
	return TACH_OK;
}

/* One decoding step into p[0, n): *got bytes out, *used compressed bytes in. */
static int step(struct tachi_unpack *u, uint8_t *p, size_t n, size_t *got, size_t *used,
		struct tachi_err *e)
{
	size_t avail = u->end - u->pos;
	*got = *used = 0;
	if (u->zstd) {
		/* at a frame's end with no more input: asked again, libzstd would answer with
		 * the header size of a next frame, not the 0 that says the data ended whole */
		if (!avail && !u->zret)
			return TACH_OK;
		ZSTD_inBuffer in = { u->raw + u->pos, avail, 0 };
		ZSTD_outBuffer o = { p, n, 0 };
		u->zret = ZSTD_decompressStream(u->zd, &o, &in);
		*got = o.pos;
		*used = in.pos;
		if (ZSTD_isError(u->zret))
			return tachi_fail(e, TACH_E_FORMAT, TACH_POS_OFFSET, u->off + in.pos,
					  "zstd data: %s", ZSTD_getErrorName(u->zret));
		return TACH_OK;
	}
	u->z.next_in = u->raw + u->pos;
	u->z.avail_in = avail > UINT32_MAX ? UINT32_MAX : (uInt)avail;
	u->z.next_out = p;
	u->z.avail_out = n > UINT32_MAX ? UINT32_MAX : (uInt)n;
	uInt in0 = u->z.avail_in, out0 = u->z.avail_out;
	int zr = inflate(&u->z, Z_NO_FLUSH);
	*got = out0 - u->z.avail_out;
	*used = in0 - u->z.avail_in;
	if (zr == Z_STREAM_END)
		u->member_end = true;
	else if (zr != Z_OK && zr != Z_BUF_ERROR)
		return tachi_fail(e, TACH_E_FORMAT, TACH_POS_OFFSET, u->off + *used, "gzip data: %s",
				  u->z.msg ? u->z.msg : "invalid");
	return TACH_OK;
}

int tachi_unpack_read(struct tachi_unpack *u, uint8_t *p, size_t n, size_t *got,
		      struct tachi_err *e)
{
	*got = 0;
	/* never more than one byte past the limit, so a bomb costs max_out */
	if (n > u->max_out + 1 - u->out)
		n = (size_t)(u->max_out + 1 - u->out);
	while (!*got && n) {
		int rc = fill(u, 1, e);
		if (rc)
			return rc;
		bool end = false;
		if (!u->zstd && u->member_end && ((rc = next_member(u, &end, e)) || end))
			return rc;
		size_t used = 0;
		if ((rc = step(u, p, n, got, &used, e)))
			return rc;
		u->pos += used;
		u->off += used;
		/* nothing in or out with the input all read: the end, where a frame ends */
		if (!*got && !used && u->pos == u->end && u->raw_eof)
			return (u->zstd ? !u->zret : u->member_end) ? TACH_OK : cut_short(u, e);
	}
	u->out += *got;
	if (u->out > u->max_out)
		return tachi_fail(e, TACH_E_LIMIT, TACH_POS_NONE, 0,
				  "the %s input holds more than %llu bytes (see --max-input)",
				  tachi_unpack_name(u), (unsigned long long)u->max_out);
	return TACH_OK;
}
