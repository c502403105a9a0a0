/* TACH reader: CPython's sampling-profiler binary format (Modules/_remote_debugging).
 *
 * A 64-byte header, a sample region (raw or one or more zstd frames), a string table, a
 * frame table, an optional TACHSTAT block (56 bytes, or 32 in its original form) and a
 * 32-byte footer. Header layout B (3.15.0: u64 sample count at 28) and layout A (3.15
 * pre-releases: u32 at 28) are told apart by which one gives consistent table offsets;
 * both byte orders are read (the magic says which). Records are decoded lazily, one sample per call, and zstd data is
 * decompressed through a small window, so memory stays bounded by the tables.
 *
 * Validation is at least CPython's (same checks, same order, mostly the same words), plus:
 * every frame and string index, the footer's file size (a warning unless strict, as CPython
 * ignores it), and a depth limit. Errors in raw data carry the file offset of the record;
 * errors in compressed data carry the record number.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/io.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/tach/tach.h"

#define HDR 64
#define FOOTER 32
#define STATS_BLOCK 56
#define STATS_BLOCK_OLD 32
#define TACH_MAX_DEPTH 256
#define ZWIN (256u << 10)
/* Read input is given back to the system (tachi_in_release) this many bytes at a time: a
 * mapped file otherwise stays resident whole, the largest part of the memory a big input
 * costs (a raw region is then read through a window of this size). */
#ifndef TACH_WINDOW /* a build may set it small, to put window edges everywhere */
#define TACH_WINDOW (4u << 20)
#endif
/* Enough for the largest record whose depth passes the 256 check: 13 fixed bytes, 10-byte
 * delta, status, two 5-byte counts, 256 five-byte frame ids. */
#define MAX_RECORD (13 + 10 + 1 + 5 + 5 + TACH_MAX_DEPTH * 5)

enum { ENC_REPEAT = 0, ENC_FULL = 1, ENC_SUFFIX = 2, ENC_POP_PUSH = 3 };

struct tthread {
	uint64_t tid;
	uint32_t iid;
	uint32_t depth;
	uint64_t prev_ts;
	/* Right-aligned, innermost first: the outermost frame sits in the last slot, so a
	 * record that keeps the outer frames writes only the new inner ones. */
	uint32_t stack[TACH_MAX_DEPTH];
};

struct tstate {
	bool swap;
	bool zstd;
	uint32_t cap_depth;
	uint8_t *frame_ok;         /* frame i refers to valid strings; NULL when all do */
	/* sample source: [cur, end) are available bytes */
	const uint8_t *cur, *end;
	const uint8_t *region_end; /* raw: end of the sample region */
	uint64_t raw_base;         /* raw: file offset of region start minus region pointer */
	const uint8_t *region;
	/* zstd */
	ZSTD_DCtx *dctx;
	ZSTD_inBuffer zin;
	uint8_t *win;
	size_t last_ret;
	bool zdone;
	uint64_t zconsumed;        /* decompressed bytes before win[0] */
	size_t released;           /* input bytes given back, as an offset in r->in.data */
	/* threads */
	struct tthread **threads;
	size_t nthreads, cap_threads;
	struct tachi_idset tindex;
	struct tachi_tmemo tmemo[TACHI_TMEMO_SIZE];
	struct tthread *cur_thread;
	uint64_t rle_left;
	/* A REPEAT entry one interval on with status k, repeated to fill 64 bytes, made when
	 * k's first run is measured (bit k of rle_made): most runs are short, and building
	 * the block for each cost more than reading the run. */
	uint8_t rle_pat[256][64];
	uint64_t rle_made[4];
	uint64_t records;          /* records started */
	uint64_t iv_ns;            /* the interval in ns: a sample's time (0: unknown) */
	uint64_t rec_off;          /* position of the current record */
	uint64_t decoded;
	uint64_t tables_end;       /* file offset just past the frame table */
	bool finished;
};

/* ---- positions and errors ---- */

static uint64_t src_pos(const struct tstate *st, const uint8_t *p)
{
	if (st->zstd)
		return st->zconsumed + (uint64_t)(p - st->win);
	return (uint64_t)(p - st->region) + HDR;
}

static int data_fail(struct tach_reader *r, int code, const char *fmt, ...) TACHI_PRINTF(3, 4);
static int data_fail(struct tach_reader *r, int code, const char *fmt, ...)
{
	struct tstate *st = r->state;
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (st->zstd)
		return RFAIL(r, code, TACH_POS_RECORD, st->records ? st->records - 1 : 0,
			     "%s (decompressed offset %llu)", msg, (unsigned long long)st->rec_off);
	return RFAIL(r, code, TACH_POS_OFFSET, st->rec_off, "%s", msg);
}

/* ---- sample source ---- */

