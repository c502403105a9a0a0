/* pprof reader: google/pprof's profile.proto (perftools.profiles.Profile), gzip-compressed
 * (one or more members, as Go's reader takes) or not.
 *
 * The message's fields may come in any order (tachfmt's own writer puts the string table
 * last), so open walks the top-level fields once and keeps what samples refer to: the
 * string table as offsets into the input, sample types, mappings, functions and locations
 * (each a record of the file: memory follows the file's size). Samples stay where they are
 * and are decoded one per call, so a sample costs nothing beyond its own message.
 *
 * Accepted as google/pprof's decoder (profile/encode.go, proto.go) accepts it: unknown
 * fields of any wire type are skipped, repeated numbers packed or not, the last value of a
 * repeated optional field wins, ids are any nonzero u64. Refused as pprof refuses it, with
 * the offset: bad varints and lengths, wire-type mismatches, groups, a first string that
 * is not empty, string indices out of range, a second time_nanos (concatenated profiles),
 * zero or duplicate ids, a line without a known function, a sample of unknown location or
 * with a value count other than the sample types'. A location's mapping id that names no
 * mapping means no mapping, as in pprof.
 *
 * What a sample becomes: one weighted sample. A time value (a type in nanoseconds ...
 * seconds: cpu, wall, delay) is its time_ns, exact (meta.sample_time): the chosen type's
 * where it is a time, else the first such. The value of one sample type (option
 * sample-index = NAME or N; default default_sample_type, else the last type, as pprof)
 * gives its weight: a time's weight is the sample's count of "samples" where the profile
 * has that type, else the time over the period when the period is a time too (rounded, at
 * least 1: the time itself stays exact); any other value as it is, in its unit
 * (meta.weight_unit says which, unless it is a count of "samples"). Samples
 * whose value is 0 or negative are left out (negative ones with a warning); with option
 * zero-weight, a zero one that has a value of another type comes with weight 0. Every
 * value and label of a sample comes with it (struct tach_sample_ext), and the meta says
 * what the types, period, duration and start time are, so a pprof writer can write the
 * profile back as it was. Frames: each
 * location, leaf first, gives its lines innermost first (inlined functions), a line the
 * function's name (else its system name) in the function's file at its line and column.
 * Each frame carries its location's address and mapping as native data, and all but the
 * location's outermost line are marked inlined, so the pprof writer rebuilds the location.
 * A location without lines is named by module and file offset, "libc.so.6+0x2a1c0" in its
 * mapping's file (tachfmt(5)), or by its address, "0x4011d6", when outside its mapping's
 * range (in "~", no file, without a mapping). The mappings (range, file offset, file,
 * build ID, has_* flags) go to the dict in file order.
 * drop_frames/keep_frames prune stacks as pprof does, in RE2 syntax as Go's regexp takes
 * it (lib/base/regex.c: linear time; a pattern Go refuses prunes nothing, with a warning, as in
 * pprof). Labels: "thread id" (number, or decimal string past 2^63-1), "interpreter id"
 * and "thread state" ("gil+cpu", "none", ...: what tach2pprof writes) come back as thread
 * id, interpreter id and status; without a state label the status is on-CPU for a "cpu"
 * sample type, else unknown. Timestamps do not exist in the format: samples are put one
 * period apart from time_nanos, in file order.
 *
 * Not kept: is_folded, comments.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/base.h"
#include "base/hash.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/read.h"

#define DEFAULT_INTERVAL_US 1000

/* ---- the sample type ---- */

/* Nanoseconds in one unit of a time unit; 0 for any other unit. */
static uint64_t time_unit(const struct pprof_rstate *st, int64_t unit)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "nanoseconds", 1 }, { "ns", 1 }, { "microseconds", 1000 }, { "us", 1000 },
		{ "milliseconds", 1000000 }, { "ms", 1000000 }, { "seconds", 1000000000 },
		{ "s", 1000000000 },
	};
	for (size_t i = 0; i < sizeof(units) / sizeof(units[0]); i++)
		if (str_is(st, unit, units[i].name))
			return units[i].ns;
	return 0;
}

