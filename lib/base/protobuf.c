/* Protocol buffers' wire format: the cold parts (see protobuf.h). */
#include <stdio.h>
#include <string.h>

#include "base/protobuf.h"

/* The words a reader's message gives: they name the field by number, as the schema's
 * own decoder would, since a bad field has no name until it is known. */
void tachi_pb_what(char *m, size_t size, enum tachi_pb_err e, const struct tachi_pb_field *f)
{
	if (size)
		*m = 0;
	switch (e) {
	case TACHI_PB_OK:
		snprintf(m, size, "no fault");
		break;
	case TACHI_PB_E_KEY:
		snprintf(m, size, "bad varint in a field key");
		break;
	case TACHI_PB_E_NUMBER:
		snprintf(m, size, "field number %llu is not valid", (unsigned long long)f->v);
		break;
	case TACHI_PB_E_VARINT:
		snprintf(m, size, "bad varint in field %u", f->num);
		break;
	case TACHI_PB_E_FIXED:
		snprintf(m, size, "field %u: not enough data", f->num);
		break;
	case TACHI_PB_E_LENGTH:
		snprintf(m, size, "bad varint in the length of field %u", f->num);
		break;
	case TACHI_PB_E_PAST:
		snprintf(m, size, "field %u: length %llu runs past its message", f->num,
			 (unsigned long long)f->v);
		break;
	case TACHI_PB_E_WIRE_TYPE:
		snprintf(m, size, "field %u: unknown wire type %u", f->num, f->wt);
		break;
	case TACHI_PB_E_PACKED:
		snprintf(m, size, "bad varint in packed field %u", f->num);
		break;
	}
}

bool tachi_pb_put_bytes(struct tachi_pb_buf *b, uint32_t num, const void *p, size_t n)
{
	if (!tachi_pb_put_head(b, num, n) || !tachi_pb_reserve(b, n))
		return false;
	if (n)
		memcpy(b->p + b->len, p, n);
	b->len += n;
	return true;
}
