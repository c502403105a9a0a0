/* Chrome trace-event reader: the CPU profiles in a trace that Chrome DevTools' Performance
 * panel saves or node writes with --cpu-prof --trace-event-categories
 * disabled-by-default-v8.cpu_profiler (node_trace.1.log).
 *
 * A file is an object with a "traceEvents" array (other keys skipped) or a bare array of
 * events, which may end without its "]" (the format allows it: Chrome leaves it open when
 * tracing stops abruptly). Read of them: "Profile" events, args.data.startTime (µs of V8's clock) starting
 * the profile of their "id" in their "pid"; "ProfileChunk" events adding to it
 * args.data.cpuProfile.nodes (each with "parent", as in a .cpuprofile), .samples and
 * args.data.timeDeltas (in cpuProfile too, where some producers put it), the first delta
 * from startTime, each next one from the sample before, across chunks in file order; and
 * args.data.endTime; "CpuProfile" events (Chrome 65-69), a whole .cpuprofile in
 * args.data.cpuProfile on the event's own pid/tid; "thread_name" metadata ("M") naming a
 * pid/tid's thread (args.name, the last one given). Every other event is skipped. A trace
 * with no Profile, ProfileChunk or CpuProfile event at all is read for its spans instead
 * (formats/trace_spans.c), as speedscope reads such a trace: detection then stays one
 * format per file.
 *
 * Chrome drops chunks, and later ones name nodes only a dropped one had: as DevTools and
 * speedscope read it, a node whose parent names no node starts its stacks, a sample naming
 * no node is skipped (its time the sample's before), and chunks of an id with no Profile
 * event are skipped; one warning counts what was left out (say_unplaced). A profile's id is its own in its
 * process only (each process counts from 0x1).
 *
 * What a sample becomes: as in a .cpuprofile (v8/read.c, v8_tree.c: same frames, weights
 * as time up to the next sample of the profile, first from startTime, last to endTime),
 * on the thread of the Profile event: its tid, the pid as interpreter. The chunks come
 * from V8's sampler threads, not the one profiled (node writes a profile's chunks from
 * two threads), so their own tid is not the profile's. A thread with a name gets it as
 * the outermost frame, file "[comm]", line the pid (formats/comm.h), for the writers that
 * name threads. All profiles are merged in time order, times counting from the earliest
 * startTime; the clock is no wall clock, so the start is unknown (0).
 *
 * Memory is the file plus a record per event read, node and sample. Refused with the
 * byte offset, beyond what a .cpuprofile is refused for: no event array, an event that
 * is no object, two Profile events for one id, ids and pids that are no integers (ids: strings or integers). */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/format.h"
#include "core/handles.h"
#include "formats/trace_events.h"
#include "formats/trace_spans.h"
#include "formats/chrome/chrome.h"
#include "formats/json_read.h"
#include "formats/v8_tree.h"

#define NONE UINT64_MAX

/* EV_CPU: Chrome 65-69's CpuProfile, a whole profile in one event (args.data.cpuProfile) */
enum { EV_PROFILE, EV_CHUNK, EV_CPU };

/* A Profile or ProfileChunk event. */
struct cev {
	const uint8_t *idp;       /* the id token's bytes: the key with pid */
	size_t idn;
	int64_t pid, tid;
	uint64_t off;             /* the event */
	uint64_t data_off;        /* args.data, NONE when absent */
	uint32_t seq, prof;
	int kind;
};

/* A thread_name event. */
struct cname {
	int64_t pid, tid;
	uint64_t name_off;
	uint32_t seq;
};

struct chrome_rstate {
	struct tachi_v8 v;        /* first: the shared steps take r->state as one */
	struct cev *ev;
	size_t nev, ev_cap;
	struct cname *names;
	size_t nnames, names_cap;
	size_t orphan_chunks, orphan_samples; /* of profiles whose Profile event is missing */
	uint64_t orphan_at;
	bool spans;               /* no CPU profile: the trace's spans are read instead */
	struct tachi_spans sp;
};

