/* xctrace reader: the XML of Instruments' time-profile table, as `xctrace export --input
 * X.trace --xpath '/trace-toc/run/data/table[@schema="time-profile"]'` writes it, read as
 * inferno's xctrace collapser reads it, so the stacks and counts are inferno's:
 *
 *   <trace-query-result><node xpath="..."><schema name="time-profile">...</schema>
 *   <row><sample-time id="1" fmt="00:00.057.246">57246708</sample-time>
 *        <thread id="2" fmt="main  0x8480c1 (demo, pid: 49374)"><tid id="3">8683713</tid>
 *          <process id="4" fmt="demo (49374)"><pid id="5">49374</pid></process></thread>
 *        <process ref="4"/><core .../><thread-state .../><weight id="9">1000000</weight>
 *        <backtrace id="10"><frame id="11" name="start" addr="0x18d373904">
 *          <binary id="12" name="dyld" UUID="..." load-addr="0x..." path="/usr/lib/dyld"/>
 *        </frame>...</backtrace></row>...</node></trace-query-result>
 *
 * An element with id="N" is defined there; one with ref="N" (empty) stands for it again:
 * ids are kept for the elements read (sample-time, weight, thread, tid, process, pid,
 * backtrace, frame, binary), and a ref must name an earlier one of the same element. Each
 * row under a node is one sample: its sample-time (ns from the recording's start) the
 * timestamp, its weight (ns) the time it stands for (meta.sample_time 1), count 1 (inferno
 * counts rows, not weights), its thread's tid the thread id and its pid the interpreter
 * id (where it fits 32 bits); the thread's fmt, as the export gives it, names the thread
 * as the outermost frame, file "[comm]", line the pid (formats/comm.h). The backtrace's
 * frames come innermost first; a frame is its name as a bare name (file "~", no line), a
 * Rust name left half demangled fixed as inferno fixes it (rust_names.h), with its addr and
 * its binary (path, else name; UUID as build id) as native data. Source lines are not
 * read, nor are cores and thread states. A row without a backtrace (a <sentinel/> in its
 * place) is left out, as inferno leaves it out, said once.
 *
 * Refused, with the byte offset: what is not XML (base/xml.h: its bounds), a root that is
 * not <trace-query-result>, a ref to no earlier element or to another kind of element, an
 * id given twice, a frame without its name, a row with a backtrace but no sample-time or
 * weight, a number that is none, a backtrace deeper than max-depth, rows past max-samples.
 * Memory is one entry a defined element, one frame id a backtrace frame, the dict. */
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/hash.h"
#include "base/xml.h"
#include "core/handles.h"
#include "core/format.h"
#include "formats/rust_names.h"
#include "formats/xctrace/xctrace.h"

enum {
	K_TIME = 1, K_WEIGHT, K_TID, K_PID, K_PROCESS, K_THREAD, K_BACKTRACE, K_FRAME, K_BINARY,
	K_OTHER /* an element not read (core, thread-state...): its name at v, a bytes */
};
static const char *const kind_name[] = {
	"", "sample-time", "weight", "tid", "pid", "process", "thread", "backtrace", "frame",
	"binary", "",
};

/* A defined element: a number's value (process: its pid), a thread's index, a backtrace's
 * frames (pool[v, v + a)), a frame's dict id, a binary's mapping. */
struct xct_ent {
	uint64_t xid, v;
	uint32_t a;
	uint8_t kind;
	bool has;      /* process: has a pid */
};

struct xct_thread {
	uint64_t tid, pid;
	bool has_pid;
	uint32_t comm; /* its name frame, NO_FRAME without a fmt */
};

struct xct_rstate {
	struct tachi_xml x;
	struct xct_ent *ents;
	size_t nents, ents_cap;
	struct tachi_idset ids;
	struct xct_thread *threads;
	size_t nthreads, threads_cap;
	uint32_t *pool;
	size_t npool, pool_cap;
	uint32_t *out;
	size_t out_cap;
	char *buf;
	size_t buf_cap;
	uint64_t rows, skipped;
	bool schema_seen;
	uint32_t tilde, comm_file;
};

