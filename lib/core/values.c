/* What samples are worth beyond their weight: the value types, period and duration a
 * profile names (struct tach_meta's last block), and each sample's own values and labels
 * (struct tach_sample_ext). pprof carries them; every other format keeps only the weight
 * (writers without a place for labels drop them with one warning: handles.c's
 * tach_writer_put_ext), and the writer keeps its own copy of the meta's strings, which the
 * caller lends for set_meta only. */
#include <stdlib.h>

#include <string.h>

#include "base/base.h"
#include "model/ahead.h"
#include "model/dict.h"
#include "core/format.h"
#include "core/handles.h"
#include "core/values.h"

uint64_t tachi_time_unit_ns(const char *s, size_t n)
{
	static const struct { const char *name; uint64_t ns; } units[] = {
		{ "nanoseconds", 1 }, { "ns", 1 }, { "microseconds", 1000 }, { "us", 1000 },
		{ "milliseconds", 1000000 }, { "ms", 1000000 }, { "seconds", 1000000000 },
		{ "s", 1000000000 },
	};
	for (size_t i = 0; s && i < sizeof(units) / sizeof(units[0]); i++)
		if (strlen(units[i].name) == n && !memcmp(s, units[i].name, n))
			return units[i].ns;
	return 0;
}

const char *tachi_unit_name(const char *u)
{
	static const char *const names[] = { "bytes", "nanoseconds", "microseconds",
					     "milliseconds", "seconds" };
	uint64_t ns = tachi_time_unit_ns(u, u ? strlen(u) : 0);
	if (u && !strcmp(u, "bytes"))
		return names[0];
	return ns == 1 ? names[1] : ns == 1000 ? names[2] : ns == 1000000 ? names[3] :
	       ns == 1000000000 ? names[4] : NULL;
}

static size_t slen(const char *s)
{
	return s ? strlen(s) + 1 : 0;
}

/* s copied to *at (NULL stays NULL). */
static const char *put_str(char **at, const char *s)
{
	if (!s)
		return NULL;
	size_t n = strlen(s) + 1;
	char *d = *at;
	memcpy(d, s, n);
	*at += n;
	return d;
}

int tachi_writer_keep_values(struct tach_writer *w, const struct tach_meta *m, size_t n)
{
	struct tach_meta *wm = &w->meta;
	if (n < offsetof(struct tach_meta, start_time_ns) + sizeof(m->start_time_ns)) {
		/* an older caller's struct: none of the block is its */
		wm->value_type_count = 0;
		wm->value_types = NULL;
		wm->weight_unit = wm->period_type = wm->period_unit = NULL;
		return TACH_OK;
	}
	uint32_t k = m->value_types ? m->value_type_count : 0;
	size_t bytes = (size_t)k * sizeof(struct tach_value_type);
	for (uint32_t i = 0; i < k; i++)
		bytes += slen(m->value_types[i].type) + slen(m->value_types[i].unit);
	bytes += slen(m->weight_unit) + slen(m->period_type) + slen(m->period_unit);
	free(w->values_own);
	if (!(w->values_own = malloc(bytes ? bytes : 1)))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	struct tach_value_type *vt = w->values_own;
	char *at = (char *)(vt + k);
	for (uint32_t i = 0; i < k; i++) {
		vt[i].type = put_str(&at, m->value_types[i].type);
		vt[i].unit = put_str(&at, m->value_types[i].unit);
	}
	wm->value_type_count = k;
	wm->value_types = k ? vt : NULL;
	if (wm->weight_type >= k)
		wm->weight_type = 0;
	if (wm->default_type > k)
		wm->default_type = 0;
	wm->weight_unit = put_str(&at, m->weight_unit);
	wm->period_type = put_str(&at, m->period_type);
	wm->period_unit = put_str(&at, m->period_unit);
	return TACH_OK;
}

int tachi_weights_not_samples(struct tach_writer *w)
{
	const struct tach_meta *m = &w->meta;
	const char *type = m->weight_type < m->value_type_count ?
			   m->value_types[m->weight_type].type : "a value";
	return WFAIL(w, TACH_E_UNSUPPORTED, "the weights are %.60s in %.40s, not samples: the %s "
		     "format stores samples, and each unit would become one; choose a time type "
		     "(--sample-index) or write them so anyway (--counts-as-samples)", type,
		     m->weight_unit, w->fmt->name);
}

void tachi_values_dropped(struct tach_writer *w)
{
	const struct tach_meta *m = &w->meta;
	for (uint32_t i = 0; m->value_types && i < m->value_type_count; i++) {
		const char *t = m->value_types[i].type, *u = m->value_types[i].unit;
		if (i == m->weight_type || (t && !strcmp(t, "samples")) ||
		    (u && tachi_time_unit_ns(u, strlen(u))))
			continue;
		tachi_warn(&w->warn, TACH_POS_NONE, 0, "the %s format keeps samples only: the "
			   "input's other values are dropped (such as %.40s in %.20s)", w->fmt->name,
			   t ? t : "", u ? u : "");
		return;
	}
}

/* CPython's profiling.sampling numbers its modes 0..4 (constants.py: PROFILING_MODE_WALL,
 * _CPU, _GIL, _ALL, _EXCEPTION) and stores mode + 1, so that 0 stays "unknown". Only the low
 * byte is read as the mode: the capture-feature bits lie above it. */
TACH_API const char *tach_profiling_mode(uint32_t profiling_config)
{
	static const char *const names[] = { "wall", "cpu", "gil", "all", "exception" };
	uint32_t m = profiling_config & 0xff;
	return m >= 1 && m <= 5 ? names[m - 1] : NULL;
}
