/* Linux `perf script` text reader: the text perf script writes by default and with -F field
 * lists, read the way FlameGraph's stackcollapse-perf.pl reads it.
 *
 * A sample is an event line, then its call chain one frame a line (innermost first,
 * indented; older perf versions print no indent), then a blank line; a capture without
 * call chains (no -g) prints one line a sample, the comm right-aligned and the sampled
 * frame after the event. A line with a timestamp or an event is an event line wherever it
 * stands; a frame line seen before is known by its text alone (the fast path):
 *
 *   comm pid/tid [cpu] secs.usecs: period event:
 *           addr sym+off (dso)
 *
 * Event line: the comm (which may hold spaces) is the shortest start of the line followed
 * by white space and a "pid/tid" or "tid" word, as stackcollapse-perf.pl's event pattern
 * takes it; a "0" tid (the idle task's "0/0") means the pid is unknown, as there. Every
 * other part is optional: the timestamp is the first "secs.frac:" word after the tid (µs; without one, samples are one interval apart), the period and event
 * are read from the line's end (":[ period] event:"). Only the first event's samples are
 * read (mixing cycles with instructions misleads), or those of the event option (the full
 * name, "cycles:u", or the name before its modifiers); a warning counts the others.
 *
 * Frame line: "addr sym[+0xoff] (dso)", split at the last " (" whose closing parenthesis
 * ends the line's last word. Offsets are dropped (frames are functions, as the script
 * makes them); a sym "[unknown]" keeps the address in the name, "0xADDR", so that output
 * stays symbolizable; the dso is the frame's file: a binary's path, "[kernel.kallsyms]",
 * "/tmp/perf-PID.map" for JIT code or "[unknown]"; "(inlined)" in its place marks a frame
inlined into the next one out, at that frame's address (an inline frame in no file).
 * CPython's -X perf trampolines, "py::FUNC:FILE" in a perf map, are Python frames: file
 * FILE, function FUNC. A sym starting '(' is skipped, as the script skips it.
 * Native frames keep the printed address and a mapping per dso (see dso_mapping: the
 * script prints no ranges, so none is stored); an [unknown] sym is not named by module and
 * file offset, because no file offset can be told from the script.
 *
 * Kept per sample: the tid as the thread, the timestamp, and a root (outermost) frame
 * naming the process: file "[comm]", function the comm, line the pid when the line has one
 * (-1 otherwise); the model has no thread names, and the script's output starts there
(writers with thread names take them from it: formats/comm.h).
 * Weights (option weight): auto (default) reads cpu-clock and task-clock periods, which
 * are nanoseconds, as time: each sample weighs 1 and stands for its own period (time_ns,
 * exact; meta.sample_time), the interval being the first sample's period in µs, which
 * weighs nothing; other events' periods are event counts: each sample weighs 1 (a warning
 * says so), carries its count as a value, and no time; period: the period itself, as
 * stackcollapse-perf.pl sums it; samples: 1 each, no time.
 *
 * Not read: perf script's other output (-F with ip/sym on the event line, brstack, srcline
 * lines, trace fields), which leaves a sample with only its root. Lines are bounded by
 * MAX_LINE and chains by the max-depth limit; the reader's own memory grows with nothing
 * but a line cache where addresses are kept (the dictionary holds each distinct frame
 * once), and with option addresses=no (folded output) with distinct functions (key_of). A
 * stream that gives no sample in its first max-input bytes is an error, as a whole input
 * past it is.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/detect.h"
#include "core/formats.h"
#include "formats/perf/perf.h"
#include "formats/perf_weights.h"

#define MAX_LINE (1u << 20)
#define MAX_EVENTS 8
/* Event names in messages are cut here; compared, they are whole. */
#define EVENT_NAME_MAX 64
#define EVENT_OPT_MAX 4096


/* A frame line already seen (its text after the leading white space) and its frame; a
 * skipped sym has frame NO_FRAME. */
struct fline {
	uint64_t off;
	uint32_t len, frame;
};
#define NO_FRAME UINT32_MAX

/* A frame line met lately, by its whole text: a line seen again skips working out its key
 * (addresses=no) or its frame (addresses kept); a slot a hash, the last line wins. 2048
 * slots (256 KiB) ran faster than 8192 (1 MiB, a core's whole L2) on a build's capture. */
#define LCACHE_SLOTS 2048
#define LCACHE_TEXT 114
struct lslot {
	uint64_t h;
	uint32_t frame;
	uint16_t len;
	char text[LCACHE_TEXT];
};

struct perf_lkey {
	const char *p;
	size_t n;
};

/* What an event line says. */
struct hdr {
	const char *comm, *event;
	size_t comm_len, event_len;
	const char *frame;   /* a capture without call chains: the ip sym (dso) after the event */
	size_t frame_len;
	const char *bad;     /* an event line that cannot be read: why */
	uint64_t tid, period, ts;
	int32_t pid;
	bool has_period, has_ts, has_event;
};

struct perf_rstate {
	/* options */
	char *event_opt;
	bool no_addresses; /* option addresses=no: frames are functions, without addresses */
	bool no_unknown_addresses; /* option unknown-addresses=no: "[unknown]" without one */

	/* the event read (the option's, or the first seen), whole */
	char *event;
	size_t event_len;
	bool event_set;
	/* other events seen, for the warning; and those read besides the first (the option
	 * "cycles" reads "cycles:u" too), for the same warning */
	char others[MAX_EVENTS][EVENT_NAME_MAX + 1];
	size_t nothers;
	char also[MAX_EVENTS][EVENT_NAME_MAX + 1];
	size_t nalso;
	uint64_t skipped, first_skipped;

	/* weights and a counted event's values (perf_weights.h) */
	struct tachi_perf_weights pw;

	/* with addresses=no, frame lines seen, by their key: the line without what varies
	 * with the address (key_of) */
	const char *key;
	size_t key_len;
	uint64_t key_hash;
	char *kbuf;
	size_t kbuf_cap;
	char *bytes;
	size_t bytes_len, bytes_cap;
	struct fline *lines;
	size_t nlines, lines_cap;
	struct tachi_idset index;
	struct lslot *lcache;
	bool line_was_frame; /* the line other_line took was a frame line, of frame line_id */
	uint32_t line_id;

