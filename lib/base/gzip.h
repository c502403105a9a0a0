/* gzip output in fixed chunks (gzip.c): the same bytes for any number of workers. */
#ifndef TACHFMT_GZIP_H
#define TACHFMT_GZIP_H

#include <stddef.h>

#include "base/io.h"

#define TACHI_GZ_MAX_WORKERS 64
struct tachi_gz;
/* Writes the gzip header to out and makes *g; workers 0 compresses in the caller's thread.
 * Returns TACH_OK, TACH_E_NOMEM, or TACH_E_IO with out->err set. */
int tachi_gz_open(struct tachi_gz **g, struct tachi_out *out, int level, unsigned workers);
/* Compresses n bytes of output into out; the same codes, and once failed, failed. */
int tachi_gz_write(struct tachi_gz *g, const void *p, size_t n);
/* Ends the stream: the last chunk and the trailer. */
int tachi_gz_finish(struct tachi_gz *g);
/* Stops the workers and frees g (NULL is fine); unfinished output stays unfinished. */
void tachi_gz_free(struct tachi_gz *g);

#endif
