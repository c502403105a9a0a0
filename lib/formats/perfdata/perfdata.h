/* Linux perf's perf.data (perfdata.c: the row and its probe; read.c: the reader's ops and
 * samples; read_records.c: the file's framing, pipe mode, compressed records and their
 * time order; read_features.c: the header's feature sections; read_sample.c: one
 * record's fields by its attribute; read_symbols.c: processes, their mappings and how a
 * frame is named; spaces.c: the processes' address spaces). State shared by those files
 * only. */
#ifndef TACHFMT_FMT_PERFDATA_H
#define TACHFMT_FMT_PERFDATA_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/format.h"
#include "core/handles.h"
#include "formats/perf_weights.h"

extern const struct tachi_reader_ops tachi_perfdata_reader_ops;

/* Bounds on what a file may claim (beyond the bytes it has). */
#define PD_MAX_ATTRS 4096
#define PD_MAX_IDS (1u << 20)
#define PD_MAX_NAME 4096
#define PD_MAX_QUEUE (1u << 24)   /* records held between two FINISHED_ROUNDs */

/* record types (uapi perf_event.h; tools/perf/util/event.h for those from 64 on) */
enum {
	PD_MMAP = 1, PD_LOST = 2, PD_COMM = 3, PD_EXIT = 4, PD_FORK = 7, PD_SAMPLE = 9,
	PD_MMAP2 = 10, PD_HEADER_ATTR = 64, PD_HEADER_EVENT_TYPE = 65,
	PD_HEADER_TRACING_DATA = 66, PD_HEADER_BUILD_ID = 67, PD_FINISHED_ROUND = 68,
	PD_AUXTRACE = 71, PD_EVENT_UPDATE = 78, PD_HEADER_FEATURE = 80, PD_COMPRESSED = 81,
	PD_COMPRESSED2 = 83,
};

/* sample_type bits */
enum {
	PD_S_IP = 1 << 0, PD_S_TID = 1 << 1, PD_S_TIME = 1 << 2, PD_S_ADDR = 1 << 3,
	PD_S_READ = 1 << 4, PD_S_CALLCHAIN = 1 << 5, PD_S_ID = 1 << 6, PD_S_CPU = 1 << 7,
	PD_S_PERIOD = 1 << 8, PD_S_STREAM_ID = 1 << 9, PD_S_RAW = 1 << 10,
	PD_S_BRANCH_STACK = 1 << 11, PD_S_REGS_USER = 1 << 12, PD_S_STACK_USER = 1 << 13,
	PD_S_WEIGHT = 1 << 14, PD_S_DATA_SRC = 1 << 15, PD_S_IDENTIFIER = 1 << 16,
	PD_S_TRANSACTION = 1 << 17, PD_S_REGS_INTR = 1 << 18, PD_S_PHYS_ADDR = 1 << 19,
	PD_S_AUX = 1 << 20, PD_S_CGROUP = 1 << 21, PD_S_DATA_PAGE_SIZE = 1 << 22,
	PD_S_CODE_PAGE_SIZE = 1 << 23, PD_S_WEIGHT_STRUCT = 1 << 24,
};
#define PD_S_KNOWN ((1u << 25) - 1)

/* misc: the cpu mode, and flags of some records */
enum {
	PD_MISC_CPUMODE = 7, PD_MISC_KERNEL = 1, PD_MISC_USER = 2, PD_MISC_HV = 3,
	PD_MISC_GUEST_KERNEL = 4, PD_MISC_GUEST_USER = 5,
	PD_MISC_COMM_EXEC = 1 << 13, PD_MISC_MMAP_DATA = 1 << 13, PD_MISC_MMAP_BUILD_ID = 1 << 14,
	PD_MISC_BUILD_ID_SIZE = 1 << 15,
};

struct pd_attr {
	uint32_t type, size;
	uint64_t config, period, sample_type, read_format, flags, branch_sample_type;
	uint64_t regs_user, regs_intr;
	uint32_t stack_user;
	char *name;               /* EVENT_DESC's, or made from type and config */
	bool sample_id_all, freq;
};