#define NO_FRAME UINT32_MAX

/* The sample a row gives. */
struct xct_row {
	bool has_time, has_weight, has_bt;
	uint64_t time, weight;
	uint32_t thread;   /* index, NO_FRAME: none */
	uint64_t bt_at;
	uint32_t bt_len;
};

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

static int bad(struct tach_reader *r, size_t off, const char *what)
{
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off, "xctrace export: %s", what);
}

static bool ent_eq(void *ctx, uint32_t id, const void *key)
{
	const struct xct_rstate *st = ctx;
	return st->ents[id].xid == *(const uint64_t *)key;
}

static const struct xct_ent *ent_find(struct xct_rstate *st, uint64_t xid)
{
	uint32_t id;
	return tachi_idset_find(&st->ids, tachi_mix64(xid), &xid, ent_eq, st, &id) ? &st->ents[id]
										     : NULL;
}

static int ent_put(struct tach_reader *r, size_t off, struct xct_ent e)
{
	struct xct_rstate *st = r->state;
	if (ent_find(st, e.xid))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "xctrace export: id %llu given twice", (unsigned long long)e.xid);
	if (st->nents >= UINT32_MAX - 1)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off, "xctrace export: too many ids");
	if (!TACHI_RESERVE(st->ents, st->ents_cap, st->nents + 1))
		return nomem(r);
	st->ents[st->nents] = e;
	if (!tachi_idset_insert(&st->ids, tachi_mix64(e.xid), (uint32_t)st->nents))
		return nomem(r);
	st->nents++;
	return TACH_OK;
}

static int attr_num(struct tach_reader *r, const struct tachi_xtok *t, const char *name,
		    bool *has, uint64_t *v);

/* Passes over element t, keeping the ids of it and the elements in it, so that a ref to
 * one of them is known for what it is. */
static int skip_el(struct tach_reader *r, const struct tachi_xtok *t)
{
	struct xct_rstate *st = r->state;
	struct tachi_xtok u = *t;
	uint32_t depth = st->x.depth - (t->type == TX_START);
	int rc;
	for (;;) {
		bool has;
		uint64_t id;
		if ((u.type == TX_START || u.type == TX_EMPTY) &&
		    ((rc = attr_num(r, &u, "id", &has, &id)) ||
		     (has && (rc = ent_put(r, u.off, (struct xct_ent){ id, u.name.at, (uint32_t)u.name.len,
								       K_OTHER, false })))))
			return rc;
		if (st->x.depth <= depth)
			return TACH_OK;
		if ((rc = tachi_xml_next(&st->x, &u)))
			return rc;
	}
}

/* Attribute name of t as a decimal number (*has false without one). */
static int attr_num(struct tach_reader *r, const struct tachi_xtok *t, const char *name,
		    bool *has, uint64_t *v)
{
	struct xct_rstate *st = r->state;
	const struct tachi_xattr *a = tachi_xml_attr(&st->x, t, name);
	*has = a != NULL;
	if (a && (a->escaped || !tachi_parse_dec((const char *)st->x.p + a->value.at,
						  a->value.len, UINT64_MAX, v)))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off,
			     "xctrace export: %s=\"%.*s\", no number", name,
			     (int)(a->value.len < 32 ? a->value.len : 32),
			     (const char *)st->x.p + a->value.at);
	return TACH_OK;
}

/* The element t stands for: its ref's entry *e (of kind k; its content passed over), or
 * its id (*has_id) when it defines one. */
