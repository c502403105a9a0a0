/* pprof writer: google/pprof's profile.proto (perftools.profiles.Profile), gzip-compressed
 * by default (gzip=no for the bare message; level=1..9, default 1; threads=N compresses on
 * N worker threads, the same bytes for any N), for `go tool pprof`,
 * pprof's web UI and continuous-profiling services.
 *
 * What is written:
 *   - sample_type [samples/count, wall/nanoseconds] (cpu/nanoseconds with cpu=yes, or when
 *     the TACH header says the profile was taken in CPU mode); period_type/period from the
 *     sample interval; default_sample_type the time type; time_nanos from the start time,
 *     duration_nanos up to the last sample; one comment naming the source format. Samples
 *     that carry no time (meta.sample_time 0: no interval, no time of their own) have
 *     samples/count only, said once.
 *   - One Sample per distinct (stack, thread id, interpreter id, status byte), first-seen
 *     order, values [count, time]: the count sums the weights, the time the samples' own
 *     time_ns (a V8 sample's time to the next, a perf period; weight × interval for TACH).
 *     Labels "thread id" and "interpreter id" (numeric) and "thread state" (a string such as
 *     "gil+cpu") so pprof -tagfocus can filter, the last two only where they tell something
 *     (several interpreters; a state other than unknown); labels=no merges threads and
 *     drops them.
 *   - One Location per distinct (file, function, line, column) with a single Line, one
 *     Function per distinct (name, file), start_line 0 (not known), system_name empty
 *     (pprof strips <...> from names equal to their system name, turning <module> into
 *     nothing). Without any mapping (Python), all Locations are in one Mapping marked as
 *     already symbolized so pprof neither complains about a missing binary nor tries to
 *     symbolize.
 *   - Native frames (formats/pprof/write_maps.c): the dict's mappings, the main one (meta.program's,
 *     else the first) first, has_* flags as the locations written in each show; a native
 *     frame's Location has its address and mapping; a run of frames inlined each into the
 *     next is one Location with their Lines innermost first, as pprof writes them; an
 *     unsymbolized one (named "libc.so.6+0x2a1c0" or by its address) has no Line, so pprof
 *     groups it by mapping and can symbolize it from the binary. Such a name on a frame
 *     without native data (read back from TACH) gets a mapping rebuilt for its file and an
 *     address at that file offset. Inline runs are kept when the dict has native data at
 *     the first sample (readers that intern their frames at open), else warned about.
 *
 * From an input whose meta names value types (pprof), those instead: every type, the
 * period, default type, duration and start time as they came, each Sample's values summed
 * from its samples' own, and its own labels (see "types mode" below).
 * Not supported: per-sample timestamps (pprof has none).
 * A sample with an empty stack is a Sample without locations, as pprof keeps one (Go's heap
 * profiles have them): go tool pprof counts it in the total, in no function.
 * Memory grows with distinct stacks and label sets: stacks live in a trie keyed by
 * Location, and the output is encoded field by field into the (gzip) stream at close.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/gzip.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/collapse.h"
#include "formats/pprof/pprof.h"
#include "formats/pprof/write_maps.h"
#include "formats/pprof/write.h"

enum { CPU_AUTO, CPU_YES, CPU_NO };

/* Profiling modes of CPython's profiling.sampling; TACH stores mode + 1 in the low bits of
 * profiling_config. CPU and "all" (GIL + CPU) only sample threads on a CPU. */
enum { MODE_WALL = 0, MODE_CPU = 1, MODE_GIL = 2, MODE_ALL = 3, MODE_EXCEPTION = 4 };

