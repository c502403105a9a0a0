/* What the JFR reader's files share (jfr/jfr.c: the table row and probe; jfr/read_chunk.c:
 * chunk headers, the metadata's types, the constant pools and the values of fields as the
 * metadata lays them out; jfr/read.c: the format note, events, stacks, threads and the
 * samples): the reader's state. Private to them. */
#ifndef TACHFMT_FMT_JFR_H
#define TACHFMT_FMT_JFR_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "base/hash.h"
#include "core/format.h"

extern const struct tachi_reader_ops tachi_jfr_reader_ops;

#define JFR_HEADER 68u
#define JFR_NONE UINT32_MAX

/* What a type is on the wire: a primitive, a string, or a struct of fields. */
enum jfr_kind {
	JK_STRUCT, JK_BOOL, JK_BYTE, JK_CHAR, JK_SHORT, JK_INT, JK_LONG, JK_FLOAT, JK_DOUBLE,
	JK_STRING,
};

/* A type of the chunk's metadata ("class" element). */
struct jfr_type {
	uint64_t id;
	const char *name;
	const char *super;     /* NULL: none */
	uint32_t field0, nfields;
	uint8_t kind;          /* enum jfr_kind */
	bool empty;            /* a struct that takes no bytes (no field takes any) */
	/* in a compressed chunk, a struct that is lebs compressed integers and nothing else
	 * (a StackFrame: method and type keys, line, bytecode index): skipped without
	 * walking its fields */
	bool flat;
	uint32_t lebs;
};

struct jfr_field {
	const char *name;
	uint64_t type_id;
	uint32_t type;         /* index in types; JFR_NONE until linked */
	bool cp, array;
};

/* A constant: (type, key) and where its value is: in the chunk's ck-th constant pool
 * event (jfr_state.ckpt), at bytes from its start. */
struct jfr_const {
	uint64_t key;
	uint32_t type, ck;
	size_t at;
};

/* A constant pool event of the chunk: where it starts and its size. */
struct jfr_span {
	size_t at, len;
};

/* A cursor over the input: [p, end) of the chunk, and where the input starts (offsets). */
struct jfr_cur {
	const uint8_t *p, *end, *base;
};

/* A field's value as read_struct leaves it: a number, a constant pool key, a string, or
 * where a struct or array is (at). */
enum { JV_NONE, JV_NUM, JV_KEY, JV_STR, JV_AT };
struct jfr_val {
	int kind;
	uint64_t u;            /* JV_NUM (doubles' bits), JV_KEY */
	size_t at;             /* JV_STR: the string's encoding byte; JV_AT: the value */
	uint32_t type;         /* the field's type */
	bool array, cp;        /* an array (at: its count); of pool keys */
};

/* The types the reader asks for by name, per chunk (JFR_NONE: absent). */
enum {
	T_THREAD, T_STACK, T_FRAME, T_METHOD, T_CLASS, T_SYMBOL, T_STRING, T_FRAMETYPE,
	T_STATE, T_COUNT
};

/* Event kinds the reader turns into samples. */
enum {
	EV_EXEC, EV_NATIVE, EV_WALL, EV_CPUTIME, EV_ALLOC_TLAB, EV_ALLOC_OUTSIDE, EV_ALLOC_SAMPLE,
	EV_MONITOR, EV_PARK, EV_COUNT
};

struct jfr_stack {
	uint64_t key;
	uint32_t first, depth; /* frames[first, first + depth) of jfr_state.sframes */
	bool done;
};

struct jfr_thread {
	uint64_t key, tid;
	uint32_t root;         /* its "[comm]" frame, JFR_NONE without a name */
};

struct jfr_method {
	uint64_t key;
	uint32_t func;         /* dict string: class.method, or the bare name of native code */
	bool native;           /* named as native code (by its frame's type) */
};

/* A stack frame as the pools write it (its method and type keys, line and bytecode
 * index) and the frame it became, per chunk. */
struct jfr_fkey {
	uint64_t method, type;
	int64_t line, bci;
	uint32_t id;
};

/* A thread state seen in the chunk: its key and status. */
struct jfr_tstate {
	uint64_t key;
	uint8_t status;
};

