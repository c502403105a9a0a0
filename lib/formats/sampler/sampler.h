/* The Sampler format's two files: the writer's ops, for the reader file's table row. */
#ifndef TACHFMT_FMT_SAMPLER_H
#define TACHFMT_FMT_SAMPLER_H

#include "core/format.h"

extern const struct tachi_writer_ops tachi_sampler_writer_ops;
extern const struct tachi_reader_ops tachi_sampler_reader_ops;

#endif
