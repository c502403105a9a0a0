/* Java Flight Recorder reader: the recordings of the JDK's own recorder
 * (`java -XX:StartFlightRecording`, `jcmd PID JFR.start`: format 2.1 since JDK 14, 2.0
 * before) and of async-profiler (`-o jfr`: format 2.0).
 *
 * A file is one or more chunks (the JDK rotates them; `cat a.jfr b.jfr` is a recording),
 * each a 68-byte big-endian header (magic "FLR\0", version, size, the offsets of its last
 * constant pool event and of its metadata event, start in ns since the epoch, duration,
 * start in ticks, ticks per second, flags: bit 0 compressed integers) and then events,
 * each its size and type id first. The metadata event (type 0) defines the chunk's types:
 * their names, ids and fields in order, each field of a type, maybe an array, maybe a
 * reference into the constant pools (events of type 1: per type, keys and values). Every
 * chunk has its own types, ids and pools; every field is read by the chunk's metadata
 * (read_chunk.c), never by a fixed layout.
 *
 * What a sample becomes: one sample per event of the chosen types (option event, below;
 * by default those jfrconv reads by default: jdk.ExecutionSample, jdk.NativeMethodSample,
 * profiler.WallClockSample, jdk.CPUTimeSample), in file order:
 *   - thread id: the event's thread's OS thread id (async-profiler's key for the thread,
 *     which jfrconv prints as "tid=N"), else its key in the recording (a thread the OS
 *     does not know: a virtual thread); the thread's name (its Java name, else its OS name) as the root
 *     frame "[comm]" that writers take thread names from (formats/comm.h), its line the
 *     process id of the chunk's jdk.JVMInformation event (-1 without one), as perf's roots
 *     carry theirs;
 *   - timestamp: the event's start in ticks as the JDK converts it (chunk start + ticks
 *     since the chunk's start ticks / ticks per ns), µs since the epoch, rounded down;
 *   - status: on CPU for STATE_RUNNABLE (the JDK) and STATE_DEFAULT (async-profiler's CPU
 *     samples), none (idle) for the other states, unknown without one (allocations, locks);
 *     writers keep it (pprof as its "thread state" label), the state's JFR name is not kept;
 *   - frames, leaf first: "class.method" with the class as the JVM names it
 *     ("java/util/HashMap.merge", "Many$$Lambda$88+0x00007efbe0007a08/172032696.call"), a
 *     bare name for native code (no class, or async-profiler's C++ and kernel frames), the
 *     line (0: none), and as the file the frame type in brackets ("[Interpreted]",
 *     "[JIT compiled]", "[Inlined]", "[Native]", "[C++]", "[Kernel]", "[C1 compiled]"), so
 *     that frames of one method compiled differently stay apart, as jfrconv keeps them;
 *   - allocation events end in a frame of the allocated class, as jfrconv shows it
 *     ("java.util.HashMap$Node", "byte[]"), file "[allocated class]", or "[allocated
 *     outside TLAB]" for jdk.ObjectAllocationOutsideTLAB and jdk.ObjectAllocationSample;
 *     lock events in the monitor's or the parked-on class, file "[lock class]".
 * Values (struct tach_sample_ext, typed in the meta): CPU and native samples one
 * "samples"; wall-clock samples (option event=wall) their "samples" and their "timeSpan"
 * as time ("wall", ns: the sample's time_ns, meta.sample_time); allocations one
 * "alloc_samples" and "alloc_space" bytes (what the sample stands for, as jfrconv weighs
 * it: a new TLAB's size, which async-profiler sets to its sampling interval; else the
 * allocation's size; ObjectAllocationSample's weight); locks one "contentions" and their "delay" (duration, ns). The weight is the
 * count, or with option total the bytes or the delay (meta.weight_unit), as jfrconv's
 * --total weighs.
 *
 * Refused with the offset: a chunk that does not start "FLR\0", format 1.x (by name) or
 * any but 2.x, sizes and offsets outside the chunk or file, counts beyond the bytes left,
 * metadata classes with the same id or fields of undefined types, values nested past 32,
 * strings longer than 1 MiB, stacks deeper than max-depth. A chunk cut short or unfinished
 * (its recorder was killed) after whole ones: a warning naming its offset and what is
 * lost, and the chunks before it are read; a first chunk so: an error. A reference to a
 * constant the pools lack reads as null, as the JDK reads it ("unknown" methods).
 *
 * Also: a frame's bytecode index is its column (where it has a line); an Inlined frame
 * is marked inlined (native data without an address) into the next frame out, so that
 * pprof and OTLP make one Location of them; jdk.CPUTimeSample's samplingPeriod is its
 * "cpu" time (event=cputime); the events of every type are counted for
 * meta.record_kinds, and none of the chosen types is an error naming them.
 *
 * Not read: method descriptors, class loaders, the events this reader does not turn
 * into samples (skipped by their sizes), settings and recording options.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "core/handles.h"
#include "core/format.h"
#include "model/dict.h"
#include "formats/jfr/jfr.h"

/* The event fields a sample is made of, by name (read_chunk.c finds them per type). */
enum {
	F_TIME, F_SAMPLED, F_THREAD, F_STACK, F_STATE, F_SAMPLES, F_SPAN, F_CLASS, F_ALLOC,
	F_WEIGHT, F_DURATION, F_MONITOR, F_PARKED, F_TLAB, F_PERIOD, F_COUNT
};
static const char *const event_fields[F_COUNT] = {
	"startTime", "sampledThread", "eventThread", "stackTrace", "state", "samples", "timeSpan",
	"objectClass", "allocationSize", "weight", "duration", "monitorClass", "parkedClass", "tlabSize",
	"samplingPeriod",
};

