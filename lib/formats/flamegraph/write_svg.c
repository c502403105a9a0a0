/* The flame graph writer's SVG output: the frames flamegraph/write.c lays out, written as
 * flamegraph.pl writes them. The embedded script, text as XML (escaped, invalid UTF-8 as
 * U+FFFD), the frames' colours (flamegraph.pl's palettes, --hash, a differential delta's
 * red and blue), their titles and shown labels, and the image's head (size, background,
 * style, title texts), tail and the image of an empty profile. The format note is in
 * flamegraph/write.c. */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "base/base.h"
#include "base/utf8.h"
#include "base/io.h"
#include "model/dict.h"
#include "core/handles.h"
#include "formats/flamegraph/write.h"

/* The embedded script, our own: details on hover, zoom, search. One string a line (C
 * compilers need not take longer literals). */
static const char *const script[] = {
	"\"use strict\";\n",
	"var fg = null;\n",
	"function init(evt) {\n",
	"\tvar d = document, box = d.getElementById(\"frames\");\n",
	"\tfg = {\n",
	"\t\tdetails: d.getElementById(\"details\").firstChild,\n",
	"\t\tmatched: d.getElementById(\"matched\").firstChild,\n",
	"\t\tunzoom: d.getElementById(\"unzoom\"),\n",
	"\t\tsearch: d.getElementById(\"search\"),\n",
	"\t\tic: d.getElementById(\"ignorecase\"),\n",
	"\t\tnametype: box.getAttribute(\"data-nametype\"),\n",
	"\t\tinverted: box.getAttribute(\"data-inverted\") === \"1\",\n",
	"\t\tcharw: parseFloat(box.getAttribute(\"data-fontsize\")) * 0.59,\n",
	"\t\tfull: d.documentElement.width.baseVal.value - 20,\n",
	"\t\tframes: [], term: null, icase: false\n",
	"\t};\n",
	"\tfor (var g = box.firstElementChild; g; g = g.nextElementSibling) {\n",
	"\t\tvar r = g.getElementsByTagName(\"rect\")[0];\n",
	"\t\tvar title = g.getElementsByTagName(\"title\")[0].textContent;\n",
	"\t\tvar cut = title.lastIndexOf(\" (\");\n",
	"\t\tvar f = { g: g, r: r, t: g.getElementsByTagName(\"text\")[0], title: title,\n",
	"\t\t\tname: cut < 0 ? title : title.substring(0, cut),\n",
	"\t\t\tx: parseFloat(r.getAttribute(\"x\")), w: parseFloat(r.getAttribute(\"width\")),\n",
	"\t\t\ty: parseFloat(r.getAttribute(\"y\")), fill: r.getAttribute(\"fill\") };\n",
	"\t\tg.fgFrame = f;\n",
	"\t\tfg.frames.push(f);\n",
	"\t}\n",
	"\tbox.addEventListener(\"mouseover\", function (e) {\n",
	"\t\tvar f = frame_at(e.target);\n",
	"\t\tif (f)\n",
	"\t\t\tfg.details.nodeValue = fg.nametype + \" \" + f.title;\n",
	"\t});\n",
	"\tbox.addEventListener(\"mouseout\", function (e) {\n",
	"\t\tif (frame_at(e.target))\n",
	"\t\t\tfg.details.nodeValue = \" \";\n",
	"\t});\n",
	"\tbox.addEventListener(\"click\", function (e) {\n",
	"\t\tvar f = frame_at(e.target);\n",
	"\t\tif (f)\n",
	"\t\t\tzoom(f);\n",
	"\t});\n",
	"\tfg.unzoom.addEventListener(\"click\", function () { zoom(null); });\n",
	"\tfg.search.addEventListener(\"click\", search_prompt);\n",
	"\tfg.ic.addEventListener(\"click\", toggle_case);\n",
	"\twindow.addEventListener(\"keydown\", function (e) {\n",
	"\t\tif (e.keyCode === 114 || (e.ctrlKey && e.keyCode === 70)) {\n",
	"\t\t\te.preventDefault();\n",
	"\t\t\tsearch_prompt();\n",
	"\t\t} else if (e.ctrlKey && e.keyCode === 73) {\n",
	"\t\t\te.preventDefault();\n",
	"\t\t\ttoggle_case();\n",
	"\t\t}\n",
	"\t});\n",
	"}\n",
	"// the frame an event happened in, if any\n",
	"function frame_at(el) {\n",
	"\twhile (el && !el.fgFrame)\n",
	"\t\tel = el.parentNode;\n",
	"\treturn el ? el.fgFrame : null;\n",
	"}\n",
	"// label text cut to what fits the box, measured by the renderer\n",
	"function fit_text(f, x, w) {\n",
	"\tvar t = f.t, room = w - 3, s = f.name;\n",
	"\tt.setAttribute(\"x\", (x + 3).toFixed(2));\n",
	"\tif (room < 2 * fg.charw || false) {\n",
	"\t\tt.textContent = \"\";\n",
	"\t\treturn;\n",
	"\t}\n",
	"\tt.textContent = s;\n",
	"\tvar len = t.getComputedTextLength();\n",
	"\tif (len <= room)\n",
	"\t\treturn;\n",
	"\tfor (var n = Math.floor(s.length * room / len); n > 0; n--) {\n",
	"\t\tt.textContent = s.substring(0, n) + \"..\";\n",
	"\t\tif (t.getComputedTextLength() <= room)\n",
	"\t\t\treturn;\n",
	"\t}\n",
	"\tt.textContent = \"\";\n",
	"}\n",
	"function place(f, x, w) {\n",
	"\tf.r.setAttribute(\"x\", x.toFixed(1));\n",
	"\tf.r.setAttribute(\"width\", w.toFixed(1));\n",
	"\tfit_text(f, x, w);\n",
	"}\n",
	"// zoom to frame z (null: everything); ancestors stay, dimmed, across the full width\n",
	"function zoom(z) {\n",
	"\tvar eps = 0.0001;\n",
	"\tif (z && z.w <= 0)\n",
	"\t\treturn;\n",
	"\tfg.unzoom.classList.toggle(\"hide\", !z);\n",
	"\tfor (var i = 0; i < fg.frames.length; i++) {\n",
	"\t\tvar e = fg.frames[i], show = true, parent = false;\n",
	"\t\tif (!z) {\n",
	"\t\t\tplace(e, e.x, e.w);\n",
	"\t\t} else if (fg.inverted ? e.y < z.y : e.y > z.y) {\n",
	"\t\t\tparent = e.x <= z.x + eps && e.x + e.w + eps >= z.x + z.w;\n",
	"\t\t\tshow = parent;\n",
	"\t\t\tif (parent)\n",
	"\t\t\t\tplace(e, 10, fg.full);\n",
	"\t\t} else {\n",
	"\t\t\tshow = e.x + eps >= z.x && e.x + eps < z.x + z.w;\n",
	"\t\t\tif (show) {\n",
	"\t\t\t\tvar k = fg.full / z.w;\n",
	"\t\t\t\tplace(e, 10 + (e.x - z.x) * k, e.w * k);\n",
	"\t\t\t}\n",
	"\t\t}\n",
	"\t\te.g.classList.toggle(\"hide\", !show);\n",
	"\t\te.g.classList.toggle(\"parent\", parent);\n",
	"\t}\n",
	"\tif (fg.term !== null)\n",
	"\t\tsearch(fg.term);\n",
	"}\n",
	"function toggle_case() {\n",
	"\tfg.icase = !fg.icase;\n",
	"\tfg.ic.classList.toggle(\"show\", fg.icase);\n",
	"\tif (fg.term !== null)\n",
	"\t\tsearch(fg.term);\n",
	"}\n",
	"function clear_search() {\n",
	"\tfg.term = null;\n",
	"\tfor (var i = 0; i < fg.frames.length; i++)\n",
	"\t\tfg.frames[i].r.setAttribute(\"fill\", fg.frames[i].fill);\n",
	"\tfg.search.classList.remove(\"show\");\n",
	"\tfg.search.firstChild.nodeValue = \"Search\";\n",
	"\tfg.matched.nodeValue = \" \";\n",
	"}\n",
	"function search_prompt() {\n",
	"\tif (fg.term !== null) {\n",
	"\t\tclear_search();\n",
	"\t\treturn;\n",
	"\t}\n",
	"\tvar term = prompt(\"Search for a regular expression (such as ^ext4_)\" +\n",
	"\t\t(fg.icase ? \", ignoring case\" : \"\") + \"\\nCtrl-I toggles case sensitivity\", \"\");\n",
	"\tif (term)\n",
	"\t\tsearch(term);\n",
	"}\n",
	"// highlight frames whose name matches; the matched share counts nested frames once\n",
	"function search(term) {\n",
	"\tvar re;\n",
	"\ttry {\n",
	"\t\tre = new RegExp(term, fg.icase ? \"i\" : \"\");\n",
	"\t} catch (err) {\n",
	"\t\talert(\"Not a regular expression: \" + term);\n",
	"\t\treturn;\n",
	"\t}\n",
	"\tfg.term = term;\n",
	"\tvar spans = [];\n",
	"\tfor (var i = 0; i < fg.frames.length; i++) {\n",
	"\t\tvar e = fg.frames[i], hit = re.test(e.name);\n",
	"\t\te.r.setAttribute(\"fill\", hit ? \"rgb(230,0,230)\" : e.fill);\n",
	"\t\tif (hit && !e.g.classList.contains(\"hide\"))\n",
	"\t\t\tspans.push([parseFloat(e.r.getAttribute(\"x\")), parseFloat(e.r.getAttribute(\"width\"))]);\n",
	"\t}\n",
	"\tspans.sort(function (a, b) { return a[0] - b[0] || b[1] - a[1]; });\n",
	"\tvar sum = 0, end = -1;\n",
	"\tfor (var j = 0; j < spans.length; j++)\n",
	"\t\tif (spans[j][0] >= end - 0.0001) {\n",
	"\t\t\tsum += spans[j][1];\n",
	"\t\t\tend = spans[j][0] + spans[j][1];\n",
	"\t\t}\n",
	"\tvar pct = 100 * sum / fg.full;\n",
	"\tfg.search.classList.add(\"show\");\n",
	"\tfg.search.firstChild.nodeValue = \"Reset Search\";\n",
	"\tfg.matched.nodeValue = \"Matched: \" + (Math.abs(pct - 100) < 0.05 ? \"100\" : pct.toFixed(1)) + \"%\";\n",
	"}\n",
	NULL,
};

