/* Machine-readable numbers never follow the caller's locale: under a comma-decimal locale
 * (de_DE, made here with localedef into a directory of the test's own, LOCPATH) the
 * samples text writer still writes "1.5" in @tachstat and the reader still reads it, as
 * a Python program that calls setlocale(LC_ALL, "de_DE.UTF-8") uses them. Skipped (77)
 * when localedef or the locale's sources are missing. */
#include <locale.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "check.h"
#include "tachfmt.h"

static bool comma_locale(char *dir, size_t cap)
{
	snprintf(dir, cap, "/tmp/tachfmt-locale-XXXXXX");
	if (!mkdtemp(dir))
		return false;
	char cmd[256];
	snprintf(cmd, sizeof(cmd), "localedef -i de_DE -f UTF-8 %s/de_DE.UTF-8 >/dev/null 2>&1", dir);
	if (system(cmd))
		return false;
	setenv("LOCPATH", dir, 1);
	if (!setlocale(LC_ALL, "de_DE.UTF-8"))
		return false;
	char b[16];
	snprintf(b, sizeof(b), "%.1f", 1.5);
	return !strcmp(b, "1,5"); /* the locale took */
}

static void writes_dots(void)
{
	struct tach_writer *w = tach_writer_new("samples");
	FILE *f = tmpfile();
	CHECK(w && f);
	if (!w || !f)
		return;
	struct tach_meta m = { 0 };
	m.size = sizeof(m);
	m.interval_us = 1000;
	struct tach_file_info fi = TACH_FILE_INFO_INIT;
	fi.has_stats = 1;
	fi.stats_size = 56;
	fi.stats_version = 1;
	fi.stats_duration_s = 1.5;
	fi.stats_sample_rate = 2.25;
	m.file = &fi;
	CHECK(tach_writer_open_fd(w, fileno(f)) == TACH_OK);
	CHECK(tach_writer_set_meta(w, &m) == TACH_OK);
	CHECK(tach_writer_close(w) == TACH_OK);
	char buf[4096] = "";
	rewind(f);
	size_t n = fread(buf, 1, sizeof(buf) - 1, f);
	buf[n] = 0;
	CHECK(strstr(buf, "@tachstat 56 1 0 0 1.5 2.25 0 0\n") != NULL);
	if (!strstr(buf, "1.5 2.25"))
		fprintf(stderr, "written: %s\n", buf);
	tach_writer_free(w);
	fclose(f);
}

static void reads_dots(void)
{
	static const char text[] = "@interval_us 1000\n@tachstat 56 1 0 0 1.5 2.25 0 0\n"
				   "7 0 5100 1\tw.py:work:3:3:-1:-1:-\n";
	struct tach_reader *r = tach_reader_new("samples");
	CHECK(r && tach_reader_open_mem(r, text, sizeof(text) - 1) == TACH_OK);
	const struct tach_sample *s;
	CHECK(tach_reader_next(r, &s) == TACH_OK);
	const struct tach_meta *m = tach_reader_meta(r);
	const struct tach_file_info *fi = m->file;
	CHECK(fi && fi->has_stats && fi->stats_duration_s == 1.5 && fi->stats_sample_rate == 2.25);
	tach_reader_free(r);
}

int main(void)
{
	char dir[64];
	bool ok = comma_locale(dir, sizeof(dir));
	char cmd[128];
	snprintf(cmd, sizeof(cmd), "rm -rf %s", dir);
	if (system(cmd)) {
	}
	if (!ok) {
		printf("skipped: no de_DE locale could be made (localedef, Debian's locales)\n");
		return 77;
	}
	writes_dots();
	reads_dots();
	return CHECK_DONE();
}
