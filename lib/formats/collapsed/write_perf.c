/* The collapsed writer's "perf" label style: the lines FlameGraph's stackcollapse-perf.pl
 * prints, frame for frame, so that `tach-decode --labels perf out.perf | flamegraph.pl`
 * replaces the perl step. Frames as the perf reader keeps them (perf/read.c) go back
 * to what perf script printed, and the script's rules apply to that:
 *
 *   - The root is the process: a "[comm]" frame's function (its line the pid, 0 for none),
 *     blanks as '_'; "comm-pid" or "comm-pid/tid" (the sample's thread) with perf-root.
 *     Stacks without one (from other formats) start at their outermost frame.
 *   - A function "0xADDR" is perf's "[unknown]" at that address: "[dso]" by the dso's base
 *     name, "[unknown]" without one, "[dso <ADDR>]" with addrs.
 *   - A frame whose file is a .py file or a pseudo-file ("<frozen ...>", "<string>") is a
 *     CPython -X perf frame, "py::FUNC:FILE", from a perf map; not one with a line, which a
 *     perf map never gives: a native frame in the source file DWARF names.
 *   - Per "->"-separated piece (perf-map-agent's unfolded Java inlining): ';' as ':', the
 *     text from the first '(' dropped (not Go's ".(*T).M", not "(anonymous namespace)"),
 *     quotes dropped, Java's "L" dropped when the comm is "java"; pieces after the first
 *     marked "_[i]", else kernel frames ('[' dso, a .ko, a vmlinux file, versioned or
 *     not, as inferno takes them) "_[k]" and JIT frames (a /tmp/perf-PID.map, or a
 *     jitdump's jitted-PID-N.so as inferno takes it) "_[j]" when asked (annotate).
 *   - Lines that print alike are one line, their counts summed; lines sorted by text.
 * Bytes are printed as they are, as the script prints them; the lines are merged and
 * sorted by collapsed/textlines.c.
 */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/buf.h"
#include "base/hash.h"
#include "base/io.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/linekeys.h"
#include "core/handles.h"
#include "formats/collapse.h"
#include "formats/collapsed/textlines.h"
#include "formats/collapsed/write_perf.h"

enum { K_FRAME, K_COMM };

struct pout {
	const struct tachi_perf_labels *pl;
	const struct tachi_linekeys *lk;
	struct tachi_buf labels;  /* per key: its text, then its text when the root is "java" */
	size_t *off;              /* key k: [off[2k], off[2k+1]) and [off[2k+1], off[2k+2]) */
	uint8_t *kind;
	struct tachi_textlines lines;
	struct tachi_buf line, piece;
};

int tachi_perf_labels_option(struct tach_writer *w, struct tachi_perf_labels *pl,
			     const char *key, const char *value)
{
	if (!strcmp(key, "perf-root")) {
		if (!strcmp(value, "comm"))
			pl->root = PERF_ROOT_COMM;
		else if (!strcmp(value, "pid"))
			pl->root = PERF_ROOT_PID;
		else if (!strcmp(value, "tid"))
			pl->root = PERF_ROOT_TID;
		else
			return WFAIL(w, TACH_E_USAGE, "perf-root must be comm, pid or tid, not %s", value);
		return TACH_OK;
	}
	if (!strcmp(key, "annotate")) {
		if (!strcmp(value, "kernel"))
			pl->kernel = true;
		else if (!strcmp(value, "jit"))
			pl->jit = true;
		else if (!strcmp(value, "all"))
			pl->kernel = pl->jit = true;
		else if (!strcmp(value, "none"))
			pl->kernel = pl->jit = false;
		else
			return WFAIL(w, TACH_E_USAGE, "annotate must be kernel, jit, all or none, not %s",
				     value);
		return TACH_OK;
	}
	if (!strcmp(key, "addrs")) {
		if (!tachi_parse_bool(value, &pl->addrs))
			return WFAIL(w, TACH_E_USAGE, "bad addrs value %s", value);
		return TACH_OK;
	}
	return 1;
}

/* ---- one frame's text ---- */