	/* the program: the dso the first sample's comm names, pprof's main binary */
	char *program;

	/* the root frame of the last comm */
	char *comm;
	size_t comm_len, comm_cap;
	int32_t comm_pid;
	uint32_t comm_frame;
	bool comm_valid;

	/* the sample being read: frames innermost first, the root added at its end */
	bool in_sample;   /* an event line of the chosen event was read */
	bool skipping;    /* an event line of another event, or a bad one, was read */
	struct hdr h;
	char *hbuf;       /* the event line's copy (h points into it) */
	size_t hbuf_cap;
	uint64_t h_line;
	uint32_t *frames;
	size_t frames_cap;
	uint32_t depth;
	uint32_t *prev;   /* the last sample's frames, for same_outer */
	size_t prev_cap;
	uint32_t prev_depth;
	uint64_t prev_tid;
	bool has_prev;

	uint64_t clock;   /* the last timestamp */
	uint64_t total;   /* weight so far */
	uint64_t samples, bad_lines, first_bad, events;
	const char *first_bad_what;
	bool warned_counts, finished;
	bool pending;     /* a whole sample read on the line that ended the one before */
};

/* Byte classes by table: one load a byte where the scans of every line spend their time. */
enum { C_WS = 1, C_DIGIT = 2, C_WORD = 4 };
static const uint8_t byte_class[256] = {
	[' '] = C_WS, ['\t'] = C_WS, ['\r'] = C_WS, ['\f'] = C_WS, ['\v'] = C_WS,
	['0' ... '9'] = C_DIGIT | C_WORD, ['a' ... 'z'] = C_WORD, ['A' ... 'Z'] = C_WORD,
	['_'] = C_WORD,
};

static inline bool is_ws(char c)
{
	return byte_class[(unsigned char)c] & C_WS;
}

static inline bool is_digit(char c)
{
	return byte_class[(unsigned char)c] & C_DIGIT;
}

static inline bool is_word(char c)
{
	return byte_class[(unsigned char)c] & C_WORD;
}

/* tachi_parse_dec, inline for the up to 19 digits that cannot overflow: an event line
 * has four numbers. */
static inline bool parse_dec(const char *s, size_t n, uint64_t max, uint64_t *out)
{
	if (!n || n > 19)
		return tachi_parse_dec(s, n, max, out);
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		if (!is_digit(s[i]))
			return false;
		v = v * 10 + (uint64_t)(s[i] - '0');
	}
	if (v > max)
		return false;
	*out = v;
	return true;
}

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

/* ---- the event line ---- */

static bool is_frame_line(const char *s, size_t n);

/* At p (a white-space run's start): blanks, digits, slashes, digits, a blank, as the
 * script's pattern wants them. */
static bool pid_word(const char *p, const char *end, const char **d1, size_t *n1,
		     const char **d2, size_t *n2)
{
	while (p < end && is_ws(*p))
		p++;
	*d1 = p;
	while (p < end && is_digit(*p))
		p++;
	*n1 = (size_t)(p - *d1);
	if (!*n1)
		return false;
	while (p < end && *p == '/')
		p++;
	*d2 = p;
	while (p < end && is_digit(*p))
		p++;
	*n2 = (size_t)(p - *d2);
	return p < end && is_ws(*p);
}

/* The first "secs.frac:" word after p, as µs; *after its end. */
static bool find_time(const char *p, const char *end, uint64_t *us, const char **after)
{
	while (p < end) {
		while (p < end && is_ws(*p))
			p++;
		const char *w = p;
		while (p < end && !is_ws(*p))
			p++;
		const char *dot = memchr(w, '.', (size_t)(p - w));
		if (p - w < 4 || p[-1] != ':' || !dot)
			continue;
		uint64_t s, f = 0;
		size_t fl = (size_t)(p - 1 - dot - 1);
		if (!parse_dec(w, (size_t)(dot - w), UINT64_MAX / 2000000, &s) || !fl ||
		    !parse_dec(dot + 1, fl < 6 ? fl : 6, UINT64_MAX, &f) ||
		    (fl > 6 && !parse_dec(dot + 7, fl - 6, UINT64_MAX, &(uint64_t){ 0 })))
			continue;
		for (size_t k = fl; k < 6; k++)
			f *= 10;
		*us = s * 1000000 + f;
		*after = p;
		return true;
	}
	return false;
}

/* ":\s*(\d+)*\s+(\S+):\s*$": the period and the event at the line's end. */
static void find_event(struct hdr *h, const char *s, const char *end)
{
	while (end > s && is_ws(end[-1]))
		end--;
	if (end - s < 2 || end[-1] != ':')
		return;
	const char *t = end - 1;
	while (t > s && !is_ws(t[-1]))
		t--;
	if (t == end - 1)
		return;
	const char *w = t;
	while (w > s && is_ws(w[-1]))
		w--;
	if (w == t)
		return;
	const char *d = w;
	while (d > s && is_digit(d[-1]))
		d--;
	const char *c = d;
	if (d < w)
		while (c > s && is_ws(c[-1]))
			c--;
	if (c == s || c[-1] != ':')
		return;
	h->event = t;
	h->event_len = (size_t)(end - 1 - t);
	h->has_event = true;
	if (d < w && parse_dec(d, (size_t)(w - d), UINT64_MAX, &h->period) && h->period)
		h->has_period = true;
}

/* A capture without call chains (perf record without -g) prints the sample's ip, sym and
 * dso after the event: "secs.frac: [period] event: addr sym (dso)". p is after the time. */
static void find_event_mid(struct hdr *h, const char *p, const char *end)
{
	while (p < end && is_ws(*p))
		p++;
	const char *d = p;
	while (p < end && is_digit(*p))
		p++;
	const char *de = p;
	if (p > d && (p == end || !is_ws(*p)))
		p = de = d;
	while (p < end && is_ws(*p))
		p++;
	const char *e = p;
	while (p < end && !is_ws(*p))
		p++;
	if (p - e < 2 || p[-1] != ':' || p == end)
		return;
	const char *f = p;
	while (f < end && is_ws(*f))
		f++;
	/* trace fields after a tracepoint's name are no frame: the event is then unnamed,
	 * as the script reads it */
	if (!is_frame_line(f, (size_t)(end - f)))
		return;
	h->event = e;
	h->event_len = (size_t)(p - 1 - e);
	h->has_event = true;
	if (de > d && parse_dec(d, (size_t)(de - d), UINT64_MAX, &h->period) && h->period)
		h->has_period = true;
	h->frame = f;
	h->frame_len = (size_t)(end - f);
}

