/* gperftools' legacy CPU profile (libprofiler's CPUPROFILE output), read only.
 *
 * Layout, in pointer-sized native-endian slots: a header 0, 3, 0, period_us, 0; records
 * count, depth, pc[depth] (leaf first); a trailer 0, 1, 0; then the process's
 * /proc/self/maps text. The slot size and byte order are detected from the header the way
 * google/pprof does (32/64-bit, little/big-endian, tried in that order).
 *
 * Supported: every profile libprofiler writes, including several records for one stack
 * (hash-table evictions: their counts are summed), truncated files (the whole records are
 * kept and the cut is reported), a missing trailer or maps section, junk lines in the maps
 * text. Each distinct stack becomes one sample whose weight is its summed count, in
 * first-seen order, with timestamps synthesized at the header period, and the time it
 * stands for its count of periods (meta.sample_time: the period is CPU time). Frames are
 * symbolized from the binaries named in the maps text (symbolize/symbolize.c).
 *
 * Not supported: the Java variant (header version 1) and headers with other than 3 header
 * words (pprof rejects them too). Unlike pprof, no frames are dropped by its heuristic for
 * frames shared by nearly all samples; like pprof, a leaf recorded twice (older
 * libprofilers) is kept once. Records with count 0 are skipped; a record without PCs is an
 * empty stack; a PC of 0 is a frame named 0x0. These and truncation are warnings, errors
 * with the strict option.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/hash.h"
#include "base/io.h"
#include "core/handles.h"
#include "core/format.h"
#include "core/formats.h"
#include "formats/gperf/gperf.h"
#include "formats/native_syms.h"
#include "symbolize/symbolize.h"

#define RELEASE_STEP ((size_t)4 << 20)
/* CPUPROFILE_FREQUENCY is a whole number of hertz, so libprofiler's longest period is
 * 1 s; a minute leaves room for any other writer and refuses words that are not periods. */
#define MAX_PERIOD_US 60000000u

/* A distinct stack lives in the arena: this header, then the ids (u32) of its PCs (those
 * used: without a duplicated leaf) in the table of distinct PCs, padded to 8 bytes. Parsed
 * input then need not stay in memory, and a record of a known stack touches one place.
 * The stack's arena offset / 8 is its id in the index. */
struct ghead {
	uint64_t hash;
	uint64_t count;
	uint64_t off;    /* input offset of its first record, for messages */
	uint32_t depth;  /* PCs used */
	uint32_t pad;
};

/* The frames a distinct PC (value in pcv) resolves to as a leaf ([1]) and as a return
 * address ([0], looked up at pc - 1): frame ids in chain[first[k], first[k] + n[k]). */
struct gpc {
	uint32_t first[2], n[2];
	bool done[2];
};

struct gread {
	/* options */
	struct tachi_native_opts opt;
	/* layout */
	unsigned slot;   /* 4 or 8 */
	bool big;
	bool swap;       /* big differs from this machine's byte order */
	uint64_t period;
	/* stacks */
	uint32_t *st;        /* the stacks' arena ids, in first-seen order */
	size_t st_count, st_cap;
	struct tachi_idset st_index;
	uint8_t *arena;
	size_t arena_len, arena_cap;
	size_t next_stack;
	uint64_t clock;
	/* symbolization */
	struct tachi_sym *sym;
	uint64_t *pcv;       /* the distinct PCs' values, apart: compared for every record */
	struct gpc *pcs;
	size_t pc_count, pc_cap, pcv_cap;
	uint32_t *pc_slots;  /* open addressing: pc id + 1, 0 empty */
	size_t pc_mask;
	struct tachi_native_chain chain;
	uint32_t *frames;
	size_t frames_cap;
	char *program;       /* the first executable mapping's path: pprof's main binary */
	const struct tach_reader *r;
	/* header version 1, the Java agent's: PCs are ids the text after the trailer names
	 * (" 0xID function (file:line)"), looked up as they are */
	bool java;
	struct java_name *jsyms;  /* sorted by id */
	size_t njsyms, jsyms_cap;
	char *jtext;         /* the names' text, copied: the input is let go of */
};