/* ---- SVG output ---- */

static int outf(struct render *R, const char *fmt, ...) TACHI_PRINTF(2, 3);
static int outf(struct render *R, const char *fmt, ...)
{
	char buf[512];
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(buf, sizeof(buf), fmt, ap);
	va_end(ap);
	if (n < 0 || (size_t)n >= sizeof(buf))
		return -1;
	return tachi_out_write(&R->w->out, buf, (size_t)n);
}

/* Text as XML character data: markup characters escaped, control bytes as '?', invalid
 * UTF-8 and the non-characters XML refuses as U+FFFD. */
static int xml_put(struct render *R, const char *s, size_t n)
{
	struct tachi_out *o = &R->w->out;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		const char *rep = NULL;
		size_t len = 1;
		if (c == '&')
			rep = "&amp;";
		else if (c == '<')
			rep = "&lt;";
		else if (c == '>')
			rep = "&gt;";
		else if (c == '"')
			rep = "&quot;";
		else if (c < 0x20 || c == 0x7f)
			rep = "?";
		else if (c >= 0x80) {
			len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
			if (len == 1 || i + len > n || !tachi_utf8_valid((const uint8_t *)s + i, len) ||
			    (len == 3 && c == 0xEF && (unsigned char)s[i + 1] == 0xBF &&
			     (unsigned char)s[i + 2] >= 0xBE)) {
				rep = "\xEF\xBF\xBD";
				len = c >= 0xC0 && i + len <= n && len > 1 &&
				      tachi_utf8_valid((const uint8_t *)s + i, len) ? len : 1;
			}
		}
		if (rep ? tachi_out_str(o, rep) : tachi_out_write(o, s + i, len))
			return -1;
		i += len;
	}
	return 0;
}

