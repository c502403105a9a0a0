/* Reader and writer handles: the lifecycle and options every format shares. The format
 * modules only see their ops being called in order on a handle that has not failed. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "core/handles.h"
#include "symbolize/symbolize.h"
#include "core/values.h"
#include "base/base.h"
#include "base/io.h"
#include "base/gzip.h"
#include "model/dict.h"
#include "model/stacktab.h"
#include "model/ahead.h"
#include "core/format.h"

#define DEFAULT_MAX_DEPTH 4096u
/* Aggregating writers pay per record, so the library sets no limit; programs whose
 * output stores every sample set one. */
#define DEFAULT_MAX_SAMPLES UINT64_MAX
/* What a whole-input reader (pprof, speedscope, gperftools, Sampler, TACH from a pipe) may
 * hold, before or after gzip: far above real profiles (a long py-spy speedscope file is tens
 * of MB), low enough that a small hostile file (a gzip bomb, an endless pipe) costs at most
 * about this much memory. */
#define DEFAULT_MAX_INPUT (512ull << 20)
#define DEFAULT_MAX_LINE (64u << 20)

/* ---- readers ---- */

TACH_API struct tach_reader *tach_reader_new(const char *format)
{
	const struct tachi_format *f = tachi_format_find(format);
	if (!f || !f->reader)
		return NULL;
	struct tach_reader *r = calloc(1, sizeof(*r));
	if (!r)
		return NULL;
	r->fmt = f;
	r->in.fd = -1;
	r->in.max_line = DEFAULT_MAX_LINE;
	r->lim.max_depth = DEFAULT_MAX_DEPTH;
	r->lim.max_samples = DEFAULT_MAX_SAMPLES;
	r->lim.max_input = DEFAULT_MAX_INPUT;
	tachi_dict_init(&r->dict, true);
	struct tach_meta m = TACH_META_INIT;
	r->meta = m;
	r->meta.source_format = f->name;
	struct tach_file_info fi = TACH_FILE_INFO_INIT;
	r->file = fi;
	r->file.layout = 0;
	if (f->reader->state_size) {
		r->state = calloc(1, f->reader->state_size);
		if (!r->state) {
			free(r);
			return NULL;
		}
	}
	return r;
}

TACH_API void tach_reader_free(struct tach_reader *r)
{
	if (!r)
		return;
	if (r->fmt->reader->free)
		r->fmt->reader->free(r);
	free(r->state);
	tachi_in_free(&r->in);
	tachi_dict_clear(&r->dict);
	tachi_symcache_unref(r->symcache);
	free(r);
}

/* The public handle is the symbolizers' cache itself. */
TACH_API struct tach_symbols *tach_symbols_new(void)
{
	return (struct tach_symbols *)tachi_symcache_new();
}

TACH_API void tach_symbols_free(struct tach_symbols *s)
{
	tachi_symcache_unref((struct tachi_symcache *)s);
}

TACH_API int tach_reader_share_symbols(struct tach_reader *r, struct tach_symbols *s)
{
	if (r->opened)
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0,
			     "symbols are shared before the reader is opened");
	tachi_symcache_ref((struct tachi_symcache *)s);
	tachi_symcache_unref(r->symcache);
	r->symcache = (struct tachi_symcache *)s;
	return TACH_OK;
}

TACH_API void tach_reader_set_warn(struct tach_reader *r, tach_warn_fn fn, void *ctx)
{
	r->warn.fn = fn;
	r->warn.ctx = ctx;
}

