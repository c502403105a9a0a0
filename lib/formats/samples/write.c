/* The "samples" text form's writer (the form: read.c). The writer prints what CPython's
 * reader reports: a frame whose line is -1 has no location, so its columns are not
 * printed either. */
#include <locale.h>
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

static int put_double(struct tachi_out *o, double v)
{
	char b[40];
	uint64_t bits;
	memcpy(&bits, &v, 8);
	if (v != v) {
		snprintf(b, sizeof(b), " nan:%016llx", (unsigned long long)bits);
		return tachi_out_str(o, b);
	}
	/* '.' whatever locale the caller set (a Python program's setlocale(LC_ALL, "de_DE")):
	 * the reader, and every program, reads the "C" form */
	locale_t c = newlocale(LC_NUMERIC_MASK, "C", (locale_t)0);
	if (c == (locale_t)0)
		return TACH_E_NOMEM;
	locale_t old = uselocale(c);
	snprintf(b, sizeof(b), " %.17g", v);
	uselocale(old);
	freelocale(c);
	return tachi_out_str(o, b);
}

/* The TACHSTAT block as @tachstat (see stats_line); the 32-byte form has no flags, reserved
 * word, error or missed rate: 0 there. */
static int put_stats(struct tachi_out *o, const struct tach_file_info *m)
{
	bool old = m->stats_size == 32;
	char b[80];
	snprintf(b, sizeof(b), "@tachstat %u %u %u %u", old ? 32u : 56u,
		 m->stats_size ? m->stats_version : 1u, old ? 0u : m->stats_flags,
		 old ? 0u : m->stats_reserved);
	int rc = tachi_out_str(o, b);
	rc |= put_double(o, m->stats_duration_s);
	rc |= put_double(o, m->stats_sample_rate);
	rc |= put_double(o, old ? 0.0 : m->stats_error_rate);
	rc |= put_double(o, old ? 0.0 : m->stats_missed);
	return rc | tachi_out_byte(o, '\n');
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
	if (w->meta.profiling_config) {
		rc |= tachi_out_str(o, "@profiling_config ");
		rc |= tachi_out_u64(o, w->meta.profiling_config);
		rc |= tachi_out_byte(o, '\n');
	}
	const struct tach_file_info *f = w->meta.file;
	if (f && f->has_stats)
		rc |= put_stats(o, f);
	if (f && f->record_order)
		rc |= tachi_out_str(o, "@order records\n");
	/* said only where the reader's default (a time where the interval is known) is wrong */
	if (!w->meta.sample_time != !w->meta.interval_us)
		rc |= tachi_out_str(o, w->meta.sample_time ? "@sample_time 1\n" : "@sample_time 0\n");
	return rc ? tachi_writer_io(w) : TACH_OK;
}

static int put_num(struct tachi_out *o, int32_t v)
{
	return tachi_out_i64(o, v);
}

/* A TACH table may hold two rows that print alike (CPython's writer keys frames on what it
 * was given, then drops an end value a missing line or column makes meaningless). Each
 * such later row is written FRAME@K (K = 1, 2, ...: the K-th other row that prints alike),
 * so that reading the text back keeps them apart and a TACH file gets its rows back. */
struct samples_wstate {
	const struct tach_dict *d;
	uint32_t *dup;      /* source frame id -> 1 + K, 0 not yet seen */
	size_t dup_cap;
	uint32_t *rep;      /* per printed form: the first source frame printed so */
	uint32_t *rows;     /* per printed form: how many source frames print so */
	size_t nrep, rep_cap, rows_cap;
	struct tachi_idset index;
};

/* What of a frame the text shows: the end line only with a line. */
static struct tach_frame shown(const struct tach_frame *f)
{
	struct tach_frame k = *f;
	if (k.line == -1)
		k.end_line = -1;
	return k;
}

static uint64_t shown_hash(const struct tach_dict *d, const struct tach_frame *f)
{
	size_t fl, nl;
	const char *file = tachi_str(d, f->file, &fl), *func = tachi_str(d, f->func, &nl);
	struct tach_frame k = shown(f);
	int32_t v[5] = { k.line, k.end_line, k.col, k.end_col, k.opcode };
	return tachi_hash(file, fl) ^ tachi_mix64(tachi_hash(func, nl) ^ tachi_hash(v, sizeof(v)));
}

static bool shown_eq(void *ctx, uint32_t id, const void *key)
{
	const struct samples_wstate *st = ctx;
	const struct tach_dict *d = st->d;
	struct tach_frame a = shown(&d->frames[st->rep[id]]), b = shown(key);
	size_t al, bl, cl, dl;
	const char *af = tachi_str(d, a.file, &al), *bf = tachi_str(d, b.file, &bl);
	const char *an = tachi_str(d, a.func, &cl), *bn = tachi_str(d, b.func, &dl);
	return a.line == b.line && a.end_line == b.end_line && a.col == b.col &&
	       a.end_col == b.end_col && a.opcode == b.opcode && al == bl && cl == dl &&
	       !memcmp(af, bf, al) && !memcmp(an, bn, cl);
}


