/* The conversion target: one input through every reader that accepts it into every writer,
 * each writer with an option set picked by the input's first byte. Writers see what readers
 * hand out, so what a reader lets through that a writer cannot take (a bad id, an empty
 * label, an extreme count) shows up here under the sanitizers. Output goes to a memory
 * file, seekable like a regular file, so the TACH writer's seek-back path runs too. */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE
#endif
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tachfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

struct opt {
	const char *key, *a, *b; /* the option takes value a or b, by one bit of the selector */
};

struct wcfg {
	const char *format;
	struct opt opts[3];
};

static const char *const readers[][2] = {
	{ "tach", NULL },
	{ "samples", NULL },
	{ "collapsed", NULL },
	{ "collapsed", "diff=both" },
	{ "gperf", "symbolize=no" },
	{ "sampler", NULL },
	{ "pprof", NULL },
	{ "pprof", "zero-weight=yes" },
	{ "otlp", NULL },
	{ "speedscope", NULL },
	{ "v8", NULL },
	{ "chrome", NULL },
	{ "spans", NULL },
};

static const struct wcfg writers[] = {
	{ "tach", { { "compression", "none", "zstd" }, { "level", "1", "3" },
		    { "counts-as-samples", "no", "yes" } } },
	{ "samples", { { 0 } } },
	{ "collapsed", { { "labels", "cpython", "pyspy" }, { "full-paths", "no", "yes" },
			 { "thread-frames", "yes", "no" } } },
	{ "collapsed", { { "value", "count", "time" }, { "labels", "cpython", "perf" } } },
	{ "pprof", { { "gzip", "no", "yes" }, { "labels", "yes", "no" }, { "cpu", "auto", "yes" } } },
	{ "gecko", { { "gzip", "no", "yes" }, { "level", "1", "2" }, { "processed", "no", "yes" } } },
	{ "sampler", { { 0 } } },
	{ "flamegraph", { { "flamechart", "no", "yes" }, { "reverse", "no", "yes" },
			  { "hash", "no", "yes" } } },
	{ "flamegraph", { { "thread-frames", "yes", "no" }, { "minwidth", "0", "1%" },
			  { "colors", "java", "chain" } } },
	{ "flamegraph", { { "value", "count", "time" }, { "flamechart", "no", "yes" } } },
	{ "pstats", { { "sampled-marker", "yes", "no" } } },
	{ "speedscope", { { 0 } } },
	{ "callgrind", { { 0 } } },
	{ "otlp", { { "json", "no", "yes" }, { "timestamps", "yes", "no" }, { "cpu", "auto", "yes" } } },
};

static struct tach_reader *open_reader(size_t ri, const uint8_t *data, size_t size)
{
	struct tach_reader *r = tach_reader_new(readers[ri][0]);
	if (!r)
		abort();
	if (readers[ri][1]) {
		char kv[64];
		snprintf(kv, sizeof(kv), "%s", readers[ri][1]);
		char *eq = strchr(kv, '=');
		*eq = 0;
		tach_reader_set_option(r, kv, eq + 1);
	}
	/* Small limits keep each run fast and still reach every path. */
	tach_reader_set_option(r, "max-samples", "20000");
	tach_reader_set_option(r, "max-depth", "512");
	if (tach_reader_open_mem(r, data, size) != TACH_OK) {
		tach_reader_free(r);
		return NULL;
	}
	return r;
}

static void configure(struct tach_writer *w, const struct wcfg *c, unsigned sel)
{
	for (int i = 0; i < 3 && c->opts[i].key; i++)
		if (tach_writer_set_option(w, c->opts[i].key, sel >> i & 1 ? c->opts[i].b : c->opts[i].a))
			abort(); /* our own option sets must be valid */
}

/* Reader ri into writer wi; the output is dropped. */
static void convert(size_t ri, size_t wi, unsigned sel, const uint8_t *data, size_t size, int fd)
{
	struct tach_reader *r = open_reader(ri, data, size);
	if (!r)
		return;
	struct tach_writer *w = tach_writer_new(writers[wi].format);
	if (!w)
		abort();
	configure(w, &writers[wi], sel);
	if (ftruncate(fd, 0) || lseek(fd, 0, SEEK_SET))
		abort();
	const struct tach_sample *s;
	int rc = tach_reader_next(r, &s);
	int wrc = TACH_OK;
	if (rc >= 0 && !(wrc = tach_writer_open_fd(w, fd)) &&
	    !(wrc = tach_writer_set_meta(w, tach_reader_meta(r)))) {
		while (rc == TACH_OK && !(wrc = tach_writer_put_ext(w, tach_reader_dict(r), s,
								    tach_reader_sample_ext(r))))
			rc = tach_reader_next(r, &s);
		if (rc == TACH_EOF && !wrc)
			wrc = tach_writer_close(w);
	}
	/* A writer refuses only what the reader should have caught, and says why. */
	if (wrc) {
		const char *msg = tach_writer_error(w);
		if (!msg || !msg[0])
			abort();
		/* UNSUPPORTED: valid input the format has no place for (TACH and byte weights) */
		if (wrc != TACH_E_NOMEM && wrc != TACH_E_LIMIT && wrc != TACH_E_IO &&
		    wrc != TACH_E_UNSUPPORTED) {
			fprintf(stderr, "%s -> %s: writer refused a sample: %s\n", readers[ri][0],
				writers[wi].format, msg);
			abort();
		}
	}
	tach_writer_free(w);
	tach_reader_free(r);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1)
		return 0;
	unsigned sel = data[0];
	data++, size--;
	int fd = memfd_create("fuzz-out", MFD_CLOEXEC);
	if (fd < 0)
		abort();
	for (size_t ri = 0; ri < sizeof(readers) / sizeof(readers[0]); ri++)
		for (size_t wi = 0; wi < sizeof(writers) / sizeof(writers[0]); wi++)
			convert(ri, wi, sel, data, size, fd);
	close(fd);
	return 0;
}
