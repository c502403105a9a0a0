/* The collapsed reader: line syntax, label styles, thread frames, counts, limits, errors. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "model/dict.h"
#include "core/handles.h"

struct warns {
	int n;
	char last[512];
	uint64_t pos;
};

static void on_warn(void *ctx, const char *msg, int kind, uint64_t pos)
{
	struct warns *w = ctx;
	w->n++;
	snprintf(w->last, sizeof(w->last), "%s", msg);
	w->pos = kind == TACH_POS_LINE ? pos : 0;
}

struct result {
	char text[8192]; /* one "tid iid ts weight status|frame;frame..." line per sample, root first */
	int rc;
	char err[512];
	uint64_t err_line;
	struct warns w;
	struct tach_meta meta;
};

static void frame_text(char *out, size_t cap, const struct tach_dict *d, uint32_t id)
{
	const struct tach_frame *f = tach_dict_frame(d, id);
	size_t fl, nl;
	const char *file = tach_dict_string(d, f->file, &fl);
	const char *func = tach_dict_string(d, f->func, &nl);
	if (f->line == -1)
		snprintf(out, cap, "%s|%s|-", file, func);
	else
		snprintf(out, cap, "%s|%s|%d", file, func, f->line);
}

/* Reads input with "key=value" options (NULL-terminated), rendering every sample. */
static struct result *run(const char *input, const char *const *opts)
{
	static struct result res;
	memset(&res, 0, sizeof(res));
	struct tach_reader *r = tach_reader_new("collapsed");
	tach_reader_set_warn(r, on_warn, &res.w);
	for (; opts && *opts; opts++) {
		char k[64];
		const char *eq = strchr(*opts, '=');
		snprintf(k, sizeof(k), "%.*s", (int)(eq - *opts), *opts);
		CHECK(tach_reader_set_option(r, k, eq + 1) == TACH_OK);
	}
	int rc = tach_reader_open_mem(r, input, strlen(input));
	/* frames are interned as lines are read */
	CHECK(!tach_reader_dict_complete(r));
	const struct tach_sample *s;
	size_t len = 0;
	while (rc == TACH_OK && (rc = tach_reader_next(r, &s)) == TACH_OK) {
		len += (size_t)snprintf(res.text + len, sizeof(res.text) - len, "%llu %u %llu %llu %u|",
					(unsigned long long)s->thread_id, s->interp_id,
					(unsigned long long)s->timestamp_us,
					(unsigned long long)s->weight, s->status);
		for (uint32_t i = s->depth; i > 0; i--) {
			char f[256];
			frame_text(f, sizeof(f), tach_reader_dict(r), s->frames[i - 1]);
			len += (size_t)snprintf(res.text + len, sizeof(res.text) - len, "%s%s", f,
						i > 1 ? ";" : "");
		}
		len += (size_t)snprintf(res.text + len, sizeof(res.text) - len, "\n");
	}
	res.rc = rc;
	int kind;
	const char *msg = tach_reader_error(r, &kind, &res.err_line);
	if (msg)
		snprintf(res.err, sizeof(res.err), "%s", msg);
	if (kind != TACH_POS_LINE)
		res.err_line = 0;
	res.meta = *tach_reader_meta(r);
	tach_reader_free(r);
	return &res;
}

#define OPTS(...) ((const char *const[]){ __VA_ARGS__, NULL })

