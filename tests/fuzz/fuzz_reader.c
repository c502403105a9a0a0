/* One fuzz target per reader: FUZZ_FORMAT names the format, FUZZ_OPTIONS optional
 * "key=value,key=value" reader options. Reads every sample and touches every frame, so a
 * bad index or length shows up under the sanitizers. */
#include <stdlib.h>
#include <string.h>

#include "tachfmt.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

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
	if (tach_reader_open_mem(r, data, size) == TACH_OK) {
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
		}
	}
	int kind;
	uint64_t pos;
	const char *msg = tach_reader_error(r, &kind, &pos);
	if (msg && !msg[0])
		abort(); /* every failure must say what is wrong */
	tach_reader_free(r);
	return (int)(sink & 0);
}
