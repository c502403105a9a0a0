/* The perf.data reader: a sample per PERF_RECORD_SAMPLE of the event read, in time order,
 * its frames as `perf script` prints them and FlameGraph's stackcollapse-perf.pl reads
 * them (the perf script reader's frames, formats/perf_read.c, from the same capture),
 * with their addresses and mappings kept.
 *
 * Read: the file and pipe forms, every record type (skipped by its size when of no use),
 * compressed records, time order by rounds (read_records.c); EVENT_DESC and BUILD_ID
 * (read_features.c); every sample_type field (read_sample.c); COMM, FORK, EXIT, MMAP,
 * MMAP2 and the naming of frames (read_symbols.c).
 *
 * Which samples: the first sample's event, as stackcollapse-perf.pl takes the first event
 * it sees, or those of the event option (its full name, or its name before the
 * modifiers: "cycles" reads "cycles:u"); a warning counts the samples of other events.
 * Weights (option weight): auto reads the periods of cpu-clock and task-clock, which are
 * nanoseconds, as time (each sample one, standing for its own period: time_ns, exact; the
 * interval is the first sample's period and weighs nothing), other events' periods as
 * counts (each sample one, its count a value, no time, with a warning); period: the period
 * itself, as stackcollapse-perf.pl sums it; samples: one, no time.
 *
 * A sample: the tid as the thread, the time in µs of perf's clock, the call chain
 * innermost first (context markers are not frames; --call-graph dwarf: the kernel's part,
 * then the user stack from the unwinder, unwind.h, or the user IP alone), and a
 * root frame naming the thread: file "[comm]", function its comm, line the pid
 * (formats/comm.h). Refused with the byte offset: a header, section or record that does
 * not fit in the file, a sample shorter than its fields. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "core/format.h"
#include "core/handles.h"
#include "formats/perfdata/perfdata.h"

/* How many records ahead a sample's frames-table slots are asked for (pd_prefetch_chain):
 * far enough for memory to answer while the records between are read. */
#define PREFETCH_AHEAD 4

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

static int bool_opt(struct tach_reader *r, const char *key, const char *value, bool *neg)
{
	bool b;
	if (!tachi_parse_bool(value, &b))
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "%s must be yes or no, not %s", key,
			     value);
	*neg = !b;
	return TACH_OK;
}

static int append_dir(struct tach_reader *r, const char *value)
{
	struct pd *st = r->state;
	size_t old = st->binary_path ? strlen(st->binary_path) : 0, n = strlen(value);
	char *p = realloc(st->binary_path, old + n + 2);
	if (!p)
		return nomem(r);
	if (old)
		p[old++] = ':';
	memcpy(p + old, value, n + 1);
	st->binary_path = p;
	return TACH_OK;
}

static int pd_option(struct tach_reader *r, const char *key, const char *value)
{
	struct pd *st = r->state;
	if (!strcmp(key, "event")) {
		if (!value[0] || strlen(value) > PD_MAX_NAME)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "event must be 1 to %d bytes",
				     PD_MAX_NAME);
		free(st->event_opt);
		return (st->event_opt = strdup(value)) ? TACH_OK : nomem(r);
	}
	if (!strcmp(key, "weight"))
		return tachi_perf_weight_mode(&st->pw, value)
			       ? TACH_OK
			       : RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				       "weight must be auto, period or samples, not %s", value);
	if (!strcmp(key, "addresses"))
		return bool_opt(r, key, value, &st->no_addresses);
	if (!strcmp(key, "unknown-addresses"))
		return bool_opt(r, key, value, &st->no_unknown_addresses);
	if (!strcmp(key, "symbolize"))
		return bool_opt(r, key, value, &st->no_symbolize);
	if (!strcmp(key, "source-lines"))
		return bool_opt(r, key, value, &st->no_source_lines);
	if (!strcmp(key, "binary-path"))
		return append_dir(r, value);
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "perfdata reader has no option %s", key);
}

/* Whether the event name matches the option: whole, or the name before its modifiers. */
static bool event_matches(const char *name, const char *opt)
{
	size_t n = strcspn(name, ":");
	return !strcmp(name, opt) || (strlen(opt) == n && !strncmp(name, opt, n));
}

static int pd_open(struct tach_reader *r)
{
	struct pd *st = r->state;
	st->chosen = -1;
	int rc = pd_open_input(r);
	if (rc || (rc = pd_syms_new(r)))
		return rc;
	if (!st->event_opt || st->pipe)
		return TACH_OK;
	for (size_t i = 0; i < st->nattrs; i++)
		if (event_matches(st->attrs[i].name, st->event_opt))
			return TACH_OK;
	char list[512] = "";
	for (size_t i = 0; i < st->nattrs && strlen(list) < 400; i++)
		snprintf(list + strlen(list), sizeof(list) - strlen(list), "%s%.64s", i ? ", " : "",
			 st->attrs[i].name);
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_NONE, 0,
		     "no samples of event %.64s; the capture has: %s", st->event_opt, list);
}

