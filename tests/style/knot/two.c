/* layers.py's own test: the other half of the knot (see one.c). */
int knot_one(int n);

int knot_two(int n)
{
	return n > 0 ? knot_one(n - 1) : 1;
}
