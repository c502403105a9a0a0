/* JSON output pieces (jsonout.c), for the writers of JSON formats (Gecko, speedscope). */
#ifndef TACHFMT_JSONOUT_H
#define TACHFMT_JSONOUT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* µs as exact decimal ms ("12.5", "-0.001"), at most 23 bytes; a JSON string body from
 * bytes, invalid UTF-8 as U+FFFD (*repaired set), at most 6 * n bytes. */
size_t tachi_fmt_ms(char *buf, bool neg, uint64_t us);
size_t tachi_json_escape(char *out, const char *s, size_t n, bool *repaired);

#endif
