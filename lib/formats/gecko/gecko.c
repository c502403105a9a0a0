/* The Firefox Profiler's formats (Gecko JSON, and the processed format): the table row
 * and the probe. The reader is read.c (read_tables.c, read_names.c); the writer write.c
 * (the tables write_tables.c, the JSON write_json.c, native libraries write_native.c). */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/json.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/json_read.h"
#include "formats/gecko/gecko.h"

/* A "meta" object, which j is just before, with the keys every Gecko and processed profile's
 * meta has: "interval" and "startTime" (no other format read has such a "meta"). */
static bool gecko_meta(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more, interval = false, start = false;
	if (tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		interval |= tachi_json_str_eq(j->p, &k, "interval");
		start |= tachi_json_str_eq(j->p, &k, "startTime");
		if (interval && start)
			return true;
		if (tachi_json_skip(j))
			return false;
	}
	return false;
}

/* The object j is just before has such a meta (a DevTools recording's "profile"). */
static bool gecko_inner(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more;
	if (tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (tachi_json_str_eq(j->p, &k, "meta"))
			return gecko_meta(j);
		if (tachi_json_skip(j))
			return false;
	}
	return false;
}

static bool gecko_probe(const uint8_t *p, size_t n)
{
	struct tachi_err e = { 0 };
	struct tachi_json j;
	struct tachi_jtok t, k;
	bool more;
	tachi_json_init(&j, p, n, tachi_json_bom(p, n), TACHI_JR_NESTING, &e);
	if (tachi_json_value(&j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(&j, &k, &more) && more) {
		if (tachi_json_str_eq(p, &k, "meta"))
			return gecko_meta(&j);
		if (tachi_json_str_eq(p, &k, "profile"))
			return gecko_inner(&j);
		if (tachi_json_skip(&j))
			return false;
	}
	return false;
}

const struct tachi_format tachi_fmt_gecko = {
	.name = "gecko",
	.reader = &tachi_gecko_reader_ops,
	.writer = &tachi_gecko_writer_ops,
	.probe = gecko_probe,
};
