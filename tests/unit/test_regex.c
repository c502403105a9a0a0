/* The RE2-syntax engine (lib/base/regex.c): the table of patterns x subjects in
 * tests/data/regex_cases.tsv, whose answers are Go's regexp's (tests/regex_go.go checks
 * them against Go); then what the table cannot hold: refusals with their messages and
 * offsets, bytes that are not UTF-8, the bounds, our documented departures from Go, and
 * patterns a backtracking matcher takes minutes or gigabytes over. */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "base/base.h"
#include "base/regex.h"

/* 1 match, 0 none, -1 refused (rc and *err then say why). */
static int try(const char *pat, size_t pn, const char *s, size_t sn, int *rc,
	       struct tachi_regex_err *err)
{
	struct tachi_regex *re;
	struct tachi_regex_err e;
	int r = tachi_regex_compile(pat, pn, &re, err ? err : &e);
	if (rc)
		*rc = r;
	if (r)
		return -1;
	int m = tachi_regex_match(re, s, sn);
	/* the lazy DFA and the NFA it is built from agree, a cached state or not */
	CHECK_EQ_U64(tachi_regex_search_nfa(re, s, sn), m);
	CHECK_EQ_U64(tachi_regex_match(re, s, sn), m);
	tachi_regex_free(re);
	return m;
}

static int try_str(const char *pat, const char *s)
{
	return try(pat, strlen(pat), s, strlen(s), NULL, NULL);
}

/* The subject column: \n \t \\ and \xHH, as tests/regex_go.go reads it. */
static size_t unescape(char *s)
{
	char *o = s;
	for (const char *i = s; *i; i++) {
		if (*i != '\\' || !i[1]) {
			*o++ = *i;
			continue;
		}
		i++;
		if (*i == 'x' && i[1] && i[2]) {
			char h[3] = { i[1], i[2], 0 };
			*o++ = (char)strtoul(h, NULL, 16);
			i += 2;
		} else {
			*o++ = *i == 'n' ? '\n' : *i == 't' ? '\t' : *i;
		}
	}
	return (size_t)(o - s);
}

static void table(void)
{
	char path[4096], *line = NULL;
	size_t cap = 0;
	ssize_t len;
	unsigned n = 0, lineno = 0;
	snprintf(path, sizeof(path), "%s/regex_cases.tsv", getenv("TESTDATA"));
	FILE *f = fopen(path, "r");
	CHECK(f != NULL);
	while (f && (len = getline(&line, &cap, f)) >= 0) {
		lineno++;
		if (len && line[len - 1] == '\n')
			line[--len] = 0;
		if (!len || line[0] == '#')
			continue;
		char *t1 = strchr(line, '\t'), *t2 = t1 ? strchr(t1 + 1, '\t') : NULL;
		CHECK(t2 != NULL);
		if (!t2)
			continue;
		*t1 = *t2 = 0;
		size_t sn = unescape(t2 + 1);
		int got = try(t1 + 1, strlen(t1 + 1), t2 + 1, sn, NULL, NULL);
		int want = line[0] == '!' ? -1 : line[0] - '0';
		if (got != want)
			fprintf(stderr, "regex_cases.tsv:%u: %s: got %d, want %d\n", lineno, t1 + 1,
				got, want);
		CHECK(got == want);
		n++;
	}
	free(line);
	if (f)
		fclose(f);
	CHECK(n >= 250);
}

