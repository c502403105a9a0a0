/* Two folded texts joined on the stack text, with difffolded.pl's rules (FlameGraph, 2014):
 *
 * - a line (its LF removed, and a CR before it: the one place where this departs from the
 *   script, which counts every line of a CRLF text as the empty stack with 0, where the
 *   collapsed reader and every other program read them right) is
 *   "STACK<white space>COUNT": the count is what follows the
 *   line's last white space byte (space, TAB, CR, FF, VT) and must be digits with an
 *   optional ".digits"; the stack is everything before that one byte, so a stack keeps its
 *   own trailing spaces (a C++ name "operator new " stays as written);
 * - a line that does not fit (a blank line, a comment, a count in another
 *   form) still counts, as the empty stack with nothing added: the script's hash gets that
 *   key too, and prints it as " 0 0";
 * - counts add as perl adds them: whole numbers exactly (up to 2^64), anything else, or a
 *   sum past 2^64, as a double printed with 15 significant digits (perl's "%.15g");
 * - -s rewrites each 0x[0-9a-fA-F]+ of a stack as "0x..." before the join; -n makes BASE's
 *   count int(count * NEW_total / BASE_total) when the totals differ, with perl's integer
 *   arithmetic where it applies (an exact product, a division with no remainder).
 * The script prints in hash order; the lines here are sorted by stack bytes.
 *
 * Memory follows distinct frames and distinct stacks, not the size of the texts: frames
 * are interned once and a stack is kept as the varints of its frame ids, so a deep stack
 * of long names costs a byte or two a frame. The texts stream through a fixed buffer (a
 * longer line grows it). A line is looked up whole first, by the hash of its stack text,
 * and checked against the kept frames: a stack seen before costs one hash and one compare,
 * and only a new one is cut into frames. To print in byte order without spelling every
 * stack out, frames are ranked once among all frames, a frame that continues ("f;") apart
 * from one that ends a stack ("f"), ';' compared as the byte it is: two stacks then
 * compare as their sequences of ranks, which a radix sort orders a few frames at a time. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>
#ifdef __SSE2__
#include <emmintrin.h>
#endif

#include "diff_folded.h"

/* A count as perl holds it: an exact whole number, or a double. */
struct num {
	union {
		uint64_t u;
		double d;
	};
	bool dbl;
};

struct frame {
	size_t off; /* in the arena */
	uint32_t len;
	uint64_t w[2]; /* a short frame's bytes (see short_key) */
};

/* A distinct stack, kept in j->recs at a multiple of 8 bytes (its id is that offset / 8),
 * the varints of its frame ids right after it: the lookup, the sort and the printing each
 * find all of a stack in one place. */
struct rec {
	uint64_t c[2]; /* the columns: whole numbers, or doubles' bits where dbl says */
	uint32_t text; /* the text's length, for the lookup */
	uint32_t len;  /* of the varints */
	uint32_t cur;  /* the sort's place in the varints */
	uint8_t dbl;   /* bit k: c[k] is a double */
	uint8_t seq[];
};

/* Open addressing tables of ids (0 empty, else id + 1) with their hash's high 32 bits,
 * which also give the home slot, a power of two in size: a probe reads the table alone
 * until the tag matches, and the table grows without looking at what it holds. */
struct slot {
	uint32_t id;
	uint32_t tag;
};

struct table {
	struct slot *slot;
	size_t mask;
	size_t used;
};

struct dfold {
	bool strip_hex;
	char *arena; /* frame names */
	size_t alen, acap;
	struct frame *frames;
	size_t nframes, fcap;
	char *recs; /* the stacks (struct rec) */
	size_t rlen, rcap, nstacks;
	struct table ftab, stab;
	struct num total[2];
	uint8_t *line_seq; /* the stack being read */
	size_t lcap;
	char *scratch; /* a stack with -s applied */
	size_t scap;
	char *out; /* lines being printed */
	size_t olen, ocap;
	/* The previous line's stack (see join): its text and its varints. */
	const char *prev; /* in the mapped file where in_place, else in own */
	char *own;
	size_t plen, pcap;
	bool in_place;
	uint8_t *pseq;
	size_t pseq_cap;
	size_t pseq_len;
};

#define MAX_IDS ((size_t)1 << 31)

static struct num whole(uint64_t u)
{
	return (struct num){ .u = u, .dbl = false };
}

static struct num real(double d)
{
	return (struct num){ .d = d, .dbl = true };
}

/* A big array asked for in huge pages, where the system gives them on request: a 2 MiB
 * page is one fault and one TLB entry where 4 KiB pages are 512 of each, and the stacks
 * and tables are read at random. */
static void *huge(void *p, size_t bytes)
{
	const uintptr_t page = (uintptr_t)2 << 20;
	uintptr_t a = ((uintptr_t)p + page - 1) & ~(page - 1), e = ((uintptr_t)p + bytes) & ~(page - 1);
#ifdef MADV_HUGEPAGE
	if (p && bytes >= 2 * page && e > a)
		(void)madvise((void *)a, e - a, MADV_HUGEPAGE); /* only a hint */
#else
	(void)a;
	(void)e;
#endif
	return p;
}

