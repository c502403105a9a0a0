/* Folded lines merged by their text and printed sorted by it (collapsed/textlines.c): what
 * the label styles that print as another tool does (perf's stackcollapse-perf.pl,
 * async-profiler's jfrconv) share, as both tools merge lines that print alike. */
#ifndef TACHFMT_COLLAPSED_TEXTLINES_H
#define TACHFMT_COLLAPSED_TEXTLINES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "base/hash.h"
#include "core/handles.h"

struct tachi_textline {
	uint64_t off, count;
	uint32_t len;
};

struct tachi_textlines {
	struct tachi_buf text;        /* the distinct lines' texts */
	struct tachi_textline *ents;
	size_t nents, ents_cap;
	struct tachi_idset index;
};

/* Adds line p[0, n) with count c (to the line of that text, if any); false: no memory. */
bool tachi_textlines_add(struct tachi_textlines *tl, const char *p, size_t n, uint64_t c);
/* Adds line p[0, n) with count c as a line of its own, whatever lines print alike. */
bool tachi_textlines_push(struct tachi_textlines *tl, const char *p, size_t n, uint64_t c);
/* Prints "LINE COUNT\n" for each line, sorted by text as perl's cmp sorts (bytes, a
 * prefix first). */
int tachi_textlines_print(struct tach_writer *w, const struct tachi_textlines *tl);
void tachi_textlines_free(struct tachi_textlines *tl);

#endif
