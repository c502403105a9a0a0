/* TACH writer: header layout B (CPython 3.15.0), byte-identical to CPython's writer on
 * uncompressed output. That takes CPython's exact rules: the encoding choice between REPEAT,
 * FULL, SUFFIX and POP_PUSH; repeated samples held back per thread until that thread's stack
 * changes (or the end), with a held run emitted early when it would pass 16 KiB; strings and
 * frames interned in the order CPython meets them; only the 256 innermost frames kept.
 *
 * zstd output is one frame at level 5 by default; its bytes depend on libzstd's version, so
 * only its decompressed content is promised. A seekable output is streamed and the header
 * written last; otherwise the compressed sample region is kept in memory until close.
 *
 * TACH records samples, each one interval long: weights that are values of another kind
 * (a pprof heap profile's bytes) are refused unless option counts-as-samples says to write
 * each unit as one sample. Samples are written at their own timestamps (a weighted record's
 * one interval apart); a sample's own time that is not its intervals (a V8 sample's time to
 * the next, a perf period) cannot be kept, nor values of other types, nor labels: each is
 * said once on stderr (labels by handles.c), none dropped silently.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zstd.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/io.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/values.h"
#include "core/format.h"
#include "formats/tach/tach.h"

#define TACH_MAX_DEPTH 256
#define RLE_BUF 16384
#define RLE_ENTRY_MAX 11
#define STAGE (512u << 10)
#define NO_ID UINT32_MAX

struct wthread {
	uint64_t tid;
	uint32_t iid;
	uint32_t depth;
	uint64_t prev_ts;
	uint32_t rle_count;
	size_t rle_len;
	uint32_t stack[TACH_MAX_DEPTH]; /* innermost first, ids in the writer's dict */
	uint8_t rle[RLE_BUF];
};

struct wstate {
	int level;               /* 0: default */
	int comp;                /* 0: default (zstd), 1: zstd, 2: none */
	bool counts_ok;          /* counts-as-samples */
	bool zstd;
	bool time_checked;       /* a time not the intervals was said (or cannot come) */
	uint64_t iv_ns;          /* the interval in ns */
	struct tach_dict dict;
	uint32_t *fmap, *smap;   /* source frame/string id -> ours */
	size_t fmap_cap, smap_cap;
	const struct tach_dict *src; /* the dict the maps belong to */
	struct tachi_idset native_rows; /* rows of native source frames, by value */
	struct tachi_threads threads; /* only the index; per-thread data below */
	struct wthread **wt;
	size_t nwt, wt_cap;
	uint64_t samples;
	/* Input in record order: the one thread whose run of repeats is being held. */
	struct wthread *held;
	uint8_t *stage;
	size_t stage_len;
	ZSTD_CCtx *cctx;
	uint8_t *zout;
	size_t zout_cap;
	bool memory;             /* output not seekable: keep the region in memory */
	uint8_t *mem;
	size_t mem_len, mem_cap;
	uint64_t region_len;
	off_t base;
};