/* Parses an event line (s[0] is not white space). False when it is not one; h->bad says
 * why one cannot be read. */
static bool parse_event_line(const char *s, size_t n, struct hdr *h)
{
	const char *end = s + n, *d1, *d2;
	size_t n1, n2;
	memset(h, 0, sizeof(*h));
	for (const char *p = s + 2; p < end; p++) {
		if (!is_ws(*p) || is_ws(p[-1]))
			continue;
		if (!pid_word(p, end, &d1, &n1, &d2, &n2))
			continue;
		uint64_t a, b = 0;
		if (!parse_dec(d1, n1, UINT64_MAX, &a) ||
		    (n2 && !parse_dec(d2, n2, UINT64_MAX, &b)))
			h->bad = "pid or tid past 2^64-1";
		h->comm = s;
		h->comm_len = (size_t)(p - s);
		bool has_tid = n2 && !(n2 == 1 && d2[0] == '0');
		h->tid = has_tid ? b : a;
		h->pid = has_tid && a <= INT32_MAX ? (int32_t)a : -1;
		const char *rest = (n2 ? d2 + n2 : d1 + n1);
		const char *after = end;
		h->has_ts = find_time(rest, end, &h->ts, &after);
		find_event(h, s, end);
		if (!h->has_event && h->has_ts)
			find_event_mid(h, after, end);
		return true;
	}
	return false;
}

/* ---- frame lines ---- */

/* Splits "sym (dso)" at the last " (" whose ")" ends the word it starts; rawfunc must not
 * be empty (stackcollapse-perf.pl's "(.+) \((\S*)\)"). */
static bool split_frame(const char *s, const char *end, const char *f0, const char **fe,
			const char **m, size_t *ml)
{
	for (const char *q = end - 2; q > f0; q--) {
		if (q[0] != ' ' || q[1] != '(')
			continue;
		const char *w = q + 2, *we = w, *close = NULL;
		while (we < end && !is_ws(*we)) {
			if (*we == ')')
				close = we;
			we++;
		}
		if (!close)
			continue;
		*fe = q;
		*m = w;
		*ml = (size_t)(close - w);
		return true;
	}
	(void)s;
	return false;
}

/* pc, sym and dso of a frame line (leading white space gone). */
static bool parse_frame_line(const char *s, size_t n, const char **pc, size_t *pcl,
			     const char **fn, size_t *fnl, const char **mod, size_t *modl)
{
	const char *end = s + n, *p = s;
	while (p < end && is_word(*p))
		p++;
	if (p == s)
		return false;
	*pc = s;
	*pcl = (size_t)(p - s);
	const char *f0 = p;
	while (f0 < end && is_ws(*f0))
		f0++;
	const char *fe;
	if (split_frame(s, end, f0, &fe, mod, modl)) {
		*fn = f0;
		*fnl = (size_t)(fe - f0);
		return true;
	}
	/* "addr  (dso)": the script's sym is then one blank */
	if (f0 - p >= 2 && f0[-1] == ' ' && f0 < end && f0[0] == '(' &&
	    split_frame(s, end, f0 - 2, &fe, mod, modl) && fe == f0 - 1) {
		*fn = f0 - 2;
		*fnl = 1;
		return true;
	}
	return false;
}

static bool is_frame_line(const char *s, size_t n)
{
	const char *pc, *fn, *mod;
	size_t pcl, fnl, modl;
	return parse_frame_line(s, n, &pc, &pcl, &fn, &fnl, &mod, &modl);
}

static bool is_perf_map(const char *m, size_t n)
{
	/* the script's m:/tmp/perf-\d+\.map: */
	for (size_t i = 0; i + 15 <= n; i++) {
		if (memcmp(m + i, "/tmp/perf-", 10))
			continue;
		size_t k = i + 10, d = k;
		while (k < n && is_digit(m[k]))
			k++;
		if (k > d && k + 4 <= n && !memcmp(m + k, ".map", 4))
			return true;
	}
	return false;
}

static bool all_hex(const char *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (tachi_hexval(p[i]) < 0)
			return false;
	return n > 0;
}

static int intern(struct tach_reader *r, const char *file, size_t fl, const char *func,
		  size_t nl, int32_t line, const struct tach_frame_native *n, uint32_t *id)
{
	struct tach_frame f = { 0, 0, line, line, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, file, fl, &f.file) ||
	    tach_dict_intern_string(&r->dict, func, nl, &f.func) ||
	    tach_dict_intern_frame_native(&r->dict, &f, n, id))
		return nomem(r);
	return TACH_OK;
}

/* Whether a process's comm names the program at path: its base name, which the kernel cuts
 * at 15 bytes. */
static bool comm_names(const char *comm, size_t cl, const char *path, size_t pl)
{
	size_t bl;
	const char *b = tachi_base_name(path, pl, &bl);
	/* or a version after it: comm python3 runs python3.12 */
	return cl && (bl == cl || (cl == 15 && bl > 15) || (bl > cl + 1 && b[cl] == '.')) &&
	       !memcmp(b, comm, cl);
}

/* The mapping of a dso, one per path. perf script prints no ranges, so it has none: start,
 * limit and file offset are 0 (unknown), which names the library of each address (pprof
 * groups by it) without claiming a load address nobody printed. perf symbolized the dso
 * when it wrote the script; what it left [unknown] it could not name, and neither could
 * anyone without the range: so the mapping says it has functions. 0 when the dso names no
 * file ("[unknown]"). */
