/* The lookahead queue (ahead.c) of a writer whose per-sample lookups miss the caches: its
 * samples come TACHI_AHEAD late, each copied, so that the lines of several are requested
 * before they are needed. Order and output stay as without. The queue serves a stack trie
 * and knows nothing of writers: the writer handle starts it with the put (and, for a
 * writer whose pairs' context only it knows, the fetch) to call. */
#ifndef TACHFMT_AHEAD_H
#define TACHFMT_AHEAD_H

#include <stdint.h>

#include "base/base.h"
#include "model/stacktab.h"

#define TACHI_AHEAD 16
/* Puts a sample out of the queue; hash is its stage-0 hash (0 for one put straight through). */
typedef int (*tachi_ahead_put_fn)(void *ctx, const struct tach_dict *d,
				  const struct tach_sample *s, uint64_t hash);
/* A queued sample's stage (see tachi_stacktab_ahead). */
typedef void (*tachi_ahead_fetch_fn)(void *ctx, struct tachi_ahead_item *it, unsigned stage);
struct tachi_ahead {
	struct tachi_ahead_item q[TACHI_AHEAD];
	unsigned head, n;
	struct tachi_stacktab *trie;
	tachi_ahead_put_fn put;
	tachi_ahead_fetch_fn fetch; /* NULL: tachi_stacktab_ahead without pairs */
	void *ctx;
	struct tachi_err *err;
};
/* Makes *a once trie's tables are past the caches (tachi_stacktab_far), else leaves it NULL.
 * Returns TACH_OK, or TACH_E_NOMEM recorded in err. */
int tachi_ahead_start(struct tachi_ahead **a, struct tachi_stacktab *trie, tachi_ahead_put_fn put,
		      tachi_ahead_fetch_fn fetch, void *ctx, struct tachi_err *err);
/* Queues s, putting the oldest sample when the queue is full. */
int tachi_ahead_put(struct tachi_ahead *a, const struct tach_dict *d, const struct tach_sample *s);
/* Puts the rest of the queue (before close); a NULL queue has none. */
int tachi_ahead_drain(struct tachi_ahead *a);
void tachi_ahead_free(struct tachi_ahead *a);

#endif