/* K of source frame fid (0: the first that prints so), or -1 when out of memory. */
static int64_t dup_index(struct samples_wstate *st, const struct tach_dict *d, uint32_t fid)
{
	if (fid < st->dup_cap && st->dup[fid])
		return st->dup[fid] - 1;
	st->d = d;
	if (fid >= st->dup_cap) {
		size_t old = st->dup_cap;
		if (!TACHI_RESERVE(st->dup, st->dup_cap, (size_t)fid + 1))
			return -1;
		memset(st->dup + old, 0, (st->dup_cap - old) * sizeof(*st->dup));
	}
	const struct tach_frame *f = &d->frames[fid];
	uint64_t h = shown_hash(d, f);
	uint32_t r;
	if (tachi_idset_find(&st->index, h, f, shown_eq, st, &r)) {
		/* Native frames that differ only by address, mapping or inline mark print as
		 * one: the text has no field for those (tachfmt(5)). */
		if (tach_dict_frame_native(d, fid) && tach_dict_frame_native(d, st->rep[r])) {
			st->dup[fid] = 1;
			return 0;
		}
		st->dup[fid] = ++st->rows[r];
		return st->dup[fid] - 1;
	}
	if (!TACHI_RESERVE(st->rep, st->rep_cap, st->nrep + 1) ||
	    !TACHI_RESERVE(st->rows, st->rows_cap, st->nrep + 1))
		return -1;
	r = (uint32_t)st->nrep;
	st->rep[r] = fid;
	st->rows[r] = 1;
	if (!tachi_idset_insert(&st->index, h, r))
		return -1;
	st->nrep++;
	st->dup[fid] = 1;
	return 0;
}

static int put_frame(struct tach_writer *w, const struct tach_dict *d, uint32_t fid)
{
	struct tachi_out *o = &w->out;
	const struct tach_frame *f = tach_dict_frame(d, fid);
	if (!f)
		return WFAIL(w, TACH_E_USAGE, "frame id %u out of range", fid);
	size_t fl, nl;
	const char *file = tach_dict_string(d, f->file, &fl);
	const char *func = tach_dict_string(d, f->func, &nl);
	if (!file || !func)
		return WFAIL(w, TACH_E_USAGE, "string id out of range in frame %u", fid);
	int64_t k = dup_index(w->state, d, fid);
	if (k < 0)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	int rc = tachi_out_escaped(o, file, fl);
	rc |= tachi_out_byte(o, ':');
	rc |= tachi_out_escaped(o, func, nl);
	if (f->line == -1) {
		/* No location; columns only when a table row has them anyway. */
		rc |= tachi_out_str(o, ":-:-:");
		rc |= f->col == -1 ? tachi_out_byte(o, '-') : put_num(o, f->col);
		rc |= tachi_out_byte(o, ':');
		rc |= f->end_col == -1 ? tachi_out_byte(o, '-') : put_num(o, f->end_col);
		rc |= tachi_out_byte(o, ':');
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
	if (k) {
		rc |= tachi_out_byte(o, '@');
		rc |= tachi_out_u64(o, (uint64_t)k);
	}
	return rc ? tachi_writer_io(w) : TACH_OK;
}

/* One line: the head (with TIME_NS and WEIGHT when given, more than 0), then the frames. */
static int put_line(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s,
		    uint64_t ts, uint64_t time_ns, uint64_t weight)
{
	struct tachi_out *o = &w->out;
	int rc = tachi_out_u64(o, s->thread_id);
	rc |= tachi_out_byte(o, ' ');
	rc |= tachi_out_u64(o, s->interp_id);
	rc |= tachi_out_byte(o, ' ');
	rc |= tachi_out_u64(o, ts);
	rc |= tachi_out_byte(o, ' ');
	rc |= tachi_out_u64(o, s->status);
	if (weight) {
		rc |= tachi_out_byte(o, ' ');
		rc |= tachi_out_u64(o, time_ns);
	}
	if (weight > 1) {
		rc |= tachi_out_byte(o, ' ');
		rc |= tachi_out_u64(o, weight);
	}
	rc |= tachi_out_byte(o, '\t');
	for (uint32_t i = 0; i < s->depth; i++) {
		if (i)
			rc |= tachi_out_byte(o, ';');
		int frc = put_frame(w, d, s->frames[i]);
		if (frc)
			return frc;
	}
	rc |= tachi_out_byte(o, '\n');
	return rc ? tachi_writer_io(w) : TACH_OK;
}

/* A record whose time is its weight's intervals (or that carries no time) is one line per
 * sample, timestamps one interval apart, as TACH repeats replay; any other is one line
 * with its time and weight, so that a time is never cut into guessed samples. */
static int sw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	uint64_t iv = w->meta.interval_us, per, all;
	bool plain = true;
	if (w->meta.sample_time && s->weight)
		plain = __builtin_mul_overflow(iv, (uint64_t)1000, &per) ||
				__builtin_mul_overflow(per, s->weight, &all)
			? false
			: s->time_ns == all;
	if (!plain)
		return put_line(w, d, s, s->timestamp_us, s->time_ns, s->weight);
	for (uint64_t k = 0; k < s->weight; k++) {
		int rc = put_line(w, d, s, s->timestamp_us + k * iv, 0, 0);
		if (rc)
			return rc;
	}
	return TACH_OK;
}

static int sw_close(struct tach_writer *w)
{
	return TACH_OK;
}

static void sw_free(struct tach_writer *w)
{
	struct samples_wstate *st = w->state;
	free(st->dup);
	free(st->rep);
	free(st->rows);
	tachi_idset_free(&st->index);
}

const struct tachi_writer_ops tachi_samples_writer_ops = {
	.state_size = sizeof(struct samples_wstate),
	.free = sw_free,
	.begin = sw_begin,
	.put = sw_put,
	.close = sw_close,
};
