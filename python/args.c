/* The module's arguments: the named parameters of its functions, and options as the library
 * takes them (max_depth=3 as max-depth "3"), with the TypeError Python gives for a bad one. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "tachfmt.h"
#include "tachfmt_py.h"

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
