/* Gecko profile writer: the JSON the Firefox Profiler imports (its "Gecko" format, the one
 * Firefox itself emits, not the processed format CPython's exporter writes), gzip-compressed
 * by default.
 *
 * What is written (notes: spec/gecko.md, checked against the profiler's own importer):
 *   - meta.version 31: every front end since 2024 reads it, and the importer upgrades it;
 *     processes empty, presymbolicated, a grey default category, a marker schema; libs
 *     from the input's mappings (gecko_native.c), empty for Python.
 *   - One thread per (thread id, interpreter id), in first-seen order, each with its own
 *     string, frame and stack tables (the format has no shared tables). Threads of one
 *     interpreter form one process (pid = interpreter id). The first thread of an
 *     interpreter whose samples carry the main-thread status bit is named "GeckoMain": the
 *     only way the format marks a main thread; the profiler then labels it with its
 *     processName ("Python", or "Python interpreter N"; the profiled program's file name
 *     instead of "Python" where the input names it, as gperftools profiles do).
 *   - Where the profile comes from: it is Python's when a frame is in a Python source
 *     (whatever the input's format: pprof and folded stacks come from both kinds), or when
 *     it has no frame and the input names a Python version; else native: the product and
 *     process are named after the program, or the format read ("perf", "pprof"), the
 *     Python category is named Script, and every function of the Native category is
 *     native code, as is any function with a mapping in a Python profile.
 *     Native functions are never script frames (the importer makes "name (file:line)" a
 *     JavaScript function): "name (in library)", the library being the last component
 *     of the mapping's file (else of the frame's), followed by "(file:line)" with a line;
 *     an address without a symbol in a listed library is "0x<address>", which the
 *     importer places in that library; relevantForJS is false.
 *   - A frame's location is "func (path:line)" with one line per function (the smallest
 *     line seen for that file and function, since the input has no definition line), so a
 *     function is one call-tree node whatever line was sampled; the sampled line and column
 *     go to the frame's line/column fields. Frames without any line become "func (in path)"
 *     (a library-like resource, e.g. <native>) or the bare name for "~" and "" files.
 *   - A frame's own category is Native for compiled languages' sources (by extension) and
 *     for frames without a line outside Python sources (binaries, <native>), else Python:
 *     a C++ profile from gperftools is Native throughout, and its leaf frames, on CPU
 *     without the GIL, need no second row for their state.
 *   - Sample categories carry the thread state: the leaf frame of each sample is in
 *     Python (has the GIL), Native (on CPU without the GIL), Idle (neither: the profiler's
 *     "include idle samples" switch) or Other (state unknown); subcategory "Waiting for GIL"
 *     marks Native and Idle samples that requested the GIL. threadCPUDelta is one interval
 *     (at most the time since the thread's previous sample) for on-CPU samples, else 0.
 *     Interval markers "Has GIL", "Waiting for GIL", "On CPU", "Has Exception" (CPython's
 *     names) cover runs of consecutive samples of a thread in that state. When no sample of
 *     the whole input has any GIL/CPU state bit (inputs that do not record a state), leaf
 *     frames keep their frame's category and there is no threadCPUDelta column, rather than
 *     showing every sample as idle.
 *   - Times: meta.startTime is the input's start time in ms, which for TACH is CPython's
 *     monotonic clock, not the epoch: the profiler shows a date near 1970, and a sample time
 *     plus startTime gives back the recorded timestamp exactly. Sample and marker times are
 *     ms relative to it, written exactly (µs precision) without locale.
 *   - A sample of weight N becomes N samples one interval apart. Samples are written in
 *     time order per thread: input out of order is sorted (stable) with a warning, and
 *     weighted samples that overlap later ones are moved forward to keep time
 *     non-decreasing.
 *   - Strings are valid UTF-8: invalid bytes become U+FFFD, with one warning. Control
 *     characters in names become '?' (the importer's patterns stop at a line break).
 * An input without samples gives one empty thread "No samples": the profiler refuses a
 * profile without threads.
 * Not written: source text, opcodes (the format has no place the profiler shows them),
 * pages, counters, the address of a symbolized native frame (a location string holds a
 * name or an address, not both), inline marks.
 *
 * Memory: one stack trie for all threads, as the other aggregating writers have; the sample
 * records, packed (put_record), go to a spool (a chunk a thread in memory, the rest in a
 * temporary file) and are read back at close, where the marker runs found on the way are
 * spooled likewise, to follow the samples. All JSON is produced at close, streamed through
 * a fixed buffer. A thread's stack table is the trie's nodes that its samples reach and
 * every node above them, in trie order (parents first): close marks them with a pass over
 * the thread's records, in a bitmap of the trie that serves each thread in turn. A trie per
 * thread gave each table without that pass, but each thread walked its own trie a probe
 * per changed frame where the shared trie answers most stacks with one hash (10 M churn
 * samples: 3.0 -> 1.5 s, and 187 -> 64 MB on the wide shape, whose threads share stacks).
 * One thread's record of the nodes it reached cannot be a bit per node of a trie that
 * 20,000 threads share. Stacks that no sample reaches (a leaf seen only in another state)
 * are dropped.
 * Options: gzip=yes|no (default yes), level=1..9 (gzip level, default 1: on JSON of this
 * kind zlib's level 6 gives files about 15% smaller than igzip's level 1 at a tenth of the
 * speed; bench/gecko.md),
 * threads=N (gzip on N worker threads, gzip.c; the same bytes for any N).
 */
#include <assert.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include "gecko_native.h"
#include "internal.h"

enum { CAT_OTHER, CAT_PYTHON, CAT_NATIVE, CAT_IDLE, CAT_GIL, CAT_CPU, CAT_EXC };
enum { SUB_NONE, SUB_GIL_WAIT };

#define NONE UINT32_MAX
/* The output's own buffer (io.c) and the most j_room asks for: a flush then always passes
 * at least that buffer's size, which goes out in one write instead of being copied. */
#define JROOM_MAX 256
#define JBUF (256 * 1024 + JROOM_MAX)

/* Marker kinds, in string table order (every thread's strings start with these). */
static const struct {
	const char *name;
	uint8_t bit;
	uint8_t cat;
} kinds[] = {
	{ "Has GIL", TACH_STATUS_HAS_GIL, CAT_GIL },
	{ "Waiting for GIL", TACH_STATUS_GIL_REQUESTED, CAT_GIL },
	{ "On CPU", TACH_STATUS_ON_CPU, CAT_CPU },
	{ "Has Exception", TACH_STATUS_HAS_EXCEPTION, CAT_EXC },
};
#define NKINDS (sizeof(kinds) / sizeof(kinds[0]))
#define STATE_BITS (TACH_STATUS_HAS_GIL | TACH_STATUS_ON_CPU | TACH_STATUS_UNKNOWN | \
		    TACH_STATUS_GIL_REQUESTED)

struct gfunc {
	uint32_t file, name; /* source dict string ids */
	int32_t min_line;    /* -1: no line seen */
	/* Native code (gecko_native.c): the mapping of the frames that made this function
	 * (0: none; part of its identity), and for an address without a symbol, the address. */
	uint32_t mapping;
	bool unsym;
	bool native_code; /* in the Native category: compiled code, a binary, no file */
	uint64_t address;
};

struct gframe {
	uint32_t func;
	int32_t line, col;
	uint8_t cat, sub, base_cat;
};

/* A sample record as the input gave it. Spooled per thread until close, packed (see
 * put_record); unpacked to be sorted or written. */
struct grec {
	uint64_t t;
	uint64_t weight;
	uint32_t node; /* leaf trie node or NONE for an empty stack */
	uint8_t status;
};

struct gthread {
	uint64_t tid;
	uint32_t iid;
	bool main, unsorted;
	bool placeholder; /* the empty thread of an input without samples */
	struct tachi_stream recs;
	uint64_t last_end; /* natural time of the last sample of the last record */
	uint64_t last_t;   /* time of the last record, from which the next is packed */
	uint64_t first;    /* earliest record time: the thread's registerTime */
	/* leaf variant cache */
	uint32_t last_inner, last_leaf;
	uint8_t last_state;
};

struct gstate {
	bool plain;
	int level;
	const struct tach_dict *src;
	uint32_t *fmap; /* source frame id -> base gframe id */
	size_t fmap_cap;
	size_t nmapped; /* source frames mapped so far: all of them lets a sample skip the check */
	struct gfunc *funcs;
	size_t nfuncs, funcs_cap;
	struct tachi_idset func_index;
	struct gframe *frames;
	size_t nframes, frames_cap;
	struct tachi_idset frame_index;
	/* A frame's row in each sample state (frame id * 8 + state), NONE until asked for:
	 * the leaf of nearly every sample is one of few frames in one of few states. */
	uint32_t *vkey;
	size_t vkey_cap;
	struct tachi_stacktab trie; /* of gframes: base rows, and a leaf's variant */
	struct tachi_threads paths;
	struct gthread *th;
	size_t nth, th_cap;
	struct tachi_spool spool; /* the threads' records past a chunk each */
	bool recorded; /* some sample has a GIL/CPU state bit */
	/* The profiled program's file name, JSON-escaped, where the input names one (native
	 * profiles): the product and the process name, which are "Python" otherwise. */
	char *pname;
	/* Where the profile comes from: a frame in a Python source makes it Python's; native
	 * (not Python's) when none is, set at close. */
	bool any_python, native;
	struct tachi_gecko_libs libs;
	bool warned_utf8, warned_order;
	bool ctrl_seen;
	/* output */
	uint8_t *jbuf;
	size_t jlen;
	struct tachi_gz *gz;
	unsigned gz_threads;
	int err; /* first output failure (TACH_E_*) */
};

