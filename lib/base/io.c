/* Buffered input and output over file descriptors. Regular files are mapped, pipes are read
 * whole (formats that need their tables before their samples) or streamed (line formats). */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "base/io.h"
#include "base/unpack.h"

#define IN_CHUNK (1u << 20)

int tachi_open_regular(const char *path, uint64_t *size)
{
	int fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK | O_NOCTTY);
	if (fd < 0)
		return -1;
	struct stat st;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode)) {
		close(fd);
		return -1;
	}
	if (size)
		*size = (uint64_t)st.st_size;
	return fd;
}

static int read_some(struct tachi_in *in, struct tachi_err *e, uint8_t *p, size_t n, size_t *got)
{
	if (in->unpack) {
		int rc = tachi_unpack_read(in->unpack, p, n, got, e);
		if (!rc && *got)
			in->last_byte = p[*got - 1];
		return rc;
	}
	for (;;) {
		ssize_t k = read(in->fd, p, n);
		if (k >= 0) {
			*got = (size_t)k;
			if (k > 0)
				in->last_byte = p[k - 1];
			return TACH_OK;
		}
		if (errno != EINTR)
			return tachi_fail(e, TACH_E_IO, TACH_POS_NONE, 0, "read error: %s", strerror(errno));
	}
}

/* A regular file read from its start (after what was peeked) mapped whole; false when the
 * input is no such file or the mapping is refused. */
static bool map_file(struct tachi_in *in)
{
	size_t peeked = in->end;
	struct stat st;
	if (!in->unpack && fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode)) {
		off_t here = lseek(in->fd, 0, SEEK_CUR);
		/* A mapped file is not held: its pages are the file's own, read on demand and
		 * given back, so max_input (what a pipe may make us allocate) does not apply. */
		if (here == (off_t)peeked && (uint64_t)st.st_size > 0 && (uint64_t)st.st_size <= SIZE_MAX) {
			void *m = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, in->fd, 0);
			if (m != MAP_FAILED) {
				in->map = m;
				in->map_len = (size_t)st.st_size;
				in->data = m;
				in->size = (size_t)st.st_size;
				in->whole = true;
				/* the mapping has the peeked bytes too */
				free(in->buf);
				in->buf = NULL;
				in->cap = in->end = 0;
				return true;
			}
		}
	}
	return false;
}

bool tachi_in_map_file(struct tachi_in *in)
{
	return in->whole || map_file(in);
}

