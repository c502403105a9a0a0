/* V8 sampling heap profiles: what the table row (heapprofile.c) takes from the reader. */
#ifndef TACHFMT_FMT_HEAPPROFILE_H
#define TACHFMT_FMT_HEAPPROFILE_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_heapprofile_reader_ops;

#endif