static int gw_option(struct tach_writer *w, const char *key, const char *value)
{
	struct gstate *st = w->state;
	if (!strcmp(key, "gzip")) {
		bool b;
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad gzip value %s", value);
		st->plain = !b;
		return TACH_OK;
	}
	if (!strcmp(key, "level"))
		return tachi_gzip_level(w, value, &st->level);
	if (!strcmp(key, "threads"))
		return tachi_gzip_threads(w, value, &st->gz_threads);
	return WFAIL(w, TACH_E_USAGE, "gecko writer has no option %s", key);
}

/* ---- JSON pieces (shared with the unit test through internal.h) ---- */

static const char digit_pairs[] =
	"00010203040506070809101112131415161718192021222324252627282930313233343536373839"
	"40414243444546474849505152535455565758596061626364656667686970717273747576777879"
	"8081828384858687888990919293949596979899";

/* Decimal as tachi_fmt_u64, for the u32 values (stack and frame indices) of every row:
 * 32-bit divisions and the length by comparisons cost about half. Writes up to 10 bytes. */
static inline size_t fmt_u32(char *buf, uint32_t v)
{
	size_t n = v < 100000 ? (v < 100 ? 1 + (v >= 10) : v < 1000 ? 3 : v < 10000 ? 4 : 5)
			      : v < 10000000 ? 6 + (v >= 1000000)
					     : v < 100000000 ? 8 : v < 1000000000 ? 9 : 10;
	char *q = buf + n;
	while (v >= 100) {
		uint32_t r = v % 100;
		v /= 100;
		q -= 2;
		memcpy(q, digit_pairs + 2 * r, 2);
	}
	if (v >= 10)
		memcpy(q - 2, digit_pairs + 2 * v, 2);
	else
		q[-1] = (char)('0' + v);
	return n;
}

/* The fraction f/1000 of a ms, shortest (nothing for 0); writes 4 bytes whatever the
 * length. */
static inline size_t fmt_frac(char *buf, unsigned f)
{
	unsigned h = f / 10, d = f - h * 10;
	buf[0] = '.';
	memcpy(buf + 1, digit_pairs + 2 * h, 2);
	buf[3] = (char)('0' + d);
	return d ? 4 : !f ? 0 : h % 10 ? 3 : 2;
}

size_t tachi_fmt_ms(char *buf, bool neg, uint64_t us)
{
	size_t n = 0;
	if (neg && us)
		buf[n++] = '-';
	n += tachi_fmt_u64(buf + n, us / 1000);
	return n + fmt_frac(buf + n, (unsigned)(us % 1000));
}

size_t tachi_json_escape(char *out, const char *s, size_t n, bool *repaired)
{
	static const char hex[] = "0123456789abcdef";
	const uint8_t *p = (const uint8_t *)s;
	size_t o = 0, i = 0;
	while (i < n) {
		uint8_t c = p[i];
		if (c >= 0x20 && c < 0x80 && c != '"' && c != '\\') {
			out[o++] = (char)c;
			i++;
			continue;
		}
		if (c < 0x80) {
			out[o++] = '\\';
			switch (c) {
			case '"': out[o++] = '"'; break;
			case '\\': out[o++] = '\\'; break;
			case '\n': out[o++] = 'n'; break;
			case '\r': out[o++] = 'r'; break;
			case '\t': out[o++] = 't'; break;
			case '\b': out[o++] = 'b'; break;
			case '\f': out[o++] = 'f'; break;
			default:
				out[o++] = 'u';
				out[o++] = '0';
				out[o++] = '0';
				out[o++] = hex[c >> 4];
				out[o++] = hex[c & 15];
			}
			i++;
			continue;
		}
		o += tachi_utf8_char(out + o, p, n, &i, repaired);
	}
	return o;
}

/* ---- output: a staging buffer, deflated or written as is ---- */

static void j_flush(struct tach_writer *w)
{
	struct gstate *st = w->state;
	if (st->err || !st->jlen) {
		st->jlen = 0;
		return;
	}
	if (st->plain) {
		if (tachi_out_write(&w->out, st->jbuf, st->jlen))
			st->err = tachi_writer_io(w);
	} else {
		int e = tachi_gz_write(st->gz, st->jbuf, st->jlen);
		if (e)
			st->err = tachi_gz_failed(w, e);
	}
	st->jlen = 0;
}

/* Room for n (<= JROOM_MAX) more bytes. */
static inline uint8_t *j_room(struct tach_writer *w, size_t n)
{
	struct gstate *st = w->state;
	assert(n <= JROOM_MAX);
	if (TACHI_UNLIKELY(JBUF - st->jlen < n))
		j_flush(w);
	return st->jbuf + st->jlen;
}

static void j_put(struct tach_writer *w, const void *p, size_t n)
{
	struct gstate *st = w->state;
	const uint8_t *b = p;
	while (n) {
		if (st->jlen == JBUF)
			j_flush(w);
		size_t k = JBUF - st->jlen < n ? JBUF - st->jlen : n;
		memcpy(st->jbuf + st->jlen, b, k);
		st->jlen += k;
		b += k;
		n -= k;
	}
}

static void j_str(struct tach_writer *w, const char *s)
{
	j_put(w, s, strlen(s));
}

/* Appends a string literal at p + o, for rows built in place in j_room's space. */
#define LIT(p, o, s) (memcpy((p) + (o), s, sizeof(s) - 1), (o) += sizeof(s) - 1)

static void j_u64(struct tach_writer *w, uint64_t v)
{
	struct gstate *st = w->state;
	uint8_t *p = j_room(w, 24);
	st->jlen += tachi_fmt_u64((char *)p, v);
}

static void j_i64(struct tach_writer *w, int64_t v)
{
	struct gstate *st = w->state;
	uint8_t *p = j_room(w, 24);
	st->jlen += tachi_fmt_i64((char *)p, v);
}

/* Time t (µs, absolute) in ms relative to the start time. */
static size_t fmt_rel(char *p, uint64_t t, uint64_t start)
{
	return t >= start ? tachi_fmt_ms(p, false, t - start) : tachi_fmt_ms(p, true, start - t);
}

static void j_rel(struct tach_writer *w, uint64_t t)
{
	struct gstate *st = w->state;
	uint8_t *p = j_room(w, 32);
	st->jlen += fmt_rel((char *)p, t, w->meta.start_time_us);
}

/* ---- interning ---- */

static uint64_t func_hash(uint32_t file, uint32_t name, uint32_t mapping)
{
	uint32_t b[3] = { file, name, mapping };
	return tachi_hash(b, mapping ? sizeof(b) : 2 * sizeof(b[0]));
}

static bool func_eq(void *ctx, uint32_t id, const void *k)
{
	const struct gstate *st = ctx;
	const struct gfunc *a = &st->funcs[id], *b = k;
	return a->file == b->file && a->name == b->name && a->mapping == b->mapping;
}


static uint64_t frame_hash(const struct gframe *f)
{
	uint32_t b[4] = { f->func, (uint32_t)f->line, (uint32_t)f->col,
			  (uint32_t)f->cat << 8 | f->sub };
	return tachi_hash(b, sizeof(b));
}

static bool frame_eq(void *ctx, uint32_t id, const void *k)
{
	const struct gstate *st = ctx;
	const struct gframe *a = &st->frames[id], *b = k;
	return a->func == b->func && a->line == b->line && a->col == b->col && a->cat == b->cat &&
	       a->sub == b->sub;
}


static uint32_t intern_frame(struct gstate *st, const struct gframe *f)
{
	uint64_t h = frame_hash(f);
	uint32_t id;
	if (tachi_idset_find(&st->frame_index, h, f, frame_eq, st, &id))
		return id;
	if (st->nframes >= NONE - 2 || !TACHI_RESERVE(st->frames, st->frames_cap, st->nframes + 1))
		return NONE;
	id = (uint32_t)st->nframes;
	st->frames[id] = *f;
	if (!tachi_idset_insert(&st->frame_index, h, id))
		return NONE;
	st->nframes++;
	return id;
}

/* The extension of file's last path component ("" when it has none). */
static const char *file_ext(const char *file, size_t n, size_t *len)
{
	size_t i = n;
	while (i && file[i - 1] != '/' && file[i - 1] != '.')
		i--;
	*len = i && file[i - 1] == '.' ? n - i : 0;
	return file + n - *len;
}

static bool ext_in(const char *ext, size_t len, const char *const *list)
{
	for (; *list; list++)
		if (strlen(*list) == len && !memcmp(*list, ext, len))
			return true;
	return false;
}

/* Sources of compiled languages, whose frames come from native profiles (gperftools, pprof)
 * with their lines, and Python's own, whose frames may lack one. */
static const char *const native_exts[] = { "c", "h", "cc", "cp", "cpp", "cxx", "c++", "hh",
					   "hpp", "hxx", "h++", "inl", "ipp", "tcc", "txx", "rs",
					   "go", "s", "S", "asm", "m", "mm", "f", "f90", "f95",
					   "zig", "d", "cu", "cuh", "swift", "C", "H", "CPP", NULL };
static const char *const python_exts[] = { "py", "pyw", "pyx", "pxd", "pxi", "pyi", NULL };

/* Native code: a frame in a compiled language's source, and a frame without a line in a
 * file that is no Python source ("", "~", "<native>", a binary or library). Every other
 * frame is Python, as CPython's exporter has it. */
