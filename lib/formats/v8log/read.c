/* V8 tick log reader: what `node --prof` (V8's --prof, --log-code) writes, in either of
 * the two forms speedscope and V8's own tools read.
 *
 * The preprocessed JSON (read_json.c) is what `node --prof-process --preprocess LOG`
 * prints: {"code": [...], "functions": [...], "ticks": [...], "scripts": [...]}, each code
 * entry {name, type, kind, ...}, each tick {tm, vm, s}. It is read as speedscope's
 * importer (importFromV8ProfLog) reads it. The raw log (read_log.c), "isolate-0x...-v8.log",
 * is the CSV lines V8 writes; it is read as node's tick processor (V8's tickprocessor.mjs
 * and profile.mjs with --preprocess) reads it, into the same code entries and ticks that
 * JSON would hold, and those are then read as the JSON is: one reading for both.
 *
 * What a sample becomes (speedscope's rules): one sample per tick, the ticks in time order
 * (a stable sort on tm); its stack is s walked from its second-to-last element down by
 * twos (the code indexes of its (index, offset) pairs, outermost first: V8 writes the pc
 * first), -1 (an address no code entry holds) left out, an index equal to the code count
 * named "(unknown type)" (speedscope's off-by-one: code[length] is undefined), one past it
 * the address itself, "0x..." in hex. Frames are innermost first, thread 0. Its timestamp
 * is tm (µs of V8's clock from the log's start: speedscope's own finding, though V8 calls
 * it time_ns); the time it stands for, tm less the previous tick's (the first's from 0),
 * is speedscope's weight, so the times add up to the last tick's tm. A sample of no time
 * (two ticks at one tm) is kept: it is a tick, and speedscope, which drops weightless
 * samples, shows the same times. The VM state (vm: JS, GC, COMPILER, EXTERNAL, IDLE...,
 * numbered as the V8 version that wrote the log numbers them, which the JSON does not
 * record) is kept as the numeric label "vm state", for the writers that keep labels; the
 * status is unknown (a tick is taken by a timer thread, on CPU or not). Values: "samples"
 * (1) and "wall" (the time in ns), as for other wall-clock samplers.
 *
 * Frame names are speedscope's: a code entry of type CPP, "(c++) " and what follows the
 * first "t " or "T " up to a '(' or '<' (the preprocessor's old nm lines had a symbol
 * type there; speedscope's pattern now matches inside C++ names), or the name as it is
 * without one; SHARED_LIB "(LIB) " and the name; JS, where its name matches "NAME
 * FILE:LINE:COL" (speedscope's pattern, anywhere in the name), NAME (or "(anonymous
 * BASE:LINE)", "(anonymous)" without a file) in file FILE ("(unknown file)" when empty),
 * line and column as given, else the name; CODE by its kind: IC kinds "(IC) ",
 * BytecodeHandler "(bytecode) ~", Stub "(stub) ", Builtin "(builtin) ", RegExp "(regexp) ",
 * the others the name; another type "(TYPE) NAME"; an entry without a type "(unknown
 * type)". Frames without a file have file "~" and no line.
 *
 * The whole input is read at open: memory is the input plus a record per code entry and
 * per tick and an id per stack element, each grown as they are read, never from a count.
 * Refused with the byte offset (JSON) or line (raw log): see each form's file. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/json_read.h"
#include "formats/v8log/read.h"
#include "formats/v8log/v8log.h"

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

/* ---- names, as speedscope's importer gives them ---- */

/* A frame of name (and file, line, column where known) interned into *id. */
static int intern(struct tach_reader *r, const char *name, size_t n, const char *file,
		  size_t fn, int32_t line, int32_t col, uint32_t *id)
{
	struct tach_frame f = { 0, 0, line, line, col, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, name, n, &f.func) ||
	    tach_dict_intern_string(&r->dict, file ? file : "~", file ? fn : 1, &f.file) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return nomem(r);
	return TACH_OK;
}

/* prefix then s[0, n) into the state's buffer; its length. */
static int joined(struct tach_reader *r, const char *prefix, const char *s, size_t n,
		  size_t *len)
{
	struct v8log_state *st = r->state;
	size_t pn = strlen(prefix);
	if (!TACHI_RESERVE(st->buf, st->buf_cap, pn + n + 1))
		return nomem(r);
	memcpy(st->buf, prefix, pn);
	memcpy(st->buf + pn, s, n);
	*len = pn + n;
	return TACH_OK;
}

/* The characters of speedscope's JS pattern's name and file parts. */
static bool js_name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
	       c == '.' || c == '_' || c == '-' || c == '$';
}

static bool is_digit(unsigned char c)
{
	return c >= '0' && c <= '9';
}

/* A run of digits at s[*q]: past it, its value (INT32_MAX + 1 when larger). */
static bool digits(const char *s, size_t n, size_t *q, int64_t *v)
{
	size_t from = *q;
	*v = 0;
	for (; *q < n && is_digit((unsigned char)s[*q]); ++*q)
		if (*v <= INT32_MAX)
			*v = *v * 10 + (s[*q] - '0');
	return *q > from;
}