/* Which value is a sample's time and which its count of samples (struct pprof_rstate): the
 * chosen type's where it is one, else the first of its kind (a contention profile's delay
 * is the time of its contentions; a heap profile has none). */
static void time_and_count(struct pprof_rstate *st)
{
	st->ti = st->ci = -1;
	st->time_unit_ns = 0;
	for (size_t k = 0; k < st->ntypes; k++) {
		size_t i = k == 0 ? st->vi : k <= st->vi ? k - 1 : k;
		uint64_t ns = time_unit(st, st->types[i].unit);
		if (ns && st->ti < 0) {
			st->ti = (ptrdiff_t)i;
			st->time_unit_ns = ns;
		}
		if (!ns && st->ci < 0 && str_is(st, st->types[i].type, "samples"))
			st->ci = (ptrdiff_t)i;
	}
}

/* The sample-index option, or pprof's default. */
static int choose_type(struct tach_reader *r)
{
	struct pprof_rstate *st = r->state;
	const char *want = st->sample_index;
	size_t i = st->ntypes;
	if (!want) {
		i = st->ntypes - 1;
		for (size_t k = 0; st->slen[st->dflt] && k < st->ntypes; k++)
			if (str_eq(st, st->types[k].type, st->dflt)) {
				i = k;
				break;
			}
	} else {
		uint64_t n;
		if (tachi_parse_u64(want, UINT64_MAX, &n)) {
			i = n < st->ntypes ? (size_t)n : st->ntypes;
		} else {
			const char *bare = !strncmp(want, "inuse_", 6) ? want + 6 : want;
			for (i = 0; i < st->ntypes; i++)
				if (str_is(st, st->types[i].type, want) ||
				    str_is(st, st->types[i].type, bare))
					break;
		}
		if (i == st->ntypes)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "sample-index %s: the profile has no such sample type (it has %zu)",
				     want, st->ntypes);
	}
	st->vi = i;
	st->cpu = str_is(st, st->types[i].type, "cpu");
	st->unit_ns = time_unit(st, st->types[i].unit);
	uint64_t pu = time_unit(st, st->period_type.unit);
	if (pu && st->period > 0 && __builtin_mul_overflow((uint64_t)st->period, pu, &st->period_ns))
		st->period_ns = 0;
	/* A time with a time period to divide it by counts samples, and so does a count of
	 * "samples"; any other value (bytes, objects, contentions, a delay without a time
	 * period) is a weight in its own unit. */
	st->raw_weight = !(st->unit_ns && st->period_ns) &&
			 !(str_is(st, st->types[i].type, "samples") && !st->unit_ns);
	time_and_count(st);
	/* a time whose samples are counted: the weights are those samples */
	if (st->unit_ns && st->ci >= 0)
		st->raw_weight = false;
	if (!(st->vals = calloc(st->ntypes, sizeof(*st->vals))))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

/* ---- samples ---- */

struct sdec {
	uint64_t value, tid;
	size_t nvals, nlocs;
	uint32_t iid;
	int status;          /* -1: no state label */
};

