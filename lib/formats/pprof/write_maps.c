/* The pprof writer's mappings. pprof symbolizes an address from the binary of its
 * location's mapping (address - start + offset is the file offset), groups unsymbolized
 * locations by mapping ("[libc.so.6]") and prints the first mapping's file as "File:".
 * The dict's mappings go out as the input named them. A frame read back from a format
 * without a mapping table (TACH, collapsed) keeps its module and file offset in its name
 * only ("libc.so.6+0x2a1c0", tachfmt(5)); such frames get one rebuilt mapping per file,
 * from file offset 0 to the page past the highest offset they name, at an address range no
 * other mapping uses, so that `go tool pprof BINARY` finds the same file offsets again.
 * Two symbolizers read such a mapping: google/pprof takes address - start + offset as the
 * file offset and finds the binary's segment from it, while the Go toolchain's (go tool
 * pprof) ignores the offset and takes start as the load address of the binary's first
 * executable segment. A mapping that starts at that segment's file offset, as the kernel
 * maps it, satisfies both; so when the binary is at hand at its path and its frames all lie
 * at or past that segment, the rebuilt mapping starts there (0x1000 in gcc's PIEs), and
 * otherwise at file offset 0, where Go's own binaries have it.
 */
#include <fcntl.h>
#include <gelf.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "formats/pprof/write_maps.h"

#define PAGE 0x1000ull
/* Rebuilt mappings start here when the dict's end lower: above the first pages, where a
 * zero start would read as pprof's "already adjusted" fake mapping. */
#define RB_BASE 0x10000000ull

static bool rb_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tachi_pmaps *pm = ctx;
	return pm->rb[id].file == *(const uint32_t *)key;
}

int64_t tachi_pmaps_rebuilt(struct tachi_pmaps *pm, uint32_t file, uint64_t off, int64_t seg)
{
	uint64_t h = tachi_mix64(file);
	uint32_t i;
	if (!tachi_idset_find(&pm->rb_index, h, &file, rb_eq, pm, &i)) {
		if (pm->nrb >= UINT32_MAX - 1 || !TACHI_RESERVE(pm->rb, pm->rb_cap, pm->nrb + 1))
			return -1;
		i = (uint32_t)pm->nrb;
		pm->rb[i] = (struct tachi_rbmap){ file, off, off, 0, 0, seg < 0 ? -2 : seg };
		if (!tachi_idset_insert(&pm->rb_index, h, i))
			return -1;
		pm->nrb++;
	}
	if (pm->rb[i].seg != seg)
		pm->rb[i].seg = -2;
	if (off > pm->rb[i].hi)
		pm->rb[i].hi = off;
	if (off < pm->rb[i].lo)
		pm->rb[i].lo = off;
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

/* The file offset of the first executable PT_LOAD segment of the ELF file at path (the
 * segment Go's symbolizer loads at a mapping's start); false when there is none to read. */
static bool exec_offset(const char *path, uint64_t *off)
{
	if (path[0] != '/')
		return false;
	int fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0)
		return false;
	elf_version(EV_CURRENT);
	Elf *e = elf_begin(fd, ELF_C_READ_MMAP, NULL);
	size_t n = 0;
	bool found = false;
	if (e && elf_kind(e) == ELF_K_ELF && !elf_getphdrnum(e, &n))
		for (size_t i = 0; i < n && !found; i++) {
			GElf_Phdr ph;
			found = gelf_getphdr(e, (int)i, &ph) && ph.p_type == PT_LOAD &&
				(ph.p_flags & PF_X);
			if (found)
				*off = ph.p_offset;
		}
	elf_end(e);
	close(fd);
	return found;
}

/* The rebuilt mapping's file offset: the executable segment's when every offset its frames
 * name lies in or past it, else 0 (see the top). Where the segment is: as the frames say
 * (the profile's own memory map, carried in their column), else from the binary at its
 * path. */
static uint64_t rebuilt_offset(const struct tach_dict *d, const struct tachi_rbmap *r)
{
	if (r->seg >= 0 && !((uint64_t)r->seg & (PAGE - 1)) && (uint64_t)r->seg <= r->lo)
		return (uint64_t)r->seg;
	size_t n;
	const char *s = tachi_str(d, r->file, &n);
	char path[4096];
	uint64_t off;
	if (!n || n >= sizeof(path) || memchr(s, 0, n))
		return 0;
	memcpy(path, s, n);
	path[n] = 0;
	return exec_offset(path, &off) && off <= r->lo ? off : 0;
}

/* The rebuilt mapping that goes first when the dict has none: the program's by base name,
 * else the first that is not a shared library ("libc.so.6", "ld-linux-x86-64.so.2"), as an
 * executable's name seldom holds ".so"; else the first. */
static size_t main_rebuilt(const struct tachi_pmaps *pm, const struct tach_dict *d,
			   const char *program)
{
	size_t pl = program ? strlen(program) : 0, other = pm->nrb;
	for (size_t i = 0; i < pm->nrb; i++) {
		size_t fl, bl;
		const char *f = tachi_str(d, pm->rb[i].file, &fl), *b = tachi_base_name(f, fl, &bl);
		if (pl && ((fl == pl && !memcmp(f, program, pl)) ||
			   (bl == pl && !memcmp(b, program, pl))))
			return i;
		if (other == pm->nrb && !memmem(b, bl, ".so", 3))
			other = i;
	}
	return other < pm->nrb ? other : 0;
}

/* Rebuilt mappings over [offset, hi page], one after another with a free page between,
 * above the dict's mappings (those in the lower half of the address space: a kernel's
 * would leave no room above); numbered from rebuilt mapping first on. */
static void add_rebuilt(struct tachi_pmaps *pm, const struct tach_dict *d, size_t first)
{
	uint64_t at = RB_BASE;
	for (size_t i = 0; i < d->map_count; i++)
		if (d->maps[i].limit < (1ull << 62) && d->maps[i].limit + PAGE > at)
			at = (d->maps[i].limit + 2 * PAGE - 1) & ~(PAGE - 1);
	for (size_t k = 0; k < pm->nrb; k++) {
		size_t i = (first + k) % pm->nrb;
		struct tachi_rbmap *r = &pm->rb[i];
		r->offset = rebuilt_offset(d, r);
		uint64_t size = ((r->hi - r->offset) | (PAGE - 1)) + 1;
		r->start = at;
		pm->out[pm->nout] = (struct tachi_pmap_out){ at, at + size, r->offset, r->file,
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
	add_rebuilt(pm, d, first ? 0 : main_rebuilt(pm, d, program));
	return true;
}

uint64_t tachi_pmaps_rb_address(const struct tachi_pmaps *pm, uint32_t i, uint64_t off)
{
	const struct tachi_rbmap *r = &pm->rb[i];
	return r->start + (off - r->offset);
}

void tachi_pmaps_free(struct tachi_pmaps *pm)
{
	free(pm->rb);
	tachi_idset_free(&pm->rb_index);
	free(pm->out);
	free(pm->dict_out);
	free(pm->rb_out);
}