struct v8log_js {
	size_t name0, name1, file0, file1, line0, line1;
	int64_t line, col;
};

/* speedscope's /([a-zA-Z0-9\._\-$]*) ([a-zA-Z0-9\.\-_\/$]*):(\d+):(\d+)/, unanchored: the
 * leftmost match. Its parts are runs that only a space, a ':' and the end stop, so a match
 * is decided by the space it has in it: the first space that the rest follows. */
static bool js_match(const char *s, size_t n, struct v8log_js *m)
{
	for (size_t e = 0; e < n; e++) {
		if (s[e] != ' ')
			continue;
		size_t p = e, q = e + 1;
		while (p > 0 && js_name_char((unsigned char)s[p - 1]))
			p--;
		while (q < n && (js_name_char((unsigned char)s[q]) || s[q] == '/'))
			q++;
		*m = (struct v8log_js){ .name0 = p, .name1 = e, .file0 = e + 1, .file1 = q };
		if (q >= n || s[q++] != ':')
			continue;
		m->line0 = q;
		if (!digits(s, n, &q, &m->line) || q >= n || s[q] != ':')
			continue;
		m->line1 = q++;
		if (digits(s, n, &q, &m->col))
			return true;
	}
	return false;
}

/* A JS entry's frame: its function, file, line and column where speedscope's pattern
 * finds them. */
static int js_frame(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	struct v8log_state *st = r->state;
	struct v8log_js m;
	if (!js_match(s, n, &m))
		return intern(r, s, n, NULL, 0, -1, -1, id);
	const char *file = s + m.file0, *base = file;
	size_t fn = m.file1 - m.file0, ln = 0;
	for (size_t i = 0; i < fn; i++)
		if (file[i] == '/')
			base = file + i + 1;
	size_t l0 = m.line0;
	while (l0 + 1 < m.line1 && s[l0] == '0')
		l0++;
	int rc;
	if (m.name1 > m.name0) {
		rc = joined(r, "", s + m.name0, m.name1 - m.name0, &ln);
	} else if (fn) {
		size_t bn = (size_t)(file + fn - base);
		rc = joined(r, "(anonymous ", base, bn, &ln);
		if (!rc && !TACHI_RESERVE(st->buf, st->buf_cap, ln + (m.line1 - l0) + 2))
			rc = nomem(r);
		if (!rc) {
			st->buf[ln++] = ':';
			memcpy(st->buf + ln, s + l0, m.line1 - l0);
			ln += m.line1 - l0;
			st->buf[ln++] = ')';
		}
	} else {
		rc = joined(r, "(anonymous)", "", 0, &ln);
	}
	if (rc)
		return rc;
	int32_t line = m.line <= INT32_MAX ? (int32_t)m.line : -1;
	int32_t col = m.col <= INT32_MAX ? (int32_t)m.col : -1;
	return fn ? intern(r, st->buf, ln, file, fn, line, col, id)
		  : intern(r, st->buf, ln, "(unknown file)", 14, line, col, id);
}

/* A CPP entry's name: "(c++) " and what /[tT] ([^(<]*)/ captures, or the name. */
static int cpp_frame(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	struct v8log_state *st = r->state;
	for (size_t i = 0; i + 1 < n; i++) {
		if ((s[i] != 't' && s[i] != 'T') || s[i + 1] != ' ')
			continue;
		size_t e = i + 2, ln = 0;
		while (e < n && s[e] != '(' && s[e] != '<')
			e++;
		int rc = joined(r, "(c++) ", s + i + 2, e - (i + 2), &ln);
		return rc ? rc : intern(r, st->buf, ln, NULL, 0, -1, -1, id);
	}
	return intern(r, s, n, NULL, 0, -1, -1, id);
}

static const char *code_prefix(uint8_t kind)
{
	switch (kind) {
	case V8L_K_IC: return "(IC) ";
	case V8L_K_BYTECODE: return "(bytecode) ~";
	case V8L_K_STUB: return "(stub) ";
	case V8L_K_BUILTIN: return "(builtin) ";
	case V8L_K_REGEXP: return "(regexp) ";
	default: return "";
	}
}

static int code_frame(struct tach_reader *r, struct v8log_code *c, uint32_t *id)
{
	struct v8log_state *st = r->state;
	const char *s = st->text + c->name;
	size_t n = c->name_len, ln = 0;
	int rc = TACH_OK;
	switch (c->type) {
	case V8L_NOTYPE:
		return intern(r, "(unknown type)", 14, NULL, 0, -1, -1, id);
	case V8L_CPP:
		return cpp_frame(r, s, n, id);
	case V8L_JS:
		return js_frame(r, s, n, id);
	case V8L_LIB:
		rc = joined(r, "(LIB) ", s, n, &ln);
		break;
	case V8L_CODE:
		rc = joined(r, code_prefix(c->kind), s, n, &ln);
		break;
	default:
		if ((rc = joined(r, "(", st->text + c->type_text, c->type_len, &ln)))
			return rc;
		size_t tl = ln;
		if (!TACHI_RESERVE(st->buf, st->buf_cap, tl + 2 + n + 1))
			return nomem(r);
		memcpy(st->buf + tl, ") ", 2);
		memcpy(st->buf + tl + 2, s, n);
		ln = tl + 2 + n;
	}
	return rc ? rc : intern(r, st->buf, ln, NULL, 0, -1, -1, id);
}

