/* Options, input and output handling shared by every program: read a file or stdin, write
 * stdout or -o FILE (through a temporary file renamed on success), filter samples, and
 * report problems as "prog: file: offset N: what is wrong" with exit 1 (data, I/O) or 2
 * (usage). */
#include "runner.h"
#include "pipe.h"
#include "progress.h"

#include <errno.h>
#include <stdarg.h>
#include <fcntl.h>
#include <getopt.h>
#include <limits.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define MAX_OPTS 64
#define MAX_THREADS 64

struct cli;

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
	bool status_idle;
	bool has_status;
	uint64_t from_us, to_us;
	uint64_t interval_us;   /* the reader's, for the time span of a weighted sample */
	bool filtering;
	uint64_t read_samples, kept_samples;
	struct tach_sample copy;
	bool copy_cut;          /* clip gave copy less weight than the sample read */
	struct tach_sample_ext copy_ext;
};

/* The temporary output path, for the signal handler to remove. */
static char tmp_path[PATH_MAX];
static volatile sig_atomic_t tmp_live;

static void on_signal(int sig)
{
	if (tmp_live)
		unlink(tmp_path);
	signal(sig, SIG_DFL);
	raise(sig);
}

/* A mapped input file that another process shortens faults when its vanished pages are
 * touched. That is an I/O error like any other: say so, naming the input that shrank (the
 * one whose size is now below what it was at open), drop the partial output, exit 1. The
 * handler only calls async-signal-safe functions: fstat, write, unlink. */
static const struct tc_run *shrink_run;

static void say(const char *s)
{
	ssize_t k = write(STDERR_FILENO, s, strlen(s));
	(void)k;
}

static void on_sigbus(int sig)
{
	(void)sig;
	if (tmp_live)
		unlink(tmp_path);
	const struct tc_run *run = shrink_run;
	const char *name = NULL;
	for (size_t i = 0; i < run->ninputs && !name; i++) {
		struct stat st;
		const struct tc_input *in = &run->inputs[i];
		if (in->fd >= 0 && fstat(in->fd, &st) == 0 && st.st_size < in->size_at_open)
			name = in->name;
	}
	say(run->prog->name);
	say(": ");
	if (name || run->ninputs == 1) {
		say(name ? name : run->in_name);
		say(": read error: the file became shorter while it was read\n");
	} else {
		say("read error: an input file became shorter while it was read\n");
	}
	_exit(1);
}

