/* OTLP/JSON: the table of the request's messages (json_schema.h). The field numbers are
 * otlp.h's, from the schema. */
#include "formats/otlp/otlp.h"
#include "formats/otlp/json_schema.h"

#define MSG(name, ...)                                                                        \
	static const struct otlp_jfield name##_f[] = { __VA_ARGS__ }; \
	static const struct otlp_jmsg name = { name##_f, sizeof(name##_f) / sizeof(name##_f[0]) }

static const struct otlp_jmsg any_value, kv, kv_list;
MSG(array_value, { 1, K_MSG, true, "values", &any_value });
MSG(kv_list, { 1, K_MSG, true, "values", &kv });
MSG(any_value, { ANY_STRING, K_STR, false, "stringValue", NULL },
    { ANY_BOOL, K_BOOL, false, "boolValue", NULL }, { ANY_INT, K_I64, false, "intValue", NULL },
    { ANY_DOUBLE, K_DBL, false, "doubleValue", NULL },
    { ANY_ARRAY, K_MSG, false, "arrayValue", &array_value },
    { ANY_KVLIST, K_MSG, false, "kvlistValue", &kv_list },
    { ANY_BYTES, K_BYTES, false, "bytesValue", NULL },
    { ANY_STRINDEX, K_I32, false, "stringValueStrindex", NULL });
MSG(kv, { KV_KEY, K_STR, false, "key", NULL }, { KV_VALUE, K_MSG, false, "value", &any_value },
    { KV_KEY_STRINDEX, K_I32, false, "keyStrindex", NULL });
MSG(resource, { RES_ATTRIBUTES, K_MSG, true, "attributes", &kv },
    { RES_DROPPED, K_U32, false, "droppedAttributesCount", NULL });
MSG(scope, { SCOPE_NAME, K_STR, false, "name", NULL }, { SCOPE_VERSION, K_STR, false, "version", NULL },
    { SCOPE_ATTRIBUTES, K_MSG, true, "attributes", &kv },
    { SCOPE_DROPPED, K_U32, false, "droppedAttributesCount", NULL });
MSG(value_type, { VT_TYPE, K_I32, false, "typeStrindex", NULL },
    { VT_UNIT, K_I32, false, "unitStrindex", NULL });
MSG(sample, { SMP_STACK, K_I32, false, "stackIndex", NULL },
    { SMP_ATTRIBUTES, K_I32, true, "attributeIndices", NULL },
    { SMP_LINK, K_I32, false, "linkIndex", NULL }, { SMP_VALUES, K_I64, true, "values", NULL },
    { SMP_TIMESTAMPS, K_FX64, true, "timestampsUnixNano", NULL });
MSG(profile, { PROF_SAMPLE_TYPE, K_MSG, false, "sampleType", &value_type },
    { PROF_SAMPLES, K_MSG, true, "samples", &sample },
    { PROF_TIME_UNIX_NANO, K_FX64, false, "timeUnixNano", NULL },
    { PROF_DURATION_NANO, K_U64, false, "durationNano", NULL },
    { PROF_PERIOD_TYPE, K_MSG, false, "periodType", &value_type },
    { PROF_PERIOD, K_I64, false, "period", NULL }, { PROF_PROFILE_ID, K_HEX, false, "profileId", NULL },
    { PROF_DROPPED, K_U32, false, "droppedAttributesCount", NULL },
    { PROF_ORIGINAL_FORMAT, K_STR, false, "originalPayloadFormat", NULL },
    { PROF_ORIGINAL_PAYLOAD, K_BYTES, false, "originalPayload", NULL },
    { PROF_ATTRIBUTES, K_I32, true, "attributeIndices", NULL });
MSG(scope_profiles, { SP_SCOPE, K_MSG, false, "scope", &scope },
    { SP_PROFILES, K_MSG, true, "profiles", &profile }, { SP_SCHEMA_URL, K_STR, false, "schemaUrl", NULL });
MSG(resource_profiles, { RP_RESOURCE, K_MSG, false, "resource", &resource },
    { RP_SCOPE_PROFILES, K_MSG, true, "scopeProfiles", &scope_profiles },
    { RP_SCHEMA_URL, K_STR, false, "schemaUrl", NULL });
MSG(mapping, { MAP_MEMORY_START, K_U64, false, "memoryStart", NULL },
    { MAP_MEMORY_LIMIT, K_U64, false, "memoryLimit", NULL },
    { MAP_FILE_OFFSET, K_U64, false, "fileOffset", NULL },
    { MAP_FILENAME, K_I32, false, "filenameStrindex", NULL },
    { MAP_ATTRIBUTES, K_I32, true, "attributeIndices", NULL });
MSG(line, { LINE_FUNCTION, K_I32, false, "functionIndex", NULL }, { LINE_LINE, K_I64, false, "line", NULL },
    { LINE_COLUMN, K_I64, false, "column", NULL });
MSG(location, { LOC_MAPPING, K_I32, false, "mappingIndex", NULL },
    { LOC_ADDRESS, K_U64, false, "address", NULL }, { LOC_LINES, K_MSG, true, "lines", &line },
    { LOC_ATTRIBUTES, K_I32, true, "attributeIndices", NULL });
MSG(function, { FN_NAME, K_I32, false, "nameStrindex", NULL },
    { FN_SYSTEM_NAME, K_I32, false, "systemNameStrindex", NULL },
    { FN_FILENAME, K_I32, false, "filenameStrindex", NULL },
    { FN_START_LINE, K_I64, false, "startLine", NULL });
MSG(link, { LINK_TRACE_ID, K_HEX, false, "traceId", NULL }, { LINK_SPAN_ID, K_HEX, false, "spanId", NULL });
MSG(kvu, { KVU_KEY, K_I32, false, "keyStrindex", NULL }, { KVU_VALUE, K_MSG, false, "value", &any_value },
    { KVU_UNIT, K_I32, false, "unitStrindex", NULL });
MSG(stack, { STACK_LOCATIONS, K_I32, true, "locationIndices", NULL });
MSG(dictionary, { DICT_MAPPING, K_MSG, true, "mappingTable", &mapping },
    { DICT_LOCATION, K_MSG, true, "locationTable", &location },
    { DICT_FUNCTION, K_MSG, true, "functionTable", &function },
    { DICT_LINK, K_MSG, true, "linkTable", &link }, { DICT_STRING, K_STR, true, "stringTable", NULL },
    { DICT_ATTRIBUTE, K_MSG, true, "attributeTable", &kvu },
    { DICT_STACK, K_MSG, true, "stackTable", &stack });
static const struct otlp_jfield request_f[] = {
	{ REQ_RESOURCE_PROFILES, K_MSG, true, "resourceProfiles", &resource_profiles },
	{ REQ_DICTIONARY, K_MSG, false, "dictionary", &dictionary },
};
const struct otlp_jmsg tachi_otlp_json_request = { request_f, 2 };

