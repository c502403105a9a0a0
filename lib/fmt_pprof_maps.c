/* The pprof writer's mappings. pprof symbolizes an address from the binary of its
 * location's mapping (address - start + offset is the file offset), groups unsymbolized
 * locations by mapping ("[libc.so.6]") and prints the first mapping's file as "File:".
 * The dict's mappings go out as the input named them. A frame read back from a format
 * without a mapping table (TACH, collapsed) keeps its module and file offset in its name
 * only ("libc.so.6+0x2a1c0", tachfmt(5)); such frames get one rebuilt mapping per file,
 * from file offset 0 to the page past the highest offset they name, at an address range no
 * other mapping uses, so that `go tool pprof BINARY` finds the same file offsets again.
 * From offset 0, as the kernel maps a binary's first segment: google/pprof picks the
 * binary's segment by the address's file offset, but the Go toolchain's own symbolizer
 * (go tool pprof on a Go binary) takes start as the load address of the text segment.
 */
#include <stdio.h>
#include <stdlib.h>

#include "pprof_maps.h"

#define PAGE 0x1000ull
/* Rebuilt mappings start here when the dict's end lower: above the first pages, where a
 * zero start would read as pprof's "already adjusted" fake mapping. */
#define RB_BASE 0x10000000ull

static const char *base_name(const char *file, size_t n, size_t *len)
{
	const char *b = file + n;
	while (b > file && b[-1] != '/')
		b--;
	*len = (size_t)(file + n - b);
	return b;
}

/* Lowercase hex digits, 1 to 16 of them, the whole of p[0, n). */
static bool parse_hex(const char *p, size_t n, uint64_t *v)
{
	if (!n || n > 16)
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
		if (d == 16)
			return false;
		*v = *v << 4 | d;
	}
	return true;
}

bool tachi_modoff_name(const struct tach_dict *d, const struct tach_frame *f, uint64_t *off)
{
	size_t fl, nl, bl;
	if (f->line > 0 || f->file >= d->str_count || f->func >= d->str_count)
		return false;
	const char *file = tachi_str(d, f->file, &fl), *name = tachi_str(d, f->func, &nl);
	if (!fl)
		return false;
	const char *base = base_name(file, fl, &bl);
	return nl > bl + 3 && !memcmp(name, base, bl) && !memcmp(name + bl, "+0x", 3) &&
	       parse_hex(name + bl + 3, nl - bl - 3, off);
}

bool tachi_addr_name(const struct tach_dict *d, const struct tach_frame *f, uint64_t addr)
{
	size_t nl;
	uint64_t v;
	if (f->line > 0 || f->func >= d->str_count)
		return false;
	const char *name = tachi_str(d, f->func, &nl);
	return nl > 2 && name[0] == '0' && name[1] == 'x' && parse_hex(name + 2, nl - 2, &v) &&
	       v == addr;
}

static bool rb_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tachi_pmaps *pm = ctx;
	return pm->rb[id].file == *(const uint32_t *)key;
}

int64_t tachi_pmaps_rebuilt(struct tachi_pmaps *pm, uint32_t file, uint64_t off)
{
	uint64_t h = tachi_mix64(file);
	uint32_t i;
	if (!tachi_idset_find(&pm->rb_index, h, &file, rb_eq, pm, &i)) {
		if (pm->nrb >= UINT32_MAX - 1 || !TACHI_RESERVE(pm->rb, pm->rb_cap, pm->nrb + 1))
			return -1;
		i = (uint32_t)pm->nrb;
		pm->rb[i] = (struct tachi_rbmap){ file, off, 0 };
		if (!tachi_idset_insert(&pm->rb_index, h, i))
			return -1;
		pm->nrb++;
	}
	if (off > pm->rb[i].hi)
		pm->rb[i].hi = off;
	return i;
}

/* The dict mapping that goes first: the program's, else the first. */
static uint32_t main_mapping(const struct tach_dict *d, const char *program)
{
	size_t pl = program ? strlen(program) : 0, fl;
	for (uint32_t id = 1; pl && id <= d->map_count; id++) {
		const char *f = tachi_str(d, d->maps[id - 1].file, &fl);
		if (fl == pl && !memcmp(f, program, pl))
			return id;
	}
	return d->map_count ? 1 : 0;
}

static void add_dict(struct tachi_pmaps *pm, const struct tach_dict *d, uint32_t id)
{
	const struct tach_mapping *m = &d->maps[id - 1];
	pm->out[pm->nout] = (struct tachi_pmap_out){ m->start, m->limit, m->offset, m->file,
						     m->build_id, m->flags, id };
	pm->dict_out[id] = (uint32_t)++pm->nout;
}

/* Rebuilt mappings over [0, hi page], one after another with a free page between,
 * above the dict's mappings (those in the lower half of the address space: a kernel's
 * would leave no room above). */
static void add_rebuilt(struct tachi_pmaps *pm, const struct tach_dict *d)
{
	uint64_t at = RB_BASE;
	for (size_t i = 0; i < d->map_count; i++)
		if (d->maps[i].limit < (1ull << 62) && d->maps[i].limit + PAGE > at)
			at = (d->maps[i].limit + 2 * PAGE - 1) & ~(PAGE - 1);
	for (size_t i = 0; i < pm->nrb; i++) {
		struct tachi_rbmap *r = &pm->rb[i];
		uint64_t size = (r->hi | (PAGE - 1)) + 1;
		r->start = at;
		pm->out[pm->nout] = (struct tachi_pmap_out){ at, at + size, 0, r->file,
							     TACH_NO_STRING, 0, 0 };
		pm->rb_out[i] = (uint32_t)++pm->nout;
		/* offsets are below 2^64 and there are few files: past 2^63 would need a
		 * profile naming exabytes of code */
		at += size + PAGE;
	}
}

bool tachi_pmaps_layout(struct tachi_pmaps *pm, const struct tach_dict *d, const char *program)
{
	size_t n = d->map_count + pm->nrb;
	pm->out = calloc(n ? n : 1, sizeof(*pm->out));
	pm->dict_out = calloc(d->map_count + 1, sizeof(*pm->dict_out));
	pm->rb_out = calloc(pm->nrb ? pm->nrb : 1, sizeof(*pm->rb_out));
	if (!pm->out || !pm->dict_out || !pm->rb_out)
		return false;
	uint32_t first = main_mapping(d, program);
	if (first)
		add_dict(pm, d, first);
	for (uint32_t id = 1; id <= d->map_count; id++)
		if (id != first)
			add_dict(pm, d, id);
	add_rebuilt(pm, d);
	return true;
}

uint64_t tachi_pmaps_rb_address(const struct tachi_pmaps *pm, uint32_t i, uint64_t off)
{
	const struct tachi_rbmap *r = &pm->rb[i];
	return r->start + off;
}

void tachi_pmaps_free(struct tachi_pmaps *pm)
{
	free(pm->rb);
	tachi_idset_free(&pm->rb_index);
	free(pm->out);
	free(pm->dict_out);
	free(pm->rb_out);
}