/* Makes at least want bytes available at st->cur when the data has them; returns how many
 * are available. */
/* Gives back the input before offset upto, a step at a time. */
static void release_input(struct tach_reader *r, size_t upto)
{
	struct tstate *st = r->state;
	if (upto - st->released >= TACH_WINDOW) {
		tachi_in_release(&r->in, upto);
		st->released = upto;
	}
}

/* A raw region is read through a window [cur, end) that moves on here, so that what lies
 * behind it can be given back; every reader of the region asks for the bytes it needs. */
static void raw_fill(struct tach_reader *r, size_t want)
{
	struct tstate *st = r->state;
	size_t left = (size_t)(st->region_end - st->cur);
	size_t step = want > TACH_WINDOW ? want : TACH_WINDOW;
	st->end = st->cur + (left < step ? left : step);
	release_input(r, (size_t)(st->cur - r->in.data));
}

static int src_fill(struct tach_reader *r, size_t want)
{
	struct tstate *st = r->state;
	if ((size_t)(st->end - st->cur) >= want)
		return TACH_OK;
	if (!st->zstd) {
		raw_fill(r, want);
		return TACH_OK;
	}
	if (st->zdone)
		return TACH_OK;
	size_t left = (size_t)(st->end - st->cur);
	st->zconsumed += (uint64_t)(st->cur - st->win);
	memmove(st->win, st->cur, left);
	st->cur = st->win;
	st->end = st->win + left;
	while ((size_t)(st->end - st->cur) < want && !st->zdone) {
		ZSTD_outBuffer out = { st->win, ZWIN, left };
		size_t ret = ZSTD_decompressStream(st->dctx, &out, &st->zin);
		if (ZSTD_isError(ret))
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_RECORD, st->records,
				     "zstd decompression error: %s", ZSTD_getErrorName(ret));
		st->last_ret = ret;
		left = out.pos;
		st->end = st->win + left;
		if (st->zin.pos == st->zin.size && out.pos < out.size) {
			/* All input consumed and the output was not full: nothing more will come. */
			st->zdone = true;
		}
	}
	if (st->zdone && st->last_ret != 0)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_RECORD, st->records,
			     "Incomplete zstd frame: data may be truncated");
	release_input(r, (size_t)(st->region - r->in.data) + st->zin.pos);
	return TACH_OK;
}

/* ---- threads ---- */

struct tach_tkey {
	uint64_t tid;
	uint32_t iid;
};

static uint64_t tkey_hash(uint64_t tid, uint32_t iid)
{
	return tachi_mix64(tid ^ tachi_mix64(iid));
}

static bool tkey_eq(void *ctx, uint32_t id, const void *k)
{
	const struct tstate *st = ctx;
	const struct tach_tkey *key = k;
	return st->threads[id]->tid == key->tid && st->threads[id]->iid == key->iid;
}


static struct tthread *thread_get(struct tach_reader *r, uint64_t tid, uint32_t iid)
{
	struct tstate *st = r->state;
	struct tachi_tmemo *m = tachi_tmemo_slot(st->tmemo, tid, iid);
	if (TACHI_LIKELY(m->id1 && m->tid == tid && m->iid == iid))
		return st->cur_thread = st->threads[m->id1 - 1];
	struct tach_tkey k = { tid, iid };
	uint64_t h = tkey_hash(tid, iid);
	uint32_t id;
	if (tachi_idset_find(&st->tindex, h, &k, tkey_eq, st, &id)) {
		*m = (struct tachi_tmemo){ tid, iid, id + 1 };
		return st->cur_thread = st->threads[id];
	}
	/* The header bounds the number of threads, so this cannot grow without limit. */
	if (st->nthreads >= r->file.thread_count) {
		data_fail(r, TACH_E_FORMAT,
			  "Invalid thread count: sample data contains more unique threads than "
			  "declared in header (declared %u, found at least %zu)",
			  r->file.thread_count, st->nthreads + 1);
		return NULL;
	}
	struct tthread *t = malloc(sizeof(*t));
	if (!t || !TACHI_RESERVE(st->threads, st->cap_threads, st->nthreads + 1)) {
		free(t);
		RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		return NULL;
	}
	t->tid = tid;
	t->iid = iid;
	t->depth = 0;
	t->prev_ts = r->meta.start_time_us;
	st->threads[st->nthreads] = t;
	if (!tachi_idset_insert(&st->tindex, h, (uint32_t)st->nthreads)) {
		free(t);
		RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		return NULL;
	}
	*m = (struct tachi_tmemo){ tid, iid, (uint32_t)st->nthreads + 1 };
	st->nthreads++;
	return st->cur_thread = t;
}

/* ---- open ---- */

