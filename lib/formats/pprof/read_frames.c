/* The pprof reader's frames (see pprof/read.c for the format): each location's lines,
 * innermost first, as dict frames carrying its address and mapping, or a name made of its
 * module and file offset (or its address) when it has no line; drop_frames and keep_frames
 * as pprof prunes with them (names simplified as pprof does, the patterns in RE2 syntax);
 * the mappings into the dict. All at open, once per location. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/regex.h"
#include "core/handles.h"
#include "formats/pprof/read.h"

/* ---- frames ---- */

/* pprof matches drop_frames and keep_frames against a name without a leading '.' (PPC ELF
 * v1) and without its argument list: cut at the first '(' that is not part of "(anonymous
 * namespace)" or "operator()" (profile/prune.go, simplifyFunc). */
static const char *simplified(const char *s, size_t *len)
{
	static const char anon[] = "(anonymous namespace)", op[] = "operator()";
	size_t n = *len, i = 0;
	if (n && s[0] == '.')
		s++, n--;
	while (i < n) {
		if (n - i >= sizeof(anon) - 1 && !memcmp(s + i, anon, sizeof(anon) - 1))
			i += sizeof(anon) - 1;
		else if (n - i >= sizeof(op) - 1 && !memcmp(s + i, op, sizeof(op) - 1))
			i += sizeof(op) - 1;
		else if (s[i] == '(')
			break;
		else
			i++;
	}
	*len = i;
	return s;
}

/* Instructions each pattern may visit while the matcher builds its states, over the whole
 * profile (lib/base/regex.h): an ordinary pattern makes a few states and needs far less;
 * one made to need a new state at each character of long names (.*a.{8990} over
 * 9,000-character names, tests/cli/pprof_gen.py worstrx) spends it in about a second,
 * where unbounded matching of a 1.6 MB input would take hours. */
#define MATCH_BUDGET 100000000ull

struct prune {
	struct tachi_regex *drop, *keep; /* no drop: nothing is pruned */
	uint8_t *seen;       /* per string: 0 not matched yet, 1 kept, 2 dropped */
};

/* A warning about pattern string s at byte at of the input: the pattern's start, what,
 * and that nothing is dropped; its bytes may be anything: one line, no control bytes. */
static void pattern_warn(struct tach_reader *r, int64_t s, size_t at, const char *field,
			 const char *what)
{
	struct pprof_rstate *st = r->state;
	size_t n;
	const char *p = str_at(st, s, &n);
	char m[480];
	snprintf(m, sizeof(m), "%s \"%.*s%s\", %s: no frames dropped%s", field,
		 (int)(n > 60 ? 60 : n), p, n > 60 ? "..." : "", what,
		 st->gz ? " (offset in the uncompressed protobuf)" : "");
	for (char *c = m; *c; c++)
		if ((unsigned char)*c < 0x20 || *c == 0x7f)
			*c = '?';
	tachi_warn(&r->warn, TACH_POS_OFFSET, at, "%s", m);
}

/* pprof compiles ^(PATTERN)$ with Go's regexp (RE2 syntax); ours takes the same syntax and
 * matches in linear time. pprof's RemoveUninteresting returns an error for a pattern Go
 * refuses, and pprof's driver ignores that error and shows the profile unpruned: so a
 * refused pattern is a warning here, and no frame is dropped. The few Go takes and we do
 * not (a Unicode class, a program over our bound) are warned about as such. */
static int compile(struct tach_reader *r, int64_t s, size_t at, const char *field,
		   struct tachi_regex **re)
{
	struct pprof_rstate *st = r->state;
	struct tachi_regex_err e;
	size_t n;
	const char *p = str_at(st, s, &n);
	char *pat = malloc(n + 5);
	if (!pat)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	memcpy(pat, "^(", 2);
	memcpy(pat + 2, p, n);
	memcpy(pat + 2 + n, ")$", 2);
	int rc = tachi_regex_compile(pat, n + 4, re, &e);
	free(pat);
	if (rc == TACH_E_NOMEM)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	if (!rc) {
		tachi_regex_set_budget(*re, MATCH_BUDGET);
		return TACH_OK;
	}
	/* e.at counts the "^(" before the pattern */
	char m[320];
	snprintf(m, sizeof(m), "byte %zu: %s; %s", e.at > 2 ? (e.at - 2 < n ? e.at - 2 : n) : 0,
		 e.msg, rc == TACH_E_FORMAT ? "pprof refuses it too" : "pprof would take it, "
		 "this reader does not");
	pattern_warn(r, s, at, field, m);
	return TACH_OK;
}

/* Whether function fn's name matches drop_frames and not keep_frames, once per name: 1,
 * 0, or TACH_E_LIMIT (a pattern's budget spent) or TACH_E_NOMEM. */
static int dropped(struct pprof_rstate *st, struct prune *pr, const struct pfn *fn)
{
	size_t n;
	const char *p = str_at(st, fn->name, &n);
	if (!n)
		return 0;
	uint8_t *seen = &pr->seen[fn->name];
	if (!*seen) {
		p = simplified(p, &n);
		int d = tachi_regex_match(pr->drop, p, n);
		if (d == 1 && pr->keep) {
			int k = tachi_regex_match(pr->keep, p, n);
			d = k < 0 ? k : !k;
		}
		if (d < 0)
			return d;
		*seen = d ? 2 : 1;
	}
	return *seen == 2;
}

