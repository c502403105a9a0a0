/* Rust names that DTrace and macOS sample print half demangled (rust_names.c): the legacy
 * mangling's escapes left in, ".." for "::", the hash at the end
 * ("_$LT$a..b$GT$::f::h0123456789abcdef"), as inferno fixes them. */
#ifndef TACHFMT_RUST_NAMES_H
#define TACHFMT_RUST_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/* A Rust name ending in its hash ("h" and 16 hex digits), into out (as long as s at most):
 * the hash and the "::" before it dropped, a leading '_' before '$' dropped, the escapes
 * undone. false (out untouched) when s has no hash. */
bool tachi_rust_unhash(const char *s, size_t n, char *out, size_t *on);

#endif
