/* Chrome's trace-event JSON (the Trace Event Format: chrome://tracing, Chrome DevTools'
 * Performance panel "Save profile", node's --trace-event-categories): either an object
 * with a "traceEvents" array or a bare array of events, each with "ph", "ts", "pid",
 * "tid". A CPU profile in it comes as "Profile" and "ProfileChunk" events (read.c). */
#include <string.h>

#include "base/json.h"
#include "core/detect.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/chrome/chrome.h"

/* An object naming "traceEvents", or an array whose first element is an event object. */
static bool chrome_probe(const uint8_t *p, size_t n)
{
	if (tachi_json_object_start(p, n))
		return memmem(p, n, "\"traceEvents\"", 13) != NULL;
	size_t i = tachi_json_bom(p, n);
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	if (i >= n || p[i] != '[' || !tachi_json_object_start(p + i + 1, n - i - 1))
		return false;
	return memmem(p, n, "\"ph\"", 4) && (memmem(p, n, "\"ts\"", 4) || memmem(p, n, "\"pid\"", 5));
}

/* An object naming "traceEvents" or "metadata", or any object that fills the first
 * window: its "traceEvents" may come after a long "metadata", as the Performance panel
 * writes it, and so may the keys of other JSON formats (a speedscope file's, a V8
 * profile's): detection then looks at a bigger window. A short object naming neither is
 * no near miss of this (a JSON file that no format takes is named none). */
static bool chrome_resembles(const uint8_t *p, size_t n)
{
	return tachi_json_object_start(p, n) &&
	       (n >= TACHI_PROBE_BYTES || memmem(p, n, "\"traceEvents\"", 13) ||
		memmem(p, n, "\"metadata\"", 10));
}

const struct tachi_format tachi_fmt_chrome = {
	.name = "chrome",
	.reader = &tachi_chrome_reader_ops,
	.probe = chrome_probe,
	.resembles = chrome_resembles,
};
