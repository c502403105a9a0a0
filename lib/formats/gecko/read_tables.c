/* A Gecko thread's tables, column by column (read.h). The Gecko form keeps a table as
 * {"schema": {COLUMN: INDEX, ...}, "data": [[CELL, ...], ...]}, rows that may end early
 * (Firefox leaves trailing nulls out); the processed form as {COLUMN: [CELL, ...], ...,
 * "length": N}. Either way a column comes out as one array of cells, null where a row has
 * none, so that the rest of the reader does not know which form it reads. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "formats/json_read.h"
#include "formats/gecko/read.h"

/* The largest schema index taken: a row is an array of records, no wider than this. */
#define GK_MAX_SCHEMA 4096

static int cell(struct tach_reader *r, struct tachi_json *j, int how, int64_t *out)
{
	struct tachi_jtok t;
	if (how == GK_OFFSET) {
		struct tachi_json peek = *j;
		int rc = tachi_json_value(&peek, &t);
		*out = t.type == TJ_NULL ? GK_NULL : (int64_t)t.off;
		return rc ? rc : tachi_json_skip(j);
	}
	int rc = tachi_json_value(j, &t);
	if (rc)
		return rc;
	if (t.type == TJ_NULL) {
		*out = GK_NULL;
		return TACH_OK;
	}
	if (t.type == TJ_TRUE || t.type == TJ_FALSE) {
		*out = t.type == TJ_TRUE;
		return TACH_OK;
	}
	if (t.type != TJ_NUMBER)
		return tachi_jr_bad(r, t.off, "a table cell must be a number, a boolean or null");
	struct tachi_jnum v;
	tachi_json_number(r->in.data, &t, &v);
	bool ok = how == GK_INT ? tachi_json_int(&v, INT64_MIN + 1, INT64_MAX, out)
				: tachi_json_scaled(&v, how, out) && *out != GK_NULL;
	if (!ok)
		return tachi_jr_bad(r, t.off, how == GK_INT ? "a table cell must be an integer here" :
					      "a table cell is out of range");
	return TACH_OK;
}

static int push(struct tach_reader *r, struct gecko_col *c, int64_t v)
{
	if (!TACHI_RESERVE(c->v, c->cap, c->n + 1))
		return tachi_jr_nomem(r);
	c->v[c->n++] = v;
	return TACH_OK;
}

/* The processed form: the column is an array of cells. */
static int col_array(struct tach_reader *r, uint64_t off, int how, struct gecko_col *c)
{
	struct tachi_json j;
	bool more;
	int rc = tachi_jr_begin_array(r, &j, off, "a table's column");
	while (!rc && !(rc = tachi_json_elem(&j, &more)) && more) {
		int64_t v;
		if (!(rc = cell(r, &j, how, &v)))
			rc = push(r, c, v);
	}
	return rc;
}

/* The Gecko form: cell k of each row of data. */
static int col_rows(struct tach_reader *r, uint64_t data, int64_t k, int how,
		    struct gecko_col *c)
{
	struct tachi_json j;
	struct tachi_jtok t;
	bool more, in_row;
	int rc = tachi_jr_begin_array(r, &j, data, "a table's \"data\"");
	while (!rc && !(rc = tachi_json_elem(&j, &more)) && more) {
		if ((rc = tachi_json_value(&j, &t)))
			return rc;
		if (t.type != TJ_ARRAY)
			return tachi_jr_bad(r, t.off, "a table's row must be an array");
		int64_t v = GK_NULL;
		for (int64_t i = 0; !rc && !(rc = tachi_json_elem(&j, &in_row)) && in_row; i++)
			rc = i == k ? cell(r, &j, how, &v) : tachi_json_skip(&j);
		if (rc || (rc = push(r, c, v)))
			return rc;
	}
	return rc;
}

