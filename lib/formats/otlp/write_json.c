/* OTLP/JSON: the writer's request message, encoded as protobuf, written again as the OTLP
 * specification's JSON encoding of it (the Protobuf JSON mapping, with its OTLP rules):
 * field names in lowerCamelCase; 64-bit integers (int64, uint64, fixed64) as decimal
 * strings, 32-bit ones as numbers; bytes in base64, but for trace and span IDs, which are
 * hex; fields with their zero value left out, as the protobuf form leaves them out (a
 * message that is all zeros, a table's entry 0, is {}); repeated fields as arrays, in the
 * order the message holds them.
 *
 * Driven by the table of the messages the writer makes (json_schema.c: their fields'
 * names and kinds), so that the JSON says exactly what the protobuf form says. Fields the table does not name
 * are not written (the writer makes none).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "base/jsonout.h"
#include "base/protobuf.h"
#include "formats/otlp/otlp.h"
#include "formats/otlp/json_schema.h"

struct jctx {
	struct tachi_out *o;
	const uint8_t *p;
	char *esc;
	size_t esc_cap;
	int rc;
};

static void put(struct jctx *c, const char *s, size_t n)
{
	if (!c->rc && tachi_out_write(c->o, s, n))
		c->rc = TACH_E_IO;
}

static void puts_(struct jctx *c, const char *s)
{
	put(c, s, strlen(s));
}

static void put_string(struct jctx *c, const uint8_t *s, size_t n)
{
	bool repaired = false;
	if (n > (SIZE_MAX - 2) / 6 || !TACHI_RESERVE(c->esc, c->esc_cap, 6 * n + 2)) {
		c->rc = TACH_E_NOMEM;
		return;
	}
	size_t k = tachi_json_escape(c->esc + 1, (const char *)s, n, &repaired);
	c->esc[0] = '"';
	c->esc[k + 1] = '"';
	put(c, c->esc, k + 2);
}

static void put_base64(struct jctx *c, const uint8_t *s, size_t n, bool hex)
{
	static const char b64[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
	if (n > SIZE_MAX / 4 - 4 || !TACHI_RESERVE(c->esc, c->esc_cap, 2 * n + n / 3 * 4 + 8)) {
		c->rc = TACH_E_NOMEM;
		return;
	}
	char *e = c->esc;
	size_t k = 0;
	e[k++] = '"';
	for (size_t i = 0; hex && i < n; i++) {
		e[k++] = "0123456789abcdef"[s[i] >> 4];
		e[k++] = "0123456789abcdef"[s[i] & 15];
	}
	for (size_t i = 0; !hex && i < n; i += 3) {
		uint32_t v = (uint32_t)s[i] << 16 | (i + 1 < n ? (uint32_t)s[i + 1] << 8 : 0) |
			     (i + 2 < n ? s[i + 2] : 0);
		e[k++] = b64[v >> 18];
		e[k++] = b64[v >> 12 & 63];
		e[k++] = i + 1 < n ? b64[v >> 6 & 63] : '=';
		e[k++] = i + 2 < n ? b64[v & 63] : '=';
	}
	e[k++] = '"';
	put(c, e, k);
}

/* One number of kind k (v: the varint, or the fixed bits). */
static void put_number(struct jctx *c, uint8_t k, uint64_t v)
{
	char b[40];
	size_t n;
	switch (k) {
	case K_I32:
		n = tachi_fmt_i64(b, (int32_t)(uint32_t)v);
		break;
	case K_U32:
		n = tachi_fmt_u64(b, (uint32_t)v);
		break;
	case K_BOOL:
		puts_(c, v ? "true" : "false");
		return;
	case K_DBL: {
		double d;
		memcpy(&d, &v, 8);
		if (d != d || d - d != 0) {
			puts_(c, d != d ? "\"NaN\"" : d > 0 ? "\"Infinity\"" : "\"-Infinity\"");
			return;
		}
		n = (size_t)snprintf(b, sizeof(b), "%.17g", d);
		for (size_t i = 0; i < n; i++)
			if (b[i] == ',') /* a locale's decimal comma */
				b[i] = '.';
		break;
	}
	default: /* 64-bit integers are strings */
		b[0] = '"';
		n = 1 + (k == K_I64 ? tachi_fmt_i64(b + 1, (int64_t)v) : tachi_fmt_u64(b + 1, v));
		b[n++] = '"';
		break;
	}
	put(c, b, n);
}

