/* Chunked gzip output (gzip.c): the same bytes for any number of workers, at chunk edges
 * and for writes of any size, which zlib inflates back to the input; write errors with
 * workers busy are returned, never hung on; the writers' threads option is bounded. */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "base/io.h"
#include "base/gzip.h"
#include "core/handles.h"

#define CHUNK (128u << 10)

/* Text that compresses somewhat, as the writers' output does: words from a small set with
 * numbers between, from a fixed generator. */
/* Bytes that do not compress: each chunk is stored, and comes out larger than it went in. */
static bool noise;

static uint8_t *make_input(size_t n)
{
	static const char *words[] = { "\"stack\":", "[12,", "\"func\",", "null,", "0.25]",
				       "{\"name\":\"main\"}", "frame", ";" };
	uint8_t *p = malloc(n ? n : 1);
	uint32_t x = 12345;
	size_t i = 0;
	if (noise) {
		for (uint64_t y = 88172645463325252u; i < n; i++) {
			y ^= y << 13, y ^= y >> 7, y ^= y << 17;
			p[i] = (uint8_t)(y >> 24);
		}
		return p;
	}
	while (i < n) {
		x = x * 1103515245u + 12345u;
		const char *w = words[(x >> 16) % 8];
		char num[16];
		int k = snprintf(num, sizeof(num), "%u", (x >> 8) % 1000);
		for (size_t j = 0; w[j] && i < n; j++)
			p[i++] = (uint8_t)w[j];
		for (int j = 0; j < k && i < n; j++)
			p[i++] = (uint8_t)num[j];
	}
	return p;
}

/* Everything in fd from the start, into *len bytes. */
static uint8_t *slurp(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	uint8_t *p = malloc(end > 0 ? (size_t)end : 1);
	*len = end > 0 ? (size_t)pread(fd, p, (size_t)end, 0) : 0;
	return p;
}

/* in compressed with workers, written in pieces of the sizes in steps (cycled); the file's
 * bytes, or NULL when a call failed. */
static uint8_t *compress_with(const uint8_t *in, size_t n, int level, unsigned workers,
			      const size_t *steps, size_t nsteps, size_t *outlen)
{
	FILE *f = tmpfile();
	struct tachi_out out;
	CHECK(f && tachi_out_init(&out, fileno(f)) == TACH_OK);
	struct tachi_gz *g = NULL;
	int rc = tachi_gz_open(&g, &out, level, workers);
	CHECK_EQ_U64(rc, TACH_OK);
	for (size_t i = 0, k = 0; !rc && i < n; k++) {
		size_t step = steps[k % nsteps];
		if (step > n - i)
			step = n - i;
		rc = tachi_gz_write(g, in + i, step);
		i += step;
	}
	if (!rc)
		rc = tachi_gz_finish(g);
	CHECK_EQ_U64(rc, TACH_OK);
	tachi_gz_free(g);
	CHECK_EQ_U64(tachi_out_flush(&out), 0);
	tachi_out_free(&out);
	uint8_t *bytes = slurp(fileno(f), outlen);
	fclose(f);
	return bytes;
}

/* Whether gz is one gzip member holding exactly in. */
static bool inflates_to(const uint8_t *gz, size_t gzlen, const uint8_t *in, size_t n)
{
	z_stream z;
	memset(&z, 0, sizeof(z));
	if (inflateInit2(&z, 16 + 15) != Z_OK)
		return false;
	uint8_t *out = malloc(n + 1);
	z.next_in = (Bytef *)gz;
	z.avail_in = (uInt)gzlen;
	z.next_out = out;
	z.avail_out = (uInt)n + 1;
	int zr = inflate(&z, Z_FINISH);
	bool ok = zr == Z_STREAM_END && z.total_out == n && z.avail_in == 0 &&
		  (n == 0 || !memcmp(out, in, n));
	inflateEnd(&z);
	free(out);
	return ok;
}

