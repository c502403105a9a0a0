/* The safari format's files: what its table row (safari.c) takes from its reader. */
#ifndef TACHFMT_FMT_SAFARI_H
#define TACHFMT_FMT_SAFARI_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_safari_reader_ops;

#endif
