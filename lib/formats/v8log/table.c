/* The code table and ticks that both forms of the tick log become (v8log.h): read_json.c
 * and read_log.c add to them, read.c names and gives them out. */
#include <string.h>

#include "base/base.h"
#include "core/handles.h"
#include "formats/v8log/read.h"

static int nomem(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
}

int tachi_v8log_add_text(struct tach_reader *r, const char *s, size_t n, uint64_t *at)
{
	struct v8log_state *st = r->state;
	if (!TACHI_RESERVE(st->text, st->text_cap, st->text_len + n + 1))
		return nomem(r);
	memcpy(st->text + st->text_len, s, n);
	*at = st->text_len;
	st->text_len += n;
	st->text[st->text_len++] = 0;
	return TACH_OK;
}

int tachi_v8log_add_code(struct tach_reader *r, uint8_t type, uint8_t kind, const char *name,
		   size_t len, uint32_t *idx)
{
	struct v8log_state *st = r->state;
	if (st->ncodes >= UINT32_MAX - 1)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "more than 2^32 - 2 code entries");
	if (len > TACHI_MAX_STRING)
		return RFAIL(r, TACH_E_LIMIT, TACH_POS_NONE, 0, "a code name longer than %u bytes",
			     TACHI_MAX_STRING);
	if (!TACHI_RESERVE(st->codes, st->codes_cap, st->ncodes + 1))
		return nomem(r);
	struct v8log_code *c = &st->codes[st->ncodes];
	*c = (struct v8log_code){ .type = type, .kind = kind, .name_len = (uint32_t)len,
				  .frame = TACHI_V8LOG_NO_FRAME };
	int rc = tachi_v8log_add_text(r, name, len, &c->name);
	if (rc)
		return rc;
	*idx = (uint32_t)st->ncodes++;
	return TACH_OK;
}

int tachi_v8log_add_id(struct tach_reader *r, uint64_t id)
{
	struct v8log_state *st = r->state;
	if (!TACHI_RESERVE(st->ids, st->ids_cap, st->nids + 1))
		return nomem(r);
	st->ids[st->nids++] = id;
	return TACH_OK;
}

int tachi_v8log_add_tick(struct tach_reader *r, int64_t tm, int32_t vm, uint32_t n, uint64_t off)
{
	struct v8log_state *st = r->state;
	int kind = st->raw ? TACH_POS_LINE : TACH_POS_OFFSET;
	uint64_t pos = st->raw ? r->in.line : off;
	if (n > r->lim.max_depth)
		return RFAIL(r, TACH_E_LIMIT, kind, pos,
			     "stack deeper than the depth limit of %u frames", r->lim.max_depth);
	if (st->nticks >= r->lim.max_samples)
		return RFAIL(r, TACH_E_LIMIT, kind, pos, "more than %llu ticks (see --max-samples)",
			     (unsigned long long)r->lim.max_samples);
	if (!TACHI_RESERVE(st->ticks, st->ticks_cap, st->nticks + 1))
		return nomem(r);
	st->ticks[st->nticks] = (struct v8log_tick){ .tm = tm, .at = st->nids - n, .n = n,
						     .vm = vm, .seq = st->nticks, .off = off };
	st->nticks++;
	return TACH_OK;
}

enum v8log_kind tachi_v8log_kind_of(const char *s, size_t n)
{
	static const struct {
		const char *name;
		enum v8log_kind kind;
	} kinds[] = {
		{ "LoadIC", V8L_K_IC },	       { "StoreIC", V8L_K_IC },
		{ "KeyedStoreIC", V8L_K_IC },  { "KeyedLoadIC", V8L_K_IC },
		{ "LoadGlobalIC", V8L_K_IC },  { "Handler", V8L_K_IC },
		{ "BytecodeHandler", V8L_K_BYTECODE }, { "Stub", V8L_K_STUB },
		{ "Builtin", V8L_K_BUILTIN },  { "RegExp", V8L_K_REGEXP },
	};
	for (size_t i = 0; i < sizeof(kinds) / sizeof(kinds[0]); i++)
		if (strlen(kinds[i].name) == n && !memcmp(kinds[i].name, s, n))
			return kinds[i].kind;
	return V8L_K_NONE;
}
