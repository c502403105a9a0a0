/* A strict RFC 8259 JSON pull parser over bytes in memory (json.c). Internal: the JSON
 * readers use it, with the steps they share in formats/json_read.h.
 *
 * The caller walks the document: tachi_json_value reads one value (a scalar whole, or
 * the opening bracket of a container), tachi_json_key and tachi_json_elem step through
 * an open object or array, tachi_json_skip passes over a value whatever it holds.
 * Nothing is allocated: strings and numbers are spans of the input, decoded on demand.
 * Any number of cursors may walk one buffer at once, each from its own offset.
 *
 * Strict: UTF-8 only (no BOM), escapes as the RFC lists them, \u surrogates paired, no
 * control characters in strings, numbers in the RFC's grammar (no NaN, Infinity, leading
 * '+' or zeros, hex), nesting at most max_depth deep. A failure is recorded in the
 * tachi_err given at init with the byte offset of the offending byte. */
#ifndef TACHFMT_JSON_H
#define TACHFMT_JSON_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define TACHI_JSON_MAX_DEPTH 512

enum { TJ_OBJECT = 1, TJ_ARRAY, TJ_STRING, TJ_NUMBER, TJ_TRUE, TJ_FALSE, TJ_NULL };

struct tachi_jtok {
	int type;
	size_t off;        /* where the value starts */
	size_t start, len; /* a string's body between its quotes, a number's text */
	bool escaped;      /* the string body holds backslash escapes */
};

struct tachi_json {
	const uint8_t *p;
	size_t n, pos;
	uint32_t depth, max_depth;
	bool fresh;        /* a container was just opened: no comma before its first item */
	uint8_t is_obj[TACHI_JSON_MAX_DEPTH / 8]; /* per level: an object (1) or array (0) */
	struct tachi_err *err;
	/* NULL: a \u escape of a lone surrogate is an error (RFC 8259 strings). Else such an
	 * escape, which JavaScript's JSON.stringify writes for a string with a lone surrogate,
	 * is taken (tachi_json_unescape gives U+FFFD for it) and the first one's offset + 1 is
	 * kept here, for the caller's warning. */
	uint64_t *lone_at;
};

/* A cursor at offset pos of p[0, n); max_depth is clamped to TACHI_JSON_MAX_DEPTH. */
void tachi_json_init(struct tachi_json *j, const uint8_t *p, size_t n, size_t pos,
		     uint32_t max_depth, struct tachi_err *err);
/* The next value. An object or array is entered: walk it with key or elem. */
int tachi_json_value(struct tachi_json *j, struct tachi_jtok *t);
/* In an object: the next key and its colon (*more true), or the closing brace (false). */
int tachi_json_key(struct tachi_json *j, struct tachi_jtok *key, bool *more);
/* In an array: true when an element follows (read it next), false at the closing bracket. */
int tachi_json_elem(struct tachi_json *j, bool *more);
/* Passes over the next value, containers and all, checking it as it goes. */
int tachi_json_skip(struct tachi_json *j);
/* Only whitespace may follow. */
int tachi_json_end(struct tachi_json *j);
/* Walks the object whose '{' was just read, recording in offs[i] where the value of key
 * want[i] starts (the last of a duplicated key wins; UINT64_MAX: absent) and skipping
 * every value. */
int tachi_json_keys(struct tachi_json *j, const char *const *want, uint64_t *offs, size_t n);
/* The length of a UTF-8 byte order mark at p (3), or 0. */
size_t tachi_json_bom(const uint8_t *p, size_t n);
/* For probes: p starts, after a byte order mark and whitespace, with '{'. */
bool tachi_json_object_start(const uint8_t *p, size_t n);

/* A string token's text into out (room for t->len bytes: decoding never grows it);
 * returns its length. The token must come from a successful tachi_json_value or key. */
size_t tachi_json_unescape(const uint8_t *p, const struct tachi_jtok *t, char *out);
/* Whether a string token's text is lit. */
bool tachi_json_str_eq(const uint8_t *p, const struct tachi_jtok *t, const char *lit);

/* A number token, exactly: value = (neg ? -1 : 1) * mant * 10^exp, with the first 19
 * significant digits in mant (dropped nonzero digits set inexact). */
struct tachi_jnum {
	bool neg, inexact;
	uint64_t mant;
	int64_t exp;
};
void tachi_json_number(const uint8_t *p, const struct tachi_jtok *t, struct tachi_jnum *v);
/* A number token of at most 18 plain digits (the common array index) as an integer;
 * false for anything else, which tachi_json_number then reads. */
static inline bool tachi_json_digits(const uint8_t *p, const struct tachi_jtok *t, uint64_t *out)
{
	if (t->len > 18)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < t->len; i++) {
		unsigned d = (unsigned)p[t->start + i] - '0';
		if (d > 9)
			return false;
		v = v * 10 + d;
	}
	*out = v;
	return true;
}
/* The number as an integer in [min, max] when it is one exactly ("3", "3.0", "30e-1"). */
bool tachi_json_int(const struct tachi_jnum *v, int64_t min, int64_t max, int64_t *out);
/* A token that is a number and an integer in [min, max] exactly (tachi_json_int). */
bool tachi_json_tok_int(const uint8_t *p, const struct tachi_jtok *t, int64_t min, int64_t max,
			int64_t *out);
/* value * 10^scale rounded to the nearest integer (halves away from zero); false when
 * that is outside int64_t. Locale-free and exact: no floating point. */
bool tachi_json_scaled(const struct tachi_jnum *v, int scale, int64_t *out);

#endif
