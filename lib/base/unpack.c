/* Compressed input: gzip through zlib, zstd through libzstd's streaming decoder, both
 * pulled a buffer at a time, so a pipe streams and memory follows the reader, not the
 * input. Text in UTF-16 with its BOM (LE or BE, as Windows tools write folded stacks) is
 * read as UTF-8, and a UTF-8 BOM is dropped, the same way: every text format then sees
 * the UTF-8 it reads. Every gzip member is read, one after another (gzip -d, Go's gzip.Reader); bytes
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

enum kind { K_GZIP, K_ZSTD, K_U16LE, K_U16BE, K_BOM8 };
static const char *const kind_names[] = { "gzip", "zstd", "UTF-16LE", "UTF-16BE", "UTF-8" };

struct tachi_unpack {
	enum kind kind;
	bool zstd;
	int fd;                 /* -1: raw holds the whole compressed input */
	struct tachi_unpack *src; /* set: the bytes come from it (text inside gzip), owned */
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
	uint8_t pend[4];        /* UTF-16: a character's UTF-8 bytes not yet handed out */
	size_t npend, ipend;
};

static int kind_of(const uint8_t *p, size_t n)
{
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return K_GZIP;
	if (n >= 4 && p[0] == 0x28 && p[1] == 0xb5 && p[2] == 0x2f && p[3] == 0xfd)
		return K_ZSTD;
	if (n >= 2 && p[0] == 0xff && p[1] == 0xfe)
		return K_U16LE;
	if (n >= 2 && p[0] == 0xfe && p[1] == 0xff)
		return K_U16BE;
	if (n >= 3 && p[0] == 0xef && p[1] == 0xbb && p[2] == 0xbf)
		return K_BOM8;
	return -1;
}

const char *tachi_unpack_kind(const uint8_t *p, size_t n)
{
	int k = kind_of(p, n);
	return k < 0 ? NULL : kind_names[k];
}

const char *tachi_unpack_name(const struct tachi_unpack *u)
{
	return kind_names[u->kind];
}

int tachi_unpack_new(struct tachi_unpack **out, const uint8_t *p, size_t n, int fd,
		     uint64_t max_out, struct tachi_err *e)
{
	return tachi_unpack_over(out, p, n, fd, NULL, max_out, e);
}

