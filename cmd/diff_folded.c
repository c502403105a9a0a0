/* Two folded texts joined on the stack text, with difffolded.pl's rules (FlameGraph, 2014):
 *
 * - a line (its LF removed) is "STACK<white space>COUNT": the count is what follows the
 *   line's last white space byte (space, TAB, CR, FF, VT) and must be digits with an
 *   optional ".digits"; the stack is everything before that one byte, so a stack keeps its
 *   own trailing spaces (a C++ name "operator new " stays as written);
 * - a line that does not fit (a blank line, a comment, a CRLF line end, a count in another
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
 * longer line grows it). To print in byte order without spelling every stack out, frames
 * are ranked once among all frames, a frame that continues ("f;") apart from one that ends
 * a stack ("f"), ';' compared as the byte it is: two stacks then compare at their first
 * frame that differs. */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#include "diff_folded.h"

/* A count as perl holds it: an exact whole number, or a double. */
struct num {
	bool dbl;
	uint64_t u;
	double d;
};

struct frame {
	size_t off;   /* in the arena */
	uint32_t len;
	uint32_t tag; /* the hash's high bits */
};

/* A distinct stack: its frame ids as varints in seq, and the two columns. */
struct stack {
	size_t off;
	uint32_t len;
	uint32_t tag;
	struct num c[2];
};

/* Open addressing tables of ids (0 empty, else id + 1), a power of two in size. */
struct table {
	uint32_t *slot;
	size_t mask;
	size_t used;
};

struct dfold {
	bool strip_hex;
	char *arena; /* frame names */
	size_t alen, acap;
	uint8_t *seq; /* stacks' frame ids */
	size_t slen, scap_seq;
	struct frame *frames;
	size_t nframes, fcap;
	struct stack *stacks;
	size_t nstacks, stcap;
	struct table ftab, stab;
	struct num total[2];
	uint8_t *line_seq; /* the stack being read */
	size_t lcap;
	char *scratch; /* a frame with -s applied */
	size_t scap;
};

#define MAX_IDS ((size_t)1 << 31)

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
	t->slot = calloc(size, sizeof(*t->slot));
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
	free(j->seq);
	free(j->frames);
	free(j->stacks);
	free(j->ftab.slot);
	free(j->stab.slot);
	free(j->line_seq);
	free(j->scratch);
	free(j);
}

/* ---- the tables ---- */

/* Doubles t once it is 3/4 full; hash(id) gives each id's home again. */
static bool rehash(struct table *t, uint64_t (*hash)(const struct dfold *, uint32_t),
		   const struct dfold *j)
{
	if (t->used + 1 <= (t->mask + 1) / 4 * 3)
		return true;
	struct table n;
	if (!table_init(&n, 2 * (t->mask + 1)))
		return false;
	for (size_t i = 0; i <= t->mask; i++) {
		if (!t->slot[i])
			continue;
		size_t k = hash(j, t->slot[i] - 1) & n.mask;
		while (n.slot[k])
			k = (k + 1) & n.mask;
		n.slot[k] = t->slot[i];
	}
	n.used = t->used;
	free(t->slot);
	*t = n;
	return true;
}

static void table_put(struct table *t, uint64_t h, uint32_t id)
{
	size_t k = h & t->mask;
	while (t->slot[k])
		k = (k + 1) & t->mask;
	t->slot[k] = id + 1;
	t->used++;
}

static uint64_t frame_hash(const struct dfold *j, uint32_t id)
{
	return XXH3_64bits(j->arena + j->frames[id].off, j->frames[id].len);
}

static uint64_t stack_hash(const struct dfold *j, uint32_t id)
{
	return XXH3_64bits(j->seq + j->stacks[id].off, j->stacks[id].len);
}

/* The id of frame s[0..n), interned on first sight. */
static int intern_frame(struct dfold *j, const char *s, size_t n, uint32_t *id)
{
	uint64_t h = XXH3_64bits(s, n);
	uint32_t tag = (uint32_t)(h >> 32);
	size_t k = h & j->ftab.mask;
	for (uint32_t v; (v = j->ftab.slot[k]); k = (k + 1) & j->ftab.mask) {
		const struct frame *f = &j->frames[v - 1];
		if (f->tag == tag && f->len == n && !memcmp(j->arena + f->off, s, n)) {
			*id = v - 1;
			return 0;
		}
	}
	if (n > UINT32_MAX || j->nframes >= MAX_IDS)
		return errno = EOVERFLOW, -1;
	if (!grow((void **)&j->arena, &j->acap, j->alen + n, 1) ||
	    !grow((void **)&j->frames, &j->fcap, j->nframes + 1, sizeof(*j->frames)))
		return errno = ENOMEM, -1;
	memcpy(j->arena + j->alen, s, n);
	j->frames[j->nframes] = (struct frame){ j->alen, (uint32_t)n, tag };
	j->alen += n;
	*id = (uint32_t)j->nframes++;
	if (!rehash(&j->ftab, frame_hash, j))
		return errno = ENOMEM, -1;
	table_put(&j->ftab, h, *id);
	return 0;
}

