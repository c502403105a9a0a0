/* tach-diff: what changed between two profiles, as folded stacks with two counts
 * ("stack base new", the form difffolded.pl writes and flamegraph.pl draws in red and blue).
 *
 * A folded input is joined as difffolded.pl joins it, its frames exactly as written (see
 * diff_folded.c): tach-diff is then a drop-in for the script. Any other input goes through
 * its own collapsed writer first, so its frames are labelled exactly as tach-decode labels
 * them (the same --labels, --full-paths and --no-thread-frames), into a temporary file that
 * is then joined the same way, except that what differs between two runs is left out
 * unless --per-run: thread frames, perf's process ids, unsymbolized addresses. -s turns every hexadecimal number (0x...) into "0x...", -n
 * scales BASE's counts to NEW's total. The output is sorted by stack text (bytes), not in
 * perl's hash order. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/runner.h"
#include "programs.h"
#include "diff_folded.h"

/* errno's failure of what (an input's name, the temporary file): exit status 1. */
static int failed(const char *what)
{
	if (errno == ENOMEM)
		fprintf(stderr, "tach-diff: out of memory\n");
	else if (errno == EOVERFLOW)
		fprintf(stderr, "tach-diff: %s: more than 2^31 distinct frames or stack prefixes\n",
			what);
	else
		fprintf(stderr, "tach-diff: %s: %s\n", what, strerror(errno));
	return 1;
}

/* Input in through writer w into the temporary file tmp. 0 or the exit status. */
static int fold(struct tc_run *run, struct tc_input *in, struct tach_writer *w, FILE *tmp)
{
	const struct tach_sample *s;
	if (tach_writer_open_fd(w, fileno(tmp)) || tach_writer_set_meta(w, tach_reader_meta(in->r)))
		return tc_writer_failed(run, w);
	int rc;
	while ((rc = tc_next(run, in->r, &s)) == TACH_OK)
		if (tach_writer_put(w, tach_reader_dict(in->r), s))
			return tc_writer_failed(run, w);
	if (rc < 0)
		return tc_reader_failed(run, in->r);
	if (tach_writer_close(w))
		return tc_writer_failed(run, w);
	return 0;
}

/* A folded input's own text, from its first byte (the runner gave a pipe a file). */
static int read_folded(struct dfold *j, struct tc_input *in, int k)
{
	if (lseek(in->fd, in->start, SEEK_SET) < 0 || dfold_read(j, k, in->fd))
		return failed(in->name);
	return 0;
}

/* Two runs of one program differ in thread ids, process ids and (with ASLR) addresses:
 * by default these are left out of the stacks compared (the thread's and the program's
 * names, the functions stay); --per-run keeps them, as tach-decode prints them. */
static int across_runs(struct tc_run *run, struct tach_writer *w)
{
	if (tc_opt_value(run, "per-run"))
		return 0;
	if (tach_writer_set_option(w, "thread-frames", "no") ||
	    tach_writer_set_option(w, "run-ids", "no"))
		return tc_writer_failed(run, w);
	return 0;
}

/* Input k joined into j: a folded text as it is, anything else through a collapsed writer
 * (w for BASE, a second one for NEW). */
static int read_side(struct tc_run *run, struct dfold *j, struct tc_input *in, int k,
		     struct tach_writer *w)
{
	const char *format = tach_reader_format(in->r);
	if (format && !strcmp(format, "collapsed")) {
		tc_warn_ignored(run, in, "folded input, joined as difffolded.pl joins it");
		return read_folded(j, in, k);
	}
	int status = 0;
	struct tach_writer *own = k ? tc_writer_new(run, &status) : NULL;
	if (status)
		return status;
	if ((status = across_runs(run, own ? own : w))) {
		tach_writer_free(own);
		return status;
	}
	FILE *tmp = tmpfile();
	if (!tmp)
		status = failed("temporary file");
	else if (!(status = fold(run, in, own ? own : w, tmp)) &&
		 (fseek(tmp, 0, SEEK_SET) || dfold_read(j, k, fileno(tmp))))
		status = failed("temporary file");
	if (tmp)
		fclose(tmp);
	tach_writer_free(own);
	return status;
}

static int print(struct tc_run *run, struct dfold *j, int outfd)
{
	FILE *f = fdopen(dup(outfd), "w");
	if (!f)
		return tc_output_failed(run);
	int status = 0;
	if (dfold_write(j, f, tc_opt_value(run, "normalize")))
		status = errno == ENOMEM ? failed("") : tc_output_failed(run);
	if (!status && (fflush(f) || ferror(f)))
		status = tc_output_failed(run);
	if (fclose(f) && !status)
		status = tc_output_failed(run);
	return status;
}

static int diff(struct tc_run *run, struct tc_input *in, size_t n, struct tach_writer *w,
		int outfd)
{
	(void)n; /* two, the runner made sure */
	struct dfold *j = dfold_new(tc_opt_value(run, "strip-hex"));
	if (!j)
		return errno = ENOMEM, failed("");
	int status = read_side(run, j, &in[0], 0, w);
	if (!status)
		status = read_side(run, j, &in[1], 1, w);
	if (!status)
		status = print(run, j, outfd);
	if (!status)
		tc_report_counts(run);
	dfold_free(j);
	return status;
}

static const struct tc_opt opts[] = {
	{ "normalize", 'n', NULL, NULL, NULL,
	  "scale BASE's counts to NEW's total, as difffolded.pl -n does", NULL, false },
	{ "strip-hex", 's', NULL, NULL, NULL,
	  "write every hexadecimal number (0x...) in a stack as 0x..., as difffolded.pl -s does",
	  NULL, false },
	{ "per-run", 0, NULL, NULL, NULL,
	  "profiles that are not folded stacks: keep thread frames, perf's process ids and "
	  "unsymbolized addresses, which differ from run to run (by default left out)",
	  NULL, false },
	{ 0 },
};

static const struct tc_output outputs[] = {
	{ "collapsed", "collapsed", false, NULL, "folded stacks with two counts",
	  tc_collapsed_opts, 0 },
	{ 0 },
};

static const struct tc_many many = { 2, 2, "BASE NEW", diff, true };

const struct tc_prog tc_prog_tach_diff = {
	.name = "tach-diff",
	.summary = "Compare two profiles: folded stacks with BASE's and NEW's counts.",
	.reader = "auto",
	.outputs = outputs,
	.opts = opts,
	.description = "Each line is 'STACK BASE_COUNT NEW_COUNT', sorted by stack, for "
		       "flamegraph.pl to draw a differential flame graph.",
	.many = &many,
};
