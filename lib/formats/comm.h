/* perf's process root: the perf reader ends each stack with a frame of file "[comm]" whose
 * function is the thread's comm (its name, as pthread_setname_np sets it) and whose line
 * is the process id (negative: unknown). Writers with a place for thread and process names
 * take them from it, as a root that names a thread is a thread. */
#ifndef TACHFMT_FORMATS_COMM_H
#define TACHFMT_FORMATS_COMM_H

#include <stdbool.h>
#include <string.h>

#include "tachfmt.h"
#include "base/base.h"

/* Whether frame id is such a root: its name and the pid (-1 when unknown). */
static inline bool tachi_comm_frame(const struct tach_dict *d, uint32_t id, const char **name,
				    size_t *len, int32_t *pid)
{
	const struct tach_frame *f = tach_dict_frame(d, id);
	size_t fl;
	const char *file = f ? tach_dict_string(d, f->file, &fl) : NULL;
	if (!file || fl != 6 || memcmp(file, "[comm]", 6))
		return false;
	*name = tach_dict_string(d, f->func, len);
	*pid = f->line > 0 ? f->line : -1;
	return *name != NULL;
}

/* A thread that has no name, as the Gecko and speedscope writers' track lists show it:
 * "Thread N (tid T)", or "Thread N (tid T, interpreter I)" for a second interpreter, N
 * counting threads from 1; the ordinal first, since the lists cut long names. buf holds
 * TACHI_THREAD_LABEL_MAX bytes; returns the length. */
#define TACHI_THREAD_LABEL_MAX 96
static inline size_t tachi_thread_label(char *buf, uint64_t ordinal, uint64_t tid, uint32_t iid)
{
	size_t n = 7;
	memcpy(buf, "Thread ", 7);
	n += tachi_fmt_u64(buf + n, ordinal);
	memcpy(buf + n, " (tid ", 6);
	n += 6;
	n += tachi_fmt_u64(buf + n, tid);
	if (iid) {
		memcpy(buf + n, ", interpreter ", 14);
		n += 14;
		n += tachi_fmt_u64(buf + n, iid);
	}
	buf[n++] = ')';
	return n;
}

#endif
