/* Gecko profile writer: the JSON the Firefox Profiler imports (its "Gecko" format, the one
 * Firefox itself emits, not the processed format CPython's exporter writes), gzip-compressed
 * by default.
 *
 * What is written (notes: spec/gecko.md, checked against the profiler's own importer):
 *   - meta.version 31: every front end since 2024 reads it, and the importer upgrades it;
 *     processes empty, presymbolicated, a grey default category, a marker schema; libs
 *     from the input's mappings (gecko/write_native.c), empty for Python.
 *   - One thread per (thread id, interpreter id), in first-seen order, each with its own
 *     string, frame and stack tables (the format has no shared tables). Threads of one
 *     interpreter form one process (pid = interpreter id); a thread whose stacks end in
 *     perf's process root (formats/comm.h) is named "COMM (tid N)", its process by that
 *     root's pid and by the comm of the thread of that tid. The first thread of an
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
 *   - A frame with a JFR frame type (the JFR reader's files "[Interpreted]", "[JIT compiled]",
 *     "[C1 compiled]", "[Inlined]", "[C++]", "[Kernel]", "[Native]") is in its type's
 *     category instead, coloured as async-profiler's flame graphs colour the types. Those
 *     categories are appended to the list, and only where such a frame is: the indices the
 *     state rows use stay, and every other input's output keeps its bytes. "[Native]" is
 *     the Native category, red in such a profile: a second "Native" would split native
 *     code in two. Functions are named as before (by file and line, not type).
 *   - Sample categories carry the thread state: the leaf frame of each sample is in
 *     Python (has the GIL), Native (on CPU without the GIL), Idle (neither: the profiler's
 *     "include idle samples" switch) or Other (state unknown); subcategory "Waiting for GIL"
 *     marks Native and Idle samples that requested the GIL. threadCPUDelta is one interval
 *     (at most the time since the thread's previous sample) for on-CPU samples, else 0.
 *     Interval markers "Has GIL", "Waiting for GIL", "On CPU", "Has Exception" (CPython's
 *     names) cover runs of consecutive samples of a thread in that state. When no sample of
 *     the whole input has any GIL/CPU state bit (inputs that do not record a state), leaf
 *     frames keep their frame's category and there is no threadCPUDelta column, rather than
 *     showing every sample as idle. A leaf frame with a JFR frame type keeps its own
 *     row (its type) in every state but idle, where it is Idle: the breakdown counts
 *     on-CPU samples by the type of code they ran, as Java users read a flame graph, and
 *     the idle switch still hides idle ones (JFR samples are on CPU or idle, or of unknown
 *     state: allocations, locks, whose leaf is no typed frame).
 *   - Times: meta.startTime is the input's start time in ms, which for TACH is CPython's
 *     monotonic clock, not the epoch: the profiler shows a date near 1970, and a sample time
 *     plus startTime gives back the recorded timestamp exactly. Sample and marker times are
 *     ms relative to it, written exactly (µs precision) without locale.
 *   - A sample of weight N becomes N samples its own time / N apart (one interval where
 *     it has none): the format has no sample weights (the importer sets them to null, so
 *     its call tree counts samples), and the time the profiler gives a sample is the time
 *     to the next one of its thread (its traced running time), the last one's one
 *     interval: where a thread's last sample's own time is not the interval, a sample
 *     without a stack follows at its end (write_tables.c). Samples are written in
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
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/utf8.h"
#include "base/io.h"
#include "base/gzip.h"
#include "base/jsonout.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/spool.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"

#include "formats/gecko/gecko.h"
#include "formats/gecko/write.h"
#include "formats/comm.h"

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
	if (!strcmp(key, "processed")) {
		if (!tachi_parse_bool(value, &st->processed))
			return WFAIL(w, TACH_E_USAGE, "bad processed value %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "level"))
		return tachi_gzip_level(w, value, &st->level);
	if (!strcmp(key, "threads"))
		return tachi_gzip_threads(w, value, &st->gz_threads);
	return WFAIL(w, TACH_E_USAGE, "gecko writer has no option %s", key);
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

/* The category of a JFR frame type (the JFR reader's file of a Java frame), 0 for any other
 * file. JFR's Native is the Native category: another category of that name would split
 * native code in two. */
