/* The Gecko writer's JSON pieces (exact ms times, string escaping with UTF-8 repair) and what
 * only the library API can feed it: weighted samples, overlapping runs, inputs without a
 * thread state. Expected strings are worked out by hand from JSON (RFC 8259) and UTF-8
 * (RFC 3629, one U+FFFD per invalid byte). */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "base/utf8.h"
#include "base/jsonout.h"
#include "model/dict.h"
#include "model/spool.h"
#include "core/handles.h"

static void ms(bool neg, uint64_t us, const char *want)
{
	char b[40];
	size_t n = tachi_fmt_ms(b, neg, us);
	CHECK(n < 24);
	b[n < 24 ? n : 23] = 0;
	CHECK_EQ_STR(b, want);
}

static void esc(const char *in, size_t n, const char *want, bool want_repaired)
{
	char out[256];
	bool repaired = false;
	CHECK(n * 6 < sizeof(out));
	size_t k = tachi_json_escape(out, in, n, &repaired);
	CHECK(k <= 6 * n);
	out[k] = 0;
	CHECK_EQ_STR(out, want);
	CHECK_EQ_U64(repaired, want_repaired);
	CHECK(tachi_utf8_valid((const uint8_t *)out, k));
}

/* A sample of the two-frame stacks convert() runs through the writer. */
struct smp {
	uint64_t tid, ts, weight;
	uint8_t status;
	uint32_t depth;
};

/* A dict of two frames in m.py: ids[0] is a (line 5), ids[1] is b (line 9). */
static struct tach_dict *two_frames(uint32_t ids[2])
{
	struct tach_dict *d = tach_dict_new();
	uint32_t file, fa, fb;
	CHECK(!tach_dict_intern_string(d, "m.py", 4, &file));
	CHECK(!tach_dict_intern_string(d, "a", 1, &fa));
	CHECK(!tach_dict_intern_string(d, "b", 1, &fb));
	struct tach_frame f = { file, fa, 5, 5, -1, -1, TACH_NO_OPCODE };
	CHECK(!tach_dict_intern_frame(d, &f, &ids[0]));
	f.func = fb;
	f.line = 9;
	CHECK(!tach_dict_intern_frame(d, &f, &ids[1]));
	return d;
}

/* The writer's plain JSON for samples s of d (which it frees), NUL-terminated. */
static char *gecko_json(struct tach_dict *d, const struct tach_sample *s, size_t n,
			uint64_t interval, const char *level)
{
	struct tach_writer *w = tach_writer_new("gecko");
	CHECK(w != NULL);
	CHECK(!tach_writer_set_option(w, "gzip", "no"));
	if (level)
		CHECK(!tach_writer_set_option(w, "level", level));
	FILE *tmp = tmpfile();
	CHECK(!tach_writer_open_fd(w, fileno(tmp)));
	struct tach_meta m = TACH_META_INIT;
	m.start_time_us = 1000000;
	m.interval_us = interval;
	CHECK(!tach_writer_set_meta(w, &m));
	for (size_t i = 0; i < n; i++)
		CHECK_EQ_U64(tach_writer_put(w, d, &s[i]), TACH_OK);
	CHECK_EQ_U64(tach_writer_close(w), TACH_OK);
	tach_writer_free(w);
	tach_dict_free(d);
	long len = ftell(tmp);
	char *out = calloc(1, (size_t)len + 1);
	rewind(tmp);
	CHECK_EQ_U64(fread(out, 1, (size_t)len, tmp), (size_t)len);
	fclose(tmp);
	return out;
}

/* Runs samples of b inside a (depth 2), a (1) or nothing (0) through the writer, plain
 * JSON, and returns the output, NUL-terminated. */
