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

#include "tachfmt.h"
#include "tachfmt_py.h"

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
	  "frames) with .weight, .time_ns (the time it stands for, None when the samples carry\n"
	  "no time) and .values (one per meta['value_types']) attributes; frames are Frame\n"
	  "named tuples (file, function, line), innermost first.\n" FILTER_DOC },
	{ "convert", (PyCFunction)(void (*)(void))tp_convert, METH_VARARGS | METH_KEYWORDS,
	  "convert($module, /, src, dst=None, to='pprof', from_=None, reader_options=None, *, "
	  FILTER_SIG ", **options)\n--\n\n"
	  "Converts src to the format to, with the programs' defaults, into dst (a path, written\n"
	  "through a temporary file renamed on success, or a binary file object); returns the\n"
	  "bytes when dst is None. options are writer options (reader options when the writer\n"
	  "has no such option): gzip=False, level=9, compression='none', ...; an option neither\n"
	  "takes is a TypeError. For to='pstats', sampled_marker=True writes the\n"
	  "('__sampled__',) entry of Python 3.15's pstats, which the pstats module of earlier\n"
	  "Pythons cannot load; by default it is left out, as tach2pstats leaves it out unless\n"
	  "--sampled-marker.\n"
	  FILTER_DOC },
	{ "stacks", (PyCFunction)(void (*)(void))tp_stacks, METH_VARARGS | METH_KEYWORDS,
	  "stacks($module, /, src, from_=None, *, " FILTER_SIG ", **reader_options)\n--\n\n"
	  "Samples counted by thread and stack (weights summed), aggregated in C:\n"
	  "{(tid, frames): count}.\n" FILTER_DOC },
	{ "write", (PyCFunction)(void (*)(void))tp_write, METH_VARARGS | METH_KEYWORDS,
	  "write($module, /, dst, samples, meta=None, to='tach', **options)\n--\n\n"
	  "Writes samples (Sample tuples, or (tid, interpreter, timestamp_us, status, frames[,\n"
	  "weight[, time_ns[, values]]]) with frames of (file, function, line) or Frame) as a\n"
	  "profile into dst (a path, a binary file object, or None: returns the bytes). meta is\n"
	  "a dict as Reader.meta gives (an unknown key is an error); for TACH its compression\n"
	  "is the default of compression=. The samples carry time (time_ns) when meta says\n"
	  "sample_time, or, when it does not, when the first sample has a time_ns; values match\n"
	  "meta's value_types, or are (). For pstats, sampled_marker= as in convert()." },
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
