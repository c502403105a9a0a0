/* What the Gecko writer's files share (gecko/write.c: state, interning, the document;
 * gecko/write_tables.c: each thread's tables; gecko/write_json.c: the output): its state, the packed
 * records, the JSON staging buffer's inline writers. Private to them. */
#ifndef TACHFMT_FMT_GECKO_WRITE_H
#define TACHFMT_FMT_GECKO_WRITE_H

#include <assert.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/jsonout.h"
#include "model/spool.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "formats/gecko/write_native.h"

/* The last six only in profiles with JFR frame types (gecko/write.c: cat_jfr_json), after
 * the others so that those keep their indices. */
enum { CAT_OTHER, CAT_PYTHON, CAT_NATIVE, CAT_IDLE, CAT_GIL, CAT_CPU, CAT_EXC,
       CAT_INTERPRETED, CAT_JIT, CAT_C1, CAT_INLINED, CAT_CPP, CAT_KERNEL };
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
	/* Native code (gecko/write_native.c): the mapping of the frames that made this function
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
	bool typed; /* a JFR frame type's: its category whatever the state but idle */
};

/* A sample record as the input gave it. Spooled per thread until close, packed (see
 * put_record); unpacked to be sorted or written. */
struct grec {
	uint64_t t;
	uint64_t weight;
	/* µs from one of its samples to the next, and each one's own time: the sample's
	 * time_ns / weight where the samples carry time, else the interval (STEP_IV) */
	uint64_t step;
	uint32_t node; /* leaf trie node or NONE for an empty stack */
	uint8_t status;
};

struct gthread {
	uint64_t tid;
	uint32_t iid;
	bool main, unsorted;
	bool placeholder; /* the empty thread of an input without samples */
	uint32_t comm;    /* the last perf process root of its samples (comm.h), or NONE */
	struct tachi_stream recs;
	uint64_t last_end; /* natural time of the last sample of the last record */
	uint64_t last_t;   /* time of the last record, from which the next is packed */
	uint64_t first;    /* earliest record time: the thread's registerTime */
	/* leaf variant cache */
	uint32_t last_inner, last_leaf;
	uint8_t last_state;
};

/* What the Firefox Profiler's importer makes of a function's location string (the
 * processed format's function, gecko/write_tables.c). */
struct pfunc {
	uint32_t name, file; /* shared strings; file NONE: none */
	int32_t line;        /* -1: none */
	bool js, rel, done;  /* done: the strings are added */
	uint8_t res_type;    /* 0: no resource; else the importer's: 1 library, 3 web host, 5 URL */
	uint32_t res_name, res_host;
};

struct gstate {
	bool plain;
	int level;
	/* The processed format (gecko/write_tables.c's second half): its strings are the
	 * profile's, shared by the threads: JSON literals joined by commas, written at the end. */
	bool processed;
	char *sa;
	size_t sa_len, sa_cap;
	uint32_t sa_n;
	size_t *sa_off, sa_off_cap; /* where each starts in sa */
	struct tachi_idset sa_index; /* the strings by text: each is written once */
	/* some record stands for intervals rather than its own time: without an interval,
	 * the processed profile's samples weigh one each */
	bool untimed;
	struct pfunc *pcache; /* by function, once its strings are added */
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
	bool jfr;      /* some frame has a JFR frame type: the categories for them are written */
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

/* ---- output: a staging buffer, deflated or written as is ---- */

/* Writes out the staging buffer (gecko/write_json.c). */
void tachi_gecko_flush(struct tach_writer *w);

/* Room for n (<= JROOM_MAX) more bytes. */
static inline uint8_t *j_room(struct tach_writer *w, size_t n)
{
	struct gstate *st = w->state;
	assert(n <= JROOM_MAX);
	if (TACHI_UNLIKELY(JBUF - st->jlen < n))
		tachi_gecko_flush(w);
	return st->jbuf + st->jlen;
}

static inline void j_put(struct tach_writer *w, const void *p, size_t n)
{
	struct gstate *st = w->state;
	const uint8_t *b = p;
	while (n) {
		if (st->jlen == JBUF)
			tachi_gecko_flush(w);
		size_t k = JBUF - st->jlen < n ? JBUF - st->jlen : n;
		memcpy(st->jbuf + st->jlen, b, k);
		st->jlen += k;
		b += k;
		n -= k;
	}
}

static inline void j_str(struct tach_writer *w, const char *s)
{
	j_put(w, s, strlen(s));
}

/* Appends a string literal at p + o, for rows built in place in j_room's space. */
#define LIT(p, o, s) (memcpy((p) + (o), s, sizeof(s) - 1), (o) += sizeof(s) - 1)

static inline void j_u64(struct tach_writer *w, uint64_t v)
{
	struct gstate *st = w->state;
	uint8_t *p = j_room(w, 24);
	st->jlen += tachi_fmt_u64((char *)p, v);
}

static inline void j_i64(struct tach_writer *w, int64_t v)
{
	struct gstate *st = w->state;
	uint8_t *p = j_room(w, 24);
	st->jlen += tachi_fmt_i64((char *)p, v);
}

/* Time t (µs, absolute) in ms relative to the start time. */
static inline size_t fmt_rel(char *p, uint64_t t, uint64_t start)
{
	return t >= start ? tachi_fmt_ms(p, false, t - start) : tachi_fmt_ms(p, true, start - t);
}

static inline void j_rel(struct tach_writer *w, uint64_t t)
{
	struct gstate *st = w->state;
	uint8_t *p = j_room(w, 32);
	st->jlen += fmt_rel((char *)p, t, w->meta.start_time_us);
}

/* A spooled record: a flags byte (never 0, which pads a chunk's end), the status, the time
 * as a zigzag varint of its difference from the thread's previous record (a few bytes: times
 * advance by about an interval), then as varints the leaf node unless there is none and the
 * weight unless it is 1. Some 6 bytes where the plain record takes 24, so a quarter of the
 * file to write and read back (240 MB for 10 M samples before). */
#define REC_MAX 48
#define RF_ON 0x80
#define RF_WEIGHT 1
#define RF_NONODE 2
#define RF_STEP 4       /* a varint step follows: the record's own, not the interval */
#define STEP_IV UINT64_MAX
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

/* The frame table's locations: file and function strings and kinds (gecko/write_tables.c). */
int tachi_gecko_locations(struct tach_writer *w, struct scratch *sc);
/* One thread's object: samples, markers, stack and frame tables, strings. */
int tachi_gecko_write_thread(struct tach_writer *w, struct scratch *sc, size_t ti,
			     bool is_main);
/* The same in the processed format, its strings added to the shared ones. */
int tachi_gecko_write_thread_processed(struct tach_writer *w, struct scratch *sc, size_t ti,
				       bool is_main);
/* The processed format's shared strings: the marker kinds' names first (at their kind's
 * index), then each thread's. */
int tachi_gecko_strings_init(struct tach_writer *w);

#endif
