/* tachfmt.convert and tachfmt.write: a writer into a path (through a temporary file renamed
 * on success, as the programs' -o), or into memory returned as bytes or handed to a file
 * object's write().
 *
 * convert sets what the programs set: --max-samples' default for the outputs that store
 * every sample (tach, samples, gecko, sampler), pprof input's samples of weight 0 for pprof
 * output, and tach2flamegraph's settings for folded input, so that the same options give
 * the same bytes as the program; and it hands on each sample's values and labels.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "tachfmt_py.h"

/* ---- outputs ---- */

struct out {
	int fd;
	int in_place;       /* a device or FIFO named as dst: written where it is */
	char *tmp, *path;   /* a regular file: the temporary beside it, and its name */
	PyObject *fileobj;  /* borrowed: a file object to hand the bytes to */
	PyObject *name;     /* for messages */
};

static int out_path(struct out *o, PyObject *dst)
{
	PyObject *p = PyOS_FSPath(dst);
	PyObject *enc = p && PyUnicode_Check(p) ? PyUnicode_EncodeFSDefault(p) : Py_XNewRef(p);
	o->name = p ? PyObject_Str(p) : NULL;
	Py_XDECREF(p);
	if (!enc || !o->name) {
		Py_XDECREF(enc);
		return -1;
	}
	const char *path = PyBytes_AsString(enc);
	struct stat st;
	int rc = -1;
	if (stat(path, &st) == 0 && !S_ISREG(st.st_mode)) {
		o->fd = S_ISDIR(st.st_mode) ? (errno = EISDIR, -1) : open(path, O_WRONLY | O_CLOEXEC);
		o->in_place = 1;
	} else if ((o->path = strdup(path)) && (o->tmp = malloc(strlen(path) + 8))) {
		sprintf(o->tmp, "%s.XXXXXX", path);
		o->fd = mkstemp(o->tmp);
		if (o->fd >= 0) {
			mode_t um = umask(0);
			umask(um);
			fchmod(o->fd, 0666 & ~um);
		}
	} else {
		errno = ENOMEM;
	}
	if (o->fd >= 0)
		rc = 0;
	else
		PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, o->name);
	Py_DECREF(enc);
	return rc;
}

/* dst: None (return the bytes), a path, or an object with write(). */
static int out_open(struct out *o, PyObject *dst)
{
	memset(o, 0, sizeof(*o));
	o->fd = -1;
	if (dst != Py_None && (PyUnicode_Check(dst) || PyObject_HasAttrString(dst, "__fspath__")))
		return out_path(o, dst);
	if (dst != Py_None && !PyObject_HasAttrString(dst, "write")) {
		PyErr_Format(PyExc_TypeError, "dst is a path, a binary file or None, not %S",
			     (PyObject *)Py_TYPE(dst));
		return -1;
	}
	o->fileobj = dst == Py_None ? NULL : dst;
	o->name = PyUnicode_FromString(dst == Py_None ? "<bytes>" : "<file>");
	if (!o->name)
		return -1;
	/* A writer may seek back (TACH's header comes last): memory that is a file. */
	o->fd = memfd_create("tachfmt", MFD_CLOEXEC);
	if (o->fd < 0) {
		PyErr_SetFromErrno(PyExc_OSError);
		return -1;
	}
	return 0;
}

static PyObject *out_bytes(struct out *o)
{
	struct stat st;
	if (fstat(o->fd, &st))
		return PyErr_SetFromErrno(PyExc_OSError);
	PyObject *b = PyBytes_FromStringAndSize(NULL, st.st_size);
	if (!b)
		return NULL;
	char *p = PyBytes_AsString(b);
	for (off_t got = 0; got < st.st_size;) {
		ssize_t k = pread(o->fd, p + got, (size_t)(st.st_size - got), got);
		if (k <= 0) {
			Py_DECREF(b);
			return k < 0 ? PyErr_SetFromErrno(PyExc_OSError)
				     : PyErr_Format(PyExc_OSError, "output shrank while read back");
		}
		got += k;
	}
	return b;
}

/* Finishes the output; ok 0 drops it. Returns the bytes (dst None), None, or NULL. */
static PyObject *out_finish(struct out *o, int ok)
{
	PyObject *ret = NULL;
	if (ok && (o->path || o->in_place)) {
		if (close(o->fd) || (o->path && rename(o->tmp, o->path)))
			PyErr_SetFromErrnoWithFilenameObject(PyExc_OSError, o->name);
		else
			ret = Py_NewRef(Py_None);
		o->fd = -1;
	} else if (ok) {
		PyObject *b = out_bytes(o);
		if (b && o->fileobj) {
			PyObject *r = PyObject_CallMethod(o->fileobj, "write", "O", b);
			ret = r ? Py_NewRef(Py_None) : NULL;
			Py_XDECREF(r);
			Py_DECREF(b);
		} else {
			ret = b;
		}
	}
	if (o->fd >= 0)
		close(o->fd);
	if (o->tmp && !ret)
		unlink(o->tmp);
	free(o->tmp);
	free(o->path);
	Py_XDECREF(o->name);
	return ret;
}