/* Refusals: the code, the offset and the message. */
static void refusals(void)
{
	static const struct {
		const char *pat;
		int rc;
		size_t at;
		const char *msg;
	} t[] = {
		{ "(a|aa)*\\2\\2\\2\\2b", TACH_E_FORMAT, 7, "backreference \\2: RE2 has none" },
		{ "\\1", TACH_E_FORMAT, 0, "backreference \\1: RE2 has none" },
		{ "((a{1,255}){1,255}){1,255}", TACH_E_FORMAT, 11,
		  "invalid repeat count {1,255}: nested repeats over 1000 copies" },
		{ "a{1001}", TACH_E_FORMAT, 1, "invalid repeat count {1001}" },
		{ "a{3,2}", TACH_E_FORMAT, 1, "invalid repeat count {3,2}" },
		{ "x(?=a)", TACH_E_FORMAT, 1, "lookahead (?=: RE2 has none" },
		{ "(?!a)", TACH_E_FORMAT, 0, "lookahead (?!: RE2 has none" },
		{ "(?<=a)", TACH_E_FORMAT, 0, "lookbehind (?<=: RE2 has none" },
		{ "(?<!a)", TACH_E_FORMAT, 0, "lookbehind (?<!: RE2 has none" },
		{ "(?>a)", TACH_E_FORMAT, 0, "atomic group (?>: RE2 has none" },
		{ "ab*+", TACH_E_FORMAT, 2, "invalid nested repetition operator *+" },
		{ "a{2}*", TACH_E_FORMAT, 1, "invalid nested repetition operator {2}*" },
		{ "*a", TACH_E_FORMAT, 0, "missing argument to repetition operator *" },
		{ "x|+", TACH_E_FORMAT, 2, "missing argument to repetition operator +" },
		{ "ab(c", TACH_E_FORMAT, 2, "missing closing )" },
		{ "ab)c", TACH_E_FORMAT, 2, "unexpected )" },
		{ "x[ab", TACH_E_FORMAT, 1, "missing closing ]" },
		{ "[z-a]", TACH_E_FORMAT, 1, "invalid character class range z-a" },
		{ "[[:nope:]]", TACH_E_FORMAT, 1, "invalid character class range [:nope:]" },
		{ "a\\q", TACH_E_FORMAT, 1, "invalid escape sequence \\q" },
		{ "\\x{110000}", TACH_E_FORMAT, 0,
		  "invalid escape sequence \\x: two hex digits or \\x{...} with at most 10FFFF" },
		{ "ab\\", TACH_E_FORMAT, 2, "trailing backslash at end of expression" },
		{ "(?P<a-b>x)", TACH_E_FORMAT, 0, "invalid named capture (?P<a-" },
		{ "(?i-)x", TACH_E_FORMAT, 0, "invalid or unsupported Perl syntax (?i-)" },
		{ "\\pL", TACH_E_UNSUPPORTED, 0, "Unicode class \\p: not supported here (ASCII classes "
		  "are: [[:alpha:]], \\d, \\w, \\s)" },
		{ "[\\p{Greek}]", TACH_E_UNSUPPORTED, 1, "Unicode class \\p: not supported here (ASCII "
		  "classes are: [[:alpha:]], \\d, \\w, \\s)" },
		{ "ab\xff", TACH_E_FORMAT, 2, "invalid UTF-8" },
		/* \p is read as Go reads it: an error Go finds after it is Go's refusal */
		{ "\\p{Greek}(", TACH_E_FORMAT, 9, "missing closing )" },
		{ "[\\pL]\\2", TACH_E_FORMAT, 5, "backreference \\2: RE2 has none" },
		{ "\\PL**", TACH_E_FORMAT, 3, "invalid nested repetition operator **" },
		{ "\\p{^Han}[a", TACH_E_FORMAT, 8, "missing closing ]" },
		{ "\\p{Foo}\\pL", TACH_E_FORMAT, 0, "invalid character class range \\p{Foo}" },
		{ "x\\p", TACH_E_FORMAT, 1, "invalid character class range \\p" },
		{ "\\pX", TACH_E_FORMAT, 0, "invalid character class range \\pX" },
		{ "[\\p{Greek]", TACH_E_FORMAT, 1, "invalid character class range \\p{Greek]: no "
		  "closing }" },
		{ "\\p{Gr\xff" "eek}", TACH_E_FORMAT, 5, "invalid UTF-8" },
		{ "\\pL\\p{Foo}", TACH_E_FORMAT, 3, "invalid character class range \\p{Foo}" },
		{ "a|\\P{^Any}+b", TACH_E_UNSUPPORTED, 2, "Unicode class \\P: not supported here "
		  "(ASCII classes are: [[:alpha:]], \\d, \\w, \\s)" },
		{ "\\C", TACH_E_FORMAT, 0, "invalid escape sequence \\C (any byte): RE2 syntax, but "
		  "not supported by Go" },
	};
	for (size_t k = 0; k < sizeof(t) / sizeof(t[0]); k++) {
		struct tachi_regex_err e;
		int rc;
		CHECK(try(t[k].pat, strlen(t[k].pat), "", 0, &rc, &e) == -1);
		CHECK_EQ_U64(rc, (uint64_t)(int64_t)t[k].rc);
		CHECK_EQ_U64(e.at, t[k].at);
		CHECK_EQ_STR(e.msg, t[k].msg);
	}
}

