/* The pprof writer's types mode (see pprof/write.c for the format): the value types,
 * period and default type of the input's meta, each Sample's summed values, and the
 * samples' own labels. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "core/handles.h"
#include "core/values.h"
#include "formats/pprof/write.h"

/* ---- several value types and the input's own labels (types mode) ----
 * When the meta names value types (a pprof input), they are written as they came: every
 * sample type with its unit, the period and its type, the default type, the duration and
 * start time; each Sample's values are the sums of its samples' own values (struct
 * tach_sample_ext), or, for a sample without them, its weight as the weight type's value.
 * A sample with extras carries exactly its own labels, and samples with different labels
 * are not merged. */

bool tachi_pw_labels_eq_types(const struct pprof_wstate *st, const struct lset *a,
			      const struct pprof_lkey *k)
{
	if (!a->ext)
		return true;
	if (a->nlab != k->ls.nlab)
		return false;
	/* no labels: there may be no array to point into */
	if (!a->nlab)
		return true;
	const struct tach_label *x = st->labs + a->lab0, *y = k->labs;
	for (uint32_t i = 0; i < a->nlab; i++)
		if (x[i].key != y[i].key || x[i].str != y[i].str || x[i].num != y[i].num ||
		    x[i].unit != y[i].unit)
			return false;
	return true;
}

uint64_t tachi_pw_labels_hash_types(const struct pprof_lkey *k)
{
	uint64_t h = k->ls.nlab;
	for (uint32_t i = 0; i < k->ls.nlab; i++) {
		const struct tach_label *l = &k->labs[i];
		h = tachi_mix64(h ^ ((uint64_t)l->key << 32 | l->str));
		h = tachi_mix64(h ^ (uint64_t)l->num ^ (uint64_t)l->unit << 40);
	}
	return h;
}

bool tachi_pw_keep_labels_types(struct pprof_wstate *st, struct pprof_lkey *q)
{
	if (!q->ls.ext)
		return true;
	if (st->nlabs > UINT32_MAX - q->ls.nlab ||
	    !TACHI_RESERVE(st->labs, st->labs_cap, st->nlabs + q->ls.nlab))
		return false;
	if (q->ls.nlab)
		memcpy(st->labs + st->nlabs, q->labs, q->ls.nlab * sizeof(*q->labs));
	q->ls.lab0 = (uint32_t)st->nlabs;
	st->nlabs += q->ls.nlab;
	return true;
}

/* The type strings, period, default type, and what a weight without values is worth. */
int tachi_pw_begin_types(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	const struct tach_meta *m = &w->meta;
	st->ntypes = m->value_type_count;
	if (!(st->type_str = malloc(2 * (size_t)st->ntypes * sizeof(*st->type_str))) ||
	    !(st->vbuf = malloc((size_t)st->ntypes * 10)))
		return NOMEM(w);
	for (uint32_t i = 0; i < st->ntypes; i++) {
		const char *t = m->value_types[i].type, *u = m->value_types[i].unit;
		if (!tachi_pw_own_str(st, t ? t : "", t ? strlen(t) : 0, &st->type_str[2 * i]) ||
		    !tachi_pw_own_str(st, u ? u : "", u ? strlen(u) : 0, &st->type_str[2 * i + 1]))
			return NOMEM(w);
	}
	if ((m->period_type && !tachi_pw_own_str(st, m->period_type, strlen(m->period_type), &st->s_ptype)) ||
	    (m->period_unit && !tachi_pw_own_str(st, m->period_unit, strlen(m->period_unit), &st->s_punit)))
		return NOMEM(w);
	st->s_dflt = m->default_type ? st->type_str[2 * (m->default_type - 1)] : 0;
	const char *u = m->value_types[m->weight_type].unit;
	uint64_t ns = u ? tachi_time_unit_ns(u, strlen(u)) : 0;
	st->time_div = !m->weight_unit && m->sample_time ? ns : 0;
	return TACH_OK;
}

