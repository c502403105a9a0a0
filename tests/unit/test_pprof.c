/* The pprof writer's protobuf, byte for byte, against an encoding of a tiny profile worked
 * out by hand from profile.proto's field numbers and the protobuf wire format; then what the
 * options change, gzip framing, and the failure paths. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "check.h"
#include "base/bytes.h"
#include "model/dict.h"
#include "core/handles.h"

struct outbuf {
	uint8_t *p;
	size_t n;
};

struct fixture {
	struct tach_dict *d;
	uint32_t f0, f1;
};

static void make_dict(struct fixture *fx)
{
	fx->d = tach_dict_new();
	uint32_t file, f, g;
	CHECK(!tach_dict_intern_string(fx->d, "a.py", 4, &file));
	CHECK(!tach_dict_intern_string(fx->d, "f", 1, &f));
	CHECK(!tach_dict_intern_string(fx->d, "g", 1, &g));
	struct tach_frame a = { file, f, 3, 3, 4, 5, TACH_NO_OPCODE };
	struct tach_frame b = { file, g, -1, -1, -1, -1, TACH_NO_OPCODE };
	CHECK(!tach_dict_intern_frame(fx->d, &a, &fx->f0));
	CHECK(!tach_dict_intern_frame(fx->d, &b, &fx->f1));
}

/* Runs the writer over the fixture's samples with the given options ("key=value" pairs,
 * NULL-terminated) and returns what it wrote; rc gets the first failure. */
static struct outbuf run(const struct fixture *fx, const struct tach_meta *m,
			 const struct tach_sample *ss, size_t ns, const char *const *opts, int *rc)
{
	struct outbuf o = { 0 };
	FILE *tmp = tmpfile();
	struct tach_writer *w = tach_writer_new("pprof");
	*rc = 0;
	for (size_t i = 0; opts && opts[i]; i += 2)
		if (!*rc)
			*rc = tach_writer_set_option(w, opts[i], opts[i + 1]);
	if (!*rc)
		*rc = tach_writer_open_fd(w, fileno(tmp));
	if (!*rc)
		*rc = tach_writer_set_meta(w, m);
	for (size_t i = 0; i < ns && !*rc; i++)
		*rc = tach_writer_put(w, fx->d, &ss[i]);
	if (!*rc)
		*rc = tach_writer_close(w);
	tach_writer_free(w);
	long n = ftell(tmp);
	if (n > 0) {
		o.p = malloc((size_t)n);
		o.n = (size_t)n;
		rewind(tmp);
		CHECK(fread(o.p, 1, o.n, tmp) == o.n);
	}
	fclose(tmp);
	return o;
}

static bool contains(const struct outbuf *o, const char *s)
{
	size_t n = strlen(s);
	for (size_t i = 0; i + n <= o->n; i++)
		if (!memcmp(o->p + i, s, n))
			return true;
	return false;
}

static void check_bytes(const struct outbuf *o, const uint8_t *want, size_t n, int line)
{
	if (o->n != n || memcmp(o->p, want, n)) {
		fprintf(stderr, "line %d: got %zu bytes, want %zu\n", line, o->n, n);
		for (size_t i = 0; i < o->n || i < n; i++)
			if (i >= o->n || i >= n || o->p[i] != want[i]) {
				fprintf(stderr, "  first difference at byte %zu: got %02x want %02x\n", i,
					i < o->n ? o->p[i] : 0, i < n ? want[i] : 0);
				break;
			}
		check_failures++;
	}
}

/* A two-frame stack seen twice (weight 2, then 1) on thread 5, status gil+cpu, and one
 * empty-stack sample on thread 6 in no state, a Sample without locations as pprof keeps
 * one. */