int tachi_in_read(struct tachi_in *in, void *dst, size_t n, struct tachi_err *e, size_t *got)
{
	uint8_t *d = dst;
	size_t done = 0;
	while (done < n) {
		if (in->pos < in->end) {
			size_t k = in->end - in->pos < n - done ? in->end - in->pos : n - done;
			memcpy(d + done, in->buf + in->pos, k);
			in->pos += k;
			done += k;
			continue;
		}
		/* the buffer is used up: a large read straight from the source, small ones
		 * through the buffer (a record at a time would be a system call each) */
		in->base += in->pos;
		in->pos = in->end = 0;
		bool direct = n - done >= IN_CHUNK / 2;
		if (!direct && !TACHI_RESERVE(in->buf, in->cap, IN_CHUNK))
			return tachi_fail(e, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory reading input");
		size_t k = 0;
		int rc = in->eof ? TACH_OK
				 : read_some(in, e, direct ? d + done : in->buf,
					     direct ? n - done : in->cap, &k);
		if (rc)
			return rc;
		if (!k) {
			in->eof = true;
			break;
		}
		if (direct) {
			in->base += k;
			done += k;
		} else {
			in->end = k;
		}
	}
	*got = done;
	return TACH_OK;
}

int tachi_in_load(struct tachi_in *in, uint64_t max_input, struct tachi_err *e)
{
	if (in->whole || map_file(in))
		return TACH_OK;
	/* A pipe (or a file mmap refused): read everything, after what was peeked. */
	size_t peeked = in->end;
	size_t cap = in->cap, len = peeked;
	uint8_t *buf = in->buf;
	in->buf = NULL;
	in->cap = in->end = 0;
	for (;;) {
		if (len > max_input) {
			free(buf);
			return tachi_fail(e, TACH_E_LIMIT, TACH_POS_NONE, 0,
				     "input exceeds the limit of %llu bytes (see --max-input)",
				     (unsigned long long)max_input);
		}
		if (in->eof)
			break;
		if (!TACHI_RESERVE(buf, cap, len + IN_CHUNK)) {
			free(buf);
			return tachi_fail(e, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory reading input");
		}
		/* never more than one byte past the limit, whatever room the buffer has, so an
		 * endless input costs max_input and not the buffer's next doubling */
		size_t room = cap - len;
		if (room > max_input + 1 - len)
			room = (size_t)(max_input + 1 - len);
		size_t got = 0;
		int rc = read_some(in, e, buf + len, room, &got);
		if (rc) {
			free(buf);
			return rc;
		}
		if (!got)
			break;
		len += got;
	}
	in->eof = false;
	in->own = buf;
	in->data = buf;
	in->size = len;
	in->whole = true;
	return TACH_OK;
}

/* Streaming: make at least one more byte available; false at end of input. */
static int in_refill(struct tachi_in *in, struct tachi_err *e)
{
	if (in->eof)
		return TACH_EOF;
	if (in->pos > 0 && in->pos == in->end) {
		in->base += in->pos;
		in->pos = in->end = 0;
	}
	if (in->end == in->cap) {
		if (in->pos > 0) {
			memmove(in->buf, in->buf + in->pos, in->end - in->pos);
			in->base += in->pos;
			in->end -= in->pos;
			in->pos = 0;
		}
		if (in->end == in->cap && !TACHI_RESERVE(in->buf, in->cap, in->cap + IN_CHUNK))
			return tachi_fail(e, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory reading input");
	}
	size_t got = 0;
	int rc = read_some(in, e, in->buf + in->end, in->cap - in->end, &got);
	if (rc)
		return rc;
	if (!got) {
		in->eof = true;
		return TACH_EOF;
	}
	in->end += got;
	return TACH_OK;
}

int tachi_in_peek(struct tachi_in *in, size_t n, struct tachi_err *e, const uint8_t **p,
		  size_t *got)
{
	if (in->whole) {
		*p = in->data;
		*got = in->size < n ? in->size : n;
		return TACH_OK;
	}
	if (!TACHI_RESERVE(in->buf, in->cap, n > IN_CHUNK ? n : IN_CHUNK))
		return tachi_fail(e, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory reading input");
	/* A pipe gives what its writer has written so far: read until n or the end. */
	while (in->end < n && !in->eof) {
		size_t k = 0;
		int rc = read_some(in, e, in->buf + in->end, n - in->end, &k);
		if (rc)
			return rc;
		if (!k)
			in->eof = true;
		in->end += k;
	}
	*p = in->buf;
	*got = in->end < n ? in->end : n;
	return TACH_OK;
}

int tachi_in_next_line(struct tachi_in *in, struct tachi_err *e, const char **line, size_t *len)
{
	if (in->whole) {
		if (in->pos >= in->size)
			return TACH_EOF;
		const uint8_t *s = in->data + in->pos;
		const uint8_t *nl = memchr(s, '\n', in->size - in->pos);
		size_t n = nl ? (size_t)(nl - s) : in->size - in->pos;
		in->base = in->pos;
		in->pos += n + (nl != NULL);
		in->line++;
		*line = (const char *)s;
		*len = n;
		return TACH_OK;
	}
	/* in->base is the offset of buf[0]; the previous line was consumed up to in->pos. */
	size_t scan = in->pos;
	for (;;) {
		/* buf is NULL before the first refill, and memchr(NULL, c, 0) is undefined. */
		const uint8_t *nl = in->end > scan ? memchr(in->buf + scan, '\n', in->end - scan) : NULL;
		if (nl) {
			size_t start = in->pos;
			size_t n = (size_t)(nl - (in->buf + start));
			in->pos = (size_t)(nl - in->buf) + 1;
			in->line++;
			in->last_line_off = in->base + start;
			*line = (const char *)in->buf + start;
			*len = n;
			return TACH_OK;
		}
		if (in->end - in->pos > in->max_line)
			return tachi_fail(e, TACH_E_LIMIT, TACH_POS_LINE, in->line + 1,
				     "line longer than %zu bytes", in->max_line);
		size_t keep = in->end - in->pos;
		int rc = in_refill(in, e);
		if (rc < 0)
			return rc;
		/* refill may have moved the unread part to the front of the buffer */
		scan = in->pos + keep;
		if (rc == TACH_EOF) {
			if (in->end == in->pos)
				return TACH_EOF;
			size_t start = in->pos;
			in->line++;
			in->last_line_off = in->base + start;
			*line = (const char *)in->buf + start;
			*len = in->end - start;
			in->pos = in->end;
			return TACH_OK;
		}
	}
}

void tachi_in_drop_buffer(struct tachi_in *in)
{
	if (in->whole || !in->eof || in->pos != in->end)
		return;
	free(in->buf);
	in->buf = NULL;
	in->base += in->pos;
	in->cap = in->pos = in->end = 0;
}

bool tachi_in_ends_in_lf(const struct tachi_in *in)
{
	if (in->whole)
		return in->size && in->data[in->size - 1] == '\n';
	return in->last_byte == '\n';
}

uint64_t tachi_in_offset(const struct tachi_in *in)
{
	return in->whole ? in->base : in->last_line_off;
}

void tachi_in_release(struct tachi_in *in, size_t upto)
{
	if (!in->map || upto > in->map_len)
		return;
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;
	upto -= upto % page;
	/* A private read-only file mapping: dropped pages are read from the file again if
	 * touched, so the bytes stay valid; only their memory is given back. */
	if (upto > in->released) {
		madvise((uint8_t *)in->map + in->released, upto - in->released, MADV_DONTNEED);
		in->released = upto;
	}
}

/* UTF-16 or a BOM inside compressed data (a gzip'd file of a Windows tool): a second
 * layer over the first, fed the bytes peeked through it. */
static int unpack_text_inside(struct tachi_in *in, uint64_t max_out, struct tachi_err *e)
{
	const uint8_t *p;
	size_t n;
	const char *k;
	int rc = tachi_in_peek(in, 4, e, &p, &n);
	if (rc || !(k = tachi_unpack_kind(p, n)) || (strcmp(k, "UTF-16LE") && strcmp(k, "UTF-16BE") &&
						     strcmp(k, "UTF-8")))
		return rc;
	struct tachi_unpack *inner = in->unpack;
	in->unpack = NULL;
	if ((rc = tachi_unpack_over(&in->unpack, in->buf, in->end, -1, inner, max_out, e)))
		return rc;
	in->end = 0;
	in->eof = false;
	return TACH_OK;
}

int tachi_in_unpack(struct tachi_in *in, uint64_t max_out, struct tachi_err *e,
		    const char **kind)
{
	const uint8_t *p;
	size_t n;
	*kind = NULL;
	int rc = tachi_in_peek(in, 4, e, &p, &n);
	if (rc || !(*kind = tachi_unpack_kind(p, n)))
		return rc;
	if (in->whole) {
		/* memory input: decompressed as a stream from the caller's bytes */
		if ((rc = tachi_unpack_new(&in->unpack, in->data, in->size, -1, max_out, e)))
			return rc;
		in->data = NULL;
		in->size = 0;
		in->whole = false;
		return unpack_text_inside(in, max_out, e);
	}
	/* the peeked bytes are compressed ones: they go to the decoder, not to readers */
	if ((rc = tachi_unpack_new(&in->unpack, in->buf, in->end, in->fd, max_out, e)))
		return rc;
	in->end = 0;
	in->eof = false;
	return unpack_text_inside(in, max_out, e);
}

void tachi_in_free(struct tachi_in *in)
{
	tachi_unpack_free(in->unpack);
	if (in->map)
		munmap(in->map, in->map_len);
	free(in->own);
	free(in->buf);
	memset(in, 0, sizeof(*in));
	in->fd = -1;
}

/* ---- output ---- */
#define OUT_BUF (256u << 10)

int tachi_out_init(struct tachi_out *o, int fd)
{
	memset(o, 0, sizeof(*o));
	o->fd = fd;
	o->buf = malloc(OUT_BUF);
	if (!o->buf)
		return TACH_E_NOMEM;
	o->cap = OUT_BUF;
	struct stat st;
	o->seekable = fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && lseek(fd, 0, SEEK_CUR) >= 0;
	return TACH_OK;
}

static int out_drain(struct tachi_out *o, const uint8_t *p, size_t n)
{
	while (n) {
		ssize_t k = write(o->fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			o->err = errno;
			return TACH_E_IO;
		}
		p += k;
		n -= (size_t)k;
		o->written += (size_t)k;
	}
	return TACH_OK;
}

int tachi_out_flush(struct tachi_out *o)
{
	if (o->err)
		return TACH_E_IO;
	int rc = out_drain(o, o->buf, o->len);
	o->len = 0;
	return rc;
}

int tachi_out_write(struct tachi_out *o, const void *p, size_t n)
{
	if (o->err)
		return TACH_E_IO;
	/* an empty piece may come as a NULL pointer, which memcpy must not see */
	if (!n)
		return TACH_OK;
	if (n <= o->cap - o->len) {
		memcpy(o->buf + o->len, p, n);
		o->len += n;
		return TACH_OK;
	}
	int rc = tachi_out_flush(o);
	if (rc)
		return rc;
	if (n >= o->cap)
		return out_drain(o, p, n);
	memcpy(o->buf, p, n);
	o->len = n;
	return TACH_OK;
}

int tachi_out_u64(struct tachi_out *o, uint64_t v)
{
	char b[24];
	return tachi_out_write(o, b, tachi_fmt_u64(b, v));
}

int tachi_out_i64(struct tachi_out *o, int64_t v)
{
	char b[24];
	return tachi_out_write(o, b, tachi_fmt_i64(b, v));
}

void tachi_out_free(struct tachi_out *o)
{
	free(o->buf);
	o->buf = NULL;
	o->len = o->cap = 0;
}
