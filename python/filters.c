/* The programs' sample filters for open(), stacks() and convert(): --thread, --status,
 * --from-us and --to-us with the meaning cmd/common/filters.c gives them (the module sees
 * only the public header, so it keeps its own copy of these few rules; the tests hold it to
 * the programs' output).
 */
#define Py_LIMITED_API 0x030B0000
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include <stdlib.h>
#include <string.h>

#include "tachfmt_py.h"

void tp_filter_clear(struct tp_filter *f)
{
	free(f->threads);
	memset(f, 0, sizeof(*f));
	f->to_us = UINT64_MAX;
}

/* A non-negative int (not a bool) up to 2^64 - 1. */
static int u64_arg(const char *fname, const char *name, PyObject *v, uint64_t *out)
{
	if (!PyLong_Check(v) || PyBool_Check(v)) {
		PyObject *tn = PyType_GetName(Py_TYPE(v));
		PyErr_Format(PyExc_TypeError, "%s() argument '%s' must be int, not %S", fname, name,
			     tn ? tn : Py_None);
		Py_XDECREF(tn);
		return -1;
	}
	unsigned long long x = PyLong_AsUnsignedLongLong(v);
	if (x == (unsigned long long)-1 && PyErr_Occurred()) {
		PyErr_Clear();
		PyErr_Format(PyExc_ValueError, "%s() argument '%s' must be in 0..2**64-1, not %R",
			     fname, name, v);
		return -1;
	}
	*out = x;
	return 0;
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
	return x < y ? -1 : x > y;
}

/* thread: an id or an iterable of ids. */
static int parse_threads(struct tp_filter *f, const char *fname, PyObject *v)
{
	PyObject *seq = PyLong_Check(v) ? PyTuple_Pack(1, v) : PySequence_Tuple(v);
	if (!seq) {
		PyErr_Clear();
		PyObject *tn = PyType_GetName(Py_TYPE(v));
		PyErr_Format(PyExc_TypeError, "%s() argument 'thread' must be an int or ints, not %S",
			     fname, tn ? tn : Py_None);
		Py_XDECREF(tn);
		return -1;
	}
	Py_ssize_t n = PyTuple_Size(seq);
	f->threads = malloc((n ? (size_t)n : 1) * sizeof(uint64_t));
	int rc = f->threads ? 0 : (PyErr_NoMemory(), -1);
	for (Py_ssize_t i = 0; !rc && i < n; i++)
		rc = u64_arg(fname, "thread", PyTuple_GetItem(seq, i), &f->threads[i]);
	Py_DECREF(seq);
	if (rc)
		return -1;
	qsort(f->threads, (size_t)n, sizeof(uint64_t), cmp_u64);
	f->nthreads = (size_t)n;
	return 0;
}

/* One state name of --status, or no-NAME. */
static int status_word(struct tp_filter *f, const char *w, size_t len)
{
	static const struct { const char *name; uint8_t bit; } names[] = {
		{ "gil", TACH_STATUS_HAS_GIL }, { "cpu", TACH_STATUS_ON_CPU },
		{ "unknown", TACH_STATUS_UNKNOWN }, { "gil-wait", TACH_STATUS_GIL_REQUESTED },
		{ "exception", TACH_STATUS_HAS_EXCEPTION }, { "main", TACH_STATUS_MAIN_THREAD },
		{ "idle", 0 },
	};
	int neg = len > 3 && !strncmp(w, "no-", 3);
	if (neg)
		w += 3, len -= 3;
	for (size_t i = 0; i < sizeof(names) / sizeof(names[0]); i++) {
		if (strlen(names[i].name) != len || strncmp(w, names[i].name, len))
			continue;
		if (!names[i].bit)
			*(neg ? &f->status_no_idle : &f->status_idle) = true;
		else
			*(neg ? &f->status_none : &f->status_any) |= names[i].bit;
		return 0;
	}
	return -1;
}

/* status: "gil,cpu" as the programs take it, or an iterable of such words. */
static int parse_status(struct tp_filter *f, const char *fname, PyObject *v)
{
	PyObject *seq = PyUnicode_Check(v) ? PyTuple_Pack(1, v) : PySequence_Tuple(v);
	if (!seq)
		return -1;
	int rc = 0;
	for (Py_ssize_t i = 0; !rc && i < PyTuple_Size(seq); i++) {
		PyObject *item = PyTuple_GetItem(seq, i);
		Py_ssize_t n;
		const char *s = PyUnicode_Check(item) ? PyUnicode_AsUTF8AndSize(item, &n) : NULL;
		if (!s) {
			if (!PyErr_Occurred())
				PyErr_Format(PyExc_TypeError, "%s() argument 'status' must be str or "
					     "strs, not %R", fname, item);
			rc = -1;
			break;
		}
		for (const char *p = s, *end = s + n; !rc && p <= end;) {
			const char *c = memchr(p, ',', (size_t)(end - p));
			const char *e = c ? c : end;
			if (status_word(f, p, (size_t)(e - p))) {
				tp_raise_arg(fname, "status", TACH_E_USAGE, "unknown state %R (gil cpu "
					     "unknown gil-wait exception main idle, or no-NAME)", item);
				rc = -1;
			}
			p = e + 1;
		}
	}
	Py_DECREF(seq);
	f->has_status = true;
	return rc;
}

