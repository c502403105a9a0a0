/* Errors, memory growth, hashing and the id set every interning table is built on. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>

#define XXH_INLINE_ALL
#include <string.h>
#include <xxhash.h>

#include "base/hash.h"
#include "base/utf8.h"
#include "base/gzip.h"
#include "core/handles.h"

TACH_API const char *tach_version(void)
{
	return TACHFMT_VERSION_STRING;
}

TACH_API const char *tach_strerror(int code)
{
	switch (code) {
	case TACH_OK: return "success";
	case TACH_EOF: return "end of samples";
	case TACH_E_NOMEM: return "out of memory";
	case TACH_E_IO: return "input/output error";
	case TACH_E_FORMAT: return "invalid data";
	case TACH_E_LIMIT: return "limit exceeded";
	case TACH_E_USAGE: return "invalid usage";
	case TACH_E_UNSUPPORTED: return "unsupported";
	default: return "unknown error";
	}
}

int tachi_fail(struct tachi_err *e, int code, int pos_kind, uint64_t pos, const char *fmt, ...)
{
	/* The first failure is the one worth reporting; later ones are consequences. */
	if (e->code < 0)
		return e->code;
	e->code = code;
	e->pos_kind = pos_kind;
	e->pos = pos;
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(e->msg, sizeof(e->msg), fmt, ap);
	va_end(ap);
	return code;
}

void tachi_warn(const struct tachi_warner *w, int pos_kind, uint64_t pos, const char *fmt, ...)
{
	if (!w->fn)
		return;
	char msg[512];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	w->fn(w->ctx, msg, pos_kind, pos);
}

bool tachi_reserve(void **p, size_t *cap, size_t need, size_t elem)
{
	if (need <= *cap)
		return true;
	size_t n = *cap ? *cap : 16;
	while (n < need) {
		if (n > SIZE_MAX / 2)
			return false;
		n *= 2;
	}
	size_t bytes;
	if (__builtin_mul_overflow(n, elem, &bytes))
		return false;
	void *q = realloc(*p, bytes);
	if (!q)
		return false;
	*p = q;
	*cap = n;
	return true;
}

bool tachi_idmap_reserve(uint32_t **map, size_t *cap, size_t need)
{
	size_t old = *cap;
	if (!tachi_reserve((void **)map, cap, need, sizeof(**map)))
		return false;
	memset(*map + old, 0xff, (*cap - old) * sizeof(**map));
	return true;
}

bool tachi_bits_hold(uint64_t **bits, size_t *cap, size_t n)
{
	size_t old = *cap;
	if (!tachi_reserve((void **)bits, cap, n / 64 + 1, sizeof(**bits)))
		return false;
	memset(*bits + old, 0, (*cap - old) * sizeof(**bits));
	return true;
}

uint64_t tachi_hash(const void *p, size_t n)
{
	return XXH3_64bits(p, n);
}

/* The tag is the hash's high half and a slot's place comes from it, so growing moves
 * slots by their tags alone, never reading the entries they name (a random read each:
 * a third of the time of building a large stack trie). */
static void idset_place(struct tachi_slot *slots, size_t mask, uint32_t tag, uint32_t id)
{
	size_t i = tag & mask;
	while (slots[i].id)
		i = (i + 1) & mask;
	slots[i].id = id + 1;
	slots[i].tag = tag;
}

/* Slots ahead of the one being stored to whose lines are requested: about what a core
 * keeps in flight. */
#define MOVE_AHEAD 16

/* Room for n ids at a load factor of at most 1/2, which keeps probe chains short. With
 * bloom, a deferred set's filter is made anew in the same pass: four bits a slot, a bit
 * standing for every tag equal to its number in the low bits. */
static bool idset_hold(struct tachi_idset *s, size_t n, uint64_t **bloom, size_t *bloom_mask)
{
	if (s->slots && n * 2 <= s->mask + 1)
		return true;
	size_t size = s->slots ? (s->mask + 1) * 2 : 64;
	while (n * 2 > size)
		size *= 2;
	/* up to 2^30 bits: past that more false hits, never a missed id */
	size_t bits = (size < ((size_t)1 << 28) ? size : (size_t)1 << 28) * 4;
	struct tachi_slot *slots = calloc(size, sizeof(*slots));
	uint64_t *b = bloom ? calloc(bits / 64, sizeof(*b)) : NULL;
	if (!slots || (bloom && !b)) {
		free(slots);
		free(b);
		return false;
	}
	for (size_t i = 0; s->slots && i <= s->mask; i++) {
		if (!s->slots[i].id)
			continue;
		idset_place(slots, size - 1, s->slots[i].tag, s->slots[i].id - 1);
		if (b)
			tachi_bit_set(b, s->slots[i].tag & (bits - 1));
	}
	free(s->slots);
	s->slots = slots;
	s->mask = size - 1;
	if (bloom) {
		free(*bloom);
		*bloom = b;
		*bloom_mask = bits - 1;
	}
	return true;
}

