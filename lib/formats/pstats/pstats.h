/* The pstats format's files: what its table row (pstats.c) takes from its reader and writer. */
#ifndef TACHFMT_FMT_PSTATS_H
#define TACHFMT_FMT_PSTATS_H

#include "core/format.h"

extern const struct tachi_writer_ops tachi_pstats_writer_ops;

#endif