static bool grow(void **p, size_t *cap, size_t need, size_t size)
{
	if (need <= *cap)
		return true;
	size_t c = *cap ? *cap : 64;
	while (c < need)
		c *= 2;
	void *q = realloc(*p, c * size);
	if (!q)
		return false;
	*p = q;
	*cap = c;
	return true;
}

static bool table_init(struct table *t, size_t size)
{
	t->slot = huge(calloc(size, sizeof(*t->slot)), size * sizeof(*t->slot));
	t->mask = size - 1;
	t->used = 0;
	return t->slot != NULL;
}

struct dfold *dfold_new(bool strip_hex)
{
	struct dfold *j = calloc(1, sizeof(*j));
	if (!j)
		return NULL;
	j->strip_hex = strip_hex;
	if (!table_init(&j->ftab, 1024) || !table_init(&j->stab, 1024)) {
		dfold_free(j);
		return NULL;
	}
	return j;
}

void dfold_free(struct dfold *j)
{
	if (!j)
		return;
	free(j->arena);
	free(j->frames);
	free(j->recs);
	free(j->ftab.slot);
	free(j->stab.slot);
	free(j->line_seq);
	free(j->scratch);
	free(j->out);
	free(j->own);
	free(j->pseq);
	free(j);
}

/* ---- the tables ---- */

static void table_put(struct table *t, struct slot v)
{
	size_t k = v.tag & t->mask;
	while (t->slot[k].id)
		k = (k + 1) & t->mask;
	t->slot[k] = v;
	t->used++;
}

/* Doubles t (see table_room). */
static bool table_grow(struct table *t)
{
	struct table n;
	if (!table_init(&n, 2 * (t->mask + 1)))
		return false;
	for (size_t i = 0; i <= t->mask; i++)
		if (t->slot[i].id)
			table_put(&n, t->slot[i]);
	free(t->slot);
	*t = n;
	return true;
}

/* Room for one more id in t, doubling it once it is full to the quarters given. */
static bool table_room(struct table *t, size_t quarters)
{
	return t->used + 1 <= (t->mask + 1) / 4 * quarters || table_grow(t);
}

static struct rec *rec_at(const struct dfold *j, uint32_t id)
{
	return (struct rec *)(void *)(j->recs + (size_t)id * 8);
}

static size_t rec_size(size_t len)
{
	return (offsetof(struct rec, seq) + len + 7) & ~(size_t)7;
}

static struct num column(const struct rec *r, int k)
{
	return (struct num){ .u = r->c[k], .dbl = r->dbl >> k & 1 };
}

static void set_column(struct rec *r, int k, struct num a)
{
	r->c[k] = a.u;
	r->dbl = (uint8_t)((r->dbl & ~(1u << k)) | (unsigned)a.dbl << k);
}

static uint64_t load64(const char *s)
{
	uint64_t v;
	memcpy(&v, s, 8);
	return v;
}

static uint32_t load32(const char *s)
{
	uint32_t v;
	memcpy(&v, s, 4);
	return v;
}

/* A frame of at most 16 bytes as two words that, with its length, spell it exactly (the
 * pieces overlap, as XXH3 reads short inputs): it is hashed and compared through them,
 * with no call and no look at the arena. Most frames are this short. */
static void short_key(const char *s, size_t n, uint64_t w[2])
{
	if (n >= 8) {
		w[0] = load64(s);
		w[1] = load64(s + n - 8);
	} else if (n >= 4) {
		w[0] = load32(s);
		w[1] = load32(s + n - 4);
	} else {
		w[0] = n ? (uint64_t)(uint8_t)s[0] | (uint64_t)(uint8_t)s[n / 2] << 8 |
				   (uint64_t)(uint8_t)s[n - 1] << 16
			 : 0;
		w[1] = 0;
	}
}

static uint64_t short_hash(const uint64_t w[2], size_t n)
{
	uint64_t h = (w[0] ^ 0x9e3779b97f4a7c15u) * 0xbf58476d1ce4e5b9u;
	h ^= (w[1] + n) * 0x94d049bb133111ebu;
	h ^= h >> 32; /* the high half, which places and tags, from every bit */
	h *= 0xff51afd7ed558ccdu;
	return h ^ h >> 29;
}