TACH_API int tach_reader_set_option(struct tach_reader *r, const char *key, const char *value)
{
	if (r->opened)
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "option %s set after open", key);
	uint64_t v;
	if (!strcmp(key, "max-depth")) {
		if (!tachi_parse_u64(value, UINT32_MAX, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad max-depth: %s", value);
		r->lim.max_depth = (uint32_t)v;
		return TACH_OK;
	}
	if (!strcmp(key, "max-samples")) {
		if (!tachi_parse_u64(value, UINT64_MAX, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad max-samples: %s", value);
		r->lim.max_samples = v;
		return TACH_OK;
	}
	if (!strcmp(key, "max-input")) {
		if (!tachi_parse_size(value, &v) || v == 0)
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad max-input: %s", value);
		r->lim.max_input = v;
		return TACH_OK;
	}
	if (!strcmp(key, "strict")) {
		if (!tachi_parse_bool(value, &r->lim.strict))
			return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "bad strict: %s", value);
		return TACH_OK;
	}
	if (r->fmt->reader->option)
		return r->fmt->reader->option(r, key, value);
	return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "%s reader has no option %s",
		     r->fmt->name, key);
}

int tachi_in_for_reader(struct tach_reader *r, const struct tachi_reader_ops *ops)
{
	if (!ops->whole_input)
		return TACH_OK;
	if (ops->stream_pipe) {
		tachi_in_map_file(&r->in);
		return TACH_OK;
	}
	return tachi_in_load_whole(r);
}

static int reader_open(struct tach_reader *r)
{
	if (r->err.code)
		return r->err.code;
	r->opened = true;
	/* Every format is read through gzip and zstd: the format's bytes are what's inside. */
	const char *packed;
	int urc = tachi_in_unpack(&r->in, r->lim.max_input, &r->err, &packed);
	if (urc)
		return urc;
	int rc = tachi_in_for_reader(r, r->fmt->reader);
	return rc ? rc : r->fmt->reader->open(r);
}

TACH_API int tach_reader_open_fd(struct tach_reader *r, int fd)
{
	if (r->opened)
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "reader already open");
	r->in.fd = fd;
	return reader_open(r);
}

TACH_API int tach_reader_open_mem(struct tach_reader *r, const void *data, size_t len)
{
	if (r->opened)
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "reader already open");
	r->in.data = data;
	r->in.size = len;
	r->in.whole = true;
	return reader_open(r);
}

int tachi_in_no_sample(struct tach_reader *r)
{
	return RFAIL(r, TACH_E_LIMIT, TACH_POS_OFFSET, tachi_in_offset(&r->in),
		     "no sample in the first %llu bytes (see max-input): "
		     "not %s input", (unsigned long long)r->lim.max_input, r->fmt->name);
}

/* The end of an input that gave no sample: no input at all is an error for every format
 * (a profile file is never empty; TACH's empty profile has its header), but for one named
 * whose producer writes nothing when it has no samples (empty_ok). */
static int end_without_samples(struct tach_reader *r)
{
	uint64_t bytes = r->in.whole ? r->in.size : r->in.base + r->in.end;
	if (!bytes && !(r->fmt->reader->empty_ok && !r->detected))
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, 0, "empty input: no profile in it");
	return TACH_EOF;
}

TACH_API int tach_reader_next(struct tach_reader *r, const struct tach_sample **s)
{
	if (TACHI_UNLIKELY(r->err.code))
		return r->err.code;
	if (TACHI_UNLIKELY(!r->opened))
		return RFAIL(r, TACH_E_USAGE, TACH_POS_NONE, 0, "reader not open");
	r->ext = NULL;
	int rc = r->fmt->reader->next(r, s);
	if (TACHI_LIKELY(!rc))
		r->any_sample = true;
	else if (rc == TACH_EOF && !r->any_sample)
		return end_without_samples(r);
	return rc;
}

TACH_API const struct tach_sample_ext *tach_reader_sample_ext(const struct tach_reader *r)
{
	return r->ext;
}

TACH_API const struct tach_dict *tach_reader_dict(const struct tach_reader *r)
{
	return &r->dict;
}

TACH_API int tach_reader_dict_complete(const struct tach_reader *r)
{
	return r->opened && !r->err.code && r->fmt->reader->dict_at_open && !r->dict_grows;
}

TACH_API const struct tach_meta *tach_reader_meta(const struct tach_reader *r)
{
	return &r->meta;
}

TACH_API const struct tach_stats *tach_reader_stats(const struct tach_reader *r)
{
	return &r->stats;
}

TACH_API const char *tach_reader_error(const struct tach_reader *r, int *pos_kind, uint64_t *pos)
{
	if (pos_kind)
		*pos_kind = r->err.code ? r->err.pos_kind : TACH_POS_NONE;
	if (pos)
		*pos = r->err.pos;
	return r->err.code ? r->err.msg : NULL;
}

/* ---- writers ---- */

/* How often a writer is asked whether to queue its samples (ahead.c): tables grow by many
 * samples at a time. */
#define AHEAD_EVERY 4096

