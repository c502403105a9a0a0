/* tachfmt.open and tachfmt.stacks: a reader on a path, bytes or a file object, its samples as
 * named tuples, and samples counted by (thread, stack) in C without the GIL.
 *
 * A Frame is made once per frame id and a str once per string id (caches indexed by id), and
 * a sample whose frames equal the previous sample's shares its tuple, so that iterating costs
 * a tuple and a few ints per sample, not a tuple per frame.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tachfmt_py.h"

/* The types tp_types_init makes. */
PyTypeObject *tp_sample, *tp_frame, *tp_reader;

/* ---- types ---- */

static PyStructSequence_Field sample_fields[] = {
	{ "tid", "thread id" },
	{ "interpreter", "interpreter id" },
	{ "timestamp_us", "microseconds (of the first sample when weight > 1)" },
	{ "status", "thread state flags (tachfmt.STATUS_*)" },
	{ "frames", "tuple of Frame, innermost first" },
	{ "weight", "how many samples this stands for (>= 1): weight N is N samples one "
		    "interval apart from timestamp_us; 1 for TACH input" },
	{ "time_ns", "the time this stands for, in nanoseconds, as the producer recorded it (a "
		     "V8 sample's time to the next, a perf period, weight x interval for TACH); "
		     "None when the profile's samples carry no time (meta['sample_time'] False)" },
	{ "values", "tuple of ints, one per meta['value_types'] (pprof's sample values, for the "
		    "whole weight); () when the input has none" },
	{ NULL, NULL },
};
static PyStructSequence_Desc sample_desc = {
	"tachfmt.Sample", "One sample (weight, time_ns and values are attributes, not tuple "
			  "items).",
	sample_fields, 5,
};

static PyStructSequence_Field frame_fields[] = {
	{ "file", "source file name" },
	{ "function", "function name" },
	{ "line", "line number, None when the frame has no location" },
	{ "end_line", "last line, or None" },
	{ "col", "column, or None" },
	{ "end_col", "end column, or None" },
	{ "opcode", "bytecode opcode, or None" },
	{ NULL, NULL },
};
static PyStructSequence_Desc frame_desc = {
	"tachfmt.Frame",
	"A frame: (file, function, line); end_line, col, end_col and opcode are attributes.",
	frame_fields, 3,
};

/* ---- sources ---- */

static int source_path(tp_reader_obj *ro, PyObject *src)
{
	PyObject *p = PyOS_FSPath(src);
	if (!p)
		return -1;
	PyObject *enc = PyUnicode_Check(p) ? PyUnicode_EncodeFSDefault(p) : Py_NewRef(p);
	ro->name = PyUnicode_Check(p) ? Py_NewRef(p) : PyObject_Str(p);
	Py_DECREF(p);
	if (!enc || !ro->name) {
		Py_XDECREF(enc);
		return -1;
	}
	ro->fd = open(PyBytes_AsString(enc), O_RDONLY | O_CLOEXEC);
	struct stat st;
	/* a directory opens for reading: refuse it as the destination refuses one */
	if (ro->fd >= 0 && fstat(ro->fd, &st) == 0 && S_ISDIR(st.st_mode)) {
		close(ro->fd);
		ro->fd = -1;
		errno = EISDIR;
	}
	if (ro->fd < 0) {
		PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, ro->name);
		Py_DECREF(enc);
		return -1;
	}
	Py_DECREF(enc);
	ro->own_fd = 1;
	return 0;
}

/* The descriptor of a file object that has one and stands where the object does: the
 * object's position (tell) and the descriptor's offset agree. -1 (no error) when it has
 * none or they disagree (a buffered file read ahead of its position): read() then. */
static int file_descriptor(PyObject *src)
{
	PyObject *fdo = PyObject_CallMethod(src, "fileno", NULL);
	if (!fdo) {
		PyErr_Clear();
		return -1;
	}
	long long fd = PyLong_Check(fdo) ? PyLong_AsLongLong(fdo) : -1;
	Py_DECREF(fdo);
	if (fd < 0 || fd > INT_MAX) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "fileno() gave %lld, not a file descriptor", fd);
		return -2;
	}
	PyObject *pos = PyObject_CallMethod(src, "tell", NULL);
	if (!pos) {
		/* a pipe: no position to disagree with */
		PyErr_Clear();
		return (int)fd;
	}
	long long p = PyLong_AsLongLong(pos);
	Py_DECREF(pos);
	PyErr_Clear();
	off_t here = lseek((int)fd, 0, SEEK_CUR);
	return here >= 0 && here == p ? (int)fd : -1;
}

/* A file object: its descriptor when that reads what the object would, else all that
 * read() gives. The object is kept while its descriptor is read. */
