/* Chrome's trace-event JSON (chrome.c: the row and its probe; read.c: the reader). */
#ifndef TACHFMT_FMT_CHROME_H
#define TACHFMT_FMT_CHROME_H

#include "core/format.h"

extern const struct tachi_reader_ops tachi_chrome_reader_ops;

#endif