static uint8_t base_category(const struct tach_dict *d, const struct tach_frame *f)
{
	size_t n, en;
	const char *file = tachi_str(d, f->file, &n);
	const char *ext = file_ext(file, n, &en);
	if (f->line >= 0)
		return ext_in(ext, en, native_exts) ? CAT_NATIVE : CAT_PYTHON;
	if (n == 0 || (n == 1 && file[0] == '~'))
		return CAT_NATIVE;
	if (file[0] == '<')
		return strcmp(file, "<stdin>") && strcmp(file, "<string>") ? CAT_NATIVE : CAT_PYTHON;
	return ext_in(ext, en, python_exts) ? CAT_PYTHON : CAT_NATIVE;
}

/* The native data of source frame fid into its function's key: the mapping, and whether
 * it is an address without a symbol (and which). */
static void func_native(const struct tach_dict *d, uint32_t fid, struct gfunc *k)
{
	const struct tach_frame_native *n = tach_dict_frame_native(d, fid);
	const struct tach_mapping *m = n ? tach_dict_mapping(d, n->mapping) : NULL;
	if (!n)
		return;
	k->mapping = m ? n->mapping : 0;
	k->unsym = tachi_gecko_unsymbolized(d, &d->frames[fid], n, m);
	k->address = n->address;
}

/* A frame only CPython makes: in a Python source, or in one of its pseudo files
 * ("<string>", "<frozen importlib._bootstrap>") with a line. */
static bool python_source(const struct tach_dict *d, const struct tach_frame *f)
{
	size_t n, en;
	const char *file = tachi_str(d, f->file, &n);
	const char *ext = file_ext(file, n, &en);
	if (n && file[0] == '<')
		return f->line >= 0 || !strcmp(file, "<stdin>") || !strcmp(file, "<string>");
	return ext_in(ext, en, python_exts);
}

static int map_frame(struct tach_writer *w, const struct tach_dict *d, uint32_t fid)
{
	struct gstate *st = w->state;
	if (fid >= d->frame_count)
		return WFAIL(w, TACH_E_USAGE, "frame id %u out of range", fid);
	if (fid >= st->fmap_cap && !tachi_idmap_reserve(&st->fmap, &st->fmap_cap, (size_t)fid + 1))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	const struct tach_frame *f = &d->frames[fid];
	if (f->file >= d->str_count || f->func >= d->str_count)
		return WFAIL(w, TACH_E_USAGE, "string id out of range in frame %u", fid);
	struct gfunc k = { f->file, f->func, -1, 0, false, false, 0 };
	func_native(d, fid, &k);
	uint8_t cat = k.mapping ? CAT_NATIVE : base_category(d, f);
	k.native_code = cat == CAT_NATIVE;
	if (!st->any_python && python_source(d, f))
		st->any_python = true;
	uint64_t h = func_hash(k.file, k.name, k.mapping);
	uint32_t fn;
	if (!tachi_idset_find(&st->func_index, h, &k, func_eq, st, &fn)) {
		if (st->nfuncs >= NONE - 2 || !TACHI_RESERVE(st->funcs, st->funcs_cap, st->nfuncs + 1))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		fn = (uint32_t)st->nfuncs;
		st->funcs[fn] = k;
		if (!tachi_idset_insert(&st->func_index, h, fn))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		st->nfuncs++;
	}
	if (f->line >= 0 && (st->funcs[fn].min_line < 0 || f->line < st->funcs[fn].min_line))
		st->funcs[fn].min_line = f->line;
	struct gframe g = { fn, f->line < 0 ? -1 : f->line, f->col < 0 ? -1 : f->col, cat,
			    SUB_NONE, cat };
	uint32_t id = intern_frame(st, &g);
	if (id == NONE)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	st->fmap[fid] = id;
	st->nmapped++;
	return TACH_OK;
}

/* The leaf category of a sample: its thread's state. */
static uint8_t state_of(uint8_t status)
{
	uint8_t sub = (status & TACH_STATUS_GIL_REQUESTED) ? SUB_GIL_WAIT : SUB_NONE;
	if (status & TACH_STATUS_HAS_GIL)
		return CAT_PYTHON << 1;
	if (status & TACH_STATUS_UNKNOWN)
		return CAT_OTHER << 1;
	if (status & TACH_STATUS_ON_CPU)
		return (uint8_t)(CAT_NATIVE << 1 | sub);
	return (uint8_t)(CAT_IDLE << 1 | sub);
}

static struct gthread *thread_for(struct tach_writer *w, const struct tach_sample *s,
				  struct tachi_pathcache **pc)
{
	struct gstate *st = w->state;
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&st->paths, s->thread_id, s->interp_id,
						      &created);
	if (!c)
		return NULL;
	if (created) {
		if (!TACHI_RESERVE(st->th, st->th_cap, st->nth + 1))
			return NULL;
		struct gthread *t = &st->th[st->nth];
		memset(t, 0, sizeof(*t));
		t->tid = s->thread_id;
		t->iid = s->interp_id;
		t->last_inner = NONE;
		c->slot = (uint32_t)st->nth++;
	}
	*pc = c;
	return &st->th[c->slot];
}

/* The row of frame key in the category and subcategory of a sample state: a second row for
 * the same frame, so that a stack's category is its sample's state. */
static bool variant(struct gstate *st, uint32_t key, uint8_t state, uint32_t *v)
{
	size_t at = (size_t)key * 8 + state;
	if (TACHI_LIKELY(at < st->vkey_cap) && st->vkey[at] != NONE) {
		*v = st->vkey[at];
		return true;
	}
	struct gframe g = st->frames[key];
	g.cat = state >> 1;
	g.sub = state & 1;
	*v = intern_frame(st, &g);
	if (*v == NONE)
		return false;
	if (at >= st->vkey_cap) {
		size_t old = st->vkey_cap;
		if (!TACHI_RESERVE(st->vkey, st->vkey_cap, at + 1))
			return false;
		memset(st->vkey + old, 0xff, (st->vkey_cap - old) * sizeof(*st->vkey));
	}
	st->vkey[at] = *v;
	return true;
}

/* A spooled record: a flags byte (never 0, which pads a chunk's end), the status, the time
 * as a zigzag varint of its difference from the thread's previous record (a few bytes: times
 * advance by about an interval), then as varints the leaf node unless there is none and the
 * weight unless it is 1. Some 6 bytes where the plain record takes 24, so a quarter of the
 * file to write and read back (240 MB for 10 M samples before). */
#define REC_MAX 32
#define RF_ON 0x80
#define RF_WEIGHT 1
#define RF_NONODE 2
/* Spool chunks of 16 KiB hold about as many packed records as 64 KiB did plain ones. */
#define SPOOL_CHUNK (16 * 1024)

static inline uint64_t zigzag64(uint64_t d)
{
	return d << 1 ^ (uint64_t)((int64_t)d >> 63);
}

static inline uint64_t unzigzag64(uint64_t z)
{
	return z >> 1 ^ (0 - (z & 1));
}

/* tachi_put_uvarint, with the values packed most often (under 2^14) first. */
static inline size_t put_uv(uint8_t *p, uint64_t v)
{
	if (v < 0x80) {
		p[0] = (uint8_t)v;
		return 1;
	}
	if (v < 0x4000) {
		p[0] = (uint8_t)(v | 0x80);
		p[1] = (uint8_t)(v >> 7);
		return 2;
	}
	return tachi_put_uvarint(p, v);
}

static int put_record(struct gstate *st, struct gthread *t, uint64_t ts, uint64_t weight,
		      uint32_t node, uint8_t status)
{
	int e = tachi_stream_room(&st->spool, &t->recs, REC_MAX);
	if (TACHI_UNLIKELY(e))
		return e;
	uint8_t *p = t->recs.buf + t->recs.len;
	p[0] = (uint8_t)(RF_ON | (weight != 1 ? RF_WEIGHT : 0) | (node == NONE ? RF_NONODE : 0));
	p[1] = status;
	/* a difference that went back in time wraps, and wraps back when added */
	size_t o = 2 + put_uv(p + 2, zigzag64(ts - t->last_t));
	if (node != NONE) {
		o += put_uv(p + o, node);
	}
	if (weight != 1)
		o += put_uv(p + o, weight);
	t->recs.len += o;
	t->recs.total++;
	t->last_t = ts;
	return 0;
}

