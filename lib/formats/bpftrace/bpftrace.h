/* The bpftrace format's files: what its table row (bpftrace.c) takes from its reader. */
#ifndef TACHFMT_FMT_BPFTRACE_H
#define TACHFMT_FMT_BPFTRACE_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_bpftrace_reader_ops;

#endif
