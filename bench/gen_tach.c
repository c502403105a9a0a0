/* gen_tach: write a large, deterministic TACH profile for the benchmarks, through the public
 * libtachfmt API (a dict, samples pushed into a "tach" writer).
 *
 *   gen_tach SHAPE SAMPLES OUTPUT [zstd|none]
 *
 * SHAPE "rle": four threads whose stacks stay the same for long runs (hundreds of samples),
 * drawn from a few dozen distinct stacks; nearly every record is a REPEAT entry.
 * SHAPE "churn": eight threads whose stack changes on every sample; 4000 distinct stacks,
 * 10 to 60 frames deep, all under the same server loop and request dispatch, in families
 * that share their outer half; a thread mostly moves within a family, so records are mostly
 * POP_PUSH and SUFFIX with some FULL.
 * SHAPE "deep": two threads in a recursion 100 to 250 frames deep over a dozen distinct
 * frames; each sample pops 0 to 4 frames and pushes 0 to 4 (a random walk), so nearly every
 * sample is a distinct stack that shares all but its innermost few frames with the last one.
 * SHAPE "wide": high cardinality, shallow: eight threads, each sample one of 300000 distinct
 * stacks 8 to 20 frames deep drawn at random.
 * SHAPE "widedeep": the same with stacks 80 to 200 frames deep (a deep common outer part
 * and a distinct inner tail).
 *
 * The same arguments always give the same file (a fixed-seed generator, no clock).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <fcntl.h>
#include <unistd.h>

#include "tachfmt.h"

#define MAX_DEPTH 256

static uint64_t rng_state = 0x9E3779B97F4A7C15ull;

static uint64_t rnd(void)
{
	/* splitmix64: small, fast and the same everywhere. */
	uint64_t z = (rng_state += 0x9E3779B97F4A7C15ull);
	z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
	z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
	return z ^ (z >> 31);
}

static uint32_t below(uint32_t n)
{
	return (uint32_t)(rnd() % n);
}

struct stack {
	uint32_t depth;
	uint32_t frames[MAX_DEPTH]; /* innermost first */
};

static struct tach_dict *dict;

static void die(const char *what)
{
	fprintf(stderr, "gen_tach: %s\n", what);
	exit(1);
}

static uint32_t frame(const char *file, const char *func, int32_t line)
{
	uint32_t fs, fn, id;
	if (tach_dict_intern_string(dict, file, strlen(file), &fs) ||
	    tach_dict_intern_string(dict, func, strlen(func), &fn))
		die("out of memory");
	struct tach_frame f = { fs, fn, line, line, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_frame(dict, &f, &id))
		die("out of memory");
	return id;
}

/* A synthetic code base: NMOD modules of NFUNC functions, each called from a few lines. */
#define NMOD 40
#define NFUNC 25

static uint32_t code_frame(uint32_t mod, uint32_t func, uint32_t site)
{
	/* Memoized: the wide shapes ask for the same frames millions of times. */
	static uint32_t memo[NMOD][NFUNC][3];
	if (memo[mod][func][site])
		return memo[mod][func][site] - 1;
	char file[96], name[64];
	snprintf(file, sizeof(file), "/srv/app/lib/python3.15/site-packages/pkg%02u/mod%02u.py",
		 mod % 8, mod);
	snprintf(name, sizeof(name), "func_%02u_%02u", mod, func);
	memo[mod][func][site] = frame(file, name, (int32_t)(10 + func * 40 + site * 3)) + 1;
	return memo[mod][func][site] - 1;
}

/* Builds a stack outermost first into tmp, then stores it innermost first. */
static void make_stack(struct stack *s, const uint32_t *outer, uint32_t nouter, uint32_t depth)
{
	uint32_t tmp[MAX_DEPTH];
	uint32_t n = 0;
	for (uint32_t i = 0; i < nouter && n < depth; i++)
		tmp[n++] = outer[i];
	/* A walk through the code base: mostly calls within a module, sometimes across. */
	uint32_t mod = below(NMOD);
	while (n < depth) {
		if (below(4) == 0)
			mod = below(NMOD);
		tmp[n++] = code_frame(mod, below(NFUNC), below(3));
	}
	s->depth = depth;
	for (uint32_t i = 0; i < depth; i++)
		s->frames[i] = tmp[depth - 1 - i];
}

