/* What the pprof writer's files share (pprof/write.c: the format note, options, label
 * sets and samples as they are put, the Sample messages and the profile at close, the
 * ops; pprof/write_tables.c: the string table, functions, locations and mappings and their
 * messages; pprof/write_encode.c: the (gzip) output; pprof/write_types.c: types mode, the
 * input's own value types and labels): the writer's state and its records. Private to
 * them. */
#ifndef TACHFMT_FMT_PPROF_WRITE_H
#define TACHFMT_FMT_PPROF_WRITE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/gzip.h"
#include "base/hash.h"
#include "base/io.h"
#include "base/protobuf.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/write_maps.h"

#define NO_ID UINT32_MAX

/* A Line: function index and, as written, line and column (0 = unknown). */
struct pprof_wline {
	uint32_t fn;
	int64_t line, col;
};

/* A Location: its innermost line (fn NO_ID: none, an unsymbolized address), the lines it
 * was inlined into, outward (xl[x0, x0 + nx)), its address and its mapping: a dict mapping
 * id (dmap), else a rebuilt one's index + 1 (rmap; addr is then a file offset), else none. */
struct pprof_loc {
	struct pprof_wline l;
	uint64_t addr;
	uint32_t dmap, rmap;
	uint32_t x0, nx;
};

/* A location to find: its extra lines are in x, not yet in xl. */
struct lockey {
	const struct pprof_loc *loc;
	const struct pprof_wline *x;
};

struct fnkey {
	uint32_t name, file;
};

/* The labels a Sample carries: (thread id, interpreter id, status), all 0 with labels=no;
 * or, for a sample that came with its own labels (ext), those: labs[lab0, lab0 + nlab). */
struct lset {
	uint64_t tid;
	uint32_t iid;
	uint8_t status;
	bool ext;
	uint32_t lab0, nlab;
};
/* A label set looked up: the labels of an ext are not in labs yet. */
struct pprof_lkey {
	struct lset ls;
	const struct tach_label *labs;
};

/* A pprof string: a source dict string (src >= 0) or our own bytes. */
struct pstr {
	uint32_t src;        /* dict id, or NO_ID */
	uint32_t off, len;   /* in own */
};

struct pprof_wstate {
	/* options (zero = default) */
	bool raw, no_labels;
	int cpu;
	/* decided at begin */
	bool use_cpu;
	const struct tach_dict *src;
	/* strings */
	struct pstr *strs;
	size_t nstrs, strs_cap;
	struct tachi_pb_buf own;
	uint32_t *smap;      /* dict string id -> pprof index + 1 (0: not yet) */
	size_t smap_cap;
	uint32_t state_str[256];
	uint64_t big_tid;      /* the last thread id past INT64_MAX given a string */
	uint32_t big_tid_idx;  /* its string id; 0: none yet */
	uint32_t s_samples, s_count, s_time, s_ns, s_tid, s_iid, s_state, s_comment, s_mapfile;
	/* decided at close: labels that tell something (see labels_told) */
	bool tell_iid, tell_state;
	/* frames */
	uint32_t *fmap;      /* dict frame id -> location index */
	size_t fmap_cap;
	/* dict frame id -> its line's Function: an inlined run's lines are looked up for
	 * every sample that has it (its location is keyed by all of them), the names hashed
	 * once */
	uint32_t *ffn;
	size_t ffn_cap;
	/* the locations of inlined runs met, by their frame ids (rfid[at, at + n)): a run
	 * comes back in most samples of its stack, and its frames' ids say all its lines do */
	struct pprof_run { size_t at; uint32_t n, li; } *runs;
	size_t nruns, runs_cap;
	uint32_t *rfid;
	size_t nrfid, rfid_cap;
	struct tachi_idset run_index;
	size_t nmapped; /* source frames mapped so far: all of them lets a sample skip the check */
	struct pprof_loc *locs;
	size_t nlocs, locs_cap;
	struct tachi_idset loc_index;
	struct pprof_wline *xl;    /* locations' inlined-into lines */
	size_t nxl, xl_cap;
	/* native mode (the dict had native data at the first sample): the trie is keyed by
	 * location, a run of inlined frames and the frame they were inlined into being one */
	bool native, warned_inline;
	uint32_t *keys;      /* a sample's location indices, innermost first */
	struct pprof_wline *run;   /* a run's lines */
	size_t keys_cap, run_cap;
	struct tachi_pmaps maps;
	struct fnkey *fns;
	size_t nfns, fns_cap;
	struct tachi_idset fn_index;
	/* stacks (location ids, root first) and aggregates */
	struct tachi_stacktab trie;
	struct tachi_threads threads;
	struct lset *lsets;
	size_t nlsets, lsets_cap;
	struct tachi_idset lset_index;
	/* a distinct (stack, label set) is the trie's (label set, leaf) pair: its count */
	uint64_t *counts;
	size_t ncounts, counts_cap;
	/* and the time (ns) it stands for, the sum of its samples' time_ns, where the samples
	 * carry time (meta.sample_time); no time type is written where they do not */
	uint64_t *times;
	size_t ntimes, times_cap;
	bool timed;
	/* time span */
	bool any;
	uint64_t first_us, last_us;
	/* Sample types, labels and values as the input's meta and extras give them (the
	 * *_types functions below): types mode when the meta names value types. */
	uint32_t ntypes;     /* 0: the two types of a time profile, from weights */
	uint32_t *type_str;  /* [2 * i]: type i's type, [2 * i + 1]: its unit */
	uint32_t s_ptype, s_punit, s_dflt;
	/* a sample without values: the weight type's value is its time_ns / time_div where the
	 * weight type is a time and the samples carry time (time_div: the unit's ns), else
	 * its weight (time_div 0) */
	uint64_t time_div;
	struct tach_label *labs;  /* label sets' labels, keys and strings as pprof indices */
	size_t nlabs, labs_cap;
	int64_t *vals;       /* [entry * ntypes + i]: type i's sum over the entry's samples */
	size_t nvals, vals_cap; /* in entries */
	const struct tach_sample_ext *ext; /* the extras of the sample being put */
	uint8_t *vbuf;       /* a Sample's values, encoded */
	/* output */
	struct tachi_gz *gz;
	unsigned gz_threads;
	int level; /* gzip level; 0 for the default */
	struct tachi_pb_buf msg, sub, stage;
};

