/* What the tick log reader's files share (read.c describes the format): the code table and
 * the ticks that both forms become (read_json.c: the preprocessed JSON; read_log.c: the raw
 * log), kept by table.c, named and given out by read.c. */
#ifndef TACHFMT_FMT_V8LOG_READ_H
#define TACHFMT_FMT_V8LOG_READ_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/handles.h"
#include "formats/native_syms.h"

/* A code entry no sample has used yet has no frame. */
#define TACHI_V8LOG_NO_FRAME UINT32_MAX

/* A code entry's type as the preprocessor writes it, which decides how it is named. */
enum v8log_type { V8L_NOTYPE, V8L_CODE, V8L_CPP, V8L_JS, V8L_LIB, V8L_OTHER };
/* A CODE entry's kind, where speedscope's importer marks it. */
enum v8log_kind { V8L_K_NONE, V8L_K_IC, V8L_K_BYTECODE, V8L_K_STUB, V8L_K_BUILTIN, V8L_K_REGEXP };

/* An entry of the preprocessed "code" array. name and type are offsets into text (type's
 * only for V8L_OTHER: its own text). */
struct v8log_code {
	uint64_t name, type_text;
	uint32_t name_len, type_len;
	uint8_t type, kind;
	uint32_t frame;           /* its frame in the dict, UINT32_MAX until a sample uses it */
};

/* A tick: its time (µs of V8's clock since the log began), VM state (-1: none) and the ids
 * its stack resolved to, outermost first, at ids[at, at + n): below the code count a code
 * entry, equal to it "(unknown type)", above it an address (speedscope's reading). */
struct v8log_tick {
	int64_t tm;
	uint64_t at;
	uint32_t n;
	int32_t vm;
	uint64_t seq;             /* its place in the input, which breaks ties in the sort */
	uint64_t off;             /* where it is (byte offset; the raw log's line start) */
};

struct v8log_state {
	bool raw;                 /* the raw log, else the preprocessed JSON */
	char *text;               /* the code entries' names, unescaped */
	size_t text_len, text_cap;
	struct v8log_code *codes;
	size_t ncodes, codes_cap;
	struct v8log_tick *ticks;
	size_t nticks, ticks_cap, cur;
	uint64_t *ids;
	size_t nids, ids_cap;
	int64_t last_tm;          /* the previous sample's, for the time one stands for */
	uint32_t *out;            /* a sample's frames */
	size_t out_cap;
	struct tach_label label;
	struct tach_sample_ext ext;
	struct tach_value_type vt[2];
	int64_t vals[2];
	uint32_t vm_key;
	char *buf;                /* a string being read */
	size_t buf_cap;
	struct tachi_native_opts opt;
	void *log;                /* read_log.c's own state */
};

/* What the two forms add to (table.c). */
int tachi_v8log_add_text(struct tach_reader *r, const char *s, size_t n, uint64_t *at);
int tachi_v8log_add_code(struct tach_reader *r, uint8_t type, uint8_t kind, const char *name,
		   size_t len, uint32_t *idx);
/* A tick whose ids are the last n added (tachi_v8log_add_id since the previous tick). */
int tachi_v8log_add_tick(struct tach_reader *r, int64_t tm, int32_t vm, uint32_t n, uint64_t off);
int tachi_v8log_add_id(struct tach_reader *r, uint64_t id);
enum v8log_kind tachi_v8log_kind_of(const char *s, size_t n);

int tachi_v8log_read_json(struct tach_reader *r);
int tachi_v8log_read_log(struct tach_reader *r);
void tachi_v8log_free_log(struct tach_reader *r);

#endif