/* ---- options ---- */

static int writable(const char *fname, const char *to)
{
	const char *name;
	int wr;
	for (size_t i = 0; (name = tach_format_name(i, NULL, &wr)); i++)
		if (wr && !strcmp(name, to))
			return 1;
	char list[512];
	tp_raise_arg(fname, "to", TACH_E_USAGE, "unknown output format '%s' (the formats written: "
		     "%s)", to, tp_format_list(1, list, sizeof(list)));
	return 0;
}

static int user_set(PyObject *opts, const char *key)
{
	PyObject *k, *v;
	Py_ssize_t i = 0;
	char buf[64];
	/* a key too long to be one is left for route_options to refuse */
	while (opts && PyDict_Next(opts, &i, &k, &v)) {
		if (tp_option_key("", k, buf, sizeof(buf)))
			PyErr_Clear();
		else if (!strcmp(buf, key))
			return 1;
	}
	return 0;
}

/* Does a fresh writer of format to take key=value? 1 yes, 0 it has no such option, -1 the
 * value is wrong (msg: the writer's words, in a buffer of 256). A failed set leaves a
 * handle failed, so each is tried on a scratch one first. */
static int writer_takes(const char *to, const char *key, const char *val, char *msg)
{
	struct tach_writer *w = tach_writer_new(to);
	if (!w)
		return -2;
	int rc = tach_writer_set_option(w, key, val), ret = 1;
	if (rc) {
		const char *m = tach_writer_error(w);
		snprintf(msg, 256, "%s", m ? m : tach_strerror(rc));
		ret = tp_unknown_option(m) ? 0 : -1;
	}
	tach_writer_free(w);
	return ret;
}

/* **options of convert: the writer's when it knows the key, else the reader's; a key
 * neither knows is a TypeError, a value the one that knows it refuses a tachfmt.Error. */
static int route_options(struct tach_writer *w, tp_reader_obj *ro, const char *to,
			 PyObject *opts)
{
	PyObject *k, *v;
	Py_ssize_t i = 0;
	while (PyDict_Next(opts, &i, &k, &v)) {
		char key[64], msg[256];
		PyObject *tmp;
		const char *val;
		if (tp_option_key("convert", k, key, sizeof(key)) ||
		    !(val = tp_option_text("convert", k, v, &tmp)))
			return -1;
		int t = writer_takes(to, key, val, msg), rc = 0;
		if (t == -2)
			PyErr_NoMemory();
		else if (t == -1)
			tp_option_error("convert", k, msg);
		else if (t == 1 && tach_writer_set_option(w, key, val))
			tp_option_error("convert", k, tach_writer_error(w));
		else if (t == 0 && tach_reader_set_option(ro->r, key, val))
			tp_option_error("convert", k, tach_reader_error(ro->r, NULL, NULL));
		else
			rc = 1;
		Py_XDECREF(tmp);
		if (!rc)
			return -1;
	}
	return 0;
}

/* What the programs set before the user's options (runner.c: default_max_samples, and
 * tach2flamegraph's reader settings for folded input). */
static int program_defaults(tp_reader_obj *ro, const char *to, const char *from, PyObject *opts)
{
	/* TACH keeps a weight as one record, up to its header's count; the others store
	 * every sample and stop at 10^8 (runner.h, TC_MAX_SAMPLES_OPT) */
	static const char *const storing[][2] = {
		{ "tach", "4294967295" }, { "samples", "100000000" }, { "gecko", "100000000" },
		{ "sampler", "100000000" },
	};
	for (size_t i = 0; i < sizeof(storing) / sizeof(storing[0]); i++)
		if (!strcmp(to, storing[i][0]) && !user_set(opts, "max-samples") &&
		    tach_reader_set_option(ro->r, "max-samples", storing[i][1]))
			return -1;
	/* pprof output keeps every sample type: a sample with none of the weight's type still
	 * has the others' values (as the programs read pprof for pprof output) */
	if (!strcmp(to, "pprof") && (!strcmp(from, "auto") || !strcmp(from, "pprof")) &&
	    !user_set(opts, "zero-weight") &&
	    tach_reader_set_option(ro->r, "zero-weight", "yes"))
		return -1;
	static const char *const folded[][2] = {
		{ "labels", "raw" }, { "keep-thread-frames", "yes" }, { "diff", "both" },
		{ "count-unit", "samples" },
	};
	if (strcmp(to, "flamegraph") || (strcmp(from, "auto") && strcmp(from, "collapsed")))
		return 0;
	for (size_t i = 0; i < sizeof(folded) / sizeof(folded[0]); i++)
		if (!user_set(opts, folded[i][0]) &&
		    tach_reader_set_option(ro->r, folded[i][0], folded[i][1]))
			return -1;
	return 0;
}

/* ---- convert ---- */

