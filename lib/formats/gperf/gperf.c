/* gperftools' CPU profiles (the legacy binary format): its table row and probe; the
 * reader is read.c. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "core/format.h"
#include "core/formats.h"
#include "formats/gperf/gperf.h"

/* The header's first words, 0 3 0 (0 3 1: the Java variant, which the reader refuses
 * by name), under each word size and byte order the reader takes. */
/* The word of slot bytes at p, in the given byte order. */
static uint64_t word_at(const uint8_t *p, unsigned slot, bool big)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < slot; i++)
		v |= (uint64_t)p[big ? slot - 1 - i : i] << (8 * i);
	return v;
}

static bool gperf_probe(const uint8_t *p, size_t n)
{
	static const struct { unsigned slot; bool big; } tries[4] = {
		{ 4, false }, { 4, true }, { 8, false }, { 8, true },
	};
	for (int i = 0; i < 4; i++) {
		unsigned w = tries[i].slot;
		bool big = tries[i].big;
		if (n >= 3 * (size_t)w && word_at(p, w, big) == 0 && word_at(p + w, w, big) == 3 &&
		    word_at(p + 2 * w, w, big) <= 1)
			return true;
	}
	return false;
}

const struct tachi_format tachi_fmt_gperf = {
	.name = "gperf",
	.reader = &tachi_gperf_reader_ops,
	.probe = gperf_probe,
};