struct java_name {
	uint64_t id;
	const char *func, *file; /* in the input, which stays whole for a Java profile */
	uint32_t func_len, file_len;
	int32_t line;            /* 0 when none */
};

static void set_layout(struct gread *g, unsigned slot, bool big)
{
	g->slot = slot;
	g->big = big;
	g->swap = big != (__BYTE_ORDER__ == __ORDER_BIG_ENDIAN__);
}

static inline uint64_t slot_at(const struct gread *g, const uint8_t *p)
{
	return g->slot == 8 ? tachi_rd64(p, g->swap) : tachi_rd32(p, g->swap);
}

static int gr_option(struct tach_reader *r, const char *key, const char *value)
{
	struct gread *g = r->state;
	int rc = tachi_native_option(r, &g->opt, key, value);
	if (rc != TACHI_NATIVE_NOT_MINE)
		return rc;
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "gperf reader has no option %s", key);
}

/* ---- header ---- */

static int detect(struct tach_reader *r, struct gread *g)
{
	const uint8_t *d = r->in.data;
	size_t n = r->in.size;
	static const struct { unsigned slot; bool big; } tries[4] = {
		{ 4, false }, { 4, true }, { 8, false }, { 8, true },
	};
	for (int i = 0; i < 4; i++) {
		set_layout(g, tries[i].slot, tries[i].big);
		if (n < 5 * (size_t)g->slot)
			continue;
		uint64_t h[5];
		for (int k = 0; k < 5; k++)
			h[k] = slot_at(g, d + k * g->slot);
		if (h[0] == 0 && h[1] == 3 && h[2] <= 1 && h[3] > 0 && h[4] == 0) {
			if (h[3] > MAX_PERIOD_US)
				return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 3 * g->slot,
					     "sampling period of %llu us is not real: libprofiler "
					     "samples at a whole number of hertz (at most 1 s apart), "
					     "and periods above %u s are refused",
					     (unsigned long long)h[3], MAX_PERIOD_US / 1000000);
			g->period = h[3];
			g->java = h[2] == 1;
			return TACH_OK;
		}
	}
	if (n < 20)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
			     "not a gperftools CPU profile: %zu bytes is shorter than its header", n);
	/* Explain the near misses: a header that has the shape but values pprof refuses. */
	for (int i = 0; i < 4; i++) {
		set_layout(g, tries[i].slot, tries[i].big);
		if (n < 5 * (size_t)g->slot)
			continue;
		uint64_t h[5];
		for (int k = 0; k < 5; k++)
			h[k] = slot_at(g, d + k * g->slot);
		if (h[0] != 0 || h[1] < 3 || h[1] > 64 || h[2] > 1)
			continue;
		const char *kind = g->slot == 4 ? "32-bit" : "64-bit";
		const char *bo = g->big ? "big-endian" : "little-endian";
		if (h[1] != 3)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, g->slot,
				     "%s %s header declares %llu header words; gperftools writes 3 "
				     "and google/pprof accepts no other value",
				     kind, bo, (unsigned long long)h[1]);
		if (h[3] == 0)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 3 * g->slot,
				     "%s %s header has a sampling period of 0 microseconds",
				     kind, bo);
		if (h[4] != 0)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 4 * g->slot,
				     "%s %s header's padding word is not 0", kind, bo);
	}
	return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0,
		     "not a gperftools CPU profile: the header is not 0, 3, 0, period, 0 in "
		     "32- or 64-bit slots of either byte order");
}

/* ---- stacks ---- */

static uint64_t stack_hash(const struct gread *g, const uint8_t *pc0, uint32_t depth, bool skip1)
{
	if (depth == 0)
		return 0x9e3779b97f4a7c15ull;
	uint64_t h = tachi_hash(pc0, g->slot) * 0x9e3779b97f4a7c15ull;
	const uint8_t *rest = pc0 + (size_t)g->slot * (1 + skip1);
	return h ^ tachi_hash(rest, (size_t)(depth - 1) * g->slot) ^ depth;
}

