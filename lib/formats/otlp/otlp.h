/* What the OTLP profiles files share: the table row (otlp.c) takes the reader's and
 * writer's ops from here, and all of them take the field numbers of OpenTelemetry's
 * profiles signal (opentelemetry-proto, package opentelemetry.proto.profiles.v1development,
 * its collector service's ExportProfilesServiceRequest, and the common and resource
 * messages it uses), named once, by message. The names follow the schema's fields; the
 * comments say the wire type each takes. */
#ifndef TACHFMT_FMT_OTLP_H
#define TACHFMT_FMT_OTLP_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"

extern const struct tachi_reader_ops tachi_otlp_reader_ops;
extern const struct tachi_writer_ops tachi_otlp_writer_ops;

/* ExportProfilesServiceRequest (and ProfilesData, which has the same two fields). */
enum { REQ_RESOURCE_PROFILES = 1 /* ResourceProfiles, repeated */, REQ_DICTIONARY = 2 };

/* ResourceProfiles: Resource; ScopeProfiles, repeated; string. */
enum { RP_RESOURCE = 1, RP_SCOPE_PROFILES = 2, RP_SCHEMA_URL = 3 };
/* Resource: KeyValue, repeated; uint32. */
enum { RES_ATTRIBUTES = 1, RES_DROPPED = 2 };
/* ScopeProfiles: InstrumentationScope; Profile, repeated; string. */
enum { SP_SCOPE = 1, SP_PROFILES = 2, SP_SCHEMA_URL = 3 };
/* InstrumentationScope: strings; KeyValue, repeated; uint32. */
enum { SCOPE_NAME = 1, SCOPE_VERSION = 2, SCOPE_ATTRIBUTES = 3, SCOPE_DROPPED = 4 };
/* KeyValue (common): string key; AnyValue; int32 key into the string table. */
enum { KV_KEY = 1, KV_VALUE = 2, KV_KEY_STRINDEX = 3 };
/* AnyValue, a oneof: string, bool, int64, double (I64), ArrayValue, KeyValueList, bytes,
 * int32 string index. */
enum {
	ANY_STRING = 1, ANY_BOOL = 2, ANY_INT = 3, ANY_DOUBLE = 4, ANY_ARRAY = 5, ANY_KVLIST = 6,
	ANY_BYTES = 7, ANY_STRINDEX = 8,
};

/* ProfilesDictionary: each table repeated, entry 0 the zero value. */
enum {
	DICT_MAPPING = 1, DICT_LOCATION = 2, DICT_FUNCTION = 3, DICT_LINK = 4, DICT_STRING = 5,
	DICT_ATTRIBUTE = 6, DICT_STACK = 7,
};

/* Profile: ValueType; Sample, repeated; fixed64 time; uint64 duration; ValueType; int64
 * period; bytes id; uint32; string and bytes of the original payload; int32 attribute
 * indices, repeated. One sample type per Profile. */
enum {
	PROF_SAMPLE_TYPE = 1, PROF_SAMPLES = 2, PROF_TIME_UNIX_NANO = 3, PROF_DURATION_NANO = 4,
	PROF_PERIOD_TYPE = 5, PROF_PERIOD = 6, PROF_PROFILE_ID = 7, PROF_DROPPED = 8,
	PROF_ORIGINAL_FORMAT = 9, PROF_ORIGINAL_PAYLOAD = 10, PROF_ATTRIBUTES = 11,
};

/* ValueType: int32 string indices. */
enum { VT_TYPE = 1, VT_UNIT = 2 };

/* Sample: int32 stack index; int32 attribute indices, repeated; int32 link index; int64
 * values, repeated; fixed64 timestamps, repeated (packed: 8 bytes each). */
enum { SMP_STACK = 1, SMP_ATTRIBUTES = 2, SMP_LINK = 3, SMP_VALUES = 4, SMP_TIMESTAMPS = 5 };

/* Link: bytes (16, 8). */
enum { LINK_TRACE_ID = 1, LINK_SPAN_ID = 2 };

/* Mapping: uint64 range and file offset; int32 file name index; int32 attribute indices. */
enum {
	MAP_MEMORY_START = 1, MAP_MEMORY_LIMIT = 2, MAP_FILE_OFFSET = 3, MAP_FILENAME = 4,
	MAP_ATTRIBUTES = 5,
};

/* Stack: int32 location indices, repeated, leaf first. */
enum { STACK_LOCATIONS = 1 };

/* Location: int32 mapping index; uint64 address; Line, repeated (innermost first, the
 * last the caller the others were inlined into); int32 attribute indices. */
enum { LOC_MAPPING = 1, LOC_ADDRESS = 2, LOC_LINES = 3, LOC_ATTRIBUTES = 4 };

/* Line: int32 function index; int64 line and column, 1-based, 0 unset. */
enum { LINE_FUNCTION = 1, LINE_LINE = 2, LINE_COLUMN = 3 };

/* Function: int32 string indices; int64 start line. */
enum { FN_NAME = 1, FN_SYSTEM_NAME = 2, FN_FILENAME = 3, FN_START_LINE = 4 };

/* KeyValueAndUnit: int32 key index; AnyValue; int32 unit index. */
enum { KVU_KEY = 1, KVU_VALUE = 2, KVU_UNIT = 3 };

/* Attribute keys: the semantic conventions' where they have one, tachfmt's own for what
 * a TACH frame or sample holds and they do not (so that a round trip keeps it). */
#define OTLP_THREAD_ID "thread.id"
#define OTLP_THREAD_NAME "thread.name"
#define OTLP_PROCESS_PID "process.pid"
#define OTLP_EXE_NAME "process.executable.name"
#define OTLP_EXE_PATH "process.executable.path"
#define OTLP_SERVICE_NAME "service.name"
#define OTLP_BUILD_ID "process.executable.build_id.gnu"
#define OTLP_MAP_HAS_FUNCTIONS "pprof.mapping.has_functions"
#define OTLP_MAP_HAS_FILENAMES "pprof.mapping.has_filenames"
#define OTLP_MAP_HAS_LINES "pprof.mapping.has_line_numbers"
#define OTLP_MAP_HAS_INLINES "pprof.mapping.has_inline_frames"
#define OTLP_INTERP_ID "tachfmt.interpreter.id"
#define OTLP_STATUS "tachfmt.thread.status"
#define OTLP_FRAME_LINE "tachfmt.frame.line"
#define OTLP_FRAME_END_LINE "tachfmt.frame.end_line"
#define OTLP_FRAME_END_COL "tachfmt.frame.end_column"
#define OTLP_FRAME_OPCODE "tachfmt.frame.opcode"
/* On the first Profile of tachfmt's own types (samples/count, then a time): its values
 * are the samples' weights and the second's their time, not an input's value types. */
#define OTLP_WEIGHTS "tachfmt.weights"

/* The writer's OTLP/JSON form (write_json.c): the request message in p[0, n) to out as the
 * specification's JSON encoding of it. */
struct tachi_out;
int tachi_otlp_json(struct tachi_out *o, const uint8_t *p, size_t n);

#endif
