/* The gecko format's table row (gecko.c) takes its reader's and writer's ops from here. */
#ifndef TACHFMT_FMT_GECKO_H
#define TACHFMT_FMT_GECKO_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_gecko_reader_ops;
extern const struct tachi_writer_ops tachi_gecko_writer_ops;

#endif
