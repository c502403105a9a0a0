/* The vtune format's files: what its table row (vtune.c) takes from its reader. */
#ifndef TACHFMT_FMT_VTUNE_H
#define TACHFMT_FMT_VTUNE_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_vtune_reader_ops;

#endif
