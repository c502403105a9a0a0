/* speedscope's file format (JSON): its table row and probe; the reader is read.c, the
 * writer write.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/json.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/json_read.h"
#include "formats/speedscope/speedscope.h"
#include "formats/v8/v8.h"

/* A "$schema" decides. */
static bool schema_decides(struct tachi_json *j)
{
	struct tachi_jtok t;
	return !tachi_json_value(j, &t) && tachi_speedscope_schema_named(j->p, &t);
}

static bool speedscope_probe(const uint8_t *p, size_t n)
{
	return tachi_jr_probe_keys(p, n, "$schema", schema_decides, "shared", "profiles");
}

/* A JSON object that does not look like V8's and names one of speedscope's keys, for the
 * message when no probe takes it (any JSON object is not a speedscope file). Keys past the
 * first window are looked for all the same: chrome/chrome.c's resembles takes any JSON
 * object that fills the window, which makes detection look at a bigger one. */
static bool speedscope_resembles(const uint8_t *p, size_t n)
{
	return tachi_json_object_start(p, n) && !tachi_v8_resembles(p, n) &&
	       (memmem(p, n, "speedscope", 10) || memmem(p, n, "\"profiles\"", 10) ||
		memmem(p, n, "\"shared\"", 8));
}

const struct tachi_format tachi_fmt_speedscope = {
	.name = "speedscope",
	.reader = &tachi_speedscope_reader_ops,
	.writer = &tachi_speedscope_writer_ops,
	.probe = speedscope_probe,
	.resembles = speedscope_resembles,
};