static int ref_or_id(struct tach_reader *r, const struct tachi_xtok *t, int k,
		     const struct xct_ent **e, uint64_t *id, bool *has_id)
{
	struct xct_rstate *st = r->state;
	bool has_ref;
	uint64_t ref;
	int rc = attr_num(r, t, "ref", &has_ref, &ref);
	*e = NULL;
	if (rc || (!has_ref && (rc = attr_num(r, t, "id", has_id, id))))
		return rc;
	if (!has_ref)
		return TACH_OK;
	if (!(*e = ent_find(st, ref)))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off,
			     "xctrace export: a <%s> ref to %llu, which no element before it has "
			     "as its id", kind_name[k], (unsigned long long)ref);
	if ((*e)->kind != k)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off,
			     "xctrace export: a <%s> ref to %llu, which is a <%.*s>", kind_name[k],
			     (unsigned long long)ref,
			     (int)((*e)->kind == K_OTHER ? (*e)->a : strlen(kind_name[(*e)->kind])),
			     (*e)->kind == K_OTHER ? (const char *)st->x.p + (*e)->v
						   : kind_name[(*e)->kind]);
	return tachi_xml_skip(&st->x, t);
}

/* The next child element of the element whose content is being read (*t), or *done at
 * its end; text between them is passed over. */
static int child(struct xct_rstate *st, struct tachi_xtok *t, bool *done)
{
	for (;;) {
		int rc = tachi_xml_next(&st->x, t);
		if (rc)
			return rc;
		*done = t->type == TX_END;
		if (t->type != TX_TEXT)
			return TACH_OK;
	}
}

/* The decimal number an element t holds as its text (child elements passed over). */
static int num_text(struct tach_reader *r, const struct tachi_xtok *t, uint64_t *v)
{
	struct xct_rstate *st = r->state;
	struct tachi_xspan s = { 0, 0 };
	struct tachi_xtok u;
	bool esc = false, seen = false;
	int rc;
	if (t->type == TX_START)
		for (;;) {
			if ((rc = tachi_xml_next(&st->x, &u)))
				return rc;
			if (u.type == TX_END)
				break;
			if (u.type == TX_TEXT && seen)
				return bad(r, u.off, "a number's text in two pieces");
			if (u.type == TX_TEXT)
				s = u.text, esc = u.escaped, seen = true;
			else if ((rc = skip_el(r, &u)))
				return rc;
		}
	const char *p = (const char *)st->x.p + s.at;
	size_t n = s.len;
	while (n && (*p == ' ' || *p == '\n' || *p == '\r' || *p == '\t'))
		p++, n--;
	while (n && (p[n - 1] == ' ' || p[n - 1] == '\n' || p[n - 1] == '\r' || p[n - 1] == '\t'))
		n--;
	if (esc || !tachi_parse_dec(p, n, UINT64_MAX, v))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off,
			     "xctrace export: a <%.*s> that holds no number", (int)t->name.len,
			     (const char *)st->x.p + t->name.at);
	return TACH_OK;
}

/* A number element of kind k (sample-time, weight, tid, pid): its value. */
static int number(struct tach_reader *r, const struct tachi_xtok *t, int k, uint64_t *v)
{
	const struct xct_ent *e;
	uint64_t id;
	bool has_id = false;
	int rc = ref_or_id(r, t, k, &e, &id, &has_id);
	if (rc || e) {
		*v = e ? e->v : 0;
		return rc;
	}
	if ((rc = num_text(r, t, v)))
		return rc;
	return has_id ? ent_put(r, t->off, (struct xct_ent){ id, *v, 0, (uint8_t)k, true }) : TACH_OK;
}

/* An attribute's text, entities decoded, in st->buf (*s, *n); NULL when t has none. */
static int attr_text(struct tach_reader *r, const struct tachi_xtok *t, const char *name,
		     const char **s, size_t *n)
{
	struct xct_rstate *st = r->state;
	const struct tachi_xattr *a = tachi_xml_attr(&st->x, t, name);
	*s = NULL;
	*n = 0;
	if (!a)
		return TACH_OK;
	if (!TACHI_RESERVE(st->buf, st->buf_cap, 2 * a->value.len + 1))
		return nomem(r);
	*n = tachi_xml_unescape(&st->x, a->value, a->escaped, st->buf);
	*s = st->buf;
	return TACH_OK;
}

