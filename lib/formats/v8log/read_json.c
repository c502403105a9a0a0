/* The preprocessed form of V8's tick log (read.c has the rules both forms share): the JSON
 * object `node --prof-process --preprocess` prints, keys "code", "functions", "ticks" and
 * "scripts" (speedscope knows the format by the first three; "functions" and "scripts",
 * the code entries' functions and the scripts' sources, name nothing it shows).
 *
 * "code": each entry an object with "name", "type" ("CODE", "CPP", "JS", "SHARED_LIB")
 * and, for CODE, "kind"; other keys (timestamp, func, tm, source) are passed over. An entry
 * that is no object, or has no type (absent, null or ""), is "(unknown type)", as in
 * speedscope. "ticks": each {"tm": µs, "vm": state, "s": [index, offset, ...]}.
 *
 * Strict JSON (json.c), checked at open. Refused with the byte offset: no "code",
 * "functions" or "ticks"; a type that is no string, or a typed entry whose name is none
 * (speedscope's importer fails on it); a tick that is no object, without an integer tm
 * from 0 to 2^63/1000 µs or an array s of integers; a vm that is no integer; a stack
 * deeper than max-depth; more ticks than max-samples. */
#include <string.h>

#include "base/base.h"
#include "base/json.h"
#include "core/handles.h"
#include "formats/json_read.h"
#include "formats/v8log/read.h"

enum { K_CODE, K_FUNCTIONS, K_TICKS, NKEYS };

static uint8_t type_of(const uint8_t *d, const struct tachi_jtok *t)
{
	static const char *const names[] = { "CODE", "CPP", "JS", "SHARED_LIB" };
	static const uint8_t types[] = { V8L_CODE, V8L_CPP, V8L_JS, V8L_LIB };
	if (!t->len)
		return V8L_NOTYPE;
	for (int i = 0; i < 4; i++)
		if (tachi_json_str_eq(d, t, names[i]))
			return types[i];
	return V8L_OTHER;
}

/* One code entry's keys, j just inside its object at off. */
static int code_entry(struct tach_reader *r, struct tachi_json *j, uint64_t off)
{
	struct v8log_state *st = r->state;
	const uint8_t *d = r->in.data;
	struct tachi_jtok k, name = { 0 }, type = { 0 }, kind = { 0 };
	bool more, has_name = false;
	int rc;
	while (!(rc = tachi_json_key(j, &k, &more)) && more) {
		struct tachi_jtok *into = tachi_json_str_eq(d, &k, "name") ? &name
					: tachi_json_str_eq(d, &k, "type") ? &type
					: tachi_json_str_eq(d, &k, "kind") ? &kind : NULL;
		if (!into) {
			if ((rc = tachi_json_skip(j)))
				return rc;
			continue;
		}
		if ((rc = tachi_json_value(j, into)))
			return rc;
		if (into == &name)
			has_name = true;
		if (into->type == TJ_OBJECT || into->type == TJ_ARRAY)
			return tachi_jr_bad(r, into->off, "a code entry's name, type and kind are "
							  "strings");
	}
	if (rc)
		return rc;
	uint8_t ty = type.type == TJ_STRING ? type_of(d, &type) : V8L_NOTYPE;
	if (type.type && type.type != TJ_STRING && type.type != TJ_NULL)
		return tachi_jr_bad(r, type.off, "a code entry's type must be a string");
	if (ty != V8L_NOTYPE && (!has_name || name.type != TJ_STRING))
		return tachi_jr_bad(r, has_name ? name.off : off, "a code entry without a "
								   "string \"name\"");
	size_t n = 0;
	uint8_t kd = V8L_K_NONE;
	if (ty == V8L_CODE && kind.type == TJ_STRING) {
		if ((rc = tachi_jr_string(r, &kind, &st->buf, &st->buf_cap, &n)))
			return rc;
		kd = tachi_v8log_kind_of(st->buf, n);
	}
	n = 0;
	if (ty != V8L_NOTYPE && (rc = tachi_jr_string(r, &name, &st->buf, &st->buf_cap, &n)))
		return rc;
	uint32_t idx;
	if ((rc = tachi_v8log_add_code(r, ty, kd, st->buf ? st->buf : "", n, &idx)))
		return rc;
	if (ty != V8L_OTHER)
		return TACH_OK;
	struct v8log_code *c = &st->codes[idx];
	if ((rc = tachi_jr_string(r, &type, &st->buf, &st->buf_cap, &n)))
		return rc;
	c->type_len = (uint32_t)n;
	return tachi_v8log_add_text(r, st->buf, n, &c->type_text);
}

static int read_codes(struct tach_reader *r, uint64_t off)
{
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_jr_begin_array(r, &j, off, "\"code\"");
	while (!rc && !(rc = tachi_json_elem(&j, &more)) && more) {
		uint32_t idx;
		if ((rc = tachi_json_value(&j, &t)))
			break;
		if (t.type == TJ_OBJECT) {
			rc = code_entry(r, &j, t.off);
			continue;
		}
		if (t.type == TJ_ARRAY && (rc = tachi_json_skip(&j)))
			break;
		rc = tachi_v8log_add_code(r, V8L_NOTYPE, V8L_K_NONE, "", 0, &idx);
	}
	return rc;
}

/* A tick's "s" (j just after its key's colon): its elements, then the ids that speedscope
 * takes from them, outermost first; *n their count. */