static int pw_option(struct tach_writer *w, const char *key, const char *value)
{
	struct pprof_wstate *st = w->state;
	bool b;
	if (!strcmp(key, "gzip")) {
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad gzip value %s", value);
		st->raw = !b;
		return TACH_OK;
	}
	if (!strcmp(key, "level"))
		return tachi_gzip_level(w, value, &st->level);
	if (!strcmp(key, "threads"))
		return tachi_gzip_threads(w, value, &st->gz_threads);
	if (!strcmp(key, "labels")) {
		if (!tachi_parse_bool(value, &b))
			return WFAIL(w, TACH_E_USAGE, "bad labels value %s", value);
		st->no_labels = !b;
		return TACH_OK;
	}
	if (!strcmp(key, "cpu")) {
		if (!strcmp(value, "auto"))
			st->cpu = CPU_AUTO;
		else if (tachi_parse_bool(value, &b))
			st->cpu = b ? CPU_YES : CPU_NO;
		else
			return WFAIL(w, TACH_E_USAGE, "cpu must be yes, no or auto, not %s", value);
		return TACH_OK;
	}
	return WFAIL(w, TACH_E_USAGE, "pprof writer has no option %s", key);
}

/* ---- aggregation ---- */

static bool lset_eq(void *ctx, uint32_t id, const void *p)
{
	const struct pprof_wstate *st = ctx;
	const struct lset *a = &st->lsets[id];
	const struct pprof_lkey *k = p;
	const struct lset *b = &k->ls;
	return a->tid == b->tid && a->iid == b->iid && a->status == b->status &&
	       a->ext == b->ext && tachi_pw_labels_eq_types(st, a, k);
}

static struct pprof_lkey lset_of(const struct pprof_wstate *st, const struct tach_sample *s)
{
	if (st->no_labels)
		return (struct pprof_lkey){ { 0, 0, 0, false, 0, 0 }, NULL };
	struct pprof_lkey k = { { s->thread_id, s->interp_id, s->status, false, 0, 0 }, NULL };
	if (st->ext && st->ntypes) {
		k.ls.ext = true;
		k.ls.nlab = st->ext->label_count;
		k.labs = st->ext->labels;
	}
	return k;
}

static uint64_t lset_hash(const struct pprof_lkey *k)
{
	const struct lset *q = &k->ls;
	uint64_t h = tachi_mix64(q->tid ^ tachi_mix64((uint64_t)q->iid << 8 | q->status));
	return q->ext ? tachi_mix64(h ^ tachi_pw_labels_hash_types(k)) : h;
}

/* The label set's number, made if new; c->slot remembers the thread's last one. */
static bool lset_get(struct pprof_wstate *st, struct tachi_pathcache *c,
		     const struct tach_sample *s, uint32_t *id)
{
	struct pprof_lkey q = lset_of(st, s);
	if (c->slot < st->nlsets && lset_eq(st, c->slot, &q)) {
		*id = c->slot;
		return true;
	}
	uint64_t h = lset_hash(&q);
	if (!tachi_idset_find(&st->lset_index, h, &q, lset_eq, st, id)) {
		uint32_t dummy;
		if ((!st->no_labels && !tachi_pw_state_str(st, s->status, &dummy)) ||
		    st->nlsets >= UINT32_MAX - 2 ||
		    !TACHI_RESERVE(st->lsets, st->lsets_cap, st->nlsets + 1) ||
		    !tachi_pw_keep_labels_types(st, &q))
			return false;
		*id = (uint32_t)st->nlsets;
		st->lsets[*id] = q.ls;
		if (!tachi_idset_insert(&st->lset_index, h, *id))
			return false;
		st->nlsets++;
	}
	c->slot = *id;
	return true;
}

