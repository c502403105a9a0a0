/* Rust names half demangled: rust_names.h. */
#include <stdbool.h>
#include <stddef.h>
#include <string.h>

#include "formats/rust_names.h"

static bool is_hex(char c)
{
	return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F');
}

/* The legacy Rust escapes DTrace and sample leave in a name. */
static const struct { const char *from, *to; } escapes[] = {
	{ "$SP$", "@" }, { "$BP$", "*" }, { "$RF$", "&" }, { "$LT$", "<" }, { "$GT$", ">" },
	{ "$LP$", "(" }, { "$RP$", ")" }, { "$C$", "," }, { "$u7e$", "~" }, { "$u20$", " " },
	{ "$u27$", "'" }, { "$u3d$", "=" }, { "$u5b$", "[" }, { "$u5d$", "]" }, { "$u7b$", "{" },
	{ "$u7d$", "}" }, { "$u3b$", ";" }, { "$u2b$", "+" }, { "$u21$", "!" }, { "$u22$", "\"" },
};

bool tachi_rust_unhash(const char *s, size_t n, char *out, size_t *on)
{
	enum { HASH = 17 };
	if (n < HASH || s[n - HASH] != 'h')
		return false;
	for (size_t i = n - HASH + 1; i < n; i++)
		if (!is_hex(s[i]))
			return false;
	n -= HASH;
	if (n >= 2 && s[n - 2] == ':' && s[n - 1] == ':')
		n -= 2;
	if (n >= 2 && s[0] == '_' && s[1] == '$')
		s++, n--;
	size_t o = 0, i = 0;
	while (i < n) {
		if (s[i] == '.') {
			if (i + 1 < n && s[i + 1] == '.') {
				out[o++] = ':', out[o++] = ':';
				i += 2;
			} else {
				out[o++] = s[i++];
			}
		} else if (s[i] == '$') {
			size_t k = 0, nk = sizeof(escapes) / sizeof(escapes[0]);
			for (; k < nk; k++) {
				size_t l = strlen(escapes[k].from);
				if (n - i >= l && !memcmp(s + i, escapes[k].from, l))
					break;
			}
			if (k == nk) { /* an escape it does not know: the rest as it is */
				memcpy(out + o, s + i, n - i);
				o += n - i;
				break;
			}
			out[o++] = escapes[k].to[0];
			i += strlen(escapes[k].from);
		} else {
			out[o++] = s[i++];
		}
	}
	*on = o;
	return true;
}
