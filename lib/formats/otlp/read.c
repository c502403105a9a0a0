/* OTLP reader: an ExportProfilesServiceRequest (or ProfilesData: the same two fields) of
 * OpenTelemetry's v1development profiles schema, in protobuf, read whole.
 *
 * Samples: an entry per timestamp of every Sample (a Sample without timestamps is one, at
 * its Profile's start time), in time order (the order of the file where times are equal).
 * Profiles whose Samples pair up one to one (the same stack, attributes and timestamps, as
 * tachfmt's writer and others make a Profile per sample type) are read together, each
 * entry carrying every type's value; otherwise each Profile's samples come on their own,
 * with 0 for the other types.
 *   - Profiles of the types tachfmt's writer makes (samples/count, marked tachfmt.weights,
 *     then wall or cpu/nanoseconds) give the weights and the samples' time_ns back, the interval from
 *     the period, and no value types: the samples as they were put.
 *   - Any other: the meta's value types are the Profiles' types, each entry's values its
 *     extras; the weight is the first count type's value (a Sample with timestamps and no
 *     values counts 1 per timestamp, as the schema says), else 1; the time (time_ns) a time
 *     type's value, else the weight's periods where the period is a time (async-profiler's
 *     cpu/count at 1 ms). Entries with no weight (a count of 0) are left out, said once.
 *   - Attributes: thread.id the thread id (else a thread.name of async-profiler's form
 *     "[name tid=N]" gives it), tachfmt.interpreter.id and tachfmt.thread.status; all but
 *     those three are the samples' labels (numbers with their units).
 *   - A Location's Lines are its frames, innermost first, all but the last inlined into the
 *     next; a Location with none is named by module and file offset when its address is in
 *     its mapping, else by its address, as the pprof reader names them. tachfmt.frame.*
 *     attributes give back what a TACH frame had beyond the Line.
 *   - Mappings with their ranges, offsets, files and build IDs
 *     (process.executable.build_id.*); the Resource's process.executable.path (or .name)
 *     is the program.
 * OTLP/JSON is made into its protobuf form first (read_json.c). Not read: links, the
 * original payload, the scope, dropped-attribute counts.
 * Memory: the input, and per entry its time and values.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/protobuf.h"
#include "model/dict.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/values.h"
#include "formats/comm.h"
#include "formats/otlp/read.h"

/* ---- Profiles and Samples ---- */

/* A known field of a message with the wire type its schema gives it: wts[num] (0 for an
 * unknown number, whatever its type; LEN + 1 for a repeated number, LEN or VARINT). A
 * field of a known number with another type is no such message: a pprof file read as
 * OTLP stops at its first field, a ValueType's numbers where a ResourceProfiles is. */
#define WT_ANY 0
#define WT(t) ((t) + 1)
#define WT_NUMS 9
static int check_wt(struct tach_reader *r, const struct tachi_pb_field *f, const uint8_t *wts,
		    size_t n)
{
	if (f->num >= n || wts[f->num] == WT_ANY)
		return TACH_OK;
	if (wts[f->num] == WT_NUMS ? f->wt == TACHI_PB_VARINT || f->wt == TACHI_PB_LEN
				   : f->wt == wts[f->num] - 1)
		return TACH_OK;
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, f->at, "field %u: wire type %u, not the "
		     "schema's", f->num, f->wt);
}
static const uint8_t rp_wts[] = { [RP_RESOURCE] = WT(TACHI_PB_LEN),
	[RP_SCOPE_PROFILES] = WT(TACHI_PB_LEN), [RP_SCHEMA_URL] = WT(TACHI_PB_LEN) };
static const uint8_t sp_wts[] = { [SP_SCOPE] = WT(TACHI_PB_LEN),
	[SP_PROFILES] = WT(TACHI_PB_LEN), [SP_SCHEMA_URL] = WT(TACHI_PB_LEN) };
static const uint8_t prof_wts[] = { [PROF_SAMPLE_TYPE] = WT(TACHI_PB_LEN),
	[PROF_SAMPLES] = WT(TACHI_PB_LEN), [PROF_TIME_UNIX_NANO] = WT(TACHI_PB_I64),
	[PROF_DURATION_NANO] = WT(TACHI_PB_VARINT), [PROF_PERIOD_TYPE] = WT(TACHI_PB_LEN),
	[PROF_PERIOD] = WT(TACHI_PB_VARINT), [PROF_PROFILE_ID] = WT(TACHI_PB_LEN),
	[PROF_DROPPED] = WT(TACHI_PB_VARINT), [PROF_ORIGINAL_FORMAT] = WT(TACHI_PB_LEN),
	[PROF_ORIGINAL_PAYLOAD] = WT(TACHI_PB_LEN), [PROF_ATTRIBUTES] = WT_NUMS };
static const uint8_t smp_wts[] = { [SMP_STACK] = WT(TACHI_PB_VARINT), [SMP_ATTRIBUTES] = WT_NUMS,
	[SMP_LINK] = WT(TACHI_PB_VARINT), [SMP_VALUES] = WT_NUMS, [SMP_TIMESTAMPS] = WT_ANY };