static int cmp_ev(const void *a, const void *b)
{
	const struct cev *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if ((x->kind == EV_CPU) != (y->kind == EV_CPU))
		return x->kind == EV_CPU ? 1 : -1;
	if (x->idn != y->idn)
		return x->idn < y->idn ? -1 : 1;
	/* (an event without an id has a null one: nothing to compare) */
	int c = x->idn ? memcmp(x->idp, y->idp, x->idn) : 0;
	if (c)
		return c;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* (a CpuProfile event is a profile of its own, whatever its id) */
static bool same_profile(const struct cev *x, const struct cev *y)
{
	return x->pid == y->pid && x->kind != EV_CPU && y->kind != EV_CPU && x->idn == y->idn &&
	       (!x->idn || !memcmp(x->idp, y->idp, x->idn));
}

static int cmp_name(const void *a, const void *b)
{
	const struct cname *x = a, *y = b;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	return x->seq < y->seq ? -1 : x->seq > y->seq;
}

/* ---- the events ---- */

/* An integer pid or tid at off (NONE: absent, refused). */
static int need_int(struct tach_reader *r, uint64_t off, uint64_t at, const char *what,
		    int64_t *x)
{
	if (off == NONE)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at, "a profile event without \"%s\"",
			     what);
	return tachi_jr_opt_int(r, off, what, 0, INT64_MAX, false, x);
}

/* The value at off (NONE: absent) when it is an object, else NONE. */
static uint64_t object_at(struct tach_reader *r, uint64_t off)
{
	struct tachi_json j;
	struct tachi_jtok t;
	if (off == NONE || tachi_jr_value_at(r, &j, off, &t) || t.type != TJ_OBJECT)
		return NONE;
	return t.off;
}

/* The key's value in the object at off (NONE: no object or no key). */
static uint64_t member(struct tach_reader *r, uint64_t off, const char *key)
{
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o = NONE;
	if (off == NONE || tachi_jr_value_at(r, &j, off, &t) || t.type != TJ_OBJECT ||
	    tachi_json_keys(&j, (const char *const[]){ key }, &o, 1))
		return NONE;
	return o;
}

/* The integer at off (NONE: absent), without failing. */
static bool int_at(struct tach_reader *r, uint64_t off, int64_t *x)
{
	struct tachi_json j;
	struct tachi_jtok t;
	return off != NONE && !tachi_jr_value_at(r, &j, off, &t) &&
	       tachi_json_tok_int(r->in.data, &t, 0, INT64_MAX, x);
}

static int thread_name(struct tach_reader *r, const uint64_t *o, uint32_t seq)
{
	struct chrome_rstate *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	int64_t pid, tid;
	uint64_t name = member(r, o[4], "name");
	/* a name that is no string, or a thread with no integer ids, names nothing read */
	if (name == NONE || tachi_jr_value_at(r, &j, name, &t) || t.type != TJ_STRING ||
	    !int_at(r, o[2], &pid) || !int_at(r, o[3], &tid))
		return TACH_OK;
	if (!TACHI_RESERVE(st->names, st->names_cap, st->nnames + 1))
		return tachi_jr_nomem(r);
	st->names[st->nnames++] = (struct cname){ pid, tid, t.off, seq };
	return TACH_OK;
}

static int profile_event(struct tach_reader *r, const uint64_t *o, uint64_t off, int kind,
			 uint32_t seq)
{
	struct chrome_rstate *st = r->state;
	struct tachi_json j;
	struct tachi_jtok t;
	struct cev e = { .off = off, .seq = seq, .kind = kind, .tid = -1 };
	int rc;
	if (o[5] == NONE && kind != EV_CPU)
		return tachi_jr_bad(r, off, "a profile event without an \"id\"");
	if (kind != EV_CPU) {
		if ((rc = tachi_jr_value_at(r, &j, o[5], &t)))
			return rc;
		if (t.type != TJ_STRING && t.type != TJ_NUMBER)
			return tachi_jr_bad(r, t.off, "a profile's \"id\" must be a string or a number");
		e.idp = r->in.data + t.start;
		e.idn = t.len;
	}
	if ((rc = need_int(r, o[2], off, "pid", &e.pid)) ||
	    (kind != EV_CHUNK && (rc = need_int(r, o[3], off, "tid", &e.tid))))
		return rc;
	e.data_off = object_at(r, member(r, o[4], "data"));
	if (!TACHI_RESERVE(st->ev, st->ev_cap, st->nev + 1))
		return tachi_jr_nomem(r);
	st->ev[st->nev++] = e;
	return TACH_OK;
}