/* A variant of base that shares its outer keep frames and differs below them. */
static void derive_stack(struct stack *s, const struct stack *base, uint32_t keep, uint32_t depth)
{
	uint32_t tmp[MAX_DEPTH];
	uint32_t n = 0;
	for (uint32_t i = 0; i < keep && n < depth; i++)
		tmp[n++] = base->frames[base->depth - 1 - i];
	uint32_t mod = below(NMOD);
	while (n < depth)
		tmp[n++] = code_frame(mod, below(NFUNC), below(3));
	s->depth = depth;
	for (uint32_t i = 0; i < depth; i++)
		s->frames[i] = tmp[depth - 1 - i];
}


/* deep: a recursion over a few frames; the walk stays within [DEEP_MIN, DEEP_MAX]. */
#define DEEP_MIN 100
#define DEEP_MAX 250

static void deep_step(struct stack *s, const uint32_t *rec, uint32_t nrec)
{
	/* frames[] here is outermost first; the caller reverses a copy for the writer. */
	uint32_t pop = below(5), push = below(5);
	if (s->depth - pop < DEEP_MIN)
		pop = s->depth - DEEP_MIN;
	s->depth -= pop;
	while (push-- && s->depth < DEEP_MAX)
		s->frames[s->depth++] = rec[below(nrec)];
}

/* wide and widedeep: stack number k, built from k alone (its own generator state), outermost
 * first into tmp; returns the depth. */
static uint32_t wide_stack(uint32_t k, int deep, const uint32_t *outer, uint32_t *tmp)
{
	uint64_t save = rng_state;
	rng_state = 0x1234567ull + k * 0x9E3779B97F4A7C15ull;
	uint32_t depth = deep ? 80 + below(121) : 8 + below(13), n = 0;
	for (uint32_t i = 0; i < 6; i++)
		tmp[n++] = outer[i];
	/* The deep variant shares a long outer part (one of 16 frameworks) before the tail. */
	uint32_t fw = below(16);
	while (deep && n < depth - 12)
		tmp[n] = code_frame(fw, n % NFUNC, 0), n++;
	uint32_t mod = below(NMOD);
	while (n < depth) {
		if (below(4) == 0)
			mod = below(NMOD);
		tmp[n++] = code_frame(mod, below(NFUNC), below(3));
	}
	rng_state = save;
	return depth;
}

/* One sample of thread t: mostly running with the GIL; now and then waiting for it, or off
 * CPU. */
static void put(struct tach_writer *w, uint32_t t, uint64_t ts, uint32_t depth,
		const uint32_t *frames)
{
	uint32_t r = below(100);
	uint8_t status = r < 80 ? TACH_STATUS_HAS_GIL | TACH_STATUS_ON_CPU
			 : r < 90 ? TACH_STATUS_GIL_REQUESTED
				  : 0;
	if (t == 0)
		status |= TACH_STATUS_MAIN_THREAD;
	struct tach_sample smp = {
		.thread_id = 0x7f0000001000ull + t * 0x100000ull,
		.timestamp_us = ts,
		.weight = 1,
		.status = status,
		.depth = depth,
		.frames = frames,
	};
	if (tach_writer_put(w, dict, &smp))
		die(tach_writer_error(w));
}

/* The deep, wide and widedeep shapes (see the top of the file). */
static void gen_more(struct tach_writer *w, const char *shape, unsigned long long total,
		     const uint32_t *outer, uint64_t ts, uint64_t interval)
{
	int deep = !strcmp(shape, "deep"), wdeep = !strcmp(shape, "widedeep");
	uint32_t nthreads = deep ? 2 : 8, rec[12], inner[MAX_DEPTH], tmp[MAX_DEPTH];
	static const char *names[12] = { "parse_expr", "parse_term", "parse_factor",
		"parse_atom", "parse_call", "parse_args", "visit", "visit_children", "walk",
		"eval", "apply", "lookup" };
	for (uint32_t i = 0; i < 12; i++)
		rec[i] = frame("/srv/app/interp.py", names[i], (int32_t)(20 + i * 30));
	struct stack walk[2];
	for (uint32_t t = 0; t < 2; t++) {
		walk[t].depth = 0;
		for (uint32_t i = 0; i < 6; i++)
			walk[t].frames[walk[t].depth++] = outer[i];
		while (walk[t].depth < DEEP_MIN)
			walk[t].frames[walk[t].depth++] = rec[below(12)];
	}
	for (unsigned long long n = 0; n < total; n++) {
		uint32_t t = (uint32_t)(n % nthreads), d;
		if (t == 0)
			ts += interval;
		if (deep) {
			deep_step(&walk[t], rec, 12);
			d = walk[t].depth;
			memcpy(tmp, walk[t].frames, d * sizeof(*tmp));
		} else {
			d = wide_stack(below(300000), wdeep, outer, tmp);
		}
		for (uint32_t i = 0; i < d; i++)
			inner[i] = tmp[d - 1 - i];
		put(w, t, ts, d, inner);
	}
}

