/* What a format file provides: its reader and writer ops and its row in the format table
 * (formats.c). A format file includes this and the base/ and model/ headers it uses. */
#ifndef TACHFMT_FORMAT_H
#define TACHFMT_FORMAT_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "core/handles.h"
#include "core/detect.h"
#include "model/stacktab.h"

struct tachi_reader_ops {
	size_t state_size;
	/* Called once before open for each option; return TACH_E_USAGE for unknown keys. */
	int (*option)(struct tach_reader *r, const char *key, const char *value);
	/* Parse headers. The input is attached (r->in). */
	int (*open)(struct tach_reader *r);
	int (*next)(struct tach_reader *r, const struct tach_sample **s);
	void (*free)(struct tach_reader *r);
	bool whole_input;       /* open gets the whole input in r->in.data (mmap or slurp) */
	/* with whole_input: only a regular file is mapped whole; a pipe is left streaming
	 * for the reader to read as it goes (tachi_in_read), not held whole */
	bool stream_pipe;
	bool dict_at_open;      /* open reads every frame the samples can use */
	/* An empty input is a profile without samples when the format is named, not
	 * detected: perf script prints nothing for a capture without samples. */
	bool empty_ok;
};

struct tachi_writer_ops {
	size_t state_size;
	int (*option)(struct tach_writer *w, const char *key, const char *value);
	int (*begin)(struct tach_writer *w); /* after open_fd and set_meta */
	int (*put)(struct tach_writer *w, const struct tach_dict *d, const struct tach_sample *s);
	int (*close)(struct tach_writer *w);
	void (*free)(struct tach_writer *w);
	/* Lookahead (ahead.c), for a writer whose state holds the stack trie it interns into
	 * at offset trie_at - 1 (0: none): once tachi_stacktab_far says the trie's tables are
	 * past the caches, samples are queued, and each one's whole-stack lookup is requested
	 * ahead (tachi_stacktab_ahead without pairs; put gets the hash in w->ahead_hash).
	 * fetch, when set, does that instead, for a writer whose pairs' context and per-pair
	 * data only it knows. */
	size_t trie_at;
	void (*fetch)(struct tach_writer *w, struct tachi_ahead_item *it, unsigned stage);
	/* Set by a writer that keeps values and labels (values.c): put with the extras. */
	int (*put_ext)(struct tach_writer *w, const struct tach_dict *d,
		       const struct tach_sample *s, const struct tach_sample_ext *ext);
	/* put_ext keeps the samples' labels (pprof); the other writers with a put_ext take
	 * their values only, and handles.c warns once of the labels they drop */
	bool keeps_labels;
};


struct tachi_format {
	const char *name;
	const struct tachi_reader_ops *reader;
	const struct tachi_writer_ops *writer;
	/* Whether the first n bytes (n < TACHI_PROBE_BYTES only at the end of the input) look
	 * like this format; readers only. Asked in table order: the first yes wins. */
	bool (*probe)(const uint8_t *p, size_t n);
	/* Weaker than probe: whether input that no probe took looks like a damaged or unusual
	 * file of this format (its first bytes are what this format's files start with), to
	 * name it in the message. NULL for formats whose probe is all there is to say. */
	bool (*resembles)(const uint8_t *p, size_t n);
	/* A format known by its probe but not read (no reader, no writer): detection refuses
	 * it with this reason; tach_format_name does not list it. */
	const char *refused;
};
/* The stack trie of a writer with lookahead. */
static inline struct tachi_stacktab *tachi_writer_trie(struct tach_writer *w)
{
	return (struct tachi_stacktab *)((char *)w->state + w->fmt->writer->trie_at - 1);
}
/* A format by name; "auto" is the detecting reader (detect.c), not in the table. */
const struct tachi_format *tachi_format_find(const char *name);
/* The table's i-th format, NULL past the end. */
const struct tachi_format *tachi_format_at(size_t i);

#endif
