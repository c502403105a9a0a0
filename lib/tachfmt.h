/* libtachfmt: convert sampling-profiler data between formats.
 *
 * Ownership, stated once:
 *   - Every handle (reader, writer, dict) is created by a *_new call and released by the
 *     matching *_free call; free functions accept NULL.
 *   - Pointers returned by the library (samples, strings, metadata, messages) point into the
 *     handle that returned them. A sample is valid until the next tach_reader_next on the same
 *     reader; strings, frames and metadata until the handle is freed.
 *   - Pointers passed in are borrowed for the duration of the call only, except the memory
 *     given to tach_reader_open_mem, which must stay valid until the reader is freed.
 *
 * Errors: every call that can fail returns an int status: TACH_OK (0), TACH_EOF (1, end of
 * samples) or a negative TACH_E_* code. A failed handle keeps a message and the position in the
 * input where the problem is, and stays failed. The library never prints, exits or aborts on
 * input; warnings go to a callback the caller installs.
 */
#ifndef TACHFMT_H
#define TACHFMT_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#if defined(TACHFMT_BUILDING) && defined(__GNUC__)
#define TACH_API __attribute__((visibility("default")))
#else
#define TACH_API
#endif

#define TACH_VERSION_MAJOR 0
#define TACH_VERSION_MINOR 1
#define TACH_VERSION_PATCH 0

enum {
	TACH_OK = 0,
	TACH_EOF = 1,
	TACH_E_NOMEM = -1,   /* allocation failed */
	TACH_E_IO = -2,      /* read or write failed */
	TACH_E_FORMAT = -3,  /* the input is not valid for its format */
	TACH_E_LIMIT = -4,   /* the input exceeds a configured limit */
	TACH_E_USAGE = -5,   /* bad option, bad call order, unknown format */
	TACH_E_UNSUPPORTED = -6, /* valid input this build cannot handle */
};

/* Where an error or warning is in the input. */
enum {
	TACH_POS_NONE = 0,
	TACH_POS_OFFSET = 1, /* byte offset in the input file */
	TACH_POS_LINE = 2,   /* line number (text formats), 1-based */
	TACH_POS_RECORD = 3, /* record number inside compressed data, 0-based */
};

/* Thread status flags (TACH's status byte). */
enum {
	TACH_STATUS_HAS_GIL = 1,
	TACH_STATUS_ON_CPU = 2,
	TACH_STATUS_UNKNOWN = 4,
	TACH_STATUS_GIL_REQUESTED = 8,
	TACH_STATUS_HAS_EXCEPTION = 16,
	TACH_STATUS_MAIN_THREAD = 32,
	/* Not a thread state: the sample belongs to the baseline ("before") side of a
	 * differential profile (the collapsed reader's diff=both), not to the profile. */
	TACH_STATUS_BASELINE = 64,
};

#define TACH_NO_LINE (-1)
#define TACH_NO_OPCODE 255

/* A frame: TACH's seven fields. file and func are string ids in the same dict. */
struct tach_frame {
	uint32_t file;
	uint32_t func;
	int32_t line;     /* -1: no location */
	int32_t end_line;
	int32_t col;      /* -1: unknown */
	int32_t end_col;
	uint8_t opcode;   /* 255: none */
};

/* Native code (optional, kept beside a frame in the dict; TACH has no field for it).
 * A mapping is a range of the profiled process's address space loaded from one file. */
#define TACH_NO_STRING UINT32_MAX
struct tach_mapping {
	uint64_t start, limit;   /* [start, limit) in the process */
	uint64_t offset;         /* file offset that start was loaded from */
	uint32_t file;           /* string id: the file as the profile names it */
	uint32_t build_id;       /* string id (hex), or TACH_NO_STRING */
	uint32_t flags;          /* TACH_MAPPING_* */
};
enum {
	TACH_MAPPING_HAS_FUNCTIONS = 1,     /* its frames carry symbol names */
	TACH_MAPPING_HAS_FILENAMES = 2,
	TACH_MAPPING_HAS_LINE_NUMBERS = 4,
	TACH_MAPPING_HAS_INLINE_FRAMES = 8,
};
/* Where a native frame's code is. All zero means none (a frame without it). */
struct tach_frame_native {
	uint64_t address;        /* in the profiled process; 0: unknown */
	uint32_t mapping;        /* 1-based id from tach_dict_intern_mapping; 0: none */
	/* 1: this frame was inlined into the next frame outward, which has the same address:
	 * the run of frames up to the first one with 0 is one machine location. */
	uint8_t inlined;
};