static const uint8_t expected[] = {
	/* sample_type: {samples, count}, {wall, nanoseconds} */
	0x0a, 0x04, 0x08, 0x01, 0x10, 0x02,
	0x0a, 0x04, 0x08, 0x03, 0x10, 0x04,
	/* sample: location_id [1, 2] (leaf first), value [3, 6000000],
	 * labels thread id = 5, thread state = "gil+cpu" (no interpreter id: every sample's
	 * is 0, a label that tells nothing) */
	0x12, 0x17,
	0x0a, 0x02, 0x01, 0x02,
	0x12, 0x05, 0x03, 0x80, 0x9b, 0xee, 0x02,
	0x1a, 0x04, 0x08, 0x05, 0x18, 0x05,
	0x1a, 0x04, 0x08, 0x07, 0x10, 0x0d,
	/* sample: no location_id, value [1, 2000000], thread id = 6, thread state = "none" */
	0x12, 0x12,
	0x12, 0x04, 0x01, 0x80, 0x89, 0x7a,
	0x1a, 0x04, 0x08, 0x05, 0x18, 0x06,
	0x1a, 0x04, 0x08, 0x07, 0x10, 0x0e,
	/* mapping: id 1, filename "python3.15", has_functions/filenames/line_numbers */
	0x1a, 0x0a, 0x08, 0x01, 0x28, 0x09, 0x38, 0x01, 0x40, 0x01, 0x48, 0x01,
	/* location 1: mapping 1, line {function 1, line 3, column 4 + 1} */
	0x22, 0x0c, 0x08, 0x01, 0x10, 0x01, 0x22, 0x06, 0x08, 0x01, 0x10, 0x03, 0x18, 0x05,
	/* location 2: mapping 1, line {function 2} (no line, no column) */
	0x22, 0x08, 0x08, 0x02, 0x10, 0x01, 0x22, 0x02, 0x08, 0x02,
	/* function 1 "f" in "a.py", function 2 "g" in "a.py" */
	0x2a, 0x06, 0x08, 0x01, 0x10, 0x0a, 0x20, 0x0b,
	0x2a, 0x06, 0x08, 0x02, 0x10, 0x0c, 0x20, 0x0b,
	/* string_table */
	0x32, 0x00,
	0x32, 0x07, 's', 'a', 'm', 'p', 'l', 'e', 's',
	0x32, 0x05, 'c', 'o', 'u', 'n', 't',
	0x32, 0x04, 'w', 'a', 'l', 'l',
	0x32, 0x0b, 'n', 'a', 'n', 'o', 's', 'e', 'c', 'o', 'n', 'd', 's',
	0x32, 0x09, 't', 'h', 'r', 'e', 'a', 'd', ' ', 'i', 'd',
	0x32, 0x0e, 'i', 'n', 't', 'e', 'r', 'p', 'r', 'e', 't', 'e', 'r', ' ', 'i', 'd',
	0x32, 0x0c, 't', 'h', 'r', 'e', 'a', 'd', ' ', 's', 't', 'a', 't', 'e',
	0x32, 0x1e, 'c', 'o', 'n', 'v', 'e', 'r', 't', 'e', 'd', ' ', 'b', 'y', ' ',
	't', 'a', 'c', 'h', 'f', 'm', 't', ' ', 'f', 'r', 'o', 'm', ' ', 't', 'a', 'c', 'h',
	0x32, 0x0a, 'p', 'y', 't', 'h', 'o', 'n', '3', '.', '1', '5',
	0x32, 0x01, 'f',
	0x32, 0x04, 'a', '.', 'p', 'y',
	0x32, 0x01, 'g',
	0x32, 0x07, 'g', 'i', 'l', '+', 'c', 'p', 'u',
	0x32, 0x04, 'n', 'o', 'n', 'e',
	/* time_nanos 1000 us, duration_nanos 5000 - 1000 us */
	0x48, 0xc0, 0x84, 0x3d,
	0x50, 0x80, 0x92, 0xf4, 0x01,
	/* period_type {wall, nanoseconds}, period 2 ms, comment, default_sample_type wall */
	0x5a, 0x04, 0x08, 0x03, 0x10, 0x04,
	0x60, 0x80, 0x89, 0x7a,
	0x68, 0x08,
	0x70, 0x03,
};

