/* tach-merge: several profiles into one TACH profile.
 *
 * Samples are interleaved by timestamp, a k-way merge over a heap that holds one pending
 * sample per input (ties go to the input named first, so the output is the same bytes every
 * time), or with --concat written input after input. Every input is read once, front to
 * back. Each input's frames live in its reader's dict; they are mapped into one output dict
 * as they first appear, so memory follows distinct frames and stacks (the TACH writer's),
 * plus one pending sample per input, never the number of samples. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/runner.h"
#include "programs.h"

/* An input's string or frame ids in the output dict: 0 not mapped yet, else id + 1. */
struct idmap {
	uint32_t *ids;
	size_t cap;
};

struct src {
	struct tc_input *in;
	struct tach_sample s;   /* the pending sample; its frames belong to the reader */
	bool live;              /* s is pending */
	struct idmap strings, frames, maps;
	uint32_t tag;           /* --tag-inputs: the output id of the input's root frame */
};

struct merge {
	struct tc_run *run;
	struct tach_writer *w;
	struct tach_dict *dict; /* the output's */
	struct src *src;
	size_t n;
	size_t *heap;           /* inputs with a pending sample, earliest first */
	size_t nheap;
	uint32_t *frames;       /* the sample being written, in output ids */
	size_t frames_cap;
	bool tag;
	bool warned_labels;
};

/* Room for index id; the map grows with the ids an input's samples use. */
static bool idmap_reserve(struct idmap *m, uint32_t id)
{
	if (id < m->cap)
		return true;
	size_t cap = m->cap ? m->cap : 64;
	while (cap <= id)
		cap *= 2;
	uint32_t *p = realloc(m->ids, cap * sizeof(*p));
	if (!p)
		return false;
	memset(p + m->cap, 0, (cap - m->cap) * sizeof(*p));
	m->ids = p;
	m->cap = cap;
	return true;
}

static int map_string(struct merge *m, struct src *sr, uint32_t id, uint32_t *out)
{
	if (id < sr->strings.cap && sr->strings.ids[id]) {
		*out = sr->strings.ids[id] - 1;
		return TACH_OK;
	}
	size_t len;
	const char *s = tach_dict_string(tach_reader_dict(sr->in->r), id, &len);
	if (!s)
		return TACH_E_USAGE;
	if (!idmap_reserve(&sr->strings, id))
		return TACH_E_NOMEM;
	int rc = tach_dict_intern_string(m->dict, s, len, out);
	if (rc == TACH_OK)
		sr->strings.ids[id] = *out + 1;
	return rc;
}

/* A native frame's mapping (its strings too) in the output dict. */
static int map_mapping(struct merge *m, struct src *sr, uint32_t id, uint32_t *out)
{
	if (id < sr->maps.cap && sr->maps.ids[id]) {
		*out = sr->maps.ids[id] - 1;
		return TACH_OK;
	}
	const struct tach_mapping *mp = tach_dict_mapping(tach_reader_dict(sr->in->r), id);
	if (!mp)
		return TACH_E_USAGE;
	struct tach_mapping g = *mp;
	int rc;
	if ((rc = map_string(m, sr, mp->file, &g.file)) ||
	    (mp->build_id != TACH_NO_STRING && (rc = map_string(m, sr, mp->build_id, &g.build_id))))
		return rc;
	if (!idmap_reserve(&sr->maps, id))
		return TACH_E_NOMEM;
	if ((rc = tach_dict_intern_mapping(m->dict, &g, out)) == TACH_OK)
		sr->maps.ids[id] = *out + 1;
	return rc;
}

/* Frames keep their native data (address, mapping, inline mark): a TACH file has no field
 * for it, but the output dict is the TACH writer's, which keeps one row per value. */
