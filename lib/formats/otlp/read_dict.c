/* The OTLP reader's dictionary (see read.h): its tables as spans of the input, strings
 * interned as they are used, attributes, mappings and each location's frames. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/protobuf.h"
#include "model/dict.h"
#include "core/handles.h"
#include "formats/otlp/read.h"

int tachi_or_bad(struct tach_reader *r, size_t at, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at, "%s", what);
}

int tachi_or_nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

/* The next field of d[*pos, end), or a failure at its offset. */
int tachi_or_field(struct tach_reader *r, size_t *pos, size_t end, struct tachi_pb_field *f)
{
	struct otlp_rstate *st = r->state;
	enum tachi_pb_err e = tachi_pb_next(st->d, pos, end, f);
	if (e == TACHI_PB_OK)
		return TACH_OK;
	char m[96];
	tachi_pb_what(m, sizeof(m), e, f);
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, *pos, "%s", m);
}

/* A field that must have wire type wt. */
int tachi_or_want(struct tach_reader *r, const struct tachi_pb_field *f, uint8_t wt)
{
	if (f->wt == wt)
		return TACH_OK;
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, f->at, "field %u: wire type %u, not %u",
		     f->num, f->wt, wt);
}

/* An int32 index (a varint, negative ones sign-extended to 64 bits) into a table of n
 * entries: negative or past n is an error at at. */
int tachi_or_index(struct tach_reader *r, size_t at, uint64_t v, size_t n, const char *table,
		   uint32_t *out)
{
	int64_t i = (int64_t)v;
	if (i < 0 || i > INT32_MAX || (uint64_t)i >= n)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at, "%s index %lld out of range "
			     "(%zu entries)", table, (long long)i, n);
	*out = (uint32_t)i;
	return TACH_OK;
}

/* ---- the dictionary ---- */

int tachi_or_read_dict(struct tach_reader *r, const struct tachi_pb_field *df)
{
	struct otlp_rstate *st = r->state;
	size_t pos = df->off, end = df->off + df->len;
	for (size_t t = 0; t <= DICT_STACK; t++)
		st->ntab[t] = 0;
	while (pos < end) {
		struct tachi_pb_field f;
		int rc = tachi_or_field(r, &pos, end, &f);
		if (rc)
			return rc;
		if (f.num < DICT_MAPPING || f.num > DICT_STACK)
			continue;
		if ((rc = tachi_or_want(r, &f, TACHI_PB_LEN)))
			return rc;
		if (!TACHI_RESERVE(st->tab[f.num], st->tcap[f.num], st->ntab[f.num] + 1))
			return tachi_or_nomem(r);
		st->tab[f.num][st->ntab[f.num]++] = (struct ospan){ f.off, f.len };
	}
	size_t ns = st->ntab[DICT_STRING];
	if (ns && st->tab[DICT_STRING][0].len)
		return tachi_or_bad(r, st->tab[DICT_STRING][0].off, "the string table's first string is not empty");
	if (!(st->sid = malloc((ns + 1) * sizeof(*st->sid))) ||
	    !(st->mid = malloc((st->ntab[DICT_MAPPING] + 1) * sizeof(*st->mid))) ||
	    !(st->lfr0 = malloc((st->ntab[DICT_LOCATION] + 1) * sizeof(*st->lfr0))) ||
	    !(st->lnfr = malloc((st->ntab[DICT_LOCATION] + 1) * sizeof(*st->lnfr))))
		return tachi_or_nomem(r);
	memset(st->sid, 0xff, (ns + 1) * sizeof(*st->sid));
	memset(st->mid, 0xff, (st->ntab[DICT_MAPPING] + 1) * sizeof(*st->mid));
	memset(st->lfr0, 0xff, (st->ntab[DICT_LOCATION] + 1) * sizeof(*st->lfr0));
	return TACH_OK;
}