/* A new frame s[0..n) of hash h (w: its short key). */
static int new_frame(struct dfold *j, const char *s, size_t n, uint64_t h, const uint64_t w[2],
		     uint32_t *id)
{
	if (n > UINT32_MAX || j->nframes >= MAX_IDS)
		return errno = EOVERFLOW, -1;
	if (!grow((void **)&j->arena, &j->acap, j->alen + n + 16, 1) ||
	    !grow((void **)&j->frames, &j->fcap, j->nframes + 1, sizeof(*j->frames)))
		return errno = ENOMEM, -1;
	memcpy(j->arena + j->alen, s, n);
	j->frames[j->nframes] = (struct frame){ j->alen, (uint32_t)n, { w[0], w[1] } };
	j->alen += n;
	if (!table_room(&j->ftab, 2))
		return errno = ENOMEM, -1;
	*id = (uint32_t)j->nframes++;
	table_put(&j->ftab, (struct slot){ *id + 1, (uint32_t)(h >> 32) });
	return 0;
}

/* The id of frame s[0..n), interned on first sight. The frames table is kept at most half
 * full: it is small, and a probe is the most of a frame's cost. */
static inline __attribute__((always_inline)) int intern_frame(struct dfold *j, const char *s,
							       size_t n, uint32_t *id)
{
	uint64_t w[2] = { 0, 0 }, h;
	bool small = n <= 16;
	if (small) {
		short_key(s, n, w);
		h = short_hash(w, n);
	} else {
		h = XXH3_64bits(s, n);
	}
	uint32_t tag = (uint32_t)(h >> 32);
	size_t k = tag & j->ftab.mask;
	for (struct slot v; (v = j->ftab.slot[k]).id; k = (k + 1) & j->ftab.mask) {
		if (v.tag != tag)
			continue;
		const struct frame *f = &j->frames[v.id - 1];
		if (f->len == n && (small ? f->w[0] == w[0] && f->w[1] == w[1]
					  : !memcmp(j->arena + f->off, s, n))) {
			*id = v.id - 1;
			return 0;
		}
	}
	return new_frame(j, s, n, h, w, id);
}

static uint32_t next_id(const uint8_t **p)
{
	uint32_t v = 0;
	for (int shift = 0;; shift += 7) {
		uint8_t b = *(*p)++;
		v |= (uint32_t)(b & 0x7f) << shift;
		if (!(b & 0x80))
			return v;
	}
}

/* Whether r's frames, joined by ';', spell s[0..n), given that s[0..from) are the frames
 * of the previous line's first sb bytes of varints (j->pseq). */
static bool same_text(const struct dfold *j, const struct rec *r, const char *s, size_t n,
		      size_t from, size_t sb)
{
	if (r->len <= sb || memcmp(r->seq, j->pseq, sb))
		return false;
	const uint8_t *p = r->seq + sb, *pe = r->seq + r->len;
	size_t o = from;
	for (;;) {
		const struct frame *f = &j->frames[next_id(&p)];
		if (f->len > n - o || memcmp(j->arena + f->off, s + o, f->len))
			return false;
		o += f->len;
		if (p == pe)
			return o == n;
		if (o == n || s[o] != ';')
			return false;
		o++;
	}
}

/* The stack whose text is s[0..n) (hash h), or NULL when it is new (from, sb: see
 * same_text). */
static struct rec *find_stack(struct dfold *j, const char *s, size_t n, uint64_t h, size_t from,
			      size_t sb)
{
	uint32_t tag = (uint32_t)(h >> 32);
	for (size_t k = tag & j->stab.mask; j->stab.slot[k].id; k = (k + 1) & j->stab.mask) {
		struct slot v = j->stab.slot[k];
		if (v.tag != tag)
			continue;
		struct rec *r = rec_at(j, v.id - 1);
		if (r->text == n && same_text(j, r, s, n, from, sb))
			return r;
	}
	return NULL;
}

/* A new stack of text length n (hash h) and the frame ids in q[0..qn), both columns 0. */
static int add_stack(struct dfold *j, size_t n, uint64_t h, const uint8_t *q, size_t qn,
		     struct rec **out)
{
	size_t size = rec_size(qn);
	if (n > UINT32_MAX || qn > UINT32_MAX || j->nstacks >= MAX_IDS ||
	    j->rlen / 8 >= UINT32_MAX - 1)
		return errno = EOVERFLOW, -1;
	if (!grow((void **)&j->recs, &j->rcap, j->rlen + size, 1) || !table_room(&j->stab, 3))
		return errno = ENOMEM, -1;
	struct rec *r = (struct rec *)(void *)(j->recs + j->rlen);
	*r = (struct rec){ .text = (uint32_t)n, .len = (uint32_t)qn };
	memcpy(r->seq, q, qn);
	table_put(&j->stab, (struct slot){ (uint32_t)(j->rlen / 8) + 1, (uint32_t)(h >> 32) });
	j->rlen += size;
	j->nstacks++;
	*out = r;
	return 0;
}

/* ---- perl's numbers ---- */

/* A double that perl would take as a whole number in integer arithmetic (it keeps the
 * integer form of a double only when the double is whole and below 2^53). */
static struct num as_perl(struct num a)
{
	if (a.dbl && a.d >= 0 && a.d < 9007199254740992.0 && a.d == (double)(uint64_t)a.d)
		return whole((uint64_t)a.d);
	return a;
}

