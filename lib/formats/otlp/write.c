/* OTLP writer: OpenTelemetry's profiles signal (v1development), an
 * ExportProfilesServiceRequest as OTLP/HTTP posts it to /v1development/profiles, in
 * protobuf (json=yes: OTLP/JSON, write_json.c).
 *
 * What is written:
 *   - One ResourceProfiles: its Resource names the program (process.executable.name and
 *     .path, from meta.program) and the service (service=NAME: service.name); one
 *     ScopeProfiles, scope "tachfmt" and the library's version.
 *   - A Profile per sample type: samples/count (the weights) and, where the samples carry
 *     time (meta.sample_time), cpu or wall/nanoseconds (their time_ns; cpu for a TACH
 *     profile taken in CPU mode), the first marked tachfmt.weights so that a reader tells
 *     them from an input's types of those names; from an input whose meta names value types (pprof), one
 *     per type instead, with its values, the default type's first (viewers show
 *     profiles[0] by default). Each has time_unix_nano (the start time),
 *     duration_nano (the meta's, else up to the end of the last sample), and period_type
 *     and period (the interval in ns, or the input's own period).
 *   - A Sample per distinct (stack, attributes), first-seen order, the same in every
 *     Profile: an entry per sample put, timestamps_unix_nano its timestamp (µs × 1000) and
 *     values its value of the Profile's type, in the order put (timestamps=no: one value
 *     per Sample, the sum, and no timestamps). Attributes: thread.id; tachfmt.interpreter.id
 *     and tachfmt.thread.status (TACH's status byte) when not 0; an input's own labels
 *     (pprof's) as attributes with their units, but those the sample's fields hold.
 *     Samples with an empty stack are kept, at stack 0 (the empty stack).
 *   - The shared ProfilesDictionary, each table's entry 0 its zero value (the link table's
 *     a Link of 16 and 8 zero bytes, as the schema advises), every entry interned by its
 *     encoded bytes so that none is written twice: a Function per (name, file); a Location
 *     per frame, with one Line (the line, and the column + 1: TACH columns count from 0);
 *     what OTLP has no field for (a TACH frame's end line, end column and opcode, a line
 *     OTLP cannot hold) in tachfmt.frame.* attributes of the Location, so that reading back
 *     gives the frame again. Native frames as the pprof writer writes them: the dict's
 *     mappings with their ranges, file offsets and build IDs
 *     (process.executable.build_id.gnu), a frame's address and mapping on its Location, a
 *     run of frames inlined each into the next one Location with their Lines innermost
 *     first, an unsymbolized frame (named by its address or by module and offset) no Line,
 *     so a backend can symbolize it.
 *   - Strings that are not UTF-8 (protobuf strings must be) with U+FFFD, said once.
 *   - A sample whose outermost frame is a process root (file "[comm]": perf's, a JFR
 *     recording's threads, a Chrome trace's named threads; formats/comm.h) gets thread.name (its name) and process.pid
 *     (its line, when known) too; the frame stays on the stack, so reading back gives it.
 *   - A mapping's pprof flags as the pprof namespace's bool attributes
 *     (pprof.mapping.has_functions, ...), those that are set.
 * Not written: links; a process id where the input has none on a process root.
 * Memory grows with the output (each sample's timestamp and values are in it): the
 * request is built in memory and written at close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/io.h"
#include "base/protobuf.h"
#include "base/utf8.h"
#include "model/dict.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/values.h"
#include "formats/otlp/otlp.h"
#include "formats/comm.h"
#include "formats/native_names.h"

#define NONE UINT32_MAX
/* Indices are int32 in the schema. */
#define MAX_INDEX ((size_t)INT32_MAX - 1)

/* Interned entries of a table (or strings), by their bytes: entry i is
 * b.p[off[i], off[i + 1]). */
struct otab {
	struct tachi_pb_buf b;
	size_t *off;
	size_t n, cap;
	struct tachi_idset index;
};

struct okey {
	const uint8_t *p;
	size_t n;
};

/* A sample put: its timestamp (ns) and the next entry of its Sample (NONE: the last). */
struct oent {
	uint64_t ts;
	uint32_t next;
};

/* A Sample: its entries, first and last. */
struct osmp {
	uint32_t head, tail;
};

enum { CPU_AUTO, CPU_YES, CPU_NO };

struct otlp_wstate {
	/* options */
	bool json, no_ts;
	int cpu;
	char *service;
	/* tables */
	struct otab strs, maps, locs, fns, stacks, attrs, ids;
	uint32_t *smap, *fmap, *mmap; /* dict string / frame / mapping id -> index, NONE */
	size_t smap_cap, fmap_cap, mmap_cap;
	bool warned_utf8;
	/* the sample types: [2 i] type's, [2 i + 1] unit's string index */
	uint32_t ntypes;
	uint32_t *type_str;
	bool timed;          /* own types: the second is the time */
	uint64_t time_div;   /* input types without values: the weight type's ns, or 0 */
	/* samples */
	struct oent *ents;
	size_t nents, ents_cap;
	struct osmp *smps;
	size_t smps_cap;
	int64_t *vals;       /* [entry * ntypes + i] */
	size_t vals_cap;
	uint64_t min_ts, max_end;
	const struct tach_sample_ext *ext;
	/* scratch */
	uint32_t *locbuf;
	size_t locbuf_cap;
	struct tachi_pb_buf m, sub, any;
	/* attribute keys, interned when first used (0: not yet) */
	uint32_t s_tid, s_iid, s_status, s_buildid, s_fline, s_fend, s_fendcol, s_fop;
	uint32_t s_tname, s_pid, s_mflag[4];
	/* the last sample's thread fields and attribute indices, when it had no labels */
	bool last_ok;
	uint64_t last_tid;
	uint32_t last_iid;
	uint8_t last_status;
	uint32_t last_comm;  /* its process root frame, NONE: none */
	uint32_t *la;        /* its attribute indices */
	uint32_t last_stack, last_depth, last_id; /* its stack and Sample, when last_ok */
	size_t nla, la_cap;
	int64_t *vtmp;       /* a sample's values, ntypes of them */
};

