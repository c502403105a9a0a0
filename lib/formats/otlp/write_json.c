/* OTLP/JSON: the writer's request message, encoded as protobuf, written again as the OTLP
 * specification's JSON encoding of it (the Protobuf JSON mapping, with its OTLP rules):
 * field names in lowerCamelCase; 64-bit integers (int64, uint64, fixed64) as decimal
 * strings, 32-bit ones as numbers; bytes in base64, but for trace and span IDs, which are
 * hex; fields with their zero value left out, as the protobuf form leaves them out (a
 * message that is all zeros, a table's entry 0, is {}); repeated fields as arrays, in the
 * order the message holds them.
 *
 * Driven by a table of the messages the writer makes (their fields' names and kinds), so
 * that the JSON says exactly what the protobuf form says. Fields the table does not name
 * are not written (the writer makes none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "base/jsonout.h"
#include "base/protobuf.h"
#include "formats/otlp/otlp.h"

enum kind { K_MSG, K_STR, K_BYTES, K_HEX, K_I32, K_U32, K_I64, K_U64, K_FX64, K_BOOL, K_DBL };

struct jmsg;
struct jfield {
	uint32_t num;
	uint8_t kind;
	bool rep;
	const char *name;
	const struct jmsg *msg;
};
struct jmsg {
	const struct jfield *f;
	size_t n;
};

#define MSG(name, ...)                                                                        \
	static const struct jfield name##_f[] = { __VA_ARGS__ };                                 \
	static const struct jmsg name = { name##_f, sizeof(name##_f) / sizeof(name##_f[0]) }

static const struct jmsg any_value, kv, kv_list;
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
MSG(request, { REQ_RESOURCE_PROFILES, K_MSG, true, "resourceProfiles", &resource_profiles },
    { REQ_DICTIONARY, K_MSG, false, "dictionary", &dictionary });

struct jctx {
	struct tachi_out *o;
	const uint8_t *p;
	char *esc;
	size_t esc_cap;
	int rc;
};

static void put(struct jctx *c, const char *s, size_t n)
{
	if (!c->rc && tachi_out_write(c->o, s, n))
		c->rc = TACH_E_IO;
}

static void puts_(struct jctx *c, const char *s)
{
	put(c, s, strlen(s));
}

static void put_string(struct jctx *c, const uint8_t *s, size_t n)
{
	bool repaired = false;
	if (n > (SIZE_MAX - 2) / 6 || !TACHI_RESERVE(c->esc, c->esc_cap, 6 * n + 2)) {
		c->rc = TACH_E_NOMEM;
		return;
	}
	size_t k = tachi_json_escape(c->esc + 1, (const char *)s, n, &repaired);
	c->esc[0] = '"';
	c->esc[k + 1] = '"';
	put(c, c->esc, k + 2);
}

static void put_base64(struct jctx *c, const uint8_t *s, size_t n, bool hex)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	if (n > SIZE_MAX / 4 - 4 || !TACHI_RESERVE(c->esc, c->esc_cap, 2 * n + n / 3 * 4 + 8)) {
		c->rc = TACH_E_NOMEM;
		return;
	}
	char *e = c->esc;
	size_t k = 0;
	e[k++] = '"';
	for (size_t i = 0; hex && i < n; i++) {
		e[k++] = "0123456789abcdef"[s[i] >> 4];
		e[k++] = "0123456789abcdef"[s[i] & 15];
	}
	for (size_t i = 0; !hex && i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
			     (i + 2 < n ? s[i + 2] : 0);
		e[k++] = b64[v >> 18];
		e[k++] = b64[v >> 12 & 63];
		e[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		e[k++] = i + 2 < n ? b64[v & 63] : '=';
	}
	e[k++] = '"';
	put(c, e, k);
}

/* One number of kind k (v: the varint, or the fixed bits). */
static void put_number(struct jctx *c, uint8_t k, uint64_t v)
{
	char b[40];
	size_t n;
	switch (k) {
	case K_I32:
		n = tachi_fmt_i64(b, (int32_t)(uint32_t)v);
		break;
	case K_U32:
		n = tachi_fmt_u64(b, (uint32_t)v);
		break;
	case K_BOOL:
		puts_(c, v ? "true" : "false");
		return;
	case K_DBL: {
		double d;
		memcpy(&d, &v, 8);
		if (d != d || d - d != 0) {
			puts_(c, d != d ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
			return;
		}
		n = (size_t)snprintf(b, sizeof(b), "%.17g", d);
		for (size_t i = 0; i < n; i++)
			if (b[i] == ',') /* a locale's decimal comma */
				b[i] = '.';
		break;
	}
	default: /* 64-bit integers are strings */
		b[0] = '"';
		n = 1 + (k == K_I64 ? tachi_fmt_i64(b + 1, (int64_t)v) : tachi_fmt_u64(b + 1, v));
		b[n++] = '"';
		break;
	}
	put(c, b, n);
}

static void put_msg(struct jctx *c, size_t off, size_t len, const struct jmsg *m);

/* A field's value (one element of a repeated one): a LEN field's bytes, or a number. */
static void put_value(struct jctx *c, const struct jfield *jf, const struct tachi_pb_field *f)
{
	switch (jf->kind) {
	case K_MSG:
		put_msg(c, f->off, f->len, jf->msg);
		break;
	case K_STR:
		put_string(c, c->p + f->off, f->len);
		break;
	case K_BYTES:
	case K_HEX:
		put_base64(c, c->p + f->off, f->len, jf->kind == K_HEX);
		break;
	default:
		put_number(c, jf->kind, f->v);
	}
}

/* The numbers of a packed field: varints, or 8 bytes each for fixed64 and double. */
static void put_packed(struct jctx *c, const struct jfield *jf, const struct tachi_pb_field *f,
		       bool *first)
{
	bool fixed = jf->kind == K_FX64 || jf->kind == K_DBL;
	for (size_t i = f->off, end = f->off + f->len; i < end && !c->rc;) {
		uint64_t v;
		if (fixed) {
			if (end - i < 8)
				break;
			v = tachi_rd64(c->p + i, false);
			i += 8;
		} else {
			size_t k = tachi_uvarint(c->p + i, c->p + end, &v);
			if (!k)
				break;
			i += k;
		}
		if (!*first)
			put(c, ",", 1);
		*first = false;
		put_number(c, jf->kind, v);
	}
}

/* Whether field f (of the message's bytes) is jf's. */
static bool is(const struct jfield *jf, const struct tachi_pb_field *f)
{
	return f->num == jf->num;
}

static void put_msg(struct jctx *c, size_t off, size_t len, const struct jmsg *m)
{
	size_t end = off + len;
	bool any = false;
	put(c, "{", 1);
	for (size_t i = 0; i < m->n && !c->rc; i++) {
		const struct jfield *jf = &m->f[i];
		struct tachi_pb_field f, last;
		bool found = false, opened = false, first = true;
		for (size_t pos = off; pos < end && !c->rc;) {
			if (tachi_pb_next(c->p, &pos, end, &f) != TACHI_PB_OK)
				break;
			if (!is(jf, &f))
				continue;
			if (!jf->rep) {
				last = f;
				found = true;
				continue;
			}
			if (!opened) {
				puts_(c, any ? ",\"" : "\"");
				puts_(c, jf->name);
				puts_(c, "\":[");
				any = opened = true;
			}
			if (f.wt == TACHI_PB_LEN && jf->kind != K_MSG && jf->kind != K_STR &&
			    jf->kind != K_BYTES && jf->kind != K_HEX) {
				put_packed(c, jf, &f, &first);
				continue;
			}
			if (!first)
				put(c, ",", 1);
			first = false;
			put_value(c, jf, &f);
		}
		if (opened)
			put(c, "]", 1);
		if (found) {
			puts_(c, any ? ",\"" : "\"");
			puts_(c, jf->name);
			puts_(c, "\":");
			any = true;
			put_value(c, jf, &last);
		}
	}
	put(c, "}", 1);
}

int tachi_otlp_json(struct tachi_out *o, const uint8_t *p, size_t n)
{
	struct jctx c = { o, p, NULL, 0, TACH_OK };
	put_msg(&c, 0, n, &request);
	put(&c, "\n", 1);
	free(c.esc);
	return c.rc;
}
