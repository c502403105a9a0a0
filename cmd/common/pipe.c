/* A reading thread for inputs whose frame table is complete once the reader is open (TACH):
 * it decodes and filters while the calling thread aggregates and writes, so a conversion
 * takes about the longer of the two instead of their sum. Samples cross in batches, each as
 * a fixed header and only the inner frames that changed since the previous sample of its
 * thread, and a repeat of the batch's previous sample as one word. Order is kept: the
 * output is the same bytes as without the thread. Input that is mostly such repeats decodes
 * faster than it crosses threads, so after a batch of them the reader is handed back. */
#include "pipe.h"

#include <pthread.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

#define NBATCH 4
#define BATCH_WORDS (64u << 10)
/* slot, status, depth, changed frames, interpreter, thread id (2), time (2), weight (2),
 * the time it stands for in ns (2) */
#define HDR_WORDS 13
/* A word with this bit: the previous sample of the batch again, with the status in the next
 * 8 bits and the time since it in the low 23; slots stay below it. */
#define REPEAT 0x80000000u
#define REPEAT_DT (1u << 23)

/* Each side keeps to its own cache lines: the other thread's stores would otherwise make
 * every sample a cache miss. */
#define LINE 64

struct batch {
	uint32_t *w;
	size_t len, cap; /* len: set by the producer before the batch is handed over */
} __attribute__((aligned(LINE)));

/* Where the consumer rebuilds a thread's samples: frames innermost first, right-aligned so
 * that the unchanged outer frames stay where they are. */
struct stack {
	uint32_t *buf;
	uint32_t cap;
};

struct pkey {
	uint64_t tid;
	uint32_t iid;
	uint32_t slot1; /* slot + 1; 0: empty */
};

struct tc_pipe {
	tc_source_fn next; /* where samples come from */
	void *ctx;
	struct tach_reader *r;
	pthread_t thread;
	pthread_mutex_t mu;
	pthread_cond_t cv;
	/* Batches move producer -> consumer -> producer in ring order: [head, head + full)
	 * are ready to read; the producer fills b[(head + full) % NBATCH]. */
	unsigned head, full;
	bool done, stop;
	int rc; /* once done: the reader's final status, or 0 when the reader is handed back */
	struct batch b[NBATCH];
	struct {
		/* (thread id, interpreter id) -> slot */
		struct pkey *map;
		size_t map_mask, nslots;
		bool nomem; /* the pipe itself, not the reader, ran out of memory */
		/* the batch's last full record, for REPEAT words */
		uint32_t last_slot, last_depth;
		size_t repeats; /* REPEAT words in the batch */
		/* the previous sample's thread: runs of one thread skip the map */
		uint64_t prev_tid;
		uint32_t prev_iid, prev_slot;
		uint64_t last_ts, last_time;
	} prod __attribute__((aligned(LINE)));
	struct {
		struct stack *stacks;
		size_t nstacks;
		/* reading b[head] at pos, up to end, while holding */
		bool holding;
		bool direct; /* the reader is ours again */
		size_t pos, end;
		struct tach_sample out;
	} cons __attribute__((aligned(LINE)));
};

static uint64_t key_hash(uint64_t tid, uint32_t iid)
{
	uint64_t x = tid ^ ((uint64_t)iid << 32 | iid);
	x ^= x >> 30;
	x *= 0xbf58476d1ce4e5b9ULL;
	x ^= x >> 27;
	x *= 0x94d049bb133111ebULL;
	return x ^ (x >> 31);
}

