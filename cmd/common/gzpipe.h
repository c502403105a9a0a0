/* gzip on a second thread for the writers that compress (see gzpipe.c). */
#ifndef TACHFMT_GZPIPE_H
#define TACHFMT_GZPIPE_H

#include <stdbool.h>

struct tc_gz;

/* Starts a thread that gzips, at level, everything written to *in into the descriptor out.
 * Returns 0, or -1 when it cannot (no pipe, thread or memory): then nothing was started. */
int tc_gz_start(struct tc_gz **g, int out, int level, int *in);
/* Ends the input, waits for the thread and frees it; complete false leaves the stream
 * unfinished, for a run that failed. Returns 0, or the errno of the write to out that
 * failed (ENOMEM when compression could not start). */
int tc_gz_finish(struct tc_gz *g, bool complete);

#endif
