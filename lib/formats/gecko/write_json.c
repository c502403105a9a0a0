/* The Gecko writer's JSON output: its staging buffer (the inline writers in gecko/gecko.h fill
 * it) goes out deflated or as is. A failure is kept in the state and reported at close. */
#include "base/gzip.h"
#include "base/io.h"
#include "core/handles.h"
#include "formats/gecko/write.h"

void tachi_gecko_flush(struct tach_writer *w)
{
	struct gstate *st = w->state;
	if (st->err || !st->jlen) {
		st->jlen = 0;
		return;
	}
	if (st->plain) {
		if (tachi_out_write(&w->out, st->jbuf, st->jlen))
			st->err = tachi_writer_io(w);
	} else {
		int e = tachi_gz_write(st->gz, st->jbuf, st->jlen);
		if (e)
			st->err = tachi_gz_failed(w, e);
	}
	st->jlen = 0;
}
