/* The runner every program is: read a file or stdin, write stdout or -o FILE (through a
 * temporary file renamed on success), filter samples, and report problems as "prog: file:
 * offset N: what is wrong" with exit 1 (data, I/O) or 2 (usage). This file holds the
 * conversion loop and tc_main, the top that calls the others: options.c, inputs.c,
 * outputs.c, filters.c and messages.c, none of which calls back up here. */
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

/* The next sample from the reading thread when there is one. */
static int next_sample(struct tc_run *run, struct tach_reader *r, struct tc_pipe *pipe,
		       const struct tach_sample **s)
{
	return pipe ? tc_pipe_next(pipe, s) : tc_next(run, r, s);
}

static int input_failed(struct tc_run *run, struct tach_reader *r, struct tc_pipe *pipe)
{
	if (pipe && tc_pipe_out_of_memory(pipe)) {
		fprintf(stderr, "%s: %s: out of memory\n", run->prog->name, run->in_name);
		return 1;
	}
	return tc_reader_failed(run, r);
}

/* The extras of s (values, labels) where the reader has them: the pipe's thread reads only
 * readers without (their dicts are complete). A sample cut short by --from-us/--to-us keeps
 * its labels; its values, which were the whole sample's, are left for the writer to derive
 * from the weight. */
static const struct tach_sample_ext *sample_ext(struct tc_run *run, struct tach_reader *r,
						struct tc_pipe *pipe, const struct tach_sample *s)
{
	const struct tach_sample_ext *e = pipe ? NULL : tach_reader_sample_ext(r);
	if (!e || s != &run->copy || !run->copy_cut)
		return e;
	run->copy_ext = *e;
	run->copy_ext.value_count = 0;
	run->copy_ext.values = NULL;
	return &run->copy_ext;
}

static int convert(struct tc_run *run, struct tach_reader *r, struct tach_writer *w, int outfd)
{
	/* When the dict no longer changes, the writer may read it while a second thread
	 * decodes. */
	struct tc_pipe *pipe = NULL;
	if (tach_reader_dict_complete(r) && tc_pipe_wanted() &&
	    tc_pipe_start(&pipe, tc_next_kept, run, r))
		pipe = NULL;
	const struct tach_sample *s;
	int status = 0;
	int rc = next_sample(run, r, pipe, &s);
	if (rc < 0)
		goto rerr;
	if (tach_writer_open_fd(w, outfd) || tach_writer_set_meta(w, tach_reader_meta(r)))
		goto werr;
	while (rc == TACH_OK) {
		if (tach_writer_put_ext(w, tach_reader_dict(r), s, sample_ext(run, r, pipe, s)))
			goto werr;
		rc = next_sample(run, r, pipe, &s);
	}
	if (rc < 0)
		goto rerr;
	if (pipe) {
		tc_pipe_stop(pipe);
		pipe = NULL;
	}
	if (tach_writer_close(w))
		goto werr;
	tc_report_counts(run);
	return 0;
rerr:
	/* the thread has stopped reading: the reader's error is settled */
	status = input_failed(run, r, pipe);
	goto out;
werr:
	status = tc_writer_failed(run, w);
out:
	if (pipe)
		tc_pipe_stop(pipe);
	return status;
}

struct tach_writer *tc_writer_new(struct tc_run *run, int *status)
{
	struct tach_writer *w = tach_writer_new(run->output->writer);
	if (!w) {
		fprintf(stderr, "%s: out of memory\n", run->prog->name);
		*status = 1;
		return NULL;
	}
	tach_writer_set_warn(w, tc_on_writer_warn, run);
	if ((*status = tc_apply_targets(run, run->cli, 'w', NULL, w))) {
		tach_writer_free(w);
		return NULL;
	}
	return w;
}

const char *tc_opt_value(const struct tc_run *run, const char *name)
{
	for (size_t i = 0; i < run->cli->n; i++)
		if (!strcmp(run->cli->all[i]->name, name))
			return run->cli->values[i];
	return NULL;
}

