/* tach-diff: what changed between two profiles, as folded stacks with two counts
 * ("stack base new", the form difffolded.pl writes and flamegraph.pl draws in red and blue).
 *
 * Each input goes through its own collapsed writer, so frames are labelled exactly as
 * tach-decode labels them (the same --labels, --full-paths and --no-thread-frames) and memory
 * follows distinct stacks (the writer's stack trie). The two folded texts wait in temporary
 * files, then are joined on the stack text, as difffolded.pl joins its two files: -s first
 * turns every hexadecimal number (0x...) into "0x...", -n scales BASE's counts to NEW's
 * total. The output is sorted by stack text (bytes), not in perl's hash order. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/runner.h"

/* One line of a folded text: the stack (inside the text it came from) and its counts. */
struct entry {
	const char *stack;
	size_t len;
	uint64_t n[2];
};

struct side {
	char *text;
	size_t len;
	uint64_t total;
};

struct diff {
	struct tc_run *run;
	struct side side[2];
	struct entry *e;
	size_t ne, cap;
	bool strip_hex;
};

static int oom(void)
{
	fprintf(stderr, "tach-diff: out of memory\n");
	return 1;
}

static int tmp_failed(void)
{
	fprintf(stderr, "tach-diff: temporary file: %s\n", strerror(errno));
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

/* The whole temporary file into memory. */
static int slurp(FILE *tmp, struct side *sd)
{
	long end;
	if (fseek(tmp, 0, SEEK_END) || (end = ftell(tmp)) < 0 || fseek(tmp, 0, SEEK_SET))
		return tmp_failed();
	sd->len = (size_t)end;
	sd->text = malloc(sd->len + 1);
	if (!sd->text)
		return oom();
	if (fread(sd->text, 1, sd->len, tmp) != sd->len)
		return tmp_failed();
	sd->text[sd->len] = 0;
	return 0;
}

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* -s, as difffolded.pl's s/0x[0-9a-fA-F]+/0x.../g on each stack. Over the whole text is the
 * same: a match cannot reach past a space or a line end, and counts are plain digits. The
 * text grows by 5/3 at most ("0x1" becomes "0x..."). */
static int strip_hex(struct side *sd)
{
	char *out = malloc(2 * sd->len + 1);
	if (!out)
		return oom();
	const char *s = sd->text;
	size_t o = 0, n = sd->len;
	for (size_t i = 0; i < n;) {
		if (s[i] == '0' && i + 2 < n && s[i + 1] == 'x' && is_hex(s[i + 2])) {
			for (i += 2; i < n && is_hex(s[i]); i++)
				;
			memcpy(out + o, "0x...", 5);
			o += 5;
		} else {
			out[o++] = s[i++];
		}
	}
	out[o] = 0;
	free(sd->text);
	sd->text = out;
	sd->len = o;
	return 0;
}

/* The lines "STACK COUNT" of side k as entries; the count is after the last space. */
static int parse(struct diff *d, int k)
{
	struct side *sd = &d->side[k];
	char *p = sd->text, *end = sd->text + sd->len;
	while (p < end) {
		char *nl = memchr(p, '\n', (size_t)(end - p));
		char *sp = nl ? nl : end;
		while (sp > p && sp[-1] != ' ')
			sp--;
		if (sp == p) { /* the collapsed writer ends every line with a count */
			fprintf(stderr, "tach-diff: internal error: a folded line without a count\n");
			return 1;
		}
		uint64_t n = strtoull(sp, NULL, 10);
		if (d->ne == d->cap) {
			size_t cap = d->cap ? 2 * d->cap : 256;
			struct entry *e = realloc(d->e, cap * sizeof(*e));
			if (!e)
				return oom();
			d->e = e;
			d->cap = cap;
		}
		d->e[d->ne++] = (struct entry){ p, (size_t)(sp - 1 - p), { k ? 0 : n, k ? n : 0 } };
		if (sd->total > UINT64_MAX - n) {
			fprintf(stderr, "tach-diff: %s: the total count is over 2^64\n",
				k ? "NEW" : "BASE");
			return 1;
		}
		sd->total += n;
		p = nl ? nl + 1 : end;
	}
	return 0;
}

static int entry_cmp(const void *pa, const void *pb)
{
	const struct entry *a = pa, *b = pb;
	int c = memcmp(a->stack, b->stack, a->len < b->len ? a->len : b->len);
	return c ? c : (a->len > b->len) - (a->len < b->len);
}

/* Equal stacks (after -s, or one stack in two inputs) into one entry. */
static void combine(struct diff *d)
{
	/* qsort's array must not be NULL, even when empty (two inputs with no sample) */
	if (d->ne)
		qsort(d->e, d->ne, sizeof(*d->e), entry_cmp);
	size_t o = 0;
	for (size_t i = 0; i < d->ne; i++) {
		if (o && !entry_cmp(&d->e[o - 1], &d->e[i])) {
			/* each side's sum is below its total, which fits */
			d->e[o - 1].n[0] += d->e[i].n[0];
			d->e[o - 1].n[1] += d->e[i].n[1];
		} else {
			d->e[o++] = d->e[i];
		}
	}
	d->ne = o;
}

/* -n: int(base * new_total / base_total) as perl computes it: an exact integer product
 * divided exactly when the quotient is whole, otherwise in double precision. */
static uint64_t scale(uint64_t n, uint64_t from, uint64_t to)
{
	if (!from)
		return n;
	if (!to || n <= UINT64_MAX / to) {
		uint64_t p = n * to;
		if (p % from == 0)
			return p / from;
		return (uint64_t)((double)p / (double)from);
	}
	return (uint64_t)((double)n * (double)to / (double)from);
}

static int print(struct diff *d, int outfd, bool normalize)
{
	FILE *f = fdopen(dup(outfd), "w");
	if (!f)
		return tc_output_failed(d->run);
	uint64_t t0 = d->side[0].total, t1 = d->side[1].total;
	for (size_t i = 0; i < d->ne; i++) {
		const struct entry *e = &d->e[i];
		uint64_t base = normalize && t0 != t1 ? scale(e->n[0], t0, t1) : e->n[0];
		fwrite(e->stack, 1, e->len, f);
		fprintf(f, " %" PRIu64 " %" PRIu64 "\n", base, e->n[1]);
	}
	int status = 0;
	if (fflush(f) || ferror(f))
		status = tc_output_failed(d->run);
	if (fclose(f) && !status)
		status = tc_output_failed(d->run);
	return status;
}

/* Input k through its own collapsed writer into memory: w for BASE, a second one for NEW. */
static int read_side(struct diff *d, struct tc_input *in, int k, struct tach_writer *w)
{
	int status = 0;
	struct tach_writer *own = k ? tc_writer_new(d->run, &status) : NULL;
	if (status)
		return status;
	FILE *tmp = tmpfile();
	if (!tmp)
		status = tmp_failed();
	else if (!(status = fold(d->run, in, own ? own : w, tmp)) && !(status = slurp(tmp, &d->side[k])))
		status = d->strip_hex ? strip_hex(&d->side[k]) : 0;
	if (tmp)
		fclose(tmp);
	tach_writer_free(own);
	return status ? status : parse(d, k);
}

static int diff(struct tc_run *run, struct tc_input *in, size_t n, struct tach_writer *w,
		int outfd)
{
	(void)n; /* two, the runner made sure */
	struct diff d = { .run = run, .strip_hex = tc_opt_value(run, "strip-hex") };
	int status = read_side(&d, &in[0], 0, w);
	if (!status)
		status = read_side(&d, &in[1], 1, w);
	if (!status) {
		combine(&d);
		status = print(&d, outfd, tc_opt_value(run, "normalize"));
	}
	if (!status)
		tc_report_counts(run);
	free(d.side[0].text);
	free(d.side[1].text);
	free(d.e);
	return status;
}

int main(int argc, char **argv)
{
	static const struct tc_opt opts[] = {
		{ "normalize", 'n', NULL, NULL, NULL,
		  "scale BASE's counts to NEW's total, as difffolded.pl -n does", NULL, false },
		{ "strip-hex", 's', NULL, NULL, NULL,
		  "write every hexadecimal number (0x...) in a stack as 0x..., as difffolded.pl -s does",
		  NULL, false },
		{ 0 },
	};
	static const struct tc_output outputs[] = {
		{ "collapsed", "collapsed", false, NULL, "folded stacks with two counts",
		  tc_collapsed_opts, 0 },
		{ 0 },
	};
	static const struct tc_many many = { 2, 2, "BASE NEW", diff };
	static const struct tc_prog prog = {
		.name = "tach-diff",
		.summary = "Compare two profiles: folded stacks with BASE's and NEW's counts.",
		.reader = "auto",
		.outputs = outputs,
		.opts = opts,
		.description = "Each line is 'STACK BASE_COUNT NEW_COUNT', sorted by stack, for "
			       "flamegraph.pl to draw a differential flame graph.",
		.many = &many,
	};
	return tc_main(argc, argv, &prog);
}