/* String i of the table as a dict id; an empty table has "" only. */
int tachi_or_str_id(struct tach_reader *r, uint32_t i, uint32_t *id)
{
	struct otlp_rstate *st = r->state;
	size_t n = st->ntab[DICT_STRING];
	if (i >= n && !(i == 0 && n == 0))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_NONE, 0, "string index %u out of range (%zu "
			     "strings)", i, n);
	if (st->sid[i] != NONE) {
		*id = st->sid[i];
		return TACH_OK;
	}
	struct ospan s = n ? st->tab[DICT_STRING][i] : (struct ospan){ 0, 0 };
	if (s.len > TACHI_MAX_STRING)
		return tachi_or_bad(r, s.off, "a string longer than 1 MiB");
	if (tach_dict_intern_string(&r->dict, (const char *)st->d + s.off, s.len, id))
		return tachi_or_nomem(r);
	st->sid[i] = *id;
	return TACH_OK;
}

bool tachi_or_str_is(const struct otlp_rstate *st, uint32_t i, const char *s)
{
	size_t n = strlen(s);
	return i < st->ntab[DICT_STRING] && st->tab[DICT_STRING][i].len == n &&
	       !memcmp(st->d + st->tab[DICT_STRING][i].off, s, n);
}

bool tachi_or_str_starts(const struct otlp_rstate *st, uint32_t i, const char *s)
{
	size_t n = strlen(s);
	return i < st->ntab[DICT_STRING] && st->tab[DICT_STRING][i].len >= n &&
	       !memcmp(st->d + st->tab[DICT_STRING][i].off, s, n);
}

int tachi_or_any(struct tach_reader *r, const struct tachi_pb_field *af, struct anyv *a)
{
	size_t pos = af->off, end = af->off + af->len;
	*a = (struct anyv){ .sidx = NONE };
	while (pos < end) {
		struct tachi_pb_field f;
		int rc = tachi_or_field(r, &pos, end, &f);
		if (rc)
			return rc;
		if (f.num == ANY_STRING && f.wt == TACHI_PB_LEN) {
			*a = (struct anyv){ .is_str = true, .sidx = NONE, .s = { f.off, f.len } };
		} else if ((f.num == ANY_INT || f.num == ANY_BOOL) && f.wt == TACHI_PB_VARINT) {
			*a = (struct anyv){ .is_num = true, .sidx = NONE, .num = (int64_t)f.v };
		} else if (f.num == ANY_STRINDEX && f.wt == TACHI_PB_VARINT) {
			*a = (struct anyv){ .is_str = true, .sidx = (uint32_t)f.v };
		} else if (f.num == ANY_DOUBLE && f.wt == TACHI_PB_I64) {
			double d;
			memcpy(&d, &f.v, 8);
			bool in = d == d && d > -9.2e18 && d < 9.2e18;
			*a = (struct anyv){ .is_num = in, .sidx = NONE, .num = in ? (int64_t)d : 0 };
		}
	}
	return TACH_OK;
}

/* Attribute i of the table: its key, unit (string indices) and value. */
int tachi_or_attribute(struct tach_reader *r, uint32_t i, uint32_t *key, uint32_t *unit,
		     struct anyv *a)
{
	struct otlp_rstate *st = r->state;
	struct ospan s = st->tab[DICT_ATTRIBUTE][i];
	size_t pos = s.off, end = s.off + s.len;
	*key = *unit = 0;
	*a = (struct anyv){ .sidx = NONE };
	while (pos < end) {
		struct tachi_pb_field f;
		int rc = tachi_or_field(r, &pos, end, &f);
		if (rc)
			return rc;
		if (f.num == KVU_KEY && f.wt == TACHI_PB_VARINT)
			*key = (uint32_t)f.v;
		else if (f.num == KVU_UNIT && f.wt == TACHI_PB_VARINT)
			*unit = (uint32_t)f.v;
		else if (f.num == KVU_VALUE && f.wt == TACHI_PB_LEN && (rc = tachi_or_any(r, &f, a)))
			return rc;
	}
	return TACH_OK;
}

/* The indices of a repeated int32 field (packed or not), each checked against n, to fn. */
int tachi_or_each(struct tach_reader *r, const struct tachi_pb_field *f, size_t n,
		  const char *table, tachi_or_each_fn fn, void *ctx)
{
	struct otlp_rstate *st = r->state;
	struct tachi_pb_nums it;
	if (!tachi_pb_nums_start(&it, f))
		return tachi_or_want(r, f, TACHI_PB_LEN);
	while (tachi_pb_nums_next(st->d, &it)) {
		uint32_t i = 0;
		int rc = tachi_or_index(r, it.at, it.v, n, table, &i);
		if (rc || (rc = fn(r, ctx, i, it.at)))
			return rc;
	}
	return it.bad ? tachi_or_bad(r, it.at, "bad varint in a packed field") : TACH_OK;
}