/* A string of the dict: an attribute of t, entities decoded (TACH_NO_STRING without it). */
static int attr_string(struct tach_reader *r, const struct tachi_xtok *t, const char *name,
		       uint32_t *id)
{
	const char *s;
	size_t n;
	int rc = attr_text(r, t, name, &s, &n);
	*id = TACH_NO_STRING;
	if (rc || !s)
		return rc;
	return tach_dict_intern_string(&r->dict, s, n, id) ? nomem(r) : TACH_OK;
}

/* A process element: its pid (*has false without one). */
static int process(struct tach_reader *r, const struct tachi_xtok *t, bool *has, uint64_t *pid)
{
	struct xct_rstate *st = r->state;
	const struct xct_ent *e;
	struct tachi_xtok u;
	uint64_t id;
	bool has_id = false, done = t->type != TX_START;
	int rc = ref_or_id(r, t, K_PROCESS, &e, &id, &has_id);
	*has = false;
	if (rc || e) {
		*has = e && e->has, *pid = e ? e->v : 0;
		return rc;
	}
	while (!done) {
		if ((rc = child(st, &u, &done)) || done)
			break;
		if (tachi_xml_is(&st->x, u.name, "pid")) {
			*has = true;
			rc = number(r, &u, K_PID, pid);
		} else {
			rc = skip_el(r, &u);
		}
		if (rc)
			return rc;
	}
	if (rc || !has_id)
		return rc;
	return ent_put(r, t->off, (struct xct_ent){ id, *has ? *pid : 0, 0, K_PROCESS, *has });
}

/* The thread's name frame: file "[comm]", function its fmt, line its pid. */
static int comm_frame(struct tach_reader *r, const struct tachi_xtok *t, struct xct_thread *th)
{
	struct xct_rstate *st = r->state;
	int32_t line = th->has_pid && th->pid <= INT32_MAX ? (int32_t)th->pid : -1;
	struct tach_frame f = { st->comm_file, 0, line, line, -1, -1, TACH_NO_OPCODE };
	int rc = attr_string(r, t, "fmt", &f.func);
	th->comm = NO_FRAME;
	if (rc || f.func == TACH_NO_STRING)
		return rc;
	return tach_dict_intern_frame(&r->dict, &f, &th->comm) ? nomem(r) : TACH_OK;
}

/* A thread element: its index in st->threads. */
static int thread(struct tach_reader *r, const struct tachi_xtok *t, uint32_t *ix)
{
	struct xct_rstate *st = r->state;
	const struct xct_ent *e;
	struct tachi_xtok u;
	struct xct_thread th = { 0, 0, false, NO_FRAME };
	uint64_t id;
	bool has_id = false, done = t->type != TX_START;
	int rc = ref_or_id(r, t, K_THREAD, &e, &id, &has_id);
	if (rc || e) {
		*ix = e ? e->a : NO_FRAME;
		return rc;
	}
	while (!done && !(rc = child(st, &u, &done)) && !done) {
		if (tachi_xml_is(&st->x, u.name, "tid"))
			rc = number(r, &u, K_TID, &th.tid);
		else if (tachi_xml_is(&st->x, u.name, "process"))
			rc = process(r, &u, &th.has_pid, &th.pid);
		else
			rc = skip_el(r, &u);
		if (rc)
			return rc;
	}
	if (rc || (rc = comm_frame(r, t, &th)))
		return rc;
	if (!TACHI_RESERVE(st->threads, st->threads_cap, st->nthreads + 1))
		return nomem(r);
	*ix = (uint32_t)st->nthreads;
	st->threads[st->nthreads++] = th;
	return has_id ? ent_put(r, t->off, (struct xct_ent){ id, 0, *ix, K_THREAD, true }) : TACH_OK;
}

