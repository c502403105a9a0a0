/* The sampler writer and reader through the library API: weights become that many records,
 * thread ids survive through the Thread_XXXX symbols, empty stacks are counted and dropped,
 * output is deterministic, and the reader's options and timestamps. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "model/dict.h"
#include "core/handles.h"

struct warns {
	int n;
	char last[512];
};

static void on_warn(void *ctx, const char *msg, int kind, uint64_t pos)
{
	struct warns *w = ctx;
	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
}

static uint32_t frame(struct tach_dict *d, const char *file, const char *func, int32_t line)
{
	struct tach_frame f = { 0, 0, line, line, -1, -1, TACH_NO_OPCODE };
	uint32_t id;
	CHECK(tach_dict_intern_string(d, file, strlen(file), &f.file) == TACH_OK);
	CHECK(tach_dict_intern_string(d, func, strlen(func), &f.func) == TACH_OK);
	CHECK(tach_dict_intern_frame(d, &f, &id) == TACH_OK);
	return id;
}

/* Writes the samples with the sampler writer; returns the bytes (malloc'd). */
static uint8_t *write_sampler(struct tach_dict *d, const struct tach_sample *s, size_t n,
			      size_t *len, struct warns *wn)
{
	FILE *tmp = tmpfile();
	struct tach_writer *w = tach_writer_new("sampler");
	CHECK(w != NULL);
	tach_writer_set_warn(w, on_warn, wn);
	struct tach_meta m = TACH_META_INIT;
	CHECK(tach_writer_open_fd(w, fileno(tmp)) == TACH_OK);
	CHECK(tach_writer_set_meta(w, &m) == TACH_OK);
	for (size_t i = 0; i < n; i++)
		CHECK(tach_writer_put(w, d, &s[i]) == TACH_OK);
	CHECK(tach_writer_close(w) == TACH_OK);
	tach_writer_free(w);
	long size = ftell(tmp);
	uint8_t *buf = malloc((size_t)size + 1);
	rewind(tmp);
	CHECK(fread(buf, 1, (size_t)size, tmp) == (size_t)size);
	fclose(tmp);
	*len = (size_t)size;
	return buf;
}

static const char *func_of(const struct tach_reader *r, uint32_t fid)
{
	const struct tach_dict *d = tach_reader_dict(r);
	size_t len;
	return tach_dict_string(d, tach_dict_frame(d, fid)->func, &len);
}

