/* The perfreport format's files: what its table row (perfreport.c) takes from its reader. */
#ifndef TACHFMT_FMT_PERFREPORT_H
#define TACHFMT_FMT_PERFREPORT_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_perfreport_reader_ops;

#endif