static int loc_each(struct tach_reader *r, void *ctx, uint64_t id, size_t at)
{
	struct pprof_rstate *st = r->state;
	struct sdec *sd = ctx;
	uint32_t i;
	if (!tachi_pr_find_id(&st->loc_ix, st->locs, sizeof(*st->locs), id, &i))
		return tachi_pr_fail(r, at, "a sample's location %llu does not exist", (unsigned long long)id);
	if (!TACHI_RESERVE(st->lbuf, st->lbuf_cap, sd->nlocs + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->lbuf[sd->nlocs++] = i;
	return TACH_OK;
}

static int val_each(struct tach_reader *r, void *ctx, uint64_t v, size_t at)
{
	struct pprof_rstate *st = r->state;
	struct sdec *sd = ctx;
	(void)at;
	if (sd->nvals < st->ntypes)
		st->vals[sd->nvals] = (int64_t)v;
	if (sd->nvals++ == st->vi)
		sd->value = v;
	return TACH_OK;
}

/* "gil+cpu", "none", "0x40": the thread state tach2pprof writes. */
static int parse_state(const char *s, size_t n)
{
	static const char *const names[8] = { "gil", "cpu", "unknown", "gil-wait",
					       "exception", "main", "0x40", "0x80" };
	if (n == 4 && !memcmp(s, "none", 4))
		return 0;
	int bits = 0;
	for (size_t i = 0; i < n;) {
		const char *plus = memchr(s + i, '+', n - i);
		size_t e = plus ? (size_t)(plus - s) : n, b;
		for (b = 0; b < 8; b++)
			if (strlen(names[b]) == e - i && !memcmp(s + i, names[b], e - i))
				break;
		if (b == 8)
			return -1;
		bits |= 1 << b;
		i = e + 1;
	}
	return n ? bits : -1;
}

struct plabel {
	int64_t key, str, num, unit;
};
static int keep_label_ext(struct tach_reader *r, const struct plabel *lb);

static int label_field(struct tach_reader *r, void *rec, const struct tachi_pb_field *f)
{
	struct plabel *lb = rec;
	int64_t *to = f->num == LABEL_KEY ? &lb->key : f->num == LABEL_STR ? &lb->str :
		      f->num == LABEL_NUM ? &lb->num : f->num == LABEL_NUM_UNIT ? &lb->unit : NULL;
	return to ? tachi_pr_num_field(r, f, to) : TACH_OK;
}

static int label(struct tach_reader *r, const struct tachi_pb_field *outer, struct sdec *sd)
{
	struct pprof_rstate *st = r->state;
	struct plabel lb = { 0 };
	int rc = tachi_pr_each_sub(r, outer, label_field, &lb);
	if (rc)
		return rc;
	int64_t key = lb.key, str = lb.str, num = lb.num, unit = lb.unit;
	if (!str_ok(st, key) || !str_ok(st, str) || !str_ok(st, unit))
		return tachi_pr_fail(r, outer->at, "a label's string index is out of range");
	if ((rc = keep_label_ext(r, &lb)))
		return rc;
	size_t n;
	const char *v = str_at(st, str, &n);
	uint64_t u;
	if (str_is(st, key, "thread id")) {
		if (str && tachi_parse_dec(v, n, UINT64_MAX, &u))
			sd->tid = u;
		else if (!str)
			sd->tid = (uint64_t)num;
	} else if (str_is(st, key, "interpreter id") && !str && num >= 0 && num <= UINT32_MAX) {
		sd->iid = (uint32_t)num;
	} else if (str_is(st, key, "thread state") && str) {
		sd->status = parse_state(v, n);
		if (sd->status < 0 && !st->warned_state) {
			st->warned_state = true;
			tachi_warn(&r->warn, TACH_POS_OFFSET, outer->at, "thread state \"%.40s\" is "
				   "not one tach2pprof writes; such samples have status 0", v);
		}
	}
	return TACH_OK;
}

/* ---- values and labels: struct tach_sample_ext and the meta's value-type block ---- */

/* Every label, as the sample's ext gives it (string ids interned as met). */
static int keep_label_ext(struct tach_reader *r, const struct plabel *lb)
{
	struct pprof_rstate *st = r->state;
	if (!TACHI_RESERVE(st->lbls, st->lbls_cap, st->nlbls + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	struct tach_label *l = &st->lbls[st->nlbls];
	*l = (struct tach_label){ 0, TACH_NO_STRING, 0, TACH_NO_STRING };
	int rc = tachi_pr_dict_str(r, lb->key, &l->key);
	/* pprof's decoder: a string label when str is set, else a number with its unit */
	if (!rc && lb->str)
		rc = tachi_pr_dict_str(r, lb->str, &l->str);
	else if (!rc)
		l->num = lb->num;
	if (!rc && !lb->str && lb->unit)
		rc = tachi_pr_dict_str(r, lb->unit, &l->unit);
	if (!rc)
		st->nlbls++;
	return rc;
}

/* Whether a sample left out for its weight has a value of another type (zero-weight). */
static bool other_values_ext(const struct pprof_rstate *st)
{
	for (size_t i = 0; i < st->ntypes; i++)
		if (i != st->vi && st->vals[i] > 0)
			return true;
	return false;
}

static const struct tach_sample_ext *sample_ext(struct pprof_rstate *st)
{
	st->ext = (struct tach_sample_ext){ sizeof(st->ext), (uint32_t)st->ntypes, st->vals,
					    (uint32_t)st->nlbls, st->lbls };
	return &st->ext;
}

/* String i copied NUL-terminated to *at; NULL for the empty string. */
static const char *meta_str(const struct pprof_rstate *st, int64_t i, char **at)
{
	size_t n;
	const char *p = str_at(st, i, &n);
	if (!n)
		return NULL;
	char *d = *at;
	memcpy(d, p, n);
	d[n] = 0;
	*at += n + 1;
	return d;
}

/* The meta's value types, weight, default type, period, duration and start time. */
static int values_meta_ext(struct tach_reader *r)
{
	struct pprof_rstate *st = r->state;
	size_t bytes = st->ntypes * sizeof(struct tach_value_type);
	for (size_t i = 0; i < st->ntypes; i++)
		bytes += st->slen[st->types[i].type] + st->slen[st->types[i].unit] + 2;
	bytes += st->slen[st->period_type.type] + st->slen[st->period_type.unit] + 2;
	if (!(st->meta_own = malloc(bytes)))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	struct tach_value_type *vt = st->meta_own;
	char *at = (char *)(vt + st->ntypes);
	struct tach_meta *m = &r->meta;
	for (size_t i = 0; i < st->ntypes; i++) {
		vt[i].type = meta_str(st, st->types[i].type, &at);
		vt[i].unit = meta_str(st, st->types[i].unit, &at);
		if (!vt[i].type)
			vt[i].type = "";
		if (!vt[i].unit)
			vt[i].unit = "";
		if (!m->default_type && st->slen[st->dflt] && str_eq(st, st->types[i].type, st->dflt))
			m->default_type = (uint32_t)i + 1;
	}
	m->value_type_count = (uint32_t)st->ntypes;
	m->value_types = vt;
	m->weight_type = (uint32_t)st->vi;
	m->weight_unit = NULL;
	if (st->raw_weight)
		m->weight_unit = *vt[st->vi].unit ? vt[st->vi].unit : "count";
	m->period_type = meta_str(st, st->period_type.type, &at);
	m->period_unit = meta_str(st, st->period_type.unit, &at);
	m->period = st->period;
	m->duration_ns = st->duration > 0 ? st->duration : 0;
	m->start_time_ns = st->time_nanos > 0 ? st->time_nanos : 0;
	/* labels are interned as samples are read */
	r->dict_grows = true;
	return TACH_OK;
}

static int sample_field(struct tach_reader *r, void *rec, const struct tachi_pb_field *f)
{
	if (f->num == SAMPLE_LOCATION_ID)
		return tachi_pr_repeated(r, f, loc_each, rec);
	if (f->num == SAMPLE_VALUE)
		return tachi_pr_repeated(r, f, val_each, rec);
	return f->num == SAMPLE_LABEL ? label(r, f, rec) : TACH_OK;
}

/* The sample message into sd and st->lbuf (its locations, leaf first). */
static int decode_sample(struct tach_reader *r, const struct tachi_pb_field *outer, struct sdec *sd)
{
	struct pprof_rstate *st = r->state;
	memset(sd, 0, sizeof(*sd));
	sd->status = -1;
	st->nlbls = 0;
	int rc = tachi_pr_each_sub(r, outer, sample_field, sd);
	if (!rc && sd->nvals != st->ntypes)
		return tachi_pr_fail(r, outer->at, "a sample has %zu values for %zu sample types", sd->nvals,
				     st->ntypes);
	return rc;
}

/* The sample's frames into st->stack after drop_frames: from the root, the first
 * location to prune after a kept one cuts the stack there, as pprof's Prune does; the
 * locations above the first kept one stay, whole. */
static int build_stack(struct tach_reader *r, const struct sdec *sd, uint32_t *depth)
{
	struct pprof_rstate *st = r->state;
	size_t from = 0;
	bool user = false;
	for (size_t i = sd->nlocs; i-- > 0;) {
		const struct ploc *l = &st->locs[st->lbuf[i]];
		if (!l->prune && !l->beneath) {
			user = true;
			continue;
		}
		if (user) {
			from = l->prune ? i + 1 : i;
			break;
		}
	}
	uint32_t n = 0;
	for (size_t i = from; i < sd->nlocs; i++) {
		struct ploc *l = &st->locs[st->lbuf[i]];
		int rc = tachi_pr_whole_frames(r, l);
		if (rc)
			return rc;
		if (!l->nfr)
			continue;
		if (l->nfr > r->lim.max_depth - n)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0,
				     "stack deeper than the limit of %u frames", r->lim.max_depth);
		if (!TACHI_RESERVE(st->stack, st->stack_cap, (size_t)n + l->nfr))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		memcpy(st->stack + n, st->frames + l->fr0, l->nfr * sizeof(uint32_t));
		n += l->nfr;
	}
	*depth = n;
	return TACH_OK;
}

/* A value times ns per unit, saturating. */
static uint64_t to_ns(int64_t v, uint64_t unit_ns)
{
	uint64_t ns;
	if (v <= 0)
		return 0;
	return __builtin_mul_overflow((uint64_t)v, unit_ns, &ns) ? UINT64_MAX : ns;
}

/* The chosen value as a number of samples; 0 to leave the sample out. A time's samples are
 * the sample's count of "samples" where the profile has one (at least 1), else the time
 * over a time period, rounded (at least 1, the time being exact in time_ns). */
static int weight(struct tach_reader *r, const struct tachi_pb_field *f, int64_t v, uint64_t *w)
{
	struct pprof_rstate *st = r->state;
	*w = 0;
	if (v < 0 && !st->warned_neg) {
		st->warned_neg = true;
		tachi_warn(&r->warn, TACH_POS_OFFSET, f->at,
			   "samples with negative values (a difference profile) are left out");
	}
	if (v <= 0)
		return TACH_OK;
	if (st->unit_ns && st->ci >= 0) {
		int64_t c = st->vals[st->ci];
		*w = c > 0 ? (uint64_t)c : 1;
		return TACH_OK;
	}
	if (!st->unit_ns || !st->period_ns) {
		*w = (uint64_t)v;
		return TACH_OK;
	}
	unsigned __int128 ns = (unsigned __int128)(uint64_t)v * st->unit_ns;
	unsigned __int128 q = ns / st->period_ns, rem = ns % st->period_ns;
	q += rem * 2 >= st->period_ns;
	if (q > UINT64_MAX)
		return tachi_pr_fail(r, f->at, "a sample's value is more than 2^64 samples");
	*w = q ? (uint64_t)q : 1;
	return TACH_OK;
}

static int pr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct pprof_rstate *st = r->state;
	struct tachi_pb_field f;
	struct sdec sd;
	uint64_t w = 0;
	int rc;
	while (!w) {
		do {
			if (st->pos >= st->size)
				return TACH_EOF;
			if ((rc = tachi_pr_next_field(r, &st->pos, st->size, &f)))
				return rc;
		} while (f.num != PROFILE_SAMPLE);
		if ((rc = decode_sample(r, &f, &sd)) || (rc = weight(r, &f, (int64_t)sd.value, &w)))
			return rc;
		if (!w && st->zero_weight && other_values_ext(st))
			break;
	}
	struct tach_sample *s = &r->sample;
	if ((rc = build_stack(r, &sd, &s->depth)))
		return rc;
	if (w > r->lim.max_samples || st->emitted > r->lim.max_samples - w)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, f.at, "more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	uint64_t span;
	if (__builtin_mul_overflow(st->emitted, r->meta.interval_us, &span) ||
	    __builtin_add_overflow(span, r->meta.start_time_us, &s->timestamp_us))
		s->timestamp_us = UINT64_MAX;
	st->emitted += w;
	s->thread_id = sd.tid;
	s->interp_id = sd.iid;
	s->status = sd.status >= 0 ? (uint8_t)sd.status :
		    st->cpu ? TACH_STATUS_ON_CPU : TACH_STATUS_UNKNOWN;
	s->weight = w;
	s->time_ns = st->ti >= 0 ? to_ns(st->vals[st->ti], st->time_unit_ns) : 0;
	s->same_outer = 0;
	s->frames = st->stack;
	r->ext = sample_ext(st);
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += w;
	*out = s;
	return TACH_OK;
}

/* ---- open ---- */

/* Inflates every gzip member of the input into st->own, at most max bytes. */
static int inflate_all(struct tach_reader *r, uint64_t max)
{
	struct pprof_rstate *st = r->state;
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	z.next_in = (Bytef *)r->in.data;
	z.avail_in = 0;
	size_t left = r->in.size, cap = 0, len = 0;
	int zr = Z_OK, rc = TACH_OK;
	while (!rc) {
		if (!z.avail_in && left) {
			z.avail_in = left > UINT32_MAX ? UINT32_MAX : (uInt)left;
			left -= z.avail_in;
		}
		if (zr == Z_STREAM_END) {
			/* Go reads one member after another, and refuses anything else after one */
			if (!z.avail_in)
				break;
			if (z.avail_in < 2 || z.next_in[0] != 0x1f || z.next_in[1] != 0x8b) {
				rc = RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, r->in.size - left - z.avail_in,
					   "bytes after the gzip data that are not another gzip member");
				break;
			}
			inflateReset(&z);
		}
		if (len > max || (len == cap && !TACHI_RESERVE(st->own, cap, len + (len < (1u << 20) ? (1u << 16) : len / 2)))) {
			rc = len > max ? RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0,
					       "the uncompressed profile exceeds %llu bytes (see --max-input)",
					       (unsigned long long)max)
					: RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
			break;
		}
		/* at most one byte past the limit: a bomb costs max, not the next growth step */
		size_t room = cap - len;
		if (room > max + 1 - len)
			room = (size_t)(max + 1 - len);
		z.next_out = st->own + len;
		z.avail_out = (uInt)(room < UINT32_MAX ? room : UINT32_MAX);
		size_t before = z.avail_out;
		zr = inflate(&z, Z_NO_FLUSH);
		len += before - z.avail_out;
		if (zr != Z_OK && zr != Z_STREAM_END && !(zr == Z_BUF_ERROR && z.avail_out == 0))
			rc = RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, r->in.size - left - z.avail_in,
				   "gzip data: %s", zr == Z_BUF_ERROR ? "cut short" :
				   z.msg ? z.msg : "invalid");
	}
	inflateEnd(&z);
	st->d = st->own;
	st->size = len;
	return rc;
}