static int pw_begin(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	int mode = -1;
	uint32_t cfg = w->meta.profiling_config & 0xff;
	if (cfg >= 1 && cfg <= 5)
		mode = (int)cfg - 1;
	st->use_cpu = st->cpu == CPU_YES ||
		      (st->cpu == CPU_AUTO && (mode == MODE_CPU || mode == MODE_ALL));
	uint32_t empty;
	if (!tachi_pw_own_str(st, "", 0, &empty))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	int rc;
	if (w->meta.value_type_count) {
		if ((rc = tachi_pw_begin_types(w)))
			return rc;
	} else if (!tachi_pw_own_str(st, "samples", 7, &st->s_samples) ||
		   !tachi_pw_own_str(st, "count", 5, &st->s_count) ||
		   !tachi_pw_own_str(st, st->use_cpu ? "cpu" : "wall", st->use_cpu ? 3 : 4,
				     &st->s_time) ||
		   !tachi_pw_own_str(st, "nanoseconds", 11, &st->s_ns)) {
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	}
	if (!st->no_labels && (!tachi_pw_own_str(st, "thread id", 9, &st->s_tid) ||
			   !tachi_pw_own_str(st, "interpreter id", 14, &st->s_iid) ||
			   !tachi_pw_own_str(st, "thread state", 12, &st->s_state)))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	char t[128];
	const char *from = w->meta.source_format ? w->meta.source_format : "unknown";
	int n = snprintf(t, sizeof(t), "converted by tachfmt from %.60s", from);
	if (!tachi_pw_own_str(st, t, (size_t)n, &st->s_comment))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	/* pprof prints the main mapping's file as "File:": the profiled program where the
	 * input names it, else for Python the interpreter. */
	const char *file = w->meta.program;
	if (!file || !*file) {
		if (w->meta.py_major)
			n = snprintf(t, sizeof(t), "python%u.%u", w->meta.py_major, w->meta.py_minor);
		else
			n = snprintf(t, sizeof(t), "[%.60s]", from);
		file = t;
	}
	if (!tachi_pw_own_str(st, file, strlen(file), &st->s_mapfile))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (st->ntypes)
		return TACH_OK;
	st->timed = w->meta.sample_time;
	if (!st->timed)
		tachi_warn(&w->warn, TACH_POS_NONE, 0, "the samples carry no time (no interval, no "
			   "time of their own): only their counts are written (samples/count)");
	return TACH_OK;
}

/* The entry's time, summed (the count's twin). */
static int add_time(struct tach_writer *w, uint32_t entry, uint64_t ns)
{
	struct pprof_wstate *st = w->state;
	if (entry >= st->ntimes && !tachi_counts_reserve(&st->times, &st->times_cap, &st->ntimes,
							 entry))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	uint64_t *t = &st->times[entry];
	if (__builtin_add_overflow(*t, ns, t) || *t > INT64_MAX)
		return WFAIL(w, TACH_E_LIMIT, "a sample's time exceeds pprof's 64-bit values");
	return TACH_OK;
}

static int pw_put(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s)
{
	struct pprof_wstate *st = w->state;
	/* the same dict for every sample: tach_writer_put checks it */
	if (TACHI_UNLIKELY(!st->src)) {
		st->src = d;
		st->native = d->natives != NULL;
	}
	/* The end of the time the sample stands for, for duration_nanos. */
	uint64_t last = s->timestamp_us, span;
	if (!__builtin_mul_overflow(s->weight - 1, w->meta.interval_us, &span) &&
	    !__builtin_add_overflow(last, span, &last)) {
		if (!st->any || last > st->last_us)
			st->last_us = last;
		if (!st->any || s->timestamp_us < st->first_us)
			st->first_us = s->timestamp_us;
		st->any = true;
	}
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&st->threads, s->thread_id, s->interp_id,
						      &created);
	if (!c)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	if (created)
		c->slot = NO_ID;
	const uint32_t *map = NULL; /* set after mapping: map_frame may move fmap */
	struct tach_sample keyed;
	if (TACHI_UNLIKELY(st->native)) {
		/* keyed by location: the lookahead's hash of the frames does not apply */
		int rc = tachi_pw_native_keys(w, d, s, &keyed);
		if (rc)
			return rc;
		s = &keyed;
		st->trie.hint = 0;
	} else {
		for (uint32_t i = 0, n = st->nmapped < d->frame_count ? tachi_new_inner(c, s) : 0;
		     i < n; i++) {
			uint32_t f = s->frames[i];
			if (TACHI_UNLIKELY(f >= st->fmap_cap || st->fmap[f] == NO_ID)) {
				int rc = tachi_pw_map_frame(w, d, f);
				if (rc)
					return rc;
			}
		}
		st->trie.hint = w->ahead_hash;
		map = st->fmap;
	}
	/* the same stack and labels as the thread's previous sample cost no lookup here */
	uint32_t lset;
	if (!lset_get(st, c, s, &lset) ||
	    tachi_stack_intern_ctx(&st->trie, c, s, map, lset) == TACHI_NOMEM_NODE ||
	    (c->entry >= st->ncounts &&
	     !tachi_counts_reserve(&st->counts, &st->counts_cap, &st->ncounts, c->entry)))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	uint64_t *n = &st->counts[c->entry];
	if (__builtin_add_overflow(*n, s->weight, n) || *n > INT64_MAX)
		return WFAIL(w, TACH_E_LIMIT, "a sample count exceeds pprof's 64-bit values");
	if (st->ntypes)
		return tachi_pw_add_values_types(w, c->entry, s);
	return st->timed ? add_time(w, c->entry, s->time_ns) : TACH_OK;
}

