/* macOS sample reader: the report `sample PID` (or Activity Monitor's "Sample Process")
 * writes, its call graph read as inferno's sample collapser reads it, so the stacks and
 * counts are inferno's.
 *
 * The report opens with a header ("Analysis of sampling PROG (pid N) every 1 millisecond",
 * "Process:", ...), skipped but for the interval, up to a line "Call graph:". The graph is
 * a tree, a node a line, each line four spaces, then two characters of indent (' ', '+',
 * '!', ':', '|') a level, the node's sample count and the frame: "COUNT FUNC  (in MODULE)
 * + OFFSET  [ADDRESS]". The first level names a thread ("COUNT Thread_ID  DispatchQueue_N:
 * NAME  (serial)"): its ID is the samples' thread, and it is no frame (a first-level line
 * that names no thread is a frame, of thread 0). The graph ends at "Total number in stack"
 * (what follows, the "Sort by top of stack" list and the binary images, is not read) or
 * at the input's end.
 *
 * Each leaf of the tree (a line that the next does not go deeper than) is one record: its
 * path from the thread's line, weighing the leaf's count of samples; a node's own samples
 * beyond its children's sums, which sample prints as no line of its own, are not read,
 * as inferno does not read them. Frames are "MODULE`FUNC" (bare names, text_stack.h):
 * FUNC up to its first '(' (sample's "(.llvm.N)" suffixes and the "(in" go), MODULE from
 * the last "(in " up to its ')', ".dylib" dropped; a line without "(in " is FUNC alone; a
 * Rust name sample left half demangled is fixed (rust_names.h). As inferno, the leaves in
 * the functions where threads wait (__psynch_cvwait, __ulock_wait, mach_msg_trap, read,
 * kevent, ...: a name ending in one of them) are left out, which is said once with the
 * samples dropped.
 *
 * The interval of the header ("every N millisecond(s)" or "microsecond(s)") is
 * meta.interval_us, and a record's time is its count times it (meta.sample_time 1); a
 * header without one gives counts without time. sample keeps no timestamps: every record
 * is at 0. Refused, with the line: a graph line that is not four spaces, indent and a
 * count, a line more than one level deeper than the line before it, a count past 64
 * bits, a tree deeper than max-depth, counts past max-samples. Memory follows the deepest
 * stack and the distinct names. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/macsample/macsample.h"
#include "formats/rust_names.h"
#include "formats/text_stack.h"

#define NO_FRAME UINT32_MAX

enum { HEADER, GRAPH, DONE };

struct msread {
	struct tachi_tstack st;
	uint32_t *path;       /* each level's frame from the root (NO_FRAME: a thread's) */
	size_t path_cap;
	uint32_t levels;
	uint64_t tid, leaf_count, leaf_line;
	bool leaf;            /* the last line read may be a leaf not given yet */
	bool waiting;         /* ... whose function is one where threads wait */
	int phase;
	char *buf;            /* a Rust name fixed */
	size_t cap;
	uint64_t waiting_samples, waiting_stacks;
};

/* Where threads wait, as inferno lists them: their stacks are not the thread's work. */
static const char *const waits[] = {
	"__psynch_cvwait", "__select", "__semwait_signal", "__ulock_wait", "__wait4",
	"__workq_kernreturn", "kevent", "mach_msg_trap", "read", "semaphore_wait_trap",
};

static bool starts(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);
	return n >= l && !memcmp(s, p, l);
}

static bool ends(const char *s, size_t n, const char *p)
{
	size_t l = strlen(p);
	return n >= l && !memcmp(s + n - l, p, l);
}

static bool is_waiting(const char *s, size_t n)
{
	for (size_t i = 0; i < sizeof(waits) / sizeof(waits[0]); i++)
		if (ends(s, n, waits[i]))
			return true;
	return false;
}

