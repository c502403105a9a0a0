/* Several profiles into one writer: tach-merge's, and any one-input program's given several
 * files (node writes one profile per worker).
 *
 * Every sample keeps its input's own time and values: a sample's time_ns where its reader
 * gives one, else its weight times its own input's interval, so profiles of different rates
 * merge to the sum of their times (not re-timed at one interval). Samples are interleaved
 * by timestamp, a k-way merge over a heap that holds one pending sample per input (ties go
 * to the input named first, so the output is the same bytes every time), or written input
 * after input (concat). Every input is read once, front to back. Each input's frames live
 * in its reader's dict; they are mapped into one output dict as they first appear, so
 * memory follows distinct frames and stacks, plus one pending sample per input, never the
 * number of samples. */
#include <inttypes.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "run.h"

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
	/* What a sample's time is: its own time_ns (the reader's meta.sample_time), else
	 * weight x iv_ns, the input's interval (the output's for an input with none). */
	bool own_time;
	uint64_t iv_ns;
	uint32_t nvalues;       /* its values are the output's types (this many); 0: none */
	const struct tach_sample_ext *ext; /* the pending sample's extras, the reader's */
	bool cut;               /* the pending sample is part of the one read (--from-us) */
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
	struct tach_label *labels; /* the sample being written's, in output string ids */
	size_t labels_cap;
	/* The output's value types, for inputs without any: a type's value from a sample's
	 * count (0) or its time in ns divided by this; vals holds one sample's. */
	uint64_t *derive;
	int64_t *vals;
	uint32_t nvals;
	struct tach_file_info file; /* the output meta's: the merged TACHSTAT block */
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

/* The pending sample's labels in output string ids, into m->labels. */
static int map_labels(struct merge *m, struct src *sr, const struct tach_sample_ext *e)
{
	if (e->label_count > m->labels_cap) {
		struct tach_label *p = realloc(m->labels, e->label_count * sizeof(*p));
		if (!p)
			return TACH_E_NOMEM;
		m->labels = p;
		m->labels_cap = e->label_count;
	}
	for (uint32_t k = 0; k < e->label_count; k++) {
		struct tach_label l = e->labels[k];
		int rc = map_string(m, sr, e->labels[k].key, &l.key);
		if (!rc && l.str != TACH_NO_STRING)
			rc = map_string(m, sr, e->labels[k].str, &l.str);
		if (!rc && l.unit != TACH_NO_STRING)
			rc = map_string(m, sr, e->labels[k].unit, &l.unit);
		if (rc)
			return rc;
		m->labels[k] = l;
	}
	return TACH_OK;
}

/* The time input i's pending sample stands for, into s->time_ns: its own, or its weight
 * times its input's interval (TACH_E_LIMIT when that overflows 64 bits). */
static int sample_time(struct src *sr, struct tach_sample *s)
{
	if (sr->own_time)
		return TACH_OK;
	return __builtin_mul_overflow(s->weight, sr->iv_ns, &s->time_ns) ? TACH_E_LIMIT : TACH_OK;
}

/* Writes input i's pending sample with its frames in output ids, its time and its values
 * (those of the output's types) and labels. */
static int put_pending(struct merge *m, size_t i)
{
	struct src *sr = &m->src[i];
	struct tach_sample s = sr->s;
	int rc = sample_time(sr, &s);
	if (rc)
		return rc;
	size_t depth = (size_t)s.depth + m->tag;
	if (depth > m->frames_cap) {
		uint32_t *p = realloc(m->frames, depth * sizeof(*p));
		if (!p)
			return TACH_E_NOMEM;
		m->frames = p;
		m->frames_cap = depth;
	}
	for (uint32_t k = 0; k < s.depth; k++)
		if ((rc = map_frame(m, sr, s.frames[k], &m->frames[k])))
			return rc;
	if (m->tag)
		m->frames[s.depth] = sr->tag;
	s.frames = m->frames;
	s.depth = (uint32_t)depth;
	/* The hint speaks of the previous sample of the thread in this input; in the output
	 * that may be another input's. */
	if (m->n > 1)
		s.same_outer = 0;
	struct tach_sample_ext ext = TACH_SAMPLE_EXT_INIT;
	if (m->derive && !sr->nvalues) {
		for (uint32_t k = 0; k < m->nvals; k++)
			m->vals[k] = (int64_t)(m->derive[k] ? s.time_ns / m->derive[k] : s.weight);
		ext.value_count = m->nvals;
		ext.values = m->vals;
	}
	if (sr->ext) {
		if (sr->nvalues && sr->ext->value_count == sr->nvalues && !sr->cut) {
			ext.value_count = sr->ext->value_count;
			ext.values = sr->ext->values;
		}
		if ((rc = map_labels(m, sr, sr->ext)))
			return rc;
		ext.label_count = sr->ext->label_count;
		ext.labels = m->labels;
	}
	return tach_writer_put_ext(m->w, m->dict, &s, &ext);
}