static int ww_option(struct tach_writer *w, const char *key, const char *value)
{
	struct wstate *st = w->state;
	if (!strcmp(key, "compression")) {
		if (!strcmp(value, "zstd"))
			st->comp = 1;
		else if (!strcmp(value, "none"))
			st->comp = 2;
		else
			return WFAIL(w, TACH_E_USAGE, "compression must be zstd or none, not %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "level")) {
		uint64_t v;
		if (!tachi_parse_u64(value, (uint64_t)ZSTD_maxCLevel(), &v) || v < 1)
			return WFAIL(w, TACH_E_USAGE, "level must be 1..%d, not %s", ZSTD_maxCLevel(),
				     value);
		st->level = (int)v;
		return TACH_OK;
	}
	if (!strcmp(key, "counts-as-samples")) {
		if (!tachi_parse_bool(value, &st->counts_ok))
			return WFAIL(w, TACH_E_USAGE, "bad counts-as-samples value %s", value);
		return TACH_OK;
	}
	return WFAIL(w, TACH_E_USAGE, "tach writer has no option %s", key);
}

/* ---- the byte sink of the sample region ---- */

static int sink(struct tach_writer *w, const uint8_t *p, size_t n)
{
	struct wstate *st = w->state;
	/* An empty region leaves mem NULL, and memcpy must not see NULL even for 0 bytes. */
	if (!n)
		return TACH_OK;
	st->region_len += n;
	if (st->memory) {
		if (!TACHI_RESERVE(st->mem, st->mem_cap, st->mem_len + n))
			return WFAIL(w, TACH_E_NOMEM, "out of memory holding the sample region");
		memcpy(st->mem + st->mem_len, p, n);
		st->mem_len += n;
		return TACH_OK;
	}
	if (tachi_out_write(&w->out, p, n))
		return tachi_writer_io(w);
	return TACH_OK;
}

static int stage_flush(struct tach_writer *w, bool last)
{
	struct wstate *st = w->state;
	if (!st->zstd) {
		int rc = sink(w, st->stage, st->stage_len);
		st->stage_len = 0;
		return rc;
	}
	ZSTD_inBuffer in = { st->stage, st->stage_len, 0 };
	ZSTD_EndDirective mode = last ? ZSTD_e_end : ZSTD_e_continue;
	for (;;) {
		ZSTD_outBuffer out = { st->zout, st->zout_cap, 0 };
		size_t left = ZSTD_compressStream2(st->cctx, &out, &in, mode);
		if (ZSTD_isError(left))
			return WFAIL(w, TACH_E_IO, "zstd compression error: %s", ZSTD_getErrorName(left));
		int rc = sink(w, st->zout, out.pos);
		if (rc)
			return rc;
		if (last ? left == 0 : in.pos == in.size)
			break;
	}
	st->stage_len = 0;
	return TACH_OK;
}

static inline int emit(struct tach_writer *w, const void *p, size_t n)
{
	struct wstate *st = w->state;
	const uint8_t *b = p;
	while (n) {
		size_t k = STAGE - st->stage_len;
		if (k > n)
			k = n;
		memcpy(st->stage + st->stage_len, b, k);
		st->stage_len += k;
		b += k;
		n -= k;
		if (st->stage_len == STAGE) {
			int rc = stage_flush(w, false);
			if (rc)
				return rc;
		}
	}
	return TACH_OK;
}

/* ---- begin ---- */



static int ww_begin(struct tach_writer *w)
{
	struct wstate *st = w->state;
	if (w->meta.weight_unit && !st->counts_ok)
		return tachi_weights_not_samples(w);
	/* time per sample comes only where the samples carry it; weights of another kind
	 * (counts-as-samples) stand for none */
	st->time_checked = !w->meta.sample_time || w->meta.weight_unit ||
			   __builtin_mul_overflow(w->meta.interval_us, 1000, &st->iv_ns);
	tachi_values_dropped(w);
	st->zstd = st->comp != 2;
	if (!st->level)
		st->level = 5;
	if (!w->meta.py_major) {
		/* Inputs that do not know the Python version get the one this format is for. */
		w->meta.py_major = 3;
		w->meta.py_minor = 15;
		w->meta.py_micro = 0;
	}
	tachi_dict_init(&st->dict, true);
	st->stage = malloc(STAGE);
	if (!st->stage)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (st->zstd) {
		st->cctx = ZSTD_createCCtx();
		st->zout_cap = ZSTD_CStreamOutSize();
		st->zout = malloc(st->zout_cap);
		if (!st->cctx || !st->zout)
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		size_t rc = ZSTD_CCtx_setParameter(st->cctx, ZSTD_c_compressionLevel, st->level);
		if (ZSTD_isError(rc))
			return WFAIL(w, TACH_E_USAGE, "zstd level %d: %s", st->level,
				     ZSTD_getErrorName(rc));
	}
	/* Writing the header last needs pwrite at a known place; O_APPEND would defeat it. */
	int fl = fcntl(w->out.fd, F_GETFL);
	st->base = w->out.seekable ? lseek(w->out.fd, 0, SEEK_CUR) : -1;
	st->memory = !w->out.seekable || st->base < 0 || (fl >= 0 && (fl & O_APPEND));
	if (!st->memory) {
		static const uint8_t zero[64];
		if (tachi_out_write(&w->out, zero, sizeof(zero)))
			return tachi_writer_io(w);
	}
	return TACH_OK;
}

/* ---- interning, in CPython's order ---- */

static int map_string(struct tach_writer *w, const struct tach_dict *d, uint32_t sid, uint32_t *out)
{
	struct wstate *st = w->state;
	if (sid >= d->str_count)
		return WFAIL(w, TACH_E_USAGE, "string id %u out of range", sid);
	if (sid >= st->smap_cap && !tachi_idmap_reserve(&st->smap, &st->smap_cap, (size_t)sid + 1))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (st->smap[sid] == NO_ID) {
		size_t len;
		const char *s = tachi_str(d, sid, &len);
		if (tach_dict_intern_string(&st->dict, s, len, &st->smap[sid]))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	*out = st->smap[sid];
	return TACH_OK;
}

static uint64_t row_hash(const struct tach_frame *f)
{
	int32_t v[7] = { (int32_t)f->file, (int32_t)f->func, f->line, f->end_line, f->col,
			 f->end_col, f->opcode };
	return tachi_hash(v, sizeof(v));
}

static bool row_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tach_dict *d = ctx;
	const struct tach_frame *a = &d->frames[id], *b = key;
	return a->file == b->file && a->func == b->func && a->line == b->line &&
	       a->end_line == b->end_line && a->col == b->col && a->end_col == b->end_col &&
	       a->opcode == b->opcode;
}

/* A row per source frame, not per value: readers intern by value, so distinct ids are
 * distinct given frames (CPython's key), or a TACH table's own distinct rows. Native
 * frames differ by address, mapping or inline mark too, which TACH has no field for
 * (tachfmt(5)): those that are equal otherwise share one row. */
static int append_row(struct tach_writer *w, const struct tach_dict *d, uint32_t fid,
		      const struct tach_frame *f, uint32_t *row)
{
	struct wstate *st = w->state;
	bool native = tach_dict_frame_native(d, fid) != NULL;
	uint64_t h = native ? row_hash(f) : 0;
	if (native && tachi_idset_find(&st->native_rows, h, f, row_eq, &st->dict, row))
		return TACH_OK;
	if (tachi_dict_append_frame(&st->dict, f))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	*row = (uint32_t)st->dict.frame_count - 1;
	if (native && !tachi_idset_insert(&st->native_rows, h, *row))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	return TACH_OK;
}

static int map_frame(struct tach_writer *w, const struct tach_dict *d, uint32_t fid, uint32_t *out)
{
	struct wstate *st = w->state;
	if (TACHI_LIKELY(fid < st->fmap_cap && st->fmap[fid] != NO_ID)) {
		*out = st->fmap[fid];
		return TACH_OK;
	}
	if (fid >= d->frame_count)
		return WFAIL(w, TACH_E_USAGE, "frame id %u out of range", fid);
	if (fid >= st->fmap_cap && !tachi_idmap_reserve(&st->fmap, &st->fmap_cap, (size_t)fid + 1))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	struct tach_frame f = d->frames[fid];
	int rc;
	if ((rc = map_string(w, d, f.file, &f.file)) || (rc = map_string(w, d, f.func, &f.func)))
		return rc;
	if ((rc = append_row(w, d, fid, &f, &st->fmap[fid])))
		return rc;
	*out = st->fmap[fid];
	return TACH_OK;
}

/* ---- records ---- */

static size_t rec_header(uint8_t *b, const struct wthread *t, uint8_t enc)
{
	memcpy(b, &t->tid, 8);
	memcpy(b + 8, &t->iid, 4);
	b[12] = enc;
	return 13;
}

static int flush_rle(struct tach_writer *w, struct wthread *t)
{
	if (!t->rle_count)
		return TACH_OK;
	uint8_t h[13 + 5];
	size_t n = rec_header(h, t, 0);
	n += tachi_put_uvarint(h + n, t->rle_count);
	int rc = emit(w, h, n);
	if (!rc)
		rc = emit(w, t->rle, t->rle_len);
	t->rle_count = 0;
	t->rle_len = 0;
	return rc;
}

/* Input in record order (meta.record_order) holds a run of repeats only while it lasts: a
 * sample of another thread ends it, where CPython's writer would hold it until its thread's
 * stack changes. A file read back in record order so gets its records in the same places. */
static int end_held_run(struct tach_writer *w, struct wthread *t)
{
	struct wstate *st = w->state;
	if (!w->meta.record_order || !st->held || st->held == t)
		return TACH_OK;
	struct wthread *h = st->held;
	st->held = NULL;
	return flush_rle(w, h);
}

static struct wthread *thread_for(struct tach_writer *w, uint64_t tid, uint32_t iid)
{
	struct wstate *st = w->state;
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&st->threads, tid, iid, &created);
	if (!c) {
		WFAIL(w, TACH_E_NOMEM, "out of memory");
		return NULL;
	}
	if (!created)
		return st->wt[c->slot];
	struct wthread *t = malloc(sizeof(*t));
	if (!t || !TACHI_RESERVE(st->wt, st->wt_cap, st->nwt + 1)) {
		free(t);
		WFAIL(w, TACH_E_NOMEM, "out of memory");
		return NULL;
	}
	t->tid = tid;
	t->iid = iid;
	t->depth = 0;
	t->prev_ts = w->meta.start_time_us;
	t->rle_count = 0;
	t->rle_len = 0;
	c->slot = (uint32_t)st->nwt;
	st->wt[st->nwt++] = t;
	return t;
}