/* ---- mappings and locations ---- */

/* Mapping i (> 0) as a dict mapping, interned the first time. */
static int mapping_id(struct tach_reader *r, uint32_t i, uint32_t *id)
{
	struct otlp_rstate *st = r->state;
	if (st->mid[i] != NONE) {
		*id = st->mid[i];
		return TACH_OK;
	}
	struct ospan s = st->tab[DICT_MAPPING][i];
	size_t pos = s.off, end = s.off + s.len;
	/* pprof's mapping flags (bits 0 ... 3) from the pprof namespace's attributes */
	static const char *const flag_keys[4] = { OTLP_MAP_HAS_FUNCTIONS, OTLP_MAP_HAS_FILENAMES,
						  OTLP_MAP_HAS_LINES, OTLP_MAP_HAS_INLINES };
	struct tach_mapping m = { .build_id = TACH_NO_STRING };
	uint32_t file = 0;
	int rc;
	while (pos < end) {
		struct tachi_pb_field f;
		uint32_t a = 0;
		if ((rc = tachi_or_field(r, &pos, end, &f)))
			return rc;
		if (f.wt == TACHI_PB_VARINT && f.num == MAP_MEMORY_START)
			m.start = f.v;
		else if (f.wt == TACHI_PB_VARINT && f.num == MAP_MEMORY_LIMIT)
			m.limit = f.v;
		else if (f.wt == TACHI_PB_VARINT && f.num == MAP_FILE_OFFSET)
			m.offset = f.v;
		else if (f.wt == TACHI_PB_VARINT && f.num == MAP_FILENAME &&
			 (rc = tachi_or_index(r, f.at, f.v, st->ntab[DICT_STRING] + !st->ntab[DICT_STRING],
					      "string", &file)))
			return rc;
		else if (f.num == MAP_ATTRIBUTES) {
			struct tachi_pb_nums it;
			if (!tachi_pb_nums_start(&it, &f))
				continue;
			while (tachi_pb_nums_next(st->d, &it)) {
				uint32_t key, unit;
				struct anyv v;
				if ((rc = tachi_or_index(r, it.at, it.v, st->ntab[DICT_ATTRIBUTE],
							 "attribute", &a)) ||
				    (rc = tachi_or_attribute(r, a, &key, &unit, &v)))
					return rc;
				for (int b = 0; b < 4; b++)
					if (a && v.is_num && v.num && tachi_or_str_is(st, key, flag_keys[b]))
						m.flags |= 1u << b;
				if (a && tachi_or_str_starts(st, key, "process.executable.build_id") &&
				    v.is_str && v.sidx == NONE && v.s.len <= TACHI_MAX_STRING &&
				    tach_dict_intern_string(&r->dict, (const char *)st->d + v.s.off,
							    v.s.len, &m.build_id))
					return tachi_or_nomem(r);
			}
		}
	}
	if ((rc = tachi_or_str_id(r, file, &m.file)))
		return rc;
	if (tach_dict_intern_mapping(&r->dict, &m, id))
		return tachi_or_nomem(r);
	st->mid[i] = *id;
	return TACH_OK;
}

static int add_frame(struct tach_reader *r, const struct tach_frame *f,
		     const struct tach_frame_native *n)
{
	struct otlp_rstate *st = r->state;
	if (st->nframes >= UINT32_MAX - 1 || !TACHI_RESERVE(st->frames, st->fcap, st->nframes + 1))
		return tachi_or_nomem(r);
	bool native = n->address || n->mapping;
	if (native ? tach_dict_intern_frame_native(&r->dict, f, n, &st->frames[st->nframes])
		   : tach_dict_intern_frame(&r->dict, f, &st->frames[st->nframes]))
		return tachi_or_nomem(r);
	st->nframes++;
	return TACH_OK;
}

/* A location without lines: named by module and file offset in its mapping's range (its
 * column that mapping's offset, as the gperftools and perf.data readers give it), else by
 * its address, in its mapping's file (else "~"). */
