/* speedscope JSON: both directions' ops, for the table row (speedscope.c), and the test of
 * a "$schema" value that the probe and the reader share. */
#ifndef TACHFMT_FMT_SPEEDSCOPE_H
#define TACHFMT_FMT_SPEEDSCOPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_speedscope_reader_ops;
extern const struct tachi_writer_ops tachi_speedscope_writer_ops;
struct tachi_jtok;
/* Whether the string token t (over p) names speedscope's file format schema. */
bool tachi_speedscope_schema_named(const uint8_t *p, const struct tachi_jtok *t);

#endif
