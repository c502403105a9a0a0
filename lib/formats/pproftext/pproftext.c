/* pprof's and gperftools' legacy text profiles (heap, growth, fragmentation, contention,
 * thread and Go count profiles): the table row and probe; the reader is read.c. The kinds
 * are told apart by their first line as google/pprof's legacy parser tells them. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/pproftext/pproftext.h"

static bool starts(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	return n >= k && !memcmp(s, w, k);
}

static const char *find(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(s + i, w, k))
			return s + i;
	return NULL;
}

static bool digits(const char *s, const char *e)
{
	if (s >= e)
		return false;
	for (; s < e; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

enum ppt_kind tachi_ppt_kind(const char *s, size_t n)
{
	while (n && (*s == ' ' || *s == '\t')) {
		s++;
		n--;
	}
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
		n--;
	if (starts(s, n, "heap profile:")) {
		const char *at = memchr(s, '@', n);
		if (!at)
			return PPT_NONE;
		size_t k = (size_t)(s + n - at) - 1;
		const char *w = at + 1;
		while (k && *w == ' ') {
			w++;
			k--;
		}
		if (starts(w, k, "growth"))
			return PPT_GROWTH;
		if (starts(w, k, "fragmentation"))
			return PPT_FRAG;
		if (starts(w, k, "heap"))
			return PPT_HEAP;
		return PPT_NONE;
	}
	if (starts(s, n, "--- contentionz ") || starts(s, n, "--- mutex:") ||
	    starts(s, n, "--- contention:"))
		return PPT_CONTENTION;
	if (starts(s, n, "--- threadz ") || (starts(s, n, "--- Thread ") && find(s, n, "stack: ---")))
		return PPT_THREAD;
	/* "NAME profile: total N", whole */
	const char *p = find(s, n, " profile: total ");
	if (p && p > s && !memchr(s, ' ', (size_t)(p - s)) && !memchr(s, '\t', (size_t)(p - s)) &&
	    digits(p + 16, s + n))
		return PPT_COUNT;
	return PPT_NONE;
}

/* The first line that is not blank or a '#' comment names the kind. */
static bool pproftext_probe(const uint8_t *p, size_t n)
{
	const uint8_t *s;
	size_t at = 0, len;
	bool complete;
	if (!tachi_probe_text(p, n))
		return false;
	while (tachi_probe_line(p, n, &at, &s, &len, &complete)) {
		size_t k = 0;
		while (k < len && (s[k] == ' ' || s[k] == '\t' || s[k] == '\r'))
			k++;
		if (k == len || s[k] == '#')
			continue;
		return tachi_ppt_kind((const char *)s, len) != PPT_NONE;
	}
	return false;
}

const struct tachi_format tachi_fmt_pproftext = {
	.name = "pproftext",
	.reader = &tachi_pproftext_reader_ops,
	.probe = pproftext_probe,
};
