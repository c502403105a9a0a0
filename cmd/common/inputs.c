/* The runner's inputs: one FILE or standard input, or several (tach-merge, tach-diff),
 * each opened with a reader of the --from format or the detecting one, the reader options
 * applied to each, and the folded-stack settings once an input is found to be folded. */
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

/* TACHFMT_BINARY_PATH: directories searched after those of --binary-path, as one more
 * --binary-path given last; not for a --from format that reads no binaries. */
int tc_env_binary_path(const struct tc_run *run, struct cli *c)
{
	const char *env = getenv("TACHFMT_BINARY_PATH");
	if (run->from && strcmp(run->from, "gperf") && strcmp(run->from, "perfdata") &&
	    strcmp(run->from, "v8log"))
		return 0;
	for (size_t i = 0; env && *env && i < c->n; i++)
		if (c->all[i]->target && !strcmp(c->all[i]->target, "r:binary-path"))
			return tc_keep_value(c, i, env);
	return 0;
}

/* For on_sigbus: a regular file's size at open. */
static void note_size(struct tc_input *in)
{
	struct stat st;
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode))
		in->size_at_open = st.st_size;
}

/* For a program that rereads its inputs: where in's bytes start, and a pipe's copied to a
 * temporary file first. 0 or the exit status. */
static int keep_rereadable(struct tc_run *run, struct tc_input *in)
{
	if (!run->prog->many || !run->prog->many->rereads ||
	    (in->start = lseek(in->fd, 0, SEEK_CUR)) >= 0)
		return 0;
	in->start = 0;
	FILE *tmp = tmpfile();
	char buf[65536];
	ssize_t got = 0;
	while (tmp && ((got = read(in->fd, buf, sizeof(buf))) > 0 || (got < 0 && errno == EINTR)))
		if (got > 0 && fwrite(buf, 1, (size_t)got, tmp) != (size_t)got)
			break;
	int fd = -1;
	if (tmp && got == 0 && !fflush(tmp) && (fd = dup(fileno(tmp))) >= 0 &&
	    lseek(fd, 0, SEEK_SET) < 0) {
		close(fd);
		fd = -1;
	}
	int err = errno;
	if (tmp)
		fclose(tmp);
	if (fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", run->prog->name, in->name, strerror(err));
		return 1;
	}
	if (in->fd > STDIN_FILENO)
		close(in->fd);
	in->fd = fd;
	return 0;
}

/* One input: a path, or stdin for "-"; its name is kept for messages. 0 or the exit status. */
static int open_one_input(struct tc_run *run, struct tc_input *in, const char *path,
			  bool *stdin_taken)
{
	in->run = run;
	if (!strcmp(path, "-")) {
		if (*stdin_taken)
			return tc_usage_error(run->prog, "standard input (-) given more than once");
		*stdin_taken = true;
		in->name = "<stdin>";
		in->fd = STDIN_FILENO;
		note_size(in);
		return keep_rereadable(run, in);
	}
	in->name = path;
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", run->prog->name, path, strerror(errno));
		return 1;
	}
	note_size(in);
	return keep_rereadable(run, in);
}

/* The input files named on the command line (standard input when a one-input program is
 * given none), all opened before any output exists. 0 or the exit status. */
int tc_open_inputs(struct tc_run *run, int nargs, char **args)
{
	const struct tc_prog *p = run->prog;
	size_t n = (size_t)nargs, min = p->many ? p->many->min : 0, max = p->many ? p->many->max : 1;
	/* several profiles (node writes one per worker) are one, merged as tach-merge merges
	 * them, by every program that writes a profile; an output of its own (tach-decode's
	 * info) describes one input */
	if (max == 1 && n > 1 && run->output && !run->output->writer)
		return tc_usage_error(p, "--format %s describes one input file; several are one "
				      "profile through tach-merge: tach-merge FILE... | %s -F %s",
				      run->output->name, p->name, run->output->name);
	if (max == 1 && !p->many)
		max = 0;
	if (n < min || (max && n > max)) {
		if (min == max)
			return tc_usage_error(p, "%zu input files needed, not %zu", min, n);
		if (!max)
			return tc_usage_error(p, "%zu or more input files needed, not %zu", min, n);
		return tc_usage_error(p, "%zu to %zu input files needed, not %zu", min, max, n);
	}
	size_t count = n ? n : 1;
	run->inputs = calloc(count, sizeof(*run->inputs));
	if (!run->inputs) {
		fprintf(stderr, "%s: out of memory\n", p->name);
		return 1;
	}
	bool stdin_taken = false;
	for (size_t i = 0; i < count; i++) {
		run->inputs[i].fd = -1;
		run->ninputs = i + 1;
		int status = open_one_input(run, &run->inputs[i], n ? args[i] : "-", &stdin_taken);
		if (status)
			return status;
	}
	run->in_name = run->inputs[0].name;
	return 0;
}

void tc_close_inputs(struct tc_run *run)
{
	for (size_t i = 0; i < run->ninputs; i++) {
		tach_reader_free(run->inputs[i].r);
		if (run->inputs[i].fd > STDIN_FILENO)
			close(run->inputs[i].fd);
	}
	free(run->inputs);
	run->inputs = NULL;
	run->ninputs = 0;
}

/* The values of options whose target starts with kind ('r' reader, 'w' writer) into r or w. */
int tc_apply_targets(struct tc_run *run, struct cli *c, char kind, struct tach_reader *r,
			 struct tach_writer *w)
{
	for (size_t i = 0; i < c->n; i++) {
		const char *t = c->all[i]->target;
		if (!c->values[i] || !t || t[0] != kind)
			continue;
		if (c->owner[i] && c->owner[i] != run->output)
			return tc_usage_error(run->prog, "--%s applies to --format %s only",
					   c->all[i]->name, c->owner[i]->name);
		int status = tc_set_opt(run, r, w, t, c->values[i]);
		if (status)
			return status;
	}
	return 0;
}

