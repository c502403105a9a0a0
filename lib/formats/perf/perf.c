/* Linux perf script text (read.c describes what is read): the format's table row and
 * probe, which asks the reader's own line parsers. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/perf/perf.h"

/* The first data line is an event line (comm, then a pid[/tid] word, an indent before
 * the comm where perf right-aligns it) with a time and an event ("secs.frac: [period]
 * event:", as a capture without call chains has, its ip sym (dso) after them), or one
 * followed by a frame line (indented or not, as older perf versions print them) whose
 * module is a path or a bracketed name ("(/bin/java)", "([kernel.kallsyms])"), as perf
 * prints every module: a table of numbers and names ("Total: 221 samples", then
 * "108  48.9% ... f (inline)", pprof's text report) is no capture. Folded stacks
 * ("a;b 12") have neither. */
static bool pr_probe(const uint8_t *p, size_t n)
{
	const char *s;
	size_t at = 0, len, k;
	bool bad, has_ts, has_event;
	if (!tachi_perf_probe_next(p, n, &at, &s, &len, &k) ||
	    !tachi_perf_event_line(s + k, len - k, &bad, &has_ts, &has_event) || bad)
		return false;
	if (has_ts && has_event)
		return true;
	if (!tachi_perf_probe_next(p, n, &at, &s, &len, &k))
		return false;
	if (!tachi_perf_frame_line(s + k, len - k))
		return false;
	const char *open = s + len;
	while (open > s + k && open[-1] != '(')
		open--;
	/* the module ends the line: austin's "f (/x.py);L3 1 2 0" puts counts after it */
	return open < s + len && (*open == '/' || *open == '[') && s[len - 1] == ')';
}

/* perf script --header's comment block: a window of comments that may pass the first
 * bytes (14 events' lines: 5 KiB), so detection asks again of a bigger window. */
static bool pr_resembles(const uint8_t *p, size_t n)
{
	static const char head[] = "# ========\n# captured on";
	if (n >= sizeof(head) - 1 && !memcmp(p, head, sizeof(head) - 1))
		return true;
	/* an event line with a control byte in it (a NUL or ESC in a comm): detection says
	 * the input looks like perf's, and --from perf reads it */
	const uint8_t *l;
	size_t at = 0, len, k = 0;
	bool complete, bad, has_ts, has_event;
	if (!tachi_probe_line(p, n, &at, &l, &len, &complete) || !complete || tachi_perf_text_line(l, len))
		return false;
	while (k < len && (l[k] == ' ' || (l[k] >= '\t' && l[k] <= '\r' && l[k] != '\n')))
		k++;
	return tachi_perf_event_line((const char *)l + k, len - k, &bad, &has_ts, &has_event) &&
	       has_ts && has_event;
}

const struct tachi_format tachi_fmt_perf = {
	.name = "perf",
	.reader = &tachi_perf_reader_ops,
	.probe = pr_probe,
	.resembles = pr_resembles,
};
