/* pprof writer: google/pprof's profile.proto (perftools.profiles.Profile), gzip-compressed
 * by default (gzip=no for the bare message; level=1..9, default 1; threads=N compresses on
 * N worker threads, the same bytes for any N), for `go tool pprof`,
 * pprof's web UI and continuous-profiling services.
 *
 * What is written:
 *   - sample_type [samples/count, wall/nanoseconds] (cpu/nanoseconds with cpu=yes, or when
 *     the TACH header says the profile was taken in CPU mode); period_type/period from the
 *     sample interval; default_sample_type the time type; time_nanos from the start time,
 *     duration_nanos up to the last sample; one comment naming the source format.
 *   - One Sample per distinct (stack, thread id, interpreter id, status byte), first-seen
 *     order, values [count, count * interval ns]; a weight-N input sample counts N times.
 *     Labels "thread id" and "interpreter id" (numeric) and "thread state" (a string such as
 *     "gil+cpu") so pprof -tagfocus can filter; labels=no merges threads and drops them.
 *   - One Location per distinct (file, function, line, column) with a single Line, one
 *     Function per distinct (name, file), start_line 0 (not known), system_name empty
 *     (pprof strips <...> from names equal to their system name, turning <module> into
 *     nothing). Without any mapping (Python), all Locations are in one Mapping marked as
 *     already symbolized so pprof neither complains about a missing binary nor tries to
 *     symbolize.
 *   - Native frames (formats/pprof_maps.c): the dict's mappings, the main one (meta.program's,
 *     else the first) first, has_* flags as the locations written in each show; a native
 *     frame's Location has its address and mapping; a run of frames inlined each into the
 *     next is one Location with their Lines innermost first, as pprof writes them; an
 *     unsymbolized one (named "libc.so.6+0x2a1c0" or by its address) has no Line, so pprof
 *     groups it by mapping and can symbolize it from the binary. Such a name on a frame
 *     without native data (read back from TACH) gets a mapping rebuilt for its file and an
 *     address at that file offset. Inline runs are kept when the dict has native data at
 *     the first sample (readers that intern their frames at open), else warned about.
 *
 * From an input whose meta names value types (pprof), those instead: every type, the
 * period, default type, duration and start time as they came, each Sample's values summed
 * from its samples' own, and its own labels (see "types mode" below).
 * Not supported: per-sample timestamps (pprof has none).
 * Samples with an empty stack are left out, as CPython's collectors and tach-decode do.
 * Memory grows with distinct stacks and label sets: stacks live in a trie keyed by
 * Location, and the output is encoded field by field into the (gzip) stream at close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/io.h"
#include "base/gzip.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/values.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/collapse.h"
#include "formats/pprof.h"
#include "formats/pprof_maps.h"

#define NO_ID UINT32_MAX

/* Wire types and field numbers of profile.proto. */
enum { WT_VARINT = 0, WT_LEN = 2 };
enum {
	P_SAMPLE_TYPE = 1, P_SAMPLE = 2, P_MAPPING = 3, P_LOCATION = 4, P_FUNCTION = 5,
	P_STRING_TABLE = 6, P_TIME_NANOS = 9, P_DURATION_NANOS = 10, P_PERIOD_TYPE = 11,
	P_PERIOD = 12, P_COMMENT = 13, P_DEFAULT_SAMPLE_TYPE = 14,
};

enum { CPU_AUTO, CPU_YES, CPU_NO };

/* Profiling modes of CPython's profiling.sampling; TACH stores mode + 1 in the low bits of
 * profiling_config. CPU and "all" (GIL + CPU) only sample threads on a CPU. */
enum { MODE_WALL = 0, MODE_CPU = 1, MODE_GIL = 2, MODE_ALL = 3, MODE_EXCEPTION = 4 };

/* A Line: function index and, as written, line and column (0 = unknown). */
struct pline {
	uint32_t fn;
	int64_t line, col;
};

/* A Location: its innermost line (fn NO_ID: none, an unsymbolized address), the lines it
 * was inlined into, outward (xl[x0, x0 + nx)), its address and its mapping: a dict mapping
 * id (dmap), else a rebuilt one's index + 1 (rmap; addr is then a file offset), else none. */
struct loc {
	struct pline l;
	uint64_t addr;
	uint32_t dmap, rmap;
	uint32_t x0, nx;
};

/* A location to find: its extra lines are in x, not yet in xl. */
struct lockey {
	const struct loc *loc;
	const struct pline *x;
};

struct fnkey {
	uint32_t name, file;
};

/* The labels a Sample carries: (thread id, interpreter id, status), all 0 with labels=no;
 * or, for a sample that came with its own labels (ext), those: labs[lab0, lab0 + nlab). */
struct lset {
	uint64_t tid;
	uint32_t iid;
	uint8_t status;
	bool ext;
	uint32_t lab0, nlab;
};
/* A label set looked up: the labels of an ext are not in labs yet. */
struct lkey {
	struct lset ls;
	const struct tach_label *labs;
};

/* A pprof string: a source dict string (src >= 0) or our own bytes. */
struct pstr {
	uint32_t src;        /* dict id, or NO_ID */
	uint32_t off, len;   /* in own */
};

struct buf {
	uint8_t *p;
	size_t len, cap;
};

struct pstate {
	/* options (zero = default) */
	bool raw, no_labels;
	int cpu;
	/* decided at begin */
	bool use_cpu;
	const struct tach_dict *src;
	/* strings */
	struct pstr *strs;
	size_t nstrs, strs_cap;
	struct buf own;
	uint32_t *smap;      /* dict string id -> pprof index + 1 (0: not yet) */
	size_t smap_cap;
	uint32_t state_str[256];
	uint64_t big_tid;      /* the last thread id past INT64_MAX given a string */
	uint32_t big_tid_idx;  /* its string id; 0: none yet */
	uint32_t s_samples, s_count, s_time, s_ns, s_tid, s_iid, s_state, s_comment, s_mapfile;
	/* frames */
	uint32_t *fmap;      /* dict frame id -> location index */
	size_t fmap_cap;
	size_t nmapped; /* source frames mapped so far: all of them lets a sample skip the check */
	struct loc *locs;
	size_t nlocs, locs_cap;
	struct tachi_idset loc_index;
	struct pline *xl;    /* locations' inlined-into lines */
	size_t nxl, xl_cap;
	/* native mode (the dict had native data at the first sample): the trie is keyed by
	 * location, a run of inlined frames and the frame they were inlined into being one */
	bool native, warned_inline;
	uint32_t *keys;      /* a sample's location indices, innermost first */
	struct pline *run;   /* a run's lines */
	size_t keys_cap, run_cap;
	struct tachi_pmaps maps;
	struct fnkey *fns;
	size_t nfns, fns_cap;
	struct tachi_idset fn_index;
	/* stacks (location ids, root first) and aggregates */
	struct tachi_stacktab trie;
	struct tachi_threads threads;
	struct lset *lsets;
	size_t nlsets, lsets_cap;
	struct tachi_idset lset_index;
	/* a distinct (stack, label set) is the trie's (label set, leaf) pair: its count */
	uint64_t *counts;
	size_t ncounts, counts_cap;
	/* time span */
	bool any;
	uint64_t last_us;
	uint64_t empty_skipped;
	/* Sample types, labels and values as the input's meta and extras give them (the
	 * *_types functions below): types mode when the meta names value types. */
	uint32_t ntypes;     /* 0: the two types of a time profile, from weights */
	uint32_t *type_str;  /* [2 * i]: type i's type, [2 * i + 1]: its unit */
	uint32_t s_ptype, s_punit, s_dflt;
	uint64_t weight_mul, weight_div; /* a weight without values: its value */
	struct tach_label *labs;  /* label sets' labels, keys and strings as pprof indices */
	size_t nlabs, labs_cap;
	int64_t *vals;       /* [entry * ntypes + i]: type i's sum over the entry's samples */
	size_t nvals, vals_cap; /* in entries */
	const struct tach_sample_ext *ext; /* the extras of the sample being put */
	uint8_t *vbuf;       /* a Sample's values, encoded */
	/* output */
	struct tachi_gz *gz;
	unsigned gz_threads;
	int level; /* gzip level; 0 for the default */
	struct buf msg, sub, stage;
};

