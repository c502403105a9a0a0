/* Input read as what it holds (unpack.c): gzip (every member, one after another, as
 * gzip -d and Go read them) and zstd (every frame), found by their magic, for every
 * format: perf script | gzip, a .json.gz trace, a .cpuprofile.gz; and text with a BOM:
 * UTF-16 (LE or BE) as UTF-8, UTF-8 without its BOM. It knows nothing of formats: the
 * input layer (io.c) reads through it. */
#ifndef TACHFMT_UNPACK_H
#define TACHFMT_UNPACK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

struct tachi_unpack;

/* What the n bytes at p start with: "gzip", "zstd" (their magic), "UTF-16LE", "UTF-16BE"
 * or "UTF-8" (a BOM: UTF-16 is read as UTF-8, a UTF-8 BOM is dropped), or NULL. */
const char *tachi_unpack_kind(const uint8_t *p, size_t n);
/* Makes *u for the kind that p starts with, reading from fd after the n bytes at p
 * (already read from it; copied), or from those bytes alone when fd is -1 (they stay the
 * caller's and must outlive *u). At most max_out bytes come out: past them the read fails
 * with TACH_E_LIMIT (a gzip bomb costs max_out, not what it expands to). */
int tachi_unpack_new(struct tachi_unpack **u, const uint8_t *p, size_t n, int fd,
		     uint64_t max_out, struct tachi_err *e);
/* The same, reading from src (what a compressed input holds, UTF-16 inside gzip) after
 * the n bytes at p: *u owns src from here on, even when this fails. */
int tachi_unpack_over(struct tachi_unpack **u, const uint8_t *p, size_t n, int fd,
		      struct tachi_unpack *src, uint64_t max_out, struct tachi_err *e);
/* Up to n bytes of what the input holds into p; *got 0 at its end. A damaged or cut short
 * stream fails with the offset of the compressed byte where it went wrong. */
int tachi_unpack_read(struct tachi_unpack *u, uint8_t *p, size_t n, size_t *got,
		      struct tachi_err *e);
/* The kind, for messages. */
const char *tachi_unpack_name(const struct tachi_unpack *u);
void tachi_unpack_free(struct tachi_unpack *u);

#endif
