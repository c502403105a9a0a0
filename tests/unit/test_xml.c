/* The XML tokenizer: tokens and their spans, entities decoded, CDATA, the markup it
 * passes over, and malformed or unbounded inputs refused at the right byte. */
#include <stdlib.h>
#include <string.h>

#include "check.h"
#include "base/xml.h"

/* Tokenizes the whole of s; returns the status, *off the error offset, *tokens how many
 * tokens (EOF not counted). */
static int scan(const char *s, size_t n, uint32_t depth, uint64_t *off, int *tokens)
{
	struct tachi_err e = { 0 };
	struct tachi_xml x;
	struct tachi_xtok t;
	int rc;
	tachi_xml_init(&x, (const uint8_t *)s, n, depth, &e);
	*tokens = 0;
	while (!(rc = tachi_xml_next(&x, &t)) && t.type != TX_EOF)
		(*tokens)++;
	*off = e.pos;
	if (rc && !e.msg[0])
		rc = 99; /* every failure must say what */
	return rc;
}

static void valid(const char *s, int want_tokens)
{
	uint64_t off;
	int tokens;
	int rc = scan(s, strlen(s), 0, &off, &tokens);
	if (rc || tokens != want_tokens)
		fprintf(stderr, "input %s: rc %d, %d tokens, wanted %d\n", s, rc, tokens, want_tokens);
	CHECK(rc == TACH_OK && tokens == want_tokens);
}

static void invalid(const char *s, size_t n, uint64_t want_off)
{
	uint64_t off;
	int tokens;
	int rc = scan(s, n, 0, &off, &tokens);
	if (rc != TACH_E_FORMAT || off != want_off)
		fprintf(stderr, "input %.*s: rc %d offset %llu, wanted offset %llu\n", (int)n, s, rc,
			(unsigned long long)off, (unsigned long long)want_off);
	CHECK(rc == TACH_E_FORMAT && off == want_off);
}
#define INVALID(lit, off) invalid(lit, sizeof(lit) - 1, off)

static void test_valid(void)
{
	valid("<a/>", 1);
	valid("<?xml version=\"1.0\"?>\n<a>x</a>\n", 3);
	valid("\xef\xbb\xbf<a/>", 1);
	valid("<!DOCTYPE a>\n<!-- c -->\n<a b='1' c = \"2\" >t&lt;&#65;&#x42;<![CDATA[<&]]></a><?p?>", 4);
	valid("<a><b><c/></b>\n</a>", 6);
	valid("<q:a-b.c_d/>", 1);
}

static void test_invalid(void)
{
	INVALID("", 0);                       /* no element */
	INVALID("  \n", 3);
	INVALID("x<a/>", 0);                  /* text outside the root */
	INVALID("<a/>x", 4);
	INVALID("<a/><b/>", 4);               /* a second root */
	INVALID("<a><b></a>", 6);             /* not the open element's end */
	INVALID("</a>", 0);
	INVALID("<a>", 3);                    /* cut short */
	INVALID("<a b=\"1", 7);
	INVALID("<a b", 4);
	INVALID("<a b=1/>", 5);               /* unquoted */
	INVALID("<a b='1'c='2'/>", 8);        /* not parted */
	INVALID("<a b='1' b='2'/>", 9);       /* twice */
	INVALID("<a b='<'/>", 6);
	INVALID("<a>&foo;</a>", 3);           /* no such entity */
	INVALID("<a>&#0;</a>", 3);
	INVALID("<a>&#xD800;</a>", 3);
	INVALID("<a>&#x110000;</a>", 3);
	INVALID("<a>& b</a>", 3);
	INVALID("<a>\x01</a>", 3);            /* a control byte */
	INVALID("<a><!-- x</a>", 3);
	INVALID("<a><![CDATA[x</a>", 3);
	INVALID("<![CDATA[x]]><a/>", 0);
	INVALID("<!DOCTYPE a [<!ENTITY e 'x'>]><a/>", 12);
	INVALID("< a/>", 1);
	INVALID("<1/>", 1);
}

