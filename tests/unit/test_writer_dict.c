/* Every writer refuses samples from a second dict, in the one place that checks it
 * (tach_writer_put and tach_writer_put_ext), and takes any number of samples from the
 * first, however it grows. */
#include <fcntl.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tachfmt.h"

/* A dict holding one frame, m.py:f:1, as ids[0]. */
static struct tach_dict *one_frame(uint32_t *id)
{
	struct tach_dict *d = tach_dict_new();
	uint32_t file, func;
	CHECK(d != NULL);
	CHECK(!tach_dict_intern_string(d, "m.py", 4, &file));
	CHECK(!tach_dict_intern_string(d, "f", 1, &func));
	struct tach_frame f = { file, func, 1, 1, -1, -1, TACH_NO_OPCODE };
	CHECK(!tach_dict_intern_frame(d, &f, id));
	return d;
}

static void second_dict_refused(const char *format, bool ext)
{
	uint32_t a, b;
	struct tach_dict *da = one_frame(&a), *db = one_frame(&b);
	struct tach_writer *w = tach_writer_new(format);
	CHECK(w != NULL);
	int fd = open("/dev/null", O_WRONLY);
	struct tach_meta m = TACH_META_INIT;
	m.interval_us = 1000;
	CHECK(!tach_writer_open_fd(w, fd));
	CHECK(!tach_writer_set_meta(w, &m));
	struct tach_sample s = { .thread_id = 1, .timestamp_us = 1000, .weight = 1, .depth = 1,
				 .frames = &a };
	struct tach_sample_ext x = TACH_SAMPLE_EXT_INIT;
	int64_t v = 1;
	x.value_count = 1;
	x.values = &v;
	CHECK_EQ_U64(ext ? tach_writer_put_ext(w, da, &s, &x) : tach_writer_put(w, da, &s), 0);
	s.timestamp_us += 1000;
	CHECK_EQ_U64(tach_writer_put(w, da, &s), 0);
	s.frames = &b;
	s.timestamp_us += 1000;
	int rc = ext ? tach_writer_put_ext(w, db, &s, &x) : tach_writer_put(w, db, &s);
	CHECK_EQ_U64(rc, TACH_E_USAGE);
	const char *msg = tach_writer_error(w);
	CHECK(msg && strstr(msg, "samples from more than one dict"));
	if (!(msg && strstr(msg, "samples from more than one dict")))
		fprintf(stderr, "%s%s: %s\n", format, ext ? " (ext)" : "", msg ? msg : "(none)");
	tach_writer_free(w);
	close(fd);
	tach_dict_free(da);
	tach_dict_free(db);
}

int main(void)
{
	int can_write = 0;
	size_t n = 0;
	const char *name;
	for (size_t i = 0; (name = tach_format_name(i, NULL, &can_write)); i++) {
		if (!can_write)
			continue;
		second_dict_refused(name, false);
		second_dict_refused(name, true);
		n++;
	}
	CHECK(n >= 10);
	return CHECK_DONE();
}
