/* Frames reduced to what folded stacks and Sampler symbols can show: (file, function, line),
 * with names compared by their text, as CPython's collectors compare them (a TACH table may
 * hold one string twice), and a line of -1 (no location) read as 0. Frames that differ only
 * in end line, columns or opcode share a key. */
#include <stdlib.h>
#include <string.h>

#include "model/linekeys.h"
#include "base/base.h"
#include "base/hash.h"
#include "model/dict.h"

#define NO_ID UINT32_MAX

static uint64_t key_hash(const struct tachi_linekey *k)
{
	return tachi_mix64(((uint64_t)k->file << 32 | k->func) ^ tachi_mix64((uint32_t)k->line));
}

static bool key_eq(void *ctx, uint32_t id, const void *p)
{
	const struct tachi_linekeys *lk = ctx;
	const struct tachi_linekey *a = &lk->keys[id], *b = p;
	return a->file == b->file && a->func == b->func && a->line == b->line;
}


static int map_string(struct tachi_err *err, struct tachi_linekeys *lk, const struct tach_dict *d,
		      uint32_t sid, uint32_t *out)
{
	if (sid >= lk->smap_cap && !tachi_idmap_reserve(&lk->smap, &lk->smap_cap, (size_t)sid + 1))
		return tachi_fail(err, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	if (lk->smap[sid] == NO_ID) {
		size_t len;
		const char *p = tachi_str(d, sid, &len);
		if (tach_dict_intern_string(&lk->names, p, len, &lk->smap[sid]))
			return tachi_fail(err, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	}
	*out = lk->smap[sid];
	return TACH_OK;
}

static int map_frame(struct tachi_err *err, struct tachi_linekeys *lk, const struct tach_dict *d,
		     uint32_t fid)
{
	if (fid >= lk->fmap_cap && !tachi_idmap_reserve(&lk->fmap, &lk->fmap_cap, (size_t)fid + 1))
		return tachi_fail(err, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
	const struct tach_frame *f = &d->frames[fid];
	struct tachi_linekey k = { 0, 0, f->line == -1 ? 0 : f->line };
	int rc;
	if (f->file >= d->str_count || f->func >= d->str_count) {
		/* A TACH table may hold a frame whose names are out of range; its reader fails
		 * the sample that uses one, so no sample reaches us with it. Frames are mapped
		 * ahead of use, so such a frame gets an empty key instead of an error here. */
		if (tach_dict_intern_string(&lk->names, "", 0, &k.file))
			return tachi_fail(err, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		k.func = k.file;
	} else if ((rc = map_string(err, lk, d, f->file, &k.file)) ||
		   (rc = map_string(err, lk, d, f->func, &k.func))) {
		return rc;
	}
	uint64_t h = key_hash(&k);
	uint32_t id;
	if (!tachi_idset_find(&lk->index, h, &k, key_eq, lk, &id)) {
		if (lk->nkeys >= UINT32_MAX - 1 || !TACHI_RESERVE(lk->keys, lk->keys_cap, lk->nkeys + 1))
			return tachi_fail(err, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		id = (uint32_t)lk->nkeys;
		lk->keys[id] = k;
		if (!tachi_idset_insert(&lk->index, h, id))
			return tachi_fail(err, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		lk->nkeys++;
	}
	lk->fmap[fid] = id;
	return TACH_OK;
}

int tachi_linekeys_update(struct tachi_err *err, struct tachi_linekeys *lk, const struct tach_dict *d)
{
	if (TACHI_UNLIKELY(!lk->names.indexed))
		tachi_dict_init(&lk->names, true);
	/* Readers only ever add frames: map the ones added since the last call. */
	while (lk->nmapped < d->frame_count) {
		int rc = map_frame(err, lk, d, (uint32_t)lk->nmapped);
		if (rc)
			return rc;
		lk->nmapped++;
	}
	return TACH_OK;
}

void tachi_linekeys_free(struct tachi_linekeys *lk)
{
	tachi_dict_clear(&lk->names);
	free(lk->smap);
	free(lk->keys);
	tachi_idset_free(&lk->index);
	free(lk->fmap);
	memset(lk, 0, sizeof(*lk));
}
