/* JFR chunks: the header, the metadata event's types and the constant pools, and the
 * values of fields as the metadata lays them out (jfr/read.c describes the format and
 * what becomes of the events).
 *
 * Nothing here knows a field's place: every struct is read by walking its type's fields
 * in the order the chunk's metadata gives them, so a field the JDK adds between versions
 * (Thread's "virtual", Class's "hidden") is skipped by its type wherever it comes. Every
 * count is checked against the bytes left before it is used, nesting is bounded (a
 * struct type that contains itself, a metadata tree without end), a type that takes no
 * bytes is never looped over, and a string that refers to the pools refers at most
 * STRING_HOPS times (a pool entry that names itself). */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/io.h"
#include "core/handles.h"
#include "formats/jfr/jfr.h"

/* Deeper than any type the JDK or async-profiler define (Thread > ThreadGroup > ...):
 * nesting inline structs past this is refused, as is a metadata tree past MAX_ELEMENT. */
#define MAX_NEST 32
#define MAX_ELEMENT 16
#define STRING_HOPS 4

int tachi_jfr_fail(struct tach_reader *r, size_t at, const char *fmt, ...)
{
	char msg[300];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	const struct jfr_state *st = r->state;
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->origin + at, "%s", msg);
}

static size_t off(const struct jfr_cur *c)
{
	return (size_t)(c->p - c->base);
}

static int cut(struct tach_reader *r, const struct jfr_cur *c, const char *what)
{
	return tachi_jfr_fail(r, off(c), "%s runs past the end of its chunk", what);
}

/* ---- numbers and strings as the chunk writes them ---- */

/* A compressed integer: 7 bits a byte, low first, and a ninth byte of 8 bits. */
static int leb(struct tach_reader *r, struct jfr_cur *c, uint64_t *v)
{
	uint64_t x = 0;
	*v = 0; /* also on an error: callers' values are never left unset */
	for (unsigned i = 0; i < 9; i++) {
		if (c->p >= c->end)
			return cut(r, c, "a number");
		uint8_t b = *c->p++;
		if (i == 8) {
			x |= (uint64_t)b << 56;
			break;
		}
		x |= (uint64_t)(b & 0x7f) << (7 * i);
		if (!(b & 0x80))
			break;
	}
	*v = x;
	return TACH_OK;
}

/* An integer of width bytes: compressed where the chunk says so, else big-endian. */
static int num(struct tach_reader *r, struct jfr_cur *c, unsigned width, uint64_t *v)
{
	struct jfr_state *st = r->state;
	if (st->compressed && width > 1)
		return leb(r, c, v);
	if ((size_t)(c->end - c->p) < width)
		return cut(r, c, "a number");
	uint64_t x = 0;
	for (unsigned i = 0; i < width; i++)
		x = x << 8 | *c->p++;
	*v = x;
	return TACH_OK;
}

int tachi_jfr_varint(struct tach_reader *r, struct jfr_cur *c, uint64_t *v)
{
	return num(r, c, 8, v);
}

int tachi_jfr_lebs(struct tach_reader *r, struct jfr_cur *c, unsigned n, uint64_t *out)
{
	for (unsigned i = 0; i < n; i++) {
		const uint8_t *p = c->p;
		if (p < c->end && !(*p & 0x80)) { /* most keys and lines are one byte or two */
			out[i] = *p;
			c->p = p + 1;
		} else if (c->end - p >= 2 && !(p[1] & 0x80)) {
			out[i] = (uint64_t)(p[0] & 0x7f) | (uint64_t)p[1] << 7;
			c->p = p + 2;
		} else if (leb(r, c, &out[i])) {
			return r->err.code;
		}
	}
	return TACH_OK;
}

/* A count (of elements, bytes, strings, ...): at most the bytes left, each at least one. */
static int count(struct tach_reader *r, struct jfr_cur *c, const char *what, uint64_t *n)
{
	size_t at = off(c);
	int rc = num(r, c, 4, n);
	if (!rc && *n > (uint64_t)(c->end - c->p))
		return tachi_jfr_fail(r, at, "%s count %llu is more than the chunk's bytes left", what,
				      (unsigned long long)*n);
	return rc;
}

int tachi_jfr_count(struct tach_reader *r, struct jfr_cur *c, uint64_t *n)
{
	return count(r, c, "array element", n);
}

/* n compressed integers: the pool scan's and the frames' path, so a byte at a time
 * without the value (a ninth byte takes all 8 bits) */
static int skip_lebs(struct tach_reader *r, struct jfr_cur *c, uint64_t n)
{
	const uint8_t *p = c->p, *end = c->end;
	for (uint64_t i = 0; i < n; i++) {
		unsigned k = 0;
		for (;;) {
			if (p >= end) {
				c->p = p;
				return cut(r, c, "a number");
			}
			if (!(*p++ & 0x80) || ++k == 8)
				break;
		}
		if (k == 8) {
			if (p >= end) {
				c->p = p;
				return cut(r, c, "a number");
			}
			p++;
		}
	}
	c->p = p;
	return TACH_OK;
}

static int skip(struct tach_reader *r, struct jfr_cur *c, uint64_t n)
{
	if (n > (uint64_t)(c->end - c->p))
		return cut(r, c, "a value");
	c->p += n;
	return TACH_OK;
}

/* A string's encoding, and where its bytes or characters are. */
enum { S_NULL, S_EMPTY, S_POOL, S_UTF8, S_CHARS, S_LATIN1 };
struct jfr_str {
	int enc;
	uint64_t n;            /* bytes (UTF-8, Latin-1), characters, or the pool key */
	const uint8_t *p;
};

static int str_head(struct tach_reader *r, struct jfr_cur *c, struct jfr_str *s)
{
	size_t at = off(c);
	if (c->p >= c->end)
		return cut(r, c, "a string");
	s->enc = *c->p++;
	s->n = 0;
	s->p = NULL;
	int rc = TACH_OK;
	switch (s->enc) {
	case S_NULL:
	case S_EMPTY:
		break;
	case S_POOL:
		rc = num(r, c, 8, &s->n);
		break;
	case S_UTF8:
	case S_LATIN1:
		if (!(rc = count(r, c, "string byte", &s->n))) {
			s->p = c->p;
			c->p += s->n;
		}
		break;
	case S_CHARS:
		if ((rc = count(r, c, "string character", &s->n)))
			break;
		s->p = c->p;
		for (uint64_t i = 0, ch; !rc && i < s->n; i++)
			rc = num(r, c, 2, &ch);
		break;
	default:
		return tachi_jfr_fail(r, at, "string encoding %d is none of JFR's (0 to 5)", s->enc);
	}
	if (!rc && s->n > TACHI_MAX_STRING && s->enc != S_POOL)
		return tachi_jfr_fail(r, at, "a string of %llu characters is longer than the limit",
				      (unsigned long long)s->n);
	return rc;
}

