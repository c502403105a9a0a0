/* The pprof format's table row (pprof.c) takes its reader's and writer's ops from here. */
#ifndef TACHFMT_FMT_PPROF_H
#define TACHFMT_FMT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_pprof_reader_ops;
extern const struct tachi_writer_ops tachi_pprof_writer_ops;

#endif