struct jfr_state {
	const uint8_t *d;
	size_t size;
	/* stream mode (input that is no mapped file: a pipe, stdin, compressed input): one
	 * chunk at a time in cbuf (d, size: what came of it), origin its offset in the input;
	 * prev: the chunk before's metadata and pool events, which same_pools compares */
	bool stream;
	uint64_t origin;
	uint8_t *cbuf, *prev;
	size_t cbuf_cap, prev_cap;
	/* the chunk being read */
	size_t chunk, chunk_end, pos, meta_at;
	bool compressed;
	int64_t start_ns, start_ticks, ticks_per_s;
	unsigned minor;
	/* its metadata: types, fields and their names (an arena of strings) */
	struct jfr_type *types;
	size_t ntypes, types_cap;
	struct jfr_field *fields;
	size_t nfields, fields_cap;
	char *arena;
	size_t arena_len, arena_cap;
	struct tachi_idset type_ix;
	uint32_t tix[T_COUNT];
	uint32_t ev_type[EV_COUNT];
	/* its constant pools, and where the events that hold them are */
	struct jfr_span *ckpt, *next_ckpt;
	size_t nckpt, ckpt_cap, nnext, next_cap;
	size_t meta_len;
	bool reused;             /* the chunk's metadata and pools are the previous chunk's */
	struct jfr_const *consts;
	size_t nconsts, consts_cap;
	struct tachi_idset const_ix;
	/* what samples came from, by key, per chunk */
	struct jfr_stack *stacks;
	size_t nstacks, stacks_cap;
	struct tachi_idset stack_ix;
	uint32_t *sframes;
	size_t nsframes, sframes_cap;
	struct jfr_thread *threads;
	size_t nthreads, threads_cap;
	struct tachi_idset thread_ix;
	struct jfr_method *methods;
	size_t nmethods, methods_cap;
	struct tachi_idset method_ix;
	uint32_t ftype_file[16]; /* per frame type key < 16: the file string, JFR_NONE: not yet */
	uint16_t ftype_native;   /* per frame type key < 16: its frames are native code */
	uint16_t ftype_inlined;  /* per frame type key < 16: its frames are inlined */
	/* the chunk's StackFrame is a flat struct of at most 8 fields, method and type pool
	 * keys: decoded at once (ff_field: the field of each frame_fields name, -1 none) */
	bool frame_fast;
	int8_t ff_field[4];
	uint8_t ff_signed[4];    /* the field's kind: how its bits are a Java value */
	struct jfr_fkey *fcache;
	size_t nfcache, fcache_cap;
	struct tachi_idset fcache_ix;
	bool has_kernel;         /* the FrameType pool names "Kernel": async-profiler's */
	int32_t pid;             /* the chunk's JVMInformation pid, -1: none */
	int8_t *slot;            /* per field: which event field it is (read.c), -1 none */
	size_t slot_cap;
	struct jfr_tstate states[16];
	uint32_t nstates;
	/* options */
	uint32_t want;           /* bits of EV_* */
	char event_opt[64];      /* the option event as given, "" by default */
	bool total;              /* weights are bytes or delays, not counts */
	/* samples */
	uint32_t *frames;
	size_t frames_cap;
	char *sbuf;              /* a string made UTF-8 (Latin-1, UTF-16) */
	size_t sbuf_cap;
	int64_t vals[2];
	struct tach_value_type vtypes[2];
	struct tach_sample_ext ext;
	uint64_t chunks;
	/* events by type: per type of the chunk's metadata (tcount), and by name over the
	 * chunks read (kinds_*: names in kinds_arena), for meta.record_kinds and the error
	 * that names them when no event is of the chosen types */
	uint64_t *tcount;
	size_t tcount_cap;
	struct jfr_kind_count { size_t name; uint64_t n; } *kinds;
	size_t nkinds, kinds_cap;
	struct tachi_idset kinds_ix;
	char *kinds_arena, *kinds_text;
	size_t kinds_len, kinds_cap2;
	uint64_t matched;        /* events of the chosen types */
};

/* ---- read_chunk.c ---- */
/* Opens the chunk at st->chunk: its header, metadata and constant pools. TACH_EOF when
 * nothing is left; a chunk cut short or unfinished is warned about and ends the input. */
int tachi_jfr_chunk(struct tach_reader *r);
void tachi_jfr_chunk_free(struct jfr_state *st);
int tachi_jfr_fail(struct tach_reader *r, size_t at, const char *fmt, ...) TACHI_PRINTF(3, 4);
/* Integers as the chunk writes them (compressed or not), and raw bytes. */
int tachi_jfr_varint(struct tach_reader *r, struct jfr_cur *c, uint64_t *v);
/* n compressed integers at c into out (a flat struct's fields). */
int tachi_jfr_lebs(struct tach_reader *r, struct jfr_cur *c, unsigned n, uint64_t *out);
/* A count (of an array's elements) at c: at most the bytes left. */
int tachi_jfr_count(struct tach_reader *r, struct jfr_cur *c, uint64_t *n);
/* The fields of a struct of type t at c, each named in want[i] into out[i] (JV_NONE when
 * absent); the others skipped. Leaves c after the struct. */
int tachi_jfr_struct(struct tach_reader *r, struct jfr_cur *c, uint32_t t,
		     const char *const *want, size_t n, struct jfr_val *out);
/* tachi_jfr_struct by a slot per field of the chunk (slot[i] < n: out[slot[i]], else
 * skipped): the names matched once per chunk, not per event. */
int tachi_jfr_struct_slots(struct tach_reader *r, struct jfr_cur *c, uint32_t t,
			   const int8_t *slot, struct jfr_val *out, size_t n);
/* Where constant (type t, key) is in the input; false when the pools have none. */
bool tachi_jfr_const(const struct jfr_state *st, uint32_t t, uint64_t key, size_t *at);
/* A string value v (JV_STR, or JV_KEY/JV_AT of a type whose one field is a string) as
 * UTF-8: *s NULL for null. *s stays valid until the next call. */
int tachi_jfr_string(struct tach_reader *r, const struct jfr_val *v, const char **s, size_t *n);
/* A struct value (JV_KEY: through the pools; JV_AT: inline) as a cursor at it; false for
 * null or a key the pools lack. */
bool tachi_jfr_struct_at(struct tach_reader *r, const struct jfr_val *v, struct jfr_cur *c);
/* Ticks of the chunk's clock as ns since the epoch, as the JDK converts them. */
int64_t tachi_jfr_ticks_ns(const struct jfr_state *st, int64_t ticks);
int64_t tachi_jfr_span_ns(const struct jfr_state *st, int64_t ticks);
/* The counts of events by type into meta.record_kinds ("NAME COUNT" lines, most first),
 * at the end of the input. */
int tachi_jfr_kinds(struct tach_reader *r);
/* The event at st->pos: its type, and c over its fields; st->pos moves past it. */
int tachi_jfr_event(struct tach_reader *r, uint64_t *type, struct jfr_cur *c);
int tachi_jfr_pid(struct tach_reader *r, int32_t *pid);

#endif