static char *sbuf(struct tach_reader *r, size_t n)
{
	struct jfr_state *st = r->state;
	if (!TACHI_RESERVE(st->sbuf, st->sbuf_cap, n + 1)) {
		RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		return NULL;
	}
	return st->sbuf;
}

static size_t put_utf8(char *o, uint32_t u)
{
	if (u < 0x80) {
		o[0] = (char)u;
		return 1;
	}
	if (u < 0x800) {
		o[0] = (char)(0xC0 | u >> 6);
		o[1] = (char)(0x80 | (u & 0x3f));
		return 2;
	}
	if (u < 0x10000) {
		o[0] = (char)(0xE0 | u >> 12);
		o[1] = (char)(0x80 | (u >> 6 & 0x3f));
		o[2] = (char)(0x80 | (u & 0x3f));
		return 3;
	}
	o[0] = (char)(0xF0 | u >> 18);
	o[1] = (char)(0x80 | (u >> 12 & 0x3f));
	o[2] = (char)(0x80 | (u >> 6 & 0x3f));
	o[3] = (char)(0x80 | (u & 0x3f));
	return 4;
}

/* UTF-16 characters (as the chunk writes chars) to UTF-8; a lone surrogate as U+FFFD, as
 * Java's encoder replaces it. */
static int chars_utf8(struct tach_reader *r, const struct jfr_str *s, const uint8_t *end,
		      const char **out, size_t *len)
{
	char *o = sbuf(r, (size_t)s->n * 3);
	if (!o)
		return TACH_E_NOMEM;
	struct jfr_cur c = { s->p, end, s->p };
	size_t n = 0;
	uint64_t hi = 0, ch = 0;
	for (uint64_t i = 0; i < s->n; i++) {
		if (num(r, &c, 2, &ch))
			return r->err.code;
		ch &= 0xffff;
		if (hi && ch >= 0xDC00 && ch < 0xE000) {
			n += put_utf8(o + n, (uint32_t)(0x10000 + ((hi - 0xD800) << 10) + (ch - 0xDC00)));
			hi = 0;
			continue;
		}
		if (hi)
			n += put_utf8(o + n, 0xFFFD);
		hi = 0;
		if (ch >= 0xD800 && ch < 0xDC00)
			hi = ch;
		else
			n += put_utf8(o + n, ch >= 0xDC00 && ch < 0xE000 ? 0xFFFD : (uint32_t)ch);
	}
	if (hi)
		n += put_utf8(o + n, 0xFFFD);
	o[n] = 0;
	*out = o;
	*len = n;
	return TACH_OK;
}

/* The string at c as UTF-8 (*out NULL: null), following pool references. */
static int string_at(struct tach_reader *r, struct jfr_cur *c, const char **out, size_t *len)
{
	struct jfr_state *st = r->state;
	struct jfr_str s;
	for (unsigned hop = 0;; hop++) {
		size_t at = off(c);
		int rc = str_head(r, c, &s);
		if (rc)
			return rc;
		if (s.enc != S_POOL)
			break;
		size_t to;
		if (hop == STRING_HOPS)
			return tachi_jfr_fail(r, at, "a string refers to the pools more than %d times "
					      "over", STRING_HOPS);
		if (st->tix[T_STRING] == JFR_NONE || !tachi_jfr_const(st, st->tix[T_STRING], s.n, &to)) {
			*out = NULL; /* a key the pools lack reads as null, as in the JDK */
			*len = 0;
			return TACH_OK;
		}
		c->p = c->base + to;
	}
	*len = 0;
	*out = s.enc == S_NULL ? NULL : "";
	if (s.enc == S_UTF8) {
		*out = (const char *)s.p;
		*len = (size_t)s.n;
	} else if (s.enc == S_LATIN1) {
		char *o = sbuf(r, (size_t)s.n * 2);
		size_t n = 0;
		if (!o)
			return TACH_E_NOMEM;
		for (uint64_t i = 0; i < s.n; i++)
			n += put_utf8(o + n, s.p[i]);
		o[n] = 0;
		*out = o;
		*len = n;
	} else if (s.enc == S_CHARS) {
		return chars_utf8(r, &s, c->end, out, len);
	}
	return TACH_OK;
}

/* ---- values by their types ---- */

/* Bytes of each integer kind when not compressed (bytes and booleans never are). */
static const uint8_t widths[] = { [JK_BOOL] = 1, [JK_BYTE] = 1, [JK_CHAR] = 2,
				  [JK_SHORT] = 2, [JK_INT] = 4, [JK_LONG] = 8 };

static int skip_value(struct tach_reader *r, struct jfr_cur *c, uint32_t t, unsigned depth);

static int skip_field(struct tach_reader *r, struct jfr_cur *c, const struct jfr_field *f,
		      unsigned depth)
{
	struct jfr_state *st = r->state;
	uint64_t v, n = 1;
	int rc;
	if (f->array && (rc = count(r, c, "array element", &n)))
		return rc;
	if (f->cp) {
		if (st->compressed)
			return skip_lebs(r, c, n);
		for (uint64_t i = 0; i < n; i++)
			if ((rc = num(r, c, 8, &v)))
				return rc;
		return TACH_OK;
	}
	if (st->types[f->type].empty)
		return TACH_OK;
	if (st->types[f->type].flat) /* n is at most the bytes left, lebs at most FLAT_MAX */
		return skip_lebs(r, c, n * st->types[f->type].lebs);
	for (uint64_t i = 0; i < n; i++)
		if ((rc = skip_value(r, c, f->type, depth)))
			return rc;
	return TACH_OK;
}

static int skip_value(struct tach_reader *r, struct jfr_cur *c, uint32_t t, unsigned depth)
{
	struct jfr_state *st = r->state;
	const struct jfr_type *ty = &st->types[t];
	uint64_t v;
	struct jfr_str s;
	switch (ty->kind) {
	case JK_FLOAT:
		return skip(r, c, 4);
	case JK_DOUBLE:
		return skip(r, c, 8);
	case JK_STRING:
		return str_head(r, c, &s);
	case JK_STRUCT:
		break;
	default:
		return num(r, c, widths[ty->kind], &v);
	}
	if (ty->flat)
		return skip_lebs(r, c, ty->lebs);
	if (depth >= MAX_NEST)
		return tachi_jfr_fail(r, off(c), "values nested deeper than %d (type %s)", MAX_NEST,
				      ty->name);
	for (uint32_t i = 0; i < ty->nfields; i++) {
		int rc = skip_field(r, c, &st->fields[ty->field0 + i], depth + 1);
		if (rc)
			return rc;
	}
	return TACH_OK;
}

