/* perf.data framing: the file header and its sections, or pipe mode's header; then the
 * records one at a time, each bounded by the bytes left and skipped by its size when it
 * is of no use here (never refused for its type). Records that carry bytes after their
 * own size (pipe mode's TRACING_DATA, AUXTRACE's trace) are skipped with them.
 * PERF_RECORD_COMPRESSED (perf record -z) holds a piece of one zstd stream, which inflates
 * to more records; a record may continue in the next piece. Inflating goes through a
 * fixed window (a record is at most 64 KiB), so memory does not follow what a piece
 * claims to hold.
 *
 * Time order: perf writes the records of each pass over its ring buffers, then a
 * FINISHED_ROUND; a record of one round may be older than the last of the round before,
 * never older than the round before that (tools/perf/util/ordered-events.c). So at each
 * FINISHED_ROUND the records held are sorted by time (stable: equal times keep file order)
 * and those no newer than the newest time of two rounds ago are given out; the rest at
 * the end. Memory follows the records of two rounds. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "base/base.h"
#include "base/bytes.h"
#include "core/handles.h"
#include "formats/perfdata/perfdata.h"

#define FILE_HEADER 104
#define PIPE_HEADER 16
#define ATTR_VER0 64
#define ZWINDOW (256u * 1024)
#define RELEASE_STEP (2u << 20)

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

static uint64_t rd64(const struct pd *st, const uint8_t *p)
{
	return tachi_rd64(p, st->swap);
}

static uint32_t rd32(const struct pd *st, const uint8_t *p)
{
	return tachi_rd32(p, st->swap);
}

/* ---- attributes and ids ---- */

/* The name perf gives an event of the generic types when no EVENT_DESC names it. */
static const char *generic_name(uint32_t type, uint64_t config)
{
	static const char *const hw[] = { "cycles", "instructions", "cache-references",
		"cache-misses", "branches", "branch-misses", "bus-cycles",
		"stalled-cycles-frontend", "stalled-cycles-backend", "ref-cycles" };
	static const char *const sw[] = { "cpu-clock", "task-clock", "page-faults",
		"context-switches", "cpu-migrations", "minor-faults", "major-faults",
		"alignment-faults", "emulation-faults", "dummy", "bpf-output", "cgroup-switches" };
	if (type == 0 && config < sizeof(hw) / sizeof(hw[0]))
		return hw[config];
	if (type == 1 && config < sizeof(sw) / sizeof(sw[0]))
		return sw[config];
	return NULL;
}

int pd_add_attr(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off, uint32_t *idx)
{
	struct pd *st = r->state;
	if (n < ATTR_VER0)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "an event attribute of %llu bytes, fewer than the 64 of the first version",
			     (unsigned long long)n);
	if (st->nattrs >= PD_MAX_ATTRS)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off, "more than %u event attributes",
			     PD_MAX_ATTRS);
	struct pd_attr *na = realloc(st->attrs, (st->nattrs + 1) * sizeof(*na));
	if (!na)
		return nomem(r);
	st->attrs = na;
	struct pd_attr *a = &na[st->nattrs];
	memset(a, 0, sizeof(*a));
	a->type = rd32(st, p);
	a->size = rd32(st, p + 4);
	a->config = rd64(st, p + 8);
	a->period = rd64(st, p + 16);
	a->sample_type = rd64(st, p + 24);
	a->read_format = rd64(st, p + 32);
	a->flags = rd64(st, p + 40);
	/* a bit field: in a big-endian file its first member is the top bit */
	if (st->swap) {
		uint64_t f = a->flags, g = 0;
		for (int i = 0; i < 64; i++)
			if (f >> i & 1)
				g |= 1ull << (63 - i);
		a->flags = g;
	}
	a->freq = a->flags >> 10 & 1;
	a->sample_id_all = a->flags >> 18 & 1;
	if (n >= 80)
		a->branch_sample_type = rd64(st, p + 72);
	if (n >= 96) {
		a->regs_user = rd64(st, p + 80);
		a->stack_user = rd32(st, p + 88);
	}
	if (n >= 104)
		a->regs_intr = rd64(st, p + 96);
	const char *g = generic_name(a->type, a->config);
	char buf[64];
	if (!g) {
		snprintf(buf, sizeof(buf), "event-%u:0x%llx", a->type, (unsigned long long)a->config);
		g = buf;
	}
	if (!(a->name = strdup(g)))
		return nomem(r);
	*idx = (uint32_t)st->nattrs++;
	return TACH_OK;
}

