/* V8's --prof tick logs (read.c describes them): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/json.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/json_read.h"
#include "formats/v8log/v8log.h"

/* In "code", which j is just after the colon of: the first entry has a "type" that the
 * preprocessor writes. */
static bool code_decides(struct tachi_json *j)
{
	static const char *const types[] = { "SHARED_LIB", "CPP", "CODE", "JS" };
	struct tachi_jtok t, k;
	bool more;
	if (tachi_json_value(j, &t) || t.type != TJ_ARRAY || tachi_json_elem(j, &more) || !more ||
	    tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (!tachi_json_str_eq(j->p, &k, "type")) {
			if (tachi_json_skip(j))
				return false;
			continue;
		}
		if (tachi_json_value(j, &t) || t.type != TJ_STRING)
			return false;
		for (int i = 0; i < 4; i++)
			if (tachi_json_str_eq(j->p, &t, types[i]))
				return true;
		return false;
	}
	return false;
}

/* The raw log's first record names the V8 version that wrote it; the preprocessed JSON
 * starts with its code entries, which may fill the peeked bytes. */
static bool v8log_probe(const uint8_t *p, size_t n)
{
	if (n >= 11 && !memcmp(p, "v8-version,", 11))
		return true;
	return tachi_jr_probe_keys(p, n, "code", code_decides, "functions", "ticks");
}

const struct tachi_format tachi_fmt_v8log = {
	.name = "v8log",
	.reader = &tachi_v8log_reader_ops,
	.probe = v8log_probe,
};
