/* tach-decode: a profile of any format to collapsed stacks, the samples text form, or a summary. */
#include <inttypes.h>

#include "common/runner.h"

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
static void statistics(const struct tach_meta *m, FILE *out)
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

static int info(struct tc_run *run, struct tach_reader *r, FILE *out)
{
	const struct tach_sample *s;
	int rc;
	uint64_t n = 0;
	while ((rc = tc_next(run, r, &s)) == TACH_OK)
		n += s->weight;
	if (rc < 0)
		return tc_reader_failed(run, r);
	const struct tach_meta *m = tach_reader_meta(r);
	const struct tach_stats *st = tach_reader_stats(r);
	fprintf(out, "format_version: %" PRIu32 "\n", m->format_version);
	/* A TACH header always holds a version; other inputs say it only when they know it. */
	if (m->format_version || m->py_major)
		fprintf(out, "python_version: %u.%u.%u\n", m->py_major, m->py_minor,
			m->py_micro);
	if (m->layout) /* a TACH header's; other inputs have none */
		fprintf(out, "header_layout: %c\n", m->layout);
	fprintf(out, "byte_order: %s\n", m->big_endian ? "big" : "little");
	fprintf(out, "compression: %s\n", m->compression == 1 ? "zstd" : m->compression ? "unknown" : "none");
	fprintf(out, "start_time_us: %" PRIu64 "\n", m->start_time_us);
	fprintf(out, "sample_interval_us: %" PRIu64 "\n", m->interval_us);
	fprintf(out, "sample_count: %" PRIu64 "\n", m->sample_count);
	fprintf(out, "thread_count: %" PRIu32 "\n", m->thread_count);
	fprintf(out, "string_count: %" PRIu32 "\n", m->string_count);
	fprintf(out, "frame_count: %" PRIu32 "\n", m->frame_count);
	fprintf(out, "profiling_config: %" PRIu32 "\n", m->profiling_config);
	profiling_mode(m, out);
	fprintf(out, "string_table_offset: %" PRIu64 "\n", m->string_table_offset);
	fprintf(out, "frame_table_offset: %" PRIu64 "\n", m->frame_table_offset);
	fprintf(out, "file_size: %" PRIu64 "\n", m->file_size);
	statistics(m, out);
	fprintf(out, "repeat_records: %" PRIu64 "\n", st->repeat_records);
	fprintf(out, "repeat_samples: %" PRIu64 "\n", st->repeat_samples);
	fprintf(out, "full_records: %" PRIu64 "\n", st->full_records);
	fprintf(out, "suffix_records: %" PRIu64 "\n", st->suffix_records);
	fprintf(out, "pop_push_records: %" PRIu64 "\n", st->pop_push_records);
	fprintf(out, "total_records: %" PRIu64 "\n", st->total_records);
	fprintf(out, "samples_decoded: %" PRIu64 "\n", st->total_samples);
	fprintf(out, "samples_selected: %" PRIu64 "\n", n);
	return 0;
}

static const struct tc_opt opts[] = {
	{ "event", 0, "NAME", "r:event", NULL,
	  "perf script input: read the samples of event NAME (default: the first event)", NULL,
	  false },
	{ 0 },
};

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

int main(int argc, char **argv)
{
	static const struct tc_prog prog = {
		.name = "tach-decode",
		.summary = "Decode a profile to collapsed stacks, samples text or a summary.",
		.reader = "auto",
		.outputs = outputs,
		.opts = opts,
	};
	return tc_main(argc, argv, &prog);
}