static bool slot_of(struct tc_pipe *p, uint64_t tid, uint32_t iid, uint32_t *slot)
{
	if ((p->prod.nslots + 1) * 2 > p->prod.map_mask + 1) {
		size_t n = (p->prod.map_mask + 1) * 2;
		struct pkey *m = calloc(n, sizeof(*m));
		if (!m)
			return false;
		for (size_t i = 0; i <= p->prod.map_mask; i++) {
			if (!p->prod.map[i].slot1)
				continue;
			size_t j = key_hash(p->prod.map[i].tid, p->prod.map[i].iid) & (n - 1);
			while (m[j].slot1)
				j = (j + 1) & (n - 1);
			m[j] = p->prod.map[i];
		}
		free(p->prod.map);
		p->prod.map = m;
		p->prod.map_mask = n - 1;
	}
	size_t i = key_hash(tid, iid) & p->prod.map_mask;
	for (;; i = (i + 1) & p->prod.map_mask) {
		struct pkey *k = &p->prod.map[i];
		if (!k->slot1)
			break;
		if (k->tid == tid && k->iid == iid) {
			*slot = k->slot1 - 1;
			return true;
		}
	}
	if (p->prod.nslots >= REPEAT - 1)
		return false;
	p->prod.map[i] = (struct pkey){ tid, iid, (uint32_t)++p->prod.nslots };
	*slot = (uint32_t)(p->prod.nslots - 1);
	return true;
}

static bool put_sample(struct tc_pipe *p, struct batch *b, const struct tach_sample *s)
{
	uint32_t slot;
	if (s->thread_id == p->prod.prev_tid && s->interp_id == p->prod.prev_iid &&
	    p->prod.nslots) {
		slot = p->prod.prev_slot;
	} else {
		if (!slot_of(p, s->thread_id, s->interp_id, &slot))
			return false;
		p->prod.prev_tid = s->thread_id;
		p->prod.prev_iid = s->interp_id;
		p->prod.prev_slot = slot;
	}
	uint32_t keep = s->same_outer < s->depth ? s->same_outer : s->depth;
	uint32_t n = s->depth - keep;
	uint64_t dt = s->timestamp_us - p->prod.last_ts;
	if (!n && slot == p->prod.last_slot && s->depth == p->prod.last_depth &&
	    s->weight == 1 && s->time_ns == p->prod.last_time && s->timestamp_us >= p->prod.last_ts &&
	    dt < REPEAT_DT) {
		/* the batch's previous sample again, later: one word (RLE input is mostly these) */
		b->w[b->len++] = REPEAT | (uint32_t)s->status << 23 | (uint32_t)dt;
		p->prod.repeats++;
		p->prod.last_ts = s->timestamp_us;
		return true;
	}
	p->prod.last_slot = slot;
	p->prod.last_depth = s->depth;
	p->prod.last_ts = s->timestamp_us;
	p->prod.last_time = s->time_ns;
	if (s->weight != 1)
		p->prod.last_slot = UINT32_MAX;
	size_t need = b->len + HDR_WORDS + n;
	if (need > b->cap) {
		size_t cap = b->cap * 2 > need ? b->cap * 2 : need;
		uint32_t *w = realloc(b->w, cap * sizeof(*w));
		if (!w)
			return false;
		b->w = w;
		b->cap = cap;
	}
	uint32_t *w = b->w + b->len;
	w[0] = slot;
	w[1] = s->status;
	w[2] = s->depth;
	w[3] = n;
	w[4] = s->interp_id;
	w[5] = (uint32_t)s->thread_id;
	w[6] = (uint32_t)(s->thread_id >> 32);
	w[7] = (uint32_t)s->timestamp_us;
	w[8] = (uint32_t)(s->timestamp_us >> 32);
	w[9] = (uint32_t)s->weight;
	w[10] = (uint32_t)(s->weight >> 32);
	w[11] = (uint32_t)s->time_ns;
	w[12] = (uint32_t)(s->time_ns >> 32);
	if (n)
		memcpy(w + HDR_WORDS, s->frames, n * sizeof(*w));
	b->len = need;
	return true;
}