#define NWT(a) (sizeof(a) / sizeof(a[0]))

static int value_type(struct tach_reader *r, const struct tachi_pb_field *vf, uint32_t *type,
		      uint32_t *unit)
{
	struct otlp_rstate *st = r->state;
	size_t pos = vf->off, end = vf->off + vf->len, n = st->ntab[DICT_STRING] + !st->ntab[DICT_STRING];
	int rc;
	while (pos < end) {
		struct tachi_pb_field f;
		if ((rc = tachi_or_field(r, &pos, end, &f)))
			return rc;
		if (f.wt == TACHI_PB_VARINT && (f.num == VT_TYPE || f.num == VT_UNIT) &&
		    (rc = tachi_or_index(r, f.at, f.v, n, "string", f.num == VT_TYPE ? type : unit)))
			return rc;
	}
	return TACH_OK;
}

static int add_attr(struct tach_reader *r, void *ctx, uint32_t i, size_t at)
{
	struct otlp_rstate *st = r->state;
	(void)ctx;
	(void)at;
	const struct rsmp *s = ctx;
	if (!i)
		return TACH_OK;
	/* each of a Sample's samples gives them all: a bound keeps that cost the records' */
	if (st->naidx - s->a0 >= MAX_SAMPLE_ATTRS)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, at, "a sample with more than %u "
			     "attributes", MAX_SAMPLE_ATTRS);
	if (st->naidx >= UINT32_MAX - 1 || !TACHI_RESERVE(st->aidx, st->acap, st->naidx + 1))
		return tachi_or_nomem(r);
	st->aidx[st->naidx++] = i;
	return TACH_OK;
}

/* A Sample's stack and attributes (its timestamps and values are read with the entries). */
static int sample_head(struct tach_reader *r, const struct tachi_pb_field *sf)
{
	struct otlp_rstate *st = r->state;
	size_t pos = sf->off, end = sf->off + sf->len;
	if (st->nsmps >= UINT32_MAX - 1 || !TACHI_RESERVE(st->smps, st->scap, st->nsmps + 1))
		return tachi_or_nomem(r);
	struct rsmp *s = &st->smps[st->nsmps];
	*s = (struct rsmp){ 0, (uint32_t)st->naidx, 0, sf->off, sf->len };
	int rc;
	while (pos < end) {
		struct tachi_pb_field f;
		if ((rc = tachi_or_field(r, &pos, end, &f)) || (rc = check_wt(r, &f, smp_wts, NWT(smp_wts))))
			return rc;
		if (f.num == SMP_STACK && f.wt == TACHI_PB_VARINT &&
		    (rc = tachi_or_index(r, f.at, f.v, st->ntab[DICT_STACK] + !st->ntab[DICT_STACK],
					 "stack", &s->stack)))
			return rc;
		if (f.num == SMP_ATTRIBUTES &&
		    (rc = tachi_or_each(r, &f, st->ntab[DICT_ATTRIBUTE], "attribute", add_attr, s)))
			return rc;
	}
	s->na = (uint32_t)(st->naidx - s->a0);
	st->nsmps++;
	return TACH_OK;
}

/* Whether a Profile attribute is tachfmt's mark of its own types. */
static int weights_mark(struct tach_reader *r, void *ctx, uint32_t a, size_t at)
{
	struct rprof *p = ctx;
	uint32_t key, unit;
	struct anyv v;
	int rc = a ? tachi_or_attribute(r, a, &key, &unit, &v) : TACH_OK;
	(void)at;
	if (!rc && a && v.is_num && v.num == 1 && tachi_or_str_is(r->state, key, OTLP_WEIGHTS))
		p->weights = true;
	return rc;
}

static int profile_field(struct tach_reader *r, struct rprof *p, const struct tachi_pb_field *f)
{
	switch (f->num) {
	case PROF_SAMPLE_TYPE:
	case PROF_PERIOD_TYPE:
		if (f->wt != TACHI_PB_LEN)
			return tachi_or_want(r, f, TACHI_PB_LEN);
		return f->num == PROF_SAMPLE_TYPE ? value_type(r, f, &p->type, &p->unit)
						  : value_type(r, f, &p->ptype, &p->punit);
	case PROF_SAMPLES:
		if (f->wt != TACHI_PB_LEN)
			return tachi_or_want(r, f, TACHI_PB_LEN);
		p->nsmp++;
		return sample_head(r, f);
	case PROF_TIME_UNIX_NANO:
		if (f->wt == TACHI_PB_I64)
			p->time = f->v;
		return TACH_OK;
	case PROF_DURATION_NANO:
		if (f->wt == TACHI_PB_VARINT)
			p->duration = f->v;
		return TACH_OK;
	case PROF_PERIOD:
		if (f->wt == TACHI_PB_VARINT)
			p->period = (int64_t)f->v;
		return TACH_OK;
	case PROF_ATTRIBUTES:
		return tachi_or_each(r, f, ((struct otlp_rstate *)r->state)->ntab[DICT_ATTRIBUTE],
				     "attribute", weights_mark, p);
	default:
		return TACH_OK;
	}
}