int tachi_unpack_over(struct tachi_unpack **out, const uint8_t *p, size_t n, int fd,
		      struct tachi_unpack *src, uint64_t max_out, struct tachi_err *e)
{
	int kind = kind_of(p, n);
	struct tachi_unpack *u = calloc(1, sizeof(*u));
	if (!u) {
		tachi_unpack_free(src);
		return tachi_fail(e, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	u->kind = kind < 0 ? K_GZIP : (enum kind)kind;
	u->zstd = u->kind == K_ZSTD;
	u->fd = fd;
	u->src = src;
	if (src)
		fd = 0; /* the buffered case: what src gives is read into raw */
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
	if (u->kind >= K_U16LE) {
		/* the BOM says what the text is; it is no part of it */
		u->pos = u->kind == K_BOM8 ? 3 : 2;
		u->off = u->pos;
	} else if (u->zstd ? !(u->zd = ZSTD_createDStream()) || ZSTD_isError(ZSTD_initDStream(u->zd))
			   : inflateInit2(&u->z, 16 + MAX_WBITS) != Z_OK) {
		goto nomem;
	}
	u->z_ready = u->kind == K_GZIP;
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
	tachi_unpack_free(u->src);
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
		if (u->src) {
			size_t got = 0;
			int rc = tachi_unpack_read(u->src, u->raw + u->end, u->cap - u->end, &got, e);
			if (rc)
				return rc;
			u->raw_eof = !got;
			u->end += got;
			continue;
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
			  u->kind >= K_U16LE ? "%s text: cut short (the input ends inside a %s)"
					     : "%s data: cut short (the compressed input ends inside a %s)",
			  tachi_unpack_name(u), u->kind >= K_U16LE ? "character" : u->zstd ? "frame" : "member");
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

/* UTF-16: one character from the 2 or 4 bytes at q into u->pend as UTF-8; *used the
 * bytes it took, 0 when they are not all there yet. A surrogate without its other half is
 * no character: an error at its offset. */
static int utf16_char(struct tachi_unpack *u, const uint8_t *q, size_t avail, size_t *used,
		      struct tachi_err *e)
{
	bool le = u->kind == K_U16LE;
	*used = 0;
	if (avail < 2)
		return TACH_OK;
	uint32_t c = le ? (uint32_t)(q[0] | q[1] << 8) : (uint32_t)(q[0] << 8 | q[1]);
	size_t take = 2;
	if (c >= 0xdc00 && c < 0xe000)
		return tachi_fail(e, TACH_E_FORMAT, TACH_POS_OFFSET, u->off,
				  "%s text: a low surrogate (0x%04x) with no high one before it",
				  tachi_unpack_name(u), (unsigned)c);
	if (c >= 0xd800 && c < 0xdc00) {
		if (avail < 4)
			return TACH_OK;
		uint32_t d = le ? (uint32_t)(q[2] | q[3] << 8) : (uint32_t)(q[2] << 8 | q[3]);
		if (d < 0xdc00 || d >= 0xe000)
			return tachi_fail(e, TACH_E_FORMAT, TACH_POS_OFFSET, u->off,
					  "%s text: a high surrogate (0x%04x) with no low one after it",
					  tachi_unpack_name(u), (unsigned)c);
		c = 0x10000 + ((c - 0xd800) << 10) + (d - 0xdc00);
		take = 4;
	}
	uint8_t *o = u->pend;
	if (c < 0x80) {
		o[0] = (uint8_t)c;
		u->npend = 1;
	} else if (c < 0x800) {
		o[0] = (uint8_t)(0xc0 | c >> 6);
		o[1] = (uint8_t)(0x80 | (c & 0x3f));
		u->npend = 2;
	} else if (c < 0x10000) {
		o[0] = (uint8_t)(0xe0 | c >> 12);
		o[1] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
		o[2] = (uint8_t)(0x80 | (c & 0x3f));
		u->npend = 3;
	} else {
		o[0] = (uint8_t)(0xf0 | c >> 18);
		o[1] = (uint8_t)(0x80 | (c >> 12 & 0x3f));
		o[2] = (uint8_t)(0x80 | (c >> 6 & 0x3f));
		o[3] = (uint8_t)(0x80 | (c & 0x3f));
		u->npend = 4;
	}
	u->ipend = 0;
	*used = take;
	return TACH_OK;
}

/* Text steps: the bytes as they are after a UTF-8 BOM, or UTF-16 characters as UTF-8. */
static int text_step(struct tachi_unpack *u, uint8_t *p, size_t n, size_t *got, size_t *used,
		     struct tachi_err *e)
{
	size_t avail = u->end - u->pos;
	if (u->kind == K_BOM8) {
		*got = *used = avail < n ? avail : n;
		memcpy(p, u->raw + u->pos, *got);
		return TACH_OK;
	}
	while (*got < n) {
		if (u->ipend < u->npend) {
			p[(*got)++] = u->pend[u->ipend++];
			continue;
		}
		size_t k;
		int rc = utf16_char(u, u->raw + u->pos + *used, avail - *used, &k, e);
		if (rc || !k)
			return rc;
		*used += k;
		u->off += k;
	}
	return TACH_OK;
}

/* One decoding step into p[0, n): *got bytes out, *used compressed bytes in. */
static int step(struct tachi_unpack *u, uint8_t *p, size_t n, size_t *got, size_t *used,
		struct tachi_err *e)
{
	size_t avail = u->end - u->pos;
	*got = *used = 0;
	if (u->kind >= K_U16LE)
		return text_step(u, p, n, got, used, e);
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
		if (u->kind < K_U16LE || u->kind == K_BOM8)
			u->off += used; /* UTF-16 counts its characters as it takes them */
		/* nothing in or out with the input all read: the end, where a frame, a member
		 * or a character ends */
		if (!*got && !used && u->raw_eof)
			return u->pos == u->end && (u->kind >= K_U16LE || (u->zstd ? !u->zret : u->member_end))
				       ? TACH_OK : cut_short(u, e);
		/* a character split by the end of what was read: read on */
		if (!*got && !used && u->kind >= K_U16LE && (rc = fill(u, u->end - u->pos + 2, e)))
			return rc;
	}
	u->out += *got;
	if (u->out > u->max_out)
		return tachi_fail(e, TACH_E_LIMIT, TACH_POS_NONE, 0,
				  "the %s input holds more than %llu bytes (see --max-input)",
				  tachi_unpack_name(u), (unsigned long long)u->max_out);
	return TACH_OK;
}
