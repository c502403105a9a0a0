/* OTLP/JSON: the messages of an ExportProfilesServiceRequest that the writer makes, with
 * their fields' JSON names (lowerCamelCase) and kinds (json_schema.c), which the JSON
 * writer (write_json.c) and reader (read_json.c) share, so that both say what the
 * protobuf form says. */
#ifndef TACHFMT_FMT_OTLP_JSON_SCHEMA_H
#define TACHFMT_FMT_OTLP_JSON_SCHEMA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum otlp_jkind { K_MSG, K_STR, K_BYTES, K_HEX, K_I32, K_U32, K_I64, K_U64, K_FX64, K_BOOL, K_DBL };

struct otlp_jmsg;
struct otlp_jfield {
	uint32_t num;
	uint8_t kind;
	bool rep;
	const char *name;
	const struct otlp_jmsg *msg;
};
struct otlp_jmsg {
	const struct otlp_jfield *f;
	size_t n;
};

extern const struct otlp_jmsg tachi_otlp_json_request;

#endif
