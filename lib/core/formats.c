/* The format table: the only place that lists formats. Its order is detection's priority
 * (detect.c): formats with a magic number or a fixed header first, folded stacks, which
 * take almost any text, last. */
#include <string.h>

#include "core/formats.h"
#include "core/format.h"
#include "core/detect.h"

static const struct tachi_format *const formats[] = {
	&tachi_fmt_tach,
	&tachi_fmt_gperf,
	&tachi_fmt_otlp,
	&tachi_fmt_pprof,
	&tachi_fmt_jfr,
	&tachi_fmt_sampler,
	&tachi_fmt_speedscope,
	&tachi_fmt_heapprofile,
	&tachi_fmt_v8,
	&tachi_fmt_v8log,
	&tachi_fmt_chrome,
	&tachi_fmt_spans,
	&tachi_fmt_stackprof,
	&tachi_fmt_ghcpj,
	&tachi_fmt_safari,
	&tachi_fmt_samples,
	&tachi_fmt_gecko,
	&tachi_fmt_flamegraph,
	&tachi_fmt_pstats,
	&tachi_fmt_callgrind,
	&tachi_fmt_dtrace,
	&tachi_fmt_bpftrace,
	&tachi_fmt_ghcprof,
	&tachi_fmt_macsample,
	&tachi_fmt_instruments,
	&tachi_fmt_xctrace,
	&tachi_fmt_vtune,
	&tachi_fmt_vsprof,
	&tachi_fmt_pmcstat,
	&tachi_fmt_papyrus,
	&tachi_fmt_pproftext,
	&tachi_fmt_perfreport,
	&tachi_fmt_perfdata,
	&tachi_fmt_perf,
	&tachi_fmt_collapsed,
};

const struct tachi_format *tachi_format_at(size_t i)
{
	return i < sizeof(formats) / sizeof(formats[0]) ? formats[i] : NULL;
}

const struct tachi_format *tachi_format_find(const char *name)
{
	if (!name)
		return NULL;
	if (!strcmp(name, "auto"))
		return &tachi_fmt_auto;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i]->name, name))
			return formats[i];
	return NULL;
}

/* The index-th format that is read or written (a refused one is neither). */
TACH_API const char *tach_format_name(size_t index, int *can_read, int *can_write)
{
	const struct tachi_format *f = NULL;
	for (size_t i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if ((formats[i]->reader || formats[i]->writer) && !index--) {
			f = formats[i];
			break;
		}
	if (!f)
		return NULL;
	if (can_read)
		*can_read = f->reader != NULL;
	if (can_write)
		*can_write = f->writer != NULL;
	return f->name;
}
