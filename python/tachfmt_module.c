/* The tachfmt Python module: libtachfmt's readers and writers for Python, over the public
 * API (tachfmt.h) alone, built against CPython's limited API (3.11) so that one binary serves
 * every later CPython.
 *
 *   open(src, from_=None, **reader_options) -> Reader   (samples as named tuples, .meta)
 *   convert(src, dst=None, to="pprof", from_=None, reader_options=None, **options)
 *   stacks(src, from_=None, **reader_options) -> {(tid, frames): count}
 *   write(dst, samples, meta=None, to="tach", **options)
 *
 * A source is a path, a bytes-like object, or a binary file object (its descriptor when
 * fileno() works, else what read() returns). Errors are tachfmt.Error (a ValueError) with the
 * message the programs print, less the program's name: "FILE: offset N: what is wrong".
 * convert and stacks run without the GIL; the library's warnings are kept in C while it runs
 * and raised afterwards as tachfmt.Warning.
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tachfmt.h"
#include "tachfmt_py.h"

PyObject *tp_error, *tp_warning;
PyTypeObject *tp_sample, *tp_frame, *tp_reader;

/* ---- small helpers ---- */

/* An option value as the library takes it: True/False as yes/no, numbers as text. */
const char *tp_option_text(const char *fname, PyObject *key, PyObject *v, PyObject **tmp)
{
	*tmp = NULL;
	if (v == Py_True)
		return "yes";
	if (v == Py_False)
		return "no";
	if (PyUnicode_Check(v))
		return PyUnicode_AsUTF8AndSize(v, NULL);
	if (PyLong_Check(v) || PyFloat_Check(v)) {
		*tmp = PyObject_Str(v);
		return *tmp ? PyUnicode_AsUTF8AndSize(*tmp, NULL) : NULL;
	}
	PyObject *tn = PyType_GetName(Py_TYPE(v));
	PyErr_Format(PyExc_TypeError, "%s() argument '%U' must be str, int, float or bool, not %S",
		     fname, key, tn ? tn : Py_None);
	Py_XDECREF(tn);
	return NULL;
}

/* An option name as the library spells it: max_depth -> max-depth. */
int tp_option_key(const char *fname, PyObject *k, char *buf, size_t cap)
{
	Py_ssize_t n;
	const char *s = PyUnicode_AsUTF8AndSize(k, &n);
	if (!s)
		return -1;
	if ((size_t)n >= cap) {
		PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'", fname, k);
		return -1;
	}
	for (Py_ssize_t i = 0; i < n; i++)
		buf[i] = s[i] == '_' ? '-' : s[i];
	buf[n] = 0;
	return 0;
}

/* The formats' own words for a key they do not take ("pprof writer has no option KEY", the
 * auto reader's "no reader has option KEY"); any other failure is about the value. */
int tp_unknown_option(const char *msg)
{
	return msg && (strstr(msg, " has no option ") || strstr(msg, "no reader has option "));
}

PyObject *tp_option_error(const char *fname, PyObject *key, const char *msg)
{
	if (tp_unknown_option(msg))
		return PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
				    fname, key);
	PyObject *name = PyUnicode_FromFormat("%s() argument '%U'", fname, key);
	if (!name)
		return NULL;
	tp_raise(TACH_E_USAGE, name, msg, TACH_POS_NONE, 0);
	Py_DECREF(name);
	return NULL;
}

static int param_index(const char *const *names, int nnames, PyObject *k)
{
	for (int i = 0; i < nnames; i++)
		if (PyUnicode_CompareWithASCIIString(k, names[i]) == 0)
			return i;
	return -1;
}