/* A binary element: its mapping (0 when it names no file). */
static int binary(struct tach_reader *r, const struct tachi_xtok *t, uint32_t *map)
{
	const struct xct_ent *e;
	uint64_t id;
	bool has_id = false;
	int rc = ref_or_id(r, t, K_BINARY, &e, &id, &has_id);
	if (rc || e) {
		*map = e ? e->a : 0;
		return rc;
	}
	/* No range: the export gives a load address but no size, so the mapping claims
	 * none (start, limit and offset 0), as the perf reader's dso mappings; it names the
	 * binary of each frame and its UUID. */
	struct tach_mapping m = { 0, 0, 0, TACH_NO_STRING, TACH_NO_STRING,
				  TACH_MAPPING_HAS_FUNCTIONS };
	*map = 0;
	if ((rc = attr_string(r, t, "path", &m.file)) ||
	    (m.file == TACH_NO_STRING && (rc = attr_string(r, t, "name", &m.file))) ||
	    (rc = attr_string(r, t, "UUID", &m.build_id)))
		return rc;
	if (m.file != TACH_NO_STRING && tach_dict_intern_mapping(&r->dict, &m, map))
		return nomem(r);
	if ((rc = tachi_xml_skip(&((struct xct_rstate *)r->state)->x, t)))
		return rc;
	return has_id ? ent_put(r, t->off, (struct xct_ent){ id, 0, *map, K_BINARY, true }) : TACH_OK;
}

/* A frame's dict frame: its name (fixed as inferno fixes Rust names), address, binary. */
static int frame_intern(struct tach_reader *r, const struct tachi_xtok *t,
			struct tach_frame_native *nat, uint32_t *fid)
{
	struct xct_rstate *st = r->state;
	const char *s;
	size_t n, fixed;
	int rc = attr_text(r, t, "name", &s, &n);
	if (rc)
		return rc;
	if (!s)
		return bad(r, t->off, "a <frame> without its name");
	struct tach_frame f = { st->tilde, 0, TACH_NO_LINE, TACH_NO_LINE, -1, -1, TACH_NO_OPCODE };
	if (tachi_rust_unhash(s, n, st->buf + n, &fixed))
		s = st->buf + n, n = fixed;
	if (tach_dict_intern_string(&r->dict, s, n, &f.func) ||
	    tach_dict_intern_frame_native(&r->dict, &f, nat, fid))
		return nomem(r);
	return TACH_OK;
}

/* A frame's address, 0 when it gives none. */
static uint64_t frame_addr(struct xct_rstate *st, const struct tachi_xtok *t)
{
	const struct tachi_xattr *a = tachi_xml_attr(&st->x, t, "addr");
	const char *p = a ? (const char *)st->x.p + a->value.at : NULL;
	uint64_t v = 0;
	if (!a || a->value.len < 3 || a->value.len > 18 || p[0] != '0' || p[1] != 'x')
		return 0;
	for (size_t i = 2; i < a->value.len; i++) {
		int h = tachi_hexval(p[i]);
		if (h < 0)
			return 0;
		v = v << 4 | (uint64_t)h;
	}
	return v;
}

/* A frame element: its dict frame. */
static int frame(struct tach_reader *r, const struct tachi_xtok *t, uint32_t *fid)
{
	struct xct_rstate *st = r->state;
	const struct xct_ent *e;
	struct tachi_xtok u;
	uint64_t id;
	bool has_id = false, done = t->type != TX_START;
	int rc = ref_or_id(r, t, K_FRAME, &e, &id, &has_id);
	if (rc || e) {
		*fid = e ? e->a : 0;
		return rc;
	}
	struct tach_frame_native nat = { frame_addr(st, t), 0, 0 };
	while (!done && !(rc = child(st, &u, &done)) && !done) {
		if (tachi_xml_is(&st->x, u.name, "binary"))
			rc = binary(r, &u, &nat.mapping);
		else
			rc = skip_el(r, &u);
		if (rc)
			return rc;
	}
	if (rc || (rc = frame_intern(r, t, &nat, fid)))
		return rc;
	return has_id ? ent_put(r, t->off, (struct xct_ent){ id, 0, *fid, K_FRAME, true }) : TACH_OK;
}

