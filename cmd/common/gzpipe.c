/* The pprof and Gecko writers gzip their own output. When a second CPU is ours, the runner
 * has them write plain bytes into a pipe instead and gzips those here on a thread, so that
 * formatting and compressing overlap. zlib's output does not depend on how its input is
 * cut into calls, so the bytes are the ones the writer makes: the same level, window and
 * wrapper (no name, mtime 0). */
#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <zlib.h>

#include "gzpipe.h"

#define CHUNK (1u << 20)

struct tc_gz {
	pthread_t thread;
	int rfd, wfd, out, level;
	int err;
	bool abandon; /* the run failed: no gzip trailer */
};

static int write_all(int fd, const unsigned char *p, size_t n)
{
	while (n) {
		ssize_t k = write(fd, p, n);
		if (k < 0) {
			if (errno == EINTR)
				continue;
			return errno;
		}
		p += k;
		n -= (size_t)k;
	}
	return 0;
}

/* Deflates z's input with flush and writes what comes out. */
static int pump(struct tc_gz *g, z_stream *z, unsigned char *obuf, int flush)
{
	int zr;
	do {
		z->next_out = obuf;
		z->avail_out = CHUNK;
		zr = deflate(z, flush);
		if (zr == Z_STREAM_ERROR)
			return EIO;
		int e = write_all(g->out, obuf, CHUNK - z->avail_out);
		if (e)
			return e;
	} while (z->avail_out == 0 || (flush == Z_FINISH && zr != Z_STREAM_END));
	return 0;
}

static void *run(void *arg)
{
	struct tc_gz *g = arg;
	unsigned char *ibuf = malloc(CHUNK), *obuf = malloc(CHUNK), drain[4096];
	z_stream z;
	memset(&z, 0, sizeof(z));
	bool live = ibuf && obuf &&
		    deflateInit2(&z, g->level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) == Z_OK;
	if (!live)
		g->err = ENOMEM;
	/* After a failure the input is still read to its end, so the writer never blocks. */
	for (;;) {
		ssize_t n = g->err ? read(g->rfd, drain, sizeof(drain)) : read(g->rfd, ibuf, CHUNK);
		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0) {
			if (n < 0 && !g->err)
				g->err = errno;
			break;
		}
		if (g->err)
			continue;
		z.next_in = ibuf;
		z.avail_in = (uInt)n;
		g->err = pump(g, &z, obuf, Z_NO_FLUSH);
	}
	if (!g->err && !__atomic_load_n(&g->abandon, __ATOMIC_ACQUIRE))
		g->err = pump(g, &z, obuf, Z_FINISH);
	if (live)
		deflateEnd(&z);
	free(ibuf);
	free(obuf);
	return NULL;
}

int tc_gz_start(struct tc_gz **gp, int out, int level, int *in)
{
	struct tc_gz *g = calloc(1, sizeof(*g));
	int p[2];
	if (!g || pipe2(p, O_CLOEXEC)) {
		free(g);
		return -1;
	}
	/* A larger pipe: fewer turns between the threads. Only a hint. */
	(void)fcntl(p[1], F_SETPIPE_SZ, (int)CHUNK);
	*g = (struct tc_gz){ .rfd = p[0], .wfd = p[1], .out = out, .level = level };
	if (pthread_create(&g->thread, NULL, run, g)) {
		close(p[0]);
		close(p[1]);
		free(g);
		return -1;
	}
	*in = p[1];
	*gp = g;
	return 0;
}

int tc_gz_finish(struct tc_gz *g, bool complete)
{
	__atomic_store_n(&g->abandon, !complete, __ATOMIC_RELEASE);
	close(g->wfd);
	pthread_join(g->thread, NULL);
	close(g->rfd);
	int e = g->err;
	free(g);
	return e;
}