/* The count (first value) of each top-level Sample and a hash of its location ids, from a
 * raw profile; returns how many Samples there are (at most max). */
static size_t sample_counts(const struct outbuf *o, uint64_t *count, uint64_t *locs, size_t max)
{
	size_t ns = 0;
	const uint8_t *p = o->p, *end = o->p + o->n;
	while (p < end) {
		uint64_t tag, len = 0;
		p += tachi_uvarint(p, end, &tag);
		if ((tag & 7) == 0) {
			p += tachi_uvarint(p, end, &len);
			continue;
		}
		p += tachi_uvarint(p, end, &len);
		const uint8_t *m = p, *mend = p + len;
		p = mend;
		if (tag >> 3 != 2 || ns >= max)
			continue;
		count[ns] = 0;
		locs[ns] = 14695981039346656037u;
		while (m < mend) {
			uint64_t t, l = 0;
			m += tachi_uvarint(m, mend, &t);
			m += tachi_uvarint(m, mend, &l);
			if (t >> 3 == 1)
				for (const uint8_t *q = m; q < m + l; q++)
					locs[ns] = (locs[ns] ^ *q) * 1099511628211u;
			if (t >> 3 == 2)
				tachi_uvarint(m, mend, &count[ns]);
			m += l;
		}
		ns++;
	}
	return ns;
}

/* Deep stacks that share little with the one before come again: each is looked up whole
 * (its frame ids stored 1, 2 or 4 bytes wide), and each must still count as one Sample of
 * its own frames, never merged with a stack of another width or one differing in a single
 * frame; a stack that changes one frame of one found whole is walked from that one's path.
 * The Samples' locations must be those of a run where every stack is new. */
static void check_whole_stacks(const char *const *opts)
{
	struct fixture fx = { tach_dict_new(), 0, 0 };
	uint32_t file, fn, id;
	CHECK(!tach_dict_intern_string(fx.d, "w.py", 4, &file));
	CHECK(!tach_dict_intern_string(fx.d, "f", 1, &fn));
	for (int32_t i = 0; i < 70100; i++) {
		struct tach_frame f = { file, fn, i + 1, i + 1, -1, -1, TACH_NO_OPCODE };
		CHECK(!tach_dict_intern_frame(fx.d, &f, &id));
	}
	enum { D = 40, K = 6, R = 30 };
	static uint32_t st[K][D];
	for (uint32_t i = 0; i < D; i++) {
		st[0][i] = 70000 + i; /* four bytes */
		st[1][i] = 300 + i;   /* two */
		st[2][i] = i == 0 ? 70099 : 300 + i; /* the two-byte one's leaf changed */
		st[3][i] = i;         /* one */
		st[4][i] = i == D / 2 ? 256 + i : i; /* two; one frame off the one-byte stack, whose
						   * low byte it shares */
		st[5][i] = i == 0 ? 70000 - 65536 : 70000 + i; /* four; its leaf off the first's
								 * in the high half only */
	}
	static struct tach_sample ss[K * R];
	for (size_t i = 0; i < K * R; i++)
		ss[i] = (struct tach_sample){ .thread_id = 1, .timestamp_us = i, .weight = 1,
					      .depth = D, .frames = st[i % K] };
	struct tach_meta m = TACH_META_INIT;
	m.interval_us = 1;
	int rc;
	struct outbuf o = run(&fx, &m, ss, K * R, opts, &rc), once;
	CHECK_EQ_U64(rc, 0);
	once = run(&fx, &m, ss, K, opts, &rc);
	CHECK_EQ_U64(rc, 0);
	uint64_t count[K + 1], locs[K + 1], count1[K + 1], locs1[K + 1];
	CHECK_EQ_U64(sample_counts(&o, count, locs, K + 1), K);
	CHECK_EQ_U64(sample_counts(&once, count1, locs1, K + 1), K);
	for (size_t k = 0; k < K; k++) {
		CHECK_EQ_U64(count[k], R);
		CHECK_EQ_U64(locs[k], locs1[k]);
	}
	free(o.p);
	free(once.p);
	tach_dict_free(fx.d);
}

