/* The runner's options: the tables every program shares, the command line read into a
 * run (getopt), --help, usage errors, and an option's value set on a reader or writer. */
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
	  "hold at most SIZE bytes of a whole input, after gzip (K, M, G suffixes; default 512M); "
	  "a text stream must give a sample within SIZE bytes",
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
	  "read the input as FORMAT instead of detecting it ('auto' detects it; 'help' lists "
	  "the formats)", NULL,
	  false },
	{ "sample-index", 0, "TYPE", "r:sample-index", NULL,
	  "pprof input: the sample type (name or number) whose values are the weights "
	  "(default: the profile's default type, else its last)", NULL, false },
	{ "count-unit", 0, "UNIT", "r:count-unit", NULL,
	  "folded input: what a count is, samples or a time in ns, us or ms (default auto)",
	  "auto samples ns us ms", false },
	{ "event", 0, "NAME", "r:event", NULL,
	  "perf script and perf.data input: read the samples of event NAME (default: the first event); JFR "
	  "input: the events to read, comma-separated: cpu, native, wall, cputime, alloc, lock, "
	  "samples or JFR event names (default samples: cpu, native, wall and cputime)", NULL,
	  false },
	{ "total", 0, NULL, "r:total", "yes",
	  "JFR input: weigh allocations by their bytes and locks by their delays (jfrconv's "
	  "--total), not by events", NULL, false },
	{ 0 },
};

const struct tc_opt tc_gperf_opts[] = {
	{ "binary-path", 0, "DIR", "r:binary-path", NULL,
	  "gperftools, perf.data and V8 tick log input: also look for binaries in DIR "
	  "(repeatable; TACHFMT_BINARY_PATH adds more)", NULL, true },
	{ "no-symbolize", 0, NULL, "r:symbolize", "no",
	  "gperftools, perf.data and V8 tick log input: do not read binaries; name frames by "
	  "module and file offset (V8 tick logs: by library)", NULL, false },
	{ "names", 0, "STYLE", "r:names", NULL,
	  "gperftools input: function names: full (demangled, with scope, templates and "
	  "parameters; default), short (DWARF's short name) or mangled", "full short mangled",
	  false },
	{ 0 },
};

bool tc_detects(const struct tc_prog *p)
{
	return !strcmp(p->reader, "auto");
}

static const struct tc_opt tach_writer_opts[] = {
	{ "compression", 0, "KIND", "w:compression", NULL, "sample compression (default zstd)",
	  "zstd none", false },
	{ "level", 0, "N", "w:level", NULL, "zstd compression level (default 5)", "1-22", false },
	TC_MAX_SAMPLES_OPT_DEFAULT("4294967295"),
	{ 0 },
};

/* Outputs that store every sample (TACH, the samples text, Gecko, Sampler) carry
 * --max-samples: a count or a run of N samples costs them N, so they stop at a default
 * (the option's value). Outputs that aggregate pay per record and have no limit. */
void tc_default_max_samples(const struct tc_output *out, struct tach_reader *r)
{
	for (const struct tc_opt *o = out->opts; o && o->name; o++)
		if (!strcmp(o->name, "max-samples")) {
			tach_reader_set_option(r, "max-samples", o->value);
			return;
		}
}

/* The collapsed writer's label options, their targets prefixed with P: "w:" where the
 * program's output is that writer, "c:" where a drawing program relabels its input with it. */