#define NOMEM(w) WFAIL((w), TACH_E_NOMEM, "out of memory")

static int ow_option(struct tach_writer *w, const char *key, const char *value)
{
	struct otlp_wstate *st = w->state;
	bool b;
	if (!strcmp(key, "json") || !strcmp(key, "timestamps")) {
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad %s value %s", key, value);
		if (key[0] == 'j')
			st->json = b;
		else
			st->no_ts = !b;
		return TACH_OK;
	}
	if (!strcmp(key, "cpu")) {
		if (!strcmp(value, "auto"))
			st->cpu = CPU_AUTO;
		else if (tachi_parse_bool(value, &b))
			st->cpu = b ? CPU_YES : CPU_NO;
		else
			return WFAIL(w, TACH_E_USAGE, "cpu must be yes, no or auto, not %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "service")) {
		free(st->service);
		if (!(st->service = strdup(value)))
			return NOMEM(w);
		return TACH_OK;
	}
	return WFAIL(w, TACH_E_USAGE, "otlp writer has no option %s", key);
}

/* ---- interning ---- */

static bool otab_eq(void *ctx, uint32_t id, const void *key)
{
	const struct otab *t = ctx;
	const struct okey *k = key;
	size_t a = t->off[id], n = t->off[id + 1] - a;
	return n == k->n && (!n || !memcmp(t->b.p + a, k->p, n));
}

/* The index of the entry p[0, n), added when new; false when out of memory or past the
 * schema's int32 indices. */
static bool otab_get(struct otab *t, const void *p, size_t n, uint32_t *idx)
{
	struct okey k = { p, n };
	uint64_t h = tachi_hash(p, n);
	if (tachi_idset_find(&t->index, h, &k, otab_eq, t, idx))
		return true;
	if (t->n >= MAX_INDEX || !TACHI_RESERVE(t->off, t->cap, t->n + 2) ||
	    !tachi_pb_reserve(&t->b, n))
		return false;
	if (!t->n)
		t->off[0] = 0;
	if (n)
		memcpy(t->b.p + t->b.len, p, n);
	t->b.len += n;
	*idx = (uint32_t)t->n;
	t->off[t->n + 1] = t->b.len;
	if (!tachi_idset_insert(&t->index, h, *idx))
		return false;
	t->n++;
	return true;
}

static void otab_free(struct otab *t)
{
	free(t->b.p);
	free(t->off);
	tachi_idset_free(&t->index);
}

/* A string's index; bytes that are not UTF-8 become U+FFFD (said once). */
static bool own_str(struct tach_writer *w, const char *s, size_t n, uint32_t *idx)
{
	struct otlp_wstate *st = w->state;
	if (tachi_utf8_valid((const uint8_t *)s, n))
		return otab_get(&st->strs, s, n, idx);
	char *fix = n <= SIZE_MAX / 3 ? malloc(3 * n) : NULL;
	if (!fix)
		return false;
	bool repaired = false;
	size_t k = tachi_utf8_repair(fix, s, n, &repaired);
	bool ok = otab_get(&st->strs, fix, k, idx);
	free(fix);
	if (!st->warned_utf8) {
		st->warned_utf8 = true;
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "strings that are not UTF-8 are written with U+FFFD for their bad bytes");
	}
	return ok;
}

static bool own_cstr(struct tach_writer *w, const char *s, uint32_t *idx)
{
	return own_str(w, s, strlen(s), idx);
}

/* An attribute key's index, interned at its first use so that no string is unused. */
static bool key_str(struct tach_writer *w, uint32_t *slot, const char *s)
{
	return *slot || own_cstr(w, s, slot);
}

static bool src_str(struct tach_writer *w, const struct tach_dict *d, uint32_t id, uint32_t *idx)
{
	struct otlp_wstate *st = w->state;
	if (id < st->smap_cap && st->smap[id] != NONE) {
		*idx = st->smap[id];
		return true;
	}
	size_t n;
	const char *s = tachi_str(d, id, &n);
	if (!own_str(w, s, n, idx))
		return false;
	if (id >= st->smap_cap && !tachi_idmap_reserve(&st->smap, &st->smap_cap, (size_t)id + 1))
		return false;
	st->smap[id] = *idx;
	return true;
}

/* A varint field written even when 0 (a oneof member, whose presence is its meaning). */
static bool put_varint0(struct tachi_pb_buf *b, uint32_t num, uint64_t v)
{
	return tachi_pb_put_uvarint(b, TACHI_PB_KEY(num, TACHI_PB_VARINT)) &&
	       tachi_pb_put_uvarint(b, v);
}

/* A packed repeated int32 field of indices. */
static bool put_packed(struct tachi_pb_buf *b, struct tachi_pb_buf *tmp, uint32_t num,
		       const uint32_t *v, size_t n)
{
	tmp->len = 0;
	for (size_t i = 0; i < n; i++)
		if (!tachi_pb_put_uvarint(tmp, v[i]))
			return false;
	return !n || tachi_pb_put_bytes(b, num, tmp->p, tmp->len);
}

/* An attribute (KeyValueAndUnit) with an int64 value (unit: a string index, 0 none) or a
 * string one (s non-NULL). */
