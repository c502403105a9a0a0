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
 * What a sample becomes: one weighted sample. The value of one sample type (option
 * sample-index = NAME or N; default default_sample_type, else the last type, as pprof)
 * is its weight: a time (nanoseconds ... seconds) divided by the period when the period is
 * a time too, rounded with a warning when not a whole multiple; any other value as it is,
 * in its unit (meta.weight_unit says which, unless it is a count of "samples"). Samples
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
#include "base/bytes.h"
#include "base/hash.h"
#include "base/regex.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/detect.h"
#include "formats/pprof.h"

enum { WT_VARINT = 0, WT_I64 = 1, WT_LEN = 2, WT_I32 = 5 };
#define NO_STR UINT32_MAX
#define DEFAULT_INTERVAL_US 1000

struct field {
	uint32_t num;
	uint8_t wt;
	uint64_t v;          /* a number's value */
	size_t off, len;     /* a LEN field's bytes */
	size_t at;           /* where the field starts */
};

struct pvt {
	int64_t type, unit;
};

/* Mappings, functions and locations start alike: id, then where the record is. */
struct pmap {
	uint64_t id;
	size_t at;
	int64_t file, build_id;
	uint64_t start, limit, offset;
	uint32_t flags;      /* TACH_MAPPING_* from has_functions ... has_inline_frames */
	uint32_t did;        /* its id in the dict */
};

struct pfn {
	uint64_t id;
	size_t at;
	int64_t name, sysname, file;
};

struct pline {
	uint64_t fn;
	int64_t line, col;
};

struct ploc {
	uint64_t id;
	size_t at;
	uint64_t mapping, address;
	uint32_t line0, nlines;
	uint32_t fr0, nfr;   /* its frames in frames[], after pruning */
	bool prune, beneath; /* drop_frames: the whole location, or the lines below a match */
};

struct pread {
	char *sample_index;  /* option */
	uint8_t *own;        /* the inflated protobuf of a gzip input */
	const uint8_t *d;
	size_t size;
	bool gz;
	size_t *soff;        /* string i: bytes [soff[i], soff[i] + slen[i]) */
	uint32_t *slen, *sid; /* sid: dict id, NO_STR until used */
	size_t nstr, soff_cap, slen_cap;
	struct pvt *types;
	size_t ntypes, types_cap;
	struct pvt period_type;
	int64_t period, time_nanos, drop, keep, dflt;
	size_t drop_at, keep_at; /* where the last drop_frames and keep_frames fields are */
	struct pmap *maps;
	size_t nmaps, maps_cap;
	struct pfn *fns;
	size_t nfns, fns_cap;
	struct ploc *locs;
	size_t nlocs, locs_cap;
	struct pline *lines;
	size_t nlines, lines_cap;
	struct tachi_idset map_ix, fn_ix, loc_ix;
	uint32_t *frames;
	size_t nframes, frames_cap;
	/* samples */
	size_t vi;           /* the value used */
	uint64_t unit_ns, period_ns; /* 0: not a time */
	bool cpu;
	size_t pos;
	uint32_t *lbuf, *stack;
	size_t lbuf_cap, stack_cap;
	uint64_t emitted;
	bool warned_round, warned_neg, warned_state;
	/* What the samples' values and labels are, for struct tach_sample_ext and the meta's
	 * value-type block (the *_ext functions below). */
	int64_t duration;
	bool raw_weight;     /* weights are values of the weight type, not samples */
	int64_t *vals;       /* the current sample's values, ntypes of them */
	struct tach_label *lbls;
	size_t nlbls, lbls_cap;
	struct tach_sample_ext ext;
	void *meta_own;      /* the meta's value types and their strings */
	bool zero_weight;    /* option: keep samples with a zero weight and other values */
};

/* ---- errors ---- */

static int tachi_pr_fail(struct tach_reader *r, size_t off, const char *fmt, ...)
	TACHI_PRINTF(3, 4);
static int tachi_pr_fail(struct tach_reader *r, size_t off, const char *fmt, ...)
{
	struct pread *st = r->state;
	char m[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off, "%s%s", m,
		     st->gz ? " (offset in the uncompressed protobuf)" : "");
}

/* ---- the wire format ---- */

