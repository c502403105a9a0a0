/* A small, strictly bounded XML pull tokenizer over bytes in memory (xml.c), for readers
 * of XML that tools export (xctrace's tables): elements, attributes, text, the five named
 * entities and character references, CDATA, comments, processing instructions and a
 * DOCTYPE without an internal subset. No namespaces, no DTD, no external entities.
 *
 * The caller pulls tokens with tachi_xml_next: an element's start (or an empty element,
 * <a/>, which has no end token), its end, or a run of text. Nothing is allocated: names,
 * values and texts are spans of the input; tachi_xml_unescape decodes a value or text,
 * whose entities were checked when it was read, so decoding cannot fail.
 *
 * Bounded: nesting at most TACHI_XML_MAX_DEPTH elements, TACHI_XML_MAX_ATTRS attributes
 * an element, names TACHI_XML_MAX_NAME bytes, a value, text or CDATA section at most
 * TACHI_MAX_STRING bytes. Checked: end tags match, one root element, no text outside it,
 * quoted attribute values, no '<' in them, no attribute twice in an element, no control
 * byte but tab, LF and CR, entities well formed. A failure is recorded in the tachi_err
 * given at init, with the byte offset of the offending byte. */
#ifndef TACHFMT_XML_H
#define TACHFMT_XML_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "base/base.h"

#define TACHI_XML_MAX_DEPTH 64
#define TACHI_XML_MAX_ATTRS 16
#define TACHI_XML_MAX_NAME 256

enum { TX_START = 1, TX_EMPTY, TX_END, TX_TEXT, TX_EOF };

struct tachi_xspan {
	size_t at, len;
};

struct tachi_xattr {
	struct tachi_xspan name, value;
	bool escaped;      /* the value holds entities */
};

struct tachi_xtok {
	int type;
	size_t off;                    /* where the token starts */
	struct tachi_xspan name;       /* an element's name (start, empty, end) */
	uint32_t nattr;
	struct tachi_xattr attr[TACHI_XML_MAX_ATTRS];
	struct tachi_xspan text;       /* a text run, or a CDATA section's body */
	bool escaped;                  /* the text holds entities (not CDATA) */
};

struct tachi_xml {
	const uint8_t *p;
	size_t n, pos;
	uint32_t depth, max_depth;
	bool root_seen;
	struct tachi_xspan open[TACHI_XML_MAX_DEPTH]; /* the open elements' names */
	struct tachi_err *err;
};

/* A tokenizer of p[0, n) (past a UTF-8 byte order mark); max_depth is clamped to
 * TACHI_XML_MAX_DEPTH (0: that). */
void tachi_xml_init(struct tachi_xml *x, const uint8_t *p, size_t n, uint32_t max_depth,
		    struct tachi_err *err);
/* The next token; TX_EOF once the root element has ended and only blanks, comments and
 * processing instructions follow. Text between elements (blanks too) is given. */
int tachi_xml_next(struct tachi_xml *x, struct tachi_xtok *t);
/* Passes over the content of the element whose start t is, to its end (nothing for an
 * empty element), checking it as it goes. */
int tachi_xml_skip(struct tachi_xml *x, const struct tachi_xtok *t);
/* Whether span s of the input is lit. */
bool tachi_xml_is(const struct tachi_xml *x, struct tachi_xspan s, const char *lit);
/* The attribute named lit of t, NULL when it has none. */
const struct tachi_xattr *tachi_xml_attr(const struct tachi_xml *x, const struct tachi_xtok *t,
					 const char *lit);
/* The span's text, entities decoded when escaped, into out (room for s.len bytes:
 * decoding never grows it); returns its length. */
size_t tachi_xml_unescape(const struct tachi_xml *x, struct tachi_xspan s, bool escaped,
			  char *out);

#endif
