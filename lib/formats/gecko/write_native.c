/* Native code in Gecko output: the profile's library table ("libs") from the dict's
 * mappings, and which native frames are bare addresses that it can place.
 *
 * The Gecko format has no address column: the importer (the Firefox Profiler's
 * process-profile.ts) takes a frame for an unsymbolicated address only when its location
 * string is "0x<hex>", looks the address up in "libs" (sorted by start, not overlapping:
 * it searches them by halves) and keeps it relative to the library (address - start +
 * offset), with the library as the function's resource. So a frame without a symbol that
 * has an address in a listed mapping is written that way; a symbolized one keeps its name,
 * and the library only by name ("name (in lib)"), since the format cannot hold both.
 *
 * A lib is listed when its range is not empty, ends within 2^53 (the importer reads the
 * numbers as doubles) and does not overlap an earlier listed one (lower start first, then
 * lower id). name and debugName are the file's last component, path and debugPath the
 * file; breakpadId and codeId come from the build id (codeId is the id in lower-case hex,
 * as Firefox writes it for ELF files). arch is left empty: the mappings do not say it.
 */
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>

#include <string.h>

#include "base/jsonout.h"
#include "formats/gecko/write_native.h"

#define MAX_EXACT (UINT64_C(1) << 53)

const char *tachi_gecko_basename(const char *path, size_t n, size_t *len)
{
	size_t i = n;
	while (i && path[i - 1] != '/')
		i--;
	if (i == n) /* "dir/": the whole path rather than nothing */
		i = 0;
	*len = n - i;
	return path + i;
}

bool tachi_gecko_unsymbolized(const struct tach_dict *d, const struct tach_frame *f,
			      const struct tach_frame_native *n, const struct tach_mapping *m)
{
	if (!n || !n->address || f->line >= 0)
		return false;
	size_t fl, ml, bl;
	const char *func = tachi_str(d, f->func, &fl);
	char want[64];
	int k = snprintf(want, sizeof(want), "0x%" PRIx64, n->address);
	if ((size_t)k == fl && !memcmp(func, want, fl))
		return true;
	if (!m || n->address < m->start || n->address >= m->limit)
		return false;
	const char *file = tachi_str(d, m->file, &ml);
	const char *base = tachi_gecko_basename(file, ml, &bl);
	k = snprintf(want, sizeof(want), "+0x%" PRIx64, n->address - m->start + m->offset);
	return bl && fl == bl + (size_t)k && !memcmp(func, base, bl) &&
	       !memcmp(func + bl, want, (size_t)k);
}

