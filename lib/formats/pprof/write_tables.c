/* The pprof writer's tables (see pprof/write.c for the format): the string table (the
 * source dict's strings as met, our own), one Function per distinct name and file, one
 * Location per distinct line run, address and mapping (native frames, inline runs, frames
 * named by module and offset: formats/pprof/write_maps.c's mappings), and at close their
 * Mapping, Location, Function and string_table messages. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "model/dict.h"
#include "core/handles.h"
#include "formats/pprof/write_maps.h"
#include "formats/pprof/write.h"

/* ---- string table ---- */

bool tachi_pw_own_str(struct pprof_wstate *st, const char *s, size_t n, uint32_t *idx)
{
	if (st->nstrs >= UINT32_MAX - 1 || st->own.len + n > UINT32_MAX ||
	    !TACHI_RESERVE(st->strs, st->strs_cap, st->nstrs + 1) ||
	    !TACHI_RESERVE(st->own.p, st->own.cap, st->own.len + n + 1))
		return false;
	memcpy(st->own.p + st->own.len, s, n);
	st->strs[st->nstrs] = (struct pstr){ NO_ID, (uint32_t)st->own.len, (uint32_t)n };
	st->own.len += n;
	*idx = (uint32_t)st->nstrs++;
	return true;
}

bool tachi_pw_src_str(struct pprof_wstate *st, const struct tach_dict *d, uint32_t id,
		      uint32_t *idx)
{
	if (d->strs[id].len == 0) {
		*idx = 0; /* string_table[0] is "" */
		return true;
	}
	if (id >= st->smap_cap) {
		size_t old = st->smap_cap;
		if (!TACHI_RESERVE(st->smap, st->smap_cap, (size_t)id + 1))
			return false;
		memset(st->smap + old, 0, (st->smap_cap - old) * sizeof(*st->smap));
	}
	if (st->smap[id]) {
		*idx = st->smap[id] - 1;
		return true;
	}
	if (st->nstrs >= UINT32_MAX - 1 || !TACHI_RESERVE(st->strs, st->strs_cap, st->nstrs + 1))
		return false;
	st->strs[st->nstrs] = (struct pstr){ id, 0, 0 };
	*idx = (uint32_t)st->nstrs++;
	st->smap[id] = *idx + 1;
	return true;
}

/* "gil+cpu", "gil-wait", ...: the names the programs' --status option takes. */
bool tachi_pw_state_str(struct pprof_wstate *st, uint8_t status, uint32_t *idx)
{
	if (st->state_str[status]) {
		*idx = st->state_str[status] - 1;
		return true;
	}
	static const char *const names[8] = { "gil", "cpu", "unknown", "gil-wait",
					       "exception", "main", "0x40", "0x80" };
	char t[80] = "";
	size_t n = 0;
	for (int b = 0; b < 8; b++) {
		if (!(status & (1u << b)))
			continue;
		size_t k = strlen(names[b]);
		if (n)
			t[n++] = '+';
		memcpy(t + n, names[b], k);
		n += k;
	}
	if (!n) {
		memcpy(t, "none", 4);
		n = 4;
	}
	if (!tachi_pw_own_str(st, t, n, idx))
		return false;
	st->state_str[status] = *idx + 1;
	return true;
}

/* ---- locations and functions ---- */

static uint64_t fn_hash(const struct fnkey *k)
{
	uint32_t b[2] = { k->name, k->file };
	return tachi_hash(b, sizeof(b));
}

static bool fn_eq(void *ctx, uint32_t id, const void *p)
{
	const struct pprof_wstate *st = ctx;
	const struct fnkey *k = p;
	return st->fns[id].name == k->name && st->fns[id].file == k->file;
}

static uint64_t line_hash(uint64_t h, const struct pprof_wline *l)
{
	int64_t b[4] = { (int64_t)h, l->fn, l->line, l->col };
	return tachi_hash(b, sizeof(b));
}

static uint64_t loc_hash(const struct pprof_loc *k, const struct pprof_wline *x)
{
	uint64_t h = line_hash(tachi_mix64(k->addr ^ tachi_mix64((uint64_t)k->dmap << 32 | k->rmap)),
			       &k->l);
	for (uint32_t i = 0; i < k->nx; i++)
		h = line_hash(h, &x[i]);
	return h;
}

static bool line_eq(const struct pprof_wline *a, const struct pprof_wline *b)
{
	return a->fn == b->fn && a->line == b->line && a->col == b->col;
}

