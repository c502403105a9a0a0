/* V8 CPU profiles (.cpuprofile, v8_read.c): the probe: the first object's "nodes" array
 * starts with a node that has a "callFrame" object, or the object has both "samples" and
 * "timeDeltas" keys. p may be just the input's first bytes. The row is in core/formats.h. */
#ifndef TACHFMT_FMT_V8_H
#define TACHFMT_FMT_V8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

bool tachi_v8_probe(const uint8_t *p, size_t n);
bool tachi_v8_resembles(const uint8_t *p, size_t n);

#endif