/* The field at *pos, which must lie within [*pos, end). */
static int tachi_pr_next_field(struct tach_reader *r, size_t *pos, size_t end, struct field *f)
{
	struct pread *st = r->state;
	const uint8_t *d = st->d;
	uint64_t key;
	*f = (struct field){ .at = *pos };
	size_t k = tachi_uvarint(d + *pos, d + end, &key);
	if (!k)
		return tachi_pr_fail(r, *pos, "bad varint in a field key");
	*pos += k;
	if (key >> 3 > UINT32_MAX || key >> 3 == 0)
		return tachi_pr_fail(r, f->at, "field number %llu is not valid", (unsigned long long)(key >> 3));
	f->num = (uint32_t)(key >> 3);
	f->wt = key & 7;
	switch (f->wt) {
	case WT_VARINT:
		if (!(k = tachi_uvarint(d + *pos, d + end, &f->v)))
			return tachi_pr_fail(r, *pos, "bad varint in field %u", f->num);
		*pos += k;
		return TACH_OK;
	case WT_I64:
	case WT_I32: {
		size_t w = f->wt == WT_I64 ? 8 : 4;
		if (end - *pos < w)
			return tachi_pr_fail(r, *pos, "field %u: not enough data", f->num);
		f->v = w == 8 ? tachi_rd64(d + *pos, false) : tachi_rd32le(d + *pos);
		*pos += w;
		return TACH_OK;
	}
	case WT_LEN:
		if (!(k = tachi_uvarint(d + *pos, d + end, &f->v)))
			return tachi_pr_fail(r, *pos, "bad varint in the length of field %u", f->num);
		*pos += k;
		if (f->v > end - *pos)
			return tachi_pr_fail(r, f->at, "field %u: length %llu runs past its message", f->num,
					     (unsigned long long)f->v);
		f->off = *pos;
		f->len = (size_t)f->v;
		*pos += f->len;
		return TACH_OK;
	default:
		return tachi_pr_fail(r, f->at, "field %u: unknown wire type %u", f->num, f->wt);
	}
}

static int want_type(struct tach_reader *r, const struct field *f, uint8_t wt)
{
	if (f->wt != wt)
		return tachi_pr_fail(r, f->at, "field %u: wire type %u where %u belongs", f->num, f->wt, wt);
	return TACH_OK;
}

/* A number field (wire type 0) into *v. */
static int tachi_pr_num_field(struct tach_reader *r, const struct field *f, int64_t *v)
{
	int rc = want_type(r, f, WT_VARINT);
	if (!rc)
		*v = (int64_t)f->v;
	return rc;
}

/* One element of a repeated number field, packed or not: calls each(ctx, value). */
typedef int (*each_fn)(struct tach_reader *r, void *ctx, uint64_t v, size_t at);
static int tachi_pr_repeated(struct tach_reader *r, const struct field *f, each_fn each, void *ctx)
{
	struct pread *st = r->state;
	if (f->wt == WT_VARINT)
		return each(r, ctx, f->v, f->at);
	int rc = want_type(r, f, WT_LEN);
	for (size_t p = f->off, end = f->off + f->len; !rc && p < end;) {
		uint64_t v;
		size_t k = tachi_uvarint(st->d + p, st->d + end, &v);
		if (!k)
			return tachi_pr_fail(r, p, "bad varint in packed field %u", f->num);
		rc = each(r, ctx, v, p);
		p += k;
	}
	return rc;
}

/* ---- open: the tables ---- */

/* Walks the fields of a sub-message: each one goes to fn with the record it fills. */
typedef int (*sub_fn)(struct tach_reader *r, void *rec, const struct field *f);
static int tachi_pr_each_sub(struct tach_reader *r, const struct field *outer, sub_fn fn, void *rec)
{
	int rc = want_type(r, outer, WT_LEN);
	struct field f;
	for (size_t p = outer->off, end = outer->off + outer->len; !rc && p < end;)
		if (!(rc = tachi_pr_next_field(r, &p, end, &f)))
			rc = fn(r, rec, &f);
	return rc;
}

/* A new zeroed record at the end of *arr; NULL when memory is short (recorded). */
static void *push(struct tach_reader *r, void **arr, size_t *n, size_t *cap, size_t size)
{
	/* records are numbered in 32 bits (the id index, a location's lines) */
	if (*n >= UINT32_MAX - 1) {
		RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "more than %u records of one kind",
		      UINT32_MAX - 1);
		return NULL;
	}
	if (!tachi_reserve(arr, cap, *n + 1, size)) {
		RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		return NULL;
	}
	void *rec = (uint8_t *)*arr + (*n)++ * size;
	memset(rec, 0, size);
	return rec;
}
#define PUSH(r, arr, n, cap) push((r), (void **)&(arr), &(n), &(cap), sizeof(*(arr)))

static int vt_field(struct tach_reader *r, void *rec, const struct field *f)
{
	struct pvt *vt = rec;
	if (f->num == 1)
		return tachi_pr_num_field(r, f, &vt->type);
	return f->num == 2 ? tachi_pr_num_field(r, f, &vt->unit) : TACH_OK;
}

static int value_type(struct tach_reader *r, const struct field *outer, struct pvt *vt)
{
	vt->type = vt->unit = 0;
	return tachi_pr_each_sub(r, outer, vt_field, vt);
}

