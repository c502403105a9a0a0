/* What the pprof format's files share: the table row (pprof.c) takes its reader's and
 * writer's ops from here, and all of them take profile.proto's field numbers (google/pprof,
 * proto/profile.proto; package perftools.profiles), named once, by message. */
#ifndef TACHFMT_FMT_PPROF_H
#define TACHFMT_FMT_PPROF_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_pprof_reader_ops;
extern const struct tachi_writer_ops tachi_pprof_writer_ops;

/* Profile, the file's one message. */
enum {
	PROFILE_SAMPLE_TYPE = 1,          /* ValueType, repeated */
	PROFILE_SAMPLE = 2,               /* Sample, repeated */
	PROFILE_MAPPING = 3,              /* Mapping, repeated */
	PROFILE_LOCATION = 4,             /* Location, repeated */
	PROFILE_FUNCTION = 5,             /* Function, repeated */
	PROFILE_STRING_TABLE = 6,         /* string, repeated; [0] is "" */
	PROFILE_DROP_FRAMES = 7,          /* int64, a string index */
	PROFILE_KEEP_FRAMES = 8,          /* int64, a string index */
	PROFILE_TIME_NANOS = 9,           /* int64 */
	PROFILE_DURATION_NANOS = 10,      /* int64 */
	PROFILE_PERIOD_TYPE = 11,         /* ValueType */
	PROFILE_PERIOD = 12,              /* int64 */
	PROFILE_COMMENT = 13,             /* int64, repeated: string indices */
	PROFILE_DEFAULT_SAMPLE_TYPE = 14, /* int64, a string index */
	PROFILE_LAST = PROFILE_DEFAULT_SAMPLE_TYPE,
};

/* ValueType: int64 string indices. */
enum { VALUE_TYPE_TYPE = 1, VALUE_TYPE_UNIT = 2 };

/* Sample: uint64 location ids (leaf first) and int64 values, repeated; Label, repeated. */
enum { SAMPLE_LOCATION_ID = 1, SAMPLE_VALUE = 2, SAMPLE_LABEL = 3 };

/* Label: int64 each; key, str and num_unit are string indices. */
enum { LABEL_KEY = 1, LABEL_STR = 2, LABEL_NUM = 3, LABEL_NUM_UNIT = 4 };

/* Mapping: uint64 id, range and file offset; int64 string indices; bools. */
enum {
	MAPPING_ID = 1, MAPPING_MEMORY_START = 2, MAPPING_MEMORY_LIMIT = 3,
	MAPPING_FILE_OFFSET = 4, MAPPING_FILENAME = 5, MAPPING_BUILD_ID = 6,
	MAPPING_HAS_FUNCTIONS = 7, MAPPING_HAS_FILENAMES = 8, MAPPING_HAS_LINE_NUMBERS = 9,
	MAPPING_HAS_INLINE_FRAMES = 10,
};

/* Location: uint64 id, mapping id and address; Line, repeated (innermost first); bool. */
enum {
	LOCATION_ID = 1, LOCATION_MAPPING_ID = 2, LOCATION_ADDRESS = 3, LOCATION_LINE = 4,
	LOCATION_IS_FOLDED = 5,
};

/* Line: uint64 function id; int64 line and column. */
enum { LINE_FUNCTION_ID = 1, LINE_LINE = 2, LINE_COLUMN = 3 };

/* Function: uint64 id; int64 string indices and start line. */
enum {
	FUNCTION_ID = 1, FUNCTION_NAME = 2, FUNCTION_SYSTEM_NAME = 3, FUNCTION_FILENAME = 4,
	FUNCTION_START_LINE = 5,
};

#endif