/* The conversion, GIL released: 0, or the failing status with *side 'r' or 'w'. */
static int convert_run(tp_reader_obj *ro, struct tach_writer *w, int fd, int folded_w, char *side)
{
	*side = 'r';
	int rc = tp_reader_attach(ro);
	if (rc < 0)
		return rc;
	const char *f = tach_reader_format(ro->r);
	*side = 'w';
	if (folded_w && f && !strcmp(f, "collapsed") &&
	    (rc = tach_writer_set_option(w, "thread-frames", "no")))
		return rc;
	const struct tach_sample *s;
	const struct tach_sample_ext *ext;
	*side = 'r';
	if ((rc = tp_filter_next(&ro->filt, ro->r, &s, &ext)) < 0)
		return rc;
	*side = 'w';
	/* the writer's status apart: rc may be TACH_EOF already (an empty input) */
	int wrc;
	if ((wrc = tach_writer_open_fd(w, fd)) || (wrc = tach_writer_set_meta(w, tach_reader_meta(ro->r))))
		return wrc;
	while (rc == TACH_OK) {
		if ((wrc = tach_writer_put_ext(w, tach_reader_dict(ro->r), s, ext)))
			return wrc;
		rc = tp_filter_next(&ro->filt, ro->r, &s, &ext);
	}
	*side = 'r';
	if (rc < 0)
		return rc;
	*side = 'w';
	return tach_writer_close(w);
}

/* convert's arguments, in its signature's order. */
enum { C_SRC, C_DST, C_TO, C_FROM, C_ROPTS, C_FILTERS, C_N = C_FILTERS + 5 };

/* The reader and writer of a conversion, set as the program sets them, then as asked. */
static int convert_setup(tp_reader_obj *ro, struct tach_writer *w, PyObject **v,
			 const char *to, const char *from, PyObject *opts)
{
	if (program_defaults(ro, to, from, opts)) {
		tp_reader_raise(ro, TACH_E_USAGE);
		return -1;
	}
	if (tp_reader_filters(ro, "convert", v + C_FILTERS))
		return -1;
	if (v[C_ROPTS] && v[C_ROPTS] != Py_None && tp_reader_options(ro, v[C_ROPTS], "convert"))
		return -1;
	if (route_options(w, ro, to, opts))
		return -1;
	return 0;
}

static PyObject *convert_with(PyObject **v, const char *to, const char *from, PyObject *opts)
{
	tp_reader_obj *ro = tp_reader_make(v[C_SRC], from, "convert");
	struct tach_writer *w = ro ? tach_writer_new(to) : NULL;
	struct out o;
	PyObject *ret = NULL;
	if (!ro)
		return NULL;
	if (!w) {
		PyErr_NoMemory();
		goto done;
	}
	if (convert_setup(ro, w, v, to, from, opts) || out_open(&o, v[C_DST] ? v[C_DST] : Py_None))
		goto done;
	tach_writer_set_warn(w, tp_warn_cb, &ro->warn);
	int folded_w = !strcmp(to, "flamegraph") && !user_set(opts, "thread-frames");
	char side;
	int rc, ok = 0;
	Py_BEGIN_ALLOW_THREADS
	rc = convert_run(ro, w, o.fd, folded_w, &side);
	Py_END_ALLOW_THREADS
	if (tp_warn_flush(&ro->warn, ro->name))
		;
	else if (rc && side == 'r')
		tp_reader_raise(ro, rc);
	else if (rc)
		tp_raise(rc, o.name, tach_writer_error(w), 0, 0);
	else
		ok = 1;
	ret = out_finish(&o, ok);
done:
	tach_writer_free(w);
	Py_XDECREF((PyObject *)ro);
	return ret;
}

PyObject *tp_convert(PyObject *self, PyObject *args, PyObject *kw)
{
	static const char *const names[C_N] = { "src", "dst", "to", "from_", "reader_options",
		"thread", "status", "from_us", "to_us", "max_depth" };
	PyObject *v[C_N], *opts = NULL, *ret = NULL;
	if (tp_args("convert", args, kw, names, C_N, C_FILTERS, 1, v, &opts))
		return NULL;
	const char *to = tp_str_arg("convert", "to", v[C_TO], "pprof");
	const char *from = to ? tp_str_arg("convert", "from_", v[C_FROM], "auto") : NULL;
	PyObject *ro = v[C_ROPTS];
	if (!to || !from)
		;
	else if (ro && ro != Py_None && !PyDict_Check(ro))
		PyErr_SetString(PyExc_TypeError, "convert() argument 'reader_options' must be a dict");
	else if (writable("convert", to))
		ret = convert_with(v, to, from, opts);
	Py_DECREF(opts);
	return ret;
}

/* ---- write ---- */

/* Frames from Python to dict ids: Frame objects by identity (two rows may show the same
 * (file, function, line) and differ in their other fields), other tuples by value. */