static int pw_option(struct tach_writer *w, const char *key, const char *value)
{
	struct pstate *st = w->state;
	bool b;
	if (!strcmp(key, "gzip")) {
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad gzip value %s", value);
		st->raw = !b;
		return TACH_OK;
	}
	if (!strcmp(key, "level"))
		return tachi_gzip_level(w, value, &st->level);
	if (!strcmp(key, "threads"))
		return tachi_gzip_threads(w, value, &st->gz_threads);
	if (!strcmp(key, "labels")) {
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad labels value %s", value);
		st->no_labels = !b;
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
	return WFAIL(w, TACH_E_USAGE, "pprof writer has no option %s", key);
}

/* ---- string table ---- */

static bool tachi_pw_own_str(struct pstate *st, const char *s, size_t n, uint32_t *idx)
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

static bool tachi_pw_src_str(struct pstate *st, const struct tach_dict *d, uint32_t id,
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
static bool tachi_pw_state_str(struct pstate *st, uint8_t status, uint32_t *idx)
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

/* Several value types and the input's own labels (types mode; defined at the end). */
static bool tachi_pw_labels_eq_types(const struct pstate *st, const struct lset *a, const struct lkey *k);
static uint64_t tachi_pw_labels_hash_types(const struct lkey *k);
static bool tachi_pw_keep_labels_types(struct pstate *st, struct lkey *q);
static int tachi_pw_begin_types(struct tach_writer *w);
static int tachi_pw_add_values_types(struct tach_writer *w, uint32_t entry, const struct tach_sample *s);
static const uint8_t *tachi_pw_values_types(struct pstate *st, size_t entry, size_t *len);
static bool tachi_pw_labels_types(struct pstate *st, struct buf *m, const struct lset *ls);
static int write_profile_types(struct tach_writer *w);

/* ---- locations and functions ---- */

static uint64_t fn_hash(const struct fnkey *k)
{
	uint32_t b[2] = { k->name, k->file };
	return tachi_hash(b, sizeof(b));
}

static bool fn_eq(void *ctx, uint32_t id, const void *p)
{
	const struct pstate *st = ctx;
	const struct fnkey *k = p;
	return st->fns[id].name == k->name && st->fns[id].file == k->file;
}


static uint64_t line_hash(uint64_t h, const struct pline *l)
{
	int64_t b[4] = { (int64_t)h, l->fn, l->line, l->col };
	return tachi_hash(b, sizeof(b));
}

static uint64_t loc_hash(const struct loc *k, const struct pline *x)
{
	uint64_t h = line_hash(tachi_mix64(k->addr ^ tachi_mix64((uint64_t)k->dmap << 32 | k->rmap)),
			       &k->l);
	for (uint32_t i = 0; i < k->nx; i++)
		h = line_hash(h, &x[i]);
	return h;
}

static bool line_eq(const struct pline *a, const struct pline *b)
{
	return a->fn == b->fn && a->line == b->line && a->col == b->col;
}

static bool loc_eq(void *ctx, uint32_t id, const void *p)
{
	const struct pstate *st = ctx;
	const struct lockey *k = p;
	const struct loc *a = &st->locs[id], *b = k->loc;
	if (!line_eq(&a->l, &b->l) || a->addr != b->addr || a->dmap != b->dmap ||
	    a->rmap != b->rmap || a->nx != b->nx)
		return false;
	for (uint32_t i = 0; i < a->nx; i++)
		if (!line_eq(&st->xl[a->x0 + i], &k->x[i]))
			return false;
	return true;
}

#define NOMEM(w) WFAIL((w), TACH_E_NOMEM, "out of memory")

/* The index of location k (extra lines in x), made if new. */
static int loc_get(struct tach_writer *w, struct loc *k, const struct pline *x, uint32_t *li)
{
	struct pstate *st = w->state;
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
		      struct pline *out)
{
	struct pstate *st = w->state;
	const struct tach_frame *f = &d->frames[fid];
	struct fnkey fk;
	if (!tachi_pw_src_str(st, d, f->func, &fk.name) ||
	    !tachi_pw_src_str(st, d, f->file, &fk.file))
		return NOMEM(w);
	uint64_t h = fn_hash(&fk);
	uint32_t fn;
	if (!tachi_idset_find(&st->fn_index, h, &fk, fn_eq, st, &fn)) {
		if (st->nfns >= UINT32_MAX - 2 || !TACHI_RESERVE(st->fns, st->fns_cap, st->nfns + 1))
			return NOMEM(w);
		fn = (uint32_t)st->nfns;
		st->fns[fn] = fk;
		if (!tachi_idset_insert(&st->fn_index, h, fn))
			return NOMEM(w);
		st->nfns++;
	}
	/* pprof's 0 means unknown: lines below 1 say nothing; TACH columns count from 0. */
	*out = (struct pline){ fn, f->line > 0 ? f->line : 0, f->col >= 0 ? (int64_t)f->col + 1 : 0 };
	return TACH_OK;
}

/* The location of one frame: its native address and mapping when it has them; no line for
 * an unsymbolized native frame; a rebuilt mapping for one named by module and offset. */
static int frame_loc(struct tach_writer *w, const struct tach_dict *d, uint32_t fid,
		     struct loc *k)
{
	struct pstate *st = w->state;
	const struct tach_frame *f = &d->frames[fid];
	const struct tach_frame_native *n = tach_dict_frame_native(d, fid);
	uint64_t off;
	*k = (struct loc){ .l = { NO_ID, 0, 0 } };
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
		int64_t i = tachi_pmaps_rebuilt(&st->maps, f->file, off);
		if (i < 0)
			return NOMEM(w);
		k->rmap = (uint32_t)i + 1;
		k->addr = off;
		return TACH_OK;
	}
	return frame_line(w, d, fid, &k->l);
}

static int tachi_pw_map_frame(struct tach_writer *w, const struct tach_dict *d, uint32_t fid)
{
	struct pstate *st = w->state;
	int rc = frame_ok(w, d, fid);
	if (rc)
		return rc;
	if (fid >= st->fmap_cap && !tachi_idmap_reserve(&st->fmap, &st->fmap_cap, (size_t)fid + 1))
		return NOMEM(w);
	struct loc k;
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

/* The location of fr[0, n), frames inlined each into the next one out: one machine
 * address (the outermost frame's) with their lines, innermost first, as pprof writes. */
static int run_loc(struct tach_writer *w, const struct tach_dict *d, const uint32_t *fr,
		   uint32_t n, uint32_t *li)
{
	struct pstate *st = w->state;
	int rc;
	if (n == 1) {
		if ((fr[0] >= st->fmap_cap || st->fmap[fr[0]] == NO_ID) && (rc = tachi_pw_map_frame(w, d, fr[0])))
			return rc;
		*li = st->fmap[fr[0]];
		return TACH_OK;
	}
	if (!TACHI_RESERVE(st->run, st->run_cap, n))
		return NOMEM(w);
	for (uint32_t i = 0; i < n; i++)
		if ((rc = frame_ok(w, d, fr[i])) || (rc = frame_line(w, d, fr[i], &st->run[i])))
			return rc;
	const struct tach_frame_native *o = tach_dict_frame_native(d, fr[n - 1]);
	struct loc k = { .l = st->run[0], .nx = n - 1 };
	if (o) {
		k.addr = o->address;
		k.dmap = o->mapping;
	}
	return loc_get(w, &k, st->run + 1, li);
}

/* s's stack as location indices into *out (native mode). The outer locations made only of
 * frames the reader says are unchanged are unchanged too: a frame inlined across that
 * border joins the location outside it, which is then not counted. */
static int tachi_pw_native_keys(struct tach_writer *w, const struct tach_dict *d,
				const struct tach_sample *s, struct tach_sample *out)
{
	struct pstate *st = w->state;
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

/* ---- aggregation ---- */

static bool lset_eq(void *ctx, uint32_t id, const void *p)
{
	const struct pstate *st = ctx;
	const struct lset *a = &st->lsets[id];
	const struct lkey *k = p;
	const struct lset *b = &k->ls;
	return a->tid == b->tid && a->iid == b->iid && a->status == b->status &&
	       a->ext == b->ext && tachi_pw_labels_eq_types(st, a, k);
}

static struct lkey lset_of(const struct pstate *st, const struct tach_sample *s)
{
	if (st->no_labels)
		return (struct lkey){ { 0, 0, 0, false, 0, 0 }, NULL };
	struct lkey k = { { s->thread_id, s->interp_id, s->status, false, 0, 0 }, NULL };
	if (st->ext && st->ntypes) {
		k.ls.ext = true;
		k.ls.nlab = st->ext->label_count;
		k.labs = st->ext->labels;
	}
	return k;
}

static uint64_t lset_hash(const struct lkey *k)
{
	const struct lset *q = &k->ls;
	uint64_t h = tachi_mix64(q->tid ^ tachi_mix64((uint64_t)q->iid << 8 | q->status));
	return q->ext ? tachi_mix64(h ^ tachi_pw_labels_hash_types(k)) : h;
}

/* The label set's number, made if new; c->slot remembers the thread's last one. */
static bool lset_get(struct pstate *st, struct tachi_pathcache *c, const struct tach_sample *s,
		     uint32_t *id)
{
	struct lkey q = lset_of(st, s);
	if (c->slot < st->nlsets && lset_eq(st, c->slot, &q)) {
		*id = c->slot;
		return true;
	}
	uint64_t h = lset_hash(&q);
	if (!tachi_idset_find(&st->lset_index, h, &q, lset_eq, st, id)) {
		uint32_t dummy;
		if ((!st->no_labels && !tachi_pw_state_str(st, s->status, &dummy)) ||
		    st->nlsets >= UINT32_MAX - 2 ||
		    !TACHI_RESERVE(st->lsets, st->lsets_cap, st->nlsets + 1) ||
		    !tachi_pw_keep_labels_types(st, &q))
			return false;
		*id = (uint32_t)st->nlsets;
		st->lsets[*id] = q.ls;
		if (!tachi_idset_insert(&st->lset_index, h, *id))
			return false;
		st->nlsets++;
	}
	c->slot = *id;
	return true;
}

static int pw_begin(struct tach_writer *w)
{
	struct pstate *st = w->state;
	int mode = -1;
	uint32_t cfg = w->meta.profiling_config & 0xff;
	if (cfg >= 1 && cfg <= 5)
		mode = (int)cfg - 1;
	st->use_cpu = st->cpu == CPU_YES ||
		      (st->cpu == CPU_AUTO && (mode == MODE_CPU || mode == MODE_ALL));
	uint32_t empty;
	if (!tachi_pw_own_str(st, "", 0, &empty))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	int rc;
	if (w->meta.value_type_count) {
		if ((rc = tachi_pw_begin_types(w)))
			return rc;
	} else if (!tachi_pw_own_str(st, "samples", 7, &st->s_samples) ||
		   !tachi_pw_own_str(st, "count", 5, &st->s_count) ||
		   !tachi_pw_own_str(st, st->use_cpu ? "cpu" : "wall", st->use_cpu ? 3 : 4,
				     &st->s_time) ||
		   !tachi_pw_own_str(st, "nanoseconds", 11, &st->s_ns)) {
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	if (!st->no_labels && (!tachi_pw_own_str(st, "thread id", 9, &st->s_tid) ||
			   !tachi_pw_own_str(st, "interpreter id", 14, &st->s_iid) ||
			   !tachi_pw_own_str(st, "thread state", 12, &st->s_state)))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	char t[128];
	const char *from = w->meta.source_format ? w->meta.source_format : "unknown";
	int n = snprintf(t, sizeof(t), "converted by tachfmt from %.60s", from);
	if (!tachi_pw_own_str(st, t, (size_t)n, &st->s_comment))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	/* pprof prints the main mapping's file as "File:": the profiled program where the
	 * input names it, else for Python the interpreter. */
	const char *file = w->meta.program;
	if (!file || !*file) {
		if (w->meta.py_major)
			n = snprintf(t, sizeof(t), "python%u.%u", w->meta.py_major, w->meta.py_minor);
		else
			n = snprintf(t, sizeof(t), "[%.60s]", from);
		file = t;
	}
	if (!tachi_pw_own_str(st, file, strlen(file), &st->s_mapfile))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (st->ntypes)
		return TACH_OK;
	if (!w->meta.interval_us)
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "the sample interval is unknown: time values are 0, counts are kept");
	return TACH_OK;
}

static int pw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct pstate *st = w->state;
	if (TACHI_UNLIKELY(st->src != d)) {
		if (st->src)
			return WFAIL(w, TACH_E_USAGE, "samples from more than one dict");
		st->src = d;
		st->native = d->natives != NULL;
	}
	/* The end of the time the sample stands for, for duration_nanos. */
	uint64_t last = s->timestamp_us, span;
	if (!__builtin_mul_overflow(s->weight - 1, w->meta.interval_us, &span) &&
	    !__builtin_add_overflow(last, span, &last)) {
		if (!st->any || last > st->last_us)
			st->last_us = last;
		st->any = true;
	}
	if (TACHI_UNLIKELY(!s->depth)) {
		st->empty_skipped += s->weight;
		return TACH_OK;
	}
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&st->threads, s->thread_id, s->interp_id,
						      &created);
	if (!c)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (created)
		c->slot = NO_ID;
	const uint32_t *map = NULL; /* set after mapping: map_frame may move fmap */
	struct tach_sample keyed;
	if (TACHI_UNLIKELY(st->native)) {
		/* keyed by location: the lookahead's hash of the frames does not apply */
		int rc = tachi_pw_native_keys(w, d, s, &keyed);
		if (rc)
			return rc;
		s = &keyed;
		st->trie.hint = 0;
	} else {
		for (uint32_t i = 0, n = st->nmapped < d->frame_count ? tachi_new_inner(c, s) : 0;
		     i < n; i++) {
			uint32_t f = s->frames[i];
			if (TACHI_UNLIKELY(f >= st->fmap_cap || st->fmap[f] == NO_ID)) {
				int rc = tachi_pw_map_frame(w, d, f);
				if (rc)
					return rc;
			}
		}
		st->trie.hint = w->ahead_hash;
		map = st->fmap;
	}
	/* the same stack and labels as the thread's previous sample cost no lookup here */
	uint32_t lset;
	if (!lset_get(st, c, s, &lset) ||
	    tachi_stack_intern_ctx(&st->trie, c, s, map, lset) == TACHI_NOMEM_NODE ||
	    (c->entry >= st->ncounts &&
	     !tachi_counts_reserve(&st->counts, &st->counts_cap, &st->ncounts, c->entry)))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	uint64_t *n = &st->counts[c->entry];
	if (__builtin_add_overflow(*n, s->weight, n) || *n > INT64_MAX)
		return WFAIL(w, TACH_E_LIMIT, "a sample count exceeds pprof's 64-bit values");
	return st->ntypes ? tachi_pw_add_values_types(w, c->entry, s) : TACH_OK;
}

static int pw_put_ext(struct tach_writer *w, const struct tach_dict *d,
		      const struct tach_sample *s, const struct tach_sample_ext *ext)
{
	struct pstate *st = w->state;
	for (uint32_t i = 0; i < ext->label_count; i++) {
		const struct tach_label *l = &ext->labels[i];
		if (l->key >= d->str_count || (l->str != TACH_NO_STRING && l->str >= d->str_count) ||
		    (l->unit != TACH_NO_STRING && l->unit >= d->str_count))
			return WFAIL(w, TACH_E_USAGE, "label string id out of range");
	}
	st->ext = ext;
	int rc = pw_put(w, d, s);
	st->ext = NULL;
	return rc;
}

/* A queued sample's lines; its pair's only when its label set exists already (looking
 * ahead must not make one). */
static void pw_fetch(struct tach_writer *w, struct tachi_ahead_item *it, unsigned stage)
{
	struct pstate *st = w->state;
	if (st->native)
		return;
	struct lkey q = lset_of(st, &it->s);
	uint32_t lset = 0;
	bool pairs = stage > 1 &&
		     tachi_idset_find(&st->lset_index, lset_hash(&q), &q, lset_eq, st, &lset);
	uint32_t e1 = tachi_stacktab_ahead(&st->trie, it, pairs, lset, stage);
	if (e1 && e1 - 1 < st->ncounts)
		__builtin_prefetch(&st->counts[e1 - 1]);
}

/* ---- protobuf encoding ---- */

static bool buf_reserve(struct buf *b, size_t n)
{
	size_t need;
	return !tachi_add_overflows(b->len, n, &need) && TACHI_RESERVE(b->p, b->cap, need);
}

static bool put_raw_varint(struct buf *b, uint64_t v)
{
	if (!buf_reserve(b, 10))
		return false;
	b->len += tachi_put_uvarint(b->p + b->len, v);
	return true;
}

/* proto3 leaves zero scalars out. */
static bool put_varint(struct buf *b, unsigned field, uint64_t v)
{
	if (!v)
		return true;
	return put_raw_varint(b, (uint64_t)field << 3 | WT_VARINT) && put_raw_varint(b, v);
}

static bool tachi_pw_put_bytes(struct buf *b, unsigned field, const void *p, size_t n)
{
	if (!put_raw_varint(b, (uint64_t)field << 3 | WT_LEN) || !put_raw_varint(b, n) ||
	    !buf_reserve(b, n))
		return false;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return true;
}

#define STAGE_SIZE (64u << 10)

/* Compresses the staged bytes into the output; finish ends the gzip stream. */
static int tachi_pw_deflate_stage(struct tach_writer *w, bool finish)
{
	struct pstate *st = w->state;
	int e = tachi_gz_write(st->gz, st->stage.p, st->stage.len);
	if (!e && finish)
		e = tachi_gz_finish(st->gz);
	if (e)
		return tachi_gz_failed(w, e);
	st->stage.len = 0;
	return TACH_OK;
}

/* Sends bytes to the output, through deflate unless writing a raw proto. */
static int tachi_pw_emit(struct tach_writer *w, const void *p, size_t n)
{
	struct pstate *st = w->state;
	if (st->raw) {
		if (n && tachi_out_write(&w->out, p, n))
			return tachi_writer_io(w);
		return TACH_OK;
	}
	const uint8_t *q = p;
	while (n) {
		if (!st->stage.cap && !TACHI_RESERVE(st->stage.p, st->stage.cap, STAGE_SIZE))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		size_t k = st->stage.cap - st->stage.len;
		if (k > n)
			k = n;
		memcpy(st->stage.p + st->stage.len, q, k);
		st->stage.len += k;
		q += k;
		n -= k;
		if (st->stage.len == st->stage.cap) {
			int rc = tachi_pw_deflate_stage(w, false);
			if (rc)
				return rc;
		}
	}
	return TACH_OK;
}

/* Room for n bytes straight in the output's buffer (the stage before deflate when
 * compressing), so a small message is built in place rather than copied piece by piece;
 * NULL with *rc 0 when n is more than an empty buffer holds, NULL with *rc set on failure.
 * The caller adds what it wrote to the buffer's length. */
static uint8_t *tachi_pw_out_room(struct tach_writer *w, size_t n, size_t **len, int *rc)
{
	struct pstate *st = w->state;
	*rc = TACH_OK;
	if (st->raw) {
		struct tachi_out *o = &w->out;
		if (o->err) {
			*rc = tachi_writer_io(w);
			return NULL;
		}
		if (n > o->cap - o->len && tachi_out_flush(o)) {
			*rc = tachi_writer_io(w);
			return NULL;
		}
		*len = &o->len;
		return n <= o->cap - o->len ? o->buf + o->len : NULL;
	}
	if (!st->stage.cap && !TACHI_RESERVE(st->stage.p, st->stage.cap, STAGE_SIZE)) {
		*rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
		return NULL;
	}
	if (n > st->stage.cap - st->stage.len && (*rc = tachi_pw_deflate_stage(w, false)))
		return NULL;
	*len = &st->stage.len;
	return n <= st->stage.cap - st->stage.len ? st->stage.p + st->stage.len : NULL;
}

/* Emits a top-level field holding the message built in b. */
static int tachi_pw_emit_msg(struct tach_writer *w, unsigned field, struct buf *b)
{
	uint8_t hdr[20];
	size_t n = tachi_put_uvarint(hdr, (uint64_t)field << 3 | WT_LEN);
	n += tachi_put_uvarint(hdr + n, b->len);
	int rc = tachi_pw_emit(w, hdr, n);
	if (!rc)
		rc = tachi_pw_emit(w, b->p, b->len);
	b->len = 0;
	return rc;
}

static int tachi_pw_emit_varint(struct tach_writer *w, unsigned field, uint64_t v)
{
	struct pstate *st = w->state;
	st->msg.len = 0;
	if (!put_varint(&st->msg, field, v))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	int rc = tachi_pw_emit(w, st->msg.p, st->msg.len);
	st->msg.len = 0;
	return rc;
}

static bool tachi_pw_value_type(struct buf *b, uint32_t type, uint32_t unit)
{
	return put_varint(b, 1, type) && put_varint(b, 2, unit);
}

static bool label(struct pstate *st, struct buf *b, uint32_t key, uint32_t str, uint64_t num)
{
	st->sub.len = 0;
	return put_varint(&st->sub, 1, key) && put_varint(&st->sub, 2, str) &&
	       put_varint(&st->sub, 3, num) && tachi_pw_put_bytes(b, 3, st->sub.p, st->sub.len);
}

/* pprof's numbers are signed: a thread id past 2^63-1 would show negative, so it goes
 * as a string label of the same key, in decimal. */
static bool tid_label(struct pstate *st, struct buf *b, uint64_t tid)
{
	if (tid <= INT64_MAX)
		return label(st, b, st->s_tid, 0, tid);
	/* Samples of one thread mostly come together: the last id's string is reused. */
	if (!st->big_tid_idx || st->big_tid != tid) {
		char t[24];
		uint32_t idx;
		if (!tachi_pw_own_str(st, t, tachi_fmt_u64(t, tid), &idx))
			return false;
		st->big_tid = tid;
		st->big_tid_idx = idx;
	}
	return label(st, b, st->s_tid, st->big_tid_idx, 0);
}

/* The encoded labels of a (thread, interpreter, state), made once: they are the same on
 * every Sample of that thread in that state. A direct-mapped cache; a thread id past
 * INT64_MAX is not cached, since its label names a string made as it is met. */
#define LCACHE 64
struct lcache {
	uint64_t tid;
	uint32_t iid;
	uint8_t status, len; /* len 0: empty slot */
	uint8_t bytes[3 * 32]; /* three labels of at most 27 bytes each */
};

static bool labels(struct pstate *st, struct lcache *lc, struct buf *m, uint64_t tid,
		   uint32_t iid, uint8_t status)
{
	struct lcache *e = NULL;
	if (tid <= INT64_MAX) {
		e = &lc[(tachi_mix64(tid ^ (uint64_t)iid << 32 ^ (uint64_t)status << 56) >> 58) %
			LCACHE];
		if (e->len && e->tid == tid && e->iid == iid && e->status == status) {
			if (!buf_reserve(m, e->len))
				return false;
			memcpy(m->p + m->len, e->bytes, e->len);
			m->len += e->len;
			return true;
		}
	}
	size_t at = m->len;
	/* Ids above INT64_MAX show as negative: pprof's values are int64. A zero num label is
	 * dropped by pprof's decoder, so id 0 is simply absent there. */
	if (!tid_label(st, m, tid) || !label(st, m, st->s_iid, 0, iid) ||
	    !label(st, m, st->s_state, st->state_str[status] - 1, 0))
		return false;
	if (e && m->len - at <= sizeof(e->bytes)) {
		*e = (struct lcache){ tid, iid, status, (uint8_t)(m->len - at), { 0 } };
		memcpy(e->bytes, m->p + at, e->len);
	}
	return true;
}

/* A recent stack's location ids, packed leaf first and right-aligned in buf, with the node
 * and the length of the packed tail from each depth up: a stack that shares a node with
 * it shares every id from there to the root, so only the frames below that node are
 * walked and encoded. Stacks of one thread follow each other closely, so each thread id
 * keeps to one of a few lanes. */
#define LANES 16
struct lane {
	uint32_t *node, *len; /* [depth]: the node there, bytes of ids from there to the root */
	uint32_t depth;
	uint8_t *buf;
};

static const uint8_t *lane_pack(struct lane *ln, const struct tachi_node *nodes, uint32_t leaf,
				uint32_t d, size_t end, uint32_t *n)
{
	uint32_t j = 0, node = leaf;
	for (uint32_t k = d; k > 0; k--, node = nodes[node].parent) {
		if (k <= ln->depth && ln->node[k] == node) {
			j = k;
			break;
		}
		ln->node[k] = node;
	}
	size_t pos = end - ln->len[j];
	for (uint32_t k = j + 1; k <= d; k++) {
		uint32_t v = nodes[ln->node[k]].key + 1;
		if (TACHI_LIKELY(v < 0x80)) {
			ln->buf[--pos] = (uint8_t)v;
		} else {
			pos -= tachi_uvarint_len(v);
			tachi_put_uvarint(ln->buf + pos, v);
		}
		ln->len[k] = (uint32_t)(end - pos);
	}
	ln->depth = d;
	*n = ln->len[d];
	return ln->buf + pos;
}

/* A Sample: its location ids (packed, as lane_pack made them), its values and the labels
 * encoded in m, built in the output's buffer when it fits there. */
static int emit_sample(struct tach_writer *w, const uint8_t *ids, size_t n, const uint8_t *vals,
		       size_t vl, const struct buf *m)
{
	size_t inner = 1 + tachi_uvarint_len(n) + n + 1 + tachi_uvarint_len(vl) + vl + m->len;
	size_t total = 1 + tachi_uvarint_len(inner) + inner, *len;
	int rc;
	uint8_t *p = tachi_pw_out_room(w, total, &len, &rc), *q = p;
	if (rc)
		return rc;
	if (!p) { /* a stack too deep for the buffer goes out piece by piece */
		uint8_t h[40];
		size_t hl = tachi_put_uvarint(h, (uint64_t)P_SAMPLE << 3 | WT_LEN);
		hl += tachi_put_uvarint(h + hl, inner);
		h[hl++] = 1 << 3 | WT_LEN;
		hl += tachi_put_uvarint(h + hl, n);
		uint8_t t[24] = { 2 << 3 | WT_LEN };
		size_t tl = 1 + tachi_put_uvarint(t + 1, vl);
		memcpy(t + tl, vals, vl);
		if ((rc = tachi_pw_emit(w, h, hl)) || (rc = tachi_pw_emit(w, ids, n)) || (rc = tachi_pw_emit(w, t, tl + vl)))
			return rc;
		return tachi_pw_emit(w, m->p, m->len);
	}
	*q++ = P_SAMPLE << 3 | WT_LEN;
	q += tachi_put_uvarint(q, inner);
	*q++ = 1 << 3 | WT_LEN;
	q += tachi_put_uvarint(q, n);
	memcpy(q, ids, n);
	q += n;
	*q++ = 2 << 3 | WT_LEN;
	q += tachi_put_uvarint(q, vl);
	memcpy(q, vals, vl);
	q += vl;
	if (m->len)
		memcpy(q, m->p, m->len);
	*len += total;
	return TACH_OK;
}

/* One Sample message per distinct (stack, labels). */
static int write_samples(struct tach_writer *w, uint64_t period_ns)
{
	struct pstate *st = w->state;
	struct buf *m = &st->msg;
	const struct tachi_node *nodes = st->trie.nodes;
	int rc = TACH_OK;
	uint32_t maxd = 0;
	/* pair i was counted in counts[i]; every pair was counted unless put failed */
	const struct tachi_pair *pairs = st->trie.pairs;
	size_t npairs = st->ncounts;
	for (size_t i = 0; i < npairs; i++)
		if (pairs[i].depth > maxd)
			maxd = pairs[i].depth;
	/* ids are below 2^32: five bytes each at most */
	size_t end = (size_t)maxd * 5;
	struct lane lanes[LANES] = { 0 };
	for (int k = 0; k < LANES; k++) {
		lanes[k].node = malloc(((size_t)maxd + 1) * sizeof(uint32_t));
		lanes[k].len = calloc((size_t)maxd + 1, sizeof(uint32_t));
		lanes[k].buf = malloc(end ? end : 1);
		if (!lanes[k].node || !lanes[k].len || !lanes[k].buf)
			rc = NOMEM(w);
	}
	struct lcache *lc = st->no_labels ? NULL : calloc(LCACHE, sizeof(*lc));
	if (!st->no_labels && !lc)
		rc = NOMEM(w);
	for (size_t i = 0; i < npairs && !rc; i++) {
		const struct tachi_pair *a = &pairs[i];
		/* the climb from a leaf begins with a cache miss on a large trie: fetch it
		 * some samples ahead */
		if (i + TACHI_FETCH_AHEAD < npairs)
			__builtin_prefetch(&nodes[pairs[i + TACHI_FETCH_AHEAD].leaf]);
		uint64_t count = st->counts[i];
		m->len = 0;
		uint32_t n;
		const struct lset *ls = &st->lsets[a->ctx];
		struct lane *ln = &lanes[(tachi_mix64(ls->tid ^ (uint64_t)ls->iid << 32) >> 60) %
					 LANES];
		const uint8_t *ids = lane_pack(ln, nodes, a->leaf, a->depth, end, &n);
		uint64_t ns;
		if (!st->ntypes &&
		    (__builtin_mul_overflow(count, period_ns, &ns) || ns > INT64_MAX)) {
			rc = WFAIL(w, TACH_E_LIMIT, "a sample's time exceeds pprof's 64-bit values");
			break;
		}
		uint8_t vals[20];
		const uint8_t *vp = vals;
		size_t vl;
		if (st->ntypes) {
			vp = tachi_pw_values_types(st, i, &vl);
		} else {
			vl = tachi_put_uvarint(vals, count);
			vl += tachi_put_uvarint(vals + vl, ns);
		}
		bool ok = st->no_labels ||
			  (ls->ext ? tachi_pw_labels_types(st, m, ls) :
				     labels(st, lc, m, ls->tid, ls->iid, ls->status));
		if (!ok || !vp) {
			rc = NOMEM(w);
			break;
		}
		if ((rc = emit_sample(w, ids, n, vp, vl, m)))
			break;
		m->len = 0;
	}
	free(lc);
	for (int k = 0; k < LANES; k++) {
		free(lanes[k].node);
		free(lanes[k].len);
		free(lanes[k].buf);
	}
	return rc;
}

/* The output mapping id of location l, 0 for none. */
static uint32_t loc_map_id(const struct pstate *st, const struct loc *l)
{
	return l->dmap ? st->maps.dict_out[l->dmap] : l->rmap ? st->maps.rb_out[l->rmap - 1] : 0;
}

/* What the written locations of each mapping have: has_functions, has_filenames and
 * has_line_numbers when every one of them has that for every line, has_inline_frames when
 * besides the input said so or one of them has inlined lines. A mapping no location uses
 * keeps the input's flags. */
static bool map_flags(struct pstate *st, uint32_t **flags)
{
	size_t n = st->maps.nout;
	uint32_t *f = *flags = calloc(n ? 2 * n : 1, sizeof(uint32_t)), *used = f + n;
	if (!f)
		return false;
	for (size_t i = 0; i < n; i++)
		f[i] = TACH_MAPPING_HAS_FUNCTIONS | TACH_MAPPING_HAS_FILENAMES |
		       TACH_MAPPING_HAS_LINE_NUMBERS;
	for (size_t i = 0; i < st->nlocs; i++) {
		const struct loc *l = &st->locs[i];
		uint32_t o = loc_map_id(st, l);
		if (!o--)
			continue;
		used[o] |= l->nx ? TACH_MAPPING_HAS_INLINE_FRAMES : 1;
		for (uint32_t j = 0; j <= l->nx; j++) {
			const struct pline *ln = j ? &st->xl[l->x0 + j - 1] : &l->l;
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
	struct pstate *st = w->state;
	struct buf *m = &st->msg;
	uint32_t *flags = NULL;
	int rc = TACH_OK;
	*fake = 0;
	if (st->src && !tachi_pmaps_layout(&st->maps, st->src, w->meta.program))
		return NOMEM(w);
	if (!st->maps.nout) {
		*fake = 1;
		m->len = 0;
		if (!put_varint(m, 1, 1) || !put_varint(m, 5, st->s_mapfile) ||
		    !put_varint(m, 7, 1) || !put_varint(m, 8, 1) || !put_varint(m, 9, 1))
			return NOMEM(w);
		return tachi_pw_emit_msg(w, P_MAPPING, m);
	}
	if (!map_flags(st, &flags))
		return NOMEM(w);
	for (size_t i = 0; !rc && i < st->maps.nout; i++) {
		const struct tachi_pmap_out *o = &st->maps.out[i];
		uint32_t file, bid = 0;
		m->len = 0;
		bool ok = tachi_pw_src_str(st, st->src, o->file, &file) &&
			  (o->build_id == TACH_NO_STRING || tachi_pw_src_str(st, st->src, o->build_id, &bid)) &&
			  put_varint(m, 1, i + 1) && put_varint(m, 2, o->start) &&
			  put_varint(m, 3, o->limit) && put_varint(m, 4, o->offset) &&
			  put_varint(m, 5, file) && put_varint(m, 6, bid);
		for (unsigned b = 0; ok && b < 4; b++)
			ok = put_varint(m, 7 + b, flags[i] >> b & 1);
		rc = ok ? tachi_pw_emit_msg(w, P_MAPPING, m) : NOMEM(w);
	}
	free(flags);
	return rc;
}

static bool put_line(struct pstate *st, struct buf *m, const struct pline *l)
{
	/* Negative numbers cannot occur here: lines and columns are clamped at 0. */
	st->sub.len = 0;
	return put_varint(&st->sub, 1, (uint64_t)l->fn + 1) &&
	       put_varint(&st->sub, 2, (uint64_t)l->line) &&
	       put_varint(&st->sub, 3, (uint64_t)l->col) &&
	       tachi_pw_put_bytes(m, 4, st->sub.p, st->sub.len);
}

/* The mappings, then the locations and functions. */
static int tachi_pw_write_locations(struct tach_writer *w)
{
	struct pstate *st = w->state;
	struct buf *m = &st->msg;
	uint32_t fake;
	int rc = write_mappings(w, &fake);
	if (rc)
		return rc;
	for (size_t i = 0; i < st->nlocs; i++) {
		const struct loc *l = &st->locs[i];
		uint32_t map = loc_map_id(st, l);
		uint64_t addr = l->rmap ? tachi_pmaps_rb_address(&st->maps, l->rmap - 1, l->addr)
					: l->addr;
		m->len = 0;
		bool ok = put_varint(m, 1, i + 1) && put_varint(m, 2, map ? map : fake) &&
			  put_varint(m, 3, addr) && (l->l.fn == NO_ID || put_line(st, m, &l->l));
		for (uint32_t j = 0; ok && j < l->nx; j++)
			ok = put_line(st, m, &st->xl[l->x0 + j]);
		if (!ok)
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, P_LOCATION, m)))
			return rc;
	}
	for (size_t i = 0; i < st->nfns; i++) {
		m->len = 0;
		if (!put_varint(m, 1, i + 1) || !put_varint(m, 2, st->fns[i].name) ||
		    !put_varint(m, 4, st->fns[i].file))
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, P_FUNCTION, m)))
			return rc;
	}
	return TACH_OK;
}