static bool attr_get(struct tach_writer *w, uint32_t key, int64_t v, const char *s, size_t n,
		     uint32_t unit, uint32_t *idx)
{
	struct otlp_wstate *st = w->state;
	struct tachi_pb_buf *a = &st->any, *m = &st->m;
	a->len = m->len = 0;
	if (s) {
		char *fix = NULL;
		bool repaired = false;
		if (!tachi_utf8_valid((const uint8_t *)s, n)) {
			if (n > SIZE_MAX / 3 || !(fix = malloc(3 * n)))
				return false;
			n = tachi_utf8_repair(fix, s, n, &repaired);
			s = fix;
		}
		bool ok = tachi_pb_put_bytes(a, ANY_STRING, s, n);
		free(fix);
		if (!ok)
			return false;
	} else if (!put_varint0(a, ANY_INT, (uint64_t)v)) {
		return false;
	}
	return tachi_pb_put_varint(m, KVU_KEY, key) && tachi_pb_put_bytes(m, KVU_VALUE, a->p, a->len) &&
	       tachi_pb_put_varint(m, KVU_UNIT, unit) && otab_get(&st->attrs, m->p, m->len, idx);
}

/* An attribute with the bool value true. */
static bool attr_true(struct tach_writer *w, uint32_t key, uint32_t *idx)
{
	struct otlp_wstate *st = w->state;
	struct tachi_pb_buf *a = &st->any, *m = &st->m;
	a->len = m->len = 0;
	return put_varint0(a, ANY_BOOL, 1) && tachi_pb_put_varint(m, KVU_KEY, key) &&
	       tachi_pb_put_bytes(m, KVU_VALUE, a->p, a->len) && otab_get(&st->attrs, m->p, m->len, idx);
}

/* ---- begin ---- */

static int own_types(struct tach_writer *w)
{
	struct otlp_wstate *st = w->state;
	uint32_t cfg = w->meta.profiling_config & 0xff;
	/* CPython's modes: cpu (2) and all (4, GIL and CPU) sample threads on a CPU only */
	bool cpu = st->cpu == CPU_YES || (st->cpu == CPU_AUTO && (cfg == 2 || cfg == 4));
	st->timed = w->meta.sample_time;
	st->ntypes = st->timed ? 2 : 1;
	if (!(st->type_str = calloc(4, sizeof(*st->type_str))) ||
	    !own_cstr(w, "samples", &st->type_str[0]) || !own_cstr(w, "count", &st->type_str[1]) ||
	    !own_cstr(w, cpu ? "cpu" : "wall", &st->type_str[2]) ||
	    !own_cstr(w, "nanoseconds", &st->type_str[3]))
		return NOMEM(w);
	return TACH_OK;
}

static int input_types(struct tach_writer *w)
{
	struct otlp_wstate *st = w->state;
	const struct tach_meta *m = &w->meta;
	st->ntypes = m->value_type_count;
	if (!(st->type_str = calloc(2 * (size_t)st->ntypes, sizeof(*st->type_str))))
		return NOMEM(w);
	for (uint32_t i = 0; i < st->ntypes; i++) {
		const struct tach_value_type *vt = &m->value_types[i];
		if (!own_cstr(w, vt->type ? vt->type : "", &st->type_str[2 * i]) ||
		    !own_cstr(w, vt->unit ? vt->unit : "", &st->type_str[2 * i + 1]))
			return NOMEM(w);
	}
	const struct tach_value_type *wt = m->weight_type < st->ntypes ?
					   &m->value_types[m->weight_type] : NULL;
	st->time_div = wt && wt->unit && !m->weight_unit && m->sample_time ?
		       tachi_time_unit_ns(wt->unit, strlen(wt->unit)) : 0;
	return TACH_OK;
}

static int ow_begin(struct tach_writer *w)
{
	struct otlp_wstate *st = w->state;
	uint32_t zero;
	/* every table's entry 0 is its zero value: an empty message, the empty string */
	if (!otab_get(&st->strs, "", 0, &zero) || !otab_get(&st->maps, "", 0, &zero) ||
	    !otab_get(&st->locs, "", 0, &zero) || !otab_get(&st->fns, "", 0, &zero) ||
	    !otab_get(&st->stacks, "", 0, &zero) || !otab_get(&st->attrs, "", 0, &zero))
		return NOMEM(w);
	st->min_ts = UINT64_MAX;
	int rc = w->meta.value_type_count ? input_types(w) : own_types(w);
	if (!rc && !(st->vtmp = calloc(st->ntypes, sizeof(*st->vtmp))))
		rc = NOMEM(w);
	return rc;
}

/* ---- frames ---- */

static int frame_ok(struct tach_writer *w, const struct tach_dict *d, uint32_t fid)
{
	if (fid >= d->frame_count)
		return WFAIL(w, TACH_E_USAGE, "frame id %u out of range", fid);
	const struct tach_frame *f = &d->frames[fid];
	if (f->file >= d->str_count || f->func >= d->str_count)
		return WFAIL(w, TACH_E_USAGE, "string id out of range in frame %u", fid);
	return TACH_OK;
}

