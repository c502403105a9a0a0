/* The shared program runner: every tachfmt program is a description handed to tc_main. */
#ifndef TACHFMT_RUNNER_H
#define TACHFMT_RUNNER_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/types.h>

#include "tachfmt.h"

/* A program option. target says where the value goes: "r:KEY" (reader option), "w:KEY"
 * (writer option); value is the fixed value of a flag (arg == NULL). */
struct tc_opt {
	const char *name;    /* long name without "--" */
	char short_name;     /* 0 for none */
	const char *arg;     /* argument name for --help, NULL for a flag */
	const char *target;
	const char *value;
	const char *help;
	/* The values it takes, for --help and the completions: space-separated words, or A-B
	 * for the whole numbers A to B. */
	const char *choices;
	bool repeatable;     /* later uses add to the value, joined with ':' */
};

struct tc_run;

/* One input as the runner opened it: the reader of the --from format on the file or stdin. */
struct tc_input {
	const char *name;        /* for messages: the path as given, or <stdin> */
	int fd;
	struct tach_reader *r;
	struct tc_run *run;
	off_t size_at_open;      /* a regular file's size when opened, else 0 */
	off_t start;             /* where its bytes start (a seekable stdin may start past 0) */
};

/* An output choice of --format: a writer format, or a custom handler. */
struct tc_output {
	const char *name;
	const char *writer;  /* writer format name, or NULL with handler */
	bool binary;         /* refused on a terminal without --force */
	int (*handler)(struct tc_run *run, struct tach_reader *r, FILE *out);
	const char *help;
	const struct tc_opt *opts; /* options of this output's writer, zero-terminated */
	/* The writer's default gzip level when its output is gzip (options gzip, level and
	 * threads): the runner then has it compress on worker threads. 0: no gzip. */
	int gzip_level;
};

/* --max-samples, for an output that stores every sample (a weight N costs it N); the
 * runner sets the default (the option's value) unless the user gives one. 10^8 is 2.8
 * hours of one thread at CPython's default 10 kHz, and what such an output writes in about
 * a second: a claimed weight of billions (a pprof heap value, a speedscope weight, a folded
 * count) stops at once instead of filling the disk. TACH keeps a weight as one record, so
 * its output stops only at the 2^32-1 samples its header can count. */
#define TC_MAX_SAMPLES_OPT_DEFAULT(n)                                                      \
	{ "max-samples", 0, "N", "r:max-samples", n,                                       \
	  "fail when the input expands to more than N samples (default " n ")", NULL, false }
#define TC_MAX_SAMPLES_OPT TC_MAX_SAMPLES_OPT_DEFAULT("100000000")

/* The TACH output with its writer's options (--compression, --level), for every program
 * that writes TACH: outputs = tc_tach_output. */
extern const struct tc_output tc_tach_output[];
/* The same with --counts-as-samples, for programs that may read pprof input, then pprof
 * and the samples text (tach-merge: TACH keeps one interval, those each sample's time). */
extern const struct tc_output tc_tach_values_output[];
/* The gperftools reader's options (--binary-path, --no-symbolize, --names): gperf2tach's,
 * and those of every program that detects its input. */
extern const struct tc_opt tc_gperf_opts[];

/* A program that reads several inputs (tach-merge, tach-diff). The runner opens them all,
 * with the reader options applied to each, and the output, then hands over; w is the output's
 * writer with its options set (NULL for a handler output). Returns the exit status. */
struct tc_many {
	size_t min, max;       /* how many inputs; max 0: no limit */
	const char *args;      /* the operands for --help, e.g. "FILE..." */
	int (*run)(struct tc_run *run, struct tc_input *in, size_t n, struct tach_writer *w,
		   int outfd);
	/* run reads an input's bytes again from the start (tach-diff's folded text): an input
	 * that cannot seek (a pipe) is first copied to a temporary file. */
	bool rereads;
};

/* The inputs merged into w (tach-merge's, and a one-input program given several files):
 * interleaved by timestamp, or one after another with concat; with tag, each input's samples
 * under an outermost frame named after it. Returns the exit status. */
int tc_merge(struct tc_run *run, struct tc_input *in, size_t n, struct tach_writer *w, int outfd,
	     bool concat, bool tag);

/* --from FORMAT: the format every input is read as (a readable name of tach_format_name). */

/* The collapsed writer's options, as tach-decode and tach-diff offer them. */
extern const struct tc_opt tc_collapsed_opts[];
/* Its label options for a drawing program (tach2flamegraph): given one, or for perf and JFR
 * input by default, the input is drawn from the folded text that writer makes of it, as
 * `tach-decode --labels STYLE | tach2flamegraph` draws it (targets "c:"). */
extern const struct tc_opt tc_relabel_opts[];

struct tc_prog {
	const char *name;
	const char *summary;   /* one line */
	const char *reader;    /* input format */
	const struct tc_output *outputs; /* first is the default; more means --format */
	const struct tc_opt *opts;       /* terminated by a zero entry */
	const char *description;         /* paragraph for --help */
	const struct tc_many *many;      /* NULL: one input, FILE or standard input */
	/* For folded stacks, what flamegraph.pl reads: reader options set whenever the reader
	 * may be the collapsed one (before the user's), writer options once the input is found
	 * to be folded (unless the user set them); zero-terminated. */
	const struct tc_setting { const char *target, *value; } *folded;
};

int tc_main(int argc, char **argv, const struct tc_prog *prog);

/* For handlers: report a reader failure the standard way; returns the exit status. */
int tc_reader_failed(struct tc_run *run, struct tach_reader *r);
/* For handlers: the next sample after filters, as tc_main's loop sees it. */
int tc_next(struct tc_run *run, struct tach_reader *r, const struct tach_sample **s);
/* True when s, from tc_next, is part of the sample read (--from-us/--to-us cut it): the
 * reader's values, which are the whole sample's, do not describe it. */
bool tc_sample_cut(const struct tc_run *run, const struct tach_sample *s);


/* The value given for the program's own option NAME (one without a target), or NULL. */
const char *tc_opt_value(const struct tc_run *run, const char *name);
/* A writer for the chosen output with its options set and warnings reported; NULL after a
 * message, with *status the exit status. */
struct tach_writer *tc_writer_new(struct tc_run *run, int *status);
/* Reports a writer failure the standard way; returns the exit status. */
int tc_writer_failed(struct tc_run *run, struct tach_writer *w);
/* Reports a failure to write the output (errno says what); returns the exit status. */
int tc_output_failed(struct tc_run *run);
/* A warning about the run itself ("prog: warning: ..."), unless -q. */
void tc_warn(struct tc_run *run, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* A warning for each option given that in's way of reading leaves out (a reader's, a
 * writer's or a sample filter), "--NAME does not apply to WHY; ignored", unless -q. */
void tc_warn_ignored(struct tc_run *run, const struct tc_input *in, const char *why);
/* With -v: how many samples were read and written. */
void tc_report_counts(const struct tc_run *run);

#endif