/* The fields of the pool types read per frame and thread, by name, each type's own
 * slots (chunk_open): the per-frame path matches no names. */
static const char *const frame_fields[] = { "method", "lineNumber", "type", "bytecodeIndex" };
static const char *const method_fields[] = { "type", "name" };
static const char *const class_fields[] = { "name" };
static const char *const thread_fields[] = { "javaName", "osName", "osThreadId" };
static const struct { int t; const char *const *names; size_t n; } type_fields[] = {
	{ T_FRAME, frame_fields, 4 }, { T_METHOD, method_fields, 2 }, { T_CLASS, class_fields, 1 },
	{ T_THREAD, thread_fields, 3 },
};

#define GROUP_SAMPLES (1u << EV_EXEC | 1u << EV_NATIVE | 1u << EV_WALL | 1u << EV_CPUTIME)
#define GROUP_ALLOC (1u << EV_ALLOC_TLAB | 1u << EV_ALLOC_OUTSIDE | 1u << EV_ALLOC_SAMPLE)
#define GROUP_LOCK (1u << EV_MONITOR | 1u << EV_PARK)

/* The names option event takes: jfrconv's words, and each event type by its name. */
static const struct { const char *name; uint32_t bits; } event_names[] = {
	{ "cpu", 1u << EV_EXEC }, { "native", 1u << EV_NATIVE }, { "wall", 1u << EV_WALL },
	{ "cputime", 1u << EV_CPUTIME }, { "alloc", GROUP_ALLOC }, { "lock", GROUP_LOCK },
	{ "samples", GROUP_SAMPLES },
	{ "jdk.ExecutionSample", 1u << EV_EXEC }, { "jdk.NativeMethodSample", 1u << EV_NATIVE },
	{ "profiler.WallClockSample", 1u << EV_WALL }, { "jdk.CPUTimeSample", 1u << EV_CPUTIME },
	{ "jdk.ObjectAllocationInNewTLAB", 1u << EV_ALLOC_TLAB },
	{ "jdk.ObjectAllocationOutsideTLAB", 1u << EV_ALLOC_OUTSIDE },
	{ "jdk.ObjectAllocationSample", 1u << EV_ALLOC_SAMPLE },
	{ "jdk.JavaMonitorEnter", 1u << EV_MONITOR }, { "jdk.ThreadPark", 1u << EV_PARK },
};

static int event_option(struct tach_reader *r, const char *value)
{
	struct jfr_state *st = r->state;
	uint32_t bits = 0;
	for (const char *p = value; *p;) {
		const char *e = strchr(p, ',');
		size_t n = e ? (size_t)(e - p) : strlen(p), i;
		for (i = 0; i < sizeof(event_names) / sizeof(event_names[0]); i++)
			if (strlen(event_names[i].name) == n && !memcmp(event_names[i].name, p, n))
				break;
		if (i == sizeof(event_names) / sizeof(event_names[0]))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "event %.*s: not one of cpu, "
				     "native, wall, cputime, alloc, lock, samples or a JFR event name "
				     "(tachfmt(5) lists them)", (int)(n > 60 ? 60 : n), p);
		bits |= event_names[i].bits;
		p += n + (e != NULL);
	}
	if (!bits || ((bits & GROUP_SAMPLES) != 0) + ((bits & GROUP_ALLOC) != 0) +
		     ((bits & GROUP_LOCK) != 0) > 1)
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "event %s: choose events of one kind "
			     "(samples, allocations or locks), whose values are alike", value);
	st->want = bits;
	snprintf(st->event_opt, sizeof(st->event_opt), "%s", value);
	return TACH_OK;
}

static int jr_option(struct tach_reader *r, const char *key, const char *value)
{
	struct jfr_state *st = r->state;
	if (!strcmp(key, "event"))
		return event_option(r, value);
	if (!strcmp(key, "total")) {
		if (!tachi_parse_bool(value, &st->total))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad total value %s", value);
		return TACH_OK;
	}
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "jfr reader has no option %s", key);
}

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

/* The fields of a struct of type t named in want (the names of type_fields[tf]): by the
 * chunk's slots where t is the type they were made for, else by name. */
static int fields_of(struct tach_reader *r, struct jfr_cur *c, uint32_t t, int tf,
		     struct jfr_val *out)
{
	struct jfr_state *st = r->state;
	if (t == st->tix[type_fields[tf].t])
		return tachi_jfr_struct_slots(r, c, t, st->slot, out, type_fields[tf].n);
	return tachi_jfr_struct(r, c, t, type_fields[tf].names, type_fields[tf].n, out);
}
enum { TF_FRAME, TF_METHOD, TF_CLASS, TF_THREAD };

static int intern(struct tach_reader *r, const char *file, size_t fl, const char *func,
		  size_t nl, int32_t line, uint32_t *id)
{
	struct tach_frame f = { 0, 0, line, line, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, file, fl, &f.file) ||
	    tach_dict_intern_string(&r->dict, func, nl, &f.func) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return nomem(r);
	return TACH_OK;
}

/* ---- threads ---- */

static bool thread_eq(void *ctx, uint32_t i, const void *key)
{
	const struct jfr_state *st = ctx;
	return st->threads[i].key == *(const uint64_t *)key;
}