static int source_file(tp_reader_obj *ro, PyObject *src)
{
	PyObject *n = PyObject_GetAttrString(src, "name");
	if (n && PyUnicode_Check(n))
		ro->name = n;
	else {
		Py_XDECREF(n);
		PyErr_Clear();
		ro->name = PyUnicode_FromString("<file>");
	}
	if (!ro->name)
		return -1;
	int fd = file_descriptor(src);
	if (fd == -2)
		return -1;
	if (fd >= 0) {
		ro->fd = fd;
		ro->fileobj = Py_NewRef(src);
		return 0;
	}
	ro->keep = PyObject_CallMethod(src, "read", NULL);
	if (!ro->keep)
		return -1;
	if (!PyObject_CheckBuffer(ro->keep)) {
		PyErr_SetString(PyExc_TypeError, "read() gave no bytes: a binary file is needed");
		return -1;
	}
	if (PyObject_GetBuffer(ro->keep, &ro->buf, PyBUF_SIMPLE))
		return -1;
	ro->has_buf = 1;
	return 0;
}

static int source_init(tp_reader_obj *ro, PyObject *src)
{
	if (PyUnicode_Check(src) || PyObject_HasAttrString(src, "__fspath__"))
		return source_path(ro, src);
	if (PyObject_CheckBuffer(src)) {
		ro->name = PyUnicode_FromString("<bytes>");
		if (!ro->name || PyObject_GetBuffer(src, &ro->buf, PyBUF_SIMPLE))
			return -1;
		ro->has_buf = 1;
		return 0;
	}
	if (PyObject_HasAttrString(src, "read") || PyObject_HasAttrString(src, "fileno"))
		return source_file(ro, src);
	PyErr_Format(PyExc_TypeError, "a path, bytes-like object or binary file, not %S",
		     (PyObject *)Py_TYPE(src));
	return -1;
}

tp_reader_obj *tp_reader_make(PyObject *src, const char *format, const char *fname)
{
	tp_reader_obj *ro = PyObject_New(tp_reader_obj, tp_reader);
	if (!ro)
		return NULL;
	memset((char *)ro + sizeof(PyObject), 0, sizeof(*ro) - sizeof(PyObject));
	ro->fd = -1;
	tp_filter_clear(&ro->filt);
	if (source_init(ro, src)) {
		Py_DECREF(ro);
		return NULL;
	}
	ro->r = tach_reader_new(format ? format : "auto");
	if (!ro->r) {
		Py_DECREF(ro);
		char list[512];
		tp_raise_arg(fname, "from_", TACH_E_USAGE, "unknown input format '%s' (the formats "
			     "read: auto, %s)", format, tp_format_list(0, list, sizeof(list)));
		return NULL;
	}
	tach_reader_set_warn(ro->r, tp_warn_cb, &ro->warn);
	return ro;
}

/* Reader options from a dict; a failed set leaves the reader failed, so a bad one raises. */
int tp_reader_options(tp_reader_obj *ro, PyObject *opts, const char *fname)
{
	PyObject *k, *v;
	Py_ssize_t i = 0;
	while (opts && PyDict_Next(opts, &i, &k, &v)) {
		char key[64];
		PyObject *tmp;
		if (tp_option_key(fname, k, key, sizeof(key)))
			return -1;
		const char *val = tp_option_text(fname, k, v, &tmp);
		if (!val)
			return -1;
		int rc = tach_reader_set_option(ro->r, key, val);
		Py_XDECREF(tmp);
		if (rc) {
			if (rc == TACH_E_NOMEM)
				PyErr_NoMemory();
			else
				tp_option_error(fname, k, tach_reader_error(ro->r, NULL, NULL));
			return -1;
		}
	}
	return 0;
}

/* vals: thread, status, from_us, to_us, max_depth (NULL when not given). */
int tp_reader_filters(tp_reader_obj *ro, const char *fname, PyObject *const *vals)
{
	if (tp_filter_parse(&ro->filt, fname, vals[0], vals[1], vals[2], vals[3]))
		return -1;
	if (!vals[4] || vals[4] == Py_None)
		return 0;
	PyObject *d = PyDict_New();
	int rc = !d || PyDict_SetItemString(d, "max_depth", vals[4]) ||
		 tp_reader_options(ro, d, fname);
	Py_XDECREF(d);
	return rc ? -1 : 0;
}

int tp_reader_attach(tp_reader_obj *ro)
{
	if (ro->has_buf)
		return tach_reader_open_mem(ro->r, ro->buf.buf, (size_t)ro->buf.len);
	return tach_reader_open_fd(ro->r, ro->fd);
}

PyObject *tp_reader_raise(tp_reader_obj *ro, int code)
{
	int kind = TACH_POS_NONE;
	uint64_t pos = 0;
	const char *msg = tach_reader_error(ro->r, &kind, &pos);
	return tp_raise(code, ro->name, msg, kind, pos);
}