/* "every N millisecond(s)" or "microsecond(s)" in the header's first line. */
static int header_interval(struct tach_reader *r, const char *s, size_t n)
{
	const char *e = memmem(s, n, " every ", 7);
	uint64_t v = 0;
	if (!e)
		return TACH_OK;
	size_t i = (size_t)(e - s) + 7, d = i;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++)
		v = v > TACHI_MAX_INTERVAL_US ? v : v * 10 + (uint64_t)(s[i] - '0');
	if (i == d || i >= n || s[i] != ' ' || !v)
		return TACH_OK;
	if (starts(s + i + 1, n - i - 1, "millisecond"))
		v = v > TACHI_MAX_INTERVAL_US / 1000 ? TACHI_MAX_INTERVAL_US + 1 : v * 1000;
	else if (!starts(s + i + 1, n - i - 1, "microsecond"))
		return TACH_OK;
	if (v > TACHI_MAX_INTERVAL_US)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line,
			     "a sampling interval past %llu µs",
			     (unsigned long long)TACHI_MAX_INTERVAL_US);
	r->meta.interval_us = v;
	r->meta.sample_time = 1;
	return TACH_OK;
}

/* The leaf read last as r->sample: the path's frames, innermost first. */
static int give_leaf(struct tach_reader *r, struct msread *m)
{
	int rc;
	m->leaf = false;
	if (m->waiting) {
		m->waiting_stacks++;
		m->waiting_samples += m->leaf_count;
		return TACH_EOF;
	}
	if (m->leaf_count > r->lim.max_samples - m->st.total) /* said at the leaf's line */
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, m->leaf_line,
			     "the counts add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	for (uint32_t i = m->levels; i > 0; i--)
		if (m->path[i - 1] != NO_FRAME && (rc = tachi_tstack_push_id(r, &m->st, m->path[i - 1])))
			return rc;
	if ((rc = tachi_tstack_sample(r, &m->st, m->leaf_count)))
		return rc;
	r->sample.thread_id = m->tid;
	if (r->meta.sample_time &&
	    __builtin_mul_overflow(m->leaf_count, r->meta.interval_us * 1000, &r->sample.time_ns))
		r->sample.time_ns = UINT64_MAX;
	return TACH_OK;
}

/* "Thread_ID" with digits, at the first level: the thread's id. */
static bool thread_line(const char *s, size_t n, uint64_t *tid)
{
	size_t i = 7;
	uint64_t v = 0;
	if (!starts(s, n, "Thread_"))
		return false;
	for (; i < n && s[i] >= '0' && s[i] <= '9'; i++) {
		if (v > (UINT64_MAX - 9) / 10)
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (i == 7 || (i < n && s[i] != ' ' && s[i] != '\t'))
		return false;
	*tid = v;
	return true;
}

/* The frame of a node's text (after its count): "MODULE`FUNC", into *id. */
static int node_frame(struct tach_reader *r, struct msread *m, const char *s, size_t n,
		      uint32_t *id)
{
	const char *open = memchr(s, '(', n), *mod = NULL, *in = NULL;
	size_t fl = open ? (size_t)(open - s) : n, ml = 0;
	while (fl && (s[fl - 1] == ' ' || s[fl - 1] == '\t'))
		fl--;
	for (const char *p = s; (p = memmem(p, n - (size_t)(p - s), "(in ", 4)); p += 4)
		in = p;
	if (in) {
		mod = in + 4;
		const char *close = memchr(mod, ')', n - (size_t)(mod - s));
		ml = close ? (size_t)(close - mod) : 0;
		if (ends(mod, ml, ".dylib"))
			ml -= 6;
	}
	if (!TACHI_RESERVE(m->buf, m->cap, ml + fl + 2))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	size_t o = 0, on;
	if (ml) {
		memcpy(m->buf, mod, ml);
		m->buf[ml] = '`';
		o = ml + 1;
	}
	if (tachi_rust_unhash(s, fl, m->buf + o, &on))
		o += on;
	else
		memcpy(m->buf + o, s, fl), o += fl;
	m->waiting = is_waiting(m->buf, o);
	return tachi_tstack_intern(r, m->buf, o, id);
}

static int bad_line(struct tach_reader *r, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "a call graph line %s", what);
}

