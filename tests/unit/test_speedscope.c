/* The speedscope reader: its probe on whole files and on first bytes, thread ids from
 * profile names, evented profiles, the interval, and hostile values refused where they
 * are; the writer's file names for native frames. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/dict.h"
#include "core/handles.h"
#include "core/formats.h"

#define SCHEMA "\"$schema\":\"https://www.speedscope.app/file-format-schema.json\""
#define FRAMES "\"shared\":{\"frames\":[{\"name\":\"a\"},{\"name\":\"b\",\"file\":\"b.py\",\"line\":7}]}"

static bool probe(const char *s)
{
	return tachi_fmt_speedscope.probe((const uint8_t *)s, strlen(s));
}

static void test_probe(void)
{
	CHECK(probe("{" SCHEMA ",\"profiles\":[]}"));
	CHECK(probe(" \n{" SCHEMA));  /* the first bytes only */
	CHECK(probe("{\"exporter\":\"x\",\"name\":\"p\"," SCHEMA ",\"shared\":"));
	CHECK(probe("{\"$schema\":\"https:\\/\\/www.speedscope.app\\/file-format-schema.json\"}"));
	CHECK(probe("{\"profiles\":[]," FRAMES "}"));
	CHECK(probe("\xef\xbb\xbf{" SCHEMA "}"));
	CHECK(!probe("{\"$schema\":\"http://json-schema.org/draft-07/schema#\",\"shared\":1,\"profiles\":2}"));
	CHECK(!probe("{\"profiles\":["));         /* cut before "shared" is seen */
	CHECK(!probe("{\"meta\":{\"version\":24},\"threads\":[],\"shared\":{}}"));
	CHECK(!probe("[{" SCHEMA "}]"));
	CHECK(!probe("tid:1;a 1\n"));
	CHECK(!probe(""));
	CHECK(!probe("{\"a\":{\"shared\":1,\"profiles\":2}}"));
}

struct result {
	int rc;
	char text[4096]; /* "tid iid ts weight|frame;frame" per sample, innermost first */
	char err[512];
	uint64_t pos;
	uint64_t interval;
};

static void append(struct result *res, const char *s)
{
	size_t n = strlen(res->text);
	snprintf(res->text + n, sizeof(res->text) - n, "%s", s);
}

static struct result run(const char *json, const char *opt, const char *val)
{
	struct result res = { 0 };
	struct tach_reader *r = tach_reader_new("speedscope");
	CHECK(r != NULL);
	if (opt)
		CHECK(tach_reader_set_option(r, opt, val) == TACH_OK);
	const struct tach_sample *s;
	res.rc = tach_reader_open_mem(r, json, strlen(json));
	while (!res.rc && !(res.rc = tach_reader_next(r, &s))) {
		char line[256];
		snprintf(line, sizeof(line), "%llu %u %llu %llu|", (unsigned long long)s->thread_id,
			 s->interp_id, (unsigned long long)s->timestamp_us,
			 (unsigned long long)s->weight);
		append(&res, line);
		const struct tach_dict *d = tach_reader_dict(r);
		for (uint32_t i = 0; i < s->depth; i++) {
			size_t n;
			const struct tach_frame *f = tach_dict_frame(d, s->frames[i]);
			snprintf(line, sizeof(line), "%s%s:%s:%d", i ? ";" : "",
				 tach_dict_string(d, f->file, &n), tach_dict_string(d, f->func, &n), f->line);
			append(&res, line);
		}
		append(&res, "\n");
	}
	int kind;
	const char *msg = tach_reader_error(r, &kind, &res.pos);
	if (msg)
		snprintf(res.err, sizeof(res.err), "%s", msg);
	res.interval = tach_reader_meta(r)->interval_us;
	tach_reader_free(r);
	return res;
}