static int put_one(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s);

/* n more REPEAT entries of one interval and one status: the bytes put_one would append one
 * by one, record boundaries included, laid down a record's worth at a time. */
static int put_repeats(struct tach_writer *w, struct wthread *t, uint64_t n, uint8_t status)
{
	struct wstate *st = w->state;
	uint8_t pat[RLE_ENTRY_MAX];
	size_t plen = tachi_put_uvarint(pat, w->meta.interval_us);
	pat[plen++] = status;
	t->prev_ts += n * w->meta.interval_us;
	st->samples += n;
	if (n)
		st->held = t;
	while (n) {
		int rc;
		if (t->rle_len + RLE_ENTRY_MAX > RLE_BUF && (rc = flush_rle(w, t)))
			return rc;
		/* entries that go in before the buffer would pass its limit */
		uint64_t fit = (RLE_BUF - RLE_ENTRY_MAX - t->rle_len) / plen + 1;
		if (fit > n)
			fit = n;
		uint8_t *dst = t->rle + t->rle_len;
		size_t len = (size_t)fit * plen, have = plen;
		memcpy(dst, pat, plen);
		while (have < len) {
			size_t k = have < len - have ? have : len - have;
			memcpy(dst + have, dst, k);
			have += k;
		}
		t->rle_len += len;
		t->rle_count += (uint32_t)fit;
		n -= fit;
	}
	return TACH_OK;
}