static double val(struct num a)
{
	return a.dbl ? a.d : (double)a.u;
}

static struct num add(struct num a, struct num b)
{
	uint64_t s;
	if (!a.dbl && !b.dbl && !__builtin_add_overflow(a.u, b.u, &s))
		return whole(s); /* the usual case, first */
	a = as_perl(a);
	b = as_perl(b);
	if (!a.dbl && !b.dbl && !__builtin_add_overflow(a.u, b.u, &s))
		return whole(s);
	return real(val(a) + val(b));
}

/* int(a * b / c), c not 0 */
static struct num scale(struct num a, struct num b, struct num c)
{
	a = as_perl(a);
	b = as_perl(b);
	c = as_perl(c);
	struct num p = real(val(a) * val(b));
	uint64_t prod;
	if (!a.dbl && !b.dbl && !__builtin_mul_overflow(a.u, b.u, &prod))
		p = whole(prod);
	if (!p.dbl && !c.dbl && p.u >= c.u && p.u % c.u == 0)
		return whole(p.u / c.u);
	double q = val(p) / val(c);
	if (q < 18446744073709551616.0)
		return whole((uint64_t)q);
	return real(q); /* past 2^53 a double is whole */
}

static bool num_eq(struct num a, struct num b)
{
	return a.dbl || b.dbl ? val(a) == val(b) : a.u == b.u;
}

/* COUNT, digits with an optional ".digits", as perl reads it. */
static bool parse_count(const char *s, size_t n, struct num *out)
{
	size_t i = 0;
	uint64_t u = 0;
	bool over = false;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		over |= __builtin_mul_overflow(u, 10, &u) ||
			__builtin_add_overflow(u, (uint64_t)(s[i] - '0'), &u);
	if (!i)
		return false;
	if (i == n && !over) {
		*out = whole(u);
		return true;
	}
	if (i < n && s[i] == '.')
		for (i++; i < n && s[i] >= '0' && s[i] <= '9'; i++)
			;
	if (i != n)
		return false;
	char small[64], *copy = n < sizeof(small) ? small : malloc(n + 1);
	if (!copy)
		return false;
	memcpy(copy, s, n);
	copy[n] = 0;
	*out = real(strtod(copy, NULL));
	if (copy != small)
		free(copy);
	return true;
}

/* ---- reading ---- */

static bool is_white(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\f' || c == '\v' || c == '\n';
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* -s on a stack (a match never holds a ';', so frames come out as if each were stripped
 * alone). The result in j->scratch. */
static int strip_hex(struct dfold *j, const char **s, size_t *n)
{
	const char *p = *s;
	size_t len = *n, o = 0;
	if (!memmem(p, len, "0x", 2))
		return 0;
	/* "0x1" becomes "0x...": 5/3 at most */
	if (!grow((void **)&j->scratch, &j->scap, 2 * len + 1, 1))
		return errno = ENOMEM, -1;
	for (size_t i = 0; i < len;) {
		if (p[i] == '0' && i + 2 < len && p[i + 1] == 'x' && is_hex(p[i + 2])) {
			for (i += 2; i < len && is_hex(p[i]); i++)
				;
			memcpy(j->scratch + o, "0x...", 5);
			o += 5;
		} else {
			j->scratch[o++] = p[i++];
		}
	}
	*s = j->scratch;
	*n = o;
	return 0;
}

static inline __attribute__((always_inline)) int put_frame(struct dfold *j, const char *s,
							    size_t n, size_t *o)
{
	uint32_t f;
	if (intern_frame(j, s, n, &f))
		return -1;
	if (*o + 5 > j->lcap && !grow((void **)&j->line_seq, &j->lcap, *o + 5, 1))
		return errno = ENOMEM, -1;
	uint8_t *q = j->line_seq + *o;
	for (; f >= 0x80; f >>= 7)
		*q++ = (uint8_t)(f | 0x80);
	*q++ = (uint8_t)f;
	*o = (size_t)(q - j->line_seq);
	return 0;
}

/* The frame ids of stack s[0..n) as varints in j->line_seq: one frame per ';'-separated
 * piece, empty ones too. Their length in *len. The ';' are found 16 or 8 bytes at a time,
 * all of a block's at once (frames are short: a call to memchr for each costs more). The
 * frames before text offset from are those of the varints' first o bytes, already there. */
static int encode(struct dfold *j, const char *s, size_t n, size_t from, size_t o, size_t *len)
{
	const uint64_t low7 = 0x7f7f7f7f7f7f7f7fu, semis = 0x3b3b3b3b3b3b3b3bu;
	size_t start = from, at = from;
#ifdef __SSE2__
	const __m128i semi16 = _mm_set1_epi8(';');
	for (; at + 16 <= n; at += 16) {
		__m128i v = _mm_loadu_si128((const __m128i *)(const void *)(s + at));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(v, semi16));
		for (; m; m &= m - 1) {
			size_t semi = at + (size_t)__builtin_ctz(m);
			if (put_frame(j, s + start, semi - start, &o))
				return -1;
			start = semi + 1;
		}
	}
#endif
	for (; at + 8 <= n; at += 8) {
		uint64_t x = load64(s + at) ^ semis;
		/* the high bit of each byte of x that is 0, exactly */
		uint64_t t = ~(((x & low7) + low7) | x | low7);
		for (; t; t &= t - 1) {
			size_t semi = at + (size_t)__builtin_ctzll(t) / 8;
			if (put_frame(j, s + start, semi - start, &o))
				return -1;
			start = semi + 1;
		}
	}
	for (; at < n; at++)
		if (s[at] == ';') {
			if (put_frame(j, s + start, at - start, &o))
				return -1;
			start = at + 1;
		}
	if (put_frame(j, s + start, n - start, &o))
		return -1;
	*len = o;
	return 0;
}

