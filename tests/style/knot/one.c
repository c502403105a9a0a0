/* layers.py's own test: one.c and two.c call each other, a knot it must report. */
int knot_two(int n);

int knot_one(int n)
{
	return n > 0 ? knot_two(n - 1) : 0;
}
