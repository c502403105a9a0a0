/* The pproftext format's files: what its table row (pproftext.c) takes from its reader. */
#ifndef TACHFMT_FMT_PPROFTEXT_H
#define TACHFMT_FMT_PPROFTEXT_H

#include <stddef.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_pproftext_reader_ops;

/* The kinds of text, from the first line that is not blank or a comment. */
enum ppt_kind {
	PPT_NONE,
	PPT_HEAP,       /* "heap profile: ... @ heap|heap_v2|heapz_v2|heapprofile[/rate]" */
	PPT_GROWTH,     /* "heap profile: ... @ growthz?" */
	PPT_FRAG,       /* "heap profile: ... @ fragmentationz?" */
	PPT_CONTENTION, /* "--- contentionz ", "--- mutex:", "--- contention:" */
	PPT_THREAD,     /* "--- threadz N ---" or "--- Thread X (name: N/T) stack: ---" */
	PPT_COUNT,      /* "NAME profile: total N" (Go's threadcreate, goroutine) */
};

/* The kind of the text whose first significant line is s (len bytes, no LF). */
enum ppt_kind tachi_ppt_kind(const char *s, size_t len);

#endif