static int field_value(struct tach_reader *r, struct jfr_cur *c, const struct jfr_field *f,
		       struct jfr_val *v)
{
	struct jfr_state *st = r->state;
	const struct jfr_type *ty = &st->types[f->type];
	v->type = f->type;
	v->array = f->array;
	v->cp = f->cp;
	v->at = off(c);
	if (f->cp && !f->array) {
		v->kind = JV_KEY;
		return num(r, c, 8, &v->u);
	}
	if (f->array || ty->kind == JK_STRUCT) {
		v->kind = JV_AT;
		return skip_field(r, c, f, 0);
	}
	if (ty->kind == JK_STRING) {
		v->kind = JV_STR;
		return skip_field(r, c, f, 0);
	}
	v->kind = JV_NUM;
	if (ty->kind == JK_FLOAT || ty->kind == JK_DOUBLE) {
		unsigned w = ty->kind == JK_FLOAT ? 4 : 8;
		if ((size_t)(c->end - c->p) < w)
			return cut(r, c, "a number");
		v->u = 0;
		for (unsigned i = 0; i < w; i++)
			v->u = v->u << 8 | *c->p++;
		return TACH_OK;
	}
	int rc = num(r, c, widths[ty->kind], &v->u);
	/* Java's integers are signed; the wire holds their bits (an int -1 as 0xffffffff) */
	if (ty->kind == JK_INT)
		v->u = (uint64_t)(int64_t)(int32_t)(uint32_t)v->u;
	else if (ty->kind == JK_SHORT)
		v->u = (uint64_t)(int64_t)(int16_t)(uint16_t)v->u;
	else if (ty->kind == JK_BYTE)
		v->u = (uint64_t)(int64_t)(int8_t)(uint8_t)v->u;
	else if (ty->kind == JK_CHAR)
		v->u &= 0xffff;
	return rc;
}

int tachi_jfr_struct(struct tach_reader *r, struct jfr_cur *c, uint32_t t,
		     const char *const *want, size_t n, struct jfr_val *out)
{
	struct jfr_state *st = r->state;
	const struct jfr_type *ty = &st->types[t];
	for (size_t k = 0; k < n; k++)
		out[k].kind = JV_NONE;
	if (ty->kind != JK_STRUCT)
		return tachi_jfr_fail(r, off(c), "a value of type %s where a struct belongs", ty->name);
	for (uint32_t i = 0; i < ty->nfields; i++) {
		const struct jfr_field *f = &st->fields[ty->field0 + i];
		size_t k = 0;
		while (k < n && strcmp(want[k], f->name))
			k++;
		int rc = k < n ? field_value(r, c, f, &out[k]) : skip_field(r, c, f, 0);
		if (rc)
			return rc;
	}
	return TACH_OK;
}

int tachi_jfr_struct_slots(struct tach_reader *r, struct jfr_cur *c, uint32_t t,
			   const int8_t *slot, struct jfr_val *out, size_t n)
{
	struct jfr_state *st = r->state;
	const struct jfr_type *ty = &st->types[t];
	for (size_t k = 0; k < n; k++)
		out[k].kind = JV_NONE;
	if (ty->kind != JK_STRUCT)
		return tachi_jfr_fail(r, off(c), "a value of type %s where a struct belongs", ty->name);
	for (uint32_t i = 0; i < ty->nfields; i++) {
		uint32_t fi = ty->field0 + i;
		const struct jfr_field *f = &st->fields[fi];
		int rc = slot[fi] >= 0 && (size_t)slot[fi] < n ? field_value(r, c, f, &out[slot[fi]]) :
			 skip_field(r, c, f, 0);
		if (rc)
			return rc;
	}
	return TACH_OK;
}

static bool const_eq(void *ctx, uint32_t i, const void *key)
{
	const struct jfr_state *st = ctx;
	const struct jfr_const *k = key;
	return st->consts[i].key == k->key && st->consts[i].type == k->type;
}

static uint64_t const_hash(uint32_t t, uint64_t key)
{
	return tachi_mix64(key ^ (uint64_t)t << 48 ^ (uint64_t)t);
}

bool tachi_jfr_const(const struct jfr_state *st, uint32_t t, uint64_t key, size_t *at)
{
	struct jfr_const k = { key, t, 0, 0 };
	uint32_t i;
	if (!tachi_idset_find(&st->const_ix, const_hash(t, key), &k, const_eq, (void *)st, &i))
		return false;
	*at = st->ckpt[st->consts[i].ck].at + st->consts[i].at;
	return true;
}

bool tachi_jfr_struct_at(struct tach_reader *r, const struct jfr_val *v, struct jfr_cur *c)
{
	struct jfr_state *st = r->state;
	size_t at;
	if (v->kind == JV_KEY) {
		if (!tachi_jfr_const(st, v->type, v->u, &at))
			return false;
	} else if (v->kind == JV_AT && !v->array) {
		at = v->at;
	} else {
		return false;
	}
	c->base = st->d;
	c->p = st->d + at;
	c->end = st->d + st->chunk_end;
	return st->types[v->type].kind == JK_STRUCT;
}

/* A struct of one field (a Symbol, a FrameType, a ThreadState) stands for its field. */
int tachi_jfr_string(struct tach_reader *r, const struct jfr_val *v, const char **s, size_t *n)
{
	struct jfr_state *st = r->state;
	struct jfr_val cur = *v;
	*s = NULL;
	*n = 0;
	for (unsigned hop = 0; hop <= STRING_HOPS; hop++) {
		struct jfr_cur c = { st->d + cur.at, st->d + st->chunk_end, st->d };
		const struct jfr_type *ty = &st->types[cur.type];
		if (cur.kind == JV_STR)
			return string_at(r, &c, s, n);
		if (cur.kind == JV_KEY && ty->kind == JK_STRING) {
			size_t at;
			if (!tachi_jfr_const(st, cur.type, cur.u, &at))
				return TACH_OK;
			c.p = st->d + at;
			return string_at(r, &c, s, n);
		}
		if ((cur.kind != JV_KEY && cur.kind != JV_AT) || cur.array || ty->nfields != 1 ||
		    !tachi_jfr_struct_at(r, &cur, &c))
			return TACH_OK;
		const char *name = st->fields[ty->field0].name;
		int rc = tachi_jfr_struct(r, &c, cur.type, &name, 1, &cur);
		if (rc)
			return rc;
	}
	return TACH_OK;
}

/* A double as Java's (long) makes it: NaN 0, past the range its nearest end. */
static int64_t java_long(double v)
{
	if (v != v)
		return 0;
	if (v >= 9223372036854775807.0)
		return INT64_MAX;
	if (v <= -9223372036854775808.0)
		return INT64_MIN;
	return (int64_t)v;
}

