/* The "samples" text form: one sample per line, lossless for everything CPython's reader
 * gives back, and the form the TACH fixtures are written in.
 *
 *   @start_time_us N | @interval_us N | @python_version X.Y.Z | @tachstat ...  (header lines)
 *   @sample_time 0|1   (whether samples carry a time; default: 1 when the interval is
 *                       known or the first sample line gives its time)
 *   TID IID TIMESTAMP_US STATUS[ TIME_NS[ WEIGHT]]<TAB>FRAME;FRAME;...  (innermost first)
 *
 * A line is one sample of one interval (TACH's rule: time_ns = interval × 1000), unless it
 * gives TIME_NS, the time it stands for (a V8 sample's time to the next, austin's µs, a
 * perf clock period: whatever is not one interval), and then maybe WEIGHT, how many samples
 * it stands for (default 1). Where a record's time is its weight's intervals, the writer
 * prints one line per sample, as TACH repeats are replayed, so that TACH -> samples -> TACH
 * stays byte-identical and the lines stay what CPython's reader reports.
 *
 * FRAME is FILE:FUNC:LINE, or FILE:FUNC:LINE:END_LINE:COL:END_COL:OPCODE, with "-" for a
 * missing number (LINE "-" means no location) and OPCODE "-" for none. In FILE and FUNC the
 * bytes % : ; and control bytes are written %XX. "#" lines and blank lines are ignored.
 *
 * The writer prints what CPython's reader reports: a frame whose line is -1 has no location,
 * so its columns are not printed either.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "base/io.h"
#include "model/dict.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/detect.h"
#include "core/formats.h"
#include "formats/samples/samples.h"


/* FRAME@K: the K-th extra row with that frame's values (see struct samples_wstate). */
struct dupkey {
	uint32_t base, k;
};

struct sread {
	uint32_t *frames;
	size_t cap;
	struct dupkey *dk;  /* per extra row: the frame it repeats, and K */
	uint32_t *dk_id;    /* its id in the dict */
	size_t ndk, dk_cap, dk_id_cap;
	struct tachi_idset dk_index;
	char *unesc;
	size_t unesc_cap;
	uint64_t samples;
	bool time_given;    /* an @sample_time line was read */
};

static int line_fail(struct tach_reader *r, const char *fmt, ...) TACHI_PRINTF(2, 3);
static int line_fail(struct tach_reader *r, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "%s", msg);
}

static bool parse_i64(const char *s, size_t n, int64_t *out)
{
	bool neg = false;
	size_t i = 0;
	if (n && s[0] == '-') {
		neg = true;
		i = 1;
	}
	if (i == n || n - i > 19)
		return false;
	uint64_t v = 0;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > (uint64_t)INT64_MAX)
		return false;
	*out = neg ? -(int64_t)v : (int64_t)v;
	return true;
}