static int mapping_index(struct tach_writer *w, const struct tach_dict *d, uint32_t id,
			 uint32_t *idx)
{
	struct otlp_wstate *st = w->state;
	const struct tach_mapping *mp = tach_dict_mapping(d, id);
	*idx = 0;
	if (!mp)
		return TACH_OK;
	if (id < st->mmap_cap && st->mmap[id] != NONE) {
		*idx = st->mmap[id];
		return TACH_OK;
	}
	static const char *const flag_keys[4] = { OTLP_MAP_HAS_FUNCTIONS, OTLP_MAP_HAS_FILENAMES,
						  OTLP_MAP_HAS_LINES, OTLP_MAP_HAS_INLINES };
	uint32_t file, attr[5], na = 0;
	if (mp->file >= d->str_count || (mp->build_id != TACH_NO_STRING && mp->build_id >= d->str_count))
		return WFAIL(w, TACH_E_USAGE, "string id out of range in mapping %u", id);
	if (!src_str(w, d, mp->file, &file))
		return NOMEM(w);
	if (mp->build_id != TACH_NO_STRING) {
		size_t n;
		const char *b = tachi_str(d, mp->build_id, &n);
		if (n && (!key_str(w, &st->s_buildid, OTLP_BUILD_ID) ||
			  !attr_get(w, st->s_buildid, 0, b, n, 0, &attr[na++])))
			return NOMEM(w);
	}
	/* pprof's mapping flags, as the semantic conventions' pprof namespace names them (the
	 * collector's pprof translator writes those that are true) */
	for (int i = 0; i < 4; i++)
		if ((mp->flags >> i & 1) && (!key_str(w, &st->s_mflag[i], flag_keys[i]) ||
					     !attr_true(w, st->s_mflag[i], &attr[na++])))
			return NOMEM(w);
	struct tachi_pb_buf *m = &st->sub;
	m->len = 0;
	if (!tachi_pb_put_varint(m, MAP_MEMORY_START, mp->start) ||
	    !tachi_pb_put_varint(m, MAP_MEMORY_LIMIT, mp->limit) ||
	    !tachi_pb_put_varint(m, MAP_FILE_OFFSET, mp->offset) ||
	    !tachi_pb_put_varint(m, MAP_FILENAME, file) ||
	    (na && !put_packed(m, &st->any, MAP_ATTRIBUTES, attr, na)) ||
	    !otab_get(&st->maps, m->p, m->len, idx) ||
	    (id >= st->mmap_cap && !tachi_idmap_reserve(&st->mmap, &st->mmap_cap, (size_t)id + 1)))
		return NOMEM(w);
	st->mmap[id] = *idx;
	return TACH_OK;
}

/* Frame f's Line onto m, and, with extra (a Location of this frame alone), into attrs[*na]
 * what OTLP has no field for. */
static bool frame_line(struct tach_writer *w, const struct tach_dict *d,
		       const struct tach_frame *f, struct tachi_pb_buf *m, uint32_t *attrs,
		       size_t *na)
{
	struct otlp_wstate *st = w->state;
	struct tachi_pb_buf *l = &st->m;
	uint32_t fk[2], fn;
	if (!src_str(w, d, f->func, &fk[0]) || !src_str(w, d, f->file, &fk[1]))
		return false;
	l->len = 0;
	if (!tachi_pb_put_varint(l, FN_NAME, fk[0]) || !tachi_pb_put_varint(l, FN_FILENAME, fk[1]) ||
	    !otab_get(&st->fns, l->p, l->len, &fn))
		return false;
	int64_t line = f->line > 0 ? f->line : 0, col = f->col >= 0 ? (int64_t)f->col + 1 : 0;
	l->len = 0;
	if (!tachi_pb_put_varint(l, LINE_FUNCTION, fn) || !tachi_pb_put_varint(l, LINE_LINE, (uint64_t)line) ||
	    !tachi_pb_put_varint(l, LINE_COLUMN, (uint64_t)col) ||
	    !tachi_pb_put_bytes(m, LOC_LINES, l->p, l->len))
		return false;
	if (!attrs)
		return true;
	/* what a reader makes of the Line alone: the line or -1, the end line equal to it,
	 * the column - 1, no end column, no opcode */
	int32_t rline = f->line > 0 ? f->line : -1;
	struct { bool on; uint32_t *key; const char *name; int64_t v; } x[4] = {
		{ f->line != rline, &st->s_fline, OTLP_FRAME_LINE, f->line },
		{ f->end_line != rline, &st->s_fend, OTLP_FRAME_END_LINE, f->end_line },
		{ f->end_col != -1, &st->s_fendcol, OTLP_FRAME_END_COL, f->end_col },
		{ f->opcode != TACH_NO_OPCODE, &st->s_fop, OTLP_FRAME_OPCODE, f->opcode },
	};
	for (int i = 0; i < 4; i++)
		if (x[i].on && (!key_str(w, x[i].key, x[i].name) ||
				!attr_get(w, *x[i].key, x[i].v, NULL, 0, 0, &attrs[(*na)++])))
			return false;
	return true;
}

/* Whether native frame f is unsymbolized and named as a reader names a Location without
 * lines (the pprof reader and ours): by module and file offset in its mapping's range
 * (its column that mapping's offset), else by its address, in the mapping's file (else
 * "~"). Such a frame is written as a bare address, for a backend to symbolize; any other
 * keeps its name in a Line, so that it reads back as it was. */
static bool bare_frame(const struct tach_dict *d, const struct tach_frame *f,
		       const struct tach_frame_native *nat)
{
	const struct tach_mapping *m = nat->mapping ? tach_dict_mapping(d, nat->mapping) : NULL;
	size_t fl = 0, nl;
	if (m)
		tachi_str(d, m->file, &fl);
	const char *file = tachi_str(d, f->file, &nl);
	bool in = m && fl && nat->address >= m->start && nat->address < m->limit;
	uint64_t off;
	if (f->opcode != TACH_NO_OPCODE || f->end_col != -1 || f->end_line != -1)
		return false;
	if (in)
		return m->file == f->file && tachi_modoff_name(d, f, &off) &&
		       off == nat->address - m->start + m->offset &&
		       f->col == (m->offset <= INT32_MAX ? (int64_t)m->offset : -1);
	return f->col == -1 && tachi_addr_name(d, f, nat->address) &&
	       (m && fl ? m->file == f->file : nl == 1 && file[0] == '~');
}

/* The Location of frames fids[0, n) (n > 1: a run inlined each into the next, one machine
 * location): the outermost's address and mapping, no Line for an unsymbolized frame. */
