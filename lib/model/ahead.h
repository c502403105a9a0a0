/* The lookahead queue (ahead.c) of a writer that interns into a stack trie. */
#ifndef TACHFMT_AHEAD_H
#define TACHFMT_AHEAD_H

#include <stdint.h>

#include "model/stacktab.h"

struct tach_writer;
/* ---- lookahead (ahead.c): a writer whose per-sample lookups miss the caches gets its
 * samples TACHI_AHEAD late, each copied, so that it can request the lines of several
 * before it needs them. Order and output stay as without. ---- */
#define TACHI_AHEAD 16
struct tachi_ahead {
	struct tachi_ahead_item q[TACHI_AHEAD];
	unsigned head, n;
};
/* tach_writer_put once w->ahead is set, and the rest of the queue before close. */
int tachi_ahead_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s);
int tachi_ahead_drain(struct tach_writer *w);
void tachi_ahead_free(struct tachi_ahead *a);

#endif
