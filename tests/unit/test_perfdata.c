/* The perf.data reader's framing on files built here: both byte orders, attributes longer
 * than any known version, pipe mode, compressed records, records of unknown types, and
 * each damage (cut short anywhere, a record of no size, a sample shorter than its fields,
 * a call chain that claims more than the record holds) refused with its offset. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <zstd.h>

#include "check.h"
#include "tachfmt.h"

struct b {
	uint8_t p[8192];
	size_t n;
	bool be;
};

static void wn(struct b *b, uint64_t v, int bytes)
{
	for (int i = 0; i < bytes; i++)
		b->p[b->n + i] = (uint8_t)(v >> 8 * (b->be ? bytes - 1 - i : i));
	b->n += (size_t)bytes;
}
static void w16(struct b *b, uint64_t v) { wn(b, v, 2); }
static void w32(struct b *b, uint64_t v) { wn(b, v, 4); }
static void w64(struct b *b, uint64_t v) { wn(b, v, 8); }
static void wstr(struct b *b, const char *s, size_t pad)
{
	memset(b->p + b->n, 0, pad);
	memcpy(b->p + b->n, s, strlen(s));
	b->n += pad;
}
static void at64(struct b *b, size_t at, uint64_t v)
{
	size_t n = b->n;
	b->n = at;
	w64(b, v);
	b->n = n;
}

/* IP, TID, TIME, PERIOD, CALLCHAIN; software event 0 (cpu-clock); sample_id_all. */
#define STYPE (1 | 2 | 4 | 256 | 32)
#define FLAGS (1ull << 18)

/* An attribute of asz bytes (the first version's fields, zero after them). */
static void attr(struct b *b, size_t asz)
{
	size_t at = b->n;
	w32(b, 1);
	w32(b, asz);
	w64(b, 0);
	w64(b, 1000000);
	w64(b, STYPE);
	w64(b, 0);
	/* the flags bit field: in big-endian files its first member is the top bit */
	uint64_t f = FLAGS;
	if (b->be) {
		f = 0;
		for (int i = 0; i < 64; i++)
			if (FLAGS >> i & 1)
				f |= 1ull << (63 - i);
	}
	w64(b, f);
	while (b->n < at + asz)
		b->p[b->n++] = 0;
}

static void hdr(struct b *b, uint32_t type, uint16_t misc, uint16_t size)
{
	w32(b, type);
	w16(b, misc);
	w16(b, size);
}

/* The records: COMM, MMAP2, an unknown type, a sample, FINISHED_ROUND. */
static void records(struct b *b)
{
	hdr(b, 3, 0, 8 + 8 + 16 + 16);
	w32(b, 42);
	w32(b, 43);
	wstr(b, "worker", 16);
	w64(b, 43); /* the trailer: pid/tid, time */
	w64(b, 10);
	hdr(b, 10, 2, 8 + 64 + 16 + 16);
	w32(b, 42);
	w32(b, 42);
	w64(b, 0x400000);
	w64(b, 0x1000);
	w64(b, 0x2000);
	for (int i = 0; i < 32 / 8; i++)
		w64(b, 0);
	wstr(b, "/opt/bin/prog", 16);
	w64(b, 0);
	w64(b, 11);
	hdr(b, 200, 0, 24);
	w64(b, 7);
	w64(b, 7);
	hdr(b, 9, 2, 8 + 32 + 8 + 32);
	w64(b, 0x400100);
	w32(b, 42);
	w32(b, 43);
	w64(b, 5000000); /* 5 ms */
	w64(b, 1000000);
	w64(b, 4);
	w64(b, (uint64_t)-512); /* PERF_CONTEXT_USER */
	w64(b, 0x400100);
	w64(b, 0x400280);
	w64(b, 0x9000000); /* in no mapping */
	hdr(b, 68, 0, 8);
}

/* A whole file: header, one attribute entry of esz bytes with its id, data, EVENT_DESC. */
static size_t file(struct b *b, bool be, size_t esz)
{
	memset(b, 0, sizeof(*b));
	b->be = be;
	wstr(b, be ? "2ELIFREP" : "PERFILE2", 8);
	w64(b, 104);
	w64(b, esz);
	size_t sec = b->n;
	for (int i = 0; i < 6; i++)
		w64(b, 0);
	w64(b, 1ull << 12); /* EVENT_DESC */
	w64(b, 0);
	w64(b, 0);
	w64(b, 0);
	size_t ids = b->n;
	w64(b, 77);
	size_t attrs = b->n;
	attr(b, esz - 16);
	w64(b, ids);
	w64(b, 8);
	at64(b, sec, attrs);
	at64(b, sec + 8, esz);
	size_t data = b->n;
	records(b);
	at64(b, sec + 16, data);
	at64(b, sec + 24, b->n - data);
	size_t feat = b->n;
	w64(b, feat + 16);
	size_t fsz = b->n;
	w64(b, 0);
	size_t d0 = b->n;
	w32(b, 1);
	w32(b, 64);
	attr(b, 64);
	w32(b, 1);
	w32(b, 16);
	wstr(b, "my-event", 16);
	w64(b, 77);
	at64(b, fsz, b->n - d0);
	return b->n;
}

