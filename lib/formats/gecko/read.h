/* The Gecko reader's state, shared by its files: read.c (the profile and its threads),
 * read_tables.c (a thread's tables, column by column, and its state markers) and
 * read_names.c (what the Firefox Profiler's importer makes of a frame). */
#ifndef TACHFMT_FMT_GECKO_READ_H
#define TACHFMT_FMT_GECKO_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/handles.h"

#define GK_NONE UINT64_MAX
#define GK_NULL INT64_MIN  /* a cell that is null, absent, or past its column's end */
#define GK_NO_ID UINT32_MAX

/* A column of a table, whichever form the table takes. */
struct gecko_col {
	int64_t *v;
	size_t n, cap;
};

static inline int64_t gk_cell(const struct gecko_col *c, size_t i)
{
	return i < c->n ? c->v[i] : GK_NULL;
}

/* How a cell is read: an integer exactly, a number scaled by 10^k (ms to µs: 3), or the
 * offset of the value whatever it is (a marker's data object). */
enum { GK_INT = -1, GK_OFFSET = -2 };

struct gecko_lib {
	uint64_t start, end, offset;
	uint64_t name_off, path_off; /* string tokens; GK_NONE: absent */
	uint32_t mapping;            /* dict id once a frame used it, else 0 */
	bool usable;                 /* its addresses are in range */
};

struct gecko_rthread {
	uint64_t off;          /* the thread object */
	int64_t start_ns;      /* its profile's meta.startTime */
	size_t libs_at, nlibs; /* its profile's libraries in the state's libs */
	uint32_t ordinal;      /* 1-based, as the writer numbers unnamed threads */
};

/* Kinds of sample weight (processed profiles' samples.weightType). */
enum { GW_NONE, GW_SAMPLES, GW_MS, GW_BYTES };

struct gecko_rstate {
	bool processed;
	bool old;                 /* processed, of a version before preprocessedProfileVersion */
	uint64_t shared_strings;  /* processed: shared.stringArray's offset, else GK_NONE */
	int wkind;                /* of the profile: the first weighted thread's */
	/* tach2gecko kept each sample's thread state (its markers' schema and the CPU
	 * deltas' unit say so): a sample outside every state marker is in none */
	bool recorded;
	int64_t cat_other;         /* the meta's category "Other": an unknown state's leaf */
	struct gecko_rthread *th;
	size_t nth, th_cap;
	struct gecko_lib *libs;
	size_t nlibs, libs_cap;
	size_t libs_base;          /* the profiles' libraries; a thread's own come after */
	/* the thread being read */
	size_t cur;                /* 1 + its index, 0 before the first */
	const struct gecko_rthread *t;
	uint64_t *str;             /* its strings' tokens */
	uint64_t str_from;         /* the string array they are of (0: none read yet) */
	size_t nstr, str_cap;
	size_t thread_libs_at, thread_nlibs; /* processed profiles of old versions: per thread */
	struct gecko_col s_stack, s_time, s_weight;
	struct gecko_col st_prefix, st_frame;
	struct gecko_col f_loc, f_func, f_line, f_col, f_addr, f_inline, f_cat;
	struct gecko_col fn_name, fn_file, fn_res, fn_js;
	struct gecko_col r_lib, r_name;
	struct gecko_col m_name, m_start, m_data;
	int t_wkind;
	uint32_t *fdict;           /* per frame row, its dict frame, GK_NO_ID until built */
	size_t fdict_cap;
	uint8_t *status;           /* per sample, from the state markers; NULL: unknown */
	size_t status_cap;
	size_t si;                 /* next sample */
	uint64_t tid;
	uint32_t iid;
	uint32_t comm;             /* the thread's [comm] root frame, or GK_NO_ID */
	uint32_t comm_file;        /* "[comm]", once interned */
	bool main;                 /* named GeckoMain: its samples are the main thread's */
	uint64_t total;            /* samples given, against max-samples */
	uint32_t *out;
	size_t out_cap;
	char *sbuf;
	size_t sbuf_cap;
	struct tach_value_type vt[2];
	int64_t vals[2];
	struct tach_sample_ext ext;
};

/* read_tables.c */
/* The libraries of the array at off, appended to the state's. */
int tachi_gk_libs(struct tach_reader *r, uint64_t off);
int tachi_gk_col(struct tach_reader *r, uint64_t table, const char *name, int how,
		 struct gecko_col *c);
int tachi_gk_strings(struct tach_reader *r, uint64_t off);
int tachi_gk_tables(struct tach_reader *r);
/* The weightType of the samples object at samples (processed). */
int tachi_gk_wkind(struct tach_reader *r, uint64_t samples, int *kind);
int tachi_gk_states(struct tach_reader *r);
/* A string of the thread's table by index (cell), its text into st->sbuf. */
int tachi_gk_string(struct tach_reader *r, int64_t idx, const char **s, size_t *n);
/* A token's text into a fresh copy in buf. */
int tachi_gk_text_at(struct tach_reader *r, uint64_t off, char **buf, size_t *cap, size_t *n);

/* read_names.c */
int tachi_gk_frame(struct tach_reader *r, size_t row, uint32_t *id);

#endif
