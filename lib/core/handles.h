/* Reader and writer handles (handles.c): what every format's ops are handed, the limits
 * and options they share, and how a format records failures on them. */
#ifndef TACHFMT_HANDLES_H
#define TACHFMT_HANDLES_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tachfmt.h"
#include "base/base.h"
#include "base/io.h"
#include "model/dict.h"

struct tachi_symcache;

struct tachi_format;
struct tachi_ahead;

struct tachi_limits {
	uint32_t max_depth;     /* frames per stack */
	uint64_t max_samples;   /* samples produced from one input */
	uint64_t max_input;     /* bytes a whole-input reader may hold */
	bool strict;
};

struct tach_reader {
	const struct tachi_format *fmt;
	struct tachi_err err;
	struct tachi_warner warn;
	struct tachi_limits lim;
	struct tachi_in in;
	struct tach_dict dict;
	struct tach_meta meta;
	struct tach_file_info file; /* meta.file, where the reader sets it */
	struct tach_stats stats;
	struct tach_sample sample;
	void *state;
	bool opened;
	bool detected;          /* the format was chosen by detection (detect.c), not named */
	/* the last sample's extras (values.c), NULL when none; set by the format's next */
	const struct tach_sample_ext *ext;
	bool dict_grows;        /* next interns strings (labels) after all: no reading thread */
	/* next has given a sample (handles.c), or found one it holds back (a read-ahead) */
	bool any_sample;
	/* JSON readers (json_read.h): whether a lone surrogate escape is taken, and where the
	 * first one was (offset + 1; 0 none) */
	bool json_lone_ok;
	uint64_t json_lone_at;
	/* binaries and kernel symbols shared with other readers (tach_reader_share_symbols),
	 * NULL: the reader's own */
	struct tachi_symcache *symcache;
};

struct tach_writer {
	const struct tachi_format *fmt;
	struct tachi_err err;
	struct tachi_warner warn;
	struct tachi_out out;
	struct tach_meta meta;
	char *program;          /* meta.program's own copy */
	struct tach_file_info file; /* meta.file's own copy */
	void *state;
	/* The dict of the first sample put: every later one must come from it (the writers
	 * keep its ids), which is checked here once for all of them. */
	const struct tach_dict *dict;
	bool opened, has_meta, closed;
	/* Samples queued ahead (ahead.c), once its trie is far past the caches; NULL before. */
	struct tachi_ahead *ahead;
	uint32_t ahead_tick;    /* puts until the trie is looked at again (handles.c) */
	uint64_t ahead_hash;    /* during a queued sample's put: its fetch's hash */
	void *values_own;       /* meta's value types and their strings, copied (values.c) */
	bool warned_labels;     /* dropped labels were warned about */
	/* ns a unit of weight stands for, where the caller's meta gave an interval but no
	 * sample_time (a reader or caller from before time_ns): every put sample's time_ns is
	 * then weight × this (handles.c); 0: the samples' own time_ns is taken as it is. */
	uint64_t time_per_weight;
};

/* Helpers for format modules. */
/* The longest sample interval a reader takes: what a signed 64-bit count of nanoseconds
 * holds (pprof, perf, Gecko), about 292 years. A larger one is refused where it is read,
 * with its line or offset, not by a writer that cannot name the input. */
#define TACHI_MAX_INTERVAL_US ((uint64_t)INT64_MAX / 1000)

#define RFAIL(r, code, kind, pos, ...) tachi_fail(&(r)->err, (code), (kind), (pos), __VA_ARGS__)
#define WFAIL(w, code, ...) tachi_fail(&(w)->err, (code), TACH_POS_NONE, 0, __VA_ARGS__)
/* A recoverable fault in the input at byte offset off: a warning, or the error under the
 * reader's strict option. Returns TACH_OK or the error code. */
int tachi_soft_fail(struct tach_reader *r, uint64_t off, const char *fmt, ...) TACHI_PRINTF(3, 4);
/* Records a write failure of w->out on w and returns TACH_E_IO. */
int tachi_writer_io(struct tach_writer *w);
/* A writer's gzip "level" option, 1 to 9, into *level; a usage error otherwise. */
int tachi_gzip_level(struct tach_writer *w, const char *value, int *level);
/* A writer's gzip "threads" option (compression workers, 0 to TACHI_GZ_MAX_WORKERS). */
int tachi_gzip_threads(struct tach_writer *w, const char *value, unsigned *n);
/* The writer's failure for a tachi_gz code. */
int tachi_gz_failed(struct tach_writer *w, int code);
/* A reader's input (io.h), failures on the reader. */
static inline int tachi_in_load_whole(struct tach_reader *r)
{
	return tachi_in_load(&r->in, r->lim.max_input, &r->err);
}
/* The input as the reader takes it at open (whole, mapped or streaming). */
struct tachi_reader_ops;
int tachi_in_for_reader(struct tach_reader *r, const struct tachi_reader_ops *ops);
int tachi_in_no_sample(struct tach_reader *r);
/* Streaming line input: the next line without its LF (a CR before it is kept), or TACH_EOF.
 * A stream that has given no sample in the input limit's worth of bytes is refused here, as
 * a whole input that size is (tachi_in_no_sample): no reader that reads lines through this
 * can read an endless stream of what is not its format forever. */
static inline int tachi_in_line(struct tach_reader *r, const char **line, size_t *len)
{
	/* A whole line already in the stream's buffer, inline (a call a line is a tenth of a
	 * line reader's time); the rest as tachi_in_next_line does it. */
	struct tachi_in *in = &r->in;
	const uint8_t *nl = NULL;
	int rc = TACH_OK;
	if (!in->whole && in->end > in->pos)
		nl = memchr(in->buf + in->pos, '\n', in->end - in->pos);
	if (nl) {
		size_t start = in->pos;
		in->pos = (size_t)(nl - in->buf) + 1;
		in->line++;
		in->last_line_off = in->base + start;
		*line = (const char *)in->buf + start;
		*len = (size_t)(nl - (in->buf + start));
	} else {
		rc = tachi_in_next_line(in, &r->err, line, len);
	}
	if (TACHI_UNLIKELY(!r->any_sample) && !rc && tachi_in_offset(in) >= r->lim.max_input)
		return tachi_in_no_sample(r);
	return rc;
}
/* Byte offset of the start of the last line returned. */
static inline uint64_t tachi_in_line_offset(const struct tach_reader *r)
{
	return tachi_in_offset(&r->in);
}

#endif