int pd_attr_by_id(const struct pd *st, uint64_t id)
{
	size_t lo = 0, hi = st->nids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < st->nids && st->ids[lo].id == id ? (int)st->ids[lo].attr : -1;
}

int pd_add_id(struct tach_reader *r, uint64_t id, uint32_t attr)
{
	struct pd *st = r->state;
	size_t lo = 0, hi = st->nids;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (st->ids[mid].id < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	if (lo < st->nids && st->ids[lo].id == id) {
		st->ids[lo].attr = attr;
		return TACH_OK;
	}
	if (st->nids >= PD_MAX_IDS)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "more than %u event ids", PD_MAX_IDS);
	if (!TACHI_RESERVE(st->ids, st->ids_cap, st->nids + 1))
		return nomem(r);
	memmove(st->ids + lo + 1, st->ids + lo, (st->nids - lo) * sizeof(*st->ids));
	st->ids[lo] = (struct pd_idmap){ id, attr };
	st->nids++;
	return TACH_OK;
}

/* A section [offset, offset + size) of the file, bounded by it; what at names it. */
static int section(struct tach_reader *r, uint64_t at, const char *what, uint64_t *o, uint64_t *n)
{
	struct pd *st = r->state;
	*o = rd64(st, st->data + at);
	*n = rd64(st, st->data + at + 8);
	if (*o > st->size || *n > st->size - *o)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at,
			     "%s section [%llu, +%llu) runs past the end of the file (%llu bytes); "
			     "the file may be cut short", what, (unsigned long long)*o,
			     (unsigned long long)*n, (unsigned long long)st->size);
	return TACH_OK;
}

static int file_attrs(struct tach_reader *r)
{
	struct pd *st = r->state;
	uint64_t esz = rd64(st, st->data + 16), o, n;
	int rc = section(r, 24, "the attribute", &o, &n);
	if (rc)
		return rc;
	if (esz < ATTR_VER0 + 16 || esz > 4096 + 16)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 16,
			     "attribute entries of %llu bytes (perf writes 80 to 4112)",
			     (unsigned long long)esz);
	if (!n || n % esz)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 32,
			     "an attribute section of %llu bytes, not a positive multiple of its "
			     "entries' %llu", (unsigned long long)n, (unsigned long long)esz);
	for (uint64_t e = o; e < o + n; e += esz) {
		const uint8_t *p = st->data + e;
		/* the attribute's own size word may be smaller than the entry (an older perf's) */
		uint64_t asz = rd32(st, p + 4);
		if (!asz || asz > esz - 16)
			asz = esz - 16;
		uint32_t idx;
		uint64_t io, in;
		if ((rc = pd_add_attr(r, p, asz, e, &idx)) ||
		    (rc = section(r, e + esz - 16, "an attribute's id", &io, &in)))
			return rc;
		for (uint64_t k = 0; k + 8 <= in; k += 8)
			if ((rc = pd_add_id(r, rd64(st, st->data + io + k), idx)))
				return rc;
	}
	return TACH_OK;
}

static int file_header(struct tach_reader *r)
{
	struct pd *st = r->state;
	uint64_t hsz = rd64(st, st->data + 8), o, n;
	if (st->size < FILE_HEADER || hsz < FILE_HEADER || hsz > st->size)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 8,
			     "a perf.data header of %llu bytes in a file of %llu (perf writes 104)",
			     (unsigned long long)hsz, (unsigned long long)st->size);
	int rc = file_attrs(r);
	if (rc || (rc = section(r, 40, "the data", &o, &n)))
		return rc;
	for (int i = 0; i < 4; i++)
		st->feat_bits[i] = rd64(st, st->data + 72 + 8 * i);
	st->pos = o;
	st->end = o + n;
	st->feat_off = o + n;
	return pd_read_features(r);
}