int main(int argc, char **argv)
{
	if (argc < 4 || argc > 5) {
		fprintf(stderr, "usage: gen_tach rle|churn|deep|wide|widedeep SAMPLES OUTPUT "
				"[zstd|none]\n");
		return 2;
	}
	int churn = !strcmp(argv[1], "churn");
	int more = !strcmp(argv[1], "deep") || !strcmp(argv[1], "wide") ||
		   !strcmp(argv[1], "widedeep");
	char *end;
	unsigned long long total = strtoull(argv[2], &end, 10);
	if ((!churn && !more && strcmp(argv[1], "rle")) || *end || !total) {
		fprintf(stderr, "gen_tach: SHAPE is rle, churn, deep, wide or widedeep, SAMPLES a "
				"positive number\n");
		return 2;
	}
	dict = tach_dict_new();
	struct tach_writer *w = tach_writer_new("tach");
	if (!dict || !w)
		die("out of memory");
	if (argc == 5 && tach_writer_set_option(w, "compression", argv[4]))
		die(tach_writer_error(w));
	int fd = open(argv[3], O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (fd < 0) {
		perror(argv[3]);
		return 1;
	}

	uint32_t outer[6] = {
		frame("/usr/lib/python3.15/runpy.py", "_run_module_as_main", 198),
		frame("/usr/lib/python3.15/runpy.py", "_run_code", 88),
		frame("/srv/app/server.py", "<module>", 412),
		frame("/srv/app/server.py", "serve_forever", 233),
		frame("/srv/app/server.py", "handle_request", 120),
		frame("/srv/app/dispatch.py", "dispatch", 57),
	};
	struct tach_meta m = TACH_META_INIT;
	m.start_time_us = 1000000000;
	m.interval_us = 100;
	if (tach_writer_open_fd(w, fd) || tach_writer_set_meta(w, &m))
		die(tach_writer_error(w));
	if (more) {
		gen_more(w, argv[1], total, outer, m.start_time_us, m.interval_us);
		goto close;
	}
	/* churn: 200 families of 20 stacks; the stacks of a family share their outer frames
	 * (at least half of each stack) and differ in the 2 to 15 innermost ones. */
	uint32_t nfam = 200, famsize = 20;
	uint32_t nstacks = churn ? nfam * famsize : 48;
	struct stack *pool = malloc(nstacks * sizeof(*pool));
	if (!pool)
		die("out of memory");
	for (uint32_t i = 0; i < nstacks; i++) {
		if (!churn) {
			make_stack(&pool[i], outer, 6, 12 + below(19));
		} else if (i % famsize == 0) {
			make_stack(&pool[i], outer, 6, 8 + below(38));
		} else {
			const struct stack *b = &pool[i - i % famsize];
			uint32_t depth = b->depth + 2 + below(14);
			derive_stack(&pool[i], b, b->depth, depth > 60 ? 60 : depth < 10 ? 10 : depth);
		}
	}

	uint32_t nthreads = churn ? 8 : 4;

	uint32_t cur[16];
	uint64_t left[16] = { 0 };
	uint64_t ts = m.start_time_us;
	for (uint32_t t = 0; t < nthreads; t++)
		cur[t] = below(nstacks);
	for (unsigned long long n = 0; n < total; n++) {
		uint32_t t = (uint32_t)(n % nthreads);
		if (t == 0)
			ts += m.interval_us;
		if (churn) {
			/* Mostly another stack of the same family, sometimes a jump elsewhere. */
			uint32_t next;
			if (below(10)) {
				uint32_t fam = cur[t] - cur[t] % famsize, k = below(famsize - 1);
				next = fam + k;
				if (next >= cur[t])
					next++;
			} else {
				next = below(nstacks - 1);
				if (next >= cur[t])
					next++;
			}
			cur[t] = next;
		} else if (!left[t]) {
			cur[t] = below(nstacks);
			left[t] = 100 + below(900);
		}
		if (left[t])
			left[t]--;
		const struct stack *s = &pool[cur[t]];
		put(w, t, ts, s->depth, s->frames);
	}
	free(pool);
close:
	if (tach_writer_close(w))
		die(tach_writer_error(w));
	if (close(fd)) {
		perror(argv[3]);
		return 1;
	}
	tach_writer_free(w);
	tach_dict_free(dict);
	return 0;
}