static char *repeat_str(const char *unit, size_t times)
{
	size_t u = strlen(unit);
	char *s = malloc(u * times + 1);
	for (size_t k = 0; k < times; k++)
		memcpy(s + k * u, unit, u);
	s[u * times] = 0;
	return s;
}

/* Program size and nesting: the bounds hold, and what is just inside them compiles. */
static void bounds(void)
{
	struct tachi_regex *re;
	struct tachi_regex_err e;
	char *p = repeat_str("a{1000}", 9); /* 9,000 instructions and MATCH */
	CHECK(!tachi_regex_compile(p, strlen(p), &re, &e));
	CHECK_EQ_U64(tachi_regex_size(re), 9001);
	tachi_regex_free(re);
	free(p);
	p = repeat_str("a{1000}", 10);
	CHECK_EQ_U64(tachi_regex_compile(p, strlen(p), &re, &e), (uint64_t)(int64_t)TACH_E_LIMIT);
	CHECK_EQ_STR(e.msg, "expression too large: over 10000 instructions once repeats are "
		     "expanded");
	free(p);
	char *open = repeat_str("(", 1001), *close = repeat_str(")", 1001);
	size_t n = 1001;
	p = malloc(2 * n + 2);
	snprintf(p, 2 * n + 2, "%sa%s", open, close);
	CHECK_EQ_U64(tachi_regex_compile(p, strlen(p), &re, &e), (uint64_t)(int64_t)TACH_E_FORMAT);
	CHECK_EQ_STR(e.msg, "expression nests too deeply (over 1000 levels)");
	/* 500 groups deep is fine */
	CHECK_EQ_U64(try(p + 501, 500 + 1 + 500, "a", 1, NULL, NULL), 1);
	free(p), free(open), free(close);
	/* stacked repeats through flag groups still count as nesting */
	char *flags = repeat_str("(?i)*", 1200);
	p = malloc(strlen(flags) + 2);
	snprintf(p, strlen(flags) + 2, "a%s", flags);
	free(flags);
	CHECK_EQ_U64(tachi_regex_compile(p, strlen(p), &re, &e), (uint64_t)(int64_t)TACH_E_FORMAT);
	free(p);
}

/* Where we knowingly differ from Go, as regex.h says. */
static void departures(void)
{
	CHECK_EQ_U64(try_str("^(?<n>a)$", "a"), 1); /* Go >= 1.22 and RE2 take (?<name>) */
	/* case folding is Go 1.19's (Unicode 13.0.0): U+2C2F GLAGOLITIC CAPITAL LETTER
	 * CAUDATE CHRI came in Unicode 14, and a pprof built with a newer Go folds it */
	CHECK_EQ_U64(try_str("(?i)^\xe2\xb0\xaf$", "\xe2\xb1\x9f"), 0);
}

/* NUL bytes are ordinary characters in patterns and subjects. */
static void nul_bytes(void)
{
	CHECK_EQ_U64(try("^a\0b$", 5, "a\0b", 3, NULL, NULL), 1);
	CHECK_EQ_U64(try("^a\0b$", 5, "a\0c", 3, NULL, NULL), 0);
	CHECK_EQ_U64(try("^a.b$", 5, "a\0b", 3, NULL, NULL), 1);
}

