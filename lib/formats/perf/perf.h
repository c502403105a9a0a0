/* perf script text: what the table row and probe (perf.c) take from the reader (read.c). */
#ifndef TACHFMT_FMT_PERF_H
#define TACHFMT_FMT_PERF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_perf_reader_ops;

/* Whether the n bytes at s are text: control bytes other than tab or CR make a line no
 * line of perf script's. */
bool tachi_perf_text_line(const uint8_t *s, size_t n);
/* The line at *at in p[0, n), without its white space at both ends (indent: how much was
 * at its start); false at the end of p, or at a line that is not text or not complete. */
bool tachi_perf_probe_next(const uint8_t *p, size_t n, size_t *at, const char **s, size_t *len,
			   size_t *indent);
/* Whether s[0, n) (its indent gone) is an event line, and if so whether it cannot be read
 * (bad), has a time and names an event. */
bool tachi_perf_event_line(const char *s, size_t n, bool *bad, bool *has_ts, bool *has_event);
/* Whether s[0, n) (its indent gone) is a frame line: an address and a symbol. */
bool tachi_perf_frame_line(const char *s, size_t n);

#endif