static void reader_release(tp_reader_obj *ro)
{
	tach_reader_free(ro->r);
	ro->r = NULL;
	if (ro->own_fd && ro->fd >= 0)
		close(ro->fd);
	ro->fd = -1;
	if (ro->has_buf)
		PyBuffer_Release(&ro->buf);
	ro->has_buf = 0;
	Py_CLEAR(ro->keep);
	Py_CLEAR(ro->fileobj);
	tp_filter_clear(&ro->filt);
	for (size_t i = 0; i < ro->fcap; i++)
		Py_XDECREF(ro->fcache[i]);
	for (size_t i = 0; i < ro->scap; i++)
		Py_XDECREF(ro->scache[i]);
	free(ro->fcache);
	free(ro->scache);
	free(ro->last_ids);
	ro->fcache = ro->scache = NULL;
	ro->last_ids = NULL;
	ro->fcap = ro->scap = ro->last_cap = ro->last_depth = 0;
	Py_CLEAR(ro->last_stack);
	tp_warn_clear(&ro->warn);
}

static void reader_dealloc(PyObject *self)
{
	tp_reader_obj *ro = (tp_reader_obj *)self;
	PyTypeObject *tp = Py_TYPE(self);
	reader_release(ro);
	Py_CLEAR(ro->name);
	freefunc f = PyType_GetSlot(tp, Py_tp_free);
	f(self);
	Py_DECREF(tp);
}

/* ---- frames and samples as Python objects ---- */

static int grow(PyObject ***arr, size_t *cap, size_t need)
{
	if (need <= *cap)
		return 0;
	size_t n = *cap ? *cap : 64;
	while (n < need)
		n *= 2;
	PyObject **a = realloc(*arr, n * sizeof(**arr));
	if (!a)
		return -1;
	memset(a + *cap, 0, (n - *cap) * sizeof(*a));
	*arr = a;
	*cap = n;
	return 0;
}

static PyObject *string_of(tp_reader_obj *ro, uint32_t id)
{
	if (grow(&ro->scache, &ro->scap, (size_t)id + 1))
		return PyErr_NoMemory();
	if (!ro->scache[id]) {
		size_t len;
		const char *s = tach_dict_string(tach_reader_dict(ro->r), id, &len);
		if (!s)
			return tp_raise(TACH_E_FORMAT, ro->name, "string id out of range", 0, 0);
		ro->scache[id] = PyUnicode_DecodeUTF8(s, (Py_ssize_t)len, "surrogateescape");
		if (!ro->scache[id])
			return NULL;
	}
	return Py_NewRef(ro->scache[id]);
}

static PyObject *num_or_none(int32_t v)
{
	return v == -1 ? Py_NewRef(Py_None) : PyLong_FromLong(v);
}

static PyObject *make_frame(tp_reader_obj *ro, const struct tach_frame *f)
{
	PyObject *fr = PyStructSequence_New(tp_frame);
	if (!fr)
		return NULL;
	PyObject *v[7] = {
		string_of(ro, f->file), string_of(ro, f->func), num_or_none(f->line),
		num_or_none(f->end_line), num_or_none(f->col), num_or_none(f->end_col),
		f->opcode == TACH_NO_OPCODE ? Py_NewRef(Py_None) : PyLong_FromLong(f->opcode),
	};
	int bad = 0;
	for (int i = 0; i < 7; i++) {
		bad |= !v[i];
		PyStructSequence_SetItem(fr, i, v[i] ? v[i] : Py_NewRef(Py_None));
	}
	if (bad)
		Py_CLEAR(fr);
	return fr;
}

PyObject *tp_frame_of(tp_reader_obj *ro, uint32_t id)
{
	if (grow(&ro->fcache, &ro->fcap, (size_t)id + 1))
		return PyErr_NoMemory();
	if (!ro->fcache[id]) {
		const struct tach_frame *f = tach_dict_frame(tach_reader_dict(ro->r), id);
		if (!f)
			return tp_raise(TACH_E_FORMAT, ro->name, "frame id out of range", 0, 0);
		if (!(ro->fcache[id] = make_frame(ro, f)))
			return NULL;
	}
	return Py_NewRef(ro->fcache[id]);
}

PyObject *tp_frames_tuple(tp_reader_obj *ro, const uint32_t *ids, uint32_t depth)
{
	PyObject *t = PyTuple_New(depth);
	for (uint32_t i = 0; t && i < depth; i++) {
		PyObject *f = tp_frame_of(ro, ids[i]);
		if (!f || PyTuple_SetItem(t, i, f))
			Py_CLEAR(t);
	}
	return t;
}

