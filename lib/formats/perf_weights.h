/* How perf's periods become weights and values, for the two perf readers (perf script
 * text, perf/read.c; perf.data, perfdata/read.c): the reader option weight; a clock's
 * periods (cpu-clock, task-clock: nanoseconds) as each sample's time (time_ns, exact), each
 * sample one (the interval, the first period, names the rate and weighs nothing);
 * a counted event's samples with values as pprof's sample types name them, the samples
 * (the weights) and, where periods are known, the event's count, shown first as perf
 * report weighs by period. Each reader decides which at its first sample. */
#ifndef TACHFMT_FORMATS_PERF_WEIGHTS_H
#define TACHFMT_FORMATS_PERF_WEIGHTS_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tachfmt.h"

enum { TACHI_PERF_W_AUTO, TACHI_PERF_W_PERIOD, TACHI_PERF_W_SAMPLES };

struct tachi_perf_weights {
	int mode;               /* TACHI_PERF_W_*: the option weight */
	bool decided, time_event, count_event;
	uint64_t base_ns;       /* a clock's first period: one interval */
	struct tach_value_type vtypes[2];
	int64_t vals[2];
	struct tach_sample_ext ext;
};

/* The option weight's value (auto, period or samples) into pw; false for another. */
static inline bool tachi_perf_weight_mode(struct tachi_perf_weights *pw, const char *value)
{
	static const char *const names[] = { "auto", "period", "samples" };
	for (int i = 0; i < 3; i++)
		if (!strcmp(value, names[i])) {
			pw->mode = i;
			return true;
		}
	return false;
}

/* A clock's periods are CPU time (pprof's sample type cpu: TACH's profiling mode 2), each
 * sample's own; the interval is the first period in µs, rounded, at least 1. */
static inline void tachi_perf_weights_clock(struct tachi_perf_weights *pw, struct tach_meta *m,
					    uint64_t period)
{
	pw->time_event = true;
	m->profiling_config = 2;
	pw->base_ns = period;
	m->sample_time = 1;
	m->interval_us = period < 1000 ? 1 : period / 1000 + (period % 1000 >= 500);
}

/* A counted event's value types (event outlives the reader's samples); with periods
 * unknown, the samples only, the event still named as the period's type. */
static inline void tachi_perf_weights_count(struct tachi_perf_weights *pw, struct tach_meta *m,
					    const char *event, bool periods, uint64_t period)
{
	pw->count_event = true;
	pw->vtypes[0] = (struct tach_value_type){ "samples", "count" };
	pw->vtypes[1] = (struct tach_value_type){ event, "count" };
	m->value_type_count = periods ? 2 : 1;
	m->value_types = pw->vtypes;
	m->weight_type = 0;
	m->default_type = periods ? 2 : 1;
	m->period_type = event;
	m->period_unit = "count";
	m->period = periods && period <= INT64_MAX ? (int64_t)period : 0;
	pw->ext = (struct tach_sample_ext){ .size = sizeof(pw->ext),
					    .value_count = m->value_type_count,
					    .values = pw->vals };
}

/* A sample's weight: its period (period mode; 1 without one), else 1: a perf sample is one
 * sample, a clock's time being its period (tachi_perf_time). */
static inline uint64_t tachi_perf_weight(const struct tachi_perf_weights *pw, bool has_period,
					 uint64_t period)
{
	if (pw->mode == TACHI_PERF_W_PERIOD)
		return has_period && period ? period : 1;
	return 1;
}

/* A sample's time in ns: a clock's period (the first one where a sample has none); 0 for
 * other events, whose periods are counts, not time. */
static inline uint64_t tachi_perf_time(const struct tachi_perf_weights *pw, bool has_period,
				       uint64_t period)
{
	if (!pw->time_event)
		return 0;
	return has_period && period ? period : pw->base_ns;
}

/* The values of a sample of weight w, for a counted event; NULL for others. */
static inline const struct tach_sample_ext *tachi_perf_values(struct tachi_perf_weights *pw,
							      uint64_t w, bool has_period,
							      uint64_t period)
{
	if (!pw->count_event)
		return NULL;
	pw->vals[0] = (int64_t)w;
	pw->vals[1] = has_period && period <= INT64_MAX ? (int64_t)period : 0;
	return &pw->ext;
}

#endif
