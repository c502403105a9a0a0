/* The kind of a pprof legacy text, from its first significant line, as google/pprof's
 * legacy parser tells them; shared by the probe (pproftext.c) and the reader (read.c). */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

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