/* The frames tuple of s: the previous sample's when its frames are the same ids. */
static PyObject *sample_frames(tp_reader_obj *ro, const struct tach_sample *s)
{
	if (ro->last_stack && s->depth == ro->last_depth &&
	    (!s->depth || !memcmp(s->frames, ro->last_ids, s->depth * sizeof(uint32_t))))
		return Py_NewRef(ro->last_stack);
	PyObject *t = tp_frames_tuple(ro, s->frames, s->depth);
	if (!t)
		return NULL;
	if (s->depth > ro->last_cap) {
		uint32_t *n = realloc(ro->last_ids, s->depth * sizeof(uint32_t));
		if (!n) {
			Py_DECREF(t);
			return PyErr_NoMemory();
		}
		ro->last_ids = n;
		ro->last_cap = s->depth;
	}
	/* an empty stack's frames may be NULL, which memcpy may not be given */
	if (s->depth)
		memcpy(ro->last_ids, s->frames, s->depth * sizeof(uint32_t));
	ro->last_depth = s->depth;
	PyObject *old = ro->last_stack;
	ro->last_stack = Py_NewRef(t);
	Py_XDECREF(old);
	return t;
}

/* The sample's values as a tuple of ints; () when it has none. */
static PyObject *sample_values(const struct tach_sample_ext *ext)
{
	uint32_t n = ext ? ext->value_count : 0;
	PyObject *t = PyTuple_New(n);
	for (uint32_t i = 0; t && i < n; i++) {
		PyObject *x = PyLong_FromLongLong(ext->values[i]);
		if (!x || PyTuple_SetItem(t, i, x))
			Py_CLEAR(t);
	}
	return t;
}

static PyObject *make_sample(tp_reader_obj *ro, const struct tach_sample *s,
			     const struct tach_sample_ext *ext)
{
	PyObject *frames = sample_frames(ro, s);
	if (!frames)
		return NULL;
	PyObject *o = PyStructSequence_New(tp_sample);
	if (!o) {
		Py_DECREF(frames);
		return NULL;
	}
	PyObject *v[8] = {
		PyLong_FromUnsignedLongLong(s->thread_id), PyLong_FromUnsignedLong(s->interp_id),
		PyLong_FromUnsignedLongLong(s->timestamp_us), PyLong_FromLong(s->status), frames,
		PyLong_FromUnsignedLongLong(s->weight),
		tach_reader_meta(ro->r)->sample_time ? PyLong_FromUnsignedLongLong(s->time_ns)
						     : Py_NewRef(Py_None),
		sample_values(ext),
	};
	int bad = 0;
	for (int i = 0; i < 8; i++) {
		bad |= !v[i];
		PyStructSequence_SetItem(o, i, v[i] ? v[i] : Py_NewRef(Py_None));
	}
	if (bad)
		Py_CLEAR(o);
	return o;
}

/* ---- the Reader type ---- */

static int reader_usable(tp_reader_obj *ro)
{
	if (!ro->r) {
		PyErr_SetString(PyExc_ValueError, "tachfmt reader is closed");
		return 0;
	}
	return 1;
}

/* The next sample into *s: 1, or 0 at the end, -1 with an exception. */
static int reader_read(tp_reader_obj *ro, const struct tach_sample **s,
		       const struct tach_sample_ext **ext)
{
	ro->started = 1;
	if (ro->status == 1)
		return 0;
	if (ro->status < 0) {
		tp_reader_raise(ro, ro->status);
		return -1;
	}
	int rc = tp_filter_next(&ro->filt, ro->r, s, ext);
	if ((ro->warn.n || ro->warn.dropped) && tp_warn_flush(&ro->warn, ro->name))
		return -1;
	if (rc == TACH_EOF) {
		ro->status = 1;
		return 0;
	}
	if (rc < 0) {
		ro->status = rc;
		tp_reader_raise(ro, rc);
		return -1;
	}
	return 1;
}

static PyObject *reader_next(PyObject *self)
{
	tp_reader_obj *ro = (tp_reader_obj *)self;
	if (!reader_usable(ro))
		return NULL;
	const struct tach_sample *s = ro->ahead;
	const struct tach_sample_ext *ext = ro->ahead_ext;
	ro->ahead = NULL;
	ro->ahead_ext = NULL;
	if (!s && reader_read(ro, &s, &ext) <= 0)
		return NULL;
	return make_sample(ro, s, ext);
}

static PyObject *reader_enter(PyObject *self, PyObject *unused)
{
	return Py_NewRef(self);
}

static PyObject *reader_close(PyObject *self, PyObject *unused)
{
	reader_release((tp_reader_obj *)self);
	Py_RETURN_NONE;
}

static PyObject *reader_exit(PyObject *self, PyObject *args)
{
	reader_release((tp_reader_obj *)self);
	Py_RETURN_FALSE;
}

static int put_item(PyObject *d, const char *k, PyObject *v)
{
	if (!v)
		return -1;
	int rc = PyDict_SetItemString(d, k, v);
	Py_DECREF(v);
	return rc;
}

