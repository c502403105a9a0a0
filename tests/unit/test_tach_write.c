/* The TACH writer against CPython's writer rules, checked on the records themselves: the
 * encoding choice (compare_stacks), RLE holding and flush order, the 16 KiB run split, the
 * 256-frame cap, the interning order, weights, and identical bytes whatever the output is
 * (regular file, pipe, O_APPEND file, file at an offset). */
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "base/bytes.h"
#include "model/dict.h"
#include "core/handles.h"

#define MAXS 400

struct smp {
	uint64_t tid;
	uint32_t iid;
	uint64_t ts;
	uint8_t status;
	uint64_t weight;
	uint32_t depth;
	uint32_t frames[MAXS];
};

static struct tach_dict *D;

static uint32_t F(const char *file, const char *func, int32_t line)
{
	struct tach_frame f = { 0, 0, line, line, -1, -1, 255 };
	CHECK_EQ_U64(tach_dict_intern_string(D, file, strlen(file), &f.file), 0);
	CHECK_EQ_U64(tach_dict_intern_string(D, func, strlen(func), &f.func), 0);
	uint32_t id = 0;
	CHECK_EQ_U64(tach_dict_intern_frame(D, &f, &id), 0);
	return id;
}

/* A frame named after a letter, in one file. */
static uint32_t L(char c)
{
	char name[2] = { c, 0 };
	return F("s.py", name, c);
}

static struct smp *S(struct smp *v, size_t *n, uint64_t tid, uint64_t ts, uint8_t status,
		     const char *stack)
{
	struct smp *s = &v[(*n)++];
	memset(s, 0, sizeof(*s));
	s->tid = tid;
	s->ts = ts;
	s->status = status;
	s->weight = 1;
	for (const char *p = stack; *p; p++)
		s->frames[s->depth++] = L(*p);
	return s;
}

enum { TO_FILE, TO_PIPE, TO_APPEND, TO_OFFSET };

static int put_all(int fd, const struct smp *v, size_t n, const char *comp, uint64_t start,
		   uint64_t interval)
{
	struct tach_writer *w = tach_writer_new("tach");
	if (comp)
		CHECK_EQ_U64(tach_writer_set_option(w, "compression", comp), 0);
	struct tach_meta m = TACH_META_INIT;
	m.start_time_us = start;
	m.interval_us = interval;
	int rc = tach_writer_open_fd(w, fd);
	if (!rc)
		rc = tach_writer_set_meta(w, &m);
	for (size_t i = 0; i < n && !rc; i++) {
		struct tach_sample s = { .thread_id = v[i].tid, .interp_id = v[i].iid,
					 .timestamp_us = v[i].ts, .status = v[i].status,
					 .weight = v[i].weight, .depth = v[i].depth,
					 .frames = v[i].frames };
		rc = tach_writer_put(w, D, &s);
	}
	if (!rc)
		rc = tach_writer_close(w);
	if (rc)
		fprintf(stderr, "writer: %s\n", tach_writer_error(w));
	tach_writer_free(w);
	return rc;
}

static uint8_t *read_fd(int fd, size_t *len)
{
	size_t cap = 1 << 16;
	uint8_t *b = malloc(cap);
	*len = 0;
	for (;;) {
		if (*len == cap)
			b = realloc(b, cap *= 2);
		ssize_t k = read(fd, b + *len, cap - *len);
		if (k <= 0)
			break;
		*len += (size_t)k;
	}
	return b;
}

static uint8_t *write_tach(const struct smp *v, size_t n, const char *comp, int mode,
			   uint64_t start, uint64_t interval, size_t *len)
{
	*len = 0;
	if (mode == TO_PIPE) {
		int p[2];
		CHECK(pipe(p) == 0);
		pid_t pid = fork();
		if (pid == 0) {
			close(p[0]);
			int rc = put_all(p[1], v, n, comp, start, interval);
			close(p[1]);
			_exit(rc ? 1 : 0);
		}
		close(p[1]);
		uint8_t *b = read_fd(p[0], len);
		close(p[0]);
		int st = 0;
		waitpid(pid, &st, 0);
		CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0);
		return b;
	}
	char path[] = "/tmp/test_tach_write.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0);
	if (mode == TO_APPEND) {
		close(fd);
		fd = open(path, O_RDWR | O_APPEND);
	}
	if (mode == TO_OFFSET)
		CHECK(write(fd, "0123456789", 10) == 10);
	CHECK_EQ_U64(put_all(fd, v, n, comp, start, interval), 0);
	CHECK(lseek(fd, 0, SEEK_SET) == 0);
	uint8_t *b = read_fd(fd, len);
	close(fd);
	unlink(path);
	if (mode == TO_OFFSET) {
		CHECK(*len >= 10 && !memcmp(b, "0123456789", 10));
		memmove(b, b + 10, *len - 10);
		*len -= 10;
	}
	return b;
}

