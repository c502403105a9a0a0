/* OTLP/JSON in: the JSON form of an ExportProfilesServiceRequest (the Protobuf JSON
 * mapping with OTLP's rules, as tach2otlp --json writes it and collectors take it) made
 * into its protobuf form, which read.c then reads as it reads a protobuf file.
 *
 * The fields are those of json_schema.c's table (the writer's messages), by their
 * lowerCamelCase names; other keys are skipped, as a protobuf parser skips unknown
 * fields. 64-bit integers as strings or numbers, 32-bit ones as numbers (or strings),
 * bytes in base64 (standard or URL-safe, padding optional), trace and span IDs in hex,
 * null as the field's absence. Not read: doubleValue (no reader uses one). Repeated
 * scalars are written packed, as the writer writes them.
 *
 * Strict JSON (json.c): its syntax errors are at their byte offset; a value of the wrong
 * kind for its field is refused at its offset. What read.c then refuses (an index out of
 * its table, ...) is at the offset of the protobuf form, which the message says. Memory is
 * the input plus its protobuf form; nesting is bounded by the JSON parser's limit. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "base/protobuf.h"
#include "core/handles.h"
#include "formats/json_read.h"
#include "formats/otlp/json_schema.h"
#include "formats/otlp/read.h"

struct jr {
	struct tach_reader *r;
	char *sbuf;
	size_t scap;
};

static int msg_fields(struct jr *c, struct tachi_json *j, const struct otlp_jmsg *m,
		      struct tachi_pb_buf *b);

/* A decimal integer, from a number token or a string holding one. */
static int integer(struct jr *c, const struct tachi_jtok *t, bool is_unsigned, uint64_t *v)
{
	const uint8_t *p = c->r->in.data + t->start;
	size_t n = t->len, i = 0;
	bool neg = false;
	if ((t->type != TJ_NUMBER && t->type != TJ_STRING) || (t->type == TJ_STRING && t->escaped))
		return tachi_jr_bad(c->r, t->off, "OTLP/JSON: an integer field that is no integer");
	if (n && p[0] == '-' && !is_unsigned) {
		neg = true;
		i = 1;
	}
	uint64_t x = 0;
	if (i >= n)
		return tachi_jr_bad(c->r, t->off, "OTLP/JSON: an integer field that is no integer");
	for (; i < n; i++) {
		if (p[i] < '0' || p[i] > '9' || __builtin_mul_overflow(x, 10, &x) ||
		    __builtin_add_overflow(x, (uint64_t)(p[i] - '0'), &x))
			return tachi_jr_bad(c->r, t->off, "OTLP/JSON: an integer out of range (or "
							   "not a whole number)");
	}
	if (neg && x > (uint64_t)INT64_MAX + 1)
		return tachi_jr_bad(c->r, t->off, "OTLP/JSON: an integer out of range");
	*v = neg ? (uint64_t)0 - x : x;
	return TACH_OK;
}

static int b64val(uint8_t ch)
{
	if (ch >= 'A' && ch <= 'Z')
		return ch - 'A';
	if (ch >= 'a' && ch <= 'z')
		return ch - 'a' + 26;
	if (ch >= '0' && ch <= '9')
		return ch - '0' + 52;
	if (ch == '+' || ch == '-')
		return 62;
	if (ch == '/' || ch == '_')
		return 63;
	return -1;
}

/* Base64 (hex: hexadecimal) text s[0, n) decoded in place; its length into *out. */
static bool decode_bytes(char *s, size_t n, bool hex, size_t *out)
{
	size_t k = 0;
	if (hex) {
		if (n % 2)
			return false;
		for (size_t i = 0; i < n; i += 2) {
			int a = tachi_hexval(s[i]), b = tachi_hexval(s[i + 1]);
			if (a < 0 || b < 0)
				return false;
			s[k++] = (char)(a << 4 | b);
		}
		*out = k;
		return true;
	}
	while (n && s[n - 1] == '=')
		n--;
	uint32_t acc = 0;
	int bits = 0;
	for (size_t i = 0; i < n; i++) {
		int v = b64val((uint8_t)s[i]);
		if (v < 0)
			return false;
		acc = acc << 6 | (uint32_t)v;
		if ((bits += 6) >= 8) {
			bits -= 8;
			s[k++] = (char)(acc >> bits & 0xff);
		}
	}
	*out = k;
	return bits < 6;
}

/* A string, bytes or hex field's value t, as its bytes. */
static int string_field(struct jr *c, const struct otlp_jfield *f, const struct tachi_jtok *t,
			struct tachi_pb_buf *b)
{
	size_t n;
	if (t->type != TJ_STRING)
		return tachi_jr_bad(c->r, t->off, "OTLP/JSON: a string field that is no string");
	int rc = tachi_jr_string(c->r, t, &c->sbuf, &c->scap, &n);
	if (rc)
		return rc;
	if (f->kind != K_STR && !decode_bytes(c->sbuf, n, f->kind == K_HEX, &n))
		return tachi_jr_bad(c->r, t->off, f->kind == K_HEX ? "OTLP/JSON: an ID that is no hex"
								   : "OTLP/JSON: bytes that are no base64");
	return tachi_pb_put_bytes(b, f->num, n ? c->sbuf : "", n) ? TACH_OK : tachi_jr_nomem(c->r);
}

