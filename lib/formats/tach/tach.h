/* The TACH format's two files: the writer's ops, for the reader file's table row. */
#ifndef TACHFMT_FMT_TACH_H
#define TACHFMT_FMT_TACH_H

#include "core/format.h"

extern const struct tachi_writer_ops tachi_tach_writer_ops;
extern const struct tachi_reader_ops tachi_tach_reader_ops;

#endif