bool tachi_idset_insert(struct tachi_idset *s, uint64_t h, uint32_t id)
{
	if (!idset_hold(s, s->count + 1, NULL, NULL))
		return false;
	idset_place(s->slots, s->mask, (uint32_t)(h >> 32), id);
	s->count++;
	return true;
}

void tachi_idset_free(struct tachi_idset *s)
{
	free(s->slots);
	memset(s, 0, sizeof(*s));
}

/* Moves the waiting ids into main, in the order they came, and empties pend. */
static bool dset_move(struct tachi_dset *s)
{
	size_t n = s->pend.count;
	/* grown first, so that every line fetched is where its id goes */
	if (!idset_hold(&s->main, s->main.count + n, &s->bloom, &s->bloom_mask))
		return false;
	struct tachi_slot *slots = s->main.slots;
	size_t mask = s->main.mask, bmask = s->bloom_mask;
	for (size_t i = 0; i < n; i++) {
		if (i + MOVE_AHEAD < n) {
			uint32_t tag = s->order[i + MOVE_AHEAD].tag;
			__builtin_prefetch(&slots[tag & mask], 1);
			__builtin_prefetch(&s->bloom[(tag & bmask) / 64], 1);
		}
		idset_place(slots, mask, s->order[i].tag, s->order[i].id - 1);
		tachi_bit_set(s->bloom, s->order[i].tag & bmask);
	}
	s->main.count += n;
	memset(s->pend.slots, 0, (s->pend.mask + 1) * sizeof(*s->pend.slots));
	s->pend.count = 0;
	return true;
}

bool tachi_dset_insert(struct tachi_dset *s, uint64_t h, uint32_t id)
{
	if (s->pend.count >= TACHI_PEND_MAX && !dset_move(s))
		return false;
	/* grown as pend is, so that a small input's sets stay small */
	if (!TACHI_RESERVE(s->order, s->order_cap, s->pend.count + 1) ||
	    !tachi_idset_insert(&s->pend, h, id))
		return false;
	s->order[s->pend.count - 1] = (struct tachi_slot){ id + 1, (uint32_t)(h >> 32) };
	return true;
}

void tachi_dset_free(struct tachi_dset *s)
{
	tachi_idset_free(&s->main);
	tachi_idset_free(&s->pend);
	free(s->order);
	free(s->bloom);
	memset(s, 0, sizeof(*s));
}