int tp_args(const char *fname, PyObject *args, PyObject *kw, const char *const *names,
	    int nnames, int npos, int nreq, PyObject **vals, PyObject **rest)
{
	Py_ssize_t na = PyTuple_Size(args);
	if (na > npos) {
		PyErr_Format(PyExc_TypeError, "%s() takes at most %d positional argument%s (%zd given)",
			     fname, npos, npos == 1 ? "" : "s", na);
		return -1;
	}
	for (int i = 0; i < nnames; i++)
		vals[i] = i < na ? PyTuple_GetItem(args, i) : NULL;
	if (rest && !(*rest = PyDict_New()))
		return -1;
	PyObject *k, *v;
	Py_ssize_t pos = 0;
	while (kw && PyDict_Next(kw, &pos, &k, &v)) {
		int i = param_index(names, nnames, k);
		if (i >= 0 && vals[i]) {
			PyErr_Format(PyExc_TypeError, "%s() got multiple values for argument '%U'",
				     fname, k);
			goto fail;
		}
		if (i >= 0)
			vals[i] = v;
		else if (!rest) {
			PyErr_Format(PyExc_TypeError, "%s() got an unexpected keyword argument '%U'",
				     fname, k);
			goto fail;
		} else if (PyDict_SetItem(*rest, k, v)) {
			goto fail;
		}
	}
	for (int i = 0; i < nreq; i++)
		if (!vals[i]) {
			PyErr_Format(PyExc_TypeError, "%s() missing required argument '%s' (pos %d)",
				     fname, names[i], i + 1);
			goto fail;
		}
	return 0;
fail:
	if (rest)
		Py_CLEAR(*rest);
	return -1;
}

const char *tp_str_arg(const char *fname, const char *name, PyObject *v, const char *dflt)
{
	if (!v || v == Py_None)
		return dflt;
	if (PyUnicode_Check(v))
		return PyUnicode_AsUTF8AndSize(v, NULL);
	PyObject *tn = PyType_GetName(Py_TYPE(v));
	PyErr_Format(PyExc_TypeError, "%s() argument '%s' must be str or None, not %S", fname, name,
		     tn ? tn : Py_None);
	Py_XDECREF(tn);
	return NULL;
}

/* Raises tachfmt.Error("NAME: POSITION: MSG") with the parts as attributes; MemoryError for
 * an allocation failure. Returns NULL. */
PyObject *tp_raise(int code, PyObject *name, const char *msg, int kind, uint64_t pos)
{
	if (code == TACH_E_NOMEM)
		return PyErr_NoMemory();
	if (!msg)
		msg = tach_strerror(code);
	PyObject *text;
	unsigned long long p = (unsigned long long)pos;
	switch (kind) {
	case TACH_POS_OFFSET:
		text = PyUnicode_FromFormat("%S: offset %llu: %s", name, p, msg);
		break;
	case TACH_POS_LINE:
		text = PyUnicode_FromFormat("%S:%llu: %s", name, p, msg);
		break;
	case TACH_POS_RECORD:
		text = PyUnicode_FromFormat("%S: record %llu: %s", name, p, msg);
		break;
	default:
		text = PyUnicode_FromFormat("%S: %s", name, msg);
	}
	if (!text)
		return NULL;
	PyObject *exc = PyObject_CallFunctionObjArgs(tp_error, text, NULL);
	Py_DECREF(text);
	if (!exc)
		return NULL;
	static const char *const kinds[] = { NULL, "offset", "line", "record" };
	const char *k = kind > 0 && kind < 4 ? kinds[kind] : NULL;
	PyObject *reason = PyUnicode_DecodeUTF8(msg, (Py_ssize_t)strlen(msg), "replace");
	PyObject *posv = k ? PyLong_FromUnsignedLongLong(pos) : Py_NewRef(Py_None);
	PyObject *kindv = k ? PyUnicode_FromString(k) : Py_NewRef(Py_None);
	PyObject *codev = PyLong_FromLong(code);
	if (reason && posv && kindv && codev &&
	    !PyObject_SetAttrString(exc, "filename", name) &&
	    !PyObject_SetAttrString(exc, "reason", reason) &&
	    !PyObject_SetAttrString(exc, "position", posv) &&
	    !PyObject_SetAttrString(exc, "position_kind", kindv) &&
	    !PyObject_SetAttrString(exc, "code", codev))
		PyErr_SetObject(tp_error, exc);
	Py_XDECREF(reason);
	Py_XDECREF(posv);
	Py_XDECREF(kindv);
	Py_XDECREF(codev);
	Py_DECREF(exc);
	return NULL;
}

/* ---- warnings kept while the GIL is released ---- */

#define WARN_KEEP 32