/* The first sample whose own time is not its weight's intervals: said once. */
static __attribute__((noinline)) void time_lost(struct tach_writer *w, const struct tach_sample *s)
{
	struct wstate *st = w->state;
	st->time_checked = true;
	tachi_warn(&w->warn, TACH_POS_NONE, 0, "the tach format has one interval (%llu us) and no "
		   "time per sample: samples keep their timestamps, but each stands for one interval "
		   "(such as one of %llu us at %llu us)", (unsigned long long)w->meta.interval_us,
		   (unsigned long long)(s->time_ns / 1000), (unsigned long long)s->timestamp_us);
}

static int ww_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct wstate *st = w->state;
	if (TACHI_UNLIKELY(!st->time_checked) && s->time_ns != s->weight * st->iv_ns)
		time_lost(w, s);
	if (TACHI_LIKELY(s->weight <= 1))
		return put_one(w, d, s);
	/* A weighted sample becomes that many samples one interval apart; after the first,
	 * each is a REPEAT entry: the thread's stack is the one just written. */
	struct tach_sample one = *s;
	one.weight = 1;
	int rc = put_one(w, d, &one);
	if (rc)
		return rc;
	struct wthread *t = thread_for(w, s->thread_id, s->interp_id);
	if (!t)
		return w->err.code;
	return put_repeats(w, t, s->weight - 1, s->status);
}