static void put_msg(struct jctx *c, size_t off, size_t len, const struct otlp_jmsg *m);

/* A field's value (one element of a repeated one): a LEN field's bytes, or a number. */
static void put_value(struct jctx *c, const struct otlp_jfield *jf, const struct tachi_pb_field *f)
{
	switch (jf->kind) {
	case K_MSG:
		put_msg(c, f->off, f->len, jf->msg);
		break;
	case K_STR:
		put_string(c, c->p + f->off, f->len);
		break;
	case K_BYTES:
	case K_HEX:
		put_base64(c, c->p + f->off, f->len, jf->kind == K_HEX);
		break;
	default:
		put_number(c, jf->kind, f->v);
	}
}

/* The numbers of a packed field: varints, or 8 bytes each for fixed64 and double. */
static void put_packed(struct jctx *c, const struct otlp_jfield *jf, const struct tachi_pb_field *f,
		       bool *first)
{
	bool fixed = jf->kind == K_FX64 || jf->kind == K_DBL;
	for (size_t i = f->off, end = f->off + f->len; i < end && !c->rc;) {
		uint64_t v;
		if (fixed) {
			if (end - i < 8)
				break;
			v = tachi_rd64(c->p + i, false);
			i += 8;
		} else {
			size_t k = tachi_uvarint(c->p + i, c->p + end, &v);
			if (!k)
				break;
			i += k;
		}
		if (!*first)
			put(c, ",", 1);
		*first = false;
		put_number(c, jf->kind, v);
	}
}

/* Whether field f (of the message's bytes) is jf's. */
static bool is(const struct otlp_jfield *jf, const struct tachi_pb_field *f)
{
	return f->num == jf->num;
}

static void put_msg(struct jctx *c, size_t off, size_t len, const struct otlp_jmsg *m)
{
	size_t end = off + len;
	bool any = false;
	put(c, "{", 1);
	for (size_t i = 0; i < m->n && !c->rc; i++) {
		const struct otlp_jfield *jf = &m->f[i];
		struct tachi_pb_field f, last;
		bool found = false, opened = false, first = true;
		for (size_t pos = off; pos < end && !c->rc;) {
			if (tachi_pb_next(c->p, &pos, end, &f) != TACHI_PB_OK)
				break;
			if (!is(jf, &f))
				continue;
			if (!jf->rep) {
				last = f;
				found = true;
				continue;
			}
			if (!opened) {
				puts_(c, any ? ",\"" : "\"");
				puts_(c, jf->name);
				puts_(c, "\":[");
				any = opened = true;
			}
			if (f.wt == TACHI_PB_LEN && jf->kind != K_MSG && jf->kind != K_STR &&
			    jf->kind != K_BYTES && jf->kind != K_HEX) {
				put_packed(c, jf, &f, &first);
				continue;
			}
			if (!first)
				put(c, ",", 1);
			first = false;
			put_value(c, jf, &f);
		}
		if (opened)
			put(c, "]", 1);
		if (found) {
			puts_(c, any ? ",\"" : "\"");
			puts_(c, jf->name);
			puts_(c, "\":");
			any = true;
			put_value(c, jf, &last);
		}
	}
	put(c, "}", 1);
}

int tachi_otlp_json(struct tachi_out *o, const uint8_t *p, size_t n)
{
	struct jctx c = { o, p, NULL, 0, TACH_OK };
	put_msg(&c, 0, n, &tachi_otlp_json_request);
	put(&c, "\n", 1);
	free(c.esc);
	return c.rc;
}