struct stack_key {
	const uint8_t *pc0;
	uint32_t depth;
	bool skip1;
};

static inline const uint8_t *stack_at(const struct gread *g, uint32_t id)
{
	return g->arena + (size_t)id * 8;
}

static inline uint32_t stack_pc(const uint8_t *stack, uint32_t i)
{
	uint32_t v;
	memcpy(&v, stack + sizeof(struct ghead) + (size_t)i * 4, 4);
	return v;
}

static bool stack_eq(void *ctx, uint32_t id, const void *key)
{
	const struct gread *g = ctx;
	const struct stack_key *k = key;
	const uint8_t *a = stack_at(g, id);
	uint32_t depth;
	memcpy(&depth, a + offsetof(struct ghead, depth), sizeof(depth));
	if (depth != k->depth)
		return false;
	if (!k->depth)
		return true;
	const uint64_t *v = g->pcv;
	if (v[stack_pc(a, 0)] != slot_at(g, k->pc0))
		return false;
	const uint8_t *rest = k->pc0 + (size_t)g->slot * k->skip1;
	for (uint32_t i = 1; i < k->depth; i++)
		if (v[stack_pc(a, i)] != slot_at(g, rest + (size_t)i * g->slot))
			return false;
	return true;
}


static void pc_place(uint32_t *slots, size_t mask, uint64_t pc, uint32_t id)
{
	size_t i = (size_t)tachi_mix64(pc) & mask;
	while (slots[i])
		i = (i + 1) & mask;
	slots[i] = id + 1;
}

/* The id of a distinct PC, numbered in first-seen order. */
static bool pc_id(struct gread *g, uint64_t pc, uint32_t *out)
{
	size_t i = (size_t)tachi_mix64(pc) & g->pc_mask;
	if (g->pc_slots) {
		for (;; i = (i + 1) & g->pc_mask) {
			uint32_t v = g->pc_slots[i];
			if (!v)
				break;
			if (g->pcv[v - 1] == pc) {
				*out = v - 1;
				return true;
			}
		}
	}
	if (g->pc_count >= UINT32_MAX - 1 || !TACHI_RESERVE(g->pcs, g->pc_cap, g->pc_count + 1) ||
	    !TACHI_RESERVE(g->pcv, g->pcv_cap, g->pc_count + 1))
		return false;
	/* Load factor at most 1/2. */
	if (!g->pc_slots || (g->pc_count + 1) * 2 > g->pc_mask + 1) {
		size_t n = g->pc_slots ? (g->pc_mask + 1) * 2 : 1024;
		uint32_t *slots = calloc(n, sizeof(*slots));
		if (!slots)
			return false;
		for (size_t k = 0; k < g->pc_count; k++)
			pc_place(slots, n - 1, g->pcv[k], (uint32_t)k);
		free(g->pc_slots);
		g->pc_slots = slots;
		g->pc_mask = n - 1;
	}
	g->pcs[g->pc_count] = (struct gpc){ { 0, 0 }, { 0, 0 }, { false, false } };
	g->pcv[g->pc_count] = pc;
	pc_place(g->pc_slots, g->pc_mask, pc, (uint32_t)g->pc_count);
	*out = (uint32_t)g->pc_count++;
	return true;
}