static int xml_str(struct render *R, const char *s)
{
	return xml_put(R, s, strlen(s));
}

/* The code points of s (valid UTF-8, as labels are) into R->cp. */
static bool code_points(struct render *R, const char *s, size_t n, size_t *out)
{
	if (!TACHI_RESERVE(R->cp, R->cp_cap, n ? n : 1))
		return false;
	size_t k = 0;
	for (size_t i = 0; i < n;) {
		unsigned char c = (unsigned char)s[i];
		size_t len = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC0 ? 2 : 1;
		if (i + len > n)
			len = n - i;
		uint32_t v = len == 1 ? c : c & (0x7f >> len);
		for (size_t j = 1; j < len; j++)
			v = v << 6 | ((unsigned char)s[i + j] & 0x3f);
		R->cp[k++] = v;
		i += len;
	}
	*out = k;
	return true;
}

/* flamegraph.pl's namehash: a "module`" prefix dropped, then the first three characters
 * weighted, earlier ones more. rev reads the name backwards. */
static double namehash(const uint32_t *cp, size_t n, bool rev)
{
#define AT(i) cp[rev ? n - 1 - (i) : (i)]
	size_t start = 0;
	for (size_t i = 1; i < n; i++)
		if (AT(i) == '`') {
			start = i + 1;
			break;
		}
	double vector = 0, weight = 1, max = 1;
	unsigned mod = 10;
	for (size_t i = start; i < n; i++) {
		unsigned k = AT(i) % mod;
		vector += ((double)k / (double)(mod - 1)) * weight;
		mod++;
		max += 1 * weight;
		weight *= 0.70;
		if (mod > 12)
			break;
	}
#undef AT
	return 1 - vector / max;
}