static int intern_escaped(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	struct sread *st = r->state;
	if (!memchr(s, '%', n)) {
		if (tach_dict_intern_string(&r->dict, s, n, id))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		return TACH_OK;
	}
	if (!TACHI_RESERVE(st->unesc, st->unesc_cap, n + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	size_t k = 0;
	for (size_t i = 0; i < n; i++) {
		if (s[i] != '%') {
			st->unesc[k++] = s[i];
			continue;
		}
		int a = i + 2 < n ? tachi_hexval(s[i + 1]) : -1, b = a >= 0 ? tachi_hexval(s[i + 2]) : -1;
		if (a < 0 || b < 0)
			return line_fail(r, "bad %%XX escape in \"%.*s\"", (int)(n > 80 ? 80 : n), s);
		st->unesc[k++] = (char)(a << 4 | b);
		i += 2;
	}
	if (tach_dict_intern_string(&r->dict, st->unesc, k, id))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

/* A numeric frame field: "-" or -1 mean unknown; CPython keeps the low 32 bits. */
static bool frame_num(const char *s, size_t n, int32_t *out)
{
	if (n == 1 && s[0] == '-') {
		*out = -1;
		return true;
	}
	int64_t v;
	if (!parse_i64(s, n, &v) || v < INT32_MIN || v > INT32_MAX)
		return false;
	*out = (int32_t)v;
	return true;
}

static uint64_t dk_hash(uint32_t base, uint32_t k)
{
	return tachi_mix64((uint64_t)base << 32 | k);
}

static bool dk_eq(void *ctx, uint32_t id, const void *key)
{
	const struct sread *st = ctx;
	const struct dupkey *a = &st->dk[id], *b = key;
	return a->base == b->base && a->k == b->k;
}


/* The dict id of row K of frame base: a row of its own, made on first use. */
static int dup_row(struct tach_reader *r, uint32_t base, uint32_t k, uint32_t *id)
{
	struct sread *st = r->state;
	struct dupkey key = { base, k };
	uint64_t h = dk_hash(base, k);
	uint32_t i;
	if (tachi_idset_find(&st->dk_index, h, &key, dk_eq, st, &i)) {
		*id = st->dk_id[i];
		return TACH_OK;
	}
	/* A copy: appending may move the frames array the base frame is in. */
	struct tach_frame f = r->dict.frames[base];
	if (!TACHI_RESERVE(st->dk, st->dk_cap, st->ndk + 1) ||
	    !TACHI_RESERVE(st->dk_id, st->dk_id_cap, st->ndk + 1) ||
	    tachi_dict_append_frame(&r->dict, &f))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	i = (uint32_t)st->ndk;
	st->dk[i] = key;
	st->dk_id[i] = *id = (uint32_t)r->dict.frame_count - 1;
	if (!tachi_idset_insert(&st->dk_index, h, i))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->ndk++;
	return TACH_OK;
}

/* Splits "OPCODE@K" into its parts; K is 0 without the mark. */
static bool split_dup(const char *s, size_t *n, uint32_t *k)
{
	const char *at = memchr(s, '@', *n);
	*k = 0;
	if (!at)
		return true;
	uint64_t v;
	size_t kl = *n - (size_t)(at + 1 - s);
	if (!tachi_parse_dec(at + 1, kl, UINT32_MAX - 1, &v) || !v)
		return false;
	*k = (uint32_t)v;
	*n = (size_t)(at - s);
	return true;
}

static int parse_frame(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	const char *f[7] = { 0 };
	size_t len[7] = { 0 };
	int nf = 0;
	const char *p = s, *end = s + n;
	while (nf < 7) {
		const char *c = memchr(p, ':', (size_t)(end - p));
		f[nf] = p;
		len[nf] = c ? (size_t)(c - p) : (size_t)(end - p);
		nf++;
		if (!c)
			break;
		p = c + 1;
	}
	if ((nf != 3 && nf != 7) || (nf == 7 && memchr(f[6], ':', len[6])))
		return line_fail(r, "frame \"%.*s\" needs 3 or 7 fields separated by ':'",
				 (int)(n > 80 ? 80 : n), s);
	struct tach_frame fr = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	uint32_t dup = 0;
	int rc;
	if ((rc = intern_escaped(r, f[0], len[0], &fr.file)) ||
	    (rc = intern_escaped(r, f[1], len[1], &fr.func)))
		return rc;
	bool no_loc = len[2] == 1 && f[2][0] == '-';
	if (!frame_num(f[2], len[2], &fr.line))
		return line_fail(r, "bad line number \"%.*s\"", (int)len[2], f[2]);
	if (nf == 3) {
		fr.end_line = fr.line;
	} else {
		if (!frame_num(f[3], len[3], &fr.end_line) || !frame_num(f[4], len[4], &fr.col) ||
		    !frame_num(f[5], len[5], &fr.end_col))
			return line_fail(r, "bad location numbers in frame \"%.*s\"",
					 (int)(n > 80 ? 80 : n), s);
		if (!split_dup(f[6], &len[6], &dup))
			return line_fail(r, "bad row mark in frame \"%.*s\" (FRAME@K, K >= 1)",
					 (int)(n > 80 ? 80 : n), s);
		if (!(len[6] == 1 && f[6][0] == '-')) {
			int64_t op;
			if (!parse_i64(f[6], len[6], &op))
				return line_fail(r, "bad opcode \"%.*s\"", (int)len[6], f[6]);
			/* CPython keeps 0..254 and stores anything else as "no opcode". */
			fr.opcode = op >= 0 && op <= 254 ? (uint8_t)op : TACH_NO_OPCODE;
		}
	}
	/* No location; a table row may still hold columns, which the TACH writer keeps. */
	if (no_loc)
		fr.line = fr.end_line = -1;
	if (tach_dict_intern_frame(&r->dict, &fr, id))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return dup ? dup_row(r, *id, dup, id) : TACH_OK;
}

/* One number of an @tachstat line: decimal as %.17g writes it (exact for every finite
 * double), inf, or nan:HEX16 for a NaN with its bits. */
static bool parse_double(const char *s, size_t n, double *out)
{
	char tmp[64];
	if (!n || n >= sizeof(tmp))
		return false;
	if (n == 20 && !memcmp(s, "nan:", 4)) {
		uint64_t bits = 0;
		for (size_t i = 4; i < n; i++) {
			int c = (unsigned char)s[i], v = c >= '0' && c <= '9' ? c - '0'
						   : c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
			if (v < 0)
				return false;
			bits = bits << 4 | (uint64_t)v;
		}
		memcpy(out, &bits, 8);
		return true;
	}
	memcpy(tmp, s, n);
	tmp[n] = 0;
	char *end;
	*out = strtod(tmp, &end);
	return end == tmp + n;
}

/* @tachstat SIZE VERSION FLAGS RESERVED DURATION RATE ERROR MISSED: a TACH file's TACHSTAT
 * block, every field of it, so that it is written back byte for byte. */
static int stats_line(struct tach_reader *r, const char *v, size_t vl)
{
	const char *f[8];
	size_t fl[8], k = 0, i = 0;
	while (k < 8 && i <= vl) {
		size_t j = i;
		while (j < vl && v[j] != ' ')
			j++;
		f[k] = v + i;
		fl[k++] = j - i;
		i = j + 1;
	}
	uint64_t x[4];
	double d[4];
	if (k != 8 || i <= vl)
		return line_fail(r, "@tachstat needs 8 values: size, version, flags, reserved, "
				    "duration, rate, error, missed");
	for (int n = 0; n < 4; n++)
		if (!tachi_parse_dec(f[n], fl[n], UINT32_MAX, &x[n]) ||
		    !parse_double(f[4 + n], fl[4 + n], &d[n]))
			return line_fail(r, "bad @tachstat value");
	if (x[0] != 32 && x[0] != 56)
		return line_fail(r, "@tachstat size must be 56 or 32");
	struct tach_meta *m = &r->meta;
	m->has_stats = 1;
	m->stats_size = (uint32_t)x[0];
	m->stats_version = (uint32_t)x[1];
	m->stats_flags = (uint32_t)x[2];
	m->stats_reserved = (uint32_t)x[3];
	m->stats_duration_s = d[0];
	m->stats_sample_rate = d[1];
	m->stats_error_rate = d[2];
	m->stats_missed = d[3];
	return TACH_OK;
}

static int header_line(struct tach_reader *r, const char *s, size_t n)
{
	const char *sp = memchr(s, ' ', n);
	if (!sp)
		return line_fail(r, "header line needs a value: \"%.*s\"", (int)(n > 80 ? 80 : n), s);
	size_t kl = (size_t)(sp - s);
	const char *v = sp + 1;
	size_t vl = n - kl - 1;
	uint64_t x;
	if (kl == 14 && !memcmp(s, "@start_time_us", 14)) {
		if (!tachi_parse_dec(v, vl, UINT64_MAX, &x))
			return line_fail(r, "bad @start_time_us value");
		r->meta.start_time_us = x;
	} else if (kl == 12 && !memcmp(s, "@interval_us", 12)) {
		if (!tachi_parse_dec(v, vl, UINT64_MAX, &x))
			return line_fail(r, "bad @interval_us value");
		r->meta.interval_us = x;
	} else if (kl == 15 && !memcmp(s, "@python_version", 15)) {
		unsigned a, b, c;
		char tail;
		char tmp[32];
		if (vl >= sizeof(tmp))
			return line_fail(r, "bad @python_version value");
		memcpy(tmp, v, vl);
		tmp[vl] = 0;
		if (sscanf(tmp, "%u.%u.%u%c", &a, &b, &c, &tail) != 3 || a > 255 || b > 255 || c > 255)
			return line_fail(r, "bad @python_version value");
		r->meta.py_major = (uint8_t)a;
		r->meta.py_minor = (uint8_t)b;
		r->meta.py_micro = (uint8_t)c;
	} else if (kl == 17 && !memcmp(s, "@profiling_config", 17)) {
		if (!tachi_parse_dec(v, vl, UINT32_MAX, &x))
			return line_fail(r, "bad @profiling_config value");
		r->meta.profiling_config = (uint32_t)x;
	} else if (kl == 9 && !memcmp(s, "@tachstat", 9)) {
		return stats_line(r, v, vl);
	} else if (kl == 12 && !memcmp(s, "@sample_time", 12)) {
		if (vl != 1 || (v[0] != '0' && v[0] != '1'))
			return line_fail(r, "@sample_time must be 0 or 1");
		r->meta.sample_time = (uint8_t)(v[0] - '0');
		((struct sread *)r->state)->time_given = true;
	} else if (kl == 6 && !memcmp(s, "@order", 6)) {
		if (vl == 7 && !memcmp(v, "records", 7))
			r->meta.record_order = 1;
		else if (vl == 8 && !memcmp(v, "sampling", 8))
			r->meta.record_order = 0;
		else
			return line_fail(r, "@order must be records or sampling");
	} else {
		return line_fail(r, "unknown header line \"%.*s\"", (int)(kl > 40 ? 40 : kl), s);
	}
	return TACH_OK;
}

/* TID IID TIMESTAMP_US STATUS, then TIME_NS and WEIGHT where given, up to the TAB. */
static int head_fields(struct tach_reader *r, const char *s, const char *tab, uint64_t *v,
		       int *nv)
{
	const char *p = s;
	int i = 0;
	for (;;) {
		const char *e = memchr(p, ' ', (size_t)(tab - p));
		if (!e)
			e = tab;
		if (i == 6)
			return line_fail(r, "more than TID IID TIMESTAMP_US STATUS TIME_NS WEIGHT "
					    "before the TAB");
		if (!tachi_parse_dec(p, (size_t)(e - p), UINT64_MAX, &v[i]))
			return line_fail(r, "bad number \"%.*s\"", (int)(e - p > 40 ? 40 : e - p), p);
		i++;
		if (e == tab)
			break;
		p = e + 1;
	}
	if (i < 4)
		return line_fail(r, "expected TID IID TIMESTAMP_US STATUS before the TAB");
	if (v[1] > UINT32_MAX)
		return line_fail(r, "interpreter id %llu exceeds 32 bits", (unsigned long long)v[1]);
	if (v[3] > 255)
		return line_fail(r, "status %llu exceeds 255", (unsigned long long)v[3]);
	if (i == 6 && !v[5])
		return line_fail(r, "a weight of 0 samples");
	*nv = i;
	return TACH_OK;
}

static int sr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct sread *st = r->state;
	const char *s;
	size_t n;
	int rc;
	for (;;) {
		if ((rc = tachi_in_line(r, &s, &n)))
			return rc;
		if (n && s[n - 1] == '\r')
			n--;
		if (!n || s[0] == '#')
			continue;
		if (s[0] == '@') {
			/* Writers take the header values before the first sample. */
			if (st->samples)
				return line_fail(r, "header line after the first sample");
			if ((rc = header_line(r, s, n)))
				return rc;
			continue;
		}
		break;
	}
	const char *tab = memchr(s, '\t', n);
	if (!tab)
		return line_fail(r, "expected TID IID TIMESTAMP_US STATUS, a TAB, then frames");
	uint64_t v[6];
	int nv = 0;
	if ((rc = head_fields(r, s, tab, v, &nv)))
		return rc;
	/* without @sample_time: a time where the interval is known or the first line has one */
	if (!st->samples && !st->time_given)
		r->meta.sample_time = r->meta.interval_us != 0 || nv >= 5;
	uint64_t weight = nv == 6 ? v[5] : 1, time_ns;
	if (nv >= 5)
		time_ns = v[4];
	else if (!r->meta.sample_time ||
		 __builtin_mul_overflow(r->meta.interval_us, (uint64_t)1000, &time_ns))
		time_ns = 0;
	uint32_t depth = 0;
	const char *p = tab + 1;
	const char *end = s + n;
	while (p < end) {
		const char *semi = memchr(p, ';', (size_t)(end - p));
		const char *fe = semi ? semi : end;
		if (depth >= r->lim.max_depth)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
				     "stack deeper than the limit of %u frames", r->lim.max_depth);
		if (!TACHI_RESERVE(st->frames, st->cap, (size_t)depth + 1))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		if ((rc = parse_frame(r, p, (size_t)(fe - p), &st->frames[depth])))
			return rc;
		depth++;
		p = semi ? semi + 1 : end;
		if (semi && p == end)
			return line_fail(r, "empty frame after the last ';'");
	}
	if (__builtin_add_overflow(st->samples, weight, &st->samples) ||
	    st->samples > r->lim.max_samples)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "more than %llu samples (see --max-samples)", (unsigned long long)r->lim.max_samples);
	struct tach_sample *smp = &r->sample;
	smp->thread_id = v[0];
	smp->interp_id = (uint32_t)v[1];
	smp->timestamp_us = v[2];
	smp->status = (uint8_t)v[3];
	smp->weight = weight;
	smp->time_ns = time_ns;
	smp->depth = depth;
	smp->same_outer = 0;
	smp->frames = st->frames;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += weight;
	*out = smp;
	return TACH_OK;
}

static int sr_open(struct tach_reader *r)
{
	return TACH_OK;
}

static void sr_free(struct tach_reader *r)
{
	struct sread *st = r->state;
	free(st->frames);
	free(st->unesc);
	free(st->dk);
	free(st->dk_id);
	tachi_idset_free(&st->dk_index);
}

const struct tachi_reader_ops tachi_samples_reader_ops = {
	.state_size = sizeof(struct sread),
	.open = sr_open,
	.next = sr_next,
	.free = sr_free,
};