static int address_frame(struct tach_reader *r, const struct tach_frame_native *n)
{
	struct tach_frame f = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	const struct tach_mapping *m = n->mapping ? tach_dict_mapping(&r->dict, n->mapping) : NULL;
	size_t flen = 0;
	const char *file = m ? tach_dict_string(&r->dict, m->file, &flen) : NULL;
	char name[300];
	int k;
	if (file && flen && n->address >= m->start && n->address < m->limit) {
		size_t blen;
		const char *base = tachi_base_name(file, flen, &blen);
		k = snprintf(name, sizeof(name), "%.*s+0x%llx", (int)(blen > 250 ? 250 : blen), base,
			     (unsigned long long)(n->address - m->start + m->offset));
		/* the column: the mapping's file offset (tachfmt(5), unsymbolized frames) */
		if (m->offset <= INT32_MAX)
			f.col = (int32_t)m->offset;
	} else {
		k = snprintf(name, sizeof(name), "0x%llx", (unsigned long long)n->address);
	}
	if (tach_dict_intern_string(&r->dict, name, (size_t)k, &f.func))
		return tachi_or_nomem(r);
	if (file && flen)
		f.file = m->file;
	else if (tach_dict_intern_string(&r->dict, "~", 1, &f.file))
		return tachi_or_nomem(r);
	return add_frame(r, &f, n);
}

/* Line l's frame: its function's name (else system name) and file, line and column (TACH
 * columns count from 0); x (a lone line's Location) what its attributes add. */
struct fx {
	bool line, end_line, end_col, opcode;
	int64_t v_line, v_end_line, v_end_col, v_opcode;
};

static int line_frame(struct tach_reader *r, const struct tachi_pb_field *lf,
		      const struct tach_frame_native *n, const struct fx *x)
{
	struct otlp_rstate *st = r->state;
	size_t pos = lf->off, end = lf->off + lf->len;
	uint32_t fn = 0, name = 0, sys = 0, file = 0;
	int64_t line = 0, col = 0;
	int rc;
	while (pos < end) {
		struct tachi_pb_field f;
		if ((rc = tachi_or_field(r, &pos, end, &f)))
			return rc;
		if (f.wt != TACHI_PB_VARINT)
			continue;
		if (f.num == LINE_FUNCTION &&
		    (rc = tachi_or_index(r, f.at, f.v, st->ntab[DICT_FUNCTION] + !st->ntab[DICT_FUNCTION],
					 "function", &fn)))
			return rc;
		if (f.num == LINE_LINE)
			line = (int64_t)f.v;
		if (f.num == LINE_COLUMN)
			col = (int64_t)f.v;
	}
	struct ospan s = st->ntab[DICT_FUNCTION] ? st->tab[DICT_FUNCTION][fn] : (struct ospan){ 0, 0 };
	for (pos = s.off, end = s.off + s.len; pos < end;) {
		struct tachi_pb_field f;
		uint32_t *to = NULL;
		if ((rc = tachi_or_field(r, &pos, end, &f)))
			return rc;
		if (f.wt == TACHI_PB_VARINT)
			to = f.num == FN_NAME ? &name : f.num == FN_SYSTEM_NAME ? &sys
			     : f.num == FN_FILENAME ? &file : NULL;
		if (to && (rc = tachi_or_index(r, f.at, f.v, st->ntab[DICT_STRING] + !st->ntab[DICT_STRING],
					       "string", to)))
			return rc;
	}
	struct tach_frame fr = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	bool named = name < st->ntab[DICT_STRING] && st->tab[DICT_STRING][name].len;
	if ((rc = tachi_or_str_id(r, named ? name : sys, &fr.func)) ||
	    (rc = tachi_or_str_id(r, file, &fr.file)))
		return rc;
	if (line > 0 && line <= INT32_MAX)
		fr.line = fr.end_line = (int32_t)line;
	if (col > 0 && col <= INT32_MAX)
		fr.col = (int32_t)(col - 1);
	if (x) {
		int32_t *to[4] = { &fr.line, &fr.end_line, &fr.end_col, NULL };
		const bool on[4] = { x->line, x->end_line, x->end_col, x->opcode };
		const int64_t v[4] = { x->v_line, x->v_end_line, x->v_end_col, x->v_opcode };
		for (int i = 0; i < 3; i++)
			if (on[i] && v[i] >= INT32_MIN && v[i] <= INT32_MAX)
				*to[i] = (int32_t)v[i];
		if (on[3] && v[3] >= 0 && v[3] < TACH_NO_OPCODE)
			fr.opcode = (uint8_t)v[3];
	}
	return add_frame(r, &fr, n);
}

