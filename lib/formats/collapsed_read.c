/* Collapsed ("folded") stack reader: lines "frame;frame;... COUNT", root first, as written by
 * flamegraph.pl's stackcollapse scripts, perf, py-spy (-f raw), austin, CPython's --collapsed
 * and our own collapsed writer.
 *
 * Each line becomes one sample whose weight is its count; the format has no time, so
 * timestamps are synthesized in input order, one interval per sample. A count may be a
 * time (stackcollapse-perf.pl sums perf periods in ns, austin writes µs): the count-unit
 * option, or its auto default (austin's files; counts all multiples of one number >= 1000),
 * makes it a weight of whole intervals, never one sample per µs. Accepted: LF or CRLF,
 * blank lines, '#' comments (austin's "# interval:" and "# python:" go into the metadata),
 * space or TAB before the count, white space around the line, fractional counts (rounded, or
 * scaled by the factor option), differential lines "stack A B" (one column kept, or with
 * diff=both both: B as a sample, A as a sample marked TACH_STATUS_BASELINE; whether a file
 * is differential is decided once, from its first valid line), austin full mode "a,b,c" (the
 * metric option picks one), zero counts (skipped) and negative counts (skipped, one warning).
 *
 * Frame labels are read in one style per file, chosen from the first ~1000 frames unless the
 * labels option fixes it: py-spy "func (file:line)", "file:func:line" (CPython, austin; split
 * from the right so Windows drive letters survive, and a colon that is half of "::" never
 * splits), austin 2's "file:func;L<line>" pairs, or raw names. A label the style does not fit
 * is a bare name: file "~" and no location, the way CPython stores its special frames (<GC>),
 * so the collapsed writer prints it back unchanged. Thread pseudo-frames at the root (tid:N,
 * austin "P<pid>;T[<iid>:]<tid>", py-spy "process N:\"...\"" and "thread (ID)[: name]",
 * austin 1's "[Process PID;]Thread ID") set the sample's thread and interpreter ids; their
 * style is decided from the first valid line. stackcollapse-perf.pl's --pid and --tid roots
 * ("comm-PID", "comm-PID/TID", PID '?' when unknown) are decided from all the first lines,
 * and leave the process name as the root frame. austin 1's "func (file);L<line>" pairs
 * fold into one frame, and its -f lines "stack TIME MEM+ MEM-" are read as three metrics.
 *
 * Not supported: escapes (the format has none: ';' always splits frames, except inside
 * py-spy's quoted process command lines), colour annotations such as "_[k]" (kept in the
 * name), exponents in counts. Memory grows with distinct labels, never with input size.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/detect.h"
#include "formats/collapsed.h"

/* The label style is chosen from this many frames at the start of the input. */
#define SNIFF_FRAMES 1000
#define SNIFF_LINES 4096
#define SNIFF_BYTES (1u << 20)
#define NO_FRAME UINT32_MAX

enum { LAB_AUTO, LAB_PYSPY, LAB_COLON, LAB_AUSTIN2, LAB_RAW, LAB_AUSTIN1 };
enum { THR_NONE, THR_CPYTHON, THR_AUSTIN, THR_PYSPY, THR_AUSTIN1, THR_PERF_PID, THR_PERF_TID };
/* What a count is: samples, or a time in ns, µs or ms (UNIT_AUTO: decided per file). */
enum { UNIT_AUTO, UNIT_SAMPLES, UNIT_NS, UNIT_US, UNIT_MS };
/* Counts that share a divisor this large (in their own unit) look like times. */
#define TIME_GCD_MIN 1000
/* When the interval is chosen from the counts, the first lines' counts make at most about
 * this many samples, whatever their unit. */
#define UNIT_MAX_WINDOW_SAMPLES (1u << 20)
enum { DIFF_SECOND, DIFF_FIRST, DIFF_NONE, DIFF_BOTH };
enum { L_DATA, L_INVALID, L_NEGATIVE, L_ZERO };

/* A decimal number as text gives it: mant / 10^scale. */
struct num {
	unsigned __int128 mant;
	unsigned scale;
	bool neg;
	bool big; /* the integer part exceeds 64 bits */
};

struct label {
	uint64_t off;
	uint32_t len;
	uint32_t frame, frame2; /* frame2: a second frame (an austin 2 pair that did not fold) */
};

struct aline {
	size_t off, len;
	uint64_t line;
};

struct cread {
	/* options */
	int labels_opt;
	int diff_opt;
	bool keep_threads;
	uint32_t metric; /* 1-based field of a comma-separated count */
	struct num factor;
	bool factor_set;
	bool interval_set;
	int unit_opt;

	/* counts: each is multiplied by unit_mul and divided by unit_div (rounded), so that a
	 * time becomes a number of intervals */
	int unit;
	uint64_t unit_mul, unit_div;
	uint64_t period; /* the counts' common divisor in ns, when the interval comes from it */
	bool meta_interval; /* the file said its interval (austin) */
	bool meta_austin;   /* the file has austin's "# austin:" or "# mode:" header */
	bool meta_memory;   /* austin's "# mode: memory": the counts are bytes */
	bool spaced3;       /* austin 1's -f: "stack TIME MEM+ MEM-" */
	uint64_t cgcd, csum; /* of the positive counts of the first lines */
	uint64_t ncounts;

	/* perf roots (stackcollapse-perf.pl --pid, --tid) seen in the first lines */
	uint64_t n_roots, n_perf_pid, n_perf_tid, n_perf_q;
	bool perf_pid_varies;
	char perf_first[64];
	size_t perf_first_len;
	uint64_t perf_first_pid;
	size_t root_len; /* the perf root's process name length, 0: none */

	/* decided once per file */
	bool decided;     /* label style and counters final */
	bool first_valid; /* the first valid line has been seen */
	int labels;
	bool explicit_labels;
	int threads;
	bool differential;
	uint64_t n_py, n_colon, n_austin2, n_austin1, n_frames;

	/* label -> frame ids */
	char *lbytes;
	size_t lbytes_len, lbytes_cap;
	struct label *labs;
	size_t nlabs, labs_cap;
	struct tachi_idset lindex;

	/* lines read ahead to choose the styles, replayed first */
	char *ahead;
	size_t ahead_len, ahead_cap;
	struct aline *alines;
	size_t nalines, alines_cap, apos;
	bool started;

	/* the sample being built */
	uint32_t *root; /* root first */
	size_t root_cap;
	uint32_t *frames; /* innermost first */
	size_t frames_cap;
	uint32_t *prev; /* previous sample's root-first ids */
	size_t prev_cap;
	uint32_t prev_depth;
	uint64_t prev_tid;
	uint32_t prev_iid;
	bool has_prev;

	uint64_t line;  /* number of the line being turned into a sample */
	uint64_t clock; /* next synthesized timestamp */
	uint64_t total; /* samples so far (sum of weights) */

	uint64_t invalid, first_invalid;
	bool any_stack; /* a line parsed as a stack, whatever its count */
	char first_why[96];
	char first_seen[48]; /* the start of the first invalid line, printable */
	uint64_t negative, first_negative;
	bool warned_round, warned_empty, warned_meta_late, finished;
	unsigned __int128 time_exact, time_weighted; /* ns: as the counts say, as weighted */
	const char *why;
	/* diff=both: the first count of the line being read, then the baseline sample still
	 * to hand out for the stack of the last one */
	uint64_t base;
	uint64_t pending;
};

static inline bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* ---- numbers ---- */