static int parse_tables(struct tach_reader *r, const uint8_t *data, size_t size)
{
	struct tstate *st = r->state;
	/* Strings: each is at least one byte, so the count is bounded by the bytes left. */
	uint64_t max_strings = size - r->file.string_table_offset;
	if (r->file.string_count > max_strings)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, size - FOOTER,
			     "Invalid string count %u exceeds maximum possible %llu",
			     r->file.string_count, (unsigned long long)max_strings);
	uint64_t max_frames = (size - r->file.frame_table_offset) / 7;
	if (r->file.frame_count > max_frames)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, size - FOOTER + 4,
			     "Invalid frame count %u exceeds maximum possible %llu",
			     r->file.frame_count, (unsigned long long)max_frames);
	tachi_dict_clear(&r->dict);
	tachi_dict_init(&r->dict, false);
	const uint8_t *p = data + r->file.string_table_offset, *end = data + size;
	for (uint32_t i = 0; i < r->file.string_count; i++) {
		uint64_t len;
		size_t n = tachi_uvarint(p, end, &len);
		if (!n || len > UINT32_MAX)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, (uint64_t)(p - data),
				     "Malformed varint in string table (string %u)", i);
		p += n;
		if (len > (uint64_t)(end - p))
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, (uint64_t)(p - data),
				     "String table overflow (string %u of %llu bytes)", i,
				     (unsigned long long)len);
		if (tachi_dict_append_string(&r->dict, (const char *)p, (size_t)len))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		p += len;
	}
	p = data + r->file.frame_table_offset;
	static const char *const names[] = { "filename", "funcname", "lineno", "end_lineno_delta",
					     "column", "end_column_delta" };
	st->frame_ok = malloc(r->file.frame_count ? r->file.frame_count : 1);
	if (!st->frame_ok)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	uint8_t all_ok = 1;
	for (uint32_t i = 0; i < r->file.frame_count; i++) {
		uint32_t v[6];
		for (int k = 0; k < 6; k++) {
			uint64_t x;
			size_t n = tachi_uvarint(p, end, &x);
			if (!n || x > UINT32_MAX)
				return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, (uint64_t)(p - data),
					     "Malformed varint in frame table (%s of frame %u)",
					     names[k], i);
			v[k] = (uint32_t)x;
			p += n;
		}
		if (p >= end)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, (uint64_t)(p - data),
				     "Unexpected end of frame table (opcode of frame %u)", i);
		struct tach_frame f;
		f.file = v[0];
		f.func = v[1];
		f.line = tachi_unzigzag32(v[2]);
		int32_t dl = tachi_unzigzag32(v[3]);
		f.col = tachi_unzigzag32(v[4]);
		int32_t dc = tachi_unzigzag32(v[5]);
		/* The writer adds in 32 bits; wrap-around is how it stores extreme pairs. */
		f.end_line = f.line == -1 ? -1 : (int32_t)((uint32_t)f.line + (uint32_t)dl);
		f.end_col = f.col == -1 ? -1 : (int32_t)((uint32_t)f.col + (uint32_t)dc);
		f.opcode = *p++;
		st->frame_ok[i] = f.file < r->file.string_count && f.func < r->file.string_count;
		all_ok &= st->frame_ok[i];
		if (tachi_dict_append_frame(&r->dict, &f))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	st->tables_end = (uint64_t)(p - data);
	if (all_ok) {
		/* The common case: the per-frame check in the sample loop is then a bound only. */
		free(st->frame_ok);
		st->frame_ok = NULL;
	}
	return TACH_OK;
}

/* The TACHSTAT block before the footer: a trailer (signature, version, size) at its end, so
 * that the signature sits 48 bytes from the end of the file whatever the size. Two forms
 * exist: 56 bytes (duration, rate, error and missed percentages, present flags, reserved)
 * and the original 32 (duration and rate). CPython only writes it after the tables, so a
 * block that would overlap the frame table is not one; a size not known is skipped with a
 * warning, as a reader that does not know the block would skip it. */