static bool loc_eq(void *ctx, uint32_t id, const void *p)
{
	const struct pprof_wstate *st = ctx;
	const struct lockey *k = p;
	const struct pprof_loc *a = &st->locs[id], *b = k->loc;
	if (!line_eq(&a->l, &b->l) || a->addr != b->addr || a->dmap != b->dmap ||
	    a->rmap != b->rmap || a->nx != b->nx)
		return false;
	for (uint32_t i = 0; i < a->nx; i++)
		if (!line_eq(&st->xl[a->x0 + i], &k->x[i]))
			return false;
	return true;
}

/* The index of location k (extra lines in x), made if new. */
static int loc_get(struct tach_writer *w, struct pprof_loc *k, const struct pprof_wline *x,
		   uint32_t *li)
{
	struct pprof_wstate *st = w->state;
	struct lockey key = { k, x };
	uint64_t h = loc_hash(k, x);
	if (tachi_idset_find(&st->loc_index, h, &key, loc_eq, st, li))
		return TACH_OK;
	if (st->nlocs >= UINT32_MAX - 2 || st->nxl > UINT32_MAX - 1 - k->nx ||
	    !TACHI_RESERVE(st->locs, st->locs_cap, st->nlocs + 1) ||
	    !TACHI_RESERVE(st->xl, st->xl_cap, st->nxl + k->nx))
		return NOMEM(w);
	k->x0 = (uint32_t)st->nxl;
	if (k->nx)
		memcpy(st->xl + st->nxl, x, k->nx * sizeof(*x));
	st->nxl += k->nx;
	*li = (uint32_t)st->nlocs;
	st->locs[*li] = *k;
	if (!tachi_idset_insert(&st->loc_index, h, *li))
		return NOMEM(w);
	st->nlocs++;
	return TACH_OK;
}

static int frame_ok(struct tach_writer *w, const struct tach_dict *d, uint32_t fid)
{
	if (fid >= d->frame_count)
		return WFAIL(w, TACH_E_USAGE, "frame id %u out of range", fid);
	const struct tach_frame *f = &d->frames[fid];
	if (f->file >= d->str_count || f->func >= d->str_count)
		return WFAIL(w, TACH_E_USAGE, "string id out of range in frame %u", fid);
	return TACH_OK;
}

/* A frame's Line: its Function (one per distinct name and file), line and column. */
static int frame_line(struct tach_writer *w, const struct tach_dict *d, uint32_t fid,
		      struct pprof_wline *out)
{
	struct pprof_wstate *st = w->state;
	const struct tach_frame *f = &d->frames[fid];
	uint32_t fn;
	if (fid < st->ffn_cap && (fn = st->ffn[fid]) != NO_ID)
		goto done;
	struct fnkey fk;
	if (!tachi_pw_src_str(st, d, f->func, &fk.name) ||
	    !tachi_pw_src_str(st, d, f->file, &fk.file))
		return NOMEM(w);
	uint64_t h = fn_hash(&fk);
	if (!tachi_idset_find(&st->fn_index, h, &fk, fn_eq, st, &fn)) {
		if (st->nfns >= UINT32_MAX - 2 || !TACHI_RESERVE(st->fns, st->fns_cap, st->nfns + 1))
			return NOMEM(w);
		fn = (uint32_t)st->nfns;
		st->fns[fn] = fk;
		if (!tachi_idset_insert(&st->fn_index, h, fn))
			return NOMEM(w);
		st->nfns++;
	}
	if (fid >= st->ffn_cap && !tachi_idmap_reserve(&st->ffn, &st->ffn_cap, (size_t)fid + 1))
		return NOMEM(w);
	st->ffn[fid] = fn;
done:
	/* pprof's 0 means unknown: lines below 1 say nothing; TACH columns count from 0. */
	*out = (struct pprof_wline){ fn, f->line > 0 ? f->line : 0,
				     f->col >= 0 ? (int64_t)f->col + 1 : 0 };
	return TACH_OK;
}

/* The location of one frame: its native address and mapping when it has them; no line for
 * an unsymbolized native frame; a rebuilt mapping for one named by module and offset. */
static int frame_loc(struct tach_writer *w, const struct tach_dict *d, uint32_t fid,
		     struct pprof_loc *k)
{
	struct pprof_wstate *st = w->state;
	const struct tach_frame *f = &d->frames[fid];
	const struct tach_frame_native *n = tach_dict_frame_native(d, fid);
	uint64_t off;
	*k = (struct pprof_loc){ .l = { NO_ID, 0, 0 } };
	if (n) {
		k->addr = n->address;
		k->dmap = n->mapping;
		if (n->inlined && !st->native && !st->warned_inline) {
			st->warned_inline = true;
			tachi_warn(&w->warn, TACH_POS_NONE, 0, "inline marks on frames met after "
				   "the first sample are not kept: such frames are locations of their own");
		}
		if ((n->mapping && tachi_modoff_name(d, f, &off)) ||
		    (n->address && tachi_addr_name(d, f, n->address)))
			return TACH_OK;
	} else if (tachi_modoff_name(d, f, &off)) {
		int64_t i = tachi_pmaps_rebuilt(&st->maps, f->file, off, f->col);
		if (i < 0)
			return NOMEM(w);
		k->rmap = (uint32_t)i + 1;
		k->addr = off;
		return TACH_OK;
	}
	return frame_line(w, d, fid, &k->l);
}

