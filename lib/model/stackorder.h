/* Stack order (stackorder.c): every trie node's rank by its path's text. */
#ifndef TACHFMT_STACKORDER_H
#define TACHFMT_STACKORDER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "model/stacktab.h"

/* *ord gets, for every node, the rank of its root path's text "L1;L2;...;Lk" among all
 * nodes' texts in byte order (equal texts, equal ranks), where the label of key K is
 * text[off[K], off[K + 1]); labels must not contain sep. Costs a sort of the labels and a
 * walk of the trie, never a comparison of whole texts. False when out of memory. */
bool tachi_stack_order(const struct tachi_stacktab *t, const char *text, const size_t *off,
		       size_t nkeys, char sep, uint32_t **ord);

#endif