void tp_warn_cb(void *ctx, const char *msg, int kind, uint64_t pos)
{
	struct tp_warnings *w = ctx;
	if (w->n >= WARN_KEEP) {
		w->dropped++;
		return;
	}
	struct tp_warning_rec *rec = realloc(w->recs, (w->n + 1) * sizeof(*rec));
	if (!rec)
		return;
	w->recs = rec;
	rec[w->n].msg = strdup(msg);
	rec[w->n].kind = kind;
	rec[w->n].pos = pos;
	if (rec[w->n].msg)
		w->n++;
}

/* Raises the kept warnings as tachfmt.Warning; -1 when a filter turned one into an error.
 * Formatted, not encoded: a file's name may hold surrogates (undecodable bytes). */
int tp_warn_flush(struct tp_warnings *w, PyObject *name)
{
	int rc = 0;
	for (size_t i = 0; i < w->n && rc == 0; i++) {
		const struct tp_warning_rec *r = &w->recs[i];
		unsigned long long p = (unsigned long long)r->pos;
		PyObject *t = r->kind == TACH_POS_OFFSET ? PyUnicode_FromFormat("%S: offset %llu: %s", name, p, r->msg)
			      : r->kind == TACH_POS_LINE ? PyUnicode_FromFormat("%S:%llu: %s", name, p, r->msg)
			      : r->kind == TACH_POS_RECORD ? PyUnicode_FromFormat("%S: record %llu: %s", name, p, r->msg)
			      : PyUnicode_FromFormat("%S: %s", name, r->msg);
		if (!t || PyErr_WarnFormat(tp_warning, 1, "%U", t))
			rc = -1;
		Py_XDECREF(t);
	}
	if (rc == 0 && w->dropped &&
	    PyErr_WarnFormat(tp_warning, 1, "%S: %zu more warnings", name, w->dropped))
		rc = -1;
	tp_warn_clear(w);
	return rc;
}

void tp_warn_clear(struct tp_warnings *w)
{
	for (size_t i = 0; i < w->n; i++)
		free(w->recs[i].msg);
	free(w->recs);
	w->recs = NULL;
	w->n = w->dropped = 0;
}

/* ---- module ---- */

static PyObject *py_formats(PyObject *self, PyObject *unused)
{
	PyObject *list = PyList_New(0);
	const char *name;
	int rd, wr;
	for (size_t i = 0; list && (name = tach_format_name(i, &rd, &wr)); i++) {
		PyObject *t = Py_BuildValue("(sOO)", name, rd ? Py_True : Py_False,
					    wr ? Py_True : Py_False);
		if (!t || PyList_Append(list, t)) {
			Py_XDECREF(t);
			Py_CLEAR(list);
			break;
		}
		Py_DECREF(t);
	}
	return list;
}

#define FILTER_SIG "thread=None, status=None, from_us=None, to_us=None, max_depth=None"
#define FILTER_DOC \
	"thread: a thread id or ids to keep (--thread); status: the states to keep, as\n" \
	"'gil,cpu' or ['gil', 'no-exception'] (--status: gil cpu unknown gil-wait exception\n" \
	"main idle, no-NAME drops that state); from_us, to_us: keep samples at or after\n" \
	"from_us and before to_us, a weighted sample cut to the part inside (--from-us,\n" \
	"--to-us); max_depth: reject stacks deeper than this (--max-depth). The programs'\n" \
	"meaning, with the same results.\n"