static int dso_mapping(struct tach_reader *r, const char *mod, size_t modl, uint32_t *id)
{
	struct perf_rstate *st = r->state;
	*id = 0;
	if (!modl || (modl == 9 && !memcmp(mod, "[unknown]", 9)))
		return TACH_OK;
	struct tach_mapping m = { 0, 0, 0, 0, TACH_NO_STRING, TACH_MAPPING_HAS_FUNCTIONS };
	if (tach_dict_intern_string(&r->dict, mod, modl, &m.file) ||
	    tach_dict_intern_mapping(&r->dict, &m, id))
		return nomem(r);
	/* writers take the meta after the first sample */
	if (!st->samples && !st->program && comm_names(st->h.comm, st->h.comm_len, mod, modl)) {
		if (!(st->program = strndup(mod, modl)))
			return nomem(r);
		r->meta.program = st->program;
	}
	return TACH_OK;
}

/* The frame of a frame line; *id NO_FRAME when the line is skipped, and *ok false when it
 * is no frame line. */
static int line_frame(struct tach_reader *r, const char *s, size_t n, uint32_t *id, bool *ok)
{
	const struct perf_rstate *st = r->state;
	const char *pc, *fn, *mod;
	size_t pcl, fnl, modl;
	*ok = parse_frame_line(s, n, &pc, &pcl, &fn, &fnl, &mod, &modl);
	*id = NO_FRAME;
	if (!*ok)
		return TACH_OK;
	/* s/\+0x[\da-f]+$// */
	for (size_t k = fnl; k >= 4; k--) {
		char c = fn[k - 1];
		if ((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f'))
			continue;
		if (k < fnl && c == 'x' && fn[k - 2] == '0' && fn[k - 3] == '+')
			fnl = k - 3;
		break;
	}
	if (fnl && fn[0] == '(')
		return TACH_OK;
	if (fnl > 4 && !memcmp(fn, "py::", 4) && is_perf_map(mod, modl)) {
		const char *colon = memchr(fn + 4, ':', fnl - 4);
		if (colon)
			return intern(r, colon + 1, (size_t)(fn + fnl - colon - 1), fn + 4,
				      (size_t)(colon - fn - 4), TACH_NO_LINE, NULL, id);
	}
	/* A native frame keeps the address perf printed and its dso's mapping. perf prints
	 * "(inlined)" in place of the dso for a function inlined into the next frame out,
	 * whose address it repeats: an inline frame, in no file of its own, that the
	 * location of the next frame holds (pprof's lines of one location). */
	struct tach_frame_native nat = { 0, 0, 0 };
	bool hex = all_hex(pc, pcl) && pcl <= 16;
	int rc;
	if (hex)
		for (size_t i = 0; i < pcl; i++)
			nat.address = nat.address << 4 | (uint64_t)tachi_hexval(pc[i]);
	if (modl == 7 && !memcmp(mod, "inlined", 7)) {
		nat.inlined = 1;
		return intern(r, "", 0, fn, fnl, TACH_NO_LINE, hex && !st->no_addresses ? &nat : NULL, id);
	}
	if (hex && (rc = dso_mapping(r, mod, modl, &nat.mapping)))
		return rc;
	const struct tach_frame_native *np = st->no_addresses ? NULL : &nat;
	/* An [unknown] symbol keeps its address in the name: without the dso's load address
	 * no file offset can be told, so it is not named module+offset (tachfmt(5)). */
	if (fnl == 9 && !memcmp(fn, "[unknown]", 9) && hex && !st->no_unknown_addresses) {
		char a[20] = "0x";
		memcpy(a + 2, pc, pcl);
		return intern(r, mod, modl, a, pcl + 2, TACH_NO_LINE, np, id);
	}
	return intern(r, mod, modl, fn, fnl, TACH_NO_LINE, np, id);
}

static bool fline_eq(void *ctx, uint32_t id, const void *key)
{
	const struct perf_rstate *st = ctx;
	const struct fline *l = &st->lines[id];
	const struct perf_lkey *k = key;
	return l->len == k->n && !memcmp(st->bytes + l->off, k->p, k->n);
}

/* A frame line seen before: its frame. */
static bool seen_frame(struct perf_rstate *st, const char *s, size_t n, uint64_t h, uint32_t *frame)
{
	struct perf_lkey key = { s, n };
	uint32_t id;
	if (!tachi_idset_find(&st->index, h, &key, fline_eq, st, &id))
		return false;
	*frame = st->lines[id].frame;
	return true;
}

/* Whether a byte of [p, end) is 0x20 or below: eight at a time (a byte below 0x21 with
 * no high bit borrows into its own high bit first, so a hit is never missed nor made up). */
static bool has_low_byte(const char *p, const char *end)
{
	const uint64_t ones = 0x0101010101010101u;
	for (; end - p >= 8; p += 8) {
		uint64_t x;
		memcpy(&x, p, 8);
		if ((x - ones * 0x21) & ~x & ones * 0x80)
			return true;
	}
	for (; p < end; p++)
		if ((unsigned char)*p <= 0x20)
			return true;
	return false;
}

/* The start of the last white-space-free run of [p, end): the dso word of a frame line,
 * found with memrchr rather than a byte loop (it is most of a line's scanning). */
static const char *last_word(const char *p, const char *end)
{
	const char *sp = memrchr(p, ' ', (size_t)(end - p));
	const char *t = sp ? sp + 1 : p;
	if (!has_low_byte(t, end))
		return t;
	for (t = end; t > p && !is_ws(t[-1]);)
		t--;
	return t;
}

/* With addresses=no, the key of frame line s: " sym (dso)", without the address word and
 * the symbol's "+0xoff", so that the lines of one function share it and memory follows
 * functions, not addresses. The leading blank keeps it apart from whole lines (which have
 * none). False for a line of another shape, or an [unknown] sym, whose name is its address
 * (unless unknown-addresses=no): the whole line is then its key. */
static bool key_of(struct perf_rstate *st, const char *s, size_t n)
{
	const char *end = s + n, *p = s, *t = end;
	while (p < end && is_word(*p))
		p++;
	if (p == s || p == end || !is_ws(*p))
		return false;
	while (p < end && is_ws(*p))
		p++;
	t = last_word(p, end);
	if (t - p < 2 || t[-1] != ' ' || t[0] != '(' || end[-1] != ')')
		return false;
	const char *se = t - 1, *h = se;
	while (h > p && ((h[-1] >= '0' && h[-1] <= '9') || (h[-1] >= 'a' && h[-1] <= 'f')))
		h--;
	if (h < se && h - p >= 4 && h[-1] == 'x' && h[-2] == '0' && h[-3] == '+')
		se = h - 3;
	if (se - p == 9 && !memcmp(p, "[unknown]", 9) && !st->no_unknown_addresses)
		return false;
	size_t sl = (size_t)(se - p), dl = (size_t)(end - t), kl = sl + dl + 2;
	if (!TACHI_RESERVE(st->kbuf, st->kbuf_cap, kl))
		return false;
	st->kbuf[0] = ' ';
	memcpy(st->kbuf + 1, p, sl);
	st->kbuf[sl + 1] = ' ';
	memcpy(st->kbuf + sl + 2, t, dl);
	st->key = st->kbuf;
	st->key_len = kl;
	return true;
}

/* The key of frame line s (see key_of) into st->key. */
static void line_key(struct perf_rstate *st, const char *s, size_t n)
{
	if (!st->no_addresses || !key_of(st, s, n)) {
		st->key = s;
		st->key_len = n;
	}
	st->key_hash = tachi_hash(st->key, st->key_len);
}

/* A new frame line's frame, remembered under st->key; *ok false when it is no frame line. */
static int new_frame(struct tach_reader *r, const char *s, size_t n, uint32_t *frame, bool *ok)
{
	struct perf_rstate *st = r->state;
	int rc = line_frame(r, s, n, frame, ok);
	if (rc || !*ok || !st->no_addresses)
		return rc;
	s = st->key;
	n = st->key_len;
	uint64_t h = st->key_hash;
	size_t need;
	if (st->nlines >= UINT32_MAX - 1 || tachi_add_overflows(st->bytes_len, n, &need) ||
	    !TACHI_RESERVE(st->bytes, st->bytes_cap, need ? need : 1) ||
	    !TACHI_RESERVE(st->lines, st->lines_cap, st->nlines + 1))
		return nomem(r);
	memcpy(st->bytes + st->bytes_len, s, n);
	uint32_t id = (uint32_t)st->nlines;
	st->lines[id] = (struct fline){ st->bytes_len, (uint32_t)n, *frame };
	st->bytes_len = need;
	if (!tachi_idset_insert(&st->index, h, id))
		return nomem(r);
	st->nlines++;
	return TACH_OK;
}

/* ---- events and weights ---- */

static bool event_is(const char *e, size_t n, const char *name)
{
	size_t l = strlen(name);
	return (n == l && !memcmp(e, name, l)) || (n > l && !memcmp(e, name, l) && e[l] == ':');
}

/* Adds an event's name (cut for messages) to a list of names, once. */
static void note_name(char (*list)[EVENT_NAME_MAX + 1], size_t *count, const char *e,
		      size_t len)
{
	size_t n = len < EVENT_NAME_MAX ? len : EVENT_NAME_MAX;
	for (size_t i = 0; i < *count; i++)
		if (strlen(list[i]) == n && !memcmp(list[i], e, n))
			return;
	if (*count < MAX_EVENTS) {
		memcpy(list[*count], e, n);
		list[(*count)++][n] = 0;
	}
}

static void note_other(struct perf_rstate *st, const struct hdr *h, uint64_t line)
{
	if (!st->skipped++)
		st->first_skipped = line;
	note_name(st->others, &st->nothers, h->event, h->event_len);
}

/* Whether a sample of this event line is read; false also when out of memory. */
static bool wanted(struct perf_rstate *st, const struct hdr *h, uint64_t line, bool *nomem)
{
	*nomem = false;
	if (!h->has_event)
		return true;
	if (!st->event_set) {
		if (st->event_opt && !event_is(h->event, h->event_len, st->event_opt)) {
			note_other(st, h, line);
			return false;
		}
		/* not strndup: a name may hold a NUL */
		if (!(st->event = malloc(h->event_len + 1))) {
			*nomem = true;
			return false;
		}
		memcpy(st->event, h->event, h->event_len);
		st->event[h->event_len] = 0;
		st->event_len = h->event_len;
		st->event_set = true;
		return true;
	}
	if (h->event_len == st->event_len && !memcmp(h->event, st->event, h->event_len))
		return true;
	if (st->event_opt && event_is(h->event, h->event_len, st->event_opt)) {
		note_name(st->also, &st->nalso, h->event, h->event_len);
		return true;
	}
	note_other(st, h, line);
	return false;
}

static void decide_weights(struct tach_reader *r, const struct hdr *h)
{
	struct perf_rstate *st = r->state;
	st->pw.decided = true;
	if (st->pw.mode != TACHI_PERF_W_AUTO || !h->has_event)
		return;
	bool clock = event_is(h->event, h->event_len, "cpu-clock") ||
		     event_is(h->event, h->event_len, "task-clock");
	if (clock && h->has_period)
		tachi_perf_weights_clock(&st->pw, &r->meta, h->period);
	if (clock)
		return;
	if (h->has_period) {
		st->warned_counts = true;
		tachi_warn(&r->warn, TACH_POS_LINE, st->h_line,
			   "event %.*s: periods are event counts, not time; each sample is read as one",
			   (int)(h->event_len < EVENT_NAME_MAX ? h->event_len : EVENT_NAME_MAX),
			   h->event);
	}
	/* the event named as the period's type even where perf printed no period (0) */
	if (st->event)
		tachi_perf_weights_count(&st->pw, &r->meta, st->event, h->has_period, h->period);
}

/* ---- samples ---- */

static int root_frame(struct tach_reader *r, const struct hdr *h, uint32_t *id)
{
	struct perf_rstate *st = r->state;
	if (st->comm_valid && st->comm_pid == h->pid && st->comm_len == h->comm_len &&
	    !memcmp(st->comm, h->comm, h->comm_len)) {
		*id = st->comm_frame;
		return TACH_OK;
	}
	int rc = intern(r, "[comm]", 6, h->comm, h->comm_len, h->pid, NULL, id);
	if (rc)
		return rc;
	if (!TACHI_RESERVE(st->comm, st->comm_cap, h->comm_len + 1))
		return nomem(r);
	memcpy(st->comm, h->comm, h->comm_len);
	st->comm_len = h->comm_len;
	st->comm_pid = h->pid;
	st->comm_frame = *id;
	st->comm_valid = true;
	return TACH_OK;
}

static int push_frame(struct tach_reader *r, uint32_t id)
{
	struct perf_rstate *st = r->state;
	if (st->depth >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "call chain deeper than %u frames (see max-depth)", r->lim.max_depth);
	if (st->depth >= st->frames_cap && !TACHI_RESERVE(st->frames, st->frames_cap, st->depth + 1))
		return nomem(r);
	st->frames[st->depth++] = id;
	return TACH_OK;
}

/* The sample read so far, with its root, into r->sample. */
static int make_sample(struct tach_reader *r)
{
	struct perf_rstate *st = r->state;
	const struct hdr *h = &st->h;
	uint32_t root;
	int rc = root_frame(r, h, &root);
	if (!rc)
		rc = push_frame(r, root);
	if (rc)
		return rc;
	if (!st->pw.decided)
		decide_weights(r, h);
	uint64_t w = tachi_perf_weight(&st->pw, h->has_period, h->period);
	if (w > UINT64_MAX - st->total)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->h_line,
			     "the periods add up past 2^64-1, more than a sum can hold");
	if (w > r->lim.max_samples - st->total)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, st->h_line,
			     "more than %llu samples (see max-samples)",
			     (unsigned long long)r->lim.max_samples);
	st->total += w;
	uint32_t same = 0, d = st->depth;
	if (st->has_prev && st->prev_tid == h->tid) {
		uint32_t m = d < st->prev_depth ? d : st->prev_depth;
		while (same < m && st->prev[st->prev_depth - 1 - same] == st->frames[d - 1 - same])
			same++;
	}
	if (d > st->prev_cap && !TACHI_RESERVE(st->prev, st->prev_cap, d))
		return nomem(r);
	memcpy(st->prev, st->frames, d * sizeof(*st->prev));
	st->prev_depth = d;
	st->prev_tid = h->tid;
	st->has_prev = true;
	/* samples without a time are one interval apart */
	uint64_t step = r->meta.interval_us ? r->meta.interval_us : 1;
	st->clock = h->has_ts ? h->ts : st->clock + (st->samples ? step : 0);
	struct tach_sample *s = &r->sample;
	s->thread_id = h->tid;
	s->interp_id = 0;
	s->timestamp_us = st->clock;
	s->status = TACH_STATUS_UNKNOWN;
	s->weight = w;
	s->time_ns = tachi_perf_time(&st->pw, h->has_period, h->period);
	s->depth = d;
	s->same_outer = same;
	s->frames = st->frames;
	if (st->pw.count_event)
		r->ext = tachi_perf_values(&st->pw, w, h->has_period, h->period);
	st->samples++;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += w;
	return TACH_OK;
}

