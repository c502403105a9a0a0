/* Shared between the module's files (tachfmt_module.c, reader.c, output.c, filters.c,
 * args.c, errors.c). */
#ifndef TACHFMT_PY_H
#define TACHFMT_PY_H

#include <stdbool.h>
#include <stdint.h>

#include "tachfmt.h"

extern PyObject *tp_error, *tp_warning;
extern PyTypeObject *tp_sample, *tp_frame, *tp_reader;

/* Library warnings, kept in C (the GIL may be released) and raised afterwards. */
struct tp_warning_rec {
	char *msg;
	int kind;
	uint64_t pos;
};
struct tp_warnings {
	struct tp_warning_rec *recs;
	size_t n, dropped;
};
void tp_warn_cb(void *ctx, const char *msg, int kind, uint64_t pos);
int tp_warn_flush(struct tp_warnings *w, PyObject *name);
void tp_warn_clear(struct tp_warnings *w);

/* The programs' sample filters (--thread, --status, --from-us, --to-us; cmd/common/filters.c)
 * as open(), stacks() and convert() take them: what the reader hands out passes through. */
struct tp_filter {
	bool active;
	uint64_t *threads;     /* sorted */
	size_t nthreads;
	bool has_status, status_idle, status_no_idle;
	uint8_t status_any, status_none;
	uint64_t from_us, to_us;
	struct tach_sample copy;
	bool copy_cut;         /* the time range gave copy less weight than the sample read */
	struct tach_sample_ext copy_ext;
};
/* thread, status, from_us, to_us as given (NULL or None: not given); fname for messages. */
int tp_filter_parse(struct tp_filter *f, const char *fname, PyObject *thread, PyObject *status,
		    PyObject *from_us, PyObject *to_us);
void tp_filter_clear(struct tp_filter *f);
/* tach_reader_next through the filter; *ext (when ext is not NULL) the sample's extras. Runs
 * without the GIL. */
int tp_filter_next(struct tp_filter *f, struct tach_reader *r, const struct tach_sample **s,
		   const struct tach_sample_ext **ext);

/* An open reader with its source and the Python objects made for its dict's entries. */
typedef struct {
	PyObject_HEAD
	struct tach_reader *r;
	PyObject *name;       /* for messages: the path, <bytes>, or the file's name */
	int fd, own_fd;
	Py_buffer buf;
	int has_buf;
	PyObject *keep;       /* what a file object's read() returned */
	PyObject *fileobj;    /* a file object read through its descriptor, kept alive */
	struct tp_filter filt;
	PyObject **fcache;    /* frame id -> Frame */
	size_t fcap;
	PyObject **scache;    /* string id -> str */
	size_t scap;
	uint32_t *last_ids;   /* the previous sample's frames, whose tuple is last_stack */
	size_t last_depth, last_cap;
	PyObject *last_stack;
	int status;           /* 0 reading, 1 done, <0 failed (its code) */
	int started;          /* a sample was asked for (by iteration or by .meta) */
	const struct tach_sample *ahead; /* read for .meta, not yet given (valid until the next read) */
	const struct tach_sample_ext *ahead_ext; /* its extras */
	struct tp_warnings warn;
} tp_reader_obj;

int tp_types_init(void);
PyObject *tp_raise(int code, PyObject *name, const char *msg, int kind, uint64_t pos);
PyObject *tp_raise_arg(const char *fname, const char *arg, int code, const char *fmt, ...);
/* The readable (writable 0) or writable formats' names, "a, b, c", in buf. */
const char *tp_format_list(int writable, char *buf, size_t cap);
/* An option's value as the library takes it (key names it in a TypeError). */
const char *tp_option_text(const char *fname, PyObject *key, PyObject *v, PyObject **tmp);
int tp_option_key(const char *fname, PyObject *k, char *buf, size_t cap);
/* Is msg the library's word for an option it does not know? */
int tp_unknown_option(const char *msg);
/* A rejected option: TypeError for an unknown one, else tachfmt.Error with msg. NULL. */
PyObject *tp_option_error(const char *fname, PyObject *key, const char *msg);
/* The named parameters of fname() out of args and kw into vals[] (borrowed; NULL when not
 * given): the first npos may be positional, the first nreq are required. Other keywords go
 * into *rest (a new dict), or are a TypeError when rest is NULL. 0 or -1. */
int tp_args(const char *fname, PyObject *args, PyObject *kw, const char *const *names,
	    int nnames, int npos, int nreq, PyObject **vals, PyObject **rest);
/* A str argument or None (dflt); NULL with a TypeError naming it otherwise. */
const char *tp_str_arg(const char *fname, const char *name, PyObject *v, const char *dflt);

/* A reader of format (NULL: "auto") on src, not yet opened; reader options from a dict. */
tp_reader_obj *tp_reader_make(PyObject *src, const char *format, const char *fname);
int tp_reader_options(tp_reader_obj *ro, PyObject *opts, const char *fname);
/* The filters and max_depth of vals (thread, status, from_us, to_us, max_depth) on ro. */
int tp_reader_filters(tp_reader_obj *ro, const char *fname, PyObject *const *vals);
/* Opens it on its source (the GIL may be released); 0 or the library's status. */
int tp_reader_attach(tp_reader_obj *ro);
/* Raises the reader's error. */
PyObject *tp_reader_raise(tp_reader_obj *ro, int code);
/* The Frame of a dict frame id, a new reference. */
PyObject *tp_frame_of(tp_reader_obj *ro, uint32_t id);
PyObject *tp_frames_tuple(tp_reader_obj *ro, const uint32_t *ids, uint32_t depth);
PyObject *tp_meta_dict(tp_reader_obj *ro);

PyObject *tp_open(PyObject *self, PyObject *args, PyObject *kw);
PyObject *tp_stacks(PyObject *self, PyObject *args, PyObject *kw);
PyObject *tp_convert(PyObject *self, PyObject *args, PyObject *kw);
PyObject *tp_write(PyObject *self, PyObject *args, PyObject *kw);

#endif