struct wctx {
	struct tach_dict *d;
	PyObject *by_value;  /* tuple -> id */
	PyObject *by_obj;    /* Frame -> id, keyed on the object's address */
	PyObject *strings;   /* str -> id */
	uint32_t *frames;
	size_t cap;
	size_t index;        /* of the sample, for messages */
	/* the sample being put: whether it has a time_ns, and its values */
	int has_time;
	int64_t *vals;
	uint32_t nvals, vals_cap;
	/* the header, set at the first sample (whose time_ns decides sample_time when the
	 * caller's meta does not say) or at the end */
	struct tach_meta *meta;
	int time_given, meta_set;
};

static int intern_str(struct wctx *c, PyObject *s, uint32_t *id)
{
	PyObject *v = PyDict_GetItemWithError(c->strings, s);
	if (v) {
		*id = (uint32_t)PyLong_AsUnsignedLong(v);
		return 0;
	}
	if (PyErr_Occurred())
		return -1;
	PyObject *b = PyUnicode_Check(s) ? PyUnicode_AsEncodedString(s, "utf-8", "surrogateescape")
		      : PyBytes_Check(s) ? Py_NewRef(s) : NULL;
	if (!b) {
		if (!PyErr_Occurred())
			PyErr_Format(PyExc_TypeError, "file and function are str, not %S",
				     (PyObject *)Py_TYPE(s));
		return -1;
	}
	int rc = tach_dict_intern_string(c->d, PyBytes_AsString(b), (size_t)PyBytes_Size(b), id);
	Py_DECREF(b);
	if (rc)
		return rc == TACH_E_NOMEM ? (PyErr_NoMemory(), -1)
			: (tp_raise_arg("write", NULL, rc, "cannot intern a string"), -1);
	PyObject *idv = PyLong_FromUnsignedLong(*id);
	rc = idv ? PyDict_SetItem(c->strings, s, idv) : -1;
	Py_XDECREF(idv);
	return rc;
}

/* A frame's number field name of sample index: None (none), or an int in lo..hi. */
static int int_field(size_t index, const char *name, PyObject *v, int32_t none, long lo, long hi,
		     int32_t *out)
{
	if (v == Py_None) {
		*out = none;
		return 0;
	}
	if (!PyLong_Check(v)) {
		PyObject *tn = PyType_GetName(Py_TYPE(v));
		PyErr_Format(PyExc_TypeError, "write(): sample %zu: frame %s must be an int or None, "
			     "not %S", index, name, tn ? tn : Py_None);
		Py_XDECREF(tn);
		return -1;
	}
	long x = PyLong_AsLong(v);
	if ((x == -1 && PyErr_Occurred()) || x < lo || x > hi) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "write(): sample %zu: frame %s is %R, not in %ld..%ld",
			     index, name, v, lo, hi);
		return -1;
	}
	*out = (int32_t)x;
	return 0;
}

/* A frame's fields: a Frame (all seven), or a sequence of 3 (file, function, line) or 7. */
static int frame_fields(struct wctx *c, PyObject *o, struct tach_frame *f)
{
	PyObject *t = PyObject_TypeCheck(o, tp_frame) ? NULL : PySequence_Tuple(o);
	Py_ssize_t n = t ? PyTuple_Size(t) : 7;
	if (!t && !PyObject_TypeCheck(o, tp_frame))
		return -1;
	if (n != 3 && n != 7) {
		Py_DECREF(t);
		PyErr_SetString(PyExc_ValueError, "a frame is (file, function, line) or 7 fields");
		return -1;
	}
	PyObject *v[7];
	for (Py_ssize_t i = 0; i < n; i++)
		v[i] = t ? PyTuple_GetItem(t, i) : PyStructSequence_GetItem(o, i);
	int32_t op = TACH_NO_OPCODE;
	int rc = intern_str(c, v[0], &f->file) || intern_str(c, v[1], &f->func) ||
		 int_field(c->index, "line", v[2], -1, INT32_MIN, INT32_MAX, &f->line);
	f->end_line = f->line;
	f->col = f->end_col = -1;
	if (!rc && n == 7)
		rc = int_field(c->index, "end_line", v[3], -1, INT32_MIN, INT32_MAX, &f->end_line) ||
		     int_field(c->index, "col", v[4], -1, INT32_MIN, INT32_MAX, &f->col) ||
		     int_field(c->index, "end_col", v[5], -1, INT32_MIN, INT32_MAX, &f->end_col) ||
		     int_field(c->index, "opcode", v[6], TACH_NO_OPCODE, 0, 255, &op);
	f->opcode = (uint8_t)op;
	Py_XDECREF(t);
	return rc ? -1 : 0;
}