/* digits[.digits] with an optional '-' when allow_neg. Fraction digits past 18 are dropped. */
static bool parse_num(const char *p, size_t n, bool allow_neg, struct num *out)
{
	size_t i = 0;
	*out = (struct num){ 0 };
	if (allow_neg && n && p[0] == '-') {
		out->neg = true;
		i = 1;
	}
	size_t d0 = i;
	for (; i < n && is_digit(p[i]); i++) {
		if (out->mant > UINT64_MAX / 10)
			out->big = true;
		else
			out->mant = out->mant * 10 + (unsigned)(p[i] - '0');
	}
	if (i == d0)
		return false;
	if (i < n && p[i] == '.') {
		for (i++; i < n && is_digit(p[i]); i++) {
			if (out->scale < 18) {
				out->mant = out->mant * 10 + (unsigned)(p[i] - '0');
				out->scale++;
			}
		}
	}
	return i == n;
}

/* count * factor * unit_mul rounded half up, then divided by unit_div rounded half up,
 * saturating at UINT64_MAX: unit_mul turns a time into ns, unit_div is the interval in ns
 * (both 1 for samples). *rounded when the first step dropped a fraction of a sample; what
 * the second changes (a time that is no whole number of intervals) is summed for finish.
 * Exact integer arithmetic, so the result never depends on the platform. */
static uint64_t scale_count(struct cread *st, const struct num *c, bool *rounded)
{
	const struct num *f = &st->factor;
	uint64_t div = st->unit_div;
	if (c->big || f->big)
		return UINT64_MAX;
	unsigned __int128 m;
	if (__builtin_mul_overflow(c->mant, f->mant, &m) ||
	    __builtin_mul_overflow(m, (unsigned __int128)st->unit_mul, &m))
		return UINT64_MAX;
	unsigned __int128 p10 = 1;
	for (unsigned k = 0; k < c->scale + f->scale; k++)
		p10 *= 10;
	unsigned __int128 q = m / p10, rem = m % p10;
	if (rem) {
		if (div == 1)
			*rounded = true;
		if (rem * 2 >= p10)
			q++;
	}
	if (div > 1) {
		unsigned __int128 t = q;
		q = (q + div / 2) / div;
		if (!c->neg) {
			st->time_exact += t;
			st->time_weighted += q * div;
		}
	}
	return q > UINT64_MAX ? UINT64_MAX : (uint64_t)q;
}

static bool parse_hex_u64(const char *p, size_t n, uint64_t *v)
{
	if (!n || n > 16)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		int h = tachi_hexval(p[i]);
		if (h < 0)
			return false;
		x = x << 4 | (uint64_t)h;
	}
	*v = x;
	return true;
}

/* A thread id as profilers print them: 0x-prefixed hex, decimal, or bare hex. */
static bool parse_id(const char *p, size_t n, uint64_t *v)
{
	if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return parse_hex_u64(p + 2, n - 2, v);
	return tachi_parse_dec(p, n, UINT64_MAX, v) || parse_hex_u64(p, n, v);
}

/* ---- line level ---- */

/* diff=both: the second count a in *count, the first b in st->base; the line counts when
 * either is positive. */
static int both_counts(struct cread *st, const char *s, size_t t2, const struct num *a,
		       const struct num *b, size_t *stack_len, uint64_t *count, bool *rounded)
{
	size_t e = t2;
	while (e > 0 && is_ws(s[e - 1]))
		e--;
	if (e == 0) {
		st->why = "no stack before the count";
		return L_INVALID;
	}
	*stack_len = e;
	*count = scale_count(st, a, rounded);
	st->base = scale_count(st, b, rounded);
	if (a->neg || b->neg)
		return (*count || st->base) ? L_NEGATIVE : L_ZERO;
	return (*count || st->base) ? L_DATA : L_ZERO;
}

/* The last white-space separated token of s[0, n): its start *t and the end *e of what
 * is before it, white space off; false when there is no white space. */
static bool last_token(const char *s, size_t n, size_t *t, size_t *e)
{
	size_t k = n;
	while (k > 0 && !is_ws(s[k - 1]))
		k--;
	if (k == 0)
		return false;
	*t = k;
	while (k > 0 && is_ws(s[k - 1]))
		k--;
	*e = k;
	return true;
}

/* austin 1's -f line ends "TIME MEM+ MEM-": the metric's field of the three, then the stack
 * before them. */
static int spaced_counts(struct cread *st, const char *s, size_t n, size_t *stack_len,
			 uint64_t *count, bool *rounded)
{
	size_t t[3], e = n;
	for (int k = 2; k >= 0; k--)
		if (!last_token(s, e, &t[k], &e)) {
			st->why = "austin full mode needs three counts on every line";
			return L_INVALID;
		}
	if (st->metric > 3) {
		st->why = "fewer space-separated counts than the metric asks for";
		return L_INVALID;
	}
	size_t f = t[st->metric - 1];
	size_t fe = st->metric < 3 ? t[st->metric] : n;
	while (fe > f && is_ws(s[fe - 1]))
		fe--;
	struct num a;
	if (!parse_num(s + f, fe - f, true, &a)) {
		st->why = "the count is not a number";
		return L_INVALID;
	}
	if (e == 0) {
		st->why = "no stack before the count";
		return L_INVALID;
	}
	*stack_len = e;
	*count = scale_count(st, &a, rounded);
	if (*count == 0)
		return L_ZERO;
	return a.neg ? L_NEGATIVE : L_DATA;
}

/* Whether a line is austin 1's -f form: three counts, the last one (memory freed) zero or
 * negative, the two before not negative. */
static bool is_spaced3(const char *s, size_t n)
{
	size_t t, e = n, end = n;
	struct num x;
	for (int k = 0; k < 3; k++) {
		if (!last_token(s, e, &t, &e) || !parse_num(s + t, end - t, true, &x) || x.scale)
			return false;
		if (k == 0 ? (x.neg == false && x.mant != 0) : x.neg)
			return false;
		end = e;
	}
	return e > 0;
}

/* Takes the count(s) off the end of a trimmed, non-empty data line; *stack_len is what is
 * left of the stack. Sets st->why for invalid lines. */
static int split_count(struct cread *st, const char *s, size_t n, size_t *stack_len,
		       uint64_t *count, bool *rounded)
{
	if (st->spaced3)
		return spaced_counts(st, s, n, stack_len, count, rounded);
	size_t t = n;
	while (t > 0 && !is_ws(s[t - 1]))
		t--;
	if (t == 0) {
		st->why = "no count after the stack";
		return L_INVALID;
	}
	const char *tok = s + t;
	size_t tl = n - t;
	size_t e = t;
	while (e > 0 && is_ws(s[e - 1]))
		e--;
	/* austin full mode: "time,idle,mem" */
	if (memchr(tok, ',', tl) || st->metric > 1) {
		const char *f = tok, *end = tok + tl;
		for (uint32_t k = 1; k < st->metric; k++) {
			const char *c = memchr(f, ',', (size_t)(end - f));
			if (!c) {
				st->why = "fewer comma-separated counts than the metric asks for";
				return L_INVALID;
			}
			f = c + 1;
		}
		const char *c = memchr(f, ',', (size_t)(end - f));
		tok = f;
		tl = (size_t)((c ? c : end) - f);
	}
	struct num a;
	if (!parse_num(tok, tl, true, &a)) {
		st->why = "the count is not a number";
		return L_INVALID;
	}
	if (st->differential) {
		size_t t2 = e;
		while (t2 > 0 && !is_ws(s[t2 - 1]))
			t2--;
		struct num b;
		if (t2 == 0 || !parse_num(s + t2, e - t2, true, &b)) {
			st->why = "a differential file needs two counts on every line";
			return L_INVALID;
		}
		if (st->diff_opt == DIFF_FIRST)
			a = b;
		if (st->diff_opt == DIFF_BOTH)
			return both_counts(st, s, t2, &a, &b, stack_len, count, rounded);
		e = t2;
		while (e > 0 && is_ws(s[e - 1]))
			e--;
	}
	if (e == 0) {
		st->why = "no stack before the count";
		return L_INVALID;
	}
	*stack_len = e;
	*count = scale_count(st, &a, rounded);
	if (*count == 0)
		return L_ZERO;
	return a.neg ? L_NEGATIVE : L_DATA;
}

