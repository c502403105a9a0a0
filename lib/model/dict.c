/* Strings and frames, numbered in first-seen order: that order is TACH's table order, so
 * output is deterministic and matches CPython's writer. */
#include <stdlib.h>
#include <string.h>

#include "model/dict.h"
#include "base/base.h"
#include "base/hash.h"

struct skey {
	const char *s;
	size_t len;
};

static bool str_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tach_dict *d = ctx;
	const struct skey *k = key;
	return d->strs[id].len == k->len && !memcmp(d->bytes + d->strs[id].off, k->s, k->len);
}


static uint64_t frame_hash(const struct tach_frame *f)
{
	uint8_t b[25];
	memcpy(b, &f->file, 4);
	memcpy(b + 4, &f->func, 4);
	memcpy(b + 8, &f->line, 4);
	memcpy(b + 12, &f->end_line, 4);
	memcpy(b + 16, &f->col, 4);
	memcpy(b + 20, &f->end_col, 4);
	b[24] = f->opcode;
	return tachi_hash(b, sizeof(b));
}

static bool frame_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tach_dict *d = ctx;
	const struct tach_frame *a = &d->frames[id], *b = key;
	return a->file == b->file && a->func == b->func && a->line == b->line &&
	       a->end_line == b->end_line && a->col == b->col && a->end_col == b->end_col &&
	       a->opcode == b->opcode;
}


void tachi_dict_init(struct tach_dict *d, bool indexed)
{
	memset(d, 0, sizeof(*d));
	d->indexed = indexed;
}

void tachi_dict_clear(struct tach_dict *d)
{
	free(d->bytes);
	free(d->strs);
	free(d->frames);
	tachi_idset_free(&d->str_index);
	tachi_idset_free(&d->frame_index);
	memset(d, 0, sizeof(*d));
}

TACH_API struct tach_dict *tach_dict_new(void)
{
	struct tach_dict *d = malloc(sizeof(*d));
	if (d)
		tachi_dict_init(d, true);
	return d;
}

TACH_API void tach_dict_free(struct tach_dict *d)
{
	if (!d)
		return;
	tachi_dict_clear(d);
	free(d);
}

TACH_API uint32_t tach_dict_string_count(const struct tach_dict *d)
{
	return (uint32_t)d->str_count;
}

TACH_API uint32_t tach_dict_frame_count(const struct tach_dict *d)
{
	return (uint32_t)d->frame_count;
}

TACH_API const char *tach_dict_string(const struct tach_dict *d, uint32_t id, size_t *len)
{
	if (id >= d->str_count)
		return NULL;
	size_t l;
	const char *s = tachi_str(d, id, &l);
	if (len)
		*len = l;
	return s;
}

TACH_API const struct tach_frame *tach_dict_frame(const struct tach_dict *d, uint32_t id)
{
	return id < d->frame_count ? &d->frames[id] : NULL;
}

int tachi_dict_append_string(struct tach_dict *d, const char *s, size_t len)
{
	size_t need;
	if (d->str_count >= UINT32_MAX - 1 || len > UINT32_MAX ||
	    tachi_add_overflows(d->bytes_len, len + 1, &need) ||
	    !TACHI_RESERVE(d->bytes, d->bytes_cap, need) ||
	    !TACHI_RESERVE(d->strs, d->str_cap, d->str_count + 1))
		return TACH_E_NOMEM;
	if (len)
		memcpy(d->bytes + d->bytes_len, s, len);
	d->bytes[d->bytes_len + len] = '\0';
	d->strs[d->str_count].off = d->bytes_len;
	d->strs[d->str_count].len = (uint32_t)len;
	d->bytes_len = need;
	d->str_count++;
	return TACH_OK;
}

int tachi_dict_append_frame(struct tach_dict *d, const struct tach_frame *f)
{
	if (d->frame_count >= UINT32_MAX - 1 ||
	    !TACHI_RESERVE(d->frames, d->frame_cap, d->frame_count + 1))
		return TACH_E_NOMEM;
	d->frames[d->frame_count++] = *f;
	return TACH_OK;
}

TACH_API int tach_dict_intern_string(struct tach_dict *d, const char *s, size_t len, uint32_t *id)
{
	if (!d->indexed)
		return TACH_E_USAGE;
	struct skey k = { s, len };
	uint64_t h = tachi_hash(s, len);
	if (tachi_idset_find(&d->str_index, h, &k, str_eq, d, id))
		return TACH_OK;
	int rc = tachi_dict_append_string(d, s, len);
	if (rc)
		return rc;
	*id = (uint32_t)d->str_count - 1;
	if (!tachi_idset_insert(&d->str_index, h, *id)) {
		d->str_count--;
		return TACH_E_NOMEM;
	}
	return TACH_OK;
}

TACH_API int tach_dict_intern_frame(struct tach_dict *d, const struct tach_frame *f, uint32_t *id)
{
	/* Writers trust a frame's string ids: a dict never holds one naming a missing string. */
	if (!d->indexed || f->file >= d->str_count || f->func >= d->str_count)
		return TACH_E_USAGE;
	uint64_t h = frame_hash(f);
	if (tachi_idset_find(&d->frame_index, h, f, frame_eq, d, id))
		return TACH_OK;
	int rc = tachi_dict_append_frame(d, f);
	if (rc)
		return rc;
	*id = (uint32_t)d->frame_count - 1;
	if (!tachi_idset_insert(&d->frame_index, h, *id)) {
		d->frame_count--;
		return TACH_E_NOMEM;
	}
	return TACH_OK;
}