/* One event, whose '{' j has just read at off. */
static int event(struct tach_reader *r, struct tachi_json *j, uint64_t off, uint32_t seq,
		 void *ctx)
{
	static const char *const want[] = { "ph", "name", "pid", "tid", "args", "id" };
	uint64_t o[6];
	struct tachi_json c;
	struct tachi_jtok t;
	int rc = tachi_json_keys(j, want, o, 6);
	(void)ctx;
	if (rc || o[1] == NONE)
		return rc;
	if ((rc = tachi_jr_value_at(r, &c, o[1], &t)) || t.type != TJ_STRING)
		return rc;
	if (tachi_json_str_eq(r->in.data, &t, "Profile"))
		return profile_event(r, o, off, EV_PROFILE, seq);
	if (tachi_json_str_eq(r->in.data, &t, "ProfileChunk"))
		return profile_event(r, o, off, EV_CHUNK, seq);
	if (tachi_json_str_eq(r->in.data, &t, "CpuProfile"))
		return profile_event(r, o, off, EV_CPU, seq);
	if (tachi_json_str_eq(r->in.data, &t, "thread_name") && o[0] != NONE &&
	    !tachi_jr_value_at(r, &c, o[0], &t) && tachi_json_str_eq(r->in.data, &t, "M"))
		return thread_name(r, o, seq);
	return TACH_OK;
}

/* ---- the profiles ---- */

/* The last name given to thread pid/tid, NONE when none. */
static uint64_t name_of(const struct chrome_rstate *st, int64_t pid, int64_t tid)
{
	size_t lo = 0, hi = st->nnames;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		const struct cname *m = &st->names[mid];
		if (m->pid < pid || (m->pid == pid && m->tid <= tid))
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo && st->names[lo - 1].pid == pid && st->names[lo - 1].tid == tid
		       ? st->names[lo - 1].name_off
		       : NONE;
}

/* The object that holds a profile's startTime, endTime, nodes and samples: args.data of
 * a Profile or ProfileChunk, its cpuProfile (NONE when absent) for a CpuProfile. */
static uint64_t holder(struct tach_reader *r, const struct cev *e)
{
	return e->kind == EV_CPU ? object_at(r, member(r, e->data_off, "cpuProfile")) : e->data_off;
}

/* A time in the event's holder (NONE: absent), into *ns; true when there. */
static int data_time(struct tach_reader *r, const struct cev *e, const char *key, int64_t *ns,
		     bool *there)
{
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t off = member(r, holder(r, e), key);
	*there = off != NONE;
	if (!*there)
		return TACH_OK;
	int rc = tachi_jr_value_at(r, &j, off, &t);
	return rc ? rc : tachi_v8_time_ns(r, &t, key, ns);
}

/* The profile that starts at the Profile event e. */
static int start_profile(struct tach_reader *r, struct cev *e)
{
	struct chrome_rstate *st = r->state;
	int64_t start;
	bool there;
	int rc = data_time(r, e, "startTime", &start, &there);
	if (rc)
		return rc;
	if (!there)
		return tachi_jr_bad(r, e->off, e->kind == EV_CPU ? "a CpuProfile event without "
								   "args.data.cpuProfile.startTime"
								 : "a Profile event without args.data.startTime");
	if (start < 0)
		return tachi_jr_bad(r, e->off, "startTime before 0");
	if ((rc = tachi_v8_add_profile(r, start, &e->prof)))
		return rc;
	struct tachi_v8_prof *p = &st->v.profs[e->prof];
	p->tid = (uint64_t)e->tid;
	p->iid = e->pid <= UINT32_MAX ? (uint32_t)e->pid : 0;
	p->pid = e->pid <= INT32_MAX ? (int32_t)e->pid : -1;
	p->name_off = name_of(st, e->pid, e->tid);
	return TACH_OK;
}

/* The number of elements of the array at off (NONE or no array: 0). */
static size_t array_len(struct tach_reader *r, uint64_t off)
{
	struct tachi_json j;
	struct tachi_jtok t;
	size_t n = 0;
	bool more;
	if (off == NONE || tachi_jr_value_at(r, &j, off, &t) || t.type != TJ_ARRAY)
		return 0;
	while (!tachi_json_elem(&j, &more) && more && !tachi_json_skip(&j))
		n++;
	return n;
}

