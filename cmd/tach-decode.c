/* tach-decode: a profile of any format to collapsed stacks, the samples text form, or a summary. */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "common/runner.h"
#include "programs.h"

/* The mode named, and the word's bits above it raw: where CPython puts its capture-feature
 * bits in the word (its features-known flag and shift) is not established (tachfmt(5)). */
static void profiling_mode(const struct tach_meta *m, FILE *out)
{
	if (!m->profiling_config)
		return;
	const char *mode = tach_profiling_mode(m->profiling_config);
	if (mode)
		fprintf(out, "profiling_mode: %s\n", mode);
	else
		fprintf(out, "profiling_mode: unknown (%" PRIu32 ")\n", m->profiling_config & 0xff);
	if (m->profiling_config >> 8)
		fprintf(out, "profiling_feature_bits: 0x%06" PRIx32 "\n", m->profiling_config >> 8);
}

/* The TACHSTAT block: the error and missed rates only where its flags say they are known
 * (the 32-byte form has neither). */
static void statistics(const struct tach_file_info *m, FILE *out)
{
	if (!m->has_stats)
		return;
	fprintf(out, "stats_block: %" PRIu32 " bytes, version %" PRIu32 "\n",
		m->stats_size ? m->stats_size : 56, m->stats_size ? m->stats_version : 1);
	fprintf(out, "stats_duration_s: %.17g\n", m->stats_duration_s);
	fprintf(out, "stats_sample_rate: %.17g\n", m->stats_sample_rate);
	if (m->stats_size != 32 && (m->stats_flags & TACH_STATS_ERROR_RATE))
		fprintf(out, "stats_error_rate: %.17g\n", m->stats_error_rate);
	if (m->stats_size != 32 && (m->stats_flags & TACH_STATS_MISSED))
		fprintf(out, "stats_missed_samples: %.17g\n", m->stats_missed);
}

/* What --format info counts over the samples kept: records, their weights, the threads
 * (a small open-addressing set: cost follows threads, not samples) and the time they span. */
struct tally {
	uint64_t records, weight, first_us, end_us;
	unsigned __int128 time_ns; /* the samples' own time, where they carry one */
	uint64_t *tids;          /* the thread ids but 0; 0 an empty slot */
	size_t ntids, cap;
	bool any, zero, nomem;   /* zero: thread 0 seen */
};

static void add_thread(struct tally *t, uint64_t tid)
{
	if (!tid) {
		t->ntids += !t->zero;
		t->zero = true;
		return;
	}
	if (t->nomem)
		return;
	if (2 * (t->ntids + 1) > t->cap) {
		size_t cap = t->cap ? 2 * t->cap : 64;
		uint64_t *n = calloc(cap, sizeof(*n));
		if (!n) {
			t->nomem = true;
			return;
		}
		for (size_t i = 0; i < t->cap; i++)
			for (size_t k = t->tids[i] * 0x9E3779B97F4A7C15ull >> 7; t->tids[i]; k++)
				if (!n[k & (cap - 1)]) {
					n[k & (cap - 1)] = t->tids[i];
					break;
				}
		free(t->tids);
		t->tids = n;
		t->cap = cap;
	}
	for (size_t k = tid * 0x9E3779B97F4A7C15ull >> 7;; k++) {
		uint64_t *slot = &t->tids[k & (t->cap - 1)];
		if (*slot == tid)
			return;
		if (!*slot) {
			*slot = tid;
			t->ntids++;
			return;
		}
	}
}

/* A sample ends where the time it stands for does (its time_ns where samples carry one,
 * else its weight's intervals). */
static void tally(struct tally *t, const struct tach_sample *s, const struct tach_meta *m)
{
	uint64_t end = s->timestamp_us, span;
	bool ok = m->sample_time ? (span = s->time_ns / 1000, true)
				 : !__builtin_mul_overflow(s->weight, m->interval_us, &span);
	if (ok)
		end = __builtin_add_overflow(end, span, &end) ? UINT64_MAX : end;
	if (!t->any || s->timestamp_us < t->first_us)
		t->first_us = s->timestamp_us;
	if (!t->any || end > t->end_us)
		t->end_us = end;
	t->any = true;
	t->records++;
	t->weight += s->weight;
	t->time_ns += s->time_ns;
	add_thread(t, s->thread_id);
}

/* TACH's own header, footer and statistics block. */
static void tach_header(const struct tach_meta *m, FILE *out)
{
	static const struct tach_file_info none = TACH_FILE_INFO_INIT;
	const struct tach_file_info *f = m->file ? m->file : &none;
	fprintf(out, "format_version: %" PRIu32 "\n", f->format_version);
	fprintf(out, "python_version: %u.%u.%u\n", m->py_major, m->py_minor, m->py_micro);
	fprintf(out, "header_layout: %c\n", f->layout);
	fprintf(out, "byte_order: %s\n", f->big_endian ? "big" : "little");
	fprintf(out, "compression: %s\n", f->compression == 1 ? "zstd" : f->compression ? "unknown" : "none");
	fprintf(out, "start_time_us: %" PRIu64 "\n", m->start_time_us);
	fprintf(out, "sample_interval_us: %" PRIu64 "\n", m->interval_us);
	fprintf(out, "sample_count: %" PRIu64 "\n", f->sample_count);
	fprintf(out, "thread_count: %" PRIu32 "\n", f->thread_count);
	fprintf(out, "string_count: %" PRIu32 "\n", f->string_count);
	fprintf(out, "frame_count: %" PRIu32 "\n", f->frame_count);
	fprintf(out, "profiling_config: %" PRIu32 "\n", m->profiling_config);
	profiling_mode(m, out);
	fprintf(out, "string_table_offset: %" PRIu64 "\n", f->string_table_offset);
	fprintf(out, "frame_table_offset: %" PRIu64 "\n", f->frame_table_offset);
	fprintf(out, "file_size: %" PRIu64 "\n", f->file_size);
	statistics(f, out);
}

