/* The macsample format's files: what its table row (macsample.c) takes from its reader. */
#ifndef TACHFMT_FMT_MACSAMPLE_H
#define TACHFMT_FMT_MACSAMPLE_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_macsample_reader_ops;

#endif