static int location(struct tach_writer *w, const struct tach_dict *d, const uint32_t *fids,
		    uint32_t n, uint32_t *idx)
{
	struct otlp_wstate *st = w->state;
	const struct tach_frame *f = &d->frames[fids[n - 1]];
	const struct tach_frame_native *nat = tach_dict_frame_native(d, fids[n - 1]);
	struct tachi_pb_buf *m = &st->sub;
	uint32_t map = 0, attrs[4];
	size_t na = 0;
	int rc;
	if (nat && nat->mapping && (rc = mapping_index(w, d, nat->mapping, &map)))
		return rc;
	m->len = 0;
	if (!tachi_pb_put_varint(m, LOC_MAPPING, map) ||
	    !tachi_pb_put_varint(m, LOC_ADDRESS, nat ? nat->address : 0))
		return NOMEM(w);
	bool bare = n == 1 && nat && bare_frame(d, f, nat);
	for (uint32_t i = 0; !bare && i < n; i++)
		if (!frame_line(w, d, &d->frames[fids[i]], m, n == 1 ? attrs : NULL, &na))
			return NOMEM(w);
	/* m was the scratch of frame_line's Line and attributes: they are in sub now */
	if ((na && !put_packed(m, &st->any, LOC_ATTRIBUTES, attrs, na)) ||
	    !otab_get(&st->locs, m->p, m->len, idx))
		return NOMEM(w);
	return TACH_OK;
}

/* A lone frame's Location, once per frame. */
static int frame_location(struct tach_writer *w, const struct tach_dict *d, uint32_t fid,
			  uint32_t *idx)
{
	struct otlp_wstate *st = w->state;
	if (fid < st->fmap_cap && st->fmap[fid] != NONE) {
		*idx = st->fmap[fid];
		return TACH_OK;
	}
	int rc = location(w, d, &fid, 1, idx);
	if (rc)
		return rc;
	if (fid >= st->fmap_cap && !tachi_idmap_reserve(&st->fmap, &st->fmap_cap, (size_t)fid + 1))
		return NOMEM(w);
	st->fmap[fid] = *idx;
	return TACH_OK;
}

/* The sample's Stack: its frames' Locations, innermost first, inline runs as one. */
static int stack_index(struct tach_writer *w, const struct tach_dict *d,
		       const struct tach_sample *s, uint32_t *idx)
{
	struct otlp_wstate *st = w->state;
	size_t n = 0;
	int rc;
	*idx = 0;
	if (!s->depth)
		return TACH_OK;
	if (!TACHI_RESERVE(st->locbuf, st->locbuf_cap, s->depth))
		return NOMEM(w);
	for (uint32_t i = 0; i < s->depth; i++) {
		if ((rc = frame_ok(w, d, s->frames[i])))
			return rc;
		const struct tach_frame_native *nat = tach_dict_frame_native(d, s->frames[i]);
		uint32_t j = i;
		while (j + 1 < s->depth && (nat = tach_dict_frame_native(d, s->frames[j])) &&
		       nat->inlined) {
			if ((rc = frame_ok(w, d, s->frames[++j])))
				return rc;
		}
		rc = j > i ? location(w, d, s->frames + i, j - i + 1, &st->locbuf[n])
			   : frame_location(w, d, s->frames[i], &st->locbuf[n]);
		if (rc)
			return rc;
		n++;
		i = j;
	}
	struct tachi_pb_buf *m = &st->sub;
	m->len = 0;
	if (!put_packed(m, &st->any, STACK_LOCATIONS, st->locbuf, n) ||
	    !otab_get(&st->stacks, m->p, m->len, idx))
		return NOMEM(w);
	return TACH_OK;
}

/* ---- samples ---- */

/* Labels the sample's own fields hold (our pprof writer's), not written again. */
static bool field_label(const struct tach_dict *d, uint32_t key)
{
	size_t n;
	const char *k = tachi_str(d, key, &n);
	return (n == 9 && !memcmp(k, "thread id", 9)) ||
	       (n == 14 && !memcmp(k, "interpreter id", 14)) ||
	       (n == 12 && !memcmp(k, "thread state", 12));
}

/* Attribute a onto the sample's list. */
static bool add_attr(struct otlp_wstate *st, uint32_t a)
{
	if (!TACHI_RESERVE(st->la, st->la_cap, st->nla + 1))
		return false;
	st->la[st->nla++] = a;
	return true;
}

/* The sample's attribute indices into st->la. */
static int sample_attrs(struct tach_writer *w, const struct tach_dict *d,
			const struct tach_sample *s)
{
	struct otlp_wstate *st = w->state;
	const struct tach_sample_ext *e = st->ext;
	bool labels = e && e->label_count;
	const char *comm = NULL;
	size_t comm_n = 0;
	int32_t pid = -1;
	uint32_t root = s->depth && tachi_comm_frame(d, s->frames[s->depth - 1], &comm, &comm_n, &pid)
				? s->frames[s->depth - 1]
				: NONE;
	if (!labels && st->last_ok && st->last_tid == s->thread_id && st->last_iid == s->interp_id &&
	    st->last_status == s->status && st->last_comm == root)
		return TACH_OK;
	uint32_t a;
	st->nla = 0;
	st->last_ok = false;
#define ADD(idx) add_attr(st, (idx))
	if (!key_str(w, &st->s_tid, OTLP_THREAD_ID) ||
	    !attr_get(w, st->s_tid, (int64_t)s->thread_id, NULL, 0, 0, &a) || !ADD(a) ||
	    (s->interp_id && (!key_str(w, &st->s_iid, OTLP_INTERP_ID) ||
			      !attr_get(w, st->s_iid, s->interp_id, NULL, 0, 0, &a) || !ADD(a))) ||
	    (s->status && (!key_str(w, &st->s_status, OTLP_STATUS) ||
			   !attr_get(w, st->s_status, s->status, NULL, 0, 0, &a) || !ADD(a))) ||
	    /* a process root frame (perf's, a Chrome trace's named threads) names the thread and
	     * its process, as the semantic conventions name them (the frame stays on the stack) */
	    (root != NONE && (!key_str(w, &st->s_tname, OTLP_THREAD_NAME) ||
			      !attr_get(w, st->s_tname, 0, comm, comm_n, 0, &a) || !ADD(a))) ||
	    (root != NONE && pid > 0 && (!key_str(w, &st->s_pid, OTLP_PROCESS_PID) ||
					 !attr_get(w, st->s_pid, pid, NULL, 0, 0, &a) || !ADD(a))))
		return NOMEM(w);
	for (uint32_t i = 0; labels && i < e->label_count; i++) {
		const struct tach_label *l = &e->labels[i];
		uint32_t key, unit = 0;
		if (l->key >= d->str_count || (l->str != TACH_NO_STRING && l->str >= d->str_count) ||
		    (l->unit != TACH_NO_STRING && l->unit >= d->str_count))
			return WFAIL(w, TACH_E_USAGE, "string id out of range in a label");
		if (field_label(d, l->key))
			continue;
		size_t n = 0;
		const char *sv = l->str != TACH_NO_STRING ? tachi_str(d, l->str, &n) : NULL;
		if (!src_str(w, d, l->key, &key) ||
		    (!sv && l->unit != TACH_NO_STRING && !src_str(w, d, l->unit, &unit)) ||
		    !attr_get(w, key, l->num, sv, n, sv ? 0 : unit, &a) || !ADD(a))
			return NOMEM(w);
	}
#undef ADD
	st->last_ok = !labels;
	st->last_tid = s->thread_id;
	st->last_iid = s->interp_id;
	st->last_status = s->status;
	st->last_comm = root;
	return TACH_OK;
}

