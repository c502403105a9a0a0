/* The collapsed writer's "perf" label style (collapsed/write_perf.c): what FlameGraph's
 * stackcollapse-perf.pl prints for the same perf script text. */
#ifndef TACHFMT_COLLAPSED_PERF_H
#define TACHFMT_COLLAPSED_PERF_H

#include <stdbool.h>

#include "core/handles.h"
#include "formats/collapse.h"

struct tachi_perf_labels {
	bool on;
	int root;              /* PERF_ROOT_* */
	bool kernel, jit;      /* "_[k]", "_[j]" annotations */
	bool addrs;            /* "[dso <addr>]" for unknown symbols */
};
enum { PERF_ROOT_COMM, PERF_ROOT_PID, PERF_ROOT_TID };

/* Takes the writer options perf-root, annotate and addrs: TACH_OK, a usage error, or 1
 * when key is none of them. */
int tachi_perf_labels_option(struct tach_writer *w, struct tachi_perf_labels *pl,
			     const char *key, const char *value);
/* Writes sc's stacks as the script would: lines merged by their text, sorted by it. */
int tachi_perf_labels_write(struct tach_writer *w, const struct tachi_perf_labels *pl,
			    const struct tachi_stackcount *sc);

#endif
