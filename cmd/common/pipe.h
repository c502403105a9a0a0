/* Reading on a second thread while the main thread writes (see pipe.c). */
#ifndef TACHFMT_PIPE_H
#define TACHFMT_PIPE_H

#include <stdbool.h>

#include "tachfmt.h"

struct tc_pipe;

/* Where the thread takes samples from: a reader, with whatever filters the caller puts
 * between (the runner's tc_next). Same contract as tach_reader_next. */
typedef int (*tc_source_fn)(void *ctx, struct tach_reader *r, const struct tach_sample **s);

/* TACHFMT_THREADS=1: no; set to anything else: yes; unset: when more than one CPU is ours. */
bool tc_pipe_wanted(void);
/* How many threads gzip on when tc_pipe_wanted: a CPU each, at least 2 and at most 8. */
unsigned tc_gzip_workers(void);
/* Starts reading r through next(ctx, r, ...) on a thread; TACH_E_NOMEM when it cannot.
 * Only for readers whose dict no longer changes (tach_reader_dict_complete), since the
 * writer reads it meanwhile. */
int tc_pipe_start(struct tc_pipe **p, tc_source_fn next, void *ctx, struct tach_reader *r);
/* The next sample, as next would give it; its frames stay valid until the next call. */
int tc_pipe_next(struct tc_pipe *p, const struct tach_sample **s);
/* After a failure of tc_pipe_next: whether the pipe, not the reader, ran out of memory. */
bool tc_pipe_out_of_memory(const struct tc_pipe *p);
/* Stops the thread (wherever it is) and frees everything. */
void tc_pipe_stop(struct tc_pipe *p);

#endif