/* Pipe mode's 16-byte header at p, either byte order. */
static bool pipe_header(const uint8_t *p, size_t n, bool *swap)
{
	bool le = n >= PIPE_HEADER && !memcmp(p, "PERFILE2", 8);
	if (n < PIPE_HEADER || (!le && memcmp(p, "2ELIFREP", 8)))
		return false;
	*swap = le != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	return tachi_rd64(p + 8, *swap) == PIPE_HEADER;
}

int pd_open_input(struct tach_reader *r)
{
	struct pd *st = r->state;
	if (!r->in.whole) {
		/* not a mapped file: pipe mode is read as it comes; a file's layout (sections at
		 * offsets, the features after the data) needs it whole */
		const uint8_t *p;
		size_t got;
		uint8_t h[PIPE_HEADER];
		int rc = tachi_in_peek(&r->in, PIPE_HEADER, &r->err, &p, &got);
		if (rc)
			return rc;
		if (!pipe_header(p, got, &st->swap))
			rc = tachi_in_load(&r->in, r->lim.max_input, &r->err);
		else if (!(rc = tachi_in_read(&r->in, h, sizeof(h), &r->err, &got)) &&
			 !(st->rbuf = malloc(UINT16_MAX + 1u)))
			rc = nomem(r);
		if (rc || st->rbuf) {
			st->pipe = st->stream = true;
			st->pos = PIPE_HEADER;
			st->end = UINT64_MAX;
			return rc;
		}
	}
	st->data = r->in.data;
	st->size = r->in.size;
	if (st->size < PIPE_HEADER)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->size,
			     "a perf.data file of %llu bytes, shorter than any header",
			     (unsigned long long)st->size);
	bool le = !memcmp(st->data, "PERFILE2", 8);
	if (!le && memcmp(st->data, "2ELIFREP", 8))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0, "no PERFILE2 magic: not a perf.data file");
	st->swap = le != (__BYTE_ORDER__ == __ORDER_LITTLE_ENDIAN__);
	if (rd64(st, st->data + 8) == PIPE_HEADER) {
		st->pipe = true;
		st->pos = PIPE_HEADER;
		st->end = st->size;
		return TACH_OK;
	}
	return file_header(r);
}

/* ---- the round's queue ---- */

static int rec_cmp(const void *a, const void *b)
{
	const struct pd_rec *x = a, *y = b;
	if (x->time != y->time)
		return x->time < y->time ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* What a record's time is for the order: its sample's or trailer's, else the time of the
 * record before (so that it keeps its place). */
static uint64_t record_time(struct pd *st, const uint8_t *p, uint32_t size, uint32_t type)
{
	uint64_t t;
	bool has = false;
	if (type == PD_SAMPLE) {
		int a = pd_attr_of(st, p, size, true);
		if (a >= 0 && (st->attrs[a].sample_type & PD_S_TIME)) {
			/* TIME comes after IDENTIFIER, IP and TID */
			uint64_t k = 8, stt = st->attrs[a].sample_type;
			k += (stt & PD_S_IDENTIFIER ? 8 : 0) + (stt & PD_S_IP ? 8 : 0) +
			     (stt & PD_S_TID ? 8 : 0);
			if (k + 8 <= size) {
				t = rd64(st, p + k);
				has = true;
			}
		}
	} else {
		has = pd_trailer_time(st, p, size, &t);
	}
	if (!has)
		return st->last_time;
	st->last_time = t;
	return t;
}

static int queue(struct tach_reader *r, const uint8_t *p, uint32_t size, uint32_t type,
		 uint64_t off, bool copy)
{
	struct pd *st = r->state;
	if (st->nq - st->qhead >= PD_MAX_QUEUE)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off,
			     "more than %u records without a FINISHED_ROUND", PD_MAX_QUEUE);
	if (st->qhead && st->qhead >= st->nq / 2) {
		memmove(st->q, st->q + st->qhead, (st->nq - st->qhead) * sizeof(*st->q));
		st->nq -= st->qhead;
		st->sorted -= st->sorted < st->qhead ? st->sorted : st->qhead;
		st->qhead = 0;
	}
	if (!TACHI_RESERVE(st->q, st->qcap, st->nq + 1))
		return nomem(r);
	uint8_t *own = NULL;
	if (copy) {
		if (!(own = malloc(size)))
			return nomem(r);
		memcpy(own, p, size);
		p = own;
	}
	uint64_t t = record_time(st, p, size, type);
	if (t > st->max_time)
		st->max_time = t;
	st->q[st->nq++] = (struct pd_rec){ p, t, off, st->seq++, size, own != NULL };
	return TACH_OK;
}

