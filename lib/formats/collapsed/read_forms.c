/* The collapsed reader's producer forms (see collapsed/read.c for the format): the thread
 * pseudo-frames each producer puts at the root of a stack (tid:N, austin's P<pid>;T<tid>,
 * py-spy's process and thread frames, austin 1's, stackcollapse-perf.pl's --pid and --tid
 * roots) and the frame label styles (py-spy, file:func:line, austin 1 and 2): how each is
 * recognized in the first lines, decided once per file, and taken apart. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "formats/collapsed/read.h"

static bool parse_hex_u64(const char *p, size_t n, uint64_t *v)
{
	if (!n || n > 16)
		return false;
	uint64_t x = 0;
	for (size_t i = 0; i < n; i++) {
		int h = tachi_hexval(p[i]);
		if (h < 0)
			return false;
		x = x << 4 | (uint64_t)h;
	}
	*v = x;
	return true;
}

/* A thread id as profilers print them: 0x-prefixed hex, decimal, or bare hex. */
static bool parse_id(const char *p, size_t n, uint64_t *v)
{
	if (n > 2 && p[0] == '0' && (p[1] == 'x' || p[1] == 'X'))
		return parse_hex_u64(p + 2, n - 2, v);
	return tachi_parse_dec(p, n, UINT64_MAX, v) || parse_hex_u64(p, n, v);
}

/* ---- thread pseudo-frames ---- */

static bool has_prefix(const char *p, size_t n, const char *pre)
{
	size_t k = strlen(pre);
	return n >= k && !memcmp(p, pre, k);
}

static bool is_tid_frame(const char *p, size_t n, uint64_t *tid)
{
	return has_prefix(p, n, "tid:") && tachi_parse_dec(p + 4, n - 4, UINT64_MAX, tid);
}

static bool is_austin_p(const char *p, size_t n, uint64_t *pid)
{
	return n > 1 && p[0] == 'P' && tachi_parse_dec(p + 1, n - 1, UINT64_MAX, pid);
}

/* T<tid> or T<iid>:<tid> */
static bool is_austin_t(const char *p, size_t n, uint64_t *tid, uint64_t *iid, bool *has_iid)
{
	if (n < 2 || p[0] != 'T')
		return false;
	const char *c = memchr(p + 1, ':', n - 1);
	*has_iid = c != NULL;
	if (!c)
		return parse_id(p + 1, n - 1, tid);
	return tachi_parse_dec(p + 1, (size_t)(c - p - 1), UINT64_MAX, iid) && *iid <= UINT32_MAX &&
	       parse_id(c + 1, n - (size_t)(c + 1 - p), tid);
}

/* py-spy: thread (ID) or thread (ID): NAME */
static bool is_pyspy_thread(const char *p, size_t n, uint64_t *tid)
{
	if (!has_prefix(p, n, "thread ("))
		return false;
	const char *c = memchr(p + 8, ')', n - 8);
	if (!c)
		return false;
	size_t rest = n - (size_t)(c + 1 - p);
	if (rest && !(rest >= 2 && c[1] == ':' && c[2] == ' '))
		return false;
	return parse_id(p + 8, (size_t)(c - p - 8), tid);
}

/* py-spy: process PID:"command line", where the command line may hold ';' */
static bool is_pyspy_process(const char *p, const char *end, uint64_t *pid, const char **next)
{
	const char *nx;
	const char *fe = frame_end(p, end, &nx);
	size_t n = (size_t)(fe - p);
	if (!has_prefix(p, n, "process "))
		return false;
	const char *c = memchr(p + 8, ':', n - 8);
	if (!c || c + 1 >= fe || c[1] != '"' || !tachi_parse_dec(p + 8, (size_t)(c - p - 8), UINT64_MAX, pid))
		return false;
	/* the closing quote ends a frame; the command line may have split it */
	while (!(fe > c + 1 && fe[-1] == '"')) {
		if (!nx)
			return false;
		fe = frame_end(nx, end, &nx);
	}
	*next = nx;
	return true;
}

static bool is_austin1_thread(const char *p, size_t n, uint64_t *tid)
{
	return has_prefix(p, n, "Thread ") && parse_id(p + 7, n - 7, tid);
}

