/* TACH reader robustness: every truncation of every reference .tach fails cleanly (an error
 * code and a message, never a crash or a read past the buffer under ASan), and a few
 * hand-made files sit exactly on the edges of CPython's checks. */
#include <dirent.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/bytes.h"
#include "core/handles.h"

static uint8_t *slurp(const char *path, size_t *len)
{
	FILE *f = fopen(path, "rb");
	if (!f)
		return NULL;
	uint8_t *buf = NULL;
	size_t cap = 0;
	*len = 0;
	for (;;) {
		if (*len == cap) {
			cap = cap ? cap * 2 : 4096;
			buf = realloc(buf, cap);
			if (!buf)
				abort();
		}
		size_t k = fread(buf + *len, 1, cap - *len, f);
		if (!k)
			break;
		*len += k;
	}
	fclose(f);
	return buf;
}

/* Reads everything; returns TACH_EOF on success or the error code. The copy is exactly len
 * bytes on the heap, so ASan catches any read past the end. */
static unsigned warnings;

static void count_warning(void *ctx, const char *msg, int kind, uint64_t pos)
{
	warnings++;
}

static int read_all_opt(const uint8_t *data, size_t len, bool strict, uint64_t *samples,
			const char **msg_out, char *msg, size_t msgcap)
{
	uint8_t *copy = malloc(len ? len : 1);
	if (!copy)
		abort();
	memcpy(copy, data, len);
	struct tach_reader *r = tach_reader_new("tach");
	tach_reader_set_warn(r, count_warning, NULL);
	if (strict)
		tach_reader_set_option(r, "strict", "yes");
	CHECK(!tach_reader_dict_complete(r));
	int rc = tach_reader_open_mem(r, copy, len);
	/* TACH tables come before the samples: the dict is whole once the file is open */
	CHECK(tach_reader_dict_complete(r) == (rc == TACH_OK));
	uint64_t n = 0;
	if (rc == TACH_OK) {
		const struct tach_sample *s;
		while ((rc = tach_reader_next(r, &s)) == TACH_OK)
			n += s->weight;
	}
	if (samples)
		*samples = n;
	const char *m = tach_reader_error(r, NULL, NULL);
	if (msg) {
		snprintf(msg, msgcap, "%s", m ? m : "");
		if (msg_out)
			*msg_out = msg;
	}
	if (rc < 0 && (!m || !m[0])) {
		fprintf(stderr, "error %d without a message\n", rc);
		check_failures++;
	}
	tach_reader_free(r);
	free(copy);
	return rc;
}

static int read_all(const uint8_t *data, size_t len, uint64_t *samples, const char **msg_out,
		    char *msg, size_t msgcap)
{
	return read_all_opt(data, len, false, samples, msg_out, msg, msgcap);
}

/* A cut of an empty profile can leave zeros where the footer's counts are read, and CPython,
 * which never checks the footer's file size, reads that as an empty profile too. Such a cut
 * must at least draw the file-size warning, and fail with strict. The one exception is a cut
 * to 64 bytes of the layout-B empty profile: there the footer overlaps the header and its
 * size field is the string table offset, 64, which is true. */
static bool truncation_passes_strict(const char *name, size_t cut)
{
	return cut == 64 && !strcmp(name, "cases/empty.tach");
}

static unsigned files_seen, accepted_cuts;

static void truncations(const char *fixtures, const char *sub)
{
	char dir[4096];
	snprintf(dir, sizeof(dir), "%s/tach/%s", fixtures, sub);
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);
	CHECK(n > 0);
	for (int i = 0; i < n; i++) {
		const char *fn = list[i]->d_name;
		size_t fl = strlen(fn);
		if (fl < 5 || strcmp(fn + fl - 5, ".tach")) {
			free(list[i]);
			continue;
		}
		char path[8192], name[512];
		snprintf(path, sizeof(path), "%s/%s", dir, fn);
		snprintf(name, sizeof(name), "%s/%s", sub, fn);
		size_t len;
		uint8_t *data = slurp(path, &len);
		CHECK(data != NULL);
		if (!data)
			continue;
		files_seen++;
		/* the whole file: fixtures outside errors/ read fine */
		char msg[600];
		int full = read_all(data, len, NULL, NULL, msg, sizeof(msg));
		if (strcmp(sub, "errors") && full != TACH_EOF) {
			fprintf(stderr, "%s: whole file failed: %s\n", name, msg);
			check_failures++;
		}
		for (size_t cut = 0; cut < len; cut++) {
			uint64_t got = 0;
			warnings = 0;
			int rc = read_all(data, cut, &got, NULL, msg, sizeof(msg));
			if (rc >= 0 && (warnings == 0 || got != 0) && !truncation_passes_strict(name, cut)) {
				fprintf(stderr, "%s truncated to %zu bytes was accepted without a warning\n",
					name, cut);
				check_failures++;
			}
			if (rc < 0)
				continue;
			accepted_cuts++;
			rc = read_all_opt(data, cut, true, &got, NULL, msg, sizeof(msg));
			if ((rc >= 0) != truncation_passes_strict(name, cut)) {
				fprintf(stderr, "%s truncated to %zu bytes: strict read returned %d\n",
					name, cut, rc);
				check_failures++;
			}
		}
		free(data);
		free(list[i]);
	}
	free(list);
}