static int read_profile(struct tach_reader *r, const struct tachi_pb_field *pf)
{
	struct otlp_rstate *st = r->state;
	if (st->nprofs >= 4096)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, pf->at, "more than 4096 profiles");
	if (!TACHI_RESERVE(st->profs, st->pcap, st->nprofs + 1))
		return tachi_or_nomem(r);
	struct rprof *p = &st->profs[st->nprofs];
	*p = (struct rprof){ .smp0 = (uint32_t)st->nsmps, .at = pf->at };
	size_t pos = pf->off, end = pf->off + pf->len;
	while (pos < end) {
		struct tachi_pb_field f;
		int rc = tachi_or_field(r, &pos, end, &f);
		if (rc || (rc = check_wt(r, &f, prof_wts, NWT(prof_wts))) || (rc = profile_field(r, p, &f)))
			return rc;
	}
	st->nprofs++;
	return TACH_OK;
}

/* The Resource's attributes: the program's path, else its name. */
static int read_resource(struct tach_reader *r, const struct tachi_pb_field *rf)
{
	struct otlp_rstate *st = r->state;
	size_t pos = rf->off, end = rf->off + rf->len;
	while (pos < end) {
		struct tachi_pb_field f, g;
		int rc = tachi_or_field(r, &pos, end, &f);
		if (rc)
			return rc;
		if (f.num != RES_ATTRIBUTES || f.wt != TACHI_PB_LEN)
			continue;
		struct ospan key = { 0, 0 };
		struct anyv v = { .sidx = NONE };
		for (size_t p = f.off; p < f.off + f.len;) {
			if ((rc = tachi_or_field(r, &p, f.off + f.len, &g)))
				return rc;
			if (g.num == KV_KEY && g.wt == TACHI_PB_LEN)
				key = (struct ospan){ g.off, g.len };
			else if (g.num == KV_VALUE && g.wt == TACHI_PB_LEN && (rc = tachi_or_any(r, &g, &v)))
				return rc;
		}
		bool path = key.len == strlen(OTLP_EXE_PATH) && !memcmp(st->d + key.off, OTLP_EXE_PATH, key.len);
		bool name = key.len == strlen(OTLP_EXE_NAME) && !memcmp(st->d + key.off, OTLP_EXE_NAME, key.len);
		if ((path || (name && !r->meta.program)) && v.is_str && v.sidx == NONE && v.s.len < 4096) {
			char *c = malloc(v.s.len + 1);
			if (!c)
				return tachi_or_nomem(r);
			memcpy(c, st->d + v.s.off, v.s.len);
			c[v.s.len] = 0;
			free(st->strs);
			st->strs = c;
			r->meta.program = c;
		}
	}
	return TACH_OK;
}

/* A ResourceProfiles: its Resource, and the Profiles of its ScopeProfiles. */
static int read_resource_profiles(struct tach_reader *r, const struct tachi_pb_field *rf)
{
	size_t pos = rf->off, end = rf->off + rf->len;
	while (pos < end) {
		struct tachi_pb_field f, g;
		int rc = tachi_or_field(r, &pos, end, &f);
		if (rc || (rc = check_wt(r, &f, rp_wts, NWT(rp_wts))))
			return rc;
		if (f.wt != TACHI_PB_LEN)
			continue;
		if (f.num == RP_RESOURCE && (rc = read_resource(r, &f)))
			return rc;
		if (f.num != RP_SCOPE_PROFILES)
			continue;
		for (size_t p = f.off; p < f.off + f.len;) {
			if ((rc = tachi_or_field(r, &p, f.off + f.len, &g)) ||
			    (rc = check_wt(r, &g, sp_wts, NWT(sp_wts))))
				return rc;
			if (g.num == SP_PROFILES && g.wt == TACHI_PB_LEN && (rc = read_profile(r, &g)))
				return rc;
		}
	}
	return TACH_OK;
}

/* The request: its dictionary first (the Profiles' indices are checked against it), then
 * its ResourceProfiles. */
static int read_request(struct tach_reader *r)
{
	struct otlp_rstate *st = r->state;
	struct tachi_pb_field f, dict = { .num = REQ_DICTIONARY, .wt = TACHI_PB_LEN };
	size_t pos = 0;
	int rc;
	bool any = false;
	while (pos < st->size) {
		if ((rc = tachi_or_field(r, &pos, st->size, &f)))
			return rc;
		if (f.num != REQ_DICTIONARY && f.num != REQ_RESOURCE_PROFILES)
			continue;
		if ((rc = tachi_or_want(r, &f, TACHI_PB_LEN)))
			return rc;
		if (f.num == REQ_DICTIONARY)
			dict = f;
		any = true;
	}
	if (!any)
		return tachi_or_bad(r, 0, "no profiles and no dictionary: not an OTLP profiles request");
	if ((rc = tachi_or_read_dict(r, &dict)))
		return rc;
	for (pos = 0; pos < st->size;) {
		tachi_or_field(r, &pos, st->size, &f);
		if (f.num == REQ_RESOURCE_PROFILES && (rc = read_resource_profiles(r, &f)))
			return rc;
	}
	return TACH_OK;
}