/* ---- reading records back ---- */

struct rec {
	uint64_t tid;
	uint32_t iid;
	uint8_t enc;
	uint32_t count;        /* REPEAT entries */
	uint32_t a, b;         /* FULL: depth; SUFFIX: shared, new; POP_PUSH: pop, push */
	uint32_t nframes;
	uint32_t frames[256];
	uint64_t first_delta;
	uint8_t first_status;
	size_t off, len;
};

static uint64_t uv(const uint8_t *f, size_t *p, size_t end)
{
	uint64_t v = 0;
	size_t n = tachi_uvarint(f + *p, f + end, &v);
	CHECK(n > 0);
	*p += n ? n : 1;
	return v;
}

/* Parses the raw sample region of f into records; returns their number. */
static size_t records(const uint8_t *f, size_t len, struct rec *out, size_t max)
{
	CHECK(len >= 96);
	if (len < 96)
		return 0;
	CHECK_EQ_U64(tachi_rd32le(f + 56), 0);
	size_t end = (size_t)tachi_rd32le(f + 40), p = 64, n = 0;
	CHECK(end <= len);
	while (p < end && n < max) {
		struct rec *r = &out[n++];
		memset(r, 0, sizeof(*r));
		r->off = p;
		r->tid = tachi_rd64(f + p, false);
		r->iid = tachi_rd32(f + p + 8, false);
		r->enc = f[p + 12];
		p += 13;
		if (r->enc == 0) {
			r->count = (uint32_t)uv(f, &p, end);
			for (uint32_t i = 0; i < r->count && p < end; i++) {
				uint64_t d = uv(f, &p, end);
				uint8_t st = f[p++];
				if (!i) {
					r->first_delta = d;
					r->first_status = st;
				}
			}
		} else {
			r->first_delta = uv(f, &p, end);
			r->first_status = f[p++];
			r->a = (uint32_t)uv(f, &p, end);
			if (r->enc != 1)
				r->b = (uint32_t)uv(f, &p, end);
			r->nframes = r->enc == 1 ? r->a : r->b;
			CHECK(r->nframes <= 256);
			for (uint32_t i = 0; i < r->nframes && i < 256; i++)
				r->frames[i] = (uint32_t)uv(f, &p, end);
		}
		r->len = p - r->off;
	}
	CHECK_EQ_U64(p, end);
	return n;
}

#define CHECK_REC(r, tid_, enc_, a_, b_)                                                \
	do {                                                                            \
		CHECK_EQ_U64((r).tid, (tid_));                                          \
		CHECK_EQ_U64((r).enc, (enc_));                                          \
		if ((enc_) == 0)                                                        \
			CHECK_EQ_U64((r).count, (a_));                                  \
		else                                                                    \
			CHECK_EQ_U64((r).a, (a_));                                      \
		if ((enc_) >= 2)                                                        \
			CHECK_EQ_U64((r).b, (b_));                                      \
	} while (0)

/* Reads f with the library's reader and compares each thread's samples, in order, with v
 * (frames compared by file, function and line). */
