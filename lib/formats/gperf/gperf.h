/* The gperf format's files: what its table row (gperf.c) takes from its reader and writer. */
#ifndef TACHFMT_FMT_GPERF_H
#define TACHFMT_FMT_GPERF_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_gperf_reader_ops;

#endif