static void read_stats_block(struct tach_reader *r, const uint8_t *data, size_t size, bool swap)
{
	struct tstate *st = r->state;
	if (size < FOOTER + 16)
		return;
	const uint8_t *trailer = data + size - FOOTER - 16;
	if (memcmp(trailer, "TACHSTAT", 8))
		return;
	uint32_t version = tachi_rd32(trailer + 8, swap), bsize = tachi_rd32(trailer + 12, swap);
	uint64_t at = size - FOOTER - (uint64_t)bsize;
	if ((bsize != STATS_BLOCK && bsize != STATS_BLOCK_OLD) || bsize > size - FOOTER ||
	    at < st->tables_end) {
		tachi_warn(&r->warn, TACH_POS_OFFSET, size - FOOTER - 4,
			   "a TACHSTAT block of %u bytes, which this reader does not know or which "
			   "overlaps the tables: ignored", bsize);
		return;
	}
	const uint8_t *b = data + at;
	double d[4] = { 0, 0, 0, 0 };
	for (int i = 0; i < (bsize == STATS_BLOCK ? 4 : 2); i++) {
		uint64_t u = tachi_rd64(b + 8 * i, swap);
		memcpy(&d[i], &u, 8);
	}
	r->file.has_stats = 1;
	r->file.stats_size = bsize;
	r->file.stats_version = version;
	r->file.stats_duration_s = d[0];
	r->file.stats_sample_rate = d[1];
	r->file.stats_error_rate = d[2];
	r->file.stats_missed = d[3];
	if (bsize == STATS_BLOCK) {
		r->file.stats_flags = tachi_rd32(b + 32, swap);
		r->file.stats_reserved = tachi_rd32(b + 36, swap);
	}
}

/* Magic, byte order, version, and the header fields of whichever layout holds. */
static int read_header(struct tach_reader *r, const uint8_t *data, size_t size)
{
	struct tstate *st = r->state;
	struct tach_meta *m = &r->meta;
	if (size < HDR)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, size,
			     "File too small for header (%zu bytes, need 64)", size);
	bool swap;
	if (!memcmp(data, "HCAT", 4))
		swap = false;
	else if (!memcmp(data, "TACH", 4))
		swap = true;
	else
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0, "Invalid magic number: 0x%08x",
			     tachi_rd32(data, false));
#if __BYTE_ORDER__ == __ORDER_BIG_ENDIAN__
	swap = !swap;
#endif
	st->swap = swap;
	r->file.big_endian = data[0] == 'T';
	r->file.format_version = tachi_rd32(data + 4, swap);
	m->py_major = data[8];
	m->py_minor = data[9];
	m->py_micro = data[10];
	if (r->file.format_version > 1)
		return RFAIL(r, TACH_E_UNSUPPORTED, TACH_POS_OFFSET, 4,
			     "Binary file was created with Python %u.%u.%u (format version %u), "
			     "but this reader supports format version 1",
			     m->py_major, m->py_minor, m->py_micro, r->file.format_version);
	if (r->file.format_version != 1)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 4,
			     "Unsupported format version %u (this reader supports version 1)",
			     r->file.format_version);
	m->start_time_us = tachi_rd64(data + 12, swap);
	m->interval_us = tachi_rd64(data + 20, swap);
	if (r->meta.interval_us > TACHI_MAX_INTERVAL_US)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 20,
			     "a sample interval of %llu us, longer than %llu (what 64-bit "
			     "nanoseconds hold)", (unsigned long long)r->meta.interval_us,
			     (unsigned long long)TACHI_MAX_INTERVAL_US);
	r->file.file_size = size;
	uint64_t b_str = tachi_rd64(data + 40, swap), b_frm = tachi_rd64(data + 48, swap);
	uint64_t a_str = tachi_rd64(data + 36, swap), a_frm = tachi_rd64(data + 44, swap);
	bool b_ok = b_str >= HDR && b_str <= b_frm && b_frm <= size;
	bool a_ok = a_str >= HDR && a_str <= a_frm && a_frm <= size;
	if (b_ok || !a_ok) {
		r->file.layout = 'B';
		r->file.sample_count = tachi_rd64(data + 28, swap);
		r->file.thread_count = tachi_rd32(data + 36, swap);
		r->file.string_table_offset = b_str;
		r->file.frame_table_offset = b_frm;
		r->file.compression = tachi_rd32(data + 56, swap);
		m->profiling_config = tachi_rd32(data + 60, swap);
	} else {
		r->file.layout = 'A';
		r->file.sample_count = tachi_rd32(data + 28, swap);
		r->file.thread_count = tachi_rd32(data + 32, swap);
		r->file.string_table_offset = a_str;
		r->file.frame_table_offset = a_frm;
		r->file.compression = tachi_rd32(data + 52, swap);
		m->profiling_config = 0;
	}
	return TACH_OK;
}

