/* The papyrus format's files: what its table row (papyrus.c) takes from its reader. */
#ifndef TACHFMT_FMT_PAPYRUS_H
#define TACHFMT_FMT_PAPYRUS_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_papyrus_reader_ops;

#endif
