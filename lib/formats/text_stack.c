/* Stacks read a line per frame: text_stack.h. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/io.h"
#include "model/dict.h"
#include "core/handles.h"
#include "formats/text_stack.h"

int tachi_tstack_intern(struct tach_reader *r, const char *s, size_t n, uint32_t *id)
{
	struct tach_frame f = { 0, 0, TACH_NO_LINE, TACH_NO_LINE, -1, -1, TACH_NO_OPCODE };
	if (tach_dict_intern_string(&r->dict, "~", 1, &f.file) ||
	    tach_dict_intern_string(&r->dict, s, n, &f.func) ||
	    tach_dict_intern_frame(&r->dict, &f, id))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

int tachi_tstack_push_id(struct tach_reader *r, struct tachi_tstack *t, uint32_t id)
{
	if (t->depth >= r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "stack deeper than the limit of %u frames (see --max-depth)",
			     r->lim.max_depth);
	if (!TACHI_RESERVE(t->frames, t->cap, (size_t)t->depth + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	t->frames[t->depth++] = id;
	return TACH_OK;
}

int tachi_tstack_push(struct tach_reader *r, struct tachi_tstack *t, const char *s, size_t n)
{
	uint32_t id;
	if (t->depth >= r->lim.max_depth)
		return tachi_tstack_push_id(r, t, 0);
	int rc = tachi_tstack_intern(r, s, n, &id);
	return rc ? rc : tachi_tstack_push_id(r, t, id);
}

int tachi_tstack_sample(struct tach_reader *r, struct tachi_tstack *t, uint64_t count)
{
	if (count > r->lim.max_samples - t->total)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_LINE, r->in.line,
			     "the counts add up to more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	t->total += count;
	struct tach_sample *smp = &r->sample;
	smp->thread_id = 0;
	smp->interp_id = 0;
	/* Aggregations keep no time: every record is at 0, none is put on a guessed grid. */
	smp->timestamp_us = 0;
	smp->time_ns = 0;
	smp->status = TACH_STATUS_UNKNOWN;
	smp->weight = count;
	smp->depth = t->depth;
	smp->same_outer = 0;
	smp->frames = t->frames;
	t->depth = 0;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples += count;
	return TACH_OK;
}

bool tachi_tstack_count(const char *s, size_t n, uint64_t *v, bool *big)
{
	size_t i = n && s[0] == '+';
	*v = 0;
	*big = false;
	if (i == n)
		return false;
	for (; i < n; i++) {
		if (s[i] < '0' || s[i] > '9')
			return false;
		unsigned d = (unsigned)(s[i] - '0');
		if (*v > UINT64_MAX / 10 || (*v == UINT64_MAX / 10 && d > UINT64_MAX % 10))
			*big = true;
		else
			*v = *v * 10 + d;
	}
	return !*big;
}

void tachi_tstack_free(struct tachi_tstack *t)
{
	free(t->frames);
}
