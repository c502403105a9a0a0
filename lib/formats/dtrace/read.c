/* DTrace aggregation reader: what `dtrace -n '... { @[ustack()] = count(); }'` (or stack(),
 * jstack(), several keys) prints at its end, as FlameGraph's stackcollapse.pl and inferno's
 * dtrace collapser read it, so the stacks are theirs.
 *
 * The file opens with dtrace's header (the "CPU ID FUNCTION:NAME" lines of the probe that
 * printed): everything up to the first blank line is skipped. Then each aggregation entry is
 * its stack, a frame a line, innermost first ("module`function+0xoffset", or a bare hex
 * address), blank lines between the stacks of a key of several, and a line holding only the
 * entry's value (a count) that ends it. Each entry is one sample weighing its value. A file
 * whose header never ends has no entry, which is said once; one that ends inside a stack
 * (frames, no count) is refused at the line the stack began.
 *
 * A frame is named as inferno names it: the offset (from the last '+') dropped; where the
 * name has "::" (C++), what follows the last '(' or '<' after the first "::" dropped
 * (arguments, templates); a Rust name DTrace half demangled ("_$LT$a..b$GT$::f::h0123...",
 * a hash at its end) fixed after the module's backtick (escapes, ".." as "::", the hash
 * dropped); Java's inlined "a->b" split into frames, each but the first marked "_[i]" and
 * their leading 'L's dropped; ';' as ':'; an empty name is "-". Frames are bare names
 * (text_stack.h).
 *
 * The value is what the aggregating function gave (count(), or sum() of anything): it is
 * read as the weight, and the format has no time (meta.sample_time 0; every timestamp 0).
 * Not read: printa() formats, aggregations keyed by other values than stacks (their lines
 * are frames to this reader, as to the collapsers). Refused, with the line: a value past
 * 64 bits, a stack deeper than max-depth, counts past max-samples. Memory follows the
 * deepest stack and the distinct names. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/dtrace/dtrace.h"
#include "formats/rust_names.h"
#include "formats/text_stack.h"

struct dread {
	struct tachi_tstack st;
	char *buf;          /* a frame's name being rewritten */
	size_t cap;
	bool in_data;       /* the header's blank line was seen */
	uint64_t stack_line; /* where the stack being read began */
};

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

static void trim(const char **s, size_t *n)
{
	while (*n && is_space(**s))
		(*s)++, (*n)--;
	while (*n && is_space((*s)[*n - 1]))
		(*n)--;
}

/* C++: what follows the last '(' or '<' after the first "::" goes (arguments). */
static size_t uncpp(const char *s, size_t n)
{
	const char *c = memmem(s, n, "::", 2);
	if (!c)
		return n;
	for (size_t i = n; i > (size_t)(c - s) + 2; i--)
		if (s[i - 1] == '(' || s[i - 1] == '<')
			return i - 1;
	return n;
}

/* One part of an inlined chain: leading 'L's dropped, ';' as ':', "_[i]" after all but the
 * first; pushed as a frame. */
static int push_part(struct tach_reader *r, struct dread *d, const char *s, size_t n,
		     bool inlined)
{
	while (n && *s == 'L')
		s++, n--;
	char *b = d->buf + d->cap - n - 4; /* past what the rewritten name used */
	for (size_t i = 0; i < n; i++)
		b[i] = s[i] == ';' ? ':' : s[i];
	if (inlined)
		memcpy(b + n, "_[i]", 4);
	return tachi_tstack_push(r, &d->st, b, n + (inlined ? 4 : 0));
}

/* "a->b->c": frames a, b_[i], c_[i] from the outermost, so pushed from the right. */
static int push_inlines(struct tach_reader *r, struct dread *d, const char *s, size_t n)
{
	size_t end = n;
	for (size_t i = n; i >= 2; i--) {
		if (i > end || s[i - 2] != '-' || s[i - 1] != '>')
			continue;
		int rc = push_part(r, d, s + i, end - i, true);
		if (rc)
			return rc;
		end = i - 2;
		i--;
	}
	return push_part(r, d, s, end, false);
}

/* A stack line, trimmed, as its frame (or frames). */
static int frame_line(struct tach_reader *r, struct dread *d, const char *s, size_t n)
{
	bool inl = false, cpp = false, semi = false;
	size_t plus = n;
	for (size_t i = 0; i < n; i++) {
		if (s[i] == '>' && i && s[i - 1] == '-')
			inl = true;
		else if (s[i] == ':' && i && s[i - 1] == ':')
			cpp = true;
		else if (s[i] == ';')
			semi = true;
		else if (s[i] == '+')
			plus = i;
	}
	n = plus;
	if (cpp)
		n = uncpp(s, n);
	/* room for the name, and after it for one part of it with "_[i]" */
	if (!TACHI_RESERVE(d->buf, d->cap, 2 * n + 8))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	if (!n) {
		s = "-", n = 1;
	} else {
		const char *tick = memchr(s, '`', n);
		size_t m = tick ? (size_t)(tick - s) + 1 : 0, fl = n - m, on;
		while (fl && is_space(s[m + fl - 1]))
			fl--;
		if (tick && tachi_rust_unhash(s + m, fl, d->buf + m, &on)) {
			memcpy(d->buf, s, m);
			s = d->buf, n = m + on;
		}
	}
	if (inl)
		return push_inlines(r, d, s, n);
	if (semi) {
		char *b = d->buf + d->cap - n;
		for (size_t i = 0; i < n; i++)
			b[i] = s[i] == ';' ? ':' : s[i];
		s = b;
	}
	return tachi_tstack_push(r, &d->st, s, n);
}

static int dt_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct dread *d = r->state;
	const char *s;
	size_t n;
	int rc;
	for (;;) {
		rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF && !d->in_data && r->in.line)
			tachi_warn(&r->warn, TACH_POS_NONE, 0,
				   "no aggregation: the input ends in dtrace's header");
		if (rc == TACH_EOF && d->st.depth)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, d->stack_line,
				     "the input ends inside the stack begun here (no count after it)");
		if (rc)
			return rc;
		trim(&s, &n);
		if (!d->in_data) {
			d->in_data = !n;
			continue;
		}
		if (!n)
			continue;
		uint64_t v;
		bool big;
		if (tachi_tstack_count(s, n, &v, &big)) {
			if ((rc = tachi_tstack_sample(r, &d->st, v)))
				return rc;
			*out = &r->sample;
			return TACH_OK;
		}
		if (big)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
				     "an aggregation value past 64 bits");
		if (!d->st.depth)
			d->stack_line = r->in.line;
		if ((rc = frame_line(r, d, s, n)))
			return rc;
	}
}

static int dt_open(struct tach_reader *r)
{
	r->meta.sample_time = 0;
	return TACH_OK;
}

static void dt_free(struct tach_reader *r)
{
	struct dread *d = r->state;
	tachi_tstack_free(&d->st);
	free(d->buf);
}

const struct tachi_reader_ops tachi_dtrace_reader_ops = {
	.state_size = sizeof(struct dread),
	.open = dt_open,
	.next = dt_next,
	.free = dt_free,
};