static int tachi_pw_write_strings(struct tach_writer *w)
{
	struct pstate *st = w->state;
	struct buf *m = &st->msg;
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
		if (!put_raw_varint(m, (uint64_t)P_STRING_TABLE << 3 | WT_LEN) || !put_raw_varint(m, n))
			return NOMEM(w);
		if ((rc = tachi_pw_emit(w, m->p, m->len)) || (rc = tachi_pw_emit(w, p, n)))
			return rc;
	}
	return TACH_OK;
}

/* Time, duration, period and the default sample type. */
static int write_trailer(struct tach_writer *w, uint64_t period_ns)
{
	struct pstate *st = w->state;
	struct buf *m = &st->msg;
	int rc;
	uint64_t start = w->meta.start_time_us, t;
	if (!__builtin_mul_overflow(start, 1000, &t) && t <= INT64_MAX &&
	    (rc = tachi_pw_emit_varint(w, P_TIME_NANOS, t)))
		return rc;
	if (st->any && st->last_us > start && !__builtin_mul_overflow(st->last_us - start, 1000, &t) &&
	    t <= INT64_MAX && (rc = tachi_pw_emit_varint(w, P_DURATION_NANOS, t)))
		return rc;
	m->len = 0;
	if (!tachi_pw_value_type(m, st->s_time, st->s_ns))
		return NOMEM(w);
	if ((rc = tachi_pw_emit_msg(w, P_PERIOD_TYPE, m)) ||
	    (rc = tachi_pw_emit_varint(w, P_PERIOD, period_ns)) ||
	    (rc = tachi_pw_emit_varint(w, P_COMMENT, st->s_comment)))
		return rc;
	/* Without an interval every time value is 0: show counts by default then. */
	return tachi_pw_emit_varint(w, P_DEFAULT_SAMPLE_TYPE,
				    period_ns ? st->s_time : st->s_samples);
}