static int frame_id(struct wctx *c, PyObject *o, uint32_t *id)
{
	int is_frame = PyObject_TypeCheck(o, tp_frame);
	PyObject *key = is_frame ? PyLong_FromVoidPtr(o) : Py_NewRef(o);
	PyObject *cache = is_frame ? c->by_obj : c->by_value;
	PyObject *v = key ? PyDict_GetItemWithError(cache, key) : NULL;
	int rc = -1;
	if (v) {
		*id = (uint32_t)PyLong_AsUnsignedLong(is_frame ? PyTuple_GetItem(v, 0) : v);
		rc = 0;
	} else if (key && !PyErr_Occurred()) {
		struct tach_frame f;
		if (!frame_fields(c, o, &f)) {
			int lrc = tach_dict_intern_frame(c->d, &f, id);
			PyObject *idv = lrc ? NULL : PyLong_FromUnsignedLong(*id);
			if (lrc)
				lrc == TACH_E_NOMEM ? PyErr_NoMemory()
						    : tp_raise_arg("write", NULL, lrc, "cannot intern a frame");
			/* A Frame is kept beside its id: its address stays its own. */
			PyObject *val = idv && is_frame ? PyTuple_Pack(2, idv, o) : Py_XNewRef(idv);
			rc = val && !PyDict_SetItem(cache, key, val) ? 0 : -1;
			Py_XDECREF(val);
			Py_XDECREF(idv);
		}
	}
	Py_XDECREF(key);
	return rc;
}

/* An int field of what the caller gave (where: "sample 3: " or "meta "), up to max. */
static int u64_field(const char *where, const char *name, PyObject *v, uint64_t max,
		     uint64_t *out)
{
	if (!PyLong_Check(v)) {
		PyObject *tn = PyType_GetName(Py_TYPE(v));
		PyErr_Format(PyExc_TypeError, "write(): %s%s must be an int, not %S", where, name,
			     tn ? tn : Py_None);
		Py_XDECREF(tn);
		return -1;
	}
	unsigned long long x = PyLong_AsUnsignedLongLong(v);
	if ((x == (unsigned long long)-1 && PyErr_Occurred()) || x > max) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "write(): %s%s is %R, not in 0..%llu", where, name, v,
			     (unsigned long long)max);
		return -1;
	}
	*out = x;
	return 0;
}

/* A sample's values (a sequence of ints, one per meta value_types) into c->vals. */
static int values_of(struct wctx *c, const char *where, PyObject *v)
{
	c->nvals = 0;
	if (v == Py_None)
		return 0;
	PyObject *t = PySequence_Tuple(v);
	if (!t)
		return -1;
	Py_ssize_t n = PyTuple_Size(t);
	if (n > (Py_ssize_t)c->vals_cap) {
		int64_t *p = n > (Py_ssize_t)UINT32_MAX ? NULL
			     : realloc(c->vals, (size_t)n * sizeof(*p));
		if (!p) {
			Py_DECREF(t);
			PyErr_NoMemory();
			return -1;
		}
		c->vals = p;
		c->vals_cap = (uint32_t)n;
	}
	int rc = 0;
	for (Py_ssize_t i = 0; i < n && !rc; i++) {
		PyObject *x = PyTuple_GetItem(t, i);
		int over = 0;
		long long y = PyLong_Check(x) ? PyLong_AsLongLongAndOverflow(x, &over) : 0;
		if (!PyLong_Check(x) || over || (y == -1 && PyErr_Occurred())) {
			PyErr_Clear();
			PyErr_Format(PyExc_ValueError, "write(): %svalues[%zd] is %R, not a 64-bit "
				     "int", where, i, x);
			rc = -1;
		}
		c->vals[i] = y;
	}
	Py_DECREF(t);
	c->nvals = (uint32_t)n;
	return rc;
}

/* The time and values of a sample (v[6], v[7] where given; NULL: none). */
static int time_values_of(struct wctx *c, const char *where, PyObject *tv, PyObject *vv,
			  struct tach_sample *s)
{
	c->has_time = tv && tv != Py_None;
	if (c->has_time && u64_field(where, "time_ns", tv, UINT64_MAX, &s->time_ns))
		return -1;
	c->nvals = 0;
	return vv ? values_of(c, where, vv) : 0;
}

/* One sample from Python: a Sample (weight, time_ns and values from its attributes) or a
 * sequence (tid, interpreter, timestamp_us, status, frames[, weight[, time_ns[, values]]]). */
