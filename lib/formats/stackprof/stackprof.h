/* Ruby stackprof dumps: what the format's table row (stackprof.c) takes from its reader. */
#ifndef TACHFMT_FMT_STACKPROF_H
#define TACHFMT_FMT_STACKPROF_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_stackprof_reader_ops;

#endif