static void check_readback(const uint8_t *f, size_t len, const struct smp *v, size_t n,
			   uint64_t interval)
{
	struct tach_reader *r = tach_reader_new("tach");
	CHECK_EQ_U64(tach_reader_open_mem(r, f, len), 0);
	/* expand weights into single samples */
	size_t total = 0;
	for (size_t i = 0; i < n; i++)
		total += v[i].weight;
	size_t *idx = calloc(total, sizeof(*idx));
	uint64_t *tss = calloc(total, sizeof(*tss));
	bool *used = calloc(total, sizeof(*used));
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		for (uint64_t w = 0; w < v[i].weight; w++) {
			idx[k] = i;
			tss[k++] = v[i].ts + w * interval;
		}
	const struct tach_sample *s;
	int rc;
	size_t got = 0;
	const struct tach_dict *rd = tach_reader_dict(r);
	/* A run the reader hands out as one weighted sample is checked sample by sample. */
	while ((rc = tach_reader_next(r, &s)) == TACH_OK) {
		for (uint64_t wi = 0; wi < s->weight; wi++) {
			got++;
			/* the first unused expected sample of this thread */
			size_t j;
			for (j = 0; j < total; j++)
				if (!used[j] && v[idx[j]].tid == s->thread_id && v[idx[j]].iid == s->interp_id)
					break;
			if (j == total) {
				CHECK(!"a sample that was not written");
				break;
			}
			used[j] = true;
			const struct smp *e = &v[idx[j]];
			CHECK_EQ_U64(s->timestamp_us + wi * interval, tss[j]);
			CHECK_EQ_U64(s->status, e->status);
			uint32_t ed = e->depth > 256 ? 256 : e->depth;
			CHECK_EQ_U64(s->depth, ed);
			for (uint32_t q = 0; q < ed && q < s->depth; q++) {
				const struct tach_frame *a = tach_dict_frame(rd, s->frames[q]);
				const struct tach_frame *b = tach_dict_frame(D, e->frames[q]);
				size_t la, lb, lc, ld;
				const char *fa = tach_dict_string(rd, a->file, &la);
				const char *fb = tach_dict_string(D, b->file, &lb);
				const char *na = tach_dict_string(rd, a->func, &lc);
				const char *nb = tach_dict_string(D, b->func, &ld);
				if (a->line != b->line || la != lb || memcmp(fa, fb, la) || lc != ld ||
				    memcmp(na, nb, lc)) {
					fprintf(stderr, "sample %zu frame %u differs\n", got, q);
					check_failures++;
					break;
				}
			}
		}
	}
	CHECK_EQ_U64(rc, TACH_EOF);
	CHECK_EQ_U64(got, total);
	if (rc < 0)
		fprintf(stderr, "reader: %s\n", tach_reader_error(r, NULL, NULL));
	free(idx);
	free(tss);
	free(used);
	tach_reader_free(r);
}

static struct smp V[MAXS];
static struct rec R[4096];

static void new_dict(void)
{
	tach_dict_free(D);
	D = tach_dict_new();
}