/* Whether a valid line's stack ends in " NUMBER": a differential line. */
static bool ends_in_number(const char *s, size_t n)
{
	size_t t = n;
	while (t > 0 && !is_ws(s[t - 1]))
		t--;
	struct num x;
	return t > 0 && parse_num(s + t, n - t, true, &x);
}

static void trim(const char **s, size_t *n)
{
	const char *p = *s;
	size_t k = *n;
	while (k && (is_ws(p[k - 1]) || p[k - 1] == '\r'))
		k--;
	while (k && is_ws(p[0])) {
		p++;
		k--;
	}
	*s = p;
	*n = k;
}

/* "# key: value" metadata from austin: the interval (µs) and the Python version. */
static void meta_line(struct tach_reader *r, const char *s, size_t n)
{
	struct cread *st = r->state;
	size_t i = 1;
	while (i < n && is_ws(s[i]))
		i++;
	const char *key = s + i;
	const char *colon = memchr(key, ':', n - i);
	if (!colon)
		return;
	size_t kl = (size_t)(colon - key);
	const char *v = colon + 1;
	size_t vl = n - (size_t)(v - s);
	trim(&v, &vl);
	if (st->started) {
		if (!st->warned_meta_late && ((kl == 8 && !memcmp(key, "interval", 8)) ||
					      (kl == 6 && !memcmp(key, "python", 6)))) {
			st->warned_meta_late = true;
			tachi_warn(&r->warn, TACH_POS_LINE, r->in.line,
				   "metadata after the first samples ignored");
		}
		return;
	}
	uint64_t x;
	if (kl == 8 && !memcmp(key, "interval", 8)) {
		if (!st->interval_set && tachi_parse_dec(v, vl, UINT32_MAX, &x) && x > 0) {
			r->meta.interval_us = x;
			st->meta_interval = true;
		}
	} else if (kl == 6 && !memcmp(key, "austin", 6)) {
		st->meta_austin = true;
	} else if (kl == 4 && !memcmp(key, "mode", 4)) {
		st->meta_austin = true;
		st->meta_memory = vl == 6 && !memcmp(v, "memory", 6);
	} else if (kl == 6 && !memcmp(key, "python", 6)) {
		unsigned part[3] = { 0, 0, 0 };
		size_t k = 0, j = 0;
		for (; k < 3 && j < vl; k++) {
			size_t d = j;
			unsigned val = 0;
			while (j < vl && is_digit(v[j]) && val < 1000)
				val = val * 10 + (unsigned)(v[j++] - '0');
			if (j == d || val > 255)
				return;
			part[k] = val;
			if (j < vl && v[j] == '.')
				j++;
			else
				break;
		}
		r->meta.py_major = (uint8_t)part[0];
		r->meta.py_minor = (uint8_t)part[1];
		r->meta.py_micro = (uint8_t)part[2];
	}
}

/* ---- thread pseudo-frames ---- */

/* The frame [p, end of frame) and where the next one starts (NULL after the last). */
static const char *frame_end(const char *p, const char *end, const char **next)
{
	const char *q = memchr(p, ';', (size_t)(end - p));
	*next = q ? q + 1 : NULL;
	return q ? q : end;
}

static bool has_prefix(const char *p, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && !memcmp(p, pre, k);
}

static bool is_tid_frame(const char *p, size_t n, uint64_t *tid)
{
	return has_prefix(p, n, "tid:") && tachi_parse_dec(p + 4, n - 4, UINT64_MAX, tid);
}

static bool is_austin_p(const char *p, size_t n, uint64_t *pid)
{
	return n > 1 && p[0] == 'P' && tachi_parse_dec(p + 1, n - 1, UINT64_MAX, pid);
}

/* T<tid> or T<iid>:<tid> */
static bool is_austin_t(const char *p, size_t n, uint64_t *tid, uint64_t *iid, bool *has_iid)
{
	if (n < 2 || p[0] != 'T')
		return false;
	const char *c = memchr(p + 1, ':', n - 1);
	*has_iid = c != NULL;
	if (!c)
		return parse_id(p + 1, n - 1, tid);
	return tachi_parse_dec(p + 1, (size_t)(c - p - 1), UINT64_MAX, iid) && *iid <= UINT32_MAX &&
	       parse_id(c + 1, n - (size_t)(c + 1 - p), tid);
}

/* py-spy: thread (ID) or thread (ID): NAME */
static bool is_pyspy_thread(const char *p, size_t n, uint64_t *tid)
{
	if (!has_prefix(p, n, "thread ("))
		return false;
	const char *c = memchr(p + 8, ')', n - 8);
	if (!c)
		return false;
	size_t rest = n - (size_t)(c + 1 - p);
	if (rest && !(rest >= 2 && c[1] == ':' && c[2] == ' '))
		return false;
	return parse_id(p + 8, (size_t)(c - p - 8), tid);
}

/* py-spy: process PID:"command line", where the command line may hold ';' */
static bool is_pyspy_process(const char *p, const char *end, uint64_t *pid, const char **next)
{
	const char *nx;
	const char *fe = frame_end(p, end, &nx);
	size_t n = (size_t)(fe - p);
	if (!has_prefix(p, n, "process "))
		return false;
	const char *c = memchr(p + 8, ':', n - 8);
	if (!c || c + 1 >= fe || c[1] != '"' || !tachi_parse_dec(p + 8, (size_t)(c - p - 8), UINT64_MAX, pid))
		return false;
	/* the closing quote ends a frame; the command line may have split it */
	while (!(fe > c + 1 && fe[-1] == '"')) {
		if (!nx)
			return false;
		fe = frame_end(nx, end, &nx);
	}
	*next = nx;
	return true;
}

static bool is_austin1_thread(const char *p, size_t n, uint64_t *tid)
{
	return has_prefix(p, n, "Thread ") && parse_id(p + 7, n - 7, tid);
}

/* austin 1 with -C: "Process PID;" before the thread */
static bool is_austin1_process(const char *p, size_t n, uint64_t *pid)
{
	return has_prefix(p, n, "Process ") && tachi_parse_dec(p + 8, n - 8, UINT64_MAX, pid);
}

static const char *last_of(const char *p, size_t n, char c)
{
	while (n > 0)
		if (p[--n] == c)
			return p + n;
	return NULL;
}

/* stackcollapse-perf.pl's root with --pid, "COMM-PID", or --tid, "COMM-PID/TID", where PID
 * is '?' when perf script did not print it: *comm_len is the process name's length, *pid
 * UINT64_MAX for '?'. Split at the last '-', so a name may hold '-' and '/'. */
static bool perf_root(const char *p, size_t n, bool with_tid, size_t *comm_len, uint64_t *pid,
		      uint64_t *tid)
{
	const char *slash = with_tid ? last_of(p, n, '/') : NULL;
	if (with_tid && (!slash || !tachi_parse_dec(slash + 1, n - (size_t)(slash + 1 - p),
						      UINT64_MAX, tid)))
		return false;
	size_t m = with_tid ? (size_t)(slash - p) : n;
	const char *dash = last_of(p, m, '-');
	if (!dash || dash == p)
		return false;
	size_t pl = m - (size_t)(dash + 1 - p);
	if (pl == 1 && dash[1] == '?')
		*pid = UINT64_MAX;
	else if (!tachi_parse_dec(dash + 1, pl, UINT64_MAX - 1, pid))
		return false;
	*comm_len = (size_t)(dash - p);
	return true;
}

