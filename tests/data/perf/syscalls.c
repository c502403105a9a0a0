// The C program tests/cli/perfdata.bats records with perf --call-graph dwarf: time spent
// in glibc's system call wrappers (read, write) and in its own code; a fixed amount of
// work, no timing.
#include <fcntl.h>
#include <unistd.h>

static unsigned long spin(const char *b, int n)
{
	unsigned long h = 0;
	for (int i = 0; i < n; i++)
		h = h * 31 + (unsigned char)b[i];
	return h;
}

int main(void)
{
	char buf[64];
	int in = open("/dev/zero", O_RDONLY), out = open("/dev/null", O_WRONLY);
	if (in < 0 || out < 0)
		return 1;
	unsigned long h = 0;
	for (int i = 0; i < 400000; i++) {
		if (read(in, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
		h += spin(buf, sizeof(buf));
		if (write(out, buf, sizeof(buf)) != (ssize_t)sizeof(buf))
			return 1;
	}
	return (int)(h & 1);
}