static int read_tables(struct tach_reader *r)
{
	struct pprof_rstate *st = r->state;
	size_t nsamples = 0;
	struct tachi_pb_field f;
	int rc = TACH_OK;
	if (!st->size)
		return tachi_pr_fail(r, 0, "empty profile");
	for (size_t p = 0; !rc && p < st->size;)
		if (!(rc = tachi_pr_next_field(r, &p, st->size, &f)))
			rc = tachi_pr_table_field(r, &f, &nsamples);
	if (rc || (rc = tachi_pr_check_strings(r)) ||
	    (rc = tachi_pr_index_ids(r, &st->map_ix, st->maps, st->nmaps, sizeof(*st->maps), "mapping")) ||
	    (rc = tachi_pr_index_ids(r, &st->fn_ix, st->fns, st->nfns, sizeof(*st->fns), "function")) ||
	    (rc = tachi_pr_index_ids(r, &st->loc_ix, st->locs, st->nlocs, sizeof(*st->locs), "location")))
		return rc;
	if (nsamples && !st->ntypes)
		return tachi_pr_fail(r, 0, "samples but no sample types");
	return st->ntypes ? choose_type(r) : TACH_OK;
}

static int pr_open(struct tach_reader *r)
{
	struct pprof_rstate *st = r->state;
	int rc;
	st->d = r->in.data;
	st->size = r->in.size;
	if (st->size >= 2 && st->d[0] == 0x1f && st->d[1] == 0x8b) {
		st->gz = true;
		if ((rc = inflate_all(r, r->lim.max_input)))
			return rc;
	}
	if ((rc = read_tables(r)) || (rc = tachi_pr_all_frames(r)))
		return rc;
	struct tach_meta *m = &r->meta;
	m->start_time_us = st->time_nanos > 0 ? (uint64_t)st->time_nanos / 1000 : 0;
	uint64_t pu = time_unit(st, st->period_type.unit);
	uint64_t pns;
	m->interval_us = DEFAULT_INTERVAL_US;
	if (pu && st->period > 0 && !__builtin_mul_overflow((uint64_t)st->period, pu, &pns) &&
	    pns >= 1000)
		m->interval_us = pns / 1000;
	/* CPU mode (TACH's profiling_config: mode + 1), so tach2pprof says cpu again */
	m->profiling_config = st->cpu ? 2 : 0;
	if (!st->ntypes)
		return TACH_OK;
	/* a time value is each sample's own time; a time's weight is its count of samples */
	m->sample_time = st->ti >= 0;
	/* weight_type stays the type chosen, whose samples the weights count */
	return values_meta_ext(r);
}