static int sample_of(struct wctx *c, PyObject *o, struct tach_sample *s)
{
	int is_sample = PyObject_TypeCheck(o, tp_sample);
	PyObject *t = is_sample ? NULL : PySequence_Tuple(o);
	if (!is_sample && !t)
		return -1;
	Py_ssize_t n = t ? PyTuple_Size(t) : 8;
	if (n < 5 || n > 8) {
		Py_DECREF(t);
		PyErr_Format(PyExc_ValueError, "write(): sample %zu has %zd items, not (tid, "
			     "interpreter, timestamp_us, status, frames[, weight[, time_ns[, "
			     "values]]])", c->index, n);
		return -1;
	}
	PyObject *v[8] = { NULL };
	for (Py_ssize_t i = 0; i < n; i++)
		v[i] = t ? PyTuple_GetItem(t, i) : PyStructSequence_GetItem(o, i);
	uint64_t interp, status, w = 1;
	char where[48];
	snprintf(where, sizeof(where), "sample %zu: ", c->index);
	s->time_ns = 0;
	int rc = u64_field(where, "tid", v[0], UINT64_MAX, &s->thread_id) ||
		 u64_field(where, "interpreter", v[1], UINT32_MAX, &interp) ||
		 u64_field(where, "timestamp_us", v[2], UINT64_MAX, &s->timestamp_us) ||
		 u64_field(where, "status", v[3], 255, &status) ||
		 (n >= 6 && u64_field(where, "weight", v[5], UINT64_MAX, &w)) ||
		 time_values_of(c, where, v[6], v[7], s);
	/* 0 stands for no sample, only values (a pprof sample with none of the weight's type,
	 * as Reader gives it with zero_weight) */
	if (!rc && w == 0 && !c->nvals) {
		PyErr_Format(PyExc_ValueError, "write(): %sweight is 0, not at least 1 (0 only "
			     "with values)", where);
		rc = 1;
	}
	PyObject *fr = rc ? NULL : PySequence_Tuple(v[4]);
	Py_XDECREF(t);
	if (!fr)
		return -1;
	Py_ssize_t depth = PyTuple_Size(fr);
	if ((size_t)depth > c->cap) {
		uint32_t *nf = realloc(c->frames, (size_t)depth * sizeof(uint32_t));
		if (!nf) {
			Py_DECREF(fr);
			PyErr_NoMemory();
			return -1;
		}
		c->frames = nf;
		c->cap = (size_t)depth;
	}
	for (Py_ssize_t i = 0; i < depth && !rc; i++)
		rc = frame_id(c, PyTuple_GetItem(fr, i), &c->frames[i]);
	Py_DECREF(fr);
	*s = (struct tach_sample){ .thread_id = s->thread_id, .timestamp_us = s->timestamp_us,
		.weight = w, .interp_id = (uint32_t)interp, .status = (uint8_t)status,
		.depth = (uint32_t)depth, .frames = c->frames, .time_ns = s->time_ns };
	return rc ? -1 : 0;
}

/* The keys of Reader.meta; those after interval_us describe the input (or, like
 * compression, are an option's default) and have no place in the header the writer makes. */
static const char *const meta_keys[] = {
	"start_time_us", "interval_us", "profiling_config", "record_order", "program",
	"python_version", "sample_time", "value_types", "weight_type", "default_type",
	"weight_unit", "format", "thread_count", "format_version", "sample_count",
	"compression", "layout", "byte_order", NULL,
};

static int meta_known(PyObject *d)
{
	PyObject *k, *v;
	Py_ssize_t i = 0;
	while (PyDict_Next(d, &i, &k, &v)) {
		size_t j = 0;
		while (meta_keys[j] && (!PyUnicode_Check(k) ||
					PyUnicode_CompareWithASCIIString(k, meta_keys[j])))
			j++;
		if (!meta_keys[j]) {
			PyErr_Format(PyExc_ValueError, "write(): unknown meta key %R (the keys of "
				     "Reader.meta: start_time_us, interval_us, profiling_config, "
				     "record_order, program, python_version, sample_time, "
				     "value_types, ...)", k);
			return -1;
		}
	}
	return 0;
}

/* A str of meta (or None: NULL) as UTF-8, valid while meta holds it (the writer copies
 * the header's strings at set_meta). */
static int meta_str(PyObject *v, const char *name, const char **out)
{
	*out = NULL;
	if (!v || v == Py_None)
		return 0;
	if (!PyUnicode_Check(v)) {
		PyErr_Format(PyExc_TypeError, "write(): meta %s must be a str or None", name);
		return -1;
	}
	return (*out = PyUnicode_AsUTF8AndSize(v, NULL)) ? 0 : -1;
}

/* meta value_types, a sequence of (type, unit) str pairs, into m (the array in *types, for
 * the caller to free, and their tuple in *keep, to release after set_meta), with
 * weight_type, default_type (indexes) and weight_unit. */
static int meta_types(PyObject *d, struct tach_meta *m, struct tach_value_type **types,
		      PyObject **keep)
{
	PyObject *v = PyDict_GetItemString(d, "value_types");
	PyObject *t = v && v != Py_None ? PySequence_Tuple(v) : NULL;
	if (!t)
		return v && v != Py_None ? -1 : 0;
	*keep = t; /* holds the strings until the writer has copied them */
	Py_ssize_t n = PyTuple_Size(t);
	*types = n ? calloc((size_t)n, sizeof(**types)) : NULL;
	int rc = n && !*types ? (PyErr_NoMemory(), -1) : 0;
	for (Py_ssize_t i = 0; i < n && !rc; i++) {
		PyObject *p = PyTuple_GetItem(t, i);
		if (!PyTuple_Check(p) || PyTuple_Size(p) != 2 ||
		    !PyUnicode_Check(PyTuple_GetItem(p, 0)) || !PyUnicode_Check(PyTuple_GetItem(p, 1))) {
			PyErr_Format(PyExc_ValueError, "write(): meta value_types[%zd] is %R, not a "
				     "(type, unit) pair of str", i, p);
			rc = -1;
		} else {
			rc = meta_str(PyTuple_GetItem(p, 0), "value type", &(*types)[i].type) ||
			     meta_str(PyTuple_GetItem(p, 1), "value unit", &(*types)[i].unit);
		}
	}
	if (rc || !n)
		return rc;
	m->value_type_count = (uint32_t)n;
	m->value_types = *types;
	uint64_t x;
	if ((v = PyDict_GetItemString(d, "weight_type")) &&
	    u64_field("meta ", "weight_type", v, (uint64_t)n - 1, &x))
		return -1;
	m->weight_type = v ? (uint32_t)x : 0;
	if ((v = PyDict_GetItemString(d, "default_type")) && v != Py_None &&
	    u64_field("meta ", "default_type", v, (uint64_t)n - 1, &x))
		return -1;
	m->default_type = v && v != Py_None ? (uint32_t)x + 1 : 0;
	return meta_str(PyDict_GetItemString(d, "weight_unit"), "weight_unit", &m->weight_unit);
}

