/* The JSON readers' shared steps (json_read.h): the ones not taken per sample. */
#include <stdio.h>
#include <stdlib.h>

#include "base/base.h"
#include "formats/json_read.h"

bool tachi_jr_probe_keys(const uint8_t *p, size_t n, const char *decisive,
			 bool (*decide)(struct tachi_json *j), const char *a, const char *b)
{
	struct tachi_err e = { 0 };
	struct tachi_json j;
	struct tachi_jtok t, k;
	bool more, seen_a = false, seen_b = false;
	tachi_json_init(&j, p, n, tachi_json_bom(p, n), TACHI_JR_NESTING, &e);
	if (tachi_json_value(&j, &t) || t.type != TJ_OBJECT)
		return false;
	while (!tachi_json_key(&j, &k, &more) && more) {
		if (tachi_json_str_eq(p, &k, decisive))
			return decide(&j);
		seen_a |= tachi_json_str_eq(p, &k, a);
		seen_b |= tachi_json_str_eq(p, &k, b);
		if (seen_a && seen_b)
			return true;
		if (tachi_json_skip(&j))
			return false;
	}
	return false;
}

int tachi_jr_top(struct tach_reader *r, struct tachi_json *j, struct tachi_jtok *t,
		 const char *not_object)
{
	int rc = tachi_jr_value_at(r, j, tachi_json_bom(r->in.data, r->in.size), t);
	if (rc)
		return rc;
	if (t->type != TJ_OBJECT)
		return tachi_jr_bad(r, t->off, not_object);
	return TACH_OK;
}

int tachi_jr_begin_array(struct tach_reader *r, struct tachi_json *j, uint64_t off,
			 const char *what)
{
	struct tachi_jtok t;
	int rc = tachi_jr_value_at(r, j, off, &t);
	if (rc)
		return rc;
	if (t.type != TJ_ARRAY)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off, "\"%s\" must be an array", what);
	return TACH_OK;
}

int tachi_jr_need_string(struct tach_reader *r, uint64_t off, uint64_t at, const char *absent,
			 const char *not_string, struct tachi_jtok *t)
{
	struct tachi_json j;
	int rc;
	if (off == UINT64_MAX)
		return tachi_jr_bad(r, at, absent);
	if ((rc = tachi_jr_value_at(r, &j, off, t)))
		return rc;
	if (t->type != TJ_STRING)
		return tachi_jr_bad(r, t->off, not_string);
	return TACH_OK;
}

int tachi_jr_opt_int(struct tach_reader *r, uint64_t off, const char *what, int64_t min,
		     int64_t max, bool null_ok, int64_t *x)
{
	struct tachi_json j;
	struct tachi_jtok t;
	*x = -1;
	if (off == UINT64_MAX)
		return TACH_OK;
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc || (null_ok && t.type == TJ_NULL))
		return rc;
	if (tachi_json_tok_int(r->in.data, &t, min, max, x))
		return TACH_OK;
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off, "%s must be an integer %lld..%lld%s",
		     what, (long long)min, (long long)max, null_ok ? " or null" : "");
}

int tachi_jr_string(struct tach_reader *r, const struct tachi_jtok *t, char **buf, size_t *cap,
		    size_t *n)
{
	if (!TACHI_RESERVE(*buf, *cap, t->len + 1))
		return tachi_jr_nomem(r);
	*n = tachi_json_unescape(r->in.data, t, *buf);
	return TACH_OK;
}

int tachi_jr_objects(struct tach_reader *r, struct tachi_json *j,
		     const struct tachi_jr_objects *spec, void **items, size_t *n, size_t *cap)
{
	struct tachi_jtok t;
	bool more;
	int rc = tachi_json_value(j, &t);
	if (rc)
		return rc;
	if (t.type != TJ_ARRAY)
		return tachi_jr_bad(r, t.off, spec->not_array);
	while (!(rc = tachi_json_elem(j, &more)) && more) {
		if ((rc = tachi_json_value(j, &t)))
			return rc;
		if (t.type != TJ_OBJECT)
			return tachi_jr_bad(r, t.off, spec->not_object);
		if (*n >= spec->max)
			return tachi_jr_bad(r, t.off, spec->too_many);
		if (*n + 1 > *cap && !tachi_reserve(items, cap, *n + 1, spec->size))
			return tachi_jr_nomem(r);
		if ((rc = spec->read(r, j, t.off, (char *)*items + *n * spec->size)))
			return rc;
		++*n;
	}
	return rc;
}