/* What tachfmt.frame.* attribute a adds to x. */
static int frame_attr(struct tach_reader *r, void *ctx, uint32_t a, size_t at)
{
	struct otlp_rstate *st = r->state;
	struct fx *x = ctx;
	uint32_t key, unit;
	struct anyv v;
	int rc = a ? tachi_or_attribute(r, a, &key, &unit, &v) : TACH_OK;
	if (rc || !a || !v.is_num)
		return rc;
	if (tachi_or_str_is(st, key, OTLP_FRAME_LINE))
		x->line = true, x->v_line = v.num;
	else if (tachi_or_str_is(st, key, OTLP_FRAME_END_LINE))
		x->end_line = true, x->v_end_line = v.num;
	else if (tachi_or_str_is(st, key, OTLP_FRAME_END_COL))
		x->end_col = true, x->v_end_col = v.num;
	else if (tachi_or_str_is(st, key, OTLP_FRAME_OPCODE))
		x->opcode = true, x->v_opcode = v.num;
	(void)at;
	return TACH_OK;
}

/* Location li's mapping, address, attributes and the span of its lines. */
static int loc_fields(struct tach_reader *r, uint32_t li, struct tach_frame_native *n,
		      struct fx *x, size_t *nlines)
{
	struct otlp_rstate *st = r->state;
	struct ospan s = st->tab[DICT_LOCATION][li];
	size_t pos = s.off, end = s.off + s.len;
	uint32_t mi = 0;
	int rc;
	*nlines = 0;
	while (pos < end) {
		struct tachi_pb_field f;
		if ((rc = tachi_or_field(r, &pos, end, &f)))
			return rc;
		if (f.num == LOC_MAPPING && f.wt == TACHI_PB_VARINT &&
		    (rc = tachi_or_index(r, f.at, f.v, st->ntab[DICT_MAPPING] + !st->ntab[DICT_MAPPING],
					 "mapping", &mi)))
			return rc;
		if (f.num == LOC_ADDRESS && f.wt == TACHI_PB_VARINT)
			n->address = f.v;
		if (f.num == LOC_LINES && f.wt == TACHI_PB_LEN)
			++*nlines;
		if (f.num == LOC_ATTRIBUTES &&
		    (rc = tachi_or_each(r, &f, st->ntab[DICT_ATTRIBUTE], "attribute", frame_attr, x)))
			return rc;
	}
	return mi ? mapping_id(r, mi, &n->mapping) : TACH_OK;
}

int tachi_or_loc_frames(struct tach_reader *r, uint32_t li, uint32_t *fr0, uint32_t *nfr)
{
	struct otlp_rstate *st = r->state;
	if (st->lfr0[li] != NONE) {
		*fr0 = st->lfr0[li];
		*nfr = st->lnfr[li];
		return TACH_OK;
	}
	struct tach_frame_native n = { 0, 0, 0 };
	struct fx x = { 0 };
	size_t nlines, k = 0, start = st->nframes;
	int rc = loc_fields(r, li, &n, &x, &nlines);
	if (rc)
		return rc;
	if (!nlines && (rc = address_frame(r, &n)))
		return rc;
	struct ospan s = st->tab[DICT_LOCATION][li];
	for (size_t pos = s.off, end = s.off + s.len; pos < end && nlines;) {
		struct tachi_pb_field f;
		if ((rc = tachi_or_field(r, &pos, end, &f)))
			return rc;
		if (f.num != LOC_LINES || f.wt != TACHI_PB_LEN)
			continue;
		/* all but the last line were inlined into the next one out */
		n.inlined = ++k < nlines;
		if ((rc = line_frame(r, &f, &n, nlines == 1 ? &x : NULL)))
			return rc;
	}
	*fr0 = st->lfr0[li] = (uint32_t)start;
	*nfr = st->lnfr[li] = (uint32_t)(st->nframes - start);
	return TACH_OK;
}
