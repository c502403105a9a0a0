/* V8's --prof tick logs (read.c describes them): what the table row (v8log.c) takes from
 * the reader. */
#ifndef TACHFMT_FMT_V8LOG_H
#define TACHFMT_FMT_V8LOG_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_v8log_reader_ops;

#endif