/* Thread v: its id (the OS thread id, else its key in the recording) and the root frame
 * naming it (JFR_NONE: no name). */
static int thread_root(struct tach_reader *r, const struct jfr_val *v, uint64_t *tid,
		       uint32_t *root)
{
	struct jfr_state *st = r->state;
	struct jfr_cur c;
	struct jfr_val f[3];
	const char *s;
	size_t n;
	*root = JFR_NONE;
	*tid = v->kind == JV_KEY ? v->u : 0;
	if (!tachi_jfr_struct_at(r, v, &c))
		return TACH_OK;
	int rc = fields_of(r, &c, v->type, TF_THREAD, f);
	if (rc || (rc = tachi_jfr_string(r, &f[0], &s, &n)))
		return rc;
	if (!s && (rc = tachi_jfr_string(r, &f[1], &s, &n)))
		return rc;
	if (f[2].kind == JV_NUM && f[2].u)
		*tid = f[2].u;
	return s ? intern(r, "[comm]", 6, s, n, st->pid, root) : TACH_OK;
}

static int thread_of(struct tach_reader *r, const struct jfr_val *v, uint64_t *tid,
		     uint32_t *root)
{
	struct jfr_state *st = r->state;
	uint32_t i;
	*tid = 0;
	*root = JFR_NONE;
	if (v->kind != JV_KEY)
		return v->kind == JV_AT ? thread_root(r, v, tid, root) : TACH_OK;
	uint64_t h = tachi_mix64(v->u);
	if (tachi_idset_find(&st->thread_ix, h, &v->u, thread_eq, st, &i)) {
		*tid = st->threads[i].tid;
		*root = st->threads[i].root;
		return TACH_OK;
	}
	int rc = thread_root(r, v, tid, root);
	if (rc)
		return rc;
	if (!TACHI_RESERVE(st->threads, st->threads_cap, st->nthreads + 1) ||
	    !tachi_idset_insert(&st->thread_ix, h, (uint32_t)st->nthreads))
		return nomem(r);
	st->threads[st->nthreads++] = (struct jfr_thread){ v->u, *tid, *root };
	return TACH_OK;
}

/* ---- frames ---- */

static bool method_eq(void *ctx, uint32_t i, const void *key)
{
	const struct jfr_state *st = ctx;
	const struct jfr_method *k = key;
	return st->methods[i].key == k->key && st->methods[i].native == k->native;
}

/* class + '.' + method of method v, or the bare name where jfrconv gives it (no class
 * name; native code): into *func (a dict string), cached by key and nativeness. */
static int method_name(struct tach_reader *r, const struct jfr_val *v, bool native,
		       uint32_t *func)
{
	struct jfr_state *st = r->state;
	struct jfr_method key = { v->u, 0, native };
	uint64_t h = tachi_mix64(v->u) ^ native;
	uint32_t i;
	if (v->kind == JV_KEY && tachi_idset_find(&st->method_ix, h, &key, method_eq, st, &i)) {
		*func = st->methods[i].func;
		return TACH_OK;
	}
	struct jfr_cur c;
	struct jfr_val m[2], cl;
	const char *cs = NULL, *ms = NULL;
	size_t cn = 0, mn = 0;
	int rc = TACH_OK;
	if (tachi_jfr_struct_at(r, v, &c)) {
		if ((rc = fields_of(r, &c, v->type, TF_METHOD, m)))
			return rc;
		cl.kind = JV_NONE;
		if (!native && tachi_jfr_struct_at(r, &m[0], &c) &&
		    (rc = fields_of(r, &c, m[0].type, TF_CLASS, &cl)))
			return rc;
		if (cl.kind != JV_NONE && (rc = tachi_jfr_string(r, &cl, &cs, &cn)))
			return rc;
		/* the class's string lives in the reader's buffer only until the next string */
		char *copy = NULL;
		if (cn && !(copy = malloc(cn)))
			return nomem(r);
		if (cn)
			memcpy(copy, cs, cn);
		rc = tachi_jfr_string(r, &m[1], &ms, &mn);
		if (!rc) {
			char *full = malloc(cn + 1 + mn + 1);
			if (!full) {
				free(copy);
				return nomem(r);
			}
			size_t n = 0;
			if (cn) {
				memcpy(full, copy, cn);
				n = cn;
				if (mn)
					full[n++] = '.';
			}
			if (mn)
				memcpy(full + n, ms, mn);
			n += mn;
			/* no class and no name: as a method the pools lack */
			if (n ? tach_dict_intern_string(&r->dict, full, n, func) :
			    tach_dict_intern_string(&r->dict, "unknown", 7, func))
				rc = nomem(r);
			free(full);
		}
		free(copy);
		if (rc)
			return rc;
	} else if (tach_dict_intern_string(&r->dict, "unknown", 7, func)) {
		return nomem(r); /* a method the pools lack, as jfrconv names it */
	}
	if (v->kind != JV_KEY)
		return TACH_OK;
	if (!TACHI_RESERVE(st->methods, st->methods_cap, st->nmethods + 1) ||
	    !tachi_idset_insert(&st->method_ix, h, (uint32_t)st->nmethods))
		return nomem(r);
	st->methods[st->nmethods++] = (struct jfr_method){ v->u, *func, native };
	return TACH_OK;
}

/* The frame type of a frame: its file string ("[JIT compiled]"), and whether its code is
 * native as jfrconv names such frames (async-profiler's C++ and kernel frames, and its
 * "Native", which is C code where the recording also has a "Kernel" type). */