/* ---- entries ---- */

/* Sample s's timestamps into st->ts (*nts) and its values into st->v (*nv). */
static int sample_data(struct tach_reader *r, const struct rsmp *s, size_t *nts, size_t *nv)
{
	struct otlp_rstate *st = r->state;
	size_t pos = s->at, end = s->at + s->len;
	*nts = *nv = 0;
	while (pos < end) {
		struct tachi_pb_field f;
		int rc = tachi_or_field(r, &pos, end, &f);
		if (rc)
			return rc;
		if (f.num == SMP_TIMESTAMPS && (f.wt == TACHI_PB_I64 || f.wt == TACHI_PB_LEN)) {
			if (f.wt == TACHI_PB_LEN && f.len % 8)
				return tachi_or_bad(r, f.at, "packed timestamps not a multiple of 8 bytes");
			size_t k = f.wt == TACHI_PB_LEN ? f.len / 8 : 1;
			if (!TACHI_RESERVE(st->ts, st->ts_cap, *nts + k))
				return tachi_or_nomem(r);
			for (size_t i = 0; i < k; i++)
				st->ts[(*nts)++] = f.wt == TACHI_PB_LEN ? tachi_rd64(st->d + f.off + 8 * i, false) : f.v;
		} else if (f.num == SMP_VALUES) {
			struct tachi_pb_nums it;
			if (!tachi_pb_nums_start(&it, &f))
				return tachi_or_want(r, &f, TACHI_PB_LEN);
			while (tachi_pb_nums_next(st->d, &it)) {
				if (!TACHI_RESERVE(st->v, st->v_cap, *nv + 1))
					return tachi_or_nomem(r);
				st->v[(*nv)++] = (int64_t)it.v;
			}
			if (it.bad)
				return tachi_or_bad(r, it.at, "bad varint in packed values");
		}
	}
	if (*nts && *nv && *nts != *nv)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, s->at, "a sample with %zu values and "
			     "%zu timestamps", *nv, *nts);
	return TACH_OK;
}

/* Whether the Profiles pair up: the same Samples (stack, attributes, timestamps). */
static int pair_up(struct tach_reader *r, bool *zip)
{
	struct otlp_rstate *st = r->state;
	*zip = true;
	for (size_t p = 1; p < st->nprofs && *zip; p++)
		*zip = st->profs[p].nsmp == st->profs[0].nsmp;
	for (uint32_t i = 0; *zip && i < st->profs[0].nsmp; i++) {
		const struct rsmp *a = &st->smps[st->profs[0].smp0 + i];
		for (size_t p = 1; p < st->nprofs && *zip; p++) {
			const struct rsmp *b = &st->smps[st->profs[p].smp0 + i];
			*zip = a->stack == b->stack && a->na == b->na &&
			       (!a->na || !memcmp(st->aidx + a->a0, st->aidx + b->a0,
						  a->na * sizeof(*st->aidx)));
		}
		if (!*zip || st->nprofs < 2)
			break;
		/* timestamps: the first Profile's against each other's */
		size_t nts, nv, mts, mv;
		int rc = sample_data(r, a, &nts, &nv);
		if (rc)
			return rc;
		uint64_t *keep = malloc((nts ? nts : 1) * sizeof(*keep));
		if (!keep)
			return tachi_or_nomem(r);
		if (nts)
			memcpy(keep, st->ts, nts * sizeof(*keep));
		for (size_t p = 1; p < st->nprofs && *zip && !rc; p++) {
			rc = sample_data(r, &st->smps[st->profs[p].smp0 + i], &mts, &mv);
			*zip = !rc && mts == nts && (mts ? true : mv == nv) &&
			       (!nts || !memcmp(keep, st->ts, nts * sizeof(*keep)));
		}
		free(keep);
		if (rc)
			return rc;
	}
	return TACH_OK;
}

/* Room for k more entries (and their values). */
static int more_entries(struct tach_reader *r, size_t k)
{
	struct otlp_rstate *st = r->state;
	size_t n, nv, w = st->zip ? st->ntypes : 1;
	if (__builtin_add_overflow(st->nents, k, &n) || n >= UINT32_MAX ||
	    __builtin_mul_overflow(n, w, &nv) || !TACHI_RESERVE(st->ents, st->ecap, n) ||
	    !TACHI_RESERVE(st->vals, st->vcap, nv))
		return tachi_or_nomem(r);
	return TACH_OK;
}