static int write_profile(struct tach_writer *w)
{
	struct pstate *st = w->state;
	struct buf *m = &st->msg;
	int rc;
	if (st->ntypes)
		return write_profile_types(w);
	uint64_t period_ns = 0;
	if (__builtin_mul_overflow(w->meta.interval_us, 1000, &period_ns) || period_ns > INT64_MAX)
		return WFAIL(w, TACH_E_LIMIT, "the sample interval does not fit pprof's nanoseconds");
	for (int i = 0; i < 2; i++) {
		m->len = 0;
		if (!tachi_pw_value_type(m, i ? st->s_time : st->s_samples,
					 i ? st->s_ns : st->s_count))
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, P_SAMPLE_TYPE, m)))
			return rc;
	}
	if ((rc = write_samples(w, period_ns)) || (rc = tachi_pw_write_locations(w)) ||
	    (rc = tachi_pw_write_strings(w)))
		return rc;
	return write_trailer(w, period_ns);
}

static int pw_close(struct tach_writer *w)
{
	struct pstate *st = w->state;
	if (st->empty_skipped)
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "left out %llu samples with an empty stack (pprof cannot show them)",
			   (unsigned long long)st->empty_skipped);
	if (!st->raw) {
		/* A gzip header with mtime 0, so output depends only on input (gzip.c).
		 * Level 1 by default, as the Go runtime writes its pprof files: on the bench's
		 * deep profile zlib's level 6 compresses ten times slower than igzip's level 1
		 * for a file 9% smaller. */
		int e = tachi_gz_open(&st->gz, &w->out, st->level ? st->level : 1, st->gz_threads);
		if (e)
			return tachi_gz_failed(w, e);
	}
	int rc = write_profile(w);
	if (!rc && !st->raw)
		rc = tachi_pw_deflate_stage(w, true);
	return rc;
}