/* A scalar number (or bool) t of field f: its encoding alone (no key) onto b. */
static int scalar(struct jr *c, const struct otlp_jfield *f, const struct tachi_jtok *t,
		  struct tachi_pb_buf *b)
{
	uint64_t v = 0;
	int rc;
	if (f->kind == K_BOOL) {
		if (t->type != TJ_TRUE && t->type != TJ_FALSE)
			return tachi_jr_bad(c->r, t->off, "OTLP/JSON: a bool field that is no bool");
		v = t->type == TJ_TRUE;
	} else if ((rc = integer(c, t, f->kind == K_U32 || f->kind == K_U64 || f->kind == K_FX64,
				 &v))) {
		return rc;
	}
	if ((f->kind == K_I32 && (int64_t)v != (int32_t)v) || (f->kind == K_U32 && v > UINT32_MAX))
		return tachi_jr_bad(c->r, t->off, "OTLP/JSON: a 32-bit field out of range");
	if (f->kind != K_FX64)
		return tachi_pb_put_uvarint(b, v) ? TACH_OK : tachi_jr_nomem(c->r);
	if (!tachi_pb_reserve(b, 8))
		return tachi_jr_nomem(c->r);
	for (int i = 0; i < 8; i++)
		b->p[b->len++] = (uint8_t)(v >> (8 * i));
	return TACH_OK;
}

/* One value t of field f onto b (a message's or a scalar's whole field). */
static int value(struct jr *c, struct tachi_json *j, const struct otlp_jfield *f,
		 const struct tachi_jtok *t, struct tachi_pb_buf *b)
{
	if (f->kind == K_MSG) {
		struct tachi_pb_buf sub = { 0 };
		if (t->type != TJ_OBJECT)
			return tachi_jr_bad(c->r, t->off, "OTLP/JSON: a message field that is no object");
		int rc = msg_fields(c, j, f->msg, &sub);
		if (!rc && !tachi_pb_put_bytes(b, f->num, sub.len ? sub.p : (const uint8_t *)"", sub.len))
			rc = tachi_jr_nomem(c->r);
		free(sub.p);
		return rc;
	}
	if (f->kind == K_STR || f->kind == K_BYTES || f->kind == K_HEX)
		return string_field(c, f, t, b);
	if (f->kind == K_DBL)
		return TACH_OK;
	uint8_t wt = f->kind == K_FX64 ? TACHI_PB_I64 : TACHI_PB_VARINT;
	if (!tachi_pb_put_uvarint(b, TACHI_PB_KEY(f->num, wt)))
		return tachi_jr_nomem(c->r);
	return scalar(c, f, t, b);
}

/* A repeated field's array (j just inside it): messages and strings one field each,
 * scalars packed. */
static int repeated(struct jr *c, struct tachi_json *j, const struct otlp_jfield *f,
		    struct tachi_pb_buf *b)
{
	bool packed = f->kind != K_MSG && f->kind != K_STR && f->kind != K_BYTES &&
		      f->kind != K_HEX && f->kind != K_DBL;
	struct tachi_pb_buf pk = { 0 };
	struct tachi_jtok t;
	bool more;
	int rc;
	while (!(rc = tachi_json_elem(j, &more)) && more) {
		if ((rc = tachi_json_value(j, &t)))
			break;
		if (t.type == TJ_NULL)
			continue;
		if ((rc = packed ? scalar(c, f, &t, &pk) : value(c, j, f, &t, b)))
			break;
	}
	if (!rc && packed && pk.len && !tachi_pb_put_bytes(b, f->num, pk.p, pk.len))
		rc = tachi_jr_nomem(c->r);
	free(pk.p);
	return rc;
}

/* The fields of message m, whose '{' j has just read, onto b. */
static int msg_fields(struct jr *c, struct tachi_json *j, const struct otlp_jmsg *m,
		      struct tachi_pb_buf *b)
{
	struct tachi_jtok k, t;
	bool more;
	int rc;
	while (!(rc = tachi_json_key(j, &k, &more)) && more) {
		const struct otlp_jfield *f = NULL;
		for (size_t i = 0; i < m->n && !f; i++)
			if (tachi_json_str_eq(c->r->in.data, &k, m->f[i].name))
				f = &m->f[i];
		if (!f) {
			if ((rc = tachi_json_skip(j)))
				return rc;
			continue;
		}
		if ((rc = tachi_json_value(j, &t)))
			return rc;
		if (t.type == TJ_NULL)
			continue;
		if (f->rep && t.type != TJ_ARRAY)
			return tachi_jr_bad(c->r, t.off, "OTLP/JSON: a repeated field that is no array");
		if ((rc = f->rep ? repeated(c, j, f, b) : value(c, j, f, &t, b)))
			return rc;
	}
	return rc;
}

int tachi_or_json(struct tach_reader *r, uint8_t **out, size_t *n)
{
	struct jr c = { .r = r };
	struct tachi_pb_buf b = { 0 };
	struct tachi_json j;
	struct tachi_jtok t;
	int rc = tachi_jr_top(r, &j, &t, "OTLP/JSON: expected a JSON object");
	if (!rc)
		rc = msg_fields(&c, &j, &tachi_otlp_json_request, &b);
	if (!rc)
		rc = tachi_json_end(&j);
	free(c.sbuf);
	if (rc) {
		free(b.p);
		return rc;
	}
	*out = b.p;
	*n = b.len;
	return TACH_OK;
}