static void *produce(void *arg)
{
	struct tc_pipe *p = arg;
	int rc = TACH_OK;
	for (;;) {
		pthread_mutex_lock(&p->mu);
		while (p->full == NBATCH && !p->stop)
			pthread_cond_wait(&p->cv, &p->mu);
		bool stop = p->stop;
		struct batch *b = &p->b[(p->head + p->full) % NBATCH];
		pthread_mutex_unlock(&p->mu);
		if (stop)
			return NULL;
		b->len = 0;
		p->prod.last_slot = UINT32_MAX;
		p->prod.repeats = 0;
		size_t samples = 0;
		while (b->len + HDR_WORDS <= BATCH_WORDS) {
			const struct tach_sample *s;
			rc = p->next(p->ctx, p->r, &s);
			if (rc)
				break;
			if (!put_sample(p, b, s)) {
				p->prod.nomem = true;
				rc = TACH_E_NOMEM;
				break;
			}
			samples++;
		}
		/* Mostly repeats of the previous sample: the reader makes those faster than they
		 * cross threads, so the main thread takes the reader back. */
		bool hand_back = !rc && p->prod.repeats * 4 >= samples * 3;
		pthread_mutex_lock(&p->mu);
		p->full++;
		if (rc || hand_back) {
			p->done = true;
			p->rc = rc;
		}
		pthread_cond_broadcast(&p->cv);
		pthread_mutex_unlock(&p->mu);
		if (rc || hand_back)
			return NULL;
	}
}

/* The CPUs this process may run on; 0 when the system does not say. */
static int cpus_ours(void)
{
	cpu_set_t set;
	return sched_getaffinity(0, sizeof(set), &set) ? 0 : CPU_COUNT(&set);
}

bool tc_pipe_wanted(void)
{
	const char *e = getenv("TACHFMT_THREADS");
	if (e && *e)
		return strcmp(e, "1") != 0;
	return cpus_ours() > 1;
}

unsigned tc_gzip_workers(void)
{
	int n = cpus_ours();
	return n < 2 ? 2 : n > 8 ? 8 : (unsigned)n;
}

int tc_pipe_start(struct tc_pipe **pp, tc_source_fn next, void *ctx, struct tach_reader *r)
{
	struct tc_pipe *p = calloc(1, sizeof(*p));
	if (!p)
		return TACH_E_NOMEM;
	p->next = next;
	p->ctx = ctx;
	p->r = r;
	p->prod.map_mask = 15;
	p->prod.map = calloc(p->prod.map_mask + 1, sizeof(*p->prod.map));
	bool ok = p->prod.map != NULL;
	for (unsigned i = 0; i < NBATCH && ok; i++) {
		p->b[i].cap = BATCH_WORDS;
		p->b[i].w = malloc(BATCH_WORDS * sizeof(uint32_t));
		ok = p->b[i].w != NULL;
	}
	if (ok) {
		pthread_mutex_init(&p->mu, NULL);
		pthread_cond_init(&p->cv, NULL);
		if (pthread_create(&p->thread, NULL, produce, p)) {
			pthread_cond_destroy(&p->cv);
			pthread_mutex_destroy(&p->mu);
			ok = false;
		}
	}
	if (!ok) {
		for (unsigned i = 0; i < NBATCH; i++)
			free(p->b[i].w);
		free(p->prod.map);
		free(p);
		return TACH_E_NOMEM;
	}
	*pp = p;
	return TACH_OK;
}

/* The consumer's stack for slot, able to hold depth frames. */
static struct stack *stack_for(struct tc_pipe *p, uint32_t slot, uint32_t depth)
{
	if (slot >= p->cons.nstacks) {
		size_t n = p->cons.nstacks ? p->cons.nstacks * 2 : 16;
		while (n <= slot)
			n *= 2;
		struct stack *v = realloc(p->cons.stacks, n * sizeof(*v));
		if (!v)
			return NULL;
		memset(v + p->cons.nstacks, 0, (n - p->cons.nstacks) * sizeof(*v));
		p->cons.stacks = v;
		p->cons.nstacks = n;
	}
	struct stack *st = &p->cons.stacks[slot];
	/* an empty first stack still gets a buffer: the caller points to its end */
	if (depth > st->cap || !st->buf) {
		uint32_t cap = st->cap * 2 > depth ? st->cap * 2 : depth < 64 ? 64 : depth;
		uint32_t *buf = malloc((size_t)cap * sizeof(*buf));
		if (!buf)
			return NULL;
		if (st->cap)
			memcpy(buf + cap - st->cap, st->buf, st->cap * sizeof(*buf));
		free(st->buf);
		st->buf = buf;
		st->cap = cap;
	}
	return st;
}

