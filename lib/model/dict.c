/* Strings and frames, numbered in first-seen order: that order is TACH's table order, so
 * output is deterministic and matches CPython's writer. */
#include <stdlib.h>
#include <string.h>

#include "model/dict.h"
#include "base/base.h"
#include "base/hash.h"

struct dict_skey {
	const char *s;
	size_t len;
};

static bool str_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tach_dict *d = ctx;
	const struct dict_skey *k = key;
	return d->strs[id].len == k->len && !memcmp(d->bytes + d->strs[id].off, k->s, k->len);
}


/* A frame and its native data, as one key; n is NULL for a frame without it. */
struct fkey {
	const struct tach_frame *f;
	const struct tach_frame_native *n;
};

static bool native_zero(const struct tach_frame_native *n)
{
	return !n || (!n->address && !n->mapping && !n->inlined);
}

/* A frame without native data hashes as it did before native data existed, so Python
 * profiles keep their speed; the address, mapping and mark only join the hash when set. */
static uint64_t frame_hash(const struct fkey *k)
{
	uint8_t b[25 + 13];
	size_t n = 25;
	const struct tach_frame *f = k->f;
	memcpy(b, &f->file, 4);
	memcpy(b + 4, &f->func, 4);
	memcpy(b + 8, &f->line, 4);
	memcpy(b + 12, &f->end_line, 4);
	memcpy(b + 16, &f->col, 4);
	memcpy(b + 20, &f->end_col, 4);
	b[24] = f->opcode;
	if (!native_zero(k->n)) {
		memcpy(b + 25, &k->n->address, 8);
		memcpy(b + 33, &k->n->mapping, 4);
		b[37] = k->n->inlined;
		n = sizeof(b);
	}
	return tachi_hash(b, n);
}

static const struct tach_frame_native *native_of(const struct tach_dict *d, uint32_t id)
{
	return d->natives && !native_zero(&d->natives[id]) ? &d->natives[id] : NULL;
}

static bool frame_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tach_dict *d = ctx;
	const struct fkey *k = key;
	const struct tach_frame *a = &d->frames[id], *b = k->f;
	if (a->file != b->file || a->func != b->func || a->line != b->line ||
	    a->end_line != b->end_line || a->col != b->col || a->end_col != b->end_col ||
	    a->opcode != b->opcode)
		return false;
	const struct tach_frame_native *na = native_of(d, id), *nb = native_zero(k->n) ? NULL : k->n;
	if (!na || !nb)
		return na == nb;
	return na->address == nb->address && na->mapping == nb->mapping &&
	       na->inlined == nb->inlined;
}

static uint64_t mapping_hash(const struct tach_mapping *m)
{
	uint8_t b[36];
	memcpy(b, &m->start, 8);
	memcpy(b + 8, &m->limit, 8);
	memcpy(b + 16, &m->offset, 8);
	memcpy(b + 24, &m->file, 4);
	memcpy(b + 28, &m->build_id, 4);
	memcpy(b + 32, &m->flags, 4);
	return tachi_hash(b, sizeof(b));
}

static bool mapping_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tach_dict *d = ctx;
	const struct tach_mapping *a = &d->maps[id - 1], *b = key;
	return a->start == b->start && a->limit == b->limit && a->offset == b->offset &&
	       a->file == b->file && a->build_id == b->build_id && a->flags == b->flags;
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
	free(d->natives);
	free(d->maps);
	tachi_idset_free(&d->str_index);
	tachi_idset_free(&d->frame_index);
	tachi_idset_free(&d->map_index);
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