static bool has(const char *s, size_t n, const char *sub)
{
	size_t l = strlen(sub);
	for (size_t i = 0; i + l <= n; i++)
		if (!memcmp(s + i, sub, l))
			return true;
	return false;
}

/* A kernel module as inferno takes one: "[name]" but "[unknown]", a .ko file, or a vmlinux
 * file, versioned ("vmlinux-5.4.14-cloudflare-2020.1.11") or not. */
static bool is_kernel_mod(const char *m, size_t n)
{
	if (n == 9 && !memcmp(m, "[unknown]", 9))
		return false;
	if ((n && m[0] == '[') || (n >= 3 && !memcmp(m + n - 3, ".ko", 3)))
		return true;
	for (size_t i = n; i >= 7; i--)
		if (!memcmp(m + i - 7, "vmlinux", 7)) {
			for (size_t k = i; k < n; k++)
				if (!((m[k] >= '0' && m[k] <= '9') || (m[k] >= 'a' && m[k] <= 'z') ||
				      (m[k] >= 'A' && m[k] <= 'Z') || m[k] == '-' || m[k] == '.' || m[k] == '_'))
					return false;
			return true;
		}
	return false;
}

/* A JIT's module: perf-map-agent's /tmp/perf-PID.map, or a jitdump's jitted-PID-N.so. */
static bool is_perf_map(const char *m, size_t n)
{
	if (n >= 3 && !memcmp(m + n - 3, ".so", 3) && has(m, n, "/jitted-"))
		return true;
	for (size_t i = 0; i + 15 <= n; i++) {
		if (memcmp(m + i, "/tmp/perf-", 10))
			continue;
		size_t k = i + 10, d = k;
		while (k < n && m[k] >= '0' && m[k] <= '9')
			k++;
		if (k > d && k + 4 <= n && !memcmp(m + k, ".map", 4))
			return true;
	}
	return false;
}

/* The script's tidy_generic, in place on b[from..]. */
static void tidy(struct tachi_buf *b, size_t from)
{
	char *s = b->p + from;
	size_t n = b->len - from;
	for (size_t i = 0; i < n; i++)
		if (s[i] == ';')
			s[i] = ':';
	/* m/\.\(.*\)\./: a Go method name keeps its parentheses */
	bool go = false;
	for (size_t i = 0; i + 1 < n && !go; i++)
		if (s[i] == '.' && s[i + 1] == '(')
			go = has(s + i + 2, n - i - 2, ").");
	if (!go)
		for (size_t i = 0; i < n; i++)
			if (s[i] == '(' && !(n - i - 1 >= 20 && !memcmp(s + i + 1, "anonymous namespace)", 20))) {
				n = i;
				break;
			}
	size_t k = 0;
	for (size_t i = 0; i < n; i++)
		if (s[i] != '"' && s[i] != '\'')
			s[k++] = s[i];
	b->len = from + k;
}

/* One piece of a frame's name as the script prints it, appended to b. */
static bool piece_text(const struct tachi_perf_labels *pl, struct tachi_buf *b, const char *p,
		       size_t n, const char *mod, size_t ml, const char *pc, size_t pcl,
		       bool inl, bool java, bool jit)
{
	size_t from = b->len;
	if (n == 9 && !memcmp(p, "[unknown]", 9)) {
		const char *base = "unknown";
		size_t bl = 7;
		if (!(ml == 9 && !memcmp(mod, "[unknown]", 9))) {
			base = mod;
			bl = ml;
			for (size_t i = ml; i > 0; i--)
				if (mod[i - 1] == '/') {
					base = mod + i;
					bl = ml - i;
					break;
				}
		}
		if (!tachi_buf_add(b, "[", 1) || !tachi_buf_add(b, base, bl) ||
		    (pl->addrs && (!tachi_buf_add(b, " <", 2) || !tachi_buf_add(b, pc, pcl) ||
				   !tachi_buf_add(b, ">", 1))) ||
		    !tachi_buf_add(b, "]", 1))
			return false;
	} else if (!tachi_buf_add(b, p, n)) {
		return false;
	}
	tidy(b, from);
	if (java && b->len > from && b->p[from] == 'L' && has(b->p + from, b->len - from, "/")) {
		memmove(b->p + from, b->p + from + 1, b->len - from - 1);
		b->len--;
	}
	const char *t = b->p + from;
	size_t tl = b->len - from;
	if (inl)
		return has(t, tl, "_[i]") || tachi_buf_add(b, "_[i]", 4);
	if (pl->kernel && is_kernel_mod(mod, ml) && !has(mod, ml, "unknown"))
		return tachi_buf_add(b, "_[k]", 4);
	if (pl->jit && jit)
		return has(t, tl, "_[j]") || tachi_buf_add(b, "_[j]", 4);
	return true;
}