int tachi_pw_map_frame(struct tach_writer *w, const struct tach_dict *d, uint32_t fid)
{
	struct pprof_wstate *st = w->state;
	int rc = frame_ok(w, d, fid);
	if (rc)
		return rc;
	if (fid >= st->fmap_cap && !tachi_idmap_reserve(&st->fmap, &st->fmap_cap, (size_t)fid + 1))
		return NOMEM(w);
	struct pprof_loc k;
	uint32_t li;
	if ((rc = frame_loc(w, d, fid, &k)) || (rc = loc_get(w, &k, NULL, &li)))
		return rc;
	st->fmap[fid] = li;
	st->nmapped++;
	return TACH_OK;
}

static bool inlined(const struct tach_dict *d, uint32_t fid)
{
	const struct tach_frame_native *n = tach_dict_frame_native(d, fid);
	return n && n->inlined;
}

struct run_key {
	const uint32_t *fr;
	uint32_t n;
};

static bool run_eq(void *ctx, uint32_t id, const void *p)
{
	const struct pprof_wstate *st = ctx;
	const struct run_key *k = p;
	return st->runs[id].n == k->n &&
	       !memcmp(st->rfid + st->runs[id].at, k->fr, k->n * sizeof(uint32_t));
}

static int run_loc_new(struct tach_writer *w, const struct tach_dict *d, const uint32_t *fr,
		       uint32_t n, uint32_t *li);

/* The location of fr[0, n), frames inlined each into the next one out: one machine
 * address (the outermost frame's) with their lines, innermost first, as pprof writes. */
static int run_loc(struct tach_writer *w, const struct tach_dict *d, const uint32_t *fr,
		   uint32_t n, uint32_t *li)
{
	struct pprof_wstate *st = w->state;
	int rc;
	if (n == 1) {
		if ((fr[0] >= st->fmap_cap || st->fmap[fr[0]] == NO_ID) && (rc = tachi_pw_map_frame(w, d, fr[0])))
			return rc;
		*li = st->fmap[fr[0]];
		return TACH_OK;
	}
	struct run_key k = { fr, n };
	uint64_t h = tachi_hash(fr, n * sizeof(uint32_t));
	uint32_t id;
	if (tachi_idset_find(&st->run_index, h, &k, run_eq, st, &id)) {
		*li = st->runs[id].li;
		return TACH_OK;
	}
	if ((rc = run_loc_new(w, d, fr, n, li)))
		return rc;
	if (st->nruns >= UINT32_MAX - 2 || !TACHI_RESERVE(st->runs, st->runs_cap, st->nruns + 1) ||
	    !TACHI_RESERVE(st->rfid, st->rfid_cap, st->nrfid + n))
		return NOMEM(w);
	memcpy(st->rfid + st->nrfid, fr, n * sizeof(uint32_t));
	st->runs[st->nruns] = (struct pprof_run){ st->nrfid, n, *li };
	st->nrfid += n;
	if (!tachi_idset_insert(&st->run_index, h, (uint32_t)st->nruns++))
		return NOMEM(w);
	return TACH_OK;
}

static int run_loc_new(struct tach_writer *w, const struct tach_dict *d, const uint32_t *fr,
		       uint32_t n, uint32_t *li)
{
	struct pprof_wstate *st = w->state;
	int rc;
	if (!TACHI_RESERVE(st->run, st->run_cap, n))
		return NOMEM(w);
	for (uint32_t i = 0; i < n; i++)
		if ((rc = frame_ok(w, d, fr[i])) || (rc = frame_line(w, d, fr[i], &st->run[i])))
			return rc;
	const struct tach_frame_native *o = tach_dict_frame_native(d, fr[n - 1]);
	struct pprof_loc k = { .l = st->run[0], .nx = n - 1 };
	if (o) {
		k.addr = o->address;
		k.dmap = o->mapping;
	}
	return loc_get(w, &k, st->run + 1, li);
}

/* s's stack as location indices into *out (native mode). The outer locations made only of
 * frames the reader says are unchanged are unchanged too: a frame inlined across that
 * border joins the location outside it, which is then not counted. */
