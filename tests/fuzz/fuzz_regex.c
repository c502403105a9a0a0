/* The regex engine (lib/base/regex.c): the input is PATTERN, a NUL byte, SUBJECT. Compiles the
 * pattern and searches the subject; then the same search written as an anchored pattern,
 * ^(?s:.*)(?:PATTERN), must give the same answer whenever both compile (a wrong skip of
 * start positions, or of the anchored case, shows up as a difference), and the lazy DFA
 * must answer as the NFA. */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "tachfmt.h"
#include "base/regex.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int search(const char *pat, size_t pn, const char *s, size_t sn)
{
	struct tachi_regex *re;
	struct tachi_regex_err err;
	int rc = tachi_regex_compile(pat, pn, &re, &err);
	if (rc == TACH_OK) {
		/* the lazy DFA, twice (cached), against the NFA it is made from; a small
		 * cache would show flushes, but TACHI_REGEX_DFA_MEM is fixed */
		int m = tachi_regex_match(re, s, sn);
		if (m < 0 || tachi_regex_match(re, s, sn) != m ||
		    tachi_regex_search_nfa(re, s, sn) != m)
			abort();
		tachi_regex_free(re);
		return m;
	}
	/* a refusal says what and where */
	if (!err.msg[0] || err.at > pn)
		abort();
	return -1;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	const uint8_t *nul = memchr(data, 0, size);
	size_t pn = nul ? (size_t)(nul - data) : size;
	const char *s = nul ? (const char *)nul + 1 : "";
	size_t sn = nul ? size - pn - 1 : 0;
	int m = search((const char *)data, pn, s, sn);
	if (m < 0)
		return 0;
	static const char pre[] = "^(?s:.*)(?:", post[] = ")";
	char *w = malloc(sizeof(pre) + pn + sizeof(post));
	if (!w)
		return 0;
	memcpy(w, pre, sizeof(pre) - 1);
	memcpy(w + sizeof(pre) - 1, data, pn);
	memcpy(w + sizeof(pre) - 1 + pn, post, sizeof(post) - 1);
	int a = search(w, sizeof(pre) - 1 + pn + sizeof(post) - 1, s, sn);
	free(w);
	if (a >= 0 && a != m)
		abort();
	return 0;
}