/* Every branch of compare_stacks, on one thread. Stacks are written innermost first. */
static void encodings(void)
{
	new_dict();
	size_t n = 0;
	uint64_t t = 1000;
	S(V, &n, 1, t += 10, 1, "");        /* empty == empty: REPEAT, no FULL first */
	S(V, &n, 1, t += 10, 1, "");
	S(V, &n, 1, t += 10, 1, "a");       /* nothing in common: FULL */
	S(V, &n, 1, t += 10, 1, "ba");      /* pop 0, push 1: SUFFIX */
	S(V, &n, 1, t += 10, 3, "ba");      /* same stack, other status: still REPEAT */
	S(V, &n, 1, t += 10, 1, "c");       /* no common suffix: FULL */
	S(V, &n, 1, t += 10, 1, "xyzr");    /* FULL */
	S(V, &n, 1, t += 10, 1, "wzr");     /* common 2 >= 3/2: POP_PUSH 2 1 */
	S(V, &n, 1, t += 10, 1, "pqstr");   /* common 1 < 5/2: FULL */
	S(V, &n, 1, t += 10, 1, "str");     /* pop 2, push 0: POP_PUSH, not SUFFIX */
	S(V, &n, 1, t += 10, 1, "uvtr");    /* common 2 == 4/2: POP_PUSH 1 2 */
	S(V, &n, 1, t += 10, 1, "ghijkr");  /* common 1 < 6/2: FULL */
	S(V, &n, 1, t += 10, 1, "mnokr");   /* common 2 == 5/2: POP_PUSH 4 3 */
	S(V, &n, 1, t += 10, 1, "Mnokr");   /* POP_PUSH 1 1 */
	S(V, &n, 1, t += 10, 1, "");        /* to empty: FULL depth 0 */
	S(V, &n, 1, t += 10, 1, "");        /* REPEAT, flushed at the end */
	S(V, &n, 1, t += 10, 1, "r");       /* FULL */
	S(V, &n, 1, t += 10, 1, "abcdr");   /* pop 0 beats the half rule: SUFFIX 1 4 */
	size_t len;
	uint8_t *f = write_tach(V, n, "none", TO_FILE, 1000, 10, &len);
	size_t k = records(f, len, R, 4096);
	CHECK_EQ_U64(k, 17);
	if (k == 17) {
		CHECK_REC(R[0], 1, 0, 2, 0);
		CHECK_REC(R[1], 1, 1, 1, 0);
		CHECK_REC(R[2], 1, 2, 1, 1);
		CHECK_REC(R[3], 1, 0, 1, 0);
		CHECK_EQ_U64(R[3].first_status, 3);
		CHECK_REC(R[4], 1, 1, 1, 0);
		CHECK_REC(R[5], 1, 1, 4, 0);
		CHECK_REC(R[6], 1, 3, 2, 1);
		CHECK_REC(R[7], 1, 1, 5, 0);
		CHECK_REC(R[8], 1, 3, 2, 0);
		CHECK_REC(R[9], 1, 3, 1, 2);
		CHECK_REC(R[10], 1, 1, 6, 0);
		CHECK_REC(R[11], 1, 3, 4, 3);
		CHECK_REC(R[12], 1, 3, 1, 1);
		CHECK_REC(R[13], 1, 1, 0, 0);
		CHECK_REC(R[14], 1, 0, 1, 0);
		CHECK_REC(R[15], 1, 1, 1, 0);
		CHECK_REC(R[16], 1, 2, 1, 4);
		/* the new frames listed are the innermost ones, innermost first, as ids of
		 * the writer's table: a b c x y z r w p q s t u v g h i j k m n o M d */
		CHECK_EQ_U64(R[6].frames[0], 7);
		CHECK_EQ_U64(R[9].frames[0], 12);
		CHECK_EQ_U64(R[9].frames[1], 13);
		CHECK_EQ_U64(R[16].frames[0], 0);
		CHECK_EQ_U64(R[16].frames[1], 1);
		CHECK_EQ_U64(R[16].frames[2], 2);
		CHECK_EQ_U64(R[16].frames[3], 23);
		/* deltas: every sample 10 after the previous one; the first from start */
		CHECK_EQ_U64(R[0].first_delta, 10);
		CHECK_EQ_U64(R[1].first_delta, 10);
	}
	/* header */
	CHECK(!memcmp(f, "HCAT", 4));
	CHECK_EQ_U64(tachi_rd32le(f + 4), 1);
	CHECK(f[8] == 3 && f[9] == 15 && f[10] == 0 && f[11] == 0);
	CHECK_EQ_U64(tachi_rd64(f + 12, false), 1000);
	CHECK_EQ_U64(tachi_rd64(f + 20, false), 10);
	CHECK_EQ_U64(tachi_rd64(f + 28, false), 18);
	CHECK_EQ_U64(tachi_rd32le(f + 36), 1);
	CHECK_EQ_U64(tachi_rd64(f + len - 24, false), len);
	check_readback(f, len, V, n, 10);
	free(f);
}

/* A held run is emitted just before its own thread's next record; other threads never
 * flush it; at the end, held runs come out in thread-creation order. */
