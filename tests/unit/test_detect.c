/* The "auto" reader: the format each probe picks for inputs written out here by hand, the
 * contract of tach_reader_format, options before the format is known, and a pipe: the bytes
 * detection looked at must reach the chosen reader (the samples read through a pipe equal
 * those read from memory, for an input far longer than the peek). */
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "core/handles.h"
#include "core/detect.h"

/* Opens an auto reader on mem; returns the detected name ("" on failure) and the weight
 * of every sample read. */
static const char *detect(const void *p, size_t n, uint64_t *weight, int *rc)
{
	static char name[32];
	struct tach_reader *r = tach_reader_new("auto");
	CHECK(r != NULL);
	CHECK(tach_reader_format(r) == NULL);
	*rc = tach_reader_open_mem(r, p, n);
	snprintf(name, sizeof(name), "%s", tach_reader_format(r) ? tach_reader_format(r) : "");
	const struct tach_sample *s;
	*weight = 0;
	while (*rc == TACH_OK && (*rc = tach_reader_next(r, &s)) == TACH_OK)
		*weight += s->weight;
	if (*rc == TACH_EOF)
		*rc = TACH_OK;
	tach_reader_free(r);
	return name;
}

static void expect(const char *input, size_t n, const char *want, uint64_t want_weight)
{
	uint64_t w;
	int rc;
	const char *got = detect(input, n, &w, &rc);
	if (strcmp(got, want) || w != want_weight || rc != TACH_OK)
		fprintf(stderr, "input \"%.20s\": got %s (weight %llu, rc %d), want %s (%llu)\n", input,
			got, (unsigned long long)w, rc, want, (unsigned long long)want_weight);
	CHECK_EQ_STR(got, want);
	CHECK_EQ_U64(w, want_weight);
	CHECK_EQ_U64((uint64_t)(int64_t)rc, 0);
}

static void probes(void)
{
	static const char samples[] = "# x\n\n1 0 5 1\tf.py:g:3\n";
	expect(samples, sizeof(samples) - 1, "samples", 1);
	static const char header[] = "@interval_us 100\n";
	expect(header, sizeof(header) - 1, "samples", 0);
	static const char folded[] = "a;b;c 7\nmain;x 2\n";
	expect(folded, sizeof(folded) - 1, "collapsed", 9);
	/* the samples shape wins over a folded reading: the samples reader then explains */
	static const char both[] = "1 0 5 1\ta;b 3\n";
	uint64_t w;
	int rc;
	CHECK_EQ_STR(detect(both, sizeof(both) - 1, &w, &rc), "samples");
	CHECK(rc == TACH_E_FORMAT);
	static const char comments[] = "# only a comment\n\n";
	expect(comments, sizeof(comments) - 1, "collapsed", 0);
	/* gperftools, 32-bit big-endian: header 0 3 0 period 0, no records, trailer */
	static const uint8_t gperf[] = { 0, 0, 0, 0, 0, 0, 0, 3, 0, 0, 0, 0, 0, 0, 0x27, 0x10,
					 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 0, 0, 0, 0 };
	struct tach_reader *r = tach_reader_new("auto");
	CHECK(!tach_reader_set_option(r, "symbolize", "no"));
	CHECK(!tach_reader_open_mem(r, gperf, sizeof(gperf)));
	CHECK_EQ_STR(tach_reader_format(r), "gperf");
	CHECK_EQ_STR(tach_reader_meta(r)->source_format, "gperf");
	tach_reader_free(r);
}

static void failures(void)
{
	uint64_t w;
	int rc;
	CHECK_EQ_STR(detect("", 0, &w, &rc), "");
	CHECK(rc == TACH_E_FORMAT);
	static const uint8_t bin[] = { 0x00, 0x01, 'a', 0xff };
	CHECK_EQ_STR(detect(bin, sizeof(bin), &w, &rc), "");
	CHECK(rc == TACH_E_FORMAT);
	struct tach_reader *r = tach_reader_new("auto");
	CHECK(tach_reader_open_mem(r, bin, sizeof(bin)) == TACH_E_FORMAT);
	int kind;
	uint64_t pos;
	const char *msg = tach_reader_error(r, &kind, &pos);
	CHECK(msg && strstr(msg, "\\x00\\x01a\\xff") && strstr(msg, "tried tach, "));
	CHECK(kind == TACH_POS_OFFSET && pos == 0);
	tach_reader_free(r);
	/* options: unknown to every reader, a bad value for the one that knows it */
	r = tach_reader_new("auto");
	CHECK(tach_reader_set_option(r, "no-such-option", "1") == TACH_E_USAGE);
	tach_reader_free(r);
	r = tach_reader_new("auto");
	CHECK(tach_reader_set_option(r, "names", "pretty") == TACH_E_USAGE);
	CHECK(strstr(tach_reader_error(r, NULL, NULL), "names must be") != NULL);
	tach_reader_free(r);
	/* a fixed format names itself; auto is no writer */
	r = tach_reader_new("tach");
	CHECK_EQ_STR(tach_reader_format(r), "tach");
	tach_reader_free(r);
	CHECK(tach_writer_new("auto") == NULL);
}