/* Without --hash: the sum of the code points seeds perl's drand48, as newer flamegraph.pl
 * versions do for stable colours; one value serves all three channels. */
static double name_rand(const uint32_t *cp, size_t n)
{
	uint32_t sum = 0;
	for (size_t i = 0; i < n; i++)
		sum += cp[i];
	uint64_t x = (0x330EULL + ((uint64_t)sum << 16)) & 0xFFFFFFFFFFFFULL;
	x = (x * 0x5DEECE66DULL + 0xB) & 0xFFFFFFFFFFFFULL;
	return (double)x / 281474976710656.0;
}

static bool ends_with(const char *s, size_t n, const char *t)
{
	size_t k = strlen(t);
	return n >= k && !memcmp(s + n - k, t, k);
}

static bool has(const char *s, size_t n, const char *t)
{
	return memmem(s, n, t, strlen(t)) != NULL;
}

/* The multi-palettes pick a flat palette by what the name looks like. */
static int pick_palette(int pal, const char *s, size_t n, bool waker)
{
	static const char *const jprefix[] = { "java/", "javax/", "jdk/", "net/", "org/",
					       "com/", "io/", "sun/" };
	if (pal == PAL_JAVA) {
		if (ends_with(s, n, "_[j]"))
			return PAL_GREEN;
		if (ends_with(s, n, "_[i]"))
			return PAL_AQUA;
		const char *p = n && s[0] == 'L' ? s + 1 : s;
		size_t pn = n - (size_t)(p - s);
		for (size_t i = 0; i < sizeof(jprefix) / sizeof(jprefix[0]); i++)
			if (pn >= strlen(jprefix[i]) && !memcmp(p, jprefix[i], strlen(jprefix[i])))
				return PAL_GREEN;
		if (has(s, n, ":::"))
			return PAL_GREEN;
		if (has(s, n, "::"))
			return PAL_YELLOW;
		return ends_with(s, n, "_[k]") ? PAL_ORANGE : PAL_RED;
	}
	if (pal == PAL_PERL) {
		if (has(s, n, "::"))
			return PAL_YELLOW;
		if (has(s, n, "Perl") || has(s, n, ".pl"))
			return PAL_GREEN;
		return ends_with(s, n, "_[k]") ? PAL_ORANGE : PAL_RED;
	}
	if (pal == PAL_JS) {
		const char *slash = memchr(s, '/', n);
		if (ends_with(s, n, "_[j]"))
			return slash ? PAL_GREEN : PAL_AQUA;
		if (has(s, n, "::"))
			return PAL_YELLOW;
		if (slash && has(slash, n - (size_t)(slash - s), ".js"))
			return PAL_GREEN;
		if (memchr(s, ':', n))
			return PAL_AQUA;
		if (n == 1 && s[0] == ' ')
			return PAL_GREEN;
		return has(s, n, "_[k]") ? PAL_ORANGE : PAL_RED;
	}
	if (pal == PAL_WAKEUP)
		return PAL_AQUA;
	if (pal == PAL_CHAIN)
		return waker || has(s, n, "_[w]") ? PAL_AQUA : PAL_BLUE;
	return pal;
}