static void rle_order(void)
{
	new_dict();
	size_t n = 0;
	S(V, &n, 1, 100, 1, "a");
	S(V, &n, 1, 110, 1, "a");   /* held */
	S(V, &n, 1, 120, 1, "a");   /* held */
	S(V, &n, 2, 121, 1, "b");   /* thread 2 does not flush thread 1 */
	S(V, &n, 2, 122, 1, "cb");
	S(V, &n, 1, 130, 1, "e");   /* now thread 1's run comes first */
	size_t len;
	uint8_t *f = write_tach(V, n, "none", TO_FILE, 0, 10, &len);
	size_t k = records(f, len, R, 4096);
	CHECK_EQ_U64(k, 5);
	if (k == 5) {
		CHECK_REC(R[0], 1, 1, 1, 0);
		CHECK_REC(R[1], 2, 1, 1, 0);
		CHECK_REC(R[2], 2, 2, 1, 1);
		CHECK_REC(R[3], 1, 0, 2, 0);
		CHECK_REC(R[4], 1, 1, 1, 0);
	}
	check_readback(f, len, V, n, 10);
	free(f);

	/* created 20, 10, 30; runs started 30, 10, 20; the end flushes 20, 10, 30 */
	n = 0;
	S(V, &n, 20, 100, 1, "a");
	S(V, &n, 10, 101, 1, "b");
	S(V, &n, 30, 102, 1, "c");
	S(V, &n, 30, 103, 1, "c");
	S(V, &n, 10, 104, 1, "b");
	S(V, &n, 10, 105, 2, "b");
	S(V, &n, 20, 106, 1, "a");
	f = write_tach(V, n, "none", TO_FILE, 0, 10, &len);
	k = records(f, len, R, 4096);
	CHECK_EQ_U64(k, 6);
	if (k == 6) {
		CHECK_REC(R[0], 20, 1, 1, 0);
		CHECK_REC(R[1], 10, 1, 1, 0);
		CHECK_REC(R[2], 30, 1, 1, 0);
		CHECK_REC(R[3], 20, 0, 1, 0);
		CHECK_REC(R[4], 10, 0, 2, 0);
		CHECK_REC(R[5], 30, 0, 1, 0);
	}
	CHECK_EQ_U64(tachi_rd32le(f + 36), 3);
	check_readback(f, len, V, n, 10);
	free(f);

	/* the same thread id in two interpreters is two threads */
	n = 0;
	S(V, &n, 7, 100, 1, "a");
	S(V, &n, 7, 101, 1, "a")->iid = 1;
	S(V, &n, 7, 102, 1, "a");
	S(V, &n, 7, 103, 1, "a")->iid = 1;
	f = write_tach(V, n, "none", TO_FILE, 0, 10, &len);
	k = records(f, len, R, 4096);
	CHECK_EQ_U64(k, 4);
	if (k == 4) {
		CHECK(R[0].enc == 1 && R[0].iid == 0 && R[1].enc == 1 && R[1].iid == 1);
		CHECK(R[2].enc == 0 && R[2].iid == 0 && R[3].enc == 0 && R[3].iid == 1);
		/* each chain has its own previous timestamp */
		CHECK_EQ_U64(R[1].first_delta, 101);
		CHECK_EQ_U64(R[2].first_delta, 2);
	}
	CHECK_EQ_U64(tachi_rd32le(f + 36), 2);
	free(f);
}

/* A held run is emitted as its own record before it would pass 16 KiB:
 * pending_bytes + 11 > 16384. */
static void split(uint64_t step, uint32_t per_record)
{
	new_dict();
	uint32_t total = 20000;
	struct smp *v = calloc(total + 1, sizeof(*v));
	size_t n = 0;
	for (uint32_t i = 0; i <= total; i++)
		S(v, &n, 1, 1000 + (uint64_t)i * step, 1, "ab");
	size_t len;
	uint8_t *f = write_tach(v, n, "none", TO_PIPE, 1000, step, &len);
	struct rec *r = calloc(64, sizeof(*r));
	size_t k = records(f, len, r, 64);
	uint32_t full_runs = total / per_record, rest = total % per_record;
	CHECK_EQ_U64(k, 1 + full_runs + (rest ? 1 : 0));
	CHECK_EQ_U64(r[0].enc, 1);
	uint64_t sum = 0;
	for (size_t i = 1; i < k; i++) {
		CHECK_EQ_U64(r[i].enc, 0);
		CHECK_EQ_U64(r[i].count, i <= full_runs ? per_record : rest);
		sum += r[i].count;
	}
	CHECK_EQ_U64(sum, total);
	CHECK_EQ_U64(tachi_rd64(f + 28, false), total + 1);
	/* and the library's reader agrees, count for count */
	struct tach_reader *rd = tach_reader_new("tach");
	CHECK_EQ_U64(tach_reader_open_mem(rd, f, len), 0);
	const struct tach_sample *s;
	uint64_t got = 0, last = 0;
	uint64_t nsamples = 0;
	while (tach_reader_next(rd, &s) == TACH_OK) {
		got += s->weight;
		nsamples++;
		last = s->timestamp_us + (s->weight - 1) * step;
	}
	CHECK_EQ_U64(got, total + 1);
	/* each repeat record comes back as one weighted sample: cost follows records */
	CHECK_EQ_U64(nsamples, k);
	CHECK_EQ_U64(last, 1000 + (uint64_t)total * step);
	CHECK_EQ_U64(tach_reader_stats(rd)->repeat_records, k - 1);
	tach_reader_free(rd);
	free(r);
	free(f);
	free(v);
}

