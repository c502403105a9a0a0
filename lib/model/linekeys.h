/* Frames as (file, function, line) keys (linekeys.c), for writers that can show no more. */
#ifndef TACHFMT_LINEKEYS_H
#define TACHFMT_LINEKEYS_H

#include <stddef.h>
#include <stdint.h>

#include "base/base.h"
#include "base/hash.h"
#include "model/dict.h"

struct tachi_linekey {
	uint32_t file, func; /* ids in the names dict, by text */
	int32_t line;        /* -1 (no location) becomes 0 */
};
struct tachi_linekeys {
	struct tach_dict names;
	uint32_t *smap;      /* source string id -> names id */
	size_t smap_cap;
	struct tachi_linekey *keys;
	size_t nkeys, keys_cap;
	struct tachi_idset index;
	uint32_t *fmap;      /* source frame id -> key id, the map for tachi_stack_intern */
	size_t fmap_cap, nmapped;
};
/* Maps the frames d gained since the last call; failures are recorded in err. */
int tachi_linekeys_update(struct tachi_err *err, struct tachi_linekeys *lk, const struct tach_dict *d);
void tachi_linekeys_free(struct tachi_linekeys *lk);

#endif
