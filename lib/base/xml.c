/* The bounded XML pull tokenizer: xml.h. */
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "base/base.h"
#include "base/xml.h"

static int fail(struct tachi_xml *x, size_t off, const char *what)
{
	return tachi_fail(x->err, TACH_E_FORMAT, TACH_POS_OFFSET, off, "XML: %s", what);
}

static bool blank(uint8_t c)
{
	return c == ' ' || c == '\t' || c == '\n' || c == '\r';
}

/* ASCII letters, '_' and ':', and any byte of a multibyte UTF-8 character. */
static bool name_start(uint8_t c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || c >= 0x80;
}

static bool name_char(uint8_t c)
{
	return name_start(c) || (c >= '0' && c <= '9') || c == '-' || c == '.';
}

void tachi_xml_init(struct tachi_xml *x, const uint8_t *p, size_t n, uint32_t max_depth,
		    struct tachi_err *err)
{
	memset(x, 0, sizeof(*x));
	x->p = p;
	x->n = n;
	x->max_depth = max_depth && max_depth < TACHI_XML_MAX_DEPTH ? max_depth : TACHI_XML_MAX_DEPTH;
	x->err = err;
	if (n >= 3 && !memcmp(p, "\xef\xbb\xbf", 3)) /* a UTF-8 byte order mark */
		x->pos = 3;
}

static int scan_name(struct tachi_xml *x, struct tachi_xspan *s)
{
	size_t i = x->pos;
	if (i >= x->n || !name_start(x->p[i]))
		return fail(x, i, i >= x->n ? "the input ends inside a tag" : "a tag without a name");
	while (i < x->n && name_char(x->p[i]))
		i++;
	if (i - x->pos > TACHI_XML_MAX_NAME)
		return fail(x, x->pos, "a name longer than 256 bytes");
	*s = (struct tachi_xspan){ x->pos, i - x->pos };
	x->pos = i;
	return TACH_OK;
}

static void skip_blanks(struct tachi_xml *x)
{
	while (x->pos < x->n && blank(x->p[x->pos]))
		x->pos++;
}

/* The code point of a character reference's digits d[0, n), or -1 when it is none XML
 * allows. */
static long char_ref(const uint8_t *d, size_t n)
{
	bool hex = n && d[0] == 'x';
	long v = 0;
	if (n == hex || n > 9)
		return -1;
	for (size_t i = hex; i < n; i++) {
		int k = hex ? tachi_hexval((char)d[i]) : (d[i] >= '0' && d[i] <= '9' ? d[i] - '0' : -1);
		if (k < 0)
			return -1;
		v = v * (hex ? 16 : 10) + k;
	}
	bool ok = v == 0x9 || v == 0xA || v == 0xD || (v >= 0x20 && v <= 0xD7FF) ||
		  (v >= 0xE000 && v <= 0xFFFD) || (v >= 0x10000 && v <= 0x10FFFF);
	return ok ? v : -1;
}

static const struct { const char *name; char c; } named[] = {
	{ "lt", '<' }, { "gt", '>' }, { "amp", '&' }, { "quot", '"' }, { "apos", '\'' },
};

/* The entity at p[i] ('&'): its length to its ';', 0 when it is none. */
static size_t entity(const uint8_t *p, size_t n, size_t i, long *cp)
{
	size_t e = i + 1;
	while (e < n && e - i < 12 && p[e] != ';')
		e++;
	if (e >= n || p[e] != ';')
		return 0;
	const uint8_t *d = p + i + 1;
	size_t dl = e - i - 1;
	if (dl && d[0] == '#') {
		*cp = char_ref(d + 1, dl - 1);
		return *cp < 0 ? 0 : e + 1 - i;
	}
	for (size_t k = 0; k < sizeof(named) / sizeof(named[0]); k++)
		if (strlen(named[k].name) == dl && !memcmp(named[k].name, d, dl)) {
			*cp = named[k].c;
			return e + 1 - i;
		}
	return 0;
}

/* Checks p[from, to): the characters XML allows, entities well formed where they count
 * (*esc: some are there). */
static int check_run(struct tachi_xml *x, size_t from, size_t to, bool entities, bool *esc)
{
	long cp;
	*esc = false;
	if (to - from > TACHI_MAX_STRING)
		return fail(x, from, "a text or value longer than 1 MiB");
	for (size_t i = from; i < to; i++) {
		uint8_t c = x->p[i];
		if (c < 0x20 && !blank(c))
			return fail(x, i, "a control character");
		if (c == '&' && entities) {
			size_t l = entity(x->p, to, i, &cp);
			if (!l)
				return fail(x, i, "an '&' that starts no entity it knows");
			*esc = true;
			i += l - 1;
		}
	}
	return TACH_OK;
}

