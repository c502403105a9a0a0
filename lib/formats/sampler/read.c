/* Apple Sampler ("supersampler") trace reader.
 *
 * The format is mixed text and binary (spec: peers-collapsed-sampler.md §1):
 *
 *   @supersamplerV1.0|V1.1 LF
 *   @symboltableV1.0|V1.1 LF
 *   (TAB id TAB unknown TAB name TAB path TAB path LF)*      id, unknown: raw words
 *   [@end LF]
 *   (@threadV1.0 TAB hex LF (TAB a b c n id{n} LF)*)*        a b c n: raw words
 *   [@end LF]
 *
 * Raw words hold any byte, TAB and LF included, so the input is walked byte by byte with
 * fixed widths, never split into lines. Byte order and the id width (4 or 8 bytes; Apple's
 * vmutils reads both, and swapped files) are decided once per file from the first symbol
 * lines and records: the layout under which every one of them ends where its counts say.
 *
 * What a sample becomes: each record is one sample (weight 1) of the block's thread, frames
 * leaf first as in TACH. A symbol's name is the function name; its source path (the second
 * path) is the file name, else its library path (the first), else "~" (no file) when the
 * paths are NIL, (null) or absent; an empty first path stays an empty file name. The
 * "unknown" word is taken as the line number when it lies in 1..INT32_MAX (every known
 * writer leaves it 0, which reads as "no line"). Timestamps do not exist in the format:
 * the k-th record of a thread gets k * interval microseconds (option "interval", default
 * 1000). The status byte is TACH_STATUS_UNKNOWN.
 *
 * Thread ids: the hex id of the block header, or, when the symbol it names carries the
 * path "tachfmt:tid=N:iid=M" (what our writer puts there), thread N of interpreter M.
 * Blocks with one id are one thread.
 *
 * Tolerated, with a warning (an error under "strict"): a missing final @end (complete
 * records are kept), a record cut by the end of the file, ids used but never defined
 * (a frame named 0x... after the id), ids defined twice (the last wins), "NIL" as thread
 * id (thread 0), header words other than 1 0 1, unknown @ sections (skipped up to the next
 * line starting with @). Tolerated silently: no @end after the symbol table, CR before LF
 * on text lines, blank lines, bytes after the final @end, thread ids that are also frames.
 * A file whose every LF became CRLF has damaged binary fields: it gets its own error.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "model/stacktab.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/sampler/sampler.h"

#define DETECT_LINES 64
#define DEFAULT_INTERVAL_US 1000
#define NO_FRAME UINT32_MAX
#define MARKER "tachfmt:tid="

enum { FILE_TEXT, FILE_NONE };
enum { AT_BODY, AT_THREAD, AT_DONE };

struct sym {
	uint64_t key;        /* the id bytes read big-endian: matching needs no byte order */
	uint64_t unknown;    /* raw word, read big-endian too */
	size_t name_off, name_len;
	size_t file_off, file_len;
	int file_kind;
	uint32_t frame;      /* dict frame, interned on first use */
};

struct rstate {
	uint64_t interval;
	/* layout */
	unsigned idw, unkw, hdrw;
	bool le;
	/* symbols */
	struct sym *syms;
	size_t nsyms, syms_cap;
	struct tachi_idset index;
	/* walking */
	size_t pos;
	int at;
	bool saw_end;
	uint64_t tid;
	uint32_t iid;
	size_t thread;        /* index into threads / tcount */
	struct tachi_threads threads;
	uint64_t *tcount;     /* records seen per thread, for timestamps */
	size_t tcount_cap;
	uint32_t *frames;
	size_t frames_cap;
	uint64_t samples;
	bool warned_undef, warned_dup, warned_abc, warned_nil;
};