static int add_record(struct tach_reader *r, struct gread *g, uint64_t off, uint64_t count,
		      uint32_t depth)
{
	const uint8_t *pc0 = r->in.data + off;
	/* Older libprofilers could record the leaf twice (signal PC, then the unwinder's
	 * first frame); pprof drops the copy, so do we. */
	bool skip1 = !g->java && depth >= 2 && slot_at(g, pc0) == slot_at(g, pc0 + g->slot);
	uint32_t eff = depth - skip1;
	struct stack_key k = { pc0, eff, skip1 };
	uint64_t h = stack_hash(g, pc0, eff, skip1);
	uint32_t id;
	if (tachi_idset_find(&g->st_index, h, &k, stack_eq, g, &id)) {
		uint8_t *c = g->arena + (size_t)id * 8 + offsetof(struct ghead, count);
		uint64_t sum;
		memcpy(&sum, c, sizeof(sum));
		if (__builtin_add_overflow(sum, count, &sum))
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
				     "sample count of a stack overflows 64 bits");
		memcpy(c, &sum, sizeof(sum));
		return TACH_OK;
	}
	size_t at = g->arena_len;
	size_t bytes = sizeof(struct ghead) + ((size_t)eff * 4 + 7) / 8 * 8;
	if (at / 8 >= UINT32_MAX - 1)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off - 2 * g->slot,
			     "too many distinct stacks and frames");
	if (g->st_count >= UINT32_MAX - 1 || !TACHI_RESERVE(g->st, g->st_cap, g->st_count + 1) ||
	    !TACHI_RESERVE(g->arena, g->arena_cap, at + bytes))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	struct ghead hd = { h, count, off - 2 * g->slot, eff, 0 };
	memcpy(g->arena + at, &hd, sizeof(hd));
	memset(g->arena + at + sizeof(hd), 0, bytes - sizeof(hd));
	for (uint32_t i = 0; i < eff; i++) {
		size_t raw = i == 0 ? 0 : i + skip1;
		uint32_t pid;
		if (!pc_id(g, slot_at(g, pc0 + raw * g->slot), &pid))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		memcpy(g->arena + at + sizeof(hd) + (size_t)i * 4, &pid, 4);
	}
	g->arena_len += bytes;
	g->st[g->st_count] = (uint32_t)(at / 8);
	if (!tachi_idset_insert(&g->st_index, h, (uint32_t)(at / 8)))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	g->st_count++;
	return TACH_OK;
}

/* Parses the records; returns the offset where the maps text starts (size if none). */
/* A record's depth word against the limit and against what the file holds. A depth past
 * the limit is checked before the cut: an absurd word near the end of the file is
 * corruption, not truncation. The trailer (depth 1) and the limit (default 4096;
 * libprofiler records at most 254) leave room. *cut is set when the file ends inside the
 * record (a warning, or an error with strict). */
static int check_depth(struct tach_reader *r, size_t off, size_t s, uint64_t depth,
		       uint64_t slots_left, uint64_t records, bool *cut)
{
	*cut = false;
	if (depth > r->lim.max_depth && depth <= slots_left)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off,
			     "stack of %llu PCs is deeper than the limit of %u frames",
			     (unsigned long long)depth, r->lim.max_depth);
	if (depth > r->lim.max_depth)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off + s,
			     "record %llu claims %llu PCs, more than the file holds and "
			     "than any real stack (limit %u, --max-depth): the file is corrupt",
			     (unsigned long long)records + 1, (unsigned long long)depth,
			     r->lim.max_depth);
	if (depth <= slots_left)
		return TACH_OK;
	*cut = true;
	return tachi_soft_fail(r, off, "the file is cut inside a record of %llu PCs (only %llu slots "
		       "follow); keeping the %llu whole records before it",
		       (unsigned long long)depth, (unsigned long long)slots_left,
		       (unsigned long long)records);
}

/* Record number records (count, depth, PCs at pcs) into the distinct stacks. */
static int take_record(struct tach_reader *r, struct gread *g, size_t off, size_t pcs,
		       uint64_t count, uint64_t depth, uint64_t records, uint64_t *total)
{
	int rc;
	/* (the Java agent writes its states, GC and Compile, with a count of 0) */
	if (count == 0)
		return g->java ? TACH_OK
			       : tachi_soft_fail(r, off, "record with a sample count of 0 skipped");
	if (depth == 0 &&
	    (rc = tachi_soft_fail(r, off, "record without PCs (count %llu) kept as an empty stack",
			  (unsigned long long)count)))
		return rc;
	if (__builtin_add_overflow(*total, count, total) || *total > r->lim.max_samples)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, off, "more than %llu samples (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	/* Timestamps are synthesized at the period: they must not wrap. */
	uint64_t span;
	if (__builtin_mul_overflow(*total, g->period, &span))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "the counts up to record %llu add up to more than 2^64 "
			     "microseconds at the period of %llu us",
			     (unsigned long long)records, (unsigned long long)g->period);
	return add_record(r, g, pcs, count, (uint32_t)depth);
}