static void pw_free(struct tach_writer *w)
{
	struct pstate *st = w->state;
	tachi_gz_free(st->gz);
	free(st->strs);
	free(st->own.p);
	free(st->smap);
	free(st->fmap);
	free(st->locs);
	tachi_idset_free(&st->loc_index);
	free(st->xl);
	free(st->keys);
	free(st->run);
	tachi_pmaps_free(&st->maps);
	free(st->fns);
	tachi_idset_free(&st->fn_index);
	tachi_stacktab_free(&st->trie);
	free(st->lsets);
	tachi_idset_free(&st->lset_index);
	tachi_threads_free(&st->threads);
	free(st->counts);
	free(st->type_str);
	free(st->vbuf);
	free(st->labs);
	free(st->vals);
	free(st->msg.p);
	free(st->sub.p);
	free(st->stage.p);
}

/* ---- several value types and the input's own labels (types mode) ----
 * When the meta names value types (a pprof input), they are written as they came: every
 * sample type with its unit, the period and its type, the default type, the duration and
 * start time; each Sample's values are the sums of its samples' own values (struct
 * tach_sample_ext), or, for a sample without them, its weight as the weight type's value.
 * A sample with extras carries exactly its own labels, and samples with different labels
 * are not merged. */

static bool tachi_pw_labels_eq_types(const struct pstate *st, const struct lset *a,
				     const struct lkey *k)
{
	if (!a->ext)
		return true;
	if (a->nlab != k->ls.nlab)
		return false;
	const struct tach_label *x = st->labs + a->lab0, *y = k->labs;
	for (uint32_t i = 0; i < a->nlab; i++)
		if (x[i].key != y[i].key || x[i].str != y[i].str || x[i].num != y[i].num ||
		    x[i].unit != y[i].unit)
			return false;
	return true;
}