static int sp_option(struct tach_reader *r, const char *key, const char *value)
{
	struct rstate *st = r->state;
	if (!strcmp(key, "interval")) {
		uint64_t v;
		/* Bounded so that timestamps of 2^32 records per thread stay far from overflow. */
		if (!tachi_parse_u64(value, UINT32_MAX, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
				     "interval must be 1..%u microseconds, not %s", UINT32_MAX, value);
		st->interval = v;
		return TACH_OK;
	}
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "sampler reader has no option %s", key);
}

static uint64_t rd_be(const uint8_t *p, unsigned w)
{
	uint64_t v = 0;
	for (unsigned i = 0; i < w; i++)
		v = v << 8 | p[i];
	return v;
}

/* A word read big-endian, as the file means it. */
static uint64_t word_value(const struct rstate *st, uint64_t be, unsigned w)
{
	if (!st->le)
		return be;
	return w == 8 ? __builtin_bswap64(be) : __builtin_bswap32((uint32_t)be);
}

static uint64_t rd_word(const struct rstate *st, const uint8_t *p, unsigned w)
{
	return word_value(st, rd_be(p, w), w);
}

/* Every LF preceded by CR: a text-mode conversion ran over the file and shifted or
 * changed the binary fields. Only asked once something did not fit. */
static bool crlf_converted(const struct tach_reader *r)
{
	const uint8_t *d = r->in.data;
	size_t n = r->in.size, lfs = 0;
	for (const uint8_t *p = memchr(d, '\n', n); p; p = memchr(p + 1, '\n', n - (size_t)(p + 1 - d))) {
		if (p == d || p[-1] != '\r')
			return false;
		lfs++;
		if (p + 1 >= d + n)
			break;
	}
	return lfs > 0;
}

static int bad_layout(struct tach_reader *r, uint64_t off, const char *what)
{
	if (crlf_converted(r))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "every LF in the file follows a CR: it was converted to CRLF line "
			     "ends, which damages the binary fields; it cannot be recovered reliably");
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off, "%s", what);
}

/* A text line from p: [*s, *s + *n) without LF and one CR before it; *next after the LF
 * (or the end of the input). */
static void text_line(const struct tach_reader *r, size_t p, size_t *s, size_t *n, size_t *next,
		      bool *had_lf)
{
	const uint8_t *d = r->in.data;
	const uint8_t *lf = memchr(d + p, '\n', r->in.size - p);
	size_t e = lf ? (size_t)(lf - d) : r->in.size;
	*next = lf ? e + 1 : e;
	*had_lf = lf != NULL;
	if (e > p && d[e - 1] == '\r')
		e--;
	*s = p;
	*n = e - p;
}

/* A blank line at p (LF or CR LF): its length, else 0. */
static size_t blank_line(const struct tach_reader *r, size_t p)
{
	const uint8_t *d = r->in.data;
	if (d[p] == '\n')
		return 1;
	if (d[p] == '\r' && p + 1 < r->in.size && d[p + 1] == '\n')
		return 2;
	return 0;
}

enum { TAG_OTHER, TAG_MAGIC, TAG_SYMTAB, TAG_THREAD, TAG_END };

static bool is_tag(const uint8_t *s, size_t n, const char *t)
{
	size_t k = strlen(t);
	return n == k && !memcmp(s, t, k);
}

/* Classifies the tag at the start of a text line; *tn gets the tag's length. */
static int tag_kind(const uint8_t *s, size_t n, size_t *tn)
{
	size_t k = 0;
	while (k < n && s[k] != '\t' && s[k] != ' ')
		k++;
	*tn = k;
	if (is_tag(s, k, "@supersamplerV1.0") || is_tag(s, k, "@supersamplerV1.1"))
		return TAG_MAGIC;
	if (is_tag(s, k, "@symboltableV1.0") || is_tag(s, k, "@symboltableV1.1"))
		return TAG_SYMTAB;
	if (is_tag(s, k, "@threadV1.0"))
		return TAG_THREAD;
	if (is_tag(s, k, "@end"))
		return TAG_END;
	return TAG_OTHER;
}

