/* A recursive quicksort for tach2callgrind.bats: direct recursion (qsort_rec), mutual
 * recursion through a helper (partition_and_recurse <-> qsort_rec) and an always-inlined
 * comparison, run until it has used the CPU time given. */
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline __attribute__((always_inline)) int less(unsigned a, unsigned b)
{
	return (a ^ 0x5555u) < (b ^ 0x5555u);
}

static void qsort_rec(unsigned *v, long lo, long hi);

__attribute__((noinline)) static void partition_and_recurse(unsigned *v, long lo, long hi)
{
	unsigned pivot = v[(lo + hi) / 2];
	long i = lo, j = hi;
	while (i <= j) {
		while (less(v[i], pivot))
			i++;
		while (less(pivot, v[j]))
			j--;
		if (i <= j) {
			unsigned t = v[i];
			v[i++] = v[j];
			v[j--] = t;
		}
	}
	qsort_rec(v, lo, j);
	qsort_rec(v, i, hi);
}

__attribute__((noinline)) static void qsort_rec(unsigned *v, long lo, long hi)
{
	if (lo < hi)
		partition_and_recurse(v, lo, hi);
}

int main(int argc, char **argv)
{
	double cpu = argc > 1 ? atof(argv[1]) : 0.5;
	enum { N = 200000 };
	unsigned *v = malloc(N * sizeof(*v)), seed = 1, sum = 0;
	if (!v)
		return 1;
	while ((double)clock() / CLOCKS_PER_SEC < cpu) {
		for (long k = 0; k < N; k++)
			v[k] = seed = seed * 1103515245u + 12345u;
		qsort_rec(v, 0, N - 1);
		sum += v[N / 2];
	}
	printf("%u\n", sum);
	free(v);
	return 0;
}
