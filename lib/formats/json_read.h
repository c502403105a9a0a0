/* The steps that every JSON reader takes (json_read.c): speedscope/read.c and v8/read.c
 * use them, and a new JSON reader should too rather than write them again.
 *
 * Such a reader loads its whole input, checks it with base/json.h at open and keeps, for
 * what it needs later, the byte offset of a value (tachi_json_keys records them); it
 * reads the value again from there when it needs it. Failures go on the reader with the
 * offset of the value at fault. The helpers that the per-sample steps call are inline. */
#ifndef TACHFMT_FMT_JSON_READ_H
#define TACHFMT_FMT_JSON_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/json.h"
#include "core/handles.h"

/* How deep the readers' cursors nest: deeper than any profile format goes. */
#define TACHI_JR_NESTING 64

static inline int tachi_jr_nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

/* A format error at byte offset off, what the message. */
static inline int tachi_jr_bad(struct tach_reader *r, uint64_t off, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off, "%s", what);
}

/* A cursor at byte off of the input. */
static inline void tachi_jr_cursor(struct tach_reader *r, struct tachi_json *j, uint64_t off)
{
	tachi_json_init(j, r->in.data, r->in.size, (size_t)off, TACHI_JR_NESTING, &r->err);
	j->lone_at = r->json_lone_ok ? &r->json_lone_at : NULL;
}

/* The value at off (a key's recorded offset): its token, j left after its start. */
static inline int tachi_jr_value_at(struct tach_reader *r, struct tachi_json *j, uint64_t off,
				    struct tachi_jtok *t)
{
	tachi_jr_cursor(r, j, off);
	return tachi_json_value(j, t);
}

/* A number token's value in 10^-scale units; what names it in messages. */
static inline int tachi_jr_number(struct tach_reader *r, const struct tachi_jtok *t, int scale,
				  const char *what, int64_t *out)
{
	if (t->type != TJ_NUMBER)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off, "%s must be a number", what);
	struct tachi_jnum v;
	tachi_json_number(r->in.data, t, &v);
	if (!tachi_json_scaled(&v, scale, out))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off, "%s %.*s is out of range",
			     what, (int)(t->len > 40 ? 40 : t->len), (const char *)r->in.data + t->start);
	return TACH_OK;
}

/* A probe over p (maybe the input's first bytes only) that walks the top object's keys
 * (after a byte order mark): true once keys a and b have both been seen; at a key
 * decisive, what decide says (j just after its colon); false when p ends first. */
bool tachi_jr_probe_keys(const uint8_t *p, size_t n, const char *decisive,
			 bool (*decide)(struct tachi_json *j), const char *a, const char *b);
/* At open: the top value (after a byte order mark, which RFC 8259 lets a parser ignore)
 * into t, j just inside it; not_object is the message when it is no object. */
int tachi_jr_top(struct tach_reader *r, struct tachi_json *j, struct tachi_jtok *t,
		 const char *not_object);
/* The value at off must be an array, j just inside it; what names it in the message. */
int tachi_jr_begin_array(struct tach_reader *r, struct tachi_json *j, uint64_t off,
			 const char *what);
/* A key's string value that must be there: at the value's offset off (UINT64_MAX when
 * absent: message absent at offset at), into t; not_string the message when no string. */
int tachi_jr_need_string(struct tach_reader *r, uint64_t off, uint64_t at, const char *absent,
			 const char *not_string, struct tachi_jtok *t);
/* An optional integer in [min, max] (min >= -1) at off: *x is -1 when off is UINT64_MAX
 * (absent) or, with null_ok, the value is null. Else "WHAT must be an integer MIN..MAX". */
int tachi_jr_opt_int(struct tach_reader *r, uint64_t off, const char *what, int64_t min,
		     int64_t max, bool null_ok, int64_t *x);
/* A string token's text into *buf (grown to hold it; not terminated), its length in *n. */
int tachi_jr_string(struct tach_reader *r, const struct tachi_jtok *t, char **buf, size_t *cap,
		    size_t *n);

/* An array of objects read into a growing array of items, one at a time. */
struct tachi_jr_objects {
	const char *not_array;    /* messages: the value is no array, */
	const char *not_object;   /* an element is no object, */
	const char *too_many;     /* more than max elements */
	size_t max;
	size_t size;              /* an item's */
	/* The object whose '{' j has just read at off, into item (not cleared). */
	int (*read)(struct tach_reader *r, struct tachi_json *j, uint64_t off, void *item);
};
/* The array that is j's next value: each element into (*items)[*n], *n counting them. */
int tachi_jr_objects(struct tach_reader *r, struct tachi_json *j,
		     const struct tachi_jr_objects *spec, void **items, size_t *n, size_t *cap);

#endif
