/* A known call tree for callgrind's reader (tests/cli/callgrind.bats): main calls mid ten
 * times and other once, mid calls leaf twice; no function has two callers, so the stacks
 * built from callgrind's call graph are exact. */
static volatile unsigned long sink;

__attribute__((noinline)) static void leaf(int n)
{
	for (int i = 0; i < n; i++)
		sink += (unsigned long)i;
}

__attribute__((noinline)) static void mid(int n)
{
	leaf(n);
	leaf(n / 2);
}

__attribute__((noinline)) static void other(int n)
{
	for (int i = 0; i < n; i++)
		sink ^= (unsigned long)i;
}

int main(void)
{
	for (int k = 0; k < 10; k++)
		mid(1000);
	other(3000);
	return 0;
}
