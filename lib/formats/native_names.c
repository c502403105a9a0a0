/* Names of unsymbolized native frames (see native_names.h). */
#include <string.h>

#include "base/base.h"
#include "formats/native_names.h"

/* Lowercase hex digits, 1 to 16 of them, the whole of p[0, n). */
static bool parse_hex(const char *p, size_t n, uint64_t *v)
{
	if (!n || n > 16)
		return false;
	*v = 0;
	for (size_t i = 0; i < n; i++) {
		char c = p[i];
		unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
			   : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10) : 16;
		if (d == 16)
			return false;
		*v = *v << 4 | d;
	}
	return true;
}

bool tachi_modoff_name(const struct tach_dict *d, const struct tach_frame *f, uint64_t *off)
{
	size_t fl, nl, bl;
	if (f->line > 0 || f->file >= d->str_count || f->func >= d->str_count)
		return false;
	const char *file = tachi_str(d, f->file, &fl), *name = tachi_str(d, f->func, &nl);
	if (!fl)
		return false;
	const char *base = tachi_base_name(file, fl, &bl);
	return nl > bl + 3 && !memcmp(name, base, bl) && !memcmp(name + bl, "+0x", 3) &&
	       parse_hex(name + bl + 3, nl - bl - 3, off);
}

bool tachi_addr_name(const struct tach_dict *d, const struct tach_frame *f, uint64_t addr)
{
	size_t nl;
	uint64_t v;
	if (f->line > 0 || f->func >= d->str_count)
		return false;
	const char *name = tachi_str(d, f->func, &nl);
	return nl > 2 && name[0] == '0' && name[1] == 'x' && parse_hex(name + 2, nl - 2, &v) &&
	       v == addr;
}