/* A line cut into its stack s[0..n) and its count; the stack's hash, and its home in the
 * table asked for ahead (a batch of lines is cut before any is looked up, so that the
 * table's memory is on its way meanwhile). */
struct cut {
	const char *s;
	size_t n;
	uint64_t hash;
	struct num c;
};

static void cut_line(const struct dfold *j, const char *s, size_t n, struct cut *l)
{
	if (n && s[n - 1] == '\r')
		n--;
	size_t p = n;
	while (p && !is_white(s[p - 1]))
		p--;
	*l = (struct cut){ .s = s, .c = whole(0) };
	if (p && parse_count(s + p, n - p, &l->c))
		l->n = p - 1;
	else
		l->c = whole(0);
	if (j->strip_hex)
		return; /* hashed once stripped */
	l->hash = XXH3_64bits(s, l->n);
	__builtin_prefetch(&j->stab.slot[(l->hash >> 32) & j->stab.mask]);
}

/* How many bytes a and b begin with alike, of their first n. */
static size_t common(const char *a, const char *b, size_t n)
{
	size_t i = 0;
#ifdef __SSE2__
	for (; i + 16 <= n; i += 16) {
		__m128i x = _mm_loadu_si128((const __m128i *)(const void *)(a + i));
		__m128i y = _mm_loadu_si128((const __m128i *)(const void *)(b + i));
		unsigned m = (unsigned)_mm_movemask_epi8(_mm_cmpeq_epi8(x, y)) ^ 0xffffu;
		if (m)
			return i + (size_t)__builtin_ctz(m);
	}
#endif
	while (i < n && a[i] == b[i])
		i++;
	return i;
}

/* The previous line's frames that s[0..n) begins with, each with its ';' after it: they
 * spell s[0..*from) and are the first *sb bytes of its varints. */
static void shared_frames(const struct dfold *j, const char *s, size_t n, size_t *from,
			  size_t *sb)
{
	size_t same = common(j->prev, s, n < j->plen ? n : j->plen), o = 0;
	const uint8_t *p = j->pseq, *pe = p + j->pseq_len;
	*from = *sb = 0;
	while (p < pe) {
		o += j->frames[next_id(&p)].len;
		if (o >= same)
			return;
		*from = ++o;
		*sb = (size_t)(p - j->pseq);
	}
}

/* The previous line's text copied out of where it lies, for what follows is not there. */
static bool own_prev(struct dfold *j)
{
	if (j->prev == j->own)
		return true;
	if (!grow((void **)&j->own, &j->pcap, j->plen + 1, 1))
		return false;
	if (j->plen)
		memcpy(j->own, j->prev, j->plen);
	j->prev = j->own;
	return true;
}

/* r, of text s[0..n), becomes the previous line: its text where it is, where that stays
 * (a mapped file's line, not -s's rewrite of it), else a copy. */
static bool keep_prev(struct dfold *j, const struct rec *r, const char *s, size_t n)
{
	if (!grow((void **)&j->pseq, &j->pseq_cap, r->len + 1, 1))
		return false;
	memcpy(j->pseq, r->seq, r->len);
	j->pseq_len = r->len;
	j->plen = n;
	if (j->in_place && !j->strip_hex) {
		j->prev = s;
	} else {
		if (!grow((void **)&j->own, &j->pcap, n + 1, 1))
			return false;
		if (n)
			memcpy(j->own, s, n);
		j->prev = j->own;
	}
	return true;
}

/* Adds the line's count to its stack. Lines sorted as stackcollapse-perf.pl writes them
 * share most frames with the line before, so those are taken from it, compared as bytes
 * and as varints, not hashed and looked up again; only the rest of a new stack is cut. */
