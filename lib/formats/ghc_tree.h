/* GHC's cost-centre profiles as samples (ghc_tree.c): what the .prof text reader
 * (ghcprof/read.c) and the -pj JSON reader (ghcpj/read.c) share. Both walk GHC's
 * cost-centre tree from its root and give, for each cost-centre stack with ticks or
 * allocations of its own, one sample of that stack. */
#ifndef TACHFMT_FMT_GHC_TREE_H
#define TACHFMT_FMT_GHC_TREE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/handles.h"

struct tachi_ghc {
	uint32_t *stack;            /* dict frames, outermost first */
	size_t stack_cap;
	uint32_t depth;
	uint32_t *out;              /* the sample's frames, innermost first */
	size_t out_cap;
	uint64_t interval_us;       /* a tick's; 0: unknown */
	uint64_t total;             /* ticks given, against max-samples */
	struct tach_value_type vt[2];
	int64_t vals[2];
	struct tach_sample_ext ext;
};

/* At open: the meta's value types (time of the ticks, allocated bytes), the interval,
 * and the one warning of what the format cannot know. */
void tachi_ghc_open(struct tach_reader *r, struct tachi_ghc *g, uint64_t interval_us);
/* The dict frame of cost centre label in module, defined at src (GHC's span,
 * "File.hs:(12,1)-(14,20)", "File.hs:7:3-9", or "<built-in>"-like: no file). */
int tachi_ghc_frame(struct tach_reader *r, const char *label, size_t ln, const char *module,
		    size_t mn, const char *src, size_t sn, uint32_t *id);
/* The cost centre frame at depth (0: the root): the stack is cut to depth and it is put
 * on top; a stack deeper than max-depth is refused at pos (of kind pos_kind). */
int tachi_ghc_push(struct tach_reader *r, struct tachi_ghc *g, uint32_t depth, uint32_t frame,
		   int pos_kind, uint64_t pos);
/* r->sample: the stack with its own ticks and bytes (both 0: false, no sample). */
int tachi_ghc_sample(struct tach_reader *r, struct tachi_ghc *g, uint64_t ticks, uint64_t bytes,
		     int pos_kind, uint64_t pos, bool *given);
void tachi_ghc_free(struct tachi_ghc *g);

#endif