/* Notes the root of one of the first lines for the per-file choice of perf roots. */
static void sniff_perf_root(struct cread *st, const char *s, const char *end)
{
	const char *nx;
	size_t n = (size_t)(frame_end(s, end, &nx) - s), cl;
	uint64_t pid, tid;
	st->n_roots++;
	if (perf_root(s, n, true, &cl, &pid, &tid)) {
		st->n_perf_tid++;
	} else if (perf_root(s, n, false, &cl, &pid, &tid)) {
		st->n_perf_pid++;
		if (pid == UINT64_MAX)
			st->n_perf_q++;
		if (st->n_perf_pid == 1 && cl <= sizeof(st->perf_first)) {
			memcpy(st->perf_first, s, cl);
			st->perf_first_len = cl;
			st->perf_first_pid = pid;
		} else if (cl == st->perf_first_len && !memcmp(s, st->perf_first, cl) &&
			   pid != st->perf_first_pid) {
			st->perf_pid_varies = true;
		}
	}
}

/* The perf root style, when every root of the first lines has it. "COMM-PID/TID" says what
 * it is; "COMM-PID" alone may be a process name ("gcc-12"): it counts only when a PID is
 * '?' or one name comes with two PIDs, which no name does. */
static int decide_perf_roots(const struct cread *st)
{
	if (!st->n_roots)
		return THR_NONE;
	if (st->n_perf_tid == st->n_roots)
		return THR_PERF_TID;
	if (st->n_perf_pid == st->n_roots && (st->n_perf_q || st->perf_pid_varies))
		return THR_PERF_PID;
	return THR_NONE;
}

/* The thread style of a file, from its first valid stack. */
static int sniff_threads(const char *s, const char *end)
{
	const char *nx;
	const char *fe = frame_end(s, end, &nx);
	size_t n = (size_t)(fe - s);
	uint64_t a, b;
	bool h;
	if (is_tid_frame(s, n, &a))
		return THR_CPYTHON;
	if (is_austin_p(s, n, &a) && nx) {
		const char *nx2;
		const char *fe2 = frame_end(nx, end, &nx2);
		if (is_austin_t(nx, (size_t)(fe2 - nx), &a, &b, &h))
			return THR_AUSTIN;
	}
	if (is_pyspy_thread(s, n, &a) || is_pyspy_process(s, end, &a, &nx))
		return THR_PYSPY;
	if (is_austin1_thread(s, n, &a))
		return THR_AUSTIN1;
	if (is_austin1_process(s, n, &a) && nx) {
		const char *nx2;
		const char *fe2 = frame_end(nx, end, &nx2);
		if (is_austin1_thread(nx, (size_t)(fe2 - nx), &a))
			return THR_AUSTIN1;
	}
	return THR_NONE;
}

/* A perf root's process name stays the root frame (st->root_len long); its PID is the
 * interpreter id (the process, as austin's P<pid> is) and its TID the thread. With --pid
 * alone the process's samples are one thread numbered with the PID, the id Linux gives its
 * first thread. */
static const char *strip_perf_root(struct cread *st, const char *s, size_t n,
				   uint64_t *tid, uint32_t *iid)
{
	size_t cl;
	uint64_t pid, t = 0;
	bool with_tid = st->threads == THR_PERF_TID;
	if (!perf_root(s, n, with_tid, &cl, &pid, &t))
		return s;
	st->root_len = cl;
	if (pid != UINT64_MAX && pid <= UINT32_MAX)
		*iid = (uint32_t)pid;
	*tid = with_tid ? t : pid != UINT64_MAX ? pid : 0;
	return s;
}

/* Takes the file's kind of thread frames off the root of [s, end); returns where the real
 * frames start (end when none are left). */
static const char *strip_threads(struct cread *st, const char *s, const char *end,
				 uint64_t *tid, uint32_t *iid)
{
	const char *nx;
	const char *fe = frame_end(s, end, &nx);
	size_t n = (size_t)(fe - s);
	uint64_t a, b;
	bool h;
	switch (st->threads) {
	case THR_CPYTHON:
		if (is_tid_frame(s, n, &a)) {
			*tid = a;
			return nx ? nx : end;
		}
		break;
	case THR_AUSTIN:
		if (is_austin_p(s, n, &a)) {
			if (a <= UINT32_MAX)
				*iid = (uint32_t)a;
			s = nx ? nx : end;
			if (s == end)
				return end;
			fe = frame_end(s, end, &nx);
			if (is_austin_t(s, (size_t)(fe - s), &a, &b, &h)) {
				*tid = a;
				if (h)
					*iid = (uint32_t)b;
				return nx ? nx : end;
			}
		}
		break;
	case THR_PYSPY:
		while (is_pyspy_process(s, end, &a, &nx)) {
			if (a <= UINT32_MAX)
				*iid = (uint32_t)a;
			s = nx ? nx : end;
			if (s == end)
				return end;
		}
		fe = frame_end(s, end, &nx);
		if (is_pyspy_thread(s, (size_t)(fe - s), &a)) {
			*tid = a;
			return nx ? nx : end;
		}
		break;
	case THR_AUSTIN1:
		if (is_austin1_process(s, n, &a) && nx) {
			const char *nx2;
			const char *fe2 = frame_end(nx, end, &nx2);
			if (is_austin1_thread(nx, (size_t)(fe2 - nx), &b)) {
				if (a <= UINT32_MAX)
					*iid = (uint32_t)a;
				s = nx;
				n = (size_t)(fe2 - nx);
				nx = nx2;
			}
		}
		if (is_austin1_thread(s, n, &a)) {
			*tid = a;
			return nx ? nx : end;
		}
		break;
	case THR_PERF_PID:
	case THR_PERF_TID:
		return strip_perf_root(st, s, n, tid, iid);
	}
	return s;
}

/* ---- frame labels ---- */

static bool path_like(const char *f, size_t n)
{
	if (!n)
		return false;
	if (memchr(f, '/', n) || memchr(f, '\\', n) || memchr(f, '.', n))
		return true;
	if (n >= 2 && f[0] == '<' && f[n - 1] == '>')
		return true;
	return (n == 1 && f[0] == '~') || (n == 6 && !memcmp(f, "kernel", 6));
}

static bool parse_line_no(const char *p, size_t n, int32_t *line)
{
	uint64_t v;
	if (!tachi_parse_dec(p, n, UINT64_MAX, &v) || v > INT32_MAX)
		return false;
	*line = (int32_t)v;
	return true;
}

/* The last colon of s[0, lim) that is not half of "::", or SIZE_MAX. */
static size_t last_single_colon(const char *s, size_t lim)
{
	size_t i = lim;
	while (i > 0) {
		i--;
		if (s[i] != ':')
			continue;
		if (i > 0 && s[i - 1] == ':') {
			i--;
			continue;
		}
		if (i + 1 < lim && s[i + 1] == ':')
			continue;
		return i;
	}
	return SIZE_MAX;
}