/* The value given for the option whose target is TARGET ("w:value"), or NULL. */
static const char *tc_opt_target_value(const struct tc_run *run, const char *target)
{
	for (size_t i = 0; i < run->cli->n; i++)
		if (run->cli->values[i] && run->cli->all[i]->target &&
		    !strcmp(run->cli->all[i]->target, target))
			return run->cli->values[i];
	return NULL;
}

/* An output with its own handler (tach-decode's info) writes through stdio. */
static int run_handler(struct tc_run *run, struct tach_reader *r, int outfd)
{
	FILE *f = fdopen(dup(outfd), "w");
	if (!f)
		return tc_output_failed(run);
	int status = run->output->handler(run, r, f);
	if ((fflush(f) || ferror(f)) && !status)
		status = tc_output_failed(run);
	if (fclose(f) && !status)
		status = tc_output_failed(run);
	return status;
}

/* A reader option typed for another format than the one detected was not used: say so
 * (a detecting reader hands each option only to the formats that take it). One the
 * detected format has but whose value it refuses (--event naming no event of its kind)
 * is a usage error: 2, else 0. */
static int warn_unused(struct tc_run *run, const struct tc_input *in)
{
	const char *format = tach_reader_format(in->r);
	for (size_t i = 0; i < run->cli->n; i++) {
		const char *t = run->cli->all[i]->target;
		if (!run->cli->typed[i] || !t || t[0] != 'r')
			continue;
		struct tach_reader *r = tach_reader_new(format);
		bool took = r && tach_reader_set_option(r, t + 2, run->cli->values[i]) == TACH_OK;
		const char *why = r && !took ? tach_reader_error(r, NULL, NULL) : NULL;
		if (why && !strstr(why, "reader has no option")) {
			int rc = tc_usage_error(run->prog, "%s: %s", in->name, why);
			tach_reader_free(r);
			return rc;
		}
		tach_reader_free(r);
		if (!took && !run->quiet)
			fprintf(stderr, "%s: %s: warning: --%s does not apply to %s input; ignored\n",
				run->prog->name, in->name, run->cli->all[i]->name, format);
	}
	return 0;
}

/* The progress line's total: the samples every input declares (TACH's header), or 0
 * when one does not. -q silences the automatic line, not a --progress. */
static void start_progress(struct tc_run *run)
{
	uint64_t total = 0;
	for (size_t i = 0; i < run->ninputs; i++) {
		const struct tach_file_info *f = tach_reader_meta(run->inputs[i].r)->file;
		uint64_t n = f ? f->sample_count : 0;
		if (!n || __builtin_add_overflow(total, n, &total)) {
			total = 0;
			break;
		}
	}
	if (run->quiet && run->progress.mode == TC_PROGRESS_AUTO)
		run->progress.mode = TC_PROGRESS_OFF;
	tc_progress_start(&run->progress, run->prog->name,
			  run->ninputs == 1 ? run->in_name : "inputs", total);
}

/* The label style a drawing program's input is relabelled with (options whose target is
 * "c:", tach2flamegraph's --labels): the one given, else the style of the tool its users
 * draw such input with (stackcollapse-perf.pl's for perf, jfrconv's for JFR), else NULL:
 * drawn from the samples as they are. Folded input keeps its own text. */
static const char *relabel_style(struct tc_run *run, const char *format)
{
	bool takes = false;
	for (size_t i = 0; i < run->cli->n; i++) {
		const char *t = run->cli->all[i]->target;
		if (t && !strcmp(t, "c:labels")) {
			takes = true;
			if (run->cli->values[i])
				return run->cli->values[i];
		}
	}
	if (!takes || !format)
		return NULL;
	if (!strcmp(format, "perf") || !strcmp(format, "perfdata"))
		return "perf";
	return !strcmp(format, "jfr") ? "async-profiler" : NULL;
}

/* r through a collapsed writer with the "c:" options into tmp, as tach-decode --labels
 * STYLE writes it (the sample filters apply here), and what the drawing writer w then
 * counts: the same value (the folded counts are µs for time), or, for a sample type, the
 * counts as they are. */
