/* The pprof format's two files: the reader's ops and probe, for the writer file's row. */
#ifndef TACHFMT_FMT_PPROF_H
#define TACHFMT_FMT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_pprof_reader_ops;
bool tachi_pprof_probe(const uint8_t *p, size_t n);
bool tachi_pprof_resembles(const uint8_t *p, size_t n);

#endif
