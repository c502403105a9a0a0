/* Shared between the module's files (tachfmt_module.c, reader.c, output.c). */
#ifndef TACHFMT_PY_H
#define TACHFMT_PY_H

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

/* An open reader with its source and the Python objects made for its dict's entries. */
typedef struct {
	PyObject_HEAD
	struct tach_reader *r;
	PyObject *name;       /* for messages: the path, <bytes>, or the file's name */
	int fd, own_fd;
	Py_buffer buf;
	int has_buf;
	PyObject *keep;       /* what a file object's read() returned */
	PyObject **fcache;    /* frame id -> Frame */
	size_t fcap;
	PyObject **scache;    /* string id -> str */
	size_t scap;
	uint32_t *last_ids;   /* the previous sample's frames, whose tuple is last_stack */
	size_t last_depth, last_cap;
	PyObject *last_stack;
	int status;           /* 0 reading, 1 done, <0 failed (its code) */
	struct tp_warnings warn;
} tp_reader_obj;

int tp_types_init(void);
PyObject *tp_raise(int code, PyObject *name, const char *msg, int kind, uint64_t pos);
const char *tp_option_text(PyObject *v, PyObject **tmp);
int tp_option_key(PyObject *k, char *buf, size_t cap);

/* A reader of format (NULL: "auto") on src, not yet opened; reader options from a dict. */
tp_reader_obj *tp_reader_make(PyObject *src, const char *format);
int tp_reader_options(tp_reader_obj *ro, PyObject *opts);
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