static int pw_put_ext(struct tach_writer *w, const struct tach_dict *d,
		      const struct tach_sample *s, const struct tach_sample_ext *ext)
{
	struct pprof_wstate *st = w->state;
	for (uint32_t i = 0; i < ext->label_count; i++) {
		const struct tach_label *l = &ext->labels[i];
		if (l->key >= d->str_count || (l->str != TACH_NO_STRING && l->str >= d->str_count) ||
		    (l->unit != TACH_NO_STRING && l->unit >= d->str_count))
			return WFAIL(w, TACH_E_USAGE, "label string id out of range");
	}
	st->ext = ext;
	int rc = pw_put(w, d, s);
	st->ext = NULL;
	return rc;
}

/* A queued sample's lines; its pair's only when its label set exists already (looking
 * ahead must not make one). */
static void pw_fetch(struct tach_writer *w, struct tachi_ahead_item *it, unsigned stage)
{
	struct pprof_wstate *st = w->state;
	if (st->native)
		return;
	struct pprof_lkey q = lset_of(st, &it->s);
	uint32_t lset = 0;
	bool pairs = stage > 1 &&
		     tachi_idset_find(&st->lset_index, lset_hash(&q), &q, lset_eq, st, &lset);
	uint32_t e1 = tachi_stacktab_ahead(&st->trie, it, pairs, lset, stage);
	if (e1 && e1 - 1 < st->ncounts)
		__builtin_prefetch(&st->counts[e1 - 1]);
}

static bool label(struct pprof_wstate *st, struct tachi_pb_buf *b, uint32_t key, uint32_t str,
		  uint64_t num)
{
	st->sub.len = 0;
	return tachi_pb_put_varint(&st->sub, LABEL_KEY, key) &&
	       tachi_pb_put_varint(&st->sub, LABEL_STR, str) &&
	       tachi_pb_put_varint(&st->sub, LABEL_NUM, num) &&
	       tachi_pb_put_bytes(b, SAMPLE_LABEL, st->sub.p, st->sub.len);
}

/* pprof's numbers are signed: a thread id past 2^63-1 would show negative, so it goes
 * as a string label of the same key, in decimal. */
static bool tid_label(struct pprof_wstate *st, struct tachi_pb_buf *b, uint64_t tid)
{
	if (tid <= INT64_MAX)
		return label(st, b, st->s_tid, 0, tid);
	/* Samples of one thread mostly come together: the last id's string is reused. */
	if (!st->big_tid_idx || st->big_tid != tid) {
		char t[24];
		uint32_t idx;
		if (!tachi_pw_own_str(st, t, tachi_fmt_u64(t, tid), &idx))
			return false;
		st->big_tid = tid;
		st->big_tid_idx = idx;
	}
	return label(st, b, st->s_tid, st->big_tid_idx, 0);
}