static int pr_option(struct tach_reader *r, const char *key, const char *value)
{
	struct pprof_rstate *st = r->state;
	if (!strcmp(key, "sample-index")) {
		if (!*value)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "sample-index needs a value");
		char *c = strdup(value);
		if (!c)
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		free(st->sample_index);
		st->sample_index = c;
		return TACH_OK;
	}
	if (!strcmp(key, "zero-weight")) {
		if (!tachi_parse_bool(value, &st->zero_weight))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad zero-weight value %s", value);
		return TACH_OK;
	}
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "pprof reader has no option %s", key);
}

static void pr_free(struct tach_reader *r)
{
	struct pprof_rstate *st = r->state;
	free(st->sample_index);
	free(st->own);
	free(st->soff);
	free(st->slen);
	free(st->sid);
	free(st->types);
	free(st->maps);
	free(st->fns);
	free(st->locs);
	free(st->lines);
	free(st->frames);
	free(st->lbuf);
	free(st->stack);
	free(st->vals);
	free(st->lbls);
	free(st->meta_own);
	tachi_idset_free(&st->map_ix);
	tachi_idset_free(&st->fn_ix);
	tachi_idset_free(&st->loc_ix);
}

const struct tachi_reader_ops tachi_pprof_reader_ops = {
	.state_size = sizeof(struct pprof_rstate),
	.option = pr_option,
	.open = pr_open,
	.next = pr_next,
	.free = pr_free,
	.whole_input = true,
	.dict_at_open = true,
};
