/* GHC's .prof text: what the format's table row (ghcprof.c) takes from its reader. */
#ifndef TACHFMT_FMT_GHCPROF_H
#define TACHFMT_FMT_GHCPROF_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_ghcprof_reader_ops;

#endif