static int map_frame(struct merge *m, struct src *sr, uint32_t id, uint32_t *out)
{
	if (id < sr->frames.cap && sr->frames.ids[id]) {
		*out = sr->frames.ids[id] - 1;
		return TACH_OK;
	}
	const struct tach_frame *f = tach_dict_frame(tach_reader_dict(sr->in->r), id);
	if (!f)
		return TACH_E_USAGE;
	struct tach_frame g = *f;
	int rc;
	if ((rc = map_string(m, sr, f->file, &g.file)) || (rc = map_string(m, sr, f->func, &g.func)))
		return rc;
	const struct tach_frame_native *n = tach_dict_frame_native(tach_reader_dict(sr->in->r), id);
	struct tach_frame_native gn = n ? *n : (struct tach_frame_native){ 0 };
	if (gn.mapping && (rc = map_mapping(m, sr, n->mapping, &gn.mapping)))
		return rc;
	if (!idmap_reserve(&sr->frames, id))
		return TACH_E_NOMEM;
	if ((rc = tach_dict_intern_frame_native(m->dict, &g, n ? &gn : NULL, out)) == TACH_OK)
		sr->frames.ids[id] = *out + 1;
	return rc;
}

/* --tag-inputs: a bare-name frame (file "~", no line, as collapsed inputs name frames)
 * carrying the input's name. */
static int make_tag(struct merge *m, struct src *sr)
{
	struct tach_frame f = { 0, 0, TACH_NO_LINE, TACH_NO_LINE, -1, -1, TACH_NO_OPCODE };
	int rc = tach_dict_intern_string(m->dict, "~", 1, &f.file);
	if (!rc)
		rc = tach_dict_intern_string(m->dict, sr->in->name, strlen(sr->in->name), &f.func);
	return rc ? rc : tach_dict_intern_frame(m->dict, &f, &sr->tag);
}

/* Writes input i's pending sample with its frames in output ids. */
static int put_pending(struct merge *m, size_t i)
{
	struct src *sr = &m->src[i];
	struct tach_sample s = sr->s;
	size_t depth = (size_t)s.depth + m->tag;
	if (depth > m->frames_cap) {
		uint32_t *p = realloc(m->frames, depth * sizeof(*p));
		if (!p)
			return TACH_E_NOMEM;
		m->frames = p;
		m->frames_cap = depth;
	}
	for (uint32_t k = 0; k < s.depth; k++) {
		int rc = map_frame(m, sr, s.frames[k], &m->frames[k]);
		if (rc)
			return rc;
	}
	if (m->tag)
		m->frames[s.depth] = sr->tag;
	s.frames = m->frames;
	s.depth = (uint32_t)depth;
	/* The hint speaks of the previous sample of the thread in this input; in the output
	 * that may be another input's. */
	if (m->n > 1)
		s.same_outer = 0;
	return tach_writer_put(m->w, m->dict, &s);
}

/* TACH has no place for pprof labels: say once that they are dropped (those the sample's
 * fields hold, thread id and the like, are not lost). */
static void check_labels(struct merge *m, const struct tach_reader *r)
{
	const struct tach_sample_ext *e = tach_reader_sample_ext(r);
	for (uint32_t k = 0; e && !m->warned_labels && k < e->label_count; k++) {
		size_t len;
		const char *key = tach_dict_string(tach_reader_dict(r), e->labels[k].key, &len);
		if (!key || !strcmp(key, "thread id") || !strcmp(key, "interpreter id") ||
		    !strcmp(key, "thread state"))
			continue;
		m->warned_labels = true;
		tc_warn(m->run, "the tach output has no place for sample labels: they are dropped "
			"(such as \"%.40s\")", key);
	}
}

/* The next sample of input i into its pending slot; 0 or the exit status. */
static int pull(struct merge *m, size_t i)
{
	const struct tach_sample *s;
	int rc = tc_next(m->run, m->src[i].in->r, &s);
	m->src[i].live = rc == TACH_OK;
	if (rc == TACH_OK) {
		m->src[i].s = *s; /* tc_next's filtered copy is one for all inputs */
		check_labels(m, m->src[i].in->r);
	}
	return rc < 0 ? tc_reader_failed(m->run, m->src[i].in->r) : 0;
}

static bool earlier(const struct merge *m, size_t a, size_t b)
{
	uint64_t ta = m->src[a].s.timestamp_us, tb = m->src[b].s.timestamp_us;
	return ta != tb ? ta < tb : a < b;
}

static void sift_down(struct merge *m, size_t k)
{
	for (;;) {
		size_t c = 2 * k + 1;
		if (c >= m->nheap)
			return;
		if (c + 1 < m->nheap && earlier(m, m->heap[c + 1], m->heap[c]))
			c++;
		if (!earlier(m, m->heap[c], m->heap[k]))
			return;
		size_t t = m->heap[c];
		m->heap[c] = m->heap[k];
		m->heap[k] = t;
		k = c;
	}
}

