/* The pprof writer's output (see pprof/write.c for the format; fields are encoded by
 * base/protobuf.h): the staging buffer and its gzip stream (or the bare message straight
 * to the output), top-level fields. */
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "base/io.h"
#include "base/gzip.h"
#include "core/handles.h"
#include "formats/pprof/write.h"

/* Compresses the staged bytes into the output; finish ends the gzip stream. */
int tachi_pw_deflate_stage(struct tach_writer *w, bool finish)
{
	struct pprof_wstate *st = w->state;
	int e = tachi_gz_write(st->gz, st->stage.p, st->stage.len);
	if (!e && finish)
		e = tachi_gz_finish(st->gz);
	if (e)
		return tachi_gz_failed(w, e);
	st->stage.len = 0;
	return TACH_OK;
}

/* Sends bytes to the output, through deflate unless writing a raw proto. */
int tachi_pw_emit(struct tach_writer *w, const void *p, size_t n)
{
	struct pprof_wstate *st = w->state;
	if (st->raw) {
		if (n && tachi_out_write(&w->out, p, n))
			return tachi_writer_io(w);
		return TACH_OK;
	}
	const uint8_t *q = p;
	while (n) {
		if (!st->stage.cap && !TACHI_RESERVE(st->stage.p, st->stage.cap, STAGE_SIZE))
			return WFAIL(w, TACH_E_NOMEM, "out of memory");
		size_t k = st->stage.cap - st->stage.len;
		if (k > n)
			k = n;
		memcpy(st->stage.p + st->stage.len, q, k);
		st->stage.len += k;
		q += k;
		n -= k;
		if (st->stage.len == st->stage.cap) {
			int rc = tachi_pw_deflate_stage(w, false);
			if (rc)
				return rc;
		}
	}
	return TACH_OK;
}

/* Emits a top-level field holding the message built in b. */
int tachi_pw_emit_msg(struct tach_writer *w, uint32_t num, struct tachi_pb_buf *b)
{
	uint8_t hdr[TACHI_PB_HEAD_MAX];
	size_t n = tachi_pb_head(hdr, num, b->len);
	int rc = tachi_pw_emit(w, hdr, n);
	if (!rc)
		rc = tachi_pw_emit(w, b->p, b->len);
	b->len = 0;
	return rc;
}

int tachi_pw_emit_varint(struct tach_writer *w, uint32_t num, uint64_t v)
{
	struct pprof_wstate *st = w->state;
	st->msg.len = 0;
	if (!tachi_pb_put_varint(&st->msg, num, v))
		return WFAIL(w, TACH_E_NOMEM, "out of memory");
	int rc = tachi_pw_emit(w, st->msg.p, st->msg.len);
	st->msg.len = 0;
	return rc;
}

bool tachi_pw_value_type(struct tachi_pb_buf *b, uint32_t type, uint32_t unit)
{
	return tachi_pb_put_varint(b, VALUE_TYPE_TYPE, type) &&
	       tachi_pb_put_varint(b, VALUE_TYPE_UNIT, unit);
}