static void test_line_syntax(void)
{
	/* CRLF, TAB before the count, blank lines, comments, trailing and leading blanks */
	struct result *r = run("a;b 2\r\n\n# comment\nc\t1  \r\n   d;e 1\n", NULL);
	CHECK_EQ_U64(r->rc, TACH_EOF);
	CHECK_EQ_STR(r->text, "0 0 0 2 4|~|a|-;~|b|-\n"
			      "0 0 2000 1 4|~|c|-\n"
			      "0 0 3000 1 4|~|d|-;~|e|-\n");
	CHECK_EQ_U64(r->w.n, 0);
	/* no final newline; spaces inside frames; trailing ';' dropped; empty frame kept */
	r = run("a x;b y 3\nq;;r; 1", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 3 4|~|a x|-;~|b y|-\n0 0 3000 1 4|~|q|-;~||-;~|r|-\n");
	CHECK_EQ_U64(r->w.n, 1); /* the empty frame */
	/* zero counts are skipped without a word */
	r = run("a 0\nb 1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|b|-\n");
	CHECK_EQ_U64(r->w.n, 0);
}

static void test_invalid_lines(void)
{
	struct result *r = run("a 1\nnocount\nb 1e3\nc 2\n 7\n", NULL);
	CHECK_EQ_U64(r->rc, TACH_EOF);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|a|-\n0 0 1000 2 4|~|c|-\n");
	CHECK_EQ_U64(r->w.n, 1);
	CHECK_EQ_U64(r->w.pos, 2);
	CHECK(strstr(r->w.last, "3 lines with invalid format") != NULL);
	r = run("a 1\nb 1e3\nc 2\n", OPTS("strict=yes"));
	CHECK_EQ_U64(r->rc, (uint64_t)TACH_E_FORMAT);
	CHECK_EQ_U64(r->err_line, 2);
	CHECK_EQ_STR(r->err, "the count is not a number");
	/* negative counts: skipped, one warning with the first line */
	r = run("a 1\nb -4\nc -1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|a|-\n");
	CHECK_EQ_U64(r->w.n, 1);
	CHECK_EQ_U64(r->w.pos, 2);
	CHECK(strstr(r->w.last, "2 lines with a negative count") != NULL);
}

static void test_counts(void)
{
	/* fractions round half up, with one warning */
	struct result *r = run("a 1.5\nb 2.49\nc 0.4\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 2 4|~|a|-\n0 0 2000 2 4|~|b|-\n");
	CHECK_EQ_U64(r->w.n, 1);
	CHECK_EQ_U64(r->w.pos, 1);
	/* factor scales exactly, no warning when the products are whole */
	r = run("a 1.5\nb 0.25\n", OPTS("factor=4"));
	CHECK_EQ_STR(r->text, "0 0 0 6 4|~|a|-\n0 0 6000 1 4|~|b|-\n");
	CHECK_EQ_U64(r->w.n, 0);
	r = run("a 12345\n", OPTS("factor=0.001"));
	CHECK_EQ_STR(r->text, "0 0 0 12 4|~|a|-\n");
	/* austin full mode: the metric picks a field */
	r = run("a 10,1,-300\nb 20,0,50\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 10 4|~|a|-\n0 0 10000 20 4|~|b|-\n");
	r = run("a 10,1,-300\nb 20,0,50\n", OPTS("metric=3"));
	CHECK_EQ_STR(r->text, "0 0 0 50 4|~|b|-\n");
	r = run("a 10,1\n", OPTS("metric=3", "strict=1"));
	CHECK_EQ_U64(r->rc, (uint64_t)TACH_E_FORMAT);
	/* interval and max-samples */
	r = run("a 3\nb 1\n", OPTS("interval=250"));
	CHECK_EQ_STR(r->text, "0 0 0 3 4|~|a|-\n0 0 750 1 4|~|b|-\n");
	CHECK_EQ_U64(r->meta.interval_us, 250);
	r = run("a 3\nb 2\n", OPTS("max-samples=4"));
	CHECK_EQ_U64(r->rc, (uint64_t)TACH_E_LIMIT);
	CHECK_EQ_U64(r->err_line, 2);
	CHECK(strstr(r->err, "more than 4 samples") != NULL);
	r = run("a 99999999999999999999999\n", NULL);
	CHECK_EQ_U64(r->rc, (uint64_t)TACH_E_LIMIT);
	CHECK_EQ_U64(r->err_line, 1);
	/* the limit counts the column kept, not the one dropped */
	r = run("a 4 1\nb 2 3\n", OPTS("max-samples=4"));
	CHECK_EQ_U64(r->rc, TACH_EOF);
	r = run("a 4 1\nb 2 3\n", OPTS("max-samples=3"));
	CHECK_EQ_U64(r->rc, (uint64_t)TACH_E_LIMIT);
	CHECK_EQ_U64(r->err_line, 2);
}

static void test_differential(void)
{
	const char *in = "a;b 3 5\nc 2 0\n";
	struct result *r = run(in, NULL);
	CHECK_EQ_STR(r->text, "0 0 0 5 4|~|a|-;~|b|-\n");
	r = run(in, OPTS("diff=first"));
	CHECK_EQ_STR(r->text, "0 0 0 3 4|~|a|-;~|b|-\n0 0 3000 2 4|~|c|-\n");
	/* decided by the first line: a one-count line in a differential file is invalid... */
	r = run("a 1 2\nfoo 7\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 2 4|~|a|-\n");
	CHECK_EQ_U64(r->w.n, 1);
	/* ...and a frame ending in a number is a frame when the first line has one count */
	r = run("x 1\na;foo 2 10\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|x|-\n0 0 1000 10 4|~|a|-;~|foo 2|-\n");
	r = run(in, OPTS("diff=none"));
	CHECK_EQ_STR(r->text, "0 0 0 5 4|~|a|-;~|b 3|-\n");
}

static void test_labels(void)
{
	/* CPython: tid root, basename:func:line, bare special frames */
	struct result *r = run("tid:7;threading.py:run:1012;<GC> 2\ntid:9;m.py:f:0 1\n", NULL);
	CHECK_EQ_STR(r->text, "7 0 0 2 4|threading.py|run|1012;~|<GC>|-\n"
			      "9 0 2000 1 4|m.py|f|0\n");
	/* austin 3: P/T root frames, full paths, Windows drives, "::" never splits */
	r = run("P42;T1:7f3a;C:\\app\\x.py:main:3;/usr/lib/a.py:N::f:9;kernel:sys_read:0 5\n", NULL);
	/* (austin's counts are µs: a line is one record of its time, weight 1) */
	CHECK_EQ_STR(r->text, "32570 1 0 1 4|C:\\app\\x.py|main|3;/usr/lib/a.py|N::f|9;kernel|sys_read|0\n");
	r = run("P42;T123;a.py:f:1 1\n", NULL);
	CHECK_EQ_STR(r->text, "123 42 0 1 4|a.py|f|1\n");
	/* austin 2: L<line> pseudo-frames fold into the frame before */
	r = run("P1;T2;/a/x.py:<module>;L3;/a/x.py:f;L9 5\n", NULL);
	CHECK_EQ_STR(r->text, "2 1 0 1 4|/a/x.py|<module>|3;/a/x.py|f|9\n");
	/* py-spy: process and thread frames (the command line may hold ';'), func (file:line) */
	r = run("process 12:\"python a;b.py\";thread (0x7F00): MainThread;<module> (a.py:3);"
		"f (/usr/lib/x.py) 2\nthread (77);g (b.py:4) 1\n", NULL);
	CHECK_EQ_STR(r->text, "32512 12 0 2 4|a.py|<module>|3;/usr/lib/x.py|f|-\n"
			      "77 0 2000 1 4|b.py|g|4\n");
	/* austin 1 */
	r = run("Thread 0x10;a.py:f:1 1\n", NULL);
	CHECK_EQ_STR(r->text, "16 0 0 1 4|a.py|f|1\n");
	/* --keep-thread-frames */
	r = run("tid:7;a.py:f:1 1\n", OPTS("keep-thread-frames=yes"));
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|tid:7|-;a.py|f|1\n");
	/* a thread frame alone: an empty stack of that thread */
	r = run("tid:7 3\n", NULL);
	CHECK_EQ_STR(r->text, "7 0 0 3 4|\n");
	/* perf: nothing looks like a path, every label is a bare name */
	r = run("perf;main;do_syscall_64_[k];std::vec::push:12 3\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 3 4|~|perf|-;~|main|-;~|do_syscall_64_[k]|-;~|std::vec::push:12|-\n");
	/* auto needs a path; --labels=colon does not */
	r = run("foo:bar:12 1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|foo:bar:12|-\n");
	r = run("foo:bar:12 1\n", OPTS("labels=colon"));
	CHECK_EQ_STR(r->text, "0 0 0 1 4|foo|bar|12\n");
	r = run("x.py:f:1;g (y.py:2) 1\n", OPTS("labels=raw"));
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|x.py:f:1|-;~|g (y.py:2)|-\n");
	/* the style is decided once: in a py-spy file a colon label stays a name */
	r = run("f (a.py:1);g (b.py:2);z.py:h:3 1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|a.py|f|1;b.py|g|2;~|z.py:h:3|-\n");
	r = run("f (a.py:1);z.py:h:3 1\n", OPTS("labels=pyspy"));
	CHECK_EQ_STR(r->text, "0 0 0 1 4|a.py|f|1;~|z.py:h:3|-\n");
	/* C++ signatures are not py-spy labels */
	r = run("f (a.py:1);foo(int) 1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|a.py|f|1;~|foo(int)|-\n");
}

static void test_metadata(void)
{
	struct result *r = run("# austin: 3.6.0\n# interval: 100\n# mode: wall\n# python: 3.11.4\n"
			       "P1;T0:1;a.py:f:1 200\n# duration: 5\n", NULL);
	/* austin counts microseconds: one record of 200 µs, the interval weighing nothing */
	CHECK_EQ_STR(r->text, "1 0 0 1 4|a.py|f|1\n");
	CHECK_EQ_U64(r->meta.interval_us, 100);
	CHECK_EQ_U64(r->meta.py_major, 3);
	CHECK_EQ_U64(r->meta.py_minor, 11);
	CHECK_EQ_U64(r->meta.py_micro, 4);
	/* the option wins over the file */
	r = run("# interval: 100\na 2\n", OPTS("interval=7"));
	CHECK_EQ_U64(r->meta.interval_us, 7);
	CHECK_EQ_STR(r->text, "0 0 0 2 4|~|a|-\n");
}

static void test_limits_and_options(void)
{
	struct result *r = run("a;b;c;d 1\n", OPTS("max-depth=3"));
	CHECK_EQ_U64(r->rc, (uint64_t)TACH_E_LIMIT);
	CHECK_EQ_U64(r->err_line, 1);
	struct tach_reader *rd = tach_reader_new("collapsed");
	CHECK(tach_reader_set_option(rd, "labels", "bogus") == TACH_E_USAGE);
	CHECK(tach_reader_set_option(rd, "diff", "third") == TACH_E_USAGE);
	CHECK(tach_reader_set_option(rd, "metric", "0") == TACH_E_USAGE);
	CHECK(tach_reader_set_option(rd, "factor", "0") == TACH_E_USAGE);
	CHECK(tach_reader_set_option(rd, "factor", "-2") == TACH_E_USAGE);
	CHECK(tach_reader_set_option(rd, "factor", "1e3") == TACH_E_USAGE);
	CHECK(tach_reader_set_option(rd, "interval", "0") == TACH_E_USAGE);
	CHECK(tach_reader_set_option(rd, "nope", "1") == TACH_E_USAGE);
	tach_reader_free(rd);
}

/* Lines beyond the read-ahead window, a style decided late, and many labels. */
static void test_long_input(void)
{
	size_t cap = 8 << 20, len = 0;
	char *buf = malloc(cap);
	for (int i = 0; i < 5000; i++)
		len += (size_t)snprintf(buf + len, cap - len, "bad line\n");
	for (int i = 0; i < 20000; i++)
		len += (size_t)snprintf(buf + len, cap - len, "tid:%d;m%d.py:f%d:%d;n.py:g:1 %d\n", i % 3,
					i % 700, i % 900, i % 50, 1 + i % 4);
	buf[len] = 0;
	struct tach_reader *r = tach_reader_new("collapsed");
	struct warns w = { 0 };
	tach_reader_set_warn(r, on_warn, &w);
	CHECK(tach_reader_open_mem(r, buf, len) == TACH_OK);
	const struct tach_sample *s;
	uint64_t n = 0, lines = 0, ts = 0;
	bool ok = true;
	while (tach_reader_next(r, &s) == TACH_OK) {
		const struct tach_frame *f = tach_dict_frame(tach_reader_dict(r), s->frames[1]);
		size_t fl;
		const char *file = tach_dict_string(tach_reader_dict(r), f->file, &fl);
		char want[32];
		snprintf(want, sizeof(want), "m%llu.py", (unsigned long long)(lines % 700));
		ok &= s->depth == 2 && s->thread_id == lines % 3 && !strcmp(file, want) &&
		      s->timestamp_us == ts && f->line == (int32_t)(lines % 50);
		ts += s->weight * 1000;
		n += s->weight;
		lines++;
	}
	CHECK(ok);
	CHECK_EQ_U64(lines, 20000);
	CHECK_EQ_U64(n, 5000 * (1 + 2 + 3 + 4));
	CHECK_EQ_U64(w.n, 1);
	CHECK_EQ_U64(w.pos, 1);
	tach_reader_free(r);
	free(buf);
}

/* stackcollapse-perf.pl --pid and --tid roots: threads, the process name kept as a frame */
static void test_perf_roots(void)
{
	struct result *r = run("iperf-27409/28741;recv 1\nrun-28796/28796;sh 2\n", NULL);
	CHECK_EQ_STR(r->text, "28741 27409 0 1 4|~|iperf|-;~|recv|-\n"
			      "28796 28796 1000 2 4|~|run|-;~|sh|-\n");
	r = run("sort-?/4078;main 1\n", NULL);
	CHECK_EQ_STR(r->text, "4078 0 0 1 4|~|sort|-;~|main|-\n");
	/* a name may hold '-' and '/': split at the last ones */
	r = run("jbd2/sda1-8-311/311;k 1\n", NULL);
	CHECK_EQ_STR(r->text, "311 311 0 1 4|~|jbd2/sda1-8|-;~|k|-\n");
	/* --pid: a '?' or a name with two pids says so */
	r = run("dd-?;read 1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|dd|-;~|read|-\n");
	r = run("foo-12;a 1\nfoo-13;b 1\n", NULL);
	CHECK_EQ_STR(r->text, "12 12 0 1 4|~|foo|-;~|a|-\n13 13 1000 1 4|~|foo|-;~|b|-\n");
	/* ...else "gcc-12" is a name; and every root of the first lines must have the form */
	r = run("gcc-12;a 1\ngcc-12;b 1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|gcc-12|-;~|a|-\n0 0 1000 1 4|~|gcc-12|-;~|b|-\n");
	r = run("x-1/2;a 1\nswapper;b 1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|x-1/2|-;~|a|-\n0 0 1000 1 4|~|swapper|-;~|b|-\n");
	r = run("x-1/2;a 1\n", OPTS("keep-thread-frames=yes"));
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|x-1/2|-;~|a|-\n");
	/* not a perf root: "-" first, or no number */
	r = run("-5;a 1\nfoo-;b 1\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|-5|-;~|a|-\n0 0 1000 1 4|~|foo-|-;~|b|-\n");
}

/* austin 1.x: "Thread ID" roots, "func (file);L<n>" pairs, -f's three counts, -C */
static void test_austin1(void)
{
	struct result *r = run("Thread 7f0a;<module> (x.py);L3;f (/a/y.py);L9 2000\n", NULL);
	CHECK_EQ_STR(r->text, "32522 0 0 1 4|x.py|<module>|3;/a/y.py|f|9\n");
	CHECK_EQ_U64(r->meta.interval_us, 0); /* none guessed */
	/* a pair whose first half is no label: two bare frames; a label alone: py-spy's */
	r = run("Thread 1;a (x.py);L3;b (y.py);L4;weird;L5;c (z.py) 100\n",
		OPTS("count-unit=samples"));
	CHECK_EQ_STR(r->text, "1 0 0 100 4|x.py|a|3;y.py|b|4;~|weird|-;~|L5|-;z.py|c|-\n");
	r = run("Process 77;Thread 5;a (x.py);L3 1000\n", OPTS("count-unit=samples"));
	CHECK_EQ_STR(r->text, "5 77 0 1000 4|x.py|a|3\n");
	/* -f: time, memory allocated, memory freed; metric picks */
	const char *full = "Thread 1;a (x.py);L3 1500 8 0\nThread 1;b (x.py);L4 500 0 -4\n";
	r = run(full, OPTS("count-unit=samples"));
	CHECK_EQ_STR(r->text, "1 0 0 1500 4|x.py|a|3\n1 0 1500000 500 4|x.py|b|4\n");
	r = run(full, OPTS("metric=2"));
	CHECK_EQ_STR(r->text, "1 0 0 8 4|x.py|a|3\n");
	r = run(full, OPTS("metric=4"));
	CHECK_EQ_STR(r->text, "");
	/* three counts with a positive last one are a frame and a differential line */
	r = run("a 1 2 3\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 3 4|~|a 1|-\n");
}

/* count-unit: what a count is */
static void test_count_units(void)
{
	const char *in = "a 3000\nb 1000\n";
	struct result *r = run(in, OPTS("count-unit=samples"));
	CHECK_EQ_STR(r->text, "0 0 0 3000 4|~|a|-\n0 0 3000000 1000 4|~|b|-\n");
	CHECK_EQ_U64(r->w.n, 1); /* they look like times */
	r = run(in, NULL);
	CHECK_EQ_STR(r->text, "0 0 0 3 4|~|a|-\n0 0 3 1 4|~|b|-\n");
	CHECK_EQ_U64(r->meta.interval_us, 1);
	CHECK_EQ_U64(r->w.n, 1); /* the guess is said */
	r = run(in, OPTS("count-unit=ms"));
	CHECK_EQ_STR(r->text, "0 0 0 3 4|~|a|-\n0 0 3000000 1 4|~|b|-\n");
	CHECK_EQ_U64(r->w.n, 0);
	/* a perf period that is no whole number of µs is still one sample */
	r = run("a 20202020\nb 10101010\n", NULL);
	CHECK_EQ_STR(r->text, "0 0 0 2 4|~|a|-\n0 0 20202 1 4|~|b|-\n");
	CHECK_EQ_U64(r->meta.interval_us, 10101);
	/* no common period: a record of its time each, the clock after its time */
	r = run("a 2000\nb 4000\nc 2999\n", OPTS("count-unit=ns"));
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|a|-\n0 0 2 1 4|~|b|-\n0 0 6 1 4|~|c|-\n");
	CHECK_EQ_U64(r->w.n, 0);
	/* a given interval weighs nothing: nothing rounds, nothing to say */
	r = run("a 2000\nb 4000\nc 2999\n", OPTS("count-unit=ns", "interval=2"));
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|a|-\n0 0 2 1 4|~|b|-\n0 0 6 1 4|~|c|-\n");
	CHECK_EQ_U64(r->w.n, 0);
	/* fractions of a time count: 1.5 ms, the next record after it */
	r = run("a 1.5\nb 0.5\n", OPTS("count-unit=ms", "interval=500"));
	CHECK_EQ_STR(r->text, "0 0 0 1 4|~|a|-\n0 0 1500 1 4|~|b|-\n");
	CHECK_EQ_U64(r->w.n, 0);
	/* austin's memory mode is not time */
	r = run("# mode: memory\nP1;T2;a.py:f:1 4096\n", NULL);
	CHECK_EQ_STR(r->text, "2 1 0 4096 4|a.py|f|1\n");
	struct tach_reader *bad = tach_reader_new("collapsed");
	CHECK(tach_reader_set_option(bad, "count-unit", "s") == TACH_E_USAGE);
	tach_reader_free(bad);
}

int main(void)
{
	test_line_syntax();
	test_invalid_lines();
	test_counts();
	test_differential();
	test_labels();
	test_metadata();
	test_perf_roots();
	test_austin1();
	test_count_units();
	test_limits_and_options();
	test_long_input();
	return CHECK_DONE();
}
