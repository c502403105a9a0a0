/* The callgrind format's files (callgrind.c, the table row; write.c, the writer). */
#ifndef TACHFMT_CALLGRIND_H
#define TACHFMT_CALLGRIND_H

#include "core/format.h"

extern const struct tachi_writer_ops tachi_callgrind_writer_ops;

#endif