/* One sample. Frames are ids in the reader's dict, innermost first. */
struct tach_sample {
	uint64_t thread_id;
	/* The sample's own time (µs of the producer's clock), never a grid rebuilt from an
	 * interval. A record with weight N > 1 stands for N samples of one stack; a TACH repeat
	 * record's come at timestamp_us, + interval_us, ...; other readers give N > 1 only for
	 * samples the input itself aggregates (a folded line, a pprof Sample). */
	uint64_t timestamp_us;
	/* How many samples the record stands for: >= 1 (0 only from a pprof reader with option
	 * zero-weight: a sample that carries values of other types in its tach_sample_ext, which
	 * only writers that keep values take; tach_writer_put leaves it out elsewhere). Where
	 * meta.weight_unit is set (a pprof heap profile's bytes), the weight is that value
	 * instead, as the reader's sample-index chose it. */
	uint64_t weight;
	uint32_t interp_id;
	uint8_t status;
	uint32_t depth;
	/* The outermost same_outer frames equal those of the previous sample of the same
	 * (thread_id, interp_id); a hint for aggregating writers, 0 when unknown. */
	uint32_t same_outer;
	const uint32_t *frames;
	/* The time the record stands for, in ns, where meta.sample_time is set: a V8 or Chrome
	 * sample's time to the next sample of its thread (the last's up to the profile's end),
	 * a perf clock event's period, austin's µs, a pprof time value, weight × interval for
	 * TACH and gperftools. A writer that shows time shows this, never weight × interval. */
	uint64_t time_ns;
};

/* A kind of value the samples carry (pprof's ValueType), e.g. "alloc_space" in "bytes". */
struct tach_value_type {
	const char *type, *unit;
};

/* What an input file's own header, footer and statistics block said, beside the profile
 * they hold: TACH's fields (and the byte order of a gperftools file), and what a TACH writer
 * given them gives back byte for byte (record_order, the TACHSTAT block). Reached through
 * meta.file; set size first when passing one in (TACH_FILE_INFO_INIT). */
struct tach_file_info {
	size_t size;
	uint32_t format_version;
	uint64_t sample_count;
	uint32_t thread_count;
	uint32_t string_count;
	uint32_t frame_count;
	uint32_t compression;       /* 0 none, 1 zstd */
	char layout;                /* 'A' or 'B' */
	uint8_t big_endian;
	uint64_t string_table_offset, frame_table_offset, file_size;
	/* 1: the samples come in the order of a TACH file's records (a held run of repeats
	 * where it was written, not where it was sampled), as the TACH reader gives them and
	 * the samples text says with "@order records". A TACH writer given this writes each
	 * run of repeats where it comes, so that the file's records come back as they were;
	 * 0: sampling order, where the writer holds repeats back as CPython's does. */
	uint8_t record_order;
	/* TACHSTAT block present (its form in stats_size, below). The error and missed rates
	 * (percent) are known only where stats_flags has TACH_STATS_ERROR_RATE or
	 * TACH_STATS_MISSED; otherwise they are whatever the block held there (0 in the
	 * 32-byte form, which has no such fields). */
	uint8_t has_stats;
	double stats_duration_s, stats_sample_rate, stats_error_rate, stats_missed;
	/* The TACHSTAT block as the file holds it, so that a TACH writer gives it back byte
	 * for byte: its size (56, or 32 for the original form with duration and rate only; 0
	 * with has_stats set: 56), version, present flags and reserved word. */
	uint32_t stats_size, stats_version, stats_flags, stats_reserved;
};
/* stats_flags: which of the TACHSTAT block's optional values are known. */
#define TACH_STATS_ERROR_RATE 1u
#define TACH_STATS_MISSED 2u
#define TACH_FILE_INFO_INIT { .size = sizeof(struct tach_file_info), .layout = 'B' }

/* Profile-wide values: what any profile is, whatever its format. Library-owned when
 * returned; when passed in, set size first (TACH_META_INIT) so the struct can grow. */
struct tach_meta {
	size_t size;
	uint64_t start_time_us;
	uint64_t interval_us;       /* 0: unknown */
	/* 1: every sample's time_ns is the time it stands for; 0: the samples carry no time
	 * (counts of an unknown interval), and writers that show time show counts. */
	uint8_t sample_time;
	uint8_t py_major, py_minor, py_micro;
	uint32_t profiling_config;  /* TACH header word, the profiling mode; 0: unknown */
	const char *source_format;  /* name of the format read, e.g. "tach" */
	/* The profiled program's path, as its profile names it (gperftools: the first
	 * executable mapping); NULL when unknown. A writer copies it at set_meta. */
	const char *program;
	int64_t duration_ns;        /* the time profiled; 0: unknown */
	int64_t start_time_ns;      /* start_time_us to the nanosecond; 0: unknown */
	/* ---- What a sample's values are (pprof's sample types, period, duration): NULL/0
	 * when the input has no such table. A writer copies the strings at set_meta. ---- */
	uint32_t value_type_count;
	const struct tach_value_type *value_types;
	uint32_t weight_type;       /* the type whose values give the weights */
	uint32_t default_type;      /* 1 + the index of the type a viewer shows first; 0: none */
	/* NULL: a weight counts samples of interval_us each (the weight type is a time, or
	 * counts samples); else a weight is the weight type's value in this unit ("bytes",
	 * "count", "nanoseconds" without a time period), not a number of samples. */
	const char *weight_unit;
	const char *period_type, *period_unit; /* NULL: none */
	int64_t period;
	/* What the input file itself said (a reader's, valid as the meta is), NULL when its
	 * format has nothing of the kind; a writer copies it at set_meta. */
	const struct tach_file_info *file;
	/* What the input holds by kind of record, where its format has kinds: one "NAME COUNT"
	 * line each, most first (a JFR recording's event types and how many events of each);
	 * NULL when the format has none. Complete after TACH_EOF; writers do not keep it. */
	const char *record_kinds;
};
/* The Python version is unknown (0.0.0) until the caller sets it: a profile is not
 * CPython's unless its input says so. The TACH writer still writes 3.15.0 then. */