static int join(struct dfold *j, int side, struct cut *l)
{
	size_t qn;
	if (j->strip_hex) {
		if (strip_hex(j, &l->s, &l->n))
			return -1;
		l->hash = XXH3_64bits(l->s, l->n);
	}
	size_t from, sb;
	shared_frames(j, l->s, l->n, &from, &sb);
	struct rec *r = find_stack(j, l->s, l->n, l->hash, from, sb);
	if (!r && !grow((void **)&j->line_seq, &j->lcap, sb + 1, 1))
		return errno = ENOMEM, -1;
	if (!r) {
		if (sb)
			memcpy(j->line_seq, j->pseq, sb);
		if (encode(j, l->s, l->n, from, sb, &qn) ||
		    add_stack(j, l->n, l->hash, j->line_seq, qn, &r))
			return -1;
	}
	if (!keep_prev(j, r, l->s, l->n))
		return errno = ENOMEM, -1;
	set_column(r, side, add(column(r, side), l->c));
	j->total[side] = add(j->total[side], l->c);
	return 0;
}

#define BATCH 16

/* The whole lines of buf[*start..end), a batch at a time; *start moves past them. */
static int lines(struct dfold *j, int side, const char *buf, size_t end, size_t *start)
{
	struct cut batch[BATCH];
	for (;;) {
		size_t k = 0, at = *start;
		for (const char *nl; k < BATCH && (nl = memchr(buf + at, '\n', end - at));
		     at = (size_t)(nl - buf) + 1)
			cut_line(j, buf + at, (size_t)(nl - buf) - at, &batch[k++]);
		for (size_t i = 0; i < k; i++)
			if (join(j, side, &batch[i]))
				return -1;
		*start = at;
		if (k < BATCH)
			return 0;
	}
}

/* The last line, with no LF. */
static int last_line(struct dfold *j, int side, const char *s, size_t n)
{
	struct cut l;
	cut_line(j, s, n, &l);
	return join(j, side, &l);
}

static int read_stream(struct dfold *j, int side, int fd)
{
	size_t cap = 1 << 20, have = 0;
	char *buf = malloc(cap);
	if (!buf)
		return errno = ENOMEM, -1;
	int rc = 0;
	for (;;) {
		if (have == cap) {
			char *b = cap <= SIZE_MAX / 2 ? realloc(buf, cap * 2) : NULL;
			if (!b) {
				rc = (errno = ENOMEM, -1);
				break;
			}
			buf = b;
			cap *= 2;
		}
		ssize_t got = read(fd, buf + have, cap - have);
		if (got < 0 && errno == EINTR)
			continue;
		if (got < 0) {
			rc = -1;
			break;
		}
		if (got == 0) {
			if (have)
				rc = last_line(j, side, buf, have);
			break;
		}
		size_t end = have + (size_t)got, start = 0;
		if ((rc = lines(j, side, buf, end, &start)))
			break;
		memmove(buf, buf + start, end - start);
		have = end - start;
	}
	free(buf);
	return rc;
}

#define WINDOW ((size_t)1 << 20)

/* The lines of m[at..size) a window at a time (a window ends after a LF), each window's
 * pages given back once read: the file's bytes are read where they lie, not copied, and
 * the resident memory holds a window of them, not the file. */
static int read_map(struct dfold *j, int side, const char *m, size_t at, size_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096, done = 0;
	while (at < size) {
		size_t end = size - at > WINDOW ? at + WINDOW : size;
		const char *nl = memrchr(m + at, '\n', end - at);
		if (!nl && end < size) /* a line longer than a window */
			nl = memchr(m + end, '\n', size - end);
		if (!nl)
			return last_line(j, side, m + at, size - at);
		if (lines(j, side, m, (size_t)(nl - m) + 1, &at))
			return -1;
		size_t upto = at - at % page;
		if (upto > done) {
			(void)madvise((char *)m + done, upto - done, MADV_DONTNEED); /* a hint */
			done = upto;
		}
	}
	return 0;
}

int dfold_read(struct dfold *j, int side, int fd)
{
	struct stat sb;
	off_t at;
	if (fstat(fd, &sb) || !S_ISREG(sb.st_mode) || (at = lseek(fd, 0, SEEK_CUR)) < 0 ||
	    sb.st_size <= at || (uint64_t)sb.st_size > SIZE_MAX)
		return read_stream(j, side, fd);
	void *m = mmap(NULL, (size_t)sb.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (m == MAP_FAILED)
		return read_stream(j, side, fd);
	j->in_place = true;
	int rc = read_map(j, side, m, (size_t)at, (size_t)sb.st_size);
	j->in_place = false;
	if (!rc && !own_prev(j))
		rc = (errno = ENOMEM, -1);
	munmap(m, (size_t)sb.st_size);
	return rc;
}

/* ---- writing, in byte order ---- */

static int key_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct dfold *j = ctx;
	uint32_t a = *(const uint32_t *)pa, b = *(const uint32_t *)pb;
	const struct frame *fa = &j->frames[a >> 1], *fb = &j->frames[b >> 1];
	size_t n = fa->len < fb->len ? fa->len : fb->len;
	int c = memcmp(j->arena + fa->off, j->arena + fb->off, n);
	if (c)
		return c;
	/* past the common part: the end of the stack (-1), ';' or the longer frame's byte */
	int xa = fa->len > n ? (unsigned char)j->arena[fa->off + n] : (a & 1) ? ';' : -1;
	int xb = fb->len > n ? (unsigned char)j->arena[fb->off + n] : (b & 1) ? ';' : -1;
	return (xa > xb) - (xa < xb);
}