static int gw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct gstate *st = w->state;
	if (TACHI_UNLIKELY(st->src != d)) {
		if (st->src)
			return WFAIL(w, TACH_E_USAGE, "samples from more than one dict");
		st->src = d;
	}
	struct tachi_pathcache *c;
	struct gthread *t = thread_for(w, s, &c);
	if (!t)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (s->status & STATE_BITS)
		st->recorded = true;
	if (s->status & TACH_STATUS_MAIN_THREAD)
		t->main = true;
	uint32_t leaf = NONE;
	if (s->depth) {
		for (uint32_t i = 0, n = st->nmapped < d->frame_count ? tachi_new_inner(c, s) : 0;
		     i < n; i++) {
			uint32_t f = s->frames[i];
			if (TACHI_UNLIKELY(f >= st->fmap_cap || st->fmap[f] == NONE)) {
				int rc = map_frame(w, d, f);
				if (rc)
					return rc;
			}
		}
		st->trie.hint = w->ahead_hash;
		uint32_t inner = tachi_stack_intern(&st->trie, c, s, st->fmap);
		if (inner == TACHI_NOMEM_NODE)
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		uint8_t state = state_of(s->status);
		if (inner == t->last_inner && state == t->last_state) {
			leaf = t->last_leaf;
		} else {
			/* the leaf's key is its frame's, mapped: reading it from the node would
			 * cost a cache miss a sample wherever the whole-stack set answered */
			uint32_t key = st->fmap[s->frames[0]], v;
			assert(key == st->trie.nodes[inner].key);
			if (TACHI_UNLIKELY(!variant(st, key, state, &v)))
				return WFAIL(w, TACH_E_NOMEM, "out of memory");
			if (v == key)
				leaf = inner;
			else if (!tachi_stacktab_child(&st->trie, st->trie.nodes[inner].parent, v,
						       &leaf))
				return WFAIL(w, TACH_E_NOMEM, "out of memory");
			t->last_inner = inner;
			t->last_state = state;
			t->last_leaf = leaf;
		}
	}
	uint64_t weight = s->weight ? s->weight : 1;
	if (t->recs.total && s->timestamp_us < t->last_end)
		t->unsorted = true;
	if (!t->recs.total || s->timestamp_us < t->first)
		t->first = s->timestamp_us;
	uint64_t span;
	if (__builtin_mul_overflow(weight - 1, w->meta.interval_us, &span) ||
	    __builtin_add_overflow(s->timestamp_us, span, &t->last_end))
		t->last_end = UINT64_MAX;
	int e = put_record(st, t, s->timestamp_us, weight, leaf, s->status);
	if (e)
		return WFAIL(w, e == ENOMEM ? TACH_E_NOMEM : TACH_E_IO,
			     "spooling samples to a temporary file: %s", strerror(e));
	return TACH_OK;
}

/* ---- close: the JSON document ---- */

/* The categories, around the name of the second: "Python", or for a profile that is not
 * Python's (its scripts: V8's JavaScript, templates), "Script". */
static const char *const cat_json_head =
	"[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},{\"name\":\"";
static const char *const cat_json =
	"\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Native\",\"color\":\"blue\",\"subcategories\":[\"Other\",\"Waiting for GIL\"]},"
	"{\"name\":\"Idle\",\"color\":\"transparent\",\"subcategories\":[\"Other\",\"Waiting for GIL\"]},"
	"{\"name\":\"GIL\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"CPU\",\"color\":\"purple\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Exception\",\"color\":\"lightblue\",\"subcategories\":[\"Other\"]}]";

static const char *const schema_json =
	"[{\"name\":\"PythonThreadState\","
	"\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
	"\"chartLabel\":\"{marker.name}\",\"tooltipLabel\":\"{marker.name}\","
	"\"tableLabel\":\"{marker.name} ({marker.data.samples} samples)\","
	"\"description\":\"Consecutive samples of this thread in one state (TACH status flags)\","
	"\"data\":[{\"key\":\"samples\",\"label\":\"Samples\",\"format\":\"integer\"}]}]";

static void write_meta(struct tach_writer *w)
{
	struct gstate *st = w->state;
	const struct tach_meta *m = &w->meta;
	char b[32];
	j_str(w, "{\"meta\":{\"version\":31,\"startTime\":");
	j_put(w, b, tachi_fmt_ms(b, false, m->start_time_us));
	j_str(w, ",\"shutdownTime\":null,\"interval\":");
	/* The profiler needs a positive interval; an input without one gets 1 ms. */
	j_put(w, b, tachi_fmt_ms(b, false, m->interval_us ? m->interval_us : 1000));
	j_str(w, ",\"stackwalk\":0,\"debug\":0,\"gcpoison\":0,\"asyncstack\":0,\"processType\":0,"
		 "\"product\":\"");
	if (st->pname) {
		j_str(w, st->pname);
	} else {
		j_str(w, "Python");
		if (m->py_major) {
			j_str(w, " ");
			j_u64(w, m->py_major);
			j_str(w, ".");
			j_u64(w, m->py_minor);
		}
	}
	j_str(w, "\",\"presymbolicated\":true,\"categories\":");
	j_str(w, cat_json_head);
	j_str(w, st->native ? "Script" : "Python");
	j_str(w, cat_json);
	j_str(w, ",\"markerSchema\":");
	j_str(w, schema_json);
	if (st->recorded)
		j_str(w, ",\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\","
			 "\"threadCPUDelta\":\"\xC2\xB5s\"}");
	/* Without samples the profiler finds no time range (it shows "-inf"): one interval. */
	if (st->nth == 1 && st->th[0].placeholder) {
		j_str(w, ",\"profilingStartTime\":0,\"profilingEndTime\":");
		j_put(w, b, tachi_fmt_ms(b, false, m->interval_us ? m->interval_us : 1000));
	}
	j_str(w, "},\"libs\":");
	if (st->libs.json)
		j_put(w, st->libs.json, st->libs.len);
	else
		j_str(w, "[]");
	j_str(w, ",\"processes\":[],\"pausedRanges\":[],\"threads\":[");
}

/* Scratch shared by the threads at close. */
struct scratch {
	uint8_t *chunk;    /* a spooled chunk read back */
	struct tachi_stream marks; /* the thread's closed markers (struct marks) */
	struct grec *all;  /* the records of a thread out of time order, sorted */
	size_t *perm;
	uint32_t *fidx;    /* gframe -> thread frame index */
	uint32_t *fstamp;
	uint32_t *flist;   /* gframes in thread frame order */
	uint32_t *sidx;    /* gfunc -> thread string index */
	uint32_t *sstamp;
	uint32_t *slist;   /* gfuncs in thread string order */
	uint64_t *reach;   /* a bit a trie node: reached by the thread (mark_stacks) */
	uint32_t *rank;    /* reach word -> the thread's stacks before it */
	uint32_t *words;   /* the reach words the thread touched, in order */
	uint32_t nwords;
	char *loc;         /* JSON literals of the location strings */
	size_t *loc_off;
};

struct lbuf {
	char *p;
	size_t len, cap;
};

static bool lb_add(struct lbuf *b, const char *s, size_t n)
{
	if (!TACHI_RESERVE(b->p, b->cap, b->len + n))
		return false;
	memcpy(b->p + b->len, s, n);
	b->len += n;
	return true;
}

/* Location text: the importer's patterns do not match across a line break, so control
 * characters become '?' (as in collapsed output), with one warning. */
static bool lb_text(struct gstate *st, struct lbuf *b, const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if ((uint8_t)s[i] >= 0x20 && s[i] != 0x7f)
			continue;
		char *copy = malloc(n);
		if (!copy)
			return false;
		for (size_t k = 0; k < n; k++)
			copy[k] = (uint8_t)s[k] < 0x20 || s[k] == 0x7f ? '?' : s[k];
		st->ctrl_seen = true;
		bool ok = lb_text(st, b, copy, n);
		free(copy);
		return ok;
	}
	size_t need;
	if (__builtin_mul_overflow(n, 6, &need) || tachi_add_overflows(need, b->len, &need) ||
	    !TACHI_RESERVE(b->p, b->cap, need))
		return false;
	b->len += tachi_json_escape(b->p + b->len, s, n, &st->warned_utf8);
	return true;
}

/* How a function's location string reads, which decides what the importer makes of it:
 * "name (file:line)" a script function with the file as resource, "name (in file)" a
 * function of a library named file, or the bare name. A file with ')' would end the
 * library form early, and the script form needs a non-empty file. */
enum { LOC_JS, LOC_LIB, LOC_PLAIN, LOC_ADDR };

/* Native code written as such: any function with a mapping, and in a profile that is not
 * Python's, every function of the Native category (a script's stays a script's: V8). */
static bool func_is_native(const struct gstate *st, const struct gfunc *f)
{
	return f->mapping || (st->native && f->native_code);
}

/* The library a native function names: its mapping's file, else the frame's (a binary,
 * or a source without its binary), by its last component as the libs table names it. */
static const char *native_lib(const struct gstate *st, const struct gfunc *f, size_t *len)
{
	const struct tach_mapping *m = tach_dict_mapping(st->src, f->mapping);
	size_t n;
	const char *file = m ? tachi_str(st->src, m->file, &n) : "";
	if (!m || !n)
		file = tachi_str(st->src, f->file, &n);
	return tachi_gecko_basename(file, n, len);
}

/* A native function is never a script: an address its library places ("0x..."),
 * "name (in library)", or the bare name. */
static int native_kind(const struct gstate *st, const struct gfunc *f)
{
	if (f->unsym && tachi_gecko_listed(&st->libs, f->mapping))
		return LOC_ADDR;
	size_t n;
	const char *lib = native_lib(st, f, &n);
	if (!n || (n == 1 && lib[0] == '~') || memchr(lib, ')', n))
		return LOC_PLAIN;
	return LOC_LIB;
}

static int func_kind(const struct gstate *st, const struct gfunc *f)
{
	if (func_is_native(st, f))
		return native_kind(st, f);
	size_t fl;
	const char *file = tachi_str(st->src, f->file, &fl);
	/* CPython's "~" file marks a frame with no source (<GC>, native): no file shown, as
	 * in collapsed output, whatever its line. */
	if (!fl || (fl == 1 && file[0] == '~'))
		return LOC_PLAIN;
	if (f->min_line >= 0)
		return LOC_JS;
	if (memchr(file, ')', fl))
		return LOC_PLAIN;
	return LOC_LIB;
}

/* A native function's location: its address, or "name (in library)" with the source
 * file and first line seen after it (the importer reads only the name and the library,
 * which keeps the form out of its script pattern; the rest is for people). */
