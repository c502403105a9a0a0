/* Safari's timeline recordings (read.c describes them): the format's table row and
 * probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/json.h"
#include "formats/json_read.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/safari/safari.h"

/* "recording", which j has just reached: an object with "sampleStackTraces", or with
 * the "displayName" and "instrumentTypes" that Web Inspector writes first in it (its
 * "records" before the samples may run far past the peeked bytes). speedscope knows the
 * file by "sampleStackTraces" in "recording", or by its name (-recording.json). */
static bool recording_decide(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more, name = false, types = false;
	if (tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (tachi_json_str_eq(j->p, &k, "sampleStackTraces"))
			return true;
		name |= tachi_json_str_eq(j->p, &k, "displayName");
		types |= tachi_json_str_eq(j->p, &k, "instrumentTypes");
		if (name && types)
			return true;
		if (tachi_json_skip(j))
			return false;
	}
	return false;
}

static bool safari_probe(const uint8_t *p, size_t n)
{
	return tachi_jr_probe_keys(p, n, "recording", recording_decide, "recording", "recording");
}

const struct tachi_format tachi_fmt_safari = {
	.name = "safari",
	.reader = &tachi_safari_reader_ops,
	.probe = safari_probe,
};