static void palette_rgb(int pal, double v1, double v2, double v3, int rgb[3])
{
	int r = 0, g = 0, b = 0;
	switch (pal) {
	case PAL_HOT: r = 205 + (int)(50 * v3); g = (int)(230 * v1); b = (int)(55 * v2); break;
	case PAL_MEM: g = 190 + (int)(50 * v2); b = (int)(210 * v1); break;
	case PAL_IO: r = g = 80 + (int)(60 * v1); b = 190 + (int)(55 * v2); break;
	case PAL_RED: r = 200 + (int)(55 * v1); g = b = 50 + (int)(80 * v1); break;
	case PAL_GREEN: g = 200 + (int)(55 * v1); r = b = 50 + (int)(60 * v1); break;
	case PAL_BLUE: b = 205 + (int)(50 * v1); r = g = 80 + (int)(60 * v1); break;
	case PAL_YELLOW: r = g = 175 + (int)(55 * v1); b = 50 + (int)(20 * v1); break;
	case PAL_PURPLE: r = b = 190 + (int)(65 * v1); g = 80 + (int)(60 * v1); break;
	case PAL_AQUA: r = 50 + (int)(60 * v1); g = b = 165 + (int)(55 * v1); break;
	case PAL_ORANGE: r = 190 + (int)(65 * v1); g = 90 + (int)(65 * v1); break;
	}
	rgb[0] = r;
	rgb[1] = g;
	rgb[2] = b;
}

/* A frame's fill: grey separators, the delta's red or blue, else the palette's. */
static bool frame_rgb(struct render *R, const struct frame *f, const char *s, size_t n,
		      int rgb[3])
{
	const struct fopts *o = &R->st->o;
	if ((n == 2 && !memcmp(s, "--", 2)) || (n == 1 && s[0] == '-')) {
		rgb[0] = rgb[1] = rgb[2] = n == 2 ? 160 : 200;
		return true;
	}
	if (R->st->differential) {
		int64_t v = o->negate ? -f->delta : f->delta, max = R->maxdelta;
		rgb[0] = rgb[1] = rgb[2] = 255;
		if (v > 0)
			rgb[1] = rgb[2] = (int)(210.0 * (double)(max - v) / (double)max);
		else if (v < 0)
			rgb[0] = rgb[1] = (int)(210.0 * (double)(max + v) / (double)max);
		return true;
	}
	size_t k;
	if (!code_points(R, s, n, &k))
		return false;
	double v1, v2, v3;
	if (o->hash) {
		v1 = namehash(R->cp, k, false);
		v2 = v3 = namehash(R->cp, k, true);
	} else {
		v1 = v2 = v3 = name_rand(R->cp, k);
	}
	palette_rgb(pick_palette(o->palette, s, n, f->waker), v1, v2, v3, rgb);
	return true;
}

