/* The program tests/cli/perfreport.bats records with perf: one leaf reached by three
 * paths (main -> left -> leaf, main -> right -> leaf, main -> right -> deep -> leaf) and
 * a second thread named side-worker, so that perf report's trees branch; a fixed amount
 * of work, no timing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void leaf(unsigned long n) { for (unsigned long i = 0; i < n; i++) sink += i; }
__attribute__((noinline)) static void deep(void) { leaf(40000000UL); }
__attribute__((noinline)) static void left(void) { leaf(80000000UL); }
__attribute__((noinline)) static void right(void) { leaf(60000000UL); deep(); }
__attribute__((noinline)) static void *side(void *arg) { (void)arg; left(); right(); return NULL; }
int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, side, NULL)) return 1;
	pthread_setname_np(t, "side-worker");
	left();
	right();
	pthread_join(t, NULL);
	printf("%lu\n", sink);
	return 0;
}
