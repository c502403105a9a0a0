/* The collapsed writer's "async-profiler" label style (collapsed/write_async.c): what
 * async-profiler's converter, `jfrconv -o collapsed`, prints for the same recording. */
#ifndef TACHFMT_COLLAPSED_ASYNC_H
#define TACHFMT_COLLAPSED_ASYNC_H

#include <stdbool.h>

#include "core/handles.h"
#include "formats/collapse.h"

struct tachi_async_labels {
	bool on;
	bool threads, lines, simple, dot; /* jfrconv's --threads, --lines, --simple, --dot */
};

/* Takes the writer options ap-threads, ap-lines, ap-simple and ap-dot: TACH_OK, a usage
 * error, or 1 when key is none of them. */
int tachi_async_labels_option(struct tach_writer *w, struct tachi_async_labels *al,
			      const char *key, const char *value);
/* Writes sc's stacks as jfrconv would: lines merged by their text, sorted by it. */
int tachi_async_labels_write(struct tach_writer *w, const struct tachi_async_labels *al,
			     const struct tachi_stackcount *sc);

#endif