static int read_records(struct tach_reader *r, struct gread *g, size_t *maps_off)
{
	const uint8_t *d = r->in.data;
	size_t n = r->in.size, s = g->slot;
	size_t off = 5 * s, released = 0;
	uint64_t total = 0, records = 0;
	int rc;
	for (;;) {
		/* Distinct stacks are copied: what is parsed need not stay resident. */
		if (off - released >= RELEASE_STEP) {
			tachi_in_release(&r->in, off);
			released = off;
		}
		size_t left = n - off;
		if (left == 0) {
			*maps_off = n;
			return tachi_soft_fail(r, off, "the file ends after %llu records without the trailer "
				       "(0, 1, 0) and the maps section; addresses are not symbolized",
				       (unsigned long long)records);
		}
		if (left < 2 * s) {
			*maps_off = n;
			return tachi_soft_fail(r, off, "the file is cut inside a record header (%zu bytes "
				       "left); keeping the %llu whole records before it",
				       left, (unsigned long long)records);
		}
		uint64_t count = slot_at(g, d + off), depth = slot_at(g, d + off + s);
		bool cut;
		if ((rc = check_depth(r, off, s, depth, (left - 2 * s) / s, records, &cut)) || cut) {
			*maps_off = n;
			return rc;
		}
		size_t pcs = off + 2 * s;
		if (count == 0 && depth == 1 && slot_at(g, d + pcs) == 0) {
			*maps_off = pcs + s;
			r->stats.total_records = records;
			if (*maps_off == n)
				return tachi_soft_fail(r, *maps_off, "no maps section after the trailer; "
					       "addresses are not symbolized");
			return TACH_OK;
		}
		records++;
		if ((rc = take_record(r, g, off, pcs, count, depth, records, &total)))
			return rc;
		off = pcs + (size_t)depth * s;
		r->stats.total_records = records;
	}
}

/* ---- maps text ---- */

static bool hexnum(const char **p, const char *end, uint64_t *out)
{
	const char *s = *p;
	uint64_t v = 0;
	int nd = 0;
	while (s < end) {
		char c = *s;
		int x = c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
			c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
		if (x < 0)
			break;
		if (++nd > 16)
			return false;
		v = v << 4 | (uint64_t)x;
		s++;
	}
	if (!nd)
		return false;
	*p = s;
	*out = v;
	return true;
}

static const char *skip_sp(const char *p, const char *end)
{
	while (p < end && (*p == ' ' || *p == '\t'))
		p++;
	return p;
}

static const char *token_end(const char *p, const char *end)
{
	while (p < end && *p != ' ' && *p != '\t')
		p++;
	return p;
}

/* A glog prefix ("I0101 00:00:00.000000 1234 file.cc:12] ") as pprof strips it. */
static const char *skip_glog(const char *p, const char *end)
{
	const char *q = p;
	while (q < end && *q != '[' && *q != ']')
		q++;
	if (q == end || *q != ']' || q == p || q + 1 >= end || (q[1] != ' ' && q[1] != '\t'))
		return p;
	const char *dg = q;
	while (dg > p && dg[-1] >= '0' && dg[-1] <= '9')
		dg--;
	if (dg == q || dg == p || dg[-1] != ':' || dg - 1 == p)
		return p;
	return skip_sp(q + 1, end);
}

/* "start-end perms offset dev inode [path]": executable mappings are kept, any line that
 * does not parse is ignored, as pprof does. */