static const char no_event_line[] = "no event line (comm pid/tid ...) found";

static int bad_line(struct tach_reader *r, const char *what)
{
	struct perf_rstate *st = r->state;
	if (!st->bad_lines++) {
		st->first_bad = r->in.line;
		st->first_bad_what = what;
	}
	if (r->lim.strict)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, r->in.line, "%s", what);
	return TACH_OK;
}

/* An event line starts a sample (kept in st->h, copied: the line buffer moves); a capture
 * without call chains gives the sample its one frame on the same line. */
static int start_sample(struct tach_reader *r, const char *s, size_t n, const struct hdr *hp)
{
	struct perf_rstate *st = r->state;
	struct hdr h = *hp;
	bool oom;
	st->depth = 0;
	st->in_sample = false;
	st->skipping = true;
	if (h.bad)
		return bad_line(r, h.bad);
	if (!wanted(st, &h, r->in.line, &oom))
		return oom ? nomem(r) : TACH_OK;
	st->events++;
	if (!TACHI_RESERVE(st->hbuf, st->hbuf_cap, n + 1))
		return nomem(r);
	memcpy(st->hbuf, s, n);
	h.comm = st->hbuf + (h.comm - s);
	if (h.has_event)
		h.event = st->hbuf + (h.event - s);
	if (h.frame_len)
		h.frame = st->hbuf + (h.frame - s);
	st->h = h;
	st->h_line = r->in.line;
	st->in_sample = true;
	st->skipping = false;
	if (!h.frame_len)
		return TACH_OK;
	uint32_t id;
	bool ok;
	int rc = TACH_OK;
	line_key(st, h.frame, h.frame_len);
	if (!seen_frame(st, st->key, st->key_len, st->key_hash, &id))
		rc = new_frame(r, h.frame, h.frame_len, &id, &ok);
	return rc || id == NO_FRAME ? rc : push_frame(r, id);
}