/* The encoded labels of a (thread, interpreter, state), made once: they are the same on
 * every Sample of that thread in that state. A direct-mapped cache; a thread id past
 * INT64_MAX is not cached, since its label names a string made as it is met. */
#define LCACHE 64
struct lcache {
	uint64_t tid;
	uint32_t iid;
	uint8_t status, len; /* len 0: empty slot */
	uint8_t bytes[3 * 32]; /* three labels of at most 27 bytes each */
};

static bool labels(struct pprof_wstate *st, struct lcache *lc, struct tachi_pb_buf *m, uint64_t tid,
		   uint32_t iid, uint8_t status)
{
	struct lcache *e = NULL;
	if (tid <= INT64_MAX) {
		e = &lc[(tachi_mix64(tid ^ (uint64_t)iid << 32 ^ (uint64_t)status << 56) >> 58) %
			LCACHE];
		if (e->len && e->tid == tid && e->iid == iid && e->status == status) {
			if (!tachi_pb_reserve(m, e->len))
				return false;
			memcpy(m->p + m->len, e->bytes, e->len);
			m->len += e->len;
			return true;
		}
	}
	size_t at = m->len;
	/* Ids above INT64_MAX show as negative: pprof's values are int64. A zero num label is
	 * dropped by pprof's decoder, so id 0 is simply absent there. */
	if (!tid_label(st, m, tid) || (st->tell_iid && !label(st, m, st->s_iid, 0, iid)) ||
	    (st->tell_state && !label(st, m, st->s_state, st->state_str[status] - 1, 0)))
		return false;
	if (e && m->len - at <= sizeof(e->bytes)) {
		*e = (struct lcache){ tid, iid, status, (uint8_t)(m->len - at), { 0 } };
		memcpy(e->bytes, m->p + at, e->len);
	}
	return true;
}

/* A recent stack's location ids, packed leaf first and right-aligned in buf, with the node
 * and the length of the packed tail from each depth up: a stack that shares a node with
 * it shares every id from there to the root, so only the frames below that node are
 * walked and encoded. Stacks of one thread follow each other closely, so each thread id
 * keeps to one of a few lanes. */
#define LANES 16
struct lane {
	uint32_t *node, *len; /* [depth]: the node there, bytes of ids from there to the root */
	uint32_t depth;
	uint8_t *buf;
};

static const uint8_t *lane_pack(struct lane *ln, const struct tachi_node *nodes, uint32_t leaf,
				uint32_t d, size_t end, uint32_t *n)
{
	uint32_t j = 0, node = leaf;
	for (uint32_t k = d; k > 0; k--, node = nodes[node].parent) {
		if (k <= ln->depth && ln->node[k] == node) {
			j = k;
			break;
		}
		ln->node[k] = node;
	}
	size_t pos = end - ln->len[j];
	for (uint32_t k = j + 1; k <= d; k++) {
		uint32_t v = nodes[ln->node[k]].key + 1;
		if (TACHI_LIKELY(v < 0x80)) {
			ln->buf[--pos] = (uint8_t)v;
		} else {
			pos -= tachi_uvarint_len(v);
			tachi_put_uvarint(ln->buf + pos, v);
		}
		ln->len[k] = (uint32_t)(end - pos);
	}
	ln->depth = d;
	*n = ln->len[d];
	return ln->buf + pos;
}

/* A Sample: its location ids (packed, as lane_pack made them), its values and the labels
 * encoded in m, built in the output's buffer when it fits there. */