static int add_string(struct tach_reader *r, const struct field *f)
{
	struct pread *st = r->state;
	int rc = want_type(r, f, WT_LEN);
	if (rc)
		return rc;
	if (st->nstr == 0 && f->len)
		return tachi_pr_fail(r, f->at, "string_table[0] must be ''");
	if (f->len > TACHI_MAX_STRING)
		return tachi_pr_fail(r, f->at, "a string of %zu bytes, longer than any name (the limit is %u)",
				     f->len, TACHI_MAX_STRING);
	if (!TACHI_RESERVE(st->soff, st->soff_cap, st->nstr + 1) ||
	    !TACHI_RESERVE(st->slen, st->slen_cap, st->nstr + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->soff[st->nstr] = f->off;
	st->slen[st->nstr++] = (uint32_t)f->len;
	return TACH_OK;
}

/* An id field (a u64 sent as a varint). */
static int id_field(struct tach_reader *r, const struct field *f, uint64_t *id)
{
	int64_t v = 0;
	int rc = tachi_pr_num_field(r, f, &v);
	*id = (uint64_t)v;
	return rc;
}

static int map_field(struct tach_reader *r, void *rec, const struct field *f)
{
	struct pmap *m = rec;
	int64_t v = 0;
	int rc;
	switch (f->num) {
	case 1: return id_field(r, f, &m->id);
	case 2: return id_field(r, f, &m->start);
	case 3: return id_field(r, f, &m->limit);
	case 4: return id_field(r, f, &m->offset);
	case 5: return tachi_pr_num_field(r, f, &m->file);
	case 6: return tachi_pr_num_field(r, f, &m->build_id);
	case 7: case 8: case 9: case 10:
		/* has_functions, has_filenames, has_line_numbers, has_inline_frames: the last
		 * value wins, as for any optional field */
		if ((rc = tachi_pr_num_field(r, f, &v)))
			return rc;
		if (v)
			m->flags |= 1u << (f->num - 7);
		else
			m->flags &= ~(1u << (f->num - 7));
		return TACH_OK;
	default: return TACH_OK;
	}
}

static int fn_field(struct tach_reader *r, void *rec, const struct field *f)
{
	struct pfn *fn = rec;
	int64_t v;
	switch (f->num) {
	case 1: return id_field(r, f, &fn->id);
	case 2: return tachi_pr_num_field(r, f, &fn->name);
	case 3: return tachi_pr_num_field(r, f, &fn->sysname);
	case 4: return tachi_pr_num_field(r, f, &fn->file);
	case 5: return tachi_pr_num_field(r, f, &v);
	default: return TACH_OK;
	}
}

static int line_field(struct tach_reader *r, void *rec, const struct field *f)
{
	struct pline *l = rec;
	switch (f->num) {
	case 1: return id_field(r, f, &l->fn);
	case 2: return tachi_pr_num_field(r, f, &l->line);
	case 3: return tachi_pr_num_field(r, f, &l->col);
	default: return TACH_OK;
	}
}

/* Location fields; lines go to st->lines, in order. */
static int loc_field(struct tach_reader *r, void *rec, const struct field *f)
{
	struct pread *st = r->state;
	struct ploc *l = rec;
	int64_t v;
	switch (f->num) {
	case 1: return id_field(r, f, &l->id);
	case 2: return id_field(r, f, &l->mapping);
	case 3: return id_field(r, f, &l->address);
	case 4: {
		struct pline *ln = PUSH(r, st->lines, st->nlines, st->lines_cap);
		int rc = ln ? tachi_pr_each_sub(r, f, line_field, ln) : r->err.code;
		if (!rc && !ln->fn)
			return tachi_pr_fail(r, f->at, "a location's line has no function");
		return rc;
	}
	case 5: return tachi_pr_num_field(r, f, &v);
	default: return TACH_OK;
	}
}

static int location(struct tach_reader *r, const struct field *outer)
{
	struct pread *st = r->state;
	struct ploc *l = PUSH(r, st->locs, st->nlocs, st->locs_cap);
	if (!l)
		return r->err.code;
	l->at = outer->at;
	l->line0 = (uint32_t)st->nlines;
	int rc = tachi_pr_each_sub(r, outer, loc_field, l);
	/* Lines are only ever appended: this location's are the last ones. */
	l->nlines = (uint32_t)(st->nlines - l->line0);
	return rc;
}

static int mapping(struct tach_reader *r, const struct field *outer)
{
	struct pread *st = r->state;
	struct pmap *m = PUSH(r, st->maps, st->nmaps, st->maps_cap);
	if (!m)
		return r->err.code;
	m->at = outer->at;
	return tachi_pr_each_sub(r, outer, map_field, m);
}

static int function(struct tach_reader *r, const struct field *outer)
{
	struct pread *st = r->state;
	struct pfn *fn = PUSH(r, st->fns, st->nfns, st->fns_cap);
	if (!fn)
		return r->err.code;
	fn->at = outer->at;
	return tachi_pr_each_sub(r, outer, fn_field, fn);
}

static int ignore_each(struct tach_reader *r, void *ctx, uint64_t v, size_t at)
{
	(void)r, (void)ctx, (void)v, (void)at;
	return TACH_OK;
}

/* One top-level field of the first pass. */
static int tachi_pr_table_field(struct tach_reader *r, const struct field *f, size_t *nsamples)
{
	struct pread *st = r->state;
	switch (f->num) {
	case 1:
		if (!TACHI_RESERVE(st->types, st->types_cap, st->ntypes + 1))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		return value_type(r, f, &st->types[st->ntypes++]);
	case 2:
		++*nsamples;
		return want_type(r, f, WT_LEN);
	case 3: return mapping(r, f);
	case 4: return location(r, f);
	case 5: return function(r, f);
	case 6: return add_string(r, f);
	case 7:
		st->drop_at = f->at;
		return tachi_pr_num_field(r, f, &st->drop);
	case 8:
		st->keep_at = f->at;
		return tachi_pr_num_field(r, f, &st->keep);
	case 9:
		if (st->time_nanos)
			return tachi_pr_fail(r, f->at, "a second time_nanos: concatenated profiles");
		return tachi_pr_num_field(r, f, &st->time_nanos);
	case 10: return tachi_pr_num_field(r, f, &st->duration);
	case 11: return value_type(r, f, &st->period_type);
	case 12: return tachi_pr_num_field(r, f, &st->period);
	case 13: return tachi_pr_repeated(r, f, ignore_each, NULL);
	case 14: return tachi_pr_num_field(r, f, &st->dflt);
	default: return TACH_OK;
	}
}

/* ---- ids and strings ---- */

struct idctx {
	const void *base;
	size_t stride;       /* bytes from one record to the next; its id comes first */
};

static uint64_t rec_id(const struct idctx *c, uint32_t i)
{
	uint64_t id;
	memcpy(&id, (const uint8_t *)c->base + (size_t)i * c->stride, sizeof(id));
	return id;
}

static size_t rec_at(const struct idctx *c, uint32_t i)
{
	size_t at;
	memcpy(&at, (const uint8_t *)c->base + (size_t)i * c->stride + sizeof(uint64_t), sizeof(at));
	return at;
}

static bool id_eq(void *ctx, uint32_t i, const void *key)
{
	return rec_id(ctx, i) == *(const uint64_t *)key;
}


/* Indexes n records by id: zero and repeated ids are refused, as pprof's CheckValid does. */
static int tachi_pr_index_ids(struct tach_reader *r, struct tachi_idset *ix, const void *base,
			      size_t n, size_t stride, const char *what)
{
	struct idctx c = { base, stride };
	for (size_t i = 0; i < n; i++) {
		uint64_t id = rec_id(&c, (uint32_t)i);
		uint32_t found;
		if (!id)
			return tachi_pr_fail(r, rec_at(&c, (uint32_t)i), "a %s with the reserved id 0", what);
		if (tachi_idset_find(ix, tachi_mix64(id), &id, id_eq, &c, &found))
			return tachi_pr_fail(r, rec_at(&c, (uint32_t)i), "several %ss with id %llu", what,
					     (unsigned long long)id);
		if (!tachi_idset_insert(ix, tachi_mix64(id), (uint32_t)i))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	return TACH_OK;
}

static bool tachi_pr_find_id(const struct tachi_idset *ix, const void *base, size_t stride,
			     uint64_t id, uint32_t *i)
{
	struct idctx c = { base, stride };
	return id && tachi_idset_find(ix, tachi_mix64(id), &id, id_eq, &c, i);
}

static bool str_ok(const struct pread *st, int64_t i)
{
	return i >= 0 && (uint64_t)i < st->nstr;
}

static const char *str_at(const struct pread *st, int64_t i, size_t *n)
{
	*n = st->slen[i];
	return (const char *)st->d + st->soff[i];
}

static bool str_is(const struct pread *st, int64_t i, const char *s)
{
	size_t n;
	const char *p = str_at(st, i, &n);
	return n == strlen(s) && !memcmp(p, s, n);
}

static bool str_eq(const struct pread *st, int64_t a, int64_t b)
{
	size_t na, nb;
	const char *pa = str_at(st, a, &na), *pb = str_at(st, b, &nb);
	return na == nb && !memcmp(pa, pb, na);
}

/* The dict id of string i, interned on first use. */
static int tachi_pr_dict_str(struct tach_reader *r, int64_t i, uint32_t *id)
{
	struct pread *st = r->state;
	if (st->sid[i] == NO_STR) {
		size_t n;
		const char *p = str_at(st, i, &n);
		if (tach_dict_intern_string(&r->dict, p, n, &st->sid[i]))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	*id = st->sid[i];
	return TACH_OK;
}

/* Every string index the tables hold is in range (pprof's postDecode). */
static int tachi_pr_check_strings(struct tach_reader *r)
{
	struct pread *st = r->state;
	if (!st->nstr)
		return tachi_pr_fail(r, 0, "no string table: string_table[0] must be ''");
	for (size_t i = 0; i < st->nmaps; i++)
		if (!str_ok(st, st->maps[i].file) || !str_ok(st, st->maps[i].build_id))
			return tachi_pr_fail(r, st->maps[i].at, "mapping %llu: string index out of range",
					     (unsigned long long)st->maps[i].id);
	for (size_t i = 0; i < st->nfns; i++)
		if (!str_ok(st, st->fns[i].name) || !str_ok(st, st->fns[i].sysname) ||
		    !str_ok(st, st->fns[i].file))
			return tachi_pr_fail(r, st->fns[i].at, "function %llu: string index out of range",
					     (unsigned long long)st->fns[i].id);
	for (size_t i = 0; i < st->ntypes; i++)
		if (!str_ok(st, st->types[i].type) || !str_ok(st, st->types[i].unit))
			return tachi_pr_fail(r, 0, "sample type %zu: string index out of range", i);
	if (!str_ok(st, st->period_type.type) || !str_ok(st, st->period_type.unit) ||
	    !str_ok(st, st->drop) || !str_ok(st, st->keep) || !str_ok(st, st->dflt))
		return tachi_pr_fail(r, 0, "period type, drop_frames, keep_frames or default_sample_type: "
				"string index out of range");
	return TACH_OK;
}

/* ---- the sample type ---- */

/* Nanoseconds in one unit of a time unit; 0 for any other unit. */
static uint64_t time_unit(const struct pread *st, int64_t unit)
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

/* The sample-index option, or pprof's default. */
static int choose_type(struct tach_reader *r)
{
	struct pread *st = r->state;
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
	if (!(st->vals = calloc(st->ntypes, sizeof(*st->vals))))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

/* ---- frames ---- */

/* pprof matches drop_frames and keep_frames against a name without a leading '.' (PPC ELF
 * v1) and without its argument list: cut at the first '(' that is not part of "(anonymous
 * namespace)" or "operator()" (profile/prune.go, simplifyFunc). */
static const char *simplified(const char *s, size_t *len)
{
	static const char anon[] = "(anonymous namespace)", op[] = "operator()";
	size_t n = *len, i = 0;
	if (n && s[0] == '.')
		s++, n--;
	while (i < n) {
		if (n - i >= sizeof(anon) - 1 && !memcmp(s + i, anon, sizeof(anon) - 1))
			i += sizeof(anon) - 1;
		else if (n - i >= sizeof(op) - 1 && !memcmp(s + i, op, sizeof(op) - 1))
			i += sizeof(op) - 1;
		else if (s[i] == '(')
			break;
		else
			i++;
	}
	*len = i;
	return s;
}

struct prune {
	struct tachi_regex *drop, *keep; /* no drop: nothing is pruned */
	uint8_t *seen;       /* per string: 0 not matched yet, 1 kept, 2 dropped */
};

/* pprof compiles ^(PATTERN)$ with Go's regexp (RE2 syntax); ours takes the same syntax and
 * matches in linear time. pprof's RemoveUninteresting returns an error for a pattern Go
 * refuses, and pprof's driver ignores that error and shows the profile unpruned: so a
 * refused pattern is a warning here, and no frame is dropped. The few Go takes and we do
 * not (a Unicode class, a program over our bound) are warned about as such. */
static int compile(struct tach_reader *r, int64_t s, size_t at, const char *field,
		   struct tachi_regex **re)
{
	struct pread *st = r->state;
	struct tachi_regex_err e;
	size_t n;
	const char *p = str_at(st, s, &n);
	char *pat = malloc(n + 5);
	if (!pat)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	memcpy(pat, "^(", 2);
	memcpy(pat + 2, p, n);
	memcpy(pat + 2 + n, ")$", 2);
	int rc = tachi_regex_compile(pat, n + 4, re, &e);
	free(pat);
	if (rc == TACH_E_NOMEM)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	if (!rc)
		return TACH_OK;
	/* e.at counts the "^(" before the pattern; its bytes may be anything: one line */
	char m[400];
	snprintf(m, sizeof(m), "%s \"%.*s%s\", byte %zu: %s; %s: no frames dropped%s", field,
		 (int)(n > 60 ? 60 : n), p, n > 60 ? "..." : "",
		 e.at > 2 ? (e.at - 2 < n ? e.at - 2 : n) : 0, e.msg,
		 rc == TACH_E_FORMAT ? "pprof refuses it too" : "pprof would take it, this reader "
		 "does not", st->gz ? " (offset in the uncompressed protobuf)" : "");
	for (char *c = m; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	tachi_warn(&r->warn, TACH_POS_OFFSET, at, "%s", m);
	return TACH_OK;
}

/* Whether function fn's name matches drop_frames and not keep_frames: once per name. */
static bool dropped(struct pread *st, struct prune *pr, const struct pfn *fn)
{
	size_t n;
	const char *p = str_at(st, fn->name, &n);
	if (!n)
		return false;
	uint8_t *seen = &pr->seen[fn->name];
	if (!*seen) {
		p = simplified(p, &n);
		bool d = tachi_regex_search(pr->drop, p, n) &&
			 !(pr->keep && tachi_regex_search(pr->keep, p, n));
		*seen = d ? 2 : 1;
	}
	return *seen == 2;
}

/* The location's mapping, NULL when its id names none (no mapping, as in pprof). */
static const struct pmap *loc_map(const struct pread *st, const struct ploc *l)
{
	uint32_t m;
	return tachi_pr_find_id(&st->map_ix, st->maps, sizeof(*st->maps), l->mapping, &m)
		       ? &st->maps[m] : NULL;
}

static int add_frame(struct tach_reader *r, const struct tach_frame *f,
		     const struct tach_frame_native *n)
{
	struct pread *st = r->state;
	if (st->nframes >= UINT32_MAX - 1)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "more than %u frames",
			     UINT32_MAX - 1);
	if (!TACHI_RESERVE(st->frames, st->frames_cap, st->nframes + 1) ||
	    tach_dict_intern_frame_native(&r->dict, f, n, &st->frames[st->nframes]))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->nframes++;
	return TACH_OK;
}

static int line_frame(struct tach_reader *r, const struct pline *ln, const struct pfn *fn,
		      const struct tach_frame_native *n)
{
	struct pread *st = r->state;
	struct tach_frame f = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	int64_t name = st->slen[fn->name] ? fn->name : fn->sysname;
	int rc = tachi_pr_dict_str(r, name, &f.func);
	if (rc || (rc = tachi_pr_dict_str(r, fn->file, &f.file)))
		return rc;
	if (ln->line > 0 && ln->line <= INT32_MAX)
		f.line = f.end_line = (int32_t)ln->line;
	if (ln->col > 0 && ln->col <= INT32_MAX)
		f.col = (int32_t)ln->col;
	return add_frame(r, &f, n);
}

/* A location without lines (unsymbolized). In its mapping's range it is named by module
 * and file offset, "libc.so.6+0x2a1c0" in "/usr/lib/.../libc.so.6", so that it stays
 * symbolizable where no mapping table goes (TACH, collapsed text: tachfmt(5)); else by its
 * address, "0x4011d6", in its mapping's file, else in "~" (none). */
static int address_frame(struct tach_reader *r, const struct ploc *l,
			 const struct tach_frame_native *n)
{
	struct pread *st = r->state;
	struct tach_frame f = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	const struct pmap *m = loc_map(st, l);
	size_t flen = m ? st->slen[m->file] : 0;
	const char *file = flen ? str_at(st, m->file, &flen) : NULL;
	char name[300];
	int k;
	if (file && l->address >= m->start && l->address < m->limit) {
		const char *slash = memchr(file, '/', flen) ? file + flen : NULL;
		while (slash && slash[-1] != '/')
			slash--;
		const char *base = slash ? slash : file;
		size_t blen = flen - (size_t)(base - file);
		if (blen > 250)
			blen = 250;
		k = snprintf(name, sizeof(name), "%.*s+0x%llx", (int)blen, base,
			     (unsigned long long)(l->address - m->start + m->offset));
	} else {
		k = snprintf(name, sizeof(name), "0x%llx", (unsigned long long)l->address);
	}
	if (tach_dict_intern_string(&r->dict, name, (size_t)k, &f.func))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	int rc = file ? tachi_pr_dict_str(r, m->file, &f.file)
		      : tach_dict_intern_string(&r->dict, "~", 1, &f.file) ? TACH_E_NOMEM : TACH_OK;
	if (rc)
		return rc == TACH_E_NOMEM ? RFAIL(r, rc, TACH_POS_NONE, 0, "out of memory") : rc;
	return add_frame(r, &f, n);
}

static const struct pfn *line_fn(struct tach_reader *r, const struct ploc *l, uint32_t j)
{
	struct pread *st = r->state;
	uint32_t fi;
	uint64_t fid = st->lines[l->line0 + j].fn;
	if (!tachi_pr_find_id(&st->fn_ix, st->fns, sizeof(*st->fns), fid, &fi)) {
		tachi_pr_fail(r, l->at, "location %llu: a line's function %llu does not exist",
			      (unsigned long long)l->id, (unsigned long long)fid);
		return NULL;
	}
	return &st->fns[fi];
}

/* Location i's frames after drop_frames, innermost first. */
static int loc_frames(struct tach_reader *r, struct prune *pr, size_t i)
{
	struct pread *st = r->state;
	struct ploc *l = &st->locs[i];
	uint32_t start = 0;
	const struct pfn *fn;
	for (uint32_t j = 0; j < l->nlines; j++)
		if (!line_fn(r, l, j))
			return r->err.code;
	for (uint32_t k = l->nlines; pr->drop && k-- > 0;) {
		if (!(fn = line_fn(r, l, k)))
			return r->err.code;
		if (dropped(st, pr, fn)) {
			l->beneath = true;
			l->prune = k == l->nlines - 1;
			start = k + 1;
			break;
		}
	}
	l->fr0 = (uint32_t)st->nframes;
	/* Its address and mapping go on each of its frames; all but the outermost line
	 * were inlined into the next one out (tach_frame_native). */
	const struct pmap *m = loc_map(st, l);
	struct tach_frame_native n = { l->address, m ? m->did : 0, 0 };
	int rc = l->nlines ? TACH_OK : address_frame(r, l, &n);
	for (uint32_t j = start; !rc && j < l->nlines; j++) {
		n.inlined = j + 1 < l->nlines;
		rc = (fn = line_fn(r, l, j)) ? line_frame(r, &st->lines[l->line0 + j], fn, &n)
					     : r->err.code;
	}
	l->nfr = (uint32_t)(st->nframes - l->fr0);
	return rc;
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
	struct pread *st = r->state;
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
	struct pread *st = r->state;
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

static int label_field(struct tach_reader *r, void *rec, const struct field *f)
{
	struct plabel *lb = rec;
	int64_t *to = f->num == 1 ? &lb->key : f->num == 2 ? &lb->str : f->num == 3 ? &lb->num :
		      f->num == 4 ? &lb->unit : NULL;
	return to ? tachi_pr_num_field(r, f, to) : TACH_OK;
}

static int label(struct tach_reader *r, const struct field *outer, struct sdec *sd)
{
	struct pread *st = r->state;
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
	struct pread *st = r->state;
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
static bool other_values_ext(const struct pread *st)
{
	for (size_t i = 0; i < st->ntypes; i++)
		if (i != st->vi && st->vals[i] > 0)
			return true;
	return false;
}

static const struct tach_sample_ext *sample_ext(struct pread *st)
{
	st->ext = (struct tach_sample_ext){ sizeof(st->ext), (uint32_t)st->ntypes, st->vals,
					    (uint32_t)st->nlbls, st->lbls };
	return &st->ext;
}

/* String i copied NUL-terminated to *at; NULL for the empty string. */
static const char *meta_str(const struct pread *st, int64_t i, char **at)
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
	struct pread *st = r->state;
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

static int sample_field(struct tach_reader *r, void *rec, const struct field *f)
{
	if (f->num == 1)
		return tachi_pr_repeated(r, f, loc_each, rec);
	if (f->num == 2)
		return tachi_pr_repeated(r, f, val_each, rec);
	return f->num == 3 ? label(r, f, rec) : TACH_OK;
}

/* The sample message into sd and st->lbuf (its locations, leaf first). */
static int decode_sample(struct tach_reader *r, const struct field *outer, struct sdec *sd)
{
	struct pread *st = r->state;
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
 * location to prune after a kept one cuts the stack there, as pprof's Prune does. */
static int build_stack(struct tach_reader *r, const struct sdec *sd, uint32_t *depth)
{
	struct pread *st = r->state;
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
		const struct ploc *l = &st->locs[st->lbuf[i]];
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

/* The chosen value as a number of samples; 0 to leave the sample out. */
static int weight(struct tach_reader *r, const struct field *f, int64_t v, uint64_t *w)
{
	struct pread *st = r->state;
	*w = 0;
	if (v < 0 && !st->warned_neg) {
		st->warned_neg = true;
		tachi_warn(&r->warn, TACH_POS_OFFSET, f->at,
			   "samples with negative values (a difference profile) are left out");
	}
	if (v <= 0)
		return TACH_OK;
	if (!st->unit_ns || !st->period_ns) {
		*w = (uint64_t)v;
		return TACH_OK;
	}
	unsigned __int128 ns = (unsigned __int128)(uint64_t)v * st->unit_ns;
	unsigned __int128 q = ns / st->period_ns, rem = ns % st->period_ns;
	if (rem && !st->warned_round) {
		st->warned_round = true;
		tachi_warn(&r->warn, TACH_POS_OFFSET, f->at, "time values are not whole multiples of "
			   "the period (%llu ns): rounded to the nearest number of samples",
			   (unsigned long long)st->period_ns);
	}
	q += rem * 2 >= st->period_ns;
	if (q > UINT64_MAX)
		return tachi_pr_fail(r, f->at, "a sample's value is more than 2^64 samples");
	*w = (uint64_t)q;
	return TACH_OK;
}

static int pr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct pread *st = r->state;
	struct field f;
	struct sdec sd;
	uint64_t w = 0;
	int rc;
	while (!w) {
		do {
			if (st->pos >= st->size)
				return TACH_EOF;
			if ((rc = tachi_pr_next_field(r, &st->pos, st->size, &f)))
				return rc;
		} while (f.num != 2);
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
	struct pread *st = r->state;
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
	struct pread *st = r->state;
	size_t nsamples = 0;
	struct field f;
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

/* The patterns, as pprof's RemoveUninteresting: keep_frames only with drop_frames, and
 * either one refused means no pruning at all. */
static int prune_setup(struct tach_reader *r, struct prune *pr)
{
	struct pread *st = r->state;
	int rc;
	if (!st->slen[st->drop])
		return TACH_OK;
	if ((rc = compile(r, st->drop, st->drop_at, "drop_frames", &pr->drop)) || !pr->drop)
		return rc;
	if (st->slen[st->keep] &&
	    ((rc = compile(r, st->keep, st->keep_at, "keep_frames", &pr->keep)) || !pr->keep)) {
		tachi_regex_free(pr->drop);
		pr->drop = NULL;
		return rc;
	}
	if (!(pr->seen = calloc(st->nstr ? st->nstr : 1, 1)))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

/* A mapping into the dict, in file order (pprof's first is the main one). */
static int dict_mapping(struct tach_reader *r, struct pmap *pm)
{
	struct pread *st = r->state;
	struct tach_mapping m = { pm->start, pm->limit, pm->offset, 0, TACH_NO_STRING, pm->flags };
	int rc = tachi_pr_dict_str(r, pm->file, &m.file);
	if (!rc && st->slen[pm->build_id])
		rc = tachi_pr_dict_str(r, pm->build_id, &m.build_id);
	if (!rc && tach_dict_intern_mapping(&r->dict, &m, &pm->did))
		rc = RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return rc;
}

static int tachi_pr_all_frames(struct tach_reader *r)
{
	struct pread *st = r->state;
	struct prune pr = { 0 };
	int rc = TACH_OK;
	st->sid = malloc((st->nstr ? st->nstr : 1) * sizeof(*st->sid));
	if (!st->sid)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	memset(st->sid, 0xff, st->nstr * sizeof(*st->sid));
	rc = prune_setup(r, &pr);
	for (size_t i = 0; !rc && i < st->nmaps; i++)
		rc = dict_mapping(r, &st->maps[i]);
	for (size_t i = 0; !rc && i < st->nlocs; i++)
		rc = loc_frames(r, &pr, i);
	tachi_regex_free(pr.drop);
	tachi_regex_free(pr.keep);
	free(pr.seen);
	return rc;
}

static int pr_open(struct tach_reader *r)
{
	struct pread *st = r->state;
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
	return st->ntypes ? values_meta_ext(r) : TACH_OK;
}

static int pr_option(struct tach_reader *r, const char *key, const char *value)
{
	struct pread *st = r->state;
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
	struct pread *st = r->state;
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
	.state_size = sizeof(struct pread),
	.option = pr_option,
	.open = pr_open,
	.next = pr_next,
	.free = pr_free,
	.whole_input = true,
	.dict_at_open = true,
};

/* ---- detection ---- */

/* Whether p[0, n) is a plausible start of a Profile message: known fields with their wire
 * types, value types made of numbers, a first string that is empty; a field cut by the end
 * of the peeked bytes is fine when cut says more may follow. */
static bool plausible(const uint8_t *p, size_t n, bool cut)
{
	static const uint8_t wt[15] = { 9, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 9, 0 };
	size_t i = 0, fields = 0, strings = 0;
	while (i < n) {
		uint64_t key, v;
		size_t k = tachi_uvarint(p + i, p + n, &key);
		if (!k)
			return cut && fields > 0;
		uint64_t num = key >> 3;
		unsigned t = key & 7;
		if (!num || num > 14 || (wt[num] != 9 && wt[num] != t) ||
		    (num == 13 && t != 0 && t != 2))
			return false;
		i += k;
		if (!(k = tachi_uvarint(p + i, p + n, &v)))
			return cut && fields > 0;
		i += k;
		if (t == 2 && v > n - i)
			return cut && fields > 0;
		if (t == 2 && num == 6 && strings++ == 0 && v != 0)
			return false;
		if (t == 2 && (num == 1 || num == 11)) {
			for (size_t j = i; j < i + v;) {
				uint64_t sk, sv;
				size_t a = tachi_uvarint(p + j, p + i + v, &sk);
				size_t b = a ? tachi_uvarint(p + j + a, p + i + v, &sv) : 0;
				if (!a || !b || (sk != 8 && sk != 16))
					return false;
				j += a + b;
			}
		}
		i += t == 2 ? (size_t)v : 0;
		fields++;
	}
	return fields > 0;
}

/* gzip data (the one compressed format read), or a first field that a Profile message may
 * start with: a known field number with its wire type. */
bool tachi_pprof_resembles(const uint8_t *p, size_t n)
{
	static const uint8_t wt[15] = { 9, 2, 2, 2, 2, 2, 2, 0, 0, 0, 0, 2, 0, 9, 0 };
	if (n >= 2 && p[0] == 0x1f && p[1] == 0x8b)
		return true;
	unsigned num = n ? p[0] >> 3 : 0;
	return num >= 1 && num <= 14 && (wt[num] == 9 || wt[num] == (p[0] & 7));
}

bool tachi_pprof_probe(const uint8_t *p, size_t n)
{
	if (n < 2 || p[0] != 0x1f || p[1] != 0x8b)
		return plausible(p, n, n >= TACHI_PROBE_BYTES);
	uint8_t out[TACHI_PROBE_BYTES];
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + MAX_WBITS) != Z_OK)
		return false;
	z.next_in = (Bytef *)p;
	z.avail_in = (uInt)n;
	z.next_out = out;
	z.avail_out = sizeof(out);
	int zr;
	/* Members one after another, as the reader takes them: a first member of a few
	 * bytes says little about the profile. */
	while ((zr = inflate(&z, Z_SYNC_FLUSH)) == Z_STREAM_END && z.avail_out && z.avail_in >= 2 &&
	       z.next_in[0] == 0x1f && z.next_in[1] == 0x8b)
		inflateReset(&z);
	size_t got = sizeof(out) - z.avail_out;
	bool ended = zr == Z_STREAM_END && !z.avail_in;
	inflateEnd(&z);
	if (zr != Z_OK && zr != Z_STREAM_END && zr != Z_BUF_ERROR)
		return false;
	return plausible(out, got, !ended);
}
