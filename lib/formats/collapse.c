/* Collapsing stacks: per (thread, stack) aggregation over (file, func, line) keys, and the
 * collapsed writer's frame labels, which the collapsed, flame graph, pstats, pprof and
 * callgrind writers share (collapse.h). */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/buf.h"
#include "base/utf8.h"
#include "model/dict.h"
#include "model/linekeys.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "formats/collapse.h"

/* The (thread, stack) entry of s among a's pairs. The collapsed and flame graph writers
 * share it: both aggregate per thread and stack, labels merged on (file, func, line). */
int tachi_collapse_entry(struct tach_writer *w, struct tachi_collapse *a,
			 const struct tach_dict *d, const struct tach_sample *s, uint32_t *entry)
{
	/* the same dict for every sample: tach_writer_put checks it */
	if (TACHI_UNLIKELY(!a->src)) {
		a->src = d;
	}
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&a->threads, s->thread_id, s->interp_id,
						      &created);
	if (!c)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	/* The same stack as this thread's previous sample: nothing to look up. */
	if (s->same_outer >= s->depth && s->depth == c->depth && c->leaf != TACHI_NOMEM_NODE) {
		*entry = c->entry;
		return TACH_OK;
	}
	if (TACHI_UNLIKELY(a->lk.nmapped < d->frame_count)) {
		int rc = tachi_linekeys_update(&w->err, &a->lk, d);
		if (rc)
			return rc;
	}
	a->trie.hint = w->ahead_hash;
	/* Keyed by thread id as CPython's collector is (interpreters share a line). */
	uint32_t leaf = tachi_stack_intern_ctx(&a->trie, c, s, a->lk.fmap,
					       a->no_threads ? 0 : s->thread_id);
	if (leaf == TACHI_NOMEM_NODE)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	*entry = c->entry;
	return TACH_OK;
}

uint32_t tachi_collapse_fetch(struct tachi_collapse *a, struct tachi_ahead_item *it,
			      unsigned stage)
{
	return tachi_stacktab_ahead(&a->trie, it, true, a->no_threads ? 0 : it->s.thread_id,
				    stage);
}

void tachi_collapse_free(struct tachi_collapse *a)
{
	tachi_linekeys_free(&a->lk);
	tachi_stacktab_free(&a->trie);
	tachi_threads_free(&a->threads);
}

/* Grows a zeroed per-entry array to hold index entry. */
bool tachi_counts_reserve(uint64_t **v, size_t *cap, size_t *n, uint32_t entry)
{
	if (entry < *n)
		return true;
	size_t old = *cap;
	if (!TACHI_RESERVE(*v, *cap, (size_t)entry + 1))
		return false;
	memset(*v + old, 0, (*cap - old) * sizeof(**v));
	*n = (size_t)entry + 1;
	return true;
}

int tachi_stackcount_put(struct tach_writer *w, struct tachi_stackcount *sc,
			 const struct tach_dict *d, const struct tach_sample *s)
{
	if (TACHI_UNLIKELY(!s->depth))
		return TACH_OK;
	uint32_t e = 0;
	int rc = tachi_collapse_entry(w, &sc->agg, d, s, &e);
	if (rc)
		return rc;
	if (TACHI_UNLIKELY(e >= sc->ncounts) &&
	    !tachi_counts_reserve(&sc->counts, &sc->counts_cap, &sc->ncounts, e))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	sc->counts[e] += s->weight;
	if (sc->timed) {
		if (TACHI_UNLIKELY(e >= sc->ntimes) &&
		    !tachi_counts_reserve(&sc->times, &sc->times_cap, &sc->ntimes, e))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		if (__builtin_add_overflow(sc->times[e], s->time_ns, &sc->times[e]))
			sc->times[e] = UINT64_MAX;
	}
	return TACH_OK;
}

void tachi_stackcount_fetch(struct tachi_stackcount *sc, struct tachi_ahead_item *it,
			    unsigned stage)
{
	uint32_t e1 = tachi_collapse_fetch(&sc->agg, it, stage);
	if (e1 && e1 - 1 < sc->ncounts)
		__builtin_prefetch(&sc->counts[e1 - 1]);
}

void tachi_stackcount_free(struct tachi_stackcount *sc)
{
	tachi_collapse_free(&sc->agg);
	free(sc->counts);
	free(sc->times);
	memset(sc, 0, sizeof(*sc));
}

int tachi_value_option(struct tach_writer *w, struct tachi_valuesel *v, const char *value)
{
	free(v->name);
	v->name = NULL;
	if (!*value)
		return WFAIL(w, TACH_E_USAGE, "value must be count, time or a sample type's name");
	if (!strcmp(value, "count") || !strcmp(value, "samples"))
		return TACH_OK;
	if (!(v->name = strdup(value)))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	return TACH_OK;
}

