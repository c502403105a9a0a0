/* The vsprof format's files: what its table row (vsprof.c) takes from its reader. */
#ifndef TACHFMT_FMT_VSPROF_H
#define TACHFMT_FMT_VSPROF_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_vsprof_reader_ops;

#endif