/* The Sample of (stack, attributes), made if new: its encoded identity is its key. */
static int sample_index(struct tach_writer *w, uint32_t stack, uint32_t *idx, bool *fresh)
{
	struct otlp_wstate *st = w->state;
	struct tachi_pb_buf *m = &st->sub;
	m->len = 0;
	if (!tachi_pb_put_varint(m, SMP_STACK, stack) ||
	    !put_packed(m, &st->any, SMP_ATTRIBUTES, st->la, st->nla))
		return NOMEM(w);
	size_t before = st->ids.n;
	if (!otab_get(&st->ids, m->p, m->len, idx) ||
	    !TACHI_RESERVE(st->smps, st->smps_cap, st->ids.n))
		return NOMEM(w);
	*fresh = st->ids.n > before;
	return TACH_OK;
}

static int64_t clamp64(uint64_t v)
{
	return v > INT64_MAX ? INT64_MAX : (int64_t)v;
}

/* The sample's value of each type into v. */
static void sample_values(struct tach_writer *w, const struct tach_sample *s, int64_t *v)
{
	struct otlp_wstate *st = w->state;
	const struct tach_sample_ext *e = st->ext;
	if (!w->meta.value_type_count) {
		v[0] = clamp64(s->weight);
		if (st->timed)
			v[1] = clamp64(s->time_ns);
		return;
	}
	if (e && e->value_count == st->ntypes) {
		memcpy(v, e->values, st->ntypes * sizeof(*v));
		return;
	}
	memset(v, 0, st->ntypes * sizeof(*v));
	if (w->meta.weight_type < st->ntypes)
		v[w->meta.weight_type] = clamp64(st->time_div ? s->time_ns / st->time_div : s->weight);
}

static int ow_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct otlp_wstate *st = w->state;
	uint32_t stack, id;
	bool fresh = false;
	int rc;
	uint64_t ts;
	if (__builtin_mul_overflow(s->timestamp_us, (uint64_t)1000, &ts))
		return WFAIL(w, TACH_E_LIMIT, "timestamp %llu µs is past 2^64 ns",
			     (unsigned long long)s->timestamp_us);
	/* the previous sample's thread, and the reader says every frame is the same: its
	 * stack, not looked up again */
	bool same = st->last_ok && st->last_tid == s->thread_id && st->last_iid == s->interp_id &&
		    s->depth == st->last_depth && s->same_outer >= s->depth;
	if (same)
		stack = st->last_stack;
	else if ((rc = stack_index(w, d, s, &stack)))
		return rc;
	bool labels = st->ext && st->ext->label_count;
	if (same && !labels && st->last_status == s->status)
		id = st->last_id; /* the same stack and attributes: the same Sample */
	else if ((rc = sample_attrs(w, d, s)) || (rc = sample_index(w, stack, &id, &fresh)))
		return rc;
	st->last_id = id;
	st->last_stack = stack;
	st->last_depth = s->depth;
	struct osmp *sm = &st->smps[id];
	uint32_t e = (uint32_t)st->nents;
	bool add = st->no_ts && !fresh;
	size_t nv;
	if (!add && (st->nents >= UINT32_MAX - 1 || !TACHI_RESERVE(st->ents, st->ents_cap, st->nents + 1) ||
		     __builtin_mul_overflow(st->nents + 1, (size_t)st->ntypes, &nv) ||
		     !TACHI_RESERVE(st->vals, st->vals_cap, nv)))
		return NOMEM(w);
	int64_t *v = st->vtmp;
	sample_values(w, s, v);
	if (add) {
		int64_t *to = st->vals + (size_t)sm->head * st->ntypes;
		for (uint32_t i = 0; i < st->ntypes; i++)
			if (__builtin_add_overflow(to[i], v[i], &to[i]))
				to[i] = v[i] < 0 ? INT64_MIN : INT64_MAX;
	} else {
		memcpy(st->vals + (size_t)e * st->ntypes, v, st->ntypes * sizeof(*v));
		st->ents[e] = (struct oent){ ts, NONE };
		if (fresh)
			sm->head = e;
		else
			st->ents[sm->tail].next = e;
		sm->tail = e;
		st->nents++;
	}
	uint64_t end = s->time_ns && !__builtin_add_overflow(ts, s->time_ns, &end) ? end : ts;
	if (ts < st->min_ts)
		st->min_ts = ts;
	if (end > st->max_end)
		st->max_end = end;
	return TACH_OK;
}