/* The stack of the frame ids in q[0..n), made (both columns 0) on first sight. */
static int intern_stack(struct dfold *j, const uint8_t *q, size_t n, struct stack **out)
{
	uint64_t h = XXH3_64bits(q, n);
	uint32_t tag = (uint32_t)(h >> 32);
	size_t k = h & j->stab.mask;
	for (uint32_t v; (v = j->stab.slot[k]); k = (k + 1) & j->stab.mask) {
		struct stack *st = &j->stacks[v - 1];
		if (st->tag == tag && st->len == n && !memcmp(j->seq + st->off, q, n)) {
			*out = st;
			return 0;
		}
	}
	if (n > UINT32_MAX || j->nstacks >= MAX_IDS)
		return errno = EOVERFLOW, -1;
	if (!grow((void **)&j->seq, &j->scap_seq, j->slen + n, 1) ||
	    !grow((void **)&j->stacks, &j->stcap, j->nstacks + 1, sizeof(*j->stacks)) ||
	    !rehash(&j->stab, stack_hash, j))
		return errno = ENOMEM, -1;
	memcpy(j->seq + j->slen, q, n);
	j->stacks[j->nstacks] = (struct stack){ .off = j->slen, .len = (uint32_t)n, .tag = tag };
	j->slen += n;
	table_put(&j->stab, h, (uint32_t)j->nstacks);
	*out = &j->stacks[j->nstacks++];
	return 0;
}

/* ---- perl's numbers ---- */

/* A double that perl would take as a whole number in integer arithmetic (it keeps the
 * integer form of a double only when the double is whole and below 2^53). */
static struct num as_perl(struct num a)
{
	if (a.dbl && a.d >= 0 && a.d < 9007199254740992.0 && a.d == (double)(uint64_t)a.d)
		return (struct num){ false, (uint64_t)a.d, 0 };
	return a;
}

static double val(struct num a)
{
	return a.dbl ? a.d : (double)a.u;
}

static struct num add(struct num a, struct num b)
{
	a = as_perl(a);
	b = as_perl(b);
	uint64_t s;
	if (!a.dbl && !b.dbl && !__builtin_add_overflow(a.u, b.u, &s))
		return (struct num){ false, s, 0 };
	return (struct num){ true, 0, val(a) + val(b) };
}

/* int(a * b / c), c not 0 */
static struct num scale(struct num a, struct num b, struct num c)
{
	a = as_perl(a);
	b = as_perl(b);
	c = as_perl(c);
	struct num p = { true, 0, val(a) * val(b) };
	uint64_t prod;
	if (!a.dbl && !b.dbl && !__builtin_mul_overflow(a.u, b.u, &prod))
		p = (struct num){ false, prod, 0 };
	if (!p.dbl && !c.dbl && p.u >= c.u && p.u % c.u == 0)
		return (struct num){ false, p.u / c.u, 0 };
	double q = val(p) / val(c);
	if (q < 18446744073709551616.0)
		return (struct num){ false, (uint64_t)q, 0 };
	return (struct num){ true, 0, q }; /* past 2^53 a double is whole */
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
		*out = (struct num){ false, u, 0 };
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
	*out = (struct num){ true, 0, strtod(copy, NULL) };
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

/* -s on one frame: a match cannot reach past a ';'. The result in j->scratch. */
static int strip_frame(struct dfold *j, const char **s, size_t *n)
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

/* The frame ids of stack s[0..n) as varints in j->line_seq: one frame per ';'-separated
 * piece, empty ones too. Their length in *len. */
static int encode(struct dfold *j, const char *s, size_t n, size_t *len)
{
	const char *end = s + n;
	size_t o = 0;
	for (;;) {
		const char *semi = memchr(s, ';', (size_t)(end - s));
		const char *fs = s;
		size_t fl = (size_t)((semi ? semi : end) - s);
		uint32_t f;
		if ((j->strip_hex && strip_frame(j, &fs, &fl)) || intern_frame(j, fs, fl, &f))
			return -1;
		if (o + 5 > j->lcap && !grow((void **)&j->line_seq, &j->lcap, o + 5, 1))
			return errno = ENOMEM, -1;
		for (; f >= 0x80; f >>= 7)
			j->line_seq[o++] = (uint8_t)(f | 0x80);
		j->line_seq[o++] = (uint8_t)f;
		if (!semi)
			break;
		s = semi + 1;
	}
	*len = o;
	return 0;
}

static int line(struct dfold *j, int side, const char *s, size_t n)
{
	size_t p = n;
	while (p && !is_white(s[p - 1]))
		p--;
	struct num c = { false, 0, 0 };
	size_t stack_len = 0, qn;
	if (p && parse_count(s + p, n - p, &c))
		stack_len = p - 1;
	else
		c = (struct num){ false, 0, 0 };
	struct stack *st;
	if (encode(j, s, stack_len, &qn) || intern_stack(j, j->line_seq, qn, &st))
		return -1;
	st->c[side] = add(st->c[side], c);
	j->total[side] = add(j->total[side], c);
	return 0;
}

int dfold_read(struct dfold *j, int side, int fd)
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
				rc = line(j, side, buf, have);
			break;
		}
		size_t end = have + (size_t)got, start = 0;
		for (char *nl; (nl = memchr(buf + start, '\n', end - start)); start = (size_t)(nl - buf) + 1)
			if ((rc = line(j, side, buf + start, (size_t)(nl - buf) - start)))
				break;
		if (rc)
			break;
		memmove(buf, buf + start, end - start);
		have = end - start;
	}
	free(buf);
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

