/* Detection (detect.c): the "auto" reader, and helpers for the formats' probes. */
#ifndef TACHFMT_DETECT_H
#define TACHFMT_DETECT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Detection reads this much of the start of an input (less at its end). */
#define TACHI_PROBE_BYTES 4096u
/* The window probes are asked again of when none took the first TACHI_PROBE_BYTES. */
#define TACHI_PROBE_MORE (1u << 20)

struct tachi_format;
extern const struct tachi_format tachi_fmt_auto;
/* For probes: the next line from *at that is neither blank nor a '#' comment, without its
 * LF (and CR); *complete is false when it may go on past the peeked bytes. */
bool tachi_probe_line(const uint8_t *p, size_t n, size_t *at, const uint8_t **line,
		      size_t *len, bool *complete);
/* For probes: non-empty, and no control bytes but TAB, CR and LF. */
bool tachi_probe_text(const uint8_t *p, size_t n);

#endif