/* The entries of Sample i of Profile p (zip: of every Profile). */
static int sample_entries(struct tach_reader *r, size_t p, uint32_t i)
{
	struct otlp_rstate *st = r->state;
	const struct rprof *pr = &st->profs[p];
	const struct rsmp *s = &st->smps[pr->smp0 + i];
	size_t nts, nv, e0 = st->nents;
	int rc = sample_data(r, s, &nts, &nv);
	size_t k = nts ? nts : nv;
	if (rc || (rc = more_entries(r, k)))
		return rc;
	for (size_t j = 0; j < k; j++)
		st->ents[e0 + j] = (struct rent){ nts ? st->ts[j] : pr->time, pr->smp0 + i,
						  (uint32_t)p, (uint32_t)(e0 + j) };
	size_t w = st->zip ? st->ntypes : 1;
	for (size_t q = st->zip ? 0 : p; q < (st->zip ? st->nprofs : p + 1); q++) {
		if (q != p && (rc = sample_data(r, &st->smps[st->profs[q].smp0 + i], &nts, &nv)))
			return rc;
		if (nv && nv != k)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->smps[st->profs[q].smp0 + i].at,
				     "%zu values where the other profiles have %zu", nv, k);
		for (size_t j = 0; j < k; j++)
			st->vals[(e0 + j) * w + (st->zip ? q : 0)] = nv ? st->v[j] : 1;
	}
	st->nents += k;
	return TACH_OK;
}