int tc_pipe_next(struct tc_pipe *p, const struct tach_sample **out)
{
	if (p->cons.direct)
		return p->next(p->ctx, p->r, out);
	for (;;) {
		const struct batch *b = &p->b[p->head];
		if (p->cons.holding && p->cons.pos < p->cons.end) {
			const uint32_t *w = b->w + p->cons.pos;
			if (w[0] & REPEAT) {
				p->cons.out.timestamp_us += w[0] & (REPEAT_DT - 1);
				p->cons.out.status = (uint8_t)(w[0] >> 23);
				p->cons.out.same_outer = p->cons.out.depth;
				p->cons.pos++;
				*out = &p->cons.out;
				return TACH_OK;
			}
			uint32_t depth = w[2], n = w[3];
			struct stack *st = stack_for(p, w[0], depth);
			if (!st) {
				p->prod.nomem = true;
				return TACH_E_NOMEM;
			}
			uint32_t *frames = st->buf + st->cap - depth;
			if (n)
				memcpy(frames, w + HDR_WORDS, n * sizeof(*frames));
			p->cons.out = (struct tach_sample){
				.thread_id = (uint64_t)w[6] << 32 | w[5],
				.timestamp_us = (uint64_t)w[8] << 32 | w[7],
				.weight = (uint64_t)w[10] << 32 | w[9],
				.time_ns = (uint64_t)w[12] << 32 | w[11],
				.interp_id = w[4],
				.status = (uint8_t)w[1],
				.depth = depth,
				.same_outer = depth - n,
				.frames = frames,
			};
			p->cons.pos += HDR_WORDS + n;
			*out = &p->cons.out;
			return TACH_OK;
		}
		pthread_mutex_lock(&p->mu);
		if (p->cons.holding) {
			/* this batch is read: hand it back */
			p->head = (p->head + 1) % NBATCH;
			p->full--;
			p->cons.holding = false;
			pthread_cond_broadcast(&p->cv);
		}
		while (!p->full && !p->done)
			pthread_cond_wait(&p->cv, &p->mu);
		if (p->full) {
			p->cons.holding = true;
			p->cons.pos = 0;
			p->cons.end = p->b[p->head].len;
		}
		bool end = !p->cons.holding;
		pthread_mutex_unlock(&p->mu);
		if (end) {
			if (p->rc)
				return p->rc;
			/* the thread handed the reader back (or stopped): read directly */
			p->cons.direct = true;
			return p->next(p->ctx, p->r, out);
		}
	}
}

bool tc_pipe_out_of_memory(const struct tc_pipe *p)
{
	return p->prod.nomem;
}

void tc_pipe_stop(struct tc_pipe *p)
{
	pthread_mutex_lock(&p->mu);
	p->stop = true;
	pthread_cond_broadcast(&p->cv);
	pthread_mutex_unlock(&p->mu);
	pthread_join(p->thread, NULL);
	pthread_cond_destroy(&p->cv);
	pthread_mutex_destroy(&p->mu);
	for (unsigned i = 0; i < NBATCH; i++)
		free(p->b[i].w);
	for (size_t i = 0; i < p->cons.nstacks; i++)
		free(p->cons.stacks[i].buf);
	free(p->cons.stacks);
	free(p->prod.map);
	free(p);
}