static int tick_stack(struct tach_reader *r, struct tachi_json *j, uint32_t *n)
{
	struct v8log_state *st = r->state;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_json_value(j, &t);
	if (rc)
		return rc;
	if (t.type != TJ_ARRAY)
		return tachi_jr_bad(r, t.off, "a tick's \"s\" must be an array");
	size_t from = st->nids;
	while (!(rc = tachi_json_elem(j, &more)) && more) {
		int64_t v;
		if ((rc = tachi_json_value(j, &t)))
			return rc;
		if (!tachi_json_tok_int(r->in.data, &t, INT64_MIN, INT64_MAX, &v))
			return tachi_jr_bad(r, t.off, "a tick's stack holds integers");
		if ((rc = tachi_v8log_add_id(r, (uint64_t)v)))
			return rc;
	}
	if (rc)
		return rc;
	/* speedscope's walk, from the second-to-last element down by twos: the elements at
	 * the same parity as len - 2, kept in place from the front (ascending, so that a kept
	 * id never passes one still to be read), then reversed to go outermost first */
	size_t len = st->nids - from, k = from;
	for (size_t i = len % 2; i + 2 <= len; i += 2) {
		int64_t v = (int64_t)st->ids[from + i];
		if (v != -1)
			st->ids[k++] = v < 0 ? st->ncodes : (uint64_t)v;
	}
	for (size_t a = from, b = k; a + 1 < b; a++, b--) {
		uint64_t x = st->ids[a];
		st->ids[a] = st->ids[b - 1];
		st->ids[b - 1] = x;
	}
	st->nids = k;
	if (k - from > UINT32_MAX)
		return tachi_jr_bad(r, t.off, "a stack of more than 2^32 - 1 frames");
	*n = (uint32_t)(k - from);
	return TACH_OK;
}

/* A tick's own value at key k (j after its colon): tm, vm or s. */
static int tick_key(struct tach_reader *r, struct tachi_json *j, const struct tachi_jtok *k,
		    int64_t *tm, int64_t *vm, uint32_t *n, bool *has_s)
{
	const uint8_t *d = r->in.data;
	struct tachi_jtok t;
	int rc;
	if (tachi_json_str_eq(d, k, "s")) {
		*has_s = true;
		return tick_stack(r, j, n);
	}
	bool is_tm = tachi_json_str_eq(d, k, "tm");
	if (!is_tm && !tachi_json_str_eq(d, k, "vm"))
		return tachi_json_skip(j);
	if ((rc = tachi_json_value(j, &t)))
		return rc;
	if (is_tm && !tachi_json_tok_int(d, &t, 0, INT64_MAX / 1000, tm))
		return tachi_jr_bad(r, t.off, "a tick's tm must be an integer 0..2^63/1000 (us)");
	if (!is_tm && !tachi_json_tok_int(d, &t, 0, INT32_MAX, vm))
		return tachi_jr_bad(r, t.off, "a tick's vm must be an integer 0..2^31-1");
	return TACH_OK;
}

static int read_tick(struct tach_reader *r, struct tachi_json *j, const struct tachi_jtok *o)
{
	struct v8log_state *st = r->state;
	struct tachi_jtok k;
	bool more, has_s = false;
	int64_t tm = -1, vm = -1;
	uint32_t n = 0;
	size_t from = st->nids;
	int rc;
	if (o->type != TJ_OBJECT)
		return tachi_jr_bad(r, o->off, "a tick must be an object");
	while (!(rc = tachi_json_key(j, &k, &more)) && more) {
		/* a repeated "s": the last wins, as in JavaScript */
		if (tachi_json_str_eq(r->in.data, &k, "s"))
			st->nids = from;
		if ((rc = tick_key(r, j, &k, &tm, &vm, &n, &has_s)))
			return rc;
	}
	if (rc)
		return rc;
	if (tm < 0)
		return tachi_jr_bad(r, o->off, "a tick without a \"tm\"");
	if (!has_s)
		return tachi_jr_bad(r, o->off, "a tick without an \"s\"");
	return tachi_v8log_add_tick(r, tm, (int32_t)vm, n, o->off);
}

static int read_ticks(struct tach_reader *r, uint64_t off)
{
	struct tachi_json j;
	struct tachi_jtok t;
	bool more;
	int rc = tachi_jr_begin_array(r, &j, off, "\"ticks\"");
	while (!rc && !(rc = tachi_json_elem(&j, &more)) && more)
		if (!(rc = tachi_json_value(&j, &t)))
			rc = read_tick(r, &j, &t);
	return rc;
}

int tachi_v8log_read_json(struct tach_reader *r)
{
	static const char *const want[] = { "code", "functions", "ticks" };
	static const char *const names[] = { "\"code\"", "\"functions\"", "\"ticks\"" };
	struct tachi_json j;
	struct tachi_jtok t;
	uint64_t o[NKEYS];
	r->json_lone_ok = true;
	int rc = tachi_jr_top(r, &j, &t, "not a V8 tick log: expected a JSON object");
	if (rc || (rc = tachi_json_keys(&j, want, o, NKEYS)) || (rc = tachi_json_end(&j)))
		return rc;
	for (int i = 0; i < NKEYS; i++)
		if (o[i] == UINT64_MAX)
			return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, t.off,
				     "not a preprocessed V8 tick log: no %s", names[i]);
	if ((rc = read_codes(r, o[K_CODE])))
		return rc;
	return read_ticks(r, o[K_TICKS]);
}
