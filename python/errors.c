/* The module's errors and warnings: tachfmt.Error with the message the programs print, and
 * the library's warnings kept in C while the GIL is released, raised afterwards as
 * tachfmt.Warning. The module's init makes the two classes. */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "tachfmt.h"
#include "tachfmt_py.h"

PyObject *tp_error, *tp_warning;

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

/* tachfmt.Error about an argument of fname() ("convert() argument 'to': ..."), or about the
 * call (arg NULL: "write(): ..."), with every attribute an Error has: a message formatted
 * as PyUnicode_FromFormat formats. Returns NULL. */
PyObject *tp_raise_arg(const char *fname, const char *arg, int code, const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	PyObject *msg = PyUnicode_FromFormatV(fmt, ap);
	va_end(ap);
	PyObject *name = arg ? PyUnicode_FromFormat("%s() argument '%s'", fname, arg)
			     : PyUnicode_FromFormat("%s()", fname);
	const char *m = msg ? PyUnicode_AsUTF8AndSize(msg, NULL) : NULL;
	if (m && name)
		tp_raise(code, name, m, TACH_POS_NONE, 0);
	Py_XDECREF(msg);
	Py_XDECREF(name);
	return NULL;
}

/* The formats that can be read (writable 0) or written, as "a, b, c", into buf. */
const char *tp_format_list(int writable, char *buf, size_t cap)
{
	const char *name;
	int rd, wr;
	size_t n = 0;
	buf[0] = 0;
	for (size_t i = 0; (name = tach_format_name(i, &rd, &wr)) && n < cap; i++)
		if (writable ? wr : rd)
			n += (size_t)snprintf(buf + n, cap - n, "%s%s", n ? ", " : "", name);
	return buf;
}

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
