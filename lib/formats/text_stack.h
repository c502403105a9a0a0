/* Stacks read a line per frame (text_stack.c): what the DTrace, bpftrace and text call-graph readers share.
 * Frames are bare names (file "~", no location), as the collapsed reader keeps a label no
 * style fits, so a folded writer prints them back unchanged. */
#ifndef TACHFMT_TEXT_STACK_H
#define TACHFMT_TEXT_STACK_H

#include <stddef.h>
#include <stdint.h>

#include "core/handles.h"

struct tachi_tstack {
	uint32_t *frames;   /* innermost first, as the producers print them */
	size_t cap;
	uint32_t depth;
	uint64_t total;     /* samples given so far, against max-samples */
};
/* Appends the frame named s (outer to the ones before); a stack deeper than max-depth is
 * refused at the reader's current line. */
int tachi_tstack_push(struct tach_reader *r, struct tachi_tstack *t, const char *s, size_t n);
/* The frame named s (a bare name) into *id, without pushing it. */
int tachi_tstack_intern(struct tach_reader *r, const char *s, size_t n, uint32_t *id);
/* tachi_tstack_push of a frame interned before. */
int tachi_tstack_push_id(struct tach_reader *r, struct tachi_tstack *t, uint32_t id);
/* r->sample: the stack so far weighing count samples, thread 0, no time; the stack is
 * emptied for the next. */
int tachi_tstack_sample(struct tach_reader *r, struct tachi_tstack *t, uint64_t count);
/* Digits (an optional '+' before them) into *v; false when not a number or past 64 bits
 * (*big then). */
bool tachi_tstack_count(const char *s, size_t n, uint64_t *v, bool *big);
void tachi_tstack_free(struct tachi_tstack *t);

#endif
