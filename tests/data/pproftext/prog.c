/* Allocates from two call sites, frees some: a heap profile (gperftools' HEAPPROFILE)
 * with in-use and allocated values that differ. */
#include <stdlib.h>
#include <string.h>

static void *keep[4096];

__attribute__((noinline)) static void *small(int i)
{
	char *p = malloc(64 + i % 32);
	memset(p, 1, 64);
	return p;
}

__attribute__((noinline)) static void *big(int i)
{
	char *p = malloc(65536 + i);
	memset(p, 2, 4096);
	return p;
}

int main(void)
{
	for (int i = 0; i < 4096; i++)
		keep[i] = (i % 8) ? small(i) : big(i);
	for (int i = 0; i < 4096; i += 2)
		free(keep[i]);
	for (int i = 0; i < 2000; i++)
		free(big(i));
	return keep[1] == 0;
}
