/* GHC's cost-centre tree as samples (ghc_tree.h). */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/handles.h"
#include "formats/ghc_tree.h"

void tachi_ghc_open(struct tach_reader *r, struct tachi_ghc *g, uint64_t interval_us)
{
	struct tach_meta *m = &r->meta;
	g->interval_us = interval_us;
	g->vt[0] = (struct tach_value_type){ "cpu", "nanoseconds" };
	g->vt[1] = (struct tach_value_type){ "alloc", "bytes" };
	m->value_type_count = 2;
	m->value_types = g->vt;
	m->weight_type = 0;
	m->default_type = 1;
	m->interval_us = interval_us;
	m->sample_time = interval_us != 0;
	m->start_time_us = 0;
	g->ext = (struct tach_sample_ext){ .size = sizeof(g->ext), .value_count = 2,
					   .values = g->vals };
	tachi_warn(&r->warn, TACH_POS_NONE, 0, "a GHC profile holds each cost-centre stack's "
		   "totals, not samples: when and in what order they were taken is not known "
		   "(every sample is at 0), and a stack is the cost centres entered, not the calls");
}

/* The file and first line of GHC's span src (*fn 0: none). */
static void span(const char *src, size_t sn, size_t *fn, int32_t *line)
{
	*fn = 0;
	*line = -1;
	if (!sn || src[0] == '<')
		return;
	for (size_t i = 0; i + 1 < sn; i++) {
		if (src[i] != ':')
			continue;
		size_t k = i + 1 + (src[i + 1] == '(');
		if (k >= sn || src[k] < '0' || src[k] > '9')
			continue;
		uint64_t v = 0;
		while (k < sn && src[k] >= '0' && src[k] <= '9' && v <= INT32_MAX)
			v = v * 10 + (uint64_t)(src[k++] - '0');
		*fn = i;
		*line = v <= INT32_MAX ? (int32_t)v : -1;
		return;
	}
	*fn = sn;
}

int tachi_ghc_frame(struct tach_reader *r, const char *label, size_t ln, const char *module,
		    size_t mn, const char *src, size_t sn, uint32_t *id)
{
	struct tach_frame fr = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	size_t fn;
	span(src, sn, &fn, &fr.line);
	fr.end_line = fr.line;
	char *name = malloc(mn + ln + 2);
	if (!name)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	memcpy(name, module, mn);
	name[mn] = '.';
	memcpy(name + mn + 1, label, ln);
	int bad = tach_dict_intern_string(&r->dict, name, mn + ln + 1, &fr.func) ||
		  tach_dict_intern_string(&r->dict, fn ? src : "~", fn ? fn : 1, &fr.file) ||
		  tach_dict_intern_frame(&r->dict, &fr, id);
	free(name);
	return bad ? RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory") : TACH_OK;
}

int tachi_ghc_push(struct tach_reader *r, struct tachi_ghc *g, uint32_t depth, uint32_t frame,
		   int pos_kind, uint64_t pos)
{
	if (depth > g->depth)
		depth = g->depth;
	if (depth >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, pos_kind, pos, "a stack of %llu frames is deeper "
			     "than the limit of %u", (unsigned long long)depth + 1, r->lim.max_depth);
	if (!TACHI_RESERVE(g->stack, g->stack_cap, (size_t)depth + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	g->stack[depth] = frame;
	g->depth = depth + 1;
	return TACH_OK;
}

int tachi_ghc_sample(struct tach_reader *r, struct tachi_ghc *g, uint64_t ticks, uint64_t bytes,
		     int pos_kind, uint64_t pos, bool *given)
{
	struct tach_sample *s = &r->sample;
	uint64_t ns = 0;
	*given = ticks || bytes;
	if (!*given)
		return TACH_OK;
	if (ticks > r->lim.max_samples - g->total)
		return RFAIL(r, TACH_E_LIMIT, pos_kind, pos, "the ticks add up to more than %llu "
			     "samples (see --max-samples)", (unsigned long long)r->lim.max_samples);
	if (__builtin_mul_overflow(ticks, g->interval_us * 1000, &ns) || ns > INT64_MAX ||
	    bytes > INT64_MAX)
		return RFAIL(r, TACH_E_FORMAT, pos_kind, pos, "ticks or bytes past 63 bits");
	g->total += ticks;
	if (!TACHI_RESERVE(g->out, g->out_cap, g->depth))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	for (uint32_t i = 0; i < g->depth; i++)
		g->out[g->depth - 1 - i] = g->stack[i];
	/* a stack with allocations and no tick is a sample of values only (weight 0), which
	 * the writers that keep values take (pprof, callgrind, --value alloc) */
	s->weight = ticks;
	s->time_ns = ns;
	s->timestamp_us = 0;
	s->thread_id = 0;
	s->interp_id = 0;
	s->status = TACH_STATUS_UNKNOWN;
	s->depth = g->depth;
	s->same_outer = 0;
	s->frames = g->out;
	g->vals[0] = (int64_t)ns;
	g->vals[1] = (int64_t)bytes;
	r->ext = &g->ext;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += ticks;
	return TACH_OK;
}

void tachi_ghc_free(struct tachi_ghc *g)
{
	free(g->stack);
	free(g->out);
}