/* rank[2f] for frame f ending a stack, rank[2f+1] for f followed by ';', from 1. */
static uint32_t *frame_ranks(const struct dfold *j)
{
	size_t n = 2 * j->nframes;
	uint32_t *keys = malloc((n ? n : 1) * sizeof(*keys));
	uint32_t *rank = malloc((n ? n : 1) * sizeof(*rank));
	if (!keys || !rank) {
		free(keys);
		free(rank);
		return NULL;
	}
	for (size_t i = 0; i < n; i++)
		keys[i] = (uint32_t)i;
	if (n)
		qsort_r(keys, n, sizeof(*keys), key_cmp, (void *)j);
	for (size_t i = 0; i < n; i++)
		rank[keys[i]] = (uint32_t)i + 1;
	free(keys);
	return rank;
}

struct pair {
	uint64_t key;
	uint32_t id;
};

/* Sorts p[0..n) by key (tmp as long): insertion for a few, else LSD radix a byte at a
 * time, skipping the bytes that all keys share. */
static void sort_pairs(struct pair *p, struct pair *tmp, size_t n)
{
	if (n <= 32) {
		for (size_t i = 1; i < n; i++) {
			struct pair x = p[i];
			size_t k = i;
			for (; k && p[k - 1].key > x.key; k--)
				p[k] = p[k - 1];
			p[k] = x;
		}
		return;
	}
	size_t count[8][256];
	memset(count, 0, sizeof(count));
	for (size_t i = 0; i < n; i++)
		for (int b = 0; b < 8; b++)
			count[b][(p[i].key >> (8 * b)) & 0xff]++;
	struct pair *src = p, *dst = tmp;
	for (int b = 0; b < 8; b++) {
		size_t *c = count[b], sum = 0;
		if (c[(p[0].key >> (8 * b)) & 0xff] == n)
			continue;
		for (int d = 0; d < 256; d++) {
			size_t x = c[d];
			c[d] = sum;
			sum += x;
		}
		for (size_t i = 0; i < n; i++)
			dst[c[(src[i].key >> (8 * b)) & 0xff]++] = src[i];
		struct pair *t = src;
		src = dst;
		dst = t;
	}
	if (src != p)
		memcpy(p, src, n * sizeof(*p));
}

/* Stacks in the order of ids are far apart in memory: the one a few places ahead is
 * asked for now (its first two cache lines), so that it is there when its turn comes. (A
 * macro: GCC drops a function that only prefetches, as one without effects.) */
#define PREFETCH_STACK(j, ids, i, n)                                             \
	do {                                                                     \
		if ((i) + 12 < (n)) {                                            \
			const char *p_ = (const char *)rec_at(j, (ids)[(i) + 12]); \
			__builtin_prefetch(p_);                                  \
			__builtin_prefetch(p_ + 64);                             \
		}                                                                \
	} while (0)

struct order {
	const struct dfold *j;
	const uint32_t *rank;
	uint32_t *ids;     /* the stacks, being sorted */
	struct pair *pair, *tmp;
	unsigned bits, per; /* a rank's bits; ranks a key holds */
	size_t *todo;      /* ranges (start, length) left to sort */
	size_t ntodo, todocap;
};

/* The next o->per ranks of stack id (0 past its end) in one number, most significant first. */
static uint64_t next_key(struct order *o, uint32_t id)
{
	struct rec *r = rec_at(o->j, id);
	const uint8_t *p = r->seq + r->cur, *pe = r->seq + r->len;
	uint64_t key = 0;
	for (unsigned k = 0; k < o->per; k++) {
		key <<= o->bits;
		if (p < pe) {
			uint32_t f = next_id(&p);
			key |= o->rank[2 * (size_t)f + (p < pe)];
		}
	}
	r->cur = (uint32_t)(p - r->seq);
	return key;
}

/* Sorts ids[lo..lo+n) on their next ranks; the runs that share them go on o->todo. Two
 * distinct stacks never share a rank that ends one, so a run always has more to compare. */
static int sort_range(struct order *o, size_t lo, size_t n)
{
	uint32_t *ids = o->ids + lo;
	for (size_t i = 0; i < n; i++) {
		PREFETCH_STACK(o->j, ids, i, n);
		o->pair[i] = (struct pair){ next_key(o, ids[i]), ids[i] };
	}
	sort_pairs(o->pair, o->tmp, n);
	for (size_t i = 0, r; i < n; i = r) {
		ids[i] = o->pair[i].id;
		for (r = i + 1; r < n && o->pair[r].key == o->pair[i].key; r++)
			ids[r] = o->pair[r].id;
		if (r - i < 2)
			continue;
		if (!grow((void **)&o->todo, &o->todocap, o->ntodo + 2, sizeof(*o->todo)))
			return errno = ENOMEM, -1;
		o->todo[o->ntodo++] = lo + i;
		o->todo[o->ntodo++] = r - i;
	}
	return 0;
}