/* Java's long arithmetic wraps. */
static int64_t java_add(int64_t a, int64_t b)
{
	return (int64_t)((uint64_t)a + (uint64_t)b);
}

int64_t tachi_jfr_ticks_ns(const struct jfr_state *st, int64_t ticks)
{
	/* the JDK's TimeConverter: start + (ticks - start ticks) / (ticks per ns), in double */
	double div = (double)st->ticks_per_s / 1e9;
	int64_t d = java_add(ticks, (int64_t)(0 - (uint64_t)st->start_ticks));
	return java_add(st->start_ns, java_long((double)d / div));
}

int64_t tachi_jfr_span_ns(const struct jfr_state *st, int64_t ticks)
{
	double div = (double)st->ticks_per_s / 1e9;
	return java_long((double)ticks / div);
}

/* ---- the metadata ---- */

struct meta_strings {
	size_t *off;           /* into st->arena */
	uint64_t n;
};

static int meta_string(struct tach_reader *r, struct jfr_cur *c, struct meta_strings *ms,
		       const char **s)
{
	uint64_t i = 0;
	size_t at = off(c);
	*s = ""; /* also on an error */
	int rc = num(r, c, 4, &i);
	if (rc)
		return rc;
	if (i >= ms->n)
		return tachi_jfr_fail(r, at, "metadata string %llu of %llu", (unsigned long long)i,
				      (unsigned long long)ms->n);
	*s = ((struct jfr_state *)r->state)->arena + ms->off[i];
	return TACH_OK;
}

/* The element's attributes this reader uses. */
struct meta_attrs {
	const char *name, *id, *super, *cls, *cp, *dim;
};

static int meta_element(struct tach_reader *r, struct jfr_cur *c, struct meta_strings *ms,
			unsigned depth, uint32_t in_type);

static int meta_attrs(struct tach_reader *r, struct jfr_cur *c, struct meta_strings *ms,
		      struct meta_attrs *a)
{
	uint64_t n;
	int rc = count(r, c, "attribute", &n);
	memset(a, 0, sizeof(*a));
	for (uint64_t i = 0; !rc && i < n; i++) {
		const char *k, *v;
		if ((rc = meta_string(r, c, ms, &k)) || (rc = meta_string(r, c, ms, &v)))
			break;
		const char **to = !strcmp(k, "name") ? &a->name : !strcmp(k, "id") ? &a->id :
				  !strcmp(k, "superType") ? &a->super : !strcmp(k, "class") ? &a->cls :
				  !strcmp(k, "constantPool") ? &a->cp : !strcmp(k, "dimension") ? &a->dim :
				  NULL;
		if (to)
			*to = v;
	}
	return rc;
}

static bool dec_u64(const char *s, uint64_t *v)
{
	return s && tachi_parse_dec(s, strlen(s), UINT64_MAX, v);
}

static int add_type(struct tach_reader *r, size_t at, const struct meta_attrs *a, uint32_t *t)
{
	struct jfr_state *st = r->state;
	uint64_t id;
	if (!a->name || !dec_u64(a->id, &id))
		return tachi_jfr_fail(r, at, "a metadata class without a name or a numeric id");
	if (!TACHI_RESERVE(st->types, st->types_cap, st->ntypes + 1) || st->ntypes >= JFR_NONE - 1)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	*t = (uint32_t)st->ntypes;
	st->types[st->ntypes++] = (struct jfr_type){ .id = id, .name = a->name, .super = a->super,
						      .field0 = (uint32_t)st->nfields };
	return TACH_OK;
}

static int add_field(struct tach_reader *r, size_t at, const struct meta_attrs *a, uint32_t t)
{
	struct jfr_state *st = r->state;
	uint64_t id;
	if (!a->name || !dec_u64(a->cls, &id))
		return tachi_jfr_fail(r, at, "a metadata field without a name or a numeric class");
	struct jfr_type *ty = &st->types[t];
	/* a type's fields are contiguous: a field after another class began is not its */
	if (ty->field0 + ty->nfields != st->nfields)
		return tachi_jfr_fail(r, at, "the fields of class %s are not together", ty->name);
	if (!TACHI_RESERVE(st->fields, st->fields_cap, st->nfields + 1) || st->nfields >= JFR_NONE - 1)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->fields[st->nfields++] = (struct jfr_field){
		.name = a->name, .type_id = id, .type = JFR_NONE,
		.cp = a->cp && !strcmp(a->cp, "true"), .array = a->dim && strcmp(a->dim, "0") };
	ty->nfields++;
	return TACH_OK;
}

/* An element and its children: "class" elements become types, a class's "field"
 * children its fields; everything else (annotations, settings, regions) is passed over. */
static int meta_element(struct tach_reader *r, struct jfr_cur *c, struct meta_strings *ms,
			unsigned depth, uint32_t in_type)
{
	size_t at = off(c);
	const char *name;
	struct meta_attrs a;
	uint64_t n;
	uint32_t t = JFR_NONE;
	if (depth >= MAX_ELEMENT)
		return tachi_jfr_fail(r, at, "metadata elements nested deeper than %d", MAX_ELEMENT);
	int rc = meta_string(r, c, ms, &name);
	if (rc || (rc = meta_attrs(r, c, ms, &a)))
		return rc;
	if (!strcmp(name, "class") && (rc = add_type(r, at, &a, &t)))
		return rc;
	if (!strcmp(name, "field") && in_type != JFR_NONE && (rc = add_field(r, at, &a, in_type)))
		return rc;
	if ((rc = count(r, c, "metadata element", &n)))
		return rc;
	for (uint64_t i = 0; i < n; i++)
		if ((rc = meta_element(r, c, ms, depth + 1, t)))
			return rc;
	return TACH_OK;
}

