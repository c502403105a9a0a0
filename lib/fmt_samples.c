/* The "samples" text form: one sample per line, lossless for everything CPython's reader
 * gives back, and the form the TACH fixtures are written in.
 *
 *   @start_time_us N | @interval_us N | @python_version X.Y.Z   (header lines)
 *   TID IID TIMESTAMP_US STATUS<TAB>FRAME;FRAME;...              (innermost frame first)
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

#include "internal.h"

/* ---- reader ---- */

struct sread {
	uint32_t *frames;
	size_t cap;
	char *unesc;
	size_t unesc_cap;
	uint64_t samples;
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
		if (!(len[6] == 1 && f[6][0] == '-')) {
			int64_t op;
			if (!parse_i64(f[6], len[6], &op))
				return line_fail(r, "bad opcode \"%.*s\"", (int)len[6], f[6]);
			/* CPython keeps 0..254 and stores anything else as "no opcode". */
			fr.opcode = op >= 0 && op <= 254 ? (uint8_t)op : TACH_NO_OPCODE;
		}
	}
	if (no_loc)
		fr.line = fr.end_line = fr.col = fr.end_col = -1;
	if (tach_dict_intern_frame(&r->dict, &fr, id))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
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
	} else {
		return line_fail(r, "unknown header line \"%.*s\"", (int)(kl > 40 ? 40 : kl), s);
	}
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
	uint64_t v[4];
	const char *p = s;
	for (int i = 0; i < 4; i++) {
		const char *e = i < 3 ? memchr(p, ' ', (size_t)(tab - p)) : tab;
		if (!e)
			return line_fail(r, "expected TID IID TIMESTAMP_US STATUS before the TAB");
		if (!tachi_parse_dec(p, (size_t)(e - p), UINT64_MAX, &v[i]))
			return line_fail(r, "bad number \"%.*s\"", (int)(e - p > 40 ? 40 : e - p), p);
		p = e + 1;
	}
	if (v[1] > UINT32_MAX)
		return line_fail(r, "interpreter id %llu exceeds 32 bits", (unsigned long long)v[1]);
	if (v[3] > 255)
		return line_fail(r, "status %llu exceeds 255", (unsigned long long)v[3]);
	uint32_t depth = 0;
	p = tab + 1;
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
	if (++st->samples > r->lim.max_samples)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "more than %llu samples", (unsigned long long)r->lim.max_samples);
	struct tach_sample *smp = &r->sample;
	smp->thread_id = v[0];
	smp->interp_id = (uint32_t)v[1];
	smp->timestamp_us = v[2];
	smp->status = (uint8_t)v[3];
	smp->weight = 1;
	smp->depth = depth;
	smp->same_outer = 0;
	smp->frames = st->frames;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples++;
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
}

static const struct tachi_reader_ops reader_ops = {
	.state_size = sizeof(struct sread),
	.open = sr_open,
	.next = sr_next,
	.free = sr_free,
};

/* ---- writer ---- */

int tachi_out_escaped(struct tachi_out *o, const char *s, size_t n)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t run = 0;
	for (size_t i = 0; i < n; i++) {
		unsigned char c = (unsigned char)s[i];
		if (c >= 0x20 && c != 0x7f && c != '%' && c != ':' && c != ';')
			continue;
		if (tachi_out_write(o, s + run, i - run))
			return TACH_E_IO;
		char e[3] = { '%', hex[c >> 4], hex[c & 15] };
		if (tachi_out_write(o, e, 3))
			return TACH_E_IO;
		run = i + 1;
	}
	return tachi_out_write(o, s + run, n - run);
}

static int sw_begin(struct tach_writer *w)
{
	struct tachi_out *o = &w->out;
	int rc = 0;
	if (w->meta.py_major) {
		char v[64];
		snprintf(v, sizeof(v), "@python_version %u.%u.%u\n", w->meta.py_major,
			 w->meta.py_minor, w->meta.py_micro);
		rc |= tachi_out_str(o, v);
	}
	rc |= tachi_out_str(o, "@start_time_us ");
	rc |= tachi_out_u64(o, w->meta.start_time_us);
	rc |= tachi_out_str(o, "\n@interval_us ");
	rc |= tachi_out_u64(o, w->meta.interval_us);
	rc |= tachi_out_byte(o, '\n');
	return rc ? tachi_writer_io(w) : TACH_OK;
}

static int put_num(struct tachi_out *o, int32_t v)
{
	return tachi_out_i64(o, v);
}

static int sw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct tachi_out *o = &w->out;
	int rc = 0;
	for (uint64_t k = 0; k < s->weight; k++) {
		rc |= tachi_out_u64(o, s->thread_id);
		rc |= tachi_out_byte(o, ' ');
		rc |= tachi_out_u64(o, s->interp_id);
		rc |= tachi_out_byte(o, ' ');
		rc |= tachi_out_u64(o, s->timestamp_us + k * w->meta.interval_us);
		rc |= tachi_out_byte(o, ' ');
		rc |= tachi_out_u64(o, s->status);
		rc |= tachi_out_byte(o, '\t');
		for (uint32_t i = 0; i < s->depth; i++) {
			const struct tach_frame *f = tach_dict_frame(d, s->frames[i]);
			if (!f)
				return WFAIL(w, TACH_E_USAGE, "frame id %u out of range", s->frames[i]);
			size_t fl, nl;
			const char *file = tach_dict_string(d, f->file, &fl);
			const char *func = tach_dict_string(d, f->func, &nl);
			if (!file || !func)
				return WFAIL(w, TACH_E_USAGE, "string id out of range in frame %u",
					     s->frames[i]);
			if (i)
				rc |= tachi_out_byte(o, ';');
			rc |= tachi_out_escaped(o, file, fl);
			rc |= tachi_out_byte(o, ':');
			rc |= tachi_out_escaped(o, func, nl);
			if (f->line == -1) {
				rc |= tachi_out_str(o, ":-:-:-:-:");
			} else {
				rc |= tachi_out_byte(o, ':');
				rc |= put_num(o, f->line);
				rc |= tachi_out_byte(o, ':');
				rc |= put_num(o, f->end_line);
				rc |= tachi_out_byte(o, ':');
				rc |= put_num(o, f->col);
				rc |= tachi_out_byte(o, ':');
				rc |= put_num(o, f->end_col);
				rc |= tachi_out_byte(o, ':');
			}
			if (f->opcode == TACH_NO_OPCODE)
				rc |= tachi_out_byte(o, '-');
			else
				rc |= tachi_out_u64(o, f->opcode);
		}
		rc |= tachi_out_byte(o, '\n');
		if (rc)
			return tachi_writer_io(w);
	}
	return TACH_OK;
}

static int sw_close(struct tach_writer *w)
{
	return TACH_OK;
}

static const struct tachi_writer_ops writer_ops = {
	.begin = sw_begin,
	.put = sw_put,
	.close = sw_close,
};

const struct tachi_format tachi_fmt_samples = {
	.name = "samples",
	.reader = &reader_ops,
	.writer = &writer_ops,
};