#define LABEL_OPTS(P)                                                                        \
	{ "labels", 0, "STYLE", P "labels", NULL,                                            \
	  "collapsed frame labels: cpython (file:func:line), pyspy (func (file:line)), perf " \
	  "(stackcollapse-perf.pl's) or async-profiler (jfrconv's)",                           \
	  "cpython pyspy perf async-profiler", false },                                        \
	{ "perf-root", 0, "ROOT", P "perf-root", NULL,                                       \
	  "--labels perf: root frame comm (default), comm-pid or comm-pid/tid", "comm pid tid", \
	  false },                                                                             \
	{ "annotate", 0, "WHAT", P "annotate", NULL,                                         \
	  "--labels perf: mark kernel frames _[k], JIT frames _[j], or all", "kernel jit all", \
	  false },                                                                             \
	{ "addrs", 0, NULL, P "addrs", "yes",                                                \
	  "--labels perf: unknown symbols as [dso <address>]", NULL, false },                 \
	{ "threads", 0, NULL, P "ap-threads", "yes",                                         \
	  "--labels async-profiler: a [NAME tid=N] root frame per thread (jfrconv's --threads)", \
	  NULL, false },                                                                       \
	{ "lines", 0, NULL, P "ap-lines", "yes",                                             \
	  "--labels async-profiler: METHOD:LINE (jfrconv's --lines)", NULL, false },          \
	{ "simple", 0, NULL, P "ap-simple", "yes",                                           \
	  "--labels async-profiler: class names without their package (jfrconv's --simple)",  \
	  NULL, false },                                                                       \
	{ "dot", 0, NULL, P "ap-dot", "yes",                                                 \
	  "--labels async-profiler: class names with dots, java.util.HashMap (jfrconv's --dot)", \
	  NULL, false },                                                                       \
	{ "full-paths", 0, NULL, P "full-paths", "yes", "collapsed: keep full file paths", NULL, \
	  false }

const struct tc_opt tc_collapsed_opts[] = {
	LABEL_OPTS("w:"),
	{ "no-thread-frames", 0, NULL, "w:thread-frames", "no",
	  "collapsed: no tid:N root frame; merge threads", NULL, false },
	{ "value", 0, "NAME", "w:value", NULL,
	  "collapsed: what a line counts: count (samples, default), time (us) or a pprof "
	  "sample type", NULL, false },
	{ 0 },
};

const struct tc_opt tc_relabel_opts[] = {
	LABEL_OPTS("c:"),
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
	{ "level", 0, "N", "w:level", NULL, "zstd compression level (default 5)", "1-22", false },
	TC_MAX_SAMPLES_OPT_DEFAULT("4294967295"),
	{ "counts-as-samples", 0, NULL, "w:counts-as-samples", "yes",
	  "pprof input whose weights are not a time (bytes, objects): write each unit as one "
	  "sample instead of refusing", NULL, false },
	{ 0 },
};

const struct tc_output tc_tach_values_output[] = {
	{ "tach", "tach", true, NULL, "TACH binary", tach_values_writer_opts, 0 },
	{ "pprof", "pprof", true, NULL,
	  "pprof profile.proto, gzip-compressed (each sample's own time and values kept)", NULL, 1 },
	{ "samples", "samples", false, NULL,
	  "every sample, lossless text (each sample's own time kept)", NULL, 0 },
	{ 0 },
};

