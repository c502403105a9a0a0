/* bpftrace map reader: what bpftrace prints of a map keyed by stacks when it exits, as
 * `bpftrace -e 'profile:hz:99 { @[ustack, kstack, comm] = count(); }'` (or @[kstack],
 * @[ustack]...) gives, read as FlameGraph's stackcollapse-bpftrace.pl and inferno's
 * bpftrace collapser read it, so the stacks are theirs.
 *
 * An entry opens with a line "@[" and lists its stacks a frame a line, innermost first
 * (kstack's "function+offset", ustack's "function+offset" or an address), a blank line
 * between two stacks of the key; a line "]: N", or ", KEY]: N" where the key has a value
 * after its stacks (comm, a pid...), ends it with its value N. KEY (everything between
 * ", " and the last "]: ") is the outermost frame, so `comm` roots each stack at the
 * program's name, as the collapsers print it. A one-line entry "@[, KEY]: N" (no stack) is
 * KEY alone. Other lines between entries ("Attaching 1 probe...", other maps, "@: N") are
 * not entries and are skipped; so are named maps ("@name[", which the collapsers skip).
 *
 * Frames keep their offsets ("do_idle+419", as the collapsers keep them) and are bare
 * names (text_stack.h). The value is the map's (count(), or sum() of anything): the weight;
 * the format has no time (meta.sample_time 0; every timestamp 0). Refused, with the line:
 * a value past 64 bits, an entry the input ends in, a stack deeper than max-depth, counts
 * past max-samples. Memory follows the deepest stack and the distinct names. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/bpftrace/bpftrace.h"
#include "formats/text_stack.h"

struct bread {
	struct tachi_tstack st;
	bool in_entry;
	uint64_t entry_line;  /* where the open entry began */
};

/* The end of an entry in s: the value after the last "]: ", digits from there on (what
 * follows them is ignored, as the collapsers do), and where the "]" is. */
static bool entry_end(struct tach_reader *r, const char *s, size_t n, size_t *close,
		      uint64_t *v, int *rc)
{
	*rc = TACH_OK;
	for (size_t i = n; i >= 3; i--) {
		const char *c = s + i - 3;
		if (c[0] != ']' || c[1] != ':' || c[2] != ' ' || i == n || s[i] < '0' || s[i] > '9')
			continue;
		size_t e = i;
		while (e < n && s[e] >= '0' && s[e] <= '9')
			e++;
		bool big;
		if (!tachi_tstack_count(s + i, e - i, v, &big)) {
			*rc = RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
				    "a map value past 64 bits");
			return false;
		}
		*close = i - 3;
		return true;
	}
	return false;
}

/* A line inside an entry: a frame, a blank line, or the entry's end (given as a sample). */
static int entry_line(struct tach_reader *r, struct bread *b, const char *s, size_t n,
		      bool *done)
{
	size_t close;
	uint64_t v;
	int rc;
	*done = false;
	if (entry_end(r, s, n, &close, &v, &rc)) {
		/* ",", one white space, then the key's other values */
		size_t k = 0;
		if (k < close && s[k] == ',')
			k++;
		if (k < close && (s[k] == ' ' || s[k] == '\t'))
			k++;
		if (k < close && (rc = tachi_tstack_push(r, &b->st, s + k, close - k)))
			return rc;
		b->in_entry = false;
		*done = true;
		return tachi_tstack_sample(r, &b->st, v);
	}
	if (rc)
		return rc;
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	return n ? tachi_tstack_push(r, &b->st, s, n) : TACH_OK;
}

/* A line between entries: whether it opens one, or is a one-line entry "@[, KEY]: N". */
static int outside_line(struct tach_reader *r, struct bread *b, const char *s, size_t n,
			bool *done)
{
	size_t close;
	uint64_t v;
	int rc;
	*done = false;
	if (n == 2 && s[0] == '@' && s[1] == '[') {
		b->in_entry = true;
		b->entry_line = r->in.line;
		return TACH_OK;
	}
	if (n < 5 || memcmp(s, "@[,", 3) || (s[3] != ' ' && s[3] != '\t'))
		return TACH_OK;
	if (!entry_end(r, s, n, &close, &v, &rc) || close < 4)
		return rc;
	if ((rc = tachi_tstack_push(r, &b->st, s + 4, close - 4)))
		return rc;
	*done = true;
	return tachi_tstack_sample(r, &b->st, v);
}

static int bt_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct bread *b = r->state;
	const char *s;
	size_t n;
	int rc;
	bool done;
	for (;;) {
		rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF && b->in_entry)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, b->entry_line,
				     "the input ends inside the map entry opened here "
				     "(no \"]: VALUE\" line)");
		if (rc)
			return rc;
		if (n && s[n - 1] == '\r')
			n--;
		rc = b->in_entry ? entry_line(r, b, s, n, &done) : outside_line(r, b, s, n, &done);
		if (rc)
			return rc;
		if (done) {
			*out = &r->sample;
			return TACH_OK;
		}
	}
}

static int bt_open(struct tach_reader *r)
{
	r->meta.sample_time = 0;
	return TACH_OK;
}

static void bt_free(struct tach_reader *r)
{
	struct bread *b = r->state;
	tachi_tstack_free(&b->st);
}

const struct tachi_reader_ops tachi_bpftrace_reader_ops = {
	.state_size = sizeof(struct bread),
	.open = bt_open,
	.next = bt_next,
	.free = bt_free,
};