static int frame_type(struct tach_reader *r, const struct jfr_val *v, uint32_t *file,
		      bool *native, bool *inl)
{
	struct jfr_state *st = r->state;
	const char *s;
	size_t n;
	char buf[80];
	bool cache = v->kind == JV_KEY && v->u < sizeof(st->ftype_file) / sizeof(st->ftype_file[0]);
	if (cache && st->ftype_file[v->u] != JFR_NONE) {
		*file = st->ftype_file[v->u];
		*native = st->ftype_native >> v->u & 1;
		*inl = st->ftype_inlined >> v->u & 1;
		return TACH_OK;
	}
	int rc = tachi_jfr_string(r, v, &s, &n);
	if (rc)
		return rc;
	if (!s) {
		s = "unknown";
		n = 7;
	}
	if (n > sizeof(buf) - 2)
		n = sizeof(buf) - 2;
	*native = (n == 3 && !memcmp(s, "C++", 3)) || (n == 6 && !memcmp(s, "Kernel", 6)) ||
		  (n == 6 && !memcmp(s, "Native", 6) && st->has_kernel);
	*inl = n == 7 && !memcmp(s, "Inlined", 7);
	buf[0] = '[';
	memcpy(buf + 1, s, n);
	buf[n + 1] = ']';
	if (tach_dict_intern_string(&r->dict, buf, n + 2, file))
		return nomem(r);
	if (cache) {
		st->ftype_file[v->u] = *file;
		st->ftype_native = (uint16_t)((st->ftype_native & ~(1u << v->u)) |
					      (unsigned)*native << v->u);
		st->ftype_inlined = (uint16_t)((st->ftype_inlined & ~(1u << v->u)) |
					       (unsigned)*inl << v->u);
	}
	return TACH_OK;
}

static bool fkey_eq(void *ctx, uint32_t i, const void *key)
{
	const struct jfr_state *st = ctx;
	const struct jfr_fkey *a = &st->fcache[i], *b = key;
	return a->method == b->method && a->type == b->type && a->line == b->line &&
	       a->bci == b->bci;
}

static uint64_t fkey_hash(const struct jfr_fkey *k)
{
	return tachi_mix64(k->method * 0x9E3779B97F4A7C15u ^ k->type << 56 ^
			   (uint64_t)k->line << 24 ^ (uint64_t)k->bci);
}

static int frame_of(struct tach_reader *r, const struct jfr_val *f, uint32_t *id);

/* A flat StackFrame (st->frame_fast): its fields decoded at once, and the frame found
 * by them in the chunk's cache, made by frame_of the first time. */
static int fast_frame(struct tach_reader *r, struct jfr_cur *c, uint32_t t, uint32_t *id)
{
	struct jfr_state *st = r->state;
	const struct jfr_type *ty = &st->types[t];
	uint64_t u[8] = { 0 }, v[4] = { 0 };
	size_t at = (size_t)(c->p - st->d);
	int rc = tachi_jfr_lebs(r, c, ty->nfields, u);
	if (rc)
		return rc;
	for (int k = 0; k < 4; k++)
		if (st->ff_field[k] >= 0)
			v[k] = st->ff_signed[k] == JK_INT ? (uint64_t)(int64_t)(int32_t)u[st->ff_field[k]] :
			       st->ff_signed[k] == JK_SHORT ? (uint64_t)(int64_t)(int16_t)u[st->ff_field[k]] :
			       st->ff_signed[k] == JK_CHAR ? u[st->ff_field[k]] & 0xffff :
			       u[st->ff_field[k]];
	struct jfr_fkey key = { v[0], v[2], (int64_t)v[1], (int64_t)v[3], 0 };
	uint64_t h = fkey_hash(&key);
	uint32_t i;
	if (tachi_idset_find(&st->fcache_ix, h, &key, fkey_eq, st, &i)) {
		*id = st->fcache[i].id;
		return TACH_OK;
	}
	struct jfr_val f[4];
	for (int k = 0; k < 4; k++) {
		int8_t fi = st->ff_field[k];
		const struct jfr_field *fd = fi >= 0 ? &st->fields[ty->field0 + (uint32_t)fi] : NULL;
		f[k] = (struct jfr_val){ !fd ? JV_NONE : fd->cp ? JV_KEY : JV_NUM, v[k], at,
					 fd ? fd->type : 0, false, fd && fd->cp };
	}
	if ((rc = frame_of(r, f, &key.id)))
		return rc;
	if (!TACHI_RESERVE(st->fcache, st->fcache_cap, st->nfcache + 1) ||
	    !tachi_idset_insert(&st->fcache_ix, h, (uint32_t)st->nfcache))
		return nomem(r);
	st->fcache[st->nfcache++] = key;
	*id = key.id;
	return TACH_OK;
}

static int one_frame(struct tach_reader *r, struct jfr_cur *c, uint32_t t, uint32_t *id)
{
	struct jfr_state *st = r->state;
	struct jfr_val f[4];
	if (st->frame_fast && t == st->tix[T_FRAME])
		return fast_frame(r, c, t, id);
	int rc = fields_of(r, c, t, TF_FRAME, f);
	return rc ? rc : frame_of(r, f, id);
}

