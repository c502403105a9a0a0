/* speedscope JSON: both directions' ops, and the probe: the first object's "$schema" names
 * speedscope's schema, or it has both "shared" and "profiles" keys. p may be just the
 * input's first bytes. The row is in the reader's file. */
#ifndef TACHFMT_FMT_SPEEDSCOPE_H
#define TACHFMT_FMT_SPEEDSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_speedscope_reader_ops;
extern const struct tachi_writer_ops tachi_speedscope_writer_ops;
bool tachi_speedscope_probe(const uint8_t *p, size_t n);
bool tachi_speedscope_resembles(const uint8_t *p, size_t n);

#endif
