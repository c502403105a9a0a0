/* GHC's -pj JSON profiles (read.c describes them): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/json.h"
#include "formats/json_read.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/ghcpj/ghcpj.h"

/* "cost_centres" reached before the RTS's keys: its first element has an "is_caf". */
static bool cost_centres_decide(struct tachi_json *j)
{
	struct tachi_jtok t, k;
	bool more;
	if (tachi_json_value(j, &t) || t.type != TJ_ARRAY || tachi_json_elem(j, &more) || !more ||
	    tachi_json_value(j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(j, &k, &more) && more) {
		if (tachi_json_str_eq(j->p, &k, "is_caf"))
			return true;
		if (tachi_json_skip(j))
			return false;
	}
	return false;
}

/* GHC writes "program", "arguments", "rts_arguments", "end_time",
 * "initial_capabilities" first: the two RTS keys, which speedscope asks for too. */
static bool ghcpj_probe(const uint8_t *p, size_t n)
{
	return tachi_jr_probe_keys(p, n, "cost_centres", cost_centres_decide, "rts_arguments",
				   "initial_capabilities");
}

const struct tachi_format tachi_fmt_ghcpj = {
	.name = "ghcpj",
	.reader = &tachi_ghcpj_reader_ops,
	.probe = ghcpj_probe,
};