/* austin 1 with -C: "Process PID;" before the thread */
static bool is_austin1_process(const char *p, size_t n, uint64_t *pid)
{
	return has_prefix(p, n, "Process ") && tachi_parse_dec(p + 8, n - 8, UINT64_MAX, pid);
}

static const char *last_of(const char *p, size_t n, char c)
{
	while (n > 0)
		if (p[--n] == c)
			return p + n;
	return NULL;
}

/* stackcollapse-perf.pl's root with --pid, "COMM-PID", or --tid, "COMM-PID/TID", where PID
 * is '?' when perf script did not print it: *comm_len is the process name's length, *pid
 * UINT64_MAX for '?'. Split at the last '-', so a name may hold '-' and '/'. */
static bool perf_root(const char *p, size_t n, bool with_tid, size_t *comm_len, uint64_t *pid,
		      uint64_t *tid)
{
	const char *slash = with_tid ? last_of(p, n, '/') : NULL;
	if (with_tid && (!slash || !tachi_parse_dec(slash + 1, n - (size_t)(slash + 1 - p),
						      UINT64_MAX, tid)))
		return false;
	size_t m = with_tid ? (size_t)(slash - p) : n;
	const char *dash = last_of(p, m, '-');
	if (!dash || dash == p)
		return false;
	size_t pl = m - (size_t)(dash + 1 - p);
	if (pl == 1 && dash[1] == '?')
		*pid = UINT64_MAX;
	else if (!tachi_parse_dec(dash + 1, pl, UINT64_MAX - 1, pid))
		return false;
	*comm_len = (size_t)(dash - p);
	return true;
}

/* Notes the root of one of the first lines for the per-file choice of perf roots. */
void tachi_cr_sniff_perf_root(struct cread *st, const char *s, const char *end)
{
	const char *nx;
	size_t n = (size_t)(frame_end(s, end, &nx) - s), cl;
	uint64_t pid, tid;
	st->n_roots++;
	if (perf_root(s, n, true, &cl, &pid, &tid)) {
		st->n_perf_tid++;
	} else if (perf_root(s, n, false, &cl, &pid, &tid)) {
		st->n_perf_pid++;
		if (pid == UINT64_MAX)
			st->n_perf_q++;
		if (st->n_perf_pid == 1 && cl <= sizeof(st->perf_first)) {
			memcpy(st->perf_first, s, cl);
			st->perf_first_len = cl;
			st->perf_first_pid = pid;
		} else if (cl == st->perf_first_len && !memcmp(s, st->perf_first, cl) &&
			   pid != st->perf_first_pid) {
			st->perf_pid_varies = true;
		}
	}
}

/* The perf root style, when every root of the first lines has it. "COMM-PID/TID" says what
 * it is; "COMM-PID" alone may be a process name ("gcc-12"): it counts only when a PID is
 * '?' or one name comes with two PIDs, which no name does. */
int tachi_cr_decide_perf_roots(const struct cread *st)
{
	if (!st->n_roots)
		return THR_NONE;
	if (st->n_perf_tid == st->n_roots)
		return THR_PERF_TID;
	if (st->n_perf_pid == st->n_roots && (st->n_perf_q || st->perf_pid_varies))
		return THR_PERF_PID;
	return THR_NONE;
}

/* The thread style of a file, from its first valid stack. */
int tachi_cr_sniff_threads(const char *s, const char *end)
{
	const char *nx;
	const char *fe = frame_end(s, end, &nx);
	size_t n = (size_t)(fe - s);
	uint64_t a, b;
	bool h;
	if (is_tid_frame(s, n, &a))
		return THR_CPYTHON;
	if (is_austin_p(s, n, &a) && nx) {
		const char *nx2;
		const char *fe2 = frame_end(nx, end, &nx2);
		if (is_austin_t(nx, (size_t)(fe2 - nx), &a, &b, &h))
			return THR_AUSTIN;
	}
	if (is_pyspy_thread(s, n, &a) || is_pyspy_process(s, end, &a, &nx))
		return THR_PYSPY;
	if (is_austin1_thread(s, n, &a))
		return THR_AUSTIN1;
	if (is_austin1_process(s, n, &a) && nx) {
		const char *nx2;
		const char *fe2 = frame_end(nx, end, &nx2);
		if (is_austin1_thread(nx, (size_t)(fe2 - nx), &a))
			return THR_AUSTIN1;
	}
	return THR_NONE;
}