TACH_API struct tach_writer *tach_writer_new(const char *format)
{
	const struct tachi_format *f = tachi_format_find(format);
	if (!f || !f->writer)
		return NULL;
	struct tach_writer *w = calloc(1, sizeof(*w));
	if (!w)
		return NULL;
	w->fmt = f;
	w->out.fd = -1;
	w->ahead_tick = AHEAD_EVERY;
	struct tach_meta m = TACH_META_INIT;
	w->meta = m;
	if (f->writer->state_size) {
		w->state = calloc(1, f->writer->state_size);
		if (!w->state) {
			free(w);
			return NULL;
		}
	}
	return w;
}

TACH_API void tach_writer_free(struct tach_writer *w)
{
	if (!w)
		return;
	if (w->fmt->writer->free)
		w->fmt->writer->free(w);
	free(w->state);
	free(w->program);
	free(w->values_own);
	tachi_ahead_free(w->ahead);
	tachi_out_free(&w->out);
	free(w);
}

TACH_API void tach_writer_set_warn(struct tach_writer *w, tach_warn_fn fn, void *ctx)
{
	w->warn.fn = fn;
	w->warn.ctx = ctx;
}

TACH_API int tach_writer_set_option(struct tach_writer *w, const char *key, const char *value)
{
	if (w->opened)
		return WFAIL(w, TACH_E_USAGE, "option %s set after open", key);
	if (w->fmt->writer->option)
		return w->fmt->writer->option(w, key, value);
	return WFAIL(w, TACH_E_USAGE, "%s writer has no option %s", w->fmt->name, key);
}

TACH_API int tach_writer_open_fd(struct tach_writer *w, int fd)
{
	if (w->err.code)
		return w->err.code;
	if (w->opened)
		return WFAIL(w, TACH_E_USAGE, "writer already open");
	if (tachi_out_init(&w->out, fd))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	w->opened = true;
	return TACH_OK;
}

/* A meta without sample_time but with an interval (a caller or reader from before time_ns)
 * means what it always meant: a weight counts samples of the interval each. The writer's
 * meta then says sample_time, and each put sample's time_ns is weight × interval, so every
 * writer has one rule, time_ns. Weights that are not samples (weight_unit: bytes) stand for
 * no time; with no interval either, the samples carry no time at all. */
static void derive_time(struct tach_writer *w)
{
	struct tach_meta *m = &w->meta;
	uint64_t per;
	w->time_per_weight = 0;
	if (m->sample_time || !m->interval_us || m->weight_unit ||
	    __builtin_mul_overflow(m->interval_us, 1000, &per))
		return;
	m->sample_time = 1;
	w->time_per_weight = per;
}

/* s with its time_ns as weight × interval (derive_time), in *c. */
static const struct tach_sample *timed(const struct tach_writer *w, const struct tach_sample *s,
				       struct tach_sample *c)
{
	*c = *s;
	if (__builtin_mul_overflow(s->weight, w->time_per_weight, &c->time_ns))
		c->time_ns = UINT64_MAX;
	return c;
}

/* meta.file, borrowed for the call: the writer's own copy (a caller's smaller struct
 * leaves the rest 0), or NULL. */
static void keep_file_info(struct tach_writer *w, const struct tach_meta *m, size_t n)
{
	const struct tach_file_info *f = NULL;
	if (n >= offsetof(struct tach_meta, file) + sizeof(m->file))
		f = m->file;
	w->meta.file = NULL;
	if (!f)
		return;
	memset(&w->file, 0, sizeof(w->file));
	memcpy(&w->file, f, f->size < sizeof(w->file) ? f->size : sizeof(w->file));
	w->file.size = sizeof(w->file);
	w->meta.file = &w->file;
}

