/* What the readers of bare native addresses (gperf, pproftext) share: their symbolization
 * options and the frames a looked-up address becomes (native_syms.c). */
#ifndef TACHFMT_NATIVE_SYMS_H
#define TACHFMT_NATIVE_SYMS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/handles.h"
#include "symbolize/symbolize.h"

struct tachi_native_opts {
	bool no_symbolize;
	char *binary_path;
	int names; /* TACHI_NAMES_*: how functions are named */
};

/* The options symbolize, binary-path and names: TACH_OK or the error of a bad value, and
 * TACHI_NATIVE_NOT_MINE for any other key (the reader's own "has no option" follows). */
#define TACHI_NATIVE_NOT_MINE 1
int tachi_native_option(struct tach_reader *r, struct tachi_native_opts *o, const char *key,
			const char *value);
/* A symbolizer with those options, or NULL when out of memory. */
struct tachi_sym *tachi_native_sym_new(struct tach_reader *r, const struct tachi_native_opts *o);

/* The dictionary frames looked-up addresses became, one after another. */
struct tachi_native_chain {
	struct tach_dict *dict;
	uint32_t *ids;
	size_t len, cap;
};
/* tachi_sym_lookup's callback with a struct tachi_native_chain: interns the frame (and its
 * mapping, the first time a frame uses it, so mappings no sample touches are not kept). */
int tachi_native_emit(void *chain, const struct tachi_sym_frame *sf);
#endif