/* The location's mapping, NULL when its id names none (no mapping, as in pprof). */
static const struct pprof_rmap *loc_map(const struct pprof_rstate *st, const struct ploc *l)
{
	uint32_t m;
	return tachi_pr_find_id(&st->map_ix, st->maps, sizeof(*st->maps), l->mapping, &m)
		       ? &st->maps[m] : NULL;
}

static int add_frame(struct tach_reader *r, const struct tach_frame *f,
		     const struct tach_frame_native *n)
{
	struct pprof_rstate *st = r->state;
	if (st->nframes >= UINT32_MAX - 1)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "more than %u frames",
			     UINT32_MAX - 1);
	if (!TACHI_RESERVE(st->frames, st->frames_cap, st->nframes + 1) ||
	    tach_dict_intern_frame_native(&r->dict, f, n, &st->frames[st->nframes]))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->nframes++;
	return TACH_OK;
}

static int line_frame(struct tach_reader *r, const struct pprof_rline *ln, const struct pfn *fn,
		      const struct tach_frame_native *n)
{
	struct pprof_rstate *st = r->state;
	struct tach_frame f = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	int64_t name = st->slen[fn->name] ? fn->name : fn->sysname;
	int rc = tachi_pr_dict_str(r, name, &f.func);
	if (rc || (rc = tachi_pr_dict_str(r, fn->file, &f.file)))
		return rc;
	if (ln->line > 0 && ln->line <= INT32_MAX)
		f.line = f.end_line = (int32_t)ln->line;
	if (ln->col > 0 && ln->col <= INT32_MAX)
		f.col = (int32_t)ln->col;
	return add_frame(r, &f, n);
}

/* A location without lines (unsymbolized). In its mapping's range it is named by module
 * and file offset, "libc.so.6+0x2a1c0" in "/usr/lib/.../libc.so.6", so that it stays
 * symbolizable where no mapping table goes (TACH, collapsed text: tachfmt(5)); else by its
 * address, "0x4011d6", in its mapping's file, else in "~" (none). */
static int address_frame(struct tach_reader *r, const struct ploc *l,
			 const struct tach_frame_native *n)
{
	struct pprof_rstate *st = r->state;
	struct tach_frame f = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	const struct pprof_rmap *m = loc_map(st, l);
	size_t flen = m ? st->slen[m->file] : 0;
	const char *file = flen ? str_at(st, m->file, &flen) : NULL;
	char name[300];
	int k;
	if (file && l->address >= m->start && l->address < m->limit) {
		size_t blen;
		const char *base = tachi_base_name(file, flen, &blen);
		if (blen > 250)
			blen = 250;
		k = snprintf(name, sizeof(name), "%.*s+0x%llx", (int)blen, base,
			     (unsigned long long)(l->address - m->start + m->offset));
	} else {
		k = snprintf(name, sizeof(name), "0x%llx", (unsigned long long)l->address);
	}
	if (tach_dict_intern_string(&r->dict, name, (size_t)k, &f.func))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	int rc = file ? tachi_pr_dict_str(r, m->file, &f.file)
		      : tach_dict_intern_string(&r->dict, "~", 1, &f.file) ? TACH_E_NOMEM : TACH_OK;
	if (rc)
		return rc == TACH_E_NOMEM ? RFAIL(r, rc, TACH_POS_NONE, 0, "out of memory") : rc;
	return add_frame(r, &f, n);
}

static const struct pfn *line_fn(struct tach_reader *r, const struct ploc *l, uint32_t j)
{
	struct pprof_rstate *st = r->state;
	uint32_t fi;
	uint64_t fid = st->lines[l->line0 + j].fn;
	if (!tachi_pr_find_id(&st->fn_ix, st->fns, sizeof(*st->fns), fid, &fi)) {
		tachi_pr_fail(r, l->at, "location %llu: a line's function %llu does not exist",
			      (unsigned long long)l->id, (unsigned long long)fid);
		return NULL;
	}
	return &st->fns[fi];
}

/* Location l's frames from line start out, innermost first. */
static int make_frames(struct tach_reader *r, struct ploc *l, uint32_t start)
{
	struct pprof_rstate *st = r->state;
	const struct pfn *fn;
	l->fr0 = (uint32_t)st->nframes;
	/* Its address and mapping go on each of its frames; all but the outermost line
	 * were inlined into the next one out (tach_frame_native). */
	const struct pprof_rmap *m = loc_map(st, l);
	struct tach_frame_native n = { l->address, m ? m->did : 0, 0 };
	int rc = l->nlines ? TACH_OK : address_frame(r, l, &n);
	for (uint32_t j = start; !rc && j < l->nlines; j++) {
		n.inlined = j + 1 < l->nlines;
		rc = (fn = line_fn(r, l, j)) ? line_frame(r, &st->lines[l->line0 + j], fn, &n)
					     : r->err.code;
	}
	l->nfr = (uint32_t)(st->nframes - l->fr0);
	return rc;
}

