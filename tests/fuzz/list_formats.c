/* Prints the formats the library reads ("read") or writes ("write"), one a line, from the
 * format table itself, so tests can check that each has what it needs (a fuzz target). */
#include <stdio.h>
#include <string.h>

#include "tachfmt.h"

int main(int argc, char **argv)
{
	int want_read = argc < 2 || strcmp(argv[1], "write");
	const char *name;
	int rd, wr;
	for (size_t i = 0; (name = tach_format_name(i, &rd, &wr)); i++)
		if (want_read ? rd : wr)
			puts(name);
	return 0;
}