/* One sample's fields (read_sample.c); pointers into the record. */
struct pd_sample {
	uint64_t ip, time, addr, id, stream_id, period, nr, weight, data_src, transaction;
	uint64_t phys_addr, cgroup;
	uint32_t pid, tid, cpu;
	const uint8_t *chain;     /* nr u64 in the file's byte order */
	const uint8_t *raw;
	uint32_t raw_size;
	/* --call-graph dwarf: the user registers (abi 0: none) and the stack copy */
	uint64_t regs_abi, regs_mask;
	const uint8_t *regs;      /* one u64 per bit of regs_mask */
	const uint8_t *stack;
	uint64_t stack_size;      /* the bytes the kernel copied (dyn_size, at most size) */
	uint16_t misc;
	bool has_time, has_period;
};

/* A record's place: its bytes (in the input, or in a copy of inflated data), its time for
 * the round's order, its input offset for messages. */
struct pd_rec {
	const uint8_t *p;
	uint64_t time, off, seq;
	uint32_t size;
	bool own;                 /* p is a copy (inflated), freed after its turn */
};

struct pd_syms;

struct pd {
	/* options */
	char *event_opt;
	bool no_addresses, no_unknown_addresses, no_symbolize;
	bool no_source_lines;     /* source-lines=no: frames in their binary, no DWARF lines */
	char *binary_path;

	/* the input */
	const uint8_t *data;
	uint64_t size;
	bool swap, pipe;
	/* pipe mode from a pipe: records read one at a time into rbuf as they come (end
	 * unknown until the input ends), never the input whole */
	bool stream;
	uint8_t *rbuf;
	uint64_t pos, end;        /* the records still to read: [pos, end) */
	uint64_t feat_off;
	uint64_t released;        /* the input's bytes before this given back (mapped files) */
	uint64_t feat_bits[4];

	/* events */
	struct pd_attr *attrs;
	size_t nattrs;
	struct pd_idmap { uint64_t id; uint32_t attr; } *ids;
	size_t nids, ids_cap;
	int chosen;               /* the event read, -1 before it is known */
	uint64_t skipped, unknown_ids;
	int first_skipped;
	bool finished;

	/* inflated records (PERF_RECORD_COMPRESSED) */
	void *zds;
	uint8_t *zbuf;            /* inflated bytes not yet taken as records */
	size_t zlen, zcap;
	bool inflating;

	/* the round: records waiting for their time order */
	struct pd_rec *q;
	size_t nq, qcap, qhead;
	size_t sorted;            /* q[qhead, sorted) is in time order */
	uint64_t flush_upto;      /* records up to this time may go */
	uint64_t round_max;       /* the newest time at the last round's end */
	uint64_t max_time, last_time, seq;
	bool any_round, done;
	void *last_own;           /* the copy of the record given last */

	/* build ids, from the BUILD_ID feature and pipe mode's records */
	struct pd_bid { char *path; char hex[129]; bool kernel; } *bids;
	size_t nbids, bids_cap;

	struct pd_syms *syms;

	/* samples */
	uint32_t *frames;
	size_t frames_cap;
	uint32_t depth;
	uint32_t *prev;
	size_t prev_cap;
	uint32_t prev_depth;
	uint64_t prev_tid;
	bool has_prev;
	uint64_t total, samples;
	uint64_t sample_off;      /* the input offset of the sample being read */
	char *program;
	/* weights and a counted event's values, as the perf script reader has them */
	struct tachi_perf_weights pw;
};

static inline uint16_t pd_rd16(const struct pd *st, const uint8_t *p)
{
	uint16_t v = (uint16_t)(p[0] | p[1] << 8);
	return st->swap ? (uint16_t)(v >> 8 | v << 8) : v;
}

/* ---- read_records.c ---- */
int pd_open_input(struct tach_reader *r);
/* The next record in time order (*rec), or TACH_EOF. */
int pd_next_record(struct tach_reader *r, struct pd_rec *rec);
/* The record that many after the last one given, when the queue has it sorted already;
 * NULL when not. */
const struct pd_rec *pd_peek_record(const struct pd *st, size_t ahead);
/* A HEADER_ATTR record's or file section's attribute; ids given apart. */
int pd_add_attr(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off, uint32_t *idx);
int pd_add_id(struct tach_reader *r, uint64_t id, uint32_t attr);
/* The attribute of an event id, or -1. */
int pd_attr_by_id(const struct pd *st, uint64_t id);
void pd_records_free(struct pd *st);