/* Exponential for backtracking, linear here: the answers, on 3,000-character subjects. */
static void hostile(void)
{
	char *a = repeat_str("a", 3000);
	CHECK_EQ_U64(try_str("^((a|aa)*)*b$", a), 0);
	CHECK_EQ_U64(try_str("^(a|aa)*(a|aa)*(a|aa)*c$", a), 0);
	CHECK_EQ_U64(try_str("^(a*)*$", a), 1);
	CHECK_EQ_U64(try_str("(x+x+)+y", a), 0);
	CHECK_EQ_U64(try_str("^(a|aa)*\\2\\2\\2\\2b", a), -1);
	CHECK_EQ_U64(try_str("((a{1,255}){1,255}){1,255}", a), -1);
	char *p = repeat_str("(.*a{99}){10}", 9), *longer = repeat_str("a", 8910);
	CHECK_EQ_U64(try_str(p, a), 0); /* 8,910 a's needed */
	CHECK_EQ_U64(try_str(p, longer), 1);
	CHECK_EQ_U64(try_str(p, longer + 1), 0);
	free(p), free(longer);
	a[2999] = 'b';
	CHECK_EQ_U64(try_str("^((a|aa)*)*b$", a), 1);
	free(a);
	/* one handle, many searches: scratch space is reset each time */
	struct tachi_regex *re;
	struct tachi_regex_err e;
	CHECK(!tachi_regex_compile("^(foo|ba+r)$", 12, &re, &e));
	CHECK_EQ_U64(tachi_regex_match(re, "baaar", 5), 1);
	CHECK_EQ_U64(tachi_regex_match(re, "bar2", 4), 0);
	CHECK_EQ_U64(tachi_regex_match(re, "foo", 3), 1);
	CHECK_EQ_U64(tachi_regex_match(re, "", 0), 0);
	tachi_regex_free(re);
	tachi_regex_free(NULL);
}

/* The lazy DFA: a state made once is not made again, so the work of a long subject whose
 * states repeat is that of its first few hundred characters; a pattern with a new state
 * at each character spends its budget, and then says so, for good. */
static void budget(void)
{
	struct tachi_regex *re;
	struct tachi_regex_err e;
	const char *p = "^(.*a.{500})$";
	size_t n = 100000;
	char *s = repeat_str("a", n);
	CHECK(!tachi_regex_compile(p, strlen(p), &re, &e));
	CHECK_EQ_U64(tachi_regex_match(re, s, n), 1);
	/* about 500^2 / 2 visits to make the first 501 states; an NFA visits 500 a character */
	CHECK(tachi_regex_work(re) < 1000000);
	uint64_t w = tachi_regex_work(re);
	CHECK_EQ_U64(tachi_regex_match(re, s, n), 1);
	CHECK_EQ_U64(tachi_regex_work(re), w);
	/* 'a' and 'b' in a pseudo-random order: a new set of live threads at each character */
	uint32_t x = 1;
	for (size_t k = 0; k < n; k++) {
		x = x * 1103515245u + 12345u;
		s[k] = (char)('a' + (x >> 16 & 1));
	}
	tachi_regex_set_budget(re, 2000000);
	CHECK_EQ_U64(tachi_regex_match(re, s, n), (uint64_t)(int64_t)TACH_E_LIMIT);
	/* spent by at most one state's making past the budget */
	CHECK(tachi_regex_work(re) <= 2000000 + 2 * tachi_regex_size(re));
	CHECK_EQ_U64(tachi_regex_match(re, s, n), (uint64_t)(int64_t)TACH_E_LIMIT);
	/* with no bound, the DFA's answer is the NFA's, through cache flushes (100,000 new
	 * states of about 1 KB each, in an 8 MB cache) */
	tachi_regex_set_budget(re, UINT64_MAX);
	s[n - 501] = 'a';
	CHECK_EQ_U64(tachi_regex_match(re, s, n), 1);
	CHECK_EQ_U64(tachi_regex_search_nfa(re, s, n), 1);
	s[n - 501] = 'b';
	CHECK_EQ_U64(tachi_regex_match(re, s, n), 0);
	CHECK_EQ_U64(tachi_regex_search_nfa(re, s, n), 0);
	tachi_regex_free(re);
	free(s);
}

int main(void)
{
	table();
	refusals();
	bounds();
	departures();
	nul_bytes();
	hostile();
	budget();
	return CHECK_DONE();
}