/* One attribute at x->pos, into t. */
static int scan_attr(struct tachi_xml *x, struct tachi_xtok *t)
{
	struct tachi_xattr a;
	size_t at = x->pos;
	int rc = scan_name(x, &a.name);
	if (rc)
		return rc;
	if (t->nattr >= TACHI_XML_MAX_ATTRS)
		return fail(x, at, "an element with more than 16 attributes");
	for (uint32_t k = 0; k < t->nattr; k++)
		if (t->attr[k].name.len == a.name.len &&
		    !memcmp(x->p + t->attr[k].name.at, x->p + a.name.at, a.name.len))
			return fail(x, at, "an attribute given twice");
	skip_blanks(x);
	if (x->pos >= x->n)
		return fail(x, x->n, "the input ends inside a tag");
	if (x->p[x->pos] != '=')
		return fail(x, x->pos, "an attribute without '='");
	x->pos++;
	skip_blanks(x);
	if (x->pos >= x->n)
		return fail(x, x->n, "the input ends inside a tag");
	if (x->p[x->pos] != '"' && x->p[x->pos] != '\'')
		return fail(x, x->pos, "an attribute value without quotes");
	uint8_t q = x->p[x->pos++];
	const uint8_t *e = memchr(x->p + x->pos, q, x->n - x->pos);
	if (!e)
		return fail(x, x->n, "the input ends inside an attribute value");
	size_t end = (size_t)(e - x->p);
	const uint8_t *lt = memchr(x->p + x->pos, '<', end - x->pos);
	if (lt)
		return fail(x, (size_t)(lt - x->p), "a '<' inside an attribute value");
	if ((rc = check_run(x, x->pos, end, true, &a.escaped)))
		return rc;
	a.value = (struct tachi_xspan){ x->pos, end - x->pos };
	t->attr[t->nattr++] = a;
	x->pos = end + 1;
	return TACH_OK;
}

/* A start tag after its '<': name, attributes, '>' or "/>". */
static int start_tag(struct tachi_xml *x, struct tachi_xtok *t)
{
	int rc = scan_name(x, &t->name);
	if (rc)
		return rc;
	if (x->root_seen && !x->depth)
		return fail(x, t->off, "a second root element");
	if (x->depth >= x->max_depth)
		return tachi_fail(x->err, TACH_E_FORMAT, TACH_POS_OFFSET, t->off,
				  "XML: elements nested deeper than %u", x->max_depth);
	for (;;) {
		size_t before = x->pos;
		skip_blanks(x);
		if (x->pos >= x->n)
			return fail(x, x->n, "the input ends inside a tag");
		uint8_t c = x->p[x->pos];
		if (c == '>' || (c == '/' && x->pos + 1 < x->n && x->p[x->pos + 1] == '>')) {
			x->pos += c == '>' ? 1 : 2;
			t->type = c == '>' ? TX_START : TX_EMPTY;
			break;
		}
		if (before == x->pos)
			return fail(x, x->pos, "an attribute not parted from what is before it");
		if ((rc = scan_attr(x, t)))
			return rc;
	}
	x->root_seen = true;
	if (t->type == TX_START)
		x->open[x->depth++] = t->name;
	return TACH_OK;
}

/* An end tag after its "</". */
static int end_tag(struct tachi_xml *x, struct tachi_xtok *t)
{
	int rc = scan_name(x, &t->name);
	if (rc)
		return rc;
	skip_blanks(x);
	if (x->pos >= x->n || x->p[x->pos] != '>')
		return fail(x, x->pos, "an end tag without its '>'");
	x->pos++;
	if (!x->depth)
		return fail(x, t->off, "an end tag with no element open");
	struct tachi_xspan o = x->open[x->depth - 1];
	if (o.len != t->name.len || memcmp(x->p + o.at, x->p + t->name.at, o.len))
		return fail(x, t->off, "an end tag that does not close the element open");
	x->depth--;
	t->type = TX_END;
	return TACH_OK;
}

/* Past the next lit from x->pos, or a failure that the input ends in what started at at. */
static int past(struct tachi_xml *x, const char *lit, size_t at, const char *what)
{
	size_t l = strlen(lit);
	const uint8_t *e = memmem(x->p + x->pos, x->n - x->pos, lit, l);
	if (!e)
		return tachi_fail(x->err, TACH_E_FORMAT, TACH_POS_OFFSET, at,
				  "XML: the input ends inside %s", what);
	x->pos = (size_t)(e - x->p) + l;
	return TACH_OK;
}

static bool at_lit(const struct tachi_xml *x, const char *lit)
{
	size_t l = strlen(lit);
	return x->n - x->pos >= l && !memcmp(x->p + x->pos, lit, l);
}

