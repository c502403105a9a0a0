/* The runner's messages: "prog: file: offset N: what is wrong" for a failed input or
 * output, warnings (unless -q), and -v's counts. Every file of the runner reports through
 * these; they call nothing of it but the progress line they clear. */
#include "run.h"

#include <errno.h>
#include <stdarg.h>
#include <string.h>

static void print_pos(FILE *f, const char *name, int kind, uint64_t pos)
{
	switch (kind) {
	case TACH_POS_OFFSET:
		fprintf(f, "%s: offset %llu: ", name, (unsigned long long)pos);
		break;
	case TACH_POS_LINE:
		fprintf(f, "%s:%llu: ", name, (unsigned long long)pos);
		break;
	case TACH_POS_RECORD:
		fprintf(f, "%s: record %llu: ", name, (unsigned long long)pos);
		break;
	default:
		fprintf(f, "%s: ", name);
	}
}

void tc_on_warn(void *ctx, const char *msg, int kind, uint64_t pos)
{
	const struct tc_input *in = ctx;
	const char *format = tach_reader_format(in->r);
	if (in->run->quiet)
		return;
	/* a program that rereads a folded input reads its text itself (tach-diff): what the
	 * folded reader guessed on the way (a unit for the counts) is not what it does */
	if (in->run->prog->many && in->run->prog->many->rereads && format &&
	    !strcmp(format, "collapsed"))
		return;
	tc_progress_clear(&in->run->progress);
	fprintf(stderr, "%s: ", in->run->prog->name);
	print_pos(stderr, in->name, kind, pos);
	fprintf(stderr, "warning: %s\n", msg);
}

/* What a writer warns of is what the input holds and the output cannot (labels, a frame
 * label's bytes, samples out of order): the input is named, as for the readers' warnings,
 * never the output; the inputs' number where several were merged. */
void tc_on_writer_warn(void *ctx, const char *msg, int kind, uint64_t pos)
{
	struct tc_run *run = ctx;
	if (run->quiet)
		return;
	tc_progress_clear(&run->progress);
	if (run->ninputs > 1)
		fprintf(stderr, "%s: %zu inputs: warning: %s\n", run->prog->name, run->ninputs, msg);
	else
		fprintf(stderr, "%s: %s: warning: %s\n", run->prog->name, run->in_name, msg);
}

void tc_warn(struct tc_run *run, const char *fmt, ...)
{
	if (run->quiet)
		return;
	va_list ap;
	fprintf(stderr, "%s: warning: ", run->prog->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fputc('\n', stderr);
}

/* The options a reader or writer would take (--count-unit, --max-depth, --labels, ...) and
 * the sample filters, each given one said not to apply to in, which the program reads
 * another way (why): a user's option is never dropped unsaid. */
void tc_warn_ignored(struct tc_run *run, const struct tc_input *in, const char *why)
{
	if (run->quiet)
		return;
	for (size_t i = 0; i < run->cli->n; i++) {
		const struct tc_opt *o = run->cli->all[i];
		if (run->cli->typed[i] && o->target && (o->target[0] == 'r' || o->target[0] == 'w'))
			fprintf(stderr, "%s: %s: warning: --%s does not apply to %s; ignored\n",
				run->prog->name, in->name, o->name, why);
	}
	if (run->filtering)
		fprintf(stderr, "%s: %s: warning: the sample filters (--thread, --status, --from-us, "
			"--to-us) do not apply to %s; ignored\n", run->prog->name, in->name, why);
}

int tc_reader_failed(struct tc_run *run, struct tach_reader *r)
{
	tc_progress_clear(&run->progress);
	int kind;
	uint64_t pos;
	const char *msg = tach_reader_error(r, &kind, &pos);
	const char *name = run->in_name;
	for (size_t i = 0; i < run->ninputs; i++)
		if (run->inputs[i].r == r)
			name = run->inputs[i].name;
	fprintf(stderr, "%s: ", run->prog->name);
	print_pos(stderr, name, kind, pos);
	fprintf(stderr, "%s\n", msg ? msg : "unknown error");
	return 1;
}

int tc_writer_failed(struct tc_run *run, struct tach_writer *w)
{
	tc_progress_clear(&run->progress);
	const char *msg = tach_writer_error(w);
	fprintf(stderr, "%s: %s: %s\n", run->prog->name, run->out_name, msg ? msg : "unknown error");
	return 1;
}

void tc_report_counts(const struct tc_run *run)
{
	if (!run->verbose)
		return;
	fprintf(stderr, "%s: ", run->prog->name);
	if (run->ninputs == 1)
		fprintf(stderr, "%s: ", run->in_name);
	else
		fprintf(stderr, "%zu inputs: ", run->ninputs);
	fprintf(stderr, "%llu samples read, %llu written\n", (unsigned long long)run->read_samples,
		(unsigned long long)run->kept_samples);
}

int tc_output_failed(struct tc_run *run)
{
	fprintf(stderr, "%s: %s: %s\n", run->prog->name, run->out_name, strerror(errno));
	return 1;
}