/* What an input's weights count, for messages: "samples" when they count samples (any time
 * type), else the weight type and its unit. */
static void weight_kind(const struct tach_meta *m, char *buf, size_t n)
{
	if (!m->weight_unit)
		snprintf(buf, n, "samples");
	else
		snprintf(buf, n, "%.60s in %.40s", m->weight_type < m->value_type_count ?
			 m->value_types[m->weight_type].type : "values", m->weight_unit);
}

/* Inputs whose weights count different things (samples, bytes allocated, contentions) make
 * no one profile: 1 with a message when input i's differ from the first's. */
static int unlike_weights(struct merge *m, size_t i)
{
	char a[128], b[128];
	weight_kind(tach_reader_meta(m->src[0].in->r), a, sizeof(a));
	weight_kind(tach_reader_meta(m->src[i].in->r), b, sizeof(b));
	if (!strcmp(a, b))
		return 0;
	fprintf(stderr, "tach-merge: %s: its weights are %s, but %s's are %s: profiles of "
		"different kinds cannot be merged (choose one type with --sample-index)\n",
		m->src[i].in->name, b, m->src[0].in->name, a);
	return 1;
}

/* The TACHSTAT block of the merge, when every input has one: the durations summed (the
 * time profiled, all inputs together) and the sample rate that gives the same number of
 * samples (the rates weighted by duration), so that merging merged files agrees with
 * merging the originals. Error and missed percentages are of attempts the block does not
 * count: they are dropped (flags clear), with a warning. One input keeps its block. */
static void merged_stats(struct merge *m, struct tach_meta *out)
{
	double dur = 0, samples = 0;
	bool rates = false;
	size_t have = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct tach_meta *im = tach_reader_meta(m->src[i].in->r);
		if (!im->has_stats)
			continue;
		have++;
		dur += im->stats_duration_s;
		samples += im->stats_sample_rate * im->stats_duration_s;
		rates |= im->stats_size != 32 &&
			 (im->stats_flags & (TACH_STATS_ERROR_RATE | TACH_STATS_MISSED));
	}
	if (m->n == 1 || !have)
		return;
	if (have < m->n) {
		tc_warn(m->run, "not every input has a statistics block (TACHSTAT): the output has "
			"none");
		out->has_stats = 0;
		return;
	}
	/* durations of 1e308 s add up to inf, and inf / inf is no rate */
	if (!isfinite(dur) || !isfinite(samples) || dur < 0 || samples < 0) {
		tc_warn(m->run, "the inputs' statistics blocks (TACHSTAT) add up to no finite "
			"duration or sample count: the output has none");
		out->has_stats = 0;
		return;
	}
	if (rates)
		tc_warn(m->run, "the inputs' error and missed-sample rates cannot be merged: the "
			"output's statistics block has duration and sample rate only");
	out->has_stats = 1;
	out->stats_size = 56;
	out->stats_version = 1;
	out->stats_flags = 0;
	out->stats_reserved = 0;
	out->stats_duration_s = dur;
	out->stats_sample_rate = dur > 0 ? samples / dur : 0;
	out->stats_error_rate = 0;
	out->stats_missed = 0;
}

/* The output header: the earliest start, the inputs' interval when they agree (else the
 * smallest, with a warning), the rest from the first input; 1 when the inputs' weights
 * differ in kind. */
static int merged_meta(struct merge *m, struct tach_meta *meta)
{
	struct tach_meta out = *tach_reader_meta(m->src[0].in->r);
	out.size = sizeof(out);
	uint64_t iv = 0;
	bool differ = false;
	for (size_t i = 0; i < m->n; i++) {
		const struct tach_meta *im = tach_reader_meta(m->src[i].in->r);
		if (unlike_weights(m, i))
			return 1;
		if (im->start_time_us < out.start_time_us)
			out.start_time_us = im->start_time_us;
		if (im->profiling_config != out.profiling_config)
			out.profiling_config = 0;
		if (!im->interval_us)
			continue;
		if (iv && im->interval_us != iv)
			differ = true;
		if (!iv || im->interval_us < iv)
			iv = im->interval_us;
	}
	if (differ)
		tc_warn(m->run, "the inputs' sample intervals differ: the output's is the smallest, "
			"%" PRIu64 " us", iv);
	out.interval_us = iv;
	merged_stats(m, &out);
	/* The order of one input's records does not describe the merge. */
	out.record_order = 0;
	*meta = out;
	return 0;
}

