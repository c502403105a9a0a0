/* What the collapsed reader's two files share: collapsed/read.c (lines, counts, frames,
 * samples) and collapsed/read_forms.c (the producers' forms: thread pseudo-frames at the root
 * and frame label styles, recognized, taken apart and decided per file). */
#ifndef TACHFMT_COLLAPSED_READ_H
#define TACHFMT_COLLAPSED_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"

/* The label style is chosen from this many frames at the start of the input. */
#define SNIFF_FRAMES 1000
#define SNIFF_LINES 4096
#define SNIFF_BYTES (1u << 20)
#define NO_FRAME UINT32_MAX

enum { LAB_AUTO, LAB_PYSPY, LAB_COLON, LAB_AUSTIN2, LAB_RAW, LAB_AUSTIN1 };
enum { THR_NONE, THR_CPYTHON, THR_AUSTIN, THR_PYSPY, THR_AUSTIN1, THR_PERF_PID, THR_PERF_TID };
/* What a count is: samples, or a time in ns, µs or ms (UNIT_AUTO: decided per file). */
enum { UNIT_AUTO, UNIT_SAMPLES, UNIT_NS, UNIT_US, UNIT_MS };
/* Counts that share a divisor this large (in their own unit) look like times. */
#define TIME_GCD_MIN 1000
/* When the interval is chosen from the counts, the first lines' counts make at most about
 * this many samples, whatever their unit. */
#define UNIT_MAX_WINDOW_SAMPLES (1u << 20)
enum { DIFF_SECOND, DIFF_FIRST, DIFF_NONE, DIFF_BOTH };
enum { L_DATA, L_INVALID, L_NEGATIVE, L_ZERO };

/* A decimal number as text gives it: mant / 10^scale. */
struct num {
	unsigned __int128 mant;
	unsigned scale;
	bool neg;
	bool big; /* the integer part exceeds 64 bits */
};

struct label {
	uint64_t off;
	uint32_t len;
	uint32_t frame, frame2; /* frame2: a second frame (an austin 2 pair that did not fold) */
};

struct aline {
	size_t off, len;
	uint64_t line;
};

struct cread {
	/* options */
	int labels_opt;
	int diff_opt;
	bool keep_threads;
	uint32_t metric; /* 1-based field of a comma-separated count */
	struct num factor;
	bool factor_set;
	bool interval_set;
	int unit_opt;

	/* counts: each is multiplied by unit_mul (rounded): a time in ns, or samples (1) */
	int unit;
	uint64_t unit_mul;
	/* the counts' common divisor in ns, when the interval comes from it: a line of time T
	 * stands for T / period samples; 0: none, a line is one record of its time */
	uint64_t period;
	bool meta_interval; /* the file said its interval (austin) */
	bool meta_austin;   /* the file has austin's "# austin:" or "# mode:" header */
	bool meta_memory;   /* austin's "# mode: memory": the counts are bytes */
	bool spaced3;       /* austin 1's -f: "stack TIME MEM+ MEM-" */
	uint64_t cgcd, csum; /* of the positive counts of the first lines */
	uint64_t ncounts;

	/* perf roots (stackcollapse-perf.pl --pid, --tid) seen in the first lines */
	uint64_t n_roots, n_perf_pid, n_perf_tid, n_perf_q;
	bool perf_pid_varies;
	char perf_first[64];
	size_t perf_first_len;
	uint64_t perf_first_pid;
	size_t root_len; /* the perf root's process name length, 0: none */

	/* decided once per file */
	bool decided;     /* label style and counters final */
	bool first_valid; /* the first valid line has been seen */
	int labels;
	bool explicit_labels;
	int threads;
	bool differential;
	uint64_t n_py, n_colon, n_austin2, n_austin1, n_frames;

	/* label -> frame ids */
	char *lbytes;
	size_t lbytes_len, lbytes_cap;
	struct label *labs;
	size_t nlabs, labs_cap;
	struct tachi_idset lindex;

	/* lines read ahead to choose the styles, replayed first */
	char *ahead;
	size_t ahead_len, ahead_cap;
	struct aline *alines;
	size_t nalines, alines_cap, apos;
	bool started;

	/* the sample being built */
	uint32_t *root; /* root first */
	size_t root_cap;
	uint32_t *frames; /* innermost first */
	size_t frames_cap;
	uint32_t *prev; /* previous sample's root-first ids */
	size_t prev_cap;
	uint32_t prev_depth;
	uint64_t prev_tid;
	uint32_t prev_iid;
	bool has_prev;

	uint64_t line;  /* number of the line being turned into a sample */
	uint64_t clock; /* next synthesized timestamp */
	uint64_t total; /* samples so far (sum of weights) */

	uint64_t invalid, first_invalid;
	bool any_stack; /* a line parsed as a stack, whatever its count */
	char first_why[96];
	char first_seen[48]; /* the start of the first invalid line, printable */
	uint64_t negative, first_negative;
	uint64_t zero, first_zero;  /* lines with a count of 0 */
	bool any_data;              /* a line with a positive count */
	bool warned_round, warned_empty, warned_meta_late, finished;
	const char *why;
	/* diff=both: the first count of the line being read, then the baseline sample still
	 * to hand out for the stack of the last one */
	uint64_t base;
	uint64_t pending;
};

static inline bool is_ws(char c)
{
	return c == ' ' || c == '\t';
}

static inline bool is_digit(char c)
{
	return c >= '0' && c <= '9';
}

/* The frame [p, end of frame) and where the next one starts (NULL after the last). */
static inline const char *frame_end(const char *p, const char *end, const char **next)
{
	const char *q = memchr(p, ';', (size_t)(end - p));
	*next = q ? q + 1 : NULL;
	return q ? q : end;
}

/* collapsed/read_forms.c */
void tachi_cr_sniff_perf_root(struct cread *st, const char *s, const char *end);
int tachi_cr_decide_perf_roots(const struct cread *st);
int tachi_cr_sniff_threads(const char *s, const char *end);
const char *tachi_cr_strip_threads(struct cread *st, const char *s, const char *end,
				   uint64_t *tid, uint32_t *iid);
bool tachi_cr_path_like(const char *f, size_t n);
bool tachi_cr_parse_line_no(const char *p, size_t n, int32_t *line);
bool tachi_cr_split_colon(const char *s, size_t n, size_t *file_len, size_t *func_off,
			  size_t *func_len, int32_t *line);
bool tachi_cr_split_file_func(const char *s, size_t n, size_t *file_len);
bool tachi_cr_is_lframe(const char *p, size_t n);
bool tachi_cr_split_pyspy(const char *s, size_t n, size_t *name_len, size_t *file_off,
			  size_t *file_len, int32_t *line);
void tachi_cr_sniff_labels(struct cread *st, const char *p, const char *end);
void tachi_cr_decide_labels(struct cread *st);

#endif
