/* Ruby stackprof dumps (read.c describes them): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/json.h"
#include "formats/json_read.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/stackprof/stackprof.h"

/* "frames", which j has just reached: an object whose first key is a number (the frame's
 * id) and whose first value is an object with a "name" key. The ids are what no other
 * format keys its frames by; stackprof writes "frames" before "raw", within the first
 * kilobytes. */
static bool frames_decide(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more;
	uint64_t id;
	if (tachi_json_value(j, &t) || t.type != TJ_OBJECT || tachi_json_key(j, &k, &more) ||
	    !more || !k.len || !tachi_json_digits(j->p, &k, &id) || tachi_json_value(j, &t) ||
	    t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (tachi_json_str_eq(j->p, &k, "name"))
			return true;
		if (tachi_json_skip(j))
			return false;
	}
	return false;
}

static bool stackprof_probe(const uint8_t *p, size_t n)
{
	return tachi_jr_probe_keys(p, n, "frames", frames_decide, "raw", "raw_timestamp_deltas");
}

const struct tachi_format tachi_fmt_stackprof = {
	.name = "stackprof",
	.reader = &tachi_stackprof_reader_ops,
	.probe = stackprof_probe,
};