static int emit_sample(struct tach_writer *w, const uint8_t *ids, size_t n, const uint8_t *vals,
		       size_t vl, const struct tachi_pb_buf *m)
{
	/* an empty stack has no location_id field, as Go writes one */
	size_t inner = (n ? tachi_pb_len_size(SAMPLE_LOCATION_ID, n) : 0) +
		       tachi_pb_len_size(SAMPLE_VALUE, vl) + m->len;
	size_t total = tachi_pb_len_size(PROFILE_SAMPLE, inner), *len;
	int rc;
	uint8_t *p = tachi_pw_out_room(w, total, &len, &rc), *q = p;
	if (rc)
		return rc;
	if (!p) {
		/* A Sample larger than the buffer (a deep stack, many labels) goes out piece by
		 * piece; its values too, however many types there are. */
		uint8_t h[2 * TACHI_PB_HEAD_MAX], t[TACHI_PB_HEAD_MAX];
		size_t hl = tachi_pb_head(h, PROFILE_SAMPLE, inner);
		if (n)
			hl += tachi_pb_head(h + hl, SAMPLE_LOCATION_ID, n);
		size_t tl = tachi_pb_head(t, SAMPLE_VALUE, vl);
		if ((rc = tachi_pw_emit(w, h, hl)) || (rc = tachi_pw_emit(w, ids, n)) ||
		    (rc = tachi_pw_emit(w, t, tl)) || (rc = tachi_pw_emit(w, vals, vl)))
			return rc;
		return tachi_pw_emit(w, m->p, m->len);
	}
	q += tachi_pb_head(q, PROFILE_SAMPLE, inner);
	if (n) {
		q += tachi_pb_head(q, SAMPLE_LOCATION_ID, n);
		memcpy(q, ids, n);
		q += n;
	}
	q += tachi_pb_head(q, SAMPLE_VALUE, vl);
	memcpy(q, vals, vl);
	q += vl;
	if (m->len)
		memcpy(q, m->p, m->len);
	*len += total;
	return TACH_OK;
}

/* Which labels tell something: the interpreter id where the profile has more than one
 * (one process's node or perf profile carries one id, meaningless to a reader of the
 * profile), the thread state unless every sample's is unknown alone (the producer recorded
 * none: perf, V8). The thread id is always written. The pprof reader gives a sample without
 * these labels interpreter id 0 and an unknown state (on-CPU in a CPU profile). */
static void labels_told(struct pprof_wstate *st)
{
	st->tell_iid = st->tell_state = false;
	const struct lset *first = NULL;
	for (size_t i = 0; i < st->nlsets; i++) {
		const struct lset *ls = &st->lsets[i];
		if (ls->ext)
			continue;
		first = first ? first : ls;
		st->tell_iid |= ls->iid != first->iid;
		st->tell_state |= ls->status != TACH_STATUS_UNKNOWN;
	}
}

/* Past this many label sets (threads times states), a merge of many processes' profiles
 * writes each shared stack once per thread: go tool pprof takes seconds to open it. */
#define MANY_LABEL_SETS 512

static void many_label_sets(struct tach_writer *w, size_t nsamples)
{
	struct pprof_wstate *st = w->state;
	if (st->no_labels || st->nlsets < MANY_LABEL_SETS)
		return;
	tachi_warn(&w->warn, TACH_POS_NONE, 0, "%zu threads and states, each its own label set: "
		   "a stack is a Sample per thread (%zu Samples), which go tool pprof is slow to "
		   "open; labels=no (tach2pprof --no-labels) writes one per stack", st->nlsets,
		   nsamples);
}

