/* The collapsed format's two files: the reader's ops and probe, for the writer file's row. */
#ifndef TACHFMT_FMT_COLLAPSED_H
#define TACHFMT_FMT_COLLAPSED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_collapsed_reader_ops;
extern const struct tachi_writer_ops tachi_collapsed_writer_ops;

#endif