/* A perf root's process name stays the root frame (st->root_len long); its PID is the
 * interpreter id (the process, as austin's P<pid> is) and its TID the thread. With --pid
 * alone the process's samples are one thread numbered with the PID, the id Linux gives its
 * first thread. */
static const char *strip_perf_root(struct cread *st, const char *s, size_t n,
				   uint64_t *tid, uint32_t *iid)
{
	size_t cl;
	uint64_t pid, t = 0;
	bool with_tid = st->threads == THR_PERF_TID;
	if (!perf_root(s, n, with_tid, &cl, &pid, &t))
		return s;
	st->root_len = cl;
	if (pid != UINT64_MAX && pid <= UINT32_MAX)
		*iid = (uint32_t)pid;
	*tid = with_tid ? t : pid != UINT64_MAX ? pid : 0;
	return s;
}

/* Takes the file's kind of thread frames off the root of [s, end); returns where the real
 * frames start (end when none are left). */
const char *tachi_cr_strip_threads(struct cread *st, const char *s, const char *end,
				   uint64_t *tid, uint32_t *iid)
{
	const char *nx;
	const char *fe = frame_end(s, end, &nx);
	size_t n = (size_t)(fe - s);
	uint64_t a, b;
	bool h;
	switch (st->threads) {
	case THR_CPYTHON:
		if (is_tid_frame(s, n, &a)) {
			*tid = a;
			return nx ? nx : end;
		}
		break;
	case THR_AUSTIN:
		if (is_austin_p(s, n, &a)) {
			if (a <= UINT32_MAX)
				*iid = (uint32_t)a;
			s = nx ? nx : end;
			if (s == end)
				return end;
			fe = frame_end(s, end, &nx);
			if (is_austin_t(s, (size_t)(fe - s), &a, &b, &h)) {
				*tid = a;
				if (h)
					*iid = (uint32_t)b;
				return nx ? nx : end;
			}
		}
		break;
	case THR_PYSPY:
		while (is_pyspy_process(s, end, &a, &nx)) {
			if (a <= UINT32_MAX)
				*iid = (uint32_t)a;
			s = nx ? nx : end;
			if (s == end)
				return end;
		}
		fe = frame_end(s, end, &nx);
		if (is_pyspy_thread(s, (size_t)(fe - s), &a)) {
			*tid = a;
			return nx ? nx : end;
		}
		break;
	case THR_AUSTIN1:
		if (is_austin1_process(s, n, &a) && nx) {
			const char *nx2;
			const char *fe2 = frame_end(nx, end, &nx2);
			if (is_austin1_thread(nx, (size_t)(fe2 - nx), &b)) {
				if (a <= UINT32_MAX)
					*iid = (uint32_t)a;
				s = nx;
				n = (size_t)(fe2 - nx);
				nx = nx2;
			}
		}
		if (is_austin1_thread(s, n, &a)) {
			*tid = a;
			return nx ? nx : end;
		}
		break;
	case THR_PERF_PID:
	case THR_PERF_TID:
		return strip_perf_root(st, s, n, tid, iid);
	}
	return s;
}

/* ---- frame labels ---- */

bool tachi_cr_path_like(const char *f, size_t n)
{
	if (!n)
		return false;
	if (memchr(f, '/', n) || memchr(f, '\\', n) || memchr(f, '.', n))
		return true;
	if (n >= 2 && f[0] == '<' && f[n - 1] == '>')
		return true;
	return (n == 1 && f[0] == '~') || (n == 6 && !memcmp(f, "kernel", 6));
}

bool tachi_cr_parse_line_no(const char *p, size_t n, int32_t *line)
{
	uint64_t v;
	if (!tachi_parse_dec(p, n, UINT64_MAX, &v) || v > INT32_MAX)
		return false;
	*line = (int32_t)v;
	return true;
}

/* The last colon of s[0, lim) that is not half of "::", or SIZE_MAX. */
static size_t last_single_colon(const char *s, size_t lim)
{
	size_t i = lim;
	while (i > 0) {
		i--;
		if (s[i] != ':')
			continue;
		if (i > 0 && s[i - 1] == ':') {
			i--;
			continue;
		}
		if (i + 1 < lim && s[i + 1] == ':')
			continue;
		return i;
	}
	return SIZE_MAX;
}

