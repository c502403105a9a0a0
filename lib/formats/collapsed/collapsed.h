/* The collapsed format's two files: the reader's ops and probe, for the writer file's row. */
#ifndef TACHFMT_FMT_COLLAPSED_H
#define TACHFMT_FMT_COLLAPSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_collapsed_reader_ops;
extern const struct tachi_writer_ops tachi_collapsed_writer_ops;

/* A "//" comment line (after leading white space): "//" then white space or the end, as
 * the tools that write such comments write them (speedscope's test files); a stack whose
 * first frame starts with "//" (a path) is no comment. */
static inline bool tachi_collapsed_slash_comment(const char *s, size_t n)
{
	return n >= 2 && s[0] == '/' && s[1] == '/' && (n == 2 || s[2] == ' ' || s[2] == '\t');
}

#endif