/* The frame of a StackFrame's values f (frame_fields' order). */
static int frame_of(struct tach_reader *r, const struct jfr_val *f, uint32_t *id)
{
	uint32_t file, func;
	bool native = false, inl = false;
	int rc;
	if ((rc = frame_type(r, &f[2], &file, &native, &inl)) ||
	    (rc = method_name(r, &f[0], native, &func)))
		return rc;
	int64_t line = f[1].kind == JV_NUM ? (int64_t)f[1].u : 0;
	struct tach_frame fr = { file, func, line > 0 && line <= INT32_MAX ? (int32_t)line : -1, 0,
				 -1, -1, TACH_NO_OPCODE };
	fr.end_line = fr.line;
	/* the bytecode index as the column: the place within the line (the JDK writes -1 or
	 * 0 for none, native frames) */
	int64_t bci = f[3].kind == JV_NUM ? (int64_t)f[3].u : -1;
	if (fr.line >= 0 && bci >= 0 && bci <= INT32_MAX)
		fr.col = fr.end_col = (int32_t)bci;
	/* an inlined frame is one machine location with the frame it was inlined into, the
	 * next one out (a pprof Location of several Lines) */
	struct tach_frame_native nat = { 0, 0, 1 };
	return tach_dict_intern_frame_native(&r->dict, &fr, inl ? &nat : NULL, id) ? nomem(r) :
	       TACH_OK;
}

static int outer_frame(struct tach_reader *r, uint32_t *id)
{
	const struct tach_frame_native *n = tach_dict_frame_native(&r->dict, *id);
	if (!n || !n->inlined)
		return TACH_OK;
	struct tach_frame f = *tach_dict_frame(&r->dict, *id);
	return tach_dict_intern_frame(&r->dict, &f, id) ? nomem(r) : TACH_OK;
}

/* The frames of stack trace v into st->sframes (leaf first, as JFR lists them). */
static int read_frames(struct tach_reader *r, const struct jfr_val *v, uint32_t *first,
		       uint32_t *depth)
{
	static const char *const want[] = { "frames" };
	struct jfr_state *st = r->state;
	struct jfr_cur c;
	struct jfr_val fr;
	uint64_t n;
	*first = (uint32_t)st->nsframes;
	*depth = 0;
	if (!tachi_jfr_struct_at(r, v, &c))
		return TACH_OK;
	int rc = tachi_jfr_struct(r, &c, v->type, want, 1, &fr);
	if (rc || fr.kind != JV_AT || !fr.array)
		return rc;
	c.p = st->d + fr.at;
	if ((rc = tachi_jfr_count(r, &c, &n)))
		return rc;
	if (n > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, st->origin + fr.at, "a stack trace "
			     "of %llu frames is deeper than the limit of %u", (unsigned long long)n,
			     r->lim.max_depth);
	if (st->nsframes + n >= JFR_NONE ||
	    !TACHI_RESERVE(st->sframes, st->sframes_cap, st->nsframes + n))
		return nomem(r);
	for (uint64_t i = 0; i < n; i++) {
		struct jfr_val e = { JV_AT, 0, (size_t)(c.p - st->d), fr.type, false, false };
		struct jfr_cur ec;
		if (fr.cp) {
			if ((rc = tachi_jfr_varint(r, &c, &e.u)))
				return rc;
			e.kind = JV_KEY;
		}
		if (!tachi_jfr_struct_at(r, &e, &ec))
			return tachi_jfr_fail(r, e.at, "a stack frame the pools lack");
		if ((rc = one_frame(r, &ec, fr.type, &st->sframes[st->nsframes + i])))
			return rc;
		if (!fr.cp)
			c.p = ec.p;
	}
	/* the outermost frame of a truncated stack may be inlined into one not recorded: it
	 * is a location of its own, not one with the thread's root frame */
	if (n && (rc = outer_frame(r, &st->sframes[st->nsframes + n - 1])))
		return rc;
	*depth = (uint32_t)n;
	st->nsframes += n;
	return TACH_OK;
}

static bool stack_eq(void *ctx, uint32_t i, const void *key)
{
	const struct jfr_state *st = ctx;
	return st->stacks[i].key == *(const uint64_t *)key;
}

/* Stack trace v: its frames, read once per key and chunk. */
static int stack_of(struct tach_reader *r, const struct jfr_val *v, uint32_t *first,
		    uint32_t *depth)
{
	struct jfr_state *st = r->state;
	uint32_t i;
	if (v->kind != JV_KEY)
		return v->kind == JV_NONE ? (*first = 0, *depth = 0, TACH_OK) :
		       read_frames(r, v, first, depth);
	uint64_t h = tachi_mix64(v->u);
	if (tachi_idset_find(&st->stack_ix, h, &v->u, stack_eq, st, &i)) {
		*first = st->stacks[i].first;
		*depth = st->stacks[i].depth;
		return TACH_OK;
	}
	int rc = read_frames(r, v, first, depth);
	if (rc)
		return rc;
	if (!TACHI_RESERVE(st->stacks, st->stacks_cap, st->nstacks + 1) ||
	    !tachi_idset_insert(&st->stack_ix, h, (uint32_t)st->nstacks))
		return nomem(r);
	st->stacks[st->nstacks++] = (struct jfr_stack){ v->u, *first, *depth, true };
	return TACH_OK;
}

/* ---- events into samples ---- */

/* The class of v as jfrconv shows an allocated one: dotted, an array as its element's
 * name and "[]" per dimension ("[Ljava/lang/String;" is "java.lang.String[]"). */