/* A graph line: the leaf before it given (*gave) where this one goes no deeper. */
static int graph_line(struct tach_reader *r, struct msread *m, const char *s, size_t n,
		      bool *gave)
{
	size_t i = 4;
	uint64_t count;
	bool big;
	int rc;
	if (!starts(s, n, "    "))
		return bad_line(r, "that does not start with four spaces");
	while (i < n && memchr(" +!:|", s[i], 5))
		i++;
	uint32_t level = (uint32_t)((i - 4) / 2);
	const char *c = s + i, *sp = memchr(c, ' ', n - i);
	size_t cl = sp ? (size_t)(sp - c) : n - i;
	if (!tachi_tstack_count(c, cl, &count, &big))
		return bad_line(r, big ? "whose count is past 64 bits" : "without its sample count");
	if (level > m->levels)
		return bad_line(r, "more than one level deeper than the line before it");
	if (level > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "stack deeper than the limit of %u frames (see --max-depth)",
			     r->lim.max_depth);
	if (m->leaf && level < m->levels) {
		rc = give_leaf(r, m);
		if (rc && rc != TACH_EOF)
			return rc;
		*gave = rc == TACH_OK;
	}
	if (!TACHI_RESERVE(m->path, m->path_cap, (size_t)level + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	s = c + cl, n -= i + cl;
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	uint64_t tid;
	if (!level && thread_line(s, n, &tid)) {
		m->tid = tid, m->path[0] = NO_FRAME, m->waiting = false;
	} else {
		if (!level)
			m->tid = 0;
		if ((rc = node_frame(r, m, s, n, &m->path[level])))
			return rc;
	}
	m->levels = level + 1;
	m->leaf = true;
	m->leaf_count = count;
	m->leaf_line = r->in.line;
	return TACH_OK;
}

/* The input's end, or the graph's: the last leaf, and what was left out, said. */
static int graph_end(struct tach_reader *r, struct msread *m)
{
	int rc = m->leaf ? give_leaf(r, m) : TACH_EOF;
	m->phase = DONE;
	if (m->waiting_stacks)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "%llu stacks of waiting threads (%llu samples in __ulock_wait, "
			   "mach_msg_trap, read and the like) left out, as inferno does",
			   (unsigned long long)m->waiting_stacks,
			   (unsigned long long)m->waiting_samples);
	return rc;
}

static int ms_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct msread *m = r->state;
	const char *s;
	size_t n;
	int rc;
	bool gave = false;
	while (m->phase != DONE) {
		rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF && m->phase == HEADER && r->in.line)
			tachi_warn(&r->warn, TACH_POS_NONE, 0,
				   "no call graph: the input ends in sample's header");
		if (rc == TACH_EOF && m->phase == GRAPH)
			rc = graph_end(r, m), gave = rc == TACH_OK;
		else if (rc == TACH_EOF)
			m->phase = DONE;
		if (rc && rc != TACH_EOF)
			return rc;
		if (rc == TACH_EOF || gave)
			break;
		while (n && (s[n - 1] == ' ' || s[n - 1] == '\t' || s[n - 1] == '\r'))
			n--;
		if (m->phase == HEADER) {
			if (starts(s, n, "Analysis of sampling ") && (rc = header_interval(r, s, n)))
				return rc;
			m->phase = starts(s, n, "Call graph:") ? GRAPH : HEADER;
		} else if (starts(s, n, "Total number in stack")) {
			rc = graph_end(r, m), gave = rc == TACH_OK;
		} else if (n) {
			rc = graph_line(r, m, s, n, &gave);
		}
		if (rc && rc != TACH_EOF)
			return rc;
		if (gave)
			break;
	}
	if (!gave)
		return TACH_EOF;
	*out = &r->sample;
	return TACH_OK;
}

static int ms_open(struct tach_reader *r)
{
	r->meta.sample_time = 0;
	r->meta.interval_us = 0;
	return TACH_OK;
}

static void ms_free(struct tach_reader *r)
{
	struct msread *m = r->state;
	tachi_tstack_free(&m->st);
	free(m->path);
	free(m->buf);
}

const struct tachi_reader_ops tachi_macsample_reader_ops = {
	.state_size = sizeof(struct msread),
	.open = ms_open,
	.next = ms_next,
	.free = ms_free,
};