/* file:func:line, split from the right. */
bool tachi_cr_split_colon(const char *s, size_t n, size_t *file_len, size_t *func_off,
			  size_t *func_len, int32_t *line)
{
	size_t q = n;
	while (q > 0 && is_digit(s[q - 1]))
		q--;
	if (q == n || q < 2 || s[q - 1] != ':' || s[q - 2] == ':')
		return false;
	if (!tachi_cr_parse_line_no(s + q, n - q, line))
		return false;
	size_t c2 = q - 1;
	size_t c1 = last_single_colon(s, c2);
	if (c1 == SIZE_MAX || c1 == 0 || c1 + 1 >= c2)
		return false;
	*file_len = c1;
	*func_off = c1 + 1;
	*func_len = c2 - c1 - 1;
	return true;
}

/* austin 2's "file:func" half of a pair. */
bool tachi_cr_split_file_func(const char *s, size_t n, size_t *file_len)
{
	size_t c = last_single_colon(s, n);
	if (c == SIZE_MAX || c == 0 || c + 1 >= n)
		return false;
	*file_len = c;
	return true;
}

bool tachi_cr_is_lframe(const char *p, size_t n)
{
	int32_t l;
	return n >= 2 && p[0] == 'L' && tachi_cr_parse_line_no(p + 1, n - 1, &l);
}

/* func (file:line) or func (file), split at the last " (". */
bool tachi_cr_split_pyspy(const char *s, size_t n, size_t *name_len, size_t *file_off,
			  size_t *file_len, int32_t *line)
{
	if (n < 5 || s[n - 1] != ')')
		return false;
	size_t k = n - 2;
	while (k > 0 && !(s[k] == '(' && s[k - 1] == ' '))
		k--;
	if (k < 2)
		return false;
	size_t in = k + 1, inl = n - 1 - in;
	if (!inl)
		return false;
	*name_len = k - 1;
	*file_off = in;
	*file_len = inl;
	*line = TACH_NO_LINE;
	size_t q = inl;
	while (q > 0 && is_digit(s[in + q - 1]))
		q--;
	if (q < inl && q >= 2 && s[in + q - 1] == ':' && tachi_cr_parse_line_no(s + in + q, inl - q, line))
		*file_len = q - 1;
	return true;
}

/* Counts which label style fits the frames of one stack (thread frames already off). */
void tachi_cr_sniff_labels(struct cread *st, const char *p, const char *end)
{
	if (p == end)
		return;
	while (p && st->n_frames < SNIFF_FRAMES) {
		const char *nx;
		const char *fe = frame_end(p, end, &nx);
		size_t n = (size_t)(fe - p), a, b, c;
		int32_t l;
		st->n_frames++;
		if (tachi_cr_split_pyspy(p, n, &a, &b, &c, &l) && tachi_cr_path_like(p + b, c)) {
			st->n_py++;
			const char *nx2;
			if (l == TACH_NO_LINE && nx &&
			    tachi_cr_is_lframe(nx, (size_t)(frame_end(nx, end, &nx2) - nx)))
				st->n_austin1++;
		}
		else if (tachi_cr_split_colon(p, n, &a, &b, &c, &l) && tachi_cr_path_like(p, a))
			st->n_colon++;
		else if (nx && tachi_cr_split_file_func(p, n, &a) && tachi_cr_path_like(p, a)) {
			const char *nx2;
			const char *fe2 = frame_end(nx, end, &nx2);
			if (tachi_cr_is_lframe(nx, (size_t)(fe2 - nx)))
				st->n_austin2++;
		}
		p = nx;
	}
}

void tachi_cr_decide_labels(struct cread *st)
{
	st->decided = true;
	if (st->labels_opt != LAB_AUTO) {
		st->labels = st->labels_opt;
		st->explicit_labels = true;
		return;
	}
	/* austin 1's "func (file);L<line>": most py-spy-like labels come with an L frame */
	if (st->n_py && st->n_py >= st->n_colon && st->n_py >= st->n_austin2)
		st->labels = st->n_austin1 * 2 > st->n_py ? LAB_AUSTIN1 : LAB_PYSPY;
	else if (st->n_colon && st->n_colon >= st->n_austin2)
		st->labels = LAB_COLON;
	else if (st->n_austin2)
		st->labels = LAB_AUSTIN2;
	else
		st->labels = LAB_RAW;
}