/* The bytes a gzip member inflates to (at most cap). */
static struct outbuf gunzip(const struct outbuf *gz, size_t cap)
{
	struct outbuf o = { malloc(cap), 0 };
	z_stream z = { 0 };
	CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = gz->p;
	z.avail_in = (uInt)gz->n;
	z.next_out = o.p;
	z.avail_out = (uInt)cap;
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	o.n = cap - z.avail_out;
	inflateEnd(&z);
	return o;
}

/* A Sample bigger than the output's buffer (and the stage before deflate) goes out piece
 * by piece beside ones built in place: the same location ids either way, raw or gzipped. */
static void check_huge_sample(void)
{
	struct fixture fx = { tach_dict_new(), 0, 0 };
	uint32_t file, fn, id;
	CHECK(!tach_dict_intern_string(fx.d, "h.py", 4, &file));
	CHECK(!tach_dict_intern_string(fx.d, "f", 1, &fn));
	enum { F = 300, D = 200000 };
	for (int32_t i = 0; i < F; i++) {
		struct tach_frame f = { file, fn, i + 1, i + 1, -1, -1, TACH_NO_OPCODE };
		CHECK(!tach_dict_intern_frame(fx.d, &f, &id));
	}
	static uint32_t deep[D];
	uint64_t want = 14695981039346656037u;
	for (uint32_t i = 0; i < D; i++) {
		deep[i] = i % F;
		/* locations are numbered as frames are first met, innermost first */
		uint8_t v[5];
		size_t n = tachi_put_uvarint(v, deep[i] + 1);
		for (size_t k = 0; k < n; k++)
			want = (want ^ v[k]) * 1099511628211u;
	}
	struct tach_sample ss[3] = {
		{ .thread_id = 1, .weight = 3, .depth = 2, .frames = deep },
		{ .thread_id = 2, .weight = 7, .depth = D, .frames = deep },
		{ .thread_id = 1, .weight = 1, .depth = 1, .frames = deep },
	};
	struct tach_meta m = TACH_META_INIT;
	int rc;
	static const char *const raw[] = { "gzip", "no", NULL };
	struct outbuf o = run(&fx, &m, ss, 3, raw, &rc), gz = run(&fx, &m, ss, 3, NULL, &rc);
	CHECK_EQ_U64(rc, 0);
	struct outbuf in = gunzip(&gz, o.n + 1);
	CHECK(in.n == o.n && !memcmp(in.p, o.p, o.n));
	uint64_t count[4], locs[4];
	CHECK_EQ_U64(sample_counts(&o, count, locs, 4), 3);
	CHECK_EQ_U64(count[0], 3);
	CHECK_EQ_U64(count[1], 7);
	CHECK_EQ_U64(count[2], 1);
	CHECK_EQ_U64(locs[1], want);
	free(o.p);
	free(gz.p);
	free(in.p);
	tach_dict_free(fx.d);
}

/* Native frames: written with mappings, addresses and an inline run, read back the same:
 * the mapping kept, the inline marks, the address on every frame of the location, and an
 * unsymbolized frame named by module and file offset. */
