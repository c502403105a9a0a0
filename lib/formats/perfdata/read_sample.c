/* One record's fields by its attribute's sample_type (uapi perf_event.h, the layout of
 * PERF_RECORD_SAMPLE): each present field in bit order, every length checked against the
 * record's size. Which attribute a record is of: the only one, or by its event id, which
 * IDENTIFIER puts first in a sample and last in other records, and ID puts after IP, TID,
 * TIME and ADDR in a sample or among the sample_id trailer's fields (perf requires the
 * attributes of one file to agree on where it is). */
#include <string.h>

#include "base/base.h"
#include "base/bytes.h"
#include "core/handles.h"
#include "formats/perfdata/perfdata.h"

static unsigned bits(uint64_t x)
{
	return (unsigned)__builtin_popcountll(x);
}

/* The sample_id trailer's size for sample type t. */
static uint32_t trailer_size(uint64_t t)
{
	return 8 * bits(t & (PD_S_TID | PD_S_TIME | PD_S_ID | PD_S_STREAM_ID | PD_S_CPU |
			     PD_S_IDENTIFIER));
}

int pd_attr_of(const struct pd *st, const uint8_t *p, uint32_t size, bool sample)
{
	if (st->nattrs <= 1)
		return st->nattrs ? 0 : -1;
	const struct pd_attr *a = &st->attrs[0];
	uint64_t t = a->sample_type;
	uint64_t at;
	if (sample) {
		if (t & PD_S_IDENTIFIER)
			at = 8;
		else if (t & PD_S_ID)
			at = 8 + 8 * bits(t & (PD_S_IP | PD_S_TID | PD_S_TIME | PD_S_ADDR));
		else
			return 0;
	} else {
		if (!a->sample_id_all)
			return 0;
		if (t & PD_S_IDENTIFIER)
			at = size - 8u;
		else if (t & PD_S_ID)
			at = size - 8u - 8 * bits(t & (PD_S_STREAM_ID | PD_S_CPU));
		else
			return 0;
		if (size < 8 + trailer_size(t))
			return -1;
	}
	if (at + 8 > size)
		return -1;
	return pd_attr_by_id(st, tachi_rd64(p + at, st->swap));
}

bool pd_trailer_time(const struct pd *st, const uint8_t *p, uint32_t size, uint64_t *time)
{
	int ai = pd_attr_of(st, p, size, false);
	if (ai < 0)
		return false;
	const struct pd_attr *a = &st->attrs[ai];
	uint32_t tn = trailer_size(a->sample_type);
	if (!a->sample_id_all || !(a->sample_type & PD_S_TIME) || size < 8 + tn)
		return false;
	*time = tachi_rd64(p + size - tn + (a->sample_type & PD_S_TID ? 8 : 0), st->swap);
	return true;
}

struct cur {
	const uint8_t *p;
	uint32_t at, size;
	bool swap, bad;
};

static uint64_t u64(struct cur *c)
{
	if (c->bad || c->size - c->at < 8) {
		c->bad = true;
		return 0;
	}
	uint64_t v = tachi_rd64(c->p + c->at, c->swap);
	c->at += 8;
	return v;
}

/* n bytes (n checked against what is left); NULL past the end. */
static const uint8_t *bytes(struct cur *c, uint64_t n)
{
	if (c->bad || n > c->size - c->at) {
		c->bad = true;
		return NULL;
	}
	const uint8_t *q = c->p + c->at;
	c->at += (uint32_t)n;
	return q;
}

static void read_values(struct cur *c, uint64_t fmt)
{
	/* TOTAL_TIME_ENABLED 1, TOTAL_TIME_RUNNING 2, ID 4, GROUP 8, LOST 16 */
	unsigned per = 1 + (fmt & 4 ? 1 : 0) + (fmt & 16 ? 1 : 0);
	unsigned times = (fmt & 1 ? 1 : 0) + (fmt & 2 ? 1 : 0);
	if (!(fmt & 8)) {
		bytes(c, 8ull * (per + times));
		return;
	}
	uint64_t nr = u64(c);
	bytes(c, 8ull * times);
	if (nr > c->size / 8)
		c->bad = true;
	else
		bytes(c, nr * 8 * per);
}

/* The registers of a REGS_USER or REGS_INTR block: an ABI word, then one u64 per bit of
 * the mask unless the ABI is 0 (none). */
static void read_regs(struct cur *c, uint64_t mask, uint64_t *abi, const uint8_t **regs)
{
	*abi = u64(c);
	*regs = *abi ? bytes(c, 8ull * bits(mask)) : NULL;
}