/* Whether a sample of attribute a is read; the first read decides the event. */
static bool wanted(struct pd *st, int a)
{
	const char *name = st->attrs[a].name;
	if (st->chosen < 0) {
		if (st->event_opt && !event_matches(name, st->event_opt))
			return false;
		st->chosen = a;
	}
	if (st->event_opt)
		return event_matches(name, st->event_opt);
	return a == st->chosen || !strcmp(name, st->attrs[st->chosen].name);
}

static void decide_weights(struct tach_reader *r, const struct pd_attr *a,
			   const struct pd_sample *s)
{
	struct pd *st = r->state;
	st->pw.decided = true;
	if (st->pw.mode != TACHI_PERF_W_AUTO || !s->has_period || !s->period)
		return;
	/* software events 0 and 1: cpu-clock and task-clock, whose periods are ns */
	if (a->type == 1 && a->config <= 1) {
		tachi_perf_weights_clock(&st->pw, &r->meta, s->period);
		return;
	}
	tachi_warn(&r->warn, TACH_POS_NONE, 0,
		   "event %.64s: periods are event counts, not time; each sample is read as one",
		   a->name);
	tachi_perf_weights_count(&st->pw, &r->meta, a->name, true, s->period);
}

/* Whether a process's comm names the program at path: its base name, which the kernel
 * cuts at 15 bytes, or that name with a version after it (python3 runs python3.12). */
static bool comm_names(const char *comm, const char *path)
{
	size_t bl, cl = strlen(comm);
	const char *b = tachi_base_name(path, strlen(path), &bl);
	return cl && (bl == cl || (cl == 15 && bl > 15) || (bl > cl + 1 && b[cl] == '.')) &&
	       !memcmp(b, comm, cl);
}

static bool program_path(void *comm, const char *path)
{
	return path[0] == '/' && comm_names(comm, path);
}

/* The program: the file of a frame of the first sample that its comm names, else of a
 * mapping of its process that the comm names (the first sample may be in the loader or
 * the kernel, whose files name no program: pprof's File: and the Gecko product would show
 * ld-linux-x86-64.so.2 or "perf"). */
static int note_program(struct tach_reader *r, const char *comm, uint32_t pid)
{
	struct pd *st = r->state;
	const char *f = NULL;
	for (uint32_t i = 0; i < st->depth && comm && !f; i++) {
		f = pd_frame_file(r, st->frames[i]);
		f = f && f[0] == '/' && comm_names(comm, f) ? f : NULL;
	}
	if (comm && !f)
		f = pd_proc_map_find(r, pid, program_path, (void *)comm);
	if (!f)
		return TACH_OK;
	if (!(st->program = strdup(f)))
		return nomem(r);
	r->meta.program = st->program;
	return TACH_OK;
}

/* Ends the frames with the root and fills r->sample. */
static int make_sample(struct tach_reader *r, const struct pd_attr *a, const struct pd_sample *s,
		       uint64_t off)
{
	struct pd *st = r->state;
	uint32_t root;
	int rc = pd_root_frame(r, s, &root);
	if (rc)
		return rc;
	if (!st->samples) {
		const struct tach_frame *f = tach_dict_frame(&r->dict, root);
		if ((rc = note_program(r, f ? tach_dict_string(&r->dict, f->func, NULL) : NULL,
				       s->pid)))
			return rc;
	}
	if (st->depth >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off,
			     "call chain deeper than %u frames (see max-depth)", r->lim.max_depth);
	if (!TACHI_RESERVE(st->frames, st->frames_cap, st->depth + 1))
		return nomem(r);
	st->frames[st->depth++] = root;
	if (!st->pw.decided)
		decide_weights(r, a, s);
	uint64_t w = tachi_perf_weight(&st->pw, s->has_period, s->period);
	if (w > UINT64_MAX - st->total || w > r->lim.max_samples - st->total)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off,
			     "more than %llu samples (see max-samples)",
			     (unsigned long long)r->lim.max_samples);
	st->total += w;
	uint32_t same = 0, d = st->depth;
	if (st->has_prev && st->prev_tid == s->tid) {
		uint32_t m = d < st->prev_depth ? d : st->prev_depth;
		while (same < m && st->prev[st->prev_depth - 1 - same] == st->frames[d - 1 - same])
			same++;
	}
	if (!TACHI_RESERVE(st->prev, st->prev_cap, d))
		return nomem(r);
	memcpy(st->prev, st->frames, d * sizeof(*st->prev));
	st->prev_depth = d;
	st->prev_tid = s->tid;
	st->has_prev = true;
	struct tach_sample *out = &r->sample;
	out->thread_id = s->tid;
	out->interp_id = 0;
	out->timestamp_us = s->has_time ? s->time / 1000 : st->samples * (r->meta.interval_us ? r->meta.interval_us : 1);
	out->status = TACH_STATUS_UNKNOWN;
	out->weight = w;
	out->time_ns = tachi_perf_time(&st->pw, s->has_period, s->period);
	out->depth = d;
	out->same_outer = same;
	out->frames = st->frames;
	if (st->pw.count_event)
		r->ext = tachi_perf_values(&st->pw, w, s->has_period, s->period);
	st->samples++;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += w;
	return TACH_OK;
}

