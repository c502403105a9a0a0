/* Symbolization options and frame emission of the readers of bare native addresses. */
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "core/format.h"
#include "formats/native_syms.h"

int tachi_native_option(struct tach_reader *r, struct tachi_native_opts *o, const char *key,
			const char *value)
{
	if (!strcmp(key, "symbolize")) {
		bool b;
		if (!tachi_parse_bool(value, &b))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad symbolize: %s", value);
		o->no_symbolize = !b;
		return TACH_OK;
	}
	if (!strcmp(key, "binary-path")) {
		char *c = strdup(value);
		if (!c)
			return RFAIL(r, TACH_E_NOMEM, TACH_POS_NONE, 0, "out of memory");
		free(o->binary_path);
		o->binary_path = c;
		return TACH_OK;
	}
	if (!strcmp(key, "names")) {
		static const char *const modes[] = { "full", "short", "mangled" };
		for (int i = 0; i < 3; i++)
			if (!strcmp(value, modes[i])) {
				o->names = i; /* TACHI_NAMES_* order */
				return TACH_OK;
			}
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
			     "names must be full, short or mangled, not %s", value);
	}
	return TACHI_NATIVE_NOT_MINE;
}

struct tachi_sym *tachi_native_sym_new(struct tach_reader *r, const struct tachi_native_opts *o)
{
	struct tachi_sym *s = tachi_sym_new(&r->warn, o->binary_path, !o->no_symbolize);
	if (s) {
		tachi_sym_set_names(s, o->names);
		tachi_sym_set_cache(s, r->symcache);
	}
	return s;
}

static int frame_mapping(struct tach_dict *d, struct tachi_sym_map *m, uint32_t *id)
{
	if (m->user) {
		*id = m->user;
		return TACH_OK;
	}
	struct tach_mapping tm = { m->start, m->limit, m->offset, 0, TACH_NO_STRING, m->flags };
	if (tach_dict_intern_string(d, m->path, strlen(m->path), &tm.file) ||
	    (m->build_id &&
	     tach_dict_intern_string(d, m->build_id, strlen(m->build_id), &tm.build_id)) ||
	    tach_dict_intern_mapping(d, &tm, id))
		return TACH_E_NOMEM;
	m->user = *id;
	return TACH_OK;
}

int tachi_native_emit(void *chain, const struct tachi_sym_frame *sf)
{
	struct tachi_native_chain *c = chain;
	struct tach_dict *d = c->dict;
	struct tach_frame f = { 0, 0, sf->line, sf->line, sf->col, -1, TACH_NO_OPCODE };
	struct tach_frame_native n = { sf->address, 0, sf->inlined };
	if (tach_dict_intern_string(d, sf->file, strlen(sf->file), &f.file) ||
	    tach_dict_intern_string(d, sf->func, strlen(sf->func), &f.func) ||
	    (sf->map && frame_mapping(d, sf->map, &n.mapping)))
		return TACH_E_NOMEM;
	uint32_t id;
	if (tach_dict_intern_frame_native(d, &f, &n, &id))
		return TACH_E_NOMEM;
	if (!TACHI_RESERVE(c->ids, c->cap, c->len + 1))
		return TACH_E_NOMEM;
	c->ids[c->len++] = id;
	return TACH_OK;
}