static int ent_cmp(const void *a, const void *b)
{
	const struct rent *x = a, *y = b;
	if (x->ts != y->ts)
		return x->ts < y->ts ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int build_entries(struct tach_reader *r)
{
	struct otlp_rstate *st = r->state;
	int rc;
	for (size_t p = 0; p < (st->zip ? 1 : st->nprofs); p++)
		for (uint32_t i = 0; i < st->profs[p].nsmp; i++)
			if ((rc = sample_entries(r, p, i)))
				return rc;
	if (st->nents)
		qsort(st->ents, st->nents, sizeof(*st->ents), ent_cmp);
	return TACH_OK;
}

/* ---- the meta ---- */

static uint64_t unit_ns(struct otlp_rstate *st, uint32_t unit)
{
	if (!unit || unit >= st->ntab[DICT_STRING])
		return 0;
	struct ospan s = st->tab[DICT_STRING][unit];
	return tachi_time_unit_ns((const char *)st->d + s.off, s.len);
}

/* Whether the Profiles are the ones tachfmt's writer makes. */
static bool own_types(struct otlp_rstate *st)
{
	const struct rprof *p = st->profs;
	if (!st->zip || !st->nprofs || st->nprofs > 2 || !p[0].weights ||
	    !tachi_or_str_is(st, p[0].type, "samples") ||
	    !tachi_or_str_is(st, p[0].unit, "count"))
		return false;
	return st->nprofs == 1 || ((tachi_or_str_is(st, p[1].type, "wall") ||
				    tachi_or_str_is(st, p[1].type, "cpu")) &&
				   tachi_or_str_is(st, p[1].unit, "nanoseconds"));
}

/* The strings the meta points to, copied with their NULs: each Profile's type and unit,
 * then the period's. */
static int type_strings(struct tach_reader *r)
{
	struct otlp_rstate *st = r->state;
	size_t total = 0, at = 0;
	for (size_t p = 0; p < st->nprofs; p++) {
		const uint32_t ix[4] = { st->profs[p].type, st->profs[p].unit, st->profs[p].ptype,
					 st->profs[p].punit };
		for (int k = 0; k < 4; k++)
			total += (ix[k] < st->ntab[DICT_STRING] ? st->tab[DICT_STRING][ix[k]].len : 0) + 1;
	}
	if (!(st->tstrs = malloc(total ? total : 1)) ||
	    !(st->vt = calloc(st->nprofs ? st->nprofs : 1, sizeof(*st->vt))) ||
	    !(st->row = calloc(st->nprofs ? st->nprofs : 1, sizeof(*st->row))))
		return tachi_or_nomem(r);
	for (size_t p = 0; p < st->nprofs; p++) {
		const uint32_t ix[4] = { st->profs[p].type, st->profs[p].unit, st->profs[p].ptype,
					 st->profs[p].punit };
		const char *out[4];
		for (int k = 0; k < 4; k++) {
			struct ospan s = ix[k] < st->ntab[DICT_STRING] ? st->tab[DICT_STRING][ix[k]]
								      : (struct ospan){ 0, 0 };
			memcpy(st->tstrs + at, st->d + s.off, s.len);
			st->tstrs[at + s.len] = 0;
			out[k] = st->tstrs + at;
			at += s.len + 1;
		}
		st->vt[p] = (struct tach_value_type){ out[0], out[1] };
		if (!r->meta.period_type && st->profs[p].ptype) {
			r->meta.period_type = out[2];
			r->meta.period_unit = out[3];
			r->meta.period = st->profs[p].period;
		}
	}
	return TACH_OK;
}

static void times_meta(struct tach_reader *r)
{
	struct otlp_rstate *st = r->state;
	struct tach_meta *m = &r->meta;
	uint64_t start = 0, dur = 0;
	for (size_t p = 0; p < st->nprofs; p++) {
		const struct rprof *pr = &st->profs[p];
		if (pr->time && (!start || pr->time < start))
			start = pr->time;
		if (pr->duration > dur)
			dur = pr->duration;
		uint64_t pu = unit_ns(st, pr->punit), pns;
		if (!st->period_ns && pu && pr->period > 0 &&
		    !__builtin_mul_overflow((uint64_t)pr->period, pu, &pns))
			st->period_ns = pns;
	}
	m->start_time_ns = start <= INT64_MAX ? (int64_t)start : 0;
	m->start_time_us = start / 1000;
	m->duration_ns = dur <= INT64_MAX ? (int64_t)dur : 0;
	m->interval_us = st->period_ns / 1000;
}

static int make_meta(struct tach_reader *r)
{
	struct otlp_rstate *st = r->state;
	struct tach_meta *m = &r->meta;
	m->source_format = "otlp";
	times_meta(r);
	st->own = own_types(st);
	st->ntypes = (uint32_t)st->nprofs;
	st->count_type = st->time_type = -1;
	if (st->own) {
		st->timed = st->nprofs == 2;
		m->sample_time = st->timed;
		m->profiling_config = st->timed && tachi_or_str_is(st, st->profs[1].type, "cpu") ? 2 : 0;
		return TACH_OK;
	}
	int rc = type_strings(r);
	if (rc)
		return rc;
	for (size_t p = 0; p < st->nprofs; p++) {
		if (st->count_type < 0 && (tachi_or_str_is(st, st->profs[p].unit, "count") ||
					   tachi_or_str_is(st, st->profs[p].type, "samples")))
			st->count_type = (int64_t)p;
		if (st->time_type < 0 && unit_ns(st, st->profs[p].unit)) {
			st->time_type = (int64_t)p;
			st->time_unit_ns = unit_ns(st, st->profs[p].unit);
		}
	}
	m->value_type_count = st->ntypes;
	m->value_types = st->vt;
	m->weight_type = st->count_type >= 0 ? (uint32_t)st->count_type : 0;
	/* the schema: viewers show profiles[0] by default */
	m->default_type = st->ntypes ? 1 : 0;
	m->sample_time = st->time_type >= 0 || st->period_ns;
	return TACH_OK;
}

/* ---- samples ---- */

struct kctx {
	uint64_t depth;
};

static int stack_loc(struct tach_reader *r, void *ctx, uint32_t li, size_t at)
{
	struct otlp_rstate *st = r->state;
	struct kctx *k = ctx;
	uint32_t fr0, nfr;
	int rc = tachi_or_loc_frames(r, li, &fr0, &nfr);
	if (rc)
		return rc;
	if ((k->depth += nfr) > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, at, "a stack deeper than %u frames "
			     "(see --max-depth)", r->lim.max_depth);
	if (!nfr)
		return TACH_OK;
	if (!TACHI_RESERVE(st->kframes, st->kcap, st->nkframes + nfr))
		return tachi_or_nomem(r);
	memcpy(st->kframes + st->nkframes, st->frames + fr0, nfr * sizeof(*st->frames));
	st->nkframes += nfr;
	return TACH_OK;
}

/* Stack k's frames, innermost first, made the first time. */
static int stack_frames(struct tach_reader *r, uint32_t k, const uint32_t **fr, uint32_t *n)
{
	struct otlp_rstate *st = r->state;
	if (!st->ntab[DICT_STACK]) {
		*n = 0;
		return TACH_OK;
	}
	if (st->kfr0[k] == NONE) {
		struct ospan s = st->tab[DICT_STACK][k];
		size_t start = st->nkframes;
		struct kctx c = { 0 };
		for (size_t pos = s.off; pos < s.off + s.len;) {
			struct tachi_pb_field f;
			int rc = tachi_or_field(r, &pos, s.off + s.len, &f);
			if (rc || (f.num == STACK_LOCATIONS &&
				   (rc = tachi_or_each(r, &f, st->ntab[DICT_LOCATION], "location",
						       stack_loc, &c))))
				return rc;
		}
		st->kfr0[k] = (uint32_t)start;
		st->knfr[k] = (uint32_t)(st->nkframes - start);
	}
	*n = st->knfr[k];
	*fr = *n ? st->kframes + st->kfr0[k] : NULL;
	return TACH_OK;
}

/* async-profiler's thread names, "[pool-1-thread-2 tid=31041]" ("[tid=31038]" for a
 * thread without a name): the id. */
static bool name_tid(const uint8_t *p, size_t n, uint64_t *tid)
{
	if (n < 8 || p[n - 1] != ']')
		return false;
	size_t i = n - 1;
	while (i > 0 && p[i - 1] >= '0' && p[i - 1] <= '9')
		i--;
	return i >= 5 && i < n - 1 &&
	       (!memcmp(p + i - 5, " tid=", 5) || (i == 5 && !memcmp(p, "[tid=", 5))) &&
	       tachi_parse_dec((const char *)p + i, n - 1 - i, UINT64_MAX, tid);
}

/* Attribute a as a sample takes it, decoded (and its strings interned) once. */
static int cached_attr(struct tach_reader *r, uint32_t a, const struct oattr **out)
{
	struct otlp_rstate *st = r->state;
	struct oattr *c = &st->acache[a];
	*out = c;
	if (c->kind)
		return TACH_OK;
	uint32_t key, unit;
	struct anyv v;
	int rc = tachi_or_attribute(r, a, &key, &unit, &v);
	if (rc)
		return rc;
	c->kind = A_NONE;
	c->num = v.num;
	if (v.is_num && tachi_or_str_is(st, key, OTLP_THREAD_ID))
		c->kind = A_TID;
	else if (v.is_num && tachi_or_str_is(st, key, OTLP_INTERP_ID))
		c->kind = A_IID;
	else if (v.is_num && tachi_or_str_is(st, key, OTLP_STATUS))
		c->kind = A_STATUS;
	if (c->kind != A_NONE || !(v.is_str || v.is_num))
		return TACH_OK;
	if (v.is_str && v.sidx == NONE && tachi_or_str_is(st, key, OTLP_THREAD_NAME))
		c->named = name_tid(st->d + v.s.off, v.s.len, &c->name_tid);
	c->of_root = (v.is_str && tachi_or_str_is(st, key, OTLP_THREAD_NAME)) ||
		     (v.is_num && tachi_or_str_is(st, key, OTLP_PROCESS_PID));
	struct tach_label *l = &c->lab;
	*l = (struct tach_label){ 0, TACH_NO_STRING, v.num, TACH_NO_STRING };
	rc = tachi_or_str_id(r, key, &l->key);
	if (!rc && v.is_str && v.sidx != NONE)
		rc = tachi_or_str_id(r, v.sidx, &l->str);
	else if (!rc && v.is_str && v.s.len > TACHI_MAX_STRING)
		rc = tachi_or_bad(r, v.s.off, "a string longer than 1 MiB");
	else if (!rc && v.is_str &&
		 tach_dict_intern_string(&r->dict, (const char *)st->d + v.s.off, v.s.len, &l->str))
		rc = tachi_or_nomem(r);
	if (!rc && !v.is_str && unit)
		rc = tachi_or_str_id(r, unit, &l->unit);
	if (!rc)
		c->kind = A_LABEL;
	return rc;
}

/* The Sample's attributes: the thread fields, and the others as labels. */
static int sample_attrs(struct tach_reader *r, const struct rsmp *s, struct tach_sample *out)
{
	struct otlp_rstate *st = r->state;
	bool tid = false, named = false;
	uint64_t name_id = 0;
	const char *comm;
	size_t comm_n;
	int32_t pid;
	/* a stack whose root is a process root frame holds the thread's name and pid already */
	bool rooted = out->depth && tachi_comm_frame(&r->dict, out->frames[out->depth - 1], &comm,
						     &comm_n, &pid);
	st->ext.label_count = 0;
	if (s->na && !TACHI_RESERVE(st->labs, st->labs_cap, s->na))
		return tachi_or_nomem(r);
	for (uint32_t i = 0; i < s->na; i++) {
		const struct oattr *c;
		int rc = cached_attr(r, st->aidx[s->a0 + i], &c);
		if (rc)
			return rc;
		if (c->kind == A_TID) {
			out->thread_id = (uint64_t)c->num;
			tid = true;
		} else if (c->kind == A_IID) {
			out->interp_id = (uint32_t)c->num;
		} else if (c->kind == A_STATUS) {
			out->status = (uint8_t)c->num;
		} else if (c->kind == A_LABEL && !(rooted && c->of_root)) {
			if (c->named) {
				named = true;
				name_id = c->name_tid;
			}
			st->labs[st->ext.label_count++] = c->lab;
		}
	}
	if (!tid && named)
		out->thread_id = name_id;
	return TACH_OK;
}

static int64_t value_at(struct otlp_rstate *st, const struct rent *e, uint32_t t)
{
	if (st->zip)
		return st->vals[(size_t)e->seq * st->ntypes + t];
	return e->prof == t ? st->vals[e->seq] : 0;
}

/* The entry's weight and time; false when it has no weight. */
static bool weigh(struct otlp_rstate *st, const struct rent *e, struct tach_sample *s)
{
	if (st->own) {
		int64_t w = value_at(st, e, 0), t = st->timed ? value_at(st, e, 1) : 0;
		s->weight = w > 0 ? (uint64_t)w : 0;
		s->time_ns = t > 0 ? (uint64_t)t : 0;
		return s->weight > 0;
	}
	bool has_count = st->count_type >= 0 && (st->zip || e->prof == st->count_type);
	int64_t w = has_count ? value_at(st, e, (uint32_t)st->count_type) : 1;
	if (w <= 0)
		return false;
	s->weight = (uint64_t)w;
	s->time_ns = 0;
	int64_t tv;
	if (st->time_type >= 0 && (st->zip || e->prof == st->time_type) &&
	    (tv = value_at(st, e, (uint32_t)st->time_type)) > 0)
		s->time_ns = __builtin_mul_overflow((uint64_t)tv, st->time_unit_ns, &s->time_ns)
				     ? UINT64_MAX : s->time_ns;
	else if (st->period_ns)
		s->time_ns = __builtin_mul_overflow(s->weight, st->period_ns, &s->time_ns)
				     ? UINT64_MAX : s->time_ns;
	for (uint32_t t = 0; t < st->ntypes; t++)
		st->row[t] = value_at(st, e, t);
	return true;
}

static int or_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct otlp_rstate *st = r->state;
	struct tach_sample *s = &r->sample;
	for (; st->next < st->nents; st->next++) {
		const struct rent *e = &st->ents[st->next];
		*s = (struct tach_sample){ .timestamp_us = e->ts / 1000 };
		if (!weigh(st, e, s)) {
			if (!st->dropped++)
				tachi_warn(&r->warn, TACH_POS_NONE, 0, "samples with no weight (a count "
					   "of 0) are left out");
			continue;
		}
		const struct rsmp *sm = &st->smps[e->smp];
		int rc = stack_frames(r, sm->stack, &s->frames, &s->depth);
		if (rc || (rc = sample_attrs(r, sm, s)))
			return rc;
		if (s->weight > r->lim.max_samples || st->emitted > r->lim.max_samples - s->weight)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "more than %llu samples (see "
				     "--max-samples)", (unsigned long long)r->lim.max_samples);
		st->emitted += s->weight;
		st->ext = (struct tach_sample_ext){ .size = sizeof(st->ext),
			.value_count = st->own ? 0 : st->ntypes, .values = st->row,
			.label_count = st->ext.label_count, .labels = st->labs };
		r->ext = st->ext.value_count || st->ext.label_count ? &st->ext : NULL;
		st->next++;
		*out = s;
		return TACH_OK;
	}
	return TACH_EOF;
}

