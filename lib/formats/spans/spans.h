/* Chrome trace-event spans (spans.c: the row; read.c: the reader). */
#ifndef TACHFMT_FMT_SPANS_H
#define TACHFMT_FMT_SPANS_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_spans_reader_ops;

#endif