static void check_native_round_trip(void)
{
	struct fixture fx = { tach_dict_new(), 0, 0 };
	struct tach_dict *d = fx.d;
	uint32_t file, bid, src, inner, outer, unsym, map, fr[3];
	CHECK(!tach_dict_intern_string(d, "/usr/lib/libx.so", 16, &file));
	CHECK(!tach_dict_intern_string(d, "abcd", 4, &bid));
	CHECK(!tach_dict_intern_string(d, "x.c", 3, &src));
	CHECK(!tach_dict_intern_string(d, "inner", 5, &inner));
	CHECK(!tach_dict_intern_string(d, "outer", 5, &outer));
	CHECK(!tach_dict_intern_string(d, "libx.so+0x1234", 14, &unsym));
	struct tach_mapping m = { 0x7f0000001000, 0x7f0000009000, 0x1000, file, bid,
				  TACH_MAPPING_HAS_FUNCTIONS };
	CHECK(!tach_dict_intern_mapping(d, &m, &map));
	struct tach_frame a = { src, inner, 7, 7, -1, -1, TACH_NO_OPCODE };
	struct tach_frame b = { src, outer, 9, 9, -1, -1, TACH_NO_OPCODE };
	struct tach_frame u = { file, unsym, -1, -1, -1, -1, TACH_NO_OPCODE };
	struct tach_frame_native na = { 0x7f0000002000, map, 1 }, nb = { 0x7f0000002000, map, 0 };
	struct tach_frame_native nu = { 0x7f0000001234, map, 0 };
	CHECK(!tach_dict_intern_frame_native(d, &u, &nu, &fr[0]));
	CHECK(!tach_dict_intern_frame_native(d, &a, &na, &fr[1]));
	CHECK(!tach_dict_intern_frame_native(d, &b, &nb, &fr[2]));
	struct tach_meta meta = TACH_META_INIT;
	meta.interval_us = 1000;
	struct tach_sample s = { .thread_id = 1, .weight = 3, .depth = 3, .frames = fr };
	static const char *const raw[] = { "gzip", "no", NULL };
	int rc;
	struct outbuf o = run(&fx, &meta, &s, 1, raw, &rc);
	CHECK_EQ_U64(rc, 0);
	struct tach_reader *r = tach_reader_new("pprof");
	CHECK(!tach_reader_open_mem(r, o.p, o.n));
	const struct tach_sample *got = NULL;
	CHECK(!tach_reader_next(r, &got));
	const struct tach_dict *rd = tach_reader_dict(r);
	CHECK_EQ_U64(tach_dict_mapping_count(rd), 1);
	const struct tach_mapping *rm = tach_dict_mapping(rd, 1);
	CHECK(rm && rm->start == m.start && rm->limit == m.limit && rm->offset == m.offset);
	size_t n;
	CHECK(rm && !strcmp(tach_dict_string(rd, rm->build_id, &n), "abcd"));
	/* written truthfully: one location has no line, so no functions, files or lines */
	CHECK(rm && rm->flags == 0);
	CHECK(got && got->depth == 3 && got->weight == 3);
	static const char *const names[3] = { "libx.so+0x1234", "inner", "outer" };
	static const uint64_t addrs[3] = { 0x7f0000001234, 0x7f0000002000, 0x7f0000002000 };
	for (uint32_t i = 0; got && i < 3 && i < got->depth; i++) {
		const struct tach_frame *f = tach_dict_frame(rd, got->frames[i]);
		const struct tach_frame_native *fn = tach_dict_frame_native(rd, got->frames[i]);
		CHECK(f && !strcmp(tach_dict_string(rd, f->func, &n), names[i]));
		CHECK(fn && fn->address == addrs[i] && fn->mapping == 1 && fn->inlined == (i == 1));
	}
	CHECK(got && !strcmp(tach_dict_string(rd, tach_dict_frame(rd, got->frames[0])->file, &n),
			     "/usr/lib/libx.so"));
	CHECK_EQ_U64(tach_reader_next(r, &got), TACH_EOF);
	tach_reader_free(r);
	free(o.p);
	tach_dict_free(d);
}