/* rank[2f] for frame f ending a stack, rank[2f+1] for f followed by ';'. */
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
		rank[keys[i]] = (uint32_t)i;
	free(keys);
	return rank;
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

struct stack_order {
	const struct dfold *j;
	const uint32_t *rank;
};

/* Two distinct stacks compare at their first frame that differs, or that ends one. Equal
 * leading bytes are equal leading frames: the comparison starts at the varint holding the
 * first byte that differs (no byte of a varint but its last has the high bit clear). */
static int stack_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct stack_order *o = ctx;
	const struct stack *a = &o->j->stacks[*(const uint32_t *)pa];
	const struct stack *b = &o->j->stacks[*(const uint32_t *)pb];
	const uint8_t *p0 = o->j->seq + a->off, *q0 = o->j->seq + b->off;
	size_t n = a->len < b->len ? a->len : b->len, d = 0;
	while (d < n && p0[d] == q0[d])
		d++;
	if (d == n && d) /* one ends inside the other: compare from its last frame */
		d--;
	while (d && (p0[d - 1] & 0x80))
		d--;
	const uint8_t *p = p0 + d, *q = q0 + d;
	uint32_t fa = next_id(&p), fb = next_id(&q);
	bool ma = p < p0 + a->len, mb = q < q0 + b->len;
	uint32_t ra = o->rank[2 * fa + ma], rb = o->rank[2 * fb + mb];
	return (ra > rb) - (ra < rb);
}

static void put_num(FILE *out, struct num a)
{
	if (a.dbl && isinf(a.d))
		fputs(" Inf", out); /* perl's name for it */
	else if (a.dbl)
		fprintf(out, " %.15g", a.d);
	else
		fprintf(out, " %" PRIu64, a.u);
}

/* One line, spelt out in j->scratch, in one write. */
static int print_stack(struct dfold *j, const struct stack *st, FILE *out, bool scaled)
{
	const uint8_t *p = j->seq + st->off, *pe = p + st->len;
	size_t o = 0;
	while (p < pe) {
		const struct frame *f = &j->frames[next_id(&p)];
		if (!grow((void **)&j->scratch, &j->scap, o + f->len + 1, 1))
			return errno = ENOMEM, -1;
		memcpy(j->scratch + o, j->arena + f->off, f->len);
		o += f->len;
		if (p < pe)
			j->scratch[o++] = ';';
	}
	fwrite(j->scratch, 1, o, out);
	put_num(out, scaled ? scale(st->c[0], j->total[1], j->total[0]) : st->c[0]);
	put_num(out, st->c[1]);
	return putc('\n', out) == EOF ? -1 : 0;
}

int dfold_write(struct dfold *j, FILE *out, bool normalize)
{
	/* the lookups are over: their memory goes before the sort's comes */
	free(j->ftab.slot);
	free(j->stab.slot);
	j->ftab.slot = j->stab.slot = NULL;
	uint32_t *rank = frame_ranks(j);
	uint32_t *ids = malloc((j->nstacks ? j->nstacks : 1) * sizeof(*ids));
	int rc = 0;
	if (!rank || !ids) {
		rc = (errno = ENOMEM, -1);
		goto out;
	}
	for (size_t i = 0; i < j->nstacks; i++)
		ids[i] = (uint32_t)i;
	struct stack_order o = { j, rank };
	if (j->nstacks)
		qsort_r(ids, j->nstacks, sizeof(*ids), stack_cmp, &o);
	/* BASE's total 0 leaves every BASE count 0: perl would stop on a division by zero */
	bool scaled = normalize && !num_eq(j->total[0], j->total[1]) &&
		      !num_eq(j->total[0], (struct num){ 0 });
	for (size_t i = 0; i < j->nstacks && !rc; i++)
		rc = print_stack(j, &j->stacks[ids[i]], out, scaled);
out:
	free(rank);
	free(ids);
	return rc;
}