static void expect(const char *json, const char *want)
{
	struct result res = run(json, NULL, NULL);
	if (res.rc != TACH_EOF || strcmp(res.text, want))
		fprintf(stderr, "rc %d err %s\ngot:\n%swanted:\n%s", res.rc, res.err, res.text, want);
	CHECK(res.rc == TACH_EOF && !strcmp(res.text, want));
}

#define SAMPLED(name, unit, start, samples, weights)                                    \
	"{\"type\":\"sampled\",\"name\":\"" name "\",\"unit\":\"" unit "\",\"startValue\":" \
	start ",\"endValue\":0,\"samples\":" samples ",\"weights\":" weights "}"

static void test_threads(void)
{
	expect("{" SCHEMA "," FRAMES ",\"profiles\":["
	       SAMPLED("Thread 4242 \\\"MainThread\\\"", "none", "0", "[[0,1]]", "[1]") ","
	       SAMPLED("Thread 0x7F00AB \\\"w\\\"", "none", "0", "[[0]]", "[2]") ","
	       SAMPLED("Process 77 Thread 5 \\\"x\\\"", "none", "0", "[[0]]", "[1]") ","
	       SAMPLED("Wall time profile for 123:0:7f1e", "none", "0", "[[0]]", "[1]") ","
	       SAMPLED("Wall time profile for 123:456", "none", "0", "[[0]]", "[1]") ","
	       SAMPLED("something else", "none", "0", "[[1]]", "[1]") "]}",
	       "4242 0 0 1|b.py:b:7;~:a:-1\n"
	       "8323243 0 0 2|~:a:-1\n"
	       "5 77 0 1|~:a:-1\n"
	       "32542 0 0 1|~:a:-1\n"
	       "456 123 0 1|~:a:-1\n"
	       "5 0 0 1|b.py:b:7\n");
}

static void test_time(void)
{
	/* seconds as py-spy writes them: a common divisor of 10 ms */
	struct result res = run("{" FRAMES ",\"profiles\":["
				SAMPLED("p", "seconds", "1.5", "[[0],[0,1],[1]]", "[0.01,0.02,0]") "]}",
				NULL, NULL);
	CHECK(res.rc == TACH_EOF && res.interval == 10000);
	/* a time weight is one sample of that time, never samples of the interval */
	CHECK_EQ_STR(res.text, "0 0 1500000 1|~:a:-1\n0 0 1510000 1|b.py:b:7;~:a:-1\n");
	/* the interval option: the interval recorded; each sample still one */
	res = run("{" FRAMES ",\"profiles\":[" SAMPLED("p", "milliseconds", "0", "[[0],[1]]",
						       "[2.4,0.1]") "]}", "interval", "1000");
	CHECK_EQ_STR(res.text, "0 0 0 1|~:a:-1\n0 0 2400 1|b.py:b:7\n");
	/* counts: timestamps at value * interval */
	res = run("{" FRAMES ",\"profiles\":[" SAMPLED("p", "bytes", "2", "[[0],[1]]",
						       "[3,1]") "]}", NULL, NULL);
	CHECK(res.interval == 1000);
	CHECK_EQ_STR(res.text, "0 0 2000 3|~:a:-1\n0 0 5000 1|b.py:b:7\n");
}

static void test_evented(void)
{
	/* a(0..10) { b(2..5) }, an idle gap, a(12..13) */
	expect("{" FRAMES ",\"profiles\":[{\"type\":\"evented\",\"name\":\"e\",\"unit\":"
	       "\"microseconds\",\"startValue\":0,\"endValue\":13,\"events\":["
	       "{\"type\":\"O\",\"frame\":0,\"at\":0},{\"type\":\"O\",\"frame\":1,\"at\":2},"
	       "{\"type\":\"C\",\"frame\":1,\"at\":5},{\"type\":\"C\",\"frame\":0,\"at\":10},"
	       "{\"at\":12,\"type\":\"O\",\"frame\":0,\"x\":[1]},{\"type\":\"C\",\"frame\":0,\"at\":13}]}]}",
	       "0 0 0 1|~:a:-1\n0 0 2 1|b.py:b:7;~:a:-1\n0 0 5 1|~:a:-1\n0 0 12 1|~:a:-1\n");
}