/* One Sample message per distinct (stack, labels). */
static int write_samples(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	struct tachi_pb_buf *m = &st->msg;
	const struct tachi_node *nodes = st->trie.nodes;
	int rc = TACH_OK;
	uint32_t maxd = 0;
	/* pair i was counted in counts[i]; every pair was counted unless put failed */
	const struct tachi_pair *pairs = st->trie.pairs;
	size_t npairs = st->ncounts;
	for (size_t i = 0; i < npairs; i++)
		if (pairs[i].depth > maxd)
			maxd = pairs[i].depth;
	/* ids are below 2^32: five bytes each at most */
	size_t end = (size_t)maxd * 5;
	struct lane lanes[LANES] = { 0 };
	for (int k = 0; k < LANES; k++) {
		lanes[k].node = malloc(((size_t)maxd + 1) * sizeof(uint32_t));
		lanes[k].len = calloc((size_t)maxd + 1, sizeof(uint32_t));
		lanes[k].buf = malloc(end ? end : 1);
		if (!lanes[k].node || !lanes[k].len || !lanes[k].buf)
			rc = NOMEM(w);
	}
	labels_told(st);
	many_label_sets(w, npairs);
	struct lcache *lc = st->no_labels ? NULL : calloc(LCACHE, sizeof(*lc));
	if (!st->no_labels && !lc)
		rc = NOMEM(w);
	for (size_t i = 0; i < npairs && !rc; i++) {
		const struct tachi_pair *a = &pairs[i];
		/* the climb from a leaf begins with a cache miss on a large trie: fetch it
		 * some samples ahead */
		if (i + TACHI_FETCH_AHEAD < npairs)
			__builtin_prefetch(&nodes[pairs[i + TACHI_FETCH_AHEAD].leaf]);
		uint64_t count = st->counts[i];
		m->len = 0;
		uint32_t n;
		const struct lset *ls = &st->lsets[a->ctx];
		struct lane *ln = &lanes[(tachi_mix64(ls->tid ^ (uint64_t)ls->iid << 32) >> 60) %
					 LANES];
		const uint8_t *ids = lane_pack(ln, nodes, a->leaf, a->depth, end, &n);
		uint8_t vals[20];
		const uint8_t *vp = vals;
		size_t vl;
		if (st->ntypes) {
			vp = tachi_pw_values_types(st, i, &vl);
		} else {
			vl = tachi_put_uvarint(vals, count);
			if (st->timed)
				vl += tachi_put_uvarint(vals + vl, i < st->ntimes ? st->times[i] : 0);
		}
		bool ok = st->no_labels ||
			  (ls->ext ? tachi_pw_labels_types(st, m, ls) :
				     labels(st, lc, m, ls->tid, ls->iid, ls->status));
		if (!ok || !vp) {
			rc = NOMEM(w);
			break;
		}
		if ((rc = emit_sample(w, ids, n, vp, vl, m)))
			break;
		m->len = 0;
	}
	free(lc);
	for (int k = 0; k < LANES; k++) {
		free(lanes[k].node);
		free(lanes[k].len);
		free(lanes[k].buf);
	}
	return rc;
}

/* Time, duration, period and the default sample type. */
static int write_trailer(struct tach_writer *w, uint64_t period_ns)
{
	struct pprof_wstate *st = w->state;
	struct tachi_pb_buf *m = &st->msg;
	int rc;
	uint64_t start = w->meta.start_time_us, t;
	if (!__builtin_mul_overflow(start, 1000, &t) && t <= INT64_MAX &&
	    (rc = tachi_pw_emit_varint(w, PROFILE_TIME_NANOS, t)))
		return rc;
	/* Without a start (perf's clock counts from boot), the time runs from the first sample. */
	uint64_t from = start ? start : st->any ? st->first_us : 0;
	if (st->any && st->last_us > from && !__builtin_mul_overflow(st->last_us - from, 1000, &t) &&
	    t <= INT64_MAX && (rc = tachi_pw_emit_varint(w, PROFILE_DURATION_NANOS, t)))
		return rc;
	m->len = 0;
	/* The period is the interval where one is known; samples with times of their own
	 * (V8) may have none. */
	if (st->timed && !tachi_pw_value_type(m, st->s_time, st->s_ns))
		return NOMEM(w);
	if ((st->timed && ((rc = tachi_pw_emit_msg(w, PROFILE_PERIOD_TYPE, m)) ||
			   (rc = tachi_pw_emit_varint(w, PROFILE_PERIOD, period_ns)))) ||
	    (rc = tachi_pw_emit_varint(w, PROFILE_COMMENT, st->s_comment)))
		return rc;
	return tachi_pw_emit_varint(w, PROFILE_DEFAULT_SAMPLE_TYPE,
				    st->timed ? st->s_time : st->s_samples);
}

