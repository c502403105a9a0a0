/* Input detection: the pseudo-format "auto".
 *
 * At open the reader peeks at the first TACHI_PROBE_BYTES of the input (fewer at its end),
 * asks each readable format's probe in table order (the order is the priority; folded
 * stacks, the most permissive, come last) and becomes the first that answers yes: its state
 * replaces the auto reader's, the options given before open are handed to it, and the
 * peeked bytes stay in the input buffer for it, so a pipe loses nothing and a file is not
 * read twice. Options are checked when set against every format that reads; at open each
 * goes to the chosen reader when that reader takes it and is ignored when it does not: a
 * program offers the options of every format it may meet (and takes some from the
 * environment), so one meant for another format is no mistake.
 *
 * The probes live beside their readers; this file has the text helpers they share.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/detect.h"
#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"

/* An option given before the format is known: which formats took it. */
struct aopt {
	char *key, *value;
	uint64_t formats; /* bit i: readable format i (tachi_format_at) accepted it */
};

struct astate {
	struct aopt *opts;
	size_t n, cap;
	/* option "among": the comma-separated formats detection chooses from, the first when
	 * no probe takes the input (a program that reads one family of formats) */
	char *among;
};

/* ---- text helpers for probes ---- */

bool tachi_probe_line(const uint8_t *p, size_t n, size_t *at, const uint8_t **line,
		      size_t *len, bool *complete)
{
	while (*at < n) {
		const uint8_t *s = p + *at;
		const uint8_t *nl = memchr(s, '\n', n - *at);
		size_t l = nl ? (size_t)(nl - s) : n - *at;
		*at += l + (nl != NULL);
		*complete = nl != NULL || n < TACHI_PROBE_BYTES;
		if (l && s[l - 1] == '\r' && *complete)
			l--;
		size_t k = 0;
		while (k < l && (s[k] == ' ' || s[k] == '\t'))
			k++;
		if (k == l || s[k] == '#')
			continue;
		*line = s;
		*len = l;
		return true;
	}
	return false;
}

/* The offset of the first byte that text has not (a control character other than tab, LF
 * and CR), n when there is none. */
static size_t not_text_at(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 && p[i] != '\t' && p[i] != '\n' && p[i] != '\r')
			return i;
	return n;
}

bool tachi_probe_text(const uint8_t *p, size_t n)
{
	return n > 0 && not_text_at(p, n) == n;
}

/* ---- options before open ---- */

static int auto_option(struct tach_reader *r, const char *key, const char *value)
{
	struct astate *a = r->state;
	if (!strcmp(key, "among")) {
		free(a->among);
		return (a->among = strdup(value)) ? TACH_OK
			: RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	uint64_t took = 0;
	char why[sizeof(r->err.msg)] = "";
	const struct tachi_format *f;
	for (size_t i = 0; (f = tachi_format_at(i)); i++) {
		if (!f->reader || !f->probe)
			continue;
		struct tach_reader *t = tach_reader_new(f->name);
		if (!t)
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		if (tach_reader_set_option(t, key, value) == TACH_OK)
			took |= (uint64_t)1 << i;
		else if (!why[0] && !strstr(t->err.msg, "reader has no option"))
			snprintf(why, sizeof(why), "%s", t->err.msg);
		tach_reader_free(t);
	}
	if (!took)
		return why[0] ? RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "%s", why)
			      : RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "no reader has option %s", key);
	if (!TACHI_RESERVE(a->opts, a->cap, a->n + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	struct aopt *o = &a->opts[a->n];
	o->key = strdup(key);
	o->value = strdup(value);
	o->formats = took;
	if (!o->key || !o->value) {
		free(o->key);
		free(o->value);
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	a->n++;
	return TACH_OK;
}

static void free_opts(struct astate *a)
{
	for (size_t i = 0; i < a->n; i++) {
		free(a->opts[i].key);
		free(a->opts[i].value);
	}
	free(a->opts);
	a->opts = NULL;
	a->n = a->cap = 0;
}

static void auto_free(struct tach_reader *r)
{
	struct astate *a = r->state;
	free(a->among);
	free_opts(a);
}

/* Whether name is one of the comma-separated list (NULL: every format is). */
static bool listed(const char *list, const char *name)
{
	size_t n = strlen(name);
	for (const char *p = list; p; p = strchr(p, ',') ? strchr(p, ',') + 1 : NULL)
		if (!strncmp(p, name, n) && (p[n] == ',' || !p[n]))
			return true;
	return !list;
}

/* ---- choosing ---- */

/* "what was seen": the first bytes, printable, for the message when nothing matches. */
static void describe(char *out, size_t cap, const uint8_t *p, size_t n)
{
	size_t o = 0;
	for (size_t i = 0; i < n && i < 16 && o + 5 < cap; i++) {
		uint8_t c = p[i];
		if (c >= 0x20 && c < 0x7f && c != '"' && c != '\\')
			out[o++] = (char)c;
		else
			o += (size_t)snprintf(out + o, cap - o, "\\x%02x", c);
	}
	out[o] = 0;
}

static int no_match(struct tach_reader *r, const uint8_t *p, size_t n)
{
	if (!n)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
			     "empty input: no profile format to detect");
	char seen[96], tried[1024] = "";
	describe(seen, sizeof(seen), p, n);
	const struct tachi_format *f;
	for (size_t i = 0; (f = tachi_format_at(i)); i++) {
		if (!f->reader || !f->probe)
			continue;
		size_t l = strlen(tried);
		snprintf(tried + l, sizeof(tried) - l, "%s%s", l ? ", " : "", f->name);
	}
	const char *near = NULL;
	for (size_t i = 0; !near && (f = tachi_format_at(i)); i++)
		if (f->reader && f->resembles && f->resembles(p, n))
			near = f->name;
	if (near)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
			     "input format not recognized: it starts \"%s\"%s, as %s files do, but "
			     "is not one that detection takes; --from %s reads it as %s and says what "
			     "is wrong (tried %s)", seen, n > 16 ? "..." : "", near, near, near, tried);
	/* A JDK Flight Recorder file ("FLR\0", its chunk magic) is a profile no reader takes:
	 * say what does, not only which formats were tried. */
	if (n >= 4 && !memcmp(p, "FLR", 4))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
			     "a JDK Flight Recorder (.jfr) recording, which no reader here takes: "
			     "convert it to folded stacks first (async-profiler's `jfrconv -o "
			     "collapsed IN.jfr OUT.txt`), then read those");
	char byte[96] = "";
	/* Said of what starts as text only: binary data from its first byte is no near miss. */
	size_t at = not_text_at(p, n);
	if (at > 0 && at < n)
		snprintf(byte, sizeof(byte), "; byte 0x%02x at offset %zu is not text, so no text "
			 "format reads it", p[at], at);
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
		     "input format not recognized: it starts \"%s\"%s%s; tried %s", seen,
		     n > 16 ? "..." : "", byte, tried);
}