int tachi_value_begin(struct tach_writer *w, struct tachi_valuesel *v)
{
	const struct tach_meta *m = &w->meta;
	v->kind = TACHI_VALUE_COUNT;
	if (!v->name)
		return TACH_OK;
	if (!strcmp(v->name, "time")) {
		if (m->sample_time && !m->weight_unit) {
			v->kind = TACHI_VALUE_TIME;
			return TACH_OK;
		}
		tachi_warn(&w->warn, TACH_POS_NONE, 0, "value time: the samples carry no time (no "
			   "interval, no time of their own): the counts are shown");
		return TACH_OK;
	}
	for (uint32_t i = 0; m->value_types && i < m->value_type_count; i++)
		if (m->value_types[i].type && !strcmp(m->value_types[i].type, v->name)) {
			v->kind = TACHI_VALUE_TYPE;
			v->type = i;
			return TACH_OK;
		}
	if (!m->value_type_count)
		return WFAIL(w, TACH_E_USAGE, "value %.60s: the input has no sample types (only "
			     "count and time)", v->name);
	return WFAIL(w, TACH_E_USAGE, "value %.60s: the input has no such sample type (it has "
		     "%.40s, ...)", v->name, m->value_types[0].type ? m->value_types[0].type : "");
}

uint64_t tachi_value_of(const struct tach_writer *w, const struct tachi_valuesel *v,
			const struct tach_sample *s, const struct tach_sample_ext *ext)
{
	if (TACHI_LIKELY(v->kind == TACHI_VALUE_COUNT))
		return s->weight;
	if (v->kind == TACHI_VALUE_TIME)
		return s->time_ns;
	if (ext && ext->value_count == w->meta.value_type_count)
		return ext->values[v->type] > 0 ? (uint64_t)ext->values[v->type] : 0;
	return v->type == w->meta.weight_type ? s->weight : 0;
}

void tachi_value_free(struct tachi_valuesel *v)
{
	free(v->name);
	v->name = NULL;
}

/* Appends s as valid UTF-8 (invalid bytes become U+FFFD, as CPython's reader decodes
 * them) with the bytes that would break a folded line replaced. */
static bool add_label_text(struct tach_writer *w, struct tachi_labeler *st, struct tachi_buf *b,
			   const char *s, size_t n)
{
	size_t i = 0;
	while (i < n) {
		unsigned char c = (unsigned char)s[i];
		if (c < 0x80) {
			char out = (char)c;
			if (c == ';') {
				out = ':';
				if (!st->warned_semi) {
					st->warned_semi = true;
					tachi_warn(&w->warn, TACH_POS_NONE, 0,
						   "a frame name contains ';': written as ':'");
				}
			} else if (c < 0x20 || c == 0x7f) {
				out = '?';
				if (!st->warned_ctrl) {
					st->warned_ctrl = true;
					tachi_warn(&w->warn, TACH_POS_NONE, 0,
						   "a frame name contains control characters: written as '?'");
				}
			}
			if (!tachi_buf_add(b, &out, 1))
				return false;
			i++;
			continue;
		}
		size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		if (len > 1 && i + len <= n && tachi_utf8_valid((const uint8_t *)s + i, len)) {
			if (!tachi_buf_add(b, s + i, len))
				return false;
			i += len;
			continue;
		}
		if (!tachi_buf_add(b, "\xEF\xBF\xBD", 3))
			return false;
		i++;
	}
	return true;
}

static bool add_num(struct tachi_buf *b, int64_t v)
{
	char t[24];
	return tachi_buf_add(b, t, tachi_fmt_i64(t, v));
}

/* k's label as the collapsed writer prints it, appended to b. */
/* Whether s[0..n) is an address as a frame without a symbol is named ("0x4011d6"). */
static bool is_address(const char *s, size_t n)
{
	if (n < 3 || s[0] != '0' || s[1] != 'x')
		return false;
	for (size_t i = 2; i < n; i++)
		if (!((s[i] >= '0' && s[i] <= '9') || (s[i] >= 'a' && s[i] <= 'f')))
			return false;
	return true;
}

bool tachi_collapsed_label(struct tach_writer *w, struct tachi_labeler *st, struct tachi_buf *b,
			   const struct tachi_linekeys *lk, const struct tachi_linekey *k)
{
	size_t fl, nl;
	const char *file = tachi_str(&lk->names, k->file, &fl);
	const char *func = tachi_str(&lk->names, k->func, &nl);
	/* What differs from one run of a program to the next (run-ids=no): the process id a
	 * perf root carries as its line, and an unsymbolized frame's address (ASLR moves it);
	 * two runs' profiles then share their stacks, as tach-diff compares them. */
	if (st->no_run_ids) {
		if (fl == 6 && !memcmp(file, "[comm]", 6) && k->line != 0) {
			struct tachi_linekey c = *k;
			c.line = 0;
			return tachi_collapsed_label(w, st, b, lk, &c);
		}
		if (is_address(func, nl)) {
			func = "0x...";
			nl = 5;
		}
	}
	if (fl == 1 && file[0] == '~' && k->line == 0)
		return add_label_text(w, st, b, func, nl);
	if (!st->full_paths) {
		const char *slash = NULL;
		for (size_t i = fl; i > 0; i--)
			if (file[i - 1] == '/') {
				slash = file + i - 1;
				break;
			}
		if (slash) {
			fl -= (size_t)(slash + 1 - file);
			file = slash + 1;
		}
	}
	if (st->pyspy)
		return add_label_text(w, st, b, func, nl) && tachi_buf_add(b, " (", 2) &&
		       add_label_text(w, st, b, file, fl) && tachi_buf_add(b, ":", 1) &&
		       add_num(b, k->line) && tachi_buf_add(b, ")", 1);
	return add_label_text(w, st, b, file, fl) && tachi_buf_add(b, ":", 1) &&
	       add_label_text(w, st, b, func, nl) && tachi_buf_add(b, ":", 1) && add_num(b, k->line);
}