/* The names of the events read, for the warning: the first, and those the option took too. */
static void read_names(const struct perf_rstate *st, char *buf, size_t cap)
{
	int n = (int)(st->event_len < EVENT_NAME_MAX ? st->event_len : EVENT_NAME_MAX);
	snprintf(buf, cap, "%.*s", n, st->event);
	for (size_t i = 0; i < st->nalso; i++)
		snprintf(buf + strlen(buf), cap - strlen(buf), ", %s", st->also[i]);
}

/* The frame lines seen serve reading alone: given back at the end, so that a writer
 * that works at its close (sorting folded lines) does not hold them too. */
static void drop_index(struct perf_rstate *st)
{
	free(st->kbuf);
	free(st->bytes);
	free(st->lines);
	tachi_idset_free(&st->index);
	free(st->lcache);
	st->lcache = NULL;
	st->kbuf = st->bytes = NULL;
	st->lines = NULL;
	st->kbuf_cap = st->bytes_cap = st->bytes_len = st->lines_cap = st->nlines = 0;
}

static int finish(struct tach_reader *r)
{
	struct perf_rstate *st = r->state;
	if (st->finished)
		return TACH_EOF;
	st->finished = true;
	drop_index(st);
	tachi_in_drop_buffer(&r->in);
	if (st->bad_lines && !st->samples && !st->skipped && !st->events)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, st->first_bad, "%s%s",
			     st->first_bad_what == no_event_line ? "not perf script output: " : "",
			     st->first_bad_what);
	if (st->event_opt && !st->event_set) {
		char list[MAX_EVENTS * (EVENT_NAME_MAX + 2) + 1] = "";
		for (size_t i = 0; i < st->nothers; i++)
			snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%s",
				 i ? ", " : "", st->others[i]);
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_NONE, 0,
			     "no samples of event %.*s; the capture has: %s", EVENT_NAME_MAX,
			     st->event_opt, st->nothers ? list : "no named events");
	}
	if (st->bad_lines)
		tachi_warn(&r->warn, TACH_POS_LINE, st->first_bad,
			   "%llu line%s not understood and skipped; the first is here",
			   (unsigned long long)st->bad_lines, st->bad_lines == 1 ? "" : "s");
	if (st->skipped) {
		char names[(MAX_EVENTS + 1) * (EVENT_NAME_MAX + 2) + 1];
		read_names(st, names, sizeof(names));
		tachi_warn(&r->warn, TACH_POS_LINE, st->first_skipped,
			   "%llu sample%s of other events (%s%s) skipped; only %s read (the event "
			   "option picks another)",
			   (unsigned long long)st->skipped, st->skipped == 1 ? "" : "s",
			   st->others[0], st->nothers > 1 ? ", ..." : "", names);
	}
	return TACH_EOF;
}