static int class_frame(struct tach_reader *r, const struct jfr_val *v, const char *file,
		       uint32_t *id)
{
	static const char *const want[] = { "name" };
	static const struct { char c; const char *name; } prims[] = {
		{ 'B', "byte" }, { 'C', "char" }, { 'S', "short" }, { 'I', "int" },
		{ 'J', "long" }, { 'Z', "boolean" }, { 'F', "float" }, { 'D', "double" },
	};
	struct jfr_cur c;
	struct jfr_val nm;
	const char *s = NULL;
	size_t n = 0, dims = 0;
	int rc;
	if (tachi_jfr_struct_at(r, v, &c) &&
	    ((rc = tachi_jfr_struct(r, &c, v->type, want, 1, &nm)) ||
	     (rc = tachi_jfr_string(r, &nm, &s, &n))))
		return rc;
	if (!s)
		return intern(r, file, strlen(file), "null", 4, -1, id);
	while (dims < n && s[dims] == '[')
		dims++;
	const char *e = s + dims;
	size_t en = n - dims;
	if (dims && en) {
		for (size_t i = 0; i < sizeof(prims) / sizeof(prims[0]); i++)
			if (e[0] == prims[i].c) {
				e = prims[i].name;
				en = strlen(e);
				break;
			}
		if (e == s + dims && e[0] == 'L' && en >= 2) {
			e++;
			en -= 2;
		}
	}
	char *b = malloc(en + 2 * dims + 1);
	if (!b)
		return nomem(r);
	for (size_t i = 0; i < en; i++)
		b[i] = e[i] == '/' ? '.' : e[i];
	for (size_t i = 0; i < dims; i++)
		memcpy(b + en + 2 * i, "[]", 2);
	rc = intern(r, file, strlen(file), b, en + 2 * dims, -1, id);
	free(b);
	return rc;
}

/* The status of a sample by its state, cached by the state's key. */
static int state_of(struct tach_reader *r, const struct jfr_val *v, uint8_t *status)
{
	struct jfr_state *st = r->state;
	const char *s;
	size_t n;
	*status = TACH_STATUS_UNKNOWN;
	if (v->kind == JV_NONE)
		return TACH_OK;
	for (uint32_t i = 0; v->kind == JV_KEY && i < st->nstates; i++)
		if (st->states[i].key == v->u) {
			*status = st->states[i].status;
			return TACH_OK;
		}
	int rc = tachi_jfr_string(r, v, &s, &n);
	if (rc || !s)
		return rc;
	*status = (n == 14 && !memcmp(s, "STATE_RUNNABLE", 14)) ||
		  (n == 13 && !memcmp(s, "STATE_DEFAULT", 13)) ? TACH_STATUS_ON_CPU : 0;
	if (v->kind == JV_KEY && st->nstates < sizeof(st->states) / sizeof(st->states[0]))
		st->states[st->nstates++] = (struct jfr_tstate){ v->u, *status };
	return TACH_OK;
}

static uint64_t num_of(const struct jfr_val *v)
{
	return v->kind == JV_NUM ? v->u : 0;
}

/* The event's values: ext values, weight and time; false when it stands for nothing. */
static bool event_values(struct jfr_state *st, int ev, const struct jfr_val *f,
			 struct tach_sample *s)
{
	uint64_t n = 1, v = 0;
	if (ev == EV_WALL) {
		n = num_of(&f[F_SAMPLES]) & 0xffffffffu;
		int64_t span = tachi_jfr_span_ns(st, (int64_t)num_of(&f[F_SPAN]));
		v = span > 0 ? (uint64_t)span : 0;
	} else if (ev == EV_CPUTIME) {
		/* the CPU time the sample stands for (a timespan in ticks) */
		int64_t span = tachi_jfr_span_ns(st, (int64_t)num_of(&f[F_PERIOD]));
		v = span > 0 ? (uint64_t)span : 0;
	} else if (ev == EV_ALLOC_SAMPLE) {
		v = num_of(&f[F_WEIGHT]);
	} else if (ev == EV_ALLOC_TLAB && num_of(&f[F_TLAB])) {
		v = num_of(&f[F_TLAB]);
	} else if ((1u << ev) & GROUP_ALLOC) {
		v = num_of(&f[F_ALLOC]);
	} else if ((1u << ev) & GROUP_LOCK) {
		int64_t d = tachi_jfr_span_ns(st, (int64_t)num_of(&f[F_DURATION]));
		v = d > 0 ? (uint64_t)d : 0;
	}
	st->vals[0] = (int64_t)(n > INT64_MAX ? INT64_MAX : n);
	st->vals[1] = (int64_t)(v > INT64_MAX ? INT64_MAX : v);
	s->weight = st->total ? v : n;
	s->time_ns = ev == EV_WALL || ev == EV_CPUTIME ? v : 0;
	return s->weight > 0;
}