/* Another format's facts: what its meta holds, each only when the input gave it. */
static void other_header(const struct tach_meta *m, FILE *out)
{
	if (m->py_major)
		fprintf(out, "python_version: %u.%u.%u\n", m->py_major, m->py_minor, m->py_micro);
	if (m->program)
		fprintf(out, "program: %s\n", m->program);
	fprintf(out, "start_time_us: %" PRIu64 "\n", m->start_time_us);
	fprintf(out, "sample_interval_us: %" PRIu64 "\n", m->interval_us);
	for (uint32_t i = 0; m->value_types && i < m->value_type_count; i++)
		fprintf(out, "value_type: %s/%s%s%s\n", m->value_types[i].type,
			m->value_types[i].unit, i == m->weight_type ? " (the weights)" : "",
			m->default_type == i + 1 ? " (default)" : "");
	if (m->weight_unit)
		fprintf(out, "weight_unit: %s\n", m->weight_unit);
	if (m->period_type)
		fprintf(out, "period: %" PRId64 " %s/%s\n", m->period, m->period_type,
			m->period_unit ? m->period_unit : "");
	if (m->duration_ns)
		fprintf(out, "duration_ns: %" PRId64 "\n", m->duration_ns);
	if (m->start_time_ns)
		fprintf(out, "start_time_ns: %" PRId64 "\n", m->start_time_ns);
	for (const char *k = m->record_kinds, *e; k && *k; k = e + (*e == '\n')) {
		e = k + strcspn(k, "\n");
		fprintf(out, "record_kind: %.*s\n", (int)(e - k), k);
	}
}

/* The samples kept: how many, what they weigh, their threads and the time they span. */
static void counts(const struct tally *t, const struct tach_meta *m, FILE *out)
{
	fprintf(out, "samples: %" PRIu64 "\n", t->records);
	fprintf(out, "weight_total: %" PRIu64 "\n", t->weight);
	/* the time the samples stand for: their own where they carry one, never guessed */
	if (m->sample_time)
		fprintf(out, "weight_total_us: %" PRIu64 "\n",
			t->time_ns / 1000 > UINT64_MAX ? UINT64_MAX : (uint64_t)(t->time_ns / 1000));
	else if (!m->weight_unit && m->interval_us)
		fprintf(out, "weight_total_us: %" PRIu64 "\n", t->weight * m->interval_us);
	if (!t->nomem) /* else too many to count in memory */
		fprintf(out, "threads: %zu\n", t->ntids);
	if (t->any) {
		fprintf(out, "first_timestamp_us: %" PRIu64 "\n", t->first_us);
		fprintf(out, "end_timestamp_us: %" PRIu64 "\n", t->end_us);
		fprintf(out, "time_span_us: %" PRIu64 "\n", t->end_us - t->first_us);
	}
}

static int info(struct tc_run *run, struct tach_reader *r, FILE *out)
{
	const struct tach_sample *s;
	struct tally t = { 0 };
	int rc;
	while ((rc = tc_next(run, r, &s)) == TACH_OK)
		tally(&t, s, tach_reader_meta(r));
	free(t.tids);
	if (rc < 0)
		return tc_reader_failed(run, r);
	const struct tach_meta *m = tach_reader_meta(r);
	const struct tach_stats *st = tach_reader_stats(r);
	bool tach = m->source_format && !strcmp(m->source_format, "tach");
	fprintf(out, "format: %s\n", m->source_format ? m->source_format : "unknown");
	if (tach) {
		tach_header(m, out);
		fprintf(out, "repeat_records: %" PRIu64 "\n", st->repeat_records);
		fprintf(out, "repeat_samples: %" PRIu64 "\n", st->repeat_samples);
		fprintf(out, "full_records: %" PRIu64 "\n", st->full_records);
		fprintf(out, "suffix_records: %" PRIu64 "\n", st->suffix_records);
		fprintf(out, "pop_push_records: %" PRIu64 "\n", st->pop_push_records);
		fprintf(out, "total_records: %" PRIu64 "\n", st->total_records);
	} else {
		other_header(m, out);
		counts(&t, m, out);
	}
	fprintf(out, "samples_decoded: %" PRIu64 "\n", st->total_samples);
	fprintf(out, "samples_selected: %" PRIu64 "\n", t.weight);
	return 0;
}

static const struct tc_opt samples_opts[] = {
	TC_MAX_SAMPLES_OPT,
	{ 0 },
};

static const struct tc_output outputs[] = {
	{ "collapsed", "collapsed", false, NULL, "folded stacks for flamegraph.pl", tc_collapsed_opts, 0 },
	{ "samples", "samples", false, NULL, "every sample, lossless text", samples_opts, 0 },
	{ "info", NULL, false, info, "header, counts and record statistics", NULL, 0 },
	{ 0 },
};

const struct tc_prog tc_prog_tach_decode = {
	.name = "tach-decode",
	.summary = "Decode a profile to collapsed stacks, samples text or a summary.",
	.reader = "auto",
	.outputs = outputs,
};
