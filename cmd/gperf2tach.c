/* gperf2tach: a gperftools legacy CPU profile to TACH, frames symbolized from the binaries. */
#include <stdlib.h>
#include <string.h>

#include "common/runner.h"

static const struct tc_opt opts[] = {
	{ "binary-path", 0, "DIR", "r:binary-path", NULL,
	  "also look for binaries in DIR (repeatable; TACHFMT_BINARY_PATH adds more)", NULL, true },
	{ "no-symbolize", 0, NULL, "r:symbolize", "no", "keep addresses; do not read binaries",
	  NULL, false },
	{ "names", 0, "STYLE", "r:names", NULL,
	  "function names: full (demangled, with scope, templates and parameters; default), "
	  "short (DWARF's short name) or mangled", "full short mangled", false },
	{ 0 },
};

int main(int argc, char **argv)
{
	static const struct tc_prog prog = {
		.name = "gperf2tach",
		.summary = "Convert a gperftools CPU profile to TACH, naming frames from the binaries.",
		.reader = "gperf",
		.outputs = tc_tach_output,
		.opts = opts,
		.description = "Binaries are looked for at the paths recorded in the profile, then in "
			       "each --binary-path DIR and each directory of TACHFMT_BINARY_PATH "
			       "(colon-separated), by base name and by full path; debug files through "
			       "elfutils' standard search, including DIR/.build-id/ (see gperf2tach(1)).",
	};
	/* The environment's directories are searched after the command line's: they go in as
	 * one more --binary-path, last (before a "--"; first when getopt stops at operands). */
	const char *env = getenv("TACHFMT_BINARY_PATH");
	if (!env || !*env)
		return tc_main(argc, argv, &prog);
	size_t l = strlen(env) + sizeof("--binary-path=");
	char *opt = malloc(l);
	char **av = malloc(((size_t)argc + 2) * sizeof(*av));
	if (!opt || !av)
		return 1;
	strcpy(opt, "--binary-path=");
	strcat(opt, env);
	int at = argc;
	for (int i = 1; i < argc; i++)
		if (!strcmp(argv[i], "--")) {
			at = i;
			break;
		}
	if (getenv("POSIXLY_CORRECT"))
		at = 1;
	int k = 0;
	for (int i = 0; i < argc; i++) {
		if (i == at)
			av[k++] = opt;
		av[k++] = argv[i];
	}
	if (at == argc)
		av[k++] = opt;
	av[k] = NULL;
	int rc = tc_main(k, av, &prog);
	free(av);
	free(opt);
	return rc;
}