/* Chunks of a profile whose Profile event is not in the trace (it began after it): their
 * thread is unknown (a chunk's tid is the sampler's) and so is the time their first delta
 * counts from, so they are no thread of their own and no part of another's profile, as
 * DevTools and speedscope skip them; counted for the warning. */
static void orphans(struct tach_reader *r, size_t i, size_t k)
{
	struct chrome_rstate *st = r->state;
	for (size_t m = i; m < k; m++) {
		struct cev *e = &st->ev[m];
		e->prof = UINT32_MAX;
		if (!st->orphan_chunks++ || e->off < st->orphan_at)
			st->orphan_at = e->off;
		st->orphan_samples += array_len(r, member(r, member(r, e->data_off, "cpuProfile"),
							   "samples"));
	}
}

/* The profile of events i..k (one Profile event and its chunks, or a CpuProfile event),
 * whose start is at event *start: its nodes read. */
static int one_profile(struct tach_reader *r, size_t i, size_t k, struct cev *start)
{
	struct chrome_rstate *st = r->state;
	int rc = start_profile(r, start);
	if (rc)
		return rc;
	st->v.cur_prof = start->prof;
	for (size_t m = i; m < k; m++) {
		struct cev *e = &st->ev[m];
		e->prof = start->prof;
		uint64_t nodes = e->kind == EV_CPU ? member(r, holder(r, e), "nodes")
						  : member(r, member(r, e->data_off, "cpuProfile"), "nodes");
		if (e->kind != EV_PROFILE && nodes != NONE && (rc = tachi_v8_nodes(r, nodes)))
			return rc;
	}
	return TACH_OK;
}

/* Each group of events of one profile (sorted: file order within) gets its profile, and
 * its chunks' nodes are read. */
static int profiles(struct tach_reader *r)
{
	struct chrome_rstate *st = r->state;
	int rc;
	for (size_t i = 0, k; i < st->nev; i = k) {
		struct cev *profile = NULL;
		if (st->ev[i].kind == EV_CPU) {
			k = i + 1;
			/* no cpuProfile: nothing to read, as speedscope skips it */
			st->ev[i].prof = UINT32_MAX;
			if (holder(r, &st->ev[i]) != NONE && (rc = one_profile(r, i, k, &st->ev[i])))
				return rc;
			continue;
		}
		for (k = i; k < st->nev && same_profile(&st->ev[i], &st->ev[k]); k++) {
			if (st->ev[k].kind != EV_PROFILE)
				continue;
			if (profile)
				return tachi_jr_bad(r, st->ev[k].off,
						    "a second Profile event for one profile id");
			profile = &st->ev[k];
		}
		if (!profile)
			orphans(r, i, k);
		else if ((rc = one_profile(r, i, k, profile)))
			return rc;
	}
	return TACH_OK;
}

/* A chunk's samples and deltas, and its endTime. */
static int chunk_samples(struct tach_reader *r, const struct cev *e)
{
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t cpu = member(r, e->data_off, "cpuProfile");
	uint64_t samples = member(r, cpu, "samples");
	uint64_t deltas = member(r, e->data_off, "timeDeltas");
	uint64_t end = member(r, holder(r, e), "endTime");
	int rc;
	if (deltas == NONE)
		deltas = member(r, cpu, "timeDeltas");
	if ((samples == NONE) != (deltas == NONE))
		return tachi_jr_bad(r, e->off, samples == NONE ? "a profile event with timeDeltas "
								 "but no samples"
							       : "a profile event with samples but "
								 "no timeDeltas");
	if (samples != NONE && (rc = tachi_v8_samples(r, e->prof, samples, deltas)))
		return rc;
	if (end != NONE &&
	    ((rc = tachi_jr_value_at(r, &j, end, &t)) || (rc = tachi_v8_end(r, e->prof, &t))))
		return rc;
	return TACH_OK;
}

struct chrome_pkey {
	uint64_t tid;
	int64_t pid;
	size_t idx;
};