int tachi_gk_col(struct tach_reader *r, uint64_t table, const char *name, int how,
		 struct gecko_col *c)
{
	struct gecko_rstate *st = r->state;
	static const char *const want[] = { "schema", "data" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[2], col;
	c->n = 0;
	if (table == GK_NONE)
		return TACH_OK;
	int rc = tachi_jr_value_at(r, &j, table, &t);
	if (rc)
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "a table must be an object");
	if (st->processed) {
		const char *const one[] = { name };
		if ((rc = tachi_json_keys(&j, one, &col, 1)) || col == GK_NONE)
			return rc;
		return col_array(r, col, how, c);
	}
	if ((rc = tachi_json_keys(&j, want, o, 2)))
		return rc;
	if (o[0] == GK_NONE || o[1] == GK_NONE)
		return tachi_jr_bad(r, t.off, "a table without its \"schema\" and \"data\"");
	if ((rc = tachi_jr_value_at(r, &j, o[0], &t)))
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "a table's \"schema\" must be an object");
	const char *const one[] = { name };
	int64_t k;
	if ((rc = tachi_json_keys(&j, one, &col, 1)) ||
	    (rc = tachi_jr_opt_int(r, col, "a schema's column index", 0, GK_MAX_SCHEMA, false, &k)))
		return rc;
	return k < 0 ? TACH_OK : col_rows(r, o[1], k, how, c);
}

/* ---- libraries and strings ---- */

static int lib_obj(struct tach_reader *r, struct tachi_json *j, uint64_t off, void *item)
{
	static const char *const want[] = { "start", "end", "offset", "name", "path" };
	struct gecko_lib *l = item;
	uint64_t o[5];
	int64_t v[3];
	struct tachi_json c;
	struct tachi_jtok t;
	int rc = tachi_json_keys(j, want, o, 5);
	*l = (struct gecko_lib){ .name_off = GK_NONE, .path_off = GK_NONE, .usable = true };
	for (int i = 0; i < 3 && !rc; i++) {
		v[i] = 0;
		if (o[i] == GK_NONE || (rc = tachi_jr_value_at(r, &c, o[i], &t)))
			continue;
		/* a kernel's addresses past 2^63, or a number written inexactly: unused */
		if (!tachi_json_tok_int(r->in.data, &t, 0, INT64_MAX, &v[i]))
			l->usable = false;
	}
	for (int i = 3; i < 5 && !rc; i++)
		if (o[i] != GK_NONE && !(rc = tachi_jr_value_at(r, &c, o[i], &t)) &&
		    t.type == TJ_STRING)
			*(i == 3 ? &l->name_off : &l->path_off) = t.off;
	l->start = (uint64_t)v[0];
	l->end = (uint64_t)v[1];
	l->offset = (uint64_t)v[2];
	return rc;
}

static int by_start(const void *a, const void *b)
{
	const struct gecko_lib *x = a, *y = b;
	return x->start != y->start ? (x->start < y->start ? -1 : 1) : 0;
}

int tachi_gk_libs(struct tach_reader *r, uint64_t off)
{
	struct gecko_rstate *st = r->state;
	static const struct tachi_jr_objects spec = {
		.not_array = "\"libs\" must be an array", .not_object = "a library must be an object",
		.too_many = "more than 2^32 libraries", .max = UINT32_MAX,
		.size = sizeof(struct gecko_lib), .read = lib_obj,
	};
	struct tachi_json j;
	size_t at = st->nlibs;
	tachi_jr_cursor(r, &j, off);
	void *items = st->libs;
	int rc = tachi_jr_objects(r, &j, &spec, &items, &st->nlibs, &st->libs_cap);
	st->libs = items;
	/* the Gecko form's addresses are looked up by range; the processed form's libraries
	 * are named by their index */
	if (!rc && !st->processed && st->nlibs > at)
		qsort(st->libs + at, st->nlibs - at, sizeof(*st->libs), by_start);
	return rc;
}

/* meta.startTime (ns) of the profile whose meta is at off, and its interval (µs). */
int tachi_gk_strings(struct tach_reader *r, uint64_t off)
{
	struct gecko_rstate *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	st->nstr = 0;
	st->str_from = off;
	if (off == GK_NONE)
		return TACH_OK;
	int rc = tachi_jr_begin_array(r, &j, off, "the string table");
	while (!rc && !(rc = tachi_json_elem(&j, &more)) && more) {
		if ((rc = tachi_json_value(&j, &t)))
			return rc;
		if (t.type != TJ_STRING)
			return tachi_jr_bad(r, t.off, "the string table holds a value that is no string");
		if (!TACHI_RESERVE(st->str, st->str_cap, st->nstr + 1))
			return tachi_jr_nomem(r);
		st->str[st->nstr++] = t.off;
	}
	return rc;
}