/* Becomes format f: its state for ours, then the options it takes. */
static int become(struct tach_reader *r, const struct tachi_format *f, size_t index)
{
	void *state = NULL;
	if (f->reader->state_size && !(state = calloc(1, f->reader->state_size)))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	struct astate a = *(struct astate *)r->state;
	free(r->state);
	r->state = state;
	r->fmt = f;
	r->detected = true;
	r->meta.source_format = f->name;
	int rc = TACH_OK;
	for (size_t i = 0; i < a.n && rc == TACH_OK; i++)
		if (a.opts[i].formats >> index & 1)
			rc = f->reader->option(r, a.opts[i].key, a.opts[i].value);
	free(a.among);
	free_opts(&a);
	return rc;
}

/* Whether a format before index end resembles the n bytes at p. */
static bool resembled_before(const uint8_t *p, size_t n, size_t end)
{
	const struct tachi_format *f;
	for (size_t i = 0; i < end && (f = tachi_format_at(i)); i++)
		if ((f->reader || f->refused) && f->resembles && f->resembles(p, n))
			return true;
	return false;
}

/* The first format whose probe takes the n bytes at p (one read, or one refused), or NULL;
 * its index into *index. */
static const struct tachi_format *first_taker(const uint8_t *p, size_t n, size_t *index,
					     const char *among)
{
	const struct tachi_format *f;
	for (*index = 0; (f = tachi_format_at(*index)); (*index)++)
		if ((f->reader || f->refused) && f->probe && listed(among, f->name) && f->probe(p, n))
			return f;
	/* none of the family took it: the first of it reads it and says what is wrong */
	size_t first = among ? strcspn(among, ",") : 0;
	for (*index = 0; among && (f = tachi_format_at(*index)); (*index)++)
		if (f->reader && strlen(f->name) == first && !strncmp(f->name, among, first))
			return f;
	return NULL;
}

static int auto_open(struct tach_reader *r)
{
	const uint8_t *p;
	size_t n, i;
	int rc = tachi_in_peek(&r->in, TACHI_PROBE_BYTES, &r->err, &p, &n);
	if (rc)
		return rc;
	const char *among = ((struct astate *)r->state)->among;
	const struct tachi_format *f = first_taker(p, n, &i, among);
	/* What a probe could not tell from the first bytes (a JSON key past them) it may
	 * tell from more: when a format before the one chosen (or any, when none was)
	 * resembles the input, the probes are asked again of a bigger window. */
	if (n == TACHI_PROBE_BYTES && resembled_before(p, n, f ? i : SIZE_MAX)) {
		if ((rc = tachi_in_peek(&r->in, TACHI_PROBE_MORE, &r->err, &p, &n)))
			return rc;
		f = first_taker(p, n, &i, among);
	}
	if (!f)
		return no_match(r, p, n);
	if (!f->reader)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0, "%s", f->refused);
	if ((rc = become(r, f, i)))
		return rc;
	if ((rc = tachi_in_for_reader(r, f->reader)))
		return rc;
	return f->reader->open(r);
}

static int auto_next(struct tach_reader *r, const struct tach_sample **s)
{
	(void)s;
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "reader not open");
}

static const struct tachi_reader_ops auto_ops = {
	.state_size = sizeof(struct astate),
	.option = auto_option,
	.open = auto_open,
	.next = auto_next,
	.free = auto_free,
};

const struct tachi_format tachi_fmt_auto = {
	.name = "auto",
	.reader = &auto_ops,
};

TACH_API const char *tach_reader_format(const struct tach_reader *r)
{
	if (!r || r->fmt == &tachi_fmt_auto)
		return NULL;
	return r->fmt->name;
}