static const char *str(const struct tach_dict *d, uint32_t id)
{
	return tach_dict_string(d, id, NULL);
}

static struct tach_reader *open_(const void *p, size_t n, const char *event)
{
	struct tach_reader *r = tach_reader_new("perfdata");
	CHECK_EQ_U64(tach_reader_set_option(r, "symbolize", "no"), TACH_OK);
	if (event)
		CHECK_EQ_U64(tach_reader_set_option(r, "event", event), TACH_OK);
	tach_reader_set_warn(r, NULL, NULL);
	tach_reader_open_mem(r, p, n);
	return r;
}

/* The one sample every file here holds, checked. */
static void the_sample(const void *p, size_t n, const char *what)
{
	struct tach_reader *r = open_(p, n, "my-event");
	const struct tach_sample *s;
	const struct tach_dict *d = tach_reader_dict(r);
	int rc = tach_reader_next(r, &s);
	if (rc)
		fprintf(stderr, "%s: %s\n", what, tach_reader_error(r, NULL, NULL));
	CHECK_EQ_U64(rc, TACH_OK);
	if (!rc) {
		CHECK_EQ_U64(s->thread_id, 43);
		CHECK_EQ_U64(s->timestamp_us, 5000);
		CHECK_EQ_U64(s->depth, 4);
		const char *want[4] = { "prog+0x2100", "prog+0x2280", "0x9000000", "worker" };
		for (uint32_t i = 0; i < 4 && s->depth == 4; i++) {
			const struct tach_frame *f = tach_dict_frame(d, s->frames[i]);
			CHECK_EQ_STR(str(d, f->func), want[i]);
		}
		const struct tach_frame *root = tach_dict_frame(d, s->frames[3]);
		CHECK_EQ_STR(str(d, root->file), "[comm]");
		CHECK_EQ_U64(root->line, 42);
		const struct tach_mapping *m = tach_dict_mapping(d, 1);
		CHECK(m && m->start == 0x400000 && m->limit == 0x401000 && m->offset == 0x2000);
		CHECK_EQ_U64(tach_reader_meta(r)->interval_us, 1000);
		CHECK_EQ_U64(tach_reader_next(r, &s), TACH_EOF);
	}
	tach_reader_free(r);
}

/* Reading p fails with a message naming an offset. */
static bool fails(const void *p, size_t n, uint64_t *off)
{
	struct tach_reader *r = open_(p, n, NULL);
	const struct tach_sample *s;
	int rc;
	while ((rc = tach_reader_next(r, &s)) == TACH_OK)
		;
	int kind = 0;
	uint64_t pos = 0;
	tach_reader_error(r, &kind, &pos);
	tach_reader_free(r);
	if (off)
		*off = pos;
	return rc < 0 && rc != TACH_EOF && kind == TACH_POS_OFFSET;
}

static void orders_and_sizes(void)
{
	struct b b;
	the_sample(b.p, file(&b, false, 136), "little-endian");
	the_sample(b.p, file(&b, true, 136), "big-endian");
	/* an attribute longer than any perf knows, and the first version's */
	the_sample(b.p, file(&b, false, 400), "400-byte entries");
	the_sample(b.p, file(&b, false, 80), "80-byte entries");
}

static void pipe_mode(void)
{
	struct b b = { .n = 0 };
	wstr(&b, "PERFILE2", 8);
	w64(&b, 16);
	hdr(&b, 64, 0, 8 + 120 + 8);
	attr(&b, 120);
	w64(&b, 77);
	/* EVENT_UPDATE: a name (type 2) for id 77 */
	hdr(&b, 78, 0, 8 + 16 + 16);
	w64(&b, 2);
	w64(&b, 77);
	wstr(&b, "my-event", 16);
	/* tracing data: 12 bytes after the record, padded to 16, skipped */
	hdr(&b, 66, 0, 16);
	w32(&b, 12);
	w32(&b, 0);
	wstr(&b, "", 16);
	records(&b);
	the_sample(b.p, b.n, "pipe");
}