/* What a TACH header declares beyond the common values. */
static int meta_tach(PyObject *d, const struct tach_file_info *m)
{
	const char layout[2] = { m->layout, 0 };
	return put_item(d, "format_version", PyLong_FromUnsignedLong(m->format_version)) ||
	       put_item(d, "sample_count", PyLong_FromUnsignedLongLong(m->sample_count)) ||
	       put_item(d, "compression", PyUnicode_FromString(m->compression == 1 ? "zstd"
				       : m->compression ? "unknown" : "none")) ||
	       put_item(d, "layout", PyUnicode_FromString(layout)) ||
	       put_item(d, "byte_order", PyUnicode_FromString(m->big_endian ? "big" : "little"));
}

static PyObject *str_or_none(const char *s)
{
	return s ? PyUnicode_DecodeUTF8(s, (Py_ssize_t)strlen(s), "surrogateescape")
		 : Py_NewRef(Py_None);
}

/* What the samples' values are: value_types, a tuple of (type, unit) pairs, one per item of
 * a Sample's values (empty when the input has none), and with them which one gives the
 * weights (weight_type, an index), which a viewer shows first (default_type, an index or
 * None) and the weights' unit when they are not samples (weight_unit, or None). */
static int meta_values(PyObject *d, const struct tach_meta *m)
{
	uint32_t n = m->value_types ? m->value_type_count : 0;
	PyObject *t = PyTuple_New(n);
	for (uint32_t i = 0; t && i < n; i++) {
		PyObject *p = Py_BuildValue("(NN)", str_or_none(m->value_types[i].type),
					    str_or_none(m->value_types[i].unit));
		if (!p || PyTuple_SetItem(t, i, p))
			Py_CLEAR(t);
	}
	if (put_item(d, "value_types", t))
		return -1;
	if (!n)
		return 0;
	return put_item(d, "weight_type", PyLong_FromUnsignedLong(m->weight_type)) ||
	       put_item(d, "default_type", m->default_type && m->default_type <= n
				       ? PyLong_FromUnsignedLong(m->default_type - 1)
				       : Py_NewRef(Py_None)) ||
	       put_item(d, "weight_unit", str_or_none(m->weight_unit));
}

PyObject *tp_meta_dict(tp_reader_obj *ro)
{
	const struct tach_meta *m = tach_reader_meta(ro->r);
	const struct tach_file_info *f = m->file;
	const char *fmt = tach_reader_format(ro->r);
	PyObject *d = PyDict_New();
	if (!d)
		return NULL;
	int bad = put_item(d, "format", fmt ? PyUnicode_FromString(fmt) : Py_NewRef(Py_None)) ||
		  put_item(d, "interval_us", PyLong_FromUnsignedLongLong(m->interval_us)) ||
		  put_item(d, "start_time_us", PyLong_FromUnsignedLongLong(m->start_time_us)) ||
		  put_item(d, "python_version", m->py_major || m->py_minor || m->py_micro ?
				PyUnicode_FromFormat("%d.%d.%d", m->py_major, m->py_minor, m->py_micro)
				: Py_NewRef(Py_None)) ||
		  put_item(d, "profiling_config", PyLong_FromUnsignedLong(m->profiling_config)) ||
		  put_item(d, "record_order", PyBool_FromLong(f && f->record_order)) ||
		  put_item(d, "sample_time", PyBool_FromLong(m->sample_time)) ||
		  meta_values(d, m) ||
		  (f && f->thread_count &&
		   put_item(d, "thread_count", PyLong_FromUnsignedLong(f->thread_count))) ||
		  (m->program && put_item(d, "program", PyUnicode_DecodeUTF8(m->program,
				  (Py_ssize_t)strlen(m->program), "surrogateescape"))) ||
		  (fmt && !strcmp(fmt, "tach") && f && meta_tach(d, f));
	if (bad)
		Py_CLEAR(d);
	return d;
}

/* Text and event formats learn the interval, the start and the program from their first
 * sample: .meta asked before any reads that sample ahead (iteration then gives it first),
 * so that it never shows the placeholders (interval 0) that write() would copy. */
static PyObject *reader_meta(PyObject *self, void *unused)
{
	tp_reader_obj *ro = (tp_reader_obj *)self;
	if (!reader_usable(ro))
		return NULL;
	if (!ro->started) {
		const struct tach_sample *s = NULL;
		const struct tach_sample_ext *ext = NULL;
		int got = reader_read(ro, &s, &ext);
		/* a damaged input fails at its first iteration, as it would have */
		if (got < 0 && ro->status < 0)
			PyErr_Clear();
		else if (got < 0)
			return NULL;
		ro->ahead = got > 0 ? s : NULL;
		ro->ahead_ext = got > 0 ? ext : NULL;
	}
	return tp_meta_dict(ro);
}

static PyObject *reader_format(PyObject *self, void *unused)
{
	tp_reader_obj *ro = (tp_reader_obj *)self;
	if (!reader_usable(ro))
		return NULL;
	const char *f = tach_reader_format(ro->r);
	return f ? PyUnicode_FromString(f) : Py_NewRef(Py_None);
}

