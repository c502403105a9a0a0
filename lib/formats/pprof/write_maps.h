/* The pprof writer's mapping table (formats/pprof/write_maps.c): the dict's mappings, and mappings
 * rebuilt for frames named by module and file offset (tachfmt(5)), laid out at close. */
#ifndef TACHFMT_PPROF_MAPS_H
#define TACHFMT_PPROF_MAPS_H

#include "base/base.h"
#include "base/hash.h"
#include "model/dict.h"
#include "formats/native_names.h"

/* A mapping as written; file and build_id are dict string ids (build_id TACH_NO_STRING:
 * none). */
struct tachi_pmap_out {
	uint64_t start, limit, offset;
	uint32_t file, build_id, flags;
	uint32_t dict_id;    /* 0: rebuilt */
};

struct tachi_pmaps {
	/* rebuilt: one per file string, with the lowest and highest file offsets its frames
	 * name; start and offset (the file offset at start) are set by the layout */
	struct tachi_rbmap {
		uint32_t file;
		uint64_t hi, lo, start, offset;
		/* the file offset of the mapping its frames were in, as they carry it (their
		 * column, tachfmt(5)); -2 when one carries none or they differ */
		int64_t seg;
	} *rb;
	size_t nrb, rb_cap;
	struct tachi_idset rb_index;
	/* after tachi_pmaps_layout: out[i] has id i + 1 */
	struct tachi_pmap_out *out;
	size_t nout;
	uint32_t *dict_out, *rb_out; /* dict mapping id / rebuilt index -> out id */
};

/* The rebuilt mapping of dict string file, grown to cover off; seg is the file offset its
 * mapping started at when the frame carries it (its column), else -1. Its index, or -1
 * when out of memory. */
int64_t tachi_pmaps_rebuilt(struct tachi_pmaps *pm, uint32_t file, uint64_t off, int64_t seg);
/* Numbers the mappings for output: the main one (the dict's whose file is program, else
 * its first; with no dict mapping, the rebuilt one of the program or else of the first
 * file that is not a shared library) first, the dict's others, then the rebuilt ones,
 * placed above every dict mapping in ranges of their own. false when out of memory. */
bool tachi_pmaps_layout(struct tachi_pmaps *pm, const struct tach_dict *d, const char *program);
/* The address of file offset off in rebuilt mapping i (after layout). */
uint64_t tachi_pmaps_rb_address(const struct tachi_pmaps *pm, uint32_t i, uint64_t off);
void tachi_pmaps_free(struct tachi_pmaps *pm);

#endif
