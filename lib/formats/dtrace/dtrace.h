/* The dtrace format's files: what its table row (dtrace.c) takes from its reader. */
#ifndef TACHFMT_FMT_DTRACE_H
#define TACHFMT_FMT_DTRACE_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_dtrace_reader_ops;

#endif