/* Sorts q[0..n) by (time, seq), a total order, as qsort would. A round holds a few runs
 * already in order (the records held from the round before, then each CPU's buffer):
 * they are found and merged pairwise, a pass per doubling of the runs' length, not the
 * log2(n) passes of a merge sort. */
static void sort_records(struct pd_rec *q, size_t n)
{
	size_t runs = 1;
	for (size_t i = 1; i < n; i++)
		runs += rec_cmp(&q[i - 1], &q[i]) > 0;
	if (runs == 1)
		return;
	struct pd_rec *tmp = runs <= 64 ? malloc(n * sizeof(*q)) : NULL;
	if (!tmp) {
		qsort(q, n, sizeof(*q), rec_cmp);
		return;
	}
	while (runs > 1) {
		size_t i = 0, w = 0;
		runs = 0;
		while (i < n) {
			size_t a = i, m = i + 1;
			while (m < n && rec_cmp(&q[m - 1], &q[m]) <= 0)
				m++;
			size_t b = m, e = m < n ? m + 1 : m;
			while (e < n && rec_cmp(&q[e - 1], &q[e]) <= 0)
				e++;
			while (a < m && b < e)
				tmp[w++] = rec_cmp(&q[b], &q[a]) < 0 ? q[b++] : q[a++];
			while (a < m)
				tmp[w++] = q[a++];
			while (b < e)
				tmp[w++] = q[b++];
			i = e;
			runs++;
		}
		memcpy(q, tmp, n * sizeof(*q));
	}
	free(tmp);
}

static void round_end(struct pd *st)
{
	if (st->nq > st->qhead)
		sort_records(st->q + st->qhead, st->nq - st->qhead);
	st->sorted = st->nq;
	st->flush_upto = st->round_max;
	st->round_max = st->max_time;
	st->any_round = true;
}

/* ---- records ---- */

static int inflate_records(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off);

/* A record that is not queued: the header's parts in pipe mode, compressed data, a round's
 * end. *skip: bytes after the record that belong to it. */
static int user_record(struct tach_reader *r, uint32_t type, const uint8_t *p, uint32_t size,
		       uint64_t off, uint64_t *skip)
{
	struct pd *st = r->state;
	uint32_t idx;
	int rc;
	switch (type) {
	case PD_HEADER_ATTR: {
		uint64_t asz = size >= 16 ? rd32(st, p + 12) : 0;
		if (!asz || asz > size - 8u)
			asz = size - 8u;
		if ((rc = pd_add_attr(r, p + 8, asz, off + 8, &idx)))
			return rc;
		for (uint64_t k = 8 + asz; k + 8 <= size; k += 8)
			if ((rc = pd_add_id(r, rd64(st, p + k), idx)))
				return rc;
		return TACH_OK;
	}
	case PD_HEADER_FEATURE:
		return size < 16 ? TACH_OK : pd_feature(r, rd64(st, p + 8), p + 16, size - 16u, off + 16);
	case PD_HEADER_BUILD_ID:
		return pd_build_id_record(r, p, size, off);
	case PD_EVENT_UPDATE:
		return pd_event_update(r, p, size, off);
	case PD_HEADER_TRACING_DATA:
		*skip = size >= 12 ? (rd32(st, p + 8) + 7ull) / 8 * 8 : 0;
		return TACH_OK;
	case PD_AUXTRACE:
		*skip = size >= 16 ? rd64(st, p + 8) : 0;
		return TACH_OK;
	case PD_FINISHED_ROUND:
		round_end(st);
		return TACH_OK;
	case PD_COMPRESSED:
		/* compressed data inside compressed data: perf never writes it */
		return st->inflating ? TACH_OK : inflate_records(r, p + 8, size - 8u, off);
	case PD_COMPRESSED2: {
		if (st->inflating)
			return TACH_OK;
		uint64_t dn = size >= 16 ? rd64(st, p + 8) : 0;
		return inflate_records(r, p + 16, dn < size - 16u ? dn : size - 16u, off);
	}
	}
	return TACH_OK;
}