static void test_roundtrip(void)
{
	struct tach_dict *d = tach_dict_new();
	uint32_t f0 = frame(d, "a.py", "outer", 1);
	uint32_t f1 = frame(d, "a.py", "inner", 2);
	uint32_t f2 = frame(d, "b.py", "other", -1);
	uint32_t st01[] = { f1, f0 }, st2[] = { f2 };
	struct tach_sample s[] = {
		{ .thread_id = 7, .interp_id = 1, .weight = 3, .depth = 2, .frames = st01 },
		{ .thread_id = UINT64_MAX, .interp_id = 5, .weight = 2, .depth = 1, .frames = st2 },
		{ .thread_id = 7, .interp_id = 1, .weight = 1, .depth = 2, .same_outer = 2, .frames = st01 },
		{ .thread_id = 9, .weight = 4, .depth = 0, .frames = NULL },
	};
	struct warns wn = { 0 };
	size_t len, len2;
	uint8_t *out = write_sampler(d, s, 4, &len, &wn);
	CHECK(wn.n == 1);
	CHECK(strstr(wn.last, "4 samples with an empty stack") != NULL);
	static const char head[] = "@supersamplerV1.0\n@symboltableV1.1\n\t\0\0\x21\x22\t\0\0\0\0\t"
				   "Thread_2122\tThread_2122\ttachfmt:tid=7:iid=1\n";
	CHECK(len > sizeof(head) && !memcmp(out, head, sizeof(head) - 1));
	CHECK(len > 5 && !memcmp(out + len - 5, "@end\n", 5));
	struct warns wn2 = { 0 };
	uint8_t *again = write_sampler(d, s, 4, &len2, &wn2);
	CHECK(len == len2 && !memcmp(out, again, len));
	free(again);

	struct tach_reader *r = tach_reader_new("sampler");
	CHECK(tach_reader_set_option(r, "interval", "250") == TACH_OK);
	CHECK(tach_reader_open_mem(r, out, len) == TACH_OK);
	const struct tach_sample *got;
	uint64_t n7 = 0, nmax = 0;
	while (tach_reader_next(r, &got) == TACH_OK) {
		CHECK(got->weight == 1);
		if (got->thread_id == 7) {
			CHECK(got->interp_id == 1);
			CHECK(got->depth == 2);
			CHECK_EQ_U64(got->timestamp_us, n7 * 250);
			CHECK_EQ_STR(func_of(r, got->frames[0]), "inner");
			CHECK_EQ_STR(func_of(r, got->frames[1]), "outer");
			n7++;
		} else {
			CHECK(got->thread_id == UINT64_MAX);
			CHECK(got->interp_id == 5);
			CHECK_EQ_U64(got->timestamp_us, nmax * 250);
			CHECK(got->depth == 1);
			const struct tach_frame *f = tach_dict_frame(tach_reader_dict(r), got->frames[0]);
			CHECK(f && f->line == -1);
			nmax++;
		}
	}
	CHECK(tach_reader_error(r, NULL, NULL) == NULL);
	CHECK_EQ_U64(n7, 4);
	CHECK_EQ_U64(nmax, 2);
	CHECK_EQ_U64(tach_reader_meta(r)->interval_us, 250);
	CHECK_EQ_STR(tach_reader_meta(r)->source_format, "sampler");
	tach_reader_free(r);
	free(out);
	tach_dict_free(d);
}

static void test_options(void)
{
	struct tach_reader *r = tach_reader_new("sampler");
	CHECK(tach_reader_set_option(r, "interval", "0") == TACH_E_USAGE);
	tach_reader_free(r);
	r = tach_reader_new("sampler");
	CHECK(tach_reader_set_option(r, "interval", "x") == TACH_E_USAGE);
	tach_reader_free(r);
	r = tach_reader_new("sampler");
	CHECK(tach_reader_set_option(r, "nope", "1") == TACH_E_USAGE);
	tach_reader_free(r);
	struct tach_writer *w = tach_writer_new("sampler");
	CHECK(tach_writer_set_option(w, "level", "3") == TACH_E_USAGE);
	tach_writer_free(w);
	int cr = 0, cw = 0;
	bool found = false;
	for (size_t i = 0; tach_format_name(i, NULL, NULL); i++)
		if (!strcmp(tach_format_name(i, &cr, &cw), "sampler"))
			found = cr && cw;
	CHECK(found);
}

/* Default interval, and the empty input the writer makes when nothing has frames. */
static void test_empty(void)
{
	struct tach_dict *d = tach_dict_new();
	struct warns wn = { 0 };
	size_t len;
	uint8_t *out = write_sampler(d, NULL, 0, &len, &wn);
	static const char want[] = "@supersamplerV1.0\n@symboltableV1.1\n@end\n@end\n";
	CHECK(len == sizeof(want) - 1 && !memcmp(out, want, len));
	struct tach_reader *r = tach_reader_new("sampler");
	struct warns rw = { 0 };
	tach_reader_set_warn(r, on_warn, &rw);
	CHECK(tach_reader_open_mem(r, out, len) == TACH_OK);
	const struct tach_sample *s;
	CHECK(tach_reader_next(r, &s) == TACH_EOF);
	CHECK(rw.n == 0);
	CHECK_EQ_U64(tach_reader_meta(r)->interval_us, 1000);
	tach_reader_free(r);
	free(out);
	tach_dict_free(d);
}

int main(void)
{
	test_roundtrip();
	test_options();
	test_empty();
	return CHECK_DONE();
}
