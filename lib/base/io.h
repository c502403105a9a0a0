/* Buffered input and output over file descriptors (io.c). It knows nothing of readers
 * and writers: a failure is recorded in the tachi_err it is given. */
#ifndef TACHFMT_IO_H
#define TACHFMT_IO_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"

/* A file named by input (a mapping's binary, a perf map), opened only when it is a
 * regular file: never blocking on a FIFO or a device, nor reading one (O_NONBLOCK for the
 * open, then fstat). The descriptor (O_CLOEXEC), or -1; *size its size when not NULL. */
int tachi_open_regular(const char *path, uint64_t *size);

/* ---- input ---- */
struct tachi_in {
	int fd;                 /* -1 for memory input */
	const uint8_t *data;    /* whole-input mode: the bytes */
	size_t size;
	void *map;              /* mmap to unmap */
	size_t map_len;
	size_t released;        /* the mapping's first bytes given back (tachi_in_release) */
	uint8_t *own;           /* malloc'd copy of a pipe's contents */
	/* streaming mode */
	uint8_t *buf;
	size_t cap, pos, end;
	uint64_t base;          /* input offset of buf[0] */
	bool eof;
	bool whole;             /* data/size hold everything */
	uint64_t line;          /* lines handed out so far */
	uint64_t last_line_off;
	size_t max_line;
	uint8_t last_byte;      /* streaming: the last byte read from fd (tachi_in_ends_in_lf) */
	struct tachi_unpack *unpack; /* compressed input: bytes are read through it */
};
/* Compressed input (gzip or zstd, by its magic) is read as what it holds from here on,
 * the fd's or the memory's: its first bytes are peeked, and when they are such a magic,
 * every later read decompresses (at most max_out bytes), so detection and every format
 * see the text or data inside. *kind names the compression, NULL when none. */
int tachi_in_unpack(struct tachi_in *in, uint64_t max_out, struct tachi_err *e,
		    const char **kind);
/* Makes the whole input available in data/size: a regular file is mapped, anything else
 * read (at most max_input bytes). */
int tachi_in_load(struct tachi_in *in, uint64_t max_input, struct tachi_err *e);
/* A regular file mapped whole as tachi_in_load maps it; true when the whole input is in
 * data/size, false when it is not such a file (the input stays streaming). */
bool tachi_in_map_file(struct tachi_in *in);
/* Streaming: the next bytes, up to n, into dst (fewer only at the end of the input), the
 * peeked ones first; consumed. */
int tachi_in_read(struct tachi_in *in, void *dst, size_t n, struct tachi_err *e, size_t *got);
/* The first n bytes (fewer at the end of the input) without consuming them: memory input
 * as it is, a descriptor read into the streaming buffer, where the line reader and
 * tachi_in_load take them up, so nothing is read twice and a pipe loses nothing. */
/* Streaming, at the end with every byte consumed: gives the buffer back (a reader done
 * with its lines, before a writer's close needs memory). */
void tachi_in_drop_buffer(struct tachi_in *in);
int tachi_in_peek(struct tachi_in *in, size_t n, struct tachi_err *e, const uint8_t **p,
		  size_t *got);
/* Streaming: the next line without its LF, or TACH_EOF. */
int tachi_in_next_line(struct tachi_in *in, struct tachi_err *e, const char **line, size_t *len);
/* At the end of the input: whether its last byte is a LF (a text whose writer ends every
 * line, perf script's, that ends without one was cut short). */
bool tachi_in_ends_in_lf(const struct tachi_in *in);
/* Byte offset of the start of the last line returned. */
uint64_t tachi_in_offset(const struct tachi_in *in);
/* Whole-input mode: the reader will not read data[0, upto) again for a while, so a file
 * mapping's pages there can leave the process's resident memory (the bytes stay readable).
 * Does nothing for other inputs. */
void tachi_in_release(struct tachi_in *in, size_t upto);
void tachi_in_free(struct tachi_in *in);

/* ---- output ---- */
struct tachi_out {
	int fd;
	uint8_t *buf;
	size_t len, cap;
	uint64_t written;       /* bytes passed to write(2) so far */
	bool seekable;
	int err;                /* errno of the first failure */
};
int tachi_out_init(struct tachi_out *o, int fd);
int tachi_out_write(struct tachi_out *o, const void *p, size_t n);
int tachi_out_flush(struct tachi_out *o);
void tachi_out_free(struct tachi_out *o);
static inline int tachi_out_byte(struct tachi_out *o, uint8_t c)
{
	if (TACHI_LIKELY(o->len < o->cap)) {
		o->buf[o->len++] = c;
		return 0;
	}
	return tachi_out_write(o, &c, 1);
}
static inline int tachi_out_str(struct tachi_out *o, const char *s)
{
	return tachi_out_write(o, s, strlen(s));
}
int tachi_out_u64(struct tachi_out *o, uint64_t v);
/* Writes s with %, :, ; and control bytes as %XX (the samples text form). */
int tachi_out_escaped(struct tachi_out *o, const char *s, size_t n);
int tachi_out_i64(struct tachi_out *o, int64_t v);

#endif