static uint64_t tachi_pw_labels_hash_types(const struct lkey *k)
{
	uint64_t h = k->ls.nlab;
	for (uint32_t i = 0; i < k->ls.nlab; i++) {
		const struct tach_label *l = &k->labs[i];
		h = tachi_mix64(h ^ ((uint64_t)l->key << 32 | l->str));
		h = tachi_mix64(h ^ (uint64_t)l->num ^ (uint64_t)l->unit << 40);
	}
	return h;
}

static bool tachi_pw_keep_labels_types(struct pstate *st, struct lkey *q)
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
static int tachi_pw_begin_types(struct tach_writer *w)
{
	struct pstate *st = w->state;
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
	st->weight_mul = st->weight_div = 1;
	if (!m->weight_unit && ns && m->interval_us) {
		st->weight_mul = m->interval_us * 1000;
		st->weight_div = ns;
	}
	return TACH_OK;
}

static int tachi_pw_add_values_types(struct tach_writer *w, uint32_t entry,
				     const struct tach_sample *s)
{
	struct pstate *st = w->state;
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
	unsigned __int128 x = (unsigned __int128)s->weight * st->weight_mul / st->weight_div;
	int64_t *t = &v[w->meta.weight_type];
	if (x > INT64_MAX || __builtin_add_overflow(*t, (int64_t)x, t))
		goto big;
	return TACH_OK;
big:
	return WFAIL(w, TACH_E_LIMIT, "a sample value exceeds pprof's 64-bit values");
}