static int read_maps(struct tach_reader *r, struct gread *g, size_t from)
{
	const char *p = (const char *)r->in.data + from, *end = (const char *)r->in.data + r->in.size;
	while (p < end) {
		const char *nl = memchr(p, '\n', (size_t)(end - p));
		const char *le = nl ? nl : end, *q = skip_glog(p, le);
		p = nl ? nl + 1 : end;
		while (le > q && (le[-1] == '\r' || le[-1] == ' ' || le[-1] == '\t'))
			le--;
		uint64_t start, limit, offset, inode;
		if (!hexnum(&q, le, &start) || q >= le || *q++ != '-' || !hexnum(&q, le, &limit))
			continue;
		q = skip_sp(q, le);
		const char *perms = q;
		q = token_end(q, le);
		if (q == perms || !memchr(perms, 'x', (size_t)(q - perms)))
			continue;
		q = skip_sp(q, le);
		if (!hexnum(&q, le, &offset))
			continue;
		q = skip_sp(q, le);
		const char *dev = q;
		q = token_end(q, le);
		if (q == dev || !memchr(dev, ':', (size_t)(q - dev)))
			continue;
		q = skip_sp(q, le);
		const char *ino = q;
		q = token_end(q, le);
		(void)inode;
		bool digits = q > ino;
		for (const char *c = ino; c < q; c++)
			digits &= *c >= '0' && *c <= '9';
		if (!digits || limit <= start)
			continue;
		q = skip_sp(q, le);
		size_t plen = (size_t)(le - q);
		/* The kernel marks a file replaced since it was mapped. */
		if (plen > 10 && !memcmp(le - 10, " (deleted)", 10))
			plen -= 10;
		if (tachi_sym_add_map(g->sym, start, limit, offset, q, plen))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		if (!g->program && plen && !(g->program = strndup(q, plen)))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	return TACH_OK;
}

/* ---- the Java agent's names ---- */

static int hexval(char c)
{
	return c >= '0' && c <= '9' ? c - '0' : c >= 'a' && c <= 'f' ? c - 'a' + 10 :
	       c >= 'A' && c <= 'F' ? c - 'A' + 10 : -1;
}

static bool is_space(char c)
{
	return c == ' ' || c == '\t' || c == '\r' || c == '\v' || c == '\f';
}

/* "NAME (FILE:LINE)", "NAME (PATH)" (a shared library: its base name), a JIT stub, or a
 * bare name (the agent's states, GC, VM), as pprof's Java parser tells them apart. */
static void java_name(const char *t, size_t n, struct java_name *j)
{
	j->func = t, j->func_len = (uint32_t)n;
	j->file = "", j->file_len = 0;
	j->line = 0;
	if (n < 4 || t[n - 1] != ')') {
		if (memmem(t, n, "generated stub/JIT", 18))
			j->func = "STUB", j->func_len = 4;
		return;
	}
	size_t open = n - 1;
	while (open > 1 && !(t[open] == '(' && is_space(t[open - 1])))
		open--;
	if (!(t[open] == '(' && is_space(t[open - 1]))) {
		if (memmem(t, n, "generated stub/JIT", 18))
			j->func = "STUB", j->func_len = 4;
		return;
	}
	j->func_len = (uint32_t)(open - 1);
	const char *in = t + open + 1;
	size_t inn = n - 1 - (open + 1);
	const char *colon = inn ? memrchr(in, ':', inn) : NULL;
	size_t k = colon ? (size_t)(colon - in) + 1 : 0;
	bool neg = k < inn && in[k] == '-';
	size_t d = k + neg;
	bool digits = colon && colon > in && d < inn;
	for (size_t i = d; digits && i < inn; i++)
		digits = in[i] >= '0' && in[i] <= '9';
	if (digits) {
		j->file = in, j->file_len = (uint32_t)(colon - in);
		int64_t v = 0;
		for (size_t i = d; i < inn && v <= INT32_MAX; i++)
			v = v * 10 + (in[i] - '0');
		j->line = !neg && v > 0 && v <= INT32_MAX ? (int32_t)v : 0;
		return;
	}
	const char *slash = inn ? memrchr(in, '/', inn) : NULL;
	j->file = slash ? slash + 1 : in;
	j->file_len = (uint32_t)(in + inn - j->file);
}

static int jsym_cmp(const void *a, const void *b)
{
	const struct java_name *x = a, *y = b;
	if (x->id != y->id)
		return x->id < y->id ? -1 : 1;
	/* the later line of one id wins: order of the text kept */
	return x->func < y->func ? -1 : x->func > y->func;
}

/* Lines " 0xID TEXT" after the trailer; others are skipped, as pprof skips them. */
static int read_java_names(struct tach_reader *r, struct gread *g, size_t from)
{
	size_t n = r->in.size - from;
	if (!(g->jtext = malloc(n + 1)))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	memcpy(g->jtext, (const char *)r->in.data + from, n);
	g->jtext[n] = 0;
	for (char *p = g->jtext, *end = g->jtext + n; p < end;) {
		char *nl = memchr(p, '\n', (size_t)(end - p)), *le = nl ? nl : end, *q = p;
		p = nl ? nl + 1 : end;
		while (q < le && is_space(*q))
			q++;
		while (le > q && is_space(le[-1]))
			le--;
		if (le - q < 4 || q[0] != '0' || q[1] != 'x')
			continue;
		uint64_t id = 0;
		const char *h = q + 2;
		int nd = 0;
		for (int x; h < le && (x = hexval(*h)) >= 0; h++, nd++)
			id = id << 4 | (uint64_t)x;
		if (!nd || nd > 16 || h == le || !is_space(*h))
			continue;
		while (h < le && is_space(*h))
			h++;
		if (!TACHI_RESERVE(g->jsyms, g->jsyms_cap, g->njsyms + 1))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		struct java_name *j = &g->jsyms[g->njsyms++];
		j->id = id;
		java_name(h, (size_t)(le - h), j);
	}
	if (g->njsyms)
		qsort(g->jsyms, g->njsyms, sizeof(*g->jsyms), jsym_cmp);
	return TACH_OK;
}

/* A Java PC's frame: its line's names, or its id where the text names none. */
static int java_frame(struct tach_reader *r, struct gread *g, uint64_t pc)
{
	size_t lo = 0, hi = g->njsyms;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (g->jsyms[mid].id <= pc)
			lo = mid + 1;
		else
			hi = mid;
	}
	struct tach_dict *d = &r->dict;
	struct tach_frame f = { 0, 0, 0, 0, -1, -1, TACH_NO_OPCODE };
	char hex[24];
	const struct java_name *j = lo && g->jsyms[lo - 1].id == pc ? &g->jsyms[lo - 1] : NULL;
	int len = j ? 0 : snprintf(hex, sizeof(hex), "0x%llx", (unsigned long long)pc);
	if (j)
		f.line = f.end_line = j->line;
	uint32_t id;
	if (tach_dict_intern_string(d, j ? j->file : "", j ? j->file_len : 0, &f.file) ||
	    tach_dict_intern_string(d, j ? j->func : hex, j ? j->func_len : (size_t)len, &f.func) ||
	    tach_dict_intern_frame(d, &f, &id) ||
	    !TACHI_RESERVE(g->chain.ids, g->chain.cap, g->chain.len + 1))
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	g->chain.ids[g->chain.len++] = id;
	return TACH_OK;
}

