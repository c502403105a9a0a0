/* The perf.data reader with symbolization and DWARF unwinding on: the paths the plain
 * perfdata target (symbolize=no) never reaches. An input is a binary and a capture:
 *
 *   u16 n (little-endian) | n bytes: an ELF file | the rest: perf.data
 *
 * The binary is written as DIR/prog in a directory of this process's own, given to the
 * reader as its binary path, so a capture's mapping of any ".../prog" finds it (its
 * recorded path does not exist here); HOME is that directory too, so no build-id cache of
 * the machine is read. The reading itself is fuzz_reader.c's, compiled in under another
 * name (meson: -DLLVMFuzzerTestOneInput=fuzz_reader_input). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tachfmt.h"

int fuzz_reader_input(const uint8_t *data, size_t size);
void fuzz_symbolize_options(struct tach_reader *r);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char dir[64];
static char bin[96];

static void remove_dir(void)
{
	unlink(bin);
	rmdir(dir);
}

void fuzz_symbolize_options(struct tach_reader *r)
{
	tach_reader_set_option(r, "binary-path", dir);
}

static void setup_dir(void)
{
	const char *tmp = getenv("TMPDIR");
	snprintf(dir, sizeof(dir), "%s/tachfuzz-XXXXXX", tmp && *tmp && strlen(tmp) < 40 ? tmp : "/tmp");
	if (!mkdtemp(dir))
		abort();
	snprintf(bin, sizeof(bin), "%s/prog", dir);
	setenv("HOME", dir, 1);
	atexit(remove_dir);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (!dir[0])
		setup_dir();
	size_t n = size >= 2 ? (size_t)(data[0] | data[1] << 8) : 0;
	if (n > size - 2 || size < 2)
		n = size >= 2 ? size - 2 : 0;
	int fd = open(bin, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	if (fd < 0)
		abort();
	const uint8_t *elf = data + (size >= 2 ? 2 : 0);
	if (n && write(fd, elf, n) != (ssize_t)n)
		abort();
	close(fd);
	return fuzz_reader_input(elf + n, size - (size_t)(elf + n - data));
}