/* Entry's values, encoded in st->vbuf. */
static const uint8_t *tachi_pw_values_types(struct pstate *st, size_t entry, size_t *len)
{
	size_t n = 0;
	for (uint32_t i = 0; i < st->ntypes; i++)
		n += tachi_put_uvarint(st->vbuf + n, (uint64_t)st->vals[entry * st->ntypes + i]);
	*len = n;
	return st->vbuf;
}

static bool tachi_pw_labels_types(struct pstate *st, struct buf *m, const struct lset *ls)
{
	struct buf lb = { 0 };
	bool ok = true;
	for (uint32_t i = 0; ok && i < ls->nlab; i++) {
		const struct tach_label *l = &st->labs[ls->lab0 + i];
		uint32_t key, str = 0, unit = 0;
		lb.len = 0;
		ok = tachi_pw_src_str(st, st->src, l->key, &key) &&
		     (l->str == TACH_NO_STRING || tachi_pw_src_str(st, st->src, l->str, &str)) &&
		     (l->unit == TACH_NO_STRING || tachi_pw_src_str(st, st->src, l->unit, &unit)) &&
		     put_varint(&lb, 1, key) && put_varint(&lb, 2, str) &&
		     (l->str != TACH_NO_STRING || put_varint(&lb, 3, (uint64_t)l->num)) &&
		     put_varint(&lb, 4, unit) && tachi_pw_put_bytes(m, 3, lb.p, lb.len);
	}
	free(lb.p);
	return ok;
}