static void put_hdr_b(uint8_t *h, uint64_t samples, uint32_t threads, uint64_t so, uint64_t fo,
		      uint32_t comp)
{
	memset(h, 0, 64);
	memcpy(h, "HCAT", 4);
	tachi_wr32le(h + 4, 1);
	h[8] = 3;
	h[9] = 15;
	tachi_wr64le(h + 12, 1000);
	tachi_wr64le(h + 20, 1000);
	tachi_wr64le(h + 28, samples);
	tachi_wr32le(h + 36, threads);
	tachi_wr64le(h + 40, so);
	tachi_wr64le(h + 48, fo);
	tachi_wr32le(h + 56, comp);
}

/* A file with one raw sample region, one string "a", one frame (0,0,line 1), footer. */
static size_t build(uint8_t *f, const uint8_t *region, size_t rlen, uint64_t samples,
		    uint32_t threads, uint32_t nstrings, uint32_t nframes)
{
	size_t p = 64;
	memcpy(f + p, region, rlen);
	p += rlen;
	uint64_t so = p;
	f[p++] = 1;
	f[p++] = 'a';
	uint64_t fo = p;
	uint8_t frame[7] = { 0, 0, 2, 0, 1, 0, 255 };
	memcpy(f + p, frame, 7);
	p += 7;
	memset(f + p, 0, 32);
	tachi_wr32le(f + p, nstrings);
	tachi_wr32le(f + p + 4, nframes);
	tachi_wr64le(f + p + 8, p + 32);
	p += 32;
	put_hdr_b(f, samples, threads, so, fo, 0);
	return p;
}

