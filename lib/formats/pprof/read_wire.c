/* The pprof reader's wire format (see pprof/read.c for the format; base/protobuf.h decodes
 * the fields): its faults as messages with their offset, sub-messages; the first pass's
 * tables (sample types, mappings, functions, locations and their lines, the string table as
 * offsets into the input); the records' ids and the strings' checks. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "core/handles.h"
#include "core/detect.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/read.h"

/* ---- errors ---- */

int tachi_pr_fail(struct tach_reader *r, size_t off, const char *fmt, ...)
{
	struct pprof_rstate *st = r->state;
	char m[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(m, sizeof(m), fmt, ap);
	va_end(ap);
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off, "%s%s", m,
		     st->gz ? " (offset in the uncompressed protobuf)" : "");
}

/* ---- the wire format ---- */

/* A field that is not one, in the wire format's words (base/protobuf.c). */
int tachi_pr_wire_fail(struct tach_reader *r, enum tachi_pb_err e, const struct tachi_pb_field *f,
		       size_t at)
{
	char m[200];
	tachi_pb_what(m, sizeof(m), e, f);
	return tachi_pr_fail(r, at, "%s", m);
}

/* ---- open: the tables ---- */

/* Walks the fields of a sub-message: each one goes to fn with the record it fills. */
int tachi_pr_each_sub(struct tach_reader *r, const struct tachi_pb_field *outer, sub_fn fn,
		      void *rec)
{
	int rc = want_type(r, outer, TACHI_PB_LEN);
	struct tachi_pb_field f;
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

static int vt_field(struct tach_reader *r, void *rec, const struct tachi_pb_field *f)
{
	struct pvt *vt = rec;
	if (f->num == VALUE_TYPE_TYPE)
		return tachi_pr_num_field(r, f, &vt->type);
	return f->num == VALUE_TYPE_UNIT ? tachi_pr_num_field(r, f, &vt->unit) : TACH_OK;
}

static int value_type(struct tach_reader *r, const struct tachi_pb_field *outer, struct pvt *vt)
{
	vt->type = vt->unit = 0;
	return tachi_pr_each_sub(r, outer, vt_field, vt);
}

static int add_string(struct tach_reader *r, const struct tachi_pb_field *f)
{
	struct pprof_rstate *st = r->state;
	int rc = want_type(r, f, TACHI_PB_LEN);
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
static int id_field(struct tach_reader *r, const struct tachi_pb_field *f, uint64_t *id)
{
	int64_t v = 0;
	int rc = tachi_pr_num_field(r, f, &v);
	*id = (uint64_t)v;
	return rc;
}

static int map_field(struct tach_reader *r, void *rec, const struct tachi_pb_field *f)
{
	struct pprof_rmap *m = rec;
	int64_t v = 0;
	int rc;
	switch (f->num) {
	case MAPPING_ID: return id_field(r, f, &m->id);
	case MAPPING_MEMORY_START: return id_field(r, f, &m->start);
	case MAPPING_MEMORY_LIMIT: return id_field(r, f, &m->limit);
	case MAPPING_FILE_OFFSET: return id_field(r, f, &m->offset);
	case MAPPING_FILENAME: return tachi_pr_num_field(r, f, &m->file);
	case MAPPING_BUILD_ID: return tachi_pr_num_field(r, f, &m->build_id);
	case MAPPING_HAS_FUNCTIONS: case MAPPING_HAS_FILENAMES: case MAPPING_HAS_LINE_NUMBERS:
	case MAPPING_HAS_INLINE_FRAMES:
		/* has_functions, has_filenames, has_line_numbers, has_inline_frames: the last
		 * value wins, as for any optional field */
		if ((rc = tachi_pr_num_field(r, f, &v)))
			return rc;
		if (v)
			m->flags |= 1u << (f->num - MAPPING_HAS_FUNCTIONS);
		else
			m->flags &= ~(1u << (f->num - MAPPING_HAS_FUNCTIONS));
		return TACH_OK;
	default: return TACH_OK;
	}
}

static int fn_field(struct tach_reader *r, void *rec, const struct tachi_pb_field *f)
{
	struct pfn *fn = rec;
	int64_t v;
	switch (f->num) {
	case FUNCTION_ID: return id_field(r, f, &fn->id);
	case FUNCTION_NAME: return tachi_pr_num_field(r, f, &fn->name);
	case FUNCTION_SYSTEM_NAME: return tachi_pr_num_field(r, f, &fn->sysname);
	case FUNCTION_FILENAME: return tachi_pr_num_field(r, f, &fn->file);
	case FUNCTION_START_LINE: return tachi_pr_num_field(r, f, &v);
	default: return TACH_OK;
	}
}

static int line_field(struct tach_reader *r, void *rec, const struct tachi_pb_field *f)
{
	struct pprof_rline *l = rec;
	switch (f->num) {
	case LINE_FUNCTION_ID: return id_field(r, f, &l->fn);
	case LINE_LINE: return tachi_pr_num_field(r, f, &l->line);
	case LINE_COLUMN: return tachi_pr_num_field(r, f, &l->col);
	default: return TACH_OK;
	}
}

/* Location fields; lines go to st->lines, in order. */
static int loc_field(struct tach_reader *r, void *rec, const struct tachi_pb_field *f)
{
	struct pprof_rstate *st = r->state;
	struct ploc *l = rec;
	int64_t v;
	switch (f->num) {
	case LOCATION_ID: return id_field(r, f, &l->id);
	case LOCATION_MAPPING_ID: return id_field(r, f, &l->mapping);
	case LOCATION_ADDRESS: return id_field(r, f, &l->address);
	case LOCATION_LINE: {
		struct pprof_rline *ln = PUSH(r, st->lines, st->nlines, st->lines_cap);
		int rc = ln ? tachi_pr_each_sub(r, f, line_field, ln) : r->err.code;
		if (!rc && !ln->fn)
			return tachi_pr_fail(r, f->at, "a location's line has no function");
		return rc;
	}
	case LOCATION_IS_FOLDED: return tachi_pr_num_field(r, f, &v);
	default: return TACH_OK;
	}
}

static int location(struct tach_reader *r, const struct tachi_pb_field *outer)
{
	struct pprof_rstate *st = r->state;
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

static int mapping(struct tach_reader *r, const struct tachi_pb_field *outer)
{
	struct pprof_rstate *st = r->state;
	struct pprof_rmap *m = PUSH(r, st->maps, st->nmaps, st->maps_cap);
	if (!m)
		return r->err.code;
	m->at = outer->at;
	return tachi_pr_each_sub(r, outer, map_field, m);
}

static int function(struct tach_reader *r, const struct tachi_pb_field *outer)
{
	struct pprof_rstate *st = r->state;
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
int tachi_pr_table_field(struct tach_reader *r, const struct tachi_pb_field *f, size_t *nsamples)
{
	struct pprof_rstate *st = r->state;
	switch (f->num) {
	case PROFILE_SAMPLE_TYPE:
		if (!TACHI_RESERVE(st->types, st->types_cap, st->ntypes + 1))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		return value_type(r, f, &st->types[st->ntypes++]);
	case PROFILE_SAMPLE:
		++*nsamples;
		return want_type(r, f, TACHI_PB_LEN);
	case PROFILE_MAPPING: return mapping(r, f);
	case PROFILE_LOCATION: return location(r, f);
	case PROFILE_FUNCTION: return function(r, f);
	case PROFILE_STRING_TABLE: return add_string(r, f);
	case PROFILE_DROP_FRAMES:
		st->drop_at = f->at;
		return tachi_pr_num_field(r, f, &st->drop);
	case PROFILE_KEEP_FRAMES:
		st->keep_at = f->at;
		return tachi_pr_num_field(r, f, &st->keep);
	case PROFILE_TIME_NANOS:
		if (st->time_nanos)
			return tachi_pr_fail(r, f->at, "a second time_nanos: concatenated profiles");
		return tachi_pr_num_field(r, f, &st->time_nanos);
	case PROFILE_DURATION_NANOS: return tachi_pr_num_field(r, f, &st->duration);
	case PROFILE_PERIOD_TYPE: return value_type(r, f, &st->period_type);
	case PROFILE_PERIOD: return tachi_pr_num_field(r, f, &st->period);
	case PROFILE_COMMENT: return tachi_pr_repeated(r, f, ignore_each, NULL);
	case PROFILE_DEFAULT_SAMPLE_TYPE: return tachi_pr_num_field(r, f, &st->dflt);
	default: return TACH_OK;
	}
}

/* ---- ids and strings ---- */

static size_t rec_at(const struct idctx *c, uint32_t i)
{
	size_t at;
	memcpy(&at, (const uint8_t *)c->base + (size_t)i * c->stride + sizeof(uint64_t), sizeof(at));
	return at;
}

/* Indexes n records by id: zero and repeated ids are refused, as pprof's CheckValid does. */
int tachi_pr_index_ids(struct tach_reader *r, struct tachi_idset *ix, const void *base,
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

/* Every string index the tables hold is in range (pprof's postDecode). */
int tachi_pr_check_strings(struct tach_reader *r)
{
	struct pprof_rstate *st = r->state;
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
