/* Papyrus profiles of Skyrim's and Fallout 4's scripts (read.c describes them): the
 * format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/js_text.h"
#include "formats/papyrus/papyrus.h"

/* The log's first line as speedscope's detection wants it, whole: "Stack_", "Script_" or
 * "Obj_", a name without white space, " log opened (PC)" and LF. */
static bool papyrus_probe(const uint8_t *p, size_t n)
{
	static const char *const kinds[] = { "Stack_", "Script_", "Obj_" };
	static const char tail[] = " log opened (PC)\n";
	size_t i = 0;
	for (size_t k = 0; k < 3 && !i; k++)
		if (n >= strlen(kinds[k]) && !memcmp(p, kinds[k], strlen(kinds[k])))
			i = strlen(kinds[k]);
	if (!i || !tachi_probe_text(p, n))
		return false;
	size_t b = i;
	while (i < n && !tachi_js_space(p, n, i))
		i++;
	return i > b && n - i >= sizeof(tail) - 1 && !memcmp(p + i, tail, sizeof(tail) - 1);
}

const struct tachi_format tachi_fmt_papyrus = {
	.name = "papyrus",
	.reader = &tachi_papyrus_reader_ops,
	.probe = papyrus_probe,
};