static void test_bounds(void)
{
	uint64_t off;
	int tokens;
	/* 64 levels are the most, whatever is asked for; a depth asked for is kept */
	char deep[65 * 3 + 1] = "";
	for (int i = 0; i < 65; i++)
		strcat(deep, "<a>");
	CHECK(scan(deep, 64 * 3, 0, &off, &tokens) == TACH_E_FORMAT && off == 64 * 3);
	CHECK(scan(deep, 65 * 3, 0, &off, &tokens) == TACH_E_FORMAT && off == 64 * 3);
	CHECK(scan(deep, 65 * 3, 1000, &off, &tokens) == TACH_E_FORMAT && off == 64 * 3);
	CHECK(scan("<a><b/></a>", 11, 1, &off, &tokens) == TACH_E_FORMAT && off == 3);
	/* 16 attributes, not 17 */
	char attrs[200] = "<a";
	for (int i = 0; i < 17; i++)
		sprintf(attrs + strlen(attrs), " %c='1'", 'a' + i);
	CHECK(scan(attrs, strlen(attrs), 0, &off, &tokens) == TACH_E_FORMAT &&
	      off == 2 + 16 * 6 + 1);
	/* names up to 256 bytes */
	char name[300] = "<";
	memset(name + 1, 'n', 257);
	strcpy(name + 258, "/>");
	CHECK(scan(name, strlen(name), 0, &off, &tokens) == TACH_E_FORMAT && off == 1);
	memmove(name + 257, name + 258, 3);
	CHECK(scan(name, strlen(name), 0, &off, &tokens) == TACH_OK && tokens == 1);
	/* a text of 1 MiB, not one more byte */
	size_t big = TACHI_MAX_STRING + 8;
	char *s = malloc(big + 1);
	memcpy(s, "<a>", 3);
	memset(s + 3, 'x', TACHI_MAX_STRING);
	memcpy(s + 3 + TACHI_MAX_STRING, "</a>", 5);
	CHECK(scan(s, strlen(s), 0, &off, &tokens) == TACH_OK && tokens == 3);
	memcpy(s + 3 + TACHI_MAX_STRING, "x</a>", 6);
	CHECK(scan(s, strlen(s), 0, &off, &tokens) == TACH_E_FORMAT && off == 3);
	free(s);
}

static void test_walk(void)
{
	static const char doc[] =
		"<r><e id=\"7\" name='a &amp; b&#x20AC;'>t &gt; u<![CDATA[&x]]></e><f/></r>";
	struct tachi_err e = { 0 };
	struct tachi_xml x;
	struct tachi_xtok t;
	char out[64];
	tachi_xml_init(&x, (const uint8_t *)doc, sizeof(doc) - 1, 0, &e);
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_START && tachi_xml_is(&x, t.name, "r"));
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_START && tachi_xml_is(&x, t.name, "e"));
	CHECK(t.nattr == 2 && x.depth == 2 && t.off == 3);
	const struct tachi_xattr *a = tachi_xml_attr(&x, &t, "name");
	CHECK(a && a->escaped && !tachi_xml_attr(&x, &t, "ref"));
	size_t n = tachi_xml_unescape(&x, a->value, a->escaped, out);
	CHECK(n == 8 && !memcmp(out, "a & b\xe2\x82\xac", 8));
	a = tachi_xml_attr(&x, &t, "id");
	CHECK(a && !a->escaped && tachi_xml_is(&x, a->value, "7"));
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_TEXT && t.escaped);
	n = tachi_xml_unescape(&x, t.text, t.escaped, out);
	CHECK(n == 5 && !memcmp(out, "t > u", 5));
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_TEXT && !t.escaped);
	CHECK(tachi_xml_is(&x, t.text, "&x"));
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_END && tachi_xml_is(&x, t.name, "e"));
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_EMPTY && tachi_xml_is(&x, t.name, "f"));
	CHECK(x.depth == 1);
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_END);
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_EOF);
	/* skip passes over an element whole */
	tachi_xml_init(&x, (const uint8_t *)doc, sizeof(doc) - 1, 0, &e);
	CHECK(!tachi_xml_next(&x, &t) && !tachi_xml_next(&x, &t) && !tachi_xml_skip(&x, &t));
	CHECK(!tachi_xml_next(&x, &t) && t.type == TX_EMPTY && tachi_xml_is(&x, t.name, "f"));
}

int main(void)
{
	test_valid();
	test_invalid();
	test_bounds();
	test_walk();
	return CHECK_DONE();
}