static int put_one(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct wstate *st = w->state;
	/* the same dict for every sample: tach_writer_put checks it */
	if (TACHI_UNLIKELY(!st->src)) {
		st->src = d;
	}
	struct wthread *t = thread_for(w, s->thread_id, s->interp_id);
	if (!t)
		return w->err.code;
	uint32_t depth = s->depth < TACH_MAX_DEPTH ? s->depth : TACH_MAX_DEPTH;
	uint32_t cur[TACH_MAX_DEPTH];
	for (uint32_t i = 0; i < depth; i++) {
		int rc = map_frame(w, d, s->frames[i], &cur[i]);
		if (rc)
			return rc;
	}
	uint64_t delta = s->timestamp_us - t->prev_ts;
	t->prev_ts = s->timestamp_us;
	st->samples++;

	uint32_t pd = t->depth;
	int rc = end_held_run(w, t);
	if (rc)
		return rc;
	if (depth == pd && !memcmp(cur, t->stack, depth * sizeof(*cur))) {
		if (t->rle_len + RLE_ENTRY_MAX > RLE_BUF && (rc = flush_rle(w, t)))
			return rc;
		st->held = t;
		t->rle_len += tachi_put_uvarint(t->rle + t->rle_len, delta);
		t->rle[t->rle_len++] = s->status;
		t->rle_count++;
		return TACH_OK;
	}
	if ((rc = flush_rle(w, t)))
		return rc;
	uint32_t common = 0;
	while (common < depth && common < pd &&
	       cur[depth - 1 - common] == t->stack[pd - 1 - common])
		common++;
	uint8_t rec[13 + 10 + 1 + 5 + 5 + TACH_MAX_DEPTH * 5];
	size_t n;
	uint32_t first_new; /* number of new innermost frames to list */
	if (common == 0) {
		n = rec_header(rec, t, 1);
		n += tachi_put_uvarint(rec + n, delta);
		rec[n++] = s->status;
		n += tachi_put_uvarint(rec + n, depth);
		first_new = depth;
	} else {
		uint32_t pop = pd - common, push = depth - common;
		if (pop == 0 && push > 0) {
			n = rec_header(rec, t, 2);
			n += tachi_put_uvarint(rec + n, delta);
			rec[n++] = s->status;
			n += tachi_put_uvarint(rec + n, common);
			n += tachi_put_uvarint(rec + n, push);
			first_new = push;
		} else if (common < depth / 2) {
			n = rec_header(rec, t, 1);
			n += tachi_put_uvarint(rec + n, delta);
			rec[n++] = s->status;
			n += tachi_put_uvarint(rec + n, depth);
			first_new = depth;
		} else {
			n = rec_header(rec, t, 3);
			n += tachi_put_uvarint(rec + n, delta);
			rec[n++] = s->status;
			n += tachi_put_uvarint(rec + n, pop);
			n += tachi_put_uvarint(rec + n, push);
			first_new = push;
		}
	}
	for (uint32_t i = 0; i < first_new; i++)
		n += tachi_put_uvarint(rec + n, cur[i]);
	memcpy(t->stack, cur, depth * sizeof(*cur));
	t->depth = depth;
	return emit(w, rec, n);
}