static int write_profile_types(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	struct tachi_pb_buf *m = &st->msg;
	int rc;
	for (uint32_t i = 0; i < st->ntypes; i++) {
		m->len = 0;
		if (!tachi_pw_value_type(m, st->type_str[2 * i], st->type_str[2 * i + 1]))
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, PROFILE_SAMPLE_TYPE, m)))
			return rc;
	}
	if ((rc = write_samples(w)) || (rc = tachi_pw_write_locations(w)) ||
	    (rc = tachi_pw_write_strings(w)))
		return rc;
	return tachi_pw_trailer_types(w);
}

static int write_profile(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	struct tachi_pb_buf *m = &st->msg;
	int rc;
	if (st->ntypes)
		return write_profile_types(w);
	uint64_t period_ns = 0;
	if (__builtin_mul_overflow(w->meta.interval_us, 1000, &period_ns) || period_ns > INT64_MAX)
		return WFAIL(w, TACH_E_LIMIT, "the sample interval does not fit pprof's nanoseconds");
	for (int i = 0; i < 1 + st->timed; i++) {
		m->len = 0;
		if (!tachi_pw_value_type(m, i ? st->s_time : st->s_samples,
					 i ? st->s_ns : st->s_count))
			return NOMEM(w);
		if ((rc = tachi_pw_emit_msg(w, PROFILE_SAMPLE_TYPE, m)))
			return rc;
	}
	if ((rc = write_samples(w)) || (rc = tachi_pw_write_locations(w)) ||
	    (rc = tachi_pw_write_strings(w)))
		return rc;
	return write_trailer(w, period_ns);
}

static int pw_close(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	if (!st->raw) {
		/* A gzip header with mtime 0, so output depends only on input (gzip.c).
		 * Level 1 by default, as the Go runtime writes its pprof files: on the bench's
		 * deep profile zlib's level 6 compresses ten times slower than igzip's level 1
		 * for a file 9% smaller. */
		int e = tachi_gz_open(&st->gz, &w->out, st->level ? st->level : 1, st->gz_threads);
		if (e)
			return tachi_gz_failed(w, e);
	}
	int rc = write_profile(w);
	if (!rc && !st->raw)
		rc = tachi_pw_deflate_stage(w, true);
	return rc;
}

static void pw_free(struct tach_writer *w)
{
	struct pprof_wstate *st = w->state;
	tachi_gz_free(st->gz);
	free(st->strs);
	free(st->own.p);
	free(st->smap);
	free(st->fmap);
	free(st->ffn);
	free(st->runs);
	free(st->rfid);
	tachi_idset_free(&st->run_index);
	free(st->locs);
	tachi_idset_free(&st->loc_index);
	free(st->xl);
	free(st->keys);
	free(st->run);
	tachi_pmaps_free(&st->maps);
	free(st->fns);
	tachi_idset_free(&st->fn_index);
	tachi_stacktab_free(&st->trie);
	free(st->lsets);
	tachi_idset_free(&st->lset_index);
	tachi_threads_free(&st->threads);
	free(st->counts);
	free(st->times);
	free(st->type_str);
	free(st->vbuf);
	free(st->labs);
	free(st->vals);
	free(st->msg.p);
	free(st->sub.p);
	free(st->stage.p);
}

const struct tachi_writer_ops tachi_pprof_writer_ops = {
	.state_size = sizeof(struct pprof_wstate),
	.option = pw_option,
	.begin = pw_begin,
	.put = pw_put,
	.close = pw_close,
	.free = pw_free,
	.trie_at = offsetof(struct pprof_wstate, trie) + 1,
	.fetch = pw_fetch,
	.put_ext = pw_put_ext,
	.keeps_labels = true,
};
