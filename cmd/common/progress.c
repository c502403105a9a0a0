/* The progress line: samples read, of the total when the input declares it, and the rate.
 * Updated at most four times a second, after the first second unless forced; written with
 * a carriage return and erased at the end, so that nothing is left in a terminal. Never
 * in a pipe or a log unless asked: the automatic mode needs standard error to be a
 * terminal. */
#include <stdio.h>
#include <time.h>
#include <unistd.h>

#include "progress.h"

#define CHECK_EVERY 4096u
#define FIRST_NS 1000000000ull
#define EVERY_NS 250000000ull

static uint64_t now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000ull + (uint64_t)ts.tv_nsec;
}

void tc_progress_start(struct tc_progress *p, const char *prog, const char *input,
		       uint64_t total)
{
	p->prog = prog;
	p->input = input;
	p->total = total;
	p->countdown = CHECK_EVERY;
	p->shown = false;
	if (p->mode == TC_PROGRESS_AUTO && !isatty(STDERR_FILENO))
		p->mode = TC_PROGRESS_OFF;
	p->start_ns = now_ns();
	p->next_ns = p->start_ns + (p->mode == TC_PROGRESS_ON ? 0 : FIRST_NS);
}

/* "1234567" as "1.23 M": the line's width stays put while the numbers grow. */
static void scaled(char *buf, size_t cap, double v)
{
	static const char *const unit[] = { "", " k", " M", " G", " T" };
	int u = 0;
	while (v >= 1000 && u < 4) {
		v /= 1000;
		u++;
	}
	snprintf(buf, cap, u ? "%.2f%s" : "%.0f%s", v, unit[u]);
}

static void show(struct tc_progress *p, uint64_t samples, uint64_t t)
{
	char n[32], rate[32], of[64] = "";
	double secs = (double)(t - p->start_ns) / 1e9;
	scaled(n, sizeof(n), (double)samples);
	scaled(rate, sizeof(rate), secs > 0 ? (double)samples / secs : 0);
	if (p->total) {
		char tot[32];
		scaled(tot, sizeof(tot), (double)p->total);
		snprintf(of, sizeof(of), " of %s (%.0f%%)", tot,
			 samples >= p->total ? 100.0 : 100.0 * (double)samples / (double)p->total);
	}
	fprintf(stderr, "\r%s: %s: %s samples%s, %s samples/s, %.1f s\033[K", p->prog, p->input, n,
		of, rate, secs);
	fflush(stderr);
	p->shown = true;
}

void tc_progress_slow(struct tc_progress *p, uint64_t samples)
{
	p->countdown = CHECK_EVERY;
	uint64_t t = now_ns();
	if (t < p->next_ns)
		return;
	p->next_ns = t + EVERY_NS;
	show(p, samples, t);
}

void tc_progress_clear(struct tc_progress *p)
{
	if (p->shown) {
		fputs("\r\033[K", stderr);
		fflush(stderr);
	}
	p->shown = false;
}

void tc_progress_end(struct tc_progress *p, uint64_t samples)
{
	if (p->mode == TC_PROGRESS_ON)
		show(p, samples, now_ns());
	tc_progress_clear(p);
	p->mode = TC_PROGRESS_OFF;
}