/* ---- close: tables, footer, header ---- */

static int put_varint(struct tach_writer *w, uint64_t v)
{
	uint8_t b[10];
	if (tachi_out_write(&w->out, b, tachi_put_uvarint(b, v)))
		return tachi_writer_io(w);
	return TACH_OK;
}

/* The 64-byte header (layout B, host byte order), now that the counts are known. */
static void make_header(struct tach_writer *w, uint8_t hdr[64])
{
	struct wstate *st = w->state;
	const struct tach_dict *d = &st->dict;
	memset(hdr, 0, 64);
	uint32_t magic = 0x54414348, version = 1;
	memcpy(hdr, &magic, 4);
	memcpy(hdr + 4, &version, 4);
	hdr[8] = w->meta.py_major;
	hdr[9] = w->meta.py_minor;
	hdr[10] = w->meta.py_micro;
	memcpy(hdr + 12, &w->meta.start_time_us, 8);
	memcpy(hdr + 20, &w->meta.interval_us, 8);
	memcpy(hdr + 28, &st->samples, 8);
	uint32_t nthreads = (uint32_t)st->nwt;
	memcpy(hdr + 36, &nthreads, 4);
	uint64_t str_off = 64 + st->region_len, strings_len = 0;
	for (size_t i = 0; i < d->str_count; i++) {
		uint8_t b[10];
		strings_len += tachi_put_uvarint(b, d->strs[i].len) + d->strs[i].len;
	}
	uint64_t frame_off = str_off + strings_len;
	memcpy(hdr + 40, &str_off, 8);
	memcpy(hdr + 48, &frame_off, 8);
	uint32_t comp = st->zstd ? 1 : 0;
	memcpy(hdr + 56, &comp, 4);
	/* 0 (unknown) from CPython 3.15.0's writer, which reserves the word; the profiling
	 * mode plus one from newer ones, kept. */
	memcpy(hdr + 60, &w->meta.profiling_config, 4);
}

static int write_strings(struct tach_writer *w)
{
	struct wstate *st = w->state;
	const struct tach_dict *d = &st->dict;
	for (size_t i = 0; i < d->str_count; i++) {
		size_t len;
		const char *s = tachi_str(d, (uint32_t)i, &len);
		int rc = put_varint(w, len);
		if (rc)
			return rc;
		if (tachi_out_write(&w->out, s, len))
			return tachi_writer_io(w);
	}
	return TACH_OK;
}

/* The frame table; *len gets its size in bytes. */
static int write_frames(struct tach_writer *w, uint64_t *len)
{
	struct wstate *st = w->state;
	const struct tach_dict *d = &st->dict;
	*len = 0;
	for (size_t i = 0; i < d->frame_count; i++) {
		const struct tach_frame *f = &d->frames[i];
		uint8_t b[5 * 6 + 1];
		size_t n = 0;
		n += tachi_put_uvarint(b + n, f->file);
		n += tachi_put_uvarint(b + n, f->func);
		n += tachi_put_uvarint(b + n, tachi_zigzag32(f->line));
		/* CPython stores 0 when either end of a pair is unknown. */
		int32_t dl = (f->line == -1 || f->end_line == -1)
				     ? 0 : (int32_t)((uint32_t)f->end_line - (uint32_t)f->line);
		n += tachi_put_uvarint(b + n, tachi_zigzag32(dl));
		n += tachi_put_uvarint(b + n, tachi_zigzag32(f->col));
		int32_t dc = (f->col == -1 || f->end_col == -1)
				     ? 0 : (int32_t)((uint32_t)f->end_col - (uint32_t)f->col);
		n += tachi_put_uvarint(b + n, tachi_zigzag32(dc));
		b[n++] = f->opcode;
		*len += n;
		if (tachi_out_write(&w->out, b, n))
			return tachi_writer_io(w);
	}
	return TACH_OK;
}