/* Types from 64 on are perf's own (tools/perf/util/event.h), not the kernel's. */
static bool is_user_record(uint32_t type)
{
	return type >= 64;
}

/* The record at p of the n bytes left: its size checked, queued or handled; *used its
 * bytes. */
static int one_record(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off,
		      bool inflated, uint64_t *used)
{
	struct pd *st = r->state;
	uint32_t type = rd32(st, p);
	uint16_t size = pd_rd16(st, p + 6);
	if (size < 8)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "a record (type %u) of %u bytes, less than its header's 8%s", type, size,
			     inflated ? " (in compressed data)" : "");
	if (size > n)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "a record (type %u) of %u bytes, past the end of the data (%llu bytes "
			     "left)%s; the file may be cut short", type, size, (unsigned long long)n,
			     inflated ? " (in compressed data)" : "");
	uint64_t skip = 0;
	int rc = is_user_record(type) ? user_record(r, type, p, size, off, &skip)
				      : queue(r, p, size, type, off, inflated || st->stream);
	if (rc)
		return rc;
	/* a stream's following bytes are read past by its caller, which says when they end */
	if (skip > n - size && !(st->stream && !inflated))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "a record (type %u) followed by %llu bytes of its own, past the end of "
			     "the data", type, (unsigned long long)skip);
	*used = size + skip;
	return TACH_OK;
}

static int inflate_records(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off)
{
	struct pd *st = r->state;
	if (!st->zds && !(st->zds = ZSTD_createDStream()))
		return nomem(r);
	if (!st->zbuf && !(st->zbuf = malloc(ZWINDOW)))
		return nomem(r);
	ZSTD_inBuffer in = { p, n, 0 };
	int rc = TACH_OK;
	st->inflating = true;
	while (!rc) {
		ZSTD_outBuffer out = { st->zbuf, ZWINDOW, st->zlen };
		size_t z = ZSTD_decompressStream(st->zds, &out, &in);
		if (ZSTD_isError(z)) {
			rc = RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
				   "compressed record: %s", ZSTD_getErrorName(z));
			break;
		}
		bool full = out.pos == out.size;
		st->zlen = out.pos;
		size_t at = 0;
		while (st->zlen - at >= 8) {
			uint16_t size = pd_rd16(st, st->zbuf + at + 6);
			if (size >= 8 && size > st->zlen - at)
				break;
			uint64_t used = 0;
			if ((rc = one_record(r, st->zbuf + at, st->zlen - at, off, true, &used)))
				break;
			at += used;
		}
		memmove(st->zbuf, st->zbuf + at, st->zlen - at);
		st->zlen -= at;
		if (in.pos == in.size && !full)
			break;
	}
	st->inflating = false;
	return rc;
}

/* A record's header from the stream into rbuf, an error when it is cut short, as for a
 * mapped file; TACH_EOF when the input ends before it. */
static int stream_header(struct tach_reader *r)
{
	struct pd *st = r->state;
	size_t got;
	int rc = tachi_in_read(&r->in, st->rbuf, 8, &r->err, &got);
	if (rc || got == 8)
		return rc;
	if (!got)
		return TACH_EOF;
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->pos, "%zu bytes left, too few for a "
		     "record header; the file may be cut short", got);
}

/* The next record of a stream (pipe mode from a pipe), read, handled and let go of: the
 * queue keeps copies. The bytes a record says follow it are read past. */
