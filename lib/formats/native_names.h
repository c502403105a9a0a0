/* Names of unsymbolized native frames (native_names.c), as the readers give them where
 * no symbol is known (tachfmt(5)): "0x4011d6", its address, or "libc.so.6+0x2a1c0", its
 * module and file offset. The writers that keep addresses and mappings (pprof, OTLP) write
 * such a frame as a bare address, for a symbolizer, not as a function of that name. */
#ifndef TACHFMT_NATIVE_NAMES_H
#define TACHFMT_NATIVE_NAMES_H

#include <stdbool.h>
#include <stdint.h>

#include "model/dict.h"

/* Whether frame f is an unsymbolized native frame named by module and file offset
 * ("libc.so.6+0x2a1c0" in ".../libc.so.6", no line); *off gets the offset. */
bool tachi_modoff_name(const struct tach_dict *d, const struct tach_frame *f, uint64_t *off);
/* Whether f is named by its own address "0x4011d6" with no line. */
bool tachi_addr_name(const struct tach_dict *d, const struct tach_frame *f, uint64_t addr);
#endif
