/* pprof's and gperftools' legacy text profiles, read as google/pprof's legacy parser
 * (profile/legacy_profile.go) reads them:
 *
 * - heap: "heap profile: N: B [ AN: AB] @ heap_v2/RATE" (also heapz_v2, heap: RATE/2, and
 *   heapprofile: gperftools' HEAPPROFILE, every allocation recorded), then lines
 *   "N: B [AN: AB] @ 0x... 0x...". When the bracketed totals differ from the in-use ones
 *   (and are not 0), the types are alloc_objects, alloc_space, inuse_objects, inuse_space,
 *   else objects and space; counts and bytes. heap_v2 samples are "unsampled" as pprof
 *   does: both values times 1 / (1 - exp(-(B/N)/RATE)) (a Poisson sampling at one
 *   allocation per RATE bytes). Each sample has the numeric label "bytes": B/N before
 *   scaling. growthz and fragmentationz: the same lines, objects and space, unscaled.
 * - contention ("--- contentionz ", "--- mutex:", "--- contention:"): "key = value"
 *   lines (cycles/second, sampling period, ms since reset, discarded samples), then
 *   "CYCLES COUNT @ 0x..." lines: contentions = COUNT * period and delay in nanoseconds =
 *   CYCLES * period / (cycles per ns).
 * - thread ("--- threadz N ---" or "--- Thread X (name: N/T) stack: ---"): one sample of
 *   thread/count per stack, every 0x number of its lines an address; a stack "same as
 *   previous thread" (or without addresses) adds one to the previous sample.
 * - count ("NAME profile: total N", Go's threadcreate and goroutine texts): "N @ 0x..."
 *   lines of NAME/count.
 * Addresses are return addresses, so each is looked up at address - 1 as pprof records it
 * (a thread's first one, the PC, as it is). What follows a "--- Memory map: ---" or
 * "MAPPED_LIBRARIES:" line is the process's mappings, /proc/self/maps lines or pprof's
 * brief "start-end: file" ones, unrecognized lines skipped; frames are symbolized from
 * the executable ones (symbolize/symbolize.c) as gperftools' CPU profiles are.
 *
 * Differences from pprof, all stricter or harmless: comment lines may precede the header
 * of every kind; text after a sample's addresses is an error, not ignored; a value that
 * overflows 64 bits after scaling is an error (Go's conversion is undefined there); a
 * thread profile may end without a memory map; "$attr" substitutions in the maps are not
 * made; pprof's drop_frames patterns for allocators and locks are not kept (frames are
 * all there). The Java variant ("format = java") is refused by name.
 *
 * Errors name the line (TACH_POS_LINE). Each line's sample is stored as it is read, so
 * memory follows the input, and next gives the samples in file order.
 */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/pproftext/pproftext.h"
#include "formats/native_syms.h"
#include "symbolize/symbolize.h"

struct prec {
	uint64_t line;
	size_t first;        /* its addresses in addrs[first, first + n) */
	uint32_t n;
	int64_t v[4];
	int64_t block;       /* heap: bytes per object (the "bytes" label); -1 none */
};

/* An address's frames, resolved the first time a sample uses it. */
struct paddr {
	uint64_t addr;
	uint32_t first, n;   /* frame ids in chain[first, first + n) */
};

struct pread {
	enum ppt_kind kind;
	int ntypes;
	bool has_alloc, v2;
	int64_t period, cpu_hz, duration_ns;
	char *count_type;    /* PPT_COUNT: its NAME */
	struct prec *recs;
	size_t nrecs, recs_cap, next;
	uint64_t *addrs;     /* as pprof records them (return addresses minus one) */
	size_t naddrs, addrs_cap;
	struct paddr *pa;    /* open addressing: addr lookups */
	size_t pa_mask, pa_count;
	struct tachi_native_chain chain;
	uint32_t *frames;
	size_t frames_cap;
	int64_t vals[4];
	struct tach_label label;
	struct tach_sample_ext ext;
	struct tach_value_type vt[4];
	struct tachi_sym *sym;
	struct tachi_native_opts opt;
	char *program;
	char **owned;        /* copies of the map section's $names */
	size_t nowned, owned_cap;
	uint32_t bytes_key;
	/* the line scan */
	const char *p, *end;
	uint64_t lineno;
};

/* ---- lines ---- */

/* The next line, without its LF and one CR before it (as Go's bufio.ScanLines); false at
 * the end. */
static bool next_line(struct pread *g, const char **s, size_t *n)
{
	if (g->p >= g->end)
		return false;
	const char *nl = memchr(g->p, '\n', (size_t)(g->end - g->p));
	const char *le = nl ? nl : g->end;
	*s = g->p;
	*n = (size_t)(le - g->p);
	if (*n && le[-1] == '\r')
		(*n)--;
	g->p = nl ? nl + 1 : g->end;
	g->lineno++;
	return true;
}

