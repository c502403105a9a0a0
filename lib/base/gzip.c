/* gzip output in fixed chunks of input, for the writers that compress (pprof, Gecko).
 *
 * Each GZ_CHUNK bytes of input are deflated on their own: raw deflate at the writer's level,
 * the 32 KiB of input before them as the dictionary, and a sync flush at their end (the last
 * chunk finishes the stream). Joined in order behind one header, with a CRC combined from
 * theirs, they are one ordinary gzip member, as pigz makes. A chunk's bytes depend on it and
 * the input before it alone, so any number of workers can compress chunks at once and the
 * output is the same bytes for every number, none included (the caller's thread then does
 * it), and a second CPU halves that part of a large conversion. Levels 1 to 3 deflate with
 * ISA-L's igzip when the library is built with it (meson option isal, off by default): on
 * Gecko JSON its level 1 runs at some 500 MB/s a core and makes files 5% smaller than
 * zlib's level 1, which runs at 150 MB/s, slower than the writers format. But libisal
 * 2.30's deflate gives another valid stream for the same input in about one process in a
 * thousand (it follows where ASLR placed the process's memory: none in 9,000 runs without
 * it), and output must depend on the input alone; so zlib, whose bytes depend on the
 * input, level and version, does every level by default.
 *
 * Workers start at the first full chunk, so a small output makes no thread. The caller's
 * thread fills chunks and writes finished ones out in order; it waits only when every slot
 * is in use. */
#include <pthread.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>
#ifdef TACHI_HAVE_ISAL
#include <isa-l/crc.h>
#include <isa-l/igzip_lib.h>
#endif

#include "base/gzip.h"
#include "base/io.h"

#define GZ_CHUNK (128u << 10)
#define GZ_DICT (32u << 10)

/* A compressor of chunks, one a thread: igzip for levels 1 to 3 when built with it, zlib
 * otherwise. */
struct gzeng {
	z_stream z;
	bool z_live;
#ifdef TACHI_HAVE_ISAL
	struct isal_zstream is;
	uint8_t *level_buf;
#endif
};

enum { SLOT_FREE, SLOT_FILLING, SLOT_QUEUED, SLOT_DONE };

struct gzslot {
	uint8_t *buf;  /* the dictionary (dict bytes), then the chunk (n bytes) */
	size_t dict, n;
	uint8_t *out;  /* the chunk's deflate bytes */
	size_t out_len, out_cap;
	uint32_t crc;
	bool last;
	int state;
	bool failed;   /* the compressor refused the chunk (out of memory) */
};

struct tachi_gz {
	struct tachi_out *out;
	int level;
	unsigned want;    /* workers asked for */
	unsigned started; /* workers running */
	pthread_t *threads;
	pthread_mutex_t mu;
	pthread_cond_t work, done;
	bool stop;
	struct gzslot *slots;
	unsigned nslots;
	uint64_t fill;    /* number of the chunk being filled */
	uint64_t take;    /* the next chunk a worker takes */
	uint64_t put;     /* the next chunk to write out */
	struct gzeng eng; /* the caller's own, when no worker runs */
	bool eng_live;
	uint32_t crc;
	uint64_t total;
	int err;          /* TACH_E_IO (out->err says why) or TACH_E_NOMEM; sticky */
};

/* Grows s->out when an engine filled it: out_cap is the bound and some, so more is a
 * surprise, not an error. */
static bool grow_out(struct gzslot *s)
{
	uint8_t *o = realloc(s->out, s->out_cap * 2);
	if (!o)
		return false;
	s->out = o;
	s->out_cap *= 2;
	return true;
}

static bool zlib_slot(z_stream *z, struct gzslot *s)
{
	if (deflateReset(z) != Z_OK ||
	    (s->dict && deflateSetDictionary(z, s->buf, (uInt)s->dict) != Z_OK))
		return false;
	z->next_in = s->buf + s->dict;
	z->avail_in = (uInt)s->n;
	s->out_len = 0;
	for (;;) {
		z->next_out = s->out + s->out_len;
		z->avail_out = (uInt)(s->out_cap - s->out_len);
		int zr = deflate(z, s->last ? Z_FINISH : Z_SYNC_FLUSH);
		if (zr == Z_STREAM_ERROR)
			return false;
		s->out_len = s->out_cap - z->avail_out;
		/* room left over: all of it is out (or the stream is finished) */
		if (z->avail_out && (!s->last || zr == Z_STREAM_END))
			return true;
		if (!grow_out(s))
			return false;
	}
}