static int ow_put_ext(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s,
		      const struct tach_sample_ext *ext)
{
	struct otlp_wstate *st = w->state;
	st->ext = ext;
	int rc = ow_put(w, d, s);
	st->ext = NULL;
	return rc;
}

/* ---- close ---- */

static bool put_value_type(struct tachi_pb_buf *b, struct tachi_pb_buf *tmp, uint32_t num,
			   uint32_t type, uint32_t unit)
{
	tmp->len = 0;
	return tachi_pb_put_varint(tmp, VT_TYPE, type) && tachi_pb_put_varint(tmp, VT_UNIT, unit) &&
	       tachi_pb_put_bytes(b, num, tmp->p, tmp->len);
}

static bool put_fixed64(struct tachi_pb_buf *b, uint32_t num, uint64_t v)
{
	if (!v)
		return true;
	if (!tachi_pb_put_uvarint(b, TACHI_PB_KEY(num, TACHI_PB_I64)) || !tachi_pb_reserve(b, 8))
		return false;
	tachi_wr64le(b->p + b->len, v);
	b->len += 8;
	return true;
}

/* Sample i of type t's Profile onto m. */
static bool put_sample(struct otlp_wstate *st, struct tachi_pb_buf *m, uint32_t i, uint32_t t)
{
	struct tachi_pb_buf *s = &st->sub, *x = &st->any;
	const struct otab *ids = &st->ids;
	s->len = x->len = 0;
	size_t a = ids->off[i], n = ids->off[i + 1] - a;
	if (n && (!tachi_pb_reserve(s, n) || !memcpy(s->p, ids->b.p + a, n)))
		return false;
	s->len = n;
	for (uint32_t e = st->smps[i].head; e != NONE; e = st->ents[e].next)
		if (!tachi_pb_put_uvarint(x, (uint64_t)st->vals[(size_t)e * st->ntypes + t]))
			return false;
	if (!tachi_pb_put_bytes(s, SMP_VALUES, x->p, x->len))
		return false;
	if (!st->no_ts) {
		x->len = 0;
		for (uint32_t e = st->smps[i].head; e != NONE; e = st->ents[e].next) {
			if (!tachi_pb_reserve(x, 8))
				return false;
			tachi_wr64le(x->p + x->len, st->ents[e].ts);
			x->len += 8;
		}
		if (!tachi_pb_put_bytes(s, SMP_TIMESTAMPS, x->p, x->len))
			return false;
	}
	return tachi_pb_put_bytes(m, PROF_SAMPLES, s->p, s->len);
}

/* The Profile of type t onto b. */
static int put_profile(struct tach_writer *w, struct tachi_pb_buf *b, uint32_t t)
{
	struct otlp_wstate *st = w->state;
	const struct tach_meta *mt = &w->meta;
	struct tachi_pb_buf p = { 0 };
	uint64_t start = mt->start_time_ns > 0 ? (uint64_t)mt->start_time_ns
			 : mt->start_time_us <= UINT64_MAX / 1000 ? mt->start_time_us * 1000 : 0;
	if (!start && st->nents)
		start = st->min_ts;
	/* an input with value types (pprof) has its own duration or none: its samples'
	 * times are not its own */
	uint64_t dur = mt->duration_ns > 0 ? (uint64_t)mt->duration_ns
		       : !mt->value_type_count && st->nents && st->max_end > start ? st->max_end - start : 0;
	bool ok = put_value_type(&p, &st->m, PROF_SAMPLE_TYPE, st->type_str[2 * t], st->type_str[2 * t + 1]);
	for (uint32_t i = 0; ok && i < st->ids.n; i++)
		ok = put_sample(st, &p, i, t);
	ok = ok && put_fixed64(&p, PROF_TIME_UNIX_NANO, start) &&
	     tachi_pb_put_varint(&p, PROF_DURATION_NANO, dur);
	if (ok && mt->value_type_count && mt->period_type) {
		uint32_t pt, pu;
		ok = own_cstr(w, mt->period_type, &pt) &&
		     own_cstr(w, mt->period_unit ? mt->period_unit : "", &pu) &&
		     put_value_type(&p, &st->m, PROF_PERIOD_TYPE, pt, pu) &&
		     tachi_pb_put_varint(&p, PROF_PERIOD, (uint64_t)mt->period);
	} else if (ok && !mt->value_type_count && mt->interval_us && mt->interval_us <= INT64_MAX / 1000) {
		uint32_t tt = st->type_str[2], ns = st->type_str[3];
		ok = put_value_type(&p, &st->m, PROF_PERIOD_TYPE, tt, ns) &&
		     tachi_pb_put_varint(&p, PROF_PERIOD, mt->interval_us * 1000);
	}
	uint32_t key = 0, a;
	if (ok && !mt->value_type_count && t == 0)
		ok = own_cstr(w, OTLP_WEIGHTS, &key) && attr_get(w, key, 1, NULL, 0, 0, &a) &&
		     put_packed(&p, &st->any, PROF_ATTRIBUTES, &a, 1);
	ok = ok && tachi_pb_put_bytes(b, SP_PROFILES, p.p, p.len);
	free(p.p);
	return ok ? TACH_OK : NOMEM(w);
}

/* A Resource KeyValue with a string value onto b. */
static bool put_kv(struct tachi_pb_buf *b, struct tachi_pb_buf *tmp, struct tachi_pb_buf *any,
		   const char *key, const char *v, size_t n)
{
	any->len = tmp->len = 0;
	return tachi_pb_put_bytes(any, ANY_STRING, v, n) &&
	       tachi_pb_put_bytes(tmp, KV_KEY, key, strlen(key)) &&
	       tachi_pb_put_bytes(tmp, KV_VALUE, any->p, any->len) &&
	       tachi_pb_put_bytes(b, RES_ATTRIBUTES, tmp->p, tmp->len);
}