static void edges(void)
{
	char msg[600];
	const char *m = NULL;
	uint64_t n;
	uint8_t f[512];

	/* 64 bytes, footer overlapping the header, everything zero: CPython reads it. */
	put_hdr_b(f, 0, 0, 64, 64, 0);
	CHECK_EQ_U64(read_all(f, 64, &n, &m, msg, sizeof(msg)), TACH_EOF);
	CHECK_EQ_U64(n, 0);

	/* one FULL record of depth 1 */
	uint8_t full[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 10, 1, 1, 0 };
	size_t len = build(f, full, sizeof(full), 1, 1, 1, 1);
	CHECK_EQ_U64(read_all(f, len, &n, &m, msg, sizeof(msg)), TACH_EOF);
	CHECK_EQ_U64(n, 1);

	/* a frame index past the table */
	full[16] = 1;
	len = build(f, full, sizeof(full), 1, 1, 1, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "Invalid frame index: 1") != NULL);
	full[16] = 0;

	/* Deep stacks of one-byte ids are read eight at a time: a bad id at any place of such
	 * a group, or in the few after it, is still found (the records that follow give the
	 * reader the room it needs to take the fast way). */
	for (unsigned bad = 0; bad <= 12; bad++) {
		for (uint8_t id = 1; id; id = id == 1 ? 0x7f : 0) {
			uint8_t deep[8 * 29], *q = deep;
			for (int rec = 0; rec < 8; rec++) {
				memcpy(q, full, 16);
				q[15] = 13;
				memset(q + 16, 0, 13);
				if (rec == 0)
					q[16 + bad] = id;
				q += 29;
			}
			len = build(f, deep, sizeof(deep), 8, 1, 1, 1);
			CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
			char want[64];
			snprintf(want, sizeof(want), "Invalid frame index: %u", id);
			CHECK(strstr(msg, want) != NULL);
		}
	}
	{
		uint8_t deep[8 * 29], *q = deep;
		for (int rec = 0; rec < 8; rec++, q += 29) {
			memcpy(q, full, 16);
			q[15] = 13;
			memset(q + 16, 0, 13);
		}
		len = build(f, deep, sizeof(deep), 8, 1, 1, 1);
		CHECK_EQ_U64(read_all(f, len, &n, &m, msg, sizeof(msg)), TACH_EOF);
		CHECK_EQ_U64(n, 8);
	}

	/* a frame naming a string past the table fails only when a sample uses it */
	len = build(f, full, sizeof(full), 1, 1, 0, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "Invalid string index in frame") != NULL);
	uint8_t repeat0[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	len = build(f, repeat0, sizeof(repeat0), 0, 1, 0, 1);
	CHECK_EQ_U64(read_all(f, len, &n, &m, msg, sizeof(msg)), TACH_EOF);

	/* an RLE count larger than the bytes left could hold (CPython: remaining / 2) */
	uint8_t rle[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 1, 1, 1 };
	len = build(f, rle, sizeof(rle), 2, 1, 1, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "Invalid RLE count 2 exceeds maximum possible 1") != NULL);

	/* more threads than the header declares */
	uint8_t two[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
			  6, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0 };
	len = build(f, two, sizeof(two), 0, 1, 1, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "declared 1, found at least 2") != NULL);
	len = build(f, two, sizeof(two), 0, 2, 1, 1);
	CHECK_EQ_U64(read_all(f, len, &n, &m, msg, sizeof(msg)), TACH_EOF);

	/* depth 257 is refused before any frame is read */
	uint8_t deep[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 10, 1, 0x81, 0x02 };
	len = build(f, deep, sizeof(deep), 1, 1, 1, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "Stack depth 257 exceeds capacity 256") != NULL);

	/* SUFFIX sharing more than the thread has */
	uint8_t suf[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 10, 1, 1, 1, 0 };
	len = build(f, suf, sizeof(suf), 1, 1, 1, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "Shared count 1 exceeds current stack depth 0") != NULL);

	/* POP_PUSH popping more than there is keeps nothing, as CPython does */
	uint8_t pp[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 3, 10, 1, 9, 1, 0 };
	len = build(f, pp, sizeof(pp), 1, 1, 1, 1);
	CHECK_EQ_U64(read_all(f, len, &n, &m, msg, sizeof(msg)), TACH_EOF);

	/* 12 trailing bytes */
	uint8_t tail[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 4, 5, 6, 7, 8, 9,
			   10, 11, 12 };
	len = build(f, tail, sizeof(tail), 0, 1, 1, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "Truncated sample data: 12 trailing bytes") != NULL);

	/* unknown encoding */
	uint8_t enc[] = { 5, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 4, 0, 0 };
	len = build(f, enc, sizeof(enc), 1, 1, 1, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "Unknown stack encoding: 4") != NULL);

	/* a compression type other than 0 or 1 is read as raw, as CPython does */
	len = build(f, full, sizeof(full), 1, 1, 1, 1);
	tachi_wr32le(f + 56, 7);
	CHECK_EQ_U64(read_all(f, len, &n, &m, msg, sizeof(msg)), TACH_EOF);
	CHECK_EQ_U64(n, 1);

	/* the sample count must match exactly, in 64 bits */
	len = build(f, full, sizeof(full), 1 + (1ull << 32), 1, 1, 1);
	CHECK(read_all(f, len, &n, &m, msg, sizeof(msg)) == TACH_E_FORMAT);
	CHECK(strstr(msg, "Sample count mismatch: header declares 4294967297") != NULL);
}

int main(void)
{
	edges();
	const char *fx = getenv("FIXTURES");
	if (!fx || !*fx) {
		fprintf(stderr, "FIXTURES is not set\n");
		return 1;
	}
	truncations(fx, "cases");
	truncations(fx, "layout-a");
	truncations(fx, "big-endian");
	truncations(fx, "errors");
	CHECK(files_seen >= 50);
	/* the empty profiles' cuts described above, and nothing else */
	CHECK(accepted_cuts > 0 && accepted_cuts < 100);
	fprintf(stderr, "%u files, %u truncations read without strict\n", files_seen, accepted_cuts);
	return CHECK_DONE();
}