static int fold_relabelled(struct tc_run *run, struct tach_reader *r, struct tach_writer *w,
			   const char *style, FILE *tmp)
{
	int status = 0;
	struct tach_writer *cw = tach_writer_new("collapsed");
	if (!cw) {
		fprintf(stderr, "%s: out of memory\n", run->prog->name);
		return 1;
	}
	tach_writer_set_warn(cw, tc_on_writer_warn, run);
	const char *value = tc_opt_target_value(run, "w:value");
	const char *nothreads = tc_opt_target_value(run, "w:thread-frames");
	if (tach_writer_set_option(cw, "labels", style) ||
	    (value && tach_writer_set_option(cw, "value", value)) ||
	    (nothreads && tach_writer_set_option(cw, "thread-frames", nothreads)))
		status = tc_usage_error(run->prog, "%s", tach_writer_error(cw));
	else if (!(status = tc_apply_targets(run, run->cli, 'c', NULL, cw)) && value &&
		 strcmp(value, "time") && tach_writer_set_option(w, "value", "count"))
		status = tc_writer_failed(run, w);
	if (!status)
		status = run->ninputs > 1 ? tc_merge(run, run->inputs, run->ninputs, cw, fileno(tmp),
						      false, false)
					  : convert(run, r, cw, fileno(tmp));
	tach_writer_free(cw);
	return status;
}

/* The input relabelled, then drawn by w from the folded text, as
 * `tach-decode --labels STYLE FILE | tach2flamegraph` draws it. */
static int convert_relabelled(struct tc_run *run, struct tach_reader *r, struct tach_writer *w,
			      const char *style, int outfd)
{
	FILE *tmp = tmpfile();
	if (!tmp) {
		fprintf(stderr, "%s: temporary file: %s\n", run->prog->name, strerror(errno));
		return 1;
	}
	int status = fold_relabelled(run, r, w, style, tmp);
	if (!status && ftell(tmp) == 0) {
		/* no line (a filter kept nothing, no sample of the events read): the empty
		 * drawing the samples would give, not an input error */
		if (tach_writer_open_fd(w, outfd) || tach_writer_set_meta(w, tach_reader_meta(r)) ||
		    tach_writer_close(w))
			status = tc_writer_failed(run, w);
		fclose(tmp);
		return status;
	}
	struct tach_reader *fr = status ? NULL : tach_reader_new("collapsed");
	if (!status && !fr) {
		fprintf(stderr, "%s: out of memory\n", run->prog->name);
		status = 1;
	}
	const char *value = tc_opt_target_value(run, "w:value");
	if (!status && ((status = tc_folded_settings(run, 'r', fr, NULL)) ||
			(value && !strcmp(value, "time") &&
			 (status = tc_set_opt(run, fr, NULL, "r:count-unit", "us"))) ||
			(status = tc_folded_settings(run, 'w', NULL, w)))) {
	} else if (!status && (fseek(tmp, 0, SEEK_SET) || tach_reader_open_fd(fr, fileno(tmp)))) {
		status = tc_reader_failed(run, fr);
	} else if (!status) {
		/* the samples were filtered and counted once, on the way in */
		bool filtering = run->filtering, verbose = run->verbose;
		uint64_t read = run->read_samples, kept = run->kept_samples;
		run->filtering = false;
		run->verbose = false; /* the counts were reported by the first pass */
		status = convert(run, fr, w, outfd);
		run->filtering = filtering;
		run->verbose = verbose;
		run->read_samples = read;
		run->kept_samples = kept;
	}
	tach_reader_free(fr);
	fclose(tmp);
	return status;
}