/* Ends the sample read so far, if any; *done when that gave one. */
static int end_sample(struct tach_reader *r, bool *done)
{
	struct perf_rstate *st = r->state;
	int rc = st->in_sample ? make_sample(r) : TACH_OK;
	*done = st->in_sample && !rc;
	st->in_sample = st->skipping = false;
	return rc;
}

/* A line that is not a frame line seen before: an event line (one with a time or an
 * event is one wherever it stands, so that captures whose frame lines have no indent, or
 * whose event lines have one, read), else a frame line, else what its indent says. */
static int other_line(struct tach_reader *r, const char *s, size_t n, size_t k, bool *done)
{
	struct perf_rstate *st = r->state;
	struct hdr h;
	bool ev = parse_event_line(s + k, n - k, &h);
	if (ev && (h.has_ts || h.has_event || h.bad)) {
		int rc = end_sample(r, done);
		if (rc || (rc = start_sample(r, s + k, n - k, &h)))
			return rc;
		/* a line with its frame is a whole sample; the one it ended goes first */
		if (st->in_sample && h.frame_len) {
			if (*done)
				st->pending = true;
			else
				return end_sample(r, done);
		}
		return TACH_OK;
	}
	if (!st->in_sample) {
		if (st->skipping && is_frame_line(s + k, n - k))
			return TACH_OK;
		if (ev && !k)
			return start_sample(r, s, n, &h);
		return bad_line(r, k ? "a frame line outside a sample" : no_event_line);
	}
	uint32_t id;
	bool ok;
	int rc = new_frame(r, s + k, n - k, &id, &ok);
	if (rc)
		return rc;
	if (ok) {
		st->line_was_frame = true;
		st->line_id = id;
		return id == NO_FRAME ? TACH_OK : push_frame(r, id);
	}
	if (ev && !k) {
		/* an event line with no blank line before it ends the sample before */
		if ((rc = end_sample(r, done)))
			return rc;
		return start_sample(r, s, n, &h);
	}
	return bad_line(r, "not a perf script frame line (addr sym (dso))");
}

/* The line cache's slot for frame line s, its hash set; NULL when s is too long for it. */
static struct lslot *cached_line(struct perf_rstate *st, const char *s, size_t n)
{
	if (n > LCACHE_TEXT)
		return NULL;
	if (!st->lcache && !(st->lcache = calloc(LCACHE_SLOTS, sizeof(*st->lcache))))
		return NULL;
	uint64_t h = tachi_hash(s, n);
	struct lslot *c = &st->lcache[h & (LCACHE_SLOTS - 1)];
	if (c->h != h) {
		c->h = h;
		c->len = 0;
	}
	return c;
}

/* With addresses kept, frame lines are not remembered by their text (it would cost more
 * than the frame, about 90 bytes an address): a line the cache does not hold is read
 * again, and the dictionary, which holds each frame once, gives the same frame. */
static int frame_or_other(struct tach_reader *r, const char *s, size_t n, size_t k,
			  struct lslot *c, bool *done)
{
	struct perf_rstate *st = r->state;
	st->line_was_frame = false;
	int rc = other_line(r, s, n, k, done);
	if (!rc && c && st->line_was_frame) {
		c->len = (uint16_t)(n - k);
		c->frame = st->line_id;
		memcpy(c->text, s + k, n - k);
	}
	return rc;
}

/* Handles one line; *done when it completed a sample. */
static int on_line(struct tach_reader *r, const char *s, size_t n, bool *done)
{
	struct perf_rstate *st = r->state;
	if (n > MAX_LINE)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "line longer than %u bytes", MAX_LINE);
	if (n && s[0] == '#')
		return TACH_OK;
	while (n && is_ws(s[n - 1]))
		n--;
	if (!n)
		return end_sample(r, done);
	size_t k = 0;
	while (k < n && is_ws(s[k]))
		k++;
	uint32_t id;
	if (st->in_sample) {
		struct lslot *c = cached_line(st, s + k, n - k);
		if (c && c->len == n - k && !memcmp(c->text, s + k, n - k)) {
			id = c->frame;
			return id == NO_FRAME ? TACH_OK : push_frame(r, id);
		}
		if (!st->no_addresses)
			return frame_or_other(r, s, n, k, c, done);
		line_key(st, s + k, n - k);
		if (seen_frame(st, st->key, st->key_len, st->key_hash, &id)) {
			if (c) {
				c->len = (uint16_t)(n - k);
				c->frame = id;
				memcpy(c->text, s + k, n - k);
			}
			return id == NO_FRAME ? TACH_OK : push_frame(r, id);
		}
	}
	return other_line(r, s, n, k, done);
}