/* ---- read_features.c ---- */
int pd_read_features(struct tach_reader *r);
/* A HEADER_FEATURE record (pipe mode): its id and section bytes. */
int pd_feature(struct tach_reader *r, uint64_t feat, const uint8_t *p, uint64_t n, uint64_t off);
/* A BUILD_ID record (the feature holds a run of them). */
int pd_build_id_record(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off);
/* EVENT_UPDATE (pipe mode): a name for the attribute of an id. */
int pd_event_update(struct tach_reader *r, const uint8_t *p, uint64_t n, uint64_t off);
const char *pd_build_id_of(const struct pd *st, const char *path, bool kernel);
void pd_features_free(struct pd *st);

/* ---- read_sample.c ---- */
/* The attribute of a record (SAMPLE or one with a sample_id trailer), or -1. */
int pd_attr_of(const struct pd *st, const uint8_t *p, uint32_t size, bool sample);
int pd_parse_sample(struct tach_reader *r, const struct pd_attr *a, const uint8_t *p,
		    uint32_t size, uint64_t off, struct pd_sample *s);
/* A SAMPLE record's callchain (*nr entries) without parsing the rest, where the fields
 * before it have a fixed size (no PERF_SAMPLE_READ); NULL when not or when it has none. */
const uint8_t *pd_peek_chain(const struct pd *st, const uint8_t *p, uint32_t size,
			     uint64_t *nr);
/* A non-sample record's time from its sample_id trailer; false when it has none. */
bool pd_trailer_time(const struct pd *st, const uint8_t *p, uint32_t size, uint64_t *time);

/* ---- spaces.c: processes' address spaces, shared between a parent and its forks ---- */
struct pd_tnode;
struct pd_spaces {
	struct pd_tnode *n;
	size_t nn, cap;
	uint32_t epochs, cur;     /* the last epoch given out; the inserting process's */
	bool failed;              /* out of memory: no further change */
};
/* A new epoch (never 0): a process's own until it forks, when it and its child get new
 * ones (what the two share is then copied, not changed). */
uint32_t pd_space_epoch(struct pd_spaces *a);
/* Adds [start, end) of map to the space at *root (0: empty) of the process of epoch,
 * hiding what it overlaps; seq orders insertions. TACH_OK or TACH_E_NOMEM. */
int pd_space_insert(struct pd_spaces *a, uint32_t *root, uint32_t epoch, uint64_t start,
		    uint64_t end, uint32_t map, uint64_t seq);
/* The map holding addr, UINT32_MAX when none. */
uint32_t pd_space_find(const struct pd_spaces *a, uint32_t root, uint64_t addr);
/* Calls fn with each map of the space at root, in address order, until it returns false. */
void pd_space_walk(const struct pd_spaces *a, uint32_t root, bool (*fn)(void *ctx, uint32_t map),
		   void *ctx);
void pd_spaces_free(struct pd_spaces *a);

/* ---- read_symbols.c ---- */
int pd_syms_new(struct tach_reader *r);
void pd_syms_free(struct pd_syms *y);
int pd_on_comm(struct tach_reader *r, const uint8_t *p, uint32_t size, uint64_t off);
int pd_on_fork(struct tach_reader *r, const uint8_t *p, uint32_t size, uint64_t off);
int pd_on_exit(struct tach_reader *r, const uint8_t *p, uint32_t size, uint64_t off);
int pd_on_mmap(struct tach_reader *r, const uint8_t *p, uint32_t size, uint64_t off, bool two);
/* The sample's frames, innermost first, into st->frames (st->depth); then its root. */
int pd_sample_frames(struct tach_reader *r, const struct pd_sample *s);
/* Asks the memory for the frames table's slots of a sample read a few records later (a
 * chain of nr entries, from pd_peek_chain): the table's look-ups nearly all miss the
 * cache, and the sample in hand leaves time for the slots to arrive. */
void pd_prefetch_chain(struct tach_reader *r, const uint8_t *chain, uint64_t nr);
int pd_root_frame(struct tach_reader *r, const struct pd_sample *s, uint32_t *id);
const char *pd_frame_file(struct tach_reader *r, uint32_t id);
/* The first file mapped into process pid, in address order, for which fn says true; NULL
 * when none. */
const char *pd_proc_map_find(struct tach_reader *r, uint32_t pid,
			     bool (*fn)(void *ctx, const char *path), void *ctx);

#endif