/* The sample's frames: the allocated or locked class, the stack, the thread's root. */
static int event_frames(struct tach_reader *r, int ev, const struct jfr_val *f, uint32_t root,
			struct tach_sample *s)
{
	struct jfr_state *st = r->state;
	uint32_t first, depth, cls = JFR_NONE;
	int rc = stack_of(r, &f[F_STACK], &first, &depth);
	if (rc)
		return rc;
	const struct jfr_val *cv = (1u << ev) & GROUP_ALLOC ? &f[F_CLASS] :
				   ev == EV_MONITOR ? &f[F_MONITOR] : ev == EV_PARK ? &f[F_PARKED] : NULL;
	/* key 0 is null (a park on no object): no frame, as jfrconv adds none */
	if (cv && cv->kind != JV_NONE && !(cv->kind == JV_KEY && !cv->u) &&
	    (rc = class_frame(r, cv, ev == EV_ALLOC_TLAB ? "[allocated class]" :
			      (1u << ev) & GROUP_ALLOC ? "[allocated outside TLAB]" : "[lock class]",
			      &cls)))
		return rc;
	size_t n = (size_t)depth + (cls != JFR_NONE) + (root != JFR_NONE);
	if (n > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, st->origin + f[F_STACK].at,
			     "a stack of %zu frames is deeper than the limit of %u", n,
			     r->lim.max_depth);
	if (!TACHI_RESERVE(st->frames, st->frames_cap, n + 1))
		return nomem(r);
	size_t k = 0;
	if (cls != JFR_NONE)
		st->frames[k++] = cls;
	if (depth)
		memcpy(st->frames + k, st->sframes + first, (size_t)depth * sizeof(uint32_t));
	k += depth;
	if (root != JFR_NONE)
		st->frames[k++] = root;
	s->frames = st->frames;
	s->depth = (uint32_t)k;
	return TACH_OK;
}

/* Event ev at c as r->sample; 1 when it stands for no sample. */
static int event_sample(struct tach_reader *r, int ev, struct jfr_cur *c)
{
	struct jfr_state *st = r->state;
	struct jfr_val f[F_COUNT];
	struct tach_sample *s = &r->sample;
	uint32_t root;
	int rc = tachi_jfr_struct_slots(r, c, st->ev_type[ev], st->slot, f, F_COUNT);
	if (rc)
		return rc;
	if (!event_values(st, ev, f, s))
		return 1;
	int64_t ns = tachi_jfr_ticks_ns(st, (int64_t)num_of(&f[F_TIME]));
	s->timestamp_us = ns > 0 ? (uint64_t)ns / 1000 : 0;
	if ((rc = thread_of(r, f[F_SAMPLED].kind != JV_NONE ? &f[F_SAMPLED] : &f[F_THREAD],
			    &s->thread_id, &root)) ||
	    (rc = state_of(r, &f[F_STATE], &s->status)) ||
	    (rc = event_frames(r, ev, f, root, s)))
		return rc;
	s->interp_id = 0;
	s->same_outer = 0;
	st->ext.value_count = r->meta.value_type_count;
	r->ext = &st->ext;
	return TACH_OK;
}

/* ---- chunks, open and next ---- */

/* Whether the chunk's StackFrame is flat enough for fast_frame: at most 8 fields, each
 * one compressed integer, its method and type pool keys. */
static void frame_layout(struct jfr_state *st)
{
	uint32_t t = st->tix[T_FRAME];
	st->frame_fast = false;
	if (t == JFR_NONE || !st->types[t].flat || st->types[t].lebs != st->types[t].nfields ||
	    st->types[t].nfields > 8)
		return;
	const struct jfr_type *ty = &st->types[t];
	for (int k = 0; k < 4; k++)
		st->ff_field[k] = -1;
	for (uint32_t i = 0; i < ty->nfields; i++) {
		const struct jfr_field *f = &st->fields[ty->field0 + i];
		int8_t k = st->slot[ty->field0 + i];
		if (k < 0)
			continue;
		bool key = k == 0 || k == 2;
		if (f->cp != key)
			return; /* a method or type inline, a line in the pools: the slow path */
		st->ff_field[k] = (int8_t)i;
		st->ff_signed[k] = st->types[f->type].kind;
	}
	st->frame_fast = true;
}

/* Per chunk: which event field each field is, and whether "Kernel" is a frame type. */
static int chunk_open(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	int rc = tachi_jfr_chunk(r);
	if (rc || st->reused) /* what follows depends on the metadata and pools only */
		return rc;
	if ((rc = tachi_jfr_pid(r, &st->pid)))
		return rc;
	if (!TACHI_RESERVE(st->slot, st->slot_cap, st->nfields + 1))
		return nomem(r);
	for (size_t i = 0; i < st->nfields; i++) {
		st->slot[i] = -1;
		for (int k = 0; k < F_COUNT; k++)
			if (!strcmp(st->fields[i].name, event_fields[k]))
				st->slot[i] = (int8_t)k;
	}
	for (size_t k = 0; k < sizeof(type_fields) / sizeof(type_fields[0]); k++) {
		uint32_t t = st->tix[type_fields[k].t];
		for (uint32_t i = 0; t != JFR_NONE && i < st->types[t].nfields; i++) {
			uint32_t fi = st->types[t].field0 + i;
			st->slot[fi] = -1;
			for (size_t j = 0; j < type_fields[k].n; j++)
				if (!strcmp(st->fields[fi].name, type_fields[k].names[j]))
					st->slot[fi] = (int8_t)j;
		}
	}
	frame_layout(st);
	st->nstates = 0;
	st->has_kernel = false;
	bool inl = false;
	uint32_t ft = st->tix[T_FRAMETYPE];
	for (size_t i = 0; ft != JFR_NONE && i < st->nconsts; i++) {
		if (st->consts[i].type != ft)
			continue;
		struct jfr_val v = { JV_KEY, st->consts[i].key, 0, ft, false, false };
		const char *s;
		size_t n;
		if ((rc = tachi_jfr_string(r, &v, &s, &n)))
			return rc;
		st->has_kernel |= s && n == 6 && !memcmp(s, "Kernel", 6);
		inl |= s && n == 7 && !memcmp(s, "Inlined", 7);
	}
	/* inlined frames are marks of native data, which pprof keeps only when the dict has
	 * native data at the first sample */
	if (inl && tachi_dict_keep_natives(&r->dict))
		return nomem(r);
	return TACH_OK;
}

