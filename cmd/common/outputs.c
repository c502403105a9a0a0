/* The runner's output: standard output (refused for binary output on a terminal without
 * --force) or -o FILE through a temporary file renamed on success, removed on failure and
 * on a fatal signal, and a mapped input that shrinks reported as the read error it is. */
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

void tc_catch_shrinking_input(const struct tc_run *run)
{
	shrink_run = run;
	struct sigaction sa;
	memset(&sa, 0, sizeof(sa));
	sa.sa_handler = on_sigbus;
	sigemptyset(&sa.sa_mask);
	sigaction(SIGBUS, &sa, NULL);
}

/* Opens the output: stdout, or a temporary file beside -o FILE. */
int tc_open_output(struct tc_run *run, int *fd)
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

int tc_finish_output(struct tc_run *run, int fd, int status)
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