static int on_sample(struct tach_reader *r, const struct pd_rec *rec, bool *done)
{
	struct pd *st = r->state;
	int a = pd_attr_of(st, rec->p, rec->size, true);
	if (a < 0) {
		st->unknown_ids++;
		return TACH_OK;
	}
	if (!wanted(st, a)) {
		if (!st->skipped++)
			st->first_skipped = a;
		return TACH_OK;
	}
	struct pd_sample s;
	st->sample_off = rec->off;
	int rc = pd_parse_sample(r, &st->attrs[a], rec->p, rec->size, rec->off, &s);
	if (rc || (rc = pd_sample_frames(r, &s)) || (rc = make_sample(r, &st->attrs[a], &s, rec->off)))
		return rc;
	*done = true;
	return TACH_OK;
}

static int finish(struct tach_reader *r)
{
	struct pd *st = r->state;
	if (st->finished)
		return TACH_EOF;
	st->finished = true;
	/* the samples' frames are in the dict: the binaries, their symbols, the kernel's and
	 * the perf maps are let go of now, not when the reader is freed (tach-merge keeps
	 * every input's reader to the end) */
	pd_syms_free(st->syms);
	st->syms = NULL;
	if (st->event_opt && st->chosen < 0 && st->pipe)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_NONE, 0, "no samples of event %.64s",
			     st->event_opt);
	if (st->skipped)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "%llu sample%s of other events (%.64s%s) skipped; only %.64s read (the "
			   "event option picks another)", (unsigned long long)st->skipped,
			   st->skipped == 1 ? "" : "s", st->attrs[st->first_skipped].name,
			   st->nattrs > 2 ? ", ..." : "",
			   st->chosen >= 0 ? st->attrs[st->chosen].name : st->event_opt);
	if (st->unknown_ids)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "%llu sample%s of no event the header names skipped",
			   (unsigned long long)st->unknown_ids, st->unknown_ids == 1 ? "" : "s");
	return TACH_EOF;
}

static int pd_next(struct tach_reader *r, const struct tach_sample **out)
{
	for (;;) {
		struct pd_rec rec;
		int rc = pd_next_record(r, &rec);
		if (rc == TACH_EOF)
			return finish(r);
		if (rc)
			return rc;
		bool done = false;
		struct pd *st = r->state;
		const struct pd_rec *next = pd_peek_record(st, PREFETCH_AHEAD);
		uint64_t nr;
		const uint8_t *chain;
		if (next && tachi_rd32(next->p, st->swap) == PD_SAMPLE &&
		    (chain = pd_peek_chain(st, next->p, (uint32_t)next->size, &nr)))
			pd_prefetch_chain(r, chain, nr);
		switch (tachi_rd32(rec.p, st->swap)) {
		case PD_SAMPLE:
			rc = on_sample(r, &rec, &done);
			break;
		case PD_COMM:
			rc = pd_on_comm(r, rec.p, rec.size, rec.off);
			break;
		case PD_FORK:
			rc = pd_on_fork(r, rec.p, rec.size, rec.off);
			break;
		case PD_EXIT:
			rc = pd_on_exit(r, rec.p, rec.size, rec.off);
			break;
		case PD_MMAP:
		case PD_MMAP2:
			rc = pd_on_mmap(r, rec.p, rec.size, rec.off,
					tachi_rd32(rec.p, st->swap) == PD_MMAP2);
			break;
		}
		if (rc)
			return rc;
		if (done) {
			*out = &r->sample;
			return TACH_OK;
		}
	}
}

static void pd_free(struct tach_reader *r)
{
	struct pd *st = r->state;
	pd_records_free(st);
	pd_features_free(st);
	pd_syms_free(st->syms);
	free(st->event_opt);
	free(st->binary_path);
	free(st->frames);
	free(st->prev);
	free(st->program);
}

const struct tachi_reader_ops tachi_perfdata_reader_ops = {
	.state_size = sizeof(struct pd),
	.option = pd_option,
	.open = pd_open,
	.next = pd_next,
	.free = pd_free,
	.whole_input = true,
	.stream_pipe = true,
};