static bool is_sp(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void trim(const char **s, size_t *n)
{
	while (*n && is_sp(**s)) {
		(*s)++;
		(*n)--;
	}
	while (*n && is_sp((*s)[*n - 1]))
		(*n)--;
}

static bool space_or_comment(const char *s, size_t n)
{
	trim(&s, &n);
	return !n || *s == '#';
}

static bool has(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	for (size_t i = 0; i + k <= n; i++)
		if (!memcmp(s + i, w, k))
			return true;
	return false;
}

static bool prefix(const char *s, size_t n, const char *w)
{
	size_t k = strlen(w);
	return n >= k && !memcmp(s, w, k);
}

static bool map_sentinel(const char *s, size_t n)
{
	return has(s, n, "--- Memory map: ---") || has(s, n, "MAPPED_LIBRARIES:");
}

#define FAIL(r, g, ...) RFAIL((r), TACH_E_FORMAT, TACH_POS_LINE, (g)->lineno, __VA_ARGS__)

/* ---- numbers ---- */

/* A decimal int64 (optional '-' when neg_ok) at *q; false on no digit or overflow
 * (*over set). */
static bool dec(const char **q, const char *e, bool neg_ok, int64_t *v, bool *over)
{
	const char *s = *q;
	bool neg = false;
	if (neg_ok && s < e && *s == '-') {
		neg = true;
		s++;
	}
	if (s >= e || *s < '0' || *s > '9')
		return false;
	uint64_t x = 0, lim = neg ? (uint64_t)INT64_MAX + 1 : (uint64_t)INT64_MAX;
	for (; s < e && *s >= '0' && *s <= '9'; s++) {
		if (x > (lim - (uint64_t)(*s - '0')) / 10) {
			*over = true;
			return false;
		}
		x = x * 10 + (uint64_t)(*s - '0');
	}
	*v = neg ? (int64_t)(0 - x) : (int64_t)x;
	*q = s;
	return true;
}

static void skip_spaces(const char **q, const char *e)
{
	while (*q < e && **q == ' ')
		(*q)++;
}

static int hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Every "0x" + lowercase hex digits in [s, e) (pprof's hexNumberRE), appended to addrs
 * as pprof records them: minus adj. A number past 64 bits is an error. */
static int hex_addrs(struct tach_reader *r, struct pread *g, const char *s, const char *e,
		     bool thread_pc_first, uint32_t *n)
{
	for (const char *q = s; q + 2 < e;) {
		if (q[0] != '0' || q[1] != 'x' || !((q[2] >= '0' && q[2] <= '9') ||
						     (q[2] >= 'a' && q[2] <= 'f'))) {
			q++;
			continue;
		}
		const char *h = q + 2;
		uint64_t x = 0;
		while (h < e && ((*h >= '0' && *h <= '9') || (*h >= 'a' && *h <= 'f'))) {
			if (x >> 60) {
				const char *t = h;
				while (t < e && ((*t >= '0' && *t <= '9') || (*t >= 'a' && *t <= 'f')))
					t++;
				return FAIL(r, g, "address %.*s%s does not fit in 64 bits",
					    (int)((t - q) > 40 ? 40 : (t - q)), q, t - q > 40 ? "..." : "");
			}
			x = x << 4 | (uint64_t)hexval(*h);
			h++;
		}
		q = h;
		if (*n >= r->lim.max_depth)
			return FAIL(r, g, "stack deeper than the limit of %u frames", r->lim.max_depth);
		if (!TACHI_RESERVE(g->addrs, g->addrs_cap, g->naddrs + 1))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		/* return addresses, minus one to land on the call; a thread's PC is no call */
		g->addrs[g->naddrs++] = (thread_pc_first && !*n) ? x : x - 1;
		(*n)++;
	}
	return TACH_OK;
}

/* The addresses after "@": spaces and 0x numbers only (pprof takes what matches and drops
 * the rest of the line; a line that is more than that is refused here). */
static int stack_field(struct tach_reader *r, struct pread *g, const char *q, const char *e,
		       uint32_t *n)
{
	for (const char *c = q; c < e; c++)
		if (*c != ' ' && *c != 'x' && hexval(*c) < 0)
			return FAIL(r, g, "malformed address list: unexpected '%c' at column %zu",
				    (unsigned char)*c >= 0x20 && (unsigned char)*c < 0x7f ? *c : '?',
				    (size_t)(c - q) + 1);
	for (const char *c = q; c < e; c++)
		if (*c >= 'A' && *c <= 'F')
			return FAIL(r, g, "malformed address list: upper-case hex digit");
	*n = 0;
	return hex_addrs(r, g, q, e, false, n);
}

static int add_rec(struct tach_reader *r, struct pread *g, size_t first, uint32_t n,
		   const int64_t *v, int64_t block)
{
	if (g->nrecs >= r->lim.max_samples)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, g->lineno,
			     "more samples than the limit of %llu",
			     (unsigned long long)r->lim.max_samples);
	if (!TACHI_RESERVE(g->recs, g->recs_cap, g->nrecs + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	struct prec *p = &g->recs[g->nrecs++];
	*p = (struct prec){ g->lineno, first, n, { 0 }, block };
	memcpy(p->v, v, sizeof(p->v));
	return TACH_OK;
}

/* x as int64 if it is one; pprof converts doubles with Go's int64(), which truncates. */
static bool to_i64(double x, int64_t *v)
{
	if (!(x > -9223372036854775808.0 && x < 9223372036854775808.0))
		return false;
	*v = (int64_t)x;
	return true;
}

/* ---- heap, growth, fragmentation ---- */

/* "N: B [ AN: AB] @" at the start of s; the values and the position after '@'. */
static bool heap_counts(const char **q, const char *e, bool signed_inuse, int64_t v[4], bool *over)
{
	if (!dec(q, e, signed_inuse, &v[0], over) || *q >= e || *(*q)++ != ':')
		return false;
	skip_spaces(q, e);
	if (!dec(q, e, signed_inuse, &v[1], over))
		return false;
	skip_spaces(q, e);
	if (*q >= e || *(*q)++ != '[')
		return false;
	skip_spaces(q, e);
	if (!dec(q, e, false, &v[2], over) || *q >= e || *(*q)++ != ':')
		return false;
	skip_spaces(q, e);
	if (!dec(q, e, false, &v[3], over))
		return false;
	skip_spaces(q, e);
	if (*q >= e || *(*q)++ != ']')
		return false;
	return true;
}

/* The digits of a header field, as a string, for pprof's comparison of totals. */
static bool same_field(const char *a, size_t an, const char *b, size_t bn)
{
	return an == bn && !memcmp(a, b, an);
}

static int heap_header(struct tach_reader *r, struct pread *g, const char *s, size_t n)
{
	const char *q = s + strlen("heap profile:"), *e = s + n;
	skip_spaces(&q, e);
	const char *f[4];
	size_t fl[4];
	/* the four totals, kept as text (pprof compares them as strings) */
	for (int i = 0; i < 4; i++) {
		if (i == 2) {
			if (q >= e || *q++ != '[')
				return FAIL(r, g, "malformed heap profile header");
			skip_spaces(&q, e);
		}
		f[i] = q;
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		fl[i] = (size_t)(q - f[i]);
		if (!fl[i])
			return FAIL(r, g, "malformed heap profile header");
		if (i == 0 || i == 2) {
			if (q >= e || *q++ != ':')
				return FAIL(r, g, "malformed heap profile header");
		}
		skip_spaces(&q, e);
	}
	if (q >= e || *q++ != ']')
		return FAIL(r, g, "malformed heap profile header");
	if (g->kind != PPT_HEAP) {
		g->period = 1;
		return TACH_OK;
	}
	skip_spaces(&q, e);
	if (q >= e || *q++ != '@')
		return FAIL(r, g, "malformed heap profile header");
	skip_spaces(&q, e);
	const char *w = q;
	while (q < e && (*q == '_' || (*q >= 'a' && *q <= 'z') || (*q >= '0' && *q <= '9')))
		q++;
	size_t wl = (size_t)(q - w);
	int64_t rate = 0;
	if (q < e && *q == '/')
		q++;
	bool over = false;
	if (q < e && *q >= '0' && *q <= '9' && !dec(&q, e, false, &rate, &over))
		return FAIL(r, g, "heap profile sampling rate does not fit in 64 bits");
	g->has_alloc = (!same_field(f[2], fl[2], f[0], fl[0]) && !same_field(f[2], fl[2], "0", 1)) ||
		       (!same_field(f[3], fl[3], f[1], fl[1]) && !same_field(f[3], fl[3], "0", 1));
	if (same_field(w, wl, "heapz_v2", 8) || same_field(w, wl, "heap_v2", 7)) {
		g->v2 = true;
		g->period = rate;
	} else if (same_field(w, wl, "heapprofile", 11)) {
		g->period = 1;
	} else if (same_field(w, wl, "heap", 4)) {
		g->v2 = true;
		g->period = rate / 2;
	} else {
		return FAIL(r, g, "unknown heap profile kind \"%.*s\"", (int)(wl > 40 ? 40 : wl), w);
	}
	return TACH_OK;
}

/* pprof's scaleHeapSample. */
static bool unsample(int64_t *count, int64_t *size, int64_t rate)
{
	if (!*count || !*size) {
		*count = *size = 0;
		return true;
	}
	if (rate <= 1)
		return true;
	double avg = (double)*size / (double)*count;
	double scale = 1 / (1 - exp(-avg / (double)rate));
	return to_i64((double)*count * scale, count) && to_i64((double)*size * scale, size);
}

static int heap_values(struct tach_reader *r, struct pread *g, int64_t count, int64_t size,
		       const char *what, int64_t *out, int64_t *block)
{
	if (!count && size)
		return FAIL(r, g, "%s count was 0 but %s bytes was %lld", what, what, (long long)size);
	if (count) {
		*block = size / count;
		if (g->v2 && !unsample(&count, &size, g->period))
			return FAIL(r, g, "%s values too large once unsampled", what);
	}
	out[0] = count;
	out[1] = size;
	return TACH_OK;
}

static int read_heap(struct tach_reader *r, struct pread *g)
{
	const char *s;
	size_t n;
	int rc;
	while (next_line(g, &s, &n)) {
		trim(&s, &n);
		if (!n || *s == '#')
			continue;
		if (map_sentinel(s, n))
			return TACH_OK;
		const char *q = s, *e = s + n;
		int64_t v[4];
		bool over = false;
		if (!heap_counts(&q, e, true, v, &over))
			return FAIL(r, g, over ? "a count does not fit in 64 bits"
					       : "malformed heap sample: expected \"N: B [N: B] @ 0x...\"");
		if (!(q + 1 < e && q[0] == ' ' && q[1] == '@'))
			return FAIL(r, g, "malformed heap sample: no \" @\" before the stack");
		q += 2;
		int64_t vals[4] = { 0 }, block = 0;
		int k = 0;
		if (g->has_alloc) {
			if ((rc = heap_values(r, g, v[2], v[3], "allocation", vals, &block)))
				return rc;
			k = 2;
		}
		if ((rc = heap_values(r, g, v[0], v[1], "inuse", vals + k, &block)))
			return rc;
		size_t first = g->naddrs;
		uint32_t na;
		if ((rc = stack_field(r, g, q, e, &na)) || (rc = add_rec(r, g, first, na, vals, block)))
			return rc;
	}
	return TACH_OK;
}

/* ---- contention ---- */

/* Go's strconv.ParseInt(s, 0, 64) for the forms these files use: decimal, 0x hex. */
static bool attr_int(const char *s, size_t n, int64_t *v)
{
	const char *q = s, *e = s + n;
	bool over = false;
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		uint64_t x = 0;
		for (q = s + 2; q < e; q++) {
			if (hexval(*q) < 0 || x >> 59)
				return false;
			x = x << 4 | (uint64_t)hexval(*q);
		}
		*v = (int64_t)x;
		return x <= INT64_MAX;
	}
	return dec(&q, e, true, v, &over) && q == e;
}

/* The "key = value" lines after the first; *s, *n and *have are left on the line that
 * ends them. */
static int contention_attrs(struct tach_reader *r, struct pread *g, const char **s, size_t *n,
			    bool *have)
{
	while ((*have = next_line(g, s, n))) {
		trim(s, n);
		if (!*n || **s == '#')
			continue;
		if (prefix(*s, *n, "---"))
			break;
		const char *eq = memchr(*s, '=', *n);
		if (!eq)
			break;
		const char *k = *s, *v = eq + 1;
		size_t kn = (size_t)(eq - *s), vn = (size_t)(*s + *n - v);
		trim(&k, &kn);
		trim(&v, &vn);
		int64_t x;
		if (same_field(k, kn, "cycles/second", 13)) {
			if (!attr_int(v, vn, &g->cpu_hz))
				return FAIL(r, g, "bad cycles/second value");
		} else if (same_field(k, kn, "sampling period", 15)) {
			if (!attr_int(v, vn, &g->period))
				return FAIL(r, g, "bad sampling period value");
		} else if (same_field(k, kn, "ms since reset", 14)) {
			if (!attr_int(v, vn, &x) || x < 0 || x > INT64_MAX / 1000000)
				return FAIL(r, g, "bad ms since reset value");
			g->duration_ns = x * 1000000;
		} else if (same_field(k, kn, "format", 6) || same_field(k, kn, "resolution", 10)) {
			return RFAIL(r, TACH_E_UNSUPPORTED, TACH_POS_LINE, g->lineno,
				     "the Java variant of pprof's contention profile is not read");
		} else if (!same_field(k, kn, "discarded samples", 17)) {
			return FAIL(r, g, "unknown contention profile attribute \"%.*s\"",
				    (int)(kn > 40 ? 40 : kn), k);
		}
	}
	return TACH_OK;
}

/* "CYCLES COUNT @ 0x..." (pprof's regexp splits "123 @" as 12 and 3: so here) */
static int contention_sample(struct tach_reader *r, struct pread *g, const char *s, size_t n)
{
	const char *q = s, *e = s + n, *d1 = q;
	while (q < e && *q >= '0' && *q <= '9')
		q++;
	const char *d1e = q, *d2, *d2e;
	skip_spaces(&q, e);
	if (q > d1e) {
		d2 = q;
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		d2e = q;
	} else {
		d2 = d2e = d1e;
		if (d1e - d1 >= 2)
			d2 = d1e - 1;
		d1e = d2;
	}
	if (d1e == d1 || d2e == d2 || !(q + 1 < e && q[0] == ' ' && q[1] == '@'))
		return FAIL(r, g, "malformed contention sample: expected \"CYCLES COUNT @ 0x...\"");
	int64_t v1, v2;
	bool over = false;
	const char *t = d1;
	if (!dec(&t, d1e, false, &v1, &over) || t != d1e ||
	    !(t = d2, dec(&t, d2e, false, &v2, &over)) || t != d2e)
		return FAIL(r, g, "a contention value does not fit in 64 bits");
	if (g->period > 0) {
		if (g->cpu_hz > 0) {
			double ghz = (double)g->cpu_hz / 1e9;
			if (!to_i64((double)v1 * (double)g->period / ghz, &v1))
				return FAIL(r, g, "a delay too large once unsampled");
		}
		if (__builtin_mul_overflow(v2, g->period, &v2))
			return FAIL(r, g, "a contention count too large once unsampled");
	}
	int64_t vals[4] = { v2, v1 };
	size_t first = g->naddrs;
	uint32_t na;
	int rc;
	if ((rc = stack_field(r, g, q + 2, e, &na)) || (rc = add_rec(r, g, first, na, vals, -1)))
		return rc;
	return TACH_OK;
}

static int read_contention(struct tach_reader *r, struct pread *g)
{
	const char *s = NULL;
	size_t n = 0;
	bool have = false;
	g->period = 1;
	int rc = contention_attrs(r, g, &s, &n, &have);
	if (rc)
		return rc;
	for (; have; have = next_line(g, &s, &n)) {
		trim(&s, &n);
		if (prefix(s, n, "---"))
			break;
		if (!n || *s == '#')
			continue;
		if ((rc = contention_sample(r, g, s, n)))
			return rc;
	}
	/* what follows, up to a memory map, is skipped (pprof's parseAdditionalSections) */
	while (have && !map_sentinel(s, n))
		have = next_line(g, &s, &n);
	return TACH_OK;
}

/* ---- thread ---- */

/* "--- Thread HEX (name: NAME/TID) stack: ---" anywhere in the line. */
static bool thread_start(const char *s, size_t n)
{
	for (size_t i = 0; i + 11 <= n; i++) {
		if (memcmp(s + i, "--- Thread ", 11))
			continue;
		const char *q = s + i + 11, *e = s + n;
		const char *h = q;
		while (q < e && hexval(*q) >= 0)
			q++;
		if (q == h || e - q < 8 || memcmp(q, " (name: ", 8))
			continue;
		/* the last "/digits) stack: ---" after it */
		for (const char *t = e; t > q + 8; t--) {
			const char *m = t - 1;
			if (*m != '/')
				continue;
			const char *d = m + 1;
			while (d < e && *d >= '0' && *d <= '9')
				d++;
			if (d > m + 1 && e - d >= 12 && !memcmp(d, ") stack: ---", 12))
				return true;
		}
	}
	return false;
}

static int read_thread(struct tach_reader *r, struct pread *g, const char *s, size_t n)
{
	bool have = true;
	int rc;
	if (prefix(s, n, "--- threadz ")) {
		while ((have = next_line(g, &s, &n)))
			if (map_sentinel(s, n) || prefix(s, n, "-"))
				break;
		/* pprof refuses a header with no thread after it */
		if (!have)
			return FAIL(r, g, "a threadz profile without a thread");
	}
	while (have && !map_sentinel(s, n)) {
		if (prefix(s, n, "---- no stack trace for")) {
			while ((have = next_line(g, &s, &n)) && !map_sentinel(s, n))
				;
			break;
		}
		if (!thread_start(s, n))
			return FAIL(r, g, "expected a \"--- Thread ... stack: ---\" line");
		uint64_t at = g->lineno;
		size_t first = g->naddrs;
		uint32_t na = 0;
		bool same = false;
		have = false;
		while (next_line(g, &s, &n)) {
			trim(&s, &n);
			if (!n)
				continue;
			if (prefix(s, n, "---")) {
				have = true;
				break;
			}
			if (has(s, n, "same as previous thread")) {
				same = true;
				continue;
			}
			if ((rc = hex_addrs(r, g, s, s + n, true, &na)))
				return rc;
		}
		if (same || !na) {
			/* pprof adds one to the previous stack */
			g->naddrs = first;
			if (g->nrecs && g->recs[g->nrecs - 1].v[0] < INT64_MAX)
				g->recs[g->nrecs - 1].v[0]++;
			continue;
		}
		/* a leaf recorded twice, the copy adjusted by one: pprof drops the copy */
		if (na > 1 && g->addrs[first] == g->addrs[first + 1] + 1) {
			memmove(g->addrs + first + 1, g->addrs + first + 2, (na - 2) * sizeof(uint64_t));
			na--;
			g->naddrs--;
		}
		int64_t vals[4] = { 1 };
		uint64_t save = g->lineno;
		g->lineno = at;
		rc = add_rec(r, g, first, na, vals, -1);
		g->lineno = save;
		if (rc)
			return rc;
	}
	return TACH_OK;
}

/* ---- Go count profiles ---- */

static int read_count(struct tach_reader *r, struct pread *g)
{
	const char *s;
	size_t n;
	int rc;
	while (next_line(g, &s, &n)) {
		if (space_or_comment(s, n))
			continue;
		if (prefix(s, n, "---")) {
			while (!map_sentinel(s, n) && next_line(g, &s, &n))
				;
			return TACH_OK;
		}
		/* "N @ 0x... 0x...", exactly (pprof's countRE); N as Go's ParseInt(s, 0, 64) */
		const char *q = s, *e = s + n, *d = q;
		while (q < e && *q >= '0' && *q <= '9')
			q++;
		if (q == d || e - q < 4 || memcmp(q, " @ 0x", 5 > e - q ? (size_t)(e - q) : 5))
			return FAIL(r, g, "malformed count sample: expected \"N @ 0x...\"");
		int64_t v = 0;
		bool octal = *d == '0' && q - d > 1;
		for (const char *c = d; c < q; c++) {
			int dg = *c - '0';
			if (octal && dg > 7)
				return FAIL(r, g, "malformed count (a leading 0 makes it octal)");
			if (v > (INT64_MAX - dg) / (octal ? 8 : 10))
				return FAIL(r, g, "a count does not fit in 64 bits");
			v = v * (octal ? 8 : 10) + dg;
		}
		/* the rest: " 0x" + lowercase hex, repeated, nothing else */
		for (const char *c = q + 2; c < e;) {
			if (e - c < 4 || c[0] != ' ' || c[1] != '0' || c[2] != 'x')
				return FAIL(r, g, "malformed count sample: expected \" 0x...\" addresses");
			c += 3;
			const char *h = c;
			while (c < e && ((*c >= '0' && *c <= '9') || (*c >= 'a' && *c <= 'f')))
				c++;
			if (c == h || (c < e && *c != ' '))
				return FAIL(r, g, "malformed address in a count sample");
		}
		size_t first = g->naddrs;
		uint32_t na = 0;
		int64_t vals[4] = { v };
		if ((rc = hex_addrs(r, g, q + 2, e, false, &na)) ||
		    (rc = add_rec(r, g, first, na, vals, -1)))
			return rc;
	}
	return TACH_OK;
}

/* ---- memory map ---- */

static const char *hex_run(const char *q, const char *e)
{
	while (q < e && hexval(*q) >= 0)
		q++;
	return q;
}

static bool parse_hex(const char *s, const char *e, uint64_t *v)
{
	uint64_t x = 0;
	if (s == e || e - s > 16)
		return false;
	for (; s < e; s++)
		x = x << 4 | (uint64_t)hexval(*s);
	*v = x;
	return true;
}

static const char *skip_ws(const char *q, const char *e)
{
	while (q < e && is_sp(*q))
		q++;
	return q;
}

static const char *tok_end(const char *q, const char *e)
{
	while (q < e && !is_sp(*q))
		q++;
	return q;
}

static bool all_of(const char *s, const char *e, const char *set)
{
	if (s == e)
		return false;
	for (; s < e; s++)
		if (!strchr(set, *s) || !*s)
			return false;
	return true;
}

/* One mapping line's parts, as pointers into it. */
struct map_ent {
	const char *a, *ae, *b, *be;   /* start and limit, hex */
	const char *perm, *permE, *file, *fileE;
	uint64_t offset;
};

/* The glog prefix "file:line] " dropped, then "start-end" or "start end" (either with
 * 0x); false when the line has no such pair. Leaves the rest at *rest. */
static bool map_addrs(const char *s, const char *e, struct map_ent *m, const char **rest)
{
	const char *q = s;
	/* glog: "[^[]]+:[0-9]+]\s" */
	for (const char *c = q; c < e && *c != '['; c++) {
		if (*c != ']')
			continue;
		const char *d = c;
		while (d > q && d[-1] >= '0' && d[-1] <= '9')
			d--;
		if (d < c && d > q + 1 && d[-1] == ':' && c + 1 < e && is_sp(c[1]))
			q = c + 2;
		break;
	}
	q = skip_ws(q, e);
	if (e - q > 2 && q[0] == '0' && q[1] == 'x')
		q += 2;
	m->a = q;
	m->ae = hex_run(q, e);
	if (m->ae == m->a)
		return false;
	q = m->ae;
	if (q < e && (is_sp(*q) || *q == '-'))
		q++;
	q = skip_ws(q, e);
	if (e - q > 2 && q[0] == '0' && q[1] == 'x')
		q += 2;
	m->b = q;
	m->be = hex_run(q, e);
	if (m->be == m->b) {
		/* Go's regexp gives the second number the first's last digit */
		if (m->b != m->ae || m->ae - m->a < 2)
			return false;
		m->b = m->ae - 1;
		m->be = m->ae;
		m->ae = m->b;
	}
	q = m->be;
	if (q < e && *q == ':')
		q++;
	*rest = q;
	return true;
}

/* /proc/self/maps after the addresses: [perms] [offset] dev(hex:hex) inode [file]. 1 when
 * the line has that form, 0 when not, -1 when its offset does not fit. */
static int map_proc(const char *q, const char *e, struct map_ent *m)
{
	const char *t[8], *te[8];
	int nt = 0;
	for (const char *c = skip_ws(q, e); c < e && nt < 8; c = skip_ws(c, e)) {
		t[nt] = c;
		c = te[nt] = tok_end(c, e);
		nt++;
	}
	int j = 0;
	const char *pm = NULL, *pme = NULL, *of = NULL, *ofe = NULL;
	if (j < nt && all_of(t[j], te[j], "-rwxp"))
		pm = t[j], pme = te[j], j++;
	if (j < nt && all_of(t[j], te[j], "0123456789abcdefABCDEF"))
		of = t[j], ofe = te[j], j++;
	const char *colon = j < nt ? memchr(t[j], ':', (size_t)(te[j] - t[j])) : NULL;
	if (!(colon && colon > t[j] && hex_run(t[j], colon) == colon && colon + 1 < te[j] &&
	      hex_run(colon + 1, te[j]) == te[j] && j + 1 < nt && t[j + 1][0] >= '0' &&
	      t[j + 1][0] <= '9'))
		return 0;
	m->perm = pm, m->permE = pme;
	if (of && !parse_hex(of, ofe, &m->offset))
		return -1;
	int i = j + 2;
	if (i < nt && all_of(t[j + 1], te[j + 1], "0123456789"))
		m->file = t[i], m->fileE = te[i];
	return 1;
}

/* The brief form after the addresses: [perms] [file] [(@offset)] [buildid]; false when
 * its offset does not fit. */
static bool map_brief(const char *q, const char *e, struct map_ent *m)
{
	const char *c = skip_ws(q, e);
	if (c > q || c == e) {
		const char *pe = c;
		while (pe < e && strchr("-rwxp", *pe) && *pe)
			pe++;
		if (pe > c && c > q) {
			m->perm = c, m->permE = pe;
			q = pe;
		}
	}
	c = skip_ws(q, e);
	if (c > q && c < e) {
		m->file = c;
		m->fileE = tok_end(c, e);
		q = m->fileE;
		c = skip_ws(q, e);
		if (c > q && e - c > 3 && c[0] == '(' && c[1] == '@') {
			const char *h = hex_run(c + 2, e);
			if (h > c + 2 && h < e && *h == ')' && !parse_hex(c + 2, h, &m->offset))
				return false;
		}
	}
	return true;
}

/* One line as pprof's parseMappingEntry takes it: /proc/self/maps ("start-end perms
 * offset dev inode path") or the brief form ("start-end[:] [perms] [file] [(@offset)]
 * [buildid]"); a glog "file:line] " prefix dropped. Non-executable entries and lines of
 * neither form are skipped. */
static int map_line(struct tach_reader *r, struct pread *g, const char *s, size_t n,
		    size_t *unrecognized)
{
	*unrecognized = 1;
	const char *e = s + n, *q;
	struct map_ent m = { 0 };
	if (!map_addrs(s, e, &m, &q))
		return TACH_OK;
	int proc = map_proc(q, e, &m);
	if (proc < 0 || (!proc && !map_brief(q, e, &m)))
		return TACH_OK;
	*unrecognized = 0;
	if (m.perm && !memchr(m.perm, 'x', (size_t)(m.permE - m.perm)))
		return TACH_OK;
	uint64_t start, limit;
	if (!parse_hex(m.a, m.ae, &start) || !parse_hex(m.b, m.be, &limit)) {
		*unrecognized = 1;
		return TACH_OK;
	}
	size_t fl = m.file ? (size_t)(m.fileE - m.file) : 0;
	if (limit <= start)
		return TACH_OK;
	if (tachi_sym_add_map(g->sym, start, limit, m.offset, m.file ? m.file : "", fl))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	if (!g->program && fl && !(g->program = strndup(m.file, fl)))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

/* "$name" replacements from the map section's "name=value" lines (pprof's), applied to
 * the lines after them: at each place the first name (in the order they came) that
 * matches. Capped: a map section is a few dozen lines. */
#define MAX_ATTRS 64

struct attr {
	const char *k, *v;  /* k without its '$' */
	size_t kn, vn;
};

static int read_maps(struct tach_reader *r, struct pread *g)
{
	const char *s;
	size_t n;
	int rc = TACH_OK;
	struct attr at[MAX_ATTRS];
	size_t na = 0;
	char *buf = NULL;
	size_t cap = 0;
	while (!rc && next_line(g, &s, &n)) {
		if (na && n) {
			size_t len = 0;
			for (size_t i = 0; i < n;) {
				size_t j = na, add = 1;
				const char *from = s + i;
				if (s[i] == '$')
					for (j = 0; j < na; j++)
						if (n - i - 1 >= at[j].kn && !memcmp(s + i + 1, at[j].k, at[j].kn))
							break;
				if (j < na) {
					from = at[j].v;
					add = at[j].vn;
					i += 1 + at[j].kn;
				} else {
					i++;
				}
				if (!TACHI_RESERVE(buf, cap, len + add + 1)) {
					free(buf);
					return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
				}
				memcpy(buf + len, from, add);
				len += add;
			}
			/* a line longer than the input's own lines times the few names: bounded */
			if (len > (size_t)1 << 20) {
				free(buf);
				return FAIL(r, g, "memory map line too long once its $names are replaced");
			}
			s = buf;
			n = len;
		}
		size_t before = 0;
		rc = map_line(r, g, s, n, &before);
		if (rc || !before)
			continue;
		/* not a mapping: a "name=value" line defines $name */
		const char *eq = memchr(s, '=', n);
		if (!eq || na == MAX_ATTRS)
			continue;
		const char *k = s, *v = eq + 1;
		size_t kn = (size_t)(eq - s), vn = (size_t)(s + n - v);
		trim(&k, &kn);
		trim(&v, &vn);
		/* the names point into the input, or into a copy when they came from a
		 * replaced line */
		if (s == buf) {
			char *c = malloc(kn + vn + 1);
			if (!c) {
				rc = RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
				break;
			}
			memcpy(c, k, kn);
			memcpy(c + kn, v, vn);
			if (!TACHI_RESERVE(g->owned, g->owned_cap, g->nowned + 1)) {
				free(c);
				rc = RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
				break;
			}
			g->owned[g->nowned++] = c;
			k = c;
			v = c + kn;
		}
		at[na++] = (struct attr){ k, v, kn, vn };
	}
	free(buf);
	return rc;
}

/* ---- open / next ---- */

static int pt_option(struct tach_reader *r, const char *key, const char *value)
{
	struct pread *g = r->state;
	int rc = tachi_native_option(r, &g->opt, key, value);
	if (rc != TACHI_NATIVE_NOT_MINE)
		return rc;
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "pproftext reader has no option %s", key);
}

static void set_types(struct tach_reader *r, struct pread *g)
{
	static const struct tach_value_type heap4[4] = {
		{ "alloc_objects", "count" }, { "alloc_space", "bytes" },
		{ "inuse_objects", "count" }, { "inuse_space", "bytes" },
	};
	static const struct tach_value_type heap2[2] = { { "objects", "count" }, { "space", "bytes" } };
	static const struct tach_value_type cont[2] = {
		{ "contentions", "count" }, { "delay", "nanoseconds" },
	};
	struct tach_meta *m = &r->meta;
	switch (g->kind) {
	case PPT_HEAP:
	case PPT_GROWTH:
	case PPT_FRAG:
		g->ntypes = g->has_alloc ? 4 : 2;
		memcpy(g->vt, g->has_alloc ? heap4 : heap2, (size_t)g->ntypes * sizeof(g->vt[0]));
		m->period_type = "space";
		m->period_unit = "bytes";
		break;
	case PPT_CONTENTION:
		g->ntypes = 2;
		memcpy(g->vt, cont, sizeof(cont));
		m->period_type = "contentions";
		m->period_unit = "count";
		break;
	default:
		g->ntypes = 1;
		g->vt[0].type = g->kind == PPT_THREAD ? "thread" : g->count_type;
		g->vt[0].unit = "count";
		m->period_type = g->vt[0].type;
		m->period_unit = "count";
		g->period = 1;
		break;
	}
	m->value_type_count = (uint32_t)g->ntypes;
	m->value_types = g->vt;
	/* pprof's default: the last type (inuse_space, space, delay, the count) */
	m->weight_type = (uint32_t)g->ntypes - 1;
	m->default_type = 0;
	m->weight_unit = g->vt[g->ntypes - 1].unit;
	m->period = g->period;
	m->duration_ns = g->duration_ns;
}

static int pt_open(struct tach_reader *r)
{
	struct pread *g = r->state;
	g->p = (const char *)r->in.data;
	g->end = g->p + r->in.size;
	g->sym = tachi_native_sym_new(r, &g->opt);
	g->chain.dict = &r->dict;
	if (!g->sym)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	const char *s;
	size_t n;
	bool have;
	while ((have = next_line(g, &s, &n)) && space_or_comment(s, n))
		;
	if (!have)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0, "empty input: no profile in it");
	if ((g->kind = tachi_ppt_kind(s, n)) == PPT_NONE)
		return FAIL(r, g, "not one of pprof's legacy text profiles (heap, growth, "
			    "contention, thread or count)");
	const char *h = s;
	size_t hn = n;
	trim(&h, &hn);
	int rc;
	switch (g->kind) {
	case PPT_HEAP:
	case PPT_GROWTH:
	case PPT_FRAG:
		if ((rc = heap_header(r, g, h, hn)) || (rc = read_heap(r, g)))
			return rc;
		break;
	case PPT_CONTENTION:
		if ((rc = read_contention(r, g)))
			return rc;
		break;
	case PPT_THREAD:
		if ((rc = read_thread(r, g, h, hn)))
			return rc;
		break;
	case PPT_COUNT:
		if (!(g->count_type = strndup(h, (size_t)((const char *)memchr(h, ' ', hn) - h))))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		if ((rc = read_count(r, g)))
			return rc;
		break;
	default:
		break;
	}
	if ((rc = read_maps(r, g)))
		return rc;
	set_types(r, g);
	r->meta.program = g->program;
	if (tach_dict_intern_string(&r->dict, "bytes", 5, &g->bytes_key))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	size_t cap = 64;
	while (cap < 2 * (g->naddrs < 1 ? 1 : g->naddrs) && cap < ((size_t)1 << 40))
		cap <<= 1;
	/* addresses are few beside the records; the table grows with distinct ones */
	if (!(g->pa = calloc(cap, sizeof(*g->pa))))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	for (size_t i = 0; i < cap; i++)
		g->pa[i].n = UINT32_MAX;
	g->pa_mask = cap - 1;
	tachi_in_release(&r->in, r->in.size);
	return TACH_OK;
}

/* The frames of an address as pprof records it (looked up as it is: the minus one for a
 * return address is already made). */
static int addr_frames(struct tach_reader *r, struct pread *g, uint64_t a, struct paddr **out)
{
	size_t i = (size_t)tachi_mix64(a) & g->pa_mask;
	while (g->pa[i].n != UINT32_MAX && g->pa[i].addr != a)
		i = (i + 1) & g->pa_mask;
	struct paddr *p = &g->pa[i];
	if (p->n == UINT32_MAX) {
		if (g->pa_count * 2 >= g->pa_mask)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "too many distinct addresses");
		size_t first = g->chain.len;
		if (tachi_sym_lookup(g->sym, a, true, tachi_native_emit, &g->chain))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		if (g->chain.len > UINT32_MAX - 1)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "too many frames");
		p->addr = a;
		p->first = (uint32_t)first;
		p->n = (uint32_t)(g->chain.len - first);
		g->pa_count++;
	}
	*out = p;
	return TACH_OK;
}

