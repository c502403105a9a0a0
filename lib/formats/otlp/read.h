/* What the OTLP reader's files share (otlp/read.c: the format note, the Profiles, the
 * entries and next; otlp/read_dict.c: the dictionary, its strings, attributes, mappings
 * and the frames of its locations): the reader's state. Private to them. */
#ifndef TACHFMT_FMT_OTLP_READ_H
#define TACHFMT_FMT_OTLP_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/protobuf.h"
#include "core/handles.h"
#include "formats/otlp/otlp.h"

#define NONE UINT32_MAX

struct ospan {
	size_t off, len;
};

/* A Profile: its type and unit, period type and unit (string indices), period, start
 * time and duration; its Samples, smps[smp0, smp0 + nsmp). */
struct rprof {
	uint32_t type, unit, ptype, punit;
	int64_t period;
	uint64_t time, duration;
	uint32_t smp0, nsmp;
	size_t at;
	bool weights;          /* marked tachfmt.weights */
};

/* A Sample: its stack index and attribute indices, aidx[a0, a0 + na). */
struct rsmp {
	uint32_t stack, a0, na;
	size_t at, len;        /* the message */
};

/* An entry: its time, its Sample, its Profile (not zip: the one it has a value of), and
 * its place in the file (its values' row), which keeps ties of time in file order. */
struct rent {
	uint64_t ts;
	uint32_t smp, prof, seq;
};

/* The most attributes a Sample may have (the schema wants their keys distinct). */
#define MAX_SAMPLE_ATTRS 4096u

/* An attribute as a sample takes it: a thread field, a label, or nothing (kind 0: not
 * decoded yet); a thread name of async-profiler's form gives a thread id. */
enum { A_NONE = 1, A_TID, A_IID, A_STATUS, A_LABEL };
struct oattr {
	uint8_t kind;
	bool named;
	bool of_root;         /* thread.name or process.pid: a process root frame's, when the
			       * stack has one (our writer's) */
	uint64_t name_tid;
	int64_t num;
	struct tach_label lab;
};

struct otlp_rstate {
	const uint8_t *d;
	size_t size;
	uint8_t *from_json;   /* the protobuf form of an OTLP/JSON input (read_json.c), or NULL */
	/* the dictionary's tables: entry spans, by the dictionary's field numbers */
	struct ospan *tab[DICT_STACK + 1];
	size_t ntab[DICT_STACK + 1], tcap[DICT_STACK + 1];
	uint32_t *sid;         /* string index -> dict id, NONE: not yet */
	uint32_t *mid;         /* mapping index -> dict mapping id, NONE */
	uint32_t *lfr0, *lnfr; /* location index -> its frames in frames, NONE */
	uint32_t *frames;
	size_t nframes, fcap;
	uint32_t *kfr0, *knfr; /* stack index -> its frames in kframes, NONE */
	uint32_t *kframes;
	size_t nkframes, kcap;
	/* the Profiles and their Samples */
	struct rprof *profs;
	size_t nprofs, pcap;
	struct rsmp *smps;
	size_t nsmps, scap;
	uint32_t *aidx;
	size_t naidx, acap;
	struct oattr *acache;  /* attribute index -> as decoded */
	bool zip;              /* the Profiles pair up: one group of all */
	bool own;              /* of the types tachfmt writes */
	bool timed;            /* own: a time profile is there */
	uint32_t ntypes;
	int64_t count_type;    /* the first count type, -1: none */
	int64_t time_type;     /* the first time type, -1: none */
	uint64_t time_unit_ns, period_ns;
	struct rent *ents;
	int64_t *vals;         /* zip: [seq * ntypes + t]; else [seq] */
	size_t nents, ecap, vcap;
	size_t next;
	uint64_t emitted, dropped;
	/* meta's own strings */
	struct tach_value_type *vt;
	char *strs, *tstrs;     /* the program; the types' strings */
	int64_t *row;          /* an entry's values as its extras */
	/* the sample being given */
	struct tach_label *labs;
	size_t labs_cap;
	struct tach_sample_ext ext;
	/* scratch: one Sample's timestamps and values */
	uint64_t *ts;
	size_t ts_cap;
	int64_t *v;
	size_t v_cap;
};

/* An AnyValue as read: a string (its bytes, or a string index), a number, or neither. */
struct anyv {
	bool is_str, is_num;
	uint32_t sidx;        /* a string_value_strindex; NONE: the bytes */
	struct ospan s;
	int64_t num;
};

/* otlp/read_json.c: the OTLP/JSON input made into its protobuf form (malloc'd, *out). */
int tachi_or_json(struct tach_reader *r, uint8_t **out, size_t *n);

/* otlp/read_dict.c */
int tachi_or_bad(struct tach_reader *r, size_t at, const char *what);
int tachi_or_nomem(struct tach_reader *r);
int tachi_or_field(struct tach_reader *r, size_t *pos, size_t end, struct tachi_pb_field *f);
int tachi_or_want(struct tach_reader *r, const struct tachi_pb_field *f, uint8_t wt);
int tachi_or_index(struct tach_reader *r, size_t at, uint64_t v, size_t n, const char *table,
		   uint32_t *out);
typedef int (*tachi_or_each_fn)(struct tach_reader *r, void *ctx, uint32_t i, size_t at);
int tachi_or_each(struct tach_reader *r, const struct tachi_pb_field *f, size_t n,
		  const char *table, tachi_or_each_fn fn, void *ctx);
int tachi_or_read_dict(struct tach_reader *r, const struct tachi_pb_field *df);
int tachi_or_str_id(struct tach_reader *r, uint32_t i, uint32_t *id);
bool tachi_or_str_is(const struct otlp_rstate *st, uint32_t i, const char *s);
bool tachi_or_str_starts(const struct otlp_rstate *st, uint32_t i, const char *s);
int tachi_or_any(struct tach_reader *r, const struct tachi_pb_field *af, struct anyv *a);
int tachi_or_attribute(struct tach_reader *r, uint32_t i, uint32_t *key, uint32_t *unit,
		       struct anyv *a);
/* Location li's frames: st->frames[*fr0, *fr0 + *nfr), made the first time. */
int tachi_or_loc_frames(struct tach_reader *r, uint32_t li, uint32_t *fr0, uint32_t *nfr);

#endif