/* A backtrace element: its frames, innermost first, pool[*at, *at + *len). */
static int backtrace(struct tach_reader *r, const struct tachi_xtok *t, uint64_t *at,
		     uint32_t *len)
{
	struct xct_rstate *st = r->state;
	const struct xct_ent *e;
	struct tachi_xtok u;
	uint64_t id;
	bool has_id = false, done = t->type != TX_START;
	int rc = ref_or_id(r, t, K_BACKTRACE, &e, &id, &has_id);
	if (rc || e) {
		*at = e ? e->v : 0, *len = e ? e->a : 0;
		return rc;
	}
	*at = st->npool;
	*len = 0;
	while (!done && !(rc = child(st, &u, &done)) && !done) {
		if (!tachi_xml_is(&st->x, u.name, "frame")) {
			if ((rc = skip_el(r, &u)))
				return rc;
			continue;
		}
		if (*len >= r->lim.max_depth)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, u.off,
				     "stack deeper than the limit of %u frames (see --max-depth)",
				     r->lim.max_depth);
		uint32_t fid;
		if ((rc = frame(r, &u, &fid)))
			return rc;
		if (!TACHI_RESERVE(st->pool, st->pool_cap, st->npool + 1))
			return nomem(r);
		st->pool[st->npool++] = fid;
		(*len)++;
	}
	if (rc || !has_id)
		return rc;
	return ent_put(r, t->off, (struct xct_ent){ id, *at, *len, K_BACKTRACE, true });
}

/* One column of a row. */
static int column(struct tach_reader *r, const struct tachi_xtok *u, struct xct_row *row)
{
	struct xct_rstate *st = r->state;
	bool has_pid;
	uint64_t pid;
	if (tachi_xml_is(&st->x, u->name, "sample-time")) {
		row->has_time = true;
		return number(r, u, K_TIME, &row->time);
	}
	if (tachi_xml_is(&st->x, u->name, "weight")) {
		row->has_weight = true;
		return number(r, u, K_WEIGHT, &row->weight);
	}
	if (tachi_xml_is(&st->x, u->name, "thread"))
		return thread(r, u, &row->thread);
	/* the thread's own process is the one its samples are of */
	if (tachi_xml_is(&st->x, u->name, "process"))
		return process(r, u, &has_pid, &pid);
	if (tachi_xml_is(&st->x, u->name, "backtrace")) {
		row->has_bt = true;
		return backtrace(r, u, &row->bt_at, &row->bt_len);
	}
	return skip_el(r, u);
}

/* The sample of a row with a backtrace. */
static int give(struct tach_reader *r, const struct tachi_xtok *t, const struct xct_row *row)
{
	struct xct_rstate *st = r->state;
	const struct xct_thread *th = row->thread != NO_FRAME ? &st->threads[row->thread] : NULL;
	if (!row->has_time || !row->has_weight)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t->off,
			     "xctrace export: a row with a backtrace but no <%s>",
			     row->has_time ? "weight" : "sample-time");
	if (st->rows >= r->lim.max_samples)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, t->off,
			     "more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	uint32_t depth = row->bt_len + (th && th->comm != NO_FRAME);
	if (!TACHI_RESERVE(st->out, st->out_cap, (size_t)depth + 1))
		return nomem(r);
	if (row->bt_len) /* an empty backtrace may come before any pool */
		memcpy(st->out, st->pool + row->bt_at, (size_t)row->bt_len * sizeof(uint32_t));
	if (depth > row->bt_len)
		st->out[row->bt_len] = th->comm;
	st->rows++;
	struct tach_sample *s = &r->sample;
	s->thread_id = th ? th->tid : 0;
	s->interp_id = th && th->has_pid && th->pid <= UINT32_MAX ? (uint32_t)th->pid : 0;
	s->timestamp_us = row->time / 1000;
	s->time_ns = row->weight;
	s->weight = 1;
	s->status = TACH_STATUS_UNKNOWN;
	s->depth = depth;
	s->same_outer = 0;
	s->frames = st->out;
	r->stats.full_records++;
	r->stats.total_records++;
	r->stats.total_samples++;
	return TACH_OK;
}