static void set_values(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	struct tach_meta *m = &r->meta;
	if (st->want & GROUP_ALLOC) {
		st->vtypes[0] = (struct tach_value_type){ "alloc_samples", "count" };
		st->vtypes[1] = (struct tach_value_type){ "alloc_space", "bytes" };
	} else if (st->want & GROUP_LOCK) {
		st->vtypes[0] = (struct tach_value_type){ "contentions", "count" };
		st->vtypes[1] = (struct tach_value_type){ "delay", "nanoseconds" };
	} else {
		st->vtypes[0] = (struct tach_value_type){ "samples", "count" };
		st->vtypes[1] = (struct tach_value_type){ st->want == 1u << EV_CPUTIME ? "cpu" : "wall",
							  "nanoseconds" };
	}
	/* samples that carry their time: wall-clock samples' timeSpan, CPU-time samples'
	 * samplingPeriod; the others (CPU samples by the period of the settings) none */
	bool timed = st->want == 1u << EV_WALL || st->want == 1u << EV_CPUTIME;
	bool two = !(st->want & GROUP_SAMPLES) || timed;
	if (!two)
		st->total = false; /* a CPU sample's total is its count */
	m->value_type_count = two ? 2 : 1;
	m->value_types = st->vtypes;
	m->weight_type = st->total ? 1 : 0;
	m->default_type = m->weight_type + 1;
	m->weight_unit = st->total ? st->vtypes[1].unit : NULL;
	m->sample_time = timed;
	st->ext = (struct tach_sample_ext){ .size = sizeof(st->ext), .value_count = 0,
					    .values = st->vals };
}

static int jr_open(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	int rc;
	const uint8_t *p = r->in.data;
	size_t got = r->in.size;
	if (!st->want)
		st->want = GROUP_SAMPLES;
	if (r->in.whole) {
		st->d = p;
		st->size = got;
	} else {
		/* not a mapped file: read a chunk at a time, each let go of once read */
		st->stream = true;
		if ((rc = tachi_in_peek(&r->in, 4, &r->err, &p, &got)))
			return rc;
	}
	if (got < 4 || memcmp(p, "FLR\0", 4))
		return tachi_jfr_fail(r, 0, "not a JFR recording (no \"FLR\\0\" magic)");
	if ((rc = chunk_open(r)))
		return rc == TACH_EOF ? tachi_jfr_fail(r, 0, "no chunk to read") : rc;
	set_values(r);
	r->meta.start_time_ns = st->start_ns > 0 ? st->start_ns : 0;
	r->meta.start_time_us = (uint64_t)r->meta.start_time_ns / 1000;
	return TACH_OK;
}

static int event_kind(const struct jfr_state *st, uint64_t type)
{
	for (int i = 0; i < EV_COUNT; i++)
		if (st->ev_type[i] != JFR_NONE && st->types[st->ev_type[i]].id == type)
			return (st->want >> i & 1) ? i : -1;
	return -1;
}

/* The end: the events by type in the meta; an error that names them when none was of
 * the chosen types (a recording of allocations read for CPU samples). */
static int input_end(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	int rc = tachi_jfr_kinds(r);
	if (rc || st->matched)
		return rc ? rc : TACH_EOF;
	char list[400] = "";
	size_t n = 0;
	for (const char *k = r->meta.record_kinds, *e; *k && n < 300; k = e + 1) {
		e = strchr(k, '\n');
		n += (size_t)snprintf(list + n, sizeof(list) - n, "%s%.*s", n ? ", " : "",
				      (int)(e - k > 80 ? 80 : e - k), k);
	}
	if (n >= 300)
		snprintf(list + n, sizeof(list) - n, ", ...");
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_NONE, 0, "no %s events in the recording (--event "
		     "chooses others); it has: %s", st->event_opt[0] ? st->event_opt :
		     "jdk.ExecutionSample, jdk.NativeMethodSample, profiler.WallClockSample or "
		     "jdk.CPUTimeSample", n ? list : "no events");
}

static int jr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct jfr_state *st = r->state;
	for (;;) {
		int rc;
		if (st->pos >= st->chunk_end) {
			st->chunk = st->chunk_end;
			if ((rc = chunk_open(r)))
				return rc == TACH_EOF ? input_end(r) : rc;
			continue;
		}
		uint64_t type;
		struct jfr_cur c;
		if ((rc = tachi_jfr_event(r, &type, &c)))
			return rc;
		int ev = type > 1 ? event_kind(st, type) : -1;
		if (ev < 0)
			continue;
		st->matched++;
		rc = event_sample(r, ev, &c);
		if (rc == 1)
			continue;
		if (rc)
			return rc;
		r->stats.full_records++;
		r->stats.total_records++;
		r->stats.total_samples += r->sample.weight;
		*out = &r->sample;
		return TACH_OK;
	}
}

static void jr_free(struct tach_reader *r)
{
	struct jfr_state *st = r->state;
	tachi_jfr_chunk_free(st);
	free(st->slot);
	free(st->frames);
	free(st->sbuf);
}

const struct tachi_reader_ops tachi_jfr_reader_ops = {
	.state_size = sizeof(struct jfr_state),
	.option = jr_option,
	.open = jr_open,
	.next = jr_next,
	.free = jr_free,
	.whole_input = true,
	.stream_pipe = true,
};