static PyMethodDef reader_methods[] = {
	{ "__enter__", reader_enter, METH_NOARGS, "__enter__($self, /)\n--\n\nThe reader itself." },
	{ "__exit__", reader_exit, METH_VARARGS,
	  "__exit__($self, exc_type, exc, tb, /)\n--\n\nCloses the reader." },
	{ "close", reader_close, METH_NOARGS,
	  "close($self, /)\n--\n\nCloses the input and frees the reader." },
	{ NULL, NULL, 0, NULL },
};

static PyGetSetDef reader_getset[] = {
	{ "meta", reader_meta, NULL,
	  "dict: format, interval_us, start_time_us, python_version (None for a profile not "
	  "Python's), profiling_config, record_order, sample_time (the samples' time_ns is the "
	  "time each stands for), value_types (the (type, unit) of each of a sample's values; "
	  "with weight_type, default_type and weight_unit when there are any), thread_count "
	  "(when known), program (when known); for TACH also format_version, sample_count, "
	  "compression, layout, byte_order. Asked before the first sample, it reads that sample "
	  "ahead (iteration gives it first): text formats learn values from it.", NULL },
	{ "format", reader_format, NULL, "the format read (detected or named)", NULL },
	{ NULL, NULL, NULL, NULL, NULL },
};

static PyType_Slot reader_slots[] = {
	{ Py_tp_dealloc, reader_dealloc },
	{ Py_tp_iter, PyObject_SelfIter },
	{ Py_tp_iternext, reader_next },
	{ Py_tp_methods, reader_methods },
	{ Py_tp_getset, reader_getset },
	{ Py_tp_doc, "A profile being read: iterate for Sample tuples; .meta; a context manager." },
	{ 0, NULL },
};

static PyType_Spec reader_spec = {
	"tachfmt.Reader", sizeof(tp_reader_obj), 0,
	Py_TPFLAGS_DEFAULT | Py_TPFLAGS_DISALLOW_INSTANTIATION, reader_slots,
};

/* ---- the named-tuple protocol (collections.namedtuple's _fields, _asdict, _replace,
 * _make) on the struct sequences, which make a sample without a Python call ---- */

static const PyStructSequence_Desc *desc_of(PyObject *obj)
{
	PyTypeObject *tp = PyType_Check(obj) ? (PyTypeObject *)obj : Py_TYPE(obj);
	return PyType_IsSubtype(tp, tp_sample) ? &sample_desc : &frame_desc;
}

static int n_fields(const PyStructSequence_Desc *d)
{
	int n = 0;
	while (d->fields[n].name)
		n++;
	return n;
}

/* Every field, the tuple's then the attributes (a Sample's weight, a Frame's end_line, col,
 * end_col and opcode): what the object holds. */
static PyObject *nt_asdict(PyObject *self, PyObject *unused)
{
	const PyStructSequence_Desc *d = desc_of(self);
	PyObject *dict = PyDict_New();
	for (int i = 0; dict && i < n_fields(d); i++)
		if (PyDict_SetItemString(dict, d->fields[i].name, PyStructSequence_GetItem(self, i)))
			Py_CLEAR(dict);
	return dict;
}

static PyObject *nt_replace(PyObject *self, PyObject *args, PyObject *kw)
{
	const PyStructSequence_Desc *d = desc_of(self);
	int n = n_fields(d);
	if (PyTuple_Size(args)) {
		PyErr_SetString(PyExc_TypeError, "_replace() takes keyword arguments only");
		return NULL;
	}
	PyObject *vals = PyList_New(n);
	for (int i = 0; vals && i < n; i++) {
		PyObject *v = kw ? PyDict_GetItemString(kw, d->fields[i].name) : NULL;
		PyList_SetItem(vals, i, Py_NewRef(v ? v : PyStructSequence_GetItem(self, i)));
	}
	Py_ssize_t used = 0;
	for (int i = 0; kw && i < n; i++)
		used += PyDict_GetItemString(kw, d->fields[i].name) != NULL;
	if (vals && kw && used != PyDict_Size(kw)) {
		PyErr_Format(PyExc_TypeError, "_replace() got unexpected field name(s): %R", kw);
		Py_CLEAR(vals);
	}
	PyObject *r = vals ? PyObject_CallFunctionObjArgs((PyObject *)Py_TYPE(self), vals, NULL) : NULL;
	Py_XDECREF(vals);
	return r;
}

static PyObject *nt_make(PyObject *cls, PyObject *iterable)
{
	PyObject *t = PySequence_Tuple(iterable);
	PyObject *r = t ? PyObject_CallFunctionObjArgs(cls, t, NULL) : NULL;
	Py_XDECREF(t);
	return r;
}