/* file:func:line, split from the right. */
static bool split_colon(const char *s, size_t n, size_t *file_len, size_t *func_off,
			size_t *func_len, int32_t *line)
{
	size_t q = n;
	while (q > 0 && is_digit(s[q - 1]))
		q--;
	if (q == n || q < 2 || s[q - 1] != ':' || s[q - 2] == ':')
		return false;
	if (!parse_line_no(s + q, n - q, line))
		return false;
	size_t c2 = q - 1;
	size_t c1 = last_single_colon(s, c2);
	if (c1 == SIZE_MAX || c1 == 0 || c1 + 1 >= c2)
		return false;
	*file_len = c1;
	*func_off = c1 + 1;
	*func_len = c2 - c1 - 1;
	return true;
}

/* austin 2's "file:func" half of a pair. */
static bool split_file_func(const char *s, size_t n, size_t *file_len)
{
	size_t c = last_single_colon(s, n);
	if (c == SIZE_MAX || c == 0 || c + 1 >= n)
		return false;
	*file_len = c;
	return true;
}

static bool is_lframe(const char *p, size_t n)
{
	int32_t l;
	return n >= 2 && p[0] == 'L' && parse_line_no(p + 1, n - 1, &l);
}

/* func (file:line) or func (file), split at the last " (". */
static bool split_pyspy(const char *s, size_t n, size_t *name_len, size_t *file_off,
			size_t *file_len, int32_t *line)
{
	if (n < 5 || s[n - 1] != ')')
		return false;
	size_t k = n - 2;
	while (k > 0 && !(s[k] == '(' && s[k - 1] == ' '))
		k--;
	if (k < 2)
		return false;
	size_t in = k + 1, inl = n - 1 - in;
	if (!inl)
		return false;
	*name_len = k - 1;
	*file_off = in;
	*file_len = inl;
	*line = TACH_NO_LINE;
	size_t q = inl;
	while (q > 0 && is_digit(s[in + q - 1]))
		q--;
	if (q < inl && q >= 2 && s[in + q - 1] == ':' && parse_line_no(s + in + q, inl - q, line))
		*file_len = q - 1;
	return true;
}

/* Counts which label style fits the frames of one stack (thread frames already off). */
static void sniff_labels(struct cread *st, const char *p, const char *end)
{
	if (p == end)
		return;
	while (p && st->n_frames < SNIFF_FRAMES) {
		const char *nx;
		const char *fe = frame_end(p, end, &nx);
		size_t n = (size_t)(fe - p), a, b, c;
		int32_t l;
		st->n_frames++;
		if (split_pyspy(p, n, &a, &b, &c, &l) && path_like(p + b, c)) {
			st->n_py++;
			const char *nx2;
			if (l == TACH_NO_LINE && nx &&
			    is_lframe(nx, (size_t)(frame_end(nx, end, &nx2) - nx)))
				st->n_austin1++;
		}
		else if (split_colon(p, n, &a, &b, &c, &l) && path_like(p, a))
			st->n_colon++;
		else if (nx && split_file_func(p, n, &a) && path_like(p, a)) {
			const char *nx2;
			const char *fe2 = frame_end(nx, end, &nx2);
			if (is_lframe(nx, (size_t)(fe2 - nx)))
				st->n_austin2++;
		}
		p = nx;
	}
}

static void decide_labels(struct cread *st)
{
	st->decided = true;
	if (st->labels_opt != LAB_AUTO) {
		st->labels = st->labels_opt;
		st->explicit_labels = true;
		return;
	}
	/* austin 1's "func (file);L<line>": most py-spy-like labels come with an L frame */
	if (st->n_py && st->n_py >= st->n_colon && st->n_py >= st->n_austin2)
		st->labels = st->n_austin1 * 2 > st->n_py ? LAB_AUSTIN1 : LAB_PYSPY;
	else if (st->n_colon && st->n_colon >= st->n_austin2)
		st->labels = LAB_COLON;
	else if (st->n_austin2)
		st->labels = LAB_AUSTIN2;
	else
		st->labels = LAB_RAW;
}

struct lkey {
	const char *p;
	size_t n;
};

static bool label_eq(void *ctx, uint32_t id, const void *key)
{
	const struct cread *st = ctx;
	const struct label *l = &st->labs[id];
	const struct lkey *k = key;
	return l->len == k->n && !memcmp(st->lbytes + l->off, k->p, k->n);
}


static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

static int make_frame(struct tach_reader *r, const char *file, size_t fl, const char *func,
		      size_t nl, int32_t line, uint32_t *id)
{
	struct tach_frame f = { 0, 0, line, line, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, file, fl, &f.file) ||
	    tach_dict_intern_string(&r->dict, func, nl, &f.func) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return nomem(r);
	return TACH_OK;
}

static int bare_frame(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	struct cread *st = r->state;
	if (!n && !st->warned_empty) {
		st->warned_empty = true;
		tachi_warn(&r->warn, TACH_POS_LINE, st->line, "empty frame name (\";;\" in a stack)");
	}
	return make_frame(r, "~", 1, s, n, TACH_NO_LINE, id);
}

/* Turns a label (for austin 2, "file:func;L<line>") into one or two frames. */
static int parse_label(struct tach_reader *r, const char *s, size_t n, uint32_t *f1, uint32_t *f2)
{
	struct cread *st = r->state;
	size_t a, b, c;
	int32_t line;
	bool strict_path = !st->explicit_labels;
	*f2 = NO_FRAME;
	switch (st->labels) {
	case LAB_PYSPY:
		if (split_pyspy(s, n, &a, &b, &c, &line) && (!strict_path || path_like(s + b, c)))
			return make_frame(r, s + b, c, s, a, line, f1);
		break;
	case LAB_COLON:
		if (split_colon(s, n, &a, &b, &c, &line) && (!strict_path || path_like(s, a)))
			return make_frame(r, s, a, s + b, c, line, f1);
		break;
	case LAB_AUSTIN1: {
		const char *semi = memchr(s, ';', n);
		if (!semi) {
			if (split_pyspy(s, n, &a, &b, &c, &line) && (!strict_path || path_like(s + b, c)))
				return make_frame(r, s + b, c, s, a, line, f1);
			break;
		}
		size_t hl = (size_t)(semi - s);
		if (split_pyspy(s, hl, &a, &b, &c, &line) && line == TACH_NO_LINE &&
		    (!strict_path || path_like(s + b, c)) &&
		    parse_line_no(semi + 2, n - hl - 2, &line))
			return make_frame(r, s + b, c, s, a, line, f1);
		int rc = bare_frame(r, s, hl, f1);
		return rc ? rc : bare_frame(r, semi + 1, n - hl - 1, f2);
	}
	case LAB_AUSTIN2: {
		const char *semi = memchr(s, ';', n);
		if (!semi)
			break;
		size_t hl = (size_t)(semi - s);
		const char *lf = semi + 1;
		size_t ll = n - hl - 1;
		if (split_file_func(s, hl, &a) && (!strict_path || path_like(s, a)) &&
		    parse_line_no(lf + 1, ll - 1, &line))
			return make_frame(r, s, a, s + a + 1, hl - a - 1, line, f1);
		int rc = bare_frame(r, s, hl, f1);
		return rc ? rc : bare_frame(r, lf, ll, f2);
	}
	}
	return bare_frame(r, s, n, f1);
}