/* The footer's counts, and the table offsets against the file. */
static int read_footer(struct tach_reader *r, const uint8_t *data, size_t size)
{
	struct tstate *st = r->state;
	/* CPython only needs 32 bytes for the footer, which any file past the header check has:
	 * in a file of 64..95 bytes the footer overlaps the header, and CPython reads such a file
	 * when the fields agree (a 64-byte empty profile), so it is not refused here either. */
	const uint8_t *foot = data + size - FOOTER;
	r->file.string_count = tachi_rd32(foot, st->swap);
	r->file.frame_count = tachi_rd32(foot + 4, st->swap);
	unsigned long long so = r->file.string_table_offset, fo = r->file.frame_table_offset;
	uint64_t at_so = r->file.layout == 'B' ? 40 : 36, at_fo = r->file.layout == 'B' ? 48 : 44;
	if (so > size)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at_so,
			     "Invalid string table offset: %llu exceeds file size %zu", so, size);
	if (fo > size)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at_fo,
			     "Invalid frame table offset: %llu exceeds file size %zu", fo, size);
	if (so < HDR)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at_so,
			     "Invalid string table offset: %llu is before data section", so);
	if (fo < HDR)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at_fo,
			     "Invalid frame table offset: %llu is before data section", fo);
	if (so > fo)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at_so,
			     "Invalid table offsets: string table (%llu) is after frame table (%llu)",
			     so, fo);
	return TACH_OK;
}

/* The sample region, and how it is compressed. */
static int find_region(struct tach_reader *r, const uint8_t *data)
{
	struct tstate *st = r->state;
	st->region = data + HDR;
	st->region_end = data + r->file.string_table_offset;
	if (r->file.compression == 1) {
		st->zstd = true;
		size_t rlen = (size_t)(st->region_end - st->region);
		unsigned long long cs = ZSTD_getFrameContentSize(st->region, rlen);
		if (cs == ZSTD_CONTENTSIZE_ERROR)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, HDR,
				     "Corrupted zstd frame header");
	} else if (r->file.compression != 0) {
		/* CPython reads any other value as uncompressed. */
		tachi_warn(&r->warn, TACH_POS_OFFSET, r->file.layout == 'B' ? 56 : 52,
			   "unknown compression type %u, reading the samples as uncompressed",
			   r->file.compression);
	}
	return TACH_OK;
}

/* The footer's file size: a warning unless strict, as CPython only checks it loosely. */
static int check_file_size(struct tach_reader *r, const uint8_t *data, size_t size)
{
	struct tstate *st = r->state;
	uint64_t foot_size = tachi_rd64(data + size - FOOTER + 8, st->swap);
	if (foot_size == size)
		return TACH_OK;
	if (r->lim.strict)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, size - FOOTER + 8,
			     "footer records file size %llu but the file has %zu bytes",
			     (unsigned long long)foot_size, size);
	tachi_warn(&r->warn, TACH_POS_OFFSET, size - FOOTER + 8,
		   "footer records file size %llu but the file has %zu bytes",
		   (unsigned long long)foot_size, size);
	return TACH_OK;
}

/* Ready to decode: raw samples read in place, zstd ones through a window. */
static int start_samples(struct tach_reader *r)
{
	struct tstate *st = r->state;
	st->cap_depth = r->lim.max_depth < TACH_MAX_DEPTH ? r->lim.max_depth : TACH_MAX_DEPTH;
	if (st->zstd) {
		st->dctx = ZSTD_createDCtx();
		st->win = malloc(ZWIN);
		if (!st->dctx || !st->win)
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		st->zin.src = st->region;
		st->zin.size = (size_t)(st->region_end - st->region);
		st->zin.pos = 0;
		st->cur = st->end = st->win;
		st->last_ret = 1;
	} else {
		st->cur = st->end = st->region;
		raw_fill(r, 0);
	}
	r->sample.weight = 1;
	/* every sample stands for one interval, the time TACH records; none when unknown */
	if (r->meta.interval_us <= UINT64_MAX / 1000)
		st->iv_ns = r->meta.interval_us * 1000;
	r->meta.sample_time = st->iv_ns != 0;
	r->sample.time_ns = st->iv_ns;
	r->file.record_order = 1;
	r->meta.file = &r->file;
	return TACH_OK;
}

/* A table or footer error in a file whose footer does not record its size: the footer
 * read is most likely not one (a file cut short, or with bytes after its end), which says
 * more than the counts read from the wrong bytes; CPython's words for those follow. */
static int say_truncated(struct tach_reader *r, const uint8_t *data, size_t size, int rc)
{
	struct tstate *st = r->state;
	if (rc != TACH_E_FORMAT || size < HDR + FOOTER ||
	    tachi_rd64(data + size - FOOTER + 8, st->swap) == size)
		return rc;
	char was[sizeof(r->err.msg)];
	memcpy(was, r->err.msg, sizeof(was));
	snprintf(r->err.msg, sizeof(r->err.msg),
		 "the file is truncated (or has bytes past its end): its last %d bytes are not "
		 "a footer recording its %zu bytes (%.300s)", FOOTER, size, was);
	r->err.pos_kind = TACH_POS_OFFSET;
	r->err.pos = size;
	return rc;
}