/* The frame of a resolved id (see struct v8log_tick). */
static int id_frame(struct tach_reader *r, uint64_t v, uint32_t *id)
{
	struct v8log_state *st = r->state;
	if (v > st->ncodes) {
		char hex[24];
		int n = snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)v);
		return intern(r, hex, (size_t)n, NULL, 0, -1, -1, id);
	}
	if (v == st->ncodes)
		return intern(r, "(unknown type)", 14, NULL, 0, -1, -1, id);
	struct v8log_code *c = &st->codes[v];
	int rc = TACH_OK;
	if (c->frame == TACHI_V8LOG_NO_FRAME)
		rc = code_frame(r, c, &c->frame);
	*id = c->frame;
	return rc;
}

/* ---- open / next ---- */

static int by_time(const void *a, const void *b)
{
	const struct v8log_tick *x = a, *y = b;
	if (x->tm != y->tm)
		return x->tm < y->tm ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

static int v8log_option(struct tach_reader *r, const char *key, const char *value)
{
	struct v8log_state *st = r->state;
	/* names: C++ symbols are named as nm -C names them, whatever it says */
	int rc = strcmp(key, "names") ? tachi_native_option(r, &st->opt, key, value)
				       : TACHI_NATIVE_NOT_MINE;
	if (rc != TACHI_NATIVE_NOT_MINE)
		return rc;
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "v8log reader has no option %s", key);
}

static int v8log_open(struct tach_reader *r)
{
	struct v8log_state *st = r->state;
	const uint8_t *p = r->in.data;
	size_t n = r->in.size, i = tachi_json_bom(p, n);
	while (i < n && (p[i] == ' ' || p[i] == '\t' || p[i] == '\n' || p[i] == '\r'))
		i++;
	st->raw = !(i < n && p[i] == '{');
	int rc = st->raw ? tachi_v8log_read_log(r) : tachi_v8log_read_json(r);
	if (rc)
		return rc;
	if (tach_dict_intern_string(&r->dict, "vm state", 8, &st->vm_key))
		return nomem(r);
	if (st->nticks)
		qsort(st->ticks, st->nticks, sizeof(*st->ticks), by_time);
	struct tach_meta *m = &r->meta;
	m->sample_time = 1;
	/* a tick counts one sample and its time: V8's sampler thread takes them on a
	 * wall-clock timer */
	st->vt[0] = (struct tach_value_type){ "samples", "count" };
	st->vt[1] = (struct tach_value_type){ "wall", "nanoseconds" };
	m->value_type_count = 2;
	m->value_types = st->vt;
	m->weight_type = 0;
	m->default_type = 2;
	/* V8's clock counts from the log's start, which no date places */
	m->start_time_us = 0;
	if (st->nticks && st->ticks[st->nticks - 1].tm <= INT64_MAX / 1000)
		m->duration_ns = st->ticks[st->nticks - 1].tm * 1000;
	return TACH_OK;
}

static int v8log_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct v8log_state *st = r->state;
	if (st->cur >= st->nticks)
		return TACH_EOF;
	const struct v8log_tick *t = &st->ticks[st->cur++];
	if (t->n && !TACHI_RESERVE(st->out, st->out_cap, t->n))
		return nomem(r);
	for (uint32_t k = 0; k < t->n; k++) {
		int rc = id_frame(r, st->ids[t->at + t->n - 1 - k], &st->out[k]);
		if (rc)
			return rc;
	}
	struct tach_sample *s = &r->sample;
	memset(s, 0, sizeof(*s));
	s->timestamp_us = (uint64_t)t->tm;
	s->weight = 1;
	s->time_ns = (uint64_t)(t->tm - st->last_tm) * 1000;
	st->last_tm = t->tm;
	s->status = TACH_STATUS_UNKNOWN;
	s->depth = t->n;
	s->frames = st->out;
	st->vals[0] = 1;
	st->vals[1] = (int64_t)s->time_ns;
	st->label = (struct tach_label){ st->vm_key, TACH_NO_STRING, t->vm, TACH_NO_STRING };
	st->ext = (struct tach_sample_ext){ .size = sizeof(st->ext), .value_count = 2,
					    .values = st->vals, .label_count = t->vm >= 0,
					    .labels = &st->label };
	r->ext = &st->ext;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples++;
	*out = s;
	return TACH_OK;
}

static void v8log_free(struct tach_reader *r)
{
	struct v8log_state *st = r->state;
	tachi_v8log_free_log(r);
	free(st->text);
	free(st->codes);
	free(st->ticks);
	free(st->ids);
	free(st->out);
	free(st->buf);
	free(st->opt.binary_path);
}

const struct tachi_reader_ops tachi_v8log_reader_ops = {
	.state_size = sizeof(struct v8log_state),
	.option = v8log_option,
	.open = v8log_open,
	.next = v8log_next,
	.free = v8log_free,
	.whole_input = true,
};
