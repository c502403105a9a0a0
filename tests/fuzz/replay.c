/* Replays fuzz corpora in the ordinary test run: every file under the directories given
 * goes through the target once, so a crash found by fuzzing never comes back. */
#include <dirent.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static int run_file(const char *path)
{
	FILE *f = fopen(path, "rb");
	if (!f) {
		perror(path);
		return 1;
	}
	uint8_t *buf = NULL;
	size_t len = 0, cap = 0;
	for (;;) {
		if (len == cap) {
			cap = cap ? cap * 2 : 65536;
			uint8_t *nb = realloc(buf, cap);
			if (!nb)
				abort();
			buf = nb;
		}
		size_t k = fread(buf + len, 1, cap - len, f);
		if (!k)
			break;
		len += k;
	}
	fclose(f);
	LLVMFuzzerTestOneInput(buf, len);
	free(buf);
	return 0;
}

static int walk(const char *dir, unsigned *count)
{
	struct stat st;
	if (stat(dir, &st))
		return perror(dir), 1;
	if (!S_ISDIR(st.st_mode)) {
		(*count)++;
		return run_file(dir);
	}
	struct dirent **list;
	int n = scandir(dir, &list, NULL, alphasort);
	if (n < 0)
		return perror(dir), 1;
	int bad = 0;
	for (int i = 0; i < n; i++) {
		if (list[i]->d_name[0] != '.') {
			char path[4096];
			snprintf(path, sizeof(path), "%s/%s", dir, list[i]->d_name);
			bad |= walk(path, count);
		}
		free(list[i]);
	}
	free(list);
	return bad;
}

int main(int argc, char **argv)
{
	unsigned count = 0;
	int bad = 0;
	for (int i = 1; i < argc; i++)
		bad |= walk(argv[i], &count);
	printf("replayed %u inputs\n", count);
	/* An empty corpus would make this test pass while testing nothing. */
	return bad || count == 0;
}