/* An exit status for a failed put: the writer's message, or the mapping's. */
static int put_failed(struct merge *m, int rc)
{
	if (tach_writer_error(m->w))
		return tc_writer_failed(m->run, m->w);
	fprintf(stderr, "tach-merge: %s\n", tach_strerror(rc));
	return 1;
}

/* --concat: each input's samples in turn, in their own order. */
static int write_concat(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++)
		while (m->src[i].live) {
			int rc = put_pending(m, i), status;
			if (rc)
				return put_failed(m, rc);
			if ((status = pull(m, i)))
				return status;
		}
	return 0;
}

/* Always the earliest pending sample; an input whose next sample goes back in time (its
 * threads interleave) simply waits for its turn again. */
static int write_merged(struct merge *m)
{
	for (size_t i = 0; i < m->n; i++)
		if (m->src[i].live)
			m->heap[m->nheap++] = i;
	for (size_t k = m->nheap / 2; k-- > 0;)
		sift_down(m, k);
	while (m->nheap) {
		size_t i = m->heap[0];
		int rc = put_pending(m, i), status;
		if (rc)
			return put_failed(m, rc);
		if ((status = pull(m, i)))
			return status;
		if (!m->src[i].live)
			m->heap[0] = m->heap[--m->nheap];
		sift_down(m, 0);
	}
	return 0;
}

/* Every input's first sample pending (text readers learn their header from it), and the
 * --tag-inputs frames in input order. */
static int prime(struct merge *m, struct tc_input *in)
{
	for (size_t i = 0; i < m->n; i++) {
		m->src[i].in = &in[i];
		int status = pull(m, i);
		if (status)
			return status;
		if (m->tag && make_tag(m, &m->src[i])) {
			fprintf(stderr, "tach-merge: out of memory\n");
			return 1;
		}
	}
	return 0;
}

static void free_merge(struct merge *m)
{
	for (size_t i = 0; m->src && i < m->n; i++) {
		free(m->src[i].strings.ids);
		free(m->src[i].maps.ids);
		free(m->src[i].frames.ids);
	}
	free(m->src);
	free(m->heap);
	free(m->frames);
	tach_dict_free(m->dict);
}

static int merge(struct tc_run *run, struct tc_input *in, size_t n, struct tach_writer *w,
		 int outfd)
{
	struct merge m = { .run = run, .w = w, .n = n, .tag = tc_opt_value(run, "tag-inputs") };
	m.dict = tach_dict_new();
	m.src = calloc(n, sizeof(*m.src));
	m.heap = calloc(n, sizeof(*m.heap));
	int status = 1;
	if (!m.dict || !m.src || !m.heap) {
		fprintf(stderr, "tach-merge: out of memory\n");
		goto out;
	}
	if ((status = prime(&m, in)))
		goto out;
	struct tach_meta meta;
	if ((status = merged_meta(&m, &meta)))
		goto out;
	if (tach_writer_open_fd(w, outfd) || tach_writer_set_meta(w, &meta)) {
		status = tc_writer_failed(run, w);
		goto out;
	}
	status = tc_opt_value(run, "concat") ? write_concat(&m) : write_merged(&m);
	if (!status && tach_writer_close(w))
		status = tc_writer_failed(run, w);
	if (!status)
		tc_report_counts(run);
out:
	free_merge(&m);
	return status;
}

static const struct tc_opt opts[] = {
	{ "concat", 0, NULL, NULL, NULL,
	  "write the inputs one after another, not interleaved by timestamp", NULL, false },
	{ "tag-inputs", 0, NULL, NULL, NULL,
	  "give each input's samples an outermost frame named after the input", NULL, false },
	{ 0 },
};

static const struct tc_many many = { 1, 0, "FILE...", merge, false };

const struct tc_prog tc_prog_tach_merge = {
	.name = "tach-merge",
	.summary = "Merge profiles of any readable format into one TACH profile.",
	.reader = "auto",
	.outputs = tc_tach_values_output,
	.opts = opts,
	.description = "Samples are interleaved by timestamp (ties in input order), or "
		       "written input after input with --concat. Thread ids are kept.",
	.many = &many,
};
