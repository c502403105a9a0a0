/* A growing byte buffer, inline (no .c): the texts writers build a piece at a time (the
 * collapsed writer's labels, the perf label style's lines), appended to byte by byte. */
#ifndef TACHFMT_BUF_H
#define TACHFMT_BUF_H

#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "base/base.h"

struct tachi_buf {
	char *p;
	size_t len, cap;
};

static inline bool tachi_buf_add(struct tachi_buf *b, const void *p, size_t n)
{
	/* An empty label may come with no buffer at all: memcpy must not see NULL. */
	if (n == 0)
		return true;
	if (!TACHI_RESERVE(b->p, b->cap, b->len + n))
		return false;
	memcpy(b->p + b->len, p, n);
	b->len += n;
	return true;
}

#endif