/* Skips an unknown section: up to the next line that starts with '@'. */
static int skip_section(struct tach_reader *r, size_t *p, const uint8_t *tag, size_t tn)
{
	int rc = tachi_soft_fail(r, *p, "unknown section \"%.*s\" skipped", (int)(tn > 40 ? 40 : tn),
		      (const char *)tag);
	if (rc)
		return rc;
	const uint8_t *d = r->in.data;
	size_t q = *p;
	for (;;) {
		const uint8_t *lf = memchr(d + q, '\n', r->in.size - q);
		if (!lf) {
			*p = r->in.size;
			return TACH_OK;
		}
		q = (size_t)(lf - d) + 1;
		if (q < r->in.size && d[q] == '@') {
			*p = q;
			return TACH_OK;
		}
	}
}

/* ---- symbols ---- */

static uint64_t key_hash(uint64_t key)
{
	return tachi_hash(&key, sizeof(key));
}

static bool sym_eq(void *ctx, uint32_t id, const void *k)
{
	const struct rstate *st = ctx;
	return st->syms[id].key == *(const uint64_t *)k;
}


static bool sym_find(struct rstate *st, uint64_t key, uint32_t *id)
{
	return tachi_idset_find(&st->index, key_hash(key), &key, sym_eq, st, id);
}

