/* Values and labels (values.c): units, and a writer's copy of the meta's value types. */
#ifndef TACHFMT_VALUES_H
#define TACHFMT_VALUES_H

#include <stddef.h>
#include <stdint.h>

#include "core/handles.h"

/* Nanoseconds in one of unit s[0, n) ("ms", "nanoseconds", ...); 0: not a time unit. */
uint64_t tachi_time_unit_ns(const char *s, size_t n);
/* The full name of unit u as speedscope and flame graphs spell it: "bytes", "nanoseconds",
 * ... "seconds"; NULL for any other (a count). */
const char *tachi_unit_name(const char *u);
/* At set_meta: the writer's own copy of m's value-type block (m holds n bytes). */
int tachi_writer_keep_values(struct tach_writer *w, const struct tach_meta *m, size_t n);
/* The failure of a writer that stores samples given weights that are not (meta.weight_unit
 * set): it names the options that choose otherwise. */
int tachi_weights_not_samples(struct tach_writer *w);
/* For a writer that keeps samples only (TACH, Sampler): the input's values that are neither
 * the weights, a count of samples nor a time, said once (at begin). */
void tachi_values_dropped(struct tach_writer *w);

#endif