/* Opens every reader on its input, then reads them into the output. */
static int read_inputs(struct tc_run *run, struct tach_writer *w, int outfd)
{
	for (size_t i = 0; i < run->ninputs; i++) {
		struct tc_input *in = &run->inputs[i];
		if (tach_reader_open_fd(in->r, in->fd) < 0)
			return tc_reader_failed(run, in->r);
		int rc;
		if (tc_detects(run->prog) && !run->from && (rc = warn_unused(run, in)))
			return rc;
		if (run->verbose && tc_detects(run->prog))
			fprintf(stderr, "%s: %s: %s input\n", run->prog->name, in->name,
				tach_reader_format(in->r));
	}
	start_progress(run);
	int status;
	if (run->prog->many) {
		status = run->prog->many->run(run, run->inputs, run->ninputs, w, outfd);
	} else {
		const char *format = tach_reader_format(run->inputs[0].r);
		if (w && format && !strcmp(format, "collapsed") &&
		    (status = tc_folded_settings(run, 'w', NULL, w)))
			return status;
		const char *style = w ? relabel_style(run, format) : NULL;
		if (style && format && strcmp(format, "collapsed"))
			status = convert_relabelled(run, run->inputs[0].r, w, style, outfd);
		else if (run->ninputs > 1)
			status = tc_merge(run, run->inputs, run->ninputs, w, outfd, false, false);
		else
			status = run->output->handler ? run_handler(run, run->inputs[0].r, outfd)
						      : convert(run, run->inputs[0].r, w, outfd);
	}
	tc_progress_end(&run->progress, run->read_samples);
	/* an empty output is what was asked for, yet seldom what was meant: a thread id from
	 * another run, a time range outside the capture */
	if (!status && run->filtering && run->read_samples && !run->kept_samples)
		tc_warn(run, "none of the %llu samples read passes the sample filters (--thread, "
			"--status, --from-us, --to-us): the output has no samples",
			(unsigned long long)run->read_samples);
	return status;
}

/* The inputs into w, which compresses on worker threads when a second CPU is ours: its
 * output is the same bytes with any number of them (lib/base/gzip.c). */
static int write_through(struct tc_run *run, struct tach_writer *w, int outfd)
{
	if (w && run->output->gzip_level && tc_pipe_wanted()) {
		char n[16];
		snprintf(n, sizeof(n), "%u", tc_gzip_workers());
		/* only writers that take gzip options get here, and the value is in range */
		if (tach_writer_set_option(w, "threads", n))
			return 1;
	}
	return read_inputs(run, w, outfd);
}

/* The open inputs into the output; usage errors come before any output exists. */
static int run_io(struct tc_run *run)
{
	struct tach_writer *w = NULL;
	int status = tc_make_readers(run), outfd = -1;
	if (!status && run->output->writer)
		w = tc_writer_new(run, &status);
	else if (!status)
		status = tc_apply_targets(run, run->cli, 'w', NULL, NULL);
	if (!status && !(status = tc_open_output(run, &outfd)))
		status = tc_finish_output(run, outfd, write_through(run, w, outfd));
	tach_writer_free(w);
	return status;
}

int tc_main(int argc, char **argv, const struct tc_prog *prog)
{
	struct tc_run run = { .prog = prog, .output = &prog->outputs[0], .to_us = UINT64_MAX };
	struct cli c;
	memset(&c, 0, sizeof(c));
	run.cli = &c;
	tc_build_getopt(prog, &c);
	/* Past a file-size limit (ulimit -f), write fails with EFBIG, an I/O error reported as
	 * any other, instead of SIGXFSZ killing the program with its temporary file left. */
	signal(SIGXFSZ, SIG_IGN);
	int ch, status = -1;
	opterr = 0;
	while (status < 0 && (ch = getopt_long(argc, argv, c.shorts, c.lopts, NULL)) != -1)
		status = tc_take_option(&run, &c, ch, argv);
	if (status < 0 && tc_env_binary_path(&run, &c))
		status = 1;
	if (status < 0 && !(status = tc_open_inputs(&run, argc - optind, argv + optind))) {
		tc_catch_shrinking_input(&run);
		status = run_io(&run);
	}
	tc_close_inputs(&run);
	for (size_t i = 0; i < c.n; i++)
		free(c.joined[i]);
	return status;
}
