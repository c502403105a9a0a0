/* V8 CPU profiles (.cpuprofile JSON; read.c describes them): the format's table row and
 * probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/json.h"
#include "formats/json_read.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/v8/v8.h"

/* In the first element of "nodes", which j has just entered: a "callFrame" key. */
static bool first_node_has_callframe(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more;
	if (tachi_json_elem(j, &more) || !more || tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (tachi_json_str_eq(j->p, &k, "callFrame"))
			return !tachi_json_value(j, &t) && t.type == TJ_OBJECT;
		if (tachi_json_skip(j))
			return false;
	}
	return false;
}

/* A JSON object that names a key of V8's profile in the peeked bytes. */
bool tachi_v8_resembles(const uint8_t *p, size_t n)
{
	return tachi_json_object_start(p, n) &&
	       (memmem(p, n, "\"nodes\"", 7) || memmem(p, n, "\"timeDeltas\"", 12) ||
		memmem(p, n, "\"callFrame\"", 11) || memmem(p, n, "\"timestamps\"", 12));
}

/* node writes "nodes" first and it may fill the peeked bytes: its first node decides. */
static bool nodes_decide(struct tachi_json *j)
{
	struct tachi_jtok t;
	return !tachi_json_value(j, &t) && t.type == TJ_ARRAY && first_node_has_callframe(j);
}

/* The legacy "head" (node writes it first, and it may fill the peeked bytes): a node with
 * its call frame's keys in it. Chrome's heap profile also has a "head", whose call frame
 * is a "callFrame" object. */
static bool head_decides(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more;
	if (tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (tachi_json_str_eq(j->p, &k, "functionName"))
			return true;
		if (tachi_json_str_eq(j->p, &k, "callFrame") || tachi_json_skip(j))
			return false;
	}
	return false;
}

bool tachi_v8_probe(const uint8_t *p, size_t n)
{
	return tachi_jr_probe_keys(p, n, "nodes", nodes_decide, "samples", "timeDeltas") ||
	       tachi_jr_probe_keys(p, n, "head", head_decides, "samples", "timestamps");
}

const struct tachi_format tachi_fmt_v8 = {
	.name = "v8",
	.reader = &tachi_v8_reader_ops,
	.probe = tachi_v8_probe,
	.resembles = tachi_v8_resembles,
};
