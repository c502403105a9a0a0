/* Native code in the Gecko writer's output (gecko/write_native.c): the library table and how a
 * native frame refers to it. */
#ifndef TACHI_GECKO_NATIVE_H
#define TACHI_GECKO_NATIVE_H

#include "base/base.h"
#include "model/dict.h"
#include "core/handles.h"

/* The profile's "libs" array, built from the dict's mappings at close. */
struct tachi_gecko_libs {
	char *json;       /* "[...]": NULL when no mapping is listed */
	size_t len;
	uint8_t *listed;  /* mapping id -> 1 when the array holds it; NULL with json */
	uint32_t nmaps;
};

/* TACH_OK or TACH_E_NOMEM. d may be NULL (no samples). *repaired is set when a file name
 * was not valid UTF-8 (written with U+FFFD). */
int tachi_gecko_libs_build(struct tachi_gecko_libs *gl, const struct tach_dict *d,
			   bool *repaired);
void tachi_gecko_libs_free(struct tachi_gecko_libs *gl);
static inline bool tachi_gecko_listed(const struct tachi_gecko_libs *gl, uint32_t mapping)
{
	return gl->listed && mapping && mapping <= gl->nmaps && gl->listed[mapping - 1];
}

/* The last component of a path ("" stays ""). */
const char *tachi_gecko_basename(const char *path, size_t n, size_t *len);

/* Whether frame f, with native data n in mapping m, is an address without a symbol: named
 * as tachfmt names those (module+offset, see tachfmt(5)) or by its absolute address. */
bool tachi_gecko_unsymbolized(const struct tach_dict *d, const struct tach_frame *f,
			      const struct tach_frame_native *n, const struct tach_mapping *m);

/* A Breakpad id (Firefox's "breakpadId") from an ELF build id in hex: its first 16 bytes
 * as a GUID (the first three fields byte-swapped, as Breakpad's dump_syms reads them),
 * upper case, then the age 0. Writes 33 bytes and a NUL; false when hex is not hex. */
bool tachi_gecko_breakpad_id(const char *hex, size_t n, char out[34]);

#endif