/* "1234567" as "1,234,567". */
static size_t commas(char *out, uint64_t v)
{
	char d[24];
	size_t n = tachi_fmt_u64(d, v), k = 0;
	for (size_t i = 0; i < n; i++) {
		if (i && (n - i) % 3 == 0)
			out[k++] = ',';
		out[k++] = d[i];
	}
	out[k] = 0;
	return k;
}

static double pct_of(uint64_t part, uint64_t total)
{
	double t = (double)(total ? total : 1);
	if (part <= UINT64_MAX / 100)
		return (double)(part * 100) / t;
	return 100.0 * (double)part / t;
}

/* <title>: "name (N samples, P%)", with "; D%" when differential. */
static int write_title(struct render *R, const struct frame *f, const char *s, size_t n,
		       uint64_t samples)
{
	const struct fopts *o = &R->st->o;
	char num[40];
	commas(num, samples);
	if (f->lab == NO_LABEL)
		return outf(R, "<title>all (%s ", num) || xml_str(R, o->countname) ||
		       outf(R, ", 100%%)</title>");
	if (outf(R, "<title>") || xml_put(R, s, n) || outf(R, " (%s ", num) ||
	    xml_str(R, o->countname) || outf(R, ", %.2f%%", pct_of(samples, R->total)))
		return -1;
	if (R->st->differential) {
		int64_t d = o->negate ? -f->delta : f->delta;
		double p = 100.0 * (double)d / (double)(R->total ? R->total : 1);
		if (outf(R, "; %s%.2f%%", d > 0 ? "+" : "", p))
			return -1;
	}
	return outf(R, ")</title>");
}

/* The label text shown in the frame: as many characters as fit, ".." when cut. */
static int write_text(struct render *R, const char *s, size_t n, double w)
{
	double fit = w / (R->st->o.fontsize * FONTWIDTH);
	if (!(fit >= 3) || !n)
		return 0;
	/* a tiny font: every name fits (and the count stays an integer) */
	size_t chars = fit > (double)n ? n + 1 : (size_t)fit;
	size_t k = 0, cut = 0, keep2 = 0;
	for (size_t i = 0; i < n; i++) {
		if (((unsigned char)s[i] & 0xC0) == 0x80)
			continue;
		if (k == chars - 2)
			keep2 = i;
		if (k == chars) {
			cut = i;
			break;
		}
		k++;
	}
	if (!cut)
		return xml_put(R, s, n);
	return xml_put(R, s, keep2) || tachi_out_str(&R->w->out, "..");
}

int tachi_flamegraph_frame(struct render *R, const struct frame *f, uint32_t depth,
			   uint64_t etime)
{
	const struct fopts *o = &R->st->o;
	double fh = (double)o->frameheight, y1, y2;
	if (f->lab == NO_LABEL)
		etime = R->total;
	double x1 = XPAD + (double)f->stime * R->wpt, x2 = XPAD + (double)etime * R->wpt;
	if (!o->inverted) {
		y1 = R->height - R->ypad2 - (depth + 1) * fh + 1;
		y2 = R->height - R->ypad2 - depth * fh;
	} else {
		y1 = R->ypad1 + depth * fh;
		y2 = R->ypad1 + (depth + 1) * fh - 1;
	}
	size_t n = 0;
	const char *s = f->lab == NO_LABEL ? "" : tachi_str(&R->names, f->lab, &n);
	int rgb[3];
	if (!frame_rgb(R, f, s, n, rgb))
		return -1;
	/* flamegraph.pl's annotations (_[k] kernel, _[j] JIT, ...) choose colours only */
	size_t shown = n;
	if (n >= 4 && s[n - 4] == '_' && s[n - 3] == '[' && s[n - 1] == ']' &&
	    memchr("kwij", s[n - 2], 4))
		shown -= 4;
	/* Widths from the rounded ends, as flamegraph.pl computes them. */
	char sx1[48], sx2[48];
	snprintf(sx1, sizeof(sx1), "%.1f", x1);
	snprintf(sx2, sizeof(sx2), "%.1f", x2);
	double wr = strtod(sx2, NULL) - strtod(sx1, NULL);
	return outf(R, "<g>\n") || write_title(R, f, s, shown, etime - f->stime) ||
	       outf(R, "<rect x=\"%s\" y=\"%.15g\" width=\"%.1f\" height=\"%.1f\" "
		       "fill=\"rgb(%d,%d,%d)\" rx=\"2\" ry=\"2\"/>\n<text x=\"%.2f\" y=\"%.15g\">",
		    sx1, y1, wr, y2 - y1, rgb[0], rgb[1], rgb[2], x1 + 3, 3 + (y1 + y2) / 2) ||
	       write_text(R, s, shown, x2 - x1) || outf(R, "</text>\n</g>\n");
}