/* ---- open / next ---- */

static int gr_open(struct tach_reader *r)
{
	struct gread *g = r->state;
	g->r = r;
	int rc = detect(r, g);
	if (rc)
		return rc;
	r->meta.interval_us = g->period;
	/* each count is one period of CPU time: the time a record stands for */
	r->meta.sample_time = g->period != 0;
	/* A CPU profiler's samples: TACH's profiling mode "cpu" (mode 1, stored plus one), so
	 * that pprof output calls its time cpu. */
	r->meta.profiling_config = 2;
	r->file.big_endian = g->big;
	r->meta.file = &r->file;
	g->sym = tachi_native_sym_new(r, &g->opt);
	g->chain.dict = &r->dict;
	if (!g->sym)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	size_t maps_off = r->in.size;
	if ((rc = read_records(r, g, &maps_off)))
		return rc;
	if ((rc = g->java ? read_java_names(r, g, maps_off) : read_maps(r, g, maps_off)))
		return rc;
	r->meta.program = g->program;
	if (!g->java && maps_off < r->in.size && !tachi_sym_map_count(g->sym) && g->st_count &&
	    (rc = tachi_soft_fail(r, maps_off, "the maps section lists no executable mapping; "
			  "addresses are not symbolized")))
		return rc;
	/* The index served aggregation only, and the input is not read again. */
	tachi_idset_free(&g->st_index);
	tachi_in_release(&r->in, r->in.size);
	return TACH_OK;
}