static bool native_location(struct gstate *st, struct lbuf *b, const struct gfunc *f,
			    int kind)
{
	size_t nl, ll, fl;
	const char *name = tachi_str(st->src, f->name, &nl);
	if (kind == LOC_ADDR) {
		char hex[24];
		return lb_add(b, hex, (size_t)snprintf(hex, sizeof(hex), "0x%" PRIx64, f->address));
	}
	if (!lb_text(st, b, name, nl))
		return false;
	if (kind != LOC_LIB)
		return true;
	const char *lib = native_lib(st, f, &ll);
	const char *file = tachi_str(st->src, f->file, &fl);
	if (!lb_add(b, " (in ", 5) || !lb_text(st, b, lib, ll) || !lb_add(b, ")", 1))
		return false;
	if (f->min_line < 0 || !fl)
		return true;
	char num[16];
	return lb_add(b, " (", 2) && lb_text(st, b, file, fl) && lb_add(b, ":", 1) &&
	       lb_add(b, num, tachi_fmt_i64(num, f->min_line)) && lb_add(b, ")", 1);
}

/* Every function's location string as a JSON literal, built once for all threads. */
static int build_locations(struct tach_writer *w, struct scratch *sc)
{
	struct gstate *st = w->state;
	struct lbuf b = { 0 };
	bool was = st->warned_utf8;
	sc->loc_off = malloc((st->nfuncs + 1) * sizeof(*sc->loc_off));
	if (!sc->loc_off)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	for (size_t i = 0; i < st->nfuncs; i++) {
		const struct gfunc *f = &st->funcs[i];
		size_t fl, nl;
		const char *file = tachi_str(st->src, f->file, &fl);
		const char *name = tachi_str(st->src, f->name, &nl);
		sc->loc_off[i] = b.len;
		int kind = func_kind(st, f);
		bool native = func_is_native(st, f);
		bool ok = lb_add(&b, "\"", 1) && (native ? native_location(st, &b, f, kind)
							  : lb_text(st, &b, name, nl));
		if (native) {
			/* native_location wrote it whole */
		} else if (kind == LOC_JS) {
			char num[16];
			ok = ok && lb_add(&b, " (", 2) && lb_text(st, &b, file, fl) &&
			     lb_add(&b, ":", 1) && lb_add(&b, num, tachi_fmt_i64(num, f->min_line)) &&
			     lb_add(&b, ")", 1);
		} else if (kind == LOC_LIB) {
			ok = ok && lb_add(&b, " (in ", 5) && lb_text(st, &b, file, fl) &&
			     lb_add(&b, ")", 1);
		}
		if (!ok || !lb_add(&b, "\"", 1)) {
			free(b.p);
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		}
	}
	sc->loc_off[st->nfuncs] = b.len;
	sc->loc = b.p;
	if (st->warned_utf8 && !was)
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "a string is not valid UTF-8: invalid bytes written as U+FFFD");
	if (st->ctrl_seen)
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "a frame name contains control characters: written as '?'");
	return TACH_OK;
}

/* ---- a thread's records, in time order ---- */

/* Reads a byte stream of the spool back, chunk by chunk. */
struct bwalk {
	const struct tachi_spool *sp;
	const struct tachi_stream *s;
	uint8_t *buf;            /* a chunk read back from the file */
	size_t chunk;            /* next chunk to load */
	const uint8_t *p, *end;  /* the next record, the end of its chunk */
	int err;                 /* errno of a failed read; EIO for a record cut short */
};

static void bwalk_start(struct bwalk *b, const struct tachi_spool *sp,
			const struct tachi_stream *s, uint8_t *buf)
{
	memset(b, 0, sizeof(*b));
	b->sp = sp;
	b->s = s;
	b->buf = buf;
}

/* Loads the next chunk that has records; false at the end or on a read error. */
static bool bwalk_load(struct bwalk *b)
{
	for (;;) {
		if (b->chunk > b->s->nchunks)
			return false;
		const uint8_t *r;
		size_t n;
		b->err = tachi_stream_chunk(b->sp, b->s, b->chunk++, b->buf, &r, &n);
		if (b->err)
			return false;
		if (n && r[0]) {
			b->p = r;
			b->end = r + n;
			return true;
		}
	}
}

/* Whether there is a next record (at b->p) of at least min bytes. */
static inline bool bwalk_more(struct bwalk *b, size_t min)
{
	if (TACHI_UNLIKELY(b->p == b->end || !*b->p) && !bwalk_load(b))
		return false;
	if (TACHI_UNLIKELY((size_t)(b->end - b->p) < min)) {
		b->err = EIO;
		return false;
	}
	return true;
}

/* The values packed are mostly under 2^21: those take a test a byte. */
static inline bool bwalk_varint(struct bwalk *b, const uint8_t **p, uint64_t *v)
{
	const uint8_t *q = *p;
	if (TACHI_LIKELY(b->end - q >= 3)) {
		uint64_t x = q[0];
		if (x < 0x80) {
			*v = x;
			*p = q + 1;
			return true;
		}
		x = (x & 0x7f) | (uint64_t)q[1] << 7;
		if (q[1] < 0x80) {
			*v = x;
			*p = q + 2;
			return true;
		}
		x = (x & 0x3fff) | (uint64_t)q[2] << 14;
		if (q[2] < 0x80) {
			*v = x;
			*p = q + 3;
			return true;
		}
	}
	size_t k = tachi_uvarint(q, b->end, v);
	if (TACHI_UNLIKELY(!k)) {
		b->err = EIO;
		return false;
	}
	*p += k;
	return true;
}

/* Walks a thread's records: straight from its spool, or from a sorted copy when the input
 * went back in time (then, and only then, the thread's records are all in memory). */
struct recwalk {
	struct bwalk b;
	const struct grec *all;  /* sorted records, or NULL */
	size_t nall, i;
	uint64_t t;              /* the previous record's time */
	size_t nodes;            /* the trie's: a node past it is a damaged spool */
};

static void walk_start(struct recwalk *wk, const struct gstate *st, const struct gthread *t,
		       const struct scratch *sc)
{
	memset(wk, 0, sizeof(*wk));
	bwalk_start(&wk->b, &st->spool, &t->recs, sc->chunk);
	wk->nodes = st->trie.count;
	if (t->unsorted) {
		wk->all = sc->all;
		wk->nall = t->recs.total;
	}
}

/* Unpacks a record made by put_record. */
static inline bool walk_next(struct recwalk *wk, struct grec *out)
{
	if (wk->all) {
		if (wk->i == wk->nall)
			return false;
		*out = wk->all[wk->i++];
		return true;
	}
	struct bwalk *b = &wk->b;
	if (!bwalk_more(b, 3))
		return false;
	const uint8_t *p = b->p + 2;
	uint8_t f = b->p[0];
	uint64_t dt, dn = 0, weight = 1;
	if (!bwalk_varint(b, &p, &dt) || (!(f & RF_NONODE) && !bwalk_varint(b, &p, &dn)) ||
	    ((f & RF_WEIGHT) && !bwalk_varint(b, &p, &weight)))
		return false;
	uint64_t node = NONE;
	if (!(f & RF_NONODE))
		node = dn;
	if (TACHI_UNLIKELY((node != NONE && node >= wk->nodes) || !weight)) {
		b->err = EIO;
		return false;
	}
	wk->t += unzigzag64(dt);
	out->t = wk->t;
	out->weight = weight;
	out->node = (uint32_t)node;
	out->status = b->p[1];
	b->p = p;
	return true;
}

static int walk_failed(struct tach_writer *w, const struct bwalk *b)
{
	return WFAIL(w, TACH_E_IO, "reading spooled samples back: %s", strerror(b->err));
}

static int perm_cmp(const void *pa, const void *pb, void *ctx)
{
	const struct grec *r = ctx;
	size_t a = *(const size_t *)pa, b = *(const size_t *)pb;
	if (r[a].t != r[b].t)
		return r[a].t < r[b].t ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* The records of a thread whose input went back in time, sorted by time (ties in input
 * order), into sc->all. */
static int sort_records(struct tach_writer *w, struct scratch *sc, const struct gthread *t)
{
	struct gstate *st = w->state;
	size_t n = (size_t)t->recs.total, cap = n ? n : 1;
	struct grec *in = malloc(cap * sizeof(*in));
	free(sc->all);
	sc->all = malloc(cap * sizeof(*sc->all));
	free(sc->perm);
	sc->perm = malloc(cap * sizeof(*sc->perm));
	if (!in || !sc->all || !sc->perm) {
		free(in);
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	struct recwalk wk;
	walk_start(&wk, st, t, sc);
	wk.all = NULL;
	size_t got = 0;
	while (got < n && walk_next(&wk, &in[got])) {
		sc->perm[got] = got;
		got++;
	}
	if (wk.b.err || got < n) {
		free(in);
		wk.b.err = wk.b.err ? wk.b.err : EIO;
		return walk_failed(w, &wk.b);
	}
	qsort_r(sc->perm, n, sizeof(*sc->perm), perm_cmp, in);
	for (size_t i = 0; i < n; i++)
		sc->all[i] = in[sc->perm[i]];
	free(in);
	if (!st->warned_order) {
		st->warned_order = true;
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "samples of thread %llu are not in time order: sorted",
			   (unsigned long long)t->tid);
	}
	return TACH_OK;
}

/* Inline: without -mpopcnt (the x86-64 baseline) the builtin is a call into libgcc, made
 * for every sample row. */
static inline uint32_t popcount64(uint64_t x)
{
	x -= (x >> 1) & 0x5555555555555555ULL;
	x = (x & 0x3333333333333333ULL) + ((x >> 2) & 0x3333333333333333ULL);
	x = (x + (x >> 4)) & 0x0f0f0f0f0f0f0f0fULL;
	return (uint32_t)((x * 0x0101010101010101ULL) >> 56);
}

static int word_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;
	return (x > y) - (x < y);
}