int tp_filter_parse(struct tp_filter *f, const char *fname, PyObject *thread, PyObject *status,
		    PyObject *from_us, PyObject *to_us)
{
	tp_filter_clear(f);
	if ((thread && thread != Py_None && parse_threads(f, fname, thread)) ||
	    (status && status != Py_None && parse_status(f, fname, status)) ||
	    (from_us && from_us != Py_None && u64_arg(fname, "from_us", from_us, &f->from_us)) ||
	    (to_us && to_us != Py_None && u64_arg(fname, "to_us", to_us, &f->to_us)))
		return -1;
	f->active = (thread && thread != Py_None) || f->has_status || f->from_us ||
		    f->to_us != UINT64_MAX;
	return 0;
}

static bool has_thread(const struct tp_filter *f, uint64_t tid)
{
	size_t lo = 0, hi = f->nthreads;
	while (lo < hi) {
		size_t mid = lo + (hi - lo) / 2;
		if (f->threads[mid] < tid)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < f->nthreads && f->threads[lo] == tid;
}

static bool keep(const struct tp_filter *f, const struct tach_sample *s)
{
	if (f->threads && !has_thread(f, s->thread_id))
		return false;
	if (!f->has_status)
		return true;
	bool idle = !(s->status & (TACH_STATUS_HAS_GIL | TACH_STATUS_ON_CPU));
	if ((s->status & f->status_none) || (f->status_no_idle && idle))
		return false;
	return !(f->status_any || f->status_idle) || (s->status & f->status_any) ||
	       (f->status_idle && idle);
}

/* The gap between the samples a record of weight N stands for, in ns: its own time over N
 * where samples carry one (a TACH run: one interval), else the interval. */
static uint64_t step_ns(const struct tach_meta *m, const struct tach_sample *s)
{
	if (m->sample_time)
		return s->weight ? s->time_ns / s->weight : 0;
	return m->interval_us <= UINT64_MAX / 1000 ? m->interval_us * 1000 : UINT64_MAX;
}

/* The part of s (weight N: N samples, each one step after the one before, from its own
 * timestamp on) inside [from_us, to_us), into f->copy, its time cut alike; false when none
 * of it is. A step of 0 puts all N at the timestamp. */
static bool clip(struct tp_filter *f, const struct tach_sample *s, const struct tach_meta *m)
{
	uint64_t w = s->weight, step = step_ns(m, s);
	unsigned __int128 t = (unsigned __int128)s->timestamp_us * 1000;
	unsigned __int128 from = (unsigned __int128)f->from_us * 1000;
	unsigned __int128 to = (unsigned __int128)f->to_us * 1000;
	if (t < from) {
		if (!step)
			return false;
		unsigned __int128 k = (from - t + step - 1) / step;
		if (k >= w)
			return false;
		t += k * step;
		w -= (uint64_t)k;
	}
	if (t >= to)
		return false;
	if (w > 1 && step) {
		/* samples whose µs is before to_us: at t + k step < to, to being whole µs */
		unsigned __int128 fit = (to - t - 1) / step + 1;
		if (fit < w)
			w = (uint64_t)fit;
	}
	f->copy = *s;
	f->copy.timestamp_us = (uint64_t)(t / 1000);
	f->copy.weight = w;
	f->copy_cut = w != s->weight;
	if (f->copy_cut)
		f->copy.time_ns = (uint64_t)((unsigned __int128)s->time_ns * w / s->weight);
	/* dropped samples break the same-stack chain the reader describes */
	f->copy.same_outer = 0;
	return true;
}

int tp_filter_next(struct tp_filter *f, struct tach_reader *r, const struct tach_sample **out,
		   const struct tach_sample_ext **ext)
{
	for (;;) {
		const struct tach_sample *s;
		int rc = tach_reader_next(r, &s);
		if (rc)
			return rc;
		if (!f->active) {
			*out = s;
			break;
		}
		/* text readers learn the interval and sample_time as they read */
		if (keep(f, s) && clip(f, s, tach_reader_meta(r))) {
			*out = &f->copy;
			break;
		}
	}
	if (!ext)
		return TACH_OK;
	*ext = tach_reader_sample_ext(r);
	/* a sample cut short keeps its labels; its values were the whole sample's */
	if (*ext && *out == &f->copy && f->copy_cut) {
		f->copy_ext = **ext;
		f->copy_ext.value_count = 0;
		f->copy_ext.values = NULL;
		*ext = &f->copy_ext;
	}
	return TACH_OK;
}
