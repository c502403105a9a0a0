/* The xctrace format's files: what its table row (xctrace.c) takes from its reader. */
#ifndef TACHFMT_FMT_XCTRACE_H
#define TACHFMT_FMT_XCTRACE_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_xctrace_reader_ops;

#endif
