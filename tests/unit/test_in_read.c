/* Streaming reads (base/io.c tachi_in_read): a pipe's bytes come out whole and in order,
 * the peeked ones first, through reads of any size (small ones through the buffer, large
 * ones straight); fewer only at the end; a regular file is mapped whole by
 * tachi_in_map_file and a pipe is not. */
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "check.h"
#include "base/base.h"
#include "base/io.h"

static uint8_t *make_input(size_t n)
{
	uint8_t *p = malloc(n);
	uint64_t y = 88172645463325252u;
	for (size_t i = 0; i < n; i++) {
		y ^= y << 13, y ^= y >> 7, y ^= y << 17;
		p[i] = (uint8_t)(y >> 24);
	}
	return p;
}

/* A pipe whose writer (a child) writes data then closes it: the read end. */
static int pipe_of(const uint8_t *data, size_t n, pid_t *child)
{
	int p[2];
	if (pipe(p))
		return -1;
	if (!(*child = fork())) {
		close(p[0]);
		for (size_t done = 0; done < n;) {
			ssize_t k = write(p[1], data + done, n - done > 5000 ? 5000 : n - done);
			if (k <= 0)
				_exit(1);
			done += (size_t)k;
		}
		_exit(0);
	}
	close(p[1]);
	return p[0];
}

static void read_pipe(const uint8_t *data, size_t n, size_t peek)
{
	static const size_t steps[] = { 1, 7, 8, 4096, 65536, 700000, 3, (1u << 20) + 5 };
	pid_t child = -1;
	struct tachi_in in = { .fd = pipe_of(data, n, &child) };
	struct tachi_err e = { 0 };
	CHECK(in.fd >= 0);
	CHECK(!tachi_in_map_file(&in));
	const uint8_t *p;
	size_t got;
	CHECK(tachi_in_peek(&in, peek, &e, &p, &got) == TACH_OK);
	CHECK_EQ_U64(got, peek < n ? peek : n);
	CHECK(!memcmp(p, data, got));
	uint8_t *out = malloc(n + (2u << 20));
	size_t have = 0;
	for (size_t k = 0;; k++) {
		size_t want = steps[k % (sizeof(steps) / sizeof(steps[0]))];
		CHECK(tachi_in_read(&in, out + have, want, &e, &got) == TACH_OK);
		have += got;
		if (got < want)
			break;
		CHECK(have <= n);
	}
	CHECK_EQ_U64(have, n);
	CHECK(!memcmp(out, data, n));
	/* at the end: nothing more, no error */
	CHECK(tachi_in_read(&in, out, 10, &e, &got) == TACH_OK);
	CHECK_EQ_U64(got, 0);
	int status;
	waitpid(child, &status, 0);
	CHECK(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	free(out);
	close(in.fd);
	tachi_in_free(&in);
}

int main(void)
{
	size_t n = (3u << 20) + 17;
	uint8_t *data = make_input(n);
	read_pipe(data, n, 16);
	read_pipe(data, n, 4096);
	read_pipe(data, 10, 16);
	read_pipe(data, 0, 16);

	char path[] = "/tmp/tachfmt-in-read.XXXXXX";
	int fd = mkstemp(path);
	CHECK(fd >= 0 && write(fd, data, 100000) == 100000 && lseek(fd, 0, SEEK_SET) == 0);
	unlink(path);
	struct tachi_in in = { .fd = fd };
	CHECK(tachi_in_map_file(&in));
	CHECK(in.whole && in.size == 100000 && !memcmp(in.data, data, 100000));
	tachi_in_free(&in);
	close(fd);
	free(data);
	return CHECK_DONE();
}