static int arena_add(struct tach_reader *r, const char *s, size_t n, size_t *at)
{
	struct jfr_state *st = r->state;
	if (!TACHI_RESERVE(st->arena, st->arena_cap, st->arena_len + n + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	*at = st->arena_len;
	if (n)
		memcpy(st->arena + st->arena_len, s, n);
	st->arena[st->arena_len + n] = 0;
	st->arena_len += n + 1;
	return TACH_OK;
}

/* The metadata event's strings, into the arena (they hold no pool references). */
static int meta_strings(struct tach_reader *r, struct jfr_cur *c, struct meta_strings *ms)
{
	int rc = count(r, c, "metadata string", &ms->n);
	if (rc)
		return rc;
	if (!(ms->off = malloc((size_t)(ms->n ? ms->n : 1) * sizeof(*ms->off))))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	for (uint64_t i = 0; i < ms->n; i++) {
		size_t at = off(c), n;
		const char *s;
		if (c->p < c->end && *c->p == S_POOL)
			return tachi_jfr_fail(r, at, "a metadata string refers to the constant pools");
		if ((rc = string_at(r, c, &s, &n)) || (rc = arena_add(r, s ? s : "", n, &ms->off[i])))
			return rc;
		if (memchr(s ? s : "", 0, n))
			return tachi_jfr_fail(r, at, "a metadata name holds a NUL byte");
	}
	return TACH_OK;
}

static enum jfr_kind kind_of(const char *name)
{
	static const struct { const char *n; enum jfr_kind k; } prims[] = {
		{ "boolean", JK_BOOL }, { "byte", JK_BYTE }, { "char", JK_CHAR },
		{ "short", JK_SHORT }, { "int", JK_INT }, { "long", JK_LONG },
		{ "float", JK_FLOAT }, { "double", JK_DOUBLE }, { "java.lang.String", JK_STRING },
	};
	for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
		if (!strcmp(name, prims[i].n))
			return prims[i].k;
	return JK_STRUCT;
}

static bool type_eq(void *ctx, uint32_t i, const void *key)
{
	const struct jfr_state *st = ctx;
	return st->types[i].id == *(const uint64_t *)key;
}

static bool type_find(const struct jfr_state *st, uint64_t id, uint32_t *t)
{
	return tachi_idset_find(&st->type_ix, tachi_mix64(id), &id, type_eq, (void *)st, t);
}

/* Which structs are compressed integers only (struct jfr_type.flat): a struct is once
 * each of its fields is (a pool key, an integer wider than a byte, a flat struct), found
 * in passes as the empty ones are; one that contains itself never is. */
#define FLAT_MAX 4096u
static void flat_types(struct jfr_state *st)
{
	if (!st->compressed)
		return;
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t i = 0; i < st->ntypes; i++) {
			struct jfr_type *ty = &st->types[i];
			uint64_t lebs = 0;
			uint32_t k = 0;
			if (ty->flat || ty->kind != JK_STRUCT || ty->empty)
				continue;
			for (; k < ty->nfields; k++) {
				const struct jfr_field *f = &st->fields[ty->field0 + k];
				const struct jfr_type *ft = &st->types[f->type];
				if (f->array)
					break;
				if (f->cp || ft->kind == JK_SHORT || ft->kind == JK_CHAR ||
				    ft->kind == JK_INT || ft->kind == JK_LONG)
					lebs++;
				else if (ft->flat)
					lebs += ft->lebs;
				else if (!ft->empty)
					break;
			}
			if (k == ty->nfields && lebs && lebs <= FLAT_MAX) {
				ty->flat = true;
				ty->lebs = (uint32_t)lebs;
				changed = true;
			}
		}
	}
}

/* Types by id, each field's type, the kinds, and which structs take no bytes (every
 * struct empty at first; one becomes not empty while any field takes bytes). */
static int link_types(struct tach_reader *r, size_t at)
{
	struct jfr_state *st = r->state;
	for (uint32_t i = 0; i < st->ntypes; i++) {
		uint32_t o;
		struct jfr_type *ty = &st->types[i];
		if (type_find(st, ty->id, &o))
			return tachi_jfr_fail(r, at, "metadata class id %llu is given twice",
					      (unsigned long long)ty->id);
		if (!tachi_idset_insert(&st->type_ix, tachi_mix64(ty->id), i))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		ty->kind = (uint8_t)kind_of(ty->name);
		ty->empty = ty->kind == JK_STRUCT;
	}
	for (size_t i = 0; i < st->nfields; i++)
		if (!type_find(st, st->fields[i].type_id, &st->fields[i].type))
			return tachi_jfr_fail(r, at, "metadata field %s has class id %llu, which no class "
					      "has", st->fields[i].name,
					      (unsigned long long)st->fields[i].type_id);
	for (bool changed = true; changed;) {
		changed = false;
		for (uint32_t i = 0; i < st->ntypes; i++) {
			struct jfr_type *ty = &st->types[i];
			for (uint32_t k = 0; ty->empty && k < ty->nfields; k++) {
				const struct jfr_field *f = &st->fields[ty->field0 + k];
				if (f->cp || f->array || !st->types[f->type].empty)
					ty->empty = false, changed = true;
			}
		}
	}
	flat_types(st);
	return TACH_OK;
}

static uint32_t type_named(const struct jfr_state *st, const char *name)
{
	for (uint32_t i = 0; i < st->ntypes; i++)
		if (!strcmp(st->types[i].name, name))
			return i;
	return JFR_NONE;
}

static void name_types(struct jfr_state *st)
{
	static const char *const names[T_COUNT] = {
		"java.lang.Thread", "jdk.types.StackTrace", "jdk.types.StackFrame",
		"jdk.types.Method", "java.lang.Class", "jdk.types.Symbol", "java.lang.String",
		"jdk.types.FrameType", "jdk.types.ThreadState",
	};
	static const char *const events[EV_COUNT] = {
		"jdk.ExecutionSample", "jdk.NativeMethodSample", "profiler.WallClockSample",
		"jdk.CPUTimeSample", "jdk.ObjectAllocationInNewTLAB",
		"jdk.ObjectAllocationOutsideTLAB", "jdk.ObjectAllocationSample",
		"jdk.JavaMonitorEnter", "jdk.ThreadPark",
	};
	for (int i = 0; i < T_COUNT; i++)
		st->tix[i] = type_named(st, names[i]);
	for (int i = 0; i < EV_COUNT; i++)
		st->ev_type[i] = type_named(st, events[i]);
}

/* An event's size and type at c; *end where it ends (within the chunk). */
static int event_head(struct tach_reader *r, struct jfr_cur *c, uint64_t *type, const uint8_t **end)
{
	size_t at = off(c);
	uint64_t size = 0;
	int rc = num(r, c, 4, &size);
	if (rc || (rc = num(r, c, 8, type)))
		return rc;
	if (size < (uint64_t)(c->p - (c->base + at)) || size > (uint64_t)(c->end - (c->base + at)))
		return tachi_jfr_fail(r, at, "event size %llu %s", (unsigned long long)size,
				      size > (uint64_t)(c->end - (c->base + at)) ?
				      "runs past the end of its chunk" : "is smaller than its header");
	*end = c->base + at + size;
	return TACH_OK;
}

/* The size of the chunk's metadata event (checked again as it is read). */
static int meta_size(struct tach_reader *r, size_t *len)
{
	struct jfr_state *st = r->state;
	struct jfr_cur c = { st->d + st->meta_at, st->d + st->chunk_end, st->d };
	uint64_t type;
	const uint8_t *end;
	int rc = event_head(r, &c, &type, &end);
	*len = rc ? 0 : (size_t)(end - c.base) - st->meta_at;
	return rc;
}