size_t tc_gather_opts(const struct tc_prog *p, const struct tc_opt **all,
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
	for (const struct tc_opt *o = input_opts; tc_detects(p) && o->name && n < max; o++, n++) {
		all[n] = o;
		owner[n] = NULL;
	}
	for (const struct tc_opt *o = tc_gperf_opts; tc_detects(p) && o->name && n < max; o++, n++) {
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
	fprintf(f, "Usage: %s [OPTION]... %s\n", p->name, p->many ? p->many->args : "[FILE]...");
}

void tc_readable_formats(char *buf, size_t cap)
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

/* A fixed list of operands by name ("BASE NEW": "Reads BASE and NEW"). */
static void reads_operands(const char *args)
{
	const char *sp = strrchr(args, ' ');
	if (sp)
		printf("Reads %.*s and %s", (int)(sp - args), args, sp + 1);
	else
		printf("Reads %s", args);
	printf("; - is standard input (once at most).\n\nOptions:\n");
}

static void help(const struct tc_prog *p)
{
	usage_line(stdout, p);
	printf("%s\n\n", p->summary);
	if (p->description)
		printf("%s\n\n", p->description);
	if (p->many && !p->many->max)
		printf("Reads every FILE; - is standard input (once at most).\n\nOptions:\n");
	else if (p->many)
		reads_operands(p->many->args);
	else
		printf("Reads FILE, or standard input when FILE is - or absent; several FILEs are "
		       "one profile, merged as tach-merge merges them (by timestamp, each "
		       "sample's own time and values kept).\n\nOptions:\n");
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
	size_t n = tc_gather_opts(p, all, owner, MAX_OPTS);
	for (size_t i = 0; i < n; i++) {
		struct tc_opt o = *all[i];
		char formats[1024];
		if (!strcmp(o.name, "from")) {
			tc_readable_formats(formats, sizeof(formats));
			o.choices = formats;
		}
		print_opt(stdout, &o);
	}
	printf("\nExit status: 0 success, 1 invalid input or I/O error, 2 usage error.\n");
}

int tc_usage_error(const struct tc_prog *p, const char *fmt, ...)
{
	va_list ap;
	fprintf(stderr, "%s: ", p->name);
	va_start(ap, fmt);
	vfprintf(stderr, fmt, ap);
	va_end(ap);
	fprintf(stderr, "\nTry '%s --help' for more information.\n", p->name);
	return 2;
}

void tc_build_getopt(const struct tc_prog *prog, struct cli *c)
{
	c->n = tc_gather_opts(prog, c->all, c->owner, MAX_OPTS);
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
	char formats[1024];
	tc_readable_formats(formats, sizeof(formats));
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
	return tc_usage_error(run->prog, "unknown --from %s (one of: %s, or auto)", arg, formats);
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
		if (!tc_parse_u64(arg, &v))
			return tc_usage_error(prog, "--thread needs a thread id, not '%s'", arg);
		if (run->nthreads == MAX_THREADS)
			return tc_usage_error(prog, "at most %d --thread options", MAX_THREADS);
		run->threads[run->nthreads++] = v;
		run->filtering = true;
	} else if (!strcmp(name, "status")) {
		if (tc_parse_status(run, arg))
			return tc_usage_error(prog, "bad --status list '%s'", arg);
		run->filtering = true;
	} else if (!strcmp(name, "from-us") || !strcmp(name, "to-us")) {
		if (!tc_parse_u64(arg, &v))
			return tc_usage_error(prog, "--%s needs a number, not '%s'", name, arg);
		*(name[0] == 'f' ? &run->from_us : &run->to_us) = v;
		run->filtering = true;
	} else {
		return -1;
	}
	return 0;
}

/* Keeps the value of option idx; a repeatable one adds to what it had. */
int tc_keep_value(struct cli *c, size_t idx, const char *arg)
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
int tc_take_option(struct tc_run *run, struct cli *c, int ch, char **argv)
{
	const struct tc_prog *prog = run->prog;
	if (ch == '?') {
		if (optopt && optopt < 256)
			return tc_usage_error(prog, "invalid option -%c", optopt);
		return tc_usage_error(prog, "invalid option %s", argv[optind - 1]);
	}
	if (ch == ':')
		return tc_usage_error(prog, "option %s needs a value", argv[optind - 1]);
	if (ch == 'F') {
		const struct tc_output *o;
		for (o = prog->outputs; o->name && strcmp(o->name, optarg); o++)
			;
		if (!o->name)
			return tc_usage_error(prog, "unknown --format %s", optarg);
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
		return tc_usage_error(prog, "invalid option");
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
	return tc_keep_value(c, idx, optarg) ? 1 : -1;
}

int tc_set_opt(struct tc_run *run, struct tach_reader *r, struct tach_writer *w,
	       const char *target, const char *value)
{
	int rc;
	const char *err;
	if (!strncmp(target, "r:", 2)) {
		rc = tach_reader_set_option(r, target + 2, value);
		err = rc ? tach_reader_error(r, NULL, NULL) : NULL;
	} else {
		if (!w)
			return tc_usage_error(run->prog, "--format %s takes no output options",
					   run->output->name);
		rc = tach_writer_set_option(w, target + 2, value);
		err = rc ? tach_writer_error(w) : NULL;
	}
	if (rc)
		return tc_usage_error(run->prog, "%s", err ? err : tach_strerror(rc));
	return 0;
}