static char *convert(const struct smp *v, size_t n, uint64_t interval, const char *level)
{
	uint32_t ids[2];
	struct tach_dict *d = two_frames(ids);
	uint32_t frames[2] = { ids[1], ids[0] }; /* b inside a */
	struct tach_sample *s = calloc(n ? n : 1, sizeof(*s));
	for (size_t i = 0; i < n; i++)
		s[i] = (struct tach_sample){ .thread_id = v[i].tid, .timestamp_us = v[i].ts,
					     .weight = v[i].weight, .status = v[i].status,
					     .depth = v[i].depth, .frames = frames + 2 - v[i].depth };
	char *out = gecko_json(d, s, n, interval, level);
	free(s);
	return out;
}

static void contains(const char *hay, const char *needle)
{
	if (!strstr(hay, needle)) {
		fprintf(stderr, "missing: %s\n", needle);
		check_failures++;
	}
}

/* A byte spool with chunks of 64 bytes: records of 1 to 40 bytes (the first byte never 0)
 * cross many chunk ends, and come back whole and in order, from the file and from memory. */
static void byte_spool(void)
{
	struct tachi_spool sp;
	struct tachi_stream s = { 0 };
	tachi_spool_init_bytes(&sp, 64);
	CHECK_EQ_U64(tachi_stream_room(&sp, &s, 65), EINVAL);
	size_t n = 0;
	for (int round = 0; round < 2; round++) {
		for (size_t i = 0; i < 500; i++) {
			size_t len = i % 40 + 1;
			CHECK_EQ_U64(tachi_stream_room(&sp, &s, len), 0);
			for (size_t k = 0; k < len; k++)
				s.buf[s.len + k] = (uint8_t)(k ? i + k : 0x80 | i % 64);
			s.len += len;
			s.total++;
		}
		CHECK(s.nchunks > 100);
		uint8_t buf[64];
		size_t got = 0, bad = 0;
		for (size_t c = 0; c <= s.nchunks; c++) {
			const uint8_t *r;
			CHECK_EQ_U64(tachi_stream_chunk(&sp, &s, c, buf, &r, &n), 0);
			for (size_t o = 0; o < n && r[o];) {
				size_t len = got % 40 + 1;
				for (size_t k = 0; k < len; k++)
					bad += o + k >= n ||
					       r[o + k] != (uint8_t)(k ? got + k : 0x80 | got % 64);
				o += len;
				got++;
			}
		}
		CHECK_EQ_U64(got, 500);
		CHECK_EQ_U64(bad, 0);
		/* a reset stream starts over (its old chunks stay in the file, unread) */
		tachi_stream_reset(&s);
		CHECK_EQ_U64(s.total, 0);
	}
	tachi_stream_free(&s);
	tachi_spool_free(&sp);
}

/* contains() for long needles: says which, not what. */
static void found(const char *hay, const char *needle, const char *what)
{
	if (!strstr(hay, needle)) {
		fprintf(stderr, "missing: %s\n", what);
		check_failures++;
	}
}

/* Appends to a growing string. */
struct sbuf {
	char *p;
	size_t len, cap;
};

