/* GHC's -pj JSON profiles: what the format's table row (ghcpj.c) takes from its reader. */
#ifndef TACHFMT_FMT_GHCPJ_H
#define TACHFMT_FMT_GHCPJ_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_ghcpj_reader_ops;

#endif