static int sym_add(struct tach_reader *r, const struct sym *s, uint32_t *id)
{
	struct rstate *st = r->state;
	if (st->nsyms >= UINT32_MAX - 1 || !TACHI_RESERVE(st->syms, st->syms_cap, st->nsyms + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	*id = (uint32_t)st->nsyms;
	st->syms[*id] = *s;
	if (!tachi_idset_insert(&st->index, key_hash(s->key), *id))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->nsyms++;
	return TACH_OK;
}

static bool no_file(const uint8_t *s, size_t n)
{
	return is_tag(s, n, "NIL") || is_tag(s, n, "(null)");
}

/* Symbol text: name TAB lib TAB source. Names are not escaped, so with more fields the
 * last two are the paths and the rest, TABs included, is the name. */
static void split_text(const uint8_t *d, size_t s, size_t n, struct sym *y)
{
	size_t tabs[2] = { SIZE_MAX, SIZE_MAX }; /* last and second-last TAB */
	int ntabs = 0;
	for (size_t i = n; i > 0 && ntabs < 2; i--)
		if (d[s + i - 1] == '\t')
			tabs[ntabs++] = s + i - 1;
	y->name_off = s;
	y->file_kind = FILE_NONE;
	if (ntabs == 0) {
		y->name_len = n;
		return;
	}
	size_t lib_off, lib_len;
	bool have_src = ntabs == 2;
	if (have_src) {
		y->name_len = tabs[1] - s;
		lib_off = tabs[1] + 1;
		lib_len = tabs[0] - lib_off;
		size_t src_off = tabs[0] + 1, src_len = s + n - src_off;
		if (src_len && !no_file(d + src_off, src_len)) {
			y->file_kind = FILE_TEXT;
			y->file_off = src_off;
			y->file_len = src_len;
			return;
		}
	} else {
		y->name_len = tabs[0] - s;
		lib_off = tabs[0] + 1;
		lib_len = s + n - lib_off;
	}
	if (!no_file(d + lib_off, lib_len)) {
		y->file_kind = FILE_TEXT;
		y->file_off = lib_off;
		y->file_len = lib_len;
	}
}

/* Does a symbol line with this (id, unknown) width end well at p? *next gets the next line. */
static bool sym_line_fits(const struct tach_reader *r, size_t p, unsigned idw, unsigned unkw,
			  size_t *next)
{
	const uint8_t *d = r->in.data;
	size_t size = r->in.size;
	size_t t = p + 1 + idw;
	if (t + 1 + unkw + 1 > size || d[t] != '\t' || d[t + 1 + unkw] != '\t')
		return false;
	const uint8_t *lf = memchr(d + t + 2 + unkw, '\n', size - (t + 2 + unkw));
	*next = lf ? (size_t)(lf - d) + 1 : size;
	return true;
}

/* The id widths, from the first symbol lines: the first candidate they all fit. */
static int detect_sym_layout(struct tach_reader *r, size_t p)
{
	static const unsigned cand[][2] = { { 4, 4 }, { 8, 8 }, { 8, 4 } };
	struct rstate *st = r->state;
	const uint8_t *d = r->in.data;
	for (size_t c = 0; c < sizeof(cand) / sizeof(cand[0]); c++) {
		size_t q = p, lines = 0;
		bool ok = true;
		while (q < r->in.size && lines < DETECT_LINES) {
			size_t b = blank_line(r, q);
			if (b) {
				q += b;
				continue;
			}
			if (d[q] != '\t')
				break;
			if (!sym_line_fits(r, q, cand[c][0], cand[c][1], &q)) {
				ok = false;
				break;
			}
			lines++;
		}
		if (ok) {
			st->idw = cand[c][0];
			st->unkw = cand[c][1];
			return TACH_OK;
		}
	}
	return bad_layout(r, p, "symbol line: no TAB after a 4- or 8-byte id and its word");
}

static int sym_line(struct tach_reader *r, size_t *p)
{
	struct rstate *st = r->state;
	const uint8_t *d = r->in.data;
	size_t start = *p, next;
	if (!sym_line_fits(r, start, st->idw, st->unkw, &next))
		return bad_layout(r, start, st->idw == 4 ?
				  "symbol line: expected TAB, a 4-byte id, TAB, a 4-byte word, TAB" :
				  "symbol line: expected TAB, an 8-byte id, TAB, a word, TAB");
	size_t text = start + 3 + st->idw + st->unkw;
	if (next == r->in.size && (next == text || d[next - 1] != '\n')) {
		*p = r->in.size;
		return tachi_soft_fail(r, start, "the file ends inside a symbol line; symbol dropped");
	}
	size_t n = next - 1 - text;
	if (n && d[text + n - 1] == '\r')
		n--;
	struct sym y = { 0 };
	y.key = rd_be(d + start + 1, st->idw);
	y.unknown = rd_be(d + start + 2 + st->idw, st->unkw);
	y.frame = NO_FRAME;
	split_text(d, text, n, &y);
	*p = next;
	uint32_t id;
	if (sym_find(st, y.key, &id)) {
		if (!st->warned_dup) {
			st->warned_dup = true;
			int rc = tachi_soft_fail(r, start, "symbol id defined twice; the last definition wins "
					      "(further duplicates not reported)");
			if (rc)
				return rc;
		}
		st->syms[id] = y;
		return TACH_OK;
	}
	return sym_add(r, &y, &id);
}

/* ---- records ---- */

struct rcand {
	unsigned idw, hdrw;
	bool le;
};

/* Walks up to DETECT_LINES records from p under c; *nrec gets how many end with LF where
 * their frame count says and are followed by a record or tag line. */
static void records_fit(const struct tach_reader *r, size_t p, const struct rcand *c,
			size_t *nrec, bool *abc)
{
	const uint8_t *d = r->in.data;
	size_t size = r->in.size;
	struct rstate tmp = { .le = c->le };
	*nrec = 0;
	*abc = false;
	while (p < size && *nrec < DETECT_LINES) {
		size_t b = blank_line(r, p);
		if (b) {
			p += b;
			continue;
		}
		if (d[p] == '@') {
			const uint8_t *lf = memchr(d + p, '\n', size - p);
			p = lf ? (size_t)(lf - d) + 1 : size;
			continue;
		}
		uint64_t hdr = 1 + 4 * (uint64_t)c->hdrw;
		if (d[p] != '\t' || size - p < hdr)
			return;
		if (*nrec == 0)
			*abc = rd_word(&tmp, d + p + 1, c->hdrw) == 1 &&
			       rd_word(&tmp, d + p + 1 + c->hdrw, c->hdrw) == 0 &&
			       rd_word(&tmp, d + p + 1 + 2 * c->hdrw, c->hdrw) == 1;
		uint64_t n = rd_word(&tmp, d + p + 1 + 3 * c->hdrw, c->hdrw);
		if (n > (size - p - hdr) / c->idw)
			return;
		uint64_t end = p + hdr + n * c->idw;
		if (end == size || d[end] != '\n')
			return;
		(*nrec)++;
		p = (size_t)end + 1;
	}
}

/* Byte order and word widths of the records: the layout whose first record starts 1 0 1,
 * else the one that gets through more of the first records, else big-endian (the only
 * order seen in the wild) with 4-byte words. A record that fits no layout is reported
 * where it is, when it is read. */
static void detect_record_layout(struct tach_reader *r, size_t p)
{
	static const struct rcand cand[] = {
		{ 4, 4, false }, { 4, 4, true }, { 8, 4, false },
		{ 8, 4, true }, { 8, 8, false }, { 8, 8, true },
	};
	struct rstate *st = r->state;
	int best = -1;
	bool best_abc = false;
	size_t best_n = 0;
	for (int i = 0; i < (int)(sizeof(cand) / sizeof(cand[0])); i++) {
		if (st->idw && cand[i].idw != st->idw)
			continue;
		size_t n;
		bool abc;
		records_fit(r, p, &cand[i], &n, &abc);
		if (best < 0 || (abc && !best_abc) || (abc == best_abc && n > best_n)) {
			best = i;
			best_abc = abc;
			best_n = n;
		}
	}
	st->idw = cand[best].idw;
	st->hdrw = cand[best].hdrw;
	st->le = cand[best].le;
	if (!st->unkw)
		st->unkw = st->idw;
}

static int intern_sym(struct tach_reader *r, struct sym *y)
{
	struct rstate *st = r->state;
	const uint8_t *d = r->in.data;
	struct tach_frame f = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	uint64_t line = word_value(st, y->unknown, st->unkw);
	if (line >= 1 && line <= INT32_MAX)
		f.line = f.end_line = (int32_t)line;
	int rc = tach_dict_intern_string(&r->dict, (const char *)d + y->name_off, y->name_len, &f.func);
	if (!rc) {
		if (y->file_kind == FILE_TEXT)
			rc = tach_dict_intern_string(&r->dict, (const char *)d + y->file_off, y->file_len,
						     &f.file);
		else
			rc = tach_dict_intern_string(&r->dict, "~", 1, &f.file);
	}
	if (!rc)
		rc = tach_dict_intern_frame(&r->dict, &f, &y->frame);
	if (rc)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	return TACH_OK;
}

/* The frame of an id used in a record; an undefined id becomes a frame named after it. */
static int frame_of(struct tach_reader *r, uint64_t key, uint64_t off, uint32_t *frame)
{
	struct rstate *st = r->state;
	uint32_t id;
	if (sym_find(st, key, &id)) {
		if (st->syms[id].frame == NO_FRAME) {
			int rc = intern_sym(r, &st->syms[id]);
			if (rc)
				return rc;
		}
		*frame = st->syms[id].frame;
		return TACH_OK;
	}
	char name[24];
	int n = snprintf(name, sizeof(name), st->idw == 4 ? "0x%08llx" : "0x%016llx",
			 (unsigned long long)word_value(st, key, st->idw));
	if (!st->warned_undef) {
		st->warned_undef = true;
		int rc = tachi_soft_fail(r, off, "symbol id %s used but not defined; frames named by their "
				      "ids (further undefined ids not reported)", name);
		if (rc)
			return rc;
	}
	struct tach_frame f = { 0, 0, -1, -1, -1, -1, TACH_NO_OPCODE };
	struct sym y = { .key = key };
	if (tach_dict_intern_string(&r->dict, name, (size_t)n, &f.func) ||
	    tach_dict_intern_string(&r->dict, "~", 1, &f.file) ||
	    tach_dict_intern_frame(&r->dict, &f, &y.frame))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	*frame = y.frame;
	return sym_add(r, &y, &id);
}

static bool parse_hex(const uint8_t *s, size_t n, uint64_t *out)
{
	if (n > 2 && s[0] == '0' && (s[1] == 'x' || s[1] == 'X')) {
		s += 2;
		n -= 2;
	}
	if (!n || n > 16)
		return false;
	uint64_t v = 0;
	for (size_t i = 0; i < n; i++) {
		uint8_t c = s[i];
		unsigned x;
		if (c >= '0' && c <= '9')
			x = c - '0';
		else if (c >= 'a' && c <= 'f')
			x = c - 'a' + 10;
		else if (c >= 'A' && c <= 'F')
			x = c - 'A' + 10;
		else
			return false;
		v = v << 4 | x;
	}
	*out = v;
	return true;
}

/* "tachfmt:tid=N:iid=M", the path our writer gives thread symbols. */
static bool parse_marker(const uint8_t *s, size_t n, uint64_t *tid, uint32_t *iid)
{
	size_t k = strlen(MARKER);
	if (n <= k || memcmp(s, MARKER, k))
		return false;
	s += k;
	n -= k;
	const uint8_t *colon = memchr(s, ':', n);
	if (!colon)
		return false;
	size_t tl = (size_t)(colon - s);
	const uint8_t *i = colon + 1;
	size_t il = n - tl - 1;
	uint64_t t, v;
	if (il < 5 || memcmp(i, "iid=", 4) || !tachi_parse_dec((const char *)s, tl, UINT64_MAX, &t) ||
	    !tachi_parse_dec((const char *)i + 4, il - 4, UINT32_MAX, &v))
		return false;
	*tid = t;
	*iid = (uint32_t)v;
	return true;
}

static int thread_header(struct tach_reader *r, size_t off, const uint8_t *s, size_t n)
{
	struct rstate *st = r->state;
	size_t a = 0;
	while (a < n && (s[a] == '\t' || s[a] == ' '))
		a++;
	while (n > a && (s[n - 1] == '\t' || s[n - 1] == ' '))
		n--;
	uint64_t v;
	st->iid = 0;
	if (n - a == 3 && !memcmp(s + a, "NIL", 3)) {
		/* sb-sprof's writer prints NIL when its samples hold no thread entry. */
		st->tid = 0;
		if (!st->warned_nil) {
			st->warned_nil = true;
			int rc = tachi_soft_fail(r, off, "thread id NIL read as thread 0");
			if (rc)
				return rc;
		}
	} else if (parse_hex(s + a, n - a, &v)) {
		st->tid = v;
		uint32_t id;
		if ((st->idw == 8 || v <= UINT32_MAX) && sym_find(st, word_value(st, v, st->idw), &id)) {
			const struct sym *y = &st->syms[id];
			uint64_t t;
			uint32_t i;
			if (y->file_kind == FILE_TEXT &&
			    parse_marker((const uint8_t *)r->in.data + y->file_off, y->file_len, &t, &i)) {
				st->tid = t;
				st->iid = i;
			}
		}
	} else {
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "@threadV1.0: expected a hexadecimal thread id, not \"%.*s\"",
			     (int)(n - a > 40 ? 40 : n - a), (const char *)s + a);
	}
	bool created;
	struct tachi_pathcache *c = tachi_threads_get(&st->threads, st->tid, st->iid, &created);
	if (!c)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	st->thread = (size_t)(c - st->threads.v);
	if (created) {
		size_t old = st->tcount_cap;
		if (!TACHI_RESERVE(st->tcount, st->tcount_cap, st->threads.count))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		memset(st->tcount + old, 0, (st->tcount_cap - old) * sizeof(*st->tcount));
	}
	st->at = AT_THREAD;
	return TACH_OK;
}

static int cut_short(struct tach_reader *r, uint64_t off)
{
	struct rstate *st = r->state;
	st->at = AT_DONE;
	st->pos = r->in.size;
	int rc = tachi_soft_fail(r, off, "the file ends inside a record; complete records kept");
	return rc ? rc : TACH_EOF;
}

static int record(struct tach_reader *r, const struct tach_sample **out)
{
	struct rstate *st = r->state;
	const uint8_t *d = r->in.data;
	size_t p = st->pos, size = r->in.size;
	if (st->at != AT_THREAD)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, p, "record outside a @threadV1.0 block");
	uint64_t hdr = 1 + 4 * (uint64_t)st->hdrw;
	if (size - p < hdr)
		return cut_short(r, p);
	uint64_t n = rd_word(st, d + p + 1 + 3 * st->hdrw, st->hdrw);
	if (n > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, p,
			     "record of %llu frames exceeds the depth limit of %u",
			     (unsigned long long)n, r->lim.max_depth);
	if (n > (size - p - hdr) / st->idw)
		return cut_short(r, p);
	uint64_t end = p + hdr + n * st->idw;
	if (end == size)
		return cut_short(r, p);
	if (d[end] != '\n') {
		char msg[120];
		snprintf(msg, sizeof(msg), "record of %llu frames: expected LF at offset %llu",
			 (unsigned long long)n, (unsigned long long)end);
		return bad_layout(r, p, msg);
	}
	if (!st->warned_abc && (rd_word(st, d + p + 1, st->hdrw) != 1 ||
				rd_word(st, d + p + 1 + st->hdrw, st->hdrw) != 0 ||
				rd_word(st, d + p + 1 + 2 * st->hdrw, st->hdrw) != 1)) {
		st->warned_abc = true;
		int rc = tachi_soft_fail(r, p, "record header words are not 1 0 1; read as one sample each "
				    "(further ones not reported)");
		if (rc)
			return rc;
	}
	if (st->samples >= r->lim.max_samples)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, p, "more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	if (n && !TACHI_RESERVE(st->frames, st->frames_cap, (size_t)n))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	const uint8_t *q = d + p + hdr;
	for (uint64_t i = 0; i < n; i++, q += st->idw) {
		int rc = frame_of(r, rd_be(q, st->idw), (uint64_t)(q - d), &st->frames[i]);
		if (rc)
			return rc;
	}
	uint64_t k = st->tcount[st->thread]++;
	st->samples++;
	struct tach_sample *s = &r->sample;
	s->thread_id = st->tid;
	s->interp_id = st->iid;
	if (__builtin_mul_overflow(k, st->interval, &s->timestamp_us))
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, p, "synthesized timestamp overflows");
	s->weight = 1;
	s->status = TACH_STATUS_UNKNOWN;
	s->depth = (uint32_t)n;
	s->same_outer = 0;
	s->frames = st->frames;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples++;
	st->pos = (size_t)end + 1;
	*out = s;
	return TACH_OK;
}

