/* Every program's main: the build names the program's description (TC_PROG, defined by
 * its file cmd/NAME.c) and the shared runner does the rest. */
#include "programs.h"

int main(int argc, char **argv)
{
	return tc_main(argc, argv, &TC_PROG);
}