#ifdef TACHI_HAVE_ISAL
static bool isal_slot(struct isal_zstream *z, struct gzslot *s)
{
	isal_deflate_reset(z);
	if (s->dict && isal_deflate_set_dict(z, s->buf, (uint32_t)s->dict) != COMP_OK)
		return false;
	z->next_in = s->buf + s->dict;
	z->avail_in = (uint32_t)s->n;
	/* a sync flush ends a chunk on a byte with an empty stored block, as zlib's does */
	z->flush = SYNC_FLUSH;
	z->end_of_stream = s->last;
	s->out_len = 0;
	for (;;) {
		z->next_out = s->out + s->out_len;
		z->avail_out = (uint32_t)(s->out_cap - s->out_len);
		uint32_t in_before = z->avail_in, out_before = z->avail_out;
		int state_before = (int)z->internal_state.state;
		if (isal_deflate(z) != COMP_OK)
			return false;
		s->out_len = s->out_cap - z->avail_out;
		bool ended = s->last ? z->internal_state.state == ZSTATE_END
				     : z->internal_state.state == ZSTATE_NEW_HDR;
		if (z->avail_out && !z->avail_in && ended)
			return true;
		/* a call that moved nothing with room to spare would loop forever */
		if (z->avail_out && z->avail_in == in_before && z->avail_out == out_before &&
		    (int)z->internal_state.state == state_before)
			return false;
		if (!z->avail_out && !grow_out(s))
			return false;
	}
}
#endif

/* Deflates s into s->out with e (raw deflate at e's level), and sums its CRC. */
static bool deflate_slot(struct gzeng *e, struct gzslot *s)
{
#ifdef TACHI_HAVE_ISAL
	if (e->level_buf) {
		if (!isal_slot(&e->is, s))
			return false;
		s->crc = crc32_gzip_refl(0, s->buf + s->dict, s->n);
		return true;
	}
#endif
	if (!zlib_slot(&e->z, s))
		return false;
	s->crc = (uint32_t)crc32(0, s->buf + s->dict, (uInt)s->n);
	return true;
}

static bool eng_init(struct gzeng *e, int level)
{
	memset(e, 0, sizeof(*e));
#ifdef TACHI_HAVE_ISAL
	static const uint32_t sizes[] = { 0, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT,
					  ISAL_DEF_LVL3_DEFAULT };
	if (level >= 1 && level <= ISAL_DEF_MAX_LEVEL) {
		isal_deflate_init(&e->is);
		e->is.level = (uint32_t)level;
		e->is.level_buf_size = sizes[level];
		e->is.gzip_flag = IGZIP_DEFLATE;
		e->level_buf = malloc(sizes[level]);
		e->is.level_buf = e->level_buf;
		return e->level_buf != NULL;
	}
#endif
	e->z_live = deflateInit2(&e->z, level, Z_DEFLATED, -15, 8, Z_DEFAULT_STRATEGY) == Z_OK;
	return e->z_live;
}

static void eng_end(struct gzeng *e)
{
	if (e->z_live)
		deflateEnd(&e->z);
#ifdef TACHI_HAVE_ISAL
	free(e->level_buf);
#endif
	memset(e, 0, sizeof(*e));
}

static void *worker(void *arg)
{
	struct tachi_gz *g = arg;
	struct gzeng e;
	bool live = eng_init(&e, g->level);
	pthread_mutex_lock(&g->mu);
	for (;;) {
		while (!g->stop && g->take == g->fill)
			pthread_cond_wait(&g->work, &g->mu);
		if (g->stop)
			break;
		struct gzslot *s = &g->slots[g->take++ % g->nslots];
		pthread_mutex_unlock(&g->mu);
		bool ok = live && deflate_slot(&e, s);
		pthread_mutex_lock(&g->mu);
		s->failed = !ok;
		s->state = SLOT_DONE;
		pthread_cond_broadcast(&g->done);
	}
	pthread_mutex_unlock(&g->mu);
	eng_end(&e);
	return NULL;
}

