/* The pmcstat format's files: what its table row (pmcstat.c) takes from its reader. */
#ifndef TACHFMT_FMT_PMCSTAT_H
#define TACHFMT_FMT_PMCSTAT_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_pmcstat_reader_ops;

#endif