/* The next sample of input i into its pending slot, with its extras; 0 or the exit
 * status. */
static int pull(struct merge *m, size_t i)
{
	const struct tach_sample *s;
	struct src *sr = &m->src[i];
	int rc = tc_next(m->run, sr->in->r, &s);
	sr->live = rc == TACH_OK;
	if (rc == TACH_OK) {
		sr->s = *s; /* tc_next's filtered copy is one for all inputs */
		sr->cut = tc_sample_cut(m->run, s);
		sr->ext = tach_reader_sample_ext(sr->in->r);
	}
	return rc < 0 ? tc_reader_failed(m->run, sr->in->r) : 0;
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
	fprintf(stderr, "%s: %s: its weights are %s, but %s's are %s: profiles of "
		"different kinds cannot be merged (choose one type with --sample-index)\n",
		m->run->prog->name, m->src[i].in->name, b, m->src[0].in->name, a);
	return 1;
}

/* The TACHSTAT block of the merge, when every input has one: the durations summed (the
 * time profiled, all inputs together) and the sample rate that gives the same number of
 * samples (the rates weighted by duration), so that merging merged files agrees with
 * merging the originals. Error and missed percentages are of attempts the block does not
 * count: they are dropped (flags clear), with a warning. One input keeps its block. */
static void merged_stats(struct merge *m, struct tach_file_info *out)
{
	double dur = 0, samples = 0;
	bool rates = false;
	size_t have = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct tach_file_info *im = tach_reader_meta(m->src[i].in->r)->file;
		if (!im || !im->has_stats)
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

/* "type/unit, type/unit, ..." of a value-type table, for messages. */
static void types_text(const struct tach_meta *m, char *buf, size_t n)
{
	size_t at = 0;
	buf[0] = 0;
	for (uint32_t k = 0; k < m->value_type_count && at + 1 < n; k++) {
		int w = snprintf(buf + at, n - at, "%s%.40s/%.40s", k ? ", " : "",
				 m->value_types[k].type, m->value_types[k].unit);
		if (w < 0)
			break;
		at += (size_t)w;
	}
	if (at >= n - 1 && n > 4)
		memcpy(buf + n - 4, "...", 4);
}

static bool same_types(const struct tach_meta *a, const struct tach_meta *b)
{
	if (a->value_type_count != b->value_type_count)
		return false;
	for (uint32_t k = 0; k < a->value_type_count; k++)
		if (strcmp(a->value_types[k].type, b->value_types[k].type) ||
		    strcmp(a->value_types[k].unit, b->value_types[k].unit))
			return false;
	return true;
}

/* Nanoseconds in one of a time unit as pprof names them; 0: not a time. */
static uint64_t unit_ns(const char *u)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "nanoseconds", 1 }, { "ns", 1 }, { "microseconds", 1000 }, { "us", 1000 },
		{ "milliseconds", 1000000 }, { "ms", 1000000 }, { "seconds", 1000000000 },
		{ "s", 1000000000 },
	};
	for (size_t i = 0; u && i < sizeof(units) / sizeof(units[0]); i++)
		if (!strcmp(u, units[i].name))
			return units[i].ns;
	return 0;
}

/* How an input without value types gives the output's: a samples/count type its count, a
 * time type its time; any other (bytes, contentions) it has not, and the merge is refused
 * naming input i and the type. 0 or the exit status. */
static int derive_plan(struct merge *m, const struct tach_meta *ref, size_t i)
{
	if (!m->derive) {
		m->nvals = ref->value_type_count;
		m->derive = calloc(m->nvals, sizeof(*m->derive));
		m->vals = calloc(m->nvals, sizeof(*m->vals));
		if (!m->derive || !m->vals) {
			fprintf(stderr, "%s: out of memory\n", m->run->prog->name);
			return 1;
		}
		for (uint32_t k = 0; k < m->nvals; k++) {
			const struct tach_value_type *t = &ref->value_types[k];
			m->derive[k] = unit_ns(t->unit);
			if (!m->derive[k] && (strcmp(t->type, "samples") || strcmp(t->unit, "count")))
				m->derive[k] = UINT64_MAX; /* not derived */
		}
	}
	for (uint32_t k = 0; k < m->nvals; k++)
		if (m->derive[k] == UINT64_MAX) {
			fprintf(stderr, "%s: %s: it has no %.60s values (in %.40s), which the "
				"other inputs' samples carry: values of different types cannot be "
				"merged\n", m->run->prog->name, m->src[i].in->name, ref->value_types[k].type,
				ref->value_types[k].unit);
			return 1;
		}
	return 0;
}

/* The output's value types: those of the first input that has a table, which every other
 * input with one must share (values of different types or units make no one profile); an
 * input without (TACH, folded stacks) gives its samples' counts and times as the values of
 * those types (see derive_plan). 1 with a message naming the first input that differs. */