static int gz_fail(struct tachi_gz *g, int code)
{
	if (!g->err)
		g->err = code;
	return g->err;
}

static int out_bytes(struct tachi_gz *g, const void *p, size_t n)
{
	if (n && tachi_out_write(g->out, p, n))
		return gz_fail(g, TACH_E_IO);
	return TACH_OK;
}

static void put_le32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

/* Writes chunk s, which is done, unless a failure came before: nothing follows a chunk
 * that is missing. The caller frees its slot. */
static int emit_slot(struct tachi_gz *g, const struct gzslot *s)
{
	g->put++;
	if (s->failed)
		gz_fail(g, TACH_E_NOMEM);
	if (g->err)
		return g->err;
	g->crc = (uint32_t)crc32_combine(g->crc, s->crc, (z_off_t)s->n);
	g->total += s->n;
	return out_bytes(g, s->out, s->out_len);
}

/* Starts the workers, as many as will start; none at all leaves the work to the caller.
 * They block every signal, so that the program's handlers run on its own threads. */
static void start_workers(struct tachi_gz *g)
{
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	g->threads = calloc(g->want, sizeof(*g->threads));
	for (unsigned i = 0; g->threads && i < g->want; i++) {
		if (pthread_create(&g->threads[i], NULL, worker, g))
			break;
		g->started++;
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
}

/* Makes dest the chunk being filled, with the last 32 KiB of the input up to the end of
 * prev as its dictionary; dest may be prev itself. */
static void next_chunk(struct gzslot *dest, const struct gzslot *prev)
{
	size_t have = prev->dict + prev->n, keep = have < GZ_DICT ? have : GZ_DICT;
	memmove(dest->buf, prev->buf + have - keep, keep);
	dest->dict = keep;
	dest->n = 0;
	dest->last = false;
	dest->state = SLOT_FILLING;
}

/* Writes out the done chunks in order until free_slot is free or, when it is NULL, until
 * every chunk handed on is written. Called with mu held. */
static int drain(struct tachi_gz *g, const struct gzslot *free_slot)
{
	int rc = TACH_OK;
	for (;;) {
		struct gzslot *o = &g->slots[g->put % g->nslots];
		if (g->put < g->fill && o->state == SLOT_DONE) {
			pthread_mutex_unlock(&g->mu);
			int e = emit_slot(g, o);
			rc = rc ? rc : e;
			pthread_mutex_lock(&g->mu);
			o->state = SLOT_FREE;
			continue;
		}
		if (free_slot ? free_slot->state == SLOT_FREE : g->put == g->fill)
			return rc;
		pthread_cond_wait(&g->done, &g->mu);
	}
}

/* Hands the chunk being filled on: to a worker, or deflated and written here. Unless it is
 * the last, the next slot becomes the chunk being filled. */
static int hand_on(struct tachi_gz *g, bool last)
{
	struct gzslot *s = &g->slots[g->fill % g->nslots];
	struct gzslot *next = &g->slots[(g->fill + 1) % g->nslots];
	s->last = last;
	if (!g->started) {
		if (!g->eng_live && !(g->eng_live = eng_init(&g->eng, g->level)))
			return gz_fail(g, TACH_E_NOMEM);
		s->failed = !deflate_slot(&g->eng, s);
		g->fill++;
		int rc = emit_slot(g, s);
		s->state = SLOT_FREE;
		if (!rc && !last)
			next_chunk(next, s);
		return rc;
	}
	pthread_mutex_lock(&g->mu);
	/* the next slot's dictionary comes from s, so it is copied before s is queued */
	int rc = last ? TACH_OK : drain(g, next);
	if (!rc && !last)
		next_chunk(next, s);
	s->state = SLOT_QUEUED;
	g->fill++;
	pthread_cond_signal(&g->work);
	if (!rc && last)
		rc = drain(g, NULL);
	pthread_mutex_unlock(&g->mu);
	return rc;
}

int tachi_gz_write(struct tachi_gz *g, const void *p, size_t n)
{
	const uint8_t *q = p;
	while (n && !g->err) {
		struct gzslot *s = &g->slots[g->fill % g->nslots];
		size_t k = GZ_CHUNK - s->n < n ? GZ_CHUNK - s->n : n;
		memcpy(s->buf + s->dict + s->n, q, k);
		s->n += k;
		q += k;
		n -= k;
		if (s->n == GZ_CHUNK) {
			if (g->want && !g->threads)
				start_workers(g);
			hand_on(g, false);
		}
	}
	return g->err;
}

static void stop_workers(struct tachi_gz *g)
{
	if (!g->threads)
		return;
	pthread_mutex_lock(&g->mu);
	g->stop = true;
	pthread_cond_broadcast(&g->work);
	pthread_mutex_unlock(&g->mu);
	for (unsigned i = 0; i < g->started; i++)
		pthread_join(g->threads[i], NULL);
	free(g->threads);
	g->threads = NULL;
	g->started = 0;
}

int tachi_gz_finish(struct tachi_gz *g)
{
	if (g->err)
		return g->err;
	int rc = hand_on(g, true);
	/* every chunk is written: the workers have nothing left to do */
	stop_workers(g);
	if (rc)
		return rc;
	uint8_t t[8];
	put_le32(t, g->crc);
	put_le32(t + 4, (uint32_t)g->total);
	return out_bytes(g, t, sizeof(t));
}

void tachi_gz_free(struct tachi_gz *g)
{
	if (!g)
		return;
	stop_workers(g);
	for (unsigned i = 0; i < g->nslots; i++) {
		free(g->slots[i].buf);
		free(g->slots[i].out);
	}
	free(g->slots);
	if (g->eng_live)
		eng_end(&g->eng);
	pthread_cond_destroy(&g->work);
	pthread_cond_destroy(&g->done);
	pthread_mutex_destroy(&g->mu);
	free(g);
}

/* The header of a gzip member as zlib writes one: no name, mtime 0, the extra flags that
 * say fastest (level 1) or best (level 9), and Unix as the system. */
static int write_header(struct tachi_gz *g)
{
	uint8_t h[10] = { 0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 3 };
	h[8] = g->level == 9 ? 2 : g->level == 1 ? 4 : 0;
	return out_bytes(g, h, sizeof(h));
}

int tachi_gz_open(struct tachi_gz **gp, struct tachi_out *out, int level, unsigned workers)
{
	*gp = NULL;
	if (workers > TACHI_GZ_MAX_WORKERS)
		workers = TACHI_GZ_MAX_WORKERS;
	struct tachi_gz *g = calloc(1, sizeof(*g));
	if (!g)
		return TACH_E_NOMEM;
	g->out = out;
	g->level = level;
	g->want = workers;
	g->crc = (uint32_t)crc32(0, NULL, 0);
	/* each worker one chunk in hand and one done, and the one being filled */
	g->nslots = workers ? 2 * workers + 1 : 1;
	pthread_mutex_init(&g->mu, NULL);
	pthread_cond_init(&g->work, NULL);
	pthread_cond_init(&g->done, NULL);
	g->slots = calloc(g->nslots, sizeof(*g->slots));
	/* deflateBound of a stream at this level, plus the sync flush's empty stored block */
	size_t cap = compressBound(GZ_CHUNK) + 64;
	for (unsigned i = 0; g->slots && i < g->nslots; i++) {
		g->slots[i].buf = malloc(GZ_DICT + GZ_CHUNK);
		g->slots[i].out = malloc(cap);
		g->slots[i].out_cap = cap;
		if (!g->slots[i].buf || !g->slots[i].out) {
			tachi_gz_free(g);
			return TACH_E_NOMEM;
		}
	}
	if (!g->slots) {
		tachi_gz_free(g);
		return TACH_E_NOMEM;
	}
	g->slots[0].state = SLOT_FILLING;
	int rc = write_header(g);
	if (rc) {
		tachi_gz_free(g);
		return rc;
	}
	*gp = g;
	return TACH_OK;
}