/* Location i's frames after drop_frames, innermost first: none when its outermost line
 * matches (tachi_pr_whole_frames makes them if a stack keeps it); from the line past the
 * outermost match else, as pprof cuts the location itself, for every sample. */
static int loc_frames(struct tach_reader *r, struct prune *pr, size_t i)
{
	struct pprof_rstate *st = r->state;
	struct ploc *l = &st->locs[i];
	uint32_t start = 0;
	const struct pfn *fn;
	for (uint32_t j = 0; j < l->nlines; j++)
		if (!line_fn(r, l, j))
			return r->err.code;
	for (uint32_t k = l->nlines; pr->drop && k-- > 0;) {
		if (!(fn = line_fn(r, l, k)))
			return r->err.code;
		if (dropped(st, pr, fn) == 1) {
			l->beneath = true;
			l->prune = k == l->nlines - 1;
			start = k + 1;
			break;
		}
	}
	return make_frames(r, l, start);
}

/* pprof keeps a location whose outermost line matches whole in a stack where it lies
 * above every kept frame ("to avoid pruning everything"): its frames, made the first time
 * a stack needs them, so that no frame only a pruned stack had reaches the output. */
int tachi_pr_whole_frames(struct tach_reader *r, struct ploc *l)
{
	if (!l->prune || l->whole)
		return TACH_OK;
	l->whole = true;
	return make_frames(r, l, 0);
}

/* The patterns, as pprof's RemoveUninteresting: keep_frames only with drop_frames, and
 * either one refused means no pruning at all. */
static int prune_setup(struct tach_reader *r, struct prune *pr)
{
	struct pprof_rstate *st = r->state;
	int rc;
	if (!st->slen[st->drop])
		return TACH_OK;
	if ((rc = compile(r, st->drop, st->drop_at, "drop_frames", &pr->drop)) || !pr->drop)
		return rc;
	if (st->slen[st->keep] &&
	    ((rc = compile(r, st->keep, st->keep_at, "keep_frames", &pr->keep)) || !pr->keep)) {
		tachi_regex_free(pr->drop);
		pr->drop = NULL;
		return rc;
	}
	if (!(pr->seen = calloc(st->nstr ? st->nstr : 1, 1)))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

static const struct pfn *line_fn(struct tach_reader *r, const struct ploc *l, uint32_t j);

/* Every name the patterns may see, matched before any frame is made: past a pattern's
 * budget no frame is dropped at all, as for a refused pattern, rather than some. */
static int match_all(struct tach_reader *r, struct prune *pr)
{
	struct pprof_rstate *st = r->state;
	for (size_t i = 0; pr->drop && i < st->nlocs; i++) {
		const struct ploc *l = &st->locs[i];
		for (uint32_t j = 0; j < l->nlines; j++) {
			const struct pfn *fn = line_fn(r, l, j);
			if (!fn)
				return r->err.code;
			int d = dropped(st, pr, fn);
			if (d == TACH_E_NOMEM)
				return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
			if (d >= 0)
				continue;
			char m[200];
			snprintf(m, sizeof(m), "matching drop_frames and keep_frames over this "
				 "profile's names takes over %llu steps each; pprof would prune, "
				 "this reader does not", (unsigned long long)MATCH_BUDGET);
			pattern_warn(r, st->drop, st->drop_at, "drop_frames", m);
			tachi_regex_free(pr->drop);
			pr->drop = NULL;
			return TACH_OK;
		}
	}
	return TACH_OK;
}

/* A mapping into the dict, in file order (pprof's first is the main one). */
static int dict_mapping(struct tach_reader *r, struct pprof_rmap *pm)
{
	struct pprof_rstate *st = r->state;
	struct tach_mapping m = { pm->start, pm->limit, pm->offset, 0, TACH_NO_STRING, pm->flags };
	int rc = tachi_pr_dict_str(r, pm->file, &m.file);
	if (!rc && st->slen[pm->build_id])
		rc = tachi_pr_dict_str(r, pm->build_id, &m.build_id);
	if (!rc && tach_dict_intern_mapping(&r->dict, &m, &pm->did))
		rc = RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return rc;
}

int tachi_pr_all_frames(struct tach_reader *r)
{
	struct pprof_rstate *st = r->state;
	struct prune pr = { 0 };
	int rc = TACH_OK;
	st->sid = malloc((st->nstr ? st->nstr : 1) * sizeof(*st->sid));
	if (!st->sid)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	memset(st->sid, 0xff, st->nstr * sizeof(*st->sid));
	rc = prune_setup(r, &pr);
	if (!rc)
		rc = match_all(r, &pr);
	for (size_t i = 0; !rc && i < st->nmaps; i++)
		rc = dict_mapping(r, &st->maps[i]);
	for (size_t i = 0; !rc && i < st->nlocs; i++)
		rc = loc_frames(r, &pr, i);
	tachi_regex_free(pr.drop);
	tachi_regex_free(pr.keep);
	free(pr.seen);
	return rc;
}