TACH_API int tach_writer_set_meta(struct tach_writer *w, const struct tach_meta *m)
{
	if (w->err.code)
		return w->err.code;
	if (!w->opened || w->has_meta)
		return WFAIL(w, TACH_E_USAGE, "set_meta must follow open_fd, once");
	size_t n = m->size < sizeof(w->meta) ? m->size : sizeof(w->meta);
	memcpy(&w->meta, m, n);
	w->meta.size = sizeof(w->meta);
	w->meta.record_kinds = NULL; /* the reader's, valid as its meta is */
	/* borrowed for the call only: keep a copy */
	if (n >= offsetof(struct tach_meta, program) + sizeof(m->program) && m->program) {
		if (!(w->program = strdup(m->program)))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		w->meta.program = w->program;
	} else {
		w->meta.program = NULL;
	}
	int rc = tachi_writer_keep_values(w, m, n);
	if (rc)
		return rc;
	keep_file_info(w, m, n);
	derive_time(w);
	w->has_meta = true;
	return w->fmt->writer->begin ? w->fmt->writer->begin(w) : TACH_OK;
}

/* The lookahead queue's hooks (model/ahead.h): a queued sample's put, with its stage-0 hash
 * where the writer's put reads it, and the writer's own fetch. */
static int ahead_put(void *ctx, const struct tach_dict *d, const struct tach_sample *s,
		     uint64_t hash)
{
	struct tach_writer *w = ctx;
	w->ahead_hash = hash;
	int rc = w->fmt->writer->put(w, d, s);
	w->ahead_hash = 0;
	return rc;
}

static void ahead_fetch(void *ctx, struct tachi_ahead_item *it, unsigned stage)
{
	struct tach_writer *w = ctx;
	w->fmt->writer->fetch(w, it, stage);
}

/* Every AHEAD_EVERY-th put, and every put once samples are queued (the countdown then stays
 * at 1): whether the writer wants them queued, and the queue. Out of line, so that the
 * common put stays a countdown and a jump to the writer's. */
static __attribute__((noinline)) int put_ahead(struct tach_writer *w, const struct tach_dict *d,
					       const struct tach_sample *s)
{
	const struct tachi_writer_ops *ops = w->fmt->writer;
	if (!w->ahead) {
		w->ahead_tick = AHEAD_EVERY;
		if (!ops->trie_at)
			return ops->put(w, d, s);
		int rc = tachi_ahead_start(&w->ahead, tachi_writer_trie(w), ahead_put,
					   ops->fetch ? ahead_fetch : NULL, w, &w->err);
		if (rc || !w->ahead)
			return rc ? rc : ops->put(w, d, s);
	}
	w->ahead_tick = 1;
	return tachi_ahead_put(w->ahead, d, s);
}

/* The writer's dict: the first put's, and every later put's the same. */
static int same_dict(struct tach_writer *w, const struct tach_dict *d)
{
	if (w->dict)
		return WFAIL(w, TACH_E_USAGE, "samples from more than one dict");
	w->dict = d;
	return TACH_OK;
}

TACH_API int tach_writer_put(struct tach_writer *w, const struct tach_dict *d,
			     const struct tach_sample *s)
{
	if (TACHI_UNLIKELY(w->err.code))
		return w->err.code;
	if (TACHI_UNLIKELY(!w->has_meta || w->closed))
		return WFAIL(w, TACH_E_USAGE, "put before set_meta or after close");
	if (TACHI_UNLIKELY(w->dict != d) && same_dict(w, d))
		return w->err.code;
	/* weight 0: a sample of values only (a pprof reader's zero-weight option), for
	 * writers that keep values (tach_writer_put_ext); nothing to the others */
	if (TACHI_UNLIKELY(!s->weight))
		return TACH_OK;
	struct tach_sample c;
	if (w->time_per_weight)
		s = timed(w, s, &c);
	if (TACHI_UNLIKELY(!--w->ahead_tick))
		return put_ahead(w, d, s);
	return w->fmt->writer->put(w, d, s);
}

/* Labels the sample's own fields hold as well (what tach2pprof writes and the pprof reader
 * reads back): nothing is lost when a writer drops these. */
static bool field_label(const struct tach_dict *d, uint32_t key)
{
	static const char *const keys[] = { "thread id", "interpreter id", "thread state" };
	if (key >= d->str_count)
		return false;
	size_t n;
	const char *s = tachi_str(d, key, &n);
	for (size_t i = 0; i < sizeof(keys) / sizeof(keys[0]); i++)
		if (strlen(keys[i]) == n && !memcmp(s, keys[i], n))
			return true;
	return false;
}