int tachi_pw_add_values_types(struct tach_writer *w, uint32_t entry,
			      const struct tach_sample *s)
{
	struct pprof_wstate *st = w->state;
	size_t k = st->ntypes;
	if (entry >= st->nvals) {
		size_t old = st->vals_cap;
		if (!TACHI_RESERVE(st->vals, st->vals_cap, ((size_t)entry + 1) * k))
			return NOMEM(w);
		memset(st->vals + old, 0, (st->vals_cap - old) * sizeof(*st->vals));
		st->nvals = entry + 1;
	}
	int64_t *v = st->vals + (size_t)entry * k;
	const struct tach_sample_ext *e = st->ext;
	if (e && e->value_count == k) {
		for (size_t i = 0; i < k; i++)
			if (__builtin_add_overflow(v[i], e->values[i], &v[i]))
				goto big;
		return TACH_OK;
	}
	uint64_t x = st->time_div ? s->time_ns / st->time_div : s->weight;
	int64_t *t = &v[w->meta.weight_type];
	if (x > INT64_MAX || __builtin_add_overflow(*t, (int64_t)x, t))
		goto big;
	return TACH_OK;
big:
	return WFAIL(w, TACH_E_LIMIT, "a sample value exceeds pprof's 64-bit values");
}

/* Entry's values, encoded in st->vbuf. */
const uint8_t *tachi_pw_values_types(struct pprof_wstate *st, size_t entry, size_t *len)
{
	size_t n = 0;
	for (uint32_t i = 0; i < st->ntypes; i++)
		n += tachi_put_uvarint(st->vbuf + n, (uint64_t)st->vals[entry * st->ntypes + i]);
	*len = n;
	return st->vbuf;
}

bool tachi_pw_labels_types(struct pprof_wstate *st, struct tachi_pb_buf *m, const struct lset *ls)
{
	struct tachi_pb_buf lb = { 0 };
	bool ok = true;
	for (uint32_t i = 0; ok && i < ls->nlab; i++) {
		const struct tach_label *l = &st->labs[ls->lab0 + i];
		uint32_t key, str = 0, unit = 0;
		lb.len = 0;
		ok = tachi_pw_src_str(st, st->src, l->key, &key) &&
		     (l->str == TACH_NO_STRING || tachi_pw_src_str(st, st->src, l->str, &str)) &&
		     (l->unit == TACH_NO_STRING || tachi_pw_src_str(st, st->src, l->unit, &unit)) &&
		     tachi_pb_put_varint(&lb, LABEL_KEY, key) && tachi_pb_put_varint(&lb, LABEL_STR, str) &&
		     (l->str != TACH_NO_STRING || tachi_pb_put_varint(&lb, LABEL_NUM, (uint64_t)l->num)) &&
		     tachi_pb_put_varint(&lb, LABEL_NUM_UNIT, unit) &&
		     tachi_pb_put_bytes(m, SAMPLE_LABEL, lb.p, lb.len);
	}
	free(lb.p);
	return ok;
}

int tachi_pw_trailer_types(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	const struct tach_meta *mt = &w->meta;
	struct tachi_pb_buf *m = &st->msg;
	uint64_t t = (uint64_t)mt->start_time_ns;
	int rc;
	if (!t && __builtin_mul_overflow(mt->start_time_us, 1000, &t))
		t = 0;
	if ((t <= INT64_MAX && (rc = tachi_pw_emit_varint(w, PROFILE_TIME_NANOS, t))) ||
	    (mt->duration_ns > 0 &&
	     (rc = tachi_pw_emit_varint(w, PROFILE_DURATION_NANOS, (uint64_t)mt->duration_ns))))
		return rc;
	m->len = 0;
	if (st->s_ptype || st->s_punit) {
		if (!tachi_pw_value_type(m, st->s_ptype, st->s_punit))
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, PROFILE_PERIOD_TYPE, m)))
			return rc;
	}
	/* no comment of ours: pprof prints comments in its header, which stays the input's */
	if ((rc = tachi_pw_emit_varint(w, PROFILE_PERIOD, (uint64_t)mt->period)))
		return rc;
	return tachi_pw_emit_varint(w, PROFILE_DEFAULT_SAMPLE_TYPE, st->s_dflt);
}