static int label_frames(struct tach_reader *r, const char *s, size_t n, const struct label **out)
{
	struct cread *st = r->state;
	uint64_t h = tachi_hash(s, n);
	struct lkey key = { s, n };
	uint32_t id;
	if (TACHI_LIKELY(tachi_idset_find(&st->lindex, h, &key, label_eq, st, &id))) {
		*out = &st->labs[id];
		return TACH_OK;
	}
	uint32_t f1, f2;
	int rc = parse_label(r, s, n, &f1, &f2);
	if (rc)
		return rc;
	size_t need;
	if (st->nlabs >= UINT32_MAX - 1 || tachi_add_overflows(st->lbytes_len, n, &need) ||
	    !TACHI_RESERVE(st->lbytes, st->lbytes_cap, need ? need : 1) ||
	    !TACHI_RESERVE(st->labs, st->labs_cap, st->nlabs + 1))
		return nomem(r);
	memcpy(st->lbytes + st->lbytes_len, s, n);
	id = (uint32_t)st->nlabs;
	st->labs[id] = (struct label){ st->lbytes_len, (uint32_t)n, f1, f2 };
	st->lbytes_len = need;
	if (!tachi_idset_insert(&st->lindex, h, id))
		return nomem(r);
	st->nlabs++;
	*out = &st->labs[id];
	return TACH_OK;
}

/* ---- options ---- */

static int cr_option(struct tach_reader *r, const char *key, const char *value)
{
	struct cread *st = r->state;
	uint64_t v;
	if (!strcmp(key, "labels")) {
		static const char *const names[] = { "auto", "pyspy", "colon", "austin2", "raw",
						     "austin1" };
		for (int i = 0; i < 6; i++)
			if (!strcmp(value, names[i])) {
				st->labels_opt = i;
				return TACH_OK;
			}
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
			     "labels must be auto, pyspy, colon, austin1, austin2 or raw, not %s",
			     value);
	}
	if (!strcmp(key, "count-unit")) {
		static const char *const units[] = { "auto", "samples", "ns", "us", "ms" };
		for (int i = 0; i < 5; i++)
			if (!strcmp(value, units[i])) {
				st->unit_opt = i;
				return TACH_OK;
			}
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
			     "count-unit must be auto, samples, ns, us or ms, not %s", value);
	}
	if (!strcmp(key, "diff")) {
		if (!strcmp(value, "second"))
			st->diff_opt = DIFF_SECOND;
		else if (!strcmp(value, "first"))
			st->diff_opt = DIFF_FIRST;
		else if (!strcmp(value, "none"))
			st->diff_opt = DIFF_NONE;
		else if (!strcmp(value, "both"))
			st->diff_opt = DIFF_BOTH;
		else
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "diff must be first, second, both or none, not %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "keep-thread-frames")) {
		if (!tachi_parse_bool(value, &st->keep_threads))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad keep-thread-frames: %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "metric")) {
		if (!tachi_parse_u64(value, 64, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "metric must be a field number from 1 to 64, not %s", value);
		st->metric = (uint32_t)v;
		return TACH_OK;
	}
	if (!strcmp(key, "interval")) {
		if (!tachi_parse_u64(value, UINT32_MAX, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "interval must be 1 to %u microseconds, not %s", UINT32_MAX, value);
		r->meta.interval_us = v;
		st->interval_set = true;
		return TACH_OK;
	}
	if (!strcmp(key, "factor")) {
		struct num f;
		size_t len = strlen(value);
		const char *dot = memchr(value, '.', len);
		if (!parse_num(value, len, false, &f) || f.big || f.mant == 0 ||
		    (dot && len - (size_t)(dot - value) - 1 > 18))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "factor must be a positive decimal number with at most 18 "
				     "fraction digits, not %s", value);
		st->factor = f;
		st->factor_set = true;
		return TACH_OK;
	}
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "collapsed reader has no option %s", key);
}

/* ---- reading ---- */

/* The positive counts of the first lines, to tell whether they are times. */
static void sniff_count(struct cread *st, uint64_t count)
{
	uint64_t a = st->cgcd, b = count;
	while (b) {
		uint64_t t = a % b;
		a = b;
		b = t;
	}
	st->cgcd = a;
	st->ncounts++;
	if (__builtin_add_overflow(st->csum, count, &st->csum))
		st->csum = UINT64_MAX;
}

/* Looks at one data line before any sample is made: the per-file decisions come from the
 * first valid line (threads, differential, austin 1's three counts) and the first lines
 * (labels, perf roots, the counts' unit). */
static void sniff_line(struct cread *st, const char *s, size_t n)
{
	size_t sl;
	uint64_t count;
	bool rounded = false;
	if (!st->first_valid) {
		st->spaced3 = is_spaced3(s, n);
		if (split_count(st, s, n, &sl, &count, &rounded) == L_INVALID) {
			st->spaced3 = false;
			return;
		}
		st->first_valid = true;
		st->differential = !st->spaced3 && st->diff_opt != DIFF_NONE && ends_in_number(s, sl);
		const char *end = s + sl;
		if (end > s && end[-1] == ';')
			end--;
		if (end > s)
			st->threads = st->keep_threads ? THR_NONE : sniff_threads(s, end);
	}
	int kind = split_count(st, s, n, &sl, &count, &rounded);
	if (kind == L_INVALID)
		return;
	if (kind == L_DATA)
		sniff_count(st, count);
	const char *end = s + sl;
	if (end > s && end[-1] == ';')
		end--;
	if (st->threads == THR_NONE && !st->keep_threads && end > s)
		sniff_perf_root(st, s, end);
	uint64_t tid = 0;
	uint32_t iid = 0;
	const char *p = strip_threads(st, s, end, &tid, &iid);
	sniff_labels(st, p, end);
}

/* Whether the counts are austin's microseconds: its roots or header, and a time metric. */
static bool austin_time(const struct cread *st)
{
	bool austin = st->meta_austin || st->threads == THR_AUSTIN || st->threads == THR_AUSTIN1;
	return austin && !st->meta_memory && st->metric == 1;
}

/* With counts in a time unit (mul ns each): the interval, and the ns a sample stands for.
 * The user's or the file's interval when there is one; else the common period of the
 * counts of two lines or more, so
 * that a perf period is one sample exactly (unless the first lines would make more than
 * UNIT_MAX_WINDOW_SAMPLES samples); else, for measured times such as austin's, whose
 * common divisor is the clock's resolution and not a sampling period, a hundredth of the
 * mean count: about a hundred samples a line, each within half a percent of the mean. */
static void choose_interval(struct tach_reader *r, uint64_t mul)
{
	struct cread *st = r->state;
	unsigned __int128 g = (unsigned __int128)st->cgcd * mul;
	unsigned __int128 sum = (unsigned __int128)st->csum * mul;
	unsigned __int128 div;
	if (st->interval_set || st->meta_interval)
		div = (unsigned __int128)r->meta.interval_us * 1000;
	else if (st->ncounts >= 2 && st->cgcd >= TIME_GCD_MIN)
		div = sum / g > UNIT_MAX_WINDOW_SAMPLES ? sum / UNIT_MAX_WINDOW_SAMPLES / 1000 * 1000 : g;
	else if (st->ncounts)
		div = sum / st->ncounts / 100 / 1000 * 1000;
	else
		div = 1000000;
	if (div < 1000)
		div = 1000;
	if (div > (unsigned __int128)UINT32_MAX * 1000)
		div = (unsigned __int128)UINT32_MAX * 1000;
	st->unit_div = (uint64_t)div;
	r->meta.interval_us = (uint64_t)((div + 500) / 1000);
}