static void catch_shrinking_input(const struct tc_run *run)
{
	shrink_run = run;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

static const struct tc_opt common_opts[] = {
	{ "output", 'o', "FILE", NULL, NULL, "write to FILE instead of standard output", NULL, false },
	{ "force", 'f', NULL, NULL, NULL, "write binary output to a terminal", NULL, false },
	{ "quiet", 'q', NULL, NULL, NULL, "do not print warnings (nor the progress line)", NULL, false },
	{ "progress", 0, NULL, NULL, NULL,
	  "show a progress line on standard error from the start, terminal or not", NULL, false },
	{ "no-progress", 0, NULL, NULL, NULL,
	  "never show the progress line (by default shown on a terminal after a second)", NULL,
	  false },
	{ "verbose", 'v', NULL, NULL, NULL, "print what was read and written", NULL, false },
	{ "strict", 0, NULL, "r:strict", "yes", "treat recoverable problems in the input as errors", NULL, false },
	{ "max-depth", 0, "N", "r:max-depth", NULL, "reject stacks deeper than N frames", NULL, false },
	{ "max-input", 0, "SIZE", "r:max-input", NULL,
	  "hold at most SIZE bytes of a whole input, after gzip (K, M, G suffixes; default 512M)",
	  NULL, false },
	{ "thread", 0, "TID", NULL, NULL, "keep only samples of thread TID (repeatable)", NULL, true },
	{ "status", 0, "LIST", NULL, NULL,
	  "keep samples with any listed state: gil cpu unknown gil-wait exception main idle; "
	  "no-NAME drops samples in that state (comma-separated)", NULL, false },
	{ "from-us", 0, "T", NULL, NULL, "keep samples at or after timestamp T (microseconds)", NULL, false },
	{ "to-us", 0, "T", NULL, NULL, "keep samples before timestamp T (microseconds)", NULL, false },
	{ "help", 'h', NULL, NULL, NULL, "show this help and exit", NULL, false },
	{ "version", 'V', NULL, NULL, NULL, "show version and exit", NULL, false },
	{ 0 },
};

/* Programs whose reader is "auto" detect their input's format; --from names it instead. */
static const struct tc_opt input_opts[] = {
	{ "from", 0, "FORMAT", NULL, NULL,
	  "read the input as FORMAT instead of detecting it ('auto' detects; 'help' lists the "
	  "formats)", NULL,
	  false },
	{ "sample-index", 0, "TYPE", "r:sample-index", NULL,
	  "pprof input: the sample type (name or number) whose values are the weights "
	  "(default: the profile's default type, else its last)", NULL, false },
	{ "count-unit", 0, "UNIT", "r:count-unit", NULL,
	  "folded input: what a count is, samples or a time in ns, us or ms (default auto)",
	  "auto samples ns us ms", false },
	{ 0 },
};

const struct tc_opt tc_gperf_opts[] = {
	{ "binary-path", 0, "DIR", "r:binary-path", NULL,
	  "gperftools input: also look for binaries in DIR (repeatable; TACHFMT_BINARY_PATH "
	  "adds more)", NULL, true },
	{ "no-symbolize", 0, NULL, "r:symbolize", "no",
	  "gperftools input: keep addresses; do not read binaries", NULL, false },
	{ "names", 0, "STYLE", "r:names", NULL,
	  "gperftools input: function names: full (demangled, with scope, templates and "
	  "parameters; default), short (DWARF's short name) or mangled", "full short mangled",
	  false },
	{ 0 },
};

static bool detects(const struct tc_prog *p)
{
	return !strcmp(p->reader, "auto");
}

static const struct tc_opt tach_writer_opts[] = {
	{ "compression", 0, "KIND", "w:compression", NULL, "sample compression (default zstd)",
	  "zstd none", false },
	{ "level", 0, "N", "w:level", NULL, "zstd compression level, 1-22 (default 5)", NULL, false },
	TC_MAX_SAMPLES_OPT_DEFAULT("4294967295"),
	{ 0 },
};

/* Outputs that store every sample (TACH, the samples text, Gecko, Sampler) carry
 * --max-samples: a count or a run of N samples costs them N, so they stop at a default
 * (the option's value). Outputs that aggregate pay per record and have no limit. */
static void default_max_samples(const struct tc_output *out, struct tach_reader *r)
{
	for (const struct tc_opt *o = out->opts; o && o->name; o++)
		if (!strcmp(o->name, "max-samples")) {
			tach_reader_set_option(r, "max-samples", o->value);
			return;
		}
}

const struct tc_opt tc_collapsed_opts[] = {
	{ "labels", 0, "STYLE", "w:labels", NULL,
	  "collapsed frame labels: cpython (file:func:line), pyspy (func (file:line)) or perf "
	  "(stackcollapse-perf.pl's)", "cpython pyspy perf", false },
	{ "perf-root", 0, "ROOT", "w:perf-root", NULL,
	  "--labels perf: root frame comm (default), comm-pid or comm-pid/tid", "comm pid tid",
	  false },
	{ "annotate", 0, "WHAT", "w:annotate", NULL,
	  "--labels perf: mark kernel frames _[k], JIT frames _[j], or all", "kernel jit all",
	  false },
	{ "addrs", 0, NULL, "w:addrs", "yes",
	  "--labels perf: unknown symbols as [dso <address>]", NULL, false },
	{ "full-paths", 0, NULL, "w:full-paths", "yes", "collapsed: keep full file paths", NULL, false },
	{ "no-thread-frames", 0, NULL, "w:thread-frames", "no",
	  "collapsed: no tid:N root frame; merge threads", NULL, false },
	{ 0 },
};

const struct tc_output tc_tach_output[] = {
	{ "tach", "tach", true, NULL, "TACH binary", tach_writer_opts, 0 },
	{ 0 },
};

/* For programs that may read pprof input, whose weights may be bytes or objects. */
static const struct tc_opt tach_values_writer_opts[] = {
	{ "compression", 0, "KIND", "w:compression", NULL, "sample compression (default zstd)",
	  "zstd none", false },
	{ "level", 0, "N", "w:level", NULL, "zstd compression level, 1-22 (default 5)", NULL, false },
	TC_MAX_SAMPLES_OPT_DEFAULT("4294967295"),
	{ "counts-as-samples", 0, NULL, "w:counts-as-samples", "yes",
	  "pprof input whose weights are not a time (bytes, objects): write each unit as one "
	  "sample instead of refusing", NULL, false },
	{ 0 },
};

const struct tc_output tc_tach_values_output[] = {
	{ "tach", "tach", true, NULL, "TACH binary", tach_values_writer_opts, 0 },
	{ 0 },
};

/* Every option a program accepts, in --help order: its own, its outputs' writers', then the
 * common ones. owner[i] is the output an option belongs to, NULL for the others. */
static size_t gather_opts(const struct tc_prog *p, const struct tc_opt **all,
			  const struct tc_output **owner, size_t max)
{
	size_t n = 0;
	for (const struct tc_opt *o = p->opts; o && o->name && n < max; o++, n++) {
		all[n] = o;
		owner[n] = NULL;
	}
	for (const struct tc_output *out = p->outputs; out->name; out++)
		for (const struct tc_opt *o = out->opts; o && o->name && n < max; o++, n++) {
			all[n] = o;
			owner[n] = out;
		}
	for (const struct tc_opt *o = input_opts; detects(p) && o->name && n < max; o++, n++) {
		all[n] = o;
		owner[n] = NULL;
	}
	for (const struct tc_opt *o = tc_gperf_opts; detects(p) && o->name && n < max; o++, n++) {
		all[n] = o;
		owner[n] = NULL;
	}
	for (const struct tc_opt *o = common_opts; o->name && n < max; o++, n++) {
		all[n] = o;
		owner[n] = NULL;
	}
	return n;
}

static void usage_line(FILE *f, const struct tc_prog *p)
{
	fprintf(f, "Usage: %s [OPTION]... %s\n", p->name, p->many ? p->many->args : "[FILE|-]");
}

/* The formats the library reads, space-separated, in detection order. */
static void readable_formats(char *buf, size_t cap)
{
	const char *name;
	int rd;
	buf[0] = 0;
	for (size_t i = 0; (name = tach_format_name(i, &rd, NULL)); i++) {
		size_t l = strlen(buf);
		if (rd)
			snprintf(buf + l, cap - l, "%s%s", l ? " " : "", name);
	}
}

static void print_opt(FILE *f, const struct tc_opt *o)
{
	char left[64];
	if (o->short_name)
		snprintf(left, sizeof(left), "-%c, --%s%s%s", o->short_name, o->name,
			 o->arg ? " " : "", o->arg ? o->arg : "");
	else
		snprintf(left, sizeof(left), "    --%s%s%s", o->name, o->arg ? " " : "",
			 o->arg ? o->arg : "");
	fprintf(f, "  %-24s %s", left, o->help);
	if (o->choices)
		fprintf(f, " (%s)", o->choices);
	fputc('\n', f);
}

static void help(const struct tc_prog *p)
{
	usage_line(stdout, p);
	printf("%s\n\n", p->summary);
	if (p->description)
		printf("%s\n\n", p->description);
	if (p->many)
		printf("Reads every FILE; - is standard input (once at most).\n\nOptions:\n");
	else
		printf("Reads FILE, or standard input when FILE is - or absent.\n\nOptions:\n");
	if (p->outputs[1].name) {
		char choices[256] = "";
		for (const struct tc_output *o = p->outputs; o->name; o++) {
			strncat(choices, o->name, sizeof(choices) - strlen(choices) - 2);
			if (o[1].name)
				strncat(choices, " ", sizeof(choices) - strlen(choices) - 1);
		}
		struct tc_opt fo = { "format", 'F', "FMT", NULL, NULL, "output format, default",
				     choices, false };
		char h[128];
		snprintf(h, sizeof(h), "output format (default %s)", p->outputs[0].name);
		fo.help = h;
		print_opt(stdout, &fo);
	}
	const struct tc_opt *all[MAX_OPTS];
	const struct tc_output *owner[MAX_OPTS];
	size_t n = gather_opts(p, all, owner, MAX_OPTS);
	for (size_t i = 0; i < n; i++) {
		struct tc_opt o = *all[i];
		char formats[256];
		if (!strcmp(o.name, "from")) {
			readable_formats(formats, sizeof(formats));
			o.choices = formats;
		}
		print_opt(stdout, &o);
	}
	printf("\nExit status: 0 success, 1 invalid input or I/O error, 2 usage error.\n");
}

static int usage_error(const struct tc_prog *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int usage_error(const struct tc_prog *p, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", p->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", p->name);
	return 2;
}

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

static void on_warn(void *ctx, const char *msg, int kind, uint64_t pos)
{
	const struct tc_input *in = ctx;
	if (in->run->quiet)
		return;
	tc_progress_clear(&in->run->progress);
	fprintf(stderr, "%s: ", in->run->prog->name);
	print_pos(stderr, in->name, kind, pos);
	fprintf(stderr, "warning: %s\n", msg);
}

static void on_writer_warn(void *ctx, const char *msg, int kind, uint64_t pos)
{
	struct tc_run *run = ctx;
	if (run->quiet)
		return;
	tc_progress_clear(&run->progress);
	fprintf(stderr, "%s: %s: warning: %s\n", run->prog->name, run->out_name, msg);
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

static bool parse_u64(const char *s, uint64_t *out)
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

static int parse_status(struct tc_run *run, const char *list)
{
	static const struct { const char *name; uint8_t bit; } names[] = {
		{ "gil", TACH_STATUS_HAS_GIL }, { "cpu", TACH_STATUS_ON_CPU },
		{ "unknown", TACH_STATUS_UNKNOWN }, { "gil-wait", TACH_STATUS_GIL_REQUESTED },
		{ "exception", TACH_STATUS_HAS_EXCEPTION }, { "main", TACH_STATUS_MAIN_THREAD },
	};
	char buf[256];
	if (strlen(list) >= sizeof(buf))
		return -1;
	strcpy(buf, list);
	for (char *save, *tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		bool neg = !strncmp(tok, "no-", 3);
		const char *n = neg ? tok + 3 : tok;
		if (!strcmp(n, "idle") && !neg) {
			run->status_idle = true;
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
		if (s->status & run->status_none)
			return false;
		bool idle = !(s->status & (TACH_STATUS_HAS_GIL | TACH_STATUS_ON_CPU));
		if ((run->status_any || run->status_idle) &&
		    !((s->status & run->status_any) || (run->status_idle && idle)))
			return false;
	}
	return true;
}

/* The part of s (weight N: N samples one interval apart) inside [from_us, to_us), into
 * run->copy; false when none of it is. */
static bool clip(struct tc_run *run, const struct tach_sample *s)
{
	uint64_t t = s->timestamp_us, w = s->weight, iv = run->interval_us;
	if (t < run->from_us) {
		if (!iv)
			return false;
		uint64_t skip = (run->from_us - t + iv - 1) / iv;
		if (skip >= w)
			return false;
		t += skip * iv;
		w -= skip;
	}
	if (t >= run->to_us)
		return false;
	if (w > 1 && iv) {
		uint64_t fit = (run->to_us - t - 1) / iv + 1; /* samples at t + k iv < to_us */
		if (fit < w)
			w = fit;
	}
	run->copy = *s;
	run->copy.timestamp_us = t;
	run->copy.weight = w;
	run->copy_cut = w != s->weight;
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
		if (keep(run, s) && clip(run, s)) {
			run->kept_samples += run->copy.weight;
			*out = &run->copy;
			return TACH_OK;
		}
	}
}

/* tc_next as the reading thread's source. */
static int next_kept(void *ctx, struct tach_reader *r, const struct tach_sample **out)
{
	return tc_next(ctx, r, out);
}

/* Opens the output: stdout, or a temporary file beside -o FILE. */
static int open_output(struct tc_run *run, int *fd)
{
	if (!run->out_name || !strcmp(run->out_name, "-")) {
		run->out_name = "<stdout>";
		if (run->output->binary && !run->force && isatty(STDOUT_FILENO)) {
			fprintf(stderr,
				"%s: refusing to write binary output to a terminal; use -o FILE, a "
				"redirection, or --force\n", run->prog->name);
			return 2;
		}
		*fd = STDOUT_FILENO;
		return 0;
	}
	/* A device or a pipe named with -o is written in place: renaming a temporary file over
	 * it would replace /dev/null or a FIFO with a regular file. */
	struct stat st;
	if (stat(run->out_name, &st) == 0 && !S_ISREG(st.st_mode)) {
		if (S_ISDIR(st.st_mode)) {
			fprintf(stderr, "%s: %s: is a directory\n", run->prog->name, run->out_name);
			return 1;
		}
		*fd = open(run->out_name, O_WRONLY | O_CLOEXEC);
		if (*fd < 0) {
			fprintf(stderr, "%s: %s: %s\n", run->prog->name, run->out_name,
				strerror(errno));
			return 1;
		}
		run->in_place = true;
		return 0;
	}
	int n = snprintf(tmp_path, sizeof(tmp_path), "%s.XXXXXX", run->out_name);
	if (n < 0 || (size_t)n >= sizeof(tmp_path)) {
		fprintf(stderr, "%s: %s: name too long\n", run->prog->name, run->out_name);
		return 1;
	}
	signal(SIGINT, on_signal);
	signal(SIGTERM, on_signal);
	signal(SIGHUP, on_signal);
	signal(SIGPIPE, on_signal);
	*fd = mkstemp(tmp_path);
	if (*fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", run->prog->name, run->out_name, strerror(errno));
		return 1;
	}
	tmp_live = 1;
	/* mkstemp makes 0600; an output file gets the usual umask-derived mode. */
	mode_t um = umask(0);
	umask(um);
	fchmod(*fd, 0666 & ~um);
	return 0;
}

static int finish_output(struct tc_run *run, int fd, int status)
{
	if (fd == STDOUT_FILENO || run->in_place) {
		if (close(fd) && status == 0 && errno != EINTR) {
			fprintf(stderr, "%s: %s: %s\n", run->prog->name, run->out_name, strerror(errno));
			return 1;
		}
		return status;
	}
	if (status == 0 && close(fd)) {
		fprintf(stderr, "%s: %s: %s\n", run->prog->name, run->out_name, strerror(errno));
		status = 1;
	} else if (status) {
		close(fd);
	}
	if (status == 0 && rename(tmp_path, run->out_name)) {
		fprintf(stderr, "%s: %s: %s\n", run->prog->name, run->out_name, strerror(errno));
		status = 1;
	}
	if (status)
		unlink(tmp_path);
	tmp_live = 0;
	return status;
}

static int set_opt(struct tc_run *run, struct tach_reader *r, struct tach_writer *w,
		   const char *target, const char *value)
{
	int rc;
	const char *err;
	if (!strncmp(target, "r:", 2)) {
		rc = tach_reader_set_option(r, target + 2, value);
		err = rc ? tach_reader_error(r, NULL, NULL) : NULL;
	} else {
		if (!w)
			return usage_error(run->prog, "--format %s takes no output options",
					   run->output->name);
		rc = tach_writer_set_option(w, target + 2, value);
		err = rc ? tach_writer_error(w) : NULL;
	}
	if (rc)
		return usage_error(run->prog, "%s", err ? err : tach_strerror(rc));
	return 0;
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
	    tc_pipe_start(&pipe, next_kept, run, r))
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

static void build_getopt(const struct tc_prog *prog, struct cli *c)
{
	c->n = gather_opts(prog, c->all, c->owner, MAX_OPTS);
	c->shorts[0] = 0;
	for (size_t i = 0; i < c->n; i++) {
		c->lopts[i] = (struct option){ c->all[i]->name,
					       c->all[i]->arg ? required_argument : no_argument,
					       NULL, (int)(256 + i) };
		if (c->all[i]->short_name) {
			size_t l = strlen(c->shorts);
			c->shorts[l] = c->all[i]->short_name;
			c->shorts[l + 1] = 0;
			if (c->all[i]->arg)
				strcat(c->shorts, ":");
		}
	}
	size_t nl = c->n;
	if (prog->outputs[1].name) {
		c->lopts[nl++] = (struct option){ "format", required_argument, NULL, 'F' };
		strcat(c->shorts, "F:");
	}
	c->lopts[nl] = (struct option){ 0 };
}

/* --from FORMAT: a format the library reads, or "help" for the list. -1 to go on, else
 * the exit status. */
static int take_from(struct tc_run *run, const char *arg)
{
	char formats[256];
	readable_formats(formats, sizeof(formats));
	if (!strcmp(arg, "help")) {
		for (char *save, *t = strtok_r(formats, " ", &save); t; t = strtok_r(NULL, " ", &save))
			puts(t);
		return fflush(stdout) || ferror(stdout) ? 1 : 0;
	}
	if (!strcmp(arg, "auto")) {
		run->from = NULL;
		return -1;
	}
	const char *name;
	int rd;
	for (size_t i = 0; (name = tach_format_name(i, &rd, NULL)); i++)
		if (rd && !strcmp(name, arg)) {
			run->from = arg;
			return -1;
		}
	return usage_error(run->prog, "unknown --from %s (one of: %s, or auto)", arg, formats);
}

/* The options the runner handles itself (output, messages, filters); -1 when name is not
 * one of them, else 0 or a usage error's exit status. */
static int take_common(struct tc_run *run, const char *name, const char *arg)
{
	const struct tc_prog *prog = run->prog;
	uint64_t v;
	if (!strcmp(name, "output")) {
		run->out_name = arg;
	} else if (!strcmp(name, "force")) {
		run->force = true;
	} else if (!strcmp(name, "quiet")) {
		run->quiet = true;
	} else if (!strcmp(name, "progress")) {
		run->progress.mode = TC_PROGRESS_ON;
	} else if (!strcmp(name, "no-progress")) {
		run->progress.mode = TC_PROGRESS_OFF;
	} else if (!strcmp(name, "verbose")) {
		run->verbose = true;
	} else if (!strcmp(name, "thread")) {
		if (!parse_u64(arg, &v))
			return usage_error(prog, "--thread needs a thread id, not '%s'", arg);
		if (run->nthreads == MAX_THREADS)
			return usage_error(prog, "at most %d --thread options", MAX_THREADS);
		run->threads[run->nthreads++] = v;
		run->filtering = true;
	} else if (!strcmp(name, "status")) {
		if (parse_status(run, arg))
			return usage_error(prog, "bad --status list '%s'", arg);
		run->filtering = true;
	} else if (!strcmp(name, "from-us") || !strcmp(name, "to-us")) {
		if (!parse_u64(arg, &v))
			return usage_error(prog, "--%s needs a number, not '%s'", name, arg);
		*(name[0] == 'f' ? &run->from_us : &run->to_us) = v;
		run->filtering = true;
	} else {
		return -1;
	}
	return 0;
}

/* Keeps the value of option idx; a repeatable one adds to what it had. */
static int keep_value(struct cli *c, size_t idx, const char *arg)
{
	const struct tc_opt *o = c->all[idx];
	if (!o->repeatable || !c->values[idx]) {
		c->values[idx] = o->arg ? arg : (o->value ? o->value : "yes");
		return 0;
	}
	size_t l = strlen(c->values[idx]) + strlen(arg) + 2;
	char *j = malloc(l);
	if (!j)
		return 1;
	snprintf(j, l, "%s:%s", c->values[idx], arg);
	free(c->joined[idx]);
	c->joined[idx] = j;
	c->values[idx] = j;
	return 0;
}

/* One option from getopt (its code ch); -1 to go on, else the exit status. */
static int take_option(struct tc_run *run, struct cli *c, int ch, char **argv)
{
	const struct tc_prog *prog = run->prog;
	if (ch == '?') {
		if (optopt && optopt < 256)
			return usage_error(prog, "invalid option -%c", optopt);
		return usage_error(prog, "invalid option %s", argv[optind - 1]);
	}
	if (ch == ':')
		return usage_error(prog, "option %s needs a value", argv[optind - 1]);
	if (ch == 'F') {
		const struct tc_output *o;
		for (o = prog->outputs; o->name && strcmp(o->name, optarg); o++)
			;
		if (!o->name)
			return usage_error(prog, "unknown --format %s", optarg);
		run->output = o;
		return -1;
	}
	size_t idx = SIZE_MAX;
	if (ch >= 256)
		idx = (size_t)(ch - 256);
	else
		for (size_t i = 0; i < c->n; i++)
			if (c->all[i]->short_name == ch)
				idx = i;
	if (idx == SIZE_MAX)
		return usage_error(prog, "invalid option");
	const char *name = c->all[idx]->name;
	if (!strcmp(name, "help")) {
		help(prog);
		return fflush(stdout) || ferror(stdout) ? 1 : 0;
	}
	if (!strcmp(name, "version")) {
		printf("%s (tachfmt) %s\nlibtachfmt %s\n", prog->name, TACHFMT_VERSION, tach_version());
		return fflush(stdout) || ferror(stdout) ? 1 : 0;
	}
	if (!strcmp(name, "from"))
		return take_from(run, optarg);
	int rc = take_common(run, name, optarg);
	if (rc >= 0)
		return rc ? rc : -1;
	c->typed[idx] = true;
	return keep_value(c, idx, optarg) ? 1 : -1;
}

/* TACHFMT_BINARY_PATH: directories searched after those of --binary-path, as one more
 * --binary-path given last; not for a --from format that reads no gperftools profile. */
static int env_binary_path(const struct tc_run *run, struct cli *c)
{
	const char *env = getenv("TACHFMT_BINARY_PATH");
	if (run->from && strcmp(run->from, "gperf"))
		return 0;
	for (size_t i = 0; env && *env && i < c->n; i++)
		if (c->all[i]->target && !strcmp(c->all[i]->target, "r:binary-path"))
			return keep_value(c, i, env);
	return 0;
}

/* For on_sigbus: a regular file's size at open. */
static void note_size(struct tc_input *in)
{
	struct stat st;
	if (fstat(in->fd, &st) == 0 && S_ISREG(st.st_mode))
		in->size_at_open = st.st_size;
}

/* One input: a path, or stdin for "-"; its name is kept for messages. 0 or the exit status. */
static int open_one_input(struct tc_run *run, struct tc_input *in, const char *path,
			  bool *stdin_taken)
{
	in->run = run;
	if (!strcmp(path, "-")) {
		if (*stdin_taken)
			return usage_error(run->prog, "standard input (-) given more than once");
		*stdin_taken = true;
		in->name = "<stdin>";
		in->fd = STDIN_FILENO;
		note_size(in);
		return 0;
	}
	in->name = path;
	in->fd = open(path, O_RDONLY | O_CLOEXEC);
	if (in->fd < 0) {
		fprintf(stderr, "%s: %s: %s\n", run->prog->name, path, strerror(errno));
		return 1;
	}
	note_size(in);
	return 0;
}

/* The input files named on the command line (standard input when a one-input program is
 * given none), all opened before any output exists. 0 or the exit status. */
static int open_inputs(struct tc_run *run, int nargs, char **args)
{
	const struct tc_prog *p = run->prog;
	size_t n = (size_t)nargs, min = p->many ? p->many->min : 0, max = p->many ? p->many->max : 1;
	if (max == 1 && n > 1)
		return usage_error(p, "one input file at most");
	if (n < min || (max && n > max)) {
		if (min == max)
			return usage_error(p, "%zu input files needed, not %zu", min, n);
		if (!max)
			return usage_error(p, "%zu or more input files needed, not %zu", min, n);
		return usage_error(p, "%zu to %zu input files needed, not %zu", min, max, n);
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

static void close_inputs(struct tc_run *run)
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
static int apply_targets(struct tc_run *run, struct cli *c, char kind, struct tach_reader *r,
			 struct tach_writer *w)
{
	for (size_t i = 0; i < c->n; i++) {
		const char *t = c->all[i]->target;
		if (!c->values[i] || !t || t[0] != kind)
			continue;
		if (c->owner[i] && c->owner[i] != run->output)
			return usage_error(run->prog, "--%s applies to --format %s only",
					   c->all[i]->name, c->owner[i]->name);
		int status = set_opt(run, r, w, t, c->values[i]);
		if (status)
			return status;
	}
	return 0;
}

/* The program's settings for folded input of kind 'r' or 'w' (see tc_prog.folded). */
static int folded_settings(struct tc_run *run, char kind, struct tach_reader *r,
			   struct tach_writer *w)
{
	for (const struct tc_setting *s = run->prog->folded; s && s->target; s++) {
		bool user = false;
		for (size_t i = 0; i < run->cli->n; i++)
			user |= run->cli->values[i] && run->cli->all[i]->target &&
				!strcmp(run->cli->all[i]->target, s->target);
		int status = s->target[0] != kind || user ? 0 : set_opt(run, r, w, s->target, s->value);
		if (status)
			return status;
	}
	return 0;
}

/* --labels perf prints what stackcollapse-perf.pl prints, which counts perf's periods: a
 * perf reader then weighs samples by them. */
static int perf_label_weights(struct tc_run *run, struct tach_reader *r)
{
	for (size_t i = 0; i < run->cli->n; i++) {
		const char *t = run->cli->all[i]->target;
		if (run->cli->values[i] && t && !strcmp(t, "w:labels") &&
		    !strcmp(run->cli->values[i], "perf"))
			return set_opt(run, r, NULL, "r:weight", "period");
	}
	return 0;
}

/* Every input's reader, of the --from format, with the reader options set. */
static int make_readers(struct tc_run *run)
{
	const char *format = run->from ? run->from : run->prog->reader;
	for (size_t i = 0; i < run->ninputs; i++) {
		struct tc_input *in = &run->inputs[i];
		in->r = tach_reader_new(format);
		if (!in->r) {
			fprintf(stderr, "%s: out of memory\n", run->prog->name);
			return 1;
		}
		tach_reader_set_warn(in->r, on_warn, in);
		default_max_samples(run->output, in->r);
		int status = 0;
		if (!strcmp(format, "auto") || !strcmp(format, "collapsed"))
			status = folded_settings(run, 'r', in->r, NULL);
		if (!status && (!strcmp(format, "auto") || !strcmp(format, "perf")))
			status = perf_label_weights(run, in->r);
		/* pprof output keeps every sample type: a sample with none of the weight's type
		 * still has the others' values */
		if (!status && run->output->writer && !strcmp(run->output->writer, "pprof") &&
		    (!strcmp(format, "auto") || !strcmp(format, "pprof")))
			status = set_opt(run, in->r, NULL, "r:zero-weight", "yes");
		if (!status)
			status = apply_targets(run, run->cli, 'r', in->r, NULL);
		if (status)
			return status;
	}
	return 0;
}

struct tach_writer *tc_writer_new(struct tc_run *run, int *status)
{
	struct tach_writer *w = tach_writer_new(run->output->writer);
	if (!w) {
		fprintf(stderr, "%s: out of memory\n", run->prog->name);
		*status = 1;
		return NULL;
	}
	tach_writer_set_warn(w, on_writer_warn, run);
	if ((*status = apply_targets(run, run->cli, 'w', NULL, w))) {
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

int tc_output_failed(struct tc_run *run)
{
	fprintf(stderr, "%s: %s: %s\n", run->prog->name, run->out_name, strerror(errno));
	return 1;
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
 * (a detecting reader hands each option only to the formats that take it). */
static void warn_unused(struct tc_run *run, const struct tc_input *in)
{
	const char *format = tach_reader_format(in->r);
	for (size_t i = 0; i < run->cli->n && !run->quiet; i++) {
		const char *t = run->cli->all[i]->target;
		if (!run->cli->typed[i] || !t || t[0] != 'r')
			continue;
		struct tach_reader *r = tach_reader_new(format);
		bool took = r && tach_reader_set_option(r, t + 2, run->cli->values[i]) == TACH_OK;
		tach_reader_free(r);
		if (!took)
			fprintf(stderr, "%s: %s: warning: --%s does not apply to %s input; ignored\n",
				run->prog->name, in->name, run->cli->all[i]->name, format);
	}
}

/* The progress line's total: the samples every input declares (TACH's header), or 0
 * when one does not. -q silences the automatic line, not a --progress. */
static void start_progress(struct tc_run *run)
{
	uint64_t total = 0;
	for (size_t i = 0; i < run->ninputs; i++) {
		uint64_t n = tach_reader_meta(run->inputs[i].r)->sample_count;
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

/* Opens every reader on its input, then reads them into the output. */
static int read_inputs(struct tc_run *run, struct tach_writer *w, int outfd)
{
	for (size_t i = 0; i < run->ninputs; i++) {
		struct tc_input *in = &run->inputs[i];
		if (tach_reader_open_fd(in->r, in->fd) < 0)
			return tc_reader_failed(run, in->r);
		if (detects(run->prog) && !run->from)
			warn_unused(run, in);
		if (run->verbose && detects(run->prog))
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
		    (status = folded_settings(run, 'w', NULL, w)))
			return status;
		status = run->output->handler ? run_handler(run, run->inputs[0].r, outfd)
					      : convert(run, run->inputs[0].r, w, outfd);
	}
	tc_progress_end(&run->progress, run->read_samples);
	return status;
}

/* The inputs into w, which compresses on worker threads when a second CPU is ours: its
 * output is the same bytes with any number of them (lib/gzip.c). */
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
	int status = make_readers(run), outfd = -1;
	if (!status && run->output->writer)
		w = tc_writer_new(run, &status);
	else if (!status)
		status = apply_targets(run, run->cli, 'w', NULL, NULL);
	if (!status && !(status = open_output(run, &outfd)))
		status = finish_output(run, outfd, write_through(run, w, outfd));
	tach_writer_free(w);
	return status;
}

int tc_main(int argc, char **argv, const struct tc_prog *prog)
{
	struct tc_run run = { .prog = prog, .output = &prog->outputs[0], .to_us = UINT64_MAX };
	struct cli c;
	memset(&c, 0, sizeof(c));
	run.cli = &c;
	build_getopt(prog, &c);
	/* Past a file-size limit (ulimit -f), write fails with EFBIG, an I/O error reported as
	 * any other, instead of SIGXFSZ killing the program with its temporary file left. */
	signal(SIGXFSZ, SIG_IGN);
	int ch, status = -1;
	opterr = 0;
	while (status < 0 && (ch = getopt_long(argc, argv, c.shorts, c.lopts, NULL)) != -1)
		status = take_option(&run, &c, ch, argv);
	if (status < 0 && env_binary_path(&run, &c))
		status = 1;
	if (status < 0 && !(status = open_inputs(&run, argc - optind, argv + optind))) {
		catch_shrinking_input(&run);
		status = run_io(&run);
	}
	close_inputs(&run);
	for (size_t i = 0; i < c.n; i++)
		free(c.joined[i]);
	return status;
}
