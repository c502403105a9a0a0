/* perf.data's feature sections (tools/perf/util/header.c), after the data section, one
 * per bit of the header's feature bitmap in bit order; in pipe mode each comes as a
 * HEADER_FEATURE record. Read of them: EVENT_DESC (each event's name, and the ids that
 * tell its samples) and BUILD_ID (the build ID of each binary a sample hit, and of the
 * kernel). The others (host name, OS release, CPU topology...) are skipped. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "core/handles.h"
#include "formats/perfdata/perfdata.h"

enum { FEAT_BUILD_ID = 2, FEAT_EVENT_DESC = 12 };

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

int pd_build_id_record(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off)
{
	struct pd *st = r->state;
	/* header, pid, 24 bytes of build ID (20 used unless misc says a size), file name */
	if (n < 36)
		return TACH_OK;
	uint16_t misc = pd_rd16(st, p + 4);
	size_t len = misc & PD_MISC_BUILD_ID_SIZE ? p[32] : 20;
	if (len > 20)
		len = 20;
	const char *name = (const char *)p + 36;
	size_t nl = strnlen(name, n - 36);
	if (!nl || nl >= PD_MAX_NAME)
		return TACH_OK;
	if (!TACHI_RESERVE(st->bids, st->bids_cap, st->nbids + 1))
		return nomem(r);
	struct pd_bid *b = &st->bids[st->nbids];
	if (!(b->path = strndup(name, nl)))
		return nomem(r);
	for (size_t i = 0; i < len; i++)
		snprintf(b->hex + 2 * i, 3, "%02x", p[12 + i]);
	b->hex[2 * len] = 0;
	int mode = misc & PD_MISC_CPUMODE;
	b->kernel = mode == PD_MISC_KERNEL || mode == PD_MISC_GUEST_KERNEL;
	st->nbids++;
	(void)off;
	return TACH_OK;
}

static int build_ids(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off)
{
	struct pd *st = r->state;
	for (uint64_t k = 0; k + 8 <= n;) {
		uint16_t size = pd_rd16(st, p + k + 6);
		if (size < 8 || size > n - k)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off + k,
				     "a build ID entry of %u bytes, %s", size,
				     size < 8 ? "less than its header" : "past its section's end");
		int rc = pd_build_id_record(r, p + k, size, off + k);
		if (rc)
			return rc;
		k += size;
	}
	return TACH_OK;
}

const char *pd_build_id_of(const struct pd *st, const char *path, bool kernel)
{
	for (size_t i = st->nbids; i-- > 0;)
		if (st->bids[i].kernel == kernel && !strcmp(st->bids[i].path, path) &&
		    st->bids[i].hex[0])
			return st->bids[i].hex;
	return NULL;
}

/* The attribute an EVENT_DESC entry names: the one of its first id, else the i-th. */
static int desc_attr(const struct pd *st, const uint8_t *ids, uint32_t nids, uint32_t i)
{
	int a = nids ? pd_attr_by_id(st, tachi_rd64(ids, st->swap)) : -1;
	if (a >= 0)
		return a;
	return i < st->nattrs ? (int)i : -1;
}

static int set_name(struct tach_reader *r, struct pd_attr *a, const char *s, size_t n)
{
	char *name = strndup(s, n);
	if (!name)
		return nomem(r);
	free(a->name);
	a->name = name;
	return TACH_OK;
}

static int event_desc(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off)
{
	struct pd *st = r->state;
	if (n < 8)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off, "an EVENT_DESC section of %llu bytes",
			     (unsigned long long)n);
	uint32_t nr = tachi_rd32(p, st->swap), asz = tachi_rd32(p + 4, st->swap);
	uint64_t k = 8;
	for (uint32_t i = 0; i < nr; i++) {
		/* the attribute, the id count, the name (u32 length, padded bytes), the ids */
		if (asz > n - k || n - k - asz < 8)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off + k,
				     "EVENT_DESC entry %u past its section's end", i);
		k += asz;
		uint32_t nids = tachi_rd32(p + k, st->swap), len = tachi_rd32(p + k + 4, st->swap);
		k += 8;
		if (len > n - k || (uint64_t)nids * 8 > n - k - len)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off + k - 8,
				     "EVENT_DESC entry %u: a name of %u bytes and %u ids past its "
				     "section's end", i, len, nids);
		const uint8_t *name = p + k, *ids = p + k + len;
		k += len + (uint64_t)nids * 8;
		int a = desc_attr(st, ids, nids, i);
		size_t nl = strnlen((const char *)name, len);
		int rc = a >= 0 && nl && nl < PD_MAX_NAME ?
			 set_name(r, &st->attrs[a], (const char *)name, nl) : TACH_OK;
		if (rc)
			return rc;
	}
	return TACH_OK;
}

int pd_feature(struct tach_reader *r, uint64_t feat, const uint8_t *p, uint64_t n, uint64_t off)
{
	if (feat == FEAT_BUILD_ID)
		return build_ids(r, p, n, off);
	if (feat == FEAT_EVENT_DESC)
		return event_desc(r, p, n, off);
	return TACH_OK;
}

int pd_event_update(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off)
{
	struct pd *st = r->state;
	(void)off;
	/* header, type (2: a name), the event's id, the name */
	if (n < 25 || tachi_rd64(p + 8, st->swap) != 2)
		return TACH_OK;
	uint64_t id = tachi_rd64(p + 16, st->swap);
	size_t nl = strnlen((const char *)p + 24, n - 24);
	int a = pd_attr_by_id(st, id);
	if (a < 0 || !nl || nl >= PD_MAX_NAME)
		return TACH_OK;
	return set_name(r, &st->attrs[a], (const char *)p + 24, nl);
}

int pd_read_features(struct tach_reader *r)
{
	struct pd *st = r->state;
	uint64_t at = st->feat_off;
	for (unsigned bit = 1; bit < 256; bit++) {
		if (!(st->feat_bits[bit / 64] >> (bit % 64) & 1))
			continue;
		if (at > st->size || st->size - at < 16)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at,
				     "the feature table (feature %u) runs past the end of the file; "
				     "the file may be cut short", bit);
		uint64_t o = tachi_rd64(st->data + at, st->swap);
		uint64_t n = tachi_rd64(st->data + at + 8, st->swap);
		if (o > st->size || n > st->size - o)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, at,
				     "feature %u's section [%llu, +%llu) runs past the end of the file",
				     bit, (unsigned long long)o, (unsigned long long)n);
		int rc = pd_feature(r, bit, st->data + o, n, o);
		if (rc)
			return rc;
		at += 16;
	}
	return TACH_OK;
}

void pd_features_free(struct pd *st)
{
	for (size_t i = 0; i < st->nbids; i++)
		free(st->bids[i].path);
	free(st->bids);
}
