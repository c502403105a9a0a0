/* A tiny program for the perfdata_sym fuzz seeds: no libc, an inline chain, a call chain. */
static inline __attribute__((always_inline)) int leaf(int x) { return x * x + 1; }
__attribute__((noinline)) int mid(int x) { return leaf(x) * 3; }
__attribute__((noinline)) int top(int x) { return mid(x) + mid(x + 1); }
void _start(void) { volatile int s = 0; for (;;) s += top(s); }