struct feed {
	int fd;
	const char *p;
	size_t n;
};

static void *writer(void *arg)
{
	struct feed *f = arg;
	/* small writes: the reader's peek must gather them */
	for (size_t off = 0; off < f->n;) {
		size_t k = f->n - off < 1000 ? f->n - off : 1000;
		ssize_t got = write(f->fd, f->p + off, k);
		if (got <= 0)
			break;
		off += (size_t)got;
	}
	close(f->fd);
	return NULL;
}

/* input through a pipe, in small writes, against the same bytes from memory */
static void pipe_case(const char *p, size_t n, const char *format)
{
	uint64_t want, got = 0;
	int rc;
	CHECK_EQ_STR(detect(p, n, &want, &rc), format);
	int fds[2];
	CHECK(!pipe(fds));
	struct feed f = { fds[1], p, n };
	pthread_t t;
	pthread_create(&t, NULL, writer, &f);
	struct tach_reader *r = tach_reader_new("auto");
	CHECK(!tach_reader_open_fd(r, fds[0]));
	CHECK_EQ_STR(tach_reader_format(r), format);
	const struct tach_sample *s;
	while ((rc = tach_reader_next(r, &s)) == TACH_OK)
		got += s->weight;
	CHECK(rc == TACH_EOF);
	CHECK_EQ_U64(got, want);
	CHECK(want > 0);
	tach_reader_free(r);
	pthread_join(t, NULL);
	close(fds[0]);
}

/* A line format (streamed after the peek) and a whole-input one (TACH, read on after it). */
static void pipe_input(void)
{
	size_t cap = 64 << 10, n = 0;
	char *text = malloc(cap);
	for (int i = 0; n + 64 < cap; i++)
		n += (size_t)snprintf(text + n, cap - n, "main;work;f%d %d\n", i % 50, i % 7 + 1);
	pipe_case(text, n, "collapsed");
	free(text);
	char path[4096];
	snprintf(path, sizeof(path), "%s/tach/cases/deep_stack_300.tach", getenv("FIXTURES"));
	FILE *f = fopen(path, "rb");
	CHECK(f != NULL);
	if (!f)
		return;
	char *bin = malloc(1 << 20);
	size_t len = fread(bin, 1, 1 << 20, f);
	fclose(f);
	CHECK(len > TACHI_PROBE_BYTES);
	pipe_case(bin, len, "tach");
	free(bin);
}

/* Memory input through the decoders below every reader (base/unpack.c): gzip of folded
 * stacks (made here with zlib), UTF-16LE with its BOM, a UTF-8 BOM; a cut gzip fails. */
static void packed_memory(void)
{
	static const char folded[] = "a;b;c 7\nmain;x 2\n";
	uint8_t gz[256];
	z_stream z;
	memset(&z, 0, sizeof(z));
	CHECK(deflateInit2(&z, 6, Z_DEFLATED, 16 + MAX_WBITS, 8, Z_DEFAULT_STRATEGY) == Z_OK);
	z.next_in = (Bytef *)folded;
	z.avail_in = sizeof(folded) - 1;
	z.next_out = gz;
	z.avail_out = sizeof(gz);
	CHECK(deflate(&z, Z_FINISH) == Z_STREAM_END);
	size_t n = sizeof(gz) - z.avail_out;
	deflateEnd(&z);
	expect((const char *)gz, n, "collapsed", 9);
	uint64_t w;
	int rc;
	detect(gz, n - 9, &w, &rc);
	CHECK(rc == TACH_E_FORMAT);
	char u16[2 * sizeof(folded)] = { (char)0xff, (char)0xfe };
	for (size_t i = 0; i + 1 < sizeof(folded); i++)
		u16[2 + 2 * i] = folded[i];
	expect(u16, 2 * sizeof(folded), "collapsed", 9);
	static const char bom8[] = "\xef\xbb\xbf" "a;b;c 7\n";
	expect(bom8, sizeof(bom8) - 1, "collapsed", 7);
}

int main(void)
{
	probes();
	packed_memory();
	failures();
	pipe_input();
	return check_failures != 0;
}