int main(void)
{
	check_native_round_trip();
	struct fixture fx;
	make_dict(&fx);
	struct tach_meta m = TACH_META_INIT;
	m.start_time_us = 1000;
	m.interval_us = 2000;
	m.source_format = "tach";
	m.py_major = 3; /* as the TACH reader gives it: TACH_META_INIT names no version */
	m.py_minor = 15;
	uint32_t stack[2] = { fx.f0, fx.f1 };
	struct tach_sample ss[3] = {
		{ .thread_id = 5, .timestamp_us = 1000, .weight = 2, .status = 3, .depth = 2,
		  .frames = stack },
		{ .thread_id = 6, .timestamp_us = 3000, .weight = 1, .status = 0, .depth = 0,
		  .frames = stack },
		{ .thread_id = 5, .timestamp_us = 5000, .weight = 1, .status = 3, .depth = 2,
		  .same_outer = 2, .frames = stack },
	};
	int rc;
	static const char *const raw[] = { "gzip", "no", NULL };
	struct outbuf o = run(&fx, &m, ss, 3, raw, &rc);
	CHECK_EQ_U64(rc, 0);
	check_bytes(&o, expected, sizeof(expected), __LINE__);

	/* The same sample again without the same-stack hint takes the slow path: same bytes. */
	ss[2].same_outer = 0;
	struct outbuf o2 = run(&fx, &m, ss, 3, raw, &rc);
	CHECK_EQ_U64(rc, 0);
	check_bytes(&o2, expected, sizeof(expected), __LINE__);
	free(o2.p);

	/* gzip by default: a gzip member (mtime 0) that inflates to the same protobuf. */
	struct outbuf gz = run(&fx, &m, ss, 3, NULL, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(gz.n > 10 && gz.p[0] == 0x1f && gz.p[1] == 0x8b && gz.p[2] == 8);
	CHECK(gz.n > 10 && !gz.p[4] && !gz.p[5] && !gz.p[6] && !gz.p[7]);
	uint8_t inflated[1024];
	z_stream z = { 0 };
	CHECK(inflateInit2(&z, 15 + 16) == Z_OK);
	z.next_in = gz.p;
	z.avail_in = (uInt)gz.n;
	z.next_out = inflated;
	z.avail_out = sizeof(inflated);
	CHECK(inflate(&z, Z_FINISH) == Z_STREAM_END);
	CHECK_EQ_U64(z.avail_in, 0);
	struct outbuf inf = { inflated, sizeof(inflated) - z.avail_out };
	inflateEnd(&z);
	check_bytes(&inf, expected, sizeof(expected), __LINE__);
	/* deterministic */
	struct outbuf gz2 = run(&fx, &m, ss, 3, NULL, &rc);
	CHECK(gz2.n == gz.n && !memcmp(gz.p, gz2.p, gz.n));
	free(gz.p);
	free(gz2.p);

	/* The mapping's file: the program where the input names it (a gperftools profile), a
	 * copy taken at set_meta; else the interpreter. */
	CHECK(contains(&o, "\x32\x0a" "python3.15"));
	char prog[] = "/opt/app/bin/server";
	struct tach_meta mp = m;
	mp.program = prog;
	struct outbuf op = run(&fx, &mp, ss, 3, raw, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(contains(&op, "\x32\x13" "/opt/app/bin/server") && !contains(&op, "python3.15"));
	free(op.p);

	/* cpu=yes names the time type cpu; so does a TACH header in CPU mode (mode 1 + 1). */
	static const char *const cpu[] = { "gzip", "no", "cpu", "yes", NULL };
	struct outbuf c = run(&fx, &m, ss, 3, cpu, &rc);
	CHECK(contains(&c, "\x32\x03" "cpu") && !contains(&c, "wall"));
	free(c.p);
	struct tach_meta mc = m;
	mc.profiling_config = 2;
	c = run(&fx, &mc, ss, 3, raw, &rc);
	CHECK(contains(&c, "\x32\x03" "cpu") && !contains(&c, "wall"));
	free(c.p);
	static const char *const wall[] = { "gzip", "no", "cpu", "no", NULL };
	c = run(&fx, &mc, ss, 3, wall, &rc);
	CHECK(contains(&c, "wall") && !contains(&c, "\x32\x03" "cpu"));
	free(c.p);
	mc.profiling_config = 3; /* GIL mode: wall-clock samples of GIL holders */
	c = run(&fx, &mc, ss, 3, raw, &rc);
	CHECK(contains(&c, "wall"));
	free(c.p);

	/* labels=no: one sample for both threads, no label strings. */
	struct tach_sample t2[2] = { ss[0], ss[0] };
	t2[1].thread_id = 7;
	t2[1].status = 1;
	static const char *const nolab[] = { "gzip", "no", "labels", "no", NULL };
	c = run(&fx, &m, t2, 2, nolab, &rc);
	CHECK_EQ_U64(rc, 0);
	/* sample: location ids [1, 2], values [4, 8000000], nothing else */
	static const uint8_t merged[] = { 0x12, 0x0b, 0x0a, 0x02, 0x01, 0x02,
					  0x12, 0x05, 0x04, 0x80, 0xa4, 0xe8, 0x03 };
	CHECK(c.n > 12 + sizeof(merged) && !memcmp(c.p + 12, merged, sizeof(merged)));
	CHECK(!contains(&c, "thread id") && !contains(&c, "gil"));
	free(c.p);
	/* with labels the two threads stay apart */
	c = run(&fx, &m, t2, 2, raw, &rc);
	CHECK(contains(&c, "\x32\x03gil") && contains(&c, "gil+cpu"));
	free(c.p);

	/* Unknown interval: no period, time values 0, counts shown by default. */
	struct tach_meta m0 = m;
	m0.interval_us = 0;
	c = run(&fx, &m0, ss, 1, raw, &rc);
	CHECK_EQ_U64(rc, 0);
	CHECK(c.n > 4 && !memcmp(c.p + c.n - 4, "\x68\x08\x70\x01", 4));
	CHECK(!contains(&c, "\x60"));
	free(c.p);

	/* Failures: bad options, values beyond int64, a frame id the dict does not have. */
	struct tach_writer *w = tach_writer_new("pprof");
	CHECK_EQ_U64(tach_writer_set_option(w, "gzip", "maybe"), (uint64_t)TACH_E_USAGE);
	tach_writer_free(w);
	w = tach_writer_new("pprof");
	CHECK_EQ_U64(tach_writer_set_option(w, "cpu", "sometimes"), (uint64_t)TACH_E_USAGE);
	tach_writer_free(w);
	w = tach_writer_new("pprof");
	CHECK_EQ_U64(tach_writer_set_option(w, "colour", "yes"), (uint64_t)TACH_E_USAGE);
	CHECK(strstr(tach_writer_error(w), "colour") != NULL);
	tach_writer_free(w);
	/* pprof reads too (formats/pprof/read.c; tests/cli/pprof-read.bats) */
	struct tach_reader *pr = tach_reader_new("pprof");
	CHECK(pr != NULL);
	CHECK_EQ_STR(tach_reader_format(pr), "pprof");
	tach_reader_free(pr);

	struct tach_sample big = ss[0];
	big.weight = (uint64_t)INT64_MAX / 1000; /* the count fits, count * 2 ms does not */
	c = run(&fx, &m, &big, 1, raw, &rc);
	CHECK_EQ_U64(rc, (uint64_t)TACH_E_LIMIT);
	free(c.p);
	struct tach_sample two[2] = { ss[0], ss[0] };
	two[0].weight = two[1].weight = (uint64_t)INT64_MAX;
	c = run(&fx, &m, two, 2, raw, &rc);
	CHECK_EQ_U64(rc, (uint64_t)TACH_E_LIMIT);
	free(c.p);
	uint32_t bad = 99;
	struct tach_sample b = ss[0];
	b.depth = 1;
	b.frames = &bad;
	c = run(&fx, &m, &b, 1, raw, &rc);
	CHECK_EQ_U64(rc, (uint64_t)TACH_E_USAGE);
	free(c.p);

	free(o.p);
	tach_dict_free(fx.d);
	check_whole_stacks(raw);
	static const char *const raw_nolabels[] = { "gzip", "no", "labels", "no", NULL };
	check_whole_stacks(raw_nolabels);
	check_huge_sample();
	return CHECK_DONE();
}