static void tail_fields(struct cur *c, const struct pd_attr *a, struct pd_sample *s)
{
	uint64_t t = a->sample_type;
	if (t & PD_S_REGS_USER) {
		read_regs(c, a->regs_user, &s->regs_abi, &s->regs);
		s->regs_mask = a->regs_user;
	}
	if (t & PD_S_STACK_USER) {
		uint64_t n = u64(c);
		s->stack = bytes(c, n);
		/* the bytes the kernel could copy follow, when it copied any */
		uint64_t dyn = n ? u64(c) : 0;
		s->stack_size = dyn < n ? dyn : n;
	}
	if (t & (PD_S_WEIGHT | PD_S_WEIGHT_STRUCT))
		s->weight = u64(c);
	if (t & PD_S_DATA_SRC)
		s->data_src = u64(c);
	if (t & PD_S_TRANSACTION)
		s->transaction = u64(c);
	if (t & PD_S_REGS_INTR) {
		uint64_t abi;
		const uint8_t *regs;
		read_regs(c, a->regs_intr, &abi, &regs);
	}
	if (t & PD_S_PHYS_ADDR)
		s->phys_addr = u64(c);
	if (t & PD_S_CGROUP)
		s->cgroup = u64(c);
	if (t & PD_S_DATA_PAGE_SIZE)
		u64(c);
	if (t & PD_S_CODE_PAGE_SIZE)
		u64(c);
	if (t & PD_S_AUX) {
		uint64_t n = u64(c);
		bytes(c, n);
	}
}

const uint8_t *pd_peek_chain(const struct pd *st, const uint8_t *p, uint32_t size,
			     uint64_t *nr)
{
	int ai = pd_attr_of(st, p, size, true);
	if (ai < 0)
		return NULL;
	uint64_t t = st->attrs[ai].sample_type;
	if (!(t & PD_S_CALLCHAIN) || (t & PD_S_READ))
		return NULL;
	uint64_t at = 8 + 8 * bits(t & (PD_S_IDENTIFIER | PD_S_IP | PD_S_TID | PD_S_TIME |
					 PD_S_ADDR | PD_S_ID | PD_S_STREAM_ID | PD_S_CPU |
					 PD_S_PERIOD));
	if (at + 8 > size)
		return NULL;
	uint64_t n = tachi_rd64(p + at, st->swap);
	if (n > (size - at - 8) / 8)
		return NULL;
	*nr = n;
	return p + at + 8;
}

int pd_parse_sample(struct tach_reader *r, const struct pd_attr *a, const uint8_t *p,
		    uint32_t size, uint64_t off, struct pd_sample *s)
{
	const struct pd *st = r->state;
	struct cur c = { p, 8, size, st->swap, false };
	uint64_t t = a->sample_type;
	memset(s, 0, sizeof(*s));
	s->misc = pd_rd16(st, p + 4);
	if (t & PD_S_IDENTIFIER)
		s->id = u64(&c);
	if (t & PD_S_IP)
		s->ip = u64(&c);
	if (t & PD_S_TID) {
		const uint8_t *q = bytes(&c, 8);
		if (q) {
			s->pid = tachi_rd32(q, st->swap);
			s->tid = tachi_rd32(q + 4, st->swap);
		}
	}
	if (t & PD_S_TIME) {
		s->time = u64(&c);
		s->has_time = true;
	}
	if (t & PD_S_ADDR)
		s->addr = u64(&c);
	if (t & PD_S_ID)
		s->id = u64(&c);
	if (t & PD_S_STREAM_ID)
		s->stream_id = u64(&c);
	if (t & PD_S_CPU) {
		const uint8_t *q = bytes(&c, 8);
		s->cpu = q ? tachi_rd32(q, st->swap) : 0;
	}
	if (t & PD_S_PERIOD) {
		s->period = u64(&c);
		s->has_period = true;
	} else if (!a->freq) {
		s->period = a->period;
		s->has_period = a->period != 0;
	}
	if (t & PD_S_READ)
		read_values(&c, a->read_format);
	if (t & PD_S_CALLCHAIN) {
		s->nr = u64(&c);
		s->chain = s->nr <= size / 8 ? bytes(&c, s->nr * 8) : (c.bad = true, NULL);
	}
	if (t & PD_S_RAW) {
		const uint8_t *q = bytes(&c, 4);
		s->raw_size = q ? tachi_rd32(q, st->swap) : 0;
		s->raw = bytes(&c, s->raw_size);
	}
	if (t & PD_S_BRANCH_STACK) {
		uint64_t nr = u64(&c);
		/* HW_INDEX (1 << 17 of branch_sample_type) puts an index before the entries */
		if (a->branch_sample_type & (1u << 17))
			u64(&c);
		if (nr > size / 24)
			c.bad = true;
		else
			bytes(&c, nr * 24);
	}
	tail_fields(&c, a, s);
	if (c.bad)
		return RFAIL(r, TACH_E_FORMAT, TACH_POS_OFFSET, off,
			     "a sample record of %u bytes, too short for the fields its event's "
			     "sample type 0x%llx names", size, (unsigned long long)t);
	return TACH_OK;
}