static int stream_record(struct tach_reader *r)
{
	struct pd *st = r->state;
	int rc = stream_header(r);
	if (rc == TACH_EOF) {
		st->end = st->pos;
		return TACH_OK;
	}
	uint16_t size = rc ? 0 : pd_rd16(st, st->rbuf + 6);
	size_t got = 0;
	/* a body cut short is one_record's to tell, as for a mapped file */
	if (!rc && size > 8)
		rc = tachi_in_read(&r->in, st->rbuf + 8, size - 8u, &r->err, &got);
	if (rc)
		return rc;
	uint64_t used = 0;
	uint32_t type = rd32(st, st->rbuf);
	if ((rc = one_record(r, st->rbuf, 8 + got, st->pos, false, &used)))
		return rc;
	for (uint64_t left = used - size; left;) {
		size_t k = left > UINT16_MAX ? UINT16_MAX : (size_t)left;
		if ((rc = tachi_in_read(&r->in, st->rbuf, k, &r->err, &got)))
			return rc;
		if (got < k)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->pos,
				     "a record (type %u) followed by %llu bytes of its own, past "
				     "the end of the data", type, (unsigned long long)(used - size));
		left -= k;
	}
	st->pos += used;
	return TACH_OK;
}

/* Reads input records until the queue has one ready or the input ends. */
static int fill(struct tach_reader *r)
{
	struct pd *st = r->state;
	while (st->pos < st->end) {
		if (st->qhead < st->sorted && st->q[st->qhead].time <= st->flush_upto)
			return TACH_OK;
		if (st->stream) {
			int rc = stream_record(r);
			if (rc)
				return rc;
			continue;
		}
		if (st->end - st->pos < 8)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->pos,
				     "%llu bytes left, too few for a record header; the file may be "
				     "cut short", (unsigned long long)(st->end - st->pos));
		uint64_t used = 0;
		int rc = one_record(r, st->data + st->pos, st->end - st->pos, st->pos, false, &used);
		if (rc)
			return rc;
		st->pos += used;
	}
	if (st->zlen)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, st->end,
			     "the compressed data ends inside a record");
	if (!st->done) {
		st->done = true;
		round_end(st);
		st->flush_upto = UINT64_MAX;
	}
	return TACH_OK;
}

const struct pd_rec *pd_peek_record(const struct pd *st, size_t ahead)
{
	return st->qhead + ahead - 1 < st->sorted ? &st->q[st->qhead + ahead - 1] : NULL;
}

int pd_next_record(struct tach_reader *r, struct pd_rec *rec)
{
	struct pd *st = r->state;
	free(st->last_own);
	st->last_own = NULL;
	if (!(st->qhead < st->sorted && st->q[st->qhead].time <= st->flush_upto)) {
		int rc = fill(r);
		if (rc)
			return rc;
	}
	/* without any FINISHED_ROUND (perf record -o - of old versions) the order is the file's */
	if (st->qhead >= st->nq)
		return TACH_EOF;
	*rec = st->q[st->qhead++];
	/* a mapped file's pages before every record still held go back (memory follows the
	 * round, not the file); the bytes stay readable */
	uint64_t keep = st->qhead < st->nq ? st->q[st->qhead].off : st->pos;
	if (!rec->own && keep > rec->off)
		keep = rec->off;
	if (keep > st->released + RELEASE_STEP && keep <= st->size) {
		tachi_in_release(&r->in, (size_t)keep);
		st->released = keep;
	}
	if (rec->own)
		st->last_own = (void *)rec->p;
	return TACH_OK;
}

void pd_records_free(struct pd *st)
{
	free(st->last_own);
	free(st->rbuf);
	for (size_t i = st->qhead; i < st->nq; i++)
		if (st->q[i].own)
			free((void *)st->q[i].p);
	free(st->q);
	free(st->zbuf);
	if (st->zds)
		ZSTD_freeDStream(st->zds);
	for (size_t i = 0; i < st->nattrs; i++)
		free(st->attrs[i].name);
	free(st->attrs);
	free(st->ids);
}