bool tachi_gecko_breakpad_id(const char *hex, size_t n, char out[34])
{
	static const char digits[] = "0123456789ABCDEF";
	/* Breakpad's order: the GUID's u32 and two u16 fields read little-endian. */
	static const uint8_t order[16] = { 3, 2, 1, 0, 5, 4, 7, 6, 8, 9, 10, 11, 12, 13, 14, 15 };
	uint8_t id[16] = { 0 };
	if (!n || n % 2)
		return false;
	for (size_t i = 0; i < n; i += 2) {
		int hi = tachi_hexval(hex[i]), lo = tachi_hexval(hex[i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		if (i / 2 < 16)
			id[i / 2] = (uint8_t)(hi << 4 | lo);
	}
	for (size_t i = 0; i < 16; i++) {
		out[2 * i] = digits[id[order[i]] >> 4];
		out[2 * i + 1] = digits[id[order[i]] & 15];
	}
	out[32] = '0';
	out[33] = '\0';
	return true;
}

struct jb {
	char *p;
	size_t len, cap;
	bool ok;
	bool *repaired;
};

static void jb_raw(struct jb *b, const char *s, size_t n)
{
	if (!b->ok || !TACHI_RESERVE(b->p, b->cap, b->len + n)) {
		b->ok = false;
		return;
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
}

static void jb_lit(struct jb *b, const char *s)
{
	jb_raw(b, s, strlen(s));
}

static void jb_str(struct jb *b, const char *s, size_t n)
{
	size_t need;
	if (!b->ok || __builtin_mul_overflow(n, 6, &need) ||
	    __builtin_add_overflow(need, b->len + 2, &need) ||
	    !TACHI_RESERVE(b->p, b->cap, need)) {
		b->ok = false;
		return;
	}
	b->p[b->len++] = '"';
	b->len += tachi_json_escape(b->p + b->len, s, n, b->repaired);
	b->p[b->len++] = '"';
}

static void jb_u64(struct jb *b, uint64_t v)
{
	char num[24];
	jb_raw(b, num, tachi_fmt_u64(num, v));
}

static void lib_entry(struct jb *b, const struct tach_dict *d, const struct tach_mapping *m)
{
	size_t fl, bl, il = 0;
	const char *file = tachi_str(d, m->file, &fl);
	const char *base = tachi_gecko_basename(file, fl, &bl);
	const char *bid = m->build_id != TACH_NO_STRING ? tachi_str(d, m->build_id, &il) : "";
	char bp[34] = "";
	bool have_id = tachi_gecko_breakpad_id(bid, il, bp);
	jb_lit(b, "{\"arch\":\"\",\"name\":");
	jb_str(b, base, bl);
	jb_lit(b, ",\"path\":");
	jb_str(b, file, fl);
	jb_lit(b, ",\"debugName\":");
	jb_str(b, base, bl);
	jb_lit(b, ",\"debugPath\":");
	jb_str(b, file, fl);
	jb_lit(b, ",\"breakpadId\":\"");
	jb_lit(b, bp);
	jb_lit(b, "\"");
	if (have_id) {
		char lower[2];
		jb_lit(b, ",\"codeId\":\"");
		for (size_t i = 0; i < il; i++) {
			lower[0] = bid[i] >= 'A' && bid[i] <= 'F' ? (char)(bid[i] - 'A' + 'a') : bid[i];
			jb_raw(b, lower, 1);
		}
		jb_lit(b, "\"");
	}
	jb_lit(b, ",\"start\":");
	jb_u64(b, m->start);
	jb_lit(b, ",\"end\":");
	jb_u64(b, m->limit);
	jb_lit(b, ",\"offset\":");
	jb_u64(b, m->offset);
	jb_lit(b, "}");
}

struct span {
	uint64_t start;
	uint32_t id;
};

static int span_cmp(const void *pa, const void *pb)
{
	const struct span *a = pa, *b = pb;
	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	return a->id < b->id ? -1 : a->id > b->id;
}

int tachi_gecko_libs_build(struct tachi_gecko_libs *gl, const struct tach_dict *d,
			   bool *repaired)
{
	memset(gl, 0, sizeof(*gl));
	uint32_t n = d ? tach_dict_mapping_count(d) : 0;
	if (!n)
		return TACH_OK;
	struct span *sp = malloc((size_t)n * sizeof(*sp));
	gl->listed = calloc(n, 1);
	if (!sp || !gl->listed) {
		free(sp);
		tachi_gecko_libs_free(gl);
		return TACH_E_NOMEM;
	}
	gl->nmaps = n;
	size_t k = 0;
	for (uint32_t id = 1; id <= n; id++) {
		const struct tach_mapping *m = tach_dict_mapping(d, id);
		if (m->start < m->limit && m->limit <= MAX_EXACT)
			sp[k++] = (struct span){ m->start, id };
	}
	qsort(sp, k, sizeof(*sp), span_cmp);
	struct jb b = { .ok = true, .repaired = repaired };
	uint64_t end = 0;
	size_t listed = 0;
	jb_lit(&b, "[");
	for (size_t i = 0; i < k; i++) {
		const struct tach_mapping *m = tach_dict_mapping(d, sp[i].id);
		if (listed && m->start < end)
			continue;
		if (listed++)
			jb_lit(&b, ",");
		lib_entry(&b, d, m);
		gl->listed[sp[i].id - 1] = 1;
		end = m->limit;
	}
	jb_lit(&b, "]");
	free(sp);
	if (!b.ok) {
		free(b.p);
		tachi_gecko_libs_free(gl);
		return TACH_E_NOMEM;
	}
	if (!listed) {
		free(b.p);
		tachi_gecko_libs_free(gl);
		return TACH_OK;
	}
	gl->json = b.p;
	gl->len = b.len;
	return TACH_OK;
}

void tachi_gecko_libs_free(struct tachi_gecko_libs *gl)
{
	free(gl->json);
	free(gl->listed);
	memset(gl, 0, sizeof(*gl));
}
