/* Collapsing stacks (collapse.c): what the collapsed, flame graph, pstats, pprof and
 * callgrind writers share. */
#ifndef TACHFMT_COLLAPSE_H
#define TACHFMT_COLLAPSE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/buf.h"
#include "core/handles.h"
#include "model/linekeys.h"
#include "model/stacktab.h"

/* Per (thread, stack) aggregation over (file, func, line) keys. */
struct tachi_collapse {
	const struct tach_dict *src;
	struct tachi_linekeys lk;
	struct tachi_stacktab trie;
	struct tachi_threads threads;
	bool no_threads;  /* one context for every thread */
};
/* s's entry (an index into a->trie.pairs, dense from 0) into *entry; s has frames.
 * Failures are recorded on w. */
int tachi_collapse_entry(struct tach_writer *w, struct tachi_collapse *a,
			 const struct tach_dict *d, const struct tach_sample *s, uint32_t *entry);
void tachi_collapse_free(struct tachi_collapse *a);
/* Lookahead for writers built on a tachi_collapse: a queued sample's stage, which at stage 3
 * returns its likely entry + 1. */
uint32_t tachi_collapse_fetch(struct tachi_collapse *a, struct tachi_ahead_item *it,
			      unsigned stage);
/* Grows a zeroed per-entry array *v of *n used elements to hold index entry. */
bool tachi_counts_reserve(uint64_t **v, size_t *cap, size_t *n, uint32_t entry);
/* Frame labels as the collapsed writer prints them: valid UTF-8, ';' as ':' and control
 * bytes as '?' (one warning each). */
struct tachi_labeler {
	bool pyspy;       /* "func (file:line)" instead of "file:func:line" */
	bool full_paths;
	bool no_run_ids;  /* run-ids=no: no process id on "[comm]" roots, addresses as 0x... */
	bool warned_semi, warned_ctrl;
};
bool tachi_collapsed_label(struct tach_writer *w, struct tachi_labeler *lb, struct tachi_buf *b,
			   const struct tachi_linekeys *lk, const struct tachi_linekey *k);
/* Samples counted per (thread, stack): the aggregate of writers that show (file, function,
 * line) frames (collapsed, pstats). counts[i] is the weight of agg.trie.pairs[i], pairs
 * numbered in first-seen order. Memory follows distinct stacks. */
struct tachi_stackcount {
	struct tachi_collapse agg;
	uint64_t *counts;
	size_t ncounts, counts_cap;
	/* Set by the writer before the first put: times[i] sums pair i's time_ns too
	 * (saturating at UINT64_MAX). */
	bool timed;
	uint64_t *times;
	size_t ntimes, times_cap;
};
/* Adds s (empty stacks skipped); failures are recorded on w. */
int tachi_stackcount_put(struct tach_writer *w, struct tachi_stackcount *sc,
			 const struct tach_dict *d, const struct tach_sample *s);
/* tachi_collapse_fetch, and at stage 3 the entry's count requested too. */
void tachi_stackcount_fetch(struct tachi_stackcount *sc, struct tachi_ahead_item *it,
			    unsigned stage);
void tachi_stackcount_free(struct tachi_stackcount *sc);

/* What a folded line or a flame graph counts (the writers' "value" option): the weights
 * (samples, the default), the samples' time (summed in ns, printed in µs), or one of the
 * input's value types (pprof's sample types) by name. */
enum { TACHI_VALUE_COUNT, TACHI_VALUE_TIME, TACHI_VALUE_TYPE };
struct tachi_valuesel {
	char *name;      /* the option's value until begin; NULL: count */
	int kind;
	uint32_t type;   /* TACHI_VALUE_TYPE: its index in meta.value_types */
};
/* The option "value": count, time or a type's name, resolved at begin. */
int tachi_value_option(struct tach_writer *w, struct tachi_valuesel *v, const char *value);
/* Resolves the name against w's meta: a type the input has not is a usage error; "time"
 * where the samples carry none shows counts, said once. */
int tachi_value_begin(struct tach_writer *w, struct tachi_valuesel *v);
/* What s adds: its weight, its time_ns, or its value of the type (ext's where it has
 * values, else its weight where the type is the weights', else 0). */
uint64_t tachi_value_of(const struct tach_writer *w, const struct tachi_valuesel *v,
			const struct tach_sample *s, const struct tach_sample_ext *ext);
/* A sum of what tachi_value_of gave as printed: ns rounded to µs for time. */
static inline uint64_t tachi_value_shown(const struct tachi_valuesel *v, uint64_t sum)
{
	if (v->kind != TACHI_VALUE_TIME)
		return sum;
	return sum / 1000 + (sum % 1000 >= 500);
}
void tachi_value_free(struct tachi_valuesel *v);

#endif
