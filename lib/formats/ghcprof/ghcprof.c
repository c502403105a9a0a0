/* GHC's .prof text (read.c describes it): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/ghcprof/ghcprof.h"

/* The first line that is not blank names GHC's report: "DATE Time and Allocation
 * Profiling Report  (Final)" (or "(Lexical)" for an older one). */
static bool ghcprof_probe(const uint8_t *p, size_t n)
{
	static const char title[] = "Time and Allocation Profiling Report";
	if (!tachi_probe_text(p, n))
		return false;
	size_t at = 0;
	while (at < n && (p[at] == ' ' || p[at] == '\t' || p[at] == '\r' || p[at] == '\n'))
		at++;
	const uint8_t *nl = memchr(p + at, '\n', n - at);
	size_t l = nl ? (size_t)(nl - (p + at)) : n - at;
	return memmem(p + at, l, title, sizeof(title) - 1) != NULL;
}

const struct tachi_format tachi_fmt_ghcprof = {
	.name = "ghcprof",
	.reader = &tachi_ghcprof_reader_ops,
	.probe = ghcprof_probe,
};