/* A thread with at least a record per SCAN_NODES trie nodes marks only its leaves and then
 * passes over the whole trie once, children before parents, to mark their ancestors: the
 * pass reads the nodes in order, where climbing from each leaf reads them at random (on
 * 3 M random stacks of eight threads, a cache miss a record). A thread with fewer records
 * climbs, so that the pass costs nothing when thousands of threads share one trie. */
#define SCAN_NODES 8

/* Leaves and ancestors by one pass over the trie; lists every touched word, in order. */
static uint32_t mark_by_scan(const struct tachi_stacktab *tr, struct scratch *sc)
{
	uint64_t *r = sc->reach;
	for (size_t i = tr->count; i > 0; i--) {
		uint32_t p = tr->nodes[i - 1].parent;
		if (p != TACHI_ROOT && tachi_bit(r, i - 1))
			tachi_bit_set(r, p);
	}
	uint32_t nw = 0;
	for (uint32_t k = 0; k <= tr->count / 64; k++)
		if (r[k])
			sc->words[nw++] = k;
	return nw;
}

/* Stacks that a thread's samples reach (their leaves, marked from its records, and every
 * node above), numbered in trie order (parents come first): a stack's number is the count
 * of reached nodes before it, from its word's count (rank) and the bits below it in the
 * word. The bitmap and the ranks span the whole trie and serve each thread in turn: only
 * the words that the thread's stacks touch (sc->words, sorted) are ranked, and
 * write_stack_table clears them. */
static int mark_stacks(struct tach_writer *w, struct scratch *sc, const struct gthread *t)
{
	struct gstate *st = w->state;
	const struct tachi_node *nodes = st->trie.nodes;
	const bool scan = t->recs.total >= st->trie.count / SCAN_NODES;
	uint64_t *r = sc->reach;
	uint32_t nw = 0, last = NONE;
	struct recwalk wk;
	struct grec rec;
	walk_start(&wk, st, t, sc);
	while (walk_next(&wk, &rec)) {
		if (rec.node == last)
			continue;
		last = rec.node;
		if (scan) {
			if (rec.node != NONE)
				tachi_bit_set(r, rec.node);
			continue;
		}
		for (uint32_t v = rec.node; v != TACHI_ROOT && !tachi_bit(r, v);
		     v = nodes[v].parent) {
			if (!r[v / 64])
				sc->words[nw++] = v / 64;
			tachi_bit_set(r, v);
		}
	}
	if (scan)
		nw = mark_by_scan(&st->trie, sc);
	else
		qsort(sc->words, nw, sizeof(*sc->words), word_cmp);
	sc->nwords = nw;
	if (wk.b.err)
		return walk_failed(w, &wk.b);
	uint32_t n = 0;
	for (uint32_t i = 0; i < nw; i++) {
		sc->rank[sc->words[i]] = n;
		n += popcount64(r[sc->words[i]]);
	}
	return TACH_OK;
}

static uint32_t stack_no(const struct scratch *sc, uint32_t node)
{
	uint64_t below = sc->reach[node / 64] & ((UINT64_C(1) << (node % 64)) - 1);
	return sc->rank[node / 64] + popcount64(below);
}

static void write_thread_head(struct tach_writer *w, const struct gthread *t, size_t ti,
			      bool is_main, uint64_t first)
{
	struct gstate *st = w->state;
	j_str(w, ti ? ",{\"name\":" : "{\"name\":");
	char name[96];
	size_t nl = 0;
	if (is_main) {
		memcpy(name, "GeckoMain", 9);
		nl = 9;
	} else if (t->placeholder) {
		memcpy(name, "No samples", 10);
		nl = 10;
	} else {
		/* The track list cuts long names: the ordinal first makes them differ there,
		 * the exact id follows. */
		memcpy(name, "Thread ", 7);
		nl = 7 + tachi_fmt_u64(name + 7, ti + 1);
		memcpy(name + nl, " (tid ", 6);
		nl += 6;
		nl += tachi_fmt_u64(name + nl, t->tid);
		if (t->iid) {
			memcpy(name + nl, ", interpreter ", 14);
			nl += 14;
			nl += tachi_fmt_u64(name + nl, t->iid);
		}
		name[nl++] = ')';
	}
	j_put(w, "\"", 1);
	j_put(w, name, nl);
	j_str(w, "\",\"processType\":\"default\",\"processName\":\"");
	j_str(w, st->pname ? st->pname : "Python");
	if (t->iid) {
		j_str(w, " interpreter ");
		j_u64(w, t->iid);
	}
	j_str(w, "\",\"pid\":");
	j_u64(w, t->iid);
	/* JSON numbers past 2^53 are rounded by the importer; such ids go as strings, which
	 * the profiler takes for a tid too. */
	j_str(w, ",\"tid\":");
	if (t->tid > (UINT64_C(1) << 53))
		j_str(w, "\"");
	j_u64(w, t->tid);
	if (t->tid > (UINT64_C(1) << 53))
		j_str(w, "\"");
	j_str(w, ",\"registerTime\":");
	if (t->recs.total)
		j_rel(w, first);
	else
		j_str(w, "0");
	j_str(w, ",\"unregisterTime\":null,\"samples\":{\"schema\":{\"stack\":0,\"time\":1,"
		 "\"eventDelay\":2");
	j_str(w, st->recorded ? ",\"threadCPUDelta\":3}" : "}");
	j_str(w, ",\"data\":[");
}

/* Samples one at a time: a record of weight N is N samples one interval apart, and a
 * sample is moved forward when a weighted record before it overlaps it. */
struct sampwalk {
	struct recwalk rw;
	struct grec rec;
	uint64_t k, iv, prev;
	bool any;
};

static inline bool samp_next(struct sampwalk *sw, uint64_t *tt, uint64_t *elapsed)
{
	if (sw->k == 0 || sw->k == sw->rec.weight) {
		if (!walk_next(&sw->rw, &sw->rec))
			return false;
		sw->k = 0;
	}
	uint64_t span;
	if (__builtin_mul_overflow(sw->k, sw->iv, &span) ||
	    __builtin_add_overflow(sw->rec.t, span, tt))
		*tt = UINT64_MAX;
	if (sw->any && *tt < sw->prev)
		*tt = sw->prev;
	*elapsed = sw->any ? *tt - sw->prev : sw->iv;
	sw->prev = *tt;
	sw->any = true;
	sw->k++;
	return true;
}

static void samp_start(struct sampwalk *sw, const struct gstate *st, const struct gthread *t,
		       const struct scratch *sc, uint64_t iv)
{
	memset(sw, 0, sizeof(*sw));
	walk_start(&sw->rw, st, t, sc);
	sw->iv = iv;
}

/* The text of a time's whole ms, kept: consecutive times mostly share it (ten samples a ms
 * at the usual interval), and formatting it is most of a time's cost. */
struct tcache {
	uint64_t ms; /* UINT64_MAX: none yet (no time's whole ms is that) */
	size_t len;
	char txt[24];
};
#define TCACHE_INIT { UINT64_MAX, 0, { 0 } }

/* Time t (µs, absolute) in ms relative to the start time, as fmt_rel; writes up to 24
 * bytes at p whatever the length. */
static inline size_t fmt_rel_c(char *p, uint64_t t, uint64_t start, struct tcache *c)
{
	if (TACHI_UNLIKELY(t < start))
		return tachi_fmt_ms(p, true, start - t);
	uint64_t us = t - start, ms = us / 1000;
	if (ms != c->ms) {
		c->ms = ms;
		c->len = tachi_fmt_u64(c->txt, ms);
	}
	memcpy(p, c->txt, sizeof(c->txt));
	return c->len + fmt_frac(p + c->len, (unsigned)(us - ms * 1000));
}

/* The interval markers of a thread: runs of consecutive samples with a state bit. Found in
 * the samples' pass, while they are written after all the samples, and there may be about
 * as many as samples: so the closed ones are spooled, packed as a flags byte (RF_ON | kind)
 * and varints of the end's difference from the previous marker's end (ends only move
 * forward), the run's time span and its sample count. */
struct marks {
	uint8_t bits;           /* the state bits of the last sample: the open runs */
	uint64_t start[NKINDS]; /* an open run's start time */
	uint64_t first[NKINDS]; /* the number of its first sample */
	uint64_t last_end;      /* of the last spooled marker */
	uint64_t n;             /* samples so far */
	uint64_t prev;          /* the last sample's time */
};
#define MARK_BITS (TACH_STATUS_HAS_GIL | TACH_STATUS_GIL_REQUESTED | TACH_STATUS_ON_CPU | \
		   TACH_STATUS_HAS_EXCEPTION)

static int mark_put(struct gstate *st, struct scratch *sc, struct marks *mk, size_t kind,
		    uint64_t start, uint64_t end, uint64_t count)
{
	struct tachi_stream *s = &sc->marks;
	int e = tachi_stream_room(&st->spool, s, REC_MAX);
	if (e)
		return e;
	uint8_t *p = s->buf + s->len;
	p[0] = (uint8_t)(RF_ON | kind);
	size_t o = 1 + tachi_put_uvarint(p + 1, end - mk->last_end);
	o += tachi_put_uvarint(p + o, end - start);
	o += tachi_put_uvarint(p + o, count);
	s->len += o;
	s->total++;
	mk->last_end = end;
	return 0;
}