static int tr_open(struct tach_reader *r)
{
	const uint8_t *data = r->in.data;
	size_t size = r->in.size;
	int rc;
	if ((rc = read_header(r, data, size)))
		return rc;
	if ((rc = read_footer(r, data, size)) || (rc = find_region(r, data)) ||
	    (rc = parse_tables(r, data, size)))
		return say_truncated(r, data, size, rc);
	read_stats_block(r, data, size, ((struct tstate *)r->state)->swap);
	/* Checked after the tables: on a damaged file their error says more. */
	if ((rc = check_file_size(r, data, size)))
		return rc;
	return start_samples(r);
}

/* ---- records ---- */

static inline int rd_varint(struct tach_reader *r, const uint8_t **p, uint64_t *v,
			    const char *what)
{
	struct tstate *st = r->state;
	size_t n = tachi_uvarint(*p, st->end, v);
	if (TACHI_UNLIKELY(!n))
		return data_fail(r, TACH_E_FORMAT, "Malformed varint in %s", what);
	*p += n;
	return TACH_OK;
}

static inline int rd_u32varint(struct tach_reader *r, const uint8_t **p, uint32_t *v,
			       const char *what)
{
	uint64_t x = 0;
	int rc = rd_varint(r, p, &x, what);
	if (rc)
		return rc;
	if (TACHI_UNLIKELY(x > UINT32_MAX))
		return data_fail(r, TACH_E_FORMAT, "Malformed varint in %s", what);
	*v = (uint32_t)x;
	return TACH_OK;
}

static int read_frames(struct tach_reader *r, const uint8_t **p, uint32_t *dst, uint32_t n)
{
	struct tstate *st = r->state;
	uint32_t nframes = r->file.frame_count;
	const uint8_t *ok = st->frame_ok;
	uint32_t i = 0;
	/* Frame ids of one or two bytes (tables under 16384 frames) with room for the longest
	 * encoding: no bounds check per byte. Anything else, errors included, goes the careful
	 * way below from where this stopped. */
	if (TACHI_LIKELY((size_t)(st->end - *p) >= (size_t)n * 5)) {
		const uint8_t *q = *p;
		/* Tables of up to 128 frames, where every id is one byte: eight at a time, all
		 * checked at once. Adding 0x80 - nframes to a byte under 0x80 sets its top bit
		 * exactly when the id is out of range, and no byte carries into the next. */
		if (!ok && nframes <= 0x80) {
			uint64_t lim = 0x0101010101010101ull * (0x80 - nframes);
			for (; n - i >= 8; i += 8, q += 8) {
				uint64_t v;
				memcpy(&v, q, 8);
				if ((v | (v + lim)) & 0x8080808080808080ull)
					break;
				for (int k = 0; k < 8; k++)
					dst[i + k] = q[k];
			}
		}
		for (; i < n; i++) {
			uint32_t idx = q[0];
			size_t len = 1;
			if (idx >= 0x80) {
				if (q[1] >= 0x80)
					break;
				idx = (idx & 0x7f) | (uint32_t)q[1] << 7;
				len = 2;
			}
			if (TACHI_UNLIKELY(idx >= nframes || (ok && !ok[idx])))
				break;
			dst[i] = idx;
			q += len;
		}
		*p = q;
	}
	for (; i < n; i++) {
		uint32_t idx = 0;
		int rc = rd_u32varint(r, p, &idx, "sample data (frame index)");
		if (rc)
			return rc;
		if (TACHI_UNLIKELY(idx >= nframes || (ok && !ok[idx]))) {
			if (idx >= nframes)
				return data_fail(r, TACH_E_FORMAT,
						 "Invalid frame index: %u (the table has %u frames)",
						 idx, nframes);
			return data_fail(r, TACH_E_FORMAT,
					 "Invalid string index in frame %u (the table has %u strings)",
					 idx, r->file.string_count);
		}
		dst[i] = idx;
	}
	return TACH_OK;
}

static int finish(struct tach_reader *r)
{
	struct tstate *st = r->state;
	st->finished = true;
	if (st->decoded != r->file.sample_count)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 28,
			     "Sample count mismatch: header declares %llu samples but replay "
			     "decoded %llu",
			     (unsigned long long)r->file.sample_count,
			     (unsigned long long)st->decoded);
	r->stats.total_samples = st->decoded;
	return TACH_EOF;
}

static inline void emit(struct tach_reader *r, struct tthread *t, uint64_t delta, uint8_t status,
			uint32_t same_outer)
{
	struct tach_sample *s = &r->sample;
	t->prev_ts += delta;
	s->thread_id = t->tid;
	s->interp_id = t->iid;
	s->timestamp_us = t->prev_ts;
	s->status = status;
	s->depth = t->depth;
	s->frames = t->stack + TACH_MAX_DEPTH - t->depth;
	s->same_outer = same_outer;
	((struct tstate *)r->state)->decoded++;
}

