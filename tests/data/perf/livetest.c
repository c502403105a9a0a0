/* The threaded program tests/cli/perf2tach.bats records with perf: main -> worker -> hot_a
 * on the main thread, start_thread -> worker -> hot_b on the other, named hotb-worker; a fixed amount of work,
 * no timing. */
#define _GNU_SOURCE
#include <pthread.h>
#include <stdio.h>
static volatile unsigned long sink;
__attribute__((noinline)) static void hot_a(void) { for (unsigned long i = 0; i < 300000000UL; i++) sink += i; }
__attribute__((noinline)) static void hot_b(void) { for (unsigned long i = 0; i < 300000000UL; i++) sink ^= i; }
__attribute__((noinline)) static void *worker(void *arg) { if (arg) hot_b(); else hot_a(); return NULL; }
int main(void)
{
	pthread_t t;
	if (pthread_create(&t, NULL, worker, (void *)1)) return 1;
	pthread_setname_np(t, "hotb-worker");
	worker(NULL);
	pthread_join(t, NULL);
	printf("%lu\n", sink);
	return 0;
}