static int cmp_pkey(const void *a, const void *b)
{
	const struct chrome_pkey *x = a, *y = b;
	if (x->tid != y->tid)
		return x->tid < y->tid ? -1 : 1;
	if (x->pid != y->pid)
		return x->pid < y->pid ? -1 : 1;
	return x->idx < y->idx ? -1 : x->idx > y->idx;
}

/* A profile's span, ns: startTime to endTime, or to its last sample without one. */
static int64_t span(const struct tachi_v8_prof *p)
{
	int64_t end = p->end >= 0 ? p->end : p->now;
	return end > p->start ? end - p->start : 0;
}

/* Whether profile a is the one kept over b of the same thread: the longer in samples (the
 * finer recording: node's second profiler of a thread can get few samples of its span),
 * then in time, then the first. */
static bool keeps(const struct tachi_v8_prof *a, size_t na, const struct tachi_v8_prof *b,
		  size_t nb)
{
	if (na != nb)
		return na > nb;
	return span(a) >= span(b);
}

static void say_dropped(struct tach_reader *r, const struct tachi_v8_prof *p, size_t n,
			const size_t *count, size_t kept, size_t dropped)
{
	const struct tachi_v8_prof *k = &p[kept], *d = &p[dropped];
	tachi_warn(&r->warn, TACH_POS_NONE, 0,
		   "a thread in two profiles (node --cpu-prof with the cpu_profiler trace "
		   "category records it twice) is one recording, counted once: %zu profile%s "
		   "dropped, the longer (more samples) kept; thread %lld of process %d: %zu samples over "
		   "%lld us dropped, %zu samples over %lld us kept",
		   n, n == 1 ? "" : "s", (long long)d->tid, d->pid, count[dropped], (long long)(span(d) / 1000),
		   count[kept], (long long)(span(k) / 1000));
}

/* Two profiles of one thread (node with --cpu-prof and the cpu_profiler trace category
 * records its main thread twice, at two rates) are one recording: the longer (keeps) is
 * kept, the other's samples go, and a warning says so once. */
static int one_recording_per_thread(struct tach_reader *r)
{
	struct chrome_rstate *st = r->state;
	struct tachi_v8 *v = &st->v;
	size_t n = v->nprofs, twice = 0, kept = 0, gone = 0;
	if (n < 2)
		return TACH_OK;
	struct chrome_pkey *k = calloc(n, sizeof(*k));
	size_t *count = calloc(n, sizeof(*count));
	if (!k || !count) {
		free(k);
		free(count);
		return tachi_jr_nomem(r);
	}
	for (size_t i = 0; i < v->ns; i++)
		count[v->s[i].prof]++;
	for (size_t i = 0; i < n; i++)
		k[i] = (struct chrome_pkey){ v->profs[i].tid, v->profs[i].pid, i };
	qsort(k, n, sizeof(*k), cmp_pkey);
	for (size_t i = 0, j; i < n; i = j) {
		size_t best = k[i].idx;
		for (j = i + 1; j < n && k[j].tid == k[i].tid && k[j].pid == k[i].pid; j++)
			if (!keeps(&v->profs[best], count[best], &v->profs[k[j].idx], count[k[j].idx]))
				best = k[j].idx;
		for (size_t m = i; m < j; m++)
			if (k[m].idx != best) {
				v->profs[k[m].idx].dropped = true;
				/* (one without samples is no second recording: nothing to say) */
				if (count[k[m].idx] && !twice++) {
					kept = best;
					gone = k[m].idx;
				}
			}
	}
	if (twice) {
		say_dropped(r, v->profs, twice, count, kept, gone);
		size_t w = 0;
		for (size_t i = 0; i < v->ns; i++)
			if (!v->profs[v->s[i].prof].dropped)
				v->s[w++] = v->s[i];
		v->ns = w;
	}
	free(k);
	free(count);
	return TACH_OK;
}

/* What the trace holds that no profile can place, in one warning: chunks of profiles
 * whose Profile event is missing, nodes whose parent no chunk has and samples that name no
 * node (Chrome 141 drops chunks: later ones name what only those had; a dropped node's
 * children start their stacks, as speedscope places them). */