int tachi_dict_append_frame_native(struct tach_dict *d, const struct tach_frame *f,
				   const struct tach_frame_native *n)
{
	if (d->frame_count >= UINT32_MAX - 1 ||
	    !TACHI_RESERVE(d->frames, d->frame_cap, d->frame_count + 1))
		return TACH_E_NOMEM;
	if (d->natives || !native_zero(n)) {
		/* The first native frame gives every earlier frame its zero entry. */
		size_t old = d->natives ? d->frame_count : 0;
		if (!TACHI_RESERVE(d->natives, d->native_cap, d->frame_count + 1))
			return TACH_E_NOMEM;
		memset(d->natives + old, 0, (d->frame_count + 1 - old) * sizeof(*d->natives));
		if (!native_zero(n))
			d->natives[d->frame_count] = *n;
	}
	d->frames[d->frame_count++] = *f;
	return TACH_OK;
}

int tachi_dict_keep_natives(struct tach_dict *d)
{
	if (d->natives)
		return TACH_OK;
	if (!TACHI_RESERVE(d->natives, d->native_cap, d->frame_count + 1))
		return TACH_E_NOMEM;
	memset(d->natives, 0, (d->frame_count + 1) * sizeof(*d->natives));
	return TACH_OK;
}

int tachi_dict_append_frame(struct tach_dict *d, const struct tach_frame *f)
{
	return tachi_dict_append_frame_native(d, f, NULL);
}

TACH_API int tach_dict_intern_string(struct tach_dict *d, const char *s, size_t len, uint32_t *id)
{
	if (!d->indexed)
		return TACH_E_USAGE;
	struct dict_skey k = { s, len };
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

TACH_API int tach_dict_intern_frame_native(struct tach_dict *d, const struct tach_frame *f,
					   const struct tach_frame_native *n, uint32_t *id)
{
	/* Writers trust a frame's string and mapping ids: a dict never holds one naming a
	 * missing string or mapping. */
	if (!d->indexed || f->file >= d->str_count || f->func >= d->str_count ||
	    (n && n->mapping > d->map_count) || (n && n->inlined > 1))
		return TACH_E_USAGE;
	struct fkey k = { f, native_zero(n) ? NULL : n };
	uint64_t h = frame_hash(&k);
	if (tachi_idset_find(&d->frame_index, h, &k, frame_eq, d, id))
		return TACH_OK;
	int rc = tachi_dict_append_frame_native(d, f, k.n);
	if (rc)
		return rc;
	*id = (uint32_t)d->frame_count - 1;
	if (!tachi_idset_insert(&d->frame_index, h, *id)) {
		d->frame_count--;
		return TACH_E_NOMEM;
	}
	return TACH_OK;
}

TACH_API int tach_dict_intern_frame(struct tach_dict *d, const struct tach_frame *f, uint32_t *id)
{
	return tach_dict_intern_frame_native(d, f, NULL, id);
}

TACH_API const struct tach_frame_native *tach_dict_frame_native(const struct tach_dict *d,
								uint32_t id)
{
	return id < d->frame_count ? native_of(d, id) : NULL;
}

TACH_API uint32_t tach_dict_mapping_count(const struct tach_dict *d)
{
	return (uint32_t)d->map_count;
}

TACH_API const struct tach_mapping *tach_dict_mapping(const struct tach_dict *d, uint32_t id)
{
	return id >= 1 && id <= d->map_count ? &d->maps[id - 1] : NULL;
}

TACH_API int tach_dict_intern_mapping(struct tach_dict *d, const struct tach_mapping *m,
				      uint32_t *id)
{
	if (!d->indexed || m->file >= d->str_count ||
	    (m->build_id != TACH_NO_STRING && m->build_id >= d->str_count))
		return TACH_E_USAGE;
	uint64_t h = mapping_hash(m);
	if (tachi_idset_find(&d->map_index, h, m, mapping_eq, d, id))
		return TACH_OK;
	if (d->map_count >= UINT32_MAX - 1 || !TACHI_RESERVE(d->maps, d->map_cap, d->map_count + 1))
		return TACH_E_NOMEM;
	d->maps[d->map_count] = *m;
	*id = (uint32_t)d->map_count + 1;
	if (!tachi_idset_insert(&d->map_index, h, *id))
		return TACH_E_NOMEM;
	d->map_count++;
	return TACH_OK;
}