static const char *bg_color(const struct fopts *o, int which)
{
	static const char *const grads[][3] = {
		{ "yellow", "#eeeeee", "#eeeeb0" }, { "blue", "#eeeeee", "#e0e0ff" },
		{ "green", "#eef2ee", "#e0ffe0" }, { "grey", "#f8f8f8", "#e8e8e8" },
	};
	const char *bg = o->bgcolors;
	if (!bg) {
		int p = o->palette;
		bg = p == PAL_MEM ? "green"
		   : p == PAL_IO || p == PAL_WAKEUP || p == PAL_CHAIN ? "blue"
		   : p >= PAL_RED ? "grey" : "yellow";
	}
	if (bg[0] == '#')
		return bg;
	for (size_t i = 0; i < 4; i++)
		if (!strcmp(bg, grads[i][0]))
			return grads[i][1 + which];
	return grads[0][1 + which];
}

static int write_style(struct render *R)
{
	const struct fopts *o = &R->st->o;
	if (outf(R, "<defs>\n\t<linearGradient id=\"background\" y1=\"0\" y2=\"1\" x1=\"0\" x2=\"0\">\n"
		    "\t\t<stop stop-color=\"%s\" offset=\"5%%\"/>\n\t\t<stop stop-color=\"%s\" "
		    "offset=\"95%%\"/>\n\t</linearGradient>\n</defs>\n<style type=\"text/css\">\n"
		    "\ttext { font-family:", bg_color(o, 0), bg_color(o, 1)) ||
	    xml_str(R, o->fonttype) ||
	    outf(R, "; font-size:%.15gpx; fill:rgb(0,0,0); }\n"
		    "\t#title { text-anchor:middle; font-size:%.15gpx; }\n"
		    "\t#subtitle { text-anchor:middle; fill:rgb(160,160,160); }\n"
		    "\t#search, #ignorecase { opacity:0.1; cursor:pointer; }\n"
		    "\t#search:hover, #search.show, #ignorecase:hover, #ignorecase.show { opacity:1; }\n"
		    "\t#unzoom { cursor:pointer; }\n", o->fontsize, o->fontsize + 5) ||
	    outf(R, "\t#frames > *:hover { stroke:black; stroke-width:0.5; cursor:pointer; }\n"
		    "\t.hide { display:none; }\n\t.parent { opacity:0.5; }\n</style>\n"
		    "<script type=\"text/ecmascript\"><![CDATA[\n"))
		return -1;
	for (size_t i = 0; script[i]; i++)
		if (tachi_out_str(&R->w->out, script[i]))
			return -1;
	return outf(R, "]]></script>\n");
}