static void warn_dropped_labels(struct tach_writer *w, const struct tach_dict *d,
				const struct tach_sample_ext *ext)
{
	for (uint32_t i = 0; i < ext->label_count; i++) {
		uint32_t key = ext->labels[i].key;
		if (field_label(d, key))
			continue;
		size_t n = 0;
		const char *s = key < d->str_count ? tachi_str(d, key, &n) : "";
		w->warned_labels = true;
		tachi_warn(&w->warn, TACH_POS_NONE, 0,
			   "the %s output has no place for sample labels: they are dropped (such as "
			   "\"%.*s\")", w->fmt->name, (int)(n > 40 ? 40 : n), s);
		return;
	}
}

TACH_API int tach_writer_put_ext(struct tach_writer *w, const struct tach_dict *d,
				 const struct tach_sample *s, const struct tach_sample_ext *ext)
{
	if (!ext || ext->size < offsetof(struct tach_sample_ext, labels) + sizeof(ext->labels) ||
	    (!ext->value_count && !ext->label_count))
		return tach_writer_put(w, d, s);
	const struct tachi_writer_ops *ops = w->fmt->writer;
	if (!ops->keeps_labels && ext->label_count && !w->warned_labels && !w->err.code)
		warn_dropped_labels(w, d, ext);
	if (!ops->put_ext)
		return tach_writer_put(w, d, s);
	if (TACHI_UNLIKELY(w->err.code))
		return w->err.code;
	if (TACHI_UNLIKELY(!w->has_meta || w->closed))
		return WFAIL(w, TACH_E_USAGE, "put before set_meta or after close");
	if (TACHI_UNLIKELY(w->dict != d) && same_dict(w, d))
		return w->err.code;
	/* The lookahead queue copies samples, not their extras: samples with extras go
	 * straight through, after the queue. */
	int rc = tachi_ahead_drain(w->ahead);
	struct tach_sample c;
	if (w->time_per_weight)
		s = timed(w, s, &c);
	return rc ? rc : ops->put_ext(w, d, s, ext);
}

static int writer_io_error(struct tach_writer *w)
{
	return WFAIL(w, TACH_E_IO, "write error: %s", strerror(w->out.err ? w->out.err : EIO));
}

TACH_API int tach_writer_close(struct tach_writer *w)
{
	if (w->err.code)
		return w->err.code;
	if (!w->has_meta || w->closed)
		return WFAIL(w, TACH_E_USAGE, "close before set_meta or twice");
	w->closed = true;
	int rc = tachi_ahead_drain(w->ahead);
	if (rc)
		return rc;
	rc = w->fmt->writer->close(w);
	if (rc)
		return rc;
	if (tachi_out_flush(&w->out))
		return writer_io_error(w);
	return TACH_OK;
}

TACH_API const char *tach_writer_error(const struct tach_writer *w)
{
	if (w->err.code)
		return w->err.msg;
	return NULL;
}

/* Format modules report output failures through this. */
int tachi_writer_io(struct tach_writer *w)
{
	return writer_io_error(w);
}

/* A writer's gzip options, and its failure for a gzip code (base/gzip.h knows no writers). */
int tachi_gzip_level(struct tach_writer *w, const char *value, int *level)
{
	uint64_t v;
	if (!tachi_parse_u64(value, 9, &v) || v < 1)
		return WFAIL(w, TACH_E_USAGE, "gzip level must be 1-9, not %s", value);
	*level = (int)v;
	return TACH_OK;
}

int tachi_gzip_threads(struct tach_writer *w, const char *value, unsigned *n)
{
	uint64_t v;
	if (!tachi_parse_u64(value, TACHI_GZ_MAX_WORKERS, &v))
		return WFAIL(w, TACH_E_USAGE, "gzip threads must be 0-%d, not %s",
			     TACHI_GZ_MAX_WORKERS, value);
	*n = (unsigned)v;
	return TACH_OK;
}

int tachi_gz_failed(struct tach_writer *w, int code)
{
	if (code == TACH_E_IO)
		return tachi_writer_io(w);
	return WFAIL(w, TACH_E_NOMEM, "gzip compression failed: out of memory");
}

int tachi_soft_fail(struct tach_reader *r, uint64_t off, const char *fmt, ...)
{
	char msg[400];
	va_list ap;
	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	if (r->lim.strict)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off, "%s", msg);
	tachi_warn(&r->warn, TACH_POS_OFFSET, off, "%s", msg);
	return TACH_OK;
}