static void sb_add(struct sbuf *b, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void sb_add(struct sbuf *b, const char *fmt, ...)
{
	char tmp[160];
	va_list ap;
	va_start(ap, fmt);
	int k = vsnprintf(tmp, sizeof(tmp), fmt, ap);
	va_end(ap);
	if (b->len + (size_t)k + 1 > b->cap) {
		b->cap = (b->len + (size_t)k + 1) * 2;
		b->p = realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, tmp, (size_t)k + 1);
	b->len += (size_t)k;
}

/* Threads with more records than a spool chunk holds, so records and markers go through
 * the temporary file and come back: every sample row and marker is as worked out here
 * (stacks: a;b is 1, a is 0, the empty stack null; times in whole ms of the 1 ms interval).
 * Thread 1 is in time order, with weighted records, a jump of 2^30 ms (a long varint) and a
 * run of "Has Exception" every few records; thread 2 goes back in time all along and is
 * sorted from its spooled records. */
static void spilled(void)
{
	enum { N1 = 40000, N2 = 20000 };
	struct smp *v = calloc(N1 + N2, sizeof(*v));
	struct sbuf rows = { 0 }, marks = { 0 }, rows2 = { 0 };
	const uint8_t on = TACH_STATUS_HAS_GIL | TACH_STATUS_ON_CPU;
	uint64_t t = 1001000, nsamp = 0, exc_start = 0, exc_first = 0, last = 0;
	bool exc = false;
	sb_add(&rows, "\"data\":[");
	for (size_t i = 0; i < N1; i++) {
		if (i == N1 / 2)
			t += UINT64_C(1000) << 30;
		bool x = i / 3 % 2;
		v[i] = (struct smp){ 1, t, i % 97 == 5 ? 3 : 1,
				     (uint8_t)(on | (x ? TACH_STATUS_HAS_EXCEPTION : 0)),
				     (uint32_t)(2 - i % 3) };
		for (uint64_t k = 0; k < v[i].weight; k++, nsamp++) {
			uint64_t tt = t + k * 1000;
			if (x != exc) {
				if (exc)
					sb_add(&marks, "[3,%" PRIu64 ",%" PRIu64 ",1,6,{\"type\":"
					       "\"PythonThreadState\",\"samples\":%" PRIu64 "}],",
					       exc_start, tt / 1000 - 1000, nsamp - exc_first);
				exc = x;
				exc_start = tt / 1000 - 1000;
				exc_first = nsamp;
			}
			if (v[i].depth)
				sb_add(&rows, "[%" PRIu64 ",%" PRIu64 ",0,1000],", (uint64_t)v[i].depth - 1, tt / 1000 - 1000);
			else
				sb_add(&rows, "[null,%" PRIu64 ",0,1000],", tt / 1000 - 1000);
			last = tt;
		}
		t += v[i].weight * 1000;
	}
	rows.p[rows.len - 1] = ']';
	sb_add(&rows, "}");
	sb_add(&marks, "[0,1,%" PRIu64 ",1,4,{\"type\":\"PythonThreadState\",\"samples\":%" PRIu64 "}],",
	       last / 1000 - 999, nsamp);
	sb_add(&marks, "[2,1,%" PRIu64 ",1,5,{\"type\":\"PythonThreadState\",\"samples\":%" PRIu64 "}]",
	       last / 1000 - 999, nsamp);
	if (exc)
		sb_add(&marks, ",[3,%" PRIu64 ",%" PRIu64 ",1,6,{\"type\":\"PythonThreadState\",\"samples\":%" PRIu64 "}]",
		       exc_start, last / 1000 - 999, nsamp - exc_first);
	for (size_t i = 0; i < N2; i++) {
		v[N1 + i] = (struct smp){ 2, 1001000 + 1000 * (N2 - 1 - i), 1, on, 1 };
		sb_add(&rows2, i ? ",[0,%" PRIu64 ",0,1000]" : "\"data\":[[0,%" PRIu64 ",0,1000]", (uint64_t)i + 1);
	}
	sb_add(&rows2, "]}");
	char *out = convert(v, N1 + N2, 1000, NULL);
	found(out, rows.p, "thread 1 samples");
	found(out, marks.p, "thread 1 markers");
	found(out, rows2.p, "thread 2 samples");
	contains(out, "\"tid\":2,\"registerTime\":1,");
	free(out);
	free(rows.p);
	free(rows2.p);
	free(marks.p);
	free(v);
}

/* A chain of 1005 frames, each row's prefix the row before it (the numbers counted up as
 * text past 9, 99 and 999), then a stack that leaves the chain at row 498: its row's prefix
 * is not the row before it. */
static void chain_rows(void)
{
	enum { D = 1005, B = 500 };
	uint32_t ids[2];
	struct tach_dict *d = two_frames(ids);
	static uint32_t chain[D], branch[B];
	for (uint32_t i = 0; i < D; i++) /* innermost first; from the root a, b, a, ... */
		chain[i] = ids[(D - 1 - i) % 2];
	for (uint32_t i = 0; i < B; i++)
		branch[i] = ids[(B - 1 - i) % 2];
	branch[0] = ids[0]; /* root-first position 499 would be b */
	const uint8_t on = TACH_STATUS_HAS_GIL | TACH_STATUS_ON_CPU;
	struct tach_sample s[2] = {
		{ .thread_id = 1, .timestamp_us = 1001000, .weight = 1, .status = on, .depth = D,
		  .frames = chain },
		{ .thread_id = 1, .timestamp_us = 1002000, .weight = 1, .status = on, .depth = B,
		  .frames = branch },
	};
	char *out = gecko_json(d, s, 2, 1000, NULL);
	struct sbuf want = { 0 };
	sb_add(&want, "\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[[null,0]");
	for (uint32_t k = 1; k < D; k++)
		sb_add(&want, ",[%u,%u]", k - 1, k % 2);
	sb_add(&want, ",[%u,0]]", B - 2);
	found(out, want.p, "chain stack table");
	free(want.p);
	free(out);
}

/* Native code: three mappings (prog, libfoo with a build id in upper case, libbar over
 * libfoo's end), frames with their native data, and optionally one Python frame. */
static struct tach_dict *native_dict(uint32_t ids[4], bool python)
{
	struct tach_dict *d = tach_dict_new();
	uint32_t s[10];
	static const char *const str[10] = {
		"/usr/bin/prog", "/usr/lib/libfoo.so.1", "/x/libbar.so",
		"0123456789ABCDEF0011223344556677AABBCCDD", "libfoo.so.1+0x2234", "main", "prog.c",
		"libbar.so+0x10", "run", "app.py",
	};
	for (int i = 0; i < 10; i++)
		CHECK(!tach_dict_intern_string(d, str[i], strlen(str[i]), &s[i]));
	const struct tach_mapping maps[3] = {
		{ 0x400000, 0x401000, 0, s[0], TACH_NO_STRING, TACH_MAPPING_HAS_FUNCTIONS },
		{ 0x7f0000001000, 0x7f0000005000, 0x1000, s[1], s[3], 0 },
		{ 0x7f0000004000, 0x7f0000006000, 0, s[2], TACH_NO_STRING, 0 },
	};
	uint32_t m[3];
	for (int i = 0; i < 3; i++)
		CHECK(!tach_dict_intern_mapping(d, &maps[i], &m[i]));
	/* unsymbolized in libfoo: file offset 0x7f0000002234 - 0x7f0000001000 + 0x1000 */
	struct tach_frame f = { s[1], s[4], -1, -1, -1, -1, TACH_NO_OPCODE };
	struct tach_frame_native n = { 0x7f0000002234, m[1], 0 };
	CHECK(!tach_dict_intern_frame_native(d, &f, &n, &ids[0]));
	/* symbolized, with a source line, in prog */
	f = (struct tach_frame){ s[6], s[5], 12, 12, -1, -1, TACH_NO_OPCODE };
	n = (struct tach_frame_native){ 0x400123, m[0], 0 };
	CHECK(!tach_dict_intern_frame_native(d, &f, &n, &ids[1]));
	/* unsymbolized in libbar, which overlaps libfoo and is not listed */
	f = (struct tach_frame){ s[2], s[7], -1, -1, -1, -1, TACH_NO_OPCODE };
	n = (struct tach_frame_native){ 0x7f0000004010, m[2], 0 };
	CHECK(!tach_dict_intern_frame_native(d, &f, &n, &ids[2]));
	f = (struct tach_frame){ python ? s[9] : s[6], s[8], 3, 3, -1, -1, TACH_NO_OPCODE };
	CHECK(!tach_dict_intern_frame(d, &f, &ids[3]));
	return d;
}

static char *native_json(bool python)
{
	uint32_t ids[4];
	struct tach_dict *d = native_dict(ids, python);
	const uint32_t frames[4] = { ids[0], ids[2], ids[3], ids[1] }; /* main outermost */
	struct tach_sample smp = { .thread_id = 1, .timestamp_us = 1000000, .weight = 1,
				   .depth = 4, .frames = frames };
	return gecko_json(d, &smp, 1, 1000, NULL);
}

/* The library table from the mappings (sorted by start, the overlapping one left out,
 * Breakpad and code ids from the build id) and native frames located in it; the profile
 * is named after its source, not Python, and no native frame is a script frame. */
static void native_frames(void)
{
	char *out = native_json(false);
	contains(out, "\"libs\":[{\"arch\":\"\",\"name\":\"prog\",\"path\":\"/usr/bin/prog\","
		      "\"debugName\":\"prog\",\"debugPath\":\"/usr/bin/prog\",\"breakpadId\":\"\","
		      "\"start\":4194304,\"end\":4198400,\"offset\":0},"
		      "{\"arch\":\"\",\"name\":\"libfoo.so.1\",\"path\":\"/usr/lib/libfoo.so.1\","
		      "\"debugName\":\"libfoo.so.1\",\"debugPath\":\"/usr/lib/libfoo.so.1\","
		      "\"breakpadId\":\"67452301AB89EFCD00112233445566770\","
		      "\"codeId\":\"0123456789abcdef0011223344556677aabbccdd\","
		      "\"start\":139637976731648,\"end\":139637976748032,\"offset\":4096}],");
	CHECK(!strstr(out, "libbar.so\",\"path"));
	/* TACH_META_INIT names no Python version and no source format */
	contains(out, "\"product\":\"native\"");
	contains(out, "\"processName\":\"native\"");
	CHECK(!strstr(out, "Python 3"));
	/* location strings in first-use order, root first: main, run (no mapping: its file as
	 * the library), libbar's frame (unlisted: by name), libfoo's address */
	contains(out, "\"Has Exception\",\"main (in prog) (prog.c:12)\",\"run (in prog.c) (prog.c:3)\","
		      "\"libbar.so+0x10 (in libbar.so)\",\"0x7f0000002234\"]");
	/* no frame is relevant for JS; all Native (2) */
	contains(out, "\"data\":[[4,false,null,null,12,null,2,0],[5,false,null,null,3,null,2,0],"
		      "[6,false,null,null,null,null,2,0],[7,false,null,null,null,null,2,0]]");
	free(out);

	/* One Python frame makes the profile Python's: it is a script frame; the frames with
	 * a mapping stay native. */
	out = native_json(true);
	contains(out, "\"product\":\"Python\"");
	contains(out, "\"Has Exception\",\"main (in prog) (prog.c:12)\",\"run (app.py:3)\","
		      "\"libbar.so+0x10 (in libbar.so)\",\"0x7f0000002234\"]");
	contains(out, "[5,false,null,null,3,null,1,0]");
	free(out);
}

int main(void)
{
	/* ms: exact, shortest, no exponent, no locale */
	ms(false, 0, "0");
	ms(true, 0, "0");
	ms(false, 1, "0.001");
	ms(false, 10, "0.01");
	ms(false, 100, "0.1");
	ms(false, 120, "0.12");
	ms(false, 1000, "1");
	ms(false, 1500, "1.5");
	ms(false, 1234567, "1234.567");
	ms(false, 1000050, "1000.05");
	ms(true, 1, "-0.001");
	ms(true, 2500, "-2.5");
	ms(false, UINT64_MAX, "18446744073709551.615");

	/* escaping */
	esc("plain ascii", 11, "plain ascii", false);
	esc("q\"b\\s/", 6, "q\\\"b\\\\s/", false);
	esc("\n\r\t\b\f", 5, "\\n\\r\\t\\b\\f", false);
	esc("\x01\x1f\x7f", 3, "\\u0001\\u001f\x7f", false);
	esc("a\0b", 3, "a\\u0000b", false);
	esc("\xC3\xA9\xE7\x94\xA8\xF0\x9F\x90\x8D", 9, "\xC3\xA9\xE7\x94\xA8\xF0\x9F\x90\x8D", false);
	esc("\xFF", 1, "\xEF\xBF\xBD", true);
	esc("f\xE2\x82", 3, "f\xEF\xBF\xBD\xEF\xBF\xBD", true);          /* cut sequence */
	esc("\xE2\x82x", 3, "\xEF\xBF\xBD\xEF\xBF\xBDx", true);
	esc("\xC0\x80", 2, "\xEF\xBF\xBD\xEF\xBF\xBD", true);             /* overlong */
	esc("\xED\xA0\x80", 3, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", true); /* surrogate */
	esc("\xF4\x90\x80\x80", 4, "\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD\xEF\xBF\xBD", true);
	esc("\x80\"", 2, "\xEF\xBF\xBD\\\"", true);
	esc("", 0, "", false);

	/* A weight-3 sample is three samples one interval apart; a later sample that would go
	 * back in time is written at the last time instead. */
	const struct smp weighted[] = {
		{ 1, 1001000, 3, TACH_STATUS_HAS_GIL | TACH_STATUS_ON_CPU, 2 },
		{ 1, 1002000, 1, TACH_STATUS_ON_CPU, 1 },
		{ 1, 1005000, 1, 0, 0 },
	};
	char *out = convert(weighted, 3, 1000, NULL);
	contains(out, "\"data\":[[1,1,0,1000],[1,2,0,1000],[1,3,0,1000],[2,3,0,0],[null,5,0,0]]");
	contains(out, "\"threadCPUDelta\":3}");
	contains(out, "\"stringTable\":[\"Has GIL\",\"Waiting for GIL\",\"On CPU\",\"Has Exception\","
		      "\"a (m.py:5)\",\"b (m.py:9)\"]");
	/* a runs 3 samples with the GIL, then 1 without: GIL marker 1-3 ms, CPU 1-5 ms */
	contains(out, "[0,1,3,1,4,{\"type\":\"PythonThreadState\",\"samples\":3}]");
	contains(out, "[2,1,5,1,5,{\"type\":\"PythonThreadState\",\"samples\":4}]");
	contains(out, "\"startTime\":1000,");
	char *again = convert(weighted, 3, 1000, "1");
	CHECK_EQ_STR(again, out);
	free(again);
	free(out);

	/* Out of order: sorted stably by time. */
	const struct smp unordered[] = {
		{ 4, 1003000, 1, TACH_STATUS_HAS_GIL, 2 },
		{ 4, 1001000, 1, TACH_STATUS_HAS_GIL, 1 },
		{ 4, 1001000, 1, TACH_STATUS_HAS_GIL, 2 },
	};
	out = convert(unordered, 3, 1000, NULL);
	contains(out, "\"data\":[[0,1,0,0],[1,1,0,0],[1,3,0,0]]");
	free(out);

	/* No sample records a state: leaf frames stay Python, no CPU column. An unknown
	 * interval is declared as 1 ms, and weighted samples stay at one time. */
	const struct smp stateless[] = {
		{ 9, 999000, 2, 0, 2 },
	};
	out = convert(stateless, 1, 0, NULL);
	contains(out, "\"interval\":1,");
	contains(out, "\"schema\":{\"stack\":0,\"time\":1,\"eventDelay\":2},\"data\":[[1,-1,0],[1,-1,0]]");
	CHECK(!strstr(out, "threadCPUDelta"));
	contains(out, "[[4,false,null,null,5,null,1,0],[5,false,null,null,9,null,1,0]]");
	free(out);

	byte_spool();
	spilled();
	chain_rows();
	native_frames();

	/* Options. */
	struct tach_writer *w = tach_writer_new("gecko");
	CHECK_EQ_U64(tach_writer_set_option(w, "level", "0"), (uint64_t)TACH_E_USAGE);
	CHECK_EQ_U64(tach_writer_set_option(w, "gzip", "maybe"), (uint64_t)TACH_E_USAGE);
	tach_writer_free(w);
	w = tach_writer_new("gecko");
	CHECK_EQ_U64(tach_writer_set_option(w, "nope", "1"), (uint64_t)TACH_E_USAGE);
	tach_writer_free(w);
	int can_read = 1, can_write = 0;
	bool found = false;
	for (size_t i = 0; tach_format_name(i, &can_read, &can_write); i++)
		if (!strcmp(tach_format_name(i, NULL, NULL), "gecko")) {
			found = true;
			CHECK(can_read && can_write);
		}
	CHECK(found);
	return CHECK_DONE();
}
