/* layers.py's own test: a file that uses one.c one way is no knot; names in strings and
 * comments (knot_four) are no use. */
int knot_one(int n);
const char *knot_three = "knot_four";

int knot_four(int n)
{
	return knot_one(n);
}