/* ---- open ---- */

/* An error of the protobuf form made from OTLP/JSON: its offset is that form's. */
static void json_said(struct tachi_err *e)
{
	static const char pre[] = "(offset in the protobuf form of this OTLP/JSON) ";
	size_t n = strlen(e->msg), k = sizeof(pre) - 1;
	if (n + k >= sizeof(e->msg))
		n = sizeof(e->msg) - k - 1;
	memmove(e->msg + k, e->msg, n);
	memcpy(e->msg, pre, k);
	e->msg[n + k] = 0;
}

/* OTLP/JSON: the input is a JSON object (a protobuf request never starts with '{': that
 * would be field 15, which the request has not). */
static bool json_input(const uint8_t *p, size_t n)
{
	size_t i = n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3) ? 3 : 0;
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	return i < n && p[i] == '{';
}

static int or_open(struct tach_reader *r)
{
	struct otlp_rstate *st = r->state;
	st->d = r->in.data;
	st->size = r->in.size;
	int rc;
	if (json_input(r->in.data, r->in.size)) {
		if ((rc = tachi_or_json(r, &st->from_json, &st->size)))
			return rc;
		st->d = st->from_json;
	}
	if ((rc = read_request(r))) {
		/* past the JSON's syntax, what is wrong is at an offset of its protobuf form */
		if (st->from_json && r->err.pos_kind == TACH_POS_OFFSET)
			json_said(&r->err);
		return rc;
	}
	if (rc)
		return rc;
	size_t nk = st->ntab[DICT_STACK] + 1;
	if (!(st->kfr0 = malloc(nk * sizeof(*st->kfr0))) || !(st->knfr = malloc(nk * sizeof(*st->knfr))))
		return tachi_or_nomem(r);
	memset(st->kfr0, 0xff, nk * sizeof(*st->kfr0));
	if (!(st->acache = calloc(st->ntab[DICT_ATTRIBUTE] + 1, sizeof(*st->acache))))
		return tachi_or_nomem(r);
	if (st->nprofs && (rc = pair_up(r, &st->zip)))
		return rc;
	if ((rc = make_meta(r)) || (rc = build_entries(r)))
		return rc;
	/* labels are interned as samples are read */
	r->dict_grows = true;
	return TACH_OK;
}

static int or_option(struct tach_reader *r, const char *key, const char *value)
{
	(void)value;
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "otlp reader has no option %s", key);
}

static void or_free(struct tach_reader *r)
{
	struct otlp_rstate *st = r->state;
	for (size_t t = 0; t <= DICT_STACK; t++)
		free(st->tab[t]);
	void *p[] = { st->sid, st->mid, st->lfr0, st->lnfr, st->frames, st->kfr0, st->knfr,
		      st->kframes, st->profs, st->smps, st->aidx, st->ents, st->vals, st->vt,
		      st->strs, st->tstrs, st->row, st->labs, st->ts, st->v, st->acache,
		      st->from_json };
	for (size_t i = 0; i < sizeof(p) / sizeof(p[0]); i++)
		free(p[i]);
}

const struct tachi_reader_ops tachi_otlp_reader_ops = {
	.state_size = sizeof(struct otlp_rstate),
	.option = or_option,
	.open = or_open,
	.next = or_next,
	.free = or_free,
	.whole_input = true,
};