static int sp_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct rstate *st = r->state;
	const uint8_t *d = r->in.data;
	size_t size = r->in.size;
	int rc;
	for (;;) {
		if (st->at == AT_DONE)
			return TACH_EOF;
		size_t p = st->pos;
		if (p >= size) {
			st->at = AT_DONE;
			if (!st->saw_end && (rc = tachi_soft_fail(r, size, "no final @end: the file may be "
								"truncated; complete records kept")))
				return rc;
			return TACH_EOF;
		}
		if (d[p] == '\t')
			return record(r, out);
		size_t b = blank_line(r, p);
		if (b) {
			st->pos += b;
			continue;
		}
		if (d[p] != '@')
			return bad_layout(r, p, "expected a record (TAB), a @ tag or the end of the file");
		size_t s, n, next, tn;
		bool lf;
		text_line(r, p, &s, &n, &next, &lf);
		switch (tag_kind(d + s, n, &tn)) {
		case TAG_THREAD:
			if ((rc = thread_header(r, p, d + s + tn, n - tn)))
				return rc;
			st->pos = next;
			break;
		case TAG_END:
			st->saw_end = true;
			st->pos = next;
			/* An @end between thread blocks (some writers close each one) is not the
			 * end; anything else after it is ignored. */
			if (next + 11 <= size && !memcmp(d + next, "@threadV1.0", 11))
				break;
			st->at = AT_DONE;
			return TACH_EOF;
		case TAG_OTHER:
			if ((rc = skip_section(r, &st->pos, d + s, tn)))
				return rc;
			break;
		default:
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, p, "unexpected \"%.*s\" after "
				     "the symbol table", (int)tn, (const char *)d + s);
		}
	}
}