/* Resolves a PC as a leaf or as a return address the first time a sample needs it, so
 * that strings and frames enter the dictionary in the order samples use them. */
static int pc_resolve(struct tach_reader *r, struct gread *g, uint32_t id, bool leaf)
{
	struct gpc *p = &g->pcs[id];
	size_t first = g->chain.len;
	int rc = g->java ? java_frame(r, g, g->pcv[id])
			 : tachi_sym_lookup(g->sym, g->pcv[id], leaf, tachi_native_emit, &g->chain);
	if (rc && g->java)
		return rc;
	if (rc == TACH_E_IO)
		return RFAIL(r, TACH_E_IO, TACH_POS_NONE, 0, "%s", tachi_sym_io_error(g->sym));
	if (rc)
		return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	if (g->chain.len - first > UINT32_MAX || g->chain.len > UINT32_MAX)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "too many frames");
	p->first[leaf] = (uint32_t)first;
	p->n[leaf] = (uint32_t)(g->chain.len - first);
	p->done[leaf] = true;
	return TACH_OK;
}

static int gr_next(struct tach_reader *r, const struct tach_sample **out)
{
	struct gread *g = r->state;
	if (g->next_stack >= g->st_count)
		return TACH_EOF;
	const uint8_t *stack = stack_at(g, g->st[g->next_stack++]);
	struct ghead s;
	memcpy(&s, stack, sizeof(s));
	size_t depth = 0;
	for (uint32_t i = 0; i < s.depth; i++) {
		uint32_t id = stack_pc(stack, i);
		const struct gpc *p = &g->pcs[id];
		bool leaf = i == 0;
		int rc;
		if (!p->done[leaf] && (rc = pc_resolve(r, g, id, leaf)))
			return rc;
		uint32_t n = p->n[leaf];
		if (depth + n > r->lim.max_depth)
			return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, s.off,
				     "stack with its inlined frames is deeper than the limit of %u "
				     "frames", r->lim.max_depth);
		if (!TACHI_RESERVE(g->frames, g->frames_cap, depth + n + 1))
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		memcpy(g->frames + depth, g->chain.ids + p->first[leaf], n * sizeof(uint32_t));
		depth += n;
	}
	struct tach_sample *smp = &r->sample;
	smp->thread_id = 0;
	smp->interp_id = 0;
	smp->status = TACH_STATUS_ON_CPU;
	smp->timestamp_us = g->clock;
	smp->weight = s.count;
	/* fits: all counts times the period (≤ a minute) fit in µs, checked; ×1000 saturates */
	if (__builtin_mul_overflow(s.count * g->period, (uint64_t)1000, &smp->time_ns))
		smp->time_ns = UINT64_MAX;
	smp->depth = (uint32_t)depth;
	smp->same_outer = 0;
	smp->frames = g->frames;
	/* Cannot wrap: the record loop checked that all counts times the period fit. */
	g->clock += s.count * g->period;
	r->stats.full_records++;
	r->stats.total_samples += s.count;
	*out = smp;
	return TACH_OK;
}

static void gr_free(struct tach_reader *r)
{
	struct gread *g = r->state;
	free(g->program);
	free(g->opt.binary_path);
	free(g->st);
	tachi_idset_free(&g->st_index);
	tachi_sym_free(g->sym);
	free(g->arena);
	free(g->pcs);
	free(g->pcv);
	free(g->pc_slots);
	free(g->chain.ids);
	free(g->frames);
	free(g->jsyms);
	free(g->jtext);
}

const struct tachi_reader_ops tachi_gperf_reader_ops = {
	.state_size = sizeof(struct gread),
	.option = gr_option,
	.open = gr_open,
	.next = gr_next,
	.free = gr_free,
	.whole_input = true,
};