static inline int over_limit(struct tach_reader *r)
{
	struct tstate *st = r->state;
	if (TACHI_LIKELY(st->decoded <= r->lim.max_samples))
		return TACH_OK;
	return data_fail(r, TACH_E_LIMIT, "more than %llu samples (see --max-samples)",
			 (unsigned long long)r->lim.max_samples);
}

/* After a repeat entry: how many of the entries that follow in the same record are one
 * interval later with the same status. Those need no sample each: the model's weight N
 * stands for N samples one interval apart, so aggregating writers pay per run, not per
 * repeat. Bounded so that the last timestamp stays within 64 bits. */
static int run_length(struct tach_reader *r, uint8_t status, uint64_t *n)
{
	struct tstate *st = r->state;
	uint64_t iv = r->meta.interval_us, max, k = 0;
	*n = 0;
	if (!iv || !st->rle_left)
		return TACH_OK;
	max = (UINT64_MAX - st->cur_thread->prev_ts) / iv;
	if (max > st->rle_left)
		max = st->rle_left;
	/* The entries as one block of whole copies, compared a block at a time first: a long
	 * run then costs about a memcmp per 64 bytes. */
	uint8_t *pat = st->rle_pat[status];
	size_t plen = tachi_uvarint_len(iv) + 1, per = sizeof(st->rle_pat[0]) / plen;
	size_t blen = per * plen;
	if (!tachi_bit(st->rle_made, status)) {
		tachi_put_uvarint(pat, iv);
		pat[plen - 1] = status;
		for (size_t i = plen; i < blen; i++)
			pat[i] = pat[i - plen];
		tachi_bit_set(st->rle_made, status);
	}
	while (max - k >= per) {
		if (TACHI_UNLIKELY((size_t)(st->end - st->cur) < blen)) {
			int rc = src_fill(r, blen);
			if (rc)
				return rc;
			if ((size_t)(st->end - st->cur) < blen)
				break;
		}
		if (memcmp(st->cur, pat, blen))
			break;
		st->cur += blen;
		k += per;
	}
	while (k < max) {
		if (TACHI_UNLIKELY((size_t)(st->end - st->cur) < plen)) {
			int rc = src_fill(r, plen);
			if (rc)
				return rc;
			if ((size_t)(st->end - st->cur) < plen)
				break;
		}
		if (memcmp(st->cur, pat, plen))
			break;
		st->cur += plen;
		k++;
	}
	st->rle_left -= k;
	*n = k;
	return TACH_OK;
}

static int next_repeat(struct tach_reader *r, const struct tach_sample **out)
{
	struct tstate *st = r->state;
	int rc;
	if (TACHI_UNLIKELY(st->end - st->cur < 11) && (rc = src_fill(r, 11)))
		return rc;
	const uint8_t *p = st->cur;
	uint64_t delta = 0, more;
	if ((rc = rd_varint(r, &p, &delta, "RLE sample data")))
		return rc;
	if (TACHI_UNLIKELY(p >= st->end))
		return data_fail(r, TACH_E_FORMAT, "Unexpected end of sample data in RLE");
	st->rle_left--;
	struct tthread *t = st->cur_thread;
	uint8_t status = *p++;
	st->cur = p;
	emit(r, t, delta, status, t->depth);
	if ((rc = run_length(r, status, &more)))
		return rc;
	r->sample.weight = 1 + more;
	if (__builtin_mul_overflow(r->sample.weight, st->iv_ns, &r->sample.time_ns))
		r->sample.time_ns = UINT64_MAX;
	t->prev_ts += more * r->meta.interval_us;
	st->decoded += more;
	*out = &r->sample;
	return over_limit(r);
}

/* A stack deeper than the reader holds: CPython's words for its own capacity, the option's
 * name when the user's max-depth is what it passes. */
static int depth_fail(struct tach_reader *r, const char *what, uint64_t depth)
{
	struct tstate *st = r->state;
	if (st->cap_depth < TACH_MAX_DEPTH)
		return data_fail(r, TACH_E_FORMAT, "%s %llu exceeds the max-depth limit of %u frames",
				 what, (unsigned long long)depth, st->cap_depth);
	return data_fail(r, TACH_E_FORMAT, "%s %llu exceeds capacity %u", what,
			 (unsigned long long)depth, st->cap_depth);
}

/* The stack of a FULL, SUFFIX or POP_PUSH record into t; *same gets the number of outer
 * frames kept from the thread's previous stack. */