static void refused(const char *json, int code, uint64_t pos, const char *words)
{
	struct result res = run(json, NULL, NULL);
	if (res.rc != code || res.pos != pos || !strstr(res.err, words))
		fprintf(stderr, "rc %d at %llu: %s (wanted %d at %llu: %s)\n", res.rc,
			(unsigned long long)res.pos, res.err, code, (unsigned long long)pos, words);
	CHECK(res.rc == code && res.pos == pos && strstr(res.err, words));
}

static void test_refused(void)
{
	/* offsets are from the start of the first profile */
	const char *head = "{" FRAMES ",\"profiles\":[";
	size_t h = strlen(head);
	char buf[1024];
#define REFUSE(tail, code, off, words)                                                   \
	do {                                                                             \
		snprintf(buf, sizeof(buf), "%s%s", head, tail);                          \
		refused(buf, code, h + (off), words);                                    \
	} while (0)
	REFUSE("{\"type\":\"sampled\",\"unit\":\"none\",\"samples\":[[2]],\"weights\":[1]}]}",
	       TACH_E_FORMAT, 44, "not an index");
	REFUSE("{\"type\":\"sampled\",\"unit\":\"none\",\"samples\":[[-1]],\"weights\":[1]}]}",
	       TACH_E_FORMAT, 44, "not an index");
	REFUSE("{\"type\":\"sampled\",\"unit\":\"none\",\"samples\":[[0.5]],\"weights\":[1]}]}",
	       TACH_E_FORMAT, 44, "not an index");
	REFUSE("{\"type\":\"sampled\",\"unit\":\"none\",\"samples\":[[0]],\"weights\":[-1]}]}",
	       TACH_E_FORMAT, 59, "negative weight");
	REFUSE("{\"type\":\"sampled\",\"unit\":\"none\",\"samples\":[[0]],\"weights\":[1e999]}]}",
	       TACH_E_FORMAT, 59, "out of range");
	REFUSE("{\"type\":\"sampled\",\"unit\":\"none\",\"samples\":[[0],[0]],\"weights\":[1]}]}",
	       TACH_E_FORMAT, 64, "differ in length");
	REFUSE("{\"type\":\"sampled\",\"unit\":\"weeks\",\"samples\":[],\"weights\":[]}]}",
	       TACH_E_FORMAT, 25, "unit must be");
	REFUSE("{\"type\":\"evented\",\"unit\":\"none\",\"events\":[{\"type\":\"C\",\"frame\":0,\"at\":0}]}]}",
	       TACH_E_FORMAT, 42, "no frame open");
	REFUSE("{\"type\":\"evented\",\"unit\":\"none\",\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":0}]}]}",
	       TACH_E_FORMAT, 71, "still open");
	REFUSE("{\"type\":\"evented\",\"unit\":\"none\",\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":5},"
	       "{\"type\":\"C\",\"frame\":0,\"at\":4}]}]}", TACH_E_FORMAT, 72, "before the previous");
	REFUSE("{\"type\":\"evented\",\"unit\":\"none\",\"events\":[{\"type\":\"O\",\"frame\":0,\"at\":5},"
	       "{\"type\":\"C\",\"frame\":1,\"at\":6}]}]}", TACH_E_FORMAT, 72, "innermost");
	REFUSE("{\"type\":\"sampled\",\"unit\":\"seconds\",\"startValue\":-1,\"samples\":[[0]],"
	       "\"weights\":[1]}]}", TACH_E_FORMAT, 62, "negative time");
	refused("{\"shared\":{},\"profiles\":[]}", TACH_E_FORMAT, 10, "no \"frames\"");
	refused("[1]", TACH_E_FORMAT, 0, "expected a JSON object");
	refused("{\"$schema\":\"x\",\"shared\":{\"frames\":[]},\"profiles\":[]}", TACH_E_FORMAT, 11,
		"$schema");
	/* a deep stack against max-depth */
	struct tach_reader *r = tach_reader_new("speedscope");
	CHECK(tach_reader_set_option(r, "max-depth", "2") == TACH_OK);
	snprintf(buf, sizeof(buf), "%s%s", head, "{\"type\":\"sampled\",\"unit\":\"none\","
		 "\"samples\":[[0,1,0]],\"weights\":[1]}]}");
	CHECK(tach_reader_open_mem(r, buf, strlen(buf)) == TACH_E_LIMIT);
	tach_reader_free(r);
}