static PyMethodDef nt_methods[] = {
	{ "_asdict", nt_asdict, METH_NOARGS,
	  "_asdict($self, /)\n--\n\nA dict of every field: the tuple's, then the attributes." },
	{ "_replace", (PyCFunction)(void (*)(void))nt_replace, METH_VARARGS | METH_KEYWORDS,
	  "_replace($self, /, **fields)\n--\n\nA new one with the named fields replaced." },
	{ NULL, NULL, 0, NULL },
};
static PyMethodDef nt_make_def = {
	"_make", nt_make, METH_O,
	"_make($type, iterable, /)\n--\n\nA new one from an iterable of the tuple's fields (and, after them, the attributes')."
};

static int add_attr(PyTypeObject *tp, const char *name, PyObject *v)
{
	int rc = v ? PyObject_SetAttrString((PyObject *)tp, name, v) : -1;
	Py_XDECREF(v);
	return rc;
}

static int namedtuple_protocol(PyTypeObject *tp, const PyStructSequence_Desc *d)
{
	PyObject *fields = PyTuple_New(d->n_in_sequence);
	for (int i = 0; fields && i < d->n_in_sequence; i++)
		if (PyTuple_SetItem(fields, i, PyUnicode_FromString(d->fields[i].name)))
			Py_CLEAR(fields);
	int rc = add_attr(tp, "_fields", fields) ||
		 add_attr(tp, "_field_defaults", PyDict_New()) ||
		 add_attr(tp, "_make", PyDescr_NewClassMethod(tp, &nt_make_def));
	for (PyMethodDef *m = nt_methods; !rc && m->ml_name; m++)
		rc = add_attr(tp, m->ml_name, PyDescr_NewMethod(tp, m));
	return rc;
}

int tp_types_init(void)
{
	tp_sample = PyStructSequence_NewType(&sample_desc);
	tp_frame = PyStructSequence_NewType(&frame_desc);
	tp_reader = (PyTypeObject *)PyType_FromSpec(&reader_spec);
	if (!tp_sample || !tp_frame || !tp_reader)
		return -1;
	return namedtuple_protocol(tp_sample, &sample_desc) ||
	       namedtuple_protocol(tp_frame, &frame_desc);
}

/* ---- open() and stacks() ---- */

/* The reader of open() and stacks(): src, from_ and the filters out of args/kw, the rest
 * reader options, opened on its input. */
static tp_reader_obj *open_reader(PyObject *args, PyObject *kw, const char *fname, int nogil)
{
	static const char *const names[] = { "src", "from_", "thread", "status", "from_us",
					      "to_us", "max_depth" };
	PyObject *v[7], *opts = NULL;
	if (tp_args(fname, args, kw, names, 7, 2, 1, v, &opts))
		return NULL;
	tp_reader_obj *ro = NULL;
	const char *fmt = tp_str_arg(fname, "from_", v[1], NULL);
	if ((fmt || !PyErr_Occurred()) && (ro = tp_reader_make(v[0], fmt, fname)) &&
	    (tp_reader_filters(ro, fname, v + 2) || tp_reader_options(ro, opts, fname)))
		Py_CLEAR(ro);
	Py_DECREF(opts);
	if (!ro)
		return NULL;
	int rc;
	if (nogil) {
		Py_BEGIN_ALLOW_THREADS
		rc = tp_reader_attach(ro);
		Py_END_ALLOW_THREADS
	} else {
		rc = tp_reader_attach(ro);
	}
	if (tp_warn_flush(&ro->warn, ro->name) || (rc < 0 && !tp_reader_raise(ro, rc))) {
		Py_DECREF(ro);
		return NULL;
	}
	return ro;
}

PyObject *tp_open(PyObject *self, PyObject *args, PyObject *kw)
{
	return (PyObject *)open_reader(args, kw, "open", 0);
}

/* (thread, stack) -> count: entries in first-met order, an open-addressed index of them. */
struct agg_ent {
	uint64_t tid, count;
	size_t off;
	uint32_t depth;
};
struct agg {
	struct agg_ent *ents;
	size_t n, cap;
	size_t *slots; /* entry index + 1; 0 empty */
	uint64_t *hashes;
	size_t nslots;
	uint32_t *ids;
	size_t nids, idcap;
};

static uint64_t stack_hash(uint64_t tid, const uint32_t *f, uint32_t depth)
{
	uint64_t h = tid * 0x9E3779B97F4A7C15ull ^ depth;
	for (uint32_t i = 0; i < depth; i++)
		h = (h ^ f[i]) * 0x100000001B3ull;
	h ^= h >> 31;
	h *= 0xBF58476D1CE4E5B9ull;
	return h ^ (h >> 29);
}

static int agg_rehash(struct agg *a)
{
	size_t n = a->nslots ? a->nslots * 2 : 1024;
	size_t *s = calloc(n, sizeof(*s));
	if (!s)
		return -1;
	for (size_t i = 0; i < a->n; i++) {
		size_t j = a->hashes[i] & (n - 1);
		while (s[j])
			j = (j + 1) & (n - 1);
		s[j] = i + 1;
	}
	free(a->slots);
	a->slots = s;
	a->nslots = n;
	return 0;
}