/* Markup at '<': a tag into t (*given), or a comment, instruction or DOCTYPE passed. */
static int markup(struct tachi_xml *x, struct tachi_xtok *t, bool *given)
{
	size_t at = x->pos;
	int rc;
	*given = false;
	if (at_lit(x, "<?"))
		return past(x, "?>", at, "a processing instruction");
	if (at_lit(x, "<!--"))
		return past(x, "-->", at, "a comment");
	if (at_lit(x, "<![CDATA[")) {
		if (!x->depth)
			return fail(x, at, "a CDATA section outside the root element");
		x->pos += 9;
		if ((rc = past(x, "]]>", at, "a CDATA section")))
			return rc;
		t->type = TX_TEXT;
		t->text = (struct tachi_xspan){ at + 9, x->pos - 3 - (at + 9) };
		*given = true;
		return check_run(x, t->text.at, t->text.at + t->text.len, false, &t->escaped);
	}
	if (at_lit(x, "<!DOCTYPE")) {
		if (x->root_seen)
			return fail(x, at, "a DOCTYPE after the root element");
		const uint8_t *gt = memchr(x->p + at, '>', x->n - at);
		const uint8_t *br = memchr(x->p + at, '[', gt ? (size_t)(gt - x->p) - at : x->n - at);
		if (br)
			return fail(x, (size_t)(br - x->p), "a DOCTYPE with an internal subset");
		return past(x, ">", at, "a DOCTYPE");
	}
	*given = true;
	x->pos++;
	if (x->pos < x->n && x->p[x->pos] == '/') {
		x->pos++;
		return end_tag(x, t);
	}
	return start_tag(x, t);
}

int tachi_xml_next(struct tachi_xml *x, struct tachi_xtok *t)
{
	for (;;) {
		t->off = x->pos;
		t->nattr = 0;
		t->escaped = false;
		if (x->pos >= x->n) {
			if (x->depth)
				return fail(x, x->n, "the input ends inside an element");
			if (!x->root_seen)
				return fail(x, x->n, "no element");
			t->type = TX_EOF;
			return TACH_OK;
		}
		bool given;
		int rc;
		if (x->p[x->pos] == '<') {
			if ((rc = markup(x, t, &given)) || given)
				return rc;
			continue;
		}
		const uint8_t *lt = memchr(x->p + x->pos, '<', x->n - x->pos);
		size_t end = lt ? (size_t)(lt - x->p) : x->n;
		if (!x->depth) {
			for (size_t i = x->pos; i < end; i++)
				if (!blank(x->p[i]))
					return fail(x, i, "text outside the root element");
			x->pos = end;
			continue;
		}
		if ((rc = check_run(x, x->pos, end, true, &t->escaped)))
			return rc;
		t->type = TX_TEXT;
		t->text = (struct tachi_xspan){ x->pos, end - x->pos };
		x->pos = end;
		return TACH_OK;
	}
}

int tachi_xml_skip(struct tachi_xml *x, const struct tachi_xtok *t)
{
	if (t->type != TX_START)
		return TACH_OK;
	uint32_t depth = x->depth - 1;
	struct tachi_xtok u;
	do {
		int rc = tachi_xml_next(x, &u);
		if (rc)
			return rc;
	} while (x->depth > depth);
	return TACH_OK;
}

bool tachi_xml_is(const struct tachi_xml *x, struct tachi_xspan s, const char *lit)
{
	return strlen(lit) == s.len && !memcmp(x->p + s.at, lit, s.len);
}

const struct tachi_xattr *tachi_xml_attr(const struct tachi_xml *x, const struct tachi_xtok *t,
					 const char *lit)
{
	for (uint32_t k = 0; k < t->nattr; k++)
		if (tachi_xml_is(x, t->attr[k].name, lit))
			return &t->attr[k];
	return NULL;
}

static size_t put_utf8(char *o, long cp)
{
	if (cp < 0x80) {
		o[0] = (char)cp;
		return 1;
	}
	if (cp < 0x800) {
		o[0] = (char)(0xC0 | cp >> 6), o[1] = (char)(0x80 | (cp & 0x3F));
		return 2;
	}
	if (cp < 0x10000) {
		o[0] = (char)(0xE0 | cp >> 12), o[1] = (char)(0x80 | (cp >> 6 & 0x3F));
		o[2] = (char)(0x80 | (cp & 0x3F));
		return 3;
	}
	o[0] = (char)(0xF0 | cp >> 18), o[1] = (char)(0x80 | (cp >> 12 & 0x3F));
	o[2] = (char)(0x80 | (cp >> 6 & 0x3F)), o[3] = (char)(0x80 | (cp & 0x3F));
	return 4;
}

size_t tachi_xml_unescape(const struct tachi_xml *x, struct tachi_xspan s, bool escaped,
			  char *out)
{
	const uint8_t *p = x->p + s.at;
	if (!escaped) {
		memcpy(out, p, s.len);
		return s.len;
	}
	size_t o = 0;
	long cp;
	for (size_t i = 0; i < s.len; i++) {
		size_t l = p[i] == '&' ? entity(p, s.len, i, &cp) : 0;
		if (l) {
			o += put_utf8(out + o, cp);
			i += l - 1;
		} else {
			out[o++] = (char)p[i];
		}
	}
	return o;
}
