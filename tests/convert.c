/* A test tool: any reader into any writer through the public API, options as r:KEY=VALUE
 * and w:KEY=VALUE. The flame graph comparison uses it to draw folded stacks directly, for
 * stacks deeper than TACH keeps (256 frames).
 * usage: convert RFORMAT WFORMAT IN OUT [r:KEY=VALUE | w:KEY=VALUE]... */
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "tachfmt.h"

static int option(struct tach_reader *r, struct tach_writer *w, char *arg)
{
	char *eq = strchr(arg, '=');
	if (strlen(arg) < 3 || arg[1] != ':' || !eq)
		return -1;
	*eq = 0;
	if (arg[0] == 'r')
		return tach_reader_set_option(r, arg + 2, eq + 1);
	return tach_writer_set_option(w, arg + 2, eq + 1);
}

int main(int argc, char **argv)
{
	if (argc < 5) {
		fprintf(stderr, "usage: convert RFORMAT WFORMAT IN OUT [r:K=V|w:K=V]...\n");
		return 2;
	}
	struct tach_reader *r = tach_reader_new(argv[1]);
	struct tach_writer *w = tach_writer_new(argv[2]);
	int in = open(argv[3], O_RDONLY), out = open(argv[4], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	int rc = !r || !w || in < 0 || out < 0 ? TACH_E_USAGE : TACH_OK;
	for (int i = 5; !rc && i < argc; i++)
		rc = option(r, w, argv[i]);
	const struct tach_sample *s;
	if (!rc)
		rc = tach_reader_open_fd(r, in);
	if (!rc)
		rc = tach_writer_open_fd(w, out);
	if (!rc)
		rc = tach_writer_set_meta(w, tach_reader_meta(r));
	while (!rc && (rc = tach_reader_next(r, &s)) == TACH_OK)
		rc = tach_writer_put(w, tach_reader_dict(r), s);
	if (rc == TACH_EOF)
		rc = tach_writer_close(w);
	if (rc) {
		const char *re = r ? tach_reader_error(r, NULL, NULL) : "unknown reader format";
		const char *we = w ? tach_writer_error(w) : "unknown writer format";
		fprintf(stderr, "convert: %s / %s\n", re ? re : "", we ? we : "");
	}
	tach_reader_free(r);
	tach_writer_free(w);
	if (in >= 0)
		close(in);
	if (out >= 0)
		close(out);
	return rc ? 1 : 0;
}
