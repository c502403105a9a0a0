/* Native data from the gperftools and perf readers: addresses, mappings, and the module
 * and file offset names of unsymbolized frames (tachfmt(5)). */
#include <stdbool.h>
#include <stdlib.h>

#include "check.h"
#include <string.h>

#include "tachfmt.h"

static const char *str(const struct tach_dict *d, uint32_t id)
{
	return tach_dict_string(d, id, NULL);
}

static void put64(uint8_t **p, uint64_t v)
{
	memcpy(*p, &v, 8);
	*p += 8;
}

/* 64-bit profile in this machine's byte order: a two-PC stack in a mapping and a PC in none. */
static size_t gperf_profile(uint8_t *b)
{
	uint8_t *p = b;
	const uint64_t words[] = { 0, 3, 0, 1000, 0,  2, 2, 0x401010, 0x401100,
				   1, 1, 0x900000,  0, 1, 0 };
	for (size_t i = 0; i < sizeof(words) / sizeof(*words); i++)
		put64(&p, words[i]);
	static const char maps[] = "00401000-00402000 r-xp 00001000 08:01 17 /opt/bin/prog\n";
	memcpy(p, maps, sizeof(maps) - 1);
	return (size_t)(p - b) + sizeof(maps) - 1;
}

static void gperf(void)
{
	uint8_t buf[512];
	size_t n = gperf_profile(buf);
	struct tach_reader *r = tach_reader_new("gperf");
	CHECK_EQ_U64(tach_reader_set_option(r, "symbolize", "no"), TACH_OK);
	CHECK_EQ_U64(tach_reader_open_mem(r, buf, n), TACH_OK);
	const struct tach_sample *s;
	const struct tach_dict *d = tach_reader_dict(r);
	CHECK_EQ_U64(tach_reader_next(r, &s), TACH_OK);
	CHECK_EQ_U64(s->depth, 2);
	/* The leaf at its PC, the caller at its return address minus one. */
	const uint64_t addr[2] = { 0x401010, 0x4010ff };
	const char *name[2] = { "prog+0x1010", "prog+0x10ff" };
	for (uint32_t i = 0; i < 2 && s->depth == 2; i++) {
		const struct tach_frame *f = tach_dict_frame(d, s->frames[i]);
		const struct tach_frame_native *nat = tach_dict_frame_native(d, s->frames[i]);
		CHECK_EQ_STR(str(d, f->func), name[i]);
		CHECK_EQ_STR(str(d, f->file), "/opt/bin/prog");
		CHECK_EQ_U64(f->line, (uint64_t)(int64_t)TACH_NO_LINE);
		CHECK(nat != NULL);
		if (nat) {
			CHECK_EQ_U64(nat->address, addr[i]);
			CHECK_EQ_U64(nat->mapping, 1);
			CHECK_EQ_U64(nat->inlined, 0);
		}
	}
	CHECK_EQ_U64(tach_dict_mapping_count(d), 1);
	const struct tach_mapping *m = tach_dict_mapping(d, 1);
	CHECK(m != NULL);
	if (m) {
		CHECK_EQ_U64(m->start, 0x401000);
		CHECK_EQ_U64(m->limit, 0x402000);
		CHECK_EQ_U64(m->offset, 0x1000);
		CHECK_EQ_STR(str(d, m->file), "/opt/bin/prog");
		CHECK_EQ_U64(m->build_id, TACH_NO_STRING);
		CHECK_EQ_U64(m->flags, 0);  /* the file was not read */
	}
	/* In no mapping: named by its PC, as before, with the address and no mapping. */
	CHECK_EQ_U64(tach_reader_next(r, &s), TACH_OK);
	CHECK_EQ_U64(s->depth, 1);
	if (s->depth == 1) {
		const struct tach_frame *f = tach_dict_frame(d, s->frames[0]);
		const struct tach_frame_native *nat = tach_dict_frame_native(d, s->frames[0]);
		CHECK_EQ_STR(str(d, f->func), "0x900000");
		CHECK_EQ_STR(str(d, f->file), "[unknown]");
		CHECK(nat && nat->address == 0x900000 && nat->mapping == 0);
	}
	CHECK_EQ_U64(tach_reader_next(r, &s), TACH_EOF);
	CHECK_EQ_STR(tach_reader_meta(r)->program, "/opt/bin/prog");
	tach_reader_free(r);
}