/* perf script ends every sample with a blank line: one without may be cut short, and
 * stackcollapse-perf.pl drops it too; a capture cut inside its first sample has none. */
static int at_end(struct tach_reader *r)
{
	struct perf_rstate *st = r->state;
	if (st->in_sample && !st->finished) {
		st->in_sample = false;
		if (!st->samples)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_LINE, st->h_line,
				     "the capture is cut short inside its first sample (no blank "
				     "line after it)");
		tachi_warn(&r->warn, TACH_POS_LINE, st->h_line,
			   "the last sample has no blank line after it (the capture may be cut "
			   "short): dropped");
	}
	return finish(r);
}

static int pr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct perf_rstate *st = r->state;
	for (;;) {
		const char *s;
		size_t n;
		bool done = false;
		int rc;
		if (st->pending) {
			st->pending = false;
			if ((rc = end_sample(r, &done)))
				return rc;
			*out = &r->sample;
			return TACH_OK;
		}
		rc = tachi_in_line(r, &s, &n);
		if (rc == TACH_EOF)
			return at_end(r);
		if (rc)
			return rc;
		if ((rc = on_line(r, s, n, &done)))
			return rc;
		if (done) {
			*out = &r->sample;
			return TACH_OK;
		}
		/* a stream gives no sample: endless noise ends as a whole input would */
		if (!st->samples && tachi_in_line_offset(r) > r->lim.max_input)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
				     "no sample in the first %llu bytes (see max-input)",
				     (unsigned long long)r->lim.max_input);
	}
}

static int pr_option(struct tach_reader *r, const char *key, const char *value)
{
	struct perf_rstate *st = r->state;
	bool b;
	if (!strcmp(key, "event")) {
		if (!value[0] || strlen(value) > EVENT_OPT_MAX)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "event must be 1 to %d bytes", EVENT_OPT_MAX);
		free(st->event_opt);
		if (!(st->event_opt = strdup(value)))
			return nomem(r);
		return TACH_OK;
	}
	if (!strcmp(key, "addresses"))
		return tachi_parse_bool(value, &b) ? (st->no_addresses = !b, TACH_OK)
						   : RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
							   "addresses must be yes or no, not %s", value);
	if (!strcmp(key, "unknown-addresses"))
		return tachi_parse_bool(value, &b) ? (st->no_unknown_addresses = !b, TACH_OK)
						   : RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
							   "unknown-addresses must be yes or no, not %s", value);
	if (!strcmp(key, "weight"))
		return tachi_perf_weight_mode(&st->pw, value)
			       ? TACH_OK
			       : RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				       "weight must be auto, period or samples, not %s", value);
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "perf reader has no option %s", key);
}


/* The program, pprof's main binary and Gecko's product: the first dso in the first MiB
 * whose base name the first sample's comm names, in that sample or a later one (a
 * program's first samples may all be in the loader or the kernel). Writers take the meta
 * after the first sample, so it is looked for ahead, in what the input buffer holds
 * anyway. */
static int find_program(struct tach_reader *r)
{
	struct perf_rstate *st = r->state;
	const uint8_t *p;
	size_t n, at = 0, len, k;
	int rc = tachi_in_peek(&r->in, TACHI_PROBE_MORE, &r->err, &p, &n);
	const char *s, *comm = NULL;
	size_t cl = 0;
	struct hdr h;
	while (!rc && tachi_perf_probe_next(p, n, &at, &s, &len, &k)) {
		const char *pc, *fn, *mod;
		size_t pcl, fnl, modl;
		if (comm && parse_frame_line(s + k, len - k, &pc, &pcl, &fn, &fnl, &mod, &modl) &&
		    comm_names(comm, cl, mod, modl)) {
			if (!(st->program = strndup(mod, modl)))
				return nomem(r);
			r->meta.program = st->program;
			return TACH_OK;
		}
		if (parse_event_line(s + k, len - k, &h) && !h.bad && !comm) {
			comm = h.comm;
			cl = h.comm_len;
		}
	}
	return rc;
}

static int pr_open(struct tach_reader *r)
{
	if (r->in.max_line > MAX_LINE)
		r->in.max_line = MAX_LINE;
	return find_program(r);
}

static void pr_free(struct tach_reader *r)
{
	struct perf_rstate *st = r->state;
	free(st->event_opt);
	free(st->event);
	free(st->kbuf);
	free(st->bytes);
	free(st->lines);
	tachi_idset_free(&st->index);
	free(st->lcache);
	free(st->comm);
	free(st->program);
	free(st->hbuf);
	free(st->frames);
	free(st->prev);
}

/* Whether the n bytes at s are text: control bytes other than tab or CR make a line no
 * line of perf script's (a NUL or ESC further on is only data, in a comm or a symbol). */
bool tachi_perf_text_line(const uint8_t *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (s[i] < 0x20 && s[i] != '\t' && s[i] != '\r')
			return false;
	return n > 0;
}

/* The line at *at, without its white space at both ends; false at the end of p. */
bool tachi_perf_probe_next(const uint8_t *p, size_t n, size_t *at, const char **s, size_t *len,
			   size_t *indent)
{
	const uint8_t *l;
	bool complete;
	if (!tachi_probe_line(p, n, at, &l, len, &complete) || !complete ||
	    !tachi_perf_text_line(l, *len))
		return false;
	*s = (const char *)l;
	while (*len && is_ws((*s)[*len - 1]))
		(*len)--;
	for (*indent = 0; *indent < *len && is_ws((*s)[*indent]); (*indent)++)
		;
	return true;
}

const struct tachi_reader_ops tachi_perf_reader_ops = {
	.state_size = sizeof(struct perf_rstate),
	.option = pr_option,
	.open = pr_open,
	.next = pr_next,
	.free = pr_free,
};

bool tachi_perf_event_line(const char *s, size_t n, bool *bad, bool *has_ts, bool *has_event)
{
	struct hdr h;
	if (!parse_event_line(s, n, &h))
		return false;
	*bad = h.bad != NULL;
	*has_ts = h.has_ts;
	*has_event = h.has_event;
	return true;
}

bool tachi_perf_frame_line(const char *s, size_t n)
{
	return is_frame_line(s, n);
}