static void say_unplaced(struct tach_reader *r)
{
	struct chrome_rstate *st = r->state;
	const struct tachi_v8 *v = &st->v;
	char a[160] = "", b[160] = "", c[160] = "";
	if (!st->orphan_chunks && !v->unplaced_parents && !v->unplaced_samples)
		return;
	if (st->orphan_chunks)
		snprintf(a, sizeof(a), "; %zu ProfileChunk event%s (%zu sample%s) of profiles whose "
			 "Profile event is not in the trace (it began after them): skipped",
			 st->orphan_chunks, st->orphan_chunks == 1 ? "" : "s", st->orphan_samples,
			 st->orphan_samples == 1 ? "" : "s");
	if (v->unplaced_samples)
		snprintf(b, sizeof(b), "; %zu sample%s naming a node no chunk has: skipped, "
			 "their time the sample's before", v->unplaced_samples,
			 v->unplaced_samples == 1 ? "" : "s");
	if (v->unplaced_parents)
		snprintf(c, sizeof(c), "; %zu node%s whose parent no chunk has: %s stacks start "
			 "there", v->unplaced_parents, v->unplaced_parents == 1 ? "" : "s",
			 v->unplaced_parents == 1 ? "its" : "their");
	tachi_warn(&r->warn, st->orphan_chunks ? TACH_POS_OFFSET : TACH_POS_NONE, st->orphan_at,
		   "what the trace's profile events cannot place is left out, as DevTools and "
		   "speedscope leave it out%s%s%s", a, b, c);
	st->orphan_chunks = 0;
}

static int chrome_open(struct tach_reader *r)
{
	struct chrome_rstate *st = r->state;
	int rc;
	r->json_lone_ok = true;
	st->v.lenient = true;
	if ((rc = tachi_trace_events(r, event, NULL)))
		return rc;
	tachi_v8_lone_warning(r);
	/* a trace of spans alone (no profiler category) is read as speedscope reads it */
	if (!st->nev) {
		st->spans = true;
		return tachi_spans_read(r, &st->sp, "no CPU profile and no spans in this trace: no "
					"Profile, ProfileChunk, B, E or X event (record with the "
					"disabled-by-default-v8.cpu_profiler category)");
	}
	qsort(st->ev, st->nev, sizeof(*st->ev), cmp_ev);
	if (st->nnames)
		qsort(st->names, st->nnames, sizeof(*st->names), cmp_name);
	if ((rc = profiles(r)))
		return rc;
	if (!st->v.nprofs)
		say_unplaced(r);
	/* a trace of other events (tracing without the profiler's category) has no samples
	 * to give: an empty profile would look like a program that never ran */
	if (!st->v.nprofs)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
			     "no CPU profile in this trace: no Profile or ProfileChunk event (record "
			     "with the disabled-by-default-v8.cpu_profiler category)");
	if ((rc = tachi_v8_tree(r)))
		return rc;
	for (size_t i = 0; i < st->nev; i++)
		if (st->ev[i].kind != EV_PROFILE && st->ev[i].prof != UINT32_MAX &&
		    (rc = chunk_samples(r, &st->ev[i])))
			return rc;
	say_unplaced(r);
	if ((rc = one_recording_per_thread(r)))
		return rc;
	if ((rc = tachi_v8_finish(r)))
		return rc;
	/* V8's clock is no wall clock: the start is unknown (0), so no writer shows a date */
	r->meta.start_time_us = 0;
	int64_t last = -1;
	for (size_t i = 0; i < st->v.nprofs; i++)
		if (!st->v.profs[i].dropped && st->v.profs[i].end > last)
			last = st->v.profs[i].end;
	r->meta.duration_ns = last >= st->v.origin ? last - st->v.origin : 0;
	return TACH_OK;
}

static int chrome_next(struct tach_reader *r, const struct tach_sample **s)
{
	struct chrome_rstate *st = r->state;
	return st->spans ? tachi_spans_next(r, &st->sp, s) : tachi_v8_next(r, s);
}

static void chrome_free(struct tach_reader *r)
{
	struct chrome_rstate *st = r->state;
	tachi_v8_free(r);
	tachi_spans_free(&st->sp);
	free(st->ev);
	free(st->names);
}

const struct tachi_reader_ops tachi_chrome_reader_ops = {
	.state_size = sizeof(struct chrome_rstate),
	.open = chrome_open,
	.next = chrome_next,
	.free = chrome_free,
	.whole_input = true,
};