static void perf(void)
{
	static const char text[] =
		"prog 12/12 1.000000: 1000000 cpu-clock:\n"
		"\t          401010 main+0x10 (/opt/bin/prog)\n"
		"\t    7f0000001000 [unknown] (/lib/libc.so.6)\n"
		"\t          401020 main+0x20 (/opt/bin/prog)\n"
		"\n";
	struct tach_reader *r = tach_reader_new("perf");
	CHECK_EQ_U64(tach_reader_open_mem(r, text, sizeof(text) - 1), TACH_OK);
	const struct tach_sample *s;
	const struct tach_dict *d = tach_reader_dict(r);
	CHECK_EQ_U64(tach_reader_next(r, &s), TACH_OK);
	CHECK_EQ_U64(s->depth, 4);  /* and the root frame naming the process */
	if (s->depth == 4) {
		const struct tach_frame_native *a = tach_dict_frame_native(d, s->frames[0]),
			*b = tach_dict_frame_native(d, s->frames[1]),
			*c = tach_dict_frame_native(d, s->frames[2]);
		CHECK_EQ_STR(str(d, tach_dict_frame(d, s->frames[0])->func), "main");
		CHECK_EQ_STR(str(d, tach_dict_frame(d, s->frames[1])->func), "0x7f0000001000");
		CHECK(a && a->address == 0x401010 && a->mapping == 1);
		CHECK(b && b->address == 0x7f0000001000 && b->mapping == 2);
		/* One function at two addresses: two frames, one mapping. */
		CHECK(s->frames[0] != s->frames[2]);
		CHECK(c && c->address == 0x401020 && c->mapping == 1);
		CHECK(tach_dict_frame_native(d, s->frames[3]) == NULL);
	}
	CHECK_EQ_U64(tach_dict_mapping_count(d), 2);
	const struct tach_mapping *m = tach_dict_mapping(d, 2);
	CHECK(m && m->start == 0 && m->limit == 0 && m->offset == 0 &&
	      m->flags == TACH_MAPPING_HAS_FUNCTIONS && m->build_id == TACH_NO_STRING);
	if (m)
		CHECK_EQ_STR(str(d, m->file), "/lib/libc.so.6");
	tach_reader_free(r);
}

/* The frames of two samples: one function at two addresses (offsets), an [unknown] at two,
 * and an inline frame; with addresses=no the function is one frame, the [unknown]s stay
 * two (their names are their addresses) unless unknown-addresses=no, and no frame has
 * native data. */
static void perf_frames(const char *addresses, const char *unknown, uint32_t want_frames,
			bool native)
{
	static const char text[] =
		"prog 7 1.000001: 1000 cpu-clock:\n"
		"\t401010 get+0x18 (inlined)\n"
		"\t401010 work+0x10 (/opt/bin/prog)\n"
		"\t7f0010 [unknown] (/opt/lib/x.so)\n\n"
		"prog 7 1.000002: 1000 cpu-clock:\n"
		"\t401020 work+0x20 (/opt/bin/prog)\n"
		"\t7f0020 [unknown] (/opt/lib/x.so)\n\n";
	struct tach_reader *r = tach_reader_new("perf");
	CHECK_EQ_U64(tach_reader_set_option(r, "addresses", addresses), TACH_OK);
	CHECK_EQ_U64(tach_reader_set_option(r, "unknown-addresses", unknown), TACH_OK);
	CHECK_EQ_U64(tach_reader_open_mem(r, text, sizeof(text) - 1), TACH_OK);
	const struct tach_sample *s;
	const struct tach_dict *d = tach_reader_dict(r);
	uint32_t depth[2] = { 0, 0 };
	for (int i = 0; i < 2; i++) {
		CHECK_EQ_U64(tach_reader_next(r, &s), TACH_OK);
		depth[i] = s->depth;
	}
	CHECK_EQ_U64(tach_reader_next(r, &s), TACH_EOF);
	CHECK_EQ_U64(depth[0], 4);
	CHECK_EQ_U64(depth[1], 3);
	/* the root, get, work (one or two), two [unknown]s */
	CHECK_EQ_U64(tach_dict_frame_count(d), want_frames);
	for (uint32_t id = 0; id < tach_dict_frame_count(d); id++) {
		const struct tach_frame *f = tach_dict_frame(d, id);
		bool root = !strcmp(str(d, f->file), "[comm]");
		CHECK_EQ_U64(tach_dict_frame_native(d, id) != NULL, native && !root);
		if (!strcmp(str(d, f->func), "get") && native)
			CHECK_EQ_U64(tach_dict_frame_native(d, id)->inlined, 1);
	}
	tach_reader_free(r);
}

int main(void)
{
	gperf();
	perf();
	perf_frames("yes", "yes", 6, true);
	perf_frames("no", "yes", 5, false);
	perf_frames("no", "no", 4, false);
	return CHECK_DONE();
}
