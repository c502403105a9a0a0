/* One fuzz target per reader: FUZZ_FORMAT names the format, FUZZ_OPTIONS optional
 * "key=value,key=value" reader options. Reads every sample and touches every frame, so a
 * bad index or length shows up under the sanitizers. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tachfmt.h"

/* A sample's extras: as many values as the meta names types, label strings in the dict. */
static uint64_t check_ext(const struct tach_reader *r, const struct tach_dict *d)
{
	const struct tach_sample_ext *e = tach_reader_sample_ext(r);
	const struct tach_meta *m = tach_reader_meta(r);
	if (!e)
		return 0;
	if (e->value_count && e->value_count != m->value_type_count)
		abort();
	uint64_t sink = 0;
	for (uint32_t i = 0; i < e->value_count; i++)
		sink += (uint64_t)e->values[i];
	for (uint32_t i = 0; i < e->label_count; i++) {
		const struct tach_label *l = &e->labels[i];
		size_t len;
		if (!tach_dict_string(d, l->key, &len) ||
		    (l->str != TACH_NO_STRING && !tach_dict_string(d, l->str, &len)) ||
		    (l->unit != TACH_NO_STRING && !tach_dict_string(d, l->unit, &len)))
			abort();
		sink += len;
	}
	return sink;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#ifdef FUZZ_MORE_OPTIONS
void FUZZ_MORE_OPTIONS(struct tach_reader *r);
#endif

#ifndef FUZZ_OPTIONS
#define FUZZ_OPTIONS ""
#endif

static void apply_options(struct tach_reader *r)
{
	char buf[256];
	strncpy(buf, FUZZ_OPTIONS, sizeof(buf) - 1);
	buf[sizeof(buf) - 1] = 0;
	char *save;
	for (char *kv = strtok_r(buf, ",", &save); kv; kv = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(kv, '=');
		if (!eq)
			continue;
		*eq = 0;
		tach_reader_set_option(r, kv, eq + 1);
	}
#ifdef FUZZ_MORE_OPTIONS
	/* a wrapping target's options known only at run time (fuzz_symbolize.c) */
	FUZZ_MORE_OPTIONS(r);
#endif
}

/* FUZZ_PIPE: the input through a pipe, as a program's stdin, for a reader that streams
 * what is not a file (an input larger than the pipe holds is cut to it, so that writing
 * it whole before reading cannot block). */
static int open_input(struct tach_reader *r, const uint8_t *data, size_t size, int *fd)
{
	*fd = -1;
#ifdef FUZZ_PIPE
	int p[2];
	if (pipe(p))
		abort();
	if (size > 65536)
		size = 65536;
	for (size_t done = 0; done < size;) {
		ssize_t k = write(p[1], data + done, size - done);
		if (k <= 0)
			abort();
		done += (size_t)k;
	}
	close(p[1]);
	*fd = p[0];
	return tach_reader_open_fd(r, p[0]);
#else
	return tach_reader_open_mem(r, data, size);
#endif
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct tach_reader *r = tach_reader_new(FUZZ_FORMAT);
	if (!r)
		abort();
	apply_options(r);
	/* Keep fuzzing fast: small limits still cover every code path. */
	tach_reader_set_option(r, "max-samples", "100000");
	uint64_t sink = 0;
	int fd;
	if (open_input(r, data, size, &fd) == TACH_OK) {
		const struct tach_sample *s;
		uint64_t n = 0;
		while (tach_reader_next(r, &s) == TACH_OK && n++ < 200000) {
			const struct tach_dict *d = tach_reader_dict(r);
			for (uint32_t i = 0; i < s->depth; i++) {
				const struct tach_frame *f = tach_dict_frame(d, s->frames[i]);
				if (!f)
					abort(); /* a reader must never hand out an invalid frame id */
				size_t len;
				const char *a = tach_dict_string(d, f->file, &len);
				const char *b = tach_dict_string(d, f->func, &len);
				if (!a || !b)
					abort();
				sink += (uint8_t)a[0] + (uint8_t)b[0];
			}
			sink += check_ext(r, d);
		}
	}
	int kind;
	uint64_t pos;
	const char *msg = tach_reader_error(r, &kind, &pos);
	if (msg && !msg[0])
		abort(); /* every failure must say what is wrong */
	tach_reader_free(r);
	if (fd >= 0)
		close(fd);
	return (int)(sink & 0);
}