/* The meta dict (as Reader.meta gives it) into m, and what it says of a TACH file's (its
 * record order) into file; *time_given: it says sample_time. */
static int meta_of(PyObject *d, struct tach_meta *m, struct tach_file_info *file,
		   const char **prog_name, struct tach_value_type **types, PyObject **keep,
		   int *time_given)
{
	static const struct tach_meta init = TACH_META_INIT;
	*m = init;
	*time_given = 0;
	if (!d || d == Py_None)
		return 0;
	if (meta_known(d))
		return -1;
	PyObject *v;
	uint64_t x;
	if ((v = PyDict_GetItemString(d, "start_time_us")) &&
	    u64_field("meta ", "start_time_us", v, UINT64_MAX, &m->start_time_us))
		return -1;
	if ((v = PyDict_GetItemString(d, "interval_us")) &&
	    u64_field("meta ", "interval_us", v, UINT64_MAX, &m->interval_us))
		return -1;
	if ((v = PyDict_GetItemString(d, "profiling_config")) &&
	    u64_field("meta ", "profiling_config", v, UINT32_MAX, &x))
		return -1;
	m->profiling_config = v ? (uint32_t)x : 0;
	if ((v = PyDict_GetItemString(d, "record_order"))) {
		file->record_order = PyObject_IsTrue(v) == 1;
		m->file = file;
	}
	if ((v = PyDict_GetItemString(d, "program")) && v != Py_None &&
	    !(*prog_name = tp_str_arg("write", "meta['program']", v, NULL)))
		return -1;
	m->program = *prog_name;
	if ((v = PyDict_GetItemString(d, "python_version")) && v != Py_None) {
		const char *s = PyUnicode_Check(v) ? PyUnicode_AsUTF8AndSize(v, NULL) : NULL;
		unsigned a, b, c;
		if (!s || sscanf(s, "%u.%u.%u", &a, &b, &c) != 3 || a > 255 || b > 255 || c > 255) {
			PyErr_Format(PyExc_ValueError, "write(): meta python_version is %R, not "
				     "'X.Y.Z'", v);
			return -1;
		}
		m->py_major = (uint8_t)a, m->py_minor = (uint8_t)b, m->py_micro = (uint8_t)c;
	}
	if ((v = PyDict_GetItemString(d, "sample_time"))) {
		*time_given = 1;
		m->sample_time = PyObject_IsTrue(v) == 1;
	}
	return meta_types(d, m, types, keep);
}

/* Writer options from the caller, then TACH's compression from meta when not given. */
static int write_options(struct tach_writer *w, const char *to, PyObject *opts, PyObject *meta)
{
	PyObject *k, *v;
	Py_ssize_t i = 0;
	while (PyDict_Next(opts, &i, &k, &v)) {
		char key[64];
		PyObject *tmp;
		const char *val;
		if (tp_option_key("write", k, key, sizeof(key)) ||
		    !(val = tp_option_text("write", k, v, &tmp)))
			return -1;
		int rc = tach_writer_set_option(w, key, val);
		Py_XDECREF(tmp);
		if (rc) {
			tp_option_error("write", k, tach_writer_error(w));
			return -1;
		}
	}
	PyObject *c = meta && PyDict_Check(meta) ? PyDict_GetItemString(meta, "compression") : NULL;
	if (strcmp(to, "tach") || user_set(opts, "compression") || !c || !PyUnicode_Check(c))
		return 0;
	const char *cv = PyUnicode_AsUTF8AndSize(c, NULL);
	if (!cv)
		return -1;
	int rc = tach_writer_set_option(w, "compression", cv);
	if (rc)
		tp_raise_arg("write", "meta", rc, "compression: %s", tach_writer_error(w));
	return rc ? -1 : 0;
}

/* The header, once: at the first sample (its time_ns says whether samples carry time,
 * unless the meta said) or at the end. */
static int set_meta(struct wctx *c, struct tach_writer *w, PyObject *outname)
{
	if (c->meta_set)
		return 0;
	c->meta_set = 1;
	if (!c->time_given)
		c->meta->sample_time = c->index == 0 ? 0 : (uint8_t)c->has_time;
	int rc = tach_writer_set_meta(w, c->meta);
	if (rc)
		tp_raise(rc, outname, tach_writer_error(w), 0, 0);
	return rc ? -1 : 0;
}

