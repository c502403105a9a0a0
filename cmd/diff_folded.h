/* tach-diff's join of two folded texts, line by line as difffolded.pl joins them (see
 * diff_folded.c). */
#ifndef TACHFMT_DIFF_FOLDED_H
#define TACHFMT_DIFF_FOLDED_H

#include <stdbool.h>
#include <stdio.h>

struct dfold;

/* NULL when out of memory. strip_hex: difffolded.pl's -s. */
struct dfold *dfold_new(bool strip_hex);
void dfold_free(struct dfold *j);
/* Every line of the folded text on fd, from where fd stands, into column side (0 BASE,
 * 1 NEW). 0, or -1 with errno set (ENOMEM, EOVERFLOW for more than 2^31 frames or stack
 * prefixes, or the read's own). */
int dfold_read(struct dfold *j, int side, int fd);
/* The lines "STACK BASE NEW" sorted by stack bytes; normalize: difffolded.pl's -n. 0, or -1
 * with errno set (out of memory, or the write failed). */
int dfold_write(struct dfold *j, FILE *out, bool normalize);

#endif