/* The entry of (tid, stack), added when new; SIZE_MAX when out of memory. */
static size_t agg_find(struct agg *a, uint64_t tid, const uint32_t *f, uint32_t depth)
{
	if (2 * (a->n + 1) > a->nslots && agg_rehash(a))
		return SIZE_MAX;
	uint64_t h = stack_hash(tid, f, depth);
	size_t j = h & (a->nslots - 1);
	for (; a->slots[j]; j = (j + 1) & (a->nslots - 1)) {
		const struct agg_ent *e = &a->ents[a->slots[j] - 1];
		if (a->hashes[a->slots[j] - 1] == h && e->tid == tid && e->depth == depth &&
		    (!depth || !memcmp(a->ids + e->off, f, depth * sizeof(uint32_t))))
			return a->slots[j] - 1;
	}
	if (a->n == a->cap) {
		size_t c = a->cap ? a->cap * 2 : 1024;
		struct agg_ent *e = realloc(a->ents, c * sizeof(*e));
		uint64_t *hs = e ? realloc(a->hashes, c * sizeof(*hs)) : NULL;
		if (e)
			a->ents = e;
		if (!hs)
			return SIZE_MAX;
		a->hashes = hs;
		a->cap = c;
	}
	if (a->nids + depth > a->idcap) {
		size_t c = a->idcap ? a->idcap : 4096;
		while (c < a->nids + depth)
			c *= 2;
		uint32_t *ids = realloc(a->ids, c * sizeof(*ids));
		if (!ids)
			return SIZE_MAX;
		a->ids = ids;
		a->idcap = c;
	}
	if (depth)
		memcpy(a->ids + a->nids, f, depth * sizeof(uint32_t));
	a->ents[a->n] = (struct agg_ent){ tid, 0, a->nids, depth };
	a->hashes[a->n] = h;
	a->nids += depth;
	a->slots[j] = ++a->n;
	return a->n - 1;
}

/* Every sample into a; TACH_EOF at the end, else the failure (-1 for a count overflow). */
static int agg_read(struct agg *a, struct tach_reader *r, struct tp_filter *f)
{
	const struct tach_sample *s;
	size_t last = SIZE_MAX;
	int rc;
	while ((rc = tp_filter_next(f, r, &s, NULL)) == TACH_OK) {
		const struct agg_ent *e = last == SIZE_MAX ? NULL : &a->ents[last];
		if (!e || e->tid != s->thread_id || e->depth != s->depth ||
		    (s->depth && memcmp(a->ids + e->off, s->frames, s->depth * sizeof(uint32_t))))
			last = agg_find(a, s->thread_id, s->frames, s->depth);
		if (last == SIZE_MAX)
			return TACH_E_NOMEM;
		if (__builtin_add_overflow(a->ents[last].count, s->weight, &a->ents[last].count))
			return -100;
	}
	return rc;
}

static PyObject *agg_dict(struct agg *a, tp_reader_obj *ro)
{
	PyObject *d = PyDict_New();
	for (size_t i = 0; d && i < a->n; i++) {
		const struct agg_ent *e = &a->ents[i];
		PyObject *fr = tp_frames_tuple(ro, a->ids + e->off, e->depth);
		PyObject *tid = fr ? PyLong_FromUnsignedLongLong(e->tid) : NULL;
		PyObject *key = tid ? PyTuple_Pack(2, tid, fr) : NULL;
		PyObject *cnt = key ? PyLong_FromUnsignedLongLong(e->count) : NULL;
		if (!cnt || PyDict_SetItem(d, key, cnt))
			Py_CLEAR(d);
		Py_XDECREF(fr);
		Py_XDECREF(tid);
		Py_XDECREF(key);
		Py_XDECREF(cnt);
	}
	return d;
}

PyObject *tp_stacks(PyObject *self, PyObject *args, PyObject *kw)
{
	tp_reader_obj *ro = open_reader(args, kw, "stacks", 1);
	if (!ro)
		return NULL;
	struct agg a;
	memset(&a, 0, sizeof(a));
	int rc;
	Py_BEGIN_ALLOW_THREADS
	rc = agg_read(&a, ro->r, &ro->filt);
	Py_END_ALLOW_THREADS
	PyObject *d = NULL;
	if (tp_warn_flush(&ro->warn, ro->name))
		;
	else if (rc == -100)
		tp_raise(TACH_E_LIMIT, ro->name, "a stack's count passes 2^64", 0, 0);
	else if (rc < 0)
		tp_reader_raise(ro, rc);
	else
		d = agg_dict(&a, ro);
	free(a.ents);
	free(a.hashes);
	free(a.slots);
	free(a.ids);
	Py_DECREF(ro);
	return d;
}