/* The writer: a native frame without a file takes its mapping's file; one with its own
 * source file keeps it; a frame without native data keeps its (empty) file. */
static void test_native_files(void)
{
	struct tach_dict *d = tach_dict_new();
	uint32_t lib, foo, main_, prog, bare, empty;
	CHECK(!tach_dict_intern_string(d, "/usr/lib/libfoo.so.1", 20, &lib));
	CHECK(!tach_dict_intern_string(d, "foo", 3, &foo));
	CHECK(!tach_dict_intern_string(d, "main", 4, &main_));
	CHECK(!tach_dict_intern_string(d, "prog.c", 6, &prog));
	CHECK(!tach_dict_intern_string(d, "bare", 4, &bare));
	CHECK(!tach_dict_intern_string(d, "", 0, &empty));
	struct tach_mapping m = { 0x1000, 0x2000, 0, lib, TACH_NO_STRING, 0 };
	uint32_t mid, ids[3];
	CHECK(!tach_dict_intern_mapping(d, &m, &mid));
	struct tach_frame f = { empty, foo, -1, -1, -1, -1, TACH_NO_OPCODE };
	struct tach_frame_native n = { 0x1234, mid, 0 };
	CHECK(!tach_dict_intern_frame_native(d, &f, &n, &ids[0]));
	f = (struct tach_frame){ prog, main_, 12, 12, -1, -1, TACH_NO_OPCODE };
	n.address = 0x1100;
	CHECK(!tach_dict_intern_frame_native(d, &f, &n, &ids[1]));
	f = (struct tach_frame){ empty, bare, -1, -1, -1, -1, TACH_NO_OPCODE };
	CHECK(!tach_dict_intern_frame(d, &f, &ids[2]));
	struct tach_writer *w = tach_writer_new("speedscope");
	FILE *tmp = tmpfile();
	CHECK(w && tmp && !tach_writer_open_fd(w, fileno(tmp)));
	struct tach_meta meta = TACH_META_INIT;
	CHECK(!tach_writer_set_meta(w, &meta));
	struct tach_sample smp = { .thread_id = 1, .weight = 1, .depth = 3, .frames = ids };
	CHECK_EQ_U64(tach_writer_put(w, d, &smp), TACH_OK);
	CHECK_EQ_U64(tach_writer_close(w), TACH_OK);
	tach_writer_free(w);
	char out[4096] = { 0 };
	rewind(tmp);
	CHECK(fread(out, 1, sizeof(out) - 1, tmp) > 0);
	fclose(tmp);
	tach_dict_free(d);
	/* frames in the order the sample lists them, innermost first */
	if (!strstr(out, "\"frames\":[{\"name\":\"foo\",\"file\":\"/usr/lib/libfoo.so.1\"},"
			 "{\"name\":\"main\",\"file\":\"prog.c\",\"line\":12},"
			 "{\"name\":\"bare\",\"file\":\"\"}]")) {
		fprintf(stderr, "speedscope frames: %s\n", out);
		check_failures++;
	}
}

int main(void)
{
	test_probe();
	test_threads();
	test_time();
	test_evented();
	test_refused();
	test_native_files();
	return CHECK_DONE();
}