static bool ends_with(const char *s, size_t n, const char *suf)
{
	size_t l = strlen(suf);
	return n >= l && !memcmp(s + n - l, suf, l);
}

/* A frame key's text: the raw name perf printed, split at "->" (trailing empty pieces
 * dropped, as perl's split drops them), each piece as the script makes it. */
static bool frame_text(struct pout *o, struct tachi_buf *b, const char *file, size_t fl,
		       bool located, const char *func, size_t nl, bool java)
{
	struct tachi_buf *raw = &o->piece;
	const char *pc = "";
	size_t pcl = 0;
	/* CPython's files: a .py path or a pseudo-file ("<frozen ...>", "<string>"); a module
	 * perf names by its own name (a BPF program's "bpf_prog_...") is no Python file, nor
	 * is a frame with a line (DWARF's source file of a native frame) */
	bool py = !located && ((fl && file[0] == '<') || ends_with(file, fl, ".py"));
	raw->len = 0;
	if (py) {
		if (!tachi_buf_add(raw, "py::", 4) || !tachi_buf_add(raw, func, nl) ||
		    !tachi_buf_add(raw, ":", 1) || !tachi_buf_add(raw, file, fl))
			return false;
	} else if (nl > 2 && func[0] == '0' && func[1] == 'x' &&
		   strspn(func + 2, "0123456789abcdefABCDEF") == nl - 2) {
		pc = func + 2;
		pcl = nl - 2;
		if (!tachi_buf_add(raw, "[unknown]", 9))
			return false;
	} else if (!tachi_buf_add(raw, func, nl)) {
		return false;
	}
	bool jit = py || is_perf_map(file, fl);
	/* perl's split drops trailing empty pieces */
	size_t end = raw->len;
	while (end >= 2 && raw->p[end - 2] == '-' && raw->p[end - 1] == '>')
		end -= 2;
	for (size_t i = 0, k = 0; i < end; k++) {
		size_t j = i;
		while (j < end && !(j + 1 < end && raw->p[j] == '-' && raw->p[j + 1] == '>'))
			j++;
		if (k && !tachi_buf_add(b, ";", 1))
			return false;
		if (!piece_text(o->pl, b, raw->p + i, j - i, file, fl, pc, pcl, k > 0, java, jit))
			return false;
		i = j + 2;
	}
	return true;
}

/* ---- labels per key, lines per stack ---- */

static bool key_labels(struct pout *o)
{
	size_t nkeys = o->lk->nkeys;
	o->off = malloc((2 * nkeys + 1) * sizeof(*o->off));
	o->kind = malloc(nkeys + 1);
	if (!o->off || !o->kind || !TACHI_RESERVE(o->labels.p, o->labels.cap, 1))
		return false;
	for (size_t k = 0; k < nkeys; k++) {
		const struct tachi_linekey *key = &o->lk->keys[k];
		size_t fl, nl;
		const char *file = tachi_str(&o->lk->names, key->file, &fl);
		const char *func = tachi_str(&o->lk->names, key->func, &nl);
		o->kind[k] = fl == 6 && !memcmp(file, "[comm]", 6) ? K_COMM : K_FRAME;
		o->off[2 * k] = o->labels.len;
		if (o->kind[k] == K_COMM) {
			size_t from = o->labels.len;
			if (!tachi_buf_add(&o->labels, func, nl))
				return false;
			for (size_t i = from; i < o->labels.len; i++)
				if (o->labels.p[i] == ' ')
					o->labels.p[i] = '_';
			o->off[2 * k + 1] = o->labels.len;
			continue;
		}
		if (!frame_text(o, &o->labels, file, fl, key->line > 0, func, nl, false))
			return false;
		o->off[2 * k + 1] = o->labels.len;
		if (!frame_text(o, &o->labels, file, fl, key->line > 0, func, nl, true))
			return false;
	}
	o->off[2 * nkeys] = o->labels.len;
	return true;
}