static int tachi_pw_trailer_types(struct tach_writer *w)
{
	struct pstate *st = w->state;
	const struct tach_meta *mt = &w->meta;
	struct buf *m = &st->msg;
	uint64_t t = (uint64_t)mt->start_time_ns;
	int rc;
	if (!t && __builtin_mul_overflow(mt->start_time_us, 1000, &t))
		t = 0;
	if ((t <= INT64_MAX && (rc = tachi_pw_emit_varint(w, P_TIME_NANOS, t))) ||
	    (mt->duration_ns > 0 && (rc = tachi_pw_emit_varint(w, P_DURATION_NANOS, (uint64_t)mt->duration_ns))))
		return rc;
	m->len = 0;
	if (st->s_ptype || st->s_punit) {
		if (!tachi_pw_value_type(m, st->s_ptype, st->s_punit))
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, P_PERIOD_TYPE, m)))
			return rc;
	}
	/* no comment of ours: pprof prints comments in its header, which stays the input's */
	if ((rc = tachi_pw_emit_varint(w, P_PERIOD, (uint64_t)mt->period)))
		return rc;
	return tachi_pw_emit_varint(w, P_DEFAULT_SAMPLE_TYPE, st->s_dflt);
}

static int write_profile_types(struct tach_writer *w)
{
	struct pstate *st = w->state;
	struct buf *m = &st->msg;
	int rc;
	for (uint32_t i = 0; i < st->ntypes; i++) {
		m->len = 0;
		if (!tachi_pw_value_type(m, st->type_str[2 * i], st->type_str[2 * i + 1]))
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, P_SAMPLE_TYPE, m)))
			return rc;
	}
	if ((rc = write_samples(w, 0)) || (rc = tachi_pw_write_locations(w)) ||
	    (rc = tachi_pw_write_strings(w)))
		return rc;
	return tachi_pw_trailer_types(w);
}

static const struct tachi_writer_ops writer_ops = {
	.state_size = sizeof(struct pstate),
	.option = pw_option,
	.begin = pw_begin,
	.put = pw_put,
	.close = pw_close,
	.free = pw_free,
	.trie_at = offsetof(struct pstate, trie) + 1,
	.fetch = pw_fetch,
	.put_ext = pw_put_ext,
};

const struct tachi_format tachi_fmt_pprof = {
	.name = "pprof",
	.reader = &tachi_pprof_reader_ops,
	.writer = &writer_ops,
	.probe = tachi_pprof_probe,
	.resembles = tachi_pprof_resembles,
};