int tachi_gk_text_at(struct tach_reader *r, uint64_t off, char **buf, size_t *cap, size_t *n)
{
	struct tachi_json j;
	struct tachi_jtok t;
	int rc = tachi_jr_value_at(r, &j, off, &t);
	if (rc)
		return rc;
	if (t.type != TJ_STRING)
		return tachi_jr_bad(r, t.off, "expected a string");
	return tachi_jr_string(r, &t, buf, cap, n);
}

int tachi_gk_string(struct tach_reader *r, int64_t idx, const char **s, size_t *n)
{
	struct gecko_rstate *st = r->state;
	if (idx < 0 || (uint64_t)idx >= st->nstr)
		return tachi_jr_bad(r, st->t->off, idx == GK_NULL ? "a string index is null" :
						   "a string index is past the string table");
	int rc = tachi_gk_text_at(r, st->str[idx], &st->sbuf, &st->sbuf_cap, n);
	*s = st->sbuf;
	return rc;
}

int tachi_gk_wkind(struct tach_reader *r, uint64_t samples, int *kind)
{
	static const char *const want[] = { "weightType" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o;
	int rc = tachi_jr_value_at(r, &j, samples, &t);
	if (rc)
		return rc;
	if (t.type != TJ_OBJECT)
		return tachi_jr_bad(r, t.off, "a thread's \"samples\" must be an object");
	if ((rc = tachi_json_keys(&j, want, &o, 1)))
		return rc;
	*kind = GW_SAMPLES;
	if (o == GK_NONE)
		return TACH_OK;
	if ((rc = tachi_jr_value_at(r, &j, o, &t)))
		return rc;
	if (t.type != TJ_STRING)
		return tachi_jr_bad(r, t.off, "\"weightType\" must be a string");
	if (tachi_json_str_eq(r->in.data, &t, "tracing-ms"))
		*kind = GW_MS;
	else if (tachi_json_str_eq(r->in.data, &t, "bytes"))
		*kind = GW_BYTES;
	else if (!tachi_json_str_eq(r->in.data, &t, "samples"))
		return tachi_jr_bad(r, t.off, "\"weightType\" is none of samples, tracing-ms and "
				    "bytes");
	return TACH_OK;
}

/* The samples' weight column, as samples.weightType says to read it (processed; every
 * thread's kind is the profile's, which open checked). */
static int weights(struct tach_reader *r, uint64_t samples)
{
	struct gecko_rstate *st = r->state;
	st->t_wkind = st->wkind;
	st->s_weight.n = 0;
	if (!st->processed)
		return TACH_OK;
	return tachi_gk_col(r, samples, "weight", st->t_wkind == GW_MS ? 6 : GK_INT, &st->s_weight);
}

/* The samples' times (ns from the profile's start): "time", or the processed form's
 * "timeDeltas" summed. */
static int times(struct tach_reader *r, uint64_t samples)
{
	struct gecko_rstate *st = r->state;
	int rc = tachi_gk_col(r, samples, "time", 6, &st->s_time);
	if (rc || st->s_time.n || !st->processed)
		return rc;
	if ((rc = tachi_gk_col(r, samples, "timeDeltas", 6, &st->s_time)))
		return rc;
	int64_t now = 0;
	for (size_t i = 0; i < st->s_time.n; i++) {
		if (st->s_time.v[i] == GK_NULL ||
		    __builtin_add_overflow(now, st->s_time.v[i], &now))
			return tachi_jr_bad(r, samples, "a time delta is null or the times overflow");
		st->s_time.v[i] = now;
	}
	return TACH_OK;
}

static int frame_tables(struct tach_reader *r, const uint64_t *o)
{
	struct gecko_rstate *st = r->state;
	int rc;
	if ((rc = tachi_gk_col(r, o[1], "prefix", GK_INT, &st->st_prefix)) ||
	    (rc = tachi_gk_col(r, o[1], "frame", GK_INT, &st->st_frame)) ||
	    (rc = tachi_gk_col(r, o[2], "line", GK_INT, &st->f_line)) ||
	    (rc = tachi_gk_col(r, o[2], "column", GK_INT, &st->f_col)) ||
	    (rc = tachi_gk_col(r, o[2], "category", GK_INT, &st->f_cat)))
		return rc;
	if (!st->processed)
		return tachi_gk_col(r, o[2], "location", GK_INT, &st->f_loc);
	if ((rc = tachi_gk_col(r, o[2], "func", GK_INT, &st->f_func)) ||
	    (rc = tachi_gk_col(r, o[2], "address", GK_INT, &st->f_addr)) ||
	    (rc = tachi_gk_col(r, o[2], "inlineDepth", GK_INT, &st->f_inline)) ||
	    (rc = tachi_gk_col(r, o[3], "name", GK_INT, &st->fn_name)) ||
	    (rc = tachi_gk_col(r, o[3], "fileName", GK_INT, &st->fn_file)) ||
	    (rc = tachi_gk_col(r, o[3], "resource", GK_INT, &st->fn_res)) ||
	    (rc = tachi_gk_col(r, o[3], "isJS", GK_INT, &st->fn_js)) ||
	    (rc = tachi_gk_col(r, o[4], "lib", GK_INT, &st->r_lib)))
		return rc;
	return tachi_gk_col(r, o[4], "name", GK_INT, &st->r_name);
}

int tachi_gk_tables(struct tach_reader *r)
{
	struct gecko_rstate *st = r->state;
	static const char *const want[] = { "samples", "stackTable", "frameTable", "funcTable",
					    "resourceTable", "markers", "stringTable",
					    "stringArray", "libs" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[9];
	int rc = tachi_jr_value_at(r, &j, st->t->off, &t);
	if (rc || (rc = tachi_json_keys(&j, want, o, 9)))
		return rc;
	if (o[0] == GK_NONE || o[1] == GK_NONE || o[2] == GK_NONE)
		return tachi_jr_bad(r, st->t->off, "a thread without its \"samples\", "
				    "\"stackTable\" and \"frameTable\"");
	if (st->processed && o[3] == GK_NONE)
		return tachi_jr_bad(r, st->t->off, "a processed profile's thread without its "
				    "\"funcTable\"");
	uint64_t strings = st->processed && st->shared_strings != GK_NONE ? st->shared_strings :
			   o[7] != GK_NONE ? o[7] : o[6];
	if (strings == GK_NONE)
		return tachi_jr_bad(r, st->t->off, "a thread without its string table");
	st->nlibs = st->libs_base;
	st->thread_libs_at = st->t->libs_at;
	st->thread_nlibs = st->t->nlibs;
	if (o[8] != GK_NONE) {
		if ((rc = tachi_gk_libs(r, o[8])))
			return rc;
		st->thread_libs_at = st->libs_base;
		st->thread_nlibs = st->nlibs - st->libs_base;
	}
	/* the processed format's strings are the profile's: read once for all threads */
	if ((strings != st->str_from && (rc = tachi_gk_strings(r, strings))) ||
	    (rc = tachi_gk_col(r, o[0], "stack", GK_INT, &st->s_stack)) || (rc = times(r, o[0])) ||
	    (rc = weights(r, o[0])) || (rc = frame_tables(r, o)) ||
	    (rc = tachi_gk_col(r, o[5], "name", GK_INT, &st->m_name)) ||
	    (rc = tachi_gk_col(r, o[5], "startTime", 6, &st->m_start)) ||
	    (!st->m_start.n && (rc = tachi_gk_col(r, o[5], "time", 6, &st->m_start))))
		return rc;
	return tachi_gk_col(r, o[5], "data", GK_OFFSET, &st->m_data);
}

/* ---- the thread states the Gecko writer keeps in markers ---- */

/* The state bit a PythonThreadState marker names (0: none), and how many samples its run
 * holds. */
static int state_marker(struct tach_reader *r, size_t m, uint8_t *bit, int64_t *count)
{
	struct gecko_rstate *st = r->state;
	static const char *const names[] = { "Has GIL", "On CPU", "Waiting for GIL",
					     "Has Exception" };
	static const uint8_t bits[] = { TACH_STATUS_HAS_GIL, TACH_STATUS_ON_CPU,
					TACH_STATUS_GIL_REQUESTED, TACH_STATUS_HAS_EXCEPTION };
	static const char *const want[] = { "type", "samples" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[2];
	int64_t data = gk_cell(&st->m_data, m);
	*bit = 0;
	if (data == GK_NULL || gk_cell(&st->m_name, m) == GK_NULL ||
	    gk_cell(&st->m_start, m) == GK_NULL)
		return TACH_OK;
	int rc = tachi_jr_value_at(r, &j, (uint64_t)data, &t);
	if (rc || t.type != TJ_OBJECT || (rc = tachi_json_keys(&j, want, o, 2)) || o[0] == GK_NONE)
		return rc;
	if ((rc = tachi_jr_value_at(r, &j, o[0], &t)) || t.type != TJ_STRING ||
	    !tachi_json_str_eq(r->in.data, &t, "PythonThreadState"))
		return rc;
	if ((rc = tachi_jr_opt_int(r, o[1], "a thread state marker's samples", 0, INT64_MAX,
				   false, count)) || *count < 0)
		return rc;
	const char *s;
	size_t n;
	if ((rc = tachi_gk_string(r, gk_cell(&st->m_name, m), &s, &n)))
		return rc;
	for (size_t i = 0; i < 4; i++)
		if (n == strlen(names[i]) && !memcmp(s, names[i], n))
			*bit = bits[i];
	return TACH_OK;
}

static int by_time(const void *a, const void *b, void *ctx)
{
	const int64_t *tm = ctx;
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	if (tm[x] != tm[y])
		return tm[x] < tm[y] ? -1 : 1;
	return x < y ? -1 : x > y;
}

/* The first place of order (samples by time) whose time is at least t. */
static size_t first_at(const uint32_t *order, size_t n, const int64_t *tm, int64_t t)
{
	size_t lo = 0, hi = n;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (tm[order[mid]] < t)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo;
}

/* Each state's runs counted into run[bit][place] as +1 where one starts and -1 past its
 * end, places in time order. */
static int state_runs(struct tach_reader *r, const uint32_t *order, size_t n, int32_t *run,
		      bool *any)
{
	struct gecko_rstate *st = r->state;
	*any = false;
	for (size_t m = 0; m < st->m_data.n; m++) {
		uint8_t bit;
		int64_t count;
		int rc = state_marker(r, m, &bit, &count);
		if (rc)
			return rc;
		if (!bit)
			continue;
		if (m >= INT32_MAX)
			return tachi_jr_bad(r, st->t->off, "more than 2^31 thread state markers");
		*any = true;
		size_t k = (size_t)__builtin_ctz(bit);
		size_t a = first_at(order, n, st->s_time.v, st->m_start.v[m]);
		size_t b = (uint64_t)count > n - a ? n : a + (size_t)count;
		run[k * (n + 1) + a]++;
		run[k * (n + 1) + b]--;
	}
	return TACH_OK;
}

int tachi_gk_states(struct tach_reader *r)
{
	struct gecko_rstate *st = r->state;
	size_t n = st->s_stack.n;
	bool any = st->recorded;
	if ((!st->m_data.n && !any) || !n)
		return TACH_OK;
	if (st->s_time.n < n)
		return tachi_jr_bad(r, st->t->off, "a thread's samples without their times");
	if (n >= UINT32_MAX)
		return tachi_jr_bad(r, st->t->off, "a thread of more than 2^32 - 1 samples");
	uint32_t *order = malloc(n * sizeof(*order));
	int32_t *run = calloc(5 * (n + 1), sizeof(*run));
	int rc = order && run ? TACH_OK : tachi_jr_nomem(r);
	for (size_t i = 0; !rc && i < n; i++)
		order[i] = (uint32_t)i;
	if (!rc) {
		qsort_r(order, n, sizeof(*order), by_time, st->s_time.v);
		bool marked;
		rc = state_runs(r, order, n, run, &marked);
		any |= marked;
	}
	if (!rc && any && !TACHI_RESERVE(st->status, st->status_cap, n))
		rc = tachi_jr_nomem(r);
	for (size_t k = 0; !rc && any && k < 5; k++) {
		int64_t on = 0;
		for (size_t i = 0; i < n; i++) {
			on += run[k * (n + 1) + i];
			if (!k)
				st->status[order[i]] = st->main ? TACH_STATUS_MAIN_THREAD : 0;
			if (on > 0)
				st->status[order[i]] |= (uint8_t)(1u << k);
		}
	}
	free(order);
	free(run);
	for (size_t i = 0; !rc && st->recorded && i < n; i++) {
		int64_t row = st->s_stack.v[i];
		int64_t fr = row >= 0 ? gk_cell(&st->st_frame, (size_t)row) : GK_NULL;
		if (fr >= 0 && gk_cell(&st->f_cat, (size_t)fr) == st->cat_other)
			st->status[i] |= TACH_STATUS_UNKNOWN;
	}
	return rc;
}
