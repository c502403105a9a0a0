/* The samples format's files: what its table row (samples.c) takes from its reader and writer. */
#ifndef TACHFMT_FMT_SAMPLES_H
#define TACHFMT_FMT_SAMPLES_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_samples_reader_ops;
extern const struct tachi_writer_ops tachi_samples_writer_ops;

#endif