/* A row: its sample (*gave), or none where it has no backtrace. */
static int row(struct tach_reader *r, const struct tachi_xtok *t, bool *gave)
{
	struct xct_rstate *st = r->state;
	struct xct_row rw = { .thread = NO_FRAME };
	struct tachi_xtok u;
	bool done = t->type != TX_START;
	int rc = TACH_OK;
	while (!done && !(rc = child(st, &u, &done)) && !done)
		if ((rc = column(r, &u, &rw)))
			return rc;
	if (rc)
		return rc;
	*gave = rw.has_bt;
	st->skipped += !rw.has_bt;
	return rw.has_bt ? give(r, t, &rw) : TACH_OK;
}

/* Where the walk is: the element t at depth x.depth - 1 (1: the root). */
static int element(struct tach_reader *r, const struct tachi_xtok *t, bool *gave)
{
	struct xct_rstate *st = r->state;
	uint32_t d = st->x.depth - (t->type == TX_START);
	const struct tachi_xattr *a;
	if (d == 0 && !tachi_xml_is(&st->x, t->name, "trace-query-result"))
		return bad(r, t->off, "the root element is not <trace-query-result>");
	if (d == 2 && tachi_xml_is(&st->x, st->x.open[1], "node") &&
	    tachi_xml_is(&st->x, t->name, "row"))
		return row(r, t, gave);
	bool has;
	uint64_t id;
	int rc = attr_num(r, t, "id", &has, &id);
	if (rc || (has && (rc = ent_put(r, t->off, (struct xct_ent){ id, t->name.at,
								   (uint32_t)t->name.len, K_OTHER,
								   false }))))
		return rc;
	if (d == 2 && tachi_xml_is(&st->x, st->x.open[1], "node")) {
		a = tachi_xml_is(&st->x, t->name, "schema") ? tachi_xml_attr(&st->x, t, "name")
							    : NULL;
		st->schema_seen |= a && tachi_xml_is(&st->x, a->value, "time-profile");
	}
	return TACH_OK;
}

static int xct_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct xct_rstate *st = r->state;
	struct tachi_xtok t;
	bool gave = false;
	int rc;
	do {
		if ((rc = tachi_xml_next(&st->x, &t)))
			return rc;
		if (t.type == TX_EOF)
			break;
		if ((t.type == TX_START || t.type == TX_EMPTY) && (rc = element(r, &t, &gave)))
			return rc;
	} while (!gave);
	if (gave) {
		*out = &r->sample;
		return TACH_OK;
	}
	if (st->skipped)
		tachi_warn(&r->warn, TACH_POS_NONE, 0,
			   "%llu row%s without a backtrace (a <sentinel/> in its place) left out",
			   (unsigned long long)st->skipped, st->skipped > 1 ? "s" : "");
	if (!st->rows && !st->schema_seen)
		return bad(r, st->x.n, "no time-profile table (xctrace export --xpath "
			   "'/trace-toc/run/data/table[@schema=\"time-profile\"]')");
	return TACH_EOF;
}

static int xct_open(struct tach_reader *r)
{
	struct xct_rstate *st = r->state;
	r->meta.sample_time = 1;
	r->meta.interval_us = 0;
	if (tach_dict_intern_string(&r->dict, "~", 1, &st->tilde) ||
	    tach_dict_intern_string(&r->dict, "[comm]", 6, &st->comm_file))
		return nomem(r);
	tachi_xml_init(&st->x, r->in.data, r->in.size, TACHI_XML_MAX_DEPTH, &r->err);
	return TACH_OK;
}

static void xct_free(struct tach_reader *r)
{
	struct xct_rstate *st = r->state;
	free(st->ents);
	tachi_idset_free(&st->ids);
	free(st->threads);
	free(st->pool);
	free(st->out);
	free(st->buf);
}

const struct tachi_reader_ops tachi_xctrace_reader_ops = {
	.state_size = sizeof(struct xct_rstate),
	.open = xct_open,
	.next = xct_next,
	.free = xct_free,
	.whole_input = true,
};