static uint8_t jfr_category(const struct tach_dict *d, const struct tach_frame *f)
{
	static const struct {
		const char *file;
		uint8_t cat;
	} types[] = {
		{ "[Interpreted]", CAT_INTERPRETED }, { "[JIT compiled]", CAT_JIT },
		{ "[C1 compiled]", CAT_C1 },	      { "[Inlined]", CAT_INLINED },
		{ "[C++]", CAT_CPP },		      { "[Kernel]", CAT_KERNEL },
		{ "[Native]", CAT_NATIVE },
	};
	size_t n;
	const char *file = tachi_str(d, f->file, &n);
	if (n < 5 || file[0] != '[')
		return 0;
	for (size_t i = 0; i < sizeof(types) / sizeof(types[0]); i++)
		if (strlen(types[i].file) == n && !memcmp(types[i].file, file, n))
			return types[i].cat;
	return 0;
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
	/* how the function is named stays the file's and line's, whatever its JFR type */
	k.native_code = cat == CAT_NATIVE;
	uint8_t type = jfr_category(d, f);
	if (type) {
		cat = type;
		st->jfr = true;
	}
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
	/* a column without a line is no position (CPython drops it): a module+offset
	 * frame's holds its mapping's file offset */
	int32_t col = f->line < 0 || f->col < 0 ? -1 : f->col;
	struct gframe g = { fn, f->line < 0 ? -1 : f->line, col, cat, SUB_NONE, cat, type != 0 };
	uint32_t id = intern_frame(st, &g);
	if (id == NONE)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	st->fmap[fid] = id;
	st->nmapped++;
	return TACH_OK;
}

/* A leaf that keeps its own row (category): no state is 0xff (state_of's are below 8). */
#define STATE_OWN 0xff

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

/* The leaf category of a sample whose leaf frame is row key: a JFR frame type, which is
 * what Java users read a sample's category as, stays unless the sample is idle (the
 * profiler's idle switch); every other frame's is its thread's state. */