/* Sample mk->n, at time tt, has state bits unlike the last one's: the runs it ends are
 * spooled (in kind order, as they are written), the runs it starts opened. */
static int mark_change(struct gstate *st, struct scratch *sc, struct marks *mk, uint8_t bits,
		       uint64_t tt)
{
	for (size_t m = 0; m < NKINDS; m++) {
		bool on = bits & kinds[m].bit, was = mk->bits & kinds[m].bit;
		if (on && !was) {
			mk->start[m] = tt;
			mk->first[m] = mk->n;
		} else if (!on && was) {
			int e = mark_put(st, sc, mk, m, mk->start[m], tt, mk->n - mk->first[m]);
			if (e)
				return e;
		}
	}
	mk->bits = bits;
	return 0;
}

static int marks_failed(struct tach_writer *w, int e)
{
	return WFAIL(w, e == ENOMEM ? TACH_E_NOMEM : TACH_E_IO,
		     "spooling markers to a temporary file: %s", strerror(e));
}

/* The samples' rows, and the thread's markers into mk and the spool. */
static int write_samples(struct tach_writer *w, struct scratch *sc, const struct gthread *t,
			 struct marks *mk)
{
	struct gstate *st = w->state;
	const uint64_t iv = w->meta.interval_us, t0 = w->meta.start_time_us;
	struct sampwalk sw;
	samp_start(&sw, st, t, sc, iv);
	memset(mk, 0, sizeof(*mk));
	tachi_stream_reset(&sc->marks);
	struct tcache tc = TCACHE_INIT;
	char ivt[24], stk[16];
	size_t ivl = tachi_fmt_u64(ivt, iv), stkl = 0;
	uint32_t node = NONE - 1; /* no node: the first record sets the text */
	uint64_t tt, elapsed;
	while (samp_next(&sw, &tt, &elapsed)) {
		if (sw.rec.node != node) {
			node = sw.rec.node;
			stkl = node == NONE ? (memcpy(stk, "null", 4), 4)
					    : fmt_u32(stk, stack_no(sc, node));
		}
		char *p = (char *)j_room(w, 96);
		size_t o = 0;
		p[0] = ',';
		o += mk->n != 0;
		p[o++] = '[';
		memcpy(p + o, stk, sizeof(stk));
		o += stkl;
		p[o++] = ',';
		o += fmt_rel_c(p + o, tt, t0, &tc);
		LIT(p, o, ",0");
		if (st->recorded) {
			p[o++] = ',';
			uint64_t cpu = 0;
			if (sw.rec.status & TACH_STATUS_ON_CPU)
				cpu = iv && elapsed > iv ? iv : elapsed;
			if (cpu == iv) {
				memcpy(p + o, ivt, sizeof(ivt));
				o += ivl;
			} else {
				o += tachi_fmt_u64(p + o, cpu);
			}
		}
		p[o++] = ']';
		st->jlen += o;
		uint8_t bits = sw.rec.status & MARK_BITS;
		int e;
		if (TACHI_UNLIKELY(bits != mk->bits) && (e = mark_change(st, sc, mk, bits, tt)))
			return marks_failed(w, e);
		mk->n++;
		if (st->err)
			return st->err;
	}
	mk->prev = sw.prev;
	return sw.rw.b.err ? walk_failed(w, &sw.rw.b) : st->err;
}

static void write_marker(struct tach_writer *w, bool comma, size_t kind, uint64_t start,
			 uint64_t end, uint64_t count, struct tcache *cs, struct tcache *ce)
{
	struct gstate *st = w->state;
	char *p = (char *)j_room(w, 256);
	size_t o = 0;
	if (comma)
		p[o++] = ',';
	p[o++] = '[';
	p[o++] = (char)('0' + kind); /* kinds and categories are single digits */
	p[o++] = ',';
	o += fmt_rel_c(p + o, start, w->meta.start_time_us, cs);
	p[o++] = ',';
	o += fmt_rel_c(p + o, end, w->meta.start_time_us, ce);
	LIT(p, o, ",1,");
	p[o++] = (char)('0' + kinds[kind].cat);
	LIT(p, o, ",{\"type\":\"PythonThreadState\",\"samples\":");
	o += tachi_fmt_u64(p + o, count);
	LIT(p, o, "}]");
	st->jlen += o;
}

/* Interval markers for the runs of samples in each state, in the order the runs end: the
 * spooled ones, then those still open after the last sample. */
static int write_markers(struct tach_writer *w, struct scratch *sc, const struct marks *mk)
{
	struct gstate *st = w->state;
	j_str(w, "]},\"markers\":{\"schema\":{\"name\":0,\"startTime\":1,\"endTime\":2,\"phase\":3,"
		 "\"category\":4,\"data\":5},\"data\":[");
	struct bwalk b;
	bwalk_start(&b, &st->spool, &sc->marks, sc->chunk);
	struct tcache cs = TCACHE_INIT, ce = TCACHE_INIT;
	uint64_t end = 0;
	bool comma = false;
	while (bwalk_more(&b, 4)) {
		const uint8_t *p = b.p + 1;
		uint64_t de, span, count;
		if (!bwalk_varint(&b, &p, &de) || !bwalk_varint(&b, &p, &span) ||
		    !bwalk_varint(&b, &p, &count))
			break;
		end += de;
		write_marker(w, comma, b.p[0] & 3, end - span, end, count, &cs, &ce);
		comma = true;
		b.p = p;
		if (st->err)
			return st->err;
	}
	if (b.err)
		return WFAIL(w, TACH_E_IO, "reading spooled markers back: %s", strerror(b.err));
	uint64_t fin;
	if (__builtin_add_overflow(mk->prev, w->meta.interval_us, &fin))
		fin = UINT64_MAX;
	for (size_t m = 0; m < NKINDS; m++)
		if (mk->bits & kinds[m].bit) {
			write_marker(w, comma, m, mk->start[m], fin, mk->n - mk->first[m], &cs, &ce);
			comma = true;
		}
	return st->err;
}

/* The decimal text of the number after the one in s (n digits; none stands for -1). */
static void dec_next(char *s, size_t *n)
{
	size_t i = *n;
	while (i && s[i - 1] == '9')
		s[--i] = '0';
	if (i) {
		s[i - 1]++;
		return;
	}
	memmove(s + 1, s, *n);
	s[0] = *n ? '1' : '0';
	(*n)++;
}

/* The stack table of the stacks mark_stacks found, whose marks it then clears; frames get
 * thread indices in first-use order. Returns their number. */
static uint32_t write_stack_table(struct tach_writer *w, struct scratch *sc, uint32_t stamp)
{
	struct gstate *st = w->state;
	j_str(w, "]},\"stackTable\":{\"schema\":{\"prefix\":0,\"frame\":1},\"data\":[");
	const struct tachi_node *nodes = st->trie.nodes;
	uint32_t nfr = 0, last = TACHI_ROOT;
	/* The previous row's number as text: a row's number is its rank among the rows, and
	 * most rows of a deep trie (its chains) have the previous row as their prefix, so the
	 * text is counted up a row at a time rather than formatted for each. */
	char prev[16];
	size_t plen = 0;
	bool comma = false;
	for (uint32_t k = 0; k < sc->nwords; k++) {
		uint32_t base = sc->words[k] * 64;
		for (uint64_t bits = sc->reach[sc->words[k]]; bits; bits &= bits - 1) {
			uint32_t i = base + (uint32_t)__builtin_ctzll(bits), g = nodes[i].key;
			if (sc->fstamp[g] != stamp) {
				sc->fstamp[g] = stamp;
				sc->fidx[g] = nfr;
				sc->flist[nfr++] = g;
			}
			char *p = (char *)j_room(w, 48);
			size_t o = 0;
			if (comma)
				p[o++] = ',';
			comma = true;
			p[o++] = '[';
			uint32_t parent = nodes[i].parent;
			if (parent == TACHI_ROOT) {
				LIT(p, o, "null");
			} else if (parent == last) {
				memcpy(p + o, prev, sizeof(prev));
				o += plen;
			} else {
				o += fmt_u32(p + o, stack_no(sc, parent));
			}
			p[o++] = ',';
			o += fmt_u32(p + o, sc->fidx[g]);
			p[o++] = ']';
			st->jlen += o;
			dec_next(prev, &plen);
			last = i;
		}
	}
	for (uint32_t k = 0; k < sc->nwords; k++)
		sc->reach[sc->words[k]] = 0;
	return nfr;
}

static void write_frame_row(struct tach_writer *w, const struct gframe *g, uint32_t sidx,
			    bool comma)
{
	struct gstate *st = w->state;
	const struct gfunc *f = &st->funcs[g->func];
	/* Python's pseudo frames (<GC>, ~) stay in the JavaScript-only view; native code does
	 * not belong there. */
	bool plain = func_kind(st, f) == LOC_PLAIN && !func_is_native(st, f);
	j_str(w, comma ? ",[" : "[");
	j_u64(w, sidx);
	j_str(w, plain ? ",true,null,null," : ",false,null,null,");
	if (g->line >= 0)
		j_i64(w, g->line);
	else
		j_str(w, "null");
	j_str(w, ",");
	if (g->col >= 0)
		j_i64(w, g->col);
	else
		j_str(w, "null");
	j_str(w, ",");
	uint8_t cat = g->cat, sub = g->sub;
	if (!st->recorded && cat == CAT_IDLE) {
		cat = g->base_cat;
		sub = SUB_NONE;
	}
	j_u64(w, cat);
	j_str(w, ",");
	j_u64(w, sub);
	j_str(w, "]");
}

