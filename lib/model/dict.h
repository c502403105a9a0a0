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
	bool indexed;        /* false: append-only table (TACH tables keep duplicates) */
};
/* Append without interning (a TACH table row); fails with TACH_E_NOMEM only. */
int tachi_dict_append_string(struct tach_dict *d, const char *s, size_t len);
int tachi_dict_append_frame(struct tach_dict *d, const struct tach_frame *f);
void tachi_dict_init(struct tach_dict *d, bool indexed);
void tachi_dict_clear(struct tach_dict *d);
static inline const char *tachi_str(const struct tach_dict *d, uint32_t id, size_t *len)
{
	*len = d->strs[id].len;
	return d->bytes + d->strs[id].off;
}

#endif
