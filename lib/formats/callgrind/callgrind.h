/* The callgrind format's files (callgrind.c, the table row; read.c, the reader; write.c,
 * the writer). */
#ifndef TACHFMT_CALLGRIND_H
#define TACHFMT_CALLGRIND_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_callgrind_reader_ops;
extern const struct tachi_writer_ops tachi_callgrind_writer_ops;

#endif