/* The frame table, then the string table: the marker names, then the location strings
 * in first-use order. */
static void write_frames_strings(struct tach_writer *w, struct scratch *sc, uint32_t nfr,
				 uint32_t stamp)
{
	struct gstate *st = w->state;
	j_str(w, "]},\"frameTable\":{\"schema\":{\"location\":0,\"relevantForJS\":1,"
		 "\"innerWindowID\":2,\"implementation\":3,\"line\":4,\"column\":5,"
		 "\"category\":6,\"subcategory\":7},\"data\":[");
	uint32_t nstr = NKINDS;
	size_t nslist = 0;
	for (uint32_t i = 0; i < nfr; i++) {
		const struct gframe *g = &st->frames[sc->flist[i]];
		if (sc->sstamp[g->func] != stamp) {
			sc->sstamp[g->func] = stamp;
			sc->sidx[g->func] = nstr++;
			sc->slist[nslist++] = g->func;
		}
		write_frame_row(w, g, sc->sidx[g->func], i > 0);
	}
	j_str(w, "]},\"stringTable\":[");
	for (size_t m = 0; m < NKINDS; m++) {
		j_str(w, m ? ",\"" : "\"");
		j_str(w, kinds[m].name);
		j_str(w, "\"");
	}
	for (size_t i = 0; i < nslist; i++) {
		j_str(w, ",");
		j_put(w, sc->loc + sc->loc_off[sc->slist[i]],
		      sc->loc_off[sc->slist[i] + 1] - sc->loc_off[sc->slist[i]]);
	}
	j_str(w, "]}");
}

static int write_thread(struct tach_writer *w, struct scratch *sc, size_t ti, bool is_main)
{
	struct gstate *st = w->state;
	struct gthread *t = &st->th[ti];
	const uint32_t stamp = (uint32_t)ti + 1;
	struct marks mk;
	int rc;
	if (t->unsorted && (rc = sort_records(w, sc, t)))
		return rc;
	if ((rc = mark_stacks(w, sc, t)))
		return rc;
	write_thread_head(w, t, ti, is_main, t->first);
	if ((rc = write_samples(w, sc, t, &mk)) || (rc = write_markers(w, sc, &mk)))
		return rc;
	uint32_t nfr = write_stack_table(w, sc, stamp);
	write_frames_strings(w, sc, nfr, stamp);
	return st->err;
}
/* Interpreters that already have their main thread. */
struct iidset {
	uint32_t *v;
	size_t n, cap;
	struct tachi_idset index;
};

static bool iid_eq(void *ctx, uint32_t id, const void *k)
{
	const struct iidset *s = ctx;
	return s->v[id] == *(const uint32_t *)k;
}

static uint64_t iid_hash(uint32_t iid)
{
	return tachi_hash(&iid, sizeof(iid));
}


/* True when iid had no main thread yet (and records it). -1 on allocation failure. */
static int first_main(struct iidset *s, uint32_t iid)
{
	uint32_t id;
	uint64_t h = iid_hash(iid);
	if (tachi_idset_find(&s->index, h, &iid, iid_eq, s, &id))
		return 0;
	if (!TACHI_RESERVE(s->v, s->cap, s->n + 1))
		return -1;
	s->v[s->n] = iid;
	if (!tachi_idset_insert(&s->index, h, (uint32_t)s->n))
		return -1;
	s->n++;
	return 1;
}

/* The scratch of close; false when out of memory. No stack is interned past here, so
 * the trie's lookups go before the bitmap that numbers its stacks comes. */
static bool scratch_alloc(struct gstate *st, struct scratch *sc)
{
	tachi_stacktab_drop_lookups(&st->trie);
	size_t nw = st->trie.count / 64 + 1;
	sc->reach = calloc(nw, sizeof(*sc->reach));
	sc->rank = malloc(nw * sizeof(*sc->rank));
	sc->words = malloc(nw * sizeof(*sc->words));
	size_t nf = st->nframes ? st->nframes : 1, nu = st->nfuncs ? st->nfuncs : 1;
	sc->fidx = malloc(nf * sizeof(*sc->fidx));
	sc->fstamp = calloc(nf, sizeof(*sc->fstamp));
	sc->flist = malloc(nf * sizeof(*sc->flist));
	sc->sidx = malloc(nu * sizeof(*sc->sidx));
	sc->sstamp = calloc(nu, sizeof(*sc->sstamp));
	sc->slist = malloc(nu * sizeof(*sc->slist));
	sc->chunk = malloc(st->spool.chunk_recs);
	return sc->fidx && sc->fstamp && sc->flist && sc->sidx && sc->sstamp && sc->slist &&
	       sc->chunk && sc->reach && sc->rank && sc->words;
}

static void scratch_free(struct scratch *sc)
{
	free(sc->perm);
	free(sc->reach);
	free(sc->rank);
	free(sc->words);
	free(sc->fidx);
	free(sc->fstamp);
	free(sc->flist);
	free(sc->sidx);
	free(sc->sstamp);
	free(sc->slist);
	free(sc->chunk);
	tachi_stream_free(&sc->marks);
	free(sc->all);
	free(sc->loc);
	free(sc->loc_off);
}

/* st->pname from the input's program path: its last component, as JSON text; for a native
 * profile without one, the name of the format read. */
static int name_process(struct tach_writer *w)
{
	struct gstate *st = w->state;
	const char *prog = w->meta.program;
	if ((!prog || !*prog) && st->native)
		prog = w->meta.source_format && *w->meta.source_format ? w->meta.source_format
									: "native";
	if (!prog || !*prog)
		return TACH_OK;
	const char *base = strrchr(prog, '/');
	base = base && base[1] ? base + 1 : prog;
	size_t n = strlen(base);
	bool repaired = false;
	if (n > SIZE_MAX / 6 - 1 || !(st->pname = malloc(n * 6 + 1)))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	st->pname[tachi_json_escape(st->pname, base, n, &repaired)] = '\0';
	return TACH_OK;
}

/* Whether the profile is native (no frame in a Python source; an input without frames
 * that names no Python version), and its library table. */
static int prepare_native(struct tach_writer *w)
{
	struct gstate *st = w->state;
	st->native = !st->any_python && (st->nfuncs || !w->meta.py_major);
	bool repaired = false;
	if (tachi_gecko_libs_build(&st->libs, st->src, &repaired))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (repaired)
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "a library's file name is not valid UTF-8: invalid bytes written as U+FFFD");
	return TACH_OK;
}

static int gw_close(struct tach_writer *w)
{
	struct gstate *st = w->state;
	struct scratch sc = { 0 };
	struct iidset mains = { 0 };
	int rc = TACH_OK;
	st->jbuf = malloc(JBUF);
	if (!st->jbuf)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (!st->plain) {
		int e = tachi_gz_open(&st->gz, &w->out, st->level ? st->level : 1, st->gz_threads);
		if (e)
			return tachi_gz_failed(w, e);
	}
	if (!scratch_alloc(st, &sc)) {
		rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
		goto out;
	}
	if ((rc = prepare_native(w)))
		goto out;
	if (st->nfuncs && (rc = build_locations(w, &sc)))
		goto out;
	if ((rc = name_process(w)))
		goto out;
	/* The profiler refuses a profile without threads. */
	if (!st->nth) {
		if (!TACHI_RESERVE(st->th, st->th_cap, 1)) {
			rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
			goto out;
		}
		memset(st->th, 0, sizeof(*st->th));
		st->th[0].placeholder = true;
		st->nth = 1;
	}
	write_meta(w);
	for (size_t i = 0; i < st->nth; i++) {
		int is_main = 0;
		if (st->th[i].main && (is_main = first_main(&mains, st->th[i].iid)) < 0) {
			rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
			goto out;
		}
		if ((rc = write_thread(w, &sc, i, is_main == 1)))
			goto out;
	}
	j_str(w, "]}\n");
	j_flush(w);
	if (!st->err && !st->plain) {
		int e = tachi_gz_finish(st->gz);
		if (e)
			st->err = tachi_gz_failed(w, e);
	}
	rc = st->err;
out:
	scratch_free(&sc);
	free(mains.v);
	tachi_idset_free(&mains.index);
	return rc;
}

static void gw_free(struct tach_writer *w)
{
	struct gstate *st = w->state;
	free(st->fmap);
	free(st->funcs);
	tachi_idset_free(&st->func_index);
	free(st->frames);
	tachi_idset_free(&st->frame_index);
	free(st->vkey);
	tachi_threads_free(&st->paths);
	tachi_stacktab_free(&st->trie);
	for (size_t i = 0; i < st->nth; i++)
		tachi_stream_free(&st->th[i].recs);
	tachi_spool_free(&st->spool);
	free(st->th);
	free(st->jbuf);
	free(st->pname);
	tachi_gecko_libs_free(&st->libs);
	tachi_gz_free(st->gz);
}

static int gw_begin(struct tach_writer *w)
{
	struct gstate *st = w->state;
	tachi_spool_init_bytes(&st->spool, SPOOL_CHUNK);
	return TACH_OK;
}

static const struct tachi_writer_ops writer_ops = {
	.state_size = sizeof(struct gstate),
	.option = gw_option,
	.begin = gw_begin,
	.put = gw_put,
	.close = gw_close,
	.free = gw_free,
	.trie_at = offsetof(struct gstate, trie) + 1,
};

const struct tachi_format tachi_fmt_gecko = {
	.name = "gecko",
	.reader = NULL,
	.writer = &writer_ops,
};
