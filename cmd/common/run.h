/* What the runner's files share (runner.c, options.c, inputs.c, outputs.c, filters.c,
 * messages.c): the run's state and the command line's, and the steps one file hands
 * another. Private to cmd/common; programs see runner.h. */
#ifndef TACHFMT_RUN_H
#define TACHFMT_RUN_H

#include <getopt.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "runner.h"
#include "pipe.h"
#include "progress.h"

#define MAX_OPTS 64
#define MAX_THREADS 64

struct tc_run {
	const struct tc_prog *prog;
	const struct tc_output *output;
	struct cli *cli;
	struct tc_input *inputs; /* in command-line order */
	size_t ninputs;
	const char *from;       /* --from: the input format, or NULL for the program's */
	const char *in_name;    /* the input's name, or what names them all in a message */
	const char *out_name;
	bool quiet, verbose, force;
	struct tc_progress progress; /* --progress, --no-progress */
	bool in_place;          /* -o names a device or FIFO: no temporary file */
	/* filters */
	uint64_t threads[MAX_THREADS];
	size_t nthreads;
	uint8_t status_any, status_none;
	bool status_idle, status_no_idle;
	bool has_status;
	uint64_t from_us, to_us;
	uint64_t interval_us;   /* the reader's, for the time span of a weighted sample */
	uint8_t sample_time;    /* the reader's: samples carry their time (time_ns) */
	bool filtering;
	uint64_t read_samples, kept_samples;
	struct tach_sample copy;
	bool copy_cut;          /* clip gave copy less weight than the sample read */
	struct tach_sample_ext copy_ext;
};

/* The command line: the program's options as getopt sees them, and the values given. */
struct cli {
	const struct tc_opt *all[MAX_OPTS];
	const struct tc_output *owner[MAX_OPTS]; /* the output an option belongs to, or NULL */
	size_t n;
	struct option lopts[MAX_OPTS + 2];
	char shorts[3 * MAX_OPTS];
	/* Values collected first, applied once the handles exist. */
	const char *values[MAX_OPTS];
	char *joined[MAX_OPTS]; /* repeated options' values, joined with ':' */
	bool typed[MAX_OPTS];   /* given on the command line, not taken from the environment */
};

/* options.c */
void tc_build_getopt(const struct tc_prog *prog, struct cli *c);
/* Every option a program accepts but --format, in --help order: its own, its outputs'
 * writers', then the common ones. owner[i] is the output an option belongs to, NULL for the
 * others. Returns how many (at most max). */
size_t tc_gather_opts(const struct tc_prog *p, const struct tc_opt **all,
		      const struct tc_output **owner, size_t max);
/* The formats the library reads, space-separated, in detection order: --from's values but
 * auto and help. */
void tc_readable_formats(char *buf, size_t cap);
void tc_default_max_samples(const struct tc_output *out, struct tach_reader *r);
bool tc_detects(const struct tc_prog *p);
int tc_keep_value(struct cli *c, size_t idx, const char *arg);
int tc_take_option(struct tc_run *run, struct cli *c, int ch, char **argv);
/* Sets a reader ("r:KEY") or writer ("w:KEY") option; a refusal is a usage error. */
int tc_set_opt(struct tc_run *run, struct tach_reader *r, struct tach_writer *w,
	       const char *target, const char *value);
int tc_usage_error(const struct tc_prog *p, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

/* filters.c */
int tc_next_kept(void *ctx, struct tach_reader *r, const struct tach_sample **out);
int tc_parse_status(struct tc_run *run, const char *list);
/* The words a --status list is made of (each state, then each no-STATE), space-separated. */
void tc_status_words(char *buf, size_t cap);
bool tc_parse_u64(const char *s, uint64_t *out);

/* inputs.c */
int tc_apply_targets(struct tc_run *run, struct cli *c, char kind, struct tach_reader *r,
		   struct tach_writer *w);
void tc_close_inputs(struct tc_run *run);
int tc_env_binary_path(const struct tc_run *run, struct cli *c);
int tc_folded_settings(struct tc_run *run, char kind, struct tach_reader *r,
		   struct tach_writer *w);
int tc_make_readers(struct tc_run *run);
int tc_open_inputs(struct tc_run *run, int nargs, char **args);

/* outputs.c */
void tc_catch_shrinking_input(const struct tc_run *run);
int tc_finish_output(struct tc_run *run, int fd, int status);
int tc_open_output(struct tc_run *run, int *fd);

/* messages.c: warnings of a reader (ctx: its struct tc_input) and of the writer (ctx: the
 * run) */
void tc_on_warn(void *ctx, const char *msg, int kind, uint64_t pos);
void tc_on_writer_warn(void *ctx, const char *msg, int kind, uint64_t pos);

#endif
