#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/* Always inlined into heavy: its samples are an inline chain poly <- heavy. */
static inline __attribute__((always_inline)) double poly(double x)
{
	return ((x * 1.0001 + 0.5) * x + 0.25) * x;
}

__attribute__((noinline)) double heavy(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += poly(s * 1e-9 + i) * 1e-12;
	return s;
}

/* Calls into libm. */
__attribute__((noinline)) double trig(int n)
{
	double s = 0;
	for (int i = 0; i < n; i++)
		s += sin(s + i);
	return s;
}

int main(int argc, char **argv)
{
	double cpu = argc > 1 ? atof(argv[1]) : 0.5, s = 0;
	/* Runs until it has used that much CPU time: enough samples on any machine. */
	while ((double)clock() / CLOCKS_PER_SEC < cpu) {
		s += heavy(200000);
		s += trig(100000);
	}
	printf("%g\n", s);
	return 0;
}
