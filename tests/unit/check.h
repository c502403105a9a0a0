/* Non-fatal checks: every failure prints file:line and the run goes on, so one run shows
 * every problem; main returns the failure count. */
#ifndef TACHFMT_CHECK_H
#define TACHFMT_CHECK_H

#include <inttypes.h>
#include <stdio.h>
#include <string.h>

static int check_failures;

#define CHECK(cond)                                                                    \
	do {                                                                           \
		if (!(cond)) {                                                         \
			fprintf(stderr, "%s:%d: CHECK failed: %s\n", __FILE__, __LINE__, #cond); \
			check_failures++;                                              \
		}                                                                      \
	} while (0)

#define CHECK_EQ_U64(a, b)                                                             \
	do {                                                                           \
		uint64_t a_ = (uint64_t)(a), b_ = (uint64_t)(b);                        \
		if (a_ != b_) {                                                        \
			fprintf(stderr, "%s:%d: %s == %s failed: %" PRIu64 " != %" PRIu64 "\n", \
				__FILE__, __LINE__, #a, #b, a_, b_);                   \
			check_failures++;                                              \
		}                                                                      \
	} while (0)

#define CHECK_EQ_STR(a, b)                                                             \
	do {                                                                           \
		const char *a_ = (a), *b_ = (b);                                       \
		if (!a_ || !b_ || strcmp(a_, b_)) {                                    \
			fprintf(stderr, "%s:%d: %s == %s failed: \"%s\" != \"%s\"\n",  \
				__FILE__, __LINE__, #a, #b, a_ ? a_ : "(null)", b_ ? b_ : "(null)"); \
			check_failures++;                                              \
		}                                                                      \
	} while (0)

#define CHECK_DONE() (check_failures ? (fprintf(stderr, "%d check(s) failed\n", check_failures), 1) : 0)

#endif