/* Only the 256 innermost frames are kept and interned. */
static void depth_cap(void)
{
	new_dict();
	static struct smp v[4];
	char name[16];
	uint32_t outer = F("outer.py", "beyond", 1);
	for (int i = 0; i < 300; i++) {
		snprintf(name, sizeof(name), "f%d", i);
		v[0].frames[i] = F(i < 256 ? "in.py" : "out.py", name, i + 1);
	}
	v[0].tid = 1;
	v[0].depth = 300;
	v[0].weight = 1;
	v[0].ts = 1;
	/* one more outer frame: the kept window is the same, so REPEAT */
	v[1] = v[0];
	v[1].ts = 2;
	v[1].frames[300] = outer;
	v[1].depth = 301;
	/* one more inner frame shifts the window: nothing in common at the outer end */
	v[2] = v[0];
	v[2].ts = 3;
	v[2].frames[0] = F("in.py", "new", 1000);
	memcpy(v[2].frames + 1, v[0].frames, 300 * sizeof(uint32_t));
	v[2].depth = 301;
	size_t len;
	uint8_t *f = write_tach(v, 3, "none", TO_FILE, 0, 1, &len);
	size_t k = records(f, len, R, 4096);
	CHECK_EQ_U64(k, 3);
	if (k == 3) {
		CHECK_REC(R[0], 1, 1, 256, 0);
		CHECK_REC(R[1], 1, 0, 1, 0);
		CHECK_REC(R[2], 1, 1, 256, 0);
	}
	/* footer: strings in.py, f0..f255, new; frames 256 + new. out.py, outer.py, f256.. and
	 * beyond never reach the tables. */
	size_t fo = len - 32;
	CHECK_EQ_U64(tachi_rd32le(f + fo), 1 + 256 + 1);
	CHECK_EQ_U64(tachi_rd32le(f + fo + 4), 257);
	check_readback(f, len, v, 3, 1);
	struct tach_reader *r = tach_reader_new("tach");
	CHECK_EQ_U64(tach_reader_open_mem(r, f, len), 0);
	const struct tach_dict *rd = tach_reader_dict(r);
	for (uint32_t i = 0; i < tach_dict_string_count(rd); i++) {
		size_t l;
		const char *s = tach_dict_string(rd, i, &l);
		CHECK(strcmp(s, "out.py") && strcmp(s, "outer.py") && strcmp(s, "f256"));
	}
	tach_reader_free(r);
	free(f);
}

static void table_order(void)
{
	new_dict();
	/* the source dict meets names in another order than the samples do */
	uint32_t f_outer = F("a.py", "outer", 3);
	uint32_t f_mid = F("b.py", "mid", 2);
	uint32_t f_in = F("a.py", "inner", 1);
	uint32_t f_new = F("c.py", "new", 9);
	static struct smp v[3];
	v[0] = (struct smp){ .tid = 1, .ts = 1, .weight = 1, .depth = 3,
			     .frames = { f_in, f_mid, f_outer } };
	v[1] = (struct smp){ .tid = 1, .ts = 2, .weight = 1, .depth = 3,
			     .frames = { f_new, f_mid, f_outer } };
	/* no location with an end line, and no location at all: two rows of the same
	 * stored values, as CPython writes them */
	struct tach_frame a = { 0, 0, -1, 5, -1, -1, 255 }, b = { 0, 0, -1, -1, -1, -1, 255 };
	tach_dict_intern_string(D, "a.py", 4, &a.file);
	tach_dict_intern_string(D, "outer", 5, &a.func);
	b.file = a.file;
	b.func = a.func;
	uint32_t fa, fb;
	tach_dict_intern_frame(D, &a, &fa);
	tach_dict_intern_frame(D, &b, &fb);
	v[2] = (struct smp){ .tid = 1, .ts = 3, .weight = 1, .depth = 2, .frames = { fa, fb } };
	size_t len;
	uint8_t *f = write_tach(v, 3, "none", TO_FILE, 0, 1, &len);
	struct tach_reader *r = tach_reader_new("tach");
	CHECK_EQ_U64(tach_reader_open_mem(r, f, len), 0);
	const struct tach_dict *rd = tach_reader_dict(r);
	static const char *const want[] = { "a.py", "inner", "b.py", "mid", "outer", "c.py", "new" };
	CHECK_EQ_U64(tach_dict_string_count(rd), 7);
	for (uint32_t i = 0; i < 7 && i < tach_dict_string_count(rd); i++)
		CHECK_EQ_STR(tach_dict_string(rd, i, NULL), want[i]);
	CHECK_EQ_U64(tach_dict_frame_count(rd), 6);
	static const int32_t lines[] = { 1, 2, 3, 9, -1, -1 };
	for (uint32_t i = 0; i < 6 && i < tach_dict_frame_count(rd); i++)
		CHECK_EQ_U64((uint32_t)tach_dict_frame(rd, i)->line, (uint32_t)lines[i]);
	const struct tach_frame *r4 = tach_dict_frame(rd, 4), *r5 = tach_dict_frame(rd, 5);
	CHECK(r4 && r5 && r4->file == r5->file && r4->func == r5->func && r4->line == r5->line &&
	      r4->end_line == r5->end_line && r4->col == r5->col && r4->end_col == r5->end_col &&
	      r4->opcode == r5->opcode);
	CHECK(r4 && r4->end_line == -1 && r4->file == 0 && r4->func == 4);
	tach_reader_free(r);
	free(f);
}