bool tachi_parse_dec(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	if (!n)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		if (v > (UINT64_MAX - (uint64_t)(s[i] - '0')) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

bool tachi_parse_u64(const char *s, uint64_t max, uint64_t *out)
{
	return s && tachi_parse_dec(s, strlen(s), max, out);
}

bool tachi_parse_size(const char *s, uint64_t *out)
{
	static const char units[] = "KMGT";
	if (!s)
		return false;
	size_t n = 0;
	while (s[n] >= '0' && s[n] <= '9')
		n++;
	unsigned shift = 0;
	const char *u = s + n;
	if (*u && strchr(units, *u)) {
		shift = 10 * (unsigned)(strchr(units, *u) - units + 1);
		u++;
		if (!strcmp(u, "iB"))
			u += 2;
	}
	uint64_t v;
	if (*u || !tachi_parse_dec(s, n, UINT64_MAX, &v) || (shift && v > UINT64_MAX >> shift))
		return false;
	*out = v << shift;
	return true;
}

int tachi_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

bool tachi_parse_bool(const char *s, bool *out)
{
	if (!s || !strcmp(s, "1") || !strcmp(s, "yes") || !strcmp(s, "true")) {
		*out = true;
		return true;
	}
	if (!strcmp(s, "0") || !strcmp(s, "no") || !strcmp(s, "false")) {
		*out = false;
		return true;
	}
	return false;
}

int tachi_gzip_level(struct tach_writer *w, const char *value, int *level)
{
	uint64_t v;
	if (!tachi_parse_u64(value, 9, &v) || v < 1)
		return WFAIL(w, TACH_E_USAGE, "gzip level must be 1-9, not %s", value);
	*level = (int)v;
	return TACH_OK;
}

int tachi_gzip_threads(struct tach_writer *w, const char *value, unsigned *n)
{
	uint64_t v;
	if (!tachi_parse_u64(value, TACHI_GZ_MAX_WORKERS, &v))
		return WFAIL(w, TACH_E_USAGE, "gzip threads must be 0-%d, not %s",
			     TACHI_GZ_MAX_WORKERS, value);
	*n = (unsigned)v;
	return TACH_OK;
}

int tachi_gz_failed(struct tach_writer *w, int code)
{
	if (code == TACH_E_IO)
		return tachi_writer_io(w);
	return WFAIL(w, TACH_E_NOMEM, "gzip compression failed: out of memory");
}

bool tachi_utf8_valid(const uint8_t *p, size_t n)
{
	size_t i = 0;
	while (i < n) {
		uint8_t c = p[i];
		if (c < 0x80) {
			i++;
			continue;
		}
		size_t len;
		uint32_t cp;
		if (c >= 0xC2 && c <= 0xDF) {
			len = 2;
			cp = c & 0x1F;
		} else if (c >= 0xE0 && c <= 0xEF) {
			len = 3;
			cp = c & 0x0F;
		} else if (c >= 0xF0 && c <= 0xF4) {
			len = 4;
			cp = c & 0x07;
		} else {
			return false;
		}
		if (n - i < len)
			return false;
		for (size_t k = 1; k < len; k++) {
			if ((p[i + k] & 0xC0) != 0x80)
				return false;
			cp = cp << 6 | (p[i + k] & 0x3F);
		}
		if ((len == 3 && cp < 0x800) || (len == 4 && (cp < 0x10000 || cp > 0x10FFFF)) ||
		    (cp >= 0xD800 && cp <= 0xDFFF))
			return false;
		i += len;
	}
	return true;
}

/* "00" to "99": two digits a step, written from the end, halve the divisions; JSON and
 * text outputs print numbers by the million. */
static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

static const uint64_t pow10_u64[20] = {
	1ull, 10ull, 100ull, 1000ull, 10000ull, 100000ull, 1000000ull, 10000000ull,
	100000000ull, 1000000000ull, 10000000000ull, 100000000000ull, 1000000000000ull,
	10000000000000ull, 100000000000000ull, 1000000000000000ull, 10000000000000000ull,
	100000000000000000ull, 1000000000000000000ull, 10000000000000000000ull,
};

size_t tachi_fmt_u64(char *buf, uint64_t v)
{
	/* Most numbers written are small ids and counts. */
	if (v < 100) {
		if (v < 10) {
			buf[0] = (char)('0' + v);
			return 1;
		}
		memcpy(buf, digit_pairs + 2 * v, 2);
		return 2;
	}
	/* The length first, so the digits go straight to their place: log10 from the bit
	 * length (1233 / 4096 is just above log10(2)), less one below that power of ten. */
	unsigned t = (unsigned)(64 - __builtin_clzll(v)) * 1233 >> 12;
	size_t n = t + 1 - (v < pow10_u64[t]);
	char *q = buf + n;
	while (v >= 100) {
		unsigned r = (unsigned)(v % 100);
		v /= 100;
		q -= 2;
		q[0] = digit_pairs[2 * r];
		q[1] = digit_pairs[2 * r + 1];
	}
	if (v >= 10) {
		q[-2] = digit_pairs[2 * v];
		q[-1] = digit_pairs[2 * v + 1];
	} else {
		q[-1] = (char)('0' + v);
	}
	return n;
}

size_t tachi_fmt_i64(char *buf, int64_t v)
{
	if (v < 0) {
		buf[0] = '-';
		return 1 + tachi_fmt_u64(buf + 1, (uint64_t)0 - (uint64_t)v);
	}
	return tachi_fmt_u64(buf, (uint64_t)v);
}

size_t tachi_utf8_repair(char *out, const char *s, size_t n, bool *repaired)
{
	const uint8_t *p = (const uint8_t *)s;
	size_t o = 0, i = 0;
	while (i < n) {
		if (p[i] < 0x80)
			out[o++] = (char)p[i++];
		else
			o += tachi_utf8_char(out + o, p, n, &i, repaired);
	}
	return o;
}