#define NOMEM(w) WFAIL((w), TACH_E_NOMEM, "out of memory")

/* The output (pprof/write_encode.c): bytes, a message or a number field to the (gzip)
 * stream; the staged bytes compressed; a ValueType message. */
int tachi_pw_deflate_stage(struct tach_writer *w, bool finish);
int tachi_pw_emit(struct tach_writer *w, const void *p, size_t n);
int tachi_pw_emit_msg(struct tach_writer *w, uint32_t num, struct tachi_pb_buf *b);
int tachi_pw_emit_varint(struct tach_writer *w, uint32_t num, uint64_t v);
bool tachi_pw_value_type(struct tachi_pb_buf *b, uint32_t type, uint32_t unit);

/* The tables (pprof/write_tables.c): strings of our own, of the source dict, of a thread state;
 * a frame's location; a sample's stack as locations (native mode); the mappings,
 * locations and functions, and the string table, written out. */
bool tachi_pw_own_str(struct pprof_wstate *st, const char *s, size_t n, uint32_t *idx);
bool tachi_pw_src_str(struct pprof_wstate *st, const struct tach_dict *d, uint32_t id,
		      uint32_t *idx);
bool tachi_pw_state_str(struct pprof_wstate *st, uint8_t status, uint32_t *idx);
int tachi_pw_map_frame(struct tach_writer *w, const struct tach_dict *d, uint32_t fid);
int tachi_pw_native_keys(struct tach_writer *w, const struct tach_dict *d,
			 const struct tach_sample *s, struct tach_sample *out);
int tachi_pw_write_locations(struct tach_writer *w);
int tachi_pw_write_strings(struct tach_writer *w);

/* Several value types and the input's own labels (types mode, pprof/write_types.c). */
bool tachi_pw_labels_eq_types(const struct pprof_wstate *st, const struct lset *a,
			      const struct pprof_lkey *k);
uint64_t tachi_pw_labels_hash_types(const struct pprof_lkey *k);
bool tachi_pw_keep_labels_types(struct pprof_wstate *st, struct pprof_lkey *q);
int tachi_pw_begin_types(struct tach_writer *w);
int tachi_pw_add_values_types(struct tach_writer *w, uint32_t entry,
			      const struct tach_sample *s);
const uint8_t *tachi_pw_values_types(struct pprof_wstate *st, size_t entry, size_t *len);
bool tachi_pw_labels_types(struct pprof_wstate *st, struct tachi_pb_buf *m, const struct lset *ls);
int tachi_pw_trailer_types(struct tach_writer *w);

/* The bytes staged before each deflate call when compressing. */
#define STAGE_SIZE (64u << 10)

/* Room for n bytes straight in the output's buffer (the stage before deflate when
 * compressing), so a small message is built in place rather than copied piece by piece;
 * NULL with *rc 0 when n is more than an empty buffer holds, NULL with *rc set on failure.
 * The caller adds what it wrote to the buffer's length. Inline: once per sample. */
static inline uint8_t *tachi_pw_out_room(struct tach_writer *w, size_t n, size_t **len, int *rc)
{
	struct pprof_wstate *st = w->state;
	*rc = TACH_OK;
	if (st->raw) {
		struct tachi_out *o = &w->out;
		if (o->err) {
			*rc = tachi_writer_io(w);
			return NULL;
		}
		if (n > o->cap - o->len && tachi_out_flush(o)) {
			*rc = tachi_writer_io(w);
			return NULL;
		}
		*len = &o->len;
		return n <= o->cap - o->len ? o->buf + o->len : NULL;
	}
	if (!st->stage.cap && !TACHI_RESERVE(st->stage.p, st->stage.cap, STAGE_SIZE)) {
		*rc = WFAIL(w, TACH_E_NOMEM, "out of memory");
		return NULL;
	}
	if (n > st->stage.cap - st->stage.len && (*rc = tachi_pw_deflate_stage(w, false)))
		return NULL;
	*len = &st->stage.len;
	return n <= st->stage.cap - st->stage.len ? st->stage.p + st->stage.len : NULL;
}

#endif