static int write_texts(struct render *R)
{
	const struct fopts *o = &R->st->o;
	double top = o->fontsize * 2, bottom = R->height - R->ypad2 / 2;
	double mid = (double)(o->width / 2), right = (double)o->width - XPAD - 100;
	const char *title = o->title ? o->title
			  : o->flamechart ? "Flame Chart" : o->inverted ? "Icicle Graph" : "Flame Graph";
	if (outf(R, "<rect x=\"0.0\" y=\"0\" width=\"%.1f\" height=\"%.1f\" fill=\"url(#background)\"/>\n"
		    "<text id=\"title\" x=\"%.2f\" y=\"%.15g\">", (double)o->width, R->height, mid, top) ||
	    xml_str(R, title) || outf(R, "</text>\n"))
		return -1;
	if (o->subtitle && o->subtitle[0] &&
	    (outf(R, "<text id=\"subtitle\" x=\"%.2f\" y=\"%.15g\">", mid, o->fontsize * 4) ||
	     xml_str(R, o->subtitle) || outf(R, "</text>\n")))
		return -1;
	return outf(R, "<text id=\"details\" x=\"%.2f\" y=\"%.15g\"> </text>\n"
		       "<text id=\"unzoom\" x=\"%.2f\" y=\"%.15g\" class=\"hide\">Reset Zoom</text>\n",
		    (double)XPAD, bottom, (double)XPAD, top) ||
	       outf(R, "<text id=\"search\" x=\"%.2f\" y=\"%.15g\">Search</text>\n"
		       "<text id=\"ignorecase\" x=\"%.2f\" y=\"%.15g\">ic</text>\n"
		       "<text id=\"matched\" x=\"%.2f\" y=\"%.15g\"> </text>\n",
		    right, top, (double)o->width - XPAD - 16, top, right, bottom);
}

static int svg_open(struct render *R, double height)
{
	uint64_t w = R->st->o.width;
	return outf(R, "<?xml version=\"1.0\" standalone=\"no\"?>\n<!DOCTYPE svg PUBLIC "
		       "\"-//W3C//DTD SVG 1.1//EN\" "
		       "\"http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd\">\n") ||
	       outf(R, "<svg version=\"1.1\" width=\"%llu\" height=\"%.15g\" onload=\"init(evt)\" "
		       "viewBox=\"0 0 %llu %.15g\" xmlns=\"http://www.w3.org/2000/svg\" "
		       "xmlns:xlink=\"http://www.w3.org/1999/xlink\">\n",
		    (unsigned long long)w, height, (unsigned long long)w, height) ||
	       outf(R, "<!-- Flame graph by tachfmt, drawn as flamegraph.pl "
		       "(https://github.com/brendangregg/FlameGraph) draws it. -->\n");
}

int tachi_flamegraph_head(struct render *R)
{
	const struct fopts *o = &R->st->o;
	R->ypad1 = o->fontsize * 3;
	R->ypad2 = o->fontsize * 2 + 10;
	R->height = (R->depthmax + 1) * (double)o->frameheight + R->ypad1 + R->ypad2;
	if (o->subtitle && o->subtitle[0])
		R->height += o->fontsize * 2;
	if (svg_open(R, R->height) || write_style(R) || write_texts(R) ||
	    outf(R, "<g id=\"frames\" data-inverted=\"%d\" data-fontsize=\"%.15g\" data-nametype=\"",
		 o->inverted, o->fontsize) ||
	    xml_str(R, o->nametype) || outf(R, "\">\n"))
		return R->failed = true, -1;
	return 0;
}

int tachi_flamegraph_tail(struct render *R)
{
	if (outf(R, "</g>\n</svg>\n"))
		return R->failed = true, -1;
	return 0;
}

/* No samples: an image that says so, as flamegraph.pl draws one. */
int tachi_flamegraph_empty(struct render *R)
{
	const struct fopts *o = &R->st->o;
	tachi_warn(&R->w->warn, TACH_POS_NONE, 0, "no stack counts found: the graph is empty");
	if (svg_open(R, o->fontsize * 5) ||
	    outf(R, "<text x=\"%.2f\" y=\"%.15g\" text-anchor=\"middle\" font-size=\"%.15g\">"
		    "ERROR: No stack counts found</text>\n</svg>\n",
		 (double)(o->width / 2), o->fontsize * 2, o->fontsize))
		return tachi_writer_io(R->w);
	return TACH_OK;
}
