/* Regular expressions in RE2 syntax (Go's regexp), matched in linear time: a parser that
 * refuses what RE2 refuses (backreferences, lookaround, possessive and stacked repeats,
 * repeat counts over 1000) and a Thompson NFA, run as a lazy DFA as RE2 runs it (states
 * made when first reached, kept in a bounded cache), which only answers whether the
 * pattern matches: no captures, so laziness and leftmost-first preference do not matter.
 * Cost: compiling allocates in proportion to the pattern and the program (at most
 * TACHI_REGEX_MAX_INSNS instructions once repeats are expanded); matching takes one lookup
 * a code point once its states are made, and making a state visits at most the program:
 * a handle's budget bounds those visits over all its searches, since some patterns need a
 * new state at nearly every code point.
 *
 * Subjects and patterns are UTF-8, decoded as Go decodes them: '.', classes and literals
 * consume one code point, and a byte that does not start a valid sequence is one code point
 * U+FFFD. Supported: literals, escapes (\. \\ \n \t \x41 \x{263a} \101 \Q...\E), '.',
 * classes ([^a-z\d_], [[:alpha:]], [[:^space:]]), Perl classes \d \s \w and their negations,
 * anchors ^ $ \A \z \b \B, groups ( ) (?: ) (?P<name> ) (?<name> ), flags i m s U in
 * (?flags) and (?flags:re), alternation, * + ? {n} {n,} {n,m} and their lazy forms.
 * Not supported, refused with a message: Unicode classes (\pL, \p{Greek}). Case folding
 * under (?i) is Go's: the orbits of unicode.SimpleFold (k K and U+212A KELVIN SIGN, s S
 * and U+017F), from the table regex_unicode.h that tests/regex_unicode_gen.go writes with the
 * Go toolchain (Go 1.19, Unicode 13.0.0; a pprof built with a newer Go folds the few pairs
 * later Unicode versions added). */
#ifndef TACHFMT_REGEX_H
#define TACHFMT_REGEX_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* Far above any frame pattern a profiler writes (pprof's own are a few hundred), low enough
 * that a hostile one costs at most this many steps per character of a name. */
#define TACHI_REGEX_MAX_INSNS 10000
/* The lazy DFA's cache of states and transitions (RE2's default max_mem is 8 MB too):
 * emptied when full. */
#define TACHI_REGEX_DFA_MEM (8u << 20)
/* Group nesting, as Go bounds it. */
#define TACHI_REGEX_MAX_DEPTH 1000
/* A repeat count, and the product of nested counted repeats, as RE2 bounds them. */
#define TACHI_REGEX_MAX_REPEAT 1000

struct tachi_regex;

/* Why a pattern was refused: what, and the byte offset in the pattern where it was found. */
struct tachi_regex_err {
	size_t at;
	char msg[160];
};

/* Compiles pat[0, n). Returns TACH_OK and *out; or, with *err, TACH_E_FORMAT (a pattern
 * RE2 and Go refuse), TACH_E_UNSUPPORTED (a Unicode class, which they take),
 * TACH_E_LIMIT (a program over TACHI_REGEX_MAX_INSNS, which Go takes up to millions) or
 * TACH_E_NOMEM. */
int tachi_regex_compile(const char *pat, size_t n, struct tachi_regex **out,
			struct tachi_regex_err *err);
/* Whether the pattern matches somewhere in s[0, n), as Go's MatchString: 1 or 0, by the
 * lazy DFA; TACH_E_LIMIT once the handle's budget is spent (it stays spent), or
 * TACH_E_NOMEM. Uses scratch space and a cache inside re: not for concurrent use. */
int tachi_regex_match(struct tachi_regex *re, const char *s, size_t n);
/* The same answer by the NFA alone, with no budget: for tests, as the DFA's reference. */
bool tachi_regex_search_nfa(struct tachi_regex *re, const char *s, size_t n);
/* The most instructions matching may visit over the handle's life (default: no bound). A
 * visit is one instruction added to a state being made; taking a transition already made
 * costs none, so a budget bounds the whole cost at (budget + bytes matched) lookups. */
void tachi_regex_set_budget(struct tachi_regex *re, uint64_t steps);
/* The instructions visited so far, for tests. */
uint64_t tachi_regex_work(const struct tachi_regex *re);
/* The program's size, for tests and limits. */
size_t tachi_regex_size(const struct tachi_regex *re);
void tachi_regex_free(struct tachi_regex *re);

#endif