/* Regular file, pipe, O_APPEND file and a file at an offset give the same bytes. */
static void outputs(void)
{
	new_dict();
	size_t n = 0;
	for (int i = 0; i < 60; i++) {
		static const char *const st[] = { "abc", "abc", "dbc", "", "c", "ebc", "abc" };
		S(V, &n, (uint64_t)(i % 3) + 1, 5000 + (uint64_t)i * 7, (uint8_t)(i % 5),
		  st[(i * 5 + i / 3) % 7]);
	}
	static const char *const comps[] = { "none", "zstd" };
	for (int c = 0; c < 2; c++) {
		size_t l0, l1, l2, l3;
		uint8_t *a = write_tach(V, n, comps[c], TO_FILE, 5000, 7, &l0);
		uint8_t *b = write_tach(V, n, comps[c], TO_PIPE, 5000, 7, &l1);
		uint8_t *d = write_tach(V, n, comps[c], TO_APPEND, 5000, 7, &l2);
		uint8_t *e = write_tach(V, n, comps[c], TO_OFFSET, 5000, 7, &l3);
		CHECK(l0 > 96 && l0 == l1 && l0 == l2 && l0 == l3);
		CHECK(l0 == l1 && !memcmp(a, b, l0));
		CHECK(l0 == l2 && !memcmp(a, d, l0));
		CHECK(l0 == l3 && !memcmp(a, e, l0));
		CHECK_EQ_U64(tachi_rd32le(a + 56), (uint32_t)c);
		check_readback(a, l0, V, n, 7);
		free(a);
		free(b);
		free(d);
		free(e);
	}
	/* an empty profile: header and footer only */
	size_t l;
	uint8_t *a = write_tach(V, 0, "none", TO_PIPE, 77, 7, &l);
	CHECK_EQ_U64(l, 96);
	CHECK_EQ_U64(tachi_rd64(a + 40, false), 64);
	CHECK_EQ_U64(tachi_rd64(a + 48, false), 64);
	free(a);
}

/* Weight N: N samples one interval apart, the first as written and the rest as REPEAT. */
static void weights(void)
{
	new_dict();
	size_t n = 0;
	S(V, &n, 1, 1000, 1, "ab")->weight = 3;
	S(V, &n, 1, 1030, 2, "ab");
	S(V, &n, 1, 1040, 1, "b")->weight = 2;
	size_t len;
	uint8_t *f = write_tach(V, n, "none", TO_FILE, 1000, 10, &len);
	size_t k = records(f, len, R, 4096);
	CHECK_EQ_U64(k, 4);
	if (k == 4) {
		CHECK_REC(R[0], 1, 1, 2, 0);
		CHECK_EQ_U64(R[0].first_delta, 0);
		CHECK_REC(R[1], 1, 0, 3, 0);
		CHECK_EQ_U64(R[1].first_delta, 10);
		CHECK_REC(R[2], 1, 3, 1, 0);
		CHECK_REC(R[3], 1, 0, 1, 0);
		CHECK_EQ_U64(R[3].first_delta, 10);
	}
	CHECK_EQ_U64(tachi_rd64(f + 28, false), 6);
	check_readback(f, len, V, n, 10);
	free(f);
}

int main(void)
{
	encodings();
	rle_order();
	split(100, 8187);  /* 2-byte entries: 8187 * 2 + 11 > 16384 */
	split(1000, 5458); /* 3-byte entries */
	depth_cap();
	table_order();
	outputs();
	weights();
	tach_dict_free(D);
	return CHECK_DONE();
}