/* A sample's time and values agree with the header: every sample has a time_ns when it
 * says samples carry time, none when not, and values of its value_types or none. */
static int agrees(const struct wctx *c)
{
	const struct tach_meta *m = c->meta;
	size_t i = c->index - 1;
	if (c->has_time != m->sample_time) {
		PyErr_Format(PyExc_ValueError, c->has_time
			     ? "write(): sample %zu has a time_ns, but the samples carry no time "
			       "(meta sample_time False, or the first sample had none)"
			     : "write(): sample %zu has no time_ns, but the samples carry time (meta "
			       "sample_time True, or the first sample had one)", i);
		return -1;
	}
	if (c->nvals && c->nvals != m->value_type_count) {
		PyErr_Format(PyExc_ValueError, "write(): sample %zu has %u values, but meta "
			     "value_types has %u", i, c->nvals, m->value_type_count);
		return -1;
	}
	return 0;
}

static int write_samples(struct wctx *c, struct tach_writer *w, PyObject *samples,
			 PyObject *outname)
{
	PyObject *it = PyObject_GetIter(samples), *o;
	if (!it)
		return -1;
	int rc = 0;
	while (!rc && (o = PyIter_Next(it))) {
		struct tach_sample s;
		rc = sample_of(c, o, &s);
		c->index++;
		Py_DECREF(o);
		if (!rc)
			rc = set_meta(c, w, outname) || agrees(c);
		struct tach_sample_ext ext = TACH_SAMPLE_EXT_INIT;
		ext.value_count = c->nvals;
		ext.values = c->vals;
		int wrc = rc ? 0 : tach_writer_put_ext(w, c->d, &s, &ext);
		if (wrc) {
			tp_raise(wrc, outname, tach_writer_error(w), 0, 0);
			rc = -1;
		}
	}
	Py_DECREF(it);
	if (!rc && !PyErr_Occurred())
		rc = set_meta(c, w, outname);
	return rc || PyErr_Occurred() ? -1 : 0;
}

static PyObject *write_with(PyObject *dst, PyObject *samples, PyObject *meta, const char *to,
			    PyObject *opts)
{
	struct tach_meta m;
	struct wctx c = { .d = tach_dict_new(), .by_value = PyDict_New(), .by_obj = PyDict_New(),
			  .strings = PyDict_New(), .meta = &m };
	struct tach_writer *w = tach_writer_new(to);
	struct tach_file_info file = TACH_FILE_INFO_INIT;
	struct tach_value_type *types = NULL;
	const char *prog_name = NULL;
	struct out o;
	PyObject *ret = NULL, *keep = NULL;
	/* The header is set at the first sample, after the caller's iterator has run: a copy
	 * of meta holds its strings (the program's, weight_unit) until then, keep the value
	 * types'. */
	meta = meta && meta != Py_None ? PyDict_Copy(meta) : Py_NewRef(Py_None);
	if (!meta || !c.d || !c.by_value || !c.by_obj || !c.strings || !w) {
		PyErr_NoMemory();
	} else if (!meta_of(meta, &m, &file, &prog_name, &types, &keep, &c.time_given) &&
		   !out_open(&o, dst)) {
		int ok = 0, rc = 0;
		if (!write_options(w, to, opts, meta)) {
			if ((rc = tach_writer_open_fd(w, o.fd)))
				tp_raise(rc, o.name, tach_writer_error(w), 0, 0);
			else if (!write_samples(&c, w, samples, o.name) &&
				 (rc = tach_writer_close(w)))
				tp_raise(rc, o.name, tach_writer_error(w), 0, 0);
			else
				ok = !PyErr_Occurred();
		}
		ret = out_finish(&o, ok);
	}
	tach_writer_free(w);
	tach_dict_free(c.d);
	Py_XDECREF(c.by_value);
	Py_XDECREF(c.by_obj);
	Py_XDECREF(c.strings);
	free(c.frames);
	free(c.vals);
	free(types);
	Py_XDECREF(keep);
	Py_XDECREF(meta);
	return ret;
}

PyObject *tp_write(PyObject *self, PyObject *args, PyObject *kw)
{
	static const char *const names[] = { "dst", "samples", "meta", "to" };
	PyObject *v[4], *opts = NULL, *ret = NULL;
	if (tp_args("write", args, kw, names, 4, 4, 2, v, &opts))
		return NULL;
	const char *to = tp_str_arg("write", "to", v[3], "tach");
	if (!to)
		;
	else if (v[2] && v[2] != Py_None && !PyDict_Check(v[2]))
		PyErr_SetString(PyExc_TypeError, "write() argument 'meta' must be a dict or None");
	else if (writable("write", to))
		ret = write_with(v[0], v[1], v[2], to, opts);
	Py_DECREF(opts);
	return ret;
}
