/* The JIT-like program tests/cli/perfdata.bats records with perf: anonymous executable
 * memory running two copies of a loop, named in /tmp/perf-PID.map as JIT compilers (and
 * CPython -X perf, py::FUNC:FILE) name theirs; a fixed amount of work, no timing. */
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
int main(void)
{
	/* mov rcx, 300000000; 1: dec rcx; jnz 1b; ret */
	unsigned char code[] = { 0x48, 0xb9, 0x00, 0xa3, 0xe1, 0x11, 0, 0, 0, 0,
				 0x48, 0xff, 0xc9, 0x75, 0xfb, 0xc3 };
	unsigned char *p = mmap(NULL, 4096, PROT_READ | PROT_WRITE | PROT_EXEC,
				MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	if (p == MAP_FAILED)
		return 1;
	memcpy(p, code, sizeof(code));
	memcpy(p + 64, code, sizeof(code));
	char path[64];
	snprintf(path, sizeof(path), "/tmp/perf-%d.map", (int)getpid());
	FILE *f = fopen(path, "w");
	if (!f)
		return 1;
	fprintf(f, "%lx %zx py::spin:/srv/app/jit.py\n", (unsigned long)p, sizeof(code));
	fprintf(f, "%lx %zx jitted_spin\n", (unsigned long)(p + 64), sizeof(code));
	fclose(f);
	void (*fn)(void) = (void (*)(void))p, (*fn2)(void) = (void (*)(void))(p + 64);
	for (int i = 0; i < 3; i++) {
		fn();
		fn2();
	}
	return 0;
}
