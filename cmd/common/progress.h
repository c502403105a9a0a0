/* A one-line progress display on standard error for long runs, as zstd and pv show one. */
#ifndef TACHFMT_PROGRESS_H
#define TACHFMT_PROGRESS_H

#include <stdbool.h>
#include <stdint.h>

/* off: never; auto: when standard error is a terminal and the run passes about a second;
 * on: from the start, terminal or not (--progress). */
enum tc_progress_mode { TC_PROGRESS_AUTO, TC_PROGRESS_OFF, TC_PROGRESS_ON };

struct tc_progress {
	enum tc_progress_mode mode;
	const char *prog, *input;
	uint64_t total;         /* samples the input declares (TACH's header), 0: unknown */
	uint64_t start_ns, next_ns;
	uint32_t countdown;     /* samples until the clock is read again */
	bool shown;             /* a line is on the terminal: clear it at the end */
};

void tc_progress_start(struct tc_progress *p, const char *prog, const char *input,
		       uint64_t total);
/* Called with the samples read so far; cheap unless a countdown has run out. */
void tc_progress_slow(struct tc_progress *p, uint64_t samples);
static inline void tc_progress_tick(struct tc_progress *p, uint64_t samples)
{
	if (p->mode != TC_PROGRESS_OFF && --p->countdown == 0)
		tc_progress_slow(p, samples);
}
/* Erases the line, if one is shown, before another message. */
void tc_progress_clear(struct tc_progress *p);
/* Erases the line, if one was shown; with mode on, the last count is printed first. */
void tc_progress_end(struct tc_progress *p, uint64_t samples);

#endif