int tachi_pw_native_keys(struct tach_writer *w, const struct tach_dict *d,
			 const struct tach_sample *s, struct tach_sample *out)
{
	struct pprof_wstate *st = w->state;
	if (!TACHI_RESERVE(st->keys, st->keys_cap, s->depth))
		return NOMEM(w);
	uint32_t n = 0, same = 0, from = s->same_outer < s->depth ? s->depth - s->same_outer : 0;
	for (uint32_t i = 0, j; i < s->depth; i = j + 1) {
		for (j = i; j + 1 < s->depth && inlined(d, s->frames[j]);)
			j++;
		int rc = run_loc(w, d, s->frames + i, j - i + 1, &st->keys[n++]);
		if (rc)
			return rc;
		same += i >= from;
	}
	*out = *s;
	out->frames = st->keys;
	out->depth = n;
	out->same_outer = same;
	return TACH_OK;
}

/* The output mapping id of location l, 0 for none. */
static uint32_t loc_map_id(const struct pprof_wstate *st, const struct pprof_loc *l)
{
	return l->dmap ? st->maps.dict_out[l->dmap] : l->rmap ? st->maps.rb_out[l->rmap - 1] : 0;
}

/* What the written locations of each mapping have: has_functions, has_filenames and
 * has_line_numbers when every one of them has that for every line, has_inline_frames when
 * besides the input said so or one of them has inlined lines. A mapping no location uses
 * keeps the input's flags. */
static bool map_flags(struct pprof_wstate *st, uint32_t **flags)
{
	size_t n = st->maps.nout;
	uint32_t *f = *flags = calloc(n ? 2 * n : 1, sizeof(uint32_t)), *used = f + n;
	if (!f)
		return false;
	for (size_t i = 0; i < n; i++)
		f[i] = TACH_MAPPING_HAS_FUNCTIONS | TACH_MAPPING_HAS_FILENAMES |
		       TACH_MAPPING_HAS_LINE_NUMBERS;
	for (size_t i = 0; i < st->nlocs; i++) {
		const struct pprof_loc *l = &st->locs[i];
		uint32_t o = loc_map_id(st, l);
		if (!o--)
			continue;
		used[o] |= l->nx ? TACH_MAPPING_HAS_INLINE_FRAMES : 1;
		for (uint32_t j = 0; j <= l->nx; j++) {
			const struct pprof_wline *ln = j ? &st->xl[l->x0 + j - 1] : &l->l;
			if (ln->fn == NO_ID) {
				f[o] = 0;
				break;
			}
			if (!st->fns[ln->fn].name)
				f[o] &= ~(uint32_t)TACH_MAPPING_HAS_FUNCTIONS;
			if (!st->fns[ln->fn].file)
				f[o] &= ~(uint32_t)TACH_MAPPING_HAS_FILENAMES;
			if (!ln->line)
				f[o] &= ~(uint32_t)TACH_MAPPING_HAS_LINE_NUMBERS;
		}
	}
	for (size_t i = 0; i < n; i++) {
		uint32_t in = st->maps.out[i].flags;
		if (!used[i])
			f[i] = in;
		else if (f[i] & TACH_MAPPING_HAS_FUNCTIONS)
			f[i] |= (in | used[i]) & TACH_MAPPING_HAS_INLINE_FRAMES;
	}
	return true;
}

/* The dict's mappings (the main one first), the rebuilt ones; *fake: whether locations
 * without a mapping go to one made up (the only one then, as before mappings were kept:
 * marked symbolized, so pprof neither looks for a binary nor complains of none). */