#define TACH_META_INIT { .size = sizeof(struct tach_meta) }

/* A sample's label (pprof): a key with a string, or a number with an optional unit.
 * Strings are ids in the sample's dict. */
struct tach_label {
	uint32_t key;
	uint32_t str;               /* TACH_NO_STRING: a numeric label */
	int64_t num;
	uint32_t unit;              /* numeric labels: TACH_NO_STRING when none */
};
/* What a sample carries beyond struct tach_sample, where the input has it: all its values
 * (one per meta.value_types, for the whole weight) and its labels, all of them, including
 * those the sample's fields hold too ("thread id", ...). Set size first when passing one in
 * (TACH_SAMPLE_EXT_INIT). Valid as the sample is. */
struct tach_sample_ext {
	size_t size;
	uint32_t value_count;       /* 0: no values (a writer derives them from the weight) */
	const int64_t *values;
	uint32_t label_count;
	const struct tach_label *labels;
};
#define TACH_SAMPLE_EXT_INIT { .size = sizeof(struct tach_sample_ext) }

/* Record statistics a reader gathered (TACH's record encodings; other readers count
 * records as "full"). Valid after TACH_EOF. */
struct tach_stats {
	uint64_t repeat_records, repeat_samples;
	uint64_t full_records, suffix_records, pop_push_records;
	uint64_t total_records, total_samples;
};

struct tach_dict;
struct tach_reader;
struct tach_writer;

typedef void (*tach_warn_fn)(void *ctx, const char *msg, int pos_kind, uint64_t pos);

/* Library version "X.Y.Z". */
TACH_API const char *tach_version(void);
/* Message for a status code. */
TACH_API const char *tach_strerror(int code);

/* The profiling mode a TACH profiling_config word names (its low byte less one, as
 * CPython's profiling.sampling numbers them): "wall", "cpu", "gil", "all" (GIL and CPU) or
 * "exception"; NULL when the word says nothing (0) or names no mode this library knows. */
TACH_API const char *tach_profiling_mode(uint32_t profiling_config);

/* Format names, in table order; NULL past the end. can_read/can_write tell directions. */
TACH_API const char *tach_format_name(size_t index, int *can_read, int *can_write);

/* ---- dictionary: strings and frames, interned in first-seen order ---- */
TACH_API struct tach_dict *tach_dict_new(void);
TACH_API void tach_dict_free(struct tach_dict *d);
TACH_API uint32_t tach_dict_string_count(const struct tach_dict *d);
TACH_API uint32_t tach_dict_frame_count(const struct tach_dict *d);
/* Returns NULL when id is out of range. Strings are NUL-terminated byte strings that may
 * also contain NUL; len gets the true length. */
TACH_API const char *tach_dict_string(const struct tach_dict *d, uint32_t id, size_t *len);
TACH_API const struct tach_frame *tach_dict_frame(const struct tach_dict *d, uint32_t id);
TACH_API int tach_dict_intern_string(struct tach_dict *d, const char *s, size_t len, uint32_t *id);
TACH_API int tach_dict_intern_frame(struct tach_dict *d, const struct tach_frame *f, uint32_t *id);
/* Native frames: the same frame fields at another address (or in another mapping) is
 * another frame. n may be NULL or all zero: then this is tach_dict_intern_frame. */
TACH_API int tach_dict_intern_frame_native(struct tach_dict *d, const struct tach_frame *f,
					   const struct tach_frame_native *n, uint32_t *id);
/* NULL when the frame has no native data (or id is out of range). */
TACH_API const struct tach_frame_native *tach_dict_frame_native(const struct tach_dict *d,
								uint32_t id);
/* Mappings are numbered from 1 in first-seen order; equal ones are interned once. file and
 * build_id must be string ids of the same dict. */