static uint8_t leaf_state(const struct gstate *st, uint32_t key, uint8_t status)
{
	uint8_t state = state_of(status);
	return st->frames[key].typed && state >> 1 != CAT_IDLE ? STATE_OWN : state;
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
		t->comm = NONE;
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


static int put_record(struct gstate *st, struct gthread *t, uint64_t ts, uint64_t weight,
		      uint32_t node, uint8_t status, uint64_t step)
{
	int e = tachi_stream_room(&st->spool, &t->recs, REC_MAX);
	if (TACHI_UNLIKELY(e))
		return e;
	uint8_t *p = t->recs.buf + t->recs.len;
	p[0] = (uint8_t)(RF_ON | (weight != 1 ? RF_WEIGHT : 0) | (node == NONE ? RF_NONODE : 0) |
			 (step != STEP_IV ? RF_STEP : 0));
	p[1] = status;
	/* a difference that went back in time wraps, and wraps back when added */
	size_t o = 2 + put_uv(p + 2, zigzag64(ts - t->last_t));
	if (node != NONE) {
		o += put_uv(p + o, node);
	}
	if (weight != 1)
		o += put_uv(p + o, weight);
	if (step != STEP_IV)
		o += put_uv(p + o, step);
	if (step == STEP_IV)
		st->untimed = true;
	t->recs.len += o;
	t->recs.total++;
	t->last_t = ts;
	return 0;
}

static int gw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct gstate *st = w->state;
	/* the same dict for every sample: tach_writer_put checks it */
	if (TACHI_UNLIKELY(!st->src)) {
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
	const char *cn;
	size_t cl;
	int32_t pid;
	if (s->depth && s->frames[s->depth - 1] != t->comm &&
	    tachi_comm_frame(d, s->frames[s->depth - 1], &cn, &cl, &pid))
		t->comm = s->frames[s->depth - 1];
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
		uint8_t state = leaf_state(st, st->fmap[s->frames[0]], s->status);
		if (inner == t->last_inner && state == t->last_state) {
			leaf = t->last_leaf;
		} else {
			/* the leaf's key is its frame's, mapped: reading it from the node would
			 * cost a cache miss a sample wherever the whole-stack set answered */
			uint32_t key = st->fmap[s->frames[0]], v = key;
			assert(key == st->trie.nodes[inner].key);
			if (TACHI_UNLIKELY(state != STATE_OWN && !variant(st, key, state, &v)))
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
	/* the samples' own time, to the µs, where it is not the interval */
	uint64_t step = STEP_IV, each = w->meta.interval_us, span;
	if (w->meta.sample_time && s->time_ns / weight / 1000 != w->meta.interval_us) {
		step = each = (s->time_ns / weight + 500) / 1000;
		if (step == w->meta.interval_us)
			step = STEP_IV;
	}
	if (__builtin_mul_overflow(weight - 1, each, &span) ||
	    __builtin_add_overflow(s->timestamp_us, span, &t->last_end))
		t->last_end = UINT64_MAX;
	int e = put_record(st, t, s->timestamp_us, weight, leaf, s->status, step);
	if (e)
		return WFAIL(w, e == ENOMEM ? TACH_E_NOMEM : TACH_E_IO,
			     "spooling samples to a temporary file: %s", strerror(e));
	return TACH_OK;
}

/* ---- close: the JSON document ---- */

/* The categories, around the name of the second, "Python", or for a profile that is not
 * Python's (its scripts: V8's JavaScript, templates), "Script"; and the colour of the third,
 * Native, which is red in a profile with JFR frame types. */
static const char *const cat_json_head =
	"[{\"name\":\"Other\",\"color\":\"grey\",\"subcategories\":[\"Other\"]},{\"name\":\"";
static const char *const cat_json =
	"\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Native\",\"color\":\"";
static const char *const cat_json_tail =
	"\",\"subcategories\":[\"Other\",\"Waiting for GIL\"]},"
	"{\"name\":\"Idle\",\"color\":\"transparent\",\"subcategories\":[\"Other\",\"Waiting for GIL\"]},"
	"{\"name\":\"GIL\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"CPU\",\"color\":\"purple\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Exception\",\"color\":\"lightblue\",\"subcategories\":[\"Other\"]}";

/* The categories of JFR frame types, in async-profiler's flame graph colours (Java green,
 * inlined aqua, C++ yellow, kernel orange, native red: Native's own, recoloured). Written
 * only where a frame has such a type, appended: every other input's profile keeps its
 * bytes, and the indices above stay what the state rows use. */
static const char *const cat_jfr_json =
	",{\"name\":\"Interpreted\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"JIT compiled\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"C1 compiled\",\"color\":\"green\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Inlined\",\"color\":\"lightblue\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"C++\",\"color\":\"yellow\",\"subcategories\":[\"Other\"]},"
	"{\"name\":\"Kernel\",\"color\":\"orange\",\"subcategories\":[\"Other\"]}";

static const char *const schema_json =
	"[{\"name\":\"PythonThreadState\","
	"\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
	"\"chartLabel\":\"{marker.name}\",\"tooltipLabel\":\"{marker.name}\","
	"\"tableLabel\":\"{marker.name} ({marker.data.samples} samples)\","
	"\"description\":\"Consecutive samples of this thread in one state (TACH status flags)\","
	"\"data\":[{\"key\":\"samples\",\"label\":\"Samples\",\"format\":\"integer\"}]}]";
/* The same in the processed format, whose schemas name their fields so since its
 * version 55. */
static const char *const schema_json_processed =
	"[{\"name\":\"PythonThreadState\","
	"\"display\":[\"marker-chart\",\"marker-table\",\"timeline-overview\"],"
	"\"chartLabel\":\"{marker.name}\",\"tooltipLabel\":\"{marker.name}\","
	"\"tableLabel\":\"{marker.name} ({marker.data.samples} samples)\","
	"\"description\":\"Consecutive samples of this thread in one state (TACH status flags)\","
	"\"fields\":[{\"key\":\"samples\",\"label\":\"Samples\",\"format\":\"integer\"}]}]";

static void write_meta(struct tach_writer *w)
{
	struct gstate *st = w->state;
	const struct tach_meta *m = &w->meta;
	char b[32];
	j_str(w, st->processed ? "{\"meta\":{\"preprocessedProfileVersion\":57,\"symbolicated\":true,"
				 "\"version\":31,\"startTime\":"
			       : "{\"meta\":{\"version\":31,\"startTime\":");
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
		/* The Profiler titles the profile with the product: the mode tells a CPU
		 * profile from a wall-clock one. */
		const char *mode = tach_profiling_mode(m->profiling_config);
		if (mode) {
			j_str(w, " (");
			j_str(w, mode);
			j_str(w, " mode)");
		}
	}
	j_str(w, "\",\"presymbolicated\":true,\"categories\":");
	j_str(w, cat_json_head);
	j_str(w, st->native ? "Script" : "Python");
	j_str(w, cat_json);
	j_str(w, st->jfr ? "red" : "blue");
	j_str(w, cat_json_tail);
	if (st->jfr)
		j_str(w, cat_jfr_json);
	j_str(w, "]");
	j_str(w, ",\"markerSchema\":");
	j_str(w, st->processed ? schema_json_processed : schema_json);
	if (st->recorded)
		j_str(w, ",\"sampleUnits\":{\"time\":\"ms\",\"eventDelay\":\"ms\","
			 "\"threadCPUDelta\":\"\xC2\xB5s\"}");
	/* Without samples the profiler finds no time range (it shows "-inf"): one interval. */
	if (st->nth == 1 && st->th[0].placeholder) {
		j_str(w, ",\"profilingStartTime\":0,\"profilingEndTime\":");
		j_put(w, b, tachi_fmt_ms(b, false, m->interval_us ? m->interval_us : 1000));
	}
	/* The processed format's libs are another shape, and serve only symbolication, which
	 * this profile has had. */
	if (st->processed) {
		j_str(w, "},\"libs\":[],\"pages\":[],\"counters\":[],\"threads\":[");
		return;
	}
	j_str(w, "},\"libs\":");
	if (st->libs.json)
		j_put(w, st->libs.json, st->libs.len);
	else
		j_str(w, "[]");
	j_str(w, ",\"processes\":[],\"pausedRanges\":[],\"threads\":[");
}

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
	if (st->nfuncs && (rc = tachi_gecko_locations(w, &sc)))
		goto out;
	if ((rc = name_process(w)))
		goto out;
	if (st->processed && (rc = tachi_gecko_strings_init(w)))
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
		rc = st->processed ? tachi_gecko_write_thread_processed(w, &sc, i, is_main == 1)
				   : tachi_gecko_write_thread(w, &sc, i, is_main == 1);
		if (rc)
			goto out;
	}
	if (st->processed) {
		j_str(w, "],\"shared\":{\"stringArray\":[");
		j_put(w, st->sa, st->sa_len);
		j_str(w, "]}}\n");
	} else {
		j_str(w, "]}\n");
	}
	tachi_gecko_flush(w);
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
	free(st->sa);
	free(st->sa_off);
	tachi_idset_free(&st->sa_index);
	free(st->pcache);
	tachi_gecko_libs_free(&st->libs);
	tachi_gz_free(st->gz);
}

static int gw_begin(struct tach_writer *w)
{
	struct gstate *st = w->state;
	tachi_spool_init_bytes(&st->spool, SPOOL_CHUNK);
	return TACH_OK;
}

const struct tachi_writer_ops tachi_gecko_writer_ops = {
	.state_size = sizeof(struct gstate),
	.option = gw_option,
	.begin = gw_begin,
	.put = gw_put,
	.close = gw_close,
	.free = gw_free,
	.trie_at = offsetof(struct gstate, trie) + 1,
};