static void same_bytes(size_t n, int level)
{
	static const size_t whole[] = { SIZE_MAX };
	static const size_t ragged[] = { 1, 7, 4096, 100000, 3, CHUNK, CHUNK - 1, 65536 };
	uint8_t *in = make_input(n);
	size_t len0 = 0;
	uint8_t *ref = compress_with(in, n, level, 0, whole, 1, &len0);
	CHECK(inflates_to(ref, len0, in, n));
	/* zlib's header fields: no name, mtime 0, Unix */
	CHECK(len0 >= 18 && ref[0] == 0x1f && ref[1] == 0x8b && ref[3] == 0 && ref[9] == 3);
	const unsigned workers[] = { 0, 1, 2, 3, 8 };
	for (size_t w = 0; w < sizeof(workers) / sizeof(*workers); w++) {
		size_t len = 0;
		uint8_t *got = compress_with(in, n, level, workers[w], ragged,
					     sizeof(ragged) / sizeof(*ragged), &len);
		if (len != len0 || memcmp(got, ref, len)) {
			fprintf(stderr, "n=%zu level=%d workers=%u: other bytes\n", n, level,
				workers[w]);
			check_failures++;
		}
		free(got);
	}
	free(ref);
	free(in);
}

/* A full device: the error comes back from a write or from finish, with workers at work. */
static void write_error(unsigned workers)
{
	int fd = open("/dev/full", O_WRONLY);
	if (fd < 0)
		return;
	size_t n = 40 * CHUNK;
	uint8_t *in = make_input(n);
	struct tachi_out out;
	CHECK_EQ_U64(tachi_out_init(&out, fd), TACH_OK);
	struct tachi_gz *g = NULL;
	int rc = tachi_gz_open(&g, &out, 1, workers);
	for (size_t i = 0; !rc && i < n; i += CHUNK / 2)
		rc = tachi_gz_write(g, in + i, CHUNK / 2);
	if (!rc)
		rc = tachi_gz_finish(g);
	if (!rc)
		rc = tachi_out_flush(&out) ? TACH_E_IO : TACH_OK;
	CHECK_EQ_U64(rc, (uint64_t)TACH_E_IO);
	CHECK(out.err != 0);
	tachi_gz_free(g);
	tachi_out_free(&out);
	close(fd);
	free(in);
}

/* The writers' threads option: 0 to 64 workers, anything else a usage error. */
static void threads_option(const char *format)
{
	const char *good[] = { "0", "1", "8", "64" }, *bad[] = { "65", "-1", "x", "" };
	for (size_t i = 0; i < 4; i++) {
		struct tach_writer *w = tach_writer_new(format);
		CHECK_EQ_U64(tach_writer_set_option(w, "threads", good[i]), TACH_OK);
		tach_writer_free(w);
		w = tach_writer_new(format);
		CHECK_EQ_U64(tach_writer_set_option(w, "threads", bad[i]), (uint64_t)TACH_E_USAGE);
		tach_writer_free(w);
	}
}

int main(void)
{
	threads_option("gecko");
	threads_option("pprof");
	const size_t sizes[] = { 0, 1, 1000, CHUNK - 1, CHUNK, CHUNK + 1, 2 * CHUNK,
				 5 * CHUNK + 77, 17 * CHUNK + 4095 };
	for (size_t i = 0; i < sizeof(sizes) / sizeof(*sizes); i++)
		same_bytes(sizes[i], 1);
	/* 1 to 3 are ISA-L's levels when the library is built with it, the rest zlib's */
	for (int level = 2; level <= 9; level++)
		same_bytes(3 * CHUNK + 10, level);
	noise = true;
	same_bytes(4 * CHUNK + 3, 1);
	same_bytes(4 * CHUNK + 3, 6);
	noise = false;
	write_error(0);
	write_error(3);
	tachi_gz_free(NULL);
	return CHECK_DONE();
}