/* What the counts are (see cr_option's count-unit), said once when it is a guess. */
static void decide_unit(struct tach_reader *r)
{
	static const uint64_t ns_per[] = { 1, 1, 1, 1000, 1000000 };
	struct cread *st = r->state;
	bool austin = austin_time(st);
	bool timelike = st->ncounts >= 2 && st->cgcd >= TIME_GCD_MIN;
	st->unit = st->unit_opt;
	if (st->unit == UNIT_AUTO)
		st->unit = austin ? UNIT_US : timelike ? UNIT_NS : UNIT_SAMPLES;
	if (st->unit_opt == UNIT_AUTO && st->unit == UNIT_NS)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "counts read as nanoseconds: every count is a multiple of %llu, as "
			   "stackcollapse-perf.pl's sums of perf periods are (--count-unit samples "
			   "takes them as samples)", (unsigned long long)st->cgcd);
	else if (st->unit == UNIT_SAMPLES && austin)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "counts taken as samples, but austin writes microseconds "
			   "(--count-unit us reads them as time)");
	else if (st->unit == UNIT_SAMPLES && timelike)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "counts taken as samples, but every count is a multiple of %llu, as "
			   "times in nanoseconds such as perf periods are (--count-unit ns reads "
			   "them as time)", (unsigned long long)st->cgcd);
	if (st->unit != UNIT_SAMPLES) {
		st->unit_mul = ns_per[st->unit];
		choose_interval(r, st->unit_mul);
	}
}

/* The per-file choices, once the first lines have been seen. */
static void decide(struct tach_reader *r)
{
	struct cread *st = r->state;
	decide_labels(st);
	if (st->threads == THR_NONE && !st->keep_threads)
		st->threads = decide_perf_roots(st);
	decide_unit(r);
}

static int add_ahead(struct tach_reader *r, const char *s, size_t n)
{
	struct cread *st = r->state;
	size_t need;
	if (tachi_add_overflows(st->ahead_len, n, &need) ||
	    !TACHI_RESERVE(st->ahead, st->ahead_cap, need ? need : 1) ||
	    !TACHI_RESERVE(st->alines, st->alines_cap, st->nalines + 1))
		return nomem(r);
	memcpy(st->ahead + st->ahead_len, s, n);
	st->alines[st->nalines++] = (struct aline){ st->ahead_len, n, r->in.line };
	st->ahead_len = need;
	return TACH_OK;
}

static int cr_open(struct tach_reader *r)
{
	struct cread *st = r->state;
	if (!r->meta.interval_us)
		r->meta.interval_us = 1000;
	if (!st->factor_set)
		st->factor = (struct num){ .mant = 1 };
	if (!st->metric)
		st->metric = 1;
	st->unit_mul = st->unit_div = 1;
	/* Read ahead until the label style is clear; the lines are replayed by next. */
	while (st->n_frames < SNIFF_FRAMES && st->nalines < SNIFF_LINES &&
	       st->ahead_len < SNIFF_BYTES) {
		const char *s;
		size_t n;
		int rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF)
			break;
		if (rc)
			return rc;
		trim(&s, &n);
		if (!n)
			continue;
		if (s[0] == '#') {
			meta_line(r, s, n);
			continue;
		}
		if ((rc = add_ahead(r, s, n)))
			return rc;
		sniff_line(st, s, n);
	}
	if (st->first_valid)
		decide(r);
	return TACH_OK;
}

static void note_invalid(struct cread *st, const char *s, size_t n)
{
	if (st->invalid++)
		return;
	st->first_invalid = st->line;
	snprintf(st->first_why, sizeof(st->first_why), "%s", st->why);
	/* Enough of the line to tell what the file is (a PNG, JSON), bytes outside
	 * printable ASCII as '?'. */
	size_t k = 0, max = sizeof(st->first_seen) - 4;
	for (size_t i = 0; i < n && k < max; i++) {
		unsigned char c = (unsigned char)s[i];
		st->first_seen[k++] = c >= 0x20 && c < 0x7f ? (char)c : '?';
	}
	if (n > max)
		memcpy(st->first_seen + k, "...", 3), k += 3;
	st->first_seen[k] = 0;
}

/* Times are whole intervals: say so when that moved the total by 1% or more. */
static void warn_time_rounding(struct tach_reader *r)
{
	const struct cread *st = r->state;
	unsigned __int128 a = st->time_exact, b = st->time_weighted;
	unsigned __int128 d = a > b ? a - b : b - a;
	if (!a || d * 100 < a)
		return;
	unsigned __int128 pct = d * 100 / a;
	tachi_warn(&r->warn, TACH_POS_NONE, 0,
		   "times rounded to whole intervals of %llu us make the total %s by %llu%% "
		   "(--interval sets a shorter one)",
		   (unsigned long long)r->meta.interval_us, b > a ? "longer" : "shorter",
		   (unsigned long long)(pct > 999 ? 999 : pct));
}

static int finish(struct tach_reader *r)
{
	struct cread *st = r->state;
	if (st->finished)
		return TACH_EOF;
	st->finished = true;
	/* Lenient skipping is for a stray line in a real file; input of which no line is a
	 * stack (an image, a JSON profile) is not folded stacks at all. */
	if (st->invalid && !st->any_stack)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, st->first_invalid,
			     "not folded stacks: no line is a stack and a count (here: %s: \"%s\")",
			     st->first_why, st->first_seen);
	if (st->invalid)
		tachi_warn(&r->warn, TACH_POS_LINE, st->first_invalid,
			   "%llu line%s with invalid format ignored; the first is here: %s",
			   (unsigned long long)st->invalid, st->invalid == 1 ? "" : "s", st->first_why);
	warn_time_rounding(r);
	if (st->negative)
		tachi_warn(&r->warn, TACH_POS_LINE, st->first_negative,
			   "%llu line%s with a negative count skipped; the first is here",
			   (unsigned long long)st->negative, st->negative == 1 ? "" : "s");
	return TACH_EOF;
}

/* The next data line, trimmed, from the read-ahead lines or the input. */
static int next_line(struct tach_reader *r, const char **s, size_t *n)
{
	struct cread *st = r->state;
	for (;;) {
		if (st->apos < st->nalines) {
			const struct aline *a = &st->alines[st->apos++];
			*s = st->ahead + a->off;
			*n = a->len;
			st->line = a->line;
			return TACH_OK;
		}
		if (st->nalines) {
			/* The read-ahead copy is no longer needed. */
			free(st->ahead);
			free(st->alines);
			st->ahead = NULL;
			st->alines = NULL;
			st->ahead_len = st->ahead_cap = st->nalines = st->alines_cap = st->apos = 0;
		}
		int rc = tachi_in_line(r, s, n);
		if (rc)
			return rc;
		st->line = r->in.line;
		trim(s, n);
		if (!*n)
			continue;
		if ((*s)[0] == '#') {
			meta_line(r, *s, *n);
			continue;
		}
		return TACH_OK;
	}
}

/* The next line that is a stack with a count: *s, *n the line, *sl the stack's length.
 * Invalid lines are counted (or, strict, an error), negative ones noted. */
static int next_stack_line(struct tach_reader *r, const char **s, size_t *n, size_t *sl,
			   uint64_t *count)
{
	struct cread *st = r->state;
	for (;;) {
		int rc = next_line(r, s, n);
		if (rc == TACH_EOF)
			return finish(r);
		if (rc)
			return rc;
		if (TACHI_UNLIKELY(!st->decided)) {
			sniff_line(st, *s, *n);
			if (st->first_valid)
				decide(r);
		}
		bool rounded = false;
		int kind = split_count(st, *s, *n, sl, count, &rounded);
		if (TACHI_UNLIKELY(rounded) && !st->warned_round && st->unit_div == 1) {
			st->warned_round = true;
			tachi_warn(&r->warn, TACH_POS_LINE, st->line,
				   "fractional count rounded to an integer (use --factor to scale counts)");
		}
		if (kind != L_INVALID)
			st->any_stack = true;
		if (TACHI_LIKELY(kind == L_DATA))
			return TACH_OK;
		if (kind == L_INVALID) {
			if (r->lim.strict)
				return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, st->line, "%s", st->why);
			note_invalid(st, *s, *n);
		} else if (kind == L_NEGATIVE) {
			if (!st->negative++)
				st->first_negative = st->line;
		}
	}
}