static int merged_types(struct merge *m, struct tach_meta *out)
{
	const struct tach_meta *ref = NULL;
	size_t r = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct tach_meta *im = tach_reader_meta(m->src[i].in->r);
		if (!im->value_type_count || !im->value_types)
			continue;
		if (!ref) {
			ref = im;
			r = i;
		} else if (!same_types(ref, im)) {
			char a[256], b[256];
			types_text(ref, a, sizeof(a));
			types_text(im, b, sizeof(b));
			fprintf(stderr, "%s: %s: its sample types are %s, but %s's are %s: "
				"values of different types or units cannot be merged (choose one "
				"type with --sample-index and the tach output)\n",
				m->run->prog->name, m->src[i].in->name, b, m->src[r].in->name, a);
			return 1;
		}
		m->src[i].nvalues = im->value_type_count;
	}
	for (size_t i = 0; ref && i < m->n; i++)
		if (!m->src[i].nvalues && derive_plan(m, ref, i))
			return 1;
	if (ref) {
		out->value_type_count = ref->value_type_count;
		out->value_types = ref->value_types;
		out->weight_type = ref->weight_type;
		out->default_type = ref->default_type;
		out->period_type = ref->period_type;
		out->period_unit = ref->period_unit;
		out->period = ref->period;
	}
	return 0;
}

/* Each input's time: a sample's own time_ns where the reader gives one, else its weight
 * times the input's interval; an input with neither (folded counts of no known interval)
 * counts one output interval a sample, with a warning. The output's samples carry time
 * unless no input has any. */
static void merged_time(struct merge *m, struct tach_meta *out)
{
	size_t timed = 0;
	for (size_t i = 0; i < m->n; i++) {
		const struct tach_meta *im = tach_reader_meta(m->src[i].in->r);
		struct src *sr = &m->src[i];
		sr->own_time = im->sample_time;
		sr->iv_ns = (im->interval_us ? im->interval_us : out->interval_us) * 1000;
		if (im->interval_us > UINT64_MAX / 1000 || out->interval_us > UINT64_MAX / 1000)
			sr->iv_ns = UINT64_MAX; /* any weight then overflows: refused at put */
		timed += im->sample_time || im->interval_us;
	}
	out->sample_time = timed > 0;
	for (size_t i = 0; timed && timed < m->n && i < m->n; i++) {
		const struct tach_meta *im = tach_reader_meta(m->src[i].in->r);
		if (!im->sample_time && !im->interval_us)
			tc_warn(m->run, "%s: its samples carry no time (counts of an unknown "
				"interval): each counts as one sample of the output's interval, "
				"%" PRIu64 " us", m->src[i].in->name, out->interval_us);
	}
}

/* The output header: the earliest start, the inputs' interval when they agree (else the
 * smallest, with a warning: each sample still keeps its own time), their common value
 * types, the rest from the first input; 1 when the inputs' weights or values differ in
 * kind. */
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
			"%" PRIu64 " us (each sample keeps the time it stands for where the output "
			"has a place for it)", iv);
	out.interval_us = iv;
	out.value_type_count = 0;
	out.value_types = NULL;
	if (merged_types(m, &out))
		return 1;
	merged_time(m, &out);
	/* What the first input's file said (its TACHSTAT block), for the merge's */
	const struct tach_file_info none = TACH_FILE_INFO_INIT;
	m->file = out.file ? *out.file : none;
	m->file.size = sizeof(m->file);
	merged_stats(m, &m->file);
	/* The order of one input's records does not describe the merge. */
	m->file.record_order = 0;
	out.file = &m->file;
	*meta = out;
	return 0;
}

/* An exit status for a failed put: the writer's message, or the mapping's. */
static int put_failed(struct merge *m, int rc)
{
	if (tach_writer_error(m->w))
		return tc_writer_failed(m->run, m->w);
	if (rc == TACH_E_LIMIT)
		fprintf(stderr, "%s: a sample's time (its weight times its input's "
			"interval) does not fit in 64 bits of nanoseconds\n", m->run->prog->name);
	else
		fprintf(stderr, "%s: %s\n", m->run->prog->name, tach_strerror(rc));
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
			fprintf(stderr, "%s: out of memory\n", m->run->prog->name);
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
	free(m->labels);
	free(m->derive);
	free(m->vals);
	tach_dict_free(m->dict);
}

int tc_merge(struct tc_run *run, struct tc_input *in, size_t n, struct tach_writer *w, int outfd,
	     bool concat, bool tag)
{
	struct merge m = { .run = run, .w = w, .n = n, .tag = tag };
	m.dict = tach_dict_new();
	m.src = calloc(n, sizeof(*m.src));
	m.heap = calloc(n, sizeof(*m.heap));
	int status = 1;
	if (!m.dict || !m.src || !m.heap) {
		fprintf(stderr, "%s: out of memory\n", run->prog->name);
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
	status = concat ? write_concat(&m) : write_merged(&m);
	if (!status && tach_writer_close(w))
		status = tc_writer_failed(run, w);
	if (!status)
		tc_report_counts(run);
out:
	free_merge(&m);
	return status;
}

