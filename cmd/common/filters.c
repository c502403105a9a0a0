/* The runner's sample filters: --thread, --status, --from-us and --to-us, applied to what
 * the reader hands out before the writer sees it. */
#include "run.h"

#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

bool tc_parse_u64(const char *s, uint64_t *out)
{
	char *end;
	if (!*s || *s == '-' || *s == '+' || *s == ' ')
		return false;
	/* Decimal, or hexadecimal with 0x as profilers print thread ids; never octal. */
	int base = (s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) ? 16 : 10;
	errno = 0;
	unsigned long long v = strtoull(s, &end, base);
	if (errno || *end)
		return false;
	*out = v;
	return true;
}

/* The states --status names by a status bit; "idle" (neither of the first two) is the one
 * more. */
static const struct { const char *name; uint8_t bit; } names[] = {
	{ "gil", TACH_STATUS_HAS_GIL }, { "cpu", TACH_STATUS_ON_CPU },
	{ "unknown", TACH_STATUS_UNKNOWN }, { "gil-wait", TACH_STATUS_GIL_REQUESTED },
	{ "exception", TACH_STATUS_HAS_EXCEPTION }, { "main", TACH_STATUS_MAIN_THREAD },
};

void tc_status_words(char *buf, size_t cap)
{
	size_t n = sizeof(names) / sizeof(names[0]);
	buf[0] = 0;
	for (size_t neg = 0; neg < 2; neg++)
		for (size_t i = 0; i <= n; i++) {
			size_t l = strlen(buf);
			snprintf(buf + l, cap - l, "%s%s%s", l ? " " : "", neg ? "no-" : "",
				 i < n ? names[i].name : "idle");
		}
}

int tc_parse_status(struct tc_run *run, const char *list)
{
	char buf[256];
	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool neg = !strncmp(tok, "no-", 3);
		const char *n = neg ? tok + 3 : tok;
		if (!strcmp(n, "idle")) {
			*(neg ? &run->status_no_idle : &run->status_idle) = true;
			continue;
		}
		size_t i;
		for (i = 0; i < sizeof(names) / sizeof(names[0]); i++)
			if (!strcmp(n, names[i].name))
				break;
		if (i == sizeof(names) / sizeof(names[0]))
			return -1;
		if (neg)
			run->status_none |= names[i].bit;
		else
			run->status_any |= names[i].bit;
	}
	run->has_status = true;
	return 0;
}

static bool keep(const struct tc_run *run, const struct tach_sample *s)
{
	if (run->nthreads) {
		size_t i;
		for (i = 0; i < run->nthreads; i++)
			if (run->threads[i] == s->thread_id)
				break;
		if (i == run->nthreads)
			return false;
	}
	if (run->has_status) {
		bool idle = !(s->status & (TACH_STATUS_HAS_GIL | TACH_STATUS_ON_CPU));
		if ((s->status & run->status_none) || (run->status_no_idle && idle))
			return false;
		if ((run->status_any || run->status_idle) &&
		    !((s->status & run->status_any) || (run->status_idle && idle)))
			return false;
	}
	return true;
}

/* The gap between the samples a record of weight N stands for, in ns: its own time over N
 * where samples carry one (a TACH run: one interval), else the interval. */
static uint64_t step_ns(const struct tc_run *run, const struct tach_sample *s)
{
	if (run->sample_time)
		return s->weight ? s->time_ns / s->weight : 0;
	return run->interval_us <= UINT64_MAX / 1000 ? run->interval_us * 1000 : UINT64_MAX;
}

/* The part of s (weight N: N samples, each one step after the one before, from its own
 * timestamp on) inside [from_us, to_us), into run->copy, its time cut alike; false when
 * none of it is. A step of 0 puts all N at the timestamp. */
static bool clip(struct tc_run *run, const struct tach_sample *s)
{
	uint64_t w = s->weight, step = step_ns(run, s), skip = 0;
	unsigned __int128 t = (unsigned __int128)s->timestamp_us * 1000;
	unsigned __int128 from = (unsigned __int128)run->from_us * 1000;
	unsigned __int128 to = (unsigned __int128)run->to_us * 1000;
	if (t < from) {
		if (!step)
			return false;
		unsigned __int128 k = (from - t + step - 1) / step;
		if (k >= w)
			return false;
		skip = (uint64_t)k;
		t += k * step;
		w -= skip;
	}
	if (t >= to)
		return false;
	if (w > 1 && step) {
		/* samples whose µs is before to_us: at t + k step < to, to being whole µs */
		unsigned __int128 fit = (to - t - 1) / step + 1;
		if (fit < w)
			w = (uint64_t)fit;
	}
	run->copy = *s;
	run->copy.timestamp_us = (uint64_t)(t / 1000);
	run->copy.weight = w;
	run->copy_cut = w != s->weight;
	if (run->copy_cut)
		run->copy.time_ns = (uint64_t)((unsigned __int128)s->time_ns * w / s->weight);
	/* Dropped samples break the same-stack chain the reader describes. */
	run->copy.same_outer = 0;
	return true;
}

int tc_next(struct tc_run *run, struct tach_reader *r, const struct tach_sample **out)
{
	for (;;) {
		const struct tach_sample *s;
		int rc = tach_reader_next(r, &s);
		if (rc)
			return rc;
		run->read_samples += s->weight;
		tc_progress_tick(&run->progress, run->read_samples);
		if (!run->filtering) {
			run->kept_samples += s->weight;
			*out = s;
			return TACH_OK;
		}
		/* text readers learn the interval as they read */
		run->interval_us = tach_reader_meta(r)->interval_us;
		run->sample_time = tach_reader_meta(r)->sample_time;
		if (keep(run, s) && clip(run, s)) {
			run->kept_samples += run->copy.weight;
			*out = &run->copy;
			return TACH_OK;
		}
	}
}

/* tc_next as the reading thread's source. */
int tc_next_kept(void *ctx, struct tach_reader *r, const struct tach_sample **out)
{
	return tc_next(ctx, r, out);
}