/* The frames of the stack [p, end), root first, into st->root; *depth their number. */
static int parse_stack(struct tach_reader *r, const char *p, const char *end, uint32_t *depth)
{
	struct cread *st = r->state;
	*depth = 0;
	while (p) {
		const char *nx;
		const char *fe = frame_end(p, end, &nx);
		if (st->root_len && !*depth) {
			/* a perf root: its process name is the frame */
			fe = p + st->root_len;
		} else if ((st->labels == LAB_AUSTIN2 || st->labels == LAB_AUSTIN1) && nx) {
			const char *nx2;
			const char *fe2 = frame_end(nx, end, &nx2);
			if (is_lframe(nx, (size_t)(fe2 - nx))) {
				fe = fe2;
				nx = nx2;
			}
		}
		const struct label *l = NULL;
		int rc = label_frames(r, p, (size_t)(fe - p), &l);
		if (rc)
			return rc;
		uint32_t add = l->frame2 == NO_FRAME ? 1 : 2;
		if (TACHI_UNLIKELY(*depth + add > r->lim.max_depth))
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
				     "stack deeper than the limit of %u frames", r->lim.max_depth);
		if (TACHI_UNLIKELY(*depth + add > st->root_cap) &&
		    !TACHI_RESERVE(st->root, st->root_cap, (size_t)*depth + add))
			return nomem(r);
		st->root[(*depth)++] = l->frame;
		if (add == 2)
			st->root[(*depth)++] = l->frame2;
		p = nx;
	}
	return TACH_OK;
}

/* The sample of a parsed stack: innermost first, with how much of its outer part the
 * previous sample of the thread shares. */
static int make_sample(struct tach_reader *r, uint64_t tid, uint32_t iid, uint32_t depth,
		       uint64_t count, uint64_t next_clock)
{
	struct cread *st = r->state;
	if (depth > st->frames_cap && !TACHI_RESERVE(st->frames, st->frames_cap, depth))
		return nomem(r);
	for (uint32_t i = 0; i < depth; i++)
		st->frames[i] = st->root[depth - 1 - i];
	uint32_t same = 0;
	if (st->has_prev && st->prev_tid == tid && st->prev_iid == iid) {
		uint32_t m = depth < st->prev_depth ? depth : st->prev_depth;
		while (same < m && st->prev[same] == st->root[same])
			same++;
	}
	if (depth > st->prev_cap && !TACHI_RESERVE(st->prev, st->prev_cap, depth))
		return nomem(r);
	if (depth)
		memcpy(st->prev, st->root, depth * sizeof(*st->prev));
	st->prev_depth = depth;
	st->prev_tid = tid;
	st->prev_iid = iid;
	st->has_prev = true;
	struct tach_sample *smp = &r->sample;
	smp->thread_id = tid;
	smp->interp_id = iid;
	smp->timestamp_us = st->clock;
	/* The format says nothing of the thread's state. */
	smp->status = TACH_STATUS_UNKNOWN;
	smp->weight = count;
	smp->depth = depth;
	smp->same_outer = same;
	smp->frames = st->frames;
	st->clock = next_clock;
	st->total += count;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += count;
	return TACH_OK;
}

/* diff=both: the baseline count of the last line, on its stack, marked; same: the sample
 * before was that line's own. */
static int baseline_sample(struct tach_reader *r, uint64_t count, bool same)
{
	struct cread *st = r->state;
	struct tach_sample *smp = &r->sample;
	uint64_t span;
	if (TACHI_UNLIKELY(count > r->lim.max_samples - st->total))
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
			     "the counts add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	if (__builtin_mul_overflow(count, r->meta.interval_us, &span) ||
	    __builtin_add_overflow(st->clock, span, &span))
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
			     "synthesized timestamps exceed 64 bits");
	smp->timestamp_us = st->clock;
	smp->status = TACH_STATUS_UNKNOWN | TACH_STATUS_BASELINE;
	smp->weight = count;
	if (same)
		smp->same_outer = smp->depth;
	st->clock = span;
	st->total += count;
	r->stats.total_samples += count;
	return TACH_OK;
}

static int cr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct cread *st = r->state;
	st->started = true;
	const char *s;
	size_t n, sl;
	uint64_t count;
	int rc;
	if (st->pending) {
		uint64_t b = st->pending;
		st->pending = 0;
		if ((rc = baseline_sample(r, b, true)))
			return rc;
		*out = &r->sample;
		return TACH_OK;
	}
	st->base = 0;
	if ((rc = next_stack_line(r, &s, &n, &sl, &count)))
		return rc;
	const char *end = s + sl;
	if (end > s && end[-1] == ';')
		end--;
	uint64_t tid = 0;
	uint32_t iid = 0;
	const char *p = s;
	st->root_len = 0;
	if (st->threads != THR_NONE)
		p = strip_threads(st, s, end, &tid, &iid);
	/* At the end, a frame is left only when a ';' ends the thread frames ("tid:1;;"). */
	if (p == end && !(p > s && p[-1] == ';'))
		p = NULL;
	uint32_t depth;
	if ((rc = parse_stack(r, p, end, &depth)))
		return rc;
	if (!count) { /* diff=both, a stack only the baseline has */
		if ((rc = make_sample(r, tid, iid, depth, 1, st->clock)) ||
		    (rc = baseline_sample(r, st->base, false)))
			return rc;
		st->total--;
		r->stats.total_samples--;
		*out = &r->sample;
		return TACH_OK;
	}
	st->pending = st->base;
	if (TACHI_UNLIKELY(count > r->lim.max_samples - st->total))
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
			     "the counts add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	uint64_t span;
	if (__builtin_mul_overflow(count, r->meta.interval_us, &span) ||
	    __builtin_add_overflow(st->clock, span, &span))
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->line,
			     "synthesized timestamps exceed 64 bits");
	if ((rc = make_sample(r, tid, iid, depth, count, span)))
		return rc;
	*out = &r->sample;
	return TACH_OK;
}

static void cr_free(struct tach_reader *r)
{
	struct cread *st = r->state;
	free(st->lbytes);
	free(st->labs);
	tachi_idset_free(&st->lindex);
	free(st->ahead);
	free(st->alines);
	free(st->root);
	free(st->frames);
	free(st->prev);
}

/* The last resort of detection: text whose first data line ends in a count (digits, with
 * the sign, point and commas the reader takes) after white space, or runs on past the
 * peeked bytes (deep stacks make long lines). Only comments and blank lines: a profile
 * without samples. */
bool tachi_collapsed_probe(const uint8_t *p, size_t n)
{
	const uint8_t *s;
	size_t at = 0, len;
	bool complete;
	if (!tachi_probe_text(p, n))
		return false;
	if (!tachi_probe_line(p, n, &at, &s, &len, &complete))
		return true;
	if (!complete)
		return true;
	while (len && (s[len - 1] == ' ' || s[len - 1] == '\t'))
		len--;
	size_t t = len;
	while (t && ((s[t - 1] >= '0' && s[t - 1] <= '9') || s[t - 1] == '.' || s[t - 1] == ',' ||
		     s[t - 1] == '-' || s[t - 1] == '+'))
		t--;
	return t < len && t > 1 && (s[t - 1] == ' ' || s[t - 1] == '\t');
}

const struct tachi_reader_ops tachi_collapsed_reader_ops = {
	.state_size = sizeof(struct cread),
	.option = cr_option,
	.open = cr_open,
	.next = cr_next,
	.free = cr_free,
};
