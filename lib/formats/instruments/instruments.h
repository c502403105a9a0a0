/* The instruments format's files: what its table row (instruments.c) takes from its reader. */
#ifndef TACHFMT_FMT_INSTRUMENTS_H
#define TACHFMT_FMT_INSTRUMENTS_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_instruments_reader_ops;

#endif
