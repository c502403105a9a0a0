/* bpftrace maps of stacks (read.c describes them): the format's table row and probe. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/bpftrace/bpftrace.h"

/* The first line (after bpftrace's "Attaching N probe(s)..."), is "@[" and the next is a
 * frame or the entry's end; or it is a one-line entry "@[, KEY]: N". */
static bool bpftrace_probe(const uint8_t *p, size_t n)
{
	const uint8_t *s;
	size_t at = 0, len;
	bool complete;
	if (!tachi_probe_text(p, n) || !tachi_probe_line(p, n, &at, &s, &len, &complete))
		return false;
	if (len >= 10 && !memcmp(s, "Attaching ", 10) &&
	    !tachi_probe_line(p, n, &at, &s, &len, &complete))
		return false;
	if (len > 4 && !memcmp(s, "@[, ", 4) && complete)
		return memmem(s, len, "]: ", 3) != NULL;
	if (len != 2 || memcmp(s, "@[", 2) || !complete)
		return false;
	/* the entry's first frame, or its end */
	return tachi_probe_line(p, n, &at, &s, &len, &complete) && (s[0] == ' ' || s[0] == ',' || s[0] == ']');
}

const struct tachi_format tachi_fmt_bpftrace = {
	.name = "bpftrace",
	.reader = &tachi_bpftrace_reader_ops,
	.probe = bpftrace_probe,
};