static int sort_stacks(struct order *o, size_t n)
{
	unsigned bits = 1;
	while (bits < 64 && (uint64_t)2 * o->j->nframes >> bits)
		bits++;
	o->bits = bits;
	o->per = 64 / bits;
	o->pair = huge(malloc((n ? n : 1) * sizeof(*o->pair)), n * sizeof(*o->pair));
	o->tmp = huge(malloc((n ? n : 1) * sizeof(*o->tmp)), n * sizeof(*o->tmp));
	if (!o->pair || !o->tmp)
		return errno = ENOMEM, -1;
	const struct dfold *j = o->j;
	for (size_t off = 0, i = 0; off < j->rlen; off += rec_size(rec_at(j, o->ids[i++])->len))
		o->ids[i] = (uint32_t)(off / 8);
	int rc = n > 1 ? sort_range(o, 0, n) : 0;
	while (!rc && o->ntodo) {
		o->ntodo -= 2;
		rc = sort_range(o, o->todo[o->ntodo], o->todo[o->ntodo + 1]);
	}
	return rc;
}

/* a as text at p; its length */
static size_t put_num(char *p, struct num a)
{
	if (a.dbl && isinf(a.d))
		return (size_t)(memcpy(p, "Inf", 3), 3); /* perl's name for it */
	if (a.dbl)
		return (size_t)snprintf(p, 32, "%.15g", a.d);
	char tmp[24];
	size_t n = 0;
	do
		tmp[n++] = (char)('0' + a.u % 10);
	while (a.u /= 10);
	for (size_t i = 0; i < n; i++)
		p[i] = tmp[n - 1 - i];
	return n;
}

#define OUT_CHUNK ((size_t)1 << 18)

/* What j->out holds, written. */
static int flush_out(struct dfold *j, FILE *out)
{
	size_t n = j->olen;
	j->olen = 0;
	return !n || fwrite(j->out, 1, n, out) == n ? 0 : -1; /* no lines: no buffer either */
}

/* One line, spelt out at the end of j->out, which is written a chunk at a time. */
static int print_stack(struct dfold *j, const struct rec *r, FILE *out, struct num base)
{
	size_t room = (size_t)r->text + 68 + 16;
	if (j->olen + room > j->ocap && j->olen >= OUT_CHUNK && flush_out(j, out))
		return -1;
	if (!grow((void **)&j->out, &j->ocap, j->olen + room, 1))
		return errno = ENOMEM, -1;
	const uint8_t *p = r->seq, *pe = p + r->len;
	char *w = j->out + j->olen;
	while (p < pe) {
		const struct frame *f = &j->frames[next_id(&p)];
		/* most frames are short: 16 bytes copied whole, the rest written over (the
		 * arena and the line have room past their ends for it) */
		if (f->len <= 16)
			memcpy(w, j->arena + f->off, 16);
		else
			memcpy(w, j->arena + f->off, f->len);
		w += f->len;
		if (p < pe)
			*w++ = ';';
	}
	*w++ = ' ';
	w += put_num(w, base);
	*w++ = ' ';
	w += put_num(w, column(r, 1));
	*w++ = '\n';
	j->olen = (size_t)(w - j->out);
	return 0;
}

int dfold_write(struct dfold *j, FILE *out, bool normalize)
{
	/* the lookups are over: their memory goes before the sort's comes */
	free(j->ftab.slot);
	free(j->stab.slot);
	j->ftab.slot = j->stab.slot = NULL;
	struct order o = { .j = j, .rank = frame_ranks(j) };
	o.ids = malloc((j->nstacks ? j->nstacks : 1) * sizeof(*o.ids));
	int rc = o.rank && o.ids ? sort_stacks(&o, j->nstacks) : (errno = ENOMEM, -1);
	free(o.pair);
	free(o.tmp);
	free(o.todo);
	free((void *)o.rank);
	/* BASE's total 0 leaves every BASE count 0: perl would stop on a division by zero */
	bool scaled = normalize && !num_eq(j->total[0], j->total[1]) &&
		      !num_eq(j->total[0], whole(0));
	for (size_t i = 0; i < j->nstacks && !rc; i++) {
		PREFETCH_STACK(j, o.ids, i, j->nstacks);
		const struct rec *r = rec_at(j, o.ids[i]);
		struct num base = column(r, 0);
		rc = print_stack(j, r, out, scaled ? scale(base, j->total[1], j->total[0]) : base);
	}
	if (!rc)
		rc = flush_out(j, out);
	free(o.ids);
	return rc;
}