static int read_metadata(struct tach_reader *r, size_t at)
{
	struct jfr_state *st = r->state;
	struct jfr_cur c = { st->d + at, st->d + st->chunk_end, st->d };
	struct meta_strings ms = { NULL, 0 };
	uint64_t type, v;
	const uint8_t *end;
	int rc = event_head(r, &c, &type, &end);
	if (rc)
		return rc;
	if (type != 0)
		return tachi_jfr_fail(r, at, "the chunk's metadata offset points at an event of type "
				      "%llu, not the metadata (0)", (unsigned long long)type);
	c.end = end;
	for (int i = 0; !rc && i < 3; i++) /* start, duration, metadata id */
		rc = num(r, &c, 8, &v);
	if (!rc)
		rc = meta_strings(r, &c, &ms);
	if (!rc)
		rc = meta_element(r, &c, &ms, 0, JFR_NONE);
	free(ms.off);
	if (!rc)
		rc = link_types(r, at);
	if (!rc)
		name_types(st);
	return rc;
}

/* ---- the constant pools ---- */

static int add_const(struct tach_reader *r, uint32_t ck, uint32_t t, uint64_t key, size_t at)
{
	struct jfr_state *st = r->state;
	size_t old;
	/* a key given again (a later checkpoint repeats it) keeps its first value */
	if (tachi_jfr_const(st, t, key, &old))
		return TACH_OK;
	if (!TACHI_RESERVE(st->consts, st->consts_cap, st->nconsts + 1) || st->nconsts >= JFR_NONE - 1 ||
	    !tachi_idset_insert(&st->const_ix, const_hash(t, key), (uint32_t)st->nconsts))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->consts[st->nconsts++] = (struct jfr_const){ key, t, ck, at - st->ckpt[ck].at };
	return TACH_OK;
}

/* A constant pool event's pools, c after its type: start, duration, delta to the
 * previous pool event, a flush byte, then per pool a type, a count and key/value pairs. */
static int read_pools(struct tach_reader *r, struct jfr_cur *c, uint32_t ck)
{
	struct jfr_state *st = r->state;
	uint64_t v, npools;
	int rc = TACH_OK;
	for (int i = 0; !rc && i < 3; i++)
		rc = num(r, c, 8, &v);
	if (rc || (rc = skip(r, c, 1)) || (rc = count(r, c, "constant pool", &npools)))
		return rc;
	for (uint64_t i = 0; i < npools; i++) {
		uint64_t id, n;
		uint32_t t;
		size_t at = off(c);
		if ((rc = num(r, c, 8, &id)))
			return rc;
		if (!type_find(st, id, &t))
			return tachi_jfr_fail(r, at, "a constant pool of class id %llu, which the "
					      "metadata does not define", (unsigned long long)id);
		if ((rc = count(r, c, "constant", &n)))
			return rc;
		for (uint64_t k = 0; k < n; k++) {
			uint64_t key = 0;
			if ((rc = num(r, c, 8, &key)) || (rc = add_const(r, ck, t, key, off(c))) ||
			    (rc = skip_value(r, c, t, 0)))
				return rc;
		}
	}
	return TACH_OK;
}

/* Where the chunk's constant pool events are (into st->next_ckpt), in file order: all
 * of them, not only the chain the header starts, so that no loop in the chain matters.
 * Every event's size is checked on the way. */
static int find_pools(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	struct jfr_cur c = { st->d + st->chunk + JFR_HEADER, st->d + st->chunk_end, st->d };
	st->nnext = 0;
	while (c.p < c.end) {
		uint64_t type = 0;
		const uint8_t *end = NULL;
		size_t at = off(&c);
		int rc = event_head(r, &c, &type, &end);
		if (rc)
			return rc;
		if (type == 1) {
			if (!TACHI_RESERVE(st->next_ckpt, st->next_cap, st->nnext + 1) ||
			    st->nnext >= JFR_NONE - 1)
				return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
			st->next_ckpt[st->nnext++] = (struct jfr_span){ at, (size_t)(end - c.base) - at };
		}
		c.p = end;
	}
	return TACH_OK;
}

/* The pools of the events find_pools found, each constant where it is. */
static int scan_pools(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	for (uint32_t i = 0; i < st->nckpt; i++) {
		const struct jfr_span *sp = &st->ckpt[i];
		struct jfr_cur c = { st->d + sp->at, st->d + sp->at + sp->len, st->d };
		uint64_t size, type;
		int rc;
		if ((rc = num(r, &c, 4, &size)) || (rc = num(r, &c, 8, &type)) ||
		    (rc = read_pools(r, &c, i)))
			return rc;
	}
	return TACH_OK;
}

/* Whether the chunk's metadata and pools are byte for byte the previous chunk's (`cat
 * a.jfr a.jfr`, a recording repeated): then its keys mean what they meant, and what the
 * previous chunk read of its stacks, methods and threads holds. A stream compares with
 * its copy of them (keep_pools), a mapped file with the chunk before in place. */
static bool same_pools(const struct jfr_state *st, size_t prev_meta, bool prev_compressed,
		       size_t meta_len)
{
	const uint8_t *p = st->stream ? st->prev : st->d + prev_meta;
	if (!st->chunks || st->ntypes == 0 || st->compressed != prev_compressed ||
	    meta_len != st->meta_len || st->nnext != st->nckpt ||
	    memcmp(st->d + st->meta_at, p, meta_len))
		return false;
	p += meta_len;
	for (size_t i = 0; i < st->nnext; i++) {
		const uint8_t *q = st->stream ? p : st->d + st->ckpt[i].at;
		if (st->next_ckpt[i].len != st->ckpt[i].len ||
		    memcmp(st->d + st->next_ckpt[i].at, q, st->ckpt[i].len))
			return false;
		p += st->ckpt[i].len;
	}
	return true;
}

/* Stream mode: the chunk's metadata and pool events copied into prev, in same_pools'
 * order, before the next chunk takes the buffer. */
