/* OpenTelemetry profiles (OTLP, the v1development schema): an ExportProfilesServiceRequest
 * in protobuf, the body OTLP/HTTP posts to /v1development/profiles (a ProfilesData, which
 * has the same two fields, reads alike). The table row and probe; the reader is read.c,
 * the writer write.c (its JSON form write_json.c).
 *
 * The probe must not take pprof's files, which are protobuf too: both messages start with
 * a field 1 of wire type LEN (here ResourceProfiles, there a ValueType). A ValueType holds
 * only VARINT fields, a ResourceProfiles starts with one of its LEN fields (a Resource, a
 * ScopeProfiles, a schema URL), whose own first field is a LEN or a VARINT of theirs: the
 * probe asks for that, two levels deep, and is asked before pprof's. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/bytes.h"
#include "base/protobuf.h"
#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/json_read.h"
#include "formats/otlp/otlp.h"

/* A LEN field's head at p[*i]: its number, and its length into *len; false when the bytes
 * end before the head does or it is no LEN field. */
static bool len_head(const uint8_t *p, size_t n, size_t *i, uint64_t *num, uint64_t *len)
{
	uint64_t key;
	size_t k = tachi_uvarint(p + *i, p + n, &key);
	if (!k || (key & 7) != TACHI_PB_LEN)
		return false;
	*num = key >> 3;
	*i += k;
	if (!(k = tachi_uvarint(p + *i, p + n, len)))
		return false;
	*i += k;
	return true;
}

/* The first key of the message at p[i, i + len) (cut at n): whether it is one of the
 * allowed keys; true when the peeked bytes end first. */
static bool first_key(const uint8_t *p, size_t n, size_t i, uint64_t len, const uint8_t *keys,
		      size_t nkeys)
{
	if (!len)
		return false;
	if (i >= n)
		return true;
	for (size_t j = 0; j < nkeys; j++)
		if (p[i] == keys[j])
			return true;
	return false;
}

static bool otlp_probe(const uint8_t *p, size_t n)
{
	size_t i = 0;
	uint64_t num, len, inner, ilen;
	if (tachi_probe_text(p, n) || !len_head(p, n, &i, &num, &len) || !len)
		return false;
	if (num == REQ_DICTIONARY) {
		/* no profiles first: the dictionary, whose mapping table's entry 0 is empty */
		return i + 3 <= n && p[i] == TACHI_PB_KEY(DICT_MAPPING, TACHI_PB_LEN) && p[i + 1] == 0 &&
		       (p[i + 2] == TACHI_PB_KEY(DICT_MAPPING, TACHI_PB_LEN) ||
			p[i + 2] == TACHI_PB_KEY(DICT_LOCATION, TACHI_PB_LEN));
	}
	if (num != REQ_RESOURCE_PROFILES)
		return false;
	if (!len_head(p, n, &i, &inner, &ilen) || ilen > len)
		return false;
	static const uint8_t res_keys[] = { TACHI_PB_KEY(RES_ATTRIBUTES, TACHI_PB_LEN),
					    TACHI_PB_KEY(RES_DROPPED, TACHI_PB_VARINT),
					    TACHI_PB_KEY(3, TACHI_PB_LEN) };
	static const uint8_t sp_keys[] = { TACHI_PB_KEY(SP_SCOPE, TACHI_PB_LEN),
					   TACHI_PB_KEY(SP_PROFILES, TACHI_PB_LEN),
					   TACHI_PB_KEY(SP_SCHEMA_URL, TACHI_PB_LEN) };
	switch (inner) {
	case RP_RESOURCE:
		return first_key(p, n, i, ilen, res_keys, sizeof(res_keys));
	case RP_SCOPE_PROFILES:
		return first_key(p, n, i, ilen, sp_keys, sizeof(sp_keys));
	case RP_SCHEMA_URL:
		return true;
	default:
		return false;
	}
}

/* OTLP/JSON: "resourceProfiles" holding an array, or a "dictionary" with
 * "resourceProfiles" (the writer writes them in that order, others need not). */
static bool json_rp(struct tachi_json *j)
{
	struct tachi_jtok t;
	return !tachi_json_value(j, &t) && t.type == TJ_ARRAY;
}

static bool otlp_probe_any(const uint8_t *p, size_t n)
{
	return otlp_probe(p, n) ||
	       (tachi_json_object_start(p, n) &&
		tachi_jr_probe_keys(p, n, "resourceProfiles", json_rp, "dictionary", "resourceProfiles"));
}

const struct tachi_format tachi_fmt_otlp = {
	.name = "otlp",
	.reader = &tachi_otlp_reader_ops,
	.writer = &tachi_otlp_writer_ops,
	.probe = otlp_probe_any,
};