static inline int read_stack(struct tach_reader *r, struct tthread *t, uint8_t enc,
			     const uint8_t **p, uint32_t *same)
{
	struct tstate *st = r->state;
	uint32_t *base = t->stack + TACH_MAX_DEPTH;
	int rc;
	if (enc == ENC_FULL) {
		uint32_t depth = 0;
		if ((rc = rd_u32varint(r, p, &depth, "sample data (depth)")))
			return rc;
		if (depth > st->cap_depth)
			return depth_fail(r, "Stack depth", depth);
		if ((rc = read_frames(r, p, base - depth, depth)))
			return rc;
		t->depth = depth;
		*same = 0;
		r->stats.full_records++;
		return TACH_OK;
	}
	if (enc != ENC_SUFFIX && enc != ENC_POP_PUSH)
		return data_fail(r, TACH_E_FORMAT, "Unknown stack encoding: %u", enc);
	uint32_t a = 0, n = 0, keep;
	if ((rc = rd_u32varint(r, p, &a, "sample data (frame count)")) ||
	    (rc = rd_u32varint(r, p, &n, "sample data (frame count)")))
		return rc;
	if (enc == ENC_SUFFIX) {
		if (a > t->depth)
			return data_fail(r, TACH_E_FORMAT,
					 "Shared count %u exceeds current stack depth %u", a, t->depth);
		keep = a;
		r->stats.suffix_records++;
	} else {
		keep = a >= t->depth ? 0 : t->depth - a;
		r->stats.pop_push_records++;
	}
	if ((uint64_t)keep + n > st->cap_depth)
		return depth_fail(r, "Final stack depth", (uint64_t)keep + n);
	if ((rc = read_frames(r, p, base - keep - n, n)))
		return rc;
	t->depth = keep + n;
	*same = keep;
	return TACH_OK;
}

/* A REPEAT record's count: its samples follow, one entry each. */
static inline int read_repeat_count(struct tach_reader *r, const uint8_t **p)
{
	struct tstate *st = r->state;
	uint32_t count = 0;
	int rc;
	if ((rc = rd_u32varint(r, p, &count, "sample data (RLE count)")))
		return rc;
	/* raw: the whole region is there, past the window */
	if (!st->zstd && count > (size_t)(st->region_end - *p) / 2)
		return data_fail(r, TACH_E_FORMAT,
				 "Invalid RLE count %u exceeds maximum possible %zu for remaining data",
				 count, (size_t)(st->region_end - *p) / 2);
	r->stats.repeat_records++;
	r->stats.repeat_samples += count;
	st->cur = *p;
	st->rle_left = count;
	return TACH_OK;
}

static int tr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct tstate *st = r->state;
	int rc;
	if (st->rle_left)
		return next_repeat(r, out);
	r->sample.weight = 1;
	r->sample.time_ns = st->iv_ns;
	if (st->finished)
		return TACH_EOF;
	for (;;) {
		if ((size_t)(st->end - st->cur) < MAX_RECORD && (rc = src_fill(r, MAX_RECORD)))
			return rc;
		if (st->cur == st->end)
			return finish(r);
		st->rec_off = src_pos(st, st->cur);
		st->records++;
		r->stats.total_records++;
		const uint8_t *p = st->cur;
		size_t avail = (size_t)(st->end - p);
		if (avail < 13)
			return data_fail(r, TACH_E_FORMAT, "Truncated sample data: %zu trailing bytes",
					 avail);
		uint64_t tid = tachi_rd64(p, st->swap);
		uint32_t iid = tachi_rd32(p + 8, st->swap);
		uint8_t enc = p[12];
		p += 13;
		struct tthread *t = thread_get(r, tid, iid);
		if (!t)
			return r->err.code;
		if (enc == ENC_REPEAT) {
			if ((rc = read_repeat_count(r, &p)))
				return rc;
			if (st->rle_left)
				return next_repeat(r, out);
			continue;
		}
		uint64_t delta = 0;
		if ((rc = rd_varint(r, &p, &delta, "sample data (timestamp delta)")))
			return rc;
		if (p >= st->end)
			return data_fail(r, TACH_E_FORMAT, "Unexpected end of sample data (status)");
		uint8_t status = *p++;
		uint32_t same;
		if ((rc = read_stack(r, t, enc, &p, &same)))
			return rc;
		st->cur = p;
		emit(r, t, delta, status, same);
		*out = &r->sample;
		return over_limit(r);
	}
}

static void tr_free(struct tach_reader *r)
{
	struct tstate *st = r->state;
	if (!st)
		return;
	for (size_t i = 0; i < st->nthreads; i++)
		free(st->threads[i]);
	free(st->threads);
	tachi_idset_free(&st->tindex);
	free(st->frame_ok);
	free(st->win);
	ZSTD_freeDCtx(st->dctx);
}

const struct tachi_reader_ops tachi_tach_reader_ops = {
	.state_size = sizeof(struct tstate),
	.open = tr_open,
	.next = tr_next,
	.free = tr_free,
	.whole_input = true,
	.dict_at_open = true,
};