static int keep_pools(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	size_t n = st->meta_len;
	for (size_t i = 0; i < st->nckpt; i++)
		n += st->ckpt[i].len; /* spans of the chunk: their sum is within it */
	if (!TACHI_RESERVE(st->prev, st->prev_cap, n + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	memcpy(st->prev, st->d + st->meta_at, st->meta_len);
	n = st->meta_len;
	for (size_t i = 0; i < st->nckpt; i++) {
		memcpy(st->prev + n, st->d + st->ckpt[i].at, st->ckpt[i].len);
		n += st->ckpt[i].len;
	}
	return TACH_OK;
}

/* ---- events by type ---- */

static bool kind_eq(void *ctx, uint32_t i, const void *key)
{
	const struct jfr_state *st = ctx;
	return !strcmp(st->kinds_arena + st->kinds[i].name, key);
}

/* The chunk's counts by type into the counts by name (before its metadata goes). */
static int flush_kinds(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	for (uint32_t i = 0; st->tcount && i < st->ntypes; i++) {
		if (!st->tcount[i])
			continue;
		const char *name = st->types[i].name;
		size_t n = strlen(name);
		uint64_t h = tachi_hash(name, n);
		uint32_t k;
		if (!tachi_idset_find(&st->kinds_ix, h, name, kind_eq, st, &k)) {
			if (!TACHI_RESERVE(st->kinds, st->kinds_cap, st->nkinds + 1) ||
			    !TACHI_RESERVE(st->kinds_arena, st->kinds_cap2, st->kinds_len + n + 1) ||
			    !tachi_idset_insert(&st->kinds_ix, h, (uint32_t)st->nkinds))
				return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
			memcpy(st->kinds_arena + st->kinds_len, name, n + 1);
			k = (uint32_t)st->nkinds++;
			st->kinds[k] = (struct jfr_kind_count){ st->kinds_len, 0 };
			st->kinds_len += n + 1;
		}
		st->kinds[k].n += st->tcount[i];
		st->tcount[i] = 0;
	}
	return TACH_OK;
}

static int kind_order(const void *a, const void *b, void *ctx)
{
	const struct jfr_kind_count *x = a, *y = b;
	const char *arena = ctx;
	if (x->n != y->n)
		return x->n > y->n ? -1 : 1;
	return strcmp(arena + x->name, arena + y->name);
}

int tachi_jfr_kinds(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	int rc = flush_kinds(r);
	if (rc)
		return rc;
	if (st->nkinds)
		qsort_r(st->kinds, st->nkinds, sizeof(*st->kinds), kind_order, st->kinds_arena);
	size_t len = 1;
	for (size_t i = 0; i < st->nkinds; i++)
		len += strlen(st->kinds_arena + st->kinds[i].name) + 22;
	free(st->kinds_text);
	if (!(st->kinds_text = malloc(len)))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	size_t n = 0;
	st->kinds_text[0] = 0;
	for (size_t i = 0; i < st->nkinds; i++)
		n += (size_t)snprintf(st->kinds_text + n, len - n, "%s %llu\n",
				      st->kinds_arena + st->kinds[i].name,
				      (unsigned long long)st->kinds[i].n);
	r->meta.record_kinds = st->kinds_text;
	return TACH_OK;
}

/* ---- chunks ---- */

static void chunk_reset(struct jfr_state *st)
{
	st->ntypes = st->nfields = st->arena_len = st->nconsts = 0;
	st->nstacks = st->nsframes = st->nthreads = st->nmethods = st->nfcache = 0;
	tachi_idset_free(&st->fcache_ix);
	tachi_idset_free(&st->type_ix);
	tachi_idset_free(&st->const_ix);
	tachi_idset_free(&st->stack_ix);
	tachi_idset_free(&st->thread_ix);
	tachi_idset_free(&st->method_ix);
	memset(&st->type_ix, 0, sizeof(st->type_ix));
	memset(&st->const_ix, 0, sizeof(st->const_ix));
	memset(&st->stack_ix, 0, sizeof(st->stack_ix));
	memset(&st->thread_ix, 0, sizeof(st->thread_ix));
	memset(&st->method_ix, 0, sizeof(st->method_ix));
	for (size_t i = 0; i < sizeof(st->ftype_file) / sizeof(st->ftype_file[0]); i++)
		st->ftype_file[i] = JFR_NONE;
}

void tachi_jfr_chunk_free(struct jfr_state *st)
{
	chunk_reset(st);
	free(st->types);
	free(st->fields);
	free(st->arena);
	free(st->consts);
	free(st->ckpt);
	free(st->next_ckpt);
	free(st->tcount);
	free(st->kinds);
	free(st->kinds_arena);
	free(st->kinds_text);
	tachi_idset_free(&st->kinds_ix);
	free(st->stacks);
	free(st->sframes);
	free(st->threads);
	free(st->methods);
	free(st->fcache);
	free(st->cbuf);
	free(st->prev);
}

static int64_t be64(const uint8_t *p)
{
	return (int64_t)((uint64_t)tachi_rd32be(p) << 32 | tachi_rd32be(p + 4));
}

/* What is lost when the chunk at st->chunk cannot be read whole: a warning, and the end
 * of the input; an error when no chunk came before it. */
static int chunk_lost(struct tach_reader *r, const char *why)
{
	struct jfr_state *st = r->state;
	uint64_t left = st->size - st->chunk;
	bool more = false;
	if (!st->chunks)
		return tachi_jfr_fail(r, st->chunk, "the recording's first chunk %s: nothing to read",
				      why);
	/* a stream's bytes past what is held: read past and counted, as a file's are known */
	for (size_t got = 1; st->stream && got && !more;) {
		char skip[4096];
		int rc = tachi_in_read(&r->in, skip, sizeof(skip), &r->err, &got);
		if (rc)
			return rc;
		left += got;
		more = left > r->lim.max_input;
	}
	int rc = tachi_soft_fail(r, st->origin + st->chunk, "the chunk here %s: its %llu%s bytes "
				 "are not read (the %llu chunks before it are)", why,
				 (unsigned long long)left, more ? " or more" : "",
				 (unsigned long long)st->chunks);
	return rc ? rc : TACH_EOF;
}

static int chunk_header(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	const uint8_t *h = st->d + st->chunk;
	size_t left = st->size - st->chunk;
	if (left < JFR_HEADER)
		return memcmp(h, "FLR", left < 3 ? left : 3) && st->chunks ?
		       tachi_jfr_fail(r, st->chunk, "%zu bytes after the last chunk are no chunk", left) :
		       chunk_lost(r, "is cut short within its header");
	if (memcmp(h, "FLR\0", 4))
		return tachi_jfr_fail(r, st->chunk, "no chunk starts here (no \"FLR\\0\" magic)");
	unsigned major = (unsigned)h[4] << 8 | h[5], minor = (unsigned)h[6] << 8 | h[7];
	if (major != 2)
		return RFAIL(r, TACH_E_UNSUPPORTED, TACH_POS_OFFSET, st->origin + st->chunk,
			     "JFR format %u.%u is not read (only 2.0, JDK 11 and async-profiler, and "
			     "2.1, JDK 14 and later)%s", major, minor,
			     major == 1 ? ": JDK 8 and 9 write 1.x; convert it with a newer JDK's "
			     "`jfr` tool first" : "");
	int64_t size = be64(h + 8), cp = be64(h + 16), meta = be64(h + 24);
	if (size < (int64_t)JFR_HEADER && size != 0)
		return tachi_jfr_fail(r, st->chunk, "chunk size %lld is smaller than its header",
				      (long long)size);
	if (size == 0 || cp <= 0 || meta <= 0)
		return chunk_lost(r, "is unfinished (its recorder did not close it)");
	if ((uint64_t)size > left)
		return chunk_lost(r, "is cut short");
	if (cp < (int64_t)JFR_HEADER || cp >= size || meta < (int64_t)JFR_HEADER || meta >= size)
		return tachi_jfr_fail(r, st->chunk, "the chunk's constant pool or metadata offset is "
				      "outside the chunk");
	st->chunk_end = st->chunk + (size_t)size;
	st->minor = minor;
	st->start_ns = be64(h + 32);
	st->start_ticks = be64(h + 48);
	st->ticks_per_s = be64(h + 56);
	/* the low bit of the flags word: integers compressed (the JDK keeps its state byte
	 * at 64 and its flags at 67, async-profiler writes one 32-bit word) */
	st->compressed = h[67] & 1;
	if (st->ticks_per_s <= 0)
		return tachi_jfr_fail(r, st->chunk + 56, "ticks per second %lld",
				      (long long)st->ticks_per_s);
	st->meta_at = st->chunk + (size_t)meta;
	return TACH_OK;
}

/* Stream mode: up to n more bytes of the input after what cbuf holds (fewer at its end),
 * read in steps that at most double the buffer, so that memory follows what came. */
static int stream_more(struct tach_reader *r, uint64_t n)
{
	struct jfr_state *st = r->state;
	while (n) {
		size_t step = st->size > (1u << 20) ? st->size : (1u << 20), got = 0;
		if (step > n)
			step = (size_t)n;
		if (!TACHI_RESERVE(st->cbuf, st->cbuf_cap, st->size + step))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		st->d = st->cbuf;
		int rc = tachi_in_read(&r->in, st->cbuf + st->size, step, &r->err, &got);
		if (rc)
			return rc;
		st->size += got;
		n -= got;
		if (got < step)
			break;
	}
	return TACH_OK;
}

/* Stream mode: the next chunk whole in cbuf (at 0), the one before let go of: its header,
 * then the bytes it says it has, or what comes before the input ends (chunk_header says
 * what is wrong with a header and that a chunk is cut short). A chunk is held whole, as
 * its events come before the metadata that lays them out: one larger than max_input is
 * refused. */
static int stream_chunk(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	st->origin += st->size;
	st->size = st->chunk = 0;
	int rc = stream_more(r, JFR_HEADER);
	if (rc || st->size < JFR_HEADER || memcmp(st->d, "FLR\0", 4))
		return rc;
	int64_t size = be64(st->d + 8);
	if (size <= (int64_t)JFR_HEADER)
		return TACH_OK;
	if ((uint64_t)size > r->lim.max_input)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, st->origin, "a chunk of %lld bytes, "
			     "more than the limit of %llu bytes a stream's chunk is held in (see "
			     "--max-input)", (long long)size, (unsigned long long)r->lim.max_input);
	return stream_more(r, (uint64_t)size - JFR_HEADER);
}

int tachi_jfr_chunk(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	int rc = st->stream ? stream_chunk(r) : TACH_OK;
	if (rc)
		return rc;
	if (st->chunk >= st->size)
		return TACH_EOF;
	size_t prev_meta = st->meta_at, meta_len;
	bool prev_compressed = st->compressed;
	rc = chunk_header(r);
	if (rc || (rc = find_pools(r)) || (rc = meta_size(r, &meta_len)))
		return rc;
	st->reused = same_pools(st, prev_meta, prev_compressed, meta_len);
	struct jfr_span *sp = st->ckpt;
	size_t cap = st->ckpt_cap;
	st->ckpt = st->next_ckpt, st->ckpt_cap = st->next_cap, st->nckpt = st->nnext;
	st->next_ckpt = sp, st->next_cap = cap;
	st->meta_len = meta_len;
	if (!st->reused) {
		st->meta_len = 0; /* until the metadata is read whole */
		if ((rc = flush_kinds(r)))
			return rc;
		chunk_reset(st);
		if ((rc = read_metadata(r, st->meta_at)) || (rc = scan_pools(r)))
			return rc;
		if (!TACHI_RESERVE(st->tcount, st->tcount_cap, st->ntypes + 1))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		memset(st->tcount, 0, (st->ntypes + 1) * sizeof(*st->tcount));
		st->meta_len = meta_len;
		if (st->stream && (rc = keep_pools(r)))
			return rc;
	}
	st->pos = st->chunk + JFR_HEADER;
	st->chunks++;
	/* nothing before this chunk is read again (a reused chunk's constants are found in
	 * its own pools, which are the same bytes): a mapped file's pages there go back, so
	 * memory follows the largest chunk and the stacks, not the recording */
	tachi_in_release(&r->in, st->chunk);
	return TACH_OK;
}

/* The recorded process's id: the pid of the chunk's first jdk.JVMInformation event (the
 * JDK writes one per chunk since JDK 14, async-profiler one per recording); -1 without
 * one. A walk over event heads, which find_pools has checked already. */
int tachi_jfr_pid(struct tach_reader *r, int32_t *pid)
{
	struct jfr_state *st = r->state;
	uint32_t t = type_named(st, "jdk.JVMInformation");
	struct jfr_cur c = { st->d + st->chunk + JFR_HEADER, st->d + st->chunk_end, st->d };
	*pid = -1;
	while (t != JFR_NONE && c.p < c.end) {
		static const char *const want[] = { "pid" };
		uint64_t type = 0;
		const uint8_t *end = NULL;
		struct jfr_val v;
		int rc = event_head(r, &c, &type, &end);
		if (rc || type != st->types[t].id) {
			if (rc)
				return rc;
			c.p = end;
			continue;
		}
		struct jfr_cur e = { c.p, end, st->d };
		if ((rc = tachi_jfr_struct(r, &e, t, want, 1, &v)))
			return rc;
		if (v.kind == JV_NUM && v.u > 0 && v.u <= INT32_MAX)
			*pid = (int32_t)v.u;
		return TACH_OK;
	}
	return TACH_OK;
}

int tachi_jfr_event(struct tach_reader *r, uint64_t *type, struct jfr_cur *c)
{
	struct jfr_state *st = r->state;
	struct jfr_cur h = { st->d + st->pos, st->d + st->chunk_end, st->d };
	const uint8_t *end = NULL;
	int rc = event_head(r, &h, type, &end);
	if (rc)
		return rc;
	*c = (struct jfr_cur){ h.p, end, st->d };
	st->pos = (size_t)(end - st->d);
	uint32_t t;
	if (*type > 1 && type_find(st, *type, &t))
		st->tcount[t]++;
	return TACH_OK;
}
