/* V8 sampling heap profiles (.heapprofile JSON; read.c describes them): the format's
 * table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/json.h"
#include "formats/json_read.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/heapprofile/heapprofile.h"

/* The "head" node (node and DevTools write it first, and it may fill the peeked bytes):
 * a node whose call frame is a "callFrame" object, or that has a "selfSize". The legacy
 * .cpuprofile's head has the call frame's keys in the node itself, and a "hitCount". */
static bool head_decides(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more;
	if (tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (tachi_json_str_eq(j->p, &k, "callFrame"))
			return !tachi_json_value(j, &t) && t.type == TJ_OBJECT;
		if (tachi_json_str_eq(j->p, &k, "selfSize"))
			return !tachi_json_value(j, &t) && t.type == TJ_NUMBER;
		if (tachi_json_str_eq(j->p, &k, "functionName") ||
		    tachi_json_str_eq(j->p, &k, "hitCount") || tachi_json_skip(j))
			return false;
	}
	return false;
}

/* Only the head decides: a top object that lists "samples" first is still read up to it
 * (the second and third arguments name "head" again, which is decisive before them). */
static bool heapprofile_probe(const uint8_t *p, size_t n)
{
	return tachi_jr_probe_keys(p, n, "head", head_decides, "head", "head");
}

/* A JSON object with a node's allocation size in the peeked bytes. */
static bool heapprofile_resembles(const uint8_t *p, size_t n)
{
	return tachi_json_object_start(p, n) && memmem(p, n, "\"selfSize\"", 10);
}

const struct tachi_format tachi_fmt_heapprofile = {
	.name = "heapprofile",
	.reader = &tachi_heapprofile_reader_ops,
	.probe = heapprofile_probe,
	.resembles = heapprofile_resembles,
};
