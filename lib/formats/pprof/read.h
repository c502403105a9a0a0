/* What the pprof reader's files share (pprof/read.c: the format note, the sample type,
 * samples, values and labels, open and the ops; pprof/read_wire.c: the wire format, the tables'
 * messages, ids and strings, detection; pprof/read_frames.c: the locations' frames and
 * drop_frames): the reader's state, its records of the tables, and the string table's
 * inline accessors. Private to them. */
#ifndef TACHFMT_FMT_PPROF_READ_H
#define TACHFMT_FMT_PPROF_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/protobuf.h"
#include "core/handles.h"

#define NO_STR UINT32_MAX

struct pvt {
	int64_t type, unit;
};

/* Mappings, functions and locations start alike: id, then where the record is. */
struct pprof_rmap {
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

struct pprof_rline {
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
	bool whole;          /* prune, and its frames made all the same */
};

struct pprof_rstate {
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
	struct pprof_rmap *maps;
	size_t nmaps, maps_cap;
	struct pfn *fns;
	size_t nfns, fns_cap;
	struct ploc *locs;
	size_t nlocs, locs_cap;
	struct pprof_rline *lines;
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
	/* The value that is the sample's time (the chosen type where it is a time, else the
	 * first time-typed one: cpu/nanoseconds, delay/nanoseconds...), ns per unit of it, and
	 * the count of samples ("samples"/"count") that is the weight of a time; -1: none. */
	ptrdiff_t ti, ci;
	uint64_t time_unit_ns;
	int64_t *vals;       /* the current sample's values, ntypes of them */
	struct tach_label *lbls;
	size_t nlbls, lbls_cap;
	struct tach_sample_ext ext;
	void *meta_own;      /* the meta's value types and their strings */
	bool zero_weight;    /* option: keep samples with a zero weight and other values */
};

/* The wire format (pprof/read_wire.c; a field: tachi_pr_next_field below): errors with the
 * offset, a field that is not one (base/protobuf.h's fault in words), a sub-message's
 * fields; a number field and a repeated number field (packed or not) are below. */
int tachi_pr_fail(struct tach_reader *r, size_t off, const char *fmt, ...) TACHI_PRINTF(3, 4);
int tachi_pr_wire_fail(struct tach_reader *r, enum tachi_pb_err e, const struct tachi_pb_field *f,
		       size_t at);
typedef int (*each_fn)(struct tach_reader *r, void *ctx, uint64_t v, size_t at);
typedef int (*sub_fn)(struct tach_reader *r, void *rec, const struct tachi_pb_field *f);
int tachi_pr_each_sub(struct tach_reader *r, const struct tachi_pb_field *outer, sub_fn fn,
		      void *rec);

/* The tables (pprof/read_wire.c): one top-level field of open's first pass; the records indexed
 * by id (found by id below); the dict id of a string; every string index in range. */
int tachi_pr_table_field(struct tach_reader *r, const struct tachi_pb_field *f, size_t *nsamples);
int tachi_pr_index_ids(struct tach_reader *r, struct tachi_idset *ix, const void *base,
		       size_t n, size_t stride, const char *what);
int tachi_pr_check_strings(struct tach_reader *r);

/* The locations' frames after drop_frames, and the mappings, into the dict
 * (pprof/read_frames.c). */
int tachi_pr_all_frames(struct tach_reader *r);
int tachi_pr_whole_frames(struct tach_reader *r, struct ploc *l);

/* String i of the string table, in the input: per label and per frame, so inline. */
static inline bool str_ok(const struct pprof_rstate *st, int64_t i)
{
	return i >= 0 && (uint64_t)i < st->nstr;
}

static inline const char *str_at(const struct pprof_rstate *st, int64_t i, size_t *n)
{
	*n = st->slen[i];
	return (const char *)st->d + st->soff[i];
}

static inline bool str_is(const struct pprof_rstate *st, int64_t i, const char *s)
{
	size_t n;
	const char *p = str_at(st, i, &n);
	return n == strlen(s) && !memcmp(p, s, n);
}

static inline bool str_eq(const struct pprof_rstate *st, int64_t a, int64_t b)
{
	size_t na, nb;
	const char *pa = str_at(st, a, &na), *pb = str_at(st, b, &nb);
	return na == nb && !memcmp(pa, pb, na);
}

/* Per sample: a packed field of its locations or values, and each location found by id;
 * so inline, as they were in one file. */
/* The field at *pos, which must lie within [*pos, end). Inline: once per field of every
 * sample. */
static inline int tachi_pr_next_field(struct tach_reader *r, size_t *pos, size_t end,
				      struct tachi_pb_field *f)
{
	const struct pprof_rstate *st = r->state;
	enum tachi_pb_err e = tachi_pb_next(st->d, pos, end, f);
	return TACHI_LIKELY(!e) ? TACH_OK : tachi_pr_wire_fail(r, e, f, *pos);
}

static inline int want_type(struct tach_reader *r, const struct tachi_pb_field *f, uint8_t wt)
{
	if (f->wt != wt)
		return tachi_pr_fail(r, f->at, "field %u: wire type %u where %u belongs", f->num, f->wt, wt);
	return TACH_OK;
}

/* Each number of a repeated number field, packed or not: calls each(ctx, value, where). */
static inline int tachi_pr_repeated(struct tach_reader *r, const struct tachi_pb_field *f,
				    each_fn each, void *ctx)
{
	const struct pprof_rstate *st = r->state;
	struct tachi_pb_nums it;
	if (!tachi_pb_nums_start(&it, f))
		return want_type(r, f, TACHI_PB_LEN);
	int rc = TACH_OK;
	while (!rc && tachi_pb_nums_next(st->d, &it))
		rc = each(r, ctx, it.v, it.at);
	if (!rc && TACHI_UNLIKELY(it.bad))
		return tachi_pr_wire_fail(r, TACHI_PB_E_PACKED, f, it.at);
	return rc;
}

struct idctx {
	const void *base;
	size_t stride;       /* bytes from one record to the next; its id comes first */
};

static inline uint64_t rec_id(const struct idctx *c, uint32_t i)
{
	uint64_t id;
	memcpy(&id, (const uint8_t *)c->base + (size_t)i * c->stride, sizeof(id));
	return id;
}

static inline bool id_eq(void *ctx, uint32_t i, const void *key)
{
	return rec_id(ctx, i) == *(const uint64_t *)key;
}

static inline bool tachi_pr_find_id(const struct tachi_idset *ix, const void *base,
				    size_t stride, uint64_t id, uint32_t *i)
{
	struct idctx c = { base, stride };
	return id && tachi_idset_find(ix, tachi_mix64(id), &id, id_eq, &c, i);
}

/* A number field (wire type 0) into *v. Inline, as the next: per sample. */
static inline int tachi_pr_num_field(struct tach_reader *r, const struct tachi_pb_field *f,
				     int64_t *v)
{
	int rc = want_type(r, f, TACHI_PB_VARINT);
	if (!rc)
		*v = (int64_t)f->v;
	return rc;
}

/* The dict id of string i, interned on first use. */
static inline int tachi_pr_dict_str(struct tach_reader *r, int64_t i, uint32_t *id)
{
	struct pprof_rstate *st = r->state;
	if (st->sid[i] == NO_STR) {
		size_t n;
		const char *p = str_at(st, i, &n);
		if (tach_dict_intern_string(&r->dict, p, n, &st->sid[i]))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	*id = st->sid[i];
	return TACH_OK;
}

#endif