static int put_resource(struct tach_writer *w, struct tachi_pb_buf *rp)
{
	struct otlp_wstate *st = w->state;
	struct tachi_pb_buf res = { 0 }, tmp = { 0 };
	const char *prog = w->meta.program;
	bool ok = true;
	/* strings here are the caller's; not UTF-8, they are left out rather than repaired */
	if (st->service && tachi_utf8_valid((const uint8_t *)st->service, strlen(st->service)))
		ok = put_kv(&res, &tmp, &st->any, OTLP_SERVICE_NAME, st->service, strlen(st->service));
	if (ok && prog && *prog && tachi_utf8_valid((const uint8_t *)prog, strlen(prog))) {
		size_t bl;
		const char *base = tachi_base_name(prog, strlen(prog), &bl);
		ok = put_kv(&res, &tmp, &st->any, OTLP_EXE_NAME, base, bl) &&
		     put_kv(&res, &tmp, &st->any, OTLP_EXE_PATH, prog, strlen(prog));
	}
	ok = ok && (!res.len || tachi_pb_put_bytes(rp, RP_RESOURCE, res.p, res.len));
	free(res.p);
	free(tmp.p);
	return ok ? TACH_OK : NOMEM(w);
}

static int put_scope(struct tach_writer *w, struct tachi_pb_buf *rp)
{
	struct otlp_wstate *st = w->state;
	struct tachi_pb_buf sp = { 0 }, tmp = { 0 };
	const char *ver = tach_version();
	bool ok = tachi_pb_put_bytes(&tmp, SCOPE_NAME, "tachfmt", 7) &&
		  tachi_pb_put_bytes(&tmp, SCOPE_VERSION, ver, strlen(ver)) &&
		  tachi_pb_put_bytes(&sp, SP_SCOPE, tmp.p, tmp.len);
	int rc = ok ? TACH_OK : NOMEM(w);
	/* the input's default type first: viewers show profiles[0] by default (none named:
	 * the last, as pprof takes it) */
	uint32_t first = !w->meta.value_type_count ? 0
			 : w->meta.default_type && w->meta.default_type <= st->ntypes
			 ? w->meta.default_type - 1 : st->ntypes - 1;
	if (!rc)
		rc = put_profile(w, &sp, first);
	for (uint32_t t = 0; !rc && t < st->ntypes; t++)
		if (t != first)
			rc = put_profile(w, &sp, t);
	if (!rc && !tachi_pb_put_bytes(rp, RP_SCOPE_PROFILES, sp.p, sp.len))
		rc = NOMEM(w);
	free(sp.p);
	free(tmp.p);
	return rc;
}

static bool put_table(struct tachi_pb_buf *b, uint32_t num, const struct otab *t)
{
	for (size_t i = 0; i < t->n; i++) {
		size_t n = t->off[i + 1] - t->off[i];
		if (!tachi_pb_put_bytes(b, num, n ? t->b.p + t->off[i] : NULL, n))
			return false;
	}
	return true;
}

static int put_dictionary(struct tach_writer *w, struct tachi_pb_buf *req)
{
	struct otlp_wstate *st = w->state;
	struct tachi_pb_buf dict = { 0 }, link = { 0 };
	static const uint8_t zeros[16];
	bool ok = put_table(&dict, DICT_MAPPING, &st->maps) &&
		  put_table(&dict, DICT_LOCATION, &st->locs) &&
		  put_table(&dict, DICT_FUNCTION, &st->fns) &&
		  tachi_pb_put_bytes(&link, LINK_TRACE_ID, zeros, 16) &&
		  tachi_pb_put_bytes(&link, LINK_SPAN_ID, zeros, 8) &&
		  tachi_pb_put_bytes(&dict, DICT_LINK, link.p, link.len) &&
		  put_table(&dict, DICT_STRING, &st->strs) &&
		  put_table(&dict, DICT_ATTRIBUTE, &st->attrs) &&
		  put_table(&dict, DICT_STACK, &st->stacks) &&
		  tachi_pb_put_bytes(req, REQ_DICTIONARY, dict.p, dict.len);
	free(dict.p);
	free(link.p);
	return ok ? TACH_OK : NOMEM(w);
}

static int ow_close(struct tach_writer *w)
{
	struct otlp_wstate *st = w->state;
	struct tachi_pb_buf req = { 0 }, rp = { 0 };
	/* the profiles first: their period types may add strings */
	int rc = put_resource(w, &rp);
	if (!rc)
		rc = put_scope(w, &rp);
	if (!rc && !tachi_pb_put_bytes(&req, REQ_RESOURCE_PROFILES, rp.p, rp.len))
		rc = NOMEM(w);
	free(rp.p);
	if (!rc)
		rc = put_dictionary(w, &req);
	if (!rc && (st->json ? tachi_otlp_json(&w->out, req.p, req.len)
			     : tachi_out_write(&w->out, req.p, req.len)))
		rc = tachi_writer_io(w);
	free(req.p);
	return rc;
}

static void ow_free(struct tach_writer *w)
{
	struct otlp_wstate *st = w->state;
	struct otab *t[] = { &st->strs, &st->maps, &st->locs, &st->fns, &st->stacks, &st->attrs, &st->ids };
	for (size_t i = 0; i < sizeof(t) / sizeof(t[0]); i++)
		otab_free(t[i]);
	free(st->service);
	free(st->smap);
	free(st->fmap);
	free(st->mmap);
	free(st->type_str);
	free(st->ents);
	free(st->smps);
	free(st->vals);
	free(st->locbuf);
	free(st->m.p);
	free(st->sub.p);
	free(st->any.p);
	free(st->la);
	free(st->vtmp);
}

const struct tachi_writer_ops tachi_otlp_writer_ops = {
	.state_size = sizeof(struct otlp_wstate),
	.option = ow_option,
	.begin = ow_begin,
	.put = ow_put,
	.put_ext = ow_put_ext,
	.close = ow_close,
	.free = ow_free,
};