/* The TACHSTAT block, when the input had one: in the form it had (56 bytes, or the original
 * 32 with duration and rate only), every field as it was, in host byte order as CPython
 * writes it; *len gets its size (0 without one). */
static int write_stats(struct tach_writer *w, uint64_t *len)
{
	const struct tach_meta *m = &w->meta;
	*len = 0;
	if (!m->has_stats)
		return TACH_OK;
	uint8_t b[56];
	uint32_t size = m->stats_size == 32 ? 32 : 56;
	uint32_t version = m->stats_size ? m->stats_version : 1;
	memcpy(b, &m->stats_duration_s, 8);
	memcpy(b + 8, &m->stats_sample_rate, 8);
	uint8_t *t = b + 16;
	if (size == 56) {
		memcpy(b + 16, &m->stats_error_rate, 8);
		memcpy(b + 24, &m->stats_missed, 8);
		memcpy(b + 32, &m->stats_flags, 4);
		memcpy(b + 36, &m->stats_reserved, 4);
		t = b + 40;
	}
	memcpy(t, "TACHSTAT", 8);
	memcpy(t + 8, &version, 4);
	memcpy(t + 12, &size, 4);
	if (tachi_out_write(&w->out, b, size))
		return tachi_writer_io(w);
	*len = size;
	return TACH_OK;
}

static int ww_close(struct tach_writer *w)
{
	struct wstate *st = w->state;
	const struct tach_dict *d = &st->dict;
	int rc;
	for (size_t i = 0; i < st->nwt; i++)
		if ((rc = flush_rle(w, st->wt[i])))
			return rc;
	if ((rc = stage_flush(w, true)))
		return rc;
	uint8_t hdr[64];
	make_header(w, hdr);
	if (st->memory && (tachi_out_write(&w->out, hdr, 64) ||
			   (st->mem_len && tachi_out_write(&w->out, st->mem, st->mem_len))))
		return tachi_writer_io(w);
	uint64_t frames_len, stats_len, frame_off;
	if ((rc = write_strings(w)) || (rc = write_frames(w, &frames_len)) ||
	    (rc = write_stats(w, &stats_len)))
		return rc;
	memcpy(&frame_off, hdr + 48, 8);
	uint8_t foot[32] = { 0 };
	uint32_t sc = (uint32_t)d->str_count, fc = (uint32_t)d->frame_count;
	uint64_t fsize = frame_off + frames_len + stats_len + 32;
	memcpy(foot, &sc, 4);
	memcpy(foot + 4, &fc, 4);
	memcpy(foot + 8, &fsize, 8);
	if (tachi_out_write(&w->out, foot, 32))
		return tachi_writer_io(w);
	if (st->memory)
		return TACH_OK;
	/* Seekable output: the header goes in the room left for it at the start. */
	if (tachi_out_flush(&w->out))
		return tachi_writer_io(w);
	ssize_t k = pwrite(w->out.fd, hdr, 64, st->base);
	if (k != 64) {
		w->out.err = k < 0 ? errno : EIO;
		return tachi_writer_io(w);
	}
	return TACH_OK;
}

static void ww_free(struct tach_writer *w)
{
	struct wstate *st = w->state;
	if (!st)
		return;
	tachi_dict_clear(&st->dict);
	tachi_idset_free(&st->native_rows);
	free(st->fmap);
	free(st->smap);
	for (size_t i = 0; i < st->nwt; i++)
		free(st->wt[i]);
	free(st->wt);
	tachi_threads_free(&st->threads);
	free(st->stage);
	ZSTD_freeCCtx(st->cctx);
	free(st->zout);
	free(st->mem);
}

const struct tachi_writer_ops tachi_tach_writer_ops = {
	.state_size = sizeof(struct wstate),
	.option = ww_option,
	.begin = ww_begin,
	.put = ww_put,
	.close = ww_close,
	.free = ww_free,
};