TACH_API uint32_t tach_dict_mapping_count(const struct tach_dict *d);
TACH_API const struct tach_mapping *tach_dict_mapping(const struct tach_dict *d, uint32_t id);
TACH_API int tach_dict_intern_mapping(struct tach_dict *d, const struct tach_mapping *m,
				      uint32_t *id);

/* ---- readers: pull one sample at a time ---- */
/* format is a name from tach_format_name, or "auto": the reader then detects the format
 * from the first bytes of the input when it is opened (see tach_reader_format). */
TACH_API struct tach_reader *tach_reader_new(const char *format);
/* The name of the format the reader reads: for an "auto" reader, the one detected at open
 * (NULL before, or when nothing matched). */
TACH_API const char *tach_reader_format(const struct tach_reader *r);
TACH_API void tach_reader_free(struct tach_reader *r);
/* Options are format-specific key/value strings; common ones: "max-depth", "strict".
 * Unknown keys give TACH_E_USAGE. Call before opening. */
TACH_API int tach_reader_set_option(struct tach_reader *r, const char *key, const char *value);
TACH_API void tach_reader_set_warn(struct tach_reader *r, tach_warn_fn fn, void *ctx);
/* Binaries (their symbols and DWARF) and the kernel's symbols, loaded once for every
 * reader given the same tach_symbols: profiles of one machine read together (tach-merge's
 * inputs) then cost one copy of what they share, not one each. A binary is let go of when
 * the last reader using it is freed (the perf.data reader: at its end of input). The
 * handle and its readers are used from one thread at a time; free it at any point (the
 * readers keep what they use). tach_reader_share_symbols is called before opening; it
 * returns TACH_E_USAGE after. */
struct tach_symbols;
TACH_API struct tach_symbols *tach_symbols_new(void);
TACH_API void tach_symbols_free(struct tach_symbols *s);
TACH_API int tach_reader_share_symbols(struct tach_reader *r, struct tach_symbols *s);
/* The reader does not close fd. */
TACH_API int tach_reader_open_fd(struct tach_reader *r, int fd);
TACH_API int tach_reader_open_mem(struct tach_reader *r, const void *data, size_t len);
TACH_API int tach_reader_next(struct tach_reader *r, const struct tach_sample **sample);
TACH_API const struct tach_dict *tach_reader_dict(const struct tach_reader *r);
/* The extras of the sample the last tach_reader_next returned; NULL when it has none. */
TACH_API const struct tach_sample_ext *tach_reader_sample_ext(const struct tach_reader *r);
/* 1 when the open reader's dict already holds every frame its samples can use (TACH reads
 * its tables at open), so another thread may read the dict while this one reads samples;
 * 0 when it grows as samples are read, or the reader is not open. */
TACH_API int tach_reader_dict_complete(const struct tach_reader *r);
TACH_API const struct tach_meta *tach_reader_meta(const struct tach_reader *r);
TACH_API const struct tach_stats *tach_reader_stats(const struct tach_reader *r);
/* The message of the first failure (NULL if none) and where it is. */
TACH_API const char *tach_reader_error(const struct tach_reader *r, int *pos_kind, uint64_t *pos);

/* ---- writers: push samples, then close ---- */
TACH_API struct tach_writer *tach_writer_new(const char *format);
TACH_API void tach_writer_free(struct tach_writer *w);
TACH_API int tach_writer_set_option(struct tach_writer *w, const char *key, const char *value);
TACH_API void tach_writer_set_warn(struct tach_writer *w, tach_warn_fn fn, void *ctx);
/* The writer does not close fd. A seekable fd may be written out of order. */
TACH_API int tach_writer_open_fd(struct tach_writer *w, int fd);
/* Must be called once, before the first put. */
TACH_API int tach_writer_set_meta(struct tach_writer *w, const struct tach_meta *m);
/* The frames of s are ids in d, which may grow between calls (ids keep their meaning) and
 * must stay valid until close. An aggregating writer with very many distinct stacks takes
 * samples a few calls late (see libtachfmt(3)): a later put, or close, may then return the
 * error an earlier sample caused. */
TACH_API int tach_writer_put(struct tach_writer *w, const struct tach_dict *d,
			     const struct tach_sample *s);
/* tach_writer_put with the sample's extras (NULL: none, as tach_writer_put). A writer with
 * no place for labels drops them with one warning; values other than the weight's are
 * kept only by writers that write several value types (pprof). */
TACH_API int tach_writer_put_ext(struct tach_writer *w, const struct tach_dict *d,
				 const struct tach_sample *s, const struct tach_sample_ext *ext);
/* Finishes the output and flushes it; the fd stays open. */
TACH_API int tach_writer_close(struct tach_writer *w);
TACH_API const char *tach_writer_error(const struct tach_writer *w);

#ifdef __cplusplus
}
#endif
#endif