static int write_mappings(struct tach_writer *w, uint32_t *fake)
{
	struct pprof_wstate *st = w->state;
	struct tachi_pb_buf *m = &st->msg;
	uint32_t *flags = NULL;
	int rc = TACH_OK;
	*fake = 0;
	if (st->src && !tachi_pmaps_layout(&st->maps, st->src, w->meta.program))
		return NOMEM(w);
	if (!st->maps.nout) {
		*fake = 1;
		m->len = 0;
		if (!tachi_pb_put_varint(m, MAPPING_ID, 1) ||
		    !tachi_pb_put_varint(m, MAPPING_FILENAME, st->s_mapfile) ||
		    !tachi_pb_put_varint(m, MAPPING_HAS_FUNCTIONS, 1) ||
		    !tachi_pb_put_varint(m, MAPPING_HAS_FILENAMES, 1) ||
		    !tachi_pb_put_varint(m, MAPPING_HAS_LINE_NUMBERS, 1))
			return NOMEM(w);
		return tachi_pw_emit_msg(w, PROFILE_MAPPING, m);
	}
	if (!map_flags(st, &flags))
		return NOMEM(w);
	for (size_t i = 0; !rc && i < st->maps.nout; i++) {
		const struct tachi_pmap_out *o = &st->maps.out[i];
		uint32_t file, bid = 0;
		m->len = 0;
		bool ok = tachi_pw_src_str(st, st->src, o->file, &file) &&
			  (o->build_id == TACH_NO_STRING || tachi_pw_src_str(st, st->src, o->build_id, &bid)) &&
			  tachi_pb_put_varint(m, MAPPING_ID, i + 1) &&
			  tachi_pb_put_varint(m, MAPPING_MEMORY_START, o->start) &&
			  tachi_pb_put_varint(m, MAPPING_MEMORY_LIMIT, o->limit) &&
			  tachi_pb_put_varint(m, MAPPING_FILE_OFFSET, o->offset) &&
			  tachi_pb_put_varint(m, MAPPING_FILENAME, file) &&
			  tachi_pb_put_varint(m, MAPPING_BUILD_ID, bid);
		/* has_functions ... has_inline_frames: the flags' bits 0 ... 3 */
		for (unsigned b = 0; ok && b < 4; b++)
			ok = tachi_pb_put_varint(m, MAPPING_HAS_FUNCTIONS + b, flags[i] >> b & 1);
		rc = ok ? tachi_pw_emit_msg(w, PROFILE_MAPPING, m) : NOMEM(w);
	}
	free(flags);
	return rc;
}

static bool put_line(struct pprof_wstate *st, struct tachi_pb_buf *m, const struct pprof_wline *l)
{
	/* Negative numbers cannot occur here: lines and columns are clamped at 0. */
	st->sub.len = 0;
	return tachi_pb_put_varint(&st->sub, LINE_FUNCTION_ID, (uint64_t)l->fn + 1) &&
	       tachi_pb_put_varint(&st->sub, LINE_LINE, (uint64_t)l->line) &&
	       tachi_pb_put_varint(&st->sub, LINE_COLUMN, (uint64_t)l->col) &&
	       tachi_pb_put_bytes(m, LOCATION_LINE, st->sub.p, st->sub.len);
}

/* The mappings, then the locations and functions. */
int tachi_pw_write_locations(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	struct tachi_pb_buf *m = &st->msg;
	uint32_t fake;
	int rc = write_mappings(w, &fake);
	if (rc)
		return rc;
	for (size_t i = 0; i < st->nlocs; i++) {
		const struct pprof_loc *l = &st->locs[i];
		uint32_t map = loc_map_id(st, l);
		uint64_t addr = l->rmap ? tachi_pmaps_rb_address(&st->maps, l->rmap - 1, l->addr)
					: l->addr;
		m->len = 0;
		bool ok = tachi_pb_put_varint(m, LOCATION_ID, i + 1) &&
			  tachi_pb_put_varint(m, LOCATION_MAPPING_ID, map ? map : fake) &&
			  tachi_pb_put_varint(m, LOCATION_ADDRESS, addr) &&
			  (l->l.fn == NO_ID || put_line(st, m, &l->l));
		for (uint32_t j = 0; ok && j < l->nx; j++)
			ok = put_line(st, m, &st->xl[l->x0 + j]);
		if (!ok)
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, PROFILE_LOCATION, m)))
			return rc;
	}
	for (size_t i = 0; i < st->nfns; i++) {
		m->len = 0;
		if (!tachi_pb_put_varint(m, FUNCTION_ID, i + 1) ||
		    !tachi_pb_put_varint(m, FUNCTION_NAME, st->fns[i].name) ||
		    !tachi_pb_put_varint(m, FUNCTION_FILENAME, st->fns[i].file))
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, PROFILE_FUNCTION, m)))
			return rc;
	}
	return TACH_OK;
}

int tachi_pw_write_strings(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	struct tachi_pb_buf *m = &st->msg;
	int rc;
	for (size_t i = 0; i < st->nstrs; i++) {
		const struct pstr *s = &st->strs[i];
		const char *p;
		size_t n;
		if (s->src != NO_ID) {
			p = tachi_str(st->src, s->src, &n);
		} else {
			p = (const char *)st->own.p + s->off;
			n = s->len;
		}
		m->len = 0;
		if (!tachi_pb_put_head(m, PROFILE_STRING_TABLE, n))
			return NOMEM(w);
		if ((rc = tachi_pw_emit(w, m->p, m->len)) || (rc = tachi_pw_emit(w, p, n)))
			return rc;
	}
	return TACH_OK;
}