static PyMethodDef methods[] = {
	{ "open", (PyCFunction)(void (*)(void))tp_open, METH_VARARGS | METH_KEYWORDS,
	  "open($module, /, src, from_=None, *, " FILTER_SIG ", **reader_options)\n--\n\n"
	  "A reader of a profile in any readable format (detected unless from_ names one).\n"
	  "src: a path, a bytes-like object or a binary file object (read from its position).\n"
	  "Iterating it yields Sample named tuples (tid, interpreter, timestamp_us, status,\n"
	  "frames) with a .weight attribute; frames are Frame named tuples (file, function,\n"
	  "line), innermost first.\n" FILTER_DOC },
	{ "convert", (PyCFunction)(void (*)(void))tp_convert, METH_VARARGS | METH_KEYWORDS,
	  "convert($module, /, src, dst=None, to='pprof', from_=None, reader_options=None, *, "
	  FILTER_SIG ", **options)\n--\n\n"
	  "Converts src to the format to, with the programs' defaults, into dst (a path, written\n"
	  "through a temporary file renamed on success, or a binary file object); returns the\n"
	  "bytes when dst is None. options are writer options (reader options when the writer\n"
	  "has no such option): gzip=False, level=9, compression='none', ...; an option neither\n"
	  "takes is a TypeError. For to='pstats', sampled_marker= says whether to write the\n"
	  "('__sampled__',) entry of Python 3.15's pstats, which the pstats module of earlier\n"
	  "Pythons cannot load; by default it is written only when the running Python is 3.15\n"
	  "or later (the program tach2pstats always writes it unless --no-sampled-marker).\n"
	  FILTER_DOC },
	{ "stacks", (PyCFunction)(void (*)(void))tp_stacks, METH_VARARGS | METH_KEYWORDS,
	  "stacks($module, /, src, from_=None, *, " FILTER_SIG ", **reader_options)\n--\n\n"
	  "Samples counted by thread and stack (weights summed), aggregated in C:\n"
	  "{(tid, frames): count}.\n" FILTER_DOC },
	{ "write", (PyCFunction)(void (*)(void))tp_write, METH_VARARGS | METH_KEYWORDS,
	  "write($module, /, dst, samples, meta=None, to='tach', **options)\n--\n\n"
	  "Writes samples (Sample tuples, or (tid, interpreter, timestamp_us, status, frames[,\n"
	  "weight]) with frames of (file, function, line) or Frame) as a profile into dst (a\n"
	  "path, a binary file object, or None: returns the bytes). meta is a dict as\n"
	  "Reader.meta gives (an unknown key is an error); for TACH its compression is the\n"
	  "default of compression=. For pstats, sampled_marker= as in convert()." },
	{ "formats", py_formats, METH_NOARGS,
	  "formats($module, /)\n--\n\n"
	  "[(name, can_read, can_write)], in detection order." },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef module = {
	PyModuleDef_HEAD_INIT, "tachfmt",
	"Read, write and convert sampling-profiler data (TACH, pprof, Gecko, speedscope, ...).",
	-1, methods, NULL, NULL, NULL, NULL,
};

static int add_constants(PyObject *m)
{
	static const struct { const char *name; long v; } c[] = {
		{ "STATUS_HAS_GIL", TACH_STATUS_HAS_GIL },
		{ "STATUS_ON_CPU", TACH_STATUS_ON_CPU },
		{ "STATUS_UNKNOWN", TACH_STATUS_UNKNOWN },
		{ "STATUS_GIL_REQUESTED", TACH_STATUS_GIL_REQUESTED },
		{ "STATUS_HAS_EXCEPTION", TACH_STATUS_HAS_EXCEPTION },
		{ "STATUS_MAIN_THREAD", TACH_STATUS_MAIN_THREAD },
		{ "STATUS_BASELINE", TACH_STATUS_BASELINE },
	};
	for (size_t i = 0; i < sizeof(c) / sizeof(c[0]); i++)
		if (PyModule_AddIntConstant(m, c[i].name, c[i].v))
			return -1;
	return PyModule_AddStringConstant(m, "__version__", tach_version());
}

PyMODINIT_FUNC PyInit_tachfmt(void);
PyMODINIT_FUNC PyInit_tachfmt(void)
{
	PyObject *m = PyModule_Create(&module);
	if (!m)
		return NULL;
	tp_error = PyErr_NewExceptionWithDoc("tachfmt.Error",
		"Invalid input, an I/O failure or a bad option; str() is the message the programs "
		"print. Attributes: filename, position, position_kind ('offset', 'line', 'record' "
		"or None), reason (the library's message), code (its status code).",
		PyExc_ValueError, NULL);
	tp_warning = PyErr_NewExceptionWithDoc("tachfmt.Warning",
		"A recoverable problem in the input (the programs' 'warning:' lines).",
		PyExc_UserWarning, NULL);
	if (!tp_error || !tp_warning || tp_types_init() ||
	    PyModule_AddObjectRef(m, "Error", tp_error) ||
	    PyModule_AddObjectRef(m, "Warning", tp_warning) ||
	    PyModule_AddObjectRef(m, "Sample", (PyObject *)tp_sample) ||
	    PyModule_AddObjectRef(m, "Frame", (PyObject *)tp_frame) ||
	    PyModule_AddObjectRef(m, "Reader", (PyObject *)tp_reader) || add_constants(m)) {
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