static int expect_tag(struct tach_reader *r, size_t *p, int kind, const char *what)
{
	size_t s, n, next, tn;
	bool lf;
	const uint8_t *d = r->in.data;
	if (*p >= r->in.size)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, *p, "expected %s, found the end", what);
	text_line(r, *p, &s, &n, &next, &lf);
	if (tag_kind(d + s, n, &tn) != kind || tn != n || !lf)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, *p,
			     kind == TAG_MAGIC ? "not a Sampler trace: expected %s" : "expected %s",
			     what);
	*p = next;
	return TACH_OK;
}

static int sp_open(struct tach_reader *r)
{
	struct rstate *st = r->state;
	const uint8_t *d = r->in.data;
	size_t size = r->in.size, p = 0;
	int rc;
	if (!st->interval)
		st->interval = DEFAULT_INTERVAL_US;
	r->meta.interval_us = st->interval;
	r->meta.start_time_us = 0;
	if ((rc = expect_tag(r, &p, TAG_MAGIC, "@supersamplerV1.0 or V1.1")) ||
	    (rc = expect_tag(r, &p, TAG_SYMTAB, "@symboltableV1.0 or V1.1")))
		return rc;
	while (p < size) {
		size_t b = blank_line(r, p);
		if (b) {
			p += b;
			continue;
		}
		if (d[p] == '\t') {
			if (!st->idw && (rc = detect_sym_layout(r, p)))
				return rc;
			if ((rc = sym_line(r, &p)))
				return rc;
			continue;
		}
		if (d[p] != '@')
			return bad_layout(r, p, "expected a symbol line (TAB) or a @ tag");
		size_t s, n, next, tn;
		bool lf;
		text_line(r, p, &s, &n, &next, &lf);
		int kind = tag_kind(d + s, n, &tn);
		if (kind == TAG_END) {
			p = next;
			break;
		}
		if (kind == TAG_THREAD) /* no @end after the table, as sb-sprof writes */
			break;
		if (kind != TAG_OTHER)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, p,
				     "unexpected \"%.*s\" in the symbol table", (int)tn,
				     (const char *)d + s);
		if ((rc = skip_section(r, &p, d + s, tn)))
			return rc;
	}
	st->pos = p;
	st->at = AT_BODY;
	detect_record_layout(r, p);
	return TACH_OK;
}

static void sp_free(struct tach_reader *r)
{
	struct rstate *st = r->state;
	free(st->syms);
	tachi_idset_free(&st->index);
	tachi_threads_free(&st->threads);
	free(st->tcount);
	free(st->frames);
}

const struct tachi_reader_ops tachi_sampler_reader_ops = {
	.state_size = sizeof(struct rstate),
	.option = sp_option,
	.open = sp_open,
	.next = sp_next,
	.free = sp_free,
	.whole_input = true,
};