static int pt_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct pread *g = r->state;
	if (g->next >= g->nrecs)
		return TACH_EOF;
	const struct prec *pr = &g->recs[g->next++];
	size_t depth = 0;
	for (uint32_t i = 0; i < pr->n; i++) {
		struct paddr *p = NULL;
		int rc = addr_frames(r, g, g->addrs[pr->first + i], &p);
		if (rc)
			return rc;
		if (depth + p->n > r->lim.max_depth)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, pr->line,
				     "stack with its inlined frames is deeper than the limit of %u "
				     "frames", r->lim.max_depth);
		if (!TACHI_RESERVE(g->frames, g->frames_cap, depth + p->n + 1))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		memcpy(g->frames + depth, g->chain.ids + p->first, p->n * sizeof(uint32_t));
		depth += p->n;
	}
	memcpy(g->vals, pr->v, sizeof(g->vals));
	int64_t w = pr->v[g->ntypes - 1];
	struct tach_sample *smp = &r->sample;
	smp->thread_id = 0;
	smp->interp_id = 0;
	smp->status = 0;
	smp->timestamp_us = 0;
	/* the weight is the default type's value; a sample whose value there is 0 (memory
	 * allocated and freed) still holds its other values */
	smp->weight = w > 0 ? (uint64_t)w : 0;
	smp->depth = (uint32_t)depth;
	smp->same_outer = 0;
	smp->frames = g->frames;
	uint32_t nl = 0;
	if ((g->kind == PPT_HEAP || g->kind == PPT_GROWTH || g->kind == PPT_FRAG)) {
		g->label = (struct tach_label){ g->bytes_key, TACH_NO_STRING, pr->block, TACH_NO_STRING };
		nl = 1;
	}
	g->ext = (struct tach_sample_ext){ sizeof(g->ext), (uint32_t)g->ntypes, g->vals, nl,
					   &g->label };
	r->ext = &g->ext;
	r->stats.full_records++;
	r->stats.total_samples += smp->weight;
	*out = smp;
	return TACH_OK;
}

static void pt_free(struct tach_reader *r)
{
	struct pread *g = r->state;
	free(g->program);
	free(g->opt.binary_path);
	free(g->count_type);
	for (size_t i = 0; i < g->nowned; i++)
		free(g->owned[i]);
	free(g->owned);
	tachi_sym_free(g->sym);
	free(g->recs);
	free(g->addrs);
	free(g->pa);
	free(g->chain.ids);
	free(g->frames);
}

const struct tachi_reader_ops tachi_pproftext_reader_ops = {
	.state_size = sizeof(struct pread),
	.option = pt_option,
	.open = pt_open,
	.next = pt_next,
	.free = pt_free,
	.whole_input = true,
};