/* The program's settings for folded input of kind 'r' or 'w' (see tc_prog.folded). */
int tc_folded_settings(struct tc_run *run, char kind, struct tach_reader *r,
			   struct tach_writer *w)
{
	for (const struct tc_setting *s = run->prog->folded; s && s->target; s++) {
		bool user = false;
		for (size_t i = 0; i < run->cli->n; i++)
			user |= run->cli->values[i] && run->cli->all[i]->target &&
				!strcmp(run->cli->all[i]->target, s->target);
		int status = s->target[0] != kind || user ? 0 : tc_set_opt(run, r, w, s->target, s->value);
		if (status)
			return status;
	}
	return 0;
}

/* --labels perf prints what stackcollapse-perf.pl prints, which counts perf's periods: a
 * perf reader then weighs samples by them; and which names an [unknown] symbol by its dso
 * alone unless --addrs: the reader then keeps one such frame per dso, not one per address;
 * and shows no source line: the perf.data reader then looks none up in DWARF. */
static int perf_label_weights(struct tc_run *run, struct tach_reader *r)
{
	/* (a drawing program relabels perf input with perf's labels unless told otherwise) */
	bool perf = false, addrs = false, relabels = false, styled = false;
	for (size_t i = 0; i < run->cli->n; i++) {
		const char *t = run->cli->all[i]->target, *v = run->cli->values[i];
		bool labels = t && (!strcmp(t, "w:labels") || !strcmp(t, "c:labels"));
		relabels |= t && !strcmp(t, "c:labels");
		styled |= labels && v;
		perf |= labels && v && !strcmp(v, "perf");
		addrs |= v && t && (!strcmp(t, "w:addrs") || !strcmp(t, "c:addrs"));
	}
	perf |= relabels && !styled;
	int status = perf ? tc_set_opt(run, r, NULL, "r:weight", "period") : 0;
	if (!status && perf && !addrs)
		status = tc_set_opt(run, r, NULL, "r:unknown-addresses", "no");
	/* (an option the perf.data reader alone takes: given where that reader may read) */
	const char *format = run->from ? run->from : run->prog->reader;
	if (!status && perf && (!strcmp(format, "auto") || strstr(format, "perfdata")))
		status = tc_set_opt(run, r, NULL, "r:source-lines", "no");
	return status;
}

static int make_readers(struct tc_run *run, const char *format, const char *among,
			struct tach_symbols *shared);

/* Every input's reader, of the --from format, with the reader options set. */
int tc_make_readers(struct tc_run *run)
{
	const char *format = run->from ? run->from : run->prog->reader;
	/* a program's reader "a,b": detection among those formats only */
	const char *among = strchr(format, ',') ? format : NULL;
	if (among)
		format = "auto";
	/* several inputs (captures of one machine, merged) load each binary once */
	struct tach_symbols *shared = run->ninputs > 1 ? tach_symbols_new() : NULL;
	if (run->ninputs > 1 && !shared) {
		fprintf(stderr, "%s: out of memory\n", run->prog->name);
		return 1;
	}
	int status = make_readers(run, format, among, shared);
	tach_symbols_free(shared);
	return status;
}

static int make_readers(struct tc_run *run, const char *format, const char *among,
			struct tach_symbols *shared)
{
	for (size_t i = 0; i < run->ninputs; i++) {
		struct tc_input *in = &run->inputs[i];
		in->r = tach_reader_new(format);
		if (!in->r || (among && tach_reader_set_option(in->r, "among", among)) ||
		    (shared && tach_reader_share_symbols(in->r, shared))) {
			fprintf(stderr, "%s: out of memory\n", run->prog->name);
			return 1;
		}
		tach_reader_set_warn(in->r, tc_on_warn, in);
		tc_default_max_samples(run->output, in->r);
		int status = 0;
		if (!strcmp(format, "auto") || !strcmp(format, "collapsed"))
			status = tc_folded_settings(run, 'r', in->r, NULL);
		if (!status && (!strcmp(format, "auto") || !strcmp(format, "perf")))
			status = perf_label_weights(run, in->r);
		/* folded stacks and flame graphs name functions, never addresses: perf input's
		 * memory then follows functions */
		if (!status && run->output->writer && (!strcmp(run->output->writer, "collapsed") ||
						       !strcmp(run->output->writer, "flamegraph")) &&
		    (!strcmp(format, "auto") || !strcmp(format, "perf")))
			status = tc_set_opt(run, in->r, NULL, "r:addresses", "no");
		/* pprof output keeps every sample type, callgrind's an event per type, folded
		 * stacks and flame graphs may show one (--value): a sample with none of the
		 * weight's type still has the others' values */
		if (!status && run->output->writer && (!strcmp(run->output->writer, "pprof") ||
						       !strcmp(run->output->writer, "callgrind") ||
						       !strcmp(run->output->writer, "collapsed") ||
						       !strcmp(run->output->writer, "speedscope") ||
						       !strcmp(run->output->writer, "flamegraph")) &&
		    (!strcmp(format, "auto") || !strcmp(format, "pprof")))
			status = tc_set_opt(run, in->r, NULL, "r:zero-weight", "yes");
		if (!status)
			status = tc_apply_targets(run, run->cli, 'r', in->r, NULL);
		if (status)
			return status;
	}
	return 0;
}
