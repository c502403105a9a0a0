/* The dictionary (dict.c): strings and frames, interned or appended, behind the public
 * tach_dict. */
#ifndef TACHFMT_DICT_H
#define TACHFMT_DICT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tachfmt.h"
#include "base/hash.h"

struct tach_dict {
	char *bytes;         /* every string, each followed by a NUL */
	size_t bytes_len, bytes_cap;
	struct tachi_strent { uint64_t off; uint32_t len; } *strs;
	size_t str_count, str_cap;
	struct tach_frame *frames;
	size_t frame_count, frame_cap;
	struct tachi_idset str_index, frame_index;
	/* Native data, parallel to frames; NULL until a frame has some (Python profiles never
	 * pay for it). Zero entries are frames without it. */
	struct tach_frame_native *natives;
	size_t native_cap;
	struct tach_mapping *maps;   /* id 1 is maps[0] */
	size_t map_count, map_cap;
	struct tachi_idset map_index;
	bool indexed;        /* false: append-only table (TACH tables keep duplicates) */
};
/* Append without interning (a TACH table row); fails with TACH_E_NOMEM only. */
int tachi_dict_append_string(struct tach_dict *d, const char *s, size_t len);
int tachi_dict_append_frame(struct tach_dict *d, const struct tach_frame *f);
/* n may be NULL; a zero n on a dict without native data costs nothing. */
int tachi_dict_append_frame_native(struct tach_dict *d, const struct tach_frame *f,
				   const struct tach_frame_native *n);
/* Native data kept from now on, all zero so far: for a reader whose later frames carry
 * inline marks, so that writers that decide at the first sample (pprof) keep them. */
int tachi_dict_keep_natives(struct tach_dict *d);
void tachi_dict_init(struct tach_dict *d, bool indexed);
void tachi_dict_clear(struct tach_dict *d);
static inline const char *tachi_str(const struct tach_dict *d, uint32_t id, size_t *len)
{
	*len = d->strs[id].len;
	return d->bytes + d->strs[id].off;
}

#endif
