/* Folded lines merged by text and printed sorted (textlines.h). The texts of the distinct
 * lines are held until the end, as the tools hold them: memory follows distinct lines. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/buf.h"
#include "base/hash.h"
#include "base/io.h"
#include "core/handles.h"
#include "formats/collapsed/textlines.h"

struct textkey {
	const char *p;
	size_t n;
};

static bool ent_eq(void *ctx, uint32_t id, const void *key)
{
	const struct tachi_textlines *tl = ctx;
	const struct textkey *k = key;
	return tl->ents[id].len == k->n && !memcmp(tl->text.p + tl->ents[id].off, k->p, k->n);
}

static bool append(struct tachi_textlines *tl, const char *p, size_t n, uint64_t c)
{
	if (tl->nents >= UINT32_MAX - 1 || n > UINT32_MAX ||
	    !TACHI_RESERVE(tl->ents, tl->ents_cap, tl->nents + 1) ||
	    !TACHI_RESERVE(tl->text.p, tl->text.cap, 1))
		return false;
	tl->ents[tl->nents] = (struct tachi_textline){ tl->text.len, c, (uint32_t)n };
	return tachi_buf_add(&tl->text, p, n);
}

bool tachi_textlines_add(struct tachi_textlines *tl, const char *p, size_t n, uint64_t c)
{
	uint64_t h = tachi_hash(p, n);
	struct textkey key = { p, n };
	uint32_t id;
	if (tachi_idset_find(&tl->index, h, &key, ent_eq, tl, &id)) {
		tl->ents[id].count += c;
		return true;
	}
	if (!append(tl, p, n, c) || !tachi_idset_insert(&tl->index, h, (uint32_t)tl->nents))
		return false;
	tl->nents++;
	return true;
}

bool tachi_textlines_push(struct tachi_textlines *tl, const char *p, size_t n, uint64_t c)
{
	if (!append(tl, p, n, c))
		return false;
	tl->nents++;
	return true;
}

struct sortline {
	const char *p;
	size_t n;
	uint64_t count;
};

static int sortline_cmp(const void *pa, const void *pb)
{
	const struct sortline *a = pa, *b = pb;
	size_t m = a->n < b->n ? a->n : b->n;
	int c = m ? memcmp(a->p, b->p, m) : 0;
	return c ? c : (a->n > b->n) - (a->n < b->n);
}

int tachi_textlines_print(struct tach_writer *w, const struct tachi_textlines *tl)
{
	struct sortline *v = malloc((tl->nents + 1) * sizeof(*v));
	if (!v)
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	for (size_t i = 0; i < tl->nents; i++)
		v[i] = (struct sortline){ tl->text.p + tl->ents[i].off, tl->ents[i].len,
					  tl->ents[i].count };
	qsort(v, tl->nents, sizeof(*v), sortline_cmp);
	int rc = TACH_OK;
	for (size_t i = 0; i < tl->nents && !rc; i++)
		if (tachi_out_write(&w->out, v[i].p, v[i].n) || tachi_out_byte(&w->out, ' ') ||
		    tachi_out_u64(&w->out, v[i].count) || tachi_out_byte(&w->out, '\n'))
			rc = tachi_writer_io(w);
	free(v);
	return rc;
}

void tachi_textlines_free(struct tachi_textlines *tl)
{
	free(tl->text.p);
	free(tl->ents);
	tachi_idset_free(&tl->index);
}