static void compressed(void)
{
	struct b b, rec = { .n = 0 };
	size_t n = file(&b, false, 136);
	records(&rec);
	/* the data section's records again, as two compressed records of one stream,
	 * the second starting inside a record */
	uint64_t data = 0, dsz = 0;
	memcpy(&data, b.p + 40, 8);
	memcpy(&dsz, b.p + 48, 8);
	uint8_t tail[4096];
	size_t tn = n - (size_t)(data + dsz);
	memcpy(tail, b.p + data + dsz, tn);
	ZSTD_CCtx *z = ZSTD_createCCtx();
	uint8_t out[2][1024];
	size_t on[2];
	size_t cut = rec.n / 2 + 3;
	for (int k = 0; k < 2; k++) {
		ZSTD_inBuffer in = { rec.p + (k ? cut : 0), k ? rec.n - cut : cut, 0 };
		ZSTD_outBuffer o = { out[k], sizeof(out[k]), 0 };
		size_t left;
		do
			left = ZSTD_compressStream2(z, &o, &in, k ? ZSTD_e_end : ZSTD_e_flush);
		while (!ZSTD_isError(left) && left);
		on[k] = o.pos;
	}
	ZSTD_freeCCtx(z);
	b.n = (size_t)data;
	for (int k = 0; k < 2; k++) {
		hdr(&b, 81, 0, (uint16_t)(8 + on[k]));
		memcpy(b.p + b.n, out[k], on[k]);
		b.n += on[k];
	}
	size_t feat = b.n;
	at64(&b, 48, feat - data);
	/* the feature table follows the data: moved, with its section */
	memcpy(b.p + feat, tail, tn);
	at64(&b, feat, feat + 16);
	the_sample(b.p, feat + tn, "compressed");
}

static void damage(void)
{
	struct b b;
	size_t n = file(&b, false, 136);
	uint64_t off;
	/* cut anywhere: an error with an offset, never a reading */
	for (size_t k = 0; k < n; k++)
		if (!fails(b.p, k, NULL)) {
			fprintf(stderr, "cut at %zu read\n", k);
			CHECK(false);
		}
	/* a record of size 4 */
	uint64_t data;
	memcpy(&data, b.p + 40, 8);
	b.p[data + 6] = 4;
	b.p[data + 7] = 0;
	CHECK(fails(b.p, n, &off));
	CHECK_EQ_U64(off, data);
	/* a sample whose call chain claims 2^40 entries */
	n = file(&b, false, 136);
	size_t s = (size_t)data + 48 + 104 + 24;
	CHECK_EQ_U64(b.p[s], 9);
	at64(&b, s + 8 + 32, 1ull << 40);
	CHECK(fails(b.p, n, &off));
	CHECK_EQ_U64(off, s);
	/* a sample too short for its fields: its size cut by 8 after the chain */
	n = file(&b, false, 136);
	at64(&b, s + 8 + 32, 5);
	CHECK(fails(b.p, n, &off));
	CHECK_EQ_U64(off, s);
	/* a data section past the end */
	n = file(&b, false, 136);
	at64(&b, 48, 1ull << 50);
	CHECK(fails(b.p, n, &off));
	CHECK_EQ_U64(off, 40);
	/* an event no attribute names */
	n = file(&b, false, 136);
	struct tach_reader *r = open_(b.p, n, "nope");
	const struct tach_sample *x;
	CHECK(tach_reader_next(r, &x) < 0 && strstr(tach_reader_error(r, NULL, NULL), "my-event"));
	tach_reader_free(r);
}

/* An unknown context marker: perf drops the whole chain, and so do we (only the root). */
static void bad_marker(void)
{
	struct b b;
	size_t n = file(&b, false, 136);
	uint64_t data;
	memcpy(&data, b.p + 40, 8);
	at64(&b, (size_t)data + 48 + 104 + 24 + 8 + 32 + 8, (uint64_t)-1);
	struct tach_reader *r = open_(b.p, n, NULL);
	const struct tach_sample *s;
	CHECK_EQ_U64(tach_reader_next(r, &s), TACH_OK);
	CHECK_EQ_U64(s->depth, 1);
	tach_reader_free(r);
}

int main(void)
{
	orders_and_sizes();
	pipe_mode();
	compressed();
	damage();
	bad_marker();
	return CHECK_DONE();
}
