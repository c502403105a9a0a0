/* V8 CPU profiles: what the table row (v8.c) takes from the reader, and detection. */
#ifndef TACHFMT_FMT_V8_H
#define TACHFMT_FMT_V8_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_v8_reader_ops;
/* Detection, which speedscope's also asks (a V8 profile is no speedscope file). */
bool tachi_v8_probe(const uint8_t *p, size_t n);
bool tachi_v8_resembles(const uint8_t *p, size_t n);

#endif