static bool root_text(struct pout *o, const struct tachi_linekey *k, uint32_t key, uint64_t tid)
{
	char b[24];
	if (!tachi_buf_add(&o->line, o->labels.p + o->off[2 * key],
			   o->off[2 * key + 1] - o->off[2 * key]))
		return false;
	if (o->pl->root == PERF_ROOT_COMM)
		return true;
	if (!tachi_buf_add(&o->line, "-", 1) ||
	    !(k->line > 0 ? tachi_buf_add(&o->line, b, tachi_fmt_u64(b, (uint64_t)k->line))
			  : tachi_buf_add(&o->line, "?", 1)))
		return false;
	return o->pl->root == PERF_ROOT_PID ||
	       (tachi_buf_add(&o->line, "/", 1) && tachi_buf_add(&o->line, b, tachi_fmt_u64(b, tid)));
}

/* One (thread, stack)'s line: its keys root first from the trie. */
static bool stack_line(struct pout *o, const struct tachi_stacktab *t, const struct tachi_pair *e,
		       uint32_t **path, size_t *cap)
{
	if (e->depth > *cap && !TACHI_RESERVE(*path, *cap, e->depth))
		return false;
	uint32_t d = e->depth, n = e->leaf;
	for (; d > 0; d--, n = t->nodes[n].parent)
		(*path)[d - 1] = t->nodes[n].key;
	o->line.len = 0;
	uint32_t first = 0;
	bool java = false;
	if (e->depth && o->kind[(*path)[0]] == K_COMM) {
		uint32_t k = (*path)[0];
		/* the script tidies Java names by the comm alone, whatever the root shows */
		java = o->off[2 * k + 1] - o->off[2 * k] == 4 && !memcmp(o->labels.p + o->off[2 * k], "java", 4);
		if (!root_text(o, &o->lk->keys[k], k, e->ctx))
			return false;
		first = 1;
	}
	for (uint32_t i = first; i < e->depth; i++) {
		uint32_t k = (*path)[i];
		size_t a = o->off[2 * k + (java ? 1 : 0)], b = o->off[2 * k + (java ? 2 : 1)];
		if (o->kind[k] == K_COMM)
			b = o->off[2 * k + 1], a = o->off[2 * k];
		if ((i || first) && !tachi_buf_add(&o->line, ";", 1))
			return false;
		if (!tachi_buf_add(&o->line, o->labels.p + a, b - a))
			return false;
	}
	return true;
}

static void pout_free(struct pout *o)
{
	free(o->labels.p);
	free(o->off);
	free(o->kind);
	tachi_textlines_free(&o->lines);
	free(o->line.p);
	free(o->piece.p);
}

int tachi_perf_labels_write(struct tach_writer *w, const struct tachi_perf_labels *pl,
			    const struct tachi_stackcount *sc)
{
	struct pout o = { .pl = pl, .lk = &sc->agg.lk };
	const struct tachi_stacktab *t = &sc->agg.trie;
	uint32_t *path = NULL;
	size_t cap = 0;
	int rc = TACH_OK;
	bool ok = key_labels(&o);
	for (size_t i = 0; ok && i < sc->ncounts; i++) {
		const struct tachi_pair *e = &t->pairs[i];
		if (!sc->counts[i] || e->leaf == TACHI_ROOT)
			continue;
		ok = stack_line(&o, t, e, &path, &cap) &&
		     tachi_textlines_add(&o.lines, o.line.p, o.line.len, sc->counts[i]);
	}
	rc = ok ? tachi_textlines_print(w, &o.lines) : WFAIL(w, TACH_E_NOMEM, "out of memory");
	free(path);
	pout_free(&o);
	return rc;
}
